"""s2s.vmap against code written for the batch by hand, a Python loop over the examples, and JAX's vmap.

    python benchmarks/vmap_bench.py [--repeat 7] [--clock cpu]

Workloads (issue 28):
- per-example gradients of the benchmark MLP (64-128-10, batch 256, cross-entropy of each example):
  `s2s.vmap(s2s.grad(loss), in_axes=(None, 0, 0))` against the hand-written per-example gradient (np.einsum over
  the batch), a Python loop of `s2s.grad(loss)` over the examples, and `jax.vmap(jax.grad(loss))` with and without
  `jax.jit`;
- `s2s.vmap` of a function of one example over a batch of 1,000 against the same function written for the batch by
  hand: the MLP's forward pass, a logistic log-likelihood, and a function with an `if` on each example.

Every result is checked against the hand-written one before it is timed. Times are medians over rounds (each
round times every contender in turn, about 20 ms each); ratios are the medians of the ratios within a round, so
that a loaded machine slows both sides of a ratio alike. Compile time is excluded (one call first).
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from typing import Any, Callable

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import s2s  # noqa: E402

# ---------------------------------------------------------------- the workloads


def loss(params, x, y):
    """Cross-entropy of one example: x (64,), y one-hot (10,)."""
    W1, b1, W2, b2 = params
    hidden = np.tanh(x @ W1 + b1)
    logits = hidden @ W2 + b2
    m = np.max(logits)
    log_probs = logits - m - np.log(np.sum(np.exp(logits - m)))
    return -np.sum(y * log_probs)


def per_example_hand(params, X, Y):
    """The per-example gradients, written for the batch: np.einsum over it."""
    W1, b1, W2, b2 = params
    hidden = np.tanh(X @ W1 + b1)
    logits = hidden @ W2 + b2
    e = np.exp(logits - np.max(logits, axis=1, keepdims=True))
    p = e / np.sum(e, axis=1, keepdims=True)
    dlogits = p * np.sum(Y, axis=1, keepdims=True) - Y
    dz = (dlogits @ W2.T) * (1.0 - hidden * hidden)
    return (np.einsum("ni,nj->nij", X, dz), dz, np.einsum("ni,nj->nij", hidden, dlogits), dlogits)


def mlp_forward(params, x):
    W1, b1, W2, b2 = params
    return np.tanh(x @ W1 + b1) @ W2 + b2


def mlp_forward_hand(params, X):
    W1, b1, W2, b2 = params
    return np.tanh(X @ W1 + b1) @ W2 + b2


def log_likelihood(w, b, x, y):
    """The logistic log-likelihood of one example (a float label y)."""
    z = x @ w + b
    return y * z - np.logaddexp(0.0, z)


def log_likelihood_hand(w, b, X, Y):
    z = X @ w + b
    return Y * z - np.logaddexp(0.0, z)


def branchy(x, t):
    """An `if` on each example: a log where it is defined."""
    s = x @ t
    if s > 0:
        return np.log(s) + np.sum(x)
    return -s * s


def branchy_hand(X, t):
    s = X @ t
    positive = s > 0
    return np.where(positive, np.log(np.where(positive, s, 1.0)) + np.sum(X, axis=1), -s * s)


def make_mlp(batch: int, rng: np.random.Generator) -> tuple:
    params = (rng.normal(size=(64, 128)) / 8, rng.normal(size=128) / 10, rng.normal(size=(128, 10)) / 11,
              rng.normal(size=10) / 10)
    X = rng.normal(size=(batch, 64))
    Y = np.eye(10)[rng.integers(0, 10, size=batch)]
    return params, X, Y


# ---------------------------------------------------------------- timing

CLOCK = [time.perf_counter]       # --clock cpu: the process's CPU time (on a shared machine, what it spent itself)


def _time(fn: Callable, args: tuple, seconds: float = 0.02) -> float:
    clock = CLOCK[0]
    start = clock()
    fn(*args)
    once = clock() - start
    number = max(1, int(seconds / max(once, 1e-7)))
    start = clock()
    for _ in range(number):
        fn(*args)
    return (clock() - start) / number


def rounds(contenders: dict[str, tuple[Callable, tuple]], repeat: int) -> dict[str, list[float]]:
    """repeat rounds, each timing every contender in turn."""
    times: dict[str, list[float]] = {name: [] for name in contenders}
    for fn, args in contenders.values():
        fn(*args)                                   # compiled, warmed
    for _ in range(repeat):
        for name, (fn, args) in contenders.items():
            times[name].append(_time(fn, args))
    return times


def ratio(times: dict, a: str, b: str) -> float:
    return statistics.median(x / y for x, y in zip(times[a], times[b]))


def shown(seconds: float) -> str:
    if seconds < 1e-3:
        return f"{seconds * 1e6:.0f} µs"
    return f"{seconds * 1e3:.2f} ms"


def flat(value: Any) -> np.ndarray:
    if isinstance(value, (tuple, list)):
        return np.concatenate([flat(v) for v in value])
    return np.ravel(np.asarray(value, dtype=np.float64))


def check(name: str, got: Any, expected: Any) -> None:
    if not np.allclose(flat(got), flat(expected), rtol=1e-9, atol=1e-11):
        raise AssertionError(f"{name}: the result differs from the hand-written one")


# ---------------------------------------------------------------- the benchmarks

def jax_contenders(rng: np.random.Generator) -> dict:
    try:
        import jax
        import jax.numpy as jnp
    except ImportError:
        return {}
    jax.config.update("jax_enable_x64", True)

    def jloss(params, x, y):
        W1, b1, W2, b2 = params
        hidden = jnp.tanh(x @ W1 + b1)
        logits = hidden @ W2 + b2
        return -jnp.sum(y * jax.nn.log_softmax(logits))
    per_example = jax.vmap(jax.grad(jloss), in_axes=(None, 0, 0))
    jitted = jax.jit(per_example)

    def run(fn: Callable) -> Callable:
        def call(params, X, Y):
            out = fn(tuple(jnp.asarray(p) for p in params), jnp.asarray(X), jnp.asarray(Y))
            return tuple(np.asarray(o) for o in out)
        return call
    return {"jax vmap(grad)": run(per_example), "jax.jit(vmap(grad))": run(jitted)}


def per_example_gradients(repeat: int, rng: np.random.Generator) -> list[dict]:
    params, X, Y = make_mlp(256, rng)
    s2s_per_example = s2s.vmap(s2s.grad(loss), in_axes=(None, 0, 0))
    grad = s2s.grad(loss)

    def loop(params, X, Y):
        return [grad(params, x, y) for x, y in zip(X, Y)]
    expected = per_example_hand(params, X, Y)
    check("s2s.vmap(s2s.grad)", s2s_per_example(params, X, Y), expected)
    looped = loop(params, X, Y)
    check("loop of s2s.grad", tuple(np.stack([g[k] for g in looped]) for k in range(4)), expected)
    contenders = {"s2s vmap(grad)": (s2s_per_example, (params, X, Y)),
                  "hand (einsum)": (per_example_hand, (params, X, Y)),
                  "loop of s2s.grad": (loop, (params, X, Y))}
    for name, fn in jax_contenders(rng).items():
        check(name, fn(params, X, Y), expected)
        contenders[name] = (fn, (params, X, Y))
    times = rounds(contenders, repeat)
    row = {"workload": "per-example gradients, MLP 64-128-10, batch 256",
           "s2s": statistics.median(times["s2s vmap(grad)"]), "hand": statistics.median(times["hand (einsum)"]),
           "loop": statistics.median(times["loop of s2s.grad"]),
           "s2s/hand": ratio(times, "s2s vmap(grad)", "hand (einsum)"),
           "loop/s2s": ratio(times, "loop of s2s.grad", "s2s vmap(grad)")}
    for name in ("jax vmap(grad)", "jax.jit(vmap(grad))"):
        if name in times:
            row[name] = statistics.median(times[name])
    return [row]


def batched_functions(repeat: int, rng: np.random.Generator) -> list[dict]:
    rows = []
    params, X, _ = make_mlp(1000, rng)
    w, b = rng.normal(size=64) / 8, 0.1
    Y = (rng.random(1000) < 0.5).astype(float)
    t = rng.normal(size=64)
    cases = [("MLP forward pass, 1,000 inputs", mlp_forward, mlp_forward_hand, (params, X), (None, 0)),
             ("logistic log-likelihood, 1,000 examples", log_likelihood, log_likelihood_hand, (w, b, X, Y),
              (None, None, 0, 0)),
             ("an `if` on each example, 1,000 examples", branchy, branchy_hand, (X, t), (0, None))]
    for name, f, hand, args, in_axes in cases:
        batched = s2s.vmap(f, in_axes=in_axes)
        check(name, batched(*args), hand(*args))

        def loop(*args, f=f, in_axes=in_axes):
            n = next(np.shape(a)[0] for a, ax in zip(args, in_axes) if ax is not None)
            return [f(*[a[i] if ax is not None else a for a, ax in zip(args, in_axes)]) for i in range(n)]
        times = rounds({"s2s": (batched, args), "hand": (hand, args), "loop": (loop, args)}, repeat)
        rows.append({"workload": name, "s2s": statistics.median(times["s2s"]),
                     "hand": statistics.median(times["hand"]), "loop": statistics.median(times["loop"]),
                     "s2s/hand": ratio(times, "s2s", "hand"), "loop/s2s": ratio(times, "loop", "s2s")})
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--clock", choices=["wall", "cpu"], default="wall",
                        help="cpu: time.process_time, what the process itself spent (a shared machine)")
    options = parser.parse_args()
    if options.clock == "cpu":
        CLOCK[0] = time.process_time
    rng = np.random.default_rng(0)
    rows = per_example_gradients(options.repeat, rng) + batched_functions(options.repeat, rng)
    columns = ["workload", "s2s", "hand", "s2s/hand", "loop", "loop/s2s", "jax vmap(grad)", "jax.jit(vmap(grad))"]
    print("| " + " | ".join(columns) + " |")
    print("|" + "---|" * len(columns))
    for row in rows:
        cells = []
        for c in columns:
            v = row.get(c)
            cells.append("—" if v is None else v if isinstance(v, str) else f"**{v:.2f}×**" if "/" in c
                         else shown(v))
        print("| " + " | ".join(cells) + " |")
    print(f"\n(load average {os.getloadavg()[0]:.1f}; medians of {options.repeat} rounds; {options.clock} clock)")


if __name__ == "__main__":
    main()
