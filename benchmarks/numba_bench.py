"""The Numba backend against jax.jit(jax.grad) and against the Numba-compiled function itself.

    python benchmarks/numba_bench.py [--markdown] [--repeat 15] [--only RNN]

For each loop workload: the primal compiled by numba.njit, the gradient s2s.grad(f, backend="numba"), and
jax.jit(jax.grad(f)) with the loop written as JAX needs it (a Python loop unrolled by tracing for the while
loop and the RNN; lax.fori_loop for the element loops, whose indices are traced). The three run in turn, one
batch each per round, for `repeat` rounds after a warm-up call (compile time excluded): the times are medians
over the rounds, and the ratios medians of the ratios within a round (the machine may be shared and noisy), with
the smallest and largest of those ratios.
Compile times (the first call) are reported separately. Every gradient is checked against the Python backend's
before it is timed.
"""
from __future__ import annotations

import argparse
import math
import os
import statistics
import sys
import time
import warnings
from typing import Any, Callable

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import s2s  # noqa: E402


# ---------------------------------------------------------------- the workloads (plain Python, Numba's subset)

def while_loop(x):
    y = x
    i = 0
    while i < 50:
        y = y * 0.99 + math.sin(y) * 0.01
        i += 1
    return y


def horner(x, coefficients):
    y = 0.0
    for c in coefficients:
        y = y * x + c
    return y


def euler(k, y0, h, steps):
    y = y0
    for _ in range(steps):
        y = y + h * (-k * y)
    return y


def running_sum(x):
    s = 0.0
    acc = 0.0
    for i in range(x.shape[0]):
        s = s + x[i]
        acc = acc + s * s
    return acc


def stencil(u, c):
    n = u.shape[0]
    total = 0.0
    for i in range(1, n - 1):
        v = u[i] + c * (u[i - 1] - 2.0 * u[i] + u[i + 1])
        total = total + v * v
    return total


def rnn(Wh, Wx, b, xs, h0):
    h = h0
    for x in xs:
        h = np.tanh(Wh @ h + Wx @ x + b)
    return np.sum(h * h)


def workloads() -> list[tuple[str, Callable, tuple, Any]]:
    rng = np.random.default_rng(0)
    coefficients = rng.normal(size=200) * 0.1
    return [
        ("while loop, 50 iterations", while_loop, (0.7,), 0),
        ("Horner, 200 coefficients", horner, (0.9, coefficients), 0),
        # the coefficients as a Python list of floats, as run.py's Horner passes them: s2s converts it at each call
        # (an exact type check of every item, then np.fromiter); the Numba function and JAX get the array
        ("Horner, 200 coefficients in a list", horner, (0.9, [float(c) for c in coefficients]), 0),
        ("Euler ODE, 1,000 steps", euler, (0.5, 1.0, 0.001, 1000), 0),
        ("running sum, 10,000 elements", running_sum, (rng.normal(size=10_000),), 0),
        ("stencil, 10,000 points", stencil, (rng.normal(size=10_000), 0.1), 0),
        ("RNN tanh, 100 steps, hidden 32", rnn,
         (rng.normal(size=(32, 32)) * 0.1, rng.normal(size=(32, 16)) * 0.1, np.zeros(32),
          rng.normal(size=(100, 16)), np.zeros(32)), (0, 1, 2)),
    ]


# ---------------------------------------------------------------- JAX's versions

def jax_versions() -> dict[Callable, Callable] | None:
    try:
        import jax
        import jax.numpy as jnp
    except ImportError:
        return None
    jax.config.update("jax_enable_x64", True)
    lax = jax.lax

    def while_loop_(x):
        y = x
        i = 0
        while i < 50:
            y = y * 0.99 + jnp.sin(y) * 0.01
            i += 1
        return y

    def horner_(x, coefficients):
        return lax.fori_loop(0, coefficients.shape[0], lambda i, y: y * x + coefficients[i], 0.0)

    def euler_(k, y0, h, steps):
        return lax.fori_loop(0, steps, lambda i, y: y + h * (-k * y), y0)

    def running_sum_(x):
        def body(i, carry):
            s, acc = carry
            s = s + x[i]
            return s, acc + s * s
        return lax.fori_loop(0, x.shape[0], body, (0.0, 0.0))[1]

    def stencil_(u, c):
        def body(i, total):
            v = u[i] + c * (u[i - 1] - 2.0 * u[i] + u[i + 1])
            return total + v * v
        return lax.fori_loop(1, u.shape[0] - 1, body, 0.0)

    def rnn_(Wh, Wx, b, xs, h0):
        h = h0
        for x in xs:
            h = jnp.tanh(Wh @ h + Wx @ x + b)
        return jnp.sum(h * h)

    return {while_loop: while_loop_, horner: horner_, euler: euler_, running_sum: running_sum_,
            stencil: stencil_, rnn: rnn_}


# ---------------------------------------------------------------- timing

CLOCK = time.perf_counter        # --clock cpu: time.process_time, the process's CPU time (on a loaded machine)


def batch_size(fn: Callable, args: tuple, block: Callable = lambda r: r) -> int:
    """Calls per batch: enough for about 20 ms."""
    block(fn(*args))
    start = time.perf_counter()
    block(fn(*args))
    return max(1, int(0.02 / max(time.perf_counter() - start, 1e-7)))


def rounds(fns: dict[str, tuple[Callable, Callable, tuple]], repeat: int) -> dict[str, list[float]]:
    """Per-call times (seconds) of each function (with its arguments), one batch per function in each of `repeat`
    rounds."""
    sizes = {key: batch_size(fn, args, block) for key, (fn, block, args) in fns.items()}
    times: dict[str, list[float]] = {key: [] for key in fns}
    for _ in range(repeat):
        for key, (fn, block, args) in fns.items():
            start = CLOCK()
            for _ in range(sizes[key]):
                block(fn(*args))
            times[key].append((CLOCK() - start) / sizes[key])
    return times


def median_ratio(a: list[float], b: list[float]) -> float:
    return statistics.median(x / y for x, y in zip(a, b))


def first_call(fn: Callable, args: tuple, block: Callable = lambda r: r) -> tuple[float, Any]:
    start = time.perf_counter()
    result = block(fn(*args))
    return time.perf_counter() - start, result


def _flat(value: Any) -> np.ndarray:
    parts = value if isinstance(value, tuple) else (value,)
    return np.concatenate([np.ravel(np.asarray(p, dtype=float)) for p in parts])


def measure(repeat: int, only: str = "") -> list[dict]:
    import numba
    jax = jax_versions()
    rows = []
    for name, fn, args, wrt in workloads():
        if only.lower() not in name.lower():
            continue
        row: dict = {"name": name}
        # the peers take a list of numbers as an array (Numba would reflect the list, JAX trace each item)
        arrays = tuple(np.array(a) if isinstance(a, list) else a for a in args)
        primal = numba.njit(fn)
        row["primal compile"], _ = first_call(primal, arrays)
        gradient = s2s.grad(fn, wrt, backend="numba")
        row["s2s compile"], found = first_call(gradient, args)
        expected = s2s.grad(fn, wrt)(*args)
        assert np.allclose(_flat(found), _flat(expected), rtol=1e-10, atol=1e-12), name
        fns = {"primal": (primal, lambda r: r, arrays), "s2s": (gradient, lambda r: r, args)}
        if jax is not None:
            import jax as jax_module
            jitted = jax_module.jit(jax_module.grad(jax[fn], wrt), static_argnums=(3,) if fn is euler else ())
            block = jax_module.block_until_ready
            row["jax compile"], got = first_call(jitted, arrays, block)
            assert np.allclose(_flat(got), _flat(expected), rtol=1e-8, atol=1e-10), name
            fns["jax"] = (jitted, block, arrays)
        times = rounds(fns, repeat)
        for key, found_times in times.items():
            row[key] = statistics.median(found_times)
        row["s2s / primal"] = median_ratio(times["s2s"], times["primal"])
        if "jax" in times:
            row["s2s / jax"] = median_ratio(times["s2s"], times["jax"])
            ratios = [x / y for x, y in zip(times["s2s"], times["jax"])]
            row["s2s / jax spread"] = (min(ratios), max(ratios))
        rows.append(row)
    return rows


def table(rows: list[dict], markdown: bool) -> str:
    head = ["workload", "Numba f", "s2s+Numba grad", "÷ Numba f", "jax.jit(grad)", "s2s ÷ jax (min–max of rounds)",
            "compile: Numba f / s2s / jax"]
    lines = []
    if markdown:
        lines += ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in rows:
        jax_time = r.get("jax")
        cells = [r["name"], f"{r['primal'] * 1e6:,.1f} µs", f"{r['s2s'] * 1e6:,.1f} µs",
                 f"{r['s2s / primal']:.2f}×",
                 f"{jax_time * 1e6:,.1f} µs" if jax_time else "—",
                 f"{r['s2s / jax']:.2f}× ({r['s2s / jax spread'][0]:.2f}–{r['s2s / jax spread'][1]:.2f})"
                 if jax_time else "—",
                 f"{r['primal compile']:.2f} s / {r['s2s compile']:.2f} s / "
                 + (f"{r['jax compile']:.2f} s" if jax_time else "—")]
        lines.append("| " + " | ".join(cells) + " |" if markdown else "  ".join(cells))
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--markdown", action="store_true")
    parser.add_argument("--repeat", type=int, default=15)
    parser.add_argument("--only", default="", help="the workloads whose name contains this")
    parser.add_argument("--clock", choices=("wall", "cpu"), default="wall",
                        help="time the batches by the wall clock, or by the process's CPU time (a loaded machine)")
    options = parser.parse_args()
    global CLOCK
    CLOCK = time.process_time if options.clock == "cpu" else time.perf_counter
    warnings.simplefilter("ignore")         # Numba's performance notes about non-contiguous matmul operands
    print(table(measure(options.repeat, options.only), options.markdown))


if __name__ == "__main__":
    main()
