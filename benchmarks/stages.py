"""Where the first call's time goes: the CPU time of each stage of s2s.grad's first call on benchmarks/run.py's
chain(n) or mixed(n), each run in a fresh process, medians over the runs.

    python benchmarks/stages.py [--lines 3200] [--kind chain|mixed] [--cold] [--runs 3] [--peak]

CPU time (time.process_time), not wall time: the machines are shared. Each stage is the time spent inside one
function of the pipeline (reading the source, desugaring, the fence, lowering, the transform, the optimizing passes
before and after it, the verifier, the emitter, Python's compile); "other" is the rest of the call (the passes
between them, the dispatcher, the collector). --cold: the rules are loaded by the call (s2s imported only), else
s2s is warmed up on a 12-line chain first. --peak: the peak of Python's allocations in a second first call.
"""
from __future__ import annotations

import argparse
import json
import linecache
import math
import os
import statistics
import subprocess
import sys
import time

STAGES = (("s2s.frontend.parse", "read_function", "read"), ("s2s.frontend.parse", "desugar", "desugar"),
          ("s2s.frontend.parse", "fence", "fence"), ("s2s.driver.primal", "lower", "lower"),
          ("s2s.driver.pipeline", "reverse_function", "transform"), ("s2s.driver.pipeline", "optimize_ir", "optimize"),
          ("s2s.driver.pipeline", "verify", "verify"), ("s2s.driver.pipeline", "emit_module", "emit"),
          ("s2s.driver.pipeline", "compile_function", "compile"))


def child(lines: int, kind: str, cold: bool, peak: bool) -> dict:
    """In this (fresh) process: the first call's CPU time per stage."""
    import importlib
    import tracemalloc
    start = time.process_time()
    import s2s
    imported = time.process_time() - start
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import run
    times: dict[str, float] = {}

    def timed(module, name: str, label: str) -> None:
        inner = getattr(module, name)

        def stage(*args, **kwargs):
            begin = time.process_time()
            try:
                return inner(*args, **kwargs)
            finally:
                times[label] = times.get(label, 0.0) + time.process_time() - begin
        setattr(module, name, stage)
    for module, name, label in STAGES:
        timed(importlib.import_module(module), name, label)

    def model_of(n: int, what: str):
        text = run.chain(n) if what == "chain" else run.mixed(n)
        filename = f"<stages-{what}-{n}-{time.perf_counter()}>"
        linecache.cache[filename] = (len(text), None, text.splitlines(True), filename)
        scope = {"math": math}
        exec(compile(text, filename, "exec"), scope)
        return scope["model"]
    if not cold:
        s2s.grad(model_of(12, "chain"), wrt=(0, 1))(0.3, 0.7)
        times.clear()
    model = model_of(lines, kind)
    start = time.process_time()
    s2s.grad(model, wrt=(0, 1))(0.3, 0.7)
    total = time.process_time() - start
    found = {"import s2s": imported, "total": total, **times, "other": total - sum(times.values())}
    if peak:
        tracemalloc.start()
        s2s.grad(model_of(lines, kind), wrt=(0, 1))(0.3, 0.7)
        found["peak MB"] = tracemalloc.get_traced_memory()[1] / 2 ** 20
        tracemalloc.stop()
    return found


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lines", type=int, default=3200)
    parser.add_argument("--kind", default="chain", choices=("chain", "mixed"))
    parser.add_argument("--cold", action="store_true", help="the rules loaded by the call measured")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--peak", action="store_true", help="the peak of Python's allocations too")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        print(json.dumps(child(args.lines, args.kind, args.cold, args.peak)))
        return 0
    rows = []
    for _ in range(args.runs):
        out = subprocess.run([sys.executable, os.path.abspath(__file__), "--child", "--lines", str(args.lines),
                              "--kind", args.kind] + ["--cold"] * args.cold + ["--peak"] * args.peak,
                             capture_output=True, text=True, check=True).stdout
        rows.append(json.loads(out.strip().splitlines()[-1]))
    print(f"{args.lines} lines ({args.kind}{', rules loaded by the call' if args.cold else ''}): CPU seconds, "
          f"medians of {args.runs} fresh processes")
    for key in rows[0]:
        values = [r[key] for r in rows]
        print(f"  {key:<12} {statistics.median(values):8.3f}   ({', '.join(f'{v:.3f}' for v in values)})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
