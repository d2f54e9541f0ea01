"""Sizes the arguments' shapes decide (s2s/analysis/sizes.py): arrays made from them (`np.zeros(len(x))`) have shapes when
the derivative is made, so their element writes are in place (O(1), no copy) and no shape helper stays; a size
a loop changes is never taken for a constant."""
from __future__ import annotations

import numpy as np
import pytest

import s2s
from conftest import central


def spring_chain(x):
    n = len(x)
    forces = np.zeros(n)
    for i in range(n - 1):
        ext = x[i + 1] - x[i] - 1.0
        forces[i] += 3.0 * ext
        forces[i + 1] -= 3.0 * ext
    return np.dot(forces, forces)


def matvec_by_hand(A):
    n = A.shape[0]
    y = np.zeros(n)
    for i in range(n):
        for j in range(A.shape[1]):
            y[i] += A[i, j] * (j + 1.0)
    return y @ y


def weighted(u):
    return np.sum(u * np.arange(len(u)))          # an integer array the adjoint is multiplied by


def grows(x):
    v = x.copy()
    total = 0.0
    for i in range(3):
        n = len(v)                  # 2, 4, 8: the loop changes it
        w = np.zeros(n)
        for j in range(n):
            w[j] = v[j] * (j + 1.0)
        total = total + np.sum(w * w)
        v = np.concatenate([v, v])
    return total


@pytest.mark.parametrize("f, x", [(spring_chain, np.array([0.0, 1.2, 2.1, 3.3, 4.0])),
                                  (matvec_by_hand, np.arange(12.0).reshape(3, 4) / 7),
                                  (weighted, np.array([0.3, -0.2, 1.5, 0.7])),
                                  (grows, np.array([0.5, -1.0]))])
def test_gradients_of_arrays_made_from_sizes_match_central_differences(f, x):
    for mode in ("reverse", "forward"):
        got = s2s.grad(f, mode=mode)(x)
        assert got.dtype == np.float64
        np.testing.assert_allclose(got, central(f, x), rtol=1e-7, atol=1e-8)


def test_element_writes_into_an_array_made_from_a_size_are_in_place():
    for f, x in ((spring_chain, np.ones(5)), (matvec_by_hand, np.ones((3, 4)))):
        text = s2s.source(f, x).split("_grad(", 1)[1]
        assert "setitem(" not in text and "_unbroadcast(" not in text, f.__name__
        assert "_matmul_left(" not in text and "_dot_nd_left(" not in text, f.__name__


def test_a_size_a_loop_changes_is_not_a_constant():
    # w = np.zeros(n) with n = len(v), v doubled each iteration: its shape is unknown, never (2,)
    text = s2s.source(grows, np.ones(2)).split("_grad(", 1)[1]
    assert "_expand(dw, w)" in text
