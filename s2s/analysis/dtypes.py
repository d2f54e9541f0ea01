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

from s2s.ir.core import Block, Const, Function, If, Op, Value, stmt_blocks
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


def classes(fn: Function, floats: frozenset = frozenset()) -> dict[int, str]:
    """The class (INT or FLOAT) of every value the code decides, by id; floats: ids of values known to be float
    (the differentiated parameters)."""
    found: dict[int, str] = dict.fromkeys(floats, FLOAT)
    undecided: set[int] = set()        # loop-carried values the body makes another class

    def of(atom: Any) -> str | None:
        if isinstance(atom, Const):
            return _const_class(atom.value)
        return found.get(id(atom)) if isinstance(atom, Value) else None

    def joined(atoms: list) -> str | None:
        seen = {of(a) for a in atoms}
        return FLOAT if FLOAT in seen else INT if seen == {INT} else None

    def op_class(op: Op) -> str | None:
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
            return None if op.kwargs else joined(op.args)
        if rule == "same":
            return of(op.args[0]) if op.args else None
        if rule == "items":         # a list display's items
            return joined(list(op.args))
        if rule == "joined":        # a concatenation's list
            return of(op.args[0]) if op.args else None
        if rule == "integer" or registry.is_nondifferentiable(op.prim):
            return None
        # a function with a derivative given a float array (or a float) computes in floats: NumPy's promotion
        return FLOAT if any(of(a) == FLOAT for a in [*op.args, *op.kwargs.values()]) else None

    def set_class(values: list, cls: str | None) -> bool:
        changed = False
        for v in values:
            if cls is not None and id(v) not in undecided and found.get(id(v)) != cls:
                changed = True
                found[id(v)] = cls
        return changed

    def block(b: Block) -> bool:
        changed = False
        for stmt in b.stmts:
            if isinstance(stmt, Op):
                changed |= set_class(stmt.outs, op_class(stmt))
            elif isinstance(stmt, If):
                changed |= block(stmt.then) | block(stmt.orelse)
                for o, a, c in zip(stmt.outs, stmt.then.results, stmt.orelse.results):
                    changed |= set_class([o], of(a) if of(a) == of(c) else None)
            else:
                loops.append(stmt)
                for c, i in zip(stmt.carried, stmt.inits):   # a class the body keeps (checked after it)
                    changed |= set_class([c], of(i))
                for inner in stmt_blocks(stmt):
                    changed |= block(inner)
                for c, r, o in zip(stmt.carried, stmt.body.results, stmt.outs):
                    if of(r) != of(c) and id(c) in found:      # the body makes it something else: not decided
                        del found[id(c)]
                        undecided.add(id(c))
                        changed = True
                    changed |= set_class([o], of(c))
        return changed

    loops: list = []                # without loops one sweep settles every class (each read after its definition)
    while block(fn.body) and loops:     # loops: until the classes settle (a carried value only loses its class)
        pass
    return found


def integer_arrays(fn: Function) -> set[int]:
    """Ids of the values the code makes integer or boolean."""
    return {k for k, v in classes(fn).items() if v == INT}


def _ops(b: Block):
    for stmt in b.stmts:
        yield stmt
        for inner in stmt_blocks(stmt):
            yield from _ops(inner)
