"""Reverse mode: a primal Function to one Function that returns its gradient.

The result runs the primal statements (the forward sweep), then the adjoint
statements in reverse order (the reverse sweep), seeded with 1 for the output.
Partial adjoints of a value read several times are summed (the seeds'
node_to_grad). Only active values get adjoints; an argument no rule gives an
adjoint to has none (zero is symbolic until a loop or a branch needs it written).

Control flow is transformed, not unrolled:
- the reverse of an `If` is an `If` on the same condition, whose branches are
  the reverses of the branches;
- the reverse of a loop is a `For` over the same number of iterations, backwards
  (a `While` counts its iterations in an extra carried value), carrying the
  adjoints of the loop-carried values and the accumulated adjoints of the values
  the body reads from outside;
- inside loops, a value the reverse sweep reads is pushed onto a stack (a plain
  list) right after the forward sweep defines it, and popped at the start of the
  matching reverse block: exactly what the rules read, nothing more.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from s2s.ir import syntax
from s2s import runtime
from s2s.analysis import complex_values
from s2s.analysis.activity import active_values, value_kinds
from s2s.analysis.values import NUMERIC, is_container
from s2s.errors import NonScalarOutput, S2SError
from s2s.ir.calls import Callee
from s2s.ir.core import (
    UNDEFINED,
    Atom,
    Block,
    Const,
    For,
    Function,
    If,
    Loc,
    Op,
    Stmt,
    Value,
    While,
    clone_function,
    free_values,
    prim_name,
    stmt_defs,
    substitute,
    uses_in,
    walk,
)
from s2s.ir.naming import TRIP_COUNT, Namer, adjoint_hint, stack_hint
from s2s.rules import registry
from s2s.transforms import elements, recursion
from s2s.transforms.checkpoint import reverse_loop as reverse_checkpointed
from s2s.transforms.common import (UNDIFFERENTIATED_KEYWORDS, inner_object, keyword_position, missing_rule,
                                   rule_dead_code)
from s2s.transforms.common import singular as singular_at
from s2s.transforms.rule_copies import copy_rule
from s2s.transforms.rule_inline import with_keywords


class Adjoints(dict):
    """id of a value -> its adjoint so far, remembering the order in which keys were first set (the order of a
    branch's results)."""

    def __init__(self) -> None:
        super().__init__()
        self.first: dict[int, int] = {}

    def __setitem__(self, key: int, value: Atom) -> None:
        if key not in self.first:
            self.first[key] = len(self.first)
        dict.__setitem__(self, key, value)

    def position(self, key: int) -> Any:
        return self.first[key]


class _BranchAdjoints(Adjoints):
    """The adjoints inside one branch of an If: those it sets, read through to the ones before it (no copy of
    them: a function of many branches stays linear). Its written keys are its own items."""

    def __init__(self, before: dict) -> None:
        super().__init__()
        self.before = before

    def __missing__(self, key: int) -> Atom:
        return self.before[key]

    def get(self, key: int, default: Any = None) -> Any:
        if dict.__contains__(self, key):
            return dict.__getitem__(self, key)
        return self.before.get(key, default)

    def __contains__(self, key: object) -> bool:
        return dict.__contains__(self, key) or key in self.before

    def position(self, key: int) -> Any:
        """Where key stands in a copy of the adjoints before the branch updated with the branch's."""
        if key in self.before:
            return (0, _position(self.before, key))
        return (1, self.first[key])


def _position(adjoints: dict, key: int) -> Any:
    if isinstance(adjoints, Adjoints):
        return adjoints.position(key)
    return list(adjoints).index(key)        # a plain dict (checkpoint.py's): its order


class _Reverse:
    def __init__(self, fn: Function, active: set[int], kinds: dict[int, Any]):
        self.fn = fn
        self.active = active
        self.kinds = kinds
        self.namer = Namer()
        self.adj: dict[int, Atom] = Adjoints()
        # adjoints that may be smaller than their value (a reduction's adjoint, spread lazily): they
        # broadcast to its shape, and are expanded only where a rule or the caller needs the full shape
        self.lazy: set[int] = set()
        # adjoints that are exactly zero on a branch not taken (below np.where, maximum, abs...): the
        # elementwise rules they meet are masked so that 0 times a NaN derivative stays 0
        self.masked: set[int] = set()
        self.stack_inits: list[Stmt] = []
        self.checkpoint: Any = None      # snapshots for the loops no loop encloses: see checkpoint.py
        self.forward_block: Block | None = None      # the forward block being reversed
        self.values = {id(p): p for p in fn.params}
        self.defining: dict[int, Op] = {}
        for s in walk(fn.body):           # one sweep: every value by id, the operation defining it
            if s.__class__ is Op:
                for o in s.outs:
                    self.values[id(o)] = o
                    self.defining[id(o)] = s
            else:
                self.values.update((id(v), v) for v in stmt_defs(s))
        self.namer.used.update(v.name for v in self.values.values())      # value_names(fn): not given out again
        self.complex = complex_values.analyze(fn, active)      # which values may be complex (complex_values.py)

    # ---------------------------------------------------------------- helpers

    def is_active(self, atom: Atom) -> bool:
        return isinstance(atom, Value) and id(atom) in self.active

    def is_scalar(self, atom: Atom) -> bool:
        return isinstance(atom, Const) or self.kinds.get(id(atom)) == "scalar"

    def is_numeric(self, atom: Atom) -> bool:
        """A scalar or an array (not a container, nor something unknown): its adjoints add with +."""
        return isinstance(atom, Const) or self.kinds.get(id(atom)) in NUMERIC

    def fresh(self, hint: str) -> Value:
        return self.namer.value(hint)

    def rename(self, v: Value, hint: str) -> None:
        v.hint = hint
        v.name = self.namer.value(hint).name

    def zero(self, v: Value, out: list[Stmt], like: Atom | None = None, loc: Loc | None = None) -> Atom:
        if self.is_scalar(v):
            return Const(0.0)
        z = self.fresh(adjoint_hint(v))
        if self.is_numeric(v):
            out.append(Op(runtime.zeros_like, [like if like is not None else v], [z], loc=loc))
        else:
            out.append(Op(runtime._zeros_like_tree, [v], [z], loc=loc))
        return z

    def accumulate(self, v: Atom, contribution: Atom, out: list[Stmt], loc: Loc | None) -> None:
        if v.__class__ is not Value or id(v) not in self.active:
            return
        current = self.adj.get(id(v))
        if current is None:
            self.adj[id(v)] = contribution
            return
        total = self.fresh(adjoint_hint(v))
        lazy, masked = self.lazy, self.masked
        lazy_current = current.__class__ is Value and id(current) in lazy
        lazy_contribution = contribution.__class__ is Value and id(contribution) in lazy
        if self.kinds.get(id(v)) in NUMERIC:
            out.append(Op(syntax.BINARY["+"], [current, contribution], [total], loc=loc,
                          same_shape=not lazy_current and not lazy_contribution))
        else:             # the adjoints of a container add up entry by entry
            out.append(Op(runtime._add, [current, contribution], [total], loc=loc))
        if lazy_current and lazy_contribution:
            lazy.add(id(total))
        if current.__class__ is Value and id(current) in masked and \
                contribution.__class__ is Value and id(contribution) in masked:
            masked.add(id(total))
        self.adj[id(v)] = total

    def real_part(self, v: Atom, contribution: Atom, source: int, out: list[Stmt], loc: Loc | None) -> Atom:
        """The adjoint of a real value is real: a contribution computed with complex values (source's bits)
        keeps its real part where v is real (np.real), or may be (a check when the code runs)."""
        bits = self.complex.of(v)
        if not (source & complex_values.COMPLEX) or bits == complex_values.COMPLEX or not isinstance(
                contribution, Value) or not self.is_active(v) or not self.is_numeric(v):
            return contribution
        real = self.fresh(contribution.hint or adjoint_hint(v))
        if bits == complex_values.REAL:
            out.append(Op(np.real, [contribution], [real], loc=loc))
        else:
            out.append(Op(complex_values.match_real(), [contribution, v], [real], loc=loc))
        # the real part keeps the contribution's shape: spread lazily (a full reduction's adjoint, smaller than v) or
        # masked, so is it (a rule that needs v's full shape then expands it: `_overwritten(dv, mask)` had indexed a
        # (1,)-shaped adjoint with a mask of v's length)
        for marked in (self.lazy, self.masked):
            if id(contribution) in marked:
                marked.add(id(real))
        return real

    def is_masked(self, atom: Atom) -> bool:
        return isinstance(atom, Value) and id(atom) in self.masked

    def is_lazy(self, atom: Atom) -> bool:
        return isinstance(atom, Value) and id(atom) in self.lazy

    def full(self, g: Atom, like: Value, out: list[Stmt], loc: Loc | None) -> Atom:
        """g with the full shape of like (a broadcast view), for rules that need it."""
        if not self.is_lazy(g):
            return g
        expanded = self.fresh(g.hint if isinstance(g, Value) else "")
        out.append(Op(runtime._expand, [g, like], [expanded], loc=loc))
        return expanded

    # ---------------------------------------------------------------- blocks

    def block(self, block: Block, out: list[Stmt], depth: int) -> None:
        outer, self.forward_block = self.forward_block, block      # (a checkpointed loop rewrites its forward)
        for stmt in reversed(block.stmts):
            if isinstance(stmt, Op):
                self.op(stmt, out)
            elif isinstance(stmt, If):
                self.branch(stmt, out, depth)
            else:
                self.loop(stmt, out, depth)
        self.forward_block = outer

    def op(self, op: Op, out: list[Stmt]) -> None:
        if op.prim.__class__ is Callee:      # a recursive function's call: its own derivative functions (recursion.py)
            return recursion.reverse_call(self, op, out, reverse_function)
        if len(op.outs) != 1 or id(op.outs[0]) not in self.adj:
            return
        g = self.adj[id(op.outs[0])]
        active = self.active
        needed = [i for i, a in enumerate(op.args) if a.__class__ is Value and id(a) in active]
        last = len(op.args) - 1                    # the last position the rule's arguments take
        positional: Any = op.args                  # the rule's arguments, keyword ones at their place
        for name, atom in op.kwargs.items():       # a keyword argument is the rule's parameter of that name
            if self.is_active(atom) and name not in UNDIFFERENTIATED_KEYWORDS:
                rule = registry.find_adjoint(op.prim)
                if rule is None:            # no rule at all: say so (scipy.stats.expon.logpdf before it had one)
                    raise missing_rule(op.prim, op.loc)
                k = keyword_position(rule, name)
                if k is None or k < len(op.args):
                    raise S2SError(f"the keyword argument {name}= of {prim_name(op.prim)} is differentiated, "
                                   f"and its rule has no parameter of that name", op.loc,
                                   hint="pass it positionally, or give the rule a parameter named so")
                if positional is op.args:
                    positional = dict(enumerate(op.args))
                positional[k] = atom
                last = max(last, k)
                needed.append(k)
        if not needed:
            return
        prim = op.prim
        elementwise = registry.is_elementwise(prim)
        if not elementwise:
            g = self.full(g, op.outs[0], out, op.loc)
        if (prim is syntax.SUBSCRIPT or prim is runtime.setitem) and elements.handles(self, op):
            return elements.reverse(self, op, g, needed, out)   # x[i], out[i] = v on an array: O(1) (elements.py)
        if prim is runtime.make_tuple or prim is runtime.make_list or prim is runtime.make_dict:
            # the variadic primitives: an item's adjoint is the container adjoint's item
            keys = op.args[0].value if prim is runtime.make_dict else range(len(op.args))
            offset = 1 if prim is runtime.make_dict else 0
            for i in needed:
                element = self.fresh(adjoint_hint(op.args[i]))
                out.append(Op(runtime._item, [g, Const(keys[i - offset])], [element], loc=op.loc))
                if self.kinds.get(id(op.args[i])) == "array":
                    # an item no read of the container reached is 0.0 (_item): smaller than the array, as a lazy
                    # adjoint is (the gradient handed back is filled to the argument's shape: runtime._fill)
                    self.lazy.add(id(element))
                element = self.real_part(op.args[i], element, self.complex.of(op.outs[0]), out, op.loc)
                self.accumulate(op.args[i], element, out, op.loc)
            return
        touches = self.complex.any_complex and self.complex.touches_complex(op)
        rule = (touches and complex_values.adjoint_rule(prim)) or registry.find_adjoint(prim)
        if rule is None:
            raise missing_rule(prim, op.loc)
        guard = complex_values.fence(op, self.complex) if touches else []     # real-only rules: refused
        rule = with_keywords(rule, op.kwargs)         # the variant for np.sum's where= and the like
        stmts, results = copy_rule(rule, [g, op.outs[0], *op.args], op.kwargs, self.namer, op.loc, prim)
        missing = [i for i in needed if i >= len(results)]
        if missing:
            raise S2SError(f"the rule for {prim_name(prim)} gives no adjoint for argument {missing[0] + 1}, "
                           f"which is differentiated here", op.loc)
        if last + 1 > len(results):
            results = results + [None] * (last + 1 - len(results))       # arguments without adjoint
        for i in needed:
            if results[i] is None and i == 1 and prim in (runtime.setitem, syntax.SUBSCRIPT):
                continue        # an index or key (`k, v` unpacked from d.items() carries d's activity) has none
            if results[i] is None:
                # no adjoint for a value that carries one: a zero only where the rule declares it
                refusal = inner_object(prim, op.args, i, op.loc)
                if refusal is not None:
                    raise refusal
                raise S2SError(f"{prim_name(prim)} is differentiated with respect to its argument {i + 1}, "
                               f"which its rule does not differentiate", op.loc,
                               hint="stop_gradient(...) it if that is meant, or register a rule that gives it "
                                    "an adjoint")
        if prim in (runtime.setitem, syntax.SUBSCRIPT) and 1 in needed and results[1] is None:
            needed = [i for i in needed if i != 1]          # the index, skipped above
        keep = [results[i] for i in needed]
        rule_block = Block(stmts, keep)
        spreads = rule_dead_code(rule, needed, rule_block)
        out.extend(rule_block.stmts)
        masked, kinds = self.masked, self.kinds
        lazy_results = (elementwise and self.is_lazy(g)) or spreads
        masking = registry.record(prim).masking
        singular = elementwise and g.__class__ is Value and singular_at(op) and not self.is_scalar(op.outs[0])
        inputs = None
        for i in needed:
            arg, contribution = positional[i], results[i]
            g_masked = elementwise and g.__class__ is Value and id(g) in masked
            if g_masked or singular:     # before unbroadcasting: g has the result's shape
                zeroed = self.fresh(adjoint_hint(arg))
                out.append(Op(runtime._masked, [contribution, g], [zeroed], loc=op.loc))
                contribution = zeroed
            if elementwise and not all(a.__class__ is Const or kinds.get(id(a)) == "scalar"
                                       for k, a in enumerate(op.args) if k != i):
                unbroadcast = self.fresh(adjoint_hint(arg))
                operands = [contribution, arg] + ([op.outs[0]] if lazy_results else [])
                out.append(Op(runtime._unbroadcast, operands, [unbroadcast], loc=op.loc))
                contribution = unbroadcast
            elif contribution.__class__ is Value and not contribution.hint:
                if inputs is None:      # what the rule was given; any other value it returns is its own
                    inputs = {id(a) for a in (g, op.outs[0], *op.args, *op.kwargs.values())}
                if id(contribution) not in inputs:         # the rule's temporary: named after the argument
                    self.rename(contribution, adjoint_hint(arg))
            if touches:
                contribution = complex_values.guarded(contribution, guard, prim, self, out, op.loc)
                contribution = self.real_part(arg, contribution, complex_values.COMPLEX, out, op.loc)
            if contribution.__class__ is Value:
                if lazy_results and not (arg.__class__ is Const or kinds.get(id(arg)) == "scalar"):
                    self.lazy.add(id(contribution))
                if g_masked or masking:
                    masked.add(id(contribution))
            self.accumulate(arg, contribution, out, op.loc)

    def branch(self, stmt: If, out: list[Stmt], depth: int) -> None:
        incoming = [(j, self.adj.get(id(o))) for j, o in enumerate(stmt.outs)]
        if all(g is None for _, g in incoming):
            return
        before = self.adj
        reversed_branches = []
        for branch in (stmt.then, stmt.orelse):
            self.adj = _BranchAdjoints(before)
            stmts: list[Stmt] = []
            for j, g in incoming:
                if g is not None:
                    g = self.real_part(branch.results[j], g, self.complex.of(stmt.outs[j]), stmts, stmt.loc)
                    self.accumulate(branch.results[j], g, stmts, stmt.loc)
            self.block(branch, stmts, depth)
            local = {id(v) for s in walk(branch) for v in stmt_defs(s)}
            reversed_branches.append((branch, stmts, self.adj, local))
        self.adj = before
        escaping: dict[int, Value] = {}
        for _, _, after, local in reversed_branches:       # in the order of a copy of before, updated
            for key in sorted(dict.keys(after), key=after.position):
                if key not in local and dict.__getitem__(after, key) is not before.get(key):
                    escaping[key] = self.values[key]
        blocks = []
        for branch, stmts, after, _ in reversed_branches:
            results = []
            for key, v in escaping.items():
                atom = after.get(key)
                results.append(atom if atom is not None else self.zero(v, stmts, loc=stmt.loc))
            if depth > 0:
                self.save_for_reverse(branch, stmts, [])
            else:
                self.lift_out_of_branch(stmt, branch, stmts)
            blocks.append(Block(stmts, results))
        outs = [self.fresh(adjoint_hint(v)) for v in escaping.values()]
        for k, o in enumerate(outs):
            if any(self.is_lazy(b.results[k]) for b in blocks):
                self.lazy.add(id(o))
        out.append(If(stmt.cond, blocks[0], blocks[1], outs, stmt.loc))
        for key, o in zip(escaping, outs):
            self.adj[key] = o

    def loop(self, stmt: While | For, out: list[Stmt], depth: int) -> None:
        active_carried = [j for j, c in enumerate(stmt.carried) if self.is_active(c)]
        if not any(id(stmt.outs[j]) in self.adj for j in active_carried):
            return
        if depth == 0 and self.checkpoint is not None:
            return reverse_checkpointed(self, stmt, out, self.checkpoint)
        if isinstance(stmt, While):
            index = self.fresh("_")
            bounds: list[Atom] = [Const(0), Const(None), Const(1)]     # the trip count: decided below
            backwards = False
        else:
            index = self.fresh(stmt.index.hint or "i")
            bounds = [stmt.start, stmt.stop, stmt.step]
            backwards = not stmt.reverse
        inner = {id(stmt.index)} if isinstance(stmt, For) else set()
        inner |= {id(c) for c in stmt.carried}
        free = [v for v in free_values(stmt.body) if self.is_active(v) and id(v) not in inner]

        # adjoints carried around the reverse loop keep their full shape from one iteration to the next
        inits: list[Atom] = []
        for j in active_carried:
            g = self.adj.get(id(stmt.outs[j]))
            inits.append(self.full(g, stmt.outs[j], out, stmt.loc) if g is not None
                         else self.zero(stmt.outs[j], out, loc=stmt.loc))
        for f in free:
            g = self.adj.get(id(f))
            inits.append(self.full(g, f, out, stmt.loc) if g is not None else self.zero(f, out, loc=stmt.loc))

        before = self.adj
        self.adj = Adjoints()
        carried = [self.fresh(adjoint_hint(stmt.carried[j])) for j in active_carried]
        accumulators = [self.fresh(adjoint_hint(f)) for f in free]
        for f, acc in zip(free, accumulators):
            self.adj[id(f)] = acc
        body: list[Stmt] = []
        for j, dc in zip(active_carried, carried):
            g = self.real_part(stmt.body.results[j], dc, self.complex.of(stmt.carried[j]), body, stmt.loc)
            self.accumulate(stmt.body.results[j], g, body, stmt.loc)
        self.block(stmt.body, body, depth + 1)
        results: list[Atom] = []
        for j, dc in zip(active_carried, carried):
            g = self.adj.get(id(stmt.carried[j]))
            # a zero shaped like this iteration's value (a loop may change a variable's shape); a value the
            # body only overwrites (`out = ...` read after the loop) has none, without reading it: it may be
            # unbound before the first iteration
            if g is not None:
                results.append(self.full(g, stmt.carried[j], body, stmt.loc))
            elif isinstance(stmt.inits[j], Const) and stmt.inits[j].value is UNDEFINED:
                results.append(Const(0.0))
            else:
                results.append(self.zero(stmt.carried[j], body, loc=stmt.loc))
        results.extend(self.full(self.adj[id(f)], acc, body, stmt.loc) for f, acc in zip(free, accumulators))
        self.adj = before

        restored: tuple[list, list, list] = ([], [], [])      # arrays written element by element: elements.py
        elements.restore_overwritten(self, stmt, body, *restored)
        inits.extend(restored[0])
        reverse_block = Block(body, results + restored[2])
        if isinstance(stmt, For):
            substitute(reverse_block, {id(stmt.index): index})
        self.save_for_reverse(stmt.body, reverse_block.stmts, stmt.carried,
                              {id(stmt.index): index} if isinstance(stmt, For) else {})
        if isinstance(stmt, While):
            bounds[1] = self._trip_count(stmt, out, depth)
        outs = [self.fresh(v.hint) for v in carried + accumulators + restored[1]]
        out.append(For(*bounds, index, inits, carried + accumulators + restored[1], reverse_block, outs, backwards,
                       stmt.loc))
        for f, o in zip(free, outs[len(carried):]):
            self.adj[id(f)] = o
        for j, o in zip(active_carried, outs):
            g = self.real_part(stmt.inits[j], o, self.complex.of(stmt.carried[j]), out, stmt.loc)
            self.accumulate(stmt.inits[j], g, out, stmt.loc)

    def _trip_count(self, stmt: While, out: list[Stmt], depth: int) -> Value:
        """How many times a forward While ran: outside other loops, the length of a stack it pushes on
        every iteration; otherwise a counter it carries."""
        if depth == 0:
            for s in stmt.body.stmts:
                if isinstance(s, Op) and s.prim is runtime.push:
                    trips = self.fresh(TRIP_COUNT)
                    out.append(Op(len, [s.args[0]], [trips], loc=stmt.loc))
                    return trips
        return self._count_iterations(stmt)

    def _count_iterations(self, stmt: While) -> Value:
        """Give a forward While a carried iteration counter; return its final value."""
        count = self.fresh(TRIP_COUNT)
        following = self.fresh(TRIP_COUNT)
        total = self.fresh(TRIP_COUNT)
        stmt.inits.append(Const(0))
        stmt.carried.append(count)
        stmt.body.stmts.append(Op(syntax.BINARY["+"], [count, Const(1)], [following], loc=stmt.loc))
        stmt.body.results.append(following)
        stmt.outs.append(total)
        return total

    def lift_out_of_branch(self, stmt: If, branch: Block, reverse: list[Stmt]) -> None:
        """Outside loops, a branch's values reach its reverse as extra phi outputs (undefined on the other path)."""
        defined_here = {id(v): v for s in branch.stmts for v in s.outs}
        needed = {id(a): a for a in uses_in(Block(reverse, [])) if isinstance(a, Value) and id(a) in defined_here}
        mapping: dict[int, Atom] = {}
        for v in needed.values():
            out = self.fresh(v.hint)
            stmt.outs.append(out)
            for b in (stmt.then, stmt.orelse):
                b.results.append(v if b is branch else Const(UNDEFINED))
            mapping[id(v)] = out
        substitute(Block(reverse, []), mapping)

    def save_for_reverse(self, forward: Block, reverse: list[Stmt], header: list[Value],
                         index: dict[int, Atom] | None = None) -> None:
        """Push what the reverse block reads of this forward block's values; pop it there. An index
        computed from the loop's index (`i - 1`, `(i, j)`) is computed again instead (elements.py)."""
        defined_here = {id(v): v for v in header}
        for s in forward.stmts:
            defined_here.update((id(v), v) for v in s.outs)
        needed: dict[int, Value] = {}
        for atom in uses_in(Block(reverse, [])):
            if isinstance(atom, Value) and id(atom) in defined_here:
                needed[id(atom)] = atom
        if not needed:
            return
        pops: list[Stmt] = []
        mapping: dict[int, Atom] = {}
        if index is not None:
            again = elements.recompute(self, forward, header, needed, index, mapping)
            needed = {k: v for k, v in needed.items() if k not in mapping}
            pops.extend(again)
        for v in needed.values():
            stack = self.fresh(stack_hint(v))
            self.stack_inits.append(Op(runtime.stack_new, [], [stack]))
            push = Op(runtime.push, [stack, v], [])
            position = next((k + 1 for k, s in enumerate(forward.stmts) if v in s.outs), 0)
            forward.stmts.insert(position, push)
            popped = self.fresh(v.hint)
            pops.append(Op(runtime.pop, [stack], [popped]))
            mapping[id(v)] = popped
        substitute(Block(reverse, []), mapping)
        reverse[0:0] = pops


def _refuse_output(fn: Function, output: Atom, rev: "_Reverse", out: list[Stmt]) -> bool:
    """A gradient is of a function with one number as its output: refuse None, strings, containers."""
    if isinstance(output, Const):
        if output.value is None or not isinstance(output.value, (int, float, complex, np.generic, np.ndarray)):
            raise NonScalarOutput(f"{fn.name} returned {output.value!r}, not a number: a gradient needs a "
                                  f"function with a scalar output", fn.loc,
                                  hint="did the function forget a `return`?" if output.value is None else "")
        return True
    kind = rev.kinds.get(id(output), "other")
    if is_container(kind):
        what = {"tuple": "a tuple", "list": "a list", "list*": "a list", "dict": "a dict"}.get(kind[0], kind[0])
        raise NonScalarOutput(f"{fn.name} returns {what}, not a number: a gradient needs a function with a "
                              f"scalar output", fn.loc,
                              hint="use has_aux=True for (output, aux) pairs, s2s.vjp or s2s.jacobian for "
                                   "several outputs")
    if kind not in NUMERIC and not rev.is_active(output):   # the seed refuses what is not a number
        out.append(Op(runtime._seed, [output], [rev.fresh("")], loc=fn.loc))
    return True


def _refuse_complex_output(fn: Function, output: Atom, rev: "_Reverse", wrt: list[int], out: list[Stmt]) -> None:
    """The gradient of a complex output with respect to real arguments: reverse mode, seeded with 1, would give
    the derivative of its real part only (forward mode gives df/dx, complex); refused, or checked when it runs."""
    if not isinstance(output, Value) or not rev.complex.any_complex or \
            any(complex_values.is_complex_argument(i) for i in wrt):
        return
    bits = rev.complex.of(output)
    if bits == complex_values.COMPLEX:
        raise NonScalarOutput(f"{fn.name} returns a complex number of real arguments: reverse mode would give the "
                              f"derivative of its real part only", fn.loc,
                              hint="use mode=\"forward\" for df/dx (complex), or differentiate np.real(...), "
                                   "np.imag(...) or np.abs(...) of the output")
    if bits & complex_values.COMPLEX:
        out.append(Op(runtime._real_output, [output], [], loc=fn.loc))


def reverse_function(fn: Function, wrt: list[int], param_kinds: list, with_value: bool,
                     several: bool = False, cotangent: bool = False, checkpoint: Any = None) -> Function:
    """The gradient function: `def f_grad(same params): ... return grads` (or `value, grads`).
    checkpoint: reverse the loops no loop encloses with that many snapshots, or budget (checkpoint.py)."""
    namer = Namer()
    fn = clone_function(fn, lambda v: namer.value(v.hint))   # the forward sweep gets pushes: work on a copy
    active = active_values(fn, wrt)
    rev = _Reverse(fn, active, value_kinds(fn, param_kinds))
    rev.checkpoint = checkpoint
    output = fn.body.results[0]
    out: list[Stmt] = []
    params = list(fn.params)
    if cotangent:           # a vector-Jacobian product: the output's adjoint is a parameter
        seed_param = rev.fresh(adjoint_hint(output) if isinstance(output, Value) else "dout")
        params.append(seed_param)
        if rev.is_active(output):
            rev.adj[id(output)] = seed_param
            rev.block(fn.body, out, 0)
    elif _refuse_output(fn, output, rev, out) and rev.is_active(output):
        _refuse_complex_output(fn, output, rev, wrt, out)
        if rev.is_scalar(output):
            seed: Atom = Const(1.0)
        else:
            seed = rev.fresh(adjoint_hint(output))
            out.append(Op(runtime._seed, [output], [seed], loc=fn.loc))
        rev.adj[id(output)] = seed
        rev.block(fn.body, out, 0)
    grads: list[Atom] = []
    for i in wrt:
        p = fn.params[i]
        g = rev.adj.get(id(p))
        if g is not None and is_container(rev.kinds.get(id(p))):      # the structure of the argument
            filled = rev.fresh(g.hint if isinstance(g, Value) else adjoint_hint(p))
            out.append(Op(runtime._fill_tree, [g, p], [filled], loc=fn.loc))
            g = filled
        elif g is not None and rev.is_lazy(g):
            filled = rev.fresh(g.hint)
            out.append(Op(runtime._fill, [g, p], [filled], loc=fn.loc))
            g = filled
        if g is None and is_container(rev.kinds.get(id(p))):        # zeros in the argument's structure
            g = rev.fresh(adjoint_hint(p))
            out.append(Op(runtime._fill_tree, [Const(0.0), p], [g], loc=fn.loc))
        grads.append(g if g is not None else rev.zero(p, out, loc=fn.loc))
    results: list[Atom]
    if len(grads) == 1 and not several:
        gradient: Atom = grads[0]
    else:
        gradient = rev.fresh("grads")
        out.append(Op(runtime.make_tuple, grads, [gradient]))
    aux = fn.body.results[1:]          # has_aux: what the function returns beside its output
    if with_value:
        value: Atom = output
        if aux:
            value = rev.fresh("value_and_aux")
            out.append(Op(runtime.make_tuple, [output, *aux], [value]))
        pair = rev.fresh("value_and_grad")
        out.append(Op(runtime.make_tuple, [value, gradient], [pair]))
        results = [pair]
    elif aux:
        pair = rev.fresh("grad_and_aux")
        out.append(Op(runtime.make_tuple, [gradient, *aux], [pair]))
        results = [pair]
    else:
        results = [gradient]
    body = Block(rev.stack_inits + fn.body.stmts + out, results)
    suffix = "vjp" if cotangent else "value_and_grad" if with_value else "grad"
    result = Function(f"{fn.name}_{suffix}", params, body, fn.loc)
    # where the forward sweep ends, and the primal output it computes (a recursive function's forward and reverse
    # sweeps are made by splitting its vjp there: recursion.py)
    result.sweep_boundary = len(rev.stack_inits) + len(fn.body.stmts)      # type: ignore[attr-defined]
    result.primal_output = output                                          # type: ignore[attr-defined]
    return result
