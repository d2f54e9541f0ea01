"""Activity analysis, and which values are known to be scalars.

`active_values(fn, wrt)` gives the values that both depend on a differentiated
parameter (through differentiable primitives) and reach the function's
result: only they get adjoints or tangents. Constants, integers from `len` or
`//`, comparisons and everything computed from them are inactive.

`scalar_values(fn, param_is_scalar)` gives the values known to be Python or
NumPy scalars, so the transforms can write `0.0` instead of `np.zeros_like(x)`
and skip unbroadcasting where no broadcasting can happen.
"""
from __future__ import annotations

import builtins
import math
import operator
from typing import Callable

import numpy as np

from . import registry, runtime
from .ir import UNDEFINED, Atom, Block, Const, For, Function, If, Op, Value, While, stmt_blocks


def _differentiable(op: Op) -> bool:
    return not registry.is_nondifferentiable(op.prim) and op.prim is not runtime.free_name


def _fixpoint(step: Callable[[], bool]) -> None:
    while step():
        pass


def varied_values(fn: Function, wrt: list[int]) -> set[int]:
    varied = {id(fn.params[i]) for i in wrt}

    def is_varied(atom: Atom) -> bool:
        return isinstance(atom, Value) and id(atom) in varied

    def mark(values: list[Value]) -> bool:
        new = [v for v in values if id(v) not in varied]
        varied.update(id(v) for v in new)
        return bool(new)

    def block(b: Block) -> bool:
        changed = False
        for stmt in b.stmts:
            if isinstance(stmt, Op):
                args = list(stmt.args) + list(stmt.kwargs.values())
                if stmt.prim is runtime.push:           # a stack varies once a varying value is pushed on it
                    if is_varied(stmt.args[1]):
                        changed |= mark([stmt.args[0]])
                elif _differentiable(stmt) and any(is_varied(a) for a in args):
                    changed |= mark(stmt.outs)
            elif isinstance(stmt, If):
                changed |= block(stmt.then) | block(stmt.orelse)
                changed |= mark([o for o, a, b_ in zip(stmt.outs, stmt.then.results, stmt.orelse.results)
                                 if is_varied(a) or is_varied(b_)])
            else:
                changed |= mark([c for c, i in zip(stmt.carried, stmt.inits) if is_varied(i)])
                if isinstance(stmt, While):
                    changed |= block(stmt.test)
                changed |= block(stmt.body)
                changed |= mark([c for c, r in zip(stmt.carried, stmt.body.results) if is_varied(r)])
                changed |= mark([o for o, c in zip(stmt.outs, stmt.carried) if id(c) in varied])
        return changed

    _fixpoint(lambda: block(fn.body))
    return varied


def useful_values(fn: Function) -> set[int]:
    """Values from which a result can be reached through differentiable primitives."""
    useful: set[int] = set()

    def mark(atoms: list[Atom]) -> bool:
        new = [a for a in atoms if isinstance(a, Value) and id(a) not in useful]
        useful.update(id(a) for a in new)
        return bool(new)

    def is_useful(v: Value) -> bool:
        return id(v) in useful

    def block(b: Block) -> bool:
        changed = False
        for stmt in reversed(b.stmts):
            if isinstance(stmt, Op):
                if stmt.prim is runtime.push:
                    if is_useful(stmt.args[0]):
                        changed |= mark([stmt.args[1]])
                elif _differentiable(stmt) and any(is_useful(o) for o in stmt.outs):
                    changed |= mark(list(stmt.args) + list(stmt.kwargs.values()))
            elif isinstance(stmt, If):
                for o, a, b_ in zip(stmt.outs, stmt.then.results, stmt.orelse.results):
                    if is_useful(o):
                        changed |= mark([a, b_])
                changed |= block(stmt.then) | block(stmt.orelse)
            else:
                changed |= mark([c for c, o in zip(stmt.carried, stmt.outs) if is_useful(o)])
                for c, r, i in zip(stmt.carried, stmt.body.results, stmt.inits):
                    if is_useful(c):
                        changed |= mark([r, i])
                changed |= block(stmt.body)
        return changed

    mark(fn.body.results)
    _fixpoint(lambda: block(fn.body))
    return useful


def active_values(fn: Function, wrt: list[int]) -> set[int]:
    return varied_values(fn, wrt) & useful_values(fn)


# ---------------------------------------------------------------- scalars

_SCALAR_RESULT = {len, float, int, round, bool, math.floor, math.ceil, math.trunc, math.isnan, math.isinf}
_SCALAR_IF_SCALAR_ARGS = {abs, min, max, pow, builtins.sum}
# reductions that give a scalar when no axis is given
_FULL_REDUCTIONS = {np.sum, np.mean, np.prod, np.max, np.min, np.amax, np.amin, np.var, np.std, np.linalg.norm,
                    np.linalg.det, np.trace}


def _is_scalar_const(atom: Atom) -> bool:
    # None and UNDEFINED stand for "no value yet" (a return value before the return): they never vary
    return isinstance(atom, Const) and (isinstance(atom.value, (int, float, bool, np.generic))
                                        or atom.value is None or atom.value is UNDEFINED)


def scalar_values(fn: Function, param_is_scalar: list[bool]) -> set[int]:
    """Optimistic: a loop-carried value is scalar unless its update is not; a demotion restarts the pass."""
    demoted: set[int] = set()
    while True:
        scalars, violations = _scalar_pass(fn, param_is_scalar, demoted)
        if not violations:
            return scalars
        demoted |= violations


def _scalar_pass(fn: Function, param_is_scalar: list[bool], demoted: set[int]) -> tuple[set[int], set[int]]:
    scalars = {id(p) for p, s in zip(fn.params, param_is_scalar) if s}
    violations: set[int] = set()

    def is_scalar(atom: Atom) -> bool:
        return _is_scalar_const(atom) or (isinstance(atom, Value) and id(atom) in scalars)

    def op_is_scalar(op: Op) -> bool:
        prim = op.prim
        args = list(op.args) + list(op.kwargs.values())
        if prim in _SCALAR_RESULT or (getattr(prim, "__module__", None) == "math" and callable(prim)):
            return True
        if prim in _FULL_REDUCTIONS and len(op.args) == 1 and op.kwargs.get("axis", Const(None)) == Const(None):
            return True
        elementwise = prim in _SCALAR_IF_SCALAR_ARGS or isinstance(prim, np.ufunc) or (
            getattr(prim, "__module__", None) in ("_operator", "operator")
            and prim not in (operator.getitem, operator.contains))
        return elementwise and all(is_scalar(a) for a in args)

    def block(b: Block) -> None:
        for stmt in b.stmts:
            if isinstance(stmt, Op):
                if op_is_scalar(stmt):
                    scalars.update(id(o) for o in stmt.outs)
            elif isinstance(stmt, If):
                block(stmt.then)
                block(stmt.orelse)
                scalars.update(id(o) for o, a, b_ in zip(stmt.outs, stmt.then.results, stmt.orelse.results)
                               if is_scalar(a) and is_scalar(b_))
            else:
                if isinstance(stmt, For):
                    scalars.add(id(stmt.index))
                scalars.update(id(c) for c, i in zip(stmt.carried, stmt.inits)
                               if is_scalar(i) and id(c) not in demoted)
                if isinstance(stmt, While):
                    block(stmt.test)
                block(stmt.body)
                for c, r, o in zip(stmt.carried, stmt.body.results, stmt.outs):
                    if id(c) in scalars:
                        if is_scalar(r):
                            scalars.add(id(o))
                        else:
                            violations.add(id(c))

    block(fn.body)
    return scalars, violations


# ---------------------------------------------------------------- floats

def _float_producing(prim: object) -> bool:
    """A function whose result is a float whatever numbers it gets (exp, log, true division...)."""
    if isinstance(prim, np.ufunc):
        return all(t.split("->")[-1][-1:] in "efdgFDGO" for t in prim.types)
    return prim is operator.truediv or getattr(prim, "__module__", None) == "math"


def float_values(fn: Function, float_params: list[int]) -> set[int]:
    """Values known to be floats (or float arrays): what they hold can be overwritten by float results."""
    floats = {id(fn.params[i]) for i in float_params}

    def is_float(atom: Atom) -> bool:
        if isinstance(atom, Const):
            return isinstance(atom.value, float)
        return id(atom) in floats

    def block(b: Block) -> None:
        for stmt in b.stmts:
            if isinstance(stmt, Op):
                if _float_producing(stmt.prim) or (any(is_float(a) for a in stmt.args)
                                                   and not registry.is_nondifferentiable(stmt.prim)
                                                   and stmt.prim not in (runtime.pop, runtime.free_name)):
                    floats.update(id(o) for o in stmt.outs)
            for inner in stmt_blocks(stmt):
                block(inner)

    block(fn.body)
    return floats
