"""Random draws in differentiated code: each draw is an effect (never merged with another one), forward
mode, the Hessian and the Jacobian differentiate one realization, and the checking mode does not change what a
generator argument draws."""
import numpy as np
import pytest

import s2s
from conftest import central


def central_difference(f, x, *rest, eps=1e-6):
    return (f(x + eps, *rest) - f(x - eps, *rest)) / (2 * eps)


def two_draws(mu):
    r = np.random.default_rng(0)
    a = r.standard_normal(3)
    b = r.standard_normal(3)          # the same call: a second draw, not the first one again
    return np.sum((mu + a) ** 2 * b)


def legacy_draws(mu):
    r = np.random.RandomState(3)
    a = r.rand(4)
    r.rand(4)                         # its numbers are not used, but it moves the generator on
    b = r.rand(4)
    return np.sum(mu * a * b)


def draws_in_a_loop(mu):
    r = np.random.default_rng(1)
    s = 0.0
    for _ in range(4):
        s = s + mu * r.normal()
    return s * s


@pytest.mark.parametrize("mode", ["reverse", "forward", "auto"])
@pytest.mark.parametrize("f", [two_draws, legacy_draws, draws_in_a_loop], ids=lambda f: f.__name__)
def test_draws_from_a_generator_object_are_effects(f, mode, monkeypatch):
    """Outside round 4, G11: two draws of the same call were merged (common subexpressions): a silently wrong
    gradient."""
    monkeypatch.setenv("S2S_CHECK", "0")            # the checking mode would catch it; the default would not
    assert s2s.grad(f, mode=mode)(0.3) == pytest.approx(central_difference(f, 0.3), rel=1e-7)


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
    """Outside round 5, K1: forward mode, hessian and jacobian take one sweep per coordinate; each sweep draws what the
    first drew."""
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
    """Outside round 5, K1: forward mode, hessian and jacobian take one sweep per coordinate; each sweep draws what the
    first drew."""
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


def gumbel_softmax_loss(logits, rng):
    u = rng.random(logits.shape)
    z = (logits - np.log(-np.log(u))) / 0.5
    e = np.exp(z - np.max(z))
    return np.sum(e / np.sum(e) * np.arange(logits.size))


@pytest.mark.parametrize("make", [np.random.default_rng, np.random.RandomState])
def test_the_checking_mode_does_not_change_what_a_generator_argument_draws(make):
    """Outside round 5, K14: the checking mode runs the function and the derivative on copies: a generator passed in
    draws once."""
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
