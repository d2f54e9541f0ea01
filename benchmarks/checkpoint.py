"""Checkpointed loops: memory and time of `s2s.grad(f, checkpoint=...)` against the plain gradient.

    python benchmarks/checkpoint.py [--quick] [--json FILE] [--markdown]

Workloads: a 200,000-step (30 snapshots: issue 29) and a 1,000,000-step explicit Euler integration of an
8-dimensional ODE (y' = tanh(A y) - y/10),
a 10,000-step tanh RNN (hidden 32, inputs 8), and a Newton iteration stopped by a tolerance (a `while`).
For each, the plain gradient and the checkpointed ones for several snapshot counts: peak memory during the
call (tracemalloc, in a run of its own: tracing slows allocation), time (the process's CPU time, the best of
--repeat untraced runs: the machines are shared, and wall time there measures the neighbours), and the largest
difference from the plain gradient relative to its size. `--quick` divides the sizes by 10.
The goal (issue 18): the gradient equal to rounding, peak memory at most 2% of the plain gradient's, time at
most 3x, for the headline snapshot count of the Euler and RNN workloads (marked * in the table). The `while`
loop's body is a few scalar operations, for which the schedule's per-step bookkeeping costs more than the step.
"""
from __future__ import annotations

import argparse
import gc
import json
import math
import os
import sys
import time
import tracemalloc
from typing import Any, Callable

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import s2s  # noqa: E402


def euler(A, y0, h, steps):
    y = y0
    for _ in range(steps):
        y = y + h * (np.tanh(A @ y) - 0.1 * y)
    return np.sum(y * y)


def rnn(W, U, b, X, v):
    h = np.zeros(W.shape[0])
    loss = 0.0
    for t in range(X.shape[0]):
        h = np.tanh(W @ h + U @ X[t] + b)
        loss = loss + np.dot(v, h) ** 2
    return loss / X.shape[0]


def relax(c, x0, rate):
    x = x0
    delta = 1.0
    while delta > 1e-13:
        x_new = x + rate * (math.cos(c * x) - x)
        delta = abs(x_new - x)
        x = x_new
    return x * x


def workloads(quick: bool) -> list[dict]:
    rng = np.random.default_rng(0)
    scale = 10 if quick else 1
    A = rng.normal(size=(8, 8)) / 3
    y0 = rng.normal(size=8)
    W, U, b = rng.normal(size=(32, 32)) / 6, rng.normal(size=(32, 8)) / 3, rng.normal(size=32) / 10
    X, v = rng.normal(size=(10_000 // scale, 8)), rng.normal(size=32)
    return [
        # issue 29's case: revolve's bound for 30 snapshots is t n - C(s + t, t - 1) = 4.74 n recomputed steps
        dict(name=f"Euler, 8-dim ODE, {200_000 // scale:,} steps", fn=euler, wrt=(0, 1),
             args=(A, y0, 1e-6, 200_000 // scale), snapshots=[30], headline=30),
        dict(name=f"Euler, 8-dim ODE, {1_000_000 // scale:,} steps", fn=euler, wrt=(0, 1),
             args=(A, y0, 1e-6, 1_000_000 // scale), snapshots=[100, 1000, 2000, "1MB"], headline=2000),
        dict(name=f"RNN, hidden 32, {10_000 // scale:,} steps", fn=rnn, wrt=(0, 1, 2),
             args=(W, U, b, X, v), snapshots=[10, 30, 100, 300], headline=100),
        dict(name="relaxation, `while abs(dx) > 1e-13` (~30,000 steps)" if not quick else
             "relaxation, `while abs(dx) > 1e-13` (~3,000 steps)", fn=relax, wrt=(0, 1),
             args=(0.8, 3.0, 1e-3 * scale), snapshots=[10, 100], headline=None),
    ]


def peak_bytes(fn: Callable, args: tuple) -> int:
    gc.collect()
    tracemalloc.start()
    try:
        fn(*args)
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def best_time(fn: Callable, args: tuple, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        gc.collect()
        start = time.process_time()
        fn(*args)
        times.append(time.process_time() - start)
    return min(times)


def difference(a: Any, b: Any) -> float:
    """The largest |a - b| over the gradient's parts, relative to the largest |a|."""
    worst = max(float(np.max(np.abs(np.asarray(x) - np.asarray(y)))) for x, y in zip(a, b))
    size = max(float(np.max(np.abs(np.asarray(x)))) for x in a)
    return worst / size


def measure(work: dict, repeat: int) -> list[dict]:
    rows = []
    plain = s2s.grad(work["fn"], wrt=work["wrt"], check=False)
    plain(*work["args"])                    # compiled, and warm
    reference = plain(*work["args"])
    base_time = best_time(plain, work["args"], repeat)
    base_peak = peak_bytes(plain, work["args"])
    rows.append(dict(workload=work["name"], snapshots="plain", seconds=base_time, peak=base_peak,
                     time_ratio=1.0, memory_ratio=1.0, difference=0.0, headline=False))
    for snapshots in work["snapshots"]:
        checked = s2s.grad(work["fn"], wrt=work["wrt"], check=False, checkpoint=snapshots)
        result = checked(*work["args"])
        seconds = best_time(checked, work["args"], repeat)
        peak = peak_bytes(checked, work["args"])
        rows.append(dict(workload=work["name"], snapshots=snapshots, seconds=seconds, peak=peak,
                         time_ratio=seconds / base_time, memory_ratio=peak / base_peak,
                         difference=difference(reference, result), headline=snapshots == work["headline"]))
    return rows


def megabytes(n: int) -> str:
    return f"{n / 1e6:.2f} MB" if n >= 1e5 else f"{n / 1e3:.1f} kB"


def table(rows: list[dict]) -> str:
    lines = ["| workload | snapshots | time | peak memory | time / plain | memory / plain | difference |",
             "| --- | --- | --- | --- | --- | --- | --- |"]
    for r in rows:
        mark = "*" if r["headline"] else ""
        lines.append(f"| {r['workload']} | {r['snapshots']}{mark} | {r['seconds']:.2f} s | {megabytes(r['peak'])} | "
                     f"{r['time_ratio']:.2f}x | {100 * r['memory_ratio']:.2f}% | {r['difference']:.1e} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="sizes divided by 10")
    parser.add_argument("--repeat", type=int, default=2, help="timed runs of each gradient (the best counts)")
    parser.add_argument("--only", default="", help="run the workloads whose name contains this text")
    parser.add_argument("--json", help="also write the rows to this file")
    args = parser.parse_args(argv)
    rows: list[dict] = []
    for work in workloads(args.quick):
        if args.only.lower() in work["name"].lower():
            rows.extend(measure(work, args.repeat))
            print(table(rows), "\n", flush=True)
    failed = [r for r in rows if r["headline"] and not (r["memory_ratio"] <= 0.02 and r["time_ratio"] <= 3.0
                                                          and r["difference"] < 1e-10)]
    for r in failed:
        print(f"goal missed: {r['workload']}, {r['snapshots']} snapshots", file=sys.stderr)
    if args.json:
        with open(args.json, "w") as out:
            json.dump(rows, out, indent=1)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
