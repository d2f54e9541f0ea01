"""`isinstance` tests that the kinds of the arguments decide, folded, with the branches they decide.

A derivative is made for arguments of given kinds (a tuple of two floats, an array, a float): `isinstance(x, tuple)`
with x known to be a tuple is True, `isinstance(x, (tuple, list))` with x an array or a number is False. A tree
walk (`if isinstance(tree, tuple): ... else: return tree * w`) then keeps only the path the kinds take, and what
stands on the other (a tuple times a float) is never read as arithmetic on a tuple.

`fold(fn, param_kinds)` accepts a function and its parameters' kinds and guarantees that a test is folded only
where its answer is certain for every value of those kinds: a tuple kind may be a namedtuple (a test against a
namedtuple class is left as it is), an array kind may be another library's array, a number kind an int or a float
(a test against `float` is left as it is). Branches decided by a folded test are removed (optimize.simplify).
"""
from __future__ import annotations

import builtins
from typing import Any

import numpy as np

from s2s.analysis.activity import value_kinds
from s2s.analysis.values import NUMERIC, is_container
from s2s.ir.core import Atom, Block, Const, Function, Op, Value, stmt_blocks, substitute, walk
from s2s.passes.optimize import simplify

_CONTAINERS = {"tuple": tuple, "list": list, "list*": list, "dict": dict}
_OTHER_TYPES = (tuple, list, dict, set, frozenset, str, bytes)


def fold(fn: Function, param_kinds: list) -> Function:
    tests = [s for s in walk(fn.body) if isinstance(s, Op) and s.prim is builtins.isinstance and len(s.args) == 2
             and isinstance(s.args[0], Value) and isinstance(s.args[1], Const) and len(s.outs) == 1]
    if not tests:
        return fn
    kinds = value_kinds(fn, param_kinds)
    answers: dict[int, Atom] = {}
    for op in tests:
        answer = decide(kinds.get(id(op.args[0])), op.args[1].value)
        if answer is not None:
            answers[id(op.outs[0])] = Const(answer)
    if not answers:
        return fn
    _drop(fn.body, answers)
    substitute(fn.body, answers)
    return simplify(fn)


def _drop(block: Block, answers: dict[int, Atom]) -> None:
    block.stmts = [s for s in block.stmts if not (isinstance(s, Op) and s.outs and id(s.outs[0]) in answers)]
    for stmt in block.stmts:
        for inner in stmt_blocks(stmt):
            _drop(inner, answers)


def decide(kind: Any, classes: Any) -> bool | None:
    """isinstance(value, classes) for every value of kind, or None when it depends on the value."""
    flat = _flat(classes)
    if flat is None:
        return None
    if is_container(kind) and kind[0] in _CONTAINERS:
        own = _CONTAINERS[kind[0]]
        if any(c is own or c is object for c in flat):
            return True
        if all(c in _OTHER_TYPES or c in (int, float, complex, bool, np.ndarray, np.generic) for c in flat):
            return False
        return None
    if kind in NUMERIC:
        return False if all(c in _OTHER_TYPES for c in flat) else None
    return None


def _flat(classes: Any) -> tuple | None:
    if isinstance(classes, type):
        return (classes,)
    if isinstance(classes, tuple):
        out: tuple = ()
        for c in classes:
            inner = _flat(c)
            if inner is None:
                return None
            out += inner
        return out
    return None
