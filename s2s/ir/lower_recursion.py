"""Lowering a recursive call: an operation that calls the function, instead of its body inlined once more.

Accepts a call of one of the user's functions met while that function is being inlined (f calls f, or f calls g
which calls f). Guarantees: the call is one `Op` whose primitive is the function's `Callee` (s2s/ir/calls.py),
made once per function (and per functions passed to it as arguments), with every parameter given (defaults filled
in) in the order of the function's parameters. The function's own IR is lowered when first asked for (its body
calls it again: lowering it here would not end). The result's kind, for activity analysis, is the kind the
function's body gives for the arguments' kinds: a fixed point over its recursive calls.

The transforms make a derivative of such a call by calling derivative functions made from the function's IR (a
forward sweep that returns what its reverse sweep reads, the reverse sweep, a jvp): s2s/transforms/recursion.py.
A recursion that the values known when the derivative is made bound is unrolled where the front end folds those
values (a call specialized on them is another function, inlined).
"""
from __future__ import annotations

import inspect
import weakref
from typing import TYPE_CHECKING, Any

import gast

from s2s.errors import S2SError, UnsupportedSyntax
from s2s.frontend.parse import parse_function
from s2s.ir.calls import Callee
from s2s.ir.core import Atom, Const, Function, Value
from s2s.rules import registry

if TYPE_CHECKING:
    from s2s.ir.lower import Lowerer

_CALLEES: "weakref.WeakKeyDictionary[Any, dict]" = weakref.WeakKeyDictionary()


def recursive_call(lw: "Lowerer", callee: Any, args: list[Atom], kwargs: dict[str, Atom], node: Any) -> Atom:
    signature = inspect.signature(callee)
    if any(p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD, p.KEYWORD_ONLY) for p in signature.parameters.values()):
        raise lw.error(f"s2s differentiates a recursive function with ordinary parameters; {callee.__qualname__} "
                       f"takes star-arguments or keyword-only ones", node,
                       hint="give it ordinary parameters")
    try:
        bound = signature.bind(*args, **kwargs)
    except TypeError as exc:
        raise lw.error(f"the call to {callee.__qualname__} does not match its signature: {exc}", node,
                       cls=S2SError) from None
    bound.apply_defaults()
    values: list[Atom] = []
    functions: dict[str, Any] = {}
    for name, value in bound.arguments.items():
        if isinstance(value, Value):            # a function the caller was given (known when it was inlined)
            held = next((f for param, f in lw.functions.items() if lw.env.get(f"$param:{param}") is value), None)
            value = Const(held) if held is not None else value
        atom = value if isinstance(value, (Value, Const)) else Const(value)
        if isinstance(atom, Const) and callable(atom.value) and not isinstance(atom.value, type):
            functions[name] = atom.value
        values.append(atom)
    target = callee_of(lw, callee, functions)
    written = target.written                    # (parameters it writes into: a cache every call fills)
    outs = lw.op(target, values, node, n_outs=1 + len(written))
    if not written:
        return outs
    names = list(signature.parameters)
    for position, final in zip(written, outs[1:]):
        # the caller's variable holds the dict (or list, or array) as the call left it, as Python's would
        lw.follow_write(names[position], values[position], final, callee, node, lw.parsed.loc(node))
    return outs[0]


def written_parameters(callee: Any) -> tuple[int, ...]:
    """The positions of the parameters callee writes into (`memo[key] = v`, `xs.append(v)`) and never rebinds."""
    tree = parse_function(callee).node
    params = [a.id for a in tree.args.posonlyargs + tree.args.args]
    rebound, written = set(), set()
    for node in (n for stmt in tree.body for n in gast.walk(stmt)):
        if isinstance(node, gast.Name) and isinstance(node.ctx, gast.Store):
            rebound.add(node.id)
        elif isinstance(node, gast.Subscript) and isinstance(node.ctx, gast.Store) and isinstance(node.value, gast.Name):
            written.add(node.value.id)
        elif isinstance(node, gast.Call) and isinstance(node.func, gast.Attribute) \
                and isinstance(node.func.value, gast.Name) and node.func.attr in ("append", "pop"):
            written.add(node.func.value.id)
    return tuple(k for k, p in enumerate(params) if p in written and p not in rebound)


def callee_of(lw: "Lowerer", callee: Any, functions: dict[str, Any]) -> Callee:
    by_functions = _CALLEES.setdefault(callee, {})
    key = tuple(sorted((name, id(f)) for name, f in functions.items()))
    made = by_functions.get(key)
    if made is not None and all(made[1].get(n) is f for n, f in functions.items()):
        return made[0]
    lowerer = type(lw)
    written = written_parameters(callee)

    def lower() -> Function:
        # lowered as a callee (its writes into its parameters are followed, and returned after its value)
        fn = lowerer(parse_function(callee), call_stack=[callee, callee], functions=dict(functions)).lower_function()
        if tuple(fn.param_writes) != written:
            raise UnsupportedSyntax(
                f"s2s cannot tell which of its arguments the recursive function {callee.__qualname__} writes into "
                f"(a cache filled by every call)", fn.writes_arguments or fn.loc,
                hint="write into the cache with `cache[key] = value` on the parameter itself, without rebinding it")
        return fn
    # a function that writes into its arguments returns them too: its primal call is made from its IR
    target = Callee(callee.__name__ if not written else f"{callee.__name__}_call", python=None if written else callee,
                    lower=lower)
    target.origin = callee
    target.written = written            # type: ignore[attr-defined]
    by_functions[key] = (target, dict(functions))
    registry.result_kind_from(target, kind=lambda kinds: result_kind(target, kinds))
    return target


_COMPUTING: dict[tuple, Any] = {}


def result_kind(target: Callee, arg_kinds: list) -> Any:
    """The kind of what target returns given its arguments' kinds: its body's, with its recursive calls assumed to
    give a kind that the body then confirms (a scalar, then what the body joins it with)."""
    from s2s.analysis.activity import const_kind, value_kinds
    try:
        key = (id(target), tuple(arg_kinds))
        hash(key)
    except TypeError:
        return None
    known = getattr(target, "known_kinds", None)
    if known is None:
        known = target.known_kinds = {}         # type: ignore[attr-defined]
    if key in known:
        return known[key]
    if key in _COMPUTING:
        return _COMPUTING[key]
    fn = target.function()
    assumption: Any = "scalar" if len(fn.body.results) == 1 else \
        ["scalar", *(arg_kinds[k] for k in target.written)]        # type: ignore[attr-defined]
    for _ in range(4):
        _COMPUTING[key] = assumption
        try:
            kinds = value_kinds(fn, list(arg_kinds))
        finally:
            del _COMPUTING[key]
        found = [const_kind(r.value) if isinstance(r, Const) else kinds.get(id(r), "other") for r in fn.body.results]
        found = found[0] if len(found) == 1 else found       # (several: its value, and the arguments it wrote)
        if found == assumption:
            break
        assumption = found
    else:
        assumption = "other" if len(fn.body.results) == 1 else ["other"] * len(fn.body.results)
    known[key] = assumption
    return assumption

