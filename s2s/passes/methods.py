"""Methods of argument objects, inlined once the arguments' kinds are known.

A call on an object known only when the code runs (`model.forward(x)`, `layer(x)`, `self.activation(h)`) is
lowered as a method call (s2s/frontend/desugar/objects.py). When the object is an argument read as a namedtuple (a
NamedTuple, a dataclass or a registered class: s2s/driver/objects.py), its kind names its class, so the call is the
class's method applied to it: inlined here from the method's source, as a call of the user's function is, with
`self` the value (its fields read by position: s2s/passes/sequences.py). A constant field holding a function
(`self.activation`) is that function, called. A loop over a list of objects of different classes (`for layer in
layers: x = layer(x)`) is unrolled first (s2s/passes/unroll.py), so that each call dispatches on its item's class.
"""
from __future__ import annotations

import types
from typing import Any

from s2s.ir import syntax
from s2s.errors import UnsupportedSyntax
from s2s.frontend.desugar.helpers import CALL_OF_A_VALUE, call_method
from s2s.frontend.policy import is_user_function
from s2s.ir.core import Atom, Const, Function, Op, Value, clone_block, substitute, walk
from s2s.ir.naming import Namer
from s2s.passes import sequences
from s2s.passes.unroll import unroll

_DEPTH = 16         # methods calling methods (a model calling its layers), at most this deep


def _method_call(op: Op) -> bool:
    name = getattr(op.prim, "__name__", "")
    return (op.prim is call_method or name.startswith("method_call_")) and len(op.args) >= 2 \
        and isinstance(op.args[1], Const) and isinstance(op.args[1].value, str)


def _owner(kind: Any) -> Any:
    """The class of a value of this kind, when its kind names one (a namedtuple's, an object read as one)."""
    if isinstance(kind, tuple) and len(kind) > 2:
        return getattr(kind[2], "owner", None)
    return None


def _target(op: Op, kinds: dict) -> Any:
    """The function a method call runs (a plain function of the user's, or a library function), or None."""
    obj = op.args[0]
    if not isinstance(obj, Value):
        return None
    kind = kinds.get(id(obj))
    owner = _owner(kind)
    if owner is None:
        return None
    name = op.args[1].value
    if name == CALL_OF_A_VALUE:
        name = "__call__"
    is_static, value = kind[2].static(name) if hasattr(kind[2], "static") else (False, None)
    if is_static:                       # self.activation(x): the function the field holds
        return ("static", value)
    method = getattr(owner, name, None)
    if isinstance(method, types.FunctionType) and is_user_function(method):
        return ("method", method)
    return None


def _object_kind(kind: Any) -> bool:
    """A kind of an object read as a namedtuple (a dataclass's, a registered class's: not a tuple in Python)."""
    owner = _owner(kind)
    return owner is not None and not (isinstance(owner, type) and issubclass(owner, tuple))


def refuse_indexing(fn: Function, kinds: list) -> None:
    """An object read as a namedtuple is indexed (`p[1]`, `w, b = p`, `len(p)`) nowhere in fn's own code: Python
    would refuse it (s2s reads its fields by position only for `p.w`)."""
    if not any(_object_kind(k) or isinstance(k, tuple) and any(_object_kind(i) for i in _kinds_in(k))
               for k in kinds):
        return
    found = sequences.kinds_of(fn, kinds)
    for st in walk(fn.body):
        if isinstance(st, Op) and st.prim in (syntax.SUBSCRIPT, len) and st.args and isinstance(st.args[0], Value) \
                and _object_kind(found.get(id(st.args[0]))):
            owner = _owner(found.get(id(st.args[0])))
            raise UnsupportedSyntax(f"an object of {owner.__name__} is indexed here, which Python refuses: s2s reads "
                                    f"it as its fields, by name", st.loc,
                                    hint="read its fields by name (p.w), or make the class a typing.NamedTuple")


def _kinds_in(kind: Any) -> list:
    found = []
    if isinstance(kind, tuple) and len(kind) > 1 and isinstance(kind[1], tuple):
        for item in kind[1]:
            item = item[1] if isinstance(item, tuple) and len(item) == 2 and isinstance(item[0], str) else item
            found.append(item)
            found.extend(_kinds_in(item))
    return found


def inline_methods(fn: Function, kinds: list, primal_ir: Any) -> Function:
    """fn with the methods called on its argument objects inlined (fn itself when there is none); primal_ir(f):
    the IR of a function of the user's (s2s/driver/primal.py)."""
    if not any(isinstance(st, Op) and _method_call(st) for st in walk(fn.body)):
        return fn
    fn = _inline_methods(fn, kinds, primal_ir)
    for st in walk(fn.body):            # `g(x)` on a variable that holds no object of a known class
        if isinstance(st, Op) and _method_call(st) and st.args[1].value == CALL_OF_A_VALUE:
            raise UnsupportedSyntax("s2s only differentiates calls to functions it can name statically", st.loc,
                                    hint="call the function by its name, not through a computed expression (an "
                                         "object passed as an argument is called through its class: a NamedTuple, "
                                         "a dataclass or a registered class)")
    return fn


def _inline_methods(fn: Function, kinds: list, primal_ir: Any) -> Function:
    namer = Namer()
    for st in walk(fn.body):
        for v in (st.outs if isinstance(st, Op) else []):
            namer.reserve(v.name)
    for _ in range(_DEPTH):
        fn = sequences.resolve(fn, kinds)
        found = sequences.kinds_of(fn, kinds)
        calls = [st for st in walk(fn.body) if isinstance(st, Op) and _method_call(st)]
        if not calls:
            return fn
        targets = [(st, _target(st, found)) for st in calls]
        if not any(t is not None for _, t in targets):
            fn = unroll(fn, kinds)      # a loop over a list of objects: each item's class known
            found = sequences.kinds_of(sequences.resolve(fn, kinds), kinds)
            targets = [(st, _target(st, found)) for st in walk(fn.body) if isinstance(st, Op) and _method_call(st)]
            if not any(t is not None for _, t in targets):
                return fn
        for st, target in targets:
            if target is not None:
                _inline(fn, st, target, namer, primal_ir)
    return sequences.resolve(fn, kinds)


def _inline(fn: Function, op: Op, target: tuple, namer: Namer, primal_ir: Any) -> None:
    how, function = target
    args = list(op.args[2:])
    if how == "method":
        args = [op.args[0]] + args
    if not is_user_function(function):      # a library function held by a field: called as it is
        _replace(fn, op, [Op(function, args, list(op.outs), dict(op.kwargs), op.loc)])
        return
    callee = primal_ir(function)
    params = callee.params
    if len(args) > len(params) or op.kwargs:
        defaults = function.__defaults__ or ()
        names = function.__code__.co_varnames[:function.__code__.co_argcount]
        bound = dict(zip(names, args))
        for k, a in op.kwargs.items():
            bound[k] = a
        first_default = len(names) - len(defaults)
        args = [bound[n] if n in bound else Const(defaults[k - first_default]) for k, n in enumerate(names)]
    elif len(args) < len(params):
        defaults = function.__defaults__ or ()
        missing = len(params) - len(args)
        args = args + [Const(d) for d in defaults[len(defaults) - missing:]]
    mapping: dict[int, Atom] = {id(p): a for p, a in zip(params, args)}
    body = clone_block(callee.body, mapping, lambda v: namer.value(v.hint), op.loc)
    result = body.results[0] if len(body.results) == 1 else None
    stmts = list(body.stmts)
    if result is None:
        from s2s import runtime
        stmts.append(Op(runtime.make_tuple, list(body.results), list(op.outs), {}, op.loc))
    else:
        out = op.outs[0]
        _replace(fn, op, stmts)
        substitute(fn.body, {id(out): result})
        return
    _replace(fn, op, stmts)


def _replace(fn: Function, target: Op, new: list) -> None:
    sequences._replace(fn, target, new)
