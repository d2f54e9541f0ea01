"""functools.partial made inside the differentiated function: of a function (a keyword
given at the call wins), of np.power bound to a differentiated value, of a lambda."""
import functools

import numpy as np
import pytest

import s2s
from conftest import central


MODES = ["reverse", "forward", "auto"]


def check(f, x, mode, *rest, rtol=1e-6, atol=1e-8):
    got = s2s.grad(f, mode=mode)(x, *rest)
    np.testing.assert_allclose(got, central(lambda z: f(z, *rest), x), rtol=rtol, atol=atol)


def check_hvp(f, x, eps=1e-5):
    """s2s.hvp along a direction against central differences of s2s's gradient."""
    v = np.linspace(-1.0, 1.0, np.size(x))
    gradient = s2s.grad(f)
    expected = (np.asarray(gradient(x + eps * v)) - np.asarray(gradient(x - eps * v))) / (2 * eps)
    np.testing.assert_allclose(s2s.hvp(f)(x, v), expected, rtol=1e-4, atol=1e-6)


R = np.array([0.3, -1.2, 0.8, 0.05])


def act(z, kind="tanh"):
    return np.tanh(z) if kind == "tanh" else np.logaddexp(0.0, z)


def mlp_with_partial(w):
    f = functools.partial(act, kind="softplus")
    h = f(w * 2.0)
    return np.sum(h) + np.sum(f(h, kind="tanh"))      # a keyword given at the call wins, as in Python


def scaled_power(w):
    power_of = functools.partial(np.power, w)          # bound to an active value when made
    t = 0.0
    for k in range(1, 4):
        t = t + np.sum(power_of(float(k))) / k
    return t


def partial_of_lambda(w):
    s = w[0]
    weighted = functools.partial(lambda a, b: a * b * s, 2.0)
    return np.sum(weighted(w))


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("f", [mlp_with_partial, scaled_power, partial_of_lambda])
def test_a_local_partial(mode, f):
    """Outside round 5 (ordinary Python that was refused or crashed), G5: a functools.partial made inside the
    function."""
    check(f, R, mode)


def test_a_local_partial_second_order():
    """Outside round 5 (ordinary Python that was refused or crashed), G5: a functools.partial made inside the
    function."""
    check_hvp(mlp_with_partial, R)
