"""Which objects a loop's iterations hand on to the next shared: aliasing made in one iteration, seen in the next.

Lowering tracks which objects a value may share memory with (`Lowerer.bases`, `Lowerer.contents`) so that a write
through one name that Python would make visible through another is followed or refused (`Lowerer.writable`, the
checks of `x += v`). Inside a loop, a carried variable starts each iteration with its value from the end of the
previous one; on the first lowering of the body it is taken to share only what its value before the loop shares.
That misses aliasing an iteration makes for the next one:

    for k in range(n):
        x += step(result)       # from the second iteration on, x and result are the same array
        x = result.copy()
        x[2] = 0.0
        result = x

Accepts a loop (`For` or `While`) whose body was lowered once. Guarantees: after the body, `found` compares what
the variables the loop carries (and the objects' attributes and items it carries: `self.buf = y`) share at the
end of an iteration (with each other, and with the objects the variables it does not change hold) with what they were taken to share at its start; when an iteration hands on
more, it raises `LoopShares` and the loop is lowered again (`Lowerer.lowered_loop`) with the carried values
sharing it from the start (`carry`): one token object per pair that may be the same object, or per container that
may hold the other's object. A write into such a value then meets the other name like any other alias, and is
refused when the derivative is made, naming the place and the loop that made the alias. The facts found only grow
(a pair, or a name and an outside variable, found once is kept), so lowering the body again ends.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

from s2s.ir.core import Atom, Value
from s2s.ir.liveness import range_length
from s2s.ir.object_state import PREFIX as STATE

if TYPE_CHECKING:
    from s2s.ir.lower import Lowerer


class LoopShares(Exception):
    """A loop's iterations hand on objects shared in a way its carried values did not start with: lowered again."""

    def __init__(self, node: Any, found: frozenset):
        super().__init__("lowered again")
        self.node, self.found = node, found


class LoopSharing:
    """The sharing each loop (by the id of its node) hands on from one iteration to the next, as facts on names:
    ("same", a, b): a and b may be one object (or views of one); ("holds", a, b): container a may hold b's object
    (or a view of it); ("items", a, b): containers a and b may hold one object; ("held", a): a may be (a view of)
    an array an object's attribute holds (read from it: `y = self.buf`); ("outside", a, part, o, its_part):
    a (part "bases") or an item of a (part "contents") may be (a view of) the object the variable o, which the loop
    does not change, holds (its_part "bases") or one of the objects it holds (its_part "contents")."""

    def __init__(self, low: "Lowerer") -> None:
        self.low = low
        self.facts: dict[int, frozenset] = {}
        self.tokens: dict[int, tuple[object, str]] = {}     # id(token) -> (token, the loop's place), kept alive

    def carry(self, node: Any, names: list[str], carried: list[Value]) -> None:
        """Before the body is lowered (the variables still hold their values from before the loop): the carried
        values share what earlier lowerings of the body found an iteration hands on."""
        facts = self.facts.get(id(node))
        if not facts:
            return
        low = self.low
        value = dict(zip(names, carried))
        parts = {"bases": low.bases, "contents": low.contents}
        where = str(low.parsed.loc(node))
        for fact in sorted(facts):
            kind, a = fact[0], fact[1]
            if a not in value:
                continue
            if kind == "held":         # an object's attribute holds what it may be
                token = object()
                self.tokens[id(token)] = (token, where)
                low.bases[id(value[a])] = low.bases_of(value[a]) | {id(token)}
                low.held |= {id(token)}
                continue
            if kind == "outside":
                part, o, its_part = fact[2:]
                held = low.env.get(o)
                if isinstance(held, Value):
                    parts[part][id(value[a])] = self.part(value[a], part) | self.part(held, its_part)
                continue
            b = fact[2]
            if b not in value:
                continue
            token = object()
            self.tokens[id(token)] = (token, where)
            one = frozenset({id(token)})
            first, second = {"same": ("bases", "bases"), "holds": ("contents", "bases"),
                             "items": ("contents", "contents")}[kind]
            parts[first][id(value[a])] = self.part(value[a], first) | one
            parts[second][id(value[b])] = self.part(value[b], second) | one
            if a.startswith(STATE) or b.startswith(STATE):
                low.held |= one         # an object's attribute (or item) holds it: a write into it is refused

    def part(self, value: Atom, part: str) -> frozenset:
        return self.low.bases_of(value) if part == "bases" else self.low.contents_of(value)

    def found(self, node: Any, names: list[str], carried: list[Value], results: list[Atom],
              made: set[int]) -> None:
        """After the body: raises LoopShares if an iteration hands on sharing the carried values did not start
        with. Called with the lowerer's variables as they are at the loop's start (the carried ones excepted);
        made: the values the body makes. Linear in what the carried values share (indexed by object)."""
        if self.low.liveness.range_is_builtin and (range_length(node) or 0) <= 1 and range_length(node) is not None:
            return      # `for k in range(1)`: no iteration follows another
        low = self.low
        ends = {n: (c, r) for n, c, r in zip(names, carried, results)
                if isinstance(r, Value) and (not n.startswith("$") or n.startswith(STATE))}
        if not ends:
            return
        rb = {n: low.bases_of(r) for n, (c, r) in ends.items()}
        rc = {n: low.contents_of(r) for n, (c, r) in ends.items()}
        cb = {n: low.bases_of(c) for n, (c, r) in ends.items()}
        cc = {n: low.contents_of(c) for n, (c, r) in ends.items()}
        by_base: dict[int, list[str]] = {}
        by_item: dict[int, list[str]] = {}
        for n in ends:
            for i in rb[n]:
                by_base.setdefault(i, []).append(n)
            for i in rc[n]:
                by_item.setdefault(i, []).append(n)
        facts = set()
        for i, sharing in by_base.items():
            for a in sharing:
                for b in sharing:
                    if a < b and not cb[a] & cb[b]:
                        facts.add(("same", a, b))
        for i, holding in by_item.items():
            for a in holding:
                for b in holding:
                    if a < b and not cc[a] & cc[b]:
                        facts.add(("items", a, b))
                for b in by_base.get(i, ()):
                    if a != b and not cc[a] & cb[b]:
                        facts.add(("holds", a, b))
        before: dict[str, tuple] = {}       # objects from before the loop that an iteration leaves in a variable
        for a in ends:
            if (rb[a] - cb[a]) & low.held and not a.startswith(STATE):
                facts.add(("held", a))
            new = ((rb[a] - cb[a]) - made, (rc[a] - cc[a]) - made)
            if new[0] or new[1]:
                before[a] = new
        if before:
            outside: dict[int, list[tuple[str, str]]] = {}
            for o, held in low.env.items():
                if o not in ends and o not in names and not o.startswith("$") and isinstance(held, Value):
                    for its_part in ("bases", "contents"):
                        for i in self.part(held, its_part):
                            outside.setdefault(i, []).append((o, its_part))
            for a, parts in before.items():
                for part, new in zip(("bases", "contents"), parts):
                    for i in new:
                        for o, its_part in outside.get(i, ()):
                            facts.add(("outside", a, part, o, its_part))
        known = self.facts.get(id(node), frozenset())
        if not facts <= known:
            raise LoopShares(node, known | facts)

    def learn(self, exc: LoopShares) -> None:
        self.facts[id(exc.node)] = exc.found

    def made_by(self, shared: frozenset) -> str:
        """' (...)' naming the loop whose earlier iteration made two names one object, if shared came from one."""
        places = [where for i, (_, where) in self.tokens.items() if i in shared]
        if not places:
            return ""
        # the last made: the innermost loop (an outer loop's carried values are made before its body's loops')
        return f" (an earlier iteration of the loop at {places[-1]} left them one object)"
