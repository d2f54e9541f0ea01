"""Inlining of rules: a rule is a Python function, parsed and lowered once, copied into each use.

`inline_rule(rule, args, kwargs, namer, loc)` binds the rule's parameters to
atoms of the function being built and returns the copied statements and the
atoms the rule returns, one per element of its returned tuple (None where the
rule returns None: no adjoint). The copies carry `loc`, the place in the
user's code whose derivative they compute.
"""
from __future__ import annotations

import inspect
from typing import Any, Callable

from s2s import runtime
from s2s.errors import NoDerivativeRule, S2SError
from s2s.frontend.parse import parse_function
from s2s.ir.core import Atom, Const, Function, Loc, Op, Stmt, Value, clone_block, prim_name, verify
from s2s.ir.lower import lower
from s2s.ir.naming import Namer

_TEMPLATES: dict[Callable, tuple[Function, inspect.Signature]] = {}


def rule_ir(rule: Callable) -> tuple[Function, inspect.Signature]:
    cached = _TEMPLATES.get(rule)
    if cached is None:
        cached = _TEMPLATES[rule] = (verify(lower(parse_function(rule))), inspect.signature(rule))
    return cached


def with_keywords(rule: Callable, kwargs: dict) -> Callable:
    """rule, or its variant for calls with keywords it does not take (np.sum's where=: rule.with_keywords)."""
    variant = getattr(rule, "with_keywords", None)
    if variant is not None and kwargs and any(name not in inspect.signature(rule).parameters for name in kwargs):
        return variant
    return rule


def inline_rule(rule: Callable, args: list[Atom], kwargs: dict[str, Atom], namer: Namer,
                loc: Loc | None, prim: Any = None) -> tuple[list[Stmt], list[Atom | None]]:
    rule = with_keywords(rule, kwargs)
    fn, signature = rule_ir(rule)
    names = list(signature.parameters)
    if len(args) > len(names):
        raise S2SError(f"the rule {rule.__module__}.{rule.__qualname__} takes {len(names)} arguments "
                       f"but the call passes {len(args)}", loc)
    mapping: dict[int, Atom] = {}
    bound = dict(zip(names, args))
    for name, atom in kwargs.items():
        if name not in signature.parameters:
            called = prim_name(prim) if prim is not None else rule.__qualname__
            raise NoDerivativeRule(
                f"s2s's rule for {called} does not take the keyword argument {name}= that this call passes", loc,
                hint=f"write the call without {name}= (select the values with np.where or indexing before the call, "
                     f"or pass the argument positionally if {called} takes it so), or wrap the call in "
                     f"s2s.stop_gradient(...) if it needs no derivative")
        bound[name] = atom
    for param, name in zip(fn.params, names):
        if name in bound:
            mapping[id(param)] = bound[name]
        elif signature.parameters[name].default is not inspect.Parameter.empty:
            mapping[id(param)] = Const(signature.parameters[name].default)
        else:
            raise S2SError(f"the rule {rule.__qualname__} needs the argument {name!r}, which this call omits", loc)
    block = clone_block(fn.body, mapping, lambda v: namer.value(""), loc)
    return rule_results(block.stmts, block.results[0])


def rule_results(stmts: list[Stmt], result: Atom) -> tuple[list[Stmt], list[Atom | None]]:
    """A rule's copied statements and its result as one atom per item of the tuple it returns (None: no
    adjoint or tangent for that argument); the tuple itself is not built."""
    if isinstance(result, Const) and isinstance(result.value, tuple):
        items: list[Any] = [Const(v) for v in result.value]
    elif (isinstance(result, Value) and stmts and isinstance(stmts[-1], Op)
          and stmts[-1].prim is runtime.make_tuple and stmts[-1].outs[0] is result):
        items = list(stmts[-1].args)
        stmts = stmts[:-1]
    else:
        items = [result]
    return stmts, [None if isinstance(i, Const) and i.value is None else i for i in items]
