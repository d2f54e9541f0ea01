"""Sizes the arguments' shapes decide (s2s/analysis/sizes.py): arrays made from them (`np.zeros(len(x))`) have shapes when
the derivative is made, so their element writes are in place (O(1), no copy) and no shape helper stays; a size
a loop changes is never taken for a constant."""
from __future__ import annotations

import numpy as np
import pytest

import s2s
from conftest import central, agrees


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
    for mode in ("reverse", "forward", "auto"):
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
    # (or the loop is unrolled, s2s/passes/known_sizes.py, each copy's w of its own shape: (2,), then (4,), then (8,))
    text = s2s.source(grows, np.ones(2)).split("_grad(", 1)[1]
    code = "\n".join(line for line in text.splitlines() if not line.strip().startswith("#"))
    assert "_expand(dw, w)" in text or "np.zeros(n_2)" in code and "_expand(dw" not in code, text


MODES = ["reverse", "forward", "auto"]


def scaled_columns(w, X):
    n = X.shape[1]
    scales = np.array([1.0] * n)
    signs = np.array((1.0, -1.0) * (n // 2) + (1.0,) * (n % 2))
    grid = np.zeros(X.shape + (2,))
    return np.sum((X * scales) @ w) + np.sum(signs * w) + np.sum(grid) * np.sum(w) + X.size * w[0] + X.ndim * w[1]


@pytest.mark.parametrize("mode", MODES)
def test_integers_from_shape_size_and_ndim_repeat_and_join_sequences(mode):
    """Outside round 1 (the first outside tester's programs, written in their own style)."""
    w, X = np.array([1.0, 2.0, 3.0]), np.ones((2, 3))
    assert s2s.value_and_grad(scaled_columns)(w, X)[0] == pytest.approx(scaled_columns(w, X))
    np.testing.assert_allclose(agrees(scaled_columns, (w, X), mode=mode), [2 + 1 + 6, 2 - 1 + 2, 2 + 1])


def squares_into_empty(u, alpha):
    n = u.shape[0]
    out = np.empty(n)
    for i in range(n):
        out[i] = alpha * u[i] * u[i]
    s = 0.0
    for i in range(n):
        s += out[i]
    return s


def grid_from_len(u):
    n = len(u)
    grid = np.zeros((n - 1, 2))
    for i in range(n - 1):
        grid[i, 0] = u[i + 1] - u[i]
        grid[i, 1] = u[i] * u[i + 1]
    return np.sum(grid ** 2)


def weighted_by_arange(x):
    w = np.arange(x.size) + 1.0
    acc = np.full(x.size, 0.5)
    for i in range(x.size):
        acc[i] = acc[i] + w[i] * x[i] ** 2
    return np.sum(np.sin(acc)) + np.sum(np.linspace(0.0, 1.0, x.shape[0]) * x)


@pytest.mark.parametrize("fn, wrt", [(squares_into_empty, (0, 1)), (grid_from_len, 0), (weighted_by_arange, 0)])
def test_arrays_sized_by_the_shapes_are_written_in_place(fn, wrt):
    """Outside round 5, H8: arrays made with sizes the shapes decide (np.empty(n) with n = u.shape[0]) have a known
    shape, so an element loop over them accumulates in place (it copied the whole adjoint array every iteration:
    O(n^2))."""
    u = np.linspace(-0.7, 1.3, 9)
    args = (u, 0.3) if fn is squares_into_empty else (u,)
    source = s2s.source(fn, *args, wrt=wrt, mode="reverse")
    assert "setitem(" not in source and "_unbroadcast(" not in source and "_scatter(" not in source
    for mode in MODES:
        got = s2s.grad(fn, wrt=wrt, mode=mode)(*args)
        got = got[0] if isinstance(wrt, tuple) else got
        np.testing.assert_allclose(got, central(lambda v: fn(v, *args[1:]), u), rtol=1e-6, atol=1e-9)
    for n in (4, 12):                   # another length: made anew, and right
        v = np.linspace(0.1, 0.9, n)
        got = s2s.grad(fn, wrt=0)(v, *args[1:])
        np.testing.assert_allclose(got, central(lambda w: fn(w, *args[1:]), v), rtol=1e-6, atol=1e-9)
