"""The shapes, sizes and global arrays' shapes as a domain of the dataflow engine (s2s/analysis/dataflow.py, issue 30
item 2): s2s/passes/specialize.py's `shape_facts` solves them with `solve` (the facts of the code as written, which
the passes after it read), and `specialize` solves them the same way, of the helpers as they will be, before its
one rewrite walk. Facts through If, While and For, loop-carried shapes widened (however many sweeps that takes),
the integers shapes decide (sizes) and a global array's shape."""
import numpy as np

from s2s.analysis import global_shapes
from s2s.analysis.values import Abstract, abstract_of
from s2s.driver.primal import lowered
from s2s.ir.core import For, If, Op, While, walk
from s2s.passes.specialize import shape_facts

X = np.array([0.5, -1.0, 2.0])
F8 = np.dtype(np.float64)


def facts_of(f, *args, free=None):
    fn = lowered(f)
    return fn, shape_facts(fn, [abstract_of(a) for a in args], free)


def outs(fn, kind):
    """hint -> out value of the first statement of that kind (an If, a For, a While), and that statement."""
    stmt = next(s for s in walk(fn.body) if isinstance(s, kind))
    return {o.hint: o for o in stmt.outs}, stmt


def made(fn, name):
    """The value a call of the NumPy function `name` makes (the first)."""
    return next(s.outs[0] for s in walk(fn.body) if isinstance(s, Op) and getattr(s.prim, "__name__", "") == name)


def branches(x, flag):
    if flag > 0.0:
        y = x * 2.0
        z = x[:2]
        w = x
    else:
        y = x + 1.0
        z = x[1:]
        w = x[:1]
    return np.sum(y) + np.sum(z) + np.sum(w)


def test_an_ifs_results_have_the_shape_both_branches_agree_on():
    fn, s = facts_of(branches, X, 1.0)
    found, _ = outs(fn, If)
    assert s.get(found["y"]) == Abstract((3,), F8)
    assert s.get(found["z"]) == Abstract((2,), F8)          # two slices of one length
    assert s.get(found["w"]) is None                        # (3,) on one side, (1,) on the other


def looped(x, n):
    a = np.zeros(3)
    b = x
    m = len(x)
    c = np.ones(m)                  # a size the shapes decide: (3,)
    total = 0.0
    for i in range(n):
        a = a + x
        b = b[1:]                   # shorter each iteration: no shape
        k = 0
        while k < 2:
            a = a * 2.0
            k = k + 1
        q = np.ones(len(b))         # len(b) changes with b: no size, no shape
        total = total + np.sum(q)
    d = b * 2.0
    e = a + c
    return np.sum(d) + np.sum(e) + total


def test_a_loops_carried_shapes_are_kept_when_they_stay_and_dropped_when_they_change():
    fn, s = facts_of(looped, X, 4)
    found, loop = outs(fn, For)
    carried = {c.hint: s.get(c) for c in loop.carried}
    assert carried["a"] == Abstract((3,), F8) and carried["b"] is None
    assert s.get(found["a"]) == Abstract((3,), F8) and s.get(found["b"]) is None
    assert s.get(loop.index) == Abstract((), int)
    inner, test = outs(fn, While)
    assert s.get(inner["a"]) == Abstract((3,), F8) and s.get(inner["k"]) == Abstract((), int)
    ones = [st.outs[0] for st in walk(fn.body) if isinstance(st, Op) and getattr(st.prim, "__name__", "") == "ones"]
    assert s.get(ones[0]) == Abstract((3,), F8)              # np.ones(len(x)): the size 3
    assert s.get(ones[1]) is None                           # np.ones(len(b)) of a b the loop shortens
    after = {st.outs[0].hint: s.get(st.outs[0]) for st in fn.body.stmts if isinstance(st, Op) and st.outs}
    assert after["d"] is None and after["e"] == Abstract((3,), F8)


def chain(x, n):
    a = x
    b = x
    c = x
    d = x
    e = x
    for i in range(n):
        a = b
        b = c
        c = d
        d = e
        e = e[1:]               # e changes; d on the next sweep, c on the one after, ..., a on the fifth
    return np.sum(a)


def steady(x, n):
    a = x
    b = x
    for i in range(n):
        a = b
        b = b * 2.0
    return np.sum(a)


def test_a_change_is_carried_along_a_chain_however_many_sweeps_it_takes():
    fn, s = facts_of(chain, X, 4)
    found, loop = outs(fn, For)
    assert [s.get(c) for c in loop.carried if c.hint in "abcde"] == [None] * 5
    assert s.get(found["a"]) is None
    fn, s = facts_of(steady, X, 4)
    found, loop = outs(fn, For)
    assert s.get(found["a"]) == s.get(found["b"]) == Abstract((3,), F8)


G = np.arange(8.0).reshape(4, 2)


def reads_global(x):
    y = G @ x
    return np.sum(y)


def test_a_global_arrays_shape_is_known_like_an_arguments():
    fn = lowered(reads_global)
    free = global_shapes.facts(fn)
    _, s = facts_of(reads_global, np.ones(2), free=free)
    y = made(fn, "matmul")
    assert s.get(y) == Abstract((4,), F8)
    _, s = facts_of(reads_global, np.ones(2))           # without the global's facts: not known
    assert s.get(y) is None
