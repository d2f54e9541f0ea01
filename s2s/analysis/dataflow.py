"""The dataflow engine: one fixed point over the structured IR, with the analyses as its domains.

An analysis is a *domain*: facts about values (kept in `domain.facts`, keyed by `Value` objects, never by
`id()`), the transfer of one operation (`op`), and what happens where control flow meets (`branch` at an
`If`'s merge, `enter` and `leave` at a loop's carried values; the defaults join with `join`). The engine alone
walks the IR and knows about control flow:

- it sweeps the function in program order (a `While`'s test, then its body; a `For`'s body), calling the
  domains' transfers; an `If`'s results are merged after both branches;
- without loops one sweep settles every fact (each value is read after its definition); with loops it sweeps
  again until no domain changed a fact (`Domain.set` notes a change). That is `fixpoint`, the one loop of s2s
  that repeats a sweep until nothing changes.

`solve(fn, *domains)` runs several domains together in one walk (a product: each may read the others' facts of
the same operation's arguments). The engine is partial (issue 30, item 2): its domains are s2s/analysis/dtypes.py's
classes and s2s/analysis/complex_values.py's bits; activity (kinds, varied and useful values) still walks the IR
itself, its sweeps going through `fixpoint`, and shapes and sizes are read by the specializer's own walk.
"""
from __future__ import annotations

from typing import Any, Callable

from s2s.ir.core import Atom, Block, Const, For, Function, If, Op, Value, While, stmt_blocks

_ABSENT = object()


def fixpoint(step: Callable[[], bool], limit: int | None = None) -> int:
    """Run step until it says nothing changed (or limit runs); how many runs it took. The one fixed-point loop."""
    runs = 1
    while step() and (limit is None or runs < limit):
        runs += 1
    return runs


class Domain:
    """Facts about values (self.facts, keyed by Value) with a transfer per operation. Subclasses define `op`,
    and `const`, `join`, `branch`, `enter`, `leave` where the defaults (a flat lattice with `top`) do not fit."""

    top: Any = None         # the fact that says nothing

    def __init__(self) -> None:
        self.facts: dict[Value, Any] = {}
        self.changed = False

    # ---------------------------------------------------------------- what a domain defines
    def start(self, fn: Function) -> None:
        """The facts known before the walk (the parameters')."""

    def op(self, op: Op) -> None:
        """The transfer of one operation: set the facts of op.outs."""
        raise NotImplementedError

    def const(self, value: Any) -> Any:
        """The fact of a constant."""
        return self.top

    def join(self, a: Any, b: Any) -> Any:
        return a if a == b else self.top

    def branch(self, out: Value, then: Atom, orelse: Atom) -> None:
        """An If's result, merged from its branches' results."""
        self.set(out, self.join(self.of(then), self.of(orelse)))

    def enter(self, loop: While | For) -> None:
        """Before a loop's body: its carried values start from (are joined with) their initial values."""
        for c, i in zip(loop.carried, loop.inits):
            old = self.facts.get(c, _ABSENT)
            self.set(c, self.of(i) if old is _ABSENT else self.join(old, self.of(i)))

    def leave(self, loop: While | For) -> None:
        """After a loop's body: what it yields joins its carried values; the loop's results are those."""
        for c, r, o in zip(loop.carried, loop.body.results, loop.outs):
            self.set(c, self.join(self.of(c), self.of(r)))
            self.set(o, self.of(c))

    # ---------------------------------------------------------------- reading and writing facts
    def of(self, atom: Atom) -> Any:
        if atom.__class__ is Const:
            return self.const(atom.value)
        return self.facts.get(atom, self.top)

    def set(self, v: Value, fact: Any) -> None:
        """v's fact is fact (a change makes the engine sweep again, where there are loops)."""
        if self.facts.get(v, _ABSENT) != fact:
            self.facts[v] = fact
            self.changed = True


class _Walk:
    def __init__(self, domains: tuple[Domain, ...]):
        self.domains = domains
        self.loops = False

    def block(self, b: Block) -> None:
        domains = self.domains
        for stmt in b.stmts:
            if isinstance(stmt, Op):
                for d in domains:
                    d.op(stmt)
            elif isinstance(stmt, If):
                self.block(stmt.then)
                self.block(stmt.orelse)
                for d in domains:
                    for o, a, c in zip(stmt.outs, stmt.then.results, stmt.orelse.results):
                        d.branch(o, a, c)
            else:
                self.loops = True
                for d in domains:
                    d.enter(stmt)
                for inner in stmt_blocks(stmt):         # a While's test, then its body
                    self.block(inner)
                for d in domains:
                    d.leave(stmt)


def solve(fn: Function, *domains: Domain) -> tuple[Domain, ...]:
    """Every domain's facts of fn, solved together: one sweep, then more until nothing changes (with loops)."""
    walk = _Walk(domains)
    for d in domains:
        d.start(fn)

    def sweep() -> bool:
        for d in domains:
            d.changed = False
        walk.block(fn.body)
        return walk.loops and any(d.changed for d in domains)
    fixpoint(sweep)
    return domains
