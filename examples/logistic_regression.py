"""Logistic regression trained by gradient descent on s2s.grad of the loss (the seed's example).

A synthetic two-class data set; features are normalized first (without it exp
overflows, as the seed warns), and the loss is the numerically stable form of the
mean log-loss: log(1 + exp(z)) - y z, written with np.logaddexp.
Run: python examples/logistic_regression.py [--show-source]
"""
import sys

import numpy as np

import s2s


def loss(w, b, X, y):
    z = X @ w + b
    return np.mean(np.logaddexp(0.0, z) - y * z)


def make_data(n=2000, features=5, seed=0):
    rng = np.random.default_rng(seed)
    y = (rng.random(n) < 0.5).astype(np.float64)
    centers = np.where(y[:, None] > 0, 1.0, -1.0) * rng.uniform(0.5, 1.5, size=features)
    X = centers + rng.normal(scale=1.2, size=(n, features))
    X = X * 40.0 + 300.0                      # raw features on a large scale, as real data often is
    return X, y


def train(X, y, steps=200, rate=0.5):
    X = (X - X.mean(axis=0)) / X.std(axis=0)  # normalize, or exp(z) overflows
    w, b = np.zeros(X.shape[1]), 0.0
    gradient = s2s.grad(loss, wrt=("w", "b"))
    history = []
    for step in range(steps):
        dw, db = gradient(w, b, X, y)
        w, b = w - rate * dw, b - rate * db
        history.append(loss(w, b, X, y))
    accuracy = np.mean(((X @ w + b) > 0) == (y > 0.5))
    return w, b, history, accuracy


if __name__ == "__main__":
    X, y = make_data()
    if "--show-source" in sys.argv:
        print(s2s.source(loss, np.zeros(X.shape[1]), 0.0, X, y, wrt=("w", "b")))
    w, b, history, accuracy = train(X, y)
    for step in (0, 9, 49, 99, 199):
        print(f"step {step + 1:>3}  loss {history[step]:.4f}")
    print(f"training accuracy {accuracy:.3f}")
