"""scipy.linalg.sqrtm of a real matrix whose square root is complex (issue 27, item 3).

A real matrix with a negative eigenvalue has a complex square root. s2s took sqrtm of a real matrix for real, so
the adjoint of the real argument kept its imaginary part (error 0.33 in the gradient of np.real(sqrtm(A))). sqrtm
is declared complex or real as the values decide (registry.complex_from_real), its rule (and solve_sylvester's,
which second order differentiates) hold for complex values, and the adjoint of a real matrix is its real part.
"""
import numpy as np
import pytest

import s2s

la = pytest.importorskip("scipy.linalg")

A = np.array([[-2.0, 0.3, 0.1], [0.2, 1.5, 0.4], [0.1, 0.3, 2.0]])     # eigenvalues -2.02, 1.33, 2.19
W = np.arange(9.0).reshape(3, 3) / 9.0 - 0.4

BODIES = ["np.sum(np.real(la.sqrtm(A)) * W)", "np.sum(np.imag(la.sqrtm(A)) * W)",
          "np.sum(np.abs(la.sqrtm(A)) ** 2 * W)", "np.real(np.trace(la.sqrtm(A) @ la.sqrtm(A) @ W))",
          "np.sum(np.real(la.sqrtm(A @ A.T)) * W)"]


def _central(f, x, eps=1e-6):
    g = np.zeros_like(x)
    for k in np.ndindex(x.shape):
        e = np.zeros_like(x)
        e[k] = eps
        g[k] = (f(x + e) - f(x - e)) / (2 * eps)
    return g


@pytest.mark.parametrize("body", BODIES)
def test_gradient_of_a_complex_square_root_in_every_mode(body, make_fn):
    assert np.iscomplexobj(la.sqrtm(A))
    f = make_fn(f"def f(A):\n    return {body}\n", namespace={"la": la, "W": W})
    expected = _central(f, A)
    for mode in ("reverse", "forward", "auto"):
        gradient = s2s.grad(f, mode=mode)(A)
        assert gradient.dtype == np.float64, mode
        assert gradient == pytest.approx(expected, rel=1e-6, abs=1e-7), mode
    v = np.full((3, 3), 0.3)
    v[0, 1] = -1.0
    reverse = s2s.grad(f, mode="reverse")
    h = 1e-5
    assert s2s.hvp(f)(A, v) == pytest.approx((reverse(A + h * v) - reverse(A - h * v)) / (2 * h), rel=1e-5,
                                             abs=1e-7)
