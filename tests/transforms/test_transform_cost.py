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
import s2s.driver.pipeline
from s2s.driver.compile import collection_paused
from s2s.emit.names import _Groups, _Segments
from s2s.ir.core import Value


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
    """The path a user's first call takes: no verifier after every pass, no checking mode; and, as in a fresh
    process, no derivative the suite's earlier tests made is evicted from the cache or freed while one is measured
    (their eviction and finalizers, counted here, made the counts depend on which tests ran before)."""
    monkeypatch.delenv("S2S_VERIFY", raising=False)
    monkeypatch.delenv("S2S_CHECK", raising=False)
    s2s.clear_cache()
    gc.collect()


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
        monkeypatch.setattr(s2s.driver.pipeline, "collection_paused", contextlib.nullcontext)
        s2s.grad(_function(150, "gc-running"), wrt=(0, 1))(0.3, 0.7)
        running = len(collections)
    finally:
        gc.callbacks.remove(count)
    assert running > 30 and paused * 5 < running, (paused, running)     # the collector scanned the growing
    # heap hundreds of times while the derivative was made; paused, only what runs around it collects


def _left_to_the_collector(text: str, tag: str) -> int:
    """Objects the cyclic collector frees while grad's first call on text runs and right after it (garbage in
    reference cycles): what reference counting could not free."""
    filename = f"<transform-cost-{tag}>"
    linecache.cache[filename] = (len(text), None, text.splitlines(True), filename)
    scope = {"math": math}
    exec(compile(text, filename, "exec"), scope)
    model = scope["model"]
    gc.collect()
    found: list = []

    def count(phase: str, info: dict) -> None:
        if phase == "stop":
            found.append(info["collected"])
    gc.callbacks.append(count)
    try:
        dc, dy = s2s.grad(model, wrt=(0, 1))(0.3, 0.7)
        found.append(gc.collect())
    finally:
        gc.callbacks.remove(count)
    assert dc == pytest.approx((model(0.3 + 1e-6, 0.7) - model(0.3 - 1e-6, 0.7)) / 2e-6, rel=1e-5, abs=1e-7)
    return sum(found)


@pytest.mark.parametrize("make", [chain, "mixed"], ids=["straight line", "loops and branches"])
def test_what_a_derivative_leaves_is_freed_without_the_collector(user_path, make):
    """The passes' helpers that refer back to them (the lowerer and its loop sharing, the specializer and its
    sizes, recursive closures) are let go when the pass ends: the parsed tree and the intermediate IRs are freed by
    reference counting, and the one collection after the collector is turned on again finds a few hundred objects
    whatever the function's size (it found about 90 per line, and scanned them all: 0.25 s of a 3,200-line
    chain's first call)."""
    make = mixed if make == "mixed" else make
    _left_to_the_collector(chain(12), "cycles-warm")
    few, many = (_left_to_the_collector(make(n), f"cycles-{make.__name__}-{n}") for n in (40, 160))
    assert few < 1000 and many - few < 160 - 40, (few, many)       # less than one object per line added


# ---------------------------------------------------------------- emission

def _writes_between(n: int):
    """n expressions computed (half of them read an array), n writes into that array, then each expression
    read once, from one line: every write spoils the pending expressions that read the array (found by an
    index, not by looking at every pending one), and the emitter's work stays linear."""
    import operator

    from s2s import runtime
    from s2s.ir.core import Block, Const, Function, Loc, Op
    loc = Loc("<writes>", 1, 0, "y = ...")
    x, arr = Value("x", "x"), Value("arr", "arr")
    stmts, temps = [], []
    for i in range(n):
        t = Value(f"v{i + 1}", "")
        stmts.append(Op(operator.getitem, [arr, Const(i)], [t], loc=loc) if i % 2 else
                     Op(operator.neg, [x], [t], loc=loc))
        temps.append(t)
    for i in range(n):
        stmts.append(Op(runtime.setitem, [arr, Const(i), x], [], loc=loc))
    total = x
    for t in temps:
        s = Value(f"y.{t.name}", "y")
        stmts.append(Op(operator.add, [total, t], [s], loc=loc))
        total = s
    return Function("f", [x, arr], Block(stmts, [total]))


def _emission_calls(n: int) -> dict:
    from s2s.emit.python import emit_module
    fn = _writes_between(n)
    profile = cProfile.Profile()
    profile.enable()
    source = emit_module(fn).source
    profile.disable()
    # the negations are nested into the sums; the items of arr are read before the writes, as statements
    assert source.count("setitem(arr, ") == n and " + -x + " in source and "t1 = arr[1]\n" in source
    return {key: row[1] for key, row in pstats.Stats(profile).stats.items()}


def test_emission_does_work_linear_in_the_function_size():
    few, many = _emission_calls(300), _emission_calls(1200)
    assert sum(many.values()) / sum(few.values()) < 4.6
    worst = max((calls / few.get(key, 1), key) for key, calls in many.items() if calls >= 1000)
    assert worst[0] < 5.0, worst
    reads = [calls for key, calls in many.items() if key[2] == "reads" and key[0].endswith("nesting.py")]
    assert reads and reads[0] <= 6 * 1200      # what each pending expression reads: found once, not once per write


def test_live_ranges_of_values_read_where_they_are_defined_match_the_general_rule():
    """_LiveRanges keeps only the last read of a value defined once and read in its own scope; the general
    rule (each read a segment from the definition it sees, merged) gives the same segments."""
    import fuzz_programs
    from s2s.analysis.values import kind_of
    from s2s.api import Options, derivative_ir
    from s2s.emit.python import _Emitter
    from s2s.emit.names import _LiveRanges
    from s2s.ir.core import Op

    class General(_LiveRanges):
        def define_once(self, values, at, scopes=None, innermost=-1):
            self.define(values, at, scopes)

        def block(self, block):
            for stmt in block.stmts:
                if isinstance(stmt, Op):
                    if stmt.outs and id(stmt.outs[0]) in self.inlined:
                        continue
                    at = self.tick()
                    self.read(list(stmt.args) + list(stmt.kwargs.values()), at)
                    loop = self.items.get(id(stmt))
                    self.define(stmt.outs, *self.loop_start[loop][:2]) if loop is not None else \
                        self.define(stmt.outs, at)
                else:
                    self.stmt(stmt)

    checked = 0
    for seed in range(40):
        category = fuzz_programs.CATEGORIES[seed % len(fuzz_programs.CATEGORIES)]
        program = fuzz_programs.generate(category, 5000 + seed)
        f = fuzz_programs.define(program.source)
        for mode in ("reverse", "forward"):
            try:
                fn = derivative_ir(f, Options(program.diff, mode=mode), [kind_of(a) for a in program.args])
            except s2s.S2SError:
                continue
            emitter = _Emitter(fn)
            fast = _LiveRanges(emitter.inlined, emitter.items).run(fn)
            general = General(emitter.inlined, emitter.items).run(fn)
            assert fast == general
            checked += 1
    assert checked > 40


# ---------------------------------------------------------------- the transform's own work

def _copies_agree(rule, count: int) -> bool:
    """copy_rule and inline_rule give the same statements, names and results for rule called with count values."""
    from s2s.transforms.rule_inline import inline_rule
    from s2s.ir.core import Block, Function, format_function
    from s2s.ir.naming import Namer
    from s2s.transforms.rule_copies import copy_rule

    args = [Value(f"a{k}", f"a{k}") for k in range(count)]
    texts = []
    for copy in (inline_rule, copy_rule):
        namer = Namer()
        namer.reserve("v1")                    # a name taken: both skip it
        try:
            stmts, results = copy(rule, args, {}, namer, None)
        except s2s.S2SError as error:
            texts.append(f"refused: {error.message}")
            continue
        kept = [r for r in results if r is not None]
        texts.append(format_function(Function("f", args, Block(stmts, kept))) +
                     repr([r is None for r in results]))
    return texts[0] == texts[1]


def test_a_rule_copied_by_plan_is_the_rule_inlined():
    """Every rule s2s has, copied the fast way (rule_copies.py), reads exactly as inline_rule's copy: the same
    primitives, names (asked of the namer in the same order), results and Nones; and with too few arguments
    both refuse alike."""
    import inspect
    from s2s.rules import registry
    from s2s.transforms.rule_copies import _PLANS
    registry.find_adjoint(abs)
    rules = {rule for table in (registry._ADJOINTS, registry._TANGENTS) for rule in table.values()}
    planned = 0
    for rule in sorted(rules, key=lambda r: (r.__module__, r.__qualname__)):
        try:
            params = inspect.signature(rule).parameters.values()
        except (TypeError, ValueError):
            continue
        required = sum(p.default is inspect.Parameter.empty for p in params)
        for count in {required, len(params), max(required - 1, 0)}:
            assert _copies_agree(rule, count), (rule, count)
        planned += _PLANS.get(rule) is not None
    assert planned > 100, planned                  # most rules are straight-line: copied by plan


def _forward_calls(lines: int, tag: str) -> dict:
    """Calls per function during the first call of grad along one float (forward mode, mode="auto")."""
    model = _function(lines, tag)
    profile = cProfile.Profile()
    profile.enable()
    dc = s2s.grad(model, wrt=0)(0.3, 0.7)
    profile.disable()
    eps = 1e-6
    assert dc == pytest.approx((model(0.3 + eps, 0.7) - model(0.3 - eps, 0.7)) / (2 * eps), rel=1e-5, abs=1e-7)
    return {key: row[1] for key, row in pstats.Stats(profile).stats.items()}


def _by_name(calls: dict, file: str, function: str) -> int:
    return sum(n for (path, _, name), n in calls.items() if path.endswith(file) and name == function)


def test_forward_mode_does_work_linear_in_the_function_size(user_path):
    """Along one float, mode="auto" takes forward mode: its transform grows as reverse mode's does."""
    _forward_calls(12, "fwd-warm")
    few, many = _forward_calls(40, "fwd"), _forward_calls(160, "fwd")
    assert _by_name(few, "forward.py", "forward_function") == 1          # the mode the test is about
    total = sum(many.values()) / sum(few.values())
    worst = max((calls / few.get(key, 1), key) for key, calls in many.items() if calls >= 1000)
    assert total < 4.6, total
    assert worst[0] < 5.2, worst


@pytest.mark.parametrize("mode", ["reverse", "forward"])
def test_the_transform_finds_a_rules_dead_statements_once(user_path, mode):
    """The dead statements of a rule's copy are found once per rule and differentiated arguments (reverse.py's
    rule_dead_code), not once per operation: dead-code elimination runs as often at 160 lines as at 40."""
    calls = _forward_calls if mode == "forward" else _calls
    calls(12, f"dce-warm-{mode}")
    few, many = calls(40, f"dce-{mode}"), calls(160, f"dce-{mode}")
    assert _by_name(few, "optimize.py", "eliminate_dead_code_in") == \
        _by_name(many, "optimize.py", "eliminate_dead_code_in") <= 12
    assert _by_name(many, "common.py", "rule_dead_code") > 300       # every operation's rule: by position


def test_the_analyses_sweep_straight_line_code_once(user_path, monkeypatch):
    """Activity marks each value where it is defined (backwards: after its reads): one sweep each way for code
    without loops; the complex-value analysis finds in one sweep that nothing can be complex and runs no fixed
    point; with a loop, activity sweeps again until nothing changes, and a complex argument runs the analysis."""
    from s2s.analysis import dataflow
    from s2s.analysis import complex_values
    sweeps, transfers = [], []

    def counted(step):
        n = 0
        while step():
            n += 1
        sweeps.append(n + 1)
    original = complex_values._Bits.op          # the complex-value domain's transfer (s2s/analysis/dataflow.py)
    monkeypatch.setattr(dataflow, "fixpoint", counted)
    monkeypatch.setattr(complex_values._Bits, "op", lambda self, op: transfers.append(1) or original(self, op))
    s2s.grad(_function(200, "sweeps"), wrt=(0, 1))(0.3, 0.7)
    assert sweeps and set(sweeps) == {1} and not transfers, (sweeps, len(transfers))   # each analysis: one sweep

    looped = _source("""
        def f(x, n):
            s = 0.0
            for i in range(n):
                s = s + x * i
                x = math.sin(x)
            return s
    """)
    sweeps.clear()
    h = 1e-6
    assert s2s.grad(looped, mode="reverse")(0.5, 4) == pytest.approx(
        (looped(0.5 + h, 4) - looped(0.5 - h, 4)) / (2 * h), rel=1e-6)
    assert sweeps and max(sweeps) >= 2, sweeps         # the loop's update reaches back: swept again

    squared = _source("""
        def g(z):
            return np.real(z * np.conj(z))
    """)
    transfers.clear()
    assert s2s.grad(squared)(1.0 + 2.0j) == pytest.approx(2 - 4j)     # df/dx - i df/dy of x^2 + y^2
    assert transfers                                   # a complex argument: the analysis ran


def _source(text: str):
    import textwrap
    import numpy as np
    text = textwrap.dedent(text)
    filename = f"<transform-cost-{abs(hash(text))}>"
    linecache.cache[filename] = (len(text), None, text.splitlines(True), filename)
    scope = {"math": math, "np": np}
    exec(compile(text, filename, "exec"), scope)
    return scope[text.split("def ", 1)[1].split("(", 1)[0]]


# ---------------------------------------------------------------- the optimizing passes

def branches(lines: int) -> str:
    """A function of branches, each forwarding a value the simplifier removes (`a * 1.0`): every branch after it
    reads the values forwarded before."""
    return "def model(c, y):\n    a0 = c * y\n" + "".join(
        f"    if y > 0.5:\n        a{i} = math.sin(a{i - 1}) * c\n    else:\n        a{i} = a{i - 1} * 1.0 + c\n"
        for i in range(1, lines // 4)) + f"    return a{lines // 4 - 1}\n"


_PASSES = ("s2s/passes/optimize.py", "s2s/passes/specialize.py", "s2s/analysis/shapes.py", "s2s/passes/in_place.py", "s2s/ir/core.py")


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
    import s2s.passes.optimize as optimize
    import s2s.analysis.shapes as shapes
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


# ---------------------------------------------------------------- loops and branches every few lines

def mixed(lines: int) -> str:
    """A function of `lines` lines with a loop or a branch every few lines (benchmarks/run.py's mixed(n): issue 29's
    5,000-line function), each value read by the next."""
    out = ["def model(c, y):", "    a0 = c * y"]
    i = 0
    while len(out) < lines - 1:
        i += 1
        if i % 3 == 0 or len(out) + 4 > lines - 1:        # (the last lines: straight ones, to end at lines)
            out.append(f"    a{i} = math.sin(a{i - 1}) * c + y * a{i - 1}")
        elif i % 3 == 1:
            out += [f"    if a{i - 1} > 0.0:", f"        a{i} = a{i - 1} * c + y", "    else:",
                    f"        a{i} = math.cos(a{i - 1}) - y"]
        else:
            out += [f"    a{i} = a{i - 1}", "    for k in range(3):",
                    f"        a{i} = a{i} * 0.5 + math.sin(a{i - 1}) * c"]
    out.append(f"    return a{i}")
    return "\n".join(out) + "\n"


def _mixed_calls(lines: int, tag: str) -> dict:
    """Calls per function during grad's first call on mixed(lines), checked against central differences at two
    points (both sides of the branches)."""
    text = mixed(lines)
    filename = f"<transform-cost-{tag}-{lines}>"
    linecache.cache[filename] = (len(text), None, text.splitlines(True), filename)
    scope = {"math": math}
    exec(compile(text, filename, "exec"), scope)
    model = scope["model"]
    profile = cProfile.Profile()
    profile.enable()
    derivative = s2s.grad(model, wrt=(0, 1))
    derivative(0.3, 0.7)
    profile.disable()
    eps = 1e-6
    for c, y in ((0.3, 0.7), (-0.4, 0.9)):
        dc, dy = derivative(c, y)
        assert dc == pytest.approx((model(c + eps, y) - model(c - eps, y)) / (2 * eps), rel=1e-5, abs=1e-7)
        assert dy == pytest.approx((model(c, y + eps) - model(c, y - eps)) / (2 * eps), rel=1e-5, abs=1e-7)
    return {key: row[1] for key, row in pstats.Stats(profile).stats.items()}


def test_loops_and_branches_every_few_lines_cost_work_linear_in_the_function_size(user_path):
    """Issue 29: such a function of 5,000 lines took 28.7 s. What grew faster than the function: lowering merged
    every variable at every branch (only those a branch sets now), the reverse transform and the verifier copied
    every adjoint (every visible value) into each branch (each block), the float analysis copied its set at every
    loop, and naming looked at every earlier stack for each new one."""
    assert mixed(5000).count("\n") == 5000
    _mixed_calls(12, "mixed-warm")
    few, many = _mixed_calls(60, "mixed"), _mixed_calls(240, "mixed")
    total = sum(many.values()) / sum(few.values())
    worst = sorted(((calls / few.get(key, 1), f"{key[0]}:{key[1]} {key[2]}", few.get(key, 0), calls)
                    for key, calls in many.items() if calls >= 1000), reverse=True)
    assert total < 4.6, total
    assert worst[0][0] < 5.2, worst[:5]
