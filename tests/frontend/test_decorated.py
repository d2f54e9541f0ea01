"""Functions behind a decorator's `def wrapper(*args, **kwargs)` (functools.wraps): s2s differentiates the
wrapper's own code, called with the parameters its signature names, so what the decorator does to the
value is in the derivative, and it is never read as the function it wraps."""
import functools

import numpy as np
import pytest

import s2s
from s2s.testing.gradcheck import numerical_gradient
from conftest import agrees


def scaled(k):
    def decorate(fn):
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            return k * fn(*args, **kwargs)
        return wrapper
    return decorate


def passthrough(fn):
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        result = fn(*args, **kwargs)
        return result
    return wrapper


@scaled(3.0)
def energy(x, y, *, p=2.0):
    return np.sum(np.sin(x) * y ** p)


@passthrough
def loss(w, X, target):
    return np.mean((X @ w - target) ** 2)


X = np.array([[1.0, 2.0], [0.5, -1.0], [2.0, 0.3]])
T = np.array([0.2, -0.4, 1.0])


@pytest.mark.parametrize("mode", ["reverse", "forward", "auto"])
def test_the_decorator_scales_the_gradient(mode):
    x, y = np.array([0.3, 0.5]), np.array([1.1, 0.7])
    dx, dy = s2s.grad(energy, wrt=(0, 1), mode=mode)(x, y)
    np.testing.assert_allclose(dx, 3 * np.cos(x) * y ** 2)
    np.testing.assert_allclose(dy, 3 * np.sin(x) * 2 * y)
    dy3 = s2s.grad(energy, wrt=1, mode=mode)(x, y=y, p=3.0)
    np.testing.assert_allclose(dy3, 3 * np.sin(x) * 3 * y ** 2)


@pytest.mark.parametrize("mode", ["reverse", "forward", "auto"])
def test_a_passthrough_wrapper_against_central_differences(mode):
    w = np.array([0.3, -0.7])
    got = s2s.grad(loss, mode=mode)(w, X, T)
    np.testing.assert_allclose(got, numerical_gradient(loss, (w, X, T), 0, 1e-6), rtol=1e-6, atol=1e-8)


def test_second_order_through_the_wrapper():
    x, y = np.array([0.3, 0.5]), np.array([1.1, 0.7])
    h = s2s.hessian(lambda a: energy(a, y))(x)
    np.testing.assert_allclose(h, np.diag(-3 * np.sin(x) * y ** 2), atol=1e-12)


def test_the_source_names_the_wrapped_parameters():
    text = s2s.source(energy)
    assert "def energy_grad(x, y, p" in text and "k_cell" in text


def test_star_arguments_without_a_signature_are_refused():
    def total(*xs):
        return xs[0] * xs[1]
    with pytest.raises(s2s.S2SError, match="star-arguments"):
        s2s.grad(total)


def test_a_wrapper_without_functools_wraps_is_refused():
    def plain(fn):
        def wrapper(*args):
            return 2.0 * fn(*args)
        return wrapper
    doubled = plain(np.sin)
    with pytest.raises(s2s.S2SError, match="star-arguments"):
        s2s.grad(doubled)


MODES = ["reverse", "forward", "auto"]


def twice(fn):
    @functools.wraps(fn)
    def wrapper(*a, **k):
        return 2.0 * fn(*a, **k)
    return wrapper


@twice
def doubled_square(x):
    return x ** 2


def calls_decorated(x):
    return doubled_square(x) + 1.0


@pytest.mark.parametrize("mode", MODES)
def test_a_decorated_helper(mode):
    """Outside round 1 (the first outside tester's programs, written in their own style)."""
    assert agrees(calls_decorated, (1.5,), mode=mode) == pytest.approx(6.0)
