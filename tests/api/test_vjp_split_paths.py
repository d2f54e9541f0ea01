"""s2s.vjp and s2s.linearize split the derivative in two (s2s/transforms/split.py): the forward sweep, run once, returns
every value the rest reads. A value bound on one path of an `if` only (`v = v[0]` under `if z_isscalar:`, as
statsmodels' `Hampel.rho` ends) is read by the rest only on that path, but the forward part returns it whichever path
ran: it raised UnboundLocalError in the generated code when the other path ran (found differentiating
statsmodels.robust.norms.Hampel.rho with s2s.vjp)."""
import numpy as np
import pytest

import s2s


def piecewise(z):
    a, b, c = 2.0, 4.0, 8.0
    z_isscalar = np.isscalar(z)
    z = np.atleast_1d(z)
    t1 = np.abs(z) <= a
    t2 = (np.abs(z) <= b) * (np.abs(z) > a)
    dt = np.promote_types(z.dtype, "float")         # a dtype known only at run time: the value is saved
    v = np.zeros(z.shape, dtype=dt)
    z = np.abs(z)
    v[t1] = z[t1] ** 2 * 0.5
    v[t2] = a * z[t2] - a ** 2 * 0.5
    if z_isscalar:
        v = v[0]
    return v


def _central(f, z, w, h=1e-6):
    g = np.zeros_like(z)
    for i in range(z.size):
        e = np.zeros_like(z)
        e.flat[i] = h
        g.flat[i] = np.sum(w * (f(z + e) - f(z - e))) / (2 * h)
    return g


@pytest.mark.parametrize("z", [np.array([-3.1, -1.5, 0.4, 2.5, 3.9]), np.array([1.3])])
def test_vjp_of_a_value_bound_on_one_path(z):
    w = np.linspace(0.5, 1.5, z.size)
    y, pullback = s2s.vjp(piecewise, z)
    np.testing.assert_allclose(y, piecewise(z))
    (dz,) = pullback(w)
    np.testing.assert_allclose(dz, _central(piecewise, z, w), rtol=1e-6, atol=1e-8)
    (again,) = pullback(2 * w)                       # the rest runs again on what the forward part saved
    np.testing.assert_allclose(again, 2 * dz)


def test_vjp_on_the_path_that_binds_it():
    y, pullback = s2s.vjp(piecewise, 3.0)
    assert y == piecewise(3.0)
    (dz,) = pullback(1.0)
    assert dz == pytest.approx(2.0)                  # a * sign(z) on the second piece


def test_linearize_of_a_value_bound_on_one_path():
    z = np.array([-3.1, -1.5, 0.4, 2.5])
    y, jvp_fn = s2s.linearize(piecewise, z)
    t = np.array([1.0, -2.0, 0.5, 3.0])
    np.testing.assert_allclose(y, piecewise(z))
    expected = (piecewise(z + 1e-6 * t) - piecewise(z - 1e-6 * t)) / 2e-6
    np.testing.assert_allclose(jvp_fn(t), expected, rtol=1e-6, atol=1e-8)
