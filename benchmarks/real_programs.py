"""The cheap-gradient bound on real programs (issue 29, item 4): for every program of the code-as-shipped corpus
(tests/corpus/cases.py: scipy, statsmodels, scikit-learn, lifelines, numpy-ml, numpy, as installed) and of the
user-style corpus of programs (tests/programs/test_scientific_corpus.py and test_models_and_likelihoods.py), the time of the function,
of its cached s2s gradient (`s2s.grad(f, wrt)`, mode="auto", after the first call) and, where the library has one,
of the library's own gradient (statsmodels' `score`, scipy's `rosen_der` and `fprime`s, numpy-ml's `grad` and
`backward`, lifelines' autograd gradient, ...), printed sorted by gradient / function, worst first.

    python benchmarks/real_programs.py [--quick] [--only TEXT] [--library NAME ...] [--json FILE]
    python benchmarks/run.py --real-programs [--quick]

The function, the gradient and the library's gradient run in turn, one batch each per round (the machine is shared
and its load changes from second to second): times are medians over the rounds, ratios the medians of the ratios
within a round, with their smallest and largest. Every s2s gradient is checked against the library's gradient (or
the corpus's own reference) before it is timed. Reverse mode's bound (Griewank and Walther) is 3-4x the function:
the goal is every program <= 4x.
"""
from __future__ import annotations

import argparse
import contextlib
import importlib
import json
import os
import platform
import re
import statistics
import sys
import time
import warnings
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))
sys.path.insert(0, os.path.join(HERE, "..", "tests"))
sys.path.insert(0, HERE)
os.environ.pop("S2S_CHECK", None)          # the derivative as a user gets it: no checking mode
os.environ.pop("S2S_VERIFY", None)
import s2s  # noqa: E402
from s2s.errors import S2SError  # noqa: E402
from run import _fmt, flat, interleaved_times, mode_chosen, ratio  # noqa: E402

BOUND = 4.0


@dataclass
class Program:
    group: str                 # the library, or "user-style"
    name: str
    f: Callable
    args: tuple
    wrt: Any
    hand: Callable | None = None
    reference: Any = None      # the corpus's gradient at args (the library's own, or None)


def corpus_programs(libraries: tuple) -> tuple[list[Program], dict]:
    """The code-as-shipped corpus's cases of the installed libraries, and {library: why not} for the others."""
    from corpus.cases import BUILDERS, PACKAGES, import_numpy_ml
    found, missing = [], {}
    for library in libraries:
        try:
            import_numpy_ml() if library == "numpy_ml" else importlib.import_module(library)
            cases = BUILDERS[library]()
        except ImportError as exc:
            missing[library] = f"{PACKAGES[library]} not installed ({exc})"
            continue
        for case in cases:
            found.append(Program(library, case.name, case.f, case.args, case.wrt, case.hand, case.gradient))
    return found, missing


def user_programs() -> list[Program]:
    """The programs of tests/programs/test_scientific_corpus.py (CASES) and tests/programs/test_models_and_likelihoods.py (CASES, in every
    argument)."""
    from programs import test_models_and_likelihoods as outside
    from programs import test_scientific_corpus as user
    found = []
    for fn, args, wrt, _, _ in user.CASES:
        found.append(Program("user-style", user._name((fn,)), fn, args, wrt))
    for fn, args in outside.CASES:
        found.append(Program("outside-style", getattr(fn, "__name__", "lambda"), fn, args,
                             tuple(range(len(args))) if len(args) > 1 else 0))
    found.append(Program("outside-style", "negative_loglik", outside.negative_loglik, (0.2, 0.1), (0, 1)))
    return found


def measure(p: Program, budget: float) -> dict:
    """One program's row: the first call (transform), the interleaved times, the ratios within rounds."""
    row: dict = {"group": p.group, "program": p.name}
    start = time.perf_counter()
    try:
        gradient = s2s.grad(p.f, wrt=p.wrt)
        got = gradient(*p.args)
    except S2SError as exc:
        row["refused"] = f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"
        return row
    row["first call (s)"] = time.perf_counter() - start
    row["mode"] = mode_of(p, gradient)
    fns = {"function": p.f, "s2s": gradient}
    want = p.hand(*p.args) if p.hand is not None else p.reference
    if want is not None and not np.allclose(flat(got), flat(want), rtol=1e-5, atol=1e-7):
        from corpus.runner import _numeric_gradient
        if isinstance(p.wrt, tuple) or not np.allclose(flat(got), flat(_numeric_gradient(p.f, p.args, p.wrt)),
                                                       rtol=1e-4, atol=1e-6):
            raise AssertionError(f"{p.group}: {p.name}: s2s and the library's gradient disagree")
        row["note"] = "the library's gradient disagrees with central differences (s2s agrees)"
    if p.hand is not None:
        fns["library"] = p.hand
    times, samples = interleaved_times(fns, p.args, budget)
    row["seconds"] = times
    row["s2s / function"] = ratio(samples, "s2s", "function")
    row["s2s / library"] = ratio(samples, "s2s", "library") if p.hand is not None else None
    row["rounds"] = len(samples["s2s"])
    return row


def mode_of(p: Program, gradient: Callable) -> str:
    """The mode the derivative runs in, as its generated source's first line says (mode="auto" also weighs what
    the output is known to be, which the arguments' kinds alone do not tell)."""
    try:
        first = s2s.source(p.f, *p.args, wrt=p.wrt).splitlines()[0]
    except Exception:           # noqa: BLE001 - the arguments' kinds, then
        return mode_chosen(gradient, p.args)
    found = re.search(r"(\w+) mode\.?$", first)
    return found.group(1) if found else mode_chosen(gradient, p.args)


def profile(p: Program, calls: int = 50, show: int = 25) -> None:
    """cProfile of the cached gradient's calls (interleaved with the function's, as the benchmark runs them), and
    the generated source."""
    import cProfile
    import pstats
    gradient = s2s.grad(p.f, wrt=p.wrt)
    gradient(*p.args)
    profiler = cProfile.Profile()
    for _ in range(calls):
        p.f(*p.args)
        profiler.enable()
        gradient(*p.args)
        profiler.disable()
    print(f"==== {p.group}: {p.name}: {calls} calls of the gradient")
    pstats.Stats(profiler).sort_stats("tottime").print_stats(show)
    print(s2s.source(p.f, *p.args, wrt=p.wrt))


def table(rows: list[dict]) -> str:
    measured = sorted((r for r in rows if "seconds" in r), key=lambda r: -r["s2s / function"][0])
    lines = ["| program | mode | function | s2s gradient | library's gradient | s2s/function [min-max] | "
             "s2s/library |", "|---|---|---|---|---|---|---|"]
    for r in measured:
        t = r["seconds"]
        med, lo, hi = r["s2s / function"]
        flag = "**" if med > BOUND else ""
        library = f"{r['s2s / library'][0]:.2f}" if r["s2s / library"] else "—"
        lines.append(f"| {r['group']}: {r['program']} | {r['mode']} | {_fmt(t['function'])} | {_fmt(t['s2s'])} | "
                     f"{_fmt(t.get('library'))} | {flag}{med:.2f}{flag} [{lo:.2f}-{hi:.2f}] | {library} |")
    return "\n".join(lines)


def groups_table(rows: list[dict]) -> str:
    """Per library (or corpus): how many programs, the median and worst gradient / function, how many within the
    bound, and the median gradient / library's gradient."""
    measured = [r for r in rows if "seconds" in r]
    lines = ["| corpus | programs | s2s/function: median | worst | within 4x | s2s/library: median |",
             "|---|---|---|---|---|---|"]
    for group in dict.fromkeys(r["group"] for r in measured):
        mine = [r for r in measured if r["group"] == group]
        ratios = [r["s2s / function"][0] for r in mine]
        lib = [r["s2s / library"][0] for r in mine if r["s2s / library"]]
        lines.append(f"| {group} | {len(mine)} | {statistics.median(ratios):.2f} | {max(ratios):.2f} | "
                     f"{sum(x <= BOUND for x in ratios)} | {statistics.median(lib):.2f} |" if lib else
                     f"| {group} | {len(mine)} | {statistics.median(ratios):.2f} | {max(ratios):.2f} | "
                     f"{sum(x <= BOUND for x in ratios)} | — |")
    return "\n".join(lines)


def summary(rows: list[dict], missing: dict) -> str:
    measured = [r for r in rows if "seconds" in r]
    ratios = [r["s2s / function"][0] for r in measured]
    over = [r for r in measured if r["s2s / function"][0] > BOUND]
    groups = sorted({r["group"] for r in measured})
    counts = ", ".join(f"{g} {sum(r['group'] == g for r in measured)}" for g in groups)
    out = [f"measured {len(measured)} programs ({counts})"]
    if ratios:
        out.append(f"s2s / function: median {statistics.median(ratios):.2f}, worst {max(ratios):.2f}; "
                   f"{len(measured) - len(over)} of {len(measured)} within {BOUND:g}x")
        lib = [r["s2s / library"][0] for r in measured if r["s2s / library"]]
        if lib:
            out.append(f"s2s / library's gradient ({len(lib)} programs): median {statistics.median(lib):.2f}, "
                       f"range {min(lib):.2f}-{max(lib):.2f}")
    for r in rows:
        if "note" in r:
            out.append(f"{r['group']}: {r['program']}: {r['note']}")
        if "refused" in r:
            out.append(f"not timed (refused): {r['group']}: {r['program']}: {r['refused'][:160]}")
    for library, why in missing.items():
        out.append(f"not measured: {library}: {why}")
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    from corpus.cases import LIBRARIES
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="shorter timing")
    parser.add_argument("--only", default="", help="only the programs whose name contains this text")
    parser.add_argument("--library", nargs="*", default=None,
                        help=f"only these groups: {', '.join(LIBRARIES)}, user (the user-style corpora)")
    parser.add_argument("--json", default="", help="also write the measurements to this file")
    parser.add_argument("--profile", action="store_true",
                        help="instead of timing: profile the gradient of each program selected and print its source")
    args = parser.parse_args(argv)
    groups = tuple(args.library) if args.library else LIBRARIES + ("user",)
    warnings.simplefilter("ignore")
    np.seterr(all="ignore")
    programs, missing = corpus_programs(tuple(g for g in groups if g in LIBRARIES))
    if "user" in groups:
        programs += user_programs()
    programs = [p for p in programs if args.only in p.name]
    if args.profile:
        for p in programs:
            profile(p)
        return 0
    budget = 0.15 if args.quick else 0.6
    rows = []
    for p in programs:
        with open(os.devnull, "w") as quiet, contextlib.redirect_stdout(quiet):     # (programs that print)
            rows.append(measure(p, budget))
        if "seconds" in rows[-1]:
            print(f"  {p.group}: {p.name}: {rows[-1]['s2s / function'][0]:.2f}x", file=sys.stderr)
    print(f"machine: {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}, "
          f"NumPy {np.__version__}; medians over rounds, ratios within a round")
    print(table(rows))
    print()
    print(groups_table(rows))
    print(summary(rows, missing))
    if args.json:
        with open(args.json, "w") as handle:
            json.dump({"machine": platform.platform(), "rows": rows, "missing": missing}, handle, indent=2)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
