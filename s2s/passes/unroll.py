"""Loops over fixed-length containers, unrolled before the transform.

A derivative is specialized on the structure of its container arguments (a list of three (W, b) pairs is a
`("list", (("tuple", ("array", "array")),) * 3)` kind), so `for W, b in params:` over such a list, or
`for a in (x, y):` over a tuple literal, runs a number of times known when the derivative is made.
`unroll(fn, param_kinds)` writes such a loop as that many copies of its body, each reading its item at a
constant index (`params[1]`): every copy then has shapes of its own (s2s/passes/specialize.py knows them), and the
reverse sweep is straight-line code without stacks, scatters or container helpers.

A loop is unrolled when it is `for i in range(0, len(seq), 1)` (how lowering spells `for item in seq`), seq's
kind is a tuple or list of a known number of items, at most MAX_ITEMS, and the copies stay under MAX_OPS
operations. Anything else is left as it is.
"""
from __future__ import annotations

from s2s.ir.core import Block, Const, For, Function, Op, Value, clone_block, stmt_blocks, substitute, walk
from s2s.passes.sequences import LazyNamer, kinds_of

MAX_ITEMS = 16
MAX_OPS = 2000


def _length(loop: For, kinds: dict, defining: dict) -> int | None:
    if loop.reverse or loop.start != Const(0) or loop.step != Const(1) or not isinstance(loop.stop, Value):
        return None
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


def _unroll_block(block: Block, kinds: dict, defining: dict, namer: LazyNamer, mapping: dict) -> bool:
    changed = False
    stmts = []
    for stmt in block.stmts:
        n = _length(stmt, kinds, defining) if isinstance(stmt, For) else None
        if n is None or n * _size(stmt.body) > MAX_OPS:
            stmts.append(stmt)
            for inner in stmt_blocks(stmt):
                changed |= _unroll_block(inner, kinds, defining, namer, mapping)
            continue
        current = list(stmt.inits)
        for k in range(n):
            local = {id(c): a for c, a in zip(stmt.carried, current)}
            local[id(stmt.index)] = Const(k)
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
        if not _unroll_block(fn.body, kinds, defining, namer, mapping):
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
