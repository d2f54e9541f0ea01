"""Curried functions read as one: `f(a)(x)` as `f_(a, x)`, so that s2s inlines and differentiates the code.

Accepts a Python function whose source s2s reads (source.py) and whose body ends by returning a function it makes,
a `lambda` or a nested `def` it returns by name:

    def vjp(ans, x):                             def vjp_uncurried(g, ans, x):
        shape = np.shape(x)              ->          shape = np.shape(x)
        return lambda g: g * ans                     return g * ans

A call of a known wrapper, `unbroadcast_f(x, lambda g: ...)`, is read as what it stands for (given by the caller).
`uncurried(fn, inner_first)` returns that function (the inner function's parameters first, or last), registered
with its tree (tree.py's `register_synthetic`) in fn's namespace and closure, or None when fn is not of that form
(the caller then calls fn as it is). The inner function's body is placed at the end of the outer one: it reads
what the outer function's variables hold when it returns, as the closure does when it is called after.
Refused (None): an inner function that binds a name the outer one uses, declares `nonlocal`, takes `*args`,
keywords or defaults; parameter names the two share.
"""
from __future__ import annotations

import types
from typing import Any

import gast

from s2s.errors import S2SError
from s2s.frontend.desugar.closures import _function_object
from s2s.frontend.desugar.context import constant, located
from s2s.frontend.source import read_function
from s2s.frontend.tree import Facts, Synthetic, clone_tree, register_synthetic

_MADE: dict[tuple[int, bool], Any] = {}


def uncurried(fn: Any, inner_first: bool, name: str | None = None,
              wrappers: dict | None = None) -> types.FunctionType | None:
    """wrappers: functions that make the returned function from a lambda, `wrap(target, lambda g: E)`, each with
    the function of (E, target) it stands for (autograd's `unbroadcast_f(x, lambda g: ...)`: the sum of E to x's
    shape)."""
    key = (id(fn), inner_first)
    made = _MADE.get(key)
    if made is not None and made[0] is fn:
        return made[1]
    result = _uncurried(fn, inner_first, name, wrappers or {})
    _MADE[key] = (fn, result)
    return result


def inner_arity(fn: Any, wrappers: dict | None = None) -> int | None:
    """How many parameters the function fn returns takes (None when fn is not of the form uncurried reads)."""
    parts = _parts(fn, wrappers or {})
    return None if parts is None else len(parts[2].posonlyargs + parts[2].args)


def _wrapper(parsed: Any, call: gast.Call, wrappers: dict) -> Any:
    """The function a call `wrap(target, lambda g: ...)` of one of wrappers stands for, or None."""
    if not wrappers or len(call.args) != 2 or call.keywords or not isinstance(call.args[1], gast.Lambda):
        return None
    func, path = call.func, []
    while isinstance(func, gast.Attribute):
        path.insert(0, func.attr)
        func = func.value
    if not isinstance(func, gast.Name):
        return None
    found, obj = parsed.resolve(func.id)
    for attr in path:
        obj = getattr(obj, attr, None)
    try:
        return wrappers.get(obj) if found else None
    except TypeError:
        return None


def _parts(fn: Any, wrappers: dict) -> tuple | None:
    """(parsed, outer statements, inner arguments, inner body) of fn, or None."""
    if not isinstance(fn, types.FunctionType):
        return None
    try:
        parsed = read_function(fn)
    except S2SError:
        return None
    node = parsed.node
    body = list(node.body)
    if body and isinstance(body[0], gast.Expr) and isinstance(body[0].value, gast.Constant) \
            and isinstance(body[0].value.value, str):
        body = body[1:]                                        # a docstring
    if not body or not isinstance(body[-1], gast.Return) or body[-1].value is None:
        return None
    returned = body[-1].value
    outer = body[:-1]
    if isinstance(returned, gast.Lambda):
        ret = located(gast.Return(value=returned.body), returned.body)
        return parsed, outer, returned.args, [ret]
    if isinstance(returned, gast.Call):
        replacement = _wrapper(parsed, returned, wrappers)
        if replacement is None:
            return None
        target, lam = returned.args
        value = located(gast.Call(func=constant(replacement, returned), args=[lam.body, target], keywords=[]),
                        lam.body)
        return parsed, outer, lam.args, [located(gast.Return(value=value), lam.body)]
    if isinstance(returned, gast.Name):
        defs = [s for s in outer if isinstance(s, gast.FunctionDef) and s.name == returned.id]
        if len(defs) != 1 or defs[0].decorator_list:
            return None
        inner = defs[0]
        if any(isinstance(n, gast.Name) and n.id == returned.id for s in outer if s is not inner
               for n in gast.walk(s)):
            return None                  # the inner function is used otherwise too
        return parsed, [s for s in outer if s is not inner], inner.args, inner.body
    return None


def _names(nodes: list, stored: bool) -> set[str]:
    return {n.id for s in nodes for n in gast.walk(s) if isinstance(n, gast.Name)
            and isinstance(n.ctx, (gast.Store, gast.Del)) == stored}


def _uncurried(fn: Any, inner_first: bool, name: str | None, wrappers: dict) -> types.FunctionType | None:
    parts = _parts(fn, wrappers)
    if parts is None:
        return None
    parsed, outer, inner_args, inner_body = parts
    if inner_args.vararg or inner_args.kwarg or inner_args.kwonlyargs or inner_args.defaults:
        return None
    outer_args = parsed.node.args
    if any(isinstance(n, gast.Nonlocal) for s in inner_body for n in gast.walk(s)):
        return None
    inner_params = {a.id for a in inner_args.posonlyargs + inner_args.args}
    outer_params = {a.id for a in outer_args.posonlyargs + outer_args.args + outer_args.kwonlyargs}
    outer_names = outer_params | _names(outer, True) | _names(outer, False)
    if inner_params & outer_names or (_names(inner_body, True) - inner_params) & outer_names:
        return None
    if not inner_first and (outer_args.defaults or outer_args.kwonlyargs or outer_args.vararg or outer_args.kwarg):
        return None
    args = clone_tree(outer_args)
    inner = clone_tree(inner_args.posonlyargs + inner_args.args)
    for a in inner:
        a.ctx = gast.Param()
    if inner_first:
        args.args = inner + list(args.posonlyargs) + list(args.args)
    else:
        args.args = list(args.posonlyargs) + list(args.args) + inner
    args.posonlyargs = []
    target = name or f"{fn.__name__ if fn.__name__.isidentifier() else 'rule'}_uncurried"
    node = gast.FunctionDef(name=target, args=args, body=clone_tree(outer) + clone_tree(inner_body),
                            decorator_list=[], returns=None, type_comment=None)
    located(node, parsed.node)
    made = _function_object(parsed, node, target)      # (what s2s reads is the tree registered with it)
    register_synthetic(made, Synthetic(node, parsed.filename, Facts(), line_offset=parsed.line_offset,
                                       col_offset=parsed.col_offset))
    return made
