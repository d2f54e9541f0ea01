"""Adjoints accumulated across a reverse loop as one contraction after it.

The reverse sweep of `h = np.tanh(Wh @ h + Wx @ x + b)` adds an outer product into `dWh` at every step:
`dWh = dWh + np.outer(dz, h_1)`, a new matrix each iteration. The sum of the outer products is one matrix
product of the stacked vectors: with the step's `dz` in row i of a (T, H) array `dz_rows` and `h_1` in row i
of `h_1_rows`, `dWh = dz_rows.T @ h_1_rows` after the loop. `contract_accumulations(fn, params)` rewrites
every such accumulation of an adjoint (the reverse transform's sums, marked `same_shape`) across a `for` loop
(the reverse of a `for` or of a `while`):

- `d = d + np.outer(u, v)` (u, v vectors) becomes `d = d0 + U.T @ V` after the loop;
- `d = d + A.T @ B` (A, B matrices of the same number of rows) becomes
  `d = d0 + np.tensordot(A_rows, B_rows, axes=((0, 1), (0, 1)))`;
- `d = d + w`, where w is stacked for one of those anyway, becomes `d = d0 + np.sum(W, axis=0)`;

where the rows of a value are the array it is read from, when it is `X[i]` of an array X from outside the loop
(`X[start:stop]`, nothing saved), or else an array allocated before the loop (`np.empty((n, ...))`) whose row
i the iteration writes (in place: s2s/passes/in_place.py). `d0` is left out when it is the zeros the adjoint
starts from.

Accepts a derivative's IR after the shape pass (s2s/passes/specialize.py, whose facts say the shapes and
dtypes), the parameters' abstract values (without them nothing changes) and the global arrays' facts. Rewrites
only adjoint sums (not the user's own: their rounding stays), `For` loops of step 1, float64 values of known
shapes, an accumulated adjoint the loop reads nowhere else, and a product read by that sum alone. Guarantees the
same value after the loop, up to the order in which floating-point terms are summed. In place; returned.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from s2s.ir import syntax
from s2s import runtime
from s2s.analysis.values import Abstract
from s2s.ir.core import Atom, Block, Const, For, Function, Op, Value, stmt_blocks, stmt_defs, substitute, uses_in, walk
from s2s.passes.optimize import changed
from s2s.passes.specialize import _zeros_like, shape_facts
from s2s.rules import registry
from s2s.passes.sequences import LazyNamer

_F8 = np.dtype(np.float64)


class _Facts:
    """The shapes and dtypes of the function's values: the shape pass's facts, computed again (loops' carried
    values and results included), only for a function that has a product in a reverse loop."""

    def __init__(self, fn: Function, params: list, free: dict | None, defining: dict):
        facts = shape_facts(fn, params, free)
        self.get, self.defining = facts.get, defining

    def shape(self, atom: Atom) -> tuple | None:
        """The shape of a float64 array, None for anything else or unknown (an outer product the shape pass
        wrote has its operands' lengths)."""
        if type(atom) is not Value:
            return None
        found = self.get(atom)
        if found is None:
            made = self.defining.get(id(atom))
            if made is not None and registry.record(made.prim).product == "outer" and len(made.args) == 2 and not made.kwargs:
                u, v = (self.shape(a) for a in made.args)
                return (u[0], v[0]) if u is not None and v is not None and len(u) == len(v) == 1 else None
        if not isinstance(found, Abstract) or found.python or np.dtype(found.dtype) != _F8:
            return None
        return tuple(found.shape)


def uses_and_definitions(fn: Function) -> tuple[dict[int, int], dict[int, Op]]:
    """How many times each value is read, and the operation that makes each (by id: a table of this pass's run)."""
    uses: dict[int, int] = {}
    for atom in uses_in(fn.body):
        if type(atom) is Value:
            uses[id(atom)] = uses.get(id(atom), 0) + 1
    return uses, {id(o): s for s in walk(fn.body) if type(s) is Op for o in s.outs}


def contract_accumulations(fn: Function, params: list | None, free: dict | None = None) -> Function:
    if params is None or not _has_products(fn.body):
        return fn
    uses, defining = uses_and_definitions(fn)
    facts = _Facts(fn, params, free, defining)
    rewrite = _Rewrite(fn, facts, uses, defining)
    rewrite.block(fn.body)
    if rewrite.mapping:
        substitute(fn.body, rewrite.mapping)
        changed(fn)
    return fn


def _has_products(block: Block) -> bool:
    """Whether a loop's body has an outer product or a matrix product at its top (one cheap scan)."""
    for stmt in block.stmts:
        if type(stmt) is Op:
            continue
        if type(stmt) is For and any(
                type(s) is Op and (registry.record(s.prim).product == "outer" or s.prim is syntax.BINARY["@"]) for s in stmt.body.stmts):
            return True
        if any(_has_products(b) for b in stmt_blocks(stmt)):
            return True
    return False


class _Rewrite:
    def __init__(self, fn: Function, facts: _Facts, uses: dict, defining: dict):
        self.fn, self.facts, self.uses, self.defining = fn, facts, uses, defining
        self.namer = LazyNamer(fn)
        self.mapping: dict[int, Atom] = {}

    def block(self, block: Block) -> None:
        k = 0
        while k < len(block.stmts):
            stmt = block.stmts[k]
            if type(stmt) is Op:
                k += 1
                continue
            for inner in stmt_blocks(stmt):
                self.block(inner)
            if type(stmt) is For and stmt.step == Const(1) and any(
                    type(s) is Op and (registry.record(s.prim).product == "outer" or s.prim is syntax.BINARY["@"]) for s in stmt.body.stmts):
                before, after = self.loop(stmt, block)
                k = next(k for k, s in enumerate(block.stmts) if s is stmt)     # (a stack may have become rows)
                block.stmts[k:k + 1] = before + [stmt] + after
                k += len(before)
            k += 1

    def new(self, prim: Any, args: list, hint: str, loop: For, kwargs: dict | None = None) -> Op:
        return Op(prim, args, [self.namer.value(hint)], kwargs or {}, loc=loop.loc)

    def loop(self, loop: For, block: Block) -> tuple[list[Op], list[Op]]:
        """The statements to put before and after loop, which is rewritten."""
        shape = self.facts.shape
        body = loop.body
        local = {id(o): s for s in body.stmts if type(s) is Op for o in s.outs}
        products, sums = [], []         # (j, the sum, the product, what, the stacked operands)
        for j, (c, init, r) in enumerate(zip(loop.carried, loop.inits, body.results)):
            total = local.get(id(r)) if type(r) is Value else None
            if total is None or registry.record(total.prim).algebra != "add" or not total.same_shape or total.kwargs or len(total.args) != 2 \
                    or c not in total.args or self.uses.get(id(c)) != 1 or self.uses.get(id(r)) != 1:
                continue
            term = total.args[1] if total.args[0] is c else total.args[0]
            start = shape(init)
            if type(term) is not Value or term is c or start is None:
                continue
            product = local.get(id(term))
            if product is not None and self.uses.get(id(term)) == 1 and not product.kwargs:
                operands = self.outer(product) or self.gram(product, local)
                if operands is not None and self.result_shape(product, operands) == start:
                    products.append((j, total, product, "outer" if registry.record(product.prim).product == "outer" else "gram",
                                     operands))
                    continue
            if shape(term) == start:
                sums.append((j, total, None, "sum", [term]))
        if not products:
            return [], []
        stacked = {id(a) for _, _, _, _, operands in products for a in operands}
        sums = [s for s in sums if id(s[4][0]) in stacked]
        before: list[Op] = []
        after: list[Op] = []
        rows = self.rows_count(loop, before)
        index = loop.index
        if loop.start != Const(0):
            index_op = self.new(syntax.BINARY["-"], [loop.index, loop.start], "row", loop)
            body.stmts.insert(0, index_op)
            index = index_op.outs[0]
        sources: dict[int, Atom] = {}
        inside = {id(v) for s in walk(body) for v in stmt_defs(s)} | {id(c) for c in loop.carried}
        for _, _, _, _, operands in products:
            for a in operands:
                if id(a) in sources:
                    continue
                sources[id(a)] = self.read_rows(a, loop, inside, after) or \
                    self.stacked_rows(a, loop, index, block) or self.save_rows(a, loop, rows, index, before)
        for j, total, product, what, operands in products + sums:
            first, second = (sources[id(a)] for a in (operands + operands)[:2])
            if what == "outer":         # (a transpose is a view: written where it is read, `G.T @ H`)
                transposed = self.new(getattr, [first, Const("T")], "t", loop)
                contraction = self.new(syntax.BINARY["@"], [transposed.outs[0], second], "t", loop)
                after.extend([transposed, contraction])
            elif what == "gram":
                contraction = self.new(np.tensordot, [first, second], "t", loop,
                                       {"axes": Const(((0, 1), (0, 1)))})
                after.append(contraction)
            else:
                contraction = self.new(np.sum, [first], "t", loop, {"axis": Const(0)})
                after.append(contraction)
            init, out = loop.inits[j], loop.outs[j]
            starts_zero = type(init) is Value and self.uses.get(id(init)) == 1 and \
                _zeros_like(self.defining.get(id(init)))
            if starts_zero:
                contraction.outs[0].hint = out.hint
                result = contraction.outs[0]
            else:
                added = Op(syntax.BINARY["+"], [init, contraction.outs[0]], [self.namer.value(out.hint)], loc=loop.loc,
                           same_shape=True)
                after.append(added)
                result = added.outs[0]
            self.mapping[id(out)] = result
            gone = {id(total), id(product)}
            if what == "gram":          # the transpose, when only the product read it (a view: never dead code)
                transposed = self.defining.get(id(product.args[0]))
                if self.uses.get(id(product.args[0])) == 1:
                    gone.add(id(transposed))
            body.stmts = [s for s in body.stmts if id(s) not in gone]
        gone = {j for j, *_ in products + sums}
        keep = [j for j in range(len(loop.carried)) if j not in gone]
        loop.inits = [loop.inits[j] for j in keep]
        loop.carried = [loop.carried[j] for j in keep]
        loop.outs = [loop.outs[j] for j in keep]
        body.results = [body.results[j] for j in keep]
        return before, after

    # ------------------------------------------------------------ the products

    def outer(self, op: Op) -> list[Value] | None:
        """np.outer(u, v) of two float64 vectors: [u, v]."""
        if registry.record(op.prim).product != "outer" or len(op.args) != 2 or not all(type(a) is Value for a in op.args):
            return None
        u, v = op.args
        return [u, v] if len(self.facts.shape(u) or ()) == 1 and len(self.facts.shape(v) or ()) == 1 else None

    def gram(self, op: Op, local: dict) -> list[Value] | None:
        """A.T @ B of two float64 matrices with as many rows: [A, B]."""
        if op.prim is not syntax.BINARY["@"] or len(op.args) != 2 or not all(type(a) is Value for a in op.args):
            return None
        transposed = self.defining.get(id(op.args[0]))
        if transposed is None or transposed.prim is not getattr or transposed.args[1] != Const("T") \
                or type(transposed.args[0]) is not Value:
            return None
        a, b = transposed.args[0], op.args[1]
        sa, sb = self.facts.shape(a), self.facts.shape(b)
        return [a, b] if sa is not None and sb is not None and len(sa) == len(sb) == 2 and sa[0] == sb[0] else None

    def result_shape(self, op: Op, operands: list[Value]) -> tuple | None:
        sa, sb = (self.facts.shape(a) for a in operands)
        return (sa[0], sb[0]) if registry.record(op.prim).product == "outer" else (sa[1], sb[1])

    # ------------------------------------------------------------ the rows

    def rows_count(self, loop: For, before: list[Op]) -> Atom:
        """The number of iterations, computed before the loop."""
        if loop.start == Const(0):
            return loop.stop
        difference = self.new(syntax.BINARY["-"], [loop.stop, loop.start], "n", loop)
        count = self.new(max, [difference.outs[0], Const(0)], "n", loop)
        before.extend([difference, count])
        return count.outs[0]

    def read_rows(self, a: Value, loop: For, inside: set[int], after: list[Op]) -> Atom | None:
        """X[start:stop] when a is X[i] of an array X from outside the loop (its rows are a's values): a value
        the loop reads and does not define is visible where the loop is."""
        op = self.defining.get(id(a))
        if op is None or op.prim is not syntax.SUBSCRIPT or op.kwargs or len(op.args) != 2 \
                or op.args[1] is not loop.index or type(op.args[0]) is not Value or id(op.args[0]) in inside:
            return None
        whole = self.facts.shape(op.args[0])
        if whole is None or whole[1:] != self.facts.shape(a):
            return None
        if loop.start == Const(0) and self.length_of(loop.stop, op.args[0]):
            return op.args[0]       # `for x in xs`, `for t in range(X.shape[0])`: every row of X
        bounds = self.new(slice, [loop.start, loop.stop, Const(None)], "", loop)
        rows = self.new(syntax.SUBSCRIPT, [op.args[0], bounds.outs[0]], (op.args[0].hint or "x") + "_rows", loop)
        after.extend([bounds, rows])
        return rows.outs[0]

    def length_of(self, atom: Atom, array: Value) -> bool:
        """Whether atom is `len(array)` or `array.shape[0]` (np.shape(array)[0])."""
        made = self.defining.get(id(atom)) if type(atom) is Value else None
        if made is None or made.kwargs:
            return False
        if made.prim is len:
            return made.args == [array]
        if made.prim is syntax.SUBSCRIPT and made.args[1] == Const(0) and type(made.args[0]) is Value:
            shape = self.defining.get(id(made.args[0]))
            return shape is not None and registry.record(shape.prim).size_rule == "shape" and shape.args == [array] and not shape.kwargs
        return False

    def stacked_rows(self, a: Value, loop: For, index: Atom, block: Block) -> Atom | None:
        """The rows of a value the loop pops from a stack, when that stack was pushed once per iteration of the
        loop this one reverses (the same range, the other way, earlier in the same block), and read by nothing
        else: the forward loop writes its row i instead (`h_rows[i] = h`), the reverse reads it back
        (`h = h_rows[i]`), and the rows serve the contraction as they are: nothing saved twice."""
        pop = self.defining.get(id(a))
        if pop is None or pop.prim is not runtime.pop or not any(s is pop for s in loop.body.stmts):
            return None
        stack = pop.args[0]
        if type(stack) is not Value or self.uses.get(id(stack)) != 2:        # one push, one pop
            return None
        shape = self.facts.shape(a)
        position = next(k for k, s in enumerate(block.stmts) if s is loop)
        for k, forward in enumerate(block.stmts[:position]):
            if type(forward) is not For:
                continue
            push = next((s for s in forward.body.stmts if type(s) is Op and s.prim is runtime.push
                         and s.args[0] is stack), None)
            if push is None:
                continue
            same = all(x is y or isinstance(x, Const) and x == y for x, y in (
                (forward.start, loop.start), (forward.stop, loop.stop), (forward.step, loop.step)))
            made = next((s for s in self.fn.body.stmts if type(s) is Op and s.prim is runtime.stack_new
                         and s.outs[0] is stack), None)
            if not same or forward.reverse == loop.reverse or made is None or self.facts.shape(push.args[1]) != shape:
                return None
            before: list[Op] = []
            rows = self.rows_count(forward, before)
            hint = (a.hint or "v") + "_rows"
            dims = self.new(runtime.make_tuple, [rows, *(Const(n) for n in shape)], "", forward)
            empty = self.new(np.empty, [dims.outs[0]], hint, forward)
            before.extend([dims, empty])
            row = forward.index
            if forward.start != Const(0):
                at = self.new(syntax.BINARY["-"], [forward.index, forward.start], "row", forward)
                forward.body.stmts.insert(0, at)
                row = at.outs[0]
            carried, out = self.namer.value(hint), self.namer.value(hint)
            written = Op(runtime.setitem, [carried, row, push.args[1]], [self.namer.value(hint)], loc=push.loc)
            forward.body.stmts = [written if s is push else s for s in forward.body.stmts]
            forward.inits.append(empty.outs[0])
            forward.carried.append(carried)
            forward.outs.append(out)
            forward.body.results.append(written.outs[0])
            pop.prim, pop.args = syntax.SUBSCRIPT, [out, index]          # `h = h_rows[i]`
            block.stmts[k:k] = before
            self.fn.body.stmts.remove(made)
            return out
        return None

    def save_rows(self, a: Value, loop: For, rows: Atom, index: Atom, before: list[Op]) -> Atom:
        """An array of one row per iteration, allocated before the loop; the iteration writes a into row i."""
        hint = (a.hint or "v") + "_rows"
        dims = self.new(runtime.make_tuple, [rows, *(Const(n) for n in self.facts.shape(a))], "", loop)
        empty = self.new(np.empty, [dims.outs[0]], hint, loop)
        before.extend([dims, empty])
        carried, out = self.namer.value(hint), self.namer.value(hint)
        written = self.new(runtime.setitem, [carried, index, a], hint, loop)
        loop.body.stmts.append(written)
        loop.inits.append(empty.outs[0])
        loop.carried.append(carried)
        loop.outs.append(out)
        loop.body.results.append(written.outs[0])
        return out
