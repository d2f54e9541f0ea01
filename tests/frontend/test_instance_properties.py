"""A property of an object whose class is known when the derivative is made (built in the function, or `self` of
its methods) is its getter's or setter's call (s2s/frontend/desugar/instance_properties.py).

Found by an outside tester: `layer = Layer(W, 0.5); np.sum(layer.effW ** 2)` with `effW` a property computing from
`self.W` had gradient 0 in every mode, with no error (the getter ran when the derivative ran, its result a constant);
a property's setter on such an object was bypassed (a wrong value and gradient 0 without the checking mode).
A descriptor s2s does not follow (`functools.cached_property`) is refused where it is read."""
import functools

import numpy as np
import pytest

import s2s
from conftest import central

MODES = ["auto", "reverse", "forward"]


class Layer:
    def __init__(self, W, scale):
        self.W = W
        self.scale = scale

    @property
    def effW(self):
        return self.W * self.scale

    @property
    def doubled(self):              # a property reading a property
        return self.effW * 2.0

    def energy(self):               # a method reading a property of self
        return np.sum(self.effW ** 2)


def layer_property(W):
    layer = Layer(W, 0.5)
    return np.sum(layer.effW ** 2)


def property_of_property(W):
    layer = Layer(W, 0.5)
    return np.sum(np.sin(layer.doubled))


def method_reads_property(W):
    return Layer(W, 1.5).energy() + np.sum(W)


class Setter:
    def __init__(self, a):
        self.a = a                  # through the setter, in __init__

    @property
    def a(self):
        return self._a

    @a.setter
    def a(self, v):
        self._a = v * 2.0


def set_then_read(x):
    o = Setter(x)
    o.a = o.a + 1.0
    return o.a ** 2


def augmented_set(x):
    o = Setter(x)
    o.a += x
    return o.a * x


class Cached:
    def __init__(self, x):
        self.x = x

    @functools.cached_property
    def sq(self):
        return self.x ** 2


def cached(x):
    o = Cached(x)
    return o.sq * 3.0


W = np.array([1.0, -2.0, 3.0])


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("f, x", [(layer_property, W), (property_of_property, W), (method_reads_property, W),
                                  (set_then_read, 0.6), (augmented_set, 0.6)],
                         ids=["property", "property of a property", "method reads property", "setter",
                              "augmented setter"])
def test_a_property_carries_the_derivative(f, x, mode):
    value, grad = s2s.value_and_grad(f, mode=mode)(x)
    assert value == pytest.approx(f(x))
    np.testing.assert_allclose(grad, central(f, x), rtol=1e-6, atol=1e-8)


def test_second_order_through_a_property():
    x = 0.7
    second = s2s.grad(s2s.grad(set_then_read))(x)
    # set_then_read(x) = (2 * (2x + 1)) ** 2 = 16x² + 16x + 4
    assert second == pytest.approx(32.0)
    hessian = s2s.hessian(layer_property)(W)
    np.testing.assert_allclose(hessian, 0.5 * np.eye(3), atol=1e-12)


@pytest.mark.parametrize("mode", MODES)
def test_a_cached_property_is_refused_where_it_is_read(mode):
    with pytest.raises(s2s.S2SError, match="cached_property") as raised:
        s2s.grad(cached, mode=mode)(1.2)
    assert "test_instance_properties.py:" in str(raised.value)
