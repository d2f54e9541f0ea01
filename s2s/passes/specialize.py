"""Shape-aware emission: runtime helpers replaced by direct NumPy where the shapes decide.

`specialize(fn, params)` takes a derivative's final IR and the abstract values (s2s/analysis/shapes.py) of its
parameters, infers the shape and dtype of every value it can, and rewrites the helpers whose behaviour the
shapes decide: `_unbroadcast` becomes nothing or `np.sum(g, axis=0)`, `_reduced_size` a number,
`_broadcast_back` of a full reduction the adjoint itself, `_matmul_left(g, a, b)` `g @ b.T`, and so on. A
helper stays wherever a shape is unknown (another library's array, a container, a value a loop changes).

The facts come first, alone: `_Specializer` is a domain of the dataflow engine (s2s/analysis/dataflow.py), solved
with the sizes (s2s/analysis/sizes.py's `Sizes`) and the global arrays' facts (s2s/analysis/global_shapes.py) by
`solve`: one walk that only infers, swept again while what a loop carries widens. Its transfer gives a helper the
facts of what it will become (the rewrite's own rules, run on a copy whose result is dropped). Then one walk,
which repeats nothing, rewrites the helpers reading those facts (it gives facts only to the values it makes).
`shape_facts(fn, params, free)` is the facts of the code as written (the passes after this one read them).

Every rewrite inside a loop gives a value of exactly the helper's shape and dtype, so what was inferred for
the loop stays true: in a loop the domain keeps two facts of each value, the plain one (the helpers as written,
which the carried values join) and the specialized one (the helpers as they will be, which the rewrite reads).
What a rewrite is written with may tell less than the helper did (`np.outer(g, b)` of `_matmul_left`, whose
shape shapes.py does not know): the loop's facts are the helper's. Outside loops an adjoint spread lazily from a
full reduction (the helper makes it an array of ones' shape, `(1, 1)`) may stay the number it is: it broadcasts
the same against the full arrays it meets, and the values inferred after it follow the rewritten code.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from s2s.ir import syntax
from s2s import runtime
from s2s.analysis.dataflow import Domain, solve
from s2s.analysis.global_shapes import key_of
from s2s.analysis.shapes import _plain, infer, matmul_shape
from s2s.analysis.sizes import Sizes
from s2s.analysis.values import Abstract, Items, abstract_of, join
from s2s.ir.core import (
    Atom,
    Block,
    Const,
    For,
    Function,
    If,
    Op,
    Value,
    While,
    stmt_blocks,
    stmt_inputs,
    substitute,
    uses_in,
    walk,
)
from s2s.passes.optimize import changed
from s2s.rules import registry

_GONE = object()        # a stack whose pushes disagree
_ABSENT = object()
_INT = Abstract((), int)


_join = join


def _has_for(block: Block) -> bool:
    for stmt in block.stmts:
        if type(stmt) is not Op and (isinstance(stmt, For) or any(_has_for(b) for b in stmt_blocks(stmt))):
            return True
    return False



def _zeros_like(op: Any) -> bool:
    """op makes an array of zeros shaped like its argument (np.zeros_like, runtime.zeros_like: record.zeros)."""
    return op is not None and registry.record(op.prim).zeros == "like"


class _Specializer(Domain):
    """The shapes and dtypes of a function's values (facts: Abstract, Items or None, keyed by Value), a domain of the
    dataflow engine (s2s/analysis/dataflow.py) solved with the sizes (s2s/analysis/sizes.py) by `infer`; then
    (specialize) the rewrite of the helpers those facts decide, one walk that reads them.

    rewrites: the facts of the code as it will be once specialized (a helper's result is that of what it becomes:
    `_broadcast_back` of a full reduction the adjoint itself, a constant pop its number, a container adjoint its
    items); without, of the code as written (the facts other passes read: shape_facts)."""

    def __init__(self, fn: Function, params: list[Abstract | None], free: dict | None = None,
                 rewrites: bool = True):
        super().__init__()
        self.fn = fn
        self.params = params
        self.rewrites = rewrites
        self.inferring = False      # while the engine solves the facts (infer)
        self.depth = 0              # while inferring: how many loops the walk is in (rewrites there keep shapes)
        self.fresh: set[Value] = set()      # the values a rewrite made while inferring (facts of this sweep only)
        # the global arrays' facts (s2s/analysis/global_shapes.py), and those of them the function reads: checked on entry
        self.free = free or {}
        self.free_read: dict[tuple, tuple] = {}
        self.plain_stacks = _plain_stacks(fn.body)        # stack -> its number of pushes
        self.pushed: dict[int, dict[int, Atom]] = {}        # stack -> push -> what it pushed, as rewritten
        self.stacks: dict[Value, Any] = {}
        self.alias: dict[Value, Atom] = {}
        # while inferring in a loop: the aliases its rewrites make (read by the specialized facts, not the plain),
        # and the plain facts (of the helpers as written, as the sizes keep theirs: Sizes.plain)
        self.inner_alias: dict[Value, Atom] = {}
        self.plain: dict[Value, Any] = {}
        self.in_plain = False
        self.noted: Op | None = None    # while inferring: the engine's operation, whose size Sizes noted
        self.count = 0
        self.rewrote = False        # whether a rewrite changed the function (values aliased: self.alias)
        # what a loop's adjoint arrays need (accumulate_in_place), of the function as given: none without a loop
        self._uses: dict[int, int] | None = None
        self._defining: dict[int, Op] | None = None
        if _has_for(fn.body):
            self.uses, self.defining      # noqa: B018 - counted before any rewrite
        self.folded: set[int] = set()
        # the loops a carried shape or container of which changes between iterations (two known facts differ: the
        # domain widened it), and loop -> its first iteration's results' facts (s2s/passes/known_sizes.py reads both)
        self.unsettled: set[int] = set()
        self.first_results: dict[int, list] = {}
        self.owned: set[int] = set()        # loop-carried adjoint arrays that only their loop reads
        self.containers = _Containers(self)
        self.sizes = Sizes(self.sub, self.get, self.full, self.fresh)   # integers shapes decide, arrays made of them

    @property
    def uses(self) -> dict[int, int]:
        """How often each value is read in the function as it was given (counted at once if it has a loop)."""
        if self._uses is None:
            self._uses = {}
            for atom in uses_in(self.fn.body):
                if isinstance(atom, Value):
                    self._uses[id(atom)] = self._uses.get(id(atom), 0) + 1
        return self._uses

    @property
    def defining(self) -> dict[int, Op]:
        """The operation defining each value of the function as it was given."""
        if self._defining is None:
            self._defining = {id(o): st for st in walk(self.fn.body) if isinstance(st, Op) for o in st.outs}
        return self._defining

    # ------------------------------------------------------------ facts

    def sub(self, atom: Atom) -> Atom:
        while type(atom) is Value:
            if atom in self.alias:
                atom = self.alias[atom]
            elif atom in self.inner_alias and not self.in_plain:
                atom = self.inner_alias[atom]
            else:
                break
        return atom

    def full(self, atom: Atom) -> Abstract | Items | None:
        if self.alias or self.inner_alias:
            atom = self.sub(atom)
        if type(atom) is Value:
            if self.in_plain:
                found = self.plain.get(atom, _ABSENT)
                if found is not _ABSENT:
                    return found
            return self.facts.get(atom)
        if isinstance(atom, Const):
            return abstract_of(atom.value)
        return self.facts.get(atom)

    def get(self, atom: Atom) -> Abstract | None:
        found = self.full(atom)
        return found if isinstance(found, Abstract) else None

    def set(self, v: Value, a: Abstract | Items | None) -> None:
        """v's fact. While inferring, a change the engine sweeps again for (not of a value a rewrite made: those
        are made anew each sweep); once inferred, only a value the rewrite made gets one (the rest are the
        engine's)."""
        if self.inferring:
            table = self.plain if self.in_plain else self.facts
            if v in self.fresh:
                table[v] = a
            elif table.get(v, _ABSENT) != a:
                table[v] = a
                self.changed = True
        elif v not in self.facts:
            self.facts[v] = a

    def both(self, v: Value, a: Abstract | None) -> None:
        """v's fact, plain and specialized (a loop's carried value, an If's result in a loop)."""
        self.set(v, a)
        if self.depth and self.rewrites:
            self.flavour(True)
            self.set(v, a)
            self.flavour(False)

    def flavour(self, plain: bool) -> None:
        self.in_plain = self.sizes.in_plain = plain

    # ------------------------------------------------------------ the facts: a domain of the engine

    def inferred(self) -> "_Specializer":
        """Every value's facts (and sizes), solved by the engine: one walk that only infers."""
        self.inferring = True
        solve(self.fn, self.sizes, self)
        self.inferring = False
        self.sweep(self.fn)         # what the walk made to infer (aliases, container adjoints) is the rewrite's to make
        self.count = 0
        return self

    def start(self, fn: Function | Block) -> None:
        for p, a in zip(self.fn.params, self.params):
            if a is not None:
                self.facts[p] = a

    def sweep(self, fn: Function | Block) -> None:
        """Each sweep works out anew what the rewrite would make (the facts stay, joined at loops)."""
        for v in self.fresh:
            self.facts.pop(v, None)
            self.sizes.facts.pop(v, None)
        self.fresh.clear()
        self.alias.clear()
        self.inner_alias.clear()
        self.stacks.clear()
        self.containers.sparse.clear()
        self.containers.keep.clear()

    def mode(self) -> str:
        return "none" if not self.rewrites else "free" if self.depth == 0 else "preserve"

    def op(self, op: Op) -> None:
        """The engine's transfer. In a loop, two facts of each value: the plain one, of the helpers as written
        (what the loop carries joins those: a rewrite there keeps the helper's shape and dtype, though what it is
        made of may tell less, `np.outer` of `_matmul_left`), and the specialized one (of the helpers as they
        will be: what the rewrite reads)."""
        if self.depth and self.rewrites:
            self.flavour(True)
            self.visit(op, "none")
            self.flavour(False)
        self.noted = op         # its size: the engine's Sizes.op noted it (the specialized one)
        self.visit(op, self.mode())
        self.noted = None

    def materialize_read(self, stmt: If | While | For) -> list[Op]:
        """A container adjoint kept apart that a branch or loop reads: the container, before it."""
        if self.rewrites and self.containers.sparse:
            read = list(stmt_inputs(stmt)) + [a for inner in stmt_blocks(stmt) for a in uses_in(inner)]
            return self.containers.materialize_all(read, stmt.loc)
        return []

    def fork(self, stmt: If) -> None:
        if self.depth == 0:
            self.materialize_read(stmt)

    def merge(self, stmt: If) -> None:
        if self.depth == 0 and self.rewrites and self.containers.sparse:
            self.containers.materialize_all(stmt.then.results, None)
            self.containers.materialize_all(stmt.orelse.results, None)
        for out, x, y in zip(stmt.outs, stmt.then.results, stmt.orelse.results):
            self.set(out, _join(self.get(x), self.get(y)))
            if self.depth and self.rewrites:
                self.flavour(True)
                self.set(out, _join(self.get(x), self.get(y)))
                self.flavour(False)

    def enter(self, loop: While | For) -> None:
        """The carried values start from their initial values (joined with what the body yielded, on a later
        sweep); rewrites in a loop keep the shapes and dtypes the loop's facts say."""
        if self.depth == 0:
            self.materialize_read(loop)
        outer = self.depth
        self.depth += 1
        self.flavour(bool(outer and self.rewrites))     # (a loop in a loop: from the outer one's plain facts)
        starts = [self.get(i) for i in loop.inits]
        self.flavour(False)
        for c, a in zip(loop.carried, starts):
            old = self.facts.get(c, _ABSENT)
            self.both(c, a if old is _ABSENT else _join(old, a))
        if isinstance(loop, For):
            self.both(loop.index, _INT)

    def leave(self, loop: While | For) -> None:
        self.flavour(self.rewrites)         # what the body yields, plain
        carried = [self.full(c) for c in loop.carried]
        yielded = [self.full(r) for r in loop.body.results]
        if id(loop) not in self.first_results:      # the first sweep: what the first iteration gives (known_sizes.py)
            self.first_results[id(loop)] = [a if type(a) is Abstract else None for a in yielded]
        if any(a is not None and b is not None and a != b for a, b in zip(carried, yielded)):
            self.unsettled.add(id(loop))    # a carried shape seen to change from one iteration to the next
        joined = [_join(self.get(c), self.get(r)) for c, r in zip(loop.carried, loop.body.results)]
        self.flavour(False)
        for c, a in zip(loop.carried, joined):
            self.both(c, a)
        self.depth -= 1
        for o, a in zip(loop.outs, joined):
            self.both(o, a)

    # ------------------------------------------------------------ blocks

    def block(self, b: Block, mode: str) -> None:
        """The rewrite of b, reading the facts `infer` solved. mode: "free" (any rewrite), "preserve" (in a loop:
        rewrites keep shapes and dtypes)."""
        kept = []
        for stmt in b.stmts:
            if isinstance(stmt, Op):
                kept.extend(self.visit(stmt, mode))
                continue
            kept.extend(self.materialize_read(stmt))
            kept.append(stmt)
            if isinstance(stmt, If):
                self.block(stmt.then, mode)
                self.block(stmt.orelse, mode)
            else:
                self.loop(stmt)
        if self.containers.sparse:
            kept.extend(self.containers.materialize_all(b.results, None))
        if len(kept) != len(b.stmts) or any(k is not st for k, st in zip(kept, b.stmts)):
            self.rewrote = True
        b.stmts = kept
        b.results = [self.sub(a) for a in b.results]

    def loop(self, stmt: While | For) -> None:
        if isinstance(stmt, For):
            self.accumulate_in_place(stmt)
        for inner in stmt_blocks(stmt):
            self.block(inner, "preserve")

    # ------------------------------------------------------------ element loops

    def accumulate_in_place(self, loop: For) -> None:
        """`da = da + _scatter(a, i, g)` in a loop, where da is the loop's own adjoint array, becomes
        `da[i] += g`: O(1) per iteration instead of a full-size array."""
        owned = {id(c) for c, init in zip(loop.carried, loop.inits)
                 if isinstance(init, Value) and self.uses.get(id(init)) == 1 and (id(init) in self.owned or
                 _zeros_like(self.defining.get(id(init))))}
        self.owned |= owned         # a loop nested in this one may write into them too
        self.owned |= {id(out) for c, out in zip(loop.carried, loop.outs) if id(c) in owned}   # and a later loop
        scatters = {id(st.outs[0]): st for st in loop.body.stmts if isinstance(st, Op)
                    and st.prim is runtime._scatter and len(st.outs) == 1 and self.uses.get(id(st.outs[0])) == 1}
        stmts = []
        for st in loop.body.stmts:
            new = self.in_place_sum(st, owned, scatters) if isinstance(st, Op) else None
            stmts.extend(new or [st])
            self.rewrote |= bool(new)
        loop.body.stmts = [st for st in stmts if not (isinstance(st, Op) and st.prim is runtime._scatter
                                                      and id(st.outs[0]) in self.folded)]

    def integer(self, atom: Atom) -> bool:
        found = self.get(atom)
        return found is not None and found.shape == () and found.dtype is int

    def in_place_sum(self, op: Op, owned: set, scatters: dict) -> list[Op] | None:
        if op.prim is not syntax.BINARY["+"] or len(op.args) != 2 or op.kwargs or len(op.outs) != 1:
            return None
        for k in (0, 1):
            acc, part = op.args[k], op.args[1 - k]
            scatter = scatters.get(id(part))
            if not (isinstance(acc, Value) and id(acc) in owned and self.uses.get(id(acc)) == 1 and scatter):
                continue
            x, index, g = scatter.args
            A, X, G = self.get(acc), self.get(x), self.get(g)
            basic = isinstance(index, Const) and type(index.value) in (int, slice) or self.integer(index) or \
                getattr(self.defining.get(id(index)), "prim", None) is runtime.make_tuple and \
                all(self.integer(a) for a in self.defining[id(index)].args)
            if None in (A, X) or X.python or not basic or A.shape != X.shape:
                continue
            if A.dtype != (runtime._gradient_dtype(X.dtype, G.proto()) if G is not None else
                           np.float64 if X.dtype == np.float64 else None):   # float64 whatever float g is
                continue
            item = self.new(syntax.SUBSCRIPT, [acc, index], op)
            total = self.new(syntax.BINARY["+"], [item.outs[0], g], op)
            write = self.new(runtime.setitem, [acc, index, total.outs[0]], op, out=op.outs[0])
            write.in_place = 0                  # acc is this loop's own array, read nowhere else
            owned.add(id(op.outs[0]))
            self.folded.add(id(part))
            for new in (item, total):
                self.set(new.outs[0], infer(new, self.full))
            return [item, total, write]
        return None

    # ------------------------------------------------------------ operations

    def visit(self, op: Op, mode: str) -> list[Op]:
        """op's facts (while inferring) or its rewrite (after): the statements it becomes. While inferring, op is
        not changed (a copy reads the aliases) and what it becomes is dropped: only the facts stay."""
        if op.prim is runtime.free_name and self.free:      # a global array: known like an argument
            key = key_of(op)
            found = self.free.get(key)
            if found is not None:
                self.set(op.outs[0], found)
                self.free_read[key] = (op.args[0].value, op.args[1].value, found)     # (known_sizes.py: shape_facts)
                return [op]
        given = op
        if mode != "none" and (self.alias or self.inner_alias):
            args = [self.sub(a) for a in op.args]
            kwargs = {k: self.sub(a) for k, a in op.kwargs.items()}
            if not self.inferring:
                op.args, op.kwargs = args, kwargs
            elif any(a is not b for a, b in zip(args, op.args)) or \
                    any(kwargs[k] is not a for k, a in op.kwargs.items()):
                op = Op(op.prim, args, op.outs, kwargs, op.loc, op.same_shape, op.in_place, op.method)
        if op.prim is runtime.push:
            if id(op.args[0]) in self.plain_stacks:
                self.pushed.setdefault(id(op.args[0]), {})[id(given)] = self.sub(op.args[1])
            pushed = self.full(op.args[1])        # a tuple of integers too: the index `(i, j)` of an element
            key = self.sub(op.args[0])
            before = self.stacks.get(key)
            self.stacks[key] = pushed if before is None or before == pushed else _GONE
            return [op]
        if op.prim is runtime.pop and len(op.outs) == 1:
            constant = self.constant_pop(op.args[0])
            if constant is not None:        # the loop bound a shape made a constant: the pop is that number
                self.set(op.outs[0], abstract_of(constant.value))
                if mode != "none":
                    (self.inner_alias if self.depth else self.alias)[op.outs[0]] = constant
                return [op]
            found = self.stacks.get(self.sub(op.args[0]))
            self.set(op.outs[0], found if isinstance(found, (Abstract, Items)) else None)
            return [op]
        if len(op.outs) != 1:
            return self.containers.materialize_all(op.args, op.loc, op) + [op] if mode != "none" else [op]
        if mode != "none":
            handled = self.containers.op(op) if mode == "free" and op.prim in _CONTAINER_PRIMS else None
            if handled is not None:
                return handled
            if self.containers.sparse:
                before = self.containers.materialize_all(list(op.args) + list(op.kwargs.values()), op.loc, op)
                if before:
                    return before + self.visit(op, mode)
        rewritten = None if mode == "none" else self.rewrite(op, mode)
        if isinstance(rewritten, (Value, Const)):
            (self.inner_alias if self.depth else self.alias)[op.outs[0]] = rewritten
            return []
        ops = rewritten or [op]
        for new in ops:
            if self.inferring or new.outs[0] not in self.facts:     # after: only what the rewrite made
                self.set(new.outs[0], self.fact(new, new is op and given is self.noted))
        return ops

    def constant_pop(self, stack: Atom) -> Const | None:
        """The number every push of a plain stack pushes, once all of them were seen (each the same), or None."""
        pushed = self.pushed.get(id(stack))
        if pushed is None or len(pushed) != self.plain_stacks[id(stack)]:
            return None
        values = list(pushed.values())
        first = values[0]
        if not (isinstance(first, Const) and type(first.value) in (int, float)) or any(
                not isinstance(v, Const) or type(v.value) is not type(first.value) or v.value != first.value
                for v in values[1:]):
            return None
        return first

    def fact(self, op: Op, noted: bool = False) -> Abstract | Items | None:
        """op's result's abstract value: shapes.py's rules, else what known sizes decide (sizes.py). noted: its
        size is (the engine's transfer of Sizes)."""
        if op.prim is runtime._shaped_as:          # a checkpoint's carried value: the loop's shape
            return self.full(op.args[1])
        found = infer(op, self.full)
        if not noted:
            self.sizes.note(op)
        if found is None:
            found = self.sizes.made(op)
            if found is None and type(self.sizes.value(op.outs[0])) is int:
                found = _INT
        return found

    def new(self, prim: Any, args: list[Atom], like: Op, kwargs: dict | None = None,
            out: Value | None = None) -> Op:
        if out is None:
            self.count += 1
            out = Value(f"{like.outs[0].name}.s{self.count}", "t")
            if self.inferring:
                self.fresh.add(out)
        return Op(prim, args, [out], {k: Const(v) for k, v in (kwargs or {}).items()}, loc=like.loc)

    def rewrite(self, op: Op, mode: str) -> Atom | list[Op] | None:
        if not op.kwargs and op.args and _plain(op.prim) == 1 and all(
                isinstance(a, Const) and type(a.value) in (int, float) for a in op.args):
            return _folded(op)      # `7 - 1`: arithmetic on constants
        if not _DOT_ND:
            from s2s.rules.helpers import _dot_nd_left, _dot_nd_right  # numpy.dot's adjoints (any dimensions)
            _DOT_ND.update({_dot_nd_left: _matmul_adjoint(True, True), _dot_nd_right: _matmul_adjoint(False, True)})
            _RULES.update(_DOT_ND)
        try:
            rule = _RULES.get(op.prim)
        except TypeError:           # an unhashable primitive
            return None
        if rule is None:
            return None
        facts = [self.get(a) for a in op.args]
        return rule(self, op, facts, mode)


def _shaped_as(s: _Specializer, op: Op, facts: list, mode: str) -> Atom | list[Op] | None:
    """runtime._shaped_as(x, like): x, now that its facts are like's (known or not). (While inferring, the result
    has like's facts itself: x's own are the engine's, of where x is made.)"""
    if s.inferring:
        return None
    if isinstance(op.args[0], Value):
        s.facts[op.args[0]] = s.full(op.args[1])
    return op.args[0]


def _folded(op: Op) -> Const | None:
    """Arithmetic on Python numbers, computed now (as it would be when the code runs)."""
    try:
        value = op.prim(*(a.value for a in op.args))
    except Exception:           # noqa: BLE001 - raised when it runs, as before
        return None
    return Const(value) if type(value) in (int, float, bool) else None


def _plain_stacks(body: Block) -> dict[int, int]:
    """The stacks made by stack_new and read only by push and pop (not carried by a loop, nor a branch's result),
    and how many pushes each has: those whose pushes all push one constant have their pops replaced by it."""
    made = {id(st.outs[0]) for st in walk(body) if isinstance(st, Op) and st.prim is runtime.stack_new}
    if not made:
        return {}
    pushes = dict.fromkeys(made, 0)
    for st in walk(body):
        if isinstance(st, Op):
            if st.prim in (runtime.push, runtime.pop) and id(st.args[0]) in made:
                if id(st.args[0]) in pushes:
                    pushes[id(st.args[0])] += st.prim is runtime.push
                reads = st.args[1:] + list(st.kwargs.values())
            else:
                reads = list(st.args) + list(st.kwargs.values())
        else:
            reads = list(stmt_inputs(st)) + [a for inner in stmt_blocks(st) for a in inner.results]
        for atom in reads:
            pushes.pop(id(atom), None)
    return pushes


# ---------------------------------------------------------------- the rewrites

def _unbroadcast(s: _Specializer, op: Op, facts: list, mode: str) -> Atom | list[Op] | None:
    g, x = op.args[0], op.args[1]
    G, X = facts[0], facts[1]
    if len(facts) == 3 and X is not None and facts[2] is not None and X.shape == facts[2].shape \
            and not op.kwargs:
        return g                            # x was not broadcast: the helper returns g, whatever g is
    if G is None or X is None or op.kwargs:
        return None
    if len(facts) == 3:
        R = facts[2]
        if R is None:
            return None
        if X.shape == R.shape:
            return g
        if G.shape != R.shape:              # an adjoint spread lazily: the helper counts the copies
            return _counted(s, op, G, X, R)
    if G.shape == X.shape:
        return g
    if G.python:
        return None
    out = op.outs[0]
    if X.shape == ():
        if not X.python:
            return [s.new(np.sum, [g], op, out=out)]
        if G.dtype.kind != "f":
            return None
        total = s.new(np.sum, [g], op)
        return [total, s.new(float, [total.outs[0]], op, out=out)]
    lead = G.ndim - X.ndim
    if lead < 0:
        return None
    kept = G.shape[lead:]
    stretched = tuple(i for i, (n, k) in enumerate(zip(X.shape, kept)) if n == 1 and k != 1)
    ops: list[Op] = []
    if lead:
        ops.append(s.new(np.sum, [g], op, {"axis": 0 if lead == 1 else tuple(range(lead))}))
    if stretched:
        ops.append(s.new(np.sum, [ops[-1].outs[0] if ops else g], op,
                         {"axis": stretched[0] if len(stretched) == 1 else stretched, "keepdims": True}))
    if not ops:
        return g
    ops[-1].outs = [out]
    return ops


def _counted(s: _Specializer, op: Op, G: Abstract, X: Abstract, R: Abstract) -> list[Op] | None:
    """`_unbroadcast(g, x, r)` with g a float standing for r's full shape (spread lazily) and x a number: every
    copy sums into x, g times r's size (a Python float for a Python number x, NumPy's for NumPy's, as the helper)."""
    if G.shape != () or G.python and G.dtype is not float or not G.python and G.dtype.kind != "f":
        return None
    if X.shape != ():           # x broadcast to r (c[-1] of shape (1,) against (3,)): g times the copies, x's shape
        if X.python or np.broadcast_shapes(X.shape, R.shape) != R.shape:
            return None
        count = Const(int(np.prod(R.shape, dtype=np.int64) // max(1, np.prod(X.shape, dtype=np.int64))))
        total = s.new(np.multiply if not G.python else syntax.BINARY["*"], [op.args[0], count], op)
        return [total, s.new(np.full, [Const(X.shape), total.outs[0]], op, out=op.outs[0])]
    count = Const(int(np.prod(R.shape, dtype=np.int64)))
    if X.python:
        return [s.new(syntax.BINARY["*"], [op.args[0], count], op, out=op.outs[0])] if G.python else None
    return [s.new(np.multiply, [op.args[0], count], op, out=op.outs[0])]


def _known_slice(s: _Specializer, op: Op, facts: list, mode: str) -> Atom | list[Op] | None:
    """`slice(None, X.shape[1], None)` with its bounds known from shapes: a constant slice, so that the array it
    indexes has a known shape (statsmodels' `params[: exog.shape[1]]`)."""
    if op.kwargs or not 1 <= len(op.args) <= 3:
        return None
    bounds = []
    for a in op.args:
        if type(a) is Const and (a.value is None or type(a.value) is int):
            bounds.append(a.value)
        elif type(a) is Value and type(s.sizes.value(a)) is int:
            bounds.append(s.sizes.value(a))
        else:
            return None
    return Const(slice(*bounds))


def _none_test(s: _Specializer, op: Op, facts: list, mode: str) -> Atom | list[Op] | None:
    """`hi is not None` (`is None`) of a number or array of known shape and dtype: True (False). A rule's test on
    an optional bound (np.clip's) read from a global number checked on entry."""
    if len(op.args) != 2 or op.kwargs or not (type(op.args[1]) is Const and op.args[1].value is None) \
            or type(facts[0]) is not Abstract:
        return None
    return Const(op.prim is syntax.COMPARE["is not"])


def _masked(s: _Specializer, op: Op, facts: list, mode: str) -> Atom | list[Op] | None:
    """`_masked(c, 1.0)`: c. An adjoint that is a nonzero constant (the seed, spread lazily) masks nothing."""
    g = op.args[1] if len(op.args) == 2 and not op.kwargs else None
    if isinstance(g, Const) and type(g.value) in (int, float) and g.value != 0:
        return op.args[0]
    return None


def _add_arrays(s: _Specializer, op: Op, facts: list, mode: str) -> Atom | list[Op] | None:
    """`_add(a, b)` of two NumPy arrays or numbers (not Python numbers, of which 0 is no adjoint to the helper): `a +
    b`, as the helper computes it (the adjoints of a list's items, summed after an unrolled loop). Of a NumPy
    number 0 the helper gives the other operand, which `a + b` gives too when their dtypes agree."""
    if len(facts) != 2 or op.kwargs or not all(f is not None and not f.python for f in facts):
        return None
    if () in (facts[0].shape, facts[1].shape) and facts[0].dtype != facts[1].dtype:
        return None                 # a NumPy number 0 is no adjoint to the helper: the other one, of its dtype
    return [s.new(syntax.BINARY["+"], list(op.args), op, out=op.outs[0])]


def _list_item(s: _Specializer, op: Op, facts: list, mode: str) -> Atom | list[Op] | None:
    """`_item(g, k)` of a list or tuple of adjoints of known length (_unconcatenate's pieces): `g[k]`."""
    g = s.full(op.args[0]) if len(op.args) == 2 and not op.kwargs else None
    key = op.args[1].value if g is not None and type(op.args[1]) is Const else None
    if not (isinstance(g, Items) and g.kind in ("list", "tuple") and type(key) is int and 0 <= key < len(g.keys)):
        return None
    return [s.new(syntax.SUBSCRIPT, list(op.args), op, out=op.outs[0])]


def _expand(s: _Specializer, op: Op, facts: list, mode: str) -> Atom | list[Op] | None:
    G, L = facts
    if G is None or L is None or L.python:
        return None
    if G.shape == L.shape:
        return op.args[0]
    return [s.new(np.broadcast_to, [op.args[0], Const(L.shape)], op, out=op.outs[0])]


def _fill(s: _Specializer, op: Op, facts: list, mode: str) -> Atom | list[Op] | None:
    G, X = facts
    if G is not None and X is not None and G.shape == X.shape and not X.python:
        return op.args[0]
    return None


def _reduced_size(s: _Specializer, op: Op, facts: list, mode: str) -> Atom | list[Op] | None:
    X = facts[0]
    axis = op.args[1] if len(op.args) > 1 else Const(None)
    if X is None or X.python or not isinstance(axis, Const):
        return None
    axes = range(X.ndim) if axis.value is None else \
        [axis.value] if isinstance(axis.value, int) else axis.value
    try:
        return Const(int(np.prod([X.shape[a] for a in axes], dtype=np.int64)))
    except (IndexError, TypeError):
        return None


def _broadcast_back(s: _Specializer, op: Op, facts: list, mode: str) -> Atom | list[Op] | None:
    G, X = facts[0], facts[1]
    axis, keepdims = (op.args + [Const(None), Const(False)])[2:4]
    if G is None or X is None or X.python or not isinstance(axis, Const) or not isinstance(keepdims, Const) \
            or op.kwargs:
        return None
    target = runtime._gradient_dtype(X.dtype)
    if axis.value is None and not keepdims.value:
        weak = G.dtype is float and target == np.float64        # a Python float: float64 when spread
        if mode == "free" and G.shape == () and (weak or not G.python and G.dtype == target) and X.ndim:
            return op.args[0]               # a number broadcasts like the array of ones' shape it stands for
        return None
    result = infer(op, s.get)
    if result is None or G.python or G.dtype != target:
        return None
    if keepdims.value:
        return op.args[0] if G.shape == result.shape else None
    axes = _reduced_axes(axis.value, X.ndim)
    if axes is None or G.shape != tuple(n for i, n in enumerate(X.shape) if i not in axes):
        return None
    return [s.new(np.expand_dims, [op.args[0], Const(axes[0] if len(axes) == 1 else axes)], op, out=op.outs[0])]


def _reduced_axes(axis: Any, ndim: int) -> tuple | None:
    items = (axis,) if isinstance(axis, int) else axis if isinstance(axis, tuple) else None
    if items is None or not all(isinstance(a, int) and -ndim <= a < ndim for a in items):
        return None
    return tuple(sorted(a % ndim for a in items))


def _matmul_adjoint(left: bool, dot: bool):
    def rule(s: _Specializer, op: Op, facts: list, mode: str) -> Atom | list[Op] | None:
        G, A, B = facts
        if G is None or A is None or B is None or A.python or B.python or G.python or op.kwargs:
            return None
        if not (1 <= A.ndim <= 2 and 1 <= B.ndim <= 2) or G.shape != matmul_shape(A.shape, B.shape):
            return None
        g, a, b = op.args
        out = op.outs[0]
        if left:
            if A.ndim == 2 and B.ndim == 2:
                t = s.new(getattr, [b, Const("T")], op)
                return [t, s.new(syntax.BINARY["@"], [g, t.outs[0]], op, out=out)]
            if A.ndim == 2:
                return [s.new(np.outer, [g, b], op, out=out)]
            if B.ndim == 2:
                return [s.new(syntax.BINARY["@"], [b, g], op, out=out)]
            return [s.new(syntax.BINARY["*"], [g, b], op, out=out)]
        if A.ndim == 2:
            t = s.new(getattr, [a, Const("T")], op)
            return [t, s.new(syntax.BINARY["@"], [t.outs[0], g], op, out=out)]
        if B.ndim == 2:
            return [s.new(np.outer, [a, g], op, out=out)]
        return [s.new(syntax.BINARY["*"], [g, a], op, out=out)]
    return rule


def _scatter(s: _Specializer, op: Op, facts: list, mode: str) -> Atom | list[Op] | None:
    X, G = facts[0], facts[2]
    index = op.args[1]
    if X is None or G is None or X.python or op.kwargs or not isinstance(index, Const):
        return None
    items = index.value if isinstance(index.value, tuple) else (index.value,)
    if not all(i is None or i is Ellipsis or type(i) in (int, slice) for i in items) \
            or runtime._gradient_dtype(X.dtype, G.proto()) != X.dtype:
        return None
    zeros = s.new(np.zeros_like, [op.args[0]], op)       # no index repeats: the adjoint is written, not added
    return [zeros, s.new(runtime.setitem, [zeros.outs[0], index, op.args[2]], op, out=op.outs[0])]


def _constant_item(s: _Specializer, op: Op, facts: list, mode: str) -> Atom | list[Op] | None:
    """An item of a constant tuple: `(4, 3)[-1]` is 3."""
    if len(op.args) != 2 or op.kwargs or not all(isinstance(a, Const) for a in op.args):
        return None
    x, i = op.args[0].value, op.args[1].value
    if type(x) is not tuple or type(i) is not int or not -len(x) <= i < len(x) or type(x[i]) is not int:
        return None
    return Const(x[i])


_DOT_ND: dict = {}         # rules/helpers.py's, added when first needed (rules/ imports s2s)

# what _Containers.op rewrites
_CONTAINER_PRIMS = {runtime._zeros_like_tree, runtime._scatter, runtime._add, runtime._item, runtime._fill_tree}

# (np.shape, np.ndim and np.size of an array of known shape stay as they are written: `range(1, n - 1)` reads
# better than `range(1, 7)`, and shapes.py knows their values without a constant in the code: Abstract.value)
_RULES = {
    runtime._shaped_as: _shaped_as,
    syntax.SUBSCRIPT: _constant_item,
    runtime._scatter: _scatter,
    runtime._unbroadcast: _unbroadcast,
    runtime._expand: _expand,
    runtime._masked: _masked,
    runtime._add: _add_arrays,
    runtime._item: _list_item,
    syntax.COMPARE["is not"]: _none_test,
    syntax.COMPARE["is"]: _none_test,
    slice: _known_slice,
    runtime._fill: _fill,
    runtime._reduced_size: _reduced_size,
    runtime._broadcast_back: _broadcast_back,
    runtime._matmul_left: _matmul_adjoint(True, False),
    runtime._matmul_right: _matmul_adjoint(False, False),
    runtime._dot_left: _matmul_adjoint(True, True),
    runtime._dot_right: _matmul_adjoint(False, True),
}


def specialize(fn: Function, params: list[Abstract | None], free: dict | None = None) -> Function:
    """fn with the helpers its parameters' shapes decide replaced by NumPy (in place; returned). free: the
    facts of the global arrays it reads (s2s/analysis/global_shapes.py); those it reads are fn.global_checks (name,
    owner, Abstract), which the derivative checks on entry."""
    s = _Specializer(fn, params, free).inferred()
    s.block(fn.body, "free")
    if s.alias:
        substitute(fn.body, {id(k): s.sub(v) for k, v in s.alias.items()})
    fn.specialized = bool(s.alias or s.rewrote)     # type: ignore[attr-defined]  # (optimize_ir reads it)
    if s.alias or s.rewrote:
        changed(fn)
    # for write_in_place (s2s/passes/optimize.py): each value kept with its facts, so that an id is never another's.
    # Numbers never gain from being written in place (`x *= 2` makes a new one): they are nested, as are arrays
    # of fewer than SMALL elements
    fn.arrays, fn.small = {}, {}        # type: ignore[attr-defined]
    _known(fn.body, s.facts, fn.arrays, fn.small)     # type: ignore[attr-defined]
    if s.free:      # the globals whose shapes decided sizes folded before the transform (known_sizes.py): checked
        for key, read in getattr(fn, "size_globals", {}).items():
            s.free_read.setdefault(key, read)
    fn.global_checks = list(s.free_read.values())   # type: ignore[attr-defined]
    s.sizes = s.containers = None       # (they hold s: a cycle, freed now rather than by the collector)
    return fn


def shape_facts(fn: Function, params: list[Abstract | None], free: dict | None = None) -> _Specializer:
    """The facts of fn as written (nothing rewritten): `.get(atom)` its shape and dtype (an Abstract) or None,
    `.full(atom)` a container's items too. For the passes after specialize (in_place, contractions, batched)."""
    return _Specializer(fn, params, free, rewrites=False).inferred()


def _known(block: Block, env: dict[Value, Any], arrays: dict, small: dict) -> None:
    """Every operation's result that has facts, in program order: the arrays (id -> shape, dtype, value) and the
    small ones (id -> value)."""
    for st in block.stmts:
        if type(st) is Op:
            for o in st.outs:
                a = env.get(o)
                if type(a) is Abstract:
                    if not a.python:
                        arrays[id(o)] = (a.shape, a.dtype, o)
                    if not a.shape or int(np.prod(a.shape)) < SMALL:
                        small[id(o)] = o
        else:
            for inner in stmt_blocks(st):
                _known(inner, env, arrays, small)


SMALL = 1 << 13     # arrays of fewer elements are cheap to allocate: written as nested expressions, not in place


def _checks(path: str, a: Any) -> list[tuple[str, str, str, Any]]:
    """(the failing test, what it is about, the expression shown, the expected) for an argument's arrays: inside
    tuples, lists and dicts too (the derivative is specialized on their items' shapes: s2s/analysis/shapes.py)."""
    if type(a) is np.ndarray:
        return [(f"np.shape({path}) != {tuple(a.shape)!r}", "shape", f"np.shape({path})", tuple(a.shape))]
    if isinstance(abstract_of(a), Items):
        keys = list(range(len(a))) if type(a) is not dict else list(a)
        found = [(f"len({path}) != {len(a)}", "length", f"len({path})", len(a))]
        for k, v in zip(keys, a if type(a) is not dict else a.values()):
            found += _checks(f"{path}[{k!r}]", v)
        return found if len(found) > 1 else []
    return []


def shape_checks(source: str, name: str, params: list[str], example: tuple) -> str:
    """An exported derivative specialized on its example arguments' shapes checks them on entry."""
    checks = [f"    if {test}:\n"
              f"        raise ValueError(f\"{name}: argument {p!r}{where} has the {what} {{{shown}}}; this "
              f"derivative was exported for the {what} {expected!r}: export it again with an example of that "
              f"shape\")\n"
              for p, a in zip(params, example) for test, what, shown, expected in _checks(p, a)
              for where in [f" at {shown[shown.index('(') + 1:-1]}" if "[" in shown else ""]]
    if not checks:
        return source
    lines = source.splitlines(keepends=True)
    start = next(i for i, line in enumerate(lines) if line.startswith(f"def {name}("))
    end = next(i for i in range(start, len(lines)) if lines[i].rstrip().endswith(":"))
    if "import numpy as np\n" not in lines:
        lines.insert(next(i for i, line in enumerate(lines) if not line.startswith("#")), "import numpy as np\n")
        end += 1
    return "".join(lines[:end + 1] + checks + lines[end + 1:])


# ---------------------------------------------------------------- container adjoints, item by item

class _Sparse:
    """The adjoint of a tuple, list or dict of known structure, kept as its items' adjoints (no container is
    built): `_scatter(params, 1, g)` is {1: g}, `_add` of two merges them, `_item` reads one, `_fill_tree`
    builds the user's gradient from them directly. Whatever else reads it gets the container the helpers
    would have built (`materialize`)."""

    def __init__(self, like: Atom, items: Items, entries: dict, zeros: bool):
        self.like = like            # the container it is the adjoint of
        self.items = items
        self.entries = entries      # key -> Atom | _Sparse; a missing key is no adjoint
        self.zeros = zeros          # made by _zeros_like_tree: a missing item is zeros shaped like it


def _is_zero(atom: Atom) -> bool:
    return isinstance(atom, Const) and type(atom.value) in (int, float) and atom.value == 0


class _Containers:
    def __init__(self, s: _Specializer):
        self.s = s
        self.sparse: dict[Value, _Sparse] = {}
        self.keep: list[Op] = []

    def of(self, atom: Atom) -> _Sparse | None:
        atom = self.s.sub(atom)
        return self.sparse.get(atom) if isinstance(atom, Value) else None

    def run(self, prim: Any, args: list[Atom], like: Op, out: Value | None = None) -> tuple[list[Op], Atom]:
        """A new operation, itself specialized: the statements it became and the atom holding its result."""
        new = self.s.new(prim, args, like, out=out)
        self.keep.append(new)       # facts and aliases are keyed by id: what they name must stay alive
        ops = self.s.visit(new, "free")
        return ops, self.s.sub(new.outs[0])

    def op(self, op: Op) -> list[Op] | None:
        prim, args = op.prim, op.args
        if op.kwargs:
            return None
        out = op.outs[0]
        if prim is runtime._zeros_like_tree and isinstance(self.s.full(args[0]), Items):
            self.sparse[out] = _Sparse(args[0], self.s.full(args[0]), {}, True)
            return []
        if prim is runtime._scatter and isinstance(args[1], Const):
            items = self.s.full(args[0])
            if isinstance(items, Items) and type(args[1].value) in (int, str) and args[1].value in items.keys:
                self.sparse[out] = _Sparse(args[0], items, {args[1].value: self.of(args[2]) or args[2]}, False)
                return []
            return None
        if prim is runtime._add:
            a, b = (self.of(x) or x for x in args)
            if isinstance(a, _Sparse) and (isinstance(b, _Sparse) or _is_zero(b)) or \
                    isinstance(b, _Sparse) and _is_zero(a):
                ops: list[Op] = []
                merged = self.merge(a, b, op, ops)
                if merged is None:
                    return None
                self.sparse[out] = merged
                return ops
            return None
        if prim is runtime._item and isinstance(args[1], Const) and self.of(args[0]) is not None:
            g, key = self.of(args[0]), args[1].value
            if key not in g.items.keys:
                return None
            ops, atom = self.entry(g, key, op)
            if isinstance(atom, _Sparse):
                self.sparse[out] = atom
            else:
                self.s.alias[out] = atom
            return ops
        if prim is runtime._zeros_like_tree:
            x = self.s.get(args[0])
            if x is not None and not x.python:
                return self.run(np.zeros_like, [args[0]], op, out)[0]
            if x is not None and x.dtype in (int, float, bool):
                self.s.alias[out] = Const(0.0)
                return []
            return None
        if prim is runtime._fill_tree:
            g = self.of(args[0])
            if isinstance(self.s.full(args[1]), Items) and (g is not None or _is_zero(args[0])):
                ops = []
                built = self.fill(g, args[1], self.s.full(args[1]), op, ops, out)
                if built is not out:
                    self.s.alias[out] = built
                return ops
            return self.fill_leaf(op)
        return None

    def merge(self, a: Any, b: Any, like: Op, ops: list[Op]) -> _Sparse | None:
        if _is_zero(b):
            return a
        if _is_zero(a):
            return b
        if a.items != b.items:
            return None
        entries = dict(a.entries)
        for key, e in b.entries.items():
            if key not in entries:
                entries[key] = e
            elif isinstance(e, _Sparse) and isinstance(entries[key], _Sparse):
                inner = self.merge(entries[key], e, like, ops)
                if inner is None:
                    return None
                entries[key] = inner
            else:
                left, right = (self.materialize(x, like.loc, ops) for x in (entries[key], e))
                made, entries[key] = self.run(syntax.BINARY["+"], [left, right], like)
                ops.extend(made)
        return _Sparse(a.like, a.items, entries, a.zeros or b.zeros)

    def item_of(self, like: Atom, key: Any, op: Op, ops: list[Op]) -> Atom:
        made, atom = self.run(syntax.SUBSCRIPT, [like, Const(key)], op)
        ops.extend(made)
        return atom

    def entry(self, g: _Sparse, key: Any, op: Op) -> tuple[list[Op], Any]:
        """The adjoint of one item: the entry, or the zero the helpers give for a missing one."""
        if key in g.entries:
            return [], g.entries[key]
        if not g.zeros:
            return [], Const(0.0)
        ops: list[Op] = []
        item = self.item_of(g.like, key, op, ops)
        made, atom = self.run(runtime._zeros_like_tree, [item], op)
        return ops + made, self.of(atom) or atom

    def fill(self, g: _Sparse | None, x: Atom, items: Items, op: Op, ops: list[Op], out: Value | None = None) -> Atom:
        """_fill_tree(g, x) item by item: the user's gradient, built as a tuple, list or dict literal."""
        parts = []
        for key, abstract in zip(items.keys, items.items):
            item = self.item_of(x, key, op, ops)
            e = g.entries.get(key) if g is not None else None
            if isinstance(abstract, Items):
                parts.append(self.fill(e if isinstance(e, _Sparse) else None, item, abstract, op, ops)
                             if e is None or isinstance(e, _Sparse) else self.leaf(runtime._fill_tree, [e, item], op, ops))
            elif e is None:
                parts.append(self.leaf(runtime._zeros_like_tree, [item], op, ops))
            else:
                parts.append(self.leaf(runtime._fill_tree, [self.materialize(e, op.loc, ops), item], op, ops))
        if items.kind == "dict":
            made, atom = self.run(runtime.make_dict, [Const(items.keys), *parts], op, out)
        else:
            made, atom = self.run(runtime.make_tuple if items.kind == "tuple" else runtime.make_list, parts, op, out)
        ops.extend(made)
        return atom

    def leaf(self, prim: Any, args: list[Atom], op: Op, ops: list[Op]) -> Atom:
        made, atom = self.run(prim, args, op)
        ops.extend(made)
        return atom

    def fill_leaf(self, op: Op) -> list[Op] | None:
        """_fill_tree(g, x) for one array or number x: what the helper returns for it, where shapes decide."""
        g, x = op.args
        G, X = self.s.get(g), self.s.get(x)
        if G is None or X is None:
            return None
        if X.python:
            if X.dtype is float and G.python and G.dtype is float:
                self.s.alias[op.outs[0]] = g
                return []
            return [self.s.new(float, [g], op, out=op.outs[0])] if X.dtype is float and G.shape == () else None
        if G.shape == X.shape:
            self.s.alias[op.outs[0]] = g
            return []
        return None

    def materialize(self, x: Any, loc: Any, ops: list[Op], like: Op | None = None) -> Atom:
        """The container the helpers would have built for an adjoint kept apart (or the atom itself)."""
        if not isinstance(x, _Sparse):
            return x
        template = like or Op(runtime.make_list, [], [Value("container", "t")], loc=loc)
        self.keep.append(template)
        parts = []
        for key in x.items.keys:
            if key in x.entries:
                parts.append(self.materialize(x.entries[key], loc, ops, template))
            elif x.zeros or x.items.kind != "dict":
                made, atom = self.entry(x, key, template)
                ops.extend(made)
                parts.append(self.materialize(atom, loc, ops, template))
        keys = tuple(k for k in x.items.keys if k in x.entries or x.zeros)
        if x.items.kind == "dict":
            made, atom = self.run(runtime.make_dict, [Const(keys), *parts], template)
        else:
            made, atom = self.run(runtime.make_list, parts, template)
        ops.extend(made)
        return atom

    def materialize_all(self, atoms: list[Atom], loc: Any, like: Op | None = None) -> list[Op]:
        ops: list[Op] = []
        for a in atoms:
            a = self.s.sub(a)
            found = self.sparse.get(a) if isinstance(a, Value) else None
            if found is not None:
                self.s.alias[a] = self.materialize(found, loc, ops, like)
                del self.sparse[a]
        return ops
