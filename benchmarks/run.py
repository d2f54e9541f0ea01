"""Benchmarks: s2s gradients against the primal, a hand-written gradient and (when installed) peers.

    python benchmarks/run.py [--quick] [--json results.json] [--only NAME]

Every gradient is checked against the hand-written one before anything is timed.
Times are medians of repeated runs (the machines are shared and noisy); ratios
are taken within the same run.
"""
from __future__ import annotations

import argparse
import json
import math
import os
import platform
import statistics
import sys
import time
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import s2s  # noqa: E402


@dataclass
class Workload:
    name: str
    primal: Callable
    args: tuple
    wrt: tuple
    hand: Callable                      # the hand-written gradient, same signature, same result structure
    peers: dict[str, Callable] = field(default_factory=dict)


def median_time(fn: Callable, args: tuple, budget: float) -> float:
    """Median seconds per call, over repeats that each run long enough to time reliably."""
    fn(*args)
    number = 1
    while True:
        start = time.perf_counter()
        for _ in range(number):
            fn(*args)
        elapsed = time.perf_counter() - start
        if elapsed > 0.02 or number > 1_000_000:
            break
        number *= 4
    repeats = max(5, min(50, int(budget / max(elapsed, 1e-9))))
    samples = []
    for _ in range(repeats):
        start = time.perf_counter()
        for _ in range(number):
            fn(*args)
        samples.append((time.perf_counter() - start) / number)
    return statistics.median(samples)


def flat(value: Any) -> np.ndarray:
    if isinstance(value, (tuple, list)):
        return np.concatenate([flat(v) for v in value]) if value else np.zeros(0)
    return np.ravel(np.asarray(value, dtype=np.float64))


# ---------------------------------------------------------------- workloads

def logistic_loss(w, b, X, y):
    z = X @ w + b
    return np.mean(np.logaddexp(0.0, z) - y * z)


def logistic_hand(w, b, X, y):
    z = X @ w + b
    r = (1.0 / (1.0 + np.exp(-z)) - y) / len(y)
    return X.T @ r, np.sum(r)


def logistic(n: int) -> Workload:
    rng = np.random.default_rng(0)
    X = rng.normal(size=(n, 20))
    y = (rng.random(n) < 0.5).astype(np.float64)
    return Workload(f"logistic N={n:,}", logistic_loss, (rng.normal(size=20) * 0.1, 0.1, X, y), (0, 1),
                    logistic_hand)


def workloads(quick: bool) -> list[Workload]:
    sizes = (100, 10_000, 100_000) if quick else (100, 10_000, 1_000_000)
    return [logistic(n) for n in sizes]


# ---------------------------------------------------------------- running

def run(selected: list[Workload], budget: float) -> list[dict]:
    rows = []
    for w in selected:
        gradient = s2s.grad(w.primal, wrt=w.wrt)
        ours, expected = flat(gradient(*w.args)), flat(w.hand(*w.args))
        if not np.allclose(ours, expected, rtol=1e-6, atol=1e-9):
            raise AssertionError(f"{w.name}: s2s and the hand-written gradient disagree")
        times = {"primal": median_time(w.primal, w.args, budget), "s2s": median_time(gradient, w.args, budget),
                 "hand-written": median_time(w.hand, w.args, budget)}
        for peer, fn in w.peers.items():
            if not np.allclose(flat(fn(*w.args)), expected, rtol=1e-5, atol=1e-8):
                raise AssertionError(f"{w.name}: {peer} and the hand-written gradient disagree")
            times[peer] = median_time(fn, w.args, budget)
        rows.append({"workload": w.name, "seconds": times,
                     "s2s / primal": times["s2s"] / times["primal"],
                     "s2s / hand-written": times["s2s"] / times["hand-written"]})
    return rows


def report(rows: list[dict]) -> str:
    peers = sorted({p for r in rows for p in r["seconds"]} - {"primal", "s2s", "hand-written"})
    header = ["workload", "primal", "s2s", "hand-written", *peers, "s2s/primal", "s2s/hand"]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for r in rows:
        t = r["seconds"]
        cells = [r["workload"]] + [_fmt(t.get(k)) for k in ["primal", "s2s", "hand-written", *peers]]
        cells += [f"{r['s2s / primal']:.2f}", f"{r['s2s / hand-written']:.2f}"]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def _fmt(seconds: float | None) -> str:
    if seconds is None or math.isnan(seconds):
        return "—"
    for unit, scale in (("s", 1.0), ("ms", 1e-3), ("µs", 1e-6)):
        if seconds >= scale:
            return f"{seconds / scale:.3g} {unit}"
    return f"{seconds / 1e-9:.3g} ns"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="smaller sizes and shorter timing")
    parser.add_argument("--json", default="benchmarks/results.json", help="where to write the measurements")
    parser.add_argument("--only", default="", help="run the workloads whose name contains this text")
    args = parser.parse_args(argv)
    selected = [w for w in workloads(args.quick) if args.only in w.name]
    rows = run(selected, budget=0.3 if args.quick else 2.0)
    print(f"machine: {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}, "
          f"NumPy {np.__version__}")
    print(report(rows))
    with open(args.json, "w") as handle:
        json.dump({"machine": platform.platform(), "rows": rows}, handle, indent=2)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
