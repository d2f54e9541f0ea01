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


# ---- K1: forward mode, hessian and jacobian take one sweep per coordinate; each sweep draws what the first drew

RNG = np.random.default_rng(5)


def noisy_global(w):
    return np.sum((w + 0.1 * np.random.randn(w.size)) ** 2)


def noisy_generator(w):
    return np.sum((w + 0.1 * RNG.normal(size=w.size)) ** 2)


def noisy_argument(w, rng):
    return np.sum((w + 0.1 * rng.normal(size=w.size)) ** 2)


def noisy_cube(w):
    return np.sum((w + np.random.randn(w.size)) ** 3)


W = np.array([0.5, -1.0, 2.0, 0.7])


def _one_draw(draw):
    """The noise the function draws on its one call, from a generator put back as it was."""
    return 0.1 * draw(W.size)


@pytest.mark.parametrize("check", [False, True])
def test_forward_mode_differentiates_one_realization(check):
    np.random.seed(3)
    g = s2s.grad(noisy_global, mode="forward", check=check)(W)
    after = np.random.randn()
    np.random.seed(3)
    noise = _one_draw(np.random.randn)
    np.testing.assert_allclose(g, 2 * (W + noise), rtol=1e-12)
    assert np.random.randn() == after                   # the call drew once, as reverse mode does
    np.random.seed(3)
    value, g = s2s.value_and_grad(noisy_global, mode="forward", check=check)(W)
    assert value == pytest.approx(np.sum((W + noise) ** 2), rel=1e-12)

    state = RNG.bit_generator.state
    g = s2s.grad(noisy_generator, mode="forward", check=check)(W)
    RNG.bit_generator.state = state
    np.testing.assert_allclose(g, 2 * (W + _one_draw(lambda n: RNG.normal(size=n))), rtol=1e-12)

    rng = np.random.default_rng(11)
    g = s2s.grad(noisy_argument, mode="forward", check=check)(W, rng)
    again = np.random.default_rng(11)
    np.testing.assert_allclose(g, 2 * (W + _one_draw(lambda n: again.normal(size=n))), rtol=1e-12)
    assert rng.random() == again.random()               # the caller's generator advanced by one call's draws


def test_hessian_and_jacobian_differentiate_one_realization():
    np.random.seed(4)
    H = s2s.hessian(noisy_cube)(W)
    np.random.seed(4)
    noise = np.random.randn(W.size)
    np.testing.assert_allclose(H, np.diag(6 * (W + noise)), rtol=1e-12)
    for shape in [(4,), (9,)]:                  # forward sweeps (input smaller), reverse rows (output smaller)
        x = np.linspace(-1, 1, shape[0])

        def squared(w):
            return (w[:4] + np.random.randn(4)) ** 2
        np.random.seed(5)
        J = s2s.jacobian(squared)(x)
        np.random.seed(5)
        expected = np.zeros((4, shape[0]))
        expected[:, :4] = np.diag(2 * (x[:4] + np.random.randn(4)))
        np.testing.assert_allclose(J, expected, rtol=1e-12)


# ---- K14: the checking mode runs the function and the derivative on copies: a generator passed in draws once

def gumbel_softmax_loss(logits, rng):
    u = rng.random(logits.shape)
    z = (logits - np.log(-np.log(u))) / 0.5
    e = np.exp(z - np.max(z))
    return np.sum(e / np.sum(e) * np.arange(logits.size))


@pytest.mark.parametrize("make", [np.random.default_rng, np.random.RandomState])
def test_the_checking_mode_does_not_change_what_a_generator_argument_draws(make):
    logits = np.array([0.1, -0.3, 0.8, 0.2])
    without = s2s.grad(gumbel_softmax_loss, check=False)(logits, make(3))
    rng = make(3)
    checked = s2s.grad(gumbel_softmax_loss, check=True)(logits, rng)
    np.testing.assert_allclose(checked, without, rtol=1e-12)
    expected = central(lambda l: gumbel_softmax_loss(l, make(3)), logits)
    np.testing.assert_allclose(checked, expected, rtol=1e-5, atol=1e-8)
    reference = make(3)
    reference.random(4)
    assert rng.random() == reference.random()           # advanced by the one call's draws only
