"""An MLP whose parameters live in a dict and whose layers are separate functions, trained with s2s.grad.

The gradient has the structure of the parameters: a dict with the same keys and shapes.
Run: python examples/params_mlp.py [--show-source]
"""
import sys

import numpy as np

import s2s


def dense(x, W, b):
    return x @ W + b


def forward(params, X):
    hidden = np.tanh(dense(X, params["W1"], params["b1"]))
    return dense(hidden, params["W2"], params["b2"])


def loss(params, X, Y):
    error = forward(params, X) - Y
    return np.mean(error * error)


def init(sizes=(2, 32, 1), seed=0):
    rng = np.random.default_rng(seed)
    return {"W1": rng.normal(scale=0.5, size=sizes[:2]), "b1": np.zeros(sizes[1]),
            "W2": rng.normal(scale=0.5, size=sizes[1:]), "b2": np.zeros(sizes[2])}


def make_task(n=256, seed=1):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-2.0, 2.0, size=(n, 2))
    return X, (np.sin(X[:, :1]) * np.cos(X[:, 1:]))


def train(steps=1500, rate=0.05, momentum=0.9):
    X, Y = make_task()
    params = init()
    velocity = {k: np.zeros_like(v) for k, v in params.items()}
    gradient = s2s.grad(loss)
    losses = [loss(params, X, Y)]
    for _ in range(steps):
        grads = gradient(params, X, Y)
        velocity = {k: momentum * velocity[k] - rate * grads[k] for k in params}
        params = {k: params[k] + velocity[k] for k in params}
        losses.append(loss(params, X, Y))
    return params, losses, X, Y


if __name__ == "__main__":
    if "--show-source" in sys.argv:
        print(s2s.source(loss, init(), *make_task()))
    params, losses, X, Y = train()
    for step in (0, 100, 500, 1500):
        print(f"step {step:>4}  loss {losses[step]:.5f}")
    print(f"loss fell {losses[0] / losses[-1]:.1f}x")
    s2s.check_grad(loss, params, X[:8], Y[:8], rtol=1e-4, atol=1e-7)
    print("gradient agrees with central differences")
