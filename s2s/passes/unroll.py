"""Loops over fixed-length containers, unrolled before the transform.

A derivative is specialized on the structure of its container arguments (a list of three (W, b) pairs is a
`("list", (("tuple", ("array", "array")),) * 3)` kind), so `for W, b in params:` over such a list, or
`for a in (x, y):` over a tuple literal, runs a number of times known when the derivative is made.
`unroll(fn, param_kinds)` writes such a loop as that many copies of its body, each reading its item at a
constant index (`params[1]`): every copy then has shapes of its own (s2s/passes/specialize.py knows them), and the
reverse sweep is straight-line code without stacks, scatters or container helpers.

A loop is unrolled when it is `for i in range(0, len(seq), 1)` (how lowering spells `for item in seq`), seq's
kind is a tuple or list of a known number of items, at most MAX_ITEMS, or when its bounds are constants (`for _ in
range(2)`, or bounds known from shapes: s2s/passes/known_sizes.py) and it runs at most MAX_ITEMS times; and the
copies stay under MAX_OPS operations. Anything else is left as it is.
"""
from __future__ import annotations

from typing import Any

from s2s.ir.core import Block, Const, For, Function, Op, Value, clone_block, stmt_blocks, substitute, walk
from s2s.passes.sequences import LazyNamer, kinds_of

MAX_ITEMS = 16
MAX_OPS = 2000


def _bounds(loop: For) -> range | None:
    """The loop's range when its bounds are constants (`range(3, 5)`, or bounds s2s/passes/known_sizes.py made
    constants from shapes), else None."""
    bounds = [loop.start, loop.stop, loop.step]
    if loop.reverse or not all(type(b) is Const and type(b.value) is int for b in bounds) or loop.step.value == 0:
        return None
    return range(*(b.value for b in bounds))


def _length(loop: For, kinds: dict, defining: dict, ranges: Any = ()) -> int | None:
    if loop.reverse or loop.start != Const(0) or loop.step != Const(1) or not isinstance(loop.stop, Value):
        found = _bounds(loop) if id(loop) in ranges else None
        return len(found) if found is not None and len(found) <= MAX_ITEMS else None
    op = defining.get(id(loop.stop))
    if op is None or op.prim is not len or len(op.args) != 1 or op.kwargs:
        return None
    seq = op.args[0]
    kind = kinds.get(id(seq)) if isinstance(seq, Value) else None
    if not (isinstance(kind, tuple) and kind[0] in ("tuple", "list") and isinstance(kind[1], tuple)):
        return None
    return len(kind[1]) if len(kind[1]) <= MAX_ITEMS else None


def _size(block: Block) -> int:
    return sum(1 for _ in walk(block))


def _unroll_block(block: Block, kinds: dict, defining: dict, namer: LazyNamer, mapping: dict, ranges: Any = ()) -> bool:
    changed = False
    stmts = []
    for stmt in block.stmts:
        n = _length(stmt, kinds, defining, ranges) if isinstance(stmt, For) else None
        if n is None or n * _size(stmt.body) > MAX_OPS:
            stmts.append(stmt)
            for inner in stmt_blocks(stmt):
                changed |= _unroll_block(inner, kinds, defining, namer, mapping, ranges)
            continue
        current = list(stmt.inits)
        for k in range(n):
            local = {id(c): a for c, a in zip(stmt.carried, current)}
            local[id(stmt.index)] = Const(k if type(stmt.start) is not Const else stmt.start.value + k * stmt.step.value)
            copy = clone_block(stmt.body, local, lambda v: namer.value(v.hint))
            stmts.extend(copy.stmts)
            current = list(copy.results)
        for out, a in zip(stmt.outs, current):
            mapping[id(out)] = a
        mapping.setdefault("unrolled", []).append(stmt)    # kept alive: its values' ids key mapping
        changed = True
    block.stmts = stmts
    return changed


def unroll(fn: Function, param_kinds: list) -> Function:
    """fn with its loops over containers of known length unrolled (in place; returned)."""
    namer = LazyNamer(fn)
    for _ in range(4):                  # an unrolled loop may hold one over its item (a tuple of known length)
        if not any(isinstance(st, For) for st in walk(fn.body)):
            break                       # no loop at all
        kinds = kinds_of(fn, param_kinds)
        defining = {id(o): st for st in walk(fn.body) if isinstance(st, Op) for o in st.outs}
        mapping: dict = {}
        if not _unroll_block(fn.body, kinds, defining, namer, mapping, getattr(fn, "unroll_ranges", ())):
            break
        unrolled = mapping.pop("unrolled", [])      # the loops replaced: alive until their outs are substituted
        while True:                     # an out may map to another unrolled loop's out
            resolved = {k: mapping.get(id(v), v) if isinstance(v, Value) else v for k, v in mapping.items()}
            if resolved == mapping:
                break
            mapping = resolved
        substitute(fn.body, mapping)
        del unrolled
    return fn
