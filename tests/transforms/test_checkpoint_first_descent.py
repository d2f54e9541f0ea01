"""Checkpointed `for` loops (issue 29, item 6): the forward sweep is the schedule's first descent, so the loop runs
forward once plus revolve's recomputations (not once more before the schedule starts over), and the steps
reversed from a snapshot are specialized on the loop's shapes like the plain gradient. Gradients against the
plain gradient and central differences.
"""
from __future__ import annotations

import math

import numpy as np
import pytest

import s2s
from s2s.transforms.checkpoint import _revolve

RNG = np.random.default_rng(6)


def euler(A, y0, h, steps):
    y = y0
    for _ in range(steps):
        y = y + h * (np.tanh(A @ y) - 0.1 * y)
    return np.sum(y * y)


def in_a_branch(a, x, steps):
    if a > 0.0:
        for _ in range(steps):
            x = x + 0.1 * math.sin(a * x)
    else:
        x = x * a
    return x * x


def backwards(a, x, n):
    for i in reversed(range(n)):
        x = x + a * math.cos(x + i)
    return x


def strided(a, x, start, stop, stride):
    for i in range(start, stop, stride):
        x = math.tanh(a * x + 0.01 * i)
    return x


def central(f, args, i, eps=1e-6):
    x = args[i]
    if isinstance(x, np.ndarray):
        out = np.zeros_like(x)
        for k in np.ndindex(x.shape):
            up, down = x.copy(), x.copy()
            up[k] += eps
            down[k] -= eps
            out[k] = (f(*args[:i], up, *args[i + 1:]) - f(*args[:i], down, *args[i + 1:])) / (2 * eps)
        return out
    return (f(*args[:i], x + eps, *args[i + 1:]) - f(*args[:i], x - eps, *args[i + 1:])) / (2 * eps)


def test_the_forward_sweep_is_the_first_descent_and_the_reversed_steps_are_specialized():
    A, y0 = RNG.normal(size=(4, 4)) / 3, RNG.normal(size=4)
    text = s2s.source(euler, A, y0, 0.01, 50, wrt=(0, 1), checkpoint=5)
    body = text.split("def euler_grad(")[1]
    assert body.count("_revolve(") == 1 and "while _advancing(task):" in body
    assert "_unbroadcast" not in body and "_matmul_left" not in body and "_shaped_like" not in body
    assert "dA = dA + np.outer(dv" in body            # the step's adjoint, as the plain gradient writes it
    for steps in (0, 1, 2, 5, 6, 37):
        plain = s2s.grad(euler, wrt=(0, 1))(A, y0, 0.01, steps)
        for snapshots in (1, 2, 5):
            checked = s2s.grad(euler, wrt=(0, 1), checkpoint=snapshots)(A, y0, 0.01, steps)
            for p, c in zip(plain, checked):
                np.testing.assert_allclose(c, p, rtol=1e-12, atol=1e-15)
    value, _ = s2s.value_and_grad(euler, wrt=(0, 1), checkpoint=3)(A, y0, 0.01, 20)
    assert value == euler(A, y0, 0.01, 20)


@pytest.mark.parametrize("f, args, wrt", [
    (in_a_branch, (0.7, 0.3, 9), (0, 1)),
    (in_a_branch, (-0.7, 0.3, 9), (0, 1)),
    (backwards, (0.3, 0.2, 11), (0, 1)),
    (strided, (0.8, 0.4, 3, 40, 4), (0, 1)),
    (strided, (0.8, 0.4, 40, 3, -5), (0, 1)),
])
def test_loops_in_branches_backwards_and_strided(f, args, wrt):
    for snapshots in (1, 3):
        got = s2s.grad(f, wrt=wrt, checkpoint=snapshots)(*args)
        plain = s2s.grad(f, wrt=wrt)(*args)
        for g, p, i in zip(got, plain, wrt):
            assert g == pytest.approx(p, rel=1e-12, abs=1e-15)
            assert g == pytest.approx(central(f, args, i), rel=1e-6, abs=1e-9)


def test_the_schedule_recomputes_revolves_count_and_its_first_descent_only_advances():
    """With s snapshots and n steps revolve advances t n - C(s + t, t - 1) steps in all, t the least with
    C(s + t, s) >= n: the forward sweep's first descent is the first n - 1 of them."""
    for n, s in ((1, 1), (2, 1), (10, 1), (10, 3), (200, 4), (1000, 30)):
        schedule, reached, advanced, descent, turns = _revolve(range(n), s, (0,)), None, 0, None, 0
        while True:
            try:
                i, j, state = schedule.send(reached)
            except StopIteration:
                break
            if j is None:
                descent = advanced if descent is None else descent
                turns, reached = turns + 1, None
            else:
                advanced, reached = advanced + j - i, (j,)
                assert state == (i,)                     # each advance starts where the schedule keeps it
        t = next(t for t in range(n + 1) if math.comb(s + t, s) >= n)
        assert turns == n and descent == n - 1
        assert advanced == (t * n - math.comb(s + t, t - 1) if t else 0)
