"""Benchmarks: s2s gradients against the primal, a hand-written gradient and (when installed) peers.

    python benchmarks/run.py [--quick] [--json FILE] [--only TEXT]
    python benchmarks/run.py --real-programs [--quick] [--only TEXT]    (benchmarks/real_programs.py)

Peers come with `pip install -e '.[bench]'` (autograd, jax, torch==2.13.0). Every gradient is checked
against the hand-written one before anything is timed. The primal, the s2s gradient and the hand-written ones
run in turn, one batch each per round (the machines are shared and their load changes from second to second):
times are medians over the rounds, ratios medians of the ratios within a round; the peers are timed apart.
"""
from __future__ import annotations

import argparse
import json
import linecache
import os
import platform
import statistics
import sys
import time
from typing import Any, Callable

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import s2s  # noqa: E402
import s2s.api  # noqa: E402
import workloads as workload_functions  # noqa: E402
from workloads import Workload, workloads  # noqa: E402


CLOCK = time.perf_counter        # --clock cpu: time.process_time, the process's own CPU time (a loaded machine)


def median_time(fn: Callable, args: tuple, budget: float) -> float:
    """Median seconds per call, over repeats that each run long enough to time reliably."""
    fn(*args)
    number = 1
    while True:
        start = CLOCK()
        for _ in range(number):
            fn(*args)
        elapsed = CLOCK() - start
        if elapsed > 0.01 or number > 1_000_000:
            break
        number *= 4
    repeats = max(5, min(40, int(budget / max(elapsed, 1e-9))))
    samples = []
    for _ in range(repeats):
        start = CLOCK()
        for _ in range(number):
            fn(*args)
        samples.append((CLOCK() - start) / number)
    return statistics.median(samples)


def interleaved_times(fns: dict[str, Callable], args: tuple, budget: float) -> tuple[dict, dict]:
    """(median seconds per call of each function, the per-round times): the functions run in turn, one batch
    each per round (a batch long enough to time reliably), so that a shared machine's load, which changes from
    one second to the next, weighs on all of them alike; ratios are taken within a round."""
    numbers, elapsed = {}, {}
    for key, fn in fns.items():
        fn(*args)
        number = 1
        while True:
            start = CLOCK()
            for _ in range(number):
                fn(*args)
            elapsed[key] = CLOCK() - start
            if elapsed[key] > 0.005 or number > 1_000_000:
                break
            number *= 4
        numbers[key] = number
    rounds = max(7, min(41, int(budget / max(sum(elapsed.values()), 1e-9))))
    samples: dict[str, list[float]] = {key: [] for key in fns}
    for _ in range(rounds):
        for key, fn in fns.items():
            number = numbers[key]
            start = CLOCK()
            for _ in range(number):
                fn(*args)
            samples[key].append((CLOCK() - start) / number)
    return {key: statistics.median(found) for key, found in samples.items()}, samples


def ratio(samples: dict, a: str, b: str) -> tuple[float, float, float]:
    """The median, the smallest and the largest of the per-round ratios a / b."""
    found = [x / y for x, y in zip(samples[a], samples[b])]
    return statistics.median(found), min(found), max(found)


def flat(value: Any) -> np.ndarray:
    if isinstance(value, (tuple, list)):
        return np.concatenate([flat(v) for v in value]) if value else np.zeros(0)
    return np.ravel(np.asarray(value, dtype=np.float64))


def mode_chosen(gradient: Callable, args: tuple) -> str:
    """The mode s2s.grad's mode="auto" runs for these arguments."""
    mode = s2s.api.resolve_mode(gradient.__s2s__[1], [s2s.api.kind_of(a) for a in args])[0].mode
    return "forward" if mode == "tangent" else mode


def run(selected: list[Workload], budget: float) -> list[dict]:
    rows = []
    for w in selected:
        gradient = s2s.grad(w.primal, wrt=w.wrt if len(w.wrt) > 1 else w.wrt[0])
        expected = flat(w.hand(*w.args))
        if not np.allclose(flat(gradient(*w.args)), expected, rtol=1e-6, atol=1e-9):
            raise AssertionError(f"{w.name}: s2s and the hand-written gradient disagree")
        ours = {"primal": w.primal, "s2s": gradient, "hand-written": w.hand}
        if w.careful is not None:
            if not np.allclose(flat(w.careful(*w.args)), expected, rtol=1e-6, atol=1e-9):
                raise AssertionError(f"{w.name}: the careful and the plain hand-written gradients disagree")
            ours["careful hand"] = w.careful
        times, samples = interleaved_times(ours, w.args, 3 * budget)
        for peer, fn in w.peers.items():
            if not np.allclose(flat(fn(*w.args)), expected, rtol=1e-5, atol=1e-8):
                raise AssertionError(f"{w.name}: {peer} and the hand-written gradient disagree")
            times[peer] = median_time(fn, w.args, budget)
        rows.append({"workload": w.name, "kind": w.kind, "seconds": times,
                     "s2s / primal": ratio(samples, "s2s", "primal")[0],
                     "s2s / hand-written": ratio(samples, "s2s", "hand-written")[0],
                     "s2s / hand-written, rounds": ratio(samples, "s2s", "hand-written"),
                     "s2s / careful hand": ratio(samples, "s2s", "careful hand")[0] if w.careful else None,
                     "s2s / careful hand, rounds": ratio(samples, "s2s", "careful hand") if w.careful else None})
        print(f"  measured {w.name} ({mode_chosen(gradient, w.args)} mode)", file=sys.stderr)
    return rows


FIFTY_LINES = "def model(x, y):\n" + "".join(
    f"    a{i} = math.sin(x) * {i + 1}.0 + y * a{i - 1}\n" if i else "    a0 = x * y\n" for i in range(24)) + \
    "    total = 0.0\n    for k in range(10):\n        if k % 2 == 0:\n            total = total + a23 * k\n" + \
    "        else:\n            total = total - math.cos(a22) * y\n" + \
    "".join(f"    b{i} = a{i} * a{i + 1} + total\n" for i in range(18)) + "    return b17 + math.exp(-x * x)\n"


def generated(fn: Callable, gradient: Callable, args: tuple) -> Callable:
    """The generated function behind gradient (s2s.grad(fn)) for args, called directly: from the cache."""
    options = gradient.__s2s__[1]
    found = [entry[1] for key, entry in s2s.api._CACHE[fn].items()
             if key[1] == options and key[2] == s2s.api._signature(args) and key[3] == s2s.api.shape_key(args)]
    assert len(found) == 1, found
    return found[0]


def dispatch_overhead(fn: Callable, args: tuple, wrt: Any, budget: float) -> tuple[float, float]:
    """(what s2s.grad(fn)(*args) adds to the generated function called directly, the generated function alone):
    medians of alternating runs, the gradients checked equal first."""
    gradient = s2s.grad(fn, wrt=wrt)
    through = gradient(*args)
    direct = generated(fn, gradient, args)
    assert np.array_equal(flat(through), flat(direct(*args)))
    overheads, alone = [], []
    for _ in range(5):
        a, b = median_time(gradient, args, budget / 5), median_time(direct, args, budget / 5)
        overheads.append(a - b)
        alone.append(b)
    return statistics.median(overheads), statistics.median(alone)


def overheads(budget: float) -> dict:
    """First call (transform and compile) of a 50-line function, and what a cached call adds (for floats, for
    arrays: the logistic loss at N = 100, and for a list of numbers: Horner's 200 coefficients)."""
    assert FIFTY_LINES.count("\n") == 50
    firsts = []
    for k in range(7):
        filename = f"<benchmark-fifty-{k}>"
        linecache.cache[filename] = (len(FIFTY_LINES), None, FIFTY_LINES.splitlines(True), filename)
        scope = {"math": __import__("math")}
        exec(compile(FIFTY_LINES, filename, "exec"), scope)
        start = time.perf_counter()
        s2s.grad(scope["model"], wrt=(0, 1))(0.3, 0.7)
        firsts.append(time.perf_counter() - start)
    overhead, direct = dispatch_overhead(scope["model"], (0.3, 0.7), (0, 1), budget)
    rng = np.random.default_rng(0)
    X = rng.normal(size=(100, 20))
    logistic_args = (rng.normal(size=20) * 0.1, 0.1, X, (rng.random(100) < 0.5).astype(np.float64))
    arrays, _ = dispatch_overhead(workload_functions.logistic, logistic_args, (0, 1), budget)
    listed, _ = dispatch_overhead(workload_functions.horner, (0.9, list(rng.normal(size=200))), 0, budget)
    return {"first call of a 50-line function (s)": statistics.median(firsts),
            "cached call overhead (s)": overhead, "generated function alone (s)": direct,
            "cached call overhead, arrays (logistic N=100) (s)": arrays,
            "cached call overhead, a list of 200 numbers (Horner) (s)": listed}


def chain(lines: int) -> str:
    """A straight-line function in which each line uses the one before (what code printers and unrolling give)."""
    return "def model(c, y):\n    a0 = c * y\n" + "".join(
        f"    a{i} = math.sin(a{i - 1}) * c + y * a{i - 1}\n" for i in range(1, lines - 2)) + \
        f"    return a{lines - 3}\n"


def mixed(lines: int) -> str:
    """A function of `lines` lines with a loop or a branch every few lines, each value read by the next (issue 29's
    5,000-line function; tests/transforms/test_transform_cost.py counts its work at two sizes)."""
    out = ["def model(c, y):", "    a0 = c * y"]
    i = 0
    while len(out) < lines - 1:
        i += 1
        if i % 3 == 0 or len(out) + 4 > lines - 1:
            out.append(f"    a{i} = math.sin(a{i - 1}) * c + y * a{i - 1}")
        elif i % 3 == 1:
            out += [f"    if a{i - 1} > 0.0:", f"        a{i} = a{i - 1} * c + y", "    else:",
                    f"        a{i} = math.cos(a{i - 1}) - y"]
        else:
            out += [f"    a{i} = a{i - 1}", "    for k in range(3):",
                    f"        a{i} = a{i} * 0.5 + math.sin(a{i - 1}) * c"]
    out.append(f"    return a{i}")
    return "\n".join(out) + "\n"


SCALING = ((50, "chain", True), (200, "chain", True), (800, "chain", True), (3200, "chain", True),
           (3200, "chain", False), (5000, "mixed", True))


def transform_scaling(cases: tuple = SCALING, limit: float = 60.0) -> dict:
    """First call (transform, compile, run) of `chain(n)` or `mixed(n)`, for each case (n, kind, warm), and the peak
    memory it takes (the peak of Python's allocations, traced in a second first call): each case in a fresh
    process; warm: s2s warmed up there on a 12-line chain first (imports and the rules are not the transform's
    cost), else the rules are loaded by the call (s2s imported). A kind's larger sizes are skipped once one takes
    longer than limit seconds."""
    import subprocess
    found, slow = {}, set()
    for n, kind, warm in cases:
        if kind in slow:
            continue
        child = subprocess.run([sys.executable, os.path.abspath(__file__), "--scaling-child", str(n), "--kind", kind]
                               + ([] if warm else ["--cold"]), capture_output=True, text=True, check=True)
        measured = json.loads(child.stdout.strip().splitlines()[-1])
        what = f"{n} lines" + (", loops and branches" if kind == "mixed" else "") + ("" if warm else ", rules loaded")
        found[f"first call, {what} (s)"] = elapsed = measured["cpu seconds" if CLOCK is time.process_time
                                                             else "seconds"]
        found[f"peak memory, {what} (MB)"] = measured["peak MB"]
        if elapsed > limit:
            slow.add(kind)
    return found


def scaling_child(n: int, kind: str = "chain", warm: bool = True) -> dict:
    """In a fresh process: the first call of chain(n) or mixed(n), checked against central differences."""
    import math
    import tracemalloc

    def model_of(lines: int, kind: str) -> Callable:
        text = chain(lines) if kind == "chain" else mixed(lines)
        assert text.count("\n") == lines
        filename = f"<benchmark-{kind}-{lines}-{time.perf_counter()}>"
        linecache.cache[filename] = (len(text), None, text.splitlines(True), filename)
        scope = {"math": math}
        exec(compile(text, filename, "exec"), scope)
        return scope["model"]

    if warm:
        s2s.grad(model_of(12, "chain"), wrt=(0, 1))(0.3, 0.7)
    model = model_of(n, kind)
    start, cpu = time.perf_counter(), time.process_time()
    value = s2s.grad(model, wrt=(0, 1))(0.3, 0.7)
    elapsed, cpu = time.perf_counter() - start, time.process_time() - cpu
    # the peak of Python's allocations during a second first call (of a fresh copy), traced apart from the timing
    # (the process's resident high-water mark may already stand above it from imports)
    tracemalloc.start()
    s2s.grad(model_of(n, kind), wrt=(0, 1))(0.3, 0.7)
    peak = tracemalloc.get_traced_memory()[1] / 1024
    tracemalloc.stop()
    eps = 1e-6
    numeric = (model(0.3 + eps, 0.7) - model(0.3 - eps, 0.7)) / (2 * eps)
    assert abs(value[0] - numeric) <= 1e-5 * max(1.0, abs(numeric)), (n, value[0], numeric)
    return {"seconds": elapsed, "cpu seconds": cpu, "peak MB": peak / 1024}


def report(rows: list[dict]) -> str:
    peers = [p for p in ("autograd", "jax", "jax jit", "torch") if any(p in r["seconds"] for r in rows)]
    header = ["workload", "primal", "s2s", "hand-written", "careful hand", *peers, "s2s/primal", "s2s/hand",
              "s2s/careful"]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for r in rows:
        t = r["seconds"]
        cells = [r["workload"]] + [_fmt(t.get(k)) for k in ["primal", "s2s", "hand-written", "careful hand", *peers]]
        cells += [f"{r['s2s / primal']:.2f}", f"{r['s2s / hand-written']:.2f}",
                  f"{r['s2s / careful hand']:.2f}" if r.get("s2s / careful hand") else "—"]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def _fmt(seconds: float | None) -> str:
    if seconds is None:
        return "—"
    for unit, scale in (("s", 1.0), ("ms", 1e-3), ("µs", 1e-6)):
        if seconds >= scale:
            return f"{seconds / scale:.3g} {unit}"
    return f"{seconds / 1e-9:.3g} ns"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="smaller sizes and shorter timing")
    parser.add_argument("--json", default="benchmarks/results.json", help="where to write the measurements")
    parser.add_argument("--only", default="", help="run only the workloads whose name contains this text")
    parser.add_argument("--no-scaling", action="store_true", help="skip the transform-scaling rows")
    parser.add_argument("--no-overheads", action="store_true", help="skip the call-overhead rows")
    parser.add_argument("--scaling-child", type=int, default=0, help=argparse.SUPPRESS)
    parser.add_argument("--kind", default="chain", help=argparse.SUPPRESS)
    parser.add_argument("--cold", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--only-scaling", action="store_true", help="only the transform-scaling rows")
    parser.add_argument("--real-programs", action="store_true",
                        help="the cheap-gradient bound on the corpora's programs instead (benchmarks/real_programs.py)")
    parser.add_argument("--clock", choices=("wall", "cpu"), default="wall",
                        help="time calls by the wall clock, or by the process's CPU time (on a loaded machine)")
    args = parser.parse_args(argv)
    global CLOCK
    CLOCK = time.process_time if args.clock == "cpu" else time.perf_counter
    if args.real_programs:
        import real_programs
        return real_programs.main((["--quick"] if args.quick else []) + (["--only", args.only] if args.only else []))
    if args.scaling_child:          # one size of transform_scaling, in a process of its own
        print(json.dumps(scaling_child(args.scaling_child, args.kind, not args.cold)))
        return 0
    budget = 0.2 if args.quick else 1.0
    selected = [w for w in workloads(args.quick) if args.only in w.name] if not args.only_scaling else []
    rows = run(selected, budget)
    extra = overheads(budget) if not args.no_overheads and not args.only_scaling else {}
    if not args.no_scaling:
        extra.update(transform_scaling(SCALING[:2] + ((200, "mixed", True),) if args.quick else SCALING))
    print(f"machine: {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}, "
          f"NumPy {np.__version__}; medians")
    print(report(rows))
    for name, value in extra.items():
        print(f"{name}: {value:.0f} MB" if name.endswith("(MB)") else f"{name}: {_fmt(value)}")
    with open(args.json, "w") as handle:
        json.dump({"machine": platform.platform(), "rows": rows, "overheads": extra}, handle, indent=2)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
