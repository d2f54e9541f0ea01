"""The Python names of the emitted code: one per SSA value, shared where lifetimes allow.

`python_names(fn, inlined, reserved, items)` maps each value the emitter writes by name (by id) to its name. A
value takes its variable's name (the hint); values linked by a phi (the versions of one loop variable, the
outputs of a branch) share one name when their live ranges do not interfere, so the code reads like the user's;
temporaries are `t1`, `t2`, reusing the name of a dead one first. Live ranges are segments of program points
found in one pass over the IR (`_LiveRanges`); interference is checked by binary search against the group a value
joins, never pairwise, so the cost is near-linear in the function's size. No name, a parameter's included, is
one of `reserved`: the user's globals, closure variables and builtins the code reads, and the module's own names.
"""
from __future__ import annotations

import bisect
import heapq
import itertools
import keyword
from typing import Any

from s2s.ir.core import Atom, Block, For, Function, If, Op, Stmt, Value, While


class _LiveRanges:
    """When each value occupies its Python name, as segments of program points in emission order.

    A value is written at each of its definitions and read at each use. A read inside a loop of a value
    defined outside that loop lasts until the loop ends (the next iteration reads it again); a read inside
    a branch of a value defined outside it covers that branch up to the read, and the value's life up to
    the branch point (the other branch does not see it). A loop's carried value is written when the loop
    starts and again at the end of its body (the copy from the body's result); a branch's outputs where the
    branches join. Two values conflict when one is written while the other is still to be read (`a = f(a)`
    reads a and writes the result at one point: no conflict), or when both are written at one point (a
    parallel copy). One pass over the IR: the cost is linear in its size.
    """

    def __init__(self, inlined: dict[int, Op], items: dict[int, Op] | None = None):
        self.inlined = inlined
        self.items = {id(op): loop for loop, op in (items or {}).items()}     # item op -> its loop's id
        self.point = 0
        self.scopes: list[list] = []        # enclosing ["branch", fork, start] and ["loop", exit] entries
        self.innermost: int = 0             # id of the innermost scope (0: the function's body)
        self.defs: dict[int, list[tuple[int, tuple]]] = {}
        self.reads: dict[int, list[tuple[int, tuple]]] = {}
        self.loop_start: dict[int, tuple[int, tuple, int]] = {}
        # A value with one definition (an operation's result, a parameter) read in the scope it is defined in
        # (most of them) lives from its definition to its last such read: [point, innermost scope, scopes, last].
        self.single: dict[int, list] = {}
        # what the names' assignment needs, found on the way: the values written by name in program order,
        # the operations that write in place, the branches and loops
        self.order: list[Value] = []
        self.in_place: list[Op] = []
        self.compound: list[Stmt] = []

    def tick(self) -> int:
        self.point += 2             # statements at even points; a branch is entered at the odd one before
        return self.point

    def define(self, values: list[Value], at: int, scopes: tuple | None = None) -> None:
        where = (at, tuple(map(id, self.scopes)) if scopes is None else scopes)
        for v in values:
            if id(v) not in self.inlined:
                self.defs.setdefault(id(v), []).append(where)

    def define_once(self, values: list[Value], at: int, scopes: tuple | None = None, innermost: int = -1) -> None:
        """The only definition of values (SSA: an operation's results, the parameters)."""
        if scopes is None:
            scopes, innermost = tuple(map(id, self.scopes)), self.innermost
        for v in values:
            if id(v) not in self.inlined:
                self.single[id(v)] = [at, innermost, scopes, at]

    def read(self, atoms: Any, at: int) -> None:
        inlined, single = self.inlined, self.single
        for atom in atoms:
            if atom.__class__ is not Value:
                continue
            key = id(atom)
            op = inlined.get(key)
            if op is not None:
                self.read(op.args, at)
                if op.kwargs:
                    self.read(op.kwargs.values(), at)
                continue
            found = single.get(key)
            if found is not None and found[1] == self.innermost:
                if at > found[3]:
                    found[3] = at
                continue
            self.reads.setdefault(key, []).append((at, tuple(self.scopes)))

    def run(self, fn: Function) -> dict[int, list[tuple[int, int]]]:
        self.order.extend(fn.params)
        self.define_once(fn.params, 0)
        self.block(fn.body)
        self.read(fn.body.results, self.tick())
        intervals: dict[int, list[tuple[int, int]]] = {}
        reads = self.reads
        for key, (d, _, scopes, last) in self.single.items():
            if key in reads:
                intervals[key] = self.spans([(d, scopes)], reads[key], [(d, last)])
            else:
                intervals[key] = [(d, last)]
        for key, defs in self.defs.items():
            defs.sort(key=lambda d: d[0])
            intervals[key] = self.spans(defs, reads.get(key, []), [])
        return intervals

    @staticmethod
    def spans(defs: list[tuple[int, tuple]], reads: list[tuple[int, tuple]],
              spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
        starts = [d for d, _ in defs]
        spans += [(d, d) for d in starts]
        for at, scopes in reads:
            k = max(bisect.bisect_left(starts, at) - 1, 0)       # the definition this read sees: a read
            # and a write at one point (the copies at the end of a loop's body) read the old value
            d, def_scopes = defs[k]
            common = 0
            while common < len(def_scopes) and common < len(scopes) and def_scopes[common] == id(scopes[common]):
                common += 1
            begin = d
            for scope in scopes[common:]:
                if scope[0] == "loop":        # read again on every iteration: live through the whole loop
                    spans.append((begin, scope[1]))
                    break
                spans.append((begin, scope[1]))      # up to the branch point, then from the branch's start
                begin = scope[2]
            else:
                spans.append((begin, at))
        return _disjoint(spans)

    def push(self, scope: list) -> None:
        self.scopes.append(scope)
        self.innermost = id(scope)

    def pop(self) -> None:
        self.scopes.pop()
        self.innermost = id(self.scopes[-1]) if self.scopes else 0

    def block(self, block: Block) -> None:
        inlined, single, reads, items, order = self.inlined, self.single, self.reads, self.items, self.order
        innermost = self.innermost              # the scope is the same for every statement of the block
        scope_ids, scopes = tuple(map(id, self.scopes)), tuple(self.scopes)
        point = self.point
        for stmt in block.stmts:
            if stmt.__class__ is not Op:
                self.point = point
                self.stmt(stmt)
                point = self.point
                continue
            outs = stmt.outs
            if outs and id(outs[0]) in inlined:
                continue
            point += 2
            at = point
            for atom in stmt.args:          # self.read, unrolled for the common case
                if atom.__class__ is not Value:
                    continue
                key = id(atom)
                if key in inlined:
                    self.read((atom,), at)
                    continue
                found = single.get(key)
                if found is not None and found[1] == innermost:
                    if at > found[3]:
                        found[3] = at
                else:
                    reads.setdefault(key, []).append((at, scopes))
            if stmt.kwargs:
                self.read(stmt.kwargs.values(), at)
            if stmt.in_place is not None:
                self.in_place.append(stmt)
            loop = items.get(id(stmt)) if items else None
            if loop is None:
                for v in outs:
                    if id(v) not in inlined:
                        single[id(v)] = [at, innermost, scope_ids, at]
                        order.append(v)
            else:                           # `for item in seq:` binds the item when an iteration starts
                self.define_once(outs, *self.loop_start[loop])
                order.extend(o for o in outs if id(o) not in inlined)
        self.point = point

    def stmt(self, stmt: Stmt) -> None:
        self.compound.append(stmt)
        if isinstance(stmt, For):
            self.order.append(stmt.index)
        if not isinstance(stmt, If):
            self.order.extend(stmt.carried)
        self.order.extend(o for o in stmt.outs if id(o) not in self.inlined)
        if isinstance(stmt, If):
            fork = self.tick()
            self.read([stmt.cond], fork)
            for branch in (stmt.then, stmt.orelse):
                self.push(["branch", fork, self.point + 1])
                self.block(branch)
                end = self.tick()          # the copies into the outputs, at the end of the branch
                self.read(branch.results, end)
                self.define(stmt.outs, end)
                self.pop()
            self.define(stmt.outs, self.tick())     # where the branches join: what reads the outputs sees
            return
        start = self.tick()
        self.read(stmt.inits, start)
        if isinstance(stmt, For):         # `range(...)` is evaluated after the copies into the carried values
            self.read([stmt.start, stmt.stop, stmt.step], start + 1)
        scope = ["loop", None]
        self.push(scope)
        self.define(stmt.carried, start)
        self.loop_start[id(stmt)] = (start, tuple(map(id, self.scopes)), self.innermost)
        if isinstance(stmt, For):
            self.define([stmt.index], start)
        if isinstance(stmt, While):
            self.block(stmt.test)
            self.read(stmt.test.results, self.tick())
        self.block(stmt.body)
        body_end = self.tick()
        self.read(stmt.body.results, body_end)
        self.define(stmt.carried, body_end)        # the copy into the carried values for the next iteration
        exit_point = self.tick()
        scope[1] = exit_point
        self.pop()
        self.read(stmt.carried, exit_point)        # `out = carried` after the loop, where they differ
        self.define(stmt.outs, exit_point)


def _disjoint(spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Segments merged where they overlap or touch: sorted and disjoint."""
    merged: list[list[int]] = []
    for d, last in sorted(spans):
        if merged and d <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], last)
        else:
            merged.append([d, last])
    return [(d, last) for d, last in merged]


class _Segments:
    """Segments (start, last) sorted by start, with the running maximum of their ends. Two segments conflict
    when they start at one point or each starts before the other ends; whether a segment conflicts with any
    of these is one binary search (the one starting at or after it, and the furthest reach of those before)."""

    __slots__ = ("starts", "ends", "reach")

    def __init__(self, spans: list[tuple[int, int]]):
        spans = sorted(spans)
        self.starts = [d for d, _ in spans]
        self.ends = [last for _, last in spans]
        self.reach = list(itertools.accumulate(self.ends, max))

    def __len__(self) -> int:
        return len(self.starts)

    def spans(self) -> list[tuple[int, int]]:
        return list(zip(self.starts, self.ends))

    def hit(self, d: int, last: int) -> bool:
        k = bisect.bisect_left(self.starts, d)
        if k < len(self.starts) and (self.starts[k] == d or self.starts[k] < last):
            return True
        return k > 0 and self.reach[k - 1] > d

    def conflict(self, other: "_Segments") -> bool:
        small, large = (self, other) if len(self) <= len(other) else (other, self)
        return any(large.hit(d, last) for d, last in zip(small.starts, small.ends))

    def add(self, other: "_Segments") -> None:
        """other's segments inserted: the reach after each one grows only as far as it must (for segments
        that do not conflict with these, not at all)."""
        starts, ends, reach = self.starts, self.ends, self.reach
        for d, last in zip(other.starts, other.ends):
            k = bisect.bisect_right(starts, d)
            starts.insert(k, d)
            ends.insert(k, last)
            far = max(reach[k - 1], last) if k else last
            reach.insert(k, far)
            k += 1
            while k < len(reach) and reach[k] < far:
                reach[k] = far
                k += 1


class _Groups:
    """Union-find over values (by id) that share a name, each group with its members' segments: merging
    checks interference against the larger group by binary search, never pairwise."""

    def __init__(self, intervals: dict[int, list[tuple[int, int]]]):
        self.parent: dict[int, int] = {}
        self.raw = intervals            # a value's sorted, disjoint segments, until it takes part in a merge
        self.segments: dict[int, _Segments] = {}

    def spans(self, root: int) -> list[tuple[int, int]]:
        found = self.segments.get(root)
        return found.spans() if found is not None else self.raw.get(root, [])

    def _segments(self, root: int) -> _Segments | None:
        found = self.segments.get(root)
        if found is None:
            spans = self.raw.pop(root, None)
            if spans is not None:
                found = self.segments[root] = _Segments(spans)
        return found

    def find(self, v: int) -> int:
        parent = self.parent
        while True:
            p = parent.get(v, v)
            if p == v:
                return v
            grand = parent.get(p, p)
            parent[v] = grand               # path halving: chains stay short
            v = grand

    def merge(self, a: Value, b: Atom, force: bool = False) -> bool:
        if not isinstance(b, Value):
            return False
        ra, rb = self.find(id(a)), self.find(id(b))
        if ra == rb:
            return True
        sa, sb = self._segments(ra), self._segments(rb)
        if not force and sa is not None and sb is not None and sa.conflict(sb):
            return False
        if sb is not None and (sa is None or len(sb) > len(sa)):
            ra, rb, sa, sb = rb, ra, sb, sa         # the larger group's root stays the root
        self.parent[rb] = ra
        if sb is not None:
            if sa is not None:
                sa.add(sb)
            else:
                self.segments[ra] = sb
            del self.segments[rb]
        return True


class _Occupied:
    """The intervals of the values holding one name: pairwise without conflict, so sorted by start their ends
    never decrease, and a query looks at two neighbours (bisect)."""

    def __init__(self, spans: list[tuple[int, int]] = ()) -> None:
        if len(spans) == 1:                     # spans: sorted by their starts
            self.starts: list[int] = [spans[0][0]]
            self.ends: list[int] = [spans[0][1]]
        else:
            self.starts = [d for d, _ in spans]
            self.ends = [last for _, last in spans]

    def free_for(self, spans: list[tuple[int, int]]) -> bool:
        for d, last in spans:
            k = bisect.bisect_left(self.starts, d)
            if k < len(self.starts) and self.starts[k] == d:
                return False
            k = bisect.bisect_left(self.starts, last) if last > d else k
            if k > 0 and d < self.ends[k - 1]:
                return False
        return True

    def take(self, spans: list[tuple[int, int]]) -> None:
        for d, last in spans:
            k = bisect.bisect_right(self.starts, d)
            self.starts.insert(k, d)
            self.ends.insert(k, last)


def python_names(fn: Function, inlined: dict[int, Op], reserved: set[str],
                 items: dict[int, Op] | None = None) -> dict[int, str]:
    """id of each value written by name -> its name."""
    ranges = _LiveRanges(inlined, items)
    groups = _Groups(ranges.run(fn))
    order, in_place, compound = ranges.order, ranges.in_place, ranges.compound
    loops = [s for s in compound if not isinstance(s, If)]
    for stmt in in_place:
        groups.merge(stmt.outs[0], stmt.args[stmt.in_place], force=True)
    # Every merge is checked against interference: two values alive at once never share a name. A loop's
    # result is tried first with its carried value (the user's variable after the loop); where that fails
    # the emitter writes a copy after the loop.
    for stmt in loops:
        for c, o in zip(stmt.carried, stmt.outs):
            groups.merge(c, o)
    params = {id(p) for p in fn.params}
    for stmt in compound:
        if isinstance(stmt, If):
            for o, a, b in zip(stmt.outs, stmt.then.results, stmt.orelse.results):
                for r in (a, b):
                    if isinstance(r, Value) and id(r) not in inlined and id(r) not in params:
                        groups.merge(o, r)
        else:
            for c, r, i in zip(stmt.carried, stmt.body.results, stmt.inits):
                if isinstance(r, Value) and id(r) not in inlined:
                    groups.merge(c, r)
                if isinstance(i, Value) and id(i) not in inlined and id(i) not in params:
                    groups.merge(c, i)
    by_group: dict[int, list[Value]] = {}
    find, parent = groups.find, groups.parent
    for v in order:
        key = id(v)
        root = find(key) if key in parent else key
        members = by_group.get(root)
        if members is None:
            by_group[root] = [v]
        else:
            members.append(v)
    names: dict[int, str] = {}
    taken: dict[str, _Occupied] = {}
    param_names: set[str] = set()
    temps = 0
    temp_names: set[str] = set()
    free_temps: list[tuple[int, str]] = []       # (the point a temporary's name falls free, the name)
    ready_temps: list[tuple[int, str]] = []      # (its number, the name) of those fallen free
    iskeyword = keyword.iskeyword
    # base name -> a heap of (end, start, k) of the spans the names base, base_1, ... hold: a name holding a span
    # from at or before a group's first point to after it conflicts with the group, and is skipped without a look
    # (the stacks of a long function all live from its top on: otherwise each new one would look at every one
    # before it). Spans ended before the point are dropped (groups come in the order of their first point; out
    # of that order a name is only looked at, not skipped)
    holding: dict[str, list[tuple[int, int, int]]] = {}

    def covering(base: str, spans: list[tuple[int, int]]) -> set[int]:
        heap = holding.get(base)
        if not heap or not spans:
            return set()
        first = spans[0][0]
        while heap and heap[0][0] <= first:
            heapq.heappop(heap)
        return {k for _, start, k in heap if start <= first}

    def named(spans: list[tuple[int, int]], param: Value | None, hint: str) -> tuple[str, str, int]:
        """(name, base, k): the variable's own name if it is free, else the first of hint_1, hint_2, ... that is.
        No name is one of reserved (the names the code reads from the user's globals, closures and builtins, and
        the module's own): a parameter neither, the user's (`a`, where an inlined helper reads a global `a`) or
        one the transform made (the tangent `x_dot`, the seed `dy`)."""
        base = hint if param is None else param.hint
        if param is None:
            occupied = taken.get(hint)
            if hint not in reserved and not iskeyword(hint) and (occupied is None or occupied.free_for(spans)):
                return hint, hint, 0
        blocked = covering(base, spans)
        candidate, k = hint, 0
        for k in range(10_000):     # the user's parameters first, keeping their names; then the others
            if k in blocked:
                continue
            candidate = base if k == 0 else f"{base}_{k}"
            if candidate in reserved or iskeyword(candidate):
                continue        # (a parameter too: `x_dot` beside a global x_dot the code reads)
            if param is not None and candidate in param_names:
                continue
            occupied = taken.get(candidate)
            if occupied is not None and not occupied.free_for(spans):
                continue
            break
        return candidate, base, k

    def temporary(spans: list[tuple[int, int]]) -> str:
        """A temporary takes the name of a dead one first: rebinding the name frees the old array at once,
        and NumPy reuses its memory for the next one instead of faulting in new pages. The names free from
        this group's start on come off a heap ordered by when they fall free; else the next new `t<k>`."""
        nonlocal temps
        begin = spans[0][0] if spans else 0          # spans are sorted by their starts
        while free_temps and free_temps[0][0] <= begin:       # fallen free by now: ready, lowest first
            end, name = heapq.heappop(free_temps)
            heapq.heappush(ready_temps, (int(name[1:]), name))
        candidate = None
        if ready_temps:
            freed: list[tuple[int, str]] = []
            while ready_temps:
                freed.append(heapq.heappop(ready_temps))
                name = freed[-1][1]
                occupied = taken.get(name)
                if name in reserved or iskeyword(name) or occupied is not None and not occupied.free_for(spans):
                    continue
                candidate = name
                break
            for number, name in freed:          # the ones not taken go back
                if name != candidate:
                    heapq.heappush(ready_temps, (number, name))
        if candidate is None:
            k = temps + 1
            while True:
                candidate = f"t{k}"
                if candidate not in reserved and not iskeyword(candidate):
                    occupied = taken.get(candidate)
                    if occupied is None or occupied.free_for(spans):
                        break
                k += 1
        if candidate not in temp_names:
            temps = int(candidate[1:])
            temp_names.add(candidate)
        end = spans[-1][1] if len(spans) == 1 else max((last for _, last in spans), default=0)
        heapq.heappush(free_temps, (end, candidate))
        return candidate

    # parameters keep their names; then groups in order of definition
    param_roots = {find(id(p)) if id(p) in parent else id(p) for p in fn.params}
    ordered = [kv for kv in by_group.items() if kv[0] in param_roots] + \
        [kv for kv in by_group.items() if kv[0] not in param_roots]
    segments, raw = groups.segments, groups.raw
    for root, members in ordered:
        if len(members) == 1:
            v = members[0]
            param = v if id(v) in params else None
            hint = v.hint
        else:
            param = next((v for v in members if id(v) in params), None)
            hint = param.hint if param is not None else next((v.hint for v in members if v.hint), "")
        found = segments.get(root)
        spans = found.spans() if found is not None else raw.get(root, [])
        if param is None and not hint:
            candidate = temporary(spans)
        else:
            occupied = taken.get(hint)
            if param is None and hint not in reserved and not iskeyword(hint) and (
                    occupied is None or occupied.free_for(spans)):
                candidate, base, k = hint, hint, 0      # the common case: the variable's own name (named(), inline)
            else:
                candidate, base, k = named(spans, param, hint)
            heap = holding.setdefault(base, [])
            for d, last in spans:
                heapq.heappush(heap, (last, d, k))
        occupied = taken.get(candidate)
        if occupied is None:
            taken[candidate] = _Occupied(spans)
        else:
            occupied.take(spans)
        if param is not None:
            param_names.add(candidate)
        for v in members:
            names[id(v)] = candidate
    return names
