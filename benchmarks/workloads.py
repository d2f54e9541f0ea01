"""The benchmark workloads: each a primal function, arguments, a hand-written gradient, and the same
gradient written for the peers (autograd, jax, torch) when they are installed.

Every gradient function takes the primal's arguments and returns the gradients with respect to
`wrt`, as a tuple when there are several.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Callable

import numpy as np


@dataclass
class Workload:
    name: str
    kind: str                           # "scalar" or "array": which targets apply
    primal: Callable
    args: tuple
    wrt: tuple
    hand: Callable
    peers: dict[str, Callable] = field(default_factory=dict)
    careful: Callable | None = None     # a second hand-written gradient, written with care for speed


# ---------------------------------------------------------------- the seed function

def seed(x1, x2):
    return math.log(x1) + x1 * x2 - math.sin(x2)


def seed_hand(x1, x2):
    return 1.0 / x1 + x2, x1 - math.cos(x2)


# ---------------------------------------------------------------- a scalar while loop

def while_loop(x):
    y = x
    i = 0
    while i < 50:
        y = y * 0.99 + math.sin(y) * 0.01
        i += 1
    return y


def while_loop_hand(x):
    ys = []
    y = x
    for _ in range(50):
        ys.append(y)
        y = y * 0.99 + math.sin(y) * 0.01
    g = 1.0
    for y in reversed(ys):
        g = g * (0.99 + 0.01 * math.cos(y))
    return g


# ---------------------------------------------------------------- Horner's rule

def horner(x, coefficients):
    y = 0.0
    for c in coefficients:
        y = y * x + c
    return y


def horner_hand(x, coefficients):
    y, dy = 0.0, 0.0
    for c in coefficients:
        dy = dy * x + y
        y = y * x + c
    return dy


# ---------------------------------------------------------------- logistic regression

def logistic(w, b, X, y):
    z = X @ w + b
    return np.mean(np.logaddexp(0.0, z) - y * z)


def logistic_hand(w, b, X, y):
    z = X @ w + b
    r = (1.0 / (1.0 + np.exp(-z)) - y) / len(y)
    return X.T @ r, np.sum(r)


# ---------------------------------------------------------------- a two-layer MLP

def mlp(W1, b1, W2, b2, X, Y):
    hidden = np.tanh(X @ W1 + b1)
    out = hidden @ W2 + b2
    return np.mean((out - Y) ** 2)


def mlp_hand(W1, b1, W2, b2, X, Y):
    hidden = np.tanh(X @ W1 + b1)
    out = hidden @ W2 + b2
    dout = 2.0 * (out - Y) / out.size
    dhidden = dout @ W2.T * (1.0 - hidden * hidden)
    return X.T @ dhidden, dhidden.sum(axis=0), hidden.T @ dout, dout.sum(axis=0)


# ---------------------------------------------------------------- a tanh RNN written as a loop

def rnn(Wh, Wx, b, xs, h0):
    h = h0
    for x in xs:
        h = np.tanh(Wh @ h + Wx @ x + b)
    return np.sum(h * h)


def rnn_hand(Wh, Wx, b, xs, h0):
    hs = [h0]
    for x in xs:
        hs.append(np.tanh(Wh @ hs[-1] + Wx @ x + b))
    dWh, dWx, db = np.zeros_like(Wh), np.zeros_like(Wx), np.zeros_like(b)
    dh = 2.0 * hs[-1]
    for t in range(len(xs) - 1, -1, -1):
        da = dh * (1.0 - hs[t + 1] ** 2)
        dWh += np.outer(da, hs[t])
        dWx += np.outer(da, xs[t])
        db += da
        dh = Wh.T @ da
    return dWh, dWx, db


def rnn_careful(Wh, Wx, b, xs, h0):
    """The RNN's gradient written with care: one array of hidden states, the step cotangents in a (T, H) array,
    and one matrix product per weight after the loop."""
    T, H = len(xs), len(h0)
    hs = np.empty((T + 1, H))
    hs[0] = h = h0
    for t in range(T):
        h = np.tanh(Wh @ h + Wx @ xs[t] + b)
        hs[t + 1] = h
    G = np.empty((T, H))
    dh = 2.0 * h
    WhT = Wh.T
    for t in range(T - 1, -1, -1):
        h = hs[t + 1]
        da = dh * (1.0 - h * h)
        G[t] = da
        dh = WhT @ da
    return G.T @ hs[:-1], G.T @ xs, G.sum(axis=0)


# ---------------------------------------------------------------- loops over array elements

def running_sum(x):
    acc = 0.0
    out = np.zeros_like(x)
    for i in range(len(x)):
        acc = acc + x[i] * x[i]
        out[i] = acc
    return np.sum(out)


def running_sum_hand(x):
    n = len(x)
    return 2.0 * (n - np.arange(n)) * x


def stencil(u):
    total = 0.0
    for i in range(1, len(u) - 1):
        d = u[i - 1] - 2.0 * u[i] + u[i + 1]
        total = total + d * d
    return total


def stencil_hand(u):
    d = u[:-2] - 2.0 * u[1:-1] + u[2:]
    g = np.zeros_like(u)
    g[:-2] += 2.0 * d
    g[1:-1] -= 4.0 * d
    g[2:] += 2.0 * d
    return g


def matvec(A, x):
    total = 0.0
    for i in range(A.shape[0]):
        s = 0.0
        for j in range(A.shape[1]):
            s = s + A[i, j] * x[j]
        total = total + s * s
    return total


def matvec_hand(A, x):
    y = A @ x
    return 2.0 * np.outer(y, x), 2.0 * (A.T @ y)


# ---------------------------------------------------------------- the list

def workloads(quick: bool) -> list[Workload]:
    rng = np.random.default_rng(0)
    items = [
        Workload("seed ln(x1)+x1*x2-sin(x2)", "scalar", seed, (2.0, 5.0), (0, 1), seed_hand),
        Workload("while loop, 50 iterations", "scalar", while_loop, (0.7,), (0,), while_loop_hand),
        Workload("Horner, 200 coefficients", "scalar", horner, (0.9, list(rng.normal(size=200))), (0,),
                 horner_hand),
    ]
    for n in ((100, 10_000, 100_000) if quick else (100, 10_000, 100_000, 1_000_000)):
        X = rng.normal(size=(n, 20))
        y = (rng.random(n) < 0.5).astype(np.float64)
        items.append(Workload(f"logistic N={n:,}", "array", logistic, (rng.normal(size=20) * 0.1, 0.1, X, y),
                              (0, 1), logistic_hand))
    items.append(Workload("MLP 64-128-10, batch 256", "array", mlp,
                          (rng.normal(size=(64, 128)) * 0.1, np.zeros(128), rng.normal(size=(128, 10)) * 0.1,
                           np.zeros(10), rng.normal(size=(256, 64)), rng.normal(size=(256, 10))),
                          (0, 1, 2, 3), mlp_hand))
    items.append(Workload("RNN tanh, 100 steps, hidden 32", "array", rnn,
                          (rng.normal(size=(32, 32)) * 0.1, rng.normal(size=(32, 16)) * 0.1, np.zeros(32),
                           rng.normal(size=(100, 16)), np.zeros(32)), (0, 1, 2), rnn_hand, careful=rnn_careful))
    n = 2_000 if quick else 8_000
    items.append(Workload(f"element loop: running sum, n={n:,}", "loop", running_sum, (rng.normal(size=n),), (0,),
                          running_sum_hand))
    items.append(Workload(f"element loop: stencil, n={n:,}", "loop", stencil, (rng.normal(size=n),), (0,),
                          stencil_hand))
    m = 30 if quick else 60
    items.append(Workload(f"element loop: matvec {m}x{m}", "loop", matvec,
                          (rng.normal(size=(m, m)), rng.normal(size=m)), (0, 1), matvec_hand))
    for workload in items:
        add_peers(workload)
    return items


def add_peers(workload: Workload) -> None:
    for name, make in (("autograd", _autograd), ("jax", _jax), ("jax jit", _jax_jit), ("torch", _torch)):
        try:
            fn = make(workload)
        except (ImportError, KeyError):         # not installed, or no version of this workload for the peer
            continue
        if fn is not None:
            workload.peers[name] = fn


# ---------------------------------------------------------------- the peers' versions

def _numpy_like_versions(np_):
    """The primal functions written against a NumPy-like module (autograd.numpy, jax.numpy)."""
    def seed_(x1, x2):
        return np_.log(x1) + x1 * x2 - np_.sin(x2)

    def while_loop_(x):
        y = x
        i = 0
        while i < 50:
            y = y * 0.99 + np_.sin(y) * 0.01
            i += 1
        return y

    def logistic_(w, b, X, y):
        z = X @ w + b
        return np_.mean(np_.logaddexp(0.0, z) - y * z)

    def mlp_(W1, b1, W2, b2, X, Y):
        hidden = np_.tanh(X @ W1 + b1)
        return np_.mean((hidden @ W2 + b2 - Y) ** 2)

    def rnn_(Wh, Wx, b, xs, h0):
        h = h0
        for x in xs:
            h = np_.tanh(Wh @ h + Wx @ x + b)
        return np_.sum(h * h)

    return {seed: seed_, while_loop: while_loop_, horner: horner, logistic: logistic_, mlp: mlp_, rnn: rnn_}


def _autograd(workload: Workload) -> Callable | None:
    import autograd
    import autograd.numpy as anp
    fn = _numpy_like_versions(anp)[workload.primal]
    gradient = autograd.grad(fn, workload.wrt if len(workload.wrt) > 1 else workload.wrt[0])
    return gradient


def _jax_gradient(workload: Workload, jit: bool) -> Callable | None:
    import jax
    import jax.numpy as jnp
    jax.config.update("jax_enable_x64", True)
    fn = _numpy_like_versions(jnp)[workload.primal]
    gradient = jax.grad(fn, workload.wrt if len(workload.wrt) > 1 else workload.wrt[0])
    if jit:
        static = tuple(i for i, a in enumerate(workload.args) if isinstance(a, list))
        gradient = jax.jit(gradient, static_argnums=static) if not static else None
        if gradient is None:        # a Python list of coefficients: jit over it as an array instead
            return None
    return gradient


def _jax(workload: Workload) -> Callable | None:
    return _jax_gradient(workload, jit=False)


def _jax_jit(workload: Workload) -> Callable | None:
    return _jax_gradient(workload, jit=True)


def _torch(workload: Workload) -> Callable | None:
    import torch
    versions = {seed: lambda x1, x2: torch.log(x1) + x1 * x2 - torch.sin(x2),
                while_loop: _torch_while, horner: horner,
                logistic: lambda w, b, X, y: torch.mean(torch.logaddexp(torch.zeros((), dtype=X.dtype), X @ w + b)
                                                        - y * (X @ w + b)),
                mlp: lambda W1, b1, W2, b2, X, Y: torch.mean((torch.tanh(X @ W1 + b1) @ W2 + b2 - Y) ** 2),
                rnn: _torch_rnn}
    fn = versions[workload.primal]
    wrt = workload.wrt

    def gradient(*args):
        tensors = [torch.tensor(a, dtype=torch.float64, requires_grad=i in wrt) if not isinstance(a, list) else a
                   for i, a in enumerate(args)]
        out = fn(*tensors)
        grads = torch.autograd.grad(out, [tensors[i] for i in wrt])
        results = tuple(g.numpy() if g.dim() else g.item() for g in grads)
        return results if len(results) > 1 else results[0]
    return gradient


def _torch_while(x):
    import torch
    y = x
    i = 0
    while i < 50:
        y = y * 0.99 + torch.sin(y) * 0.01
        i += 1
    return y


def _torch_rnn(Wh, Wx, b, xs, h0):
    import torch
    h = h0
    for x in xs:
        h = torch.tanh(Wh @ h + Wx @ x + b)
    return torch.sum(h * h)
