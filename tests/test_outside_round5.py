"""Findings of the fifth round of outside testers (H- and K-numbers of their reports) fixed by the lead: each
result against central differences or closed forms, in both modes and to second order where it applies."""
import math

import numpy as np
import pytest

import s2s

MODES = ["reverse", "forward"]


def central(f, x, eps=1e-6):
    """The gradient of a scalar function of one array (or number) by central differences."""
    if np.ndim(x) == 0:
        return (f(x + eps) - f(x - eps)) / (2 * eps)
    x = np.asarray(x, dtype=float)
    g = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        e = np.zeros_like(x)
        e[i] = eps
        g[i] = (f(x + e) - f(x - e)) / (2 * eps)
    return g


# ---- K12: d/dx x ** 0 is 0 at x = 0 too (it was 0 * inf = nan, or ZeroDivisionError for floats)

def polynomial_features(x):
    return np.sum(x[:, None] ** np.arange(4))


def vandermonde(x):
    return np.sum(np.vander(x, 3) @ np.array([0.5, -1.0, 2.0]))


def power(x, n):
    return x ** n


def math_power(x, n):
    return math.pow(x, n) + x


@pytest.mark.parametrize("mode", MODES)
def test_a_zero_power_has_derivative_zero_at_zero(mode):
    x = np.array([0.0, 0.5, -1.5])
    np.testing.assert_allclose(s2s.grad(polynomial_features, mode=mode)(x), 1 + 2 * x + 3 * x ** 2, rtol=1e-12)
    np.testing.assert_allclose(s2s.grad(vandermonde, mode=mode)(x), x - 1.0, rtol=1e-12)
    for n, expected in [(0, 0.0), (1, 1.0), (2.0, 0.0), (3, 0.0)]:
        assert s2s.grad(power, mode=mode)(0.0, n) == expected
        assert s2s.grad(math_power, mode=mode)(0.0, float(n)) == expected + 1.0
    assert s2s.grad(power, mode=mode)(2.0, 3) == pytest.approx(12.0)
    assert s2s.grad(power, wrt=(0, 1), mode=mode)(2.0, 0.0) == pytest.approx((0.0, math.log(2.0)))


def test_a_zero_power_at_zero_to_second_order():
    x = np.array([0.0, 0.5])
    np.testing.assert_allclose(s2s.hessian(polynomial_features)(x), np.diag(2 + 6 * x), rtol=1e-12)
    np.testing.assert_allclose(s2s.hvp(polynomial_features)(x, np.array([1.0, -1.0])), (2 + 6 * x) * [1, -1],
                               rtol=1e-12)
