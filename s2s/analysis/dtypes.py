"""Which arrays hold integers (or booleans) and which hold floats, as far as the function's own code decides.

A float written into an integer array is truncated: after `a = np.arange(5); a[0] = v` the array keeps no
derivative of v, and nothing computed from a does. So the transform must know, at every write `a[i] = v` of a value
that carries a derivative, which of the two a is:

- `integer_arrays(fn)`: the arrays the code makes integer or boolean (`np.arange(5)`, `np.array([1, 2])`,
  `np.full(3, 2)`, `np.zeros(3, dtype=int)`, `x.astype(int)`, `np.zeros_like` of one, a copy, reshape or slice of
  one, ...): activity gives a write into them, and everything made from them, no derivative.
- where the code does not decide (an array argument that is not differentiated, what a library function
  returns), s2s/passes/dtype_guards.py puts a check before the write, when it runs: an integer array there is
  refused (`RefusedWhenRun`, at the user's line), a float one goes on. Arrays the code makes float (`np.zeros(n)`,
  `x.copy()` of a differentiated x, arithmetic with a float array) need no check.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from s2s.analysis.dataflow import Domain, solve
from s2s.ir.core import Atom, Block, Const, Function, Op, Value, stmt_blocks
from s2s.rules import registry

INT, FLOAT = "int", "float"          # integer or boolean; inexact (float or complex). Absent: not decided.

def dtype_class(dtype: Any) -> str | None:
    try:
        return FLOAT if np.issubdtype(np.dtype(dtype), np.inexact) else INT
    except TypeError:
        return None


def _const_class(value: Any) -> str | None:
    if isinstance(value, (bool, int, np.integer, np.bool_)):
        return INT
    if isinstance(value, (float, complex, np.inexact)):
        return FLOAT
    if isinstance(value, np.ndarray):
        return dtype_class(value.dtype)
    if isinstance(value, (list, tuple)) and value:
        classes = {_const_class(v) for v in value}
        return FLOAT if FLOAT in classes else INT if classes == {INT} else None
    return None


def _given_dtype(op: Op, position: int) -> Any:
    """op's dtype argument (by keyword or at position): a Const, or None when not given; False if not a Const."""
    dtype = op.kwargs.get("dtype", op.args[position] if len(op.args) > position else None)
    if dtype is None or (isinstance(dtype, Const) and dtype.value is None):
        return None
    return dtype if isinstance(dtype, Const) else False


class Dtypes(Domain):
    """The class (INT or FLOAT) of every value the code decides (a domain of s2s/analysis/dataflow.py). A class,
    once known, stays (an operation that cannot say keeps what it said); a loop-carried value its body makes
    another class is undecided for good."""

    def __init__(self, floats: frozenset = frozenset()):
        super().__init__()
        self.floats = floats            # ids of values known to be floats (the differentiated parameters)
        self.undecided: set[Value] = set()

    def start(self, fn: Function) -> None:
        if self.floats:
            values = list(fn.params) + [o for s in _ops(fn.body) if isinstance(s, Op) for o in s.outs]
            self.facts.update((v, FLOAT) for v in values if id(v) in self.floats)

    def const(self, value: Any) -> str | None:
        return _const_class(value)

    def keep(self, v: Value, cls: str | None) -> None:
        if cls is not None and v not in self.undecided:
            self.set(v, cls)

    def joined(self, atoms: list) -> str | None:
        seen = {self.of(a) for a in atoms}
        return FLOAT if FLOAT in seen else INT if seen == {INT} else None

    def op(self, op: Op) -> None:
        cls = self.op_class(op)
        for v in op.outs:
            self.keep(v, cls)

    def op_class(self, op: Op) -> str | None:
        of = self.of
        rec = registry.record(op.prim)        # its dtype_rule and dtype_at (rules/record.py)
        rule = rec.dtype_rule
        if rule in ("convert", "cast"):
            dtype = _given_dtype(op, rec.dtype_at)
            if dtype is None:
                return of(op.args[0]) if op.args and rule == "convert" else None
            return dtype_class(dtype.value) if dtype else None
        if rule in ("made", "fill", "like"):
            dtype = _given_dtype(op, rec.dtype_at)
            if dtype is not None:
                return dtype_class(dtype.value) if dtype else None
            if rule == "fill":
                return of(op.kwargs.get("fill_value", op.args[1] if len(op.args) > 1 else None))
            return FLOAT if rule == "made" else of(op.args[0]) if op.args else None
        if rule == "promoted":
            return None if op.kwargs else self.joined(op.args)
        if rule == "same":
            return of(op.args[0]) if op.args else None
        if rule == "items":         # a list display's items
            return self.joined(list(op.args))
        if rule == "joined":        # a concatenation's list
            return of(op.args[0]) if op.args else None
        if rule == "integer" or registry.is_nondifferentiable(op.prim):
            return None
        # a function with a derivative given a float array (or a float) computes in floats: NumPy's promotion
        return FLOAT if any(of(a) == FLOAT for a in [*op.args, *op.kwargs.values()]) else None

    def branch(self, out: Value, then: Atom, orelse: Atom) -> None:
        a = self.of(then)
        self.keep(out, a if a == self.of(orelse) else None)

    def enter(self, loop: Any) -> None:
        for c, i in zip(loop.carried, loop.inits):     # a class the body keeps (checked after it)
            self.keep(c, self.of(i))

    def leave(self, loop: Any) -> None:
        for c, r, o in zip(loop.carried, loop.body.results, loop.outs):
            if self.of(r) != self.of(c) and c in self.facts:      # the body makes it something else: not decided
                del self.facts[c]
                self.undecided.add(c)
                self.changed = True
            self.keep(o, self.of(c))


def classes(fn: Function, floats: frozenset = frozenset()) -> dict[int, str]:
    """The class (INT or FLOAT) of every value the code decides, by id; floats: ids of values known to be float
    (the differentiated parameters)."""
    domain, = solve(fn, Dtypes(floats))
    return {id(v): cls for v, cls in domain.facts.items()}


def integer_values(fn: Function) -> set[Value]:
    """The values the code makes integer or boolean."""
    domain, = solve(fn, Dtypes())
    return {v for v, cls in domain.facts.items() if cls == INT}


def integer_arrays(fn: Function) -> set[int]:
    """Ids of the values the code makes integer or boolean."""
    return {id(v) for v in integer_values(fn)}


def _ops(b: Block):
    for stmt in b.stmts:
        yield stmt
        for inner in stmt_blocks(stmt):
            yield from _ops(inner)

