"""The cost of making a derivative grows linearly with the function's size.

No timing here (the machines are shared): the tests count work. A straight-line function in which each line
uses the one before (`a{i} = math.sin(a{i-1}) * c + y * a{i-1}`, what code printers and unrolling produce) is
transformed at two sizes, four times apart, under cProfile, and every Python function of the transform must be
called about four times as often at the larger size (a pairwise comparison, a walk of the whole function per
statement, or a chain that grows with the function shows up as a ratio near 16 or more). The interference test
of the emitter's name assignment is checked against the pairwise definition it replaces, and counted.
"""
from __future__ import annotations

import contextlib
import cProfile
import gc
import linecache
import math
import pstats
import random

import pytest

import s2s
from s2s.compile import collection_paused
from s2s.emit import _Groups, _Segments
from s2s.ir import Value


def chain(lines: int) -> str:
    """benchmarks/run.py's chain(n): n lines of source."""
    return "def model(c, y):\n    a0 = c * y\n" + "".join(
        f"    a{i} = math.sin(a{i - 1}) * c + y * a{i - 1}\n" for i in range(1, lines - 2)) + \
        f"    return a{lines - 3}\n"


def _function(lines: int, tag: str):
    text = chain(lines)
    filename = f"<transform-cost-{tag}-{lines}>"
    linecache.cache[filename] = (len(text), None, text.splitlines(True), filename)
    scope = {"math": math}
    exec(compile(text, filename, "exec"), scope)
    return scope["model"]


def _calls(lines: int, tag: str) -> dict:
    """Calls per function during grad's first call on chain(lines), checked against central differences."""
    model = _function(lines, tag)
    profile = cProfile.Profile()
    profile.enable()
    dc, dy = s2s.grad(model, wrt=(0, 1))(0.3, 0.7)
    profile.disable()
    eps = 1e-6
    for got, args in ((dc, ((0.3 + eps, 0.7), (0.3 - eps, 0.7))), (dy, ((0.3, 0.7 + eps), (0.3, 0.7 - eps)))):
        numeric = (model(*args[0]) - model(*args[1])) / (2 * eps)
        assert got == pytest.approx(numeric, rel=1e-5, abs=1e-7)
    return {key: row[1] for key, row in pstats.Stats(profile).stats.items()}   # key -> calls (recursive too)


def _ratios(small: int, tag: str) -> tuple[float, list]:
    _calls(12, tag + "-warm")            # rules, registries and caches loaded once: not part of the growth
    few, many = _calls(small, tag), _calls(4 * small, tag)
    total = sum(many.values()) / sum(few.values())
    worst = sorted(((calls / few.get(key, 1), f"{key[0]}:{key[1]} {key[2]}", few.get(key, 0), calls)
                    for key, calls in many.items() if calls >= 1000), reverse=True)
    return total, worst


@pytest.fixture
def user_path(monkeypatch):
    """The path a user's first call takes: no verifier after every pass, no checking mode."""
    monkeypatch.delenv("S2S_VERIFY", raising=False)
    monkeypatch.delenv("S2S_CHECK", raising=False)


def test_every_stage_does_work_linear_in_the_function_size(user_path):
    total, worst = _ratios(40, "default")
    assert total < 4.6, total
    assert worst[0][0] < 5.2, worst[:5]          # 4 lines for each line: about 4 times the calls


@pytest.mark.slow
def test_work_stays_linear_at_800_lines(user_path):
    total, worst = _ratios(200, "slow")
    assert total < 4.5, total
    assert worst[0][0] < 5.0, worst[:5]


# ---------------------------------------------------------------- interference, not pairwise

def _pairwise(a: list, b: list) -> bool:
    """The definition: two segments conflict when they start at one point or each starts before the other ends."""
    return any(da == db or (da < lb and db < la) for da, la in a for db, lb in b)


def test_segments_conflict_exactly_when_some_pair_does():
    rng = random.Random(7)
    for _ in range(3000):
        a = [(d, d + rng.randrange(0, 6)) for d in rng.sample(range(40), rng.randrange(1, 5))]
        b = [(d, d + rng.randrange(0, 6)) for d in rng.sample(range(40), rng.randrange(1, 5))]
        assert _Segments(a).conflict(_Segments(b)) == _pairwise(a, b), (a, b)
        merged = _Segments(a)
        merged.add(_Segments(b))               # inserted one by one: the same as built at once
        assert sorted(merged.spans()) == _Segments(a + b).spans()
        assert merged.starts == sorted(merged.starts)
        assert merged.reach == [max(merged.ends[:k + 1]) for k in range(len(merged.ends))]
        probe = [(d, d + rng.randrange(0, 6)) for d in rng.sample(range(40), 2)]
        assert merged.conflict(_Segments(probe)) == _pairwise(a + b, probe)


def test_a_long_accumulation_shares_one_name_with_work_linear_in_its_length(monkeypatch):
    """`acc += term` n times: n values merged into one group, each merge one binary search."""
    hits = []
    original = _Segments.hit
    monkeypatch.setattr(_Segments, "hit", lambda self, d, last: hits.append(1) or original(self, d, last))
    n = 4000
    values = [Value(f"acc.{k}", "acc") for k in range(n)]
    groups = _Groups({id(v): [(2 * k, 2 * k + 2)] for k, v in enumerate(values)})    # each read where the next
    for before, after in zip(values, values[1:]):                                      # is written: no conflict
        assert groups.merge(after, before)
    assert len(hits) == n - 1

    def depth(v: int) -> int:                  # hops to the root, without find's path halving
        hops = 0
        while groups.parent.get(v, v) != v:
            v, hops = groups.parent[v], hops + 1
        return hops
    assert max(depth(id(v)) for v in values) <= math.log2(n) + 1      # union by size: no long chains
    assert len({groups.find(id(v)) for v in values}) == 1
    stranger = Value("other", "acc")
    groups.segments[id(stranger)] = _Segments([(5, 9)])      # alive while acc is: never the same name
    assert not groups.merge(stranger, values[0])


# ---------------------------------------------------------------- the collector

def test_the_collector_is_paused_while_a_derivative_is_made_and_on_after(monkeypatch, user_path):
    collections = []

    def count(phase: str, info: dict) -> None:
        if phase == "start":
            collections.append(info["generation"])

    assert gc.isenabled()
    with collection_paused():
        with collection_paused():              # nested: the inner one leaves it as it found it
            assert not gc.isenabled()
        assert not gc.isenabled()
    assert gc.isenabled()
    gc.disable()
    try:
        with collection_paused():
            pass
        assert not gc.isenabled()               # off before: still off
    finally:
        gc.enable()
    s2s.grad(_function(12, "gc-warm"), wrt=(0, 1))(0.3, 0.7)
    gc.callbacks.append(count)
    try:
        s2s.grad(_function(150, "gc-paused"), wrt=(0, 1))(0.3, 0.7)
        paused = len(collections)
        assert gc.isenabled()
        collections.clear()
        monkeypatch.setattr(s2s.api, "collection_paused", contextlib.nullcontext)
        s2s.grad(_function(150, "gc-running"), wrt=(0, 1))(0.3, 0.7)
        running = len(collections)
    finally:
        gc.callbacks.remove(count)
    assert running > 30 and paused * 5 < running, (paused, running)     # the collector scanned the growing
    # heap hundreds of times while the derivative was made; paused, only what runs around it collects


# ---------------------------------------------------------------- the optimizing passes

def branches(lines: int) -> str:
    """A function of branches, each forwarding a value the simplifier removes (`a * 1.0`): every branch after it
    reads the values forwarded before."""
    return "def model(c, y):\n    a0 = c * y\n" + "".join(
        f"    if y > 0.5:\n        a{i} = math.sin(a{i - 1}) * c\n    else:\n        a{i} = a{i - 1} * 1.0 + c\n"
        for i in range(1, lines // 4)) + f"    return a{lines // 4 - 1}\n"


_PASSES = ("s2s/optimize.py", "s2s/specialize.py", "s2s/shapes.py", "s2s/in_place.py", "s2s/ir.py")


def _pass_calls(source: str, tag: str) -> dict:
    """Calls per function of the optimizing passes' modules during grad's first call, checked against central
    differences at both sides of the branches."""
    filename = f"<transform-cost-{tag}>"
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    scope = {"math": math}
    exec(compile(source, filename, "exec"), scope)
    model = scope["model"]
    profile = cProfile.Profile()
    profile.enable()
    derivative = s2s.grad(model, wrt=(0, 1))
    got = derivative(0.3, 0.7)
    profile.disable()
    eps = 1e-6
    for y in (0.7, 0.2):
        dc, dy = derivative(0.3, y)
        assert dc == pytest.approx((model(0.3 + eps, y) - model(0.3 - eps, y)) / (2 * eps), rel=1e-5, abs=1e-7)
        assert dy == pytest.approx((model(0.3, y + eps) - model(0.3, y - eps)) / (2 * eps), rel=1e-5, abs=1e-7)
    assert got == derivative(0.3, 0.7)
    return {key: row[1] for key, row in pstats.Stats(profile).stats.items() if key[0].endswith(_PASSES)}


def test_the_passes_do_work_linear_in_the_number_of_branches(user_path):
    """The simplifier forwards values into each branch without copying everything it forwarded before (a copy per
    branch was quadratic); dead code, common subexpressions and the shape facts likewise."""
    _pass_calls(branches(12), "branches-warm")
    few, many = _pass_calls(branches(60), "branches-few"), _pass_calls(branches(240), "branches-many")
    worst = sorted(((calls / few.get(key, 1), f"{key[0]}:{key[1]} {key[2]}", few.get(key, 0), calls)
                    for key, calls in many.items() if calls >= 400), reverse=True)
    assert worst and worst[0][0] < 5.2, worst[:5]
    assert sum(many.values()) / sum(few.values()) < 4.6


def test_a_pass_with_nothing_to_do_finds_out_without_redoing_its_work(user_path, monkeypatch):
    """A straight-line function of floats: dead code is looked for once per round of passes (the later calls
    find that no pass changed the function since), and the facts of an operation on numbers are inferred once
    per kind of operation, not once per operation."""
    import s2s.optimize as optimize
    import s2s.shapes as shapes
    scans, inferred = [], []
    real_scan, real_infer = optimize.eliminate_dead_code_in, shapes._elementwise_of
    monkeypatch.setattr(optimize, "eliminate_dead_code_in", lambda *a: scans.append(1) or real_scan(*a))
    monkeypatch.setattr(shapes, "_elementwise_of", lambda *a: inferred.append(1) or real_infer(*a))
    counts = []
    for lines in (40, 160):
        shapes._ELEMENTWISE.clear()
        scans.clear()
        inferred.clear()
        model = _function(lines, "nothing-to-do")
        dc, dy = s2s.grad(model, wrt=(0, 1))(0.3, 0.7)
        assert dc == pytest.approx((model(0.3 + 1e-6, 0.7) - model(0.3 - 1e-6, 0.7)) / 2e-6, rel=1e-5, abs=1e-7)
        counts.append((len(scans), len(inferred)))
    assert counts[0] == counts[1], counts            # the same work whatever the length
    assert counts[0][0] == 2, counts                # one round before the transform, one after
    assert 0 < counts[0][1] <= 6, counts            # c * y, sin, * and + on floats
