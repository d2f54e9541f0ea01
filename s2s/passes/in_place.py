"""Element writes in place: `out[i] = v` in O(1) wherever nothing else can see the old array.

The IR is SSA: `out2 = setitem(out, i, v)` is a new array, and runtime.setitem copies. Writing into `out`
instead is safe when both hold:

- `out`'s memory is its own (exclusive): it was made fresh (zeros, a copy, an arithmetic result, an earlier
  setitem), or it is a loop-carried array whose start and whose every update are exclusive and handed over
  whole (so a reverse sweep's adjoint array, carried through nested loops, stays one array);
- `out` is consumed by the write: every other read of it is an element read (`out[j]` with an integer per
  axis: a number, a copy) that comes before the write in the same block, or lies in an earlier statement;
  it is not pushed on a stack, viewed, returned, or read after. A write in a branch of an `If` may consume a
  value from outside the branch when the `If` consumes it in its own block.

This pass marks such writes `in_place` (the emitter then writes `out[i] = v`, and gives `out` and `out2` one
name). A loop that writes into a carried array whose start is not exclusive (an argument, a read-only
broadcast adjoint) gets one copy before the loop (`np.copy`), not one per iteration. Whether a read is an
element read takes the shapes the derivative is specialized for (s2s/analysis/shapes.py); without them only
writes that s2s/passes/optimize.py's write_in_place proves stay in place.
"""
from __future__ import annotations


import numpy as np

from s2s.ir import syntax
from s2s import runtime
from s2s.analysis.values import Abstract
from s2s.ir.core import (
    Atom,
    Block,
    Const,
    For,
    Function,
    If,
    Op,
    Stmt,
    Value,
    While,
    stmt_blocks,
    stmt_defs,
    stmt_inputs,
    walk,
)
from s2s.passes.optimize import changed
from s2s.passes.specialize import shape_facts
from s2s.rules import registry

def _fresh(op: Op) -> bool:
    """Whether op's result is new memory, which keeps no reference to what it read (its record's copies_reads), or
    a ufunc's, not told to write or share."""
    return (registry.record(op.prim).copies_reads or isinstance(op.prim, np.ufunc)) and \
        not {"out", "copy"} & set(op.kwargs)
_END = -1      # the position of a block's results


def _reads(stmt: Stmt) -> list[Atom]:
    """Every atom a statement reads, its nested blocks included."""
    found = list(stmt_inputs(stmt))
    for inner in stmt_blocks(stmt):
        for s in inner.stmts:
            found.extend(_reads(s))
        found.extend(inner.results)
    return found


class _Pass:
    def __init__(self, fn: Function, params: list[Abstract | None], free: dict | None = None):
        self.fn = fn
        facts = shape_facts(fn, params, free)
        self.facts = facts
        self.parent: dict[int, tuple[Stmt, Block]] = {}     # a nested block -> its statement, the block of it
        self.home: dict[int, Block] = {id(p): fn.body for p in fn.params}
        self.defining: dict[int, Stmt] = {}
        self.position: dict[int, int] = {}
        self.stale: set[int] = set()        # values of loops whose shapes did not settle: no facts
        self.index(fn.body)
        self.proving: set[int] = set()
        self.assumed: list[tuple[Stmt, int]] = []           # loop starts taken as exclusive (see copies)
        self.assume_starts = False

    def index(self, block: Block, stale: bool = False) -> None:
        for k, stmt in enumerate(block.stmts):
            self.position[id(stmt)] = k
            for v in stmt.outs:
                self.home[id(v)] = block
                self.defining[id(v)] = stmt
            # a loop whose shapes did not settle leaves every carried value unknown, and stale facts inside
            inner_stale = stale or (isinstance(stmt, (While, For)) and stmt.carried and
                                    all(self.facts.get(c) is None for c in stmt.carried) and
                                    any(self.facts.get(i) is not None for i in stmt.inits))
            if isinstance(stmt, (While, For)):
                for c in stmt.carried + ([stmt.index] if isinstance(stmt, For) else []):
                    self.home[id(c)] = stmt.body
                    self.defining[id(c)] = stmt
            for inner in stmt_blocks(stmt):
                self.parent[id(inner)] = (stmt, block)
                if inner_stale:
                    for s in inner.stmts:
                        self.stale.update(id(v) for v in stmt_defs(s))
                self.index(inner, inner_stale)

    # ------------------------------------------------------------ facts

    def array(self, v: Atom) -> Abstract | None:
        """v's shape and dtype when it is a NumPy array with at least one axis."""
        if not isinstance(v, Value) or id(v) in self.stale:
            return None
        fact = self.facts.get(v)
        return fact if isinstance(fact, Abstract) and not fact.python and fact.ndim > 0 else None

    def integer(self, atom: Atom) -> bool:
        if isinstance(atom, Const):
            return isinstance(atom.value, (int, np.integer)) and not isinstance(atom.value, bool)
        if id(atom) in self.stale:
            return False
        fact = self.facts.get(atom)
        return isinstance(fact, Abstract) and fact.shape == () and (fact.dtype is int or (
            not fact.python and fact.dtype.kind in "iu"))

    def element_read(self, stmt: Stmt, v: Value) -> bool:
        """stmt is `v[i, j, ...]` with an integer for each axis of v: a number, a copy of one element."""
        if not (isinstance(stmt, Op) and stmt.prim is syntax.SUBSCRIPT and len(stmt.args) == 2
                and stmt.args[0] is v and not stmt.kwargs):
            return False
        x, index = self.array(v), stmt.args[1]
        if x is None or index is v:
            return False
        if isinstance(index, Const):
            items = index.value if isinstance(index.value, tuple) else (index.value,)
            return len(items) == x.ndim and all(self.integer(Const(i)) for i in items)
        made = self.defining.get(id(index))
        items = made.args if isinstance(made, Op) and made.prim is runtime.make_tuple else [index]
        return len(items) == x.ndim and all(self.integer(i) for i in items)

    def only_element_reads(self, stmt: Stmt, v: Value) -> bool:
        """Whether stmt reads v only in ways that keep no reference to its memory (element reads, copies)."""
        if isinstance(stmt, Op):
            return not _has([*stmt.args, *stmt.kwargs.values()], v) or self.element_read(stmt, v) or \
                registry.record(stmt.prim).metadata or (_fresh(stmt) and all(self.facts.get(o) is not None for o in stmt.outs))
        if any(a is v for a in stmt_inputs(stmt)):
            return False
        for inner in stmt_blocks(stmt):
            if any(r is v for r in inner.results) or not all(self.only_element_reads(s, v) for s in inner.stmts):
                return False
        return True

    # ------------------------------------------------------------ proofs

    def view_dies(self, stmt: Stmt, v: Value, block: Block, k: int) -> bool:
        """stmt is `w = v[a:b]` (a view) read once, by an operation with a new result that only the write at k
        reads: `v[a:b] = v[a:b] + g`. Nothing else may read the view: the emitter may move a pure operation
        next to its reader (s2s/emit/nesting.py), which for any other reader could be after the write."""
        if k == _END or not (isinstance(stmt, Op) and stmt.prim is syntax.SUBSCRIPT and stmt.args[0] is v
                             and len(stmt.outs) == 1 and not _has(stmt.args[1:], v)):
            return False
        w = stmt.outs[0]
        readers = [s for s in block.stmts if any(a is w for a in _reads(s))]
        if len(readers) != 1 or any(r is w for r in block.results) or not isinstance(readers[0], Op) \
                or not _fresh(readers[0]) or len(readers[0].outs) != 1:
            return False
        total = readers[0].outs[0]
        write = block.stmts[k]
        users = [s for s in block.stmts if any(a is total for a in _reads(s))]
        return (users == [write] and isinstance(write, Op) and write.args[-1] is total
                and sum(a is total for a in _reads(write)) == 1 and not any(r is total for r in block.results))

    def consumed_at(self, v: Value, block: Block, k: int) -> bool:
        """Whether every read of v in block other than statement k (or the results, k = _END) is an element
        read before it (or a view that only copying reads read, before it), and v is not read after: the
        reader at k is the last to see v's memory."""
        for j, stmt in enumerate(block.stmts):
            if j == k or not any(a is v for a in _reads(stmt)):
                continue
            if (k != _END and j > k) or not (self.only_element_reads(stmt, v) or self.view_dies(stmt, v, block, k)):
                return False
        if sum(r is v for r in block.results) != (1 if k == _END else 0):
            return False
        if self.home.get(id(v)) is block:
            return True
        owner = self.parent.get(id(block))
        if owner is None or not isinstance(owner[0], If):
            return False        # a value from outside a loop: the next iteration would read it again
        return self.consumed_at(v, owner[1], self.position[id(owner[0])])

    def exclusive(self, v: Atom) -> bool:
        """Whether v's memory is reachable through v alone."""
        if not isinstance(v, Value) or self.array(v) is None:
            return False
        stmt = self.defining.get(id(v))
        if isinstance(stmt, Op) and stmt.in_place is not None and stmt.prim is not runtime.setitem:
            return self.exclusive(stmt.args[stmt.in_place])      # `t *= 3.0`: t's memory (optimize.write_in_place)
        if isinstance(stmt, Op):
            return (registry.record(stmt.prim).fresh or isinstance(stmt.prim, np.ufunc)) and not {"out", "copy"} & set(stmt.kwargs)
        if isinstance(stmt, If):
            j = _find(stmt.outs, v)
            return all(self.handed_over(b.results[j], b) for b in (stmt.then, stmt.orelse))
        if isinstance(stmt, (While, For)):
            if _has(stmt.outs, v):
                v = stmt.carried[_find(stmt.outs, v)]
            if not _has(stmt.carried, v):
                return False
            if id(v) in self.proving:           # the loop's own update of it: proven by induction
                return True
            j = _find(stmt.carried, v)
            self.proving.add(id(v))
            try:
                return self.carried(stmt, j)
            finally:
                self.proving.discard(id(v))
        return False

    def carried(self, loop: While | For, j: int) -> bool:
        c, init = loop.carried[j], loop.inits[j]
        if isinstance(loop, While) and not (all(self.only_element_reads(s, c) for s in loop.test.stmts)
                                            and not any(r is c for r in loop.test.results)):
            return False
        if not self.handed_over(loop.body.results[j], loop.body):
            return False
        block = self.home.get(id(loop.outs[0])) if loop.outs else None
        start_ok = (isinstance(init, Value) and block is not None and self.exclusive(init)
                    and sum(i is init for i in loop.inits) == 1
                    and not any(a is init for inner in stmt_blocks(loop) for s in inner.stmts for a in _reads(s))
                    and not any(a is init for inner in stmt_blocks(loop) for a in inner.results)
                    and (not isinstance(loop, For) or not _has([loop.start, loop.stop, loop.step], init))
                    and self.consumed_at(init, block, self.position[id(loop)]))
        if not start_ok and self.assume_starts and block is not None:
            self.assumed.append((loop, j))
            return True
        return start_ok

    def handed_over(self, r: Atom, block: Block) -> bool:
        """r, a block's result, is exclusive and consumed by that block's end."""
        return isinstance(r, Value) and self.exclusive(r) and self.consumed_at(r, block, _END)

    def writable(self, op: Op, block: Block, k: int) -> bool:
        v = op.args[0]
        if not isinstance(v, Value) or _has([*op.args[1:], *op.kwargs.values()], v):
            return False
        return self.exclusive(v) and self.consumed_at(v, block, k)

    # ------------------------------------------------------------ the rewrite

    def run(self, block: Block) -> list[tuple[Op, list]]:
        """Mark the writes proven; return the others that copies of loop starts would make provable."""
        wanted = []
        for k, stmt in enumerate(block.stmts):
            for inner in stmt_blocks(stmt):
                wanted.extend(self.run(inner))
            if not (isinstance(stmt, Op) and stmt.prim is runtime.setitem and stmt.in_place is None
                    and len(stmt.outs) == 1 and self.array(stmt.args[0]) is not None):
                continue
            if self.writable(stmt, block, k):
                stmt.in_place = 0
                continue
            self.assume_starts, self.assumed = True, []
            try:
                if self.writable(stmt, block, k):
                    wanted.append((stmt, list(self.assumed)))
            finally:
                self.assume_starts = False
        return wanted


def _has(atoms: list, v: Value) -> bool:
    return any(a is v for a in atoms)


def _find(values: list, v: Value) -> int:
    return next(k for k, a in enumerate(values) if a is v)


def _inside(stmt: Stmt, loop: Stmt) -> bool:
    return any(s is stmt for inner in stmt_blocks(loop) for s in _walk(inner))


def _walk(block: Block):
    for s in block.stmts:
        yield s
        for inner in stmt_blocks(s):
            yield from _walk(inner)


def write_elements_in_place(fn: Function, params: list[Abstract | None] | None,
                            free: dict | None = None) -> Function:
    """fn with its provably unshared element writes marked in place (see the module's docstring). free: the
    facts of the global arrays it reads (s2s/analysis/global_shapes.py)."""
    if params is None or not free and not any(isinstance(a, Abstract) and not a.python for a in params) and not any(
            isinstance(st, Op) and st.prim is runtime.setitem for st in walk(fn.body)):
        return fn           # no array argument or global, no element write into an array made inside
    changed(fn)
    found = _Pass(fn, params, free)
    wanted = found.run(fn.body)
    copies = {}
    for write, assumed in wanted:           # a copy of the loop's start pays only for writes inside the loop
        if assumed and all(_inside(write, loop) for loop, _ in assumed):
            for loop, j in assumed:
                copies[(id(loop), j)] = (loop, j)
    if not copies:
        return fn
    for loop, j in copies.values():
        block = found.home[id(loop.outs[0])]
        c = loop.carried[j]
        copy = Value(f"{c.name}.copy", c.hint)
        block.stmts.insert(next(k for k, s in enumerate(block.stmts) if s is loop),
                           Op(np.copy, [loop.inits[j]], [copy], loc=loop.loc))
        loop.inits[j] = copy
        found.facts.set(copy, found.facts.get(c))      # a copy of the start: the carried value's shape
    found.index(fn.body)
    found.run(fn.body)
    return fn
