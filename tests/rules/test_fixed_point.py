"""Fixed points differentiated by the implicit function theorem, not by unrolling (rules/fixed_points.py):
`s2s.fixed_point(f, a, x0, tol)` and autograd's `fixed_point(f, a, x0, distance, tol)`."""
import math

import numpy as np
import pytest

import s2s
from conftest import code
from s2s.testing import check_grads


def newton(a, x):
    return 0.5 * (x + a / x)


def square_root(a):
    return s2s.fixed_point(newton, a, 1.0, 1e-14)


@pytest.mark.parametrize("a", [2.0, 0.3, 10.0])
def test_square_root_by_newton_matches_the_closed_form(a):
    assert square_root(a) == pytest.approx(math.sqrt(a), rel=1e-14)
    first = 1 / (2 * math.sqrt(a))
    for mode in ("reverse", "forward", "auto"):
        assert abs(s2s.grad(square_root, mode=mode)(a) - first) < 1e-8 * first
    second = -0.25 * a ** -1.5
    assert abs(s2s.grad(s2s.grad(square_root))(a) - second) < 1e-8 * abs(second)                 # forward/forward
    assert abs(s2s.grad(s2s.grad(square_root, mode="reverse"))(a) - second) < 1e-8 * abs(second)  # forward/reverse
    assert abs(s2s.hessian(square_root)(a) - second) < 1e-8 * abs(second)


def test_the_iteration_is_not_unrolled():
    text = code(s2s.source(square_root, 2.0, mode="reverse"))
    assert "fixed_point_adjoint(newton, a, " in text
    assert "_stack" not in text and "while" not in text and "for " not in text
    assert "mode=\"auto\" chose forward mode" in s2s.source(square_root, 2.0)


W = np.array([[0.2, -0.1, 0.05], [0.05, 0.3, -0.2], [0.1, 0.0, -0.25]])


def equilibrium(b, x):
    return np.tanh(W @ x + b)


def deep_equilibrium_loss(b, target):
    x = s2s.fixed_point(equilibrium, b, np.zeros(3), 1e-13)
    return np.sum((x - target) ** 2)


def unrolled_loss(b, target):
    x = np.zeros(3)
    for _ in range(200):
        x = np.tanh(W @ x + b)
    return np.sum((x - target) ** 2)


def test_a_vector_equilibrium_against_central_differences_and_the_unrolled_iteration():
    b, target = np.array([0.3, -0.5, 0.8]), np.array([0.1, 0.2, 0.3])
    check_grads(deep_equilibrium_loss, (b, target), wrt=0)
    for mode in ("reverse", "forward", "auto"):
        np.testing.assert_allclose(s2s.grad(deep_equilibrium_loss, mode=mode)(b, target),
                                   s2s.grad(unrolled_loss)(b, target), rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(s2s.hessian(deep_equilibrium_loss)(b, target), s2s.hessian(unrolled_loss)(b, target),
                               rtol=1e-7, atol=1e-10)


def test_the_start_gets_no_derivative():
    def from_start(x0):
        return s2s.fixed_point(newton, 2.0, x0, 1e-14)
    for mode in ("reverse", "forward"):
        assert s2s.grad(from_start, mode=mode)(1.5) == 0.0


def damped_step(params, x):
    w, b = params
    return np.tanh(w * x + b)


def parameters_in_a_tuple(w, b):
    x = s2s.fixed_point(damped_step, (w, b), 0.0, 1e-14)
    return x ** 2


def test_parameters_given_as_a_tuple():
    check_grads(parameters_in_a_tuple, (0.4, 0.3))


autograd = pytest.importorskip("autograd", reason="autograd is not installed (an optional dependency)")
from autograd.misc.fixed_points import fixed_point as autograd_fixed_point  # noqa: E402


def newton_sqrt_iter(a):
    return lambda x: 0.5 * (x + a / x)


def distance(x, y):
    return np.abs(x - y)


def autograd_sqrt(a):
    return autograd_fixed_point(newton_sqrt_iter, a, 1.0, distance, 1e-12)


@pytest.mark.parametrize("a", [2.0, 5.0])
def test_autograds_fixed_point_with_its_curried_f(a):
    first, second = 1 / (2 * math.sqrt(a)), -0.25 * a ** -1.5
    for mode in ("reverse", "forward", "auto"):
        assert abs(s2s.grad(autograd_sqrt, mode=mode)(a) - first) < 1e-8 * first
    assert s2s.grad(autograd_sqrt)(a) == pytest.approx(autograd.grad(autograd_sqrt)(a), rel=1e-12)
    assert abs(s2s.grad(s2s.grad(autograd_sqrt))(a) - second) < 1e-8 * abs(second)
    assert abs(s2s.hessian(autograd_sqrt)(a) - second) < 1e-8 * abs(second)
    check_grads(autograd_sqrt, (a,))
