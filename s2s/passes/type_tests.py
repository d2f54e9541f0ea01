"""Type tests the arguments' kinds decide, folded before the transform.

A derivative is specialized on its arguments' kinds: an array is a NumPy array (or an array of a library that
takes NumPy's functions: Dask, CuPy), a number a Python or NumPy number. `isinstance(v, cls)` on such a value is
then known when the derivative is made whenever every type the value may have answers the same: a library's
`scipy.sparse.issparse(X)` (read as user code: `isinstance(X, _spbase)`) on a dense array is False, and
`if sp.issparse(X): ... X.data ...` is a branch that cannot run. The result is a constant; simplify (passes/
optimize.py) keeps the branch taken, so the transform never sees the other.

Accepts a primal IR (before the transform) and the argument kinds; changes nothing a kind does not decide.
"""
from __future__ import annotations

import sys

import numpy as np

from s2s.analysis.activity import value_kinds
from s2s.ir.core import Const, Function, Op, Value, substitute, walk
from s2s.passes.optimize import changed, simplify

_SCALARS = (float, int, bool, complex, np.float64, np.float32, np.float16, np.int64, np.int32, np.bool_,
            np.complex128, np.complex64)


def _arrays() -> tuple:
    found = [np.ndarray]
    for module, name in (("dask.array", "Array"), ("cupy", "ndarray")):      # imported by whoever uses them
        held = sys.modules.get(module)
        if held is not None and isinstance(getattr(held, name, None), type):
            found.append(getattr(held, name))
    return tuple(found)


def fold_type_tests(fn: Function, kinds: list) -> Function:
    tests = [op for op in walk(fn.body) if isinstance(op, Op) and op.prim is isinstance and len(op.args) == 2
             and isinstance(op.args[0], Value) and isinstance(op.args[1], Const) and len(op.outs) == 1]
    if not tests:
        return fn
    found = value_kinds(fn, kinds)
    mapping = {}
    for op in tests:
        kind = found.get(id(op.args[0]))
        candidates = _arrays() if kind == "array" else _SCALARS if kind == "scalar" else ()
        cls = op.args[1].value
        if not candidates or not (isinstance(cls, type) or isinstance(cls, tuple) and all(
                isinstance(c, type) for c in cls)):
            continue
        answers = {issubclass(t, cls) for t in candidates}
        if len(answers) == 1:
            mapping[id(op.outs[0])] = Const(answers.pop())
    if mapping:
        substitute(fn.body, mapping)
        changed(fn)
        fn = simplify(fn)           # the branch a test decided: the one taken, alone
    return fn
