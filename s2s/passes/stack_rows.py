"""Stacks of a loop as the rows of an array allocated before it, for the Numba target (Numba's lists grow by
reallocation, and a list of arrays is a list of boxed objects).

The forward sweep of a `for` loop pushes a value once per iteration (`v_stack.append(v)`) and the reverse sweep,
a loop over the same range the other way, pops it once per iteration (`v = v_stack.pop()`). When the pushed
value's shape and dtype are known when the derivative is made (the shape pass's facts, specialized on the
arguments), the stack is an array allocated before the forward loop, one row per iteration: the forward loop
writes row i (`v_rows[i] = v`), the reverse loop reads it back (`v = v_rows[i]`), i the iteration's position in
the range. Numbers make a 1-D array of their dtype (`np.empty(n, np.float64)`), arrays one row each
(`np.empty((n, 4), np.float64)`).

Accepts a derivative's final IR (its last transform; before in_place.py, which writes the rows in place), with
the parameters' abstract values. Only stacks made at the function's top level, pushed once at the top of a
top-level loop's body and popped once at the top of a later top-level loop that runs the same range the other way,
and read by nothing else. Guarantees the same values. In place; returned.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from s2s import runtime
from s2s.analysis.values import Abstract
from s2s.ir import syntax
from s2s.ir.core import Atom, Const, For, Function, Op, Value, walk
from s2s.passes.contractions import _Facts, uses_and_definitions
from s2s.passes.optimize import changed
from s2s.passes.sequences import LazyNamer
from s2s.rules import registry

_DTYPES = {float: np.float64, int: np.int64, bool: np.bool_}
_NUMPY = {np.dtype(t) for t in (np.float64, np.float32, np.int64, np.int32, np.bool_)}


def stacks_as_rows(fn: Function, params: list | None, free: dict | None = None, facts: _Facts | None = None
                   ) -> Function:
    """facts: the shape pass's facts (contractions._Facts), to share them with the next pass."""
    if params is None:
        return fn
    top = fn.body.stmts
    made = {id(s.outs[0]): s for s in top if type(s) is Op and s.prim is runtime.stack_new and len(s.outs) == 1
            and not s.args and not s.kwargs}
    loops = [s for s in top if type(s) is For]
    if not made or len(loops) < 2:
        return fn
    uses, defining = uses_and_definitions(fn)
    rewrite = _Rows(fn, facts or _Facts(fn, params, free, defining), defining)
    for forward in loops:
        if forward.step != Const(1):
            continue
        for push in [s for s in forward.body.stmts if type(s) is Op and s.prim is runtime.push]:
            stack = push.args[0]
            if len(push.args) != 2 or id(stack) not in made or uses.get(id(stack)) != 2:
                continue
            found = rewrite.popped(stack, forward, loops)
            element = rewrite.element(push.args[1])
            if found is not None and element is not None:
                rewrite.rows(made[id(stack)], push, forward, *found, *element)
    if rewrite.count:
        changed(fn)
    return fn


class _Rows:
    def __init__(self, fn: Function, facts: _Facts, defining: dict):
        self.fn, self.facts, self.defining = fn, facts, defining
        self.namer = LazyNamer(fn)
        self.count = 0
        self.row_of: dict[int, Atom] = {}       # id of a loop -> its iteration's position in the range

    def popped(self, stack: Value, forward: For, loops: list[For]) -> tuple[For, Op] | None:
        """The loop after forward running its range the other way, and its pop of stack at the top of its body."""
        for loop in loops[loops.index(forward) + 1:]:
            pop = next((s for s in loop.body.stmts if type(s) is Op and s.prim is runtime.pop and s.args[0] is stack),
                       None)
            if pop is None:
                continue
            same = all(x is y or isinstance(x, Const) and isinstance(y, Const) and x == y for x, y in (
                (forward.start, loop.start), (forward.stop, loop.stop), (forward.step, loop.step)))
            return (loop, pop) if same and loop.reverse != forward.reverse and len(pop.outs) == 1 else None
        return None

    def element(self, atom: Atom) -> tuple[tuple, Any] | None:
        """(shape, NumPy type) of what is pushed, when known."""
        found = self.facts.get(atom)
        if not isinstance(found, Abstract) or not all(type(n) is int for n in found.shape):
            return None
        if found.python:
            dtype = _DTYPES.get(found.dtype)
            return (tuple(found.shape), dtype) if dtype is not None else None
        return (tuple(found.shape), found.dtype.type) if found.dtype in _NUMPY else None

    def new(self, prim: Any, args: list, hint: str, loop: For) -> Op:
        return Op(prim, args, [self.namer.value(hint)], {}, loc=loop.loc)

    def row(self, loop: For) -> Atom:
        """The iteration's position in loop's range (its index, less the start)."""
        found = self.row_of.get(id(loop))
        if found is None:
            found = loop.index
            if loop.start != Const(0):
                at = self.new(syntax.BINARY["-"], [loop.index, loop.start], "row", loop)
                loop.body.stmts.insert(0, at)
                found = at.outs[0]
            self.row_of[id(loop)] = found
        return found

    def rows_count(self, loop: For) -> tuple[Atom, list[Op]]:
        """The number of iterations, computed before the loop: its stop when it counts from 0 up to a length."""
        if loop.start == Const(0) and self.length(loop.stop):
            return loop.stop, []
        if loop.start == Const(0):
            count = self.new(max, [loop.stop, Const(0)], "", loop)
            return count.outs[0], [count]
        difference = self.new(syntax.BINARY["-"], [loop.stop, loop.start], "", loop)
        count = self.new(max, [difference.outs[0], Const(0)], "", loop)
        return count.outs[0], [difference, count]

    def length(self, atom: Atom) -> bool:
        """Whether atom is `len(x)` or `x.shape[0]` (np.shape(x)[0]): never negative."""
        made = self.defining.get(id(atom)) if type(atom) is Value else None
        if made is None or made.kwargs:
            return False
        if made.prim is len:
            return True
        if made.prim is syntax.SUBSCRIPT and made.args[1] == Const(0) and type(made.args[0]) is Value:
            shape = self.defining.get(id(made.args[0]))
            return shape is not None and registry.record(shape.prim).size_rule == "shape"
        return False

    def rows(self, stack_new: Op, push: Op, forward: For, reverse: For, pop: Op, shape: tuple, dtype: Any) -> None:
        value, stack = push.args[1], push.args[0]
        hint = (stack.hint or "v").removesuffix("_stack") + "_rows"        # `v_stack` as `v_rows`
        count, before = self.rows_count(forward)
        if shape:
            dims = self.new(runtime.make_tuple, [count, *(Const(n) for n in shape)], "", forward)
            before.append(dims)
            count = dims.outs[0]
        empty = self.new(np.empty, [count, Const(dtype)], hint, forward)
        before.append(empty)
        row = self.row(forward)
        carried, out = self.namer.value(hint), self.namer.value(hint)
        written = Op(runtime.setitem, [carried, row, value], [self.namer.value(hint)], loc=push.loc)
        forward.body.stmts = [written if s is push else s for s in forward.body.stmts]
        forward.inits.append(empty.outs[0])
        forward.carried.append(carried)
        forward.outs.append(out)
        forward.body.results.append(written.outs[0])
        pop.prim, pop.args = syntax.SUBSCRIPT, [out, self.row(reverse)]          # `v = v_rows[i]`
        top = self.fn.body.stmts
        top.remove(stack_new)
        at = next(k for k, s in enumerate(top) if s is forward)
        top[at:at] = before
        self.count += 1


def shape_facts(fn: Function, params: list, free: dict | None = None) -> _Facts:
    """The shape pass's facts of fn's values, read once for the Numba target's passes (stacks_as_rows, then
    fuse_elementwise.py): the values they read keep their facts through the first one's rewrite."""
    return _Facts(fn, params, free, {id(o): s for s in walk(fn.body) if type(s) is Op for o in s.outs})
