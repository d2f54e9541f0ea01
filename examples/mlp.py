"""A two-layer tanh network fitted to a small synthetic regression task with s2s.grad.

The loss falls by more than 10x, and the gradient agrees with central differences.
Run: python examples/mlp.py [--show-source]
"""
import sys

import numpy as np

import s2s


def mse(W1, b1, W2, b2, X, Y):
    hidden = np.tanh(X @ W1 + b1)
    prediction = hidden @ W2 + b2
    return np.mean((prediction - Y) ** 2)


def make_task(n=256, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-2.0, 2.0, size=(n, 2))
    Y = np.stack([np.sin(X[:, 0]) * np.cos(X[:, 1]), 0.5 * X[:, 0] * X[:, 1]], axis=1)
    return X, Y


def init(hidden=32, seed=1):
    rng = np.random.default_rng(seed)
    return [rng.normal(scale=0.5, size=(2, hidden)), np.zeros(hidden),
            rng.normal(scale=0.5, size=(hidden, 2)), np.zeros(2)]


def train(steps=2000, rate=0.05, momentum=0.9):
    X, Y = make_task()
    params = init()
    velocity = [np.zeros_like(p) for p in params]
    gradient = s2s.grad(mse, wrt=(0, 1, 2, 3))
    losses = [mse(*params, X, Y)]
    for _ in range(steps):
        grads = gradient(*params, X, Y)
        velocity = [momentum * v - rate * g for v, g in zip(velocity, grads)]
        params = [p + v for p, v in zip(params, velocity)]
        losses.append(mse(*params, X, Y))
    return params, losses, X, Y


if __name__ == "__main__":
    if "--show-source" in sys.argv:
        X, Y = make_task()
        print(s2s.source(mse, *init(), X, Y, wrt=(0, 1, 2, 3)))
    params, losses, X, Y = train()
    for step in (0, 100, 500, 1000, 2000):
        print(f"step {step:>4}  loss {losses[step]:.5f}")
    print(f"loss fell {losses[0] / losses[-1]:.1f}x")
    s2s.check_grad(mse, *params, X[:16], Y[:16], wrt=(0, 1, 2, 3), rtol=1e-4, atol=1e-7)
    print("gradient agrees with central differences")
