"""The dataflow engine: one fixed point over the structured IR, with the analyses as its domains.

An analysis is a *domain*: facts about values (kept in `domain.facts`, keyed by `Value` objects, never by
`id()`), the transfer of one operation (`op`), and what happens where control flow meets (`merge`, by default
`branch` for each of an `If`'s results; `enter` and `leave` at a loop's carried values; the defaults join with
`join`). The engine alone walks the IR and knows about control flow:

- forward, it sweeps the function in program order (a `While`'s test, then its body; a `For`'s body), calling
  the domains' transfers; an `If`'s `fork` before its branches, its results merged after both;
- backward (domains with `backward = True`), it sweeps from the results back: a block's statements last to first,
  an `If`'s merge before its branches and its `fork` after them, a loop's `enter` (from its results to its
  carried values) before its body and `leave` after it (a `While`'s test too, unless a domain says `reads_tests = False`);
- without loops one sweep settles every fact (each value is read after its definition, or backward, before it);
  with loops it sweeps again while a domain says a fact changed (`Domain.set` notes a change; a domain may note
  only the changes a later sweep must see: a mark that reaches back). A domain that works its facts out anew on
  each sweep (from assumptions it widens or drops between sweeps) starts them in `sweep`. That is `fixpoint`, the
  one loop of s2s that repeats a sweep until nothing changes.

`solve(fn, *domains)` runs several domains together in one walk (a product: each may read the others' facts of
the same operation's arguments); fn may be a function or a block. The domains on the engine (issue 30, item 2):

- s2s/analysis/dtypes.py: `Dtypes`, the integer or float class of each array the code decides;
- s2s/analysis/complex_values.py: `_Bits`, what may be complex;
- s2s/analysis/activity.py: `Kinds` (scalar, array, container structure), `Varied` (depends on the
  differentiated parameters), `Useful` (backward: reaches the result), `Floats` (known floats, for writing in
  place; the in-place pass gets it and the kinds from one walk, `scalars_and_floats`);
- s2s/passes/optimize.py: `_Live` (backward: the values and statements the results and the effects need, the
  dead-code pass's marks) and `_KnownFloats` (floats, assumed at loops and dropped when an iteration says
  otherwise: which identities `x * 1.0` keep the type);
- s2s/transforms/batching.py: `_ReachesWarning` (backward: what a branch reads that reaches a log or a division);
- s2s/transforms/recursion.py: `_Needed` (backward: what a recursion's record needs bound on every path);
- s2s/passes/specialize.py: `_Specializer`, the shapes and dtypes (s2s/analysis/shapes.py's `infer` its transfer of
  an operation, a global array's facts those of s2s/analysis/global_shapes.py), solved with s2s/analysis/sizes.py's
  `Sizes` (the integers shapes decide); of the code as written (`shape_facts`, which the in-place, contraction and
  batching passes read) or of the helpers as they will be once specialized (what `specialize` solves first, then
  rewrites them in one walk that repeats nothing). In a loop it keeps two facts of each value: the plain ones,
  which the carried values join, and the specialized ones the rewrite reads.

tests/analysis/test_dataflow.py lists every other loop under s2s/ that could repeat a sweep, with why it is not an
analysis on the engine.
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
    backward = False        # facts flow from a value's reads to its definition (solve walks from the results)
    reads_tests = True      # backward: a While's test is walked too (its values are read there alone)

    def __init__(self) -> None:
        self.facts: dict[Value, Any] = {}
        self.changed = False

    # ---------------------------------------------------------------- what a domain defines
    def start(self, fn: Function | Block) -> None:
        """The facts known before the walk (the parameters')."""

    def sweep(self, fn: Function) -> None:
        """Before each sweep (a domain that recomputes its facts from scratch each time starts them here)."""

    def op(self, op: Op) -> None:
        """The transfer of one operation: set the facts of op.outs (backward: of what it reads)."""
        raise NotImplementedError

    def const(self, value: Any) -> Any:
        """The fact of a constant."""
        return self.top

    def join(self, a: Any, b: Any) -> Any:
        return a if a == b else self.top

    def merge(self, stmt: If) -> None:
        """An If's results, merged from its branches' results (backward: before the branches): `branch` each."""
        for o, a, c in zip(stmt.outs, stmt.then.results, stmt.orelse.results):
            self.branch(o, a, c)

    def branch(self, out: Value, then: Atom, orelse: Atom) -> None:
        """An If's result, merged from its branches' results."""
        self.set(out, self.join(self.of(then), self.of(orelse)))

    def fork(self, stmt: If) -> None:
        """Where an If's branches part: forward, before they are walked; backward, after both were walked (what
        its condition is needed for)."""

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
            if stmt.__class__ is Op:
                for d in domains:
                    d.op(stmt)
            elif isinstance(stmt, If):
                for d in domains:
                    d.fork(stmt)
                self.block(stmt.then)
                self.block(stmt.orelse)
                for d in domains:
                    d.merge(stmt)
            else:
                self.loops = True
                for d in domains:
                    d.enter(stmt)
                for inner in stmt_blocks(stmt):         # a While's test, then its body
                    self.block(inner)
                for d in domains:
                    d.leave(stmt)

    def back(self, b: Block) -> None:
        """The backward walk: b's statements last to first; an If's merge before its branches, a loop's exit
        (`enter`) before its body (then a While's test, if a domain reads tests) and `leave` after them."""
        domains = self.domains
        tests = any(d.reads_tests for d in domains)
        for stmt in reversed(b.stmts):
            if stmt.__class__ is Op:
                for d in domains:
                    d.op(stmt)
            elif isinstance(stmt, If):
                for d in domains:
                    d.merge(stmt)
                self.back(stmt.then)
                self.back(stmt.orelse)
                for d in domains:
                    d.fork(stmt)
            else:
                self.loops = True
                for d in domains:
                    d.enter(stmt)
                self.back(stmt.body)
                if tests and stmt.__class__ is While:
                    self.back(stmt.test)
                for d in domains:
                    d.leave(stmt)


def solve(fn: Function | Block, *domains: Domain) -> tuple[Domain, ...]:
    """Every domain's facts of fn (a function, or a block), solved together: one sweep, then more until nothing
    changes (with loops). The domains go one way: forward (program order) or, all of them `backward`, from the
    results back. Each domain's `start` gets fn."""
    walk = _Walk(domains)
    backward = {d.backward for d in domains}
    if len(backward) > 1:
        raise ValueError("solve: forward and backward domains do not share a walk")
    block = walk.back if backward == {True} else walk.block
    body = fn if fn.__class__ is Block else fn.body
    for d in domains:
        d.start(fn)

    def sweep() -> bool:
        for d in domains:
            d.changed = False
            d.sweep(fn)
        block(body)
        return walk.loops and any(d.changed for d in domains)
    fixpoint(sweep)
    return domains
