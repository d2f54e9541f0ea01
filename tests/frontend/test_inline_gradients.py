"""Derivatives called inside a differentiated function: gradient steps, a JAX-style Hessian-vector
product, a gradient made inline; and the derivatives that cannot be differentiated again, refused by what they are."""
import numpy as np
import pytest

import s2s
from conftest import central


def central_difference(f, x, *rest, eps=1e-6):
    return (f(x + eps, *rest) - f(x - eps, *rest)) / (2 * eps)


def quadratic(w):
    return np.sum(w * w)


def regularized(w, lam=0.1):
    return np.sum(np.sin(w)) + lam * w @ w


D_QUADRATIC = s2s.grad(quadratic)


D_REGULARIZED = s2s.grad(regularized)


def two_steps(lr):
    w = np.array([0.1, 0.2])
    w = w - lr * D_QUADRATIC(w)
    w = w - lr * D_QUADRATIC(w)
    return quadratic(w)


def steps_in_a_loop(lr):
    w = np.array([0.1, 0.2])
    for _ in range(3):
        w = w - lr * D_REGULARIZED(w, 0.1)
    return regularized(w)


def steps_with_the_default(lr):
    w = np.array([0.1, 0.2])
    for _ in range(3):
        w = w - lr * D_REGULARIZED(w)
    return regularized(w)


def gradient_dot(w):
    return D_REGULARIZED(w, 0.3) @ np.array([1.0, 0.5, -0.5])


@pytest.mark.parametrize("mode", ["reverse", "forward", "auto"])
@pytest.mark.parametrize("f", [two_steps, steps_in_a_loop, steps_with_the_default], ids=lambda f: f.__name__)
def test_gradient_steps_inside_a_differentiated_function(f, mode):
    """Outside round 3, F16: reverse mode met s2s's own helpers without rules; forward mode evaluated a tangent for
    every argument."""
    assert s2s.grad(f, mode=mode)(0.3) == pytest.approx(central_difference(f, 0.3), rel=1e-6)


@pytest.mark.parametrize("mode", ["reverse", "forward", "auto"])
def test_a_jax_style_hessian_vector_product(mode):
    """Outside round 3, F16's functions: a JAX-style Hessian-vector product."""
    w = np.array([0.2, -0.3, 0.1])
    v = np.array([1.0, 0.5, -0.5])
    expected = s2s.hvp(regularized)(w, 0.3, v)
    assert np.allclose(s2s.grad(gradient_dot, mode=mode)(w), expected, rtol=1e-10)


def nested_jvp(w):
    return s2s.jvp(lambda u: np.sum(np.tanh(u) ** 2), (w,), (np.ones(3),))[1]


def test_second_order_through_an_inner_jvp_is_refused_by_what_it_is():
    """Outside round 5, K20: a second derivative through a derivative s2s makes when the code runs says so, without
    asking the user to register rules for s2s's own functions."""
    with pytest.raises(s2s.NoDerivativeRule, match="second derivative through s2s.api.jvp") as info:
        s2s.jvp(nested_jvp, (np.ones(3),), (np.ones(3),))
    assert "s2s.hvp" in info.value.hint and "@s2s.tangent" not in info.value.hint


MODES = ["reverse", "forward", "auto"]


def check(f, x, mode, *rest, rtol=1e-6, atol=1e-8):
    got = s2s.grad(f, mode=mode)(x, *rest)
    np.testing.assert_allclose(got, central(lambda z: f(z, *rest), x), rtol=rtol, atol=atol)


R = np.array([0.3, -1.2, 0.8, 0.05])


XS = np.ones((4, 3)) * np.arange(3.0)


YS = np.arange(4.0)


def fit_loss(w, X, y):
    return np.mean((X @ w - y) ** 2)


def one_step_lookahead(w):
    g = s2s.grad(fit_loss)(w, XS, YS)                  # made inline, the JAX way
    return fit_loss(w - 0.1 * g, XS, YS)


def inline_gradient_of_a_closure(w):
    c = w[0]
    return np.sum(s2s.grad(lambda u: np.sum(u ** 2) * c)(w))


@pytest.mark.parametrize("mode", MODES)
def test_a_gradient_made_inline(mode):
    """Outside round 5 (ordinary Python that was refused or crashed), gradients made inside the differentiated function
    (K15, K10); an object made inside and called (K3)."""
    check(one_step_lookahead, R[:3], mode)
    with pytest.raises(s2s.UnsupportedSyntax, match="module level") as info:
        s2s.grad(inline_gradient_of_a_closure, mode=mode)(R[:3])
    assert "test_inline_gradients.py:" in str(info.value)


def two_layer(W, v, x):
    return np.sum(np.tanh(x @ W) @ v)


D_BOTH = s2s.grad(two_layer, wrt=(0, 1))


def maml_step(W):
    gW, gv = D_BOTH(W, np.ones(2), np.ones((2, 3)))
    return two_layer(W - 0.1 * gW, np.ones(2), np.ones((2, 3)))


def test_a_gradient_with_respect_to_several_arguments_says_to_make_one_per_argument():
    """Outside round 5 (ordinary Python that was refused or crashed), gradients made inside the differentiated function
    (K15, K10); an object made inside and called (K3)."""
    with pytest.raises(s2s.UnsupportedSyntax) as info:
        s2s.grad(maml_step)(np.ones((3, 2)))
    message = str(info.value)
    assert "test_inline_gradients.py:" in message and "s2s.grad(two_layer, wrt=0)" in message
