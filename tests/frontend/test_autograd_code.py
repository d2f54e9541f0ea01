"""Code written for autograd runs unchanged (issue 25, item 5)."""
import numpy as onp
import pytest

import s2s

autograd = pytest.importorskip("autograd")
import autograd.numpy as np            # noqa: E402
import autograd.scipy.stats as st      # noqa: E402
from autograd import elementwise_grad, grad      # noqa: E402
from autograd.builtins import tuple as atuple    # noqa: E402
from autograd.extend import defvjp, primitive    # noqa: E402

MODES = ("reverse", "forward", "auto")


def loglik(params, x):
    mu, log_sigma = params[0], params[1]
    return np.sum(st.norm.logpdf(x, mu, np.exp(log_sigma)))


def cumulative_hazard(params, t):
    lam, rho = params[0], params[1]
    return (t / lam) ** rho


def log_hazard(params, t):
    hz = elementwise_grad(cumulative_hazard, 1)(params, t)
    return np.sum(np.log(hz))


def with_inner_grad(w):
    g = grad(lambda_free)(w)
    return np.sum(g ** 2)


def lambda_free(w):
    return np.sum(np.sin(w) * w)


def pair(x):
    a, b = atuple((np.tanh(x), np.cos(x)))
    return np.sum(a * b)


@primitive
def clipped_exp(x):
    return np.exp(np.clip(x, -50, 50))


defvjp(clipped_exp, lambda ans, x: lambda g: g * ans)


def uses_primitive(x):
    return np.sum(clipped_exp(x))


@pytest.mark.parametrize("mode", MODES)
def test_autograd_numpy_and_scipy_are_numpy_and_scipy(mode):
    params = onp.array([0.3, -0.2])
    x = onp.array([0.1, 0.9, -0.4])
    assert onp.allclose(s2s.grad(loglik, mode=mode)(params, x), autograd.grad(loglik)(params, x))
    y = onp.array([0.2, 0.7])
    assert onp.allclose(s2s.grad(pair, mode=mode)(y), autograd.grad(pair)(y))


def test_second_order_against_autograd():
    params = onp.array([0.3, -0.2])
    x = onp.array([0.1, 0.9, -0.4])
    assert onp.allclose(s2s.hessian(loglik)(params, x), autograd.hessian(loglik)(params, x))


def test_autograd_derivatives_called_inside():
    params = onp.array([2.0, 1.5])
    t = onp.array([0.5, 1.2, 3.0])
    for mode in MODES:
        assert onp.allclose(s2s.grad(log_hazard, mode=mode)(params, t), autograd.grad(log_hazard)(params, t))
    w = onp.array([0.3, -0.8])
    assert onp.allclose(s2s.grad(with_inner_grad)(w), autograd.grad(with_inner_grad)(w))


def test_a_users_primitive_takes_its_defvjp_rule():
    x = onp.array([0.1, 0.2])
    # (issue 26: autograd's registry gives the rule; forward mode transposes it, rules/autograd_primitives.py)
    for mode in ("reverse", "forward", "auto"):
        assert onp.allclose(s2s.grad(uses_primitive, mode=mode)(x), onp.exp(x))
