"""Code generation: an IR Function to the source of a Python module.

`emit_module(fn, ...)` returns `Emitted(source, bindings)`: the module text
(imports, the helpers it uses, the function) and the objects its names must be
bound to when it is not importable by name (the user's own functions, odd
constants). The module needs nothing from s2s at run time.

Python names come from the user's: an SSA value takes its variable's name, and
values linked by a phi (the versions of one loop variable) share one name
whenever their lifetimes allow, so the forward sweep reads like the user's
code; otherwise a copy is written. Temporaries are `t1`, `t2`.

astor is used in one place only, `to_source`, so it can be replaced.
"""
from __future__ import annotations

import ast
import bisect
import builtins
import heapq
import inspect
import itertools
import keyword
import math
import operator
import os
import re
import sys
import textwrap
import types
from dataclasses import dataclass, field
from typing import Any

import astor
import numpy as np

from . import runtime
from .errors import S2SError
from .ir import UNDEFINED, Atom, Block, Const, For, Function, If, Op, Stmt, Value, While, stmt_blocks, walk
from .nesting import merge_initializations, nested

_BINARY = {
    operator.add: ast.Add, operator.sub: ast.Sub, operator.mul: ast.Mult, operator.truediv: ast.Div,
    operator.floordiv: ast.FloorDiv, operator.mod: ast.Mod, operator.pow: ast.Pow, operator.matmul: ast.MatMult,
    operator.and_: ast.BitAnd, operator.or_: ast.BitOr, operator.xor: ast.BitXor,
    operator.lshift: ast.LShift, operator.rshift: ast.RShift,
    runtime.concat: ast.Add, runtime.repeat: ast.Mult,
}
_UNARY = {operator.neg: ast.USub, operator.pos: ast.UAdd, operator.not_: ast.Not, operator.invert: ast.Invert}
_COMPARE = {
    operator.lt: ast.Lt, operator.le: ast.LtE, operator.gt: ast.Gt, operator.ge: ast.GtE,
    operator.eq: ast.Eq, operator.ne: ast.NotEq, operator.is_: ast.Is, operator.is_not: ast.IsNot,
}
_OPERATOR_OF = {np.add: operator.add, np.subtract: operator.sub, np.multiply: operator.mul,
                np.divide: operator.truediv}
_MODULES = (("math", math, "math"), ("np", np, "numpy"), ("np.linalg", np.linalg, "numpy"), ("np.fft", np.fft, "numpy"))


def to_source(tree: ast.AST) -> str:
    """The one call into astor (the tree is built from `ast` nodes: no conversion from gast)."""
    return astor.to_source(tree)


# ---------------------------------------------------------------- ast construction

_LOAD, _STORE = ast.Load(), ast.Store()       # shared, as CPython's parser shares them


def _name(id_: str, store: bool = False) -> ast.Name:
    return ast.Name(id=id_, ctx=_STORE if store else _LOAD)


def _attr(path: str) -> ast.expr:
    parts = path.split(".")
    node: ast.expr = _name(parts[0])
    for part in parts[1:]:
        node = ast.Attribute(value=node, attr=part, ctx=_LOAD)
    return node


def _call(func: ast.expr, args: list[ast.expr], keywords: dict[str, ast.expr] | None = None) -> ast.Call:
    return ast.Call(func=func, args=args, keywords=[ast.keyword(arg=k, value=v) for k, v in (keywords or {}).items()])


def _assign(targets: list[str], value: ast.expr) -> ast.Assign:
    target = _name(targets[0], True) if len(targets) == 1 else \
        ast.Tuple(elts=[_name(t, True) for t in targets], ctx=_STORE)
    return ast.Assign(targets=[target], value=value, type_comment=None)


def _constant(value: Any) -> ast.expr:
    return ast.Constant(value=value, kind=None)


# ---------------------------------------------------------------- names

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
        self.defs: dict[int, list[tuple[int, tuple]]] = {}
        self.reads: dict[int, list[tuple[int, tuple]]] = {}
        self.loop_start: dict[int, tuple[int, tuple]] = {}

    def tick(self) -> int:
        self.point += 2             # statements at even points; a branch is entered at the odd one before
        return self.point

    def define(self, values: list[Value], at: int, scopes: tuple | None = None) -> None:
        where = (at, tuple(map(id, self.scopes)) if scopes is None else scopes)
        for v in values:
            if id(v) not in self.inlined:
                self.defs.setdefault(id(v), []).append(where)

    def read(self, atoms: list[Atom], at: int) -> None:
        for atom in atoms:
            if not isinstance(atom, Value):
                continue
            op = self.inlined.get(id(atom))
            if op is not None:
                self.read(list(op.args) + list(op.kwargs.values()), at)
                continue
            self.reads.setdefault(id(atom), []).append((at, tuple(self.scopes)))

    def run(self, fn: Function) -> dict[int, list[tuple[int, int]]]:
        self.define(fn.params, 0)
        self.block(fn.body)
        self.read(fn.body.results, self.tick())
        intervals: dict[int, list[tuple[int, int]]] = {}
        for key, defs in self.defs.items():
            defs.sort(key=lambda d: d[0])
            starts = [d for d, _ in defs]
            spans = [(d, d) for d in starts]
            for at, scopes in self.reads.get(key, []):
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
            intervals[key] = _disjoint(spans)
        return intervals

    def block(self, block: Block) -> None:
        for stmt in block.stmts:
            self.stmt(stmt)

    def stmt(self, stmt: Stmt) -> None:
        if isinstance(stmt, Op):
            if stmt.outs and id(stmt.outs[0]) in self.inlined:
                return
            at = self.tick()
            self.read(list(stmt.args) + list(stmt.kwargs.values()), at)
            loop = self.items.get(id(stmt))
            if loop is not None:          # `for item in seq:` binds the item when an iteration starts
                self.define(stmt.outs, *self.loop_start[loop])
            else:
                self.define(stmt.outs, at)
            return
        if isinstance(stmt, If):
            fork = self.tick()
            self.read([stmt.cond], fork)
            for branch in (stmt.then, stmt.orelse):
                self.scopes.append(["branch", fork, self.point + 1])
                self.block(branch)
                end = self.tick()          # the copies into the outputs, at the end of the branch
                self.read(branch.results, end)
                self.define(stmt.outs, end)
                self.scopes.pop()
            self.define(stmt.outs, self.tick())     # where the branches join: what reads the outputs sees
            return
        start = self.tick()
        self.read(stmt.inits, start)
        if isinstance(stmt, For):         # `range(...)` is evaluated after the copies into the carried values
            self.read([stmt.start, stmt.stop, stmt.step], start + 1)
        scope = ["loop", None]
        self.scopes.append(scope)
        self.define(stmt.carried, start)
        self.loop_start[id(stmt)] = (start, tuple(map(id, self.scopes)))
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
        self.scopes.pop()
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
        self.segments: dict[int, _Segments] = {k: _Segments(v) for k, v in intervals.items()}

    def spans(self, root: int) -> list[tuple[int, int]]:
        found = self.segments.get(root)
        return found.spans() if found is not None else []

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
        sa, sb = self.segments.get(ra), self.segments.get(rb)
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

    def __init__(self) -> None:
        self.starts: list[int] = []
        self.ends: list[int] = []

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


def _python_names(fn: Function, inlined: dict[int, Op], reserved: set[str],
                  items: dict[int, Op] | None = None) -> dict[int, str]:
    groups = _Groups(_LiveRanges(inlined, items).run(fn))
    order: list[Value] = list(fn.params)
    for stmt in walk(fn.body):
        if isinstance(stmt, For):
            order.append(stmt.index)
        if not isinstance(stmt, Op):
            order.extend(stmt.carried if not isinstance(stmt, If) else [])
        order.extend(o for o in stmt.outs if id(o) not in inlined)
    for stmt in walk(fn.body):
        if isinstance(stmt, Op) and stmt.in_place is not None:
            groups.merge(stmt.outs[0], stmt.args[stmt.in_place], force=True)
    # Every merge is checked against interference: two values alive at once never share a name. A loop's
    # result is tried first with its carried value (the user's variable after the loop); where that fails
    # the emitter writes a copy after the loop.
    loops = [stmt for stmt in walk(fn.body) if isinstance(stmt, (While, For))]
    for stmt in loops:
        for c, o in zip(stmt.carried, stmt.outs):
            groups.merge(c, o)
    for stmt in walk(fn.body):
        if isinstance(stmt, If):
            for o, a, b in zip(stmt.outs, stmt.then.results, stmt.orelse.results):
                for r in (a, b):
                    if isinstance(r, Value) and id(r) not in inlined and r not in fn.params:
                        groups.merge(o, r)
        elif isinstance(stmt, (While, For)):
            for c, r, i in zip(stmt.carried, stmt.body.results, stmt.inits):
                if isinstance(r, Value) and id(r) not in inlined:
                    groups.merge(c, r)
                if isinstance(i, Value) and id(i) not in inlined and i not in fn.params:
                    groups.merge(c, i)
    by_group: dict[int, list[Value]] = {}
    for v in order:
        by_group.setdefault(groups.find(id(v)), []).append(v)
    names: dict[int, str] = {}
    taken: dict[str, _Occupied] = {}
    param_names: set[str] = set()
    params = {id(p) for p in fn.params}
    temps = 0
    temp_names: list[str] = []
    free_temps: list[tuple[int, str]] = []       # (the point a temporary's name falls free, the name)
    ready_temps: list[tuple[int, str]] = []      # (its number, the name) of those fallen free
    # parameters keep their names; then groups in order of definition
    ordered = sorted(by_group.items(), key=lambda kv: 0 if any(id(v) in params for v in kv[1]) else 1)
    for root, members in ordered:
        param = next((v for v in members if id(v) in params), None)
        hint = param.hint if param is not None else next((v.hint for v in members if v.hint), "")
        candidates: Any
        if param is not None:       # the user's parameters first, keeping their names; then the others
            candidates = (param.hint if k == 0 else f"{param.hint}_{k}" for k in range(10_000))
        elif hint:
            candidates = (hint if k == 0 else f"{hint}_{k}" for k in range(10_000))
        else:
            # a temporary takes the name of a dead one first: rebinding the name frees the old array
            # at once, and NumPy reuses its memory for the next one instead of faulting in new pages.
            # The names free from this group's start on come off a heap ordered by when they fall free.
            spans = groups.spans(root)
            begin = min((d for d, _ in spans), default=0)
            while free_temps and free_temps[0][0] <= begin:       # fallen free by now: ready, lowest first
                end, name = heapq.heappop(free_temps)
                heapq.heappush(ready_temps, (int(name[1:]), name))
            freed: list[tuple[int, str]] = []

            def dead_temporaries() -> Any:
                while ready_temps:
                    freed.append(heapq.heappop(ready_temps))
                    yield freed[-1][1]
            candidates = itertools.chain(dead_temporaries(), (f"t{k}" for k in range(temps + 1, 100_000)))
        for candidate in candidates:
            if param is None and (candidate in reserved or keyword.iskeyword(candidate)):
                continue
            if param is not None and candidate in param_names:
                continue
            if candidate in taken and not taken[candidate].free_for(groups.spans(root)):
                continue
            if not hint and param is None and candidate not in temp_names:
                temps = int(candidate[1:])
                temp_names.append(candidate)
            break
        if not hint and param is None:
            for number, name in freed:          # the ones not taken go back
                if name != candidate:
                    heapq.heappush(ready_temps, (number, name))
            heapq.heappush(free_temps, (max((last for _, last in spans), default=0), candidate))
        taken.setdefault(candidate, _Occupied()).take(groups.spans(root))
        if param is not None:
            param_names.add(candidate)
        for v in members:
            names[id(v)] = candidate
    return names


# ---------------------------------------------------------------- the emitter

@dataclass
class Emitted:
    source: str
    bindings: dict[str, Any] = field(default_factory=dict)
    reads_user_names: bool = False      # reads a global or closure variable of the user's by bare name
    line_map: dict[int, Any] = field(default_factory=dict)     # line of the module -> the user's Loc


class _Emitter:
    def __init__(self, fn: Function, root: Any = None):
        self.fn = fn
        self.root = root            # the user's function whose namespace the module's bare names read
        self.imports: dict[str, str] = {}         # alias -> module
        self.helpers: dict[str, Any] = {}
        self.visiting: set[str] = set()
        self.reads_user_names = False
        self.skipped: set[int] = set()                      # ops written as part of another statement
        self.locs: dict[int, Any] = {}                      # emitted statement -> the user's line it is from
        self.defining = {id(o): s for s in walk(fn.body) if isinstance(s, Op) for o in s.outs}
        self.bindings: dict[str, Any] = {}
        self.inlined: dict[int, Op] = {}
        self.uses = self._count_uses()
        self._find_inlined()
        reserved = {"np", "math", "range", "reversed", "len", "float", "slice", "min", "max", "abs"}
        reserved |= {h.__name__ for h in runtime.EMITTED_HELPERS}
        for stmt in walk(fn.body):
            if isinstance(stmt, Op) and stmt.prim is runtime.free_name:
                reserved.add(stmt.args[0].value)
        if root is not None:
            reserved |= set(root.__code__.co_freevars)
        self.items = {id(s): item for s in walk(fn.body) if isinstance(s, For)
                      for item in [self.sequence_item(s)] if item is not None}
        self.names = _python_names(fn, self.inlined, reserved, self.items)

    def _count_uses(self) -> dict[int, int]:
        counts: dict[int, int] = {}

        def count(atoms: list[Atom]) -> None:
            for a in atoms:
                if isinstance(a, Value):
                    counts[id(a)] = counts.get(id(a), 0) + 1

        def block(b: Block) -> None:
            for s in b.stmts:
                if isinstance(s, Op):
                    count(list(s.args) + list(s.kwargs.values()))
                elif isinstance(s, If):
                    count([s.cond])
                elif isinstance(s, While):
                    count(s.inits)
                else:
                    count([s.start, s.stop, s.step, *s.inits])
                for inner in stmt_blocks(s):
                    block(inner)
            count(b.results)
        block(self.fn.body)
        return counts

    def _find_inlined(self) -> None:
        """Values written as expressions where they are read: global reads, the returned tuple."""
        returned = {id(a) for a in self.fn.body.results}
        for stmt in walk(self.fn.body):
            if not isinstance(stmt, Op) or len(stmt.outs) != 1:
                continue
            out = stmt.outs[0]
            if stmt.prim is runtime.free_name:
                self.inlined[id(out)] = stmt
            elif stmt.prim is runtime.make_tuple and id(out) in returned and self.uses.get(id(out), 0) == 1:
                self.inlined[id(out)] = stmt
        for stmt in self.fn.body.stmts:
            if isinstance(stmt, Op) and stmt.prim is runtime.make_tuple and id(stmt.outs[0]) in self.inlined:
                for a in stmt.args:     # a tuple nested in the returned tuple
                    for inner in self.fn.body.stmts:
                        if isinstance(inner, Op) and inner.prim is runtime.make_tuple and inner.outs[0] is a \
                                and self.uses.get(id(a), 0) == 1:
                            self.inlined[id(a)] = inner
        self.inlined.update(nested(self.fn, self.uses, self.inlined))      # t = X @ W; h = t + b: one line

    # ------------------------------------------------------------ atoms and calls

    def atom(self, atom: Atom) -> ast.expr:
        if isinstance(atom, Const):
            return self.constant(atom.value)
        op = self.inlined.get(id(atom))
        if op is not None:
            return self.expression(op)
        return _name(self.names[id(atom)])

    def constant(self, value: Any) -> ast.expr:
        if value is None or isinstance(value, (bool, str, bytes)) or value is Ellipsis:
            return _constant(value)
        if type(value) in (int, float):
            if isinstance(value, float) and not math.isfinite(value):
                return _call(_name("float"), [_constant(repr(value))])
            if value < 0:
                return ast.UnaryOp(op=ast.USub(), operand=_constant(-value))
            return _constant(value)
        if type(value) is complex and value.real == 0 and math.isfinite(value.imag):     # 1j, -2j
            return _constant(value) if math.copysign(1.0, value.imag) > 0 else \
                ast.UnaryOp(op=ast.USub(), operand=_constant(complex(0.0, -value.imag)))
        if isinstance(value, tuple):
            return ast.Tuple(elts=[self.constant(v) for v in value], ctx=_LOAD)
        if isinstance(value, slice):
            return _call(_name("slice"), [self.constant(value.start), self.constant(value.stop),
                                          self.constant(value.step)])
        return self.reference(value)

    def index(self, atom: Atom) -> ast.expr:
        """An index inside brackets, where slices are written `a:b:c`."""
        if isinstance(atom, Const) and isinstance(atom.value, slice):
            value = atom.value
            return ast.Slice(lower=self.slice_part(value.start), upper=self.slice_part(value.stop),
                             step=self.slice_part(value.step))
        if isinstance(atom, Const) and isinstance(atom.value, tuple):
            return ast.Tuple(elts=[self.index(Const(v)) for v in atom.value], ctx=_LOAD)
        return self.atom(atom)

    def slice_part(self, value: Any) -> ast.expr | None:
        return None if value is None else self.constant(value)

    def reference(self, obj: Any) -> ast.expr:
        """How the module names an object: `math.sin`, `np.sum`, `abs`, or a bound name."""
        name = getattr(obj, "__name__", None)
        if isinstance(name, str):
            if getattr(builtins, name, None) is obj:
                return _name(name)
            for alias, module, top in _MODULES:
                if getattr(module, name, None) is obj:
                    self.imports[alias.split(".")[0]] = top
                    return _attr(f"{alias}.{name}")
            if obj is np:
                self.imports["np"] = "numpy"
                return _name("np")
            if obj is math:
                self.imports["math"] = "math"
                return _name("math")
        return self.reference_named(obj, name if isinstance(name, str) and name.isidentifier() else "_const")

    def free_name(self, name: str, owner: Any) -> ast.expr:
        """A global or closure variable of owner, read live: a bare name in the root function's own
        namespace, else through the owner's module or closure cell."""
        code = getattr(owner, "__code__", None)
        if code is not None and name in code.co_freevars:
            if owner is self.root:
                self.reads_user_names = True
                return _name(name)
            cell = owner.__closure__[code.co_freevars.index(name)]
            return ast.Attribute(value=self.reference_named(cell, f"{name}_cell"), attr="cell_contents",
                                 ctx=_LOAD)
        if self.root is None or getattr(owner, "__globals__", None) is self.root.__globals__:
            self.reads_user_names = True
            return _name(name)
        module = sys.modules.get(owner.__module__)
        return ast.Attribute(value=self.reference_named(module, owner.__module__.rsplit(".", 1)[-1]), attr=name,
                             ctx=_LOAD)

    def reference_named(self, obj: Any, base: str) -> ast.expr:
        for k in range(1000):
            candidate = base if k == 0 else f"{base}_{k}"
            if self.bindings.get(candidate, obj) is obj:
                self.bindings[candidate] = obj
                return _name(candidate)
        raise AssertionError("too many bound objects")

    def expression(self, op: Op) -> ast.expr:
        prim, args = op.prim, op.args
        if prim is runtime.free_name:
            return self.free_name(args[0].value, args[1].value)
        values = [self.atom(a) for a in args]
        keywords = {k: self.atom(a) for k, a in op.kwargs.items()}
        if prim in _BINARY and len(values) == 2:
            return ast.BinOp(left=values[0], op=_BINARY[prim](), right=values[1])
        if prim in _UNARY and len(values) == 1:
            return ast.UnaryOp(op=_UNARY[prim](), operand=values[0])
        if prim in (operator.is_, operator.is_not) and all(isinstance(a, Const) for a in args):
            return _constant(prim(args[0].value, args[1].value))      # `-0.5 is not None` is a warning
        if prim in _COMPARE and len(values) == 2:
            return ast.Compare(left=values[0], ops=[_COMPARE[prim]()], comparators=[values[1]])
        if prim is operator.contains:
            return ast.Compare(left=values[1], ops=[ast.In()], comparators=[values[0]])
        if prim is operator.getitem:
            return ast.Subscript(value=values[0], slice=self.index(args[1]), ctx=_LOAD)
        if prim is getattr and isinstance(args[1], Const) and isinstance(args[1].value, str):
            return ast.Attribute(value=values[0], attr=args[1].value, ctx=_LOAD)
        if prim is runtime.make_tuple:
            return ast.Tuple(elts=values, ctx=_LOAD)
        if prim is runtime.make_dict:
            return ast.Dict(keys=[self.constant(k) for k in args[0].value], values=values[1:])
        if prim is runtime.make_list or prim is runtime.stack_new:
            return ast.List(elts=values, ctx=_LOAD)
        if prim is runtime.pop:
            return _call(ast.Attribute(value=values[0], attr="pop", ctx=_LOAD), [])
        if prim is runtime.push:
            return _call(ast.Attribute(value=values[0], attr="append", ctx=_LOAD), [values[1]])
        if prim is runtime.zeros_like:
            self.imports["np"] = "numpy"
            return _call(_attr("np.zeros_like"), values)
        if prim in runtime.EMITTED_HELPERS:
            self.use_helper(prim)
            return _call(_name(prim.__name__), values, keywords)
        return _call(self.reference(prim), values, keywords)

    def use_helper(self, helper: Any) -> None:
        """Copy a helper into the module, with the helpers it calls, each once."""
        if helper.__name__ in self.helpers or helper.__name__ in self.visiting:
            return
        self.visiting.add(helper.__name__)          # a helper may call itself
        self.imports["np"] = "numpy"
        for name in sorted(_names_read(helper.__code__)):      # sorted: the same module every run
            other = getattr(runtime, name, None)
            if other in runtime.EMITTED_HELPERS:
                self.use_helper(other)
        self.helpers[helper.__name__] = helper

    # ------------------------------------------------------------ statements

    def name_of(self, v: Value) -> str:
        return self.names[id(v)]

    def copies(self, targets: list[Value], sources: list[Atom]) -> list[ast.stmt]:
        """Parallel copies target_i = source_i, skipping those that already share a name."""
        pairs = [(self.name_of(t), s) for t, s in zip(targets, sources)
                 if not (isinstance(s, Value) and id(s) not in self.inlined and self.name_of(t) == self.names[id(s)])
                 and not (isinstance(s, Const) and s.value is UNDEFINED)]
        if not pairs:
            return []
        if len(pairs) == 1:
            return [_assign([pairs[0][0]], self.atom(pairs[0][1]))]
        return [_assign([t for t, _ in pairs], ast.Tuple(elts=[self.atom(s) for _, s in pairs], ctx=_LOAD))]

    def block(self, block: Block) -> list[ast.stmt]:
        out: list[ast.stmt] = []
        for stmt in block.stmts:
            emitted = self.stmt(stmt)
            for node in emitted:
                if stmt.loc is not None:
                    self.locs[id(node)] = stmt.loc
            out.extend(emitted)
        return out

    def stmt(self, stmt: Stmt) -> list[ast.stmt]:
        if id(stmt) in self.skipped:
            return []
        if isinstance(stmt, Op):
            if stmt.outs and id(stmt.outs[0]) in self.inlined:
                return []
            if stmt.in_place is not None and stmt.prim is runtime.setitem:
                container, index, value = stmt.args
                target = ast.Subscript(value=self.atom(container), slice=self.index(index), ctx=_STORE)
                return [ast.Assign(targets=[target], value=self.atom(value), type_comment=None)]
            if stmt.in_place is not None and stmt.prim is runtime.list_append:
                append = ast.Attribute(value=self.atom(stmt.args[0]), attr="append", ctx=_LOAD)
                return [ast.Expr(value=_call(append, [self.atom(stmt.args[1])]))]
            if stmt.in_place is not None:
                target = self.atom(stmt.args[stmt.in_place])
                target.ctx = _STORE
                return [ast.AugAssign(target=target, op=_BINARY[_OPERATOR_OF.get(stmt.prim, stmt.prim)](),
                                      value=self.atom(stmt.args[1 - stmt.in_place]))]
            value = self.expression(stmt)
            if not stmt.outs:
                return [ast.Expr(value=value)]
            return [_assign([self.name_of(o) for o in stmt.outs], value)]
        if isinstance(stmt, If):
            then = self.block(stmt.then) + self.copies(stmt.outs, stmt.then.results)
            orelse = self.block(stmt.orelse) + self.copies(stmt.outs, stmt.orelse.results)
            test = self.atom(stmt.cond)
            if not then and not orelse:
                return []
            if not then:
                test, then, orelse = ast.UnaryOp(op=ast.Not(), operand=test), orelse, []
            return [ast.If(test=test, body=then, orelse=orelse)]
        return self.loop(stmt) + self.copies(stmt.outs, stmt.carried)

    def loop(self, stmt: While | For) -> list[ast.stmt]:
        before = self.copies(stmt.carried, stmt.inits)
        item = self.items.get(id(stmt))
        if item is not None:       # `for c in seq:` when the index serves only to read seq[index]
            self.skipped.add(id(item))
        body = self.block(stmt.body) + self.copies(stmt.carried, stmt.body.results)
        if item is not None:
            return before + [ast.For(target=_name(self.name_of(item.outs[0]), True), iter=self.atom(item.args[0]),
                                     body=body or [ast.Pass()], orelse=[], type_comment=None)]
        if isinstance(stmt, While):
            test = self.test_expression(stmt.test)
            if test is None:
                body = self.block(stmt.test) + [ast.If(
                    test=ast.UnaryOp(op=ast.Not(), operand=self.atom(stmt.test.results[0])),
                    body=[ast.Break()], orelse=[])] + body
                test = _constant(True)
            return before + [ast.While(test=test, body=body or [ast.Pass()], orelse=[])]
        bounds = [stmt.start, stmt.stop, stmt.step]
        if isinstance(stmt.step, Const) and stmt.step.value == 1:
            bounds = bounds[:2]
            if isinstance(stmt.start, Const) and stmt.start.value == 0:
                bounds = bounds[1:]
        iterator: ast.expr = _call(_name("range"), [self.atom(b) for b in bounds])
        if stmt.reverse:
            iterator = _call(_name("reversed"), [iterator])
        index = self.name_of(stmt.index) if self.uses.get(id(stmt.index)) else "_"
        return before + [ast.For(target=_name(index, True), iter=iterator, body=body or [ast.Pass()],
                                 orelse=[], type_comment=None)]

    def sequence_item(self, stmt: For) -> Op | None:
        """The op `item = seq[index]` of a loop over range(len(seq)) whose index has no other use."""
        if stmt.reverse or not (isinstance(stmt.start, Const) and stmt.start.value == 0
                                and isinstance(stmt.step, Const) and stmt.step.value == 1):
            return None
        length = self.defining.get(id(stmt.stop))
        if length is None or length.prim is not len or self.uses.get(id(stmt.index)) != 1:
            return None
        for op in stmt.body.stmts:          # reading an item of a sequence the loop never changes
            if (isinstance(op, Op) and op.prim is operator.getitem and op.args[1] is stmt.index
                    and op.args[0] is length.args[0] and id(op.outs[0]) not in self.inlined):
                return op
        return None

    def test_expression(self, test: Block) -> ast.expr | None:
        """The loop test as one expression, when its statements are pure and each value is read once."""
        local: dict[int, ast.expr] = {}
        named = self.atom

        def atom(a: Atom) -> ast.expr:
            if isinstance(a, Value) and id(a) in local:
                return local.pop(id(a))
            return named(a)

        def build(block: Block) -> ast.expr | None:
            for s in block.stmts:
                if isinstance(s, Op):
                    if len(s.outs) != 1 or self.uses.get(id(s.outs[0]), 0) != 1 or s.prim in (
                            runtime.push, runtime.pop, print):
                        return None
                    local[id(s.outs[0])] = self._expression_with(s, atom)
                elif isinstance(s, If) and len(s.outs) == 1 and self.uses.get(id(s.outs[0]), 0) == 1:
                    cond = atom(s.cond)
                    then = build(s.then)
                    orelse = build(s.orelse)
                    if then is None or orelse is None:
                        return None
                    local[id(s.outs[0])] = _conditional(cond, then, orelse, s)
                else:
                    return None
            return atom(block.results[0]) if len(block.results) == 1 else None

        return build(test)

    def _expression_with(self, op: Op, atom: Any) -> ast.expr:
        original = self.atom
        self.atom = atom          # type: ignore[method-assign]
        try:
            return self.expression(op)
        finally:
            self.atom = original  # type: ignore[method-assign]

    def module(self, defaults: tuple = (), header: str = "") -> Emitted:
        body = merge_initializations(self.block(self.fn.body), self.locs)     # a, b = [], []: one line
        results = self.fn.body.results
        value = self.atom(results[0]) if len(results) == 1 else \
            ast.Tuple(elts=[self.atom(r) for r in results], ctx=_LOAD)
        body.append(ast.Return(value=value))
        params = [ast.arg(arg=self.name_of(p), annotation=None, type_comment=None) for p in self.fn.params]
        default_nodes = [self.constant(d) for d in defaults]
        args = ast.arguments(args=params, posonlyargs=[], vararg=None, kwonlyargs=[], kw_defaults=[], kwarg=None,
                             defaults=default_nodes)
        markers: list[tuple[Any, bool]] = []
        function = ast.FunctionDef(name=self.fn.name, args=args, body=self.mark(body, markers, None),
                                   decorator_list=[], returns=None, type_comment=None)
        body_lines = _unmark(to_source(ast.Module(body=[function], type_ignores=[])).rstrip().splitlines(),
                             markers)
        signature = body_lines[0][0]
        function_source = "\n".join(line for line, _ in body_lines)
        body_lines = body_lines[1:]
        imports = [f"import {module} as {alias}" if alias != module else f"import {module}"
                   for alias, module in sorted(self.imports.items())]
        bound = [part for name, obj in sorted(self.bindings.items(), key=lambda item: item[0])
                 if (line := _import_line(name, obj)) for part in line.split("\n")]
        imports += [*dict.fromkeys(p for p in bound if p.startswith(("import ", "from "))),   # each once,
                    *(p for p in bound if not p.startswith(("import ", "from ")))]          # then the names bound
        top = "\n\n".join(part for part in (header, "\n".join(imports)) if part)
        definitions = [textwrap.dedent(inspect.getsource(helper)).rstrip() for helper in self.helpers.values()]
        definitions.append(function_source.rstrip())
        text = "\n\n\n".join(([top] if top else []) + definitions) + "\n"
        first = text.count("\n", 0, text.index(signature)) + signature.count("\n") + 2
        line_map = {first + k: loc for k, (_, loc) in enumerate(body_lines) if loc is not None}
        return Emitted(text, dict(self.bindings), self.reads_user_names, line_map)

    def standalone(self, emitted: Emitted) -> Emitted:
        """The module with imports for the user's globals it reads, refusing what cannot be imported."""
        for name, obj in self.bindings.items():
            if _import_line(name, obj).startswith("#"):
                raise S2SError(f"cannot export {self.fn.name}: it reads {name}, a {type(obj).__name__} that a "
                               f"module cannot import", self.fn.loc,
                               hint="make it a module-level global of your module")
        names = sorted({s.args[0].value for s in walk(self.fn.body) if isinstance(s, Op)
                        and s.prim is runtime.free_name and s.args[1].value is self.root})
        if not names:
            return emitted
        module = getattr(self.root, "__module__", None)
        if module is None or module == "__main__" or module.startswith("_s2s_target_"):
            module = os.path.splitext(os.path.basename(self.root.__code__.co_filename))[0]
        if any(name in self.root.__code__.co_freevars for name in names):
            raise S2SError(f"cannot export {self.fn.name}: it reads a closure variable of "
                           f"{self.root.__qualname__}", hint="make it a module-level global of your module")
        line = f"from {module} import {', '.join(names)}"
        head, sep, rest = emitted.source.partition("\n\n\n")
        return Emitted(f"{head}\n{line}{sep}{rest}", emitted.bindings, False, emitted.line_map)

    def mark(self, stmts: list[ast.stmt], markers: list[tuple[Any, bool]], last: Any) -> list[ast.stmt]:
        """The statements with a marker before each one that has a place in the user's code: visible (it
        becomes a comment quoting the line) where the line changes, silent otherwise (it only maps lines)."""
        marked: list[ast.stmt] = []
        for node in stmts:
            loc = self.locs.get(id(node))
            if loc is not None:
                visible = last is None or (loc.file, loc.line) != (last.file, last.line)
                markers.append((loc, visible))
                marked.append(ast.Expr(value=_name(f"{_MARKER}{len(markers) - 1}")))     # a bare name: cheap to print
                last = loc
            if isinstance(node, (ast.If, ast.For, ast.While)):
                node.body = self.mark(node.body, markers, last)
                node.orelse = self.mark(node.orelse, markers, last)
            marked.append(node)
        return marked


_MARKER = "S2S_PLACE_"
_MARKER_LINE = re.compile(r"^(\s*)" + _MARKER + r"(\d+)\s*$")


def _unmark(lines: list[str], markers: list[tuple[Any, bool]]) -> list[tuple[str, Any]]:
    """Marker lines become comments quoting the user's line (or vanish); each line learns its place."""
    out: list[tuple[str, Any]] = []
    current: list[Any] = [None]                # the place of the code at each depth of indentation
    for line in lines:
        match = _MARKER_LINE.match(line)
        depth = (len(line) - len(line.lstrip())) // 4
        if match:
            loc, visible = markers[int(match.group(2))]
            current = current[:depth] + [None] * (depth - len(current)) + [loc]
            if visible:
                text = loc.text.strip()
                out.append((f"{match.group(1)}# {os.path.basename(loc.file)}:{loc.line}"
                            + (f"  {text}" if text else ""), None))
            continue
        place = next((p for p in reversed(current[:depth + 1]) if p is not None), None)
        out.append((line, place))
    return out


def _names_read(code: types.CodeType) -> set[str]:
    """The global names a function's code reads, its comprehensions included."""
    names = set(code.co_names)
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            names |= _names_read(const)
    return names


def _import_line(name: str, obj: Any) -> str:
    """How a printed module gets an object the generated code names: an import, or a note that it is
    bound when s2s runs the code (a closure cell, a default value)."""
    if isinstance(obj, types.ModuleType):
        return f"import {obj.__name__} as {name}" if obj.__name__ != name else f"import {name}"
    module_name = getattr(obj, "__module__", None)
    qualname = getattr(obj, "__qualname__", None)
    module = sys.modules.get(module_name) if module_name else None
    if module is not None and qualname and "." not in qualname and getattr(module, qualname, None) is obj \
            and module_name != "__main__":
        return f"from {module_name} import {qualname}" + (f" as {name}" if name != qualname else "")
    owner = getattr(obj, "__self__", None)          # a method of a library's object: `scipy.stats.norm.logpdf`
    if owner is not None and not isinstance(owner, types.ModuleType) and getattr(obj, "__name__", None):
        path = _public_path(owner)
        if path is not None and getattr(owner, obj.__name__, None) == obj:
            return f"import {path[0]}\n{name} = {'.'.join(path)}.{obj.__name__}"
    return f"# {name}: bound by s2s when it runs this code ({type(obj).__name__})"


def _public_path(obj: Any) -> tuple[str, str] | None:
    """(module, name) under which a module-level object of a library is importable, its shortest public module
    first (`scipy.stats`, `norm` rather than `scipy.stats._continuous_distns`)."""
    module_name = type(obj).__module__
    if not module_name or module_name in ("builtins", "__main__"):
        return None
    parts = module_name.split(".")
    for k in range(1, len(parts) + 1):
        module = sys.modules.get(".".join(parts[:k]))
        if module is None or any(p.startswith("_") for p in parts[1:k]):
            continue
        found = next((n for n, v in vars(module).items() if v is obj and not n.startswith("_")), None)
        if found is not None:
            return module.__name__, found
    return None


def _conditional(cond: ast.expr, then: ast.expr, orelse: ast.expr, stmt: If) -> ast.expr:
    then_const = stmt.then.results[0]
    else_res = stmt.orelse.results[0]
    if isinstance(then_const, Const) and then_const.value is False:
        return ast.BoolOp(op=ast.And(), values=[ast.UnaryOp(op=ast.Not(), operand=cond), orelse])
    if else_res is stmt.cond:
        return ast.BoolOp(op=ast.And(), values=[cond, then])
    if then_const is stmt.cond:
        return ast.BoolOp(op=ast.Or(), values=[cond, orelse])
    return ast.IfExp(test=cond, body=then, orelse=orelse)


def emit_module(fn: Function, defaults: tuple = (), header: str = "", root: Any = None,
                standalone: bool = False) -> Emitted:
    """The module text; standalone: every name it reads is imported (or the export is refused)."""
    emitter = _Emitter(fn, root)
    emitted = emitter.module(defaults, header)
    if standalone:
        return emitter.standalone(emitted)
    return emitted
