"""Consecutive elementwise operations over 1-D float64 arrays of one known length, as one loop, for the Numba
target.

Numba compiles each NumPy array expression on its own (it fuses them only with parallel=True), so
`t1 = t1 + t2; t1 = t1 + b; h = np.tanh(t1)` allocates three arrays and walks them three times. A run of two
or more consecutive elementwise operations of one block (arithmetic, and NumPy's ufuncs of floats whose record
says elementwise) whose arrays are all 1-D float64 of one length n, known when the derivative is made (the shape
pass's facts, specialized on the arguments: no operand broadcasts), and whose numbers are numbers, becomes

    for k in range(n):
        t1_k = t1[k] + t2[k]
        ...
        h_rows[k] = np.tanh(t1_k)

where only the values read after the run get an array (allocated before the loop, `np.empty(n, np.float64)`);
the others stay numbers inside the loop (a run that saves no such temporary stays as it is, and so does an array
written item by item later, which in_place.py then writes in place). `/` and `**` (of an exponent other than a non-negative integer) are
np.divide and np.power, which give inf and nan on numbers as on arrays where Python's operators would raise.

Accepts a derivative's final IR with the parameters' abstract values (before in_place.py, which writes the
arrays in place); guarantees the same values, elementwise operations applied in the same order. In place;
returned.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from s2s import runtime
from s2s.analysis.values import Abstract
from s2s.ir import syntax
from s2s.ir.core import Atom, Block, Const, For, Function, Op, Value, While, stmt_blocks, substitute, uses_in, walk
from s2s.passes.contractions import _Facts
from s2s.passes.optimize import changed
from s2s.passes.sequences import LazyNamer
from s2s.rules import registry

_ARITHMETIC = {syntax.BINARY[s] for s in ("+", "-", "*", "/", "**")} | {syntax.UNARY["-"], syntax.UNARY["+"]}
_DIVIDE, _POWER = syntax.BINARY["/"], syntax.BINARY["**"]
_F8 = np.dtype(np.float64)


def _elementwise(prim: Any) -> bool:
    """An arithmetic operator, or a NumPy ufunc of floats that its record says is elementwise (Numba compiles
    NumPy's ufuncs on numbers as on arrays)."""
    if prim in _ARITHMETIC:
        return True
    return isinstance(prim, np.ufunc) and getattr(np, prim.__name__, None) is prim and prim.nout == 1 and \
        prim.nin <= 2 and ("d->d" in prim.types or "dd->d" in prim.types) and registry.record(prim).elementwise


def fuse_elementwise(fn: Function, params: list | None, free: dict | None = None, facts: _Facts | None = None
                     ) -> Function:
    """facts: the shape pass's facts (contractions._Facts), when another pass read them first (a value a pass
    made has none: stack_rows.py's rows)."""
    if params is None or not any(type(s) is Op and _elementwise(s.prim) for s in walk(fn.body)):
        return fn
    defining = {id(o): s for s in walk(fn.body) if type(s) is Op for o in s.outs}
    facts = facts or _Facts(fn, params, free, defining)
    # arrays written item by item later (`d[i] = v`): left as made, which in_place.py sees as fresh (a fused
    # loop's array, carried by the loop, it would copy at each write)
    written = {id(s.args[0]) for s in walk(fn.body) if type(s) is Op and s.prim is runtime.setitem and s.args}
    loops = [s for s in walk(fn.body) if type(s) in (For, While)]
    grown = True
    while grown:            # (the start of a loop's carried array that is written)
        grown = False
        for loop in loops:
            for c, i in zip(loop.carried, loop.inits):
                if id(c) in written and type(i) is Value and id(i) not in written:
                    written.add(id(i))
                    grown = True
    uses: dict[int, int] = {}
    for atom in uses_in(fn.body):
        if type(atom) is Value:
            uses[id(atom)] = uses.get(id(atom), 0) + 1
    fuse = _Fuse(fn, facts, uses, written)
    fuse.block(fn.body)
    if fuse.mapping:
        substitute(fn.body, fuse.mapping)
        changed(fn)
    return fn


class _Run:
    def __init__(self) -> None:
        self.ops: list[Op] = []
        self.defined: set[int] = set()
        self.arrays: list[Value] = []           # arrays read from before the run, in order
        self.length: int | None = None


class _Fuse:
    def __init__(self, fn: Function, facts: _Facts, uses: dict, written: set[int]):
        self.fn, self.facts, self.uses, self.written = fn, facts, uses, written
        self.namer = LazyNamer(fn)
        self.mapping: dict[int, Atom] = {}

    def block(self, block: Block) -> None:
        for stmt in block.stmts:
            if type(stmt) is not Op:
                for inner in stmt_blocks(stmt):
                    self.block(inner)
        k = 0
        while k < len(block.stmts):
            run = _Run()
            j = k
            while j < len(block.stmts) and self.joins(block.stmts[j], run):
                j += 1
            if len(run.ops) >= 2 and run.arrays and len(self.live(run)) < len(run.ops):   # a temporary saved
                loop, before = self.loop(run)
                block.stmts[k:j] = before + [loop]
                k += len(before) + 1
            else:
                k = max(j, k + 1)

    def vector(self, atom: Atom) -> int | None:
        """The length of a 1-D float64 array, else None."""
        found = self.facts.get(atom) if type(atom) is Value else None
        if isinstance(found, Abstract) and not found.python and found.dtype == _F8 and len(found.shape) == 1 \
                and type(found.shape[0]) is int:
            return found.shape[0]
        return None

    def number(self, atom: Atom) -> bool:
        if isinstance(atom, Const):
            return type(atom.value) in (int, float)
        found = self.facts.get(atom)
        return isinstance(found, Abstract) and found.shape == () and (
            found.dtype in (int, float) if found.python else found.dtype.kind in "if")

    def joins(self, stmt: Any, run: _Run) -> bool:
        """Whether stmt extends the run (and if so, records it)."""
        if type(stmt) is not Op or stmt.kwargs or len(stmt.outs) != 1 or stmt.in_place is not None or \
                not _elementwise(stmt.prim):
            return False
        length = self.vector(stmt.outs[0])
        if length is None or run.length is not None and length != run.length or id(stmt.outs[0]) in self.written:
            return False
        reads = []
        for a in stmt.args:
            if type(a) is Value and id(a) in run.defined:
                continue
            if self.vector(a) == length:
                reads.append(a)
            elif not self.number(a):
                return False
        run.length = length
        run.ops.append(stmt)
        run.defined.add(id(stmt.outs[0]))
        run.arrays.extend(a for a in reads if all(a is not b for b in run.arrays))
        return True

    def live(self, run: _Run) -> set[int]:
        """The values of the run read after it: each an array the loop writes."""
        inside: dict[int, int] = {}
        for op in run.ops:
            for a in op.args:
                if type(a) is Value and id(a) in run.defined:
                    inside[id(a)] = inside.get(id(a), 0) + 1
        return {id(op.outs[0]) for op in run.ops if self.uses.get(id(op.outs[0]), 0) > inside.get(id(op.outs[0]), 0)}

    def new(self, prim: Any, args: list, hint: str, loc: Any) -> Op:
        return Op(prim, args, [self.namer.value(hint)], {}, loc=loc)

    def loop(self, run: _Run) -> tuple[For, list[Op]]:
        """The run as a loop over its elements, and the arrays it writes, allocated before it."""
        first = run.ops[0]
        index = self.namer.value("k")
        body: list[Op] = []
        scalar: dict[int, Atom] = {}
        for a in run.arrays:
            item = self.new(syntax.SUBSCRIPT, [a, index], f"{a.hint or 'v'}_k", first.loc)
            body.append(item)
            scalar[id(a)] = item.outs[0]
        live = self.live(run)
        before: list[Op] = []
        inits: list[Atom] = []
        carried: list[Value] = []
        outs: list[Value] = []
        results: list[Atom] = []
        for op in run.ops:
            out = op.outs[0]
            prim = op.prim
            if prim is _DIVIDE:
                prim = np.divide
            elif prim is _POWER and not (isinstance(op.args[1], Const) and type(op.args[1].value) is int
                                         and op.args[1].value >= 0):
                prim = np.power
            made = self.new(prim, [scalar.get(id(a), a) if type(a) is Value else a for a in op.args],
                            f"{out.hint or 'v'}_k", op.loc)
            body.append(made)
            scalar[id(out)] = made.outs[0]
            if id(out) in live:
                empty = self.new(np.empty, [Const(run.length), Const(np.float64)], out.hint or "v", op.loc)
                before.append(empty)
                c, o = self.namer.value(out.hint or "v"), self.namer.value(out.hint or "v")
                written = Op(runtime.setitem, [c, index, made.outs[0]], [self.namer.value(out.hint or "v")],
                             loc=op.loc)
                body.append(written)
                inits.append(empty.outs[0])
                carried.append(c)
                outs.append(o)
                results.append(written.outs[0])
                self.mapping[id(out)] = o
        loop = For(Const(0), Const(run.length), Const(1), index, inits, carried, Block(body, results), outs,
                   loc=first.loc)
        return loop, before
