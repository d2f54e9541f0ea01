"""Sizes the arguments' shapes decide: the integers read from shapes (`len(x)`, `A.shape[0]`, `n - 1`) and the
shapes of the arrays made from them (`np.zeros(n)`, `np.arange(1.0, n + 1)`, `np.diag(L)`).

s2s/analysis/shapes.py's rules see shapes and dtypes only, so an array made from a number (`forces = np.zeros(len(x))`,
the way element loops for Numba start) has no shape there, and every helper and element write that depends on
it stays a run-time helper (s2s/passes/specialize.py) that copies the array (s2s/passes/in_place.py). `Sizes` keeps, beside
the specializer's facts, the value of each integer that only shapes and constants decide; `made` gives the
shape of an array constructor whose sizes are known. Nothing here changes the IR or the emitted code: `len(x)`
stays `len(x)`. A value a loop carries, a loop's index and a popped value have no size (they change).

`Sizes` is a domain of the dataflow engine (s2s/analysis/dataflow.py), solved with the specializer's shapes
(s2s/passes/specialize.py, `_Specializer`, whose facts it reads): its transfer notes each operation's result.
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from s2s import runtime
from s2s.ir import syntax
from s2s.analysis.dataflow import Domain
from s2s.analysis.values import Abstract, Items
from s2s.ir.core import Atom, Const, Op, Value
from s2s.rules import registry

_CONSTRUCTORS = ("filled", "full", "arange", "linspace", "eye", "diag", "diagonal", "diag_adjoint", "reshape")
_TUPLE_MAKERS = (syntax.SUBSCRIPT, runtime.make_tuple, runtime.concat, runtime.repeat)     # (a shape's pieces)
_LIMIT = 1 << 31         # sizes beyond this are not shapes anyone allocates: no fact


def _integer(v: Any) -> bool:
    return type(v) is int or isinstance(v, np.integer)


def _shape(v: Any) -> tuple | None:
    """v as an array shape (an integer or a tuple of them), or None."""
    items = v if type(v) is tuple else (v,)
    if all(_integer(n) and 0 <= n < _LIMIT for n in items):
        return tuple(int(n) for n in items)
    return None


class Sizes(Domain):
    """The known integer (or tuple of integers) of each value an operation on shapes and constants made (facts,
    keyed by Value; None: not known)."""

    def __init__(self, sub: Callable[[Atom], Atom], get: Callable[[Atom], Abstract | None],
                 items: Callable[[Atom], Any] | None = None, fresh: set | frozenset = frozenset()):
        super().__init__()
        self.sub = sub          # the specializer's aliases
        self.get = get          # the specializer's facts
        self.items = items      # the specializer's facts of containers (Items) too
        self.fresh = fresh      # values a rewrite made while the facts are solved: noted, never a change to sweep for
        # the sizes of the helpers as written, in a loop (the specializer's plain facts: its `op`), while in_plain
        self.plain: dict[Value, Any] = {}
        self.in_plain = False

    def op(self, op: Op) -> None:
        self.note(op)

    def set(self, v: Value, fact: Any) -> None:
        table = self.plain if self.in_plain else self.facts
        if v in self.fresh:
            table[v] = fact
        elif table.get(v, self) != fact:
            table[v] = fact
            self.changed = True

    def value(self, atom: Atom) -> Any:
        """atom's known integer, tuple of integers or (for a constant) number; None if unknown."""
        atom = self.sub(atom)
        if isinstance(atom, Const):
            v = atom.value
            ok = (type(v) in (int, float) or type(v) is tuple and all(type(n) is int for n in v))
            return v if ok else None
        if not isinstance(atom, Value):
            return None
        if self.in_plain and atom in self.plain:
            return self.plain[atom]
        return self.facts.get(atom)

    def note(self, op: Op) -> None:
        """Remember the value of op's result, when shapes and constants decide it."""
        if len(op.outs) != 1:
            return
        # (None too: a loop's body is read again once what it carries is known to change: no stale size)
        self.set(op.outs[0], self._of(op))

    def _of(self, op: Op) -> Any:
        prim, args = op.prim, op.args
        if op.kwargs:
            return None
        rule = registry.record(prim).size_rule       # (rules/record.py)
        if rule == "length" and len(args) == 1 and self.items is not None:
            found = self.items(args[0])         # a tuple or list of known length (built in the function)
            if isinstance(found, Items) and found.kind in ("tuple", "list"):
                return len(found.keys)
        if rule in ("length", "shape", "size", "ndim") and len(args) == 1:
            x = self.get(args[0])
            if x is None or x.python or (rule == "length" and not x.ndim):
                return None
            return {"length": lambda: x.shape[0], "shape": lambda: x.shape, "ndim": lambda: x.ndim,
                    "size": lambda: int(np.prod(x.shape, dtype=np.int64))}[rule]()
        if rule != "integer" and prim not in _TUPLE_MAKERS:
            return None         # (none of the cases below: the arguments' values not looked up)
        values = []
        for a in args:          # (up to the first unknown one)
            v = self.value(a)
            if v is None:
                return None
            values.append(v)
        if prim is syntax.SUBSCRIPT and len(args) == 2 and type(values[0]) is tuple and _integer(values[1]):
            return values[0][values[1]] if -len(values[0]) <= values[1] < len(values[0]) else None
        if rule == "integer" and all(_integer(v) for v in values) and len(values) in (1, 2):
            try:
                found = prim(*values)
            except ZeroDivisionError:
                return None
            return found if abs(found) < _LIMIT else None
        if prim is runtime.make_tuple and all(_integer(v) for v in values):
            return tuple(values)
        if len(values) == 2 and type(values[0]) is tuple and (
                prim in (runtime.concat, syntax.BINARY["+"]) and type(values[1]) is tuple or
                prim in (runtime.repeat, syntax.BINARY["*"]) and type(values[1]) is int and 0 <= values[1] < 64):
            return prim(*values)            # `x.shape + (1,) * x.ndim`: a shape
        return None

    def made(self, op: Op) -> Abstract | None:
        """The shape and dtype of an array constructor whose sizes are known (None otherwise)."""
        rule = registry.record(op.prim).size_rule       # (rules/record.py)
        if rule not in _CONSTRUCTORS or len(op.outs) != 1:
            return None
        if rule in ("diag", "diagonal"):
            return self._diagonal(op, rule)
        if rule == "diag_adjoint":
            return self._diag_adjoint(op)
        if rule == "reshape":
            return self._reshaped(op)
        if not all(isinstance(a, Const) for a in op.kwargs.values()) or set(op.kwargs) - {"dtype"}:
            return None
        args, dtype = op.args, op.kwargs["dtype"].value if "dtype" in op.kwargs else None
        if rule == "filled" and len(args) == 2 and dtype is None and isinstance(args[1], Const):
            args, dtype = args[:1], args[1].value           # `np.ones(mu.shape, np.float64)`: the dtype given by position
        values = [self.value(a) for a in args]
        if not values or any(v is None for v in values) and rule != "full":
            return None
        try:
            if rule == "arange":
                if len(values) > 3 or not all(_integer(v) or type(v) is float for v in values):
                    return None
                start, stop, step = ([0] + values + [1])[-3:] if len(values) == 1 else (values + [1])[:3]
                if not step:
                    return None
                n = len(range(start, stop, step)) if all(map(_integer, values)) else \
                    max(0, int(np.ceil((stop - start) / step)))        # without making the array
                return Abstract((n,), np.dtype(dtype) if dtype is not None else np.result_type(*values)) \
                    if n < _LIMIT else None
            if rule == "linspace":         # np.linspace(a, b, n) of numbers: n of them, floats
                if len(values) != 3 or not _integer(values[2]) or not 0 <= values[2] < _LIMIT or \
                        not all(type(v) in (int, float) for v in values[:2]):
                    return None
                return Abstract((int(values[2]),), np.dtype(dtype if dtype is not None else float))
            shape = _shape(values[0])
            if shape is None:
                return None
            if rule == "eye":
                if len(values) != 1:
                    return None
                return Abstract((shape[0], shape[0]), np.dtype(dtype if dtype is not None else float))
            if rule == "full":
                if len(op.args) != 2 or dtype is None and self.get(op.args[1]) is None:
                    return None
                fill = self.get(op.args[1])
                if dtype is None and (fill.shape != () or not fill.python):
                    return None         # a NumPy fill value's dtype: left to NumPy's rules
                dtype = dtype if dtype is not None else fill.dtype
            elif len(values) != 1:
                return None
            return Abstract(shape, np.dtype(dtype if dtype is not None else float))
        except (TypeError, ValueError):
            return None

    def _diagonal(self, op: Op, rule: str) -> Abstract | None:
        """np.diag(x, k) and np.diagonal(x, k) of an array of known shape."""
        x = self.get(op.args[0]) if op.args else None
        if x is None or x.python or op.kwargs or len(op.args) > 2:
            return None
        k = self.value(op.args[1]) if len(op.args) == 2 else 0
        if not _integer(k) or x.ndim not in ((1, 2) if rule == "diag" else (2,)):
            return None
        if x.ndim == 1:
            n = x.shape[0] + abs(int(k))
            return Abstract((n, n), x.dtype)
        m, n = x.shape
        return Abstract((max(0, min(m, n - k) if k >= 0 else min(m + k, n)),), x.dtype)

    def _diag_adjoint(self, op: Op) -> Abstract | None:
        """runtime._diag_adjoint(g, x, k), np.diag's adjoint: x's shape (a matrix), or g's diagonal (a vector)."""
        g, x = (self.get(a) for a in op.args[:2]) if len(op.args) >= 2 else (None, None)
        if g is None or x is None or g.python or x.python or op.kwargs:
            return None
        if x.ndim == 2 and g.ndim == 1:
            return Abstract(x.shape, runtime._gradient_dtype(x.dtype))
        return None

    def _reshaped(self, op: Op) -> Abstract | None:
        """np.reshape(x, shape) of an array of known shape to a shape known from shapes and constants (-1 as NumPy
        reads it): x's dtype. order= changes where the values go, not the shape."""
        x = self.get(op.args[0]) if len(op.args) == 2 else None
        if x is None or x.python or set(op.kwargs) - {"order"}:
            return None
        shape = self.value(op.args[1])
        shape = (shape,) if _integer(shape) else shape
        if type(shape) is not tuple or not all(_integer(n) for n in shape):
            return None
        try:
            return Abstract(np.empty(x.shape, dtype=bool).reshape(shape).shape, x.dtype)
        except ValueError:
            return None
