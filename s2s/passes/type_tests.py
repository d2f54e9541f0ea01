"""`isinstance` tests that the kinds of the arguments decide, folded, with the branches they decide.

A derivative is made for arguments of given kinds (a tuple of two floats, an array, a float): `isinstance(x, tuple)`
with x known to be a tuple is True, `isinstance(x, (tuple, list))` with x an array or a number is False. A tree
walk (`if isinstance(tree, tuple): ... else: return tree * w`) then keeps only the path the kinds take, and what
stands on the other (a tuple times a float) is never read as arithmetic on a tuple. Likewise a library's
`scipy.sparse.issparse(X)` (read as user code: `isinstance(X, _spbase)`) on a dense array is False, and
`if sp.issparse(X): ... X.data ...` is a branch that cannot run.

`fold(fn, param_kinds)` accepts a primal IR (before the transform) and its parameters' kinds and guarantees that a
test is folded only where its answer is the same for every type a value of that kind may have: a tuple kind may be
a namedtuple (a test against a namedtuple class is left as it is); an array kind a NumPy array or an array of a
library that takes NumPy's functions (Dask, CuPy); a number kind a Python or NumPy number (a test against `float`
is left as it is). Branches decided by a folded test are removed (optimize.simplify).
"""
from __future__ import annotations

import builtins
import sys
from typing import Any

import numpy as np

from s2s.analysis.activity import value_kinds
from s2s.analysis.values import is_container
from s2s.ir.core import Atom, Block, Const, Function, Op, Value, stmt_blocks, substitute, walk
from s2s.passes.optimize import changed, simplify

_CONTAINERS = {"tuple": tuple, "list": list, "list*": list, "dict": dict}
_OTHER_TYPES = (tuple, list, dict, set, frozenset, str, bytes)
_SCALARS = (float, int, bool, complex, np.float64, np.float32, np.float16, np.int64, np.int32, np.bool_,
            np.complex128, np.complex64)


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
    changed(fn)
    return simplify(fn)         # the branch a test decided: the one taken, alone


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
    candidates = _arrays() if kind == "array" else _SCALARS if kind == "scalar" else ()
    answers = {issubclass(t, flat) for t in candidates}
    return answers.pop() if len(answers) == 1 else None


def _arrays() -> tuple:
    found = [np.ndarray]
    for module, name in (("dask.array", "Array"), ("cupy", "ndarray")):      # imported by whoever uses them
        held = sys.modules.get(module)
        if held is not None and isinstance(getattr(held, name, None), type):
            found.append(getattr(held, name))
    return tuple(found)


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
