"""Rules for lists built and changed in the function (rules/sequences.py): `xs.insert(i, v)`.

`xs.insert(0, x[2] ** 2)` on a list of differentiated values was refused with a message that named s2s's own helper
(`no derivative rule for s2s.frontend.desugar.helpers.list_insert; register one with @s2s.adjoint(...)`; found by
an outside tester): it has its rules now, in both modes and to second order; the place is list.insert's (negative
counts from the end, beyond the end appends)."""
import numpy as np
import pytest

import s2s
from conftest import central


def inserts(x):
    xs = [x[0], 2 * x[1]]
    xs.insert(0, x[2] ** 2)
    xs.insert(-1, np.sin(x[0]))
    xs.insert(10, 3.0 * x[1])
    xs.insert(-10, x[0] * x[2])
    return xs[0] * xs[1] + xs[2] * xs[3] + xs[4] - xs[5] ** 2


def insert_arrays(w):
    rows = [w[0], w[1] * 2.0]
    rows.insert(1, np.tanh(w[2]))
    return np.sum(rows[0] * rows[1]) + np.sum(rows[2] ** 2)


X = np.array([0.3, -0.5, 0.8])
W = np.array([[0.3, -0.5], [0.8, 0.1], [-0.2, 0.6]])


@pytest.mark.parametrize("mode", ["auto", "reverse", "forward"])
@pytest.mark.parametrize("f, x", [(inserts, X), (insert_arrays, W)], ids=["numbers", "arrays"])
def test_insert(f, x, mode):
    np.testing.assert_allclose(s2s.grad(f, mode=mode)(x), central(f, x), rtol=1e-6, atol=1e-9)


def test_insert_second_order():
    hessian = s2s.hessian(inserts)(X)
    by_differences = np.array([central(lambda x: s2s.grad(inserts)(x)[i], X) for i in range(3)])
    np.testing.assert_allclose(hessian, by_differences, rtol=1e-5, atol=1e-7)
