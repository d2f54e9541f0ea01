"""A container's adjoint summed item by item, added into in place when the container is the adjoint's own.

The adjoint of reading `xs[i]` in a loop over a list is `dxs = _add(dxs, _scatter(xs, i, dv))`: a list of zeros
with dv at i, then a new list for the sum, at every iteration (quadratic in the list's length, and most of the
time of a short program's gradient). When dxs's object is the adjoint's own (made for it by `_zeros_like_tree`, a
sum's new list, and every name of it read once, by the next sum alone), `_scatter_into(dxs, xs, i, dv)` adds dv at
i in place (s2s/runtime.py; any value that is not a list or dict the general way).

What an operation is comes from its record (rules/record.py): `zeros == "tree"` makes a container's adjoint,
`algebra == "add_items"` sums two, `scatter_into` is the in-place form of an item's adjoint. Which values own
their object is a domain of the dataflow engine (s2s/analysis/dataflow.py). Accepts a derivative's final IR (its
last transform: the result is not differentiated again); guarantees the same values. In place; returned.
"""
from __future__ import annotations

from s2s.analysis.dataflow import Domain, solve
from s2s.ir.core import Block, For, Function, If, Op, Value, While, stmt_blocks, uses_in, walk
from s2s.passes.optimize import changed
from s2s.rules import registry


class _Owned(Domain):
    """Whether a value's object is referenced by that value alone (new when made, every earlier name of it read
    once): False says nothing. Joined by and."""

    top = False

    def __init__(self, uses: dict[Value, int]):
        super().__init__()
        self.uses = uses
        self.items: set[Value] = set()      # the adjoints of one item (runtime._scatter's results): new containers

    def once(self, atom: object) -> bool:
        return type(atom) is Value and self.uses.get(atom, 0) == 1 and self.of(atom)

    def join(self, a: bool, b: bool) -> bool:
        return a and b

    def op(self, op: Op) -> None:
        rec = registry.record(op.prim)
        if rec.scatter_into is not None:
            self.items.update(op.outs)
        # a new container of zeros; a sum with an item's adjoint (a new container, read once) is new, or that
        # item's adjoint itself (the other is 0.0), or the other's object added into in place (then read by
        # nothing else)
        own = len(op.outs) == 1 and (rec.zeros == "tree" or rec.algebra == "add_items" and any(
            a in self.items and self.uses.get(a) == 1 for a in op.args if type(a) is Value))
        for out in op.outs:
            self.set(out, own)

    def branch(self, out: Value, then: object, orelse: object) -> None:
        self.set(out, self.once(then) and self.once(orelse))

    def enter(self, loop: While | For) -> None:
        for c, i in zip(loop.carried, loop.inits):
            start = self.once(i)
            self.set(c, start if c not in self.facts else self.facts[c] and start)

    def leave(self, loop: While | For) -> None:
        for c, r, o in zip(loop.carried, loop.body.results, loop.outs):
            self.set(c, self.of(c) and self.once(r))
            self.set(o, self.of(c))


def accumulate_items(fn: Function) -> Function:
    if not any(type(s) is Op and registry.record(s.prim).scatter_into is not None for s in walk(fn.body)):
        return fn           # no item's adjoint to add in place: the analysis is not run
    uses: dict[Value, int] = {}
    for atom in uses_in(fn.body):
        if type(atom) is Value:
            uses[atom] = uses.get(atom, 0) + 1
    owned, = solve(fn, _Owned(uses))
    rewritten = []

    def block(b: Block) -> None:
        made = {}
        for stmt in b.stmts:
            if type(stmt) is not Op:
                for inner in stmt_blocks(stmt):
                    block(inner)
                continue
            if len(stmt.outs) == 1:
                made[stmt.outs[0]] = stmt
            if registry.record(stmt.prim).algebra != "add_items" or len(stmt.args) != 2 or stmt.kwargs:
                continue
            total, item = stmt.args
            scatter = made.get(item) if type(item) is Value else None
            into = registry.record(scatter.prim).scatter_into if scatter is not None else None
            if into is None or uses.get(item) != 1 or scatter.kwargs or not owned.once(total):
                continue
            b.stmts[b.stmts.index(scatter)] = None      # (dropped below: its only reader now adds in place)
            stmt.prim, stmt.args = into, [total, *scatter.args]
            rewritten.append(stmt)
        b.stmts[:] = [s for s in b.stmts if s is not None]

    block(fn.body)
    if rewritten:
        changed(fn)
    return fn
