"""Sizes the shapes decide, as constants, before the transform.

A derivative specialized on its arguments' shapes (and on the shapes of the global arrays it reads, checked on entry:
s2s/analysis/global_shapes.py) knows every integer computed from them alone: `len(c)`, `x.ndim`, `c.shape + (1,) *
x.ndim` (s2s/analysis/sizes.py). `fold_sizes(fn, params, free)` puts such constants where the primal code decides
on them, outside loops and in them (the dataflow engine's facts of a loop's body hold at every iteration; a size a
loop changes has none): into comparisons, so that `if len(c) == 1:` is folded by
simplify (the transform differentiates the branch taken only, whose values keep their shapes, where a join of
branches of different shapes has none), and into the bounds of the loops worth unrolling (`_unrolled`: `for i in
range(3, len(c) + 1):` in numpy.polynomial's chebval, whose carried values change shape at the first iteration),
which s2s/passes/unroll.py then unrolls, each copy's values with shapes of their own. Elsewhere `len(x)` stays
`len(x)` (the shape pass knows its value).

This is exact for the same reason the shape pass's rewrites are: the derivative is only run on arguments of the
shapes it was made for (the dispatcher routes on them), and the global arrays whose shapes decided a size are
checked on entry (fn.size_globals, which the shape pass adds to the checks it emits). A value a loop changes is left
as it is.
"""
from __future__ import annotations

from typing import Any

from s2s.analysis.values import Abstract, Items
from s2s.ir import syntax
from s2s.ir.core import Const, For, Function, Op, Value, stmt_blocks, walk
from s2s.passes.optimize import changed, simplify
from s2s.passes.specialize import _Specializer, shape_facts     # the facts of the code as written
from s2s.passes.unroll import unroll


def _known(value: Any) -> bool:
    return type(value) is int or type(value) is tuple and all(type(n) is int for n in value)


def fold_sizes(fn: Function, params: list, free: dict | None = None) -> Function:
    """fn with the integers (and tuples of them) its parameters' and globals' shapes decide replaced by constants
    (in place; returned): outside loops and in them (a size known there is the same at every iteration: the
    engine's facts). fn.size_globals: the global reads whose shapes were read (checked on entry); fn.unroll_ranges: the
    loops worth unrolling once their bounds are constants (`_unrolled`)."""
    if all(type(st) is Op for st in fn.body.stmts):
        return fn                           # straight-line code: nothing is decided on a size
    s = shape_facts(fn, params, free)
    unroll_ranges = set()

    def size(atom: Any) -> Any:
        value = s.sizes.facts.get(atom) if type(atom) is Value else None
        return Const(value) if _known(value) else atom

    def block(b: Any) -> None:
        for st in b.stmts:
            if type(st) is Op:              # a comparison of sizes: decided (`len(c) == 1`)
                if st.prim in _COMPARISONS and not st.kwargs:
                    args = [size(a) for a in st.args]
                    if all(type(a) is Const for a in args) and any(a is not b for a, b in zip(args, st.args)):
                        st.args = args
                        folded.append(st)
                continue
            if isinstance(st, For) and _unrolled(st, s):
                bounds = [size(st.start), size(st.stop), size(st.step)]
                if all(type(a) is Const for a in bounds):
                    st.start, st.stop, st.step = bounds
                    unroll_ranges.add(id(st))
                    folded.append(st)
            for inner in stmt_blocks(st):       # (the engine's facts of a loop: every iteration's)
                block(inner)
    folded: list = []
    block(fn.body)
    del block                   # (a recursive closure is a cycle: let go of it now, not by the collector)
    fn.unroll_ranges = unroll_ranges        # type: ignore[attr-defined]
    if folded:
        fn.size_globals = {**getattr(fn, "size_globals", {}), **s.free_read}     # type: ignore[attr-defined]
        changed(fn)
    s.sizes = s.containers = None       # (they hold s: a cycle)
    return fn


_COMPARISONS = frozenset(v for k, v in syntax.COMPARE.items() if k not in ("is", "is not"))    # (identity of ints: left)


def _unrolled(loop: For, s: _Specializer) -> bool:
    """Whether a loop is worth unrolling when its bounds are known: it carries a tuple or list (a comprehension
    building one: each copy's has a length of its own), it carries a value whose shape or dtype changes from one
    iteration to the next (`c0 = c[-i] - c1` of shape (1,), then (3,)), or it reads a tuple's or list's items by its
    index (each copy's item has a kind and shape of its own). A loop over an array's elements, whose values keep
    their shapes, stays a loop (s2s/transforms/elements.py and the loop passes make it cheap)."""
    if id(loop) in s.unsettled:
        return True
    first = s.first_results.get(id(loop), ())
    for init, after in zip(loop.inits, first):
        start = s.full(init)
        if isinstance(start, Items) or type(start) is Abstract and type(after) is Abstract and after != start:
            return True
    return any(type(st) is Op and st.prim is syntax.SUBSCRIPT and len(st.args) == 2 and st.args[1] is loop.index
               and isinstance(s.full(st.args[0]), Items) for st in loop.body.stmts)


def _loops(fn: Function) -> set[int]:
    return {id(st) for st in walk(fn.body) if isinstance(st, For)}


def unroll_known(fn: Function, kinds: list, params: list | None, free: dict | None) -> Function:
    """fn with the sizes its shapes decide folded (params: the parameters' abstract values, None when the
    derivative is not specialized on them) and the loops of a known number of iterations unrolled: again while a
    loop is unrolled, since the loops it held have their bounds known then (`for _ in range(2): ... range(1,
    len(v) - 1)`)."""
    for _ in range(4):
        before = _loops(fn)
        if params is not None:
            fn = simplify(fold_sizes(fn, list(params), free))
        fn = unroll(fn, kinds)
        after = _loops(fn)
        if not after or before <= after:        # none left, or none unrolled
            break
    return fn
