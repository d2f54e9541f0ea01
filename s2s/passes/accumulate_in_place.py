"""An adjoint accumulated across a loop, added into in place when the array is the adjoint's own.

The reverse sweep sums a weight's adjoint over the iterations: `dW = dW + g`, a new array each time. When the sum
starts from zeros made for it (`dW = np.zeros_like(W)`, read by nothing else) and each iteration hands its result
to the next and to nothing else, the array is the adjoint's own from start to end: `dW += g` writes into it, and
NumPy allocates nothing per iteration. `accumulate_in_place(fn)` marks such sums `in_place` (the emitter writes
`dW += g` and gives the carried value, its update and its start one name).

Accepts a derivative's IR after the shape pass (its facts, `fn.arrays`, say the accumulated array is float64 and
at least specialize.SMALL elements: smaller arrays are cheap to allocate and written as expressions); guarantees
the same values (each sum's result has the array's shape: the transform marks its adjoint sums `same_shape`, or
the facts say so). In place; returned.
"""
from __future__ import annotations


import numpy as np

from s2s.ir import syntax
from s2s import runtime
from s2s.ir.core import Block, For, Function, Op, Value, While, stmt_blocks, uses_in
from s2s.passes.optimize import changed
from s2s.passes.specialize import SMALL
from s2s.rules import registry



def accumulate_in_place(fn: Function) -> Function:
    arrays = getattr(fn, "arrays", None)
    if not arrays or not _has_loop(fn.body):
        return fn
    uses: dict[int, int] = {}
    for atom in uses_in(fn.body):
        if type(atom) is Value:
            uses[id(atom)] = uses.get(id(atom), 0) + 1
    zeros: dict[int, Op] = {}
    marked = []

    def big_float_array(v: Value) -> bool:
        found = arrays.get(id(v))
        if found is None or found[2] is not v or isinstance(found[1], type):
            return False
        return np.dtype(found[1]) == np.float64 and int(np.prod(found[0])) >= SMALL

    def block(b: Block) -> None:
        for stmt in b.stmts:
            if type(stmt) is Op:
                if registry.record(stmt.prim).zeros is not None and len(stmt.outs) == 1:
                    zeros[id(stmt.outs[0])] = stmt
                continue
            for inner in stmt_blocks(stmt):
                block(inner)
            if isinstance(stmt, (For, While)):
                loop(stmt)

    def sum_of(v: Value, local: dict, shape: tuple) -> Op | None:
        """The sum defining v, when its result has the accumulated array's shape (an adjoint sum the transform
        marks so, or one whose facts say so: a broadcast term is added into the array as into a new one)."""
        total = local.get(id(v))
        if total is None or registry.record(total.prim).algebra != "add" or total.kwargs or total.in_place is not None \
                or len(total.args) != 2:
            return None
        found = arrays.get(id(v))
        return total if total.same_shape or found is not None and found[2] is v and tuple(found[0]) == shape \
            and not isinstance(found[1], type) and np.dtype(found[1]) == np.float64 else None

    def loop(stmt: For | While) -> None:
        local = {id(s.outs[0]): s for s in stmt.body.stmts if type(s) is Op and len(s.outs) == 1}
        for c, init, r in zip(stmt.carried, stmt.inits, stmt.body.results):
            if type(r) is not Value or type(init) is not Value or id(init) not in zeros or uses.get(id(init)) != 1 \
                    or uses.get(id(c)) != 1 or uses.get(id(r)) != 1 or not big_float_array(init):
                continue
            # the sums from the carried value to the iteration's result: `dW = dW + a; dW = dW + b`, each read
            # by the next alone
            shape = tuple(arrays[id(init)][0])
            chain, v = [], r
            while v is not c:
                total = sum_of(v, local, shape)
                if total is None or uses.get(id(v)) != 1:
                    chain = []
                    break
                k = next((k for k, a in enumerate(total.args) if type(a) is Value and sum_of(a, local, shape)
                          is not None), None) if c not in total.args else total.args.index(c)
                if k is None:
                    chain = []
                    break
                chain.append((total, k))
                v = total.args[k]
            for total, k in chain:
                total.in_place = k
                marked.append(total)

    block(fn.body)
    if marked:
        changed(fn)
    return fn


def _has_loop(block: Block) -> bool:
    return any(type(s) is not Op for s in block.stmts)
