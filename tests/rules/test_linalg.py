"""Linear algebra at the edges: np.linalg.det at singular matrices (its cofactors, to second order) and in
float32; the tangents of a Cholesky factorization symmetrized as its adjoints are."""
import numpy as np
import pytest

import s2s
from conftest import agrees


MODES = ["reverse", "forward", "auto"]


def det(a):
    return np.linalg.det(a)


def det_squared_plus(a):
    return np.linalg.det(a) ** 2 + np.linalg.det(a) * np.sum(a)


SINGULAR = np.array([[1.0, 2.0], [2.0, 4.0]])


SINGULAR3 = np.array([[1.0, 2.0, 3.0], [2.0, 4.0, 6.0], [1.0, 0.0, 1.0]])


@pytest.mark.parametrize("mode", MODES)
def test_det_gradient_at_singular_matrices(mode):
    """Outside round 2: crashes that became results or located refusals."""
    np.testing.assert_allclose(s2s.grad(det, mode=mode)(SINGULAR), [[4.0, -2.0], [-2.0, 1.0]])
    # the cofactors of SINGULAR3: rows (4, 4, -4), (-2, -2, 2), (0, 0, 0)
    np.testing.assert_allclose(agrees(det, (SINGULAR3,), mode=mode), [[4, 4, -4], [-2, -2, 2], [0, 0, 0]],
                               atol=1e-8)
    np.testing.assert_allclose(s2s.grad(det, mode=mode)(np.diag([1.0, 1.0, 0.0, 0.0])), np.zeros((4, 4)))
    stack = np.stack([SINGULAR, np.array([[2.0, 1.0], [0.5, 3.0]])])
    total = lambda a: np.sum(np.linalg.det(a))                          # noqa: E731
    np.testing.assert_allclose(s2s.grad(total, mode=mode)(stack), [[[4, -2], [-2, 1]], [[3, -0.5], [-1, 2]]])


@pytest.mark.parametrize("a", [SINGULAR, SINGULAR3, np.array([[2.0, 1.0], [0.5, 3.0]])])
def test_det_second_order_at_singular_matrices(a):
    """Outside round 2: crashes that became results or located refusals."""
    h = s2s.hessian(det_squared_plus)(a)
    n = a.size
    eps = 1e-5
    numeric = np.array([((s2s.grad(det_squared_plus)(a + eps * e.reshape(a.shape)) -
                          s2s.grad(det_squared_plus)(a - eps * e.reshape(a.shape))) / (2 * eps)).ravel()
                        for e in np.eye(n)])
    np.testing.assert_allclose(h.reshape(n, n), numeric, atol=1e-6)
    if a.shape == (2, 2):          # det of a 2x2 matrix is a0 a3 - a1 a2: its Hessian is constant
        np.testing.assert_allclose(s2s.hessian(det)(a).reshape(4, 4),
                                   [[0, 0, 0, 1], [0, 0, -1, 0], [0, -1, 0, 0], [1, 0, 0, 0]], atol=1e-12)


@pytest.mark.parametrize("mode", MODES)
def test_det_gradient_keeps_float32(mode):
    """Outside round 2, reasonable code that was refused."""
    for a in (SINGULAR.astype(np.float32), np.eye(3, dtype=np.float32)):
        assert s2s.grad(det, mode=mode)(a).dtype == np.float32


SPD = np.array([[4.0, 1.0, 0.5], [1.0, 3.0, 0.2], [0.5, 0.2, 2.0]])


def cholesky_entries(A):
    L = np.linalg.cholesky(A)
    return L[1, 0] + 2 * L[2, 1] + L[2, 2]


def cholesky_upper(A):
    U = np.linalg.cholesky(A, upper=True)
    return U[0, 1] + 2 * U[1, 2] + U[2, 2] ** 2


def cho_solved(A):
    import scipy.linalg as la
    return np.sum(la.cho_solve(la.cho_factor(A), np.array([1.0, -2.0, 0.5])) ** 2)


def entrywise_central(f, A, eps=1e-6):
    """The derivative entry by entry: NumPy and SciPy read one triangle of A, so it is zero on the other (issue 27,
    item 2: the rules gave a symmetric gradient before)."""
    g = np.zeros_like(A)
    for index in np.ndindex(A.shape):
        E = np.zeros_like(A)
        E[index] = eps
        g[index] = (f(A + E) - f(A - E)) / (2 * eps)
    return g


@pytest.mark.parametrize("f", [cholesky_entries, cholesky_upper, cho_solved], ids=lambda f: f.__name__)
def test_cholesky_tangents_agree_with_its_adjoints(f):
    """Outside round 3, F13: forward mode (and jvp, jacobian) had not read the tangent as the adjoint reads the
    matrix."""
    if f is cho_solved:
        pytest.importorskip("scipy", reason="cho_factor and cho_solve are SciPy's")
    expected = entrywise_central(f, SPD)
    for mode in ("reverse", "forward", "auto"):
        assert np.allclose(s2s.grad(f, mode=mode)(SPD), expected, rtol=1e-6, atol=1e-8), mode
    E01 = np.zeros((3, 3))
    E01[0, 1] = 1.0
    assert s2s.jvp(f, (SPD,), (E01,))[1] == pytest.approx(expected[0, 1], rel=1e-6, abs=1e-9)
