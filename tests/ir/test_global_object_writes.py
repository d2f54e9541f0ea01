"""A method of an object the function names as a global writes `self.last = v`; the function then reads `OPT.last`
by the global's name: the value written, with its derivative (s2s/ir/object_state.py, `_global_object`).

Found by an outside tester, all silent in every mode (the values right, so the checking mode saw nothing): `OPT.obj(x)
+ OPT.last * 2.0` had the gradient of `OPT.obj(x)` alone; a layer of a global list storing `self.out` (`NET[0].out`
after the loop) and a network storing `self.cache = (x, z)` in `forward` (the usual hand-written NumPy MLP) lost the
derivative of what they stored. The read went to the object when the derivative ran, as a constant. The derivative
depends on the global naming that object, and on the list's item being that layer: rebound, it is made anew."""
import numpy as np
import pytest

import s2s
from conftest import central

MODES = ["auto", "reverse", "forward"]


class Opt:
    def __init__(self):
        self.last = None
        self.calls = 0

    def obj(self, x):
        v = np.sum(x ** 2)
        self.last = v
        self.calls += 1
        return v


OPT = Opt()


def obj_plus_last(x):
    return OPT.obj(x) + OPT.last * 2.0          # 3 * sum(x²)


def last_only(x):
    OPT.obj(x)
    return OPT.last * 2.0                       # 2 * sum(x²)


class L:
    def __init__(self, w):
        self.w = w
        self.out = None

    def __call__(self, x):
        self.out = np.tanh(self.w * x)
        return self.out


NET = [L(0.5), L(-1.2)]


def layers_out(x):
    h = x
    for layer in NET:
        h = layer(h)
    return h + NET[0].out * 2.0


class Dense:
    def __init__(self, W):
        self.W = W
        self.cache = None

    def forward(self, x):
        z = x @ self.W
        self.cache = (x, z)
        return np.tanh(z)


class Net:
    def __init__(self):
        self.l1 = Dense(np.array([[0.3, -0.7], [0.5, 0.2]]))
        self.last_loss = None

    def loss(self, x):
        out = self.l1.forward(x)
        self.last_loss = np.sum(out ** 2)
        return self.last_loss


net = Net()


def cached_pair(x):
    net.l1.forward(x)
    x1, z1 = net.l1.cache
    return np.sum(z1 ** 2)


def stored_loss(x):
    net.loss(x)
    return net.last_loss * 10.0


X = np.array([0.3, -0.5])


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("f, x", [(obj_plus_last, X), (last_only, X), (layers_out, 0.7), (cached_pair, X),
                                  (stored_loss, X)],
                         ids=["obj plus last", "last only", "layers of a global list", "a cached pair",
                              "a stored loss"])
def test_a_value_a_method_stored_is_read_with_its_derivative(f, x, mode):
    value, grad = s2s.value_and_grad(f, mode=mode)(x)
    assert value == pytest.approx(f(x))
    np.testing.assert_allclose(grad, central(f, x), rtol=1e-6, atol=1e-9)


def test_the_side_effects_happen_once_per_call():
    OPT.calls = 0
    s2s.grad(last_only, check=False)(X)
    assert OPT.calls == 1


def test_a_method_called_on_a_list_item_then_its_attribute_read():
    """`NET[0](x)` then `NET[0].out`: the layer's `self` was relied on before the look-up that found it was
    known, so the list's item was never guarded: replaced, the derivative kept the old layer (silently)."""
    def g(x):
        NET[0](x)
        return x + NET[0].out * 2.0
    grad = s2s.grad(g)
    assert grad(0.7) == pytest.approx(central(g, 0.7), rel=1e-6)
    first = NET[0]
    try:
        NET[0] = L(2.0)
        assert grad(0.7) == pytest.approx(central(g, 0.7), rel=1e-6)
    finally:
        NET[0] = first


def test_second_order():
    np.testing.assert_allclose(s2s.hessian(obj_plus_last)(X), 6.0 * np.eye(2), atol=1e-12)


@pytest.mark.parametrize("mode", MODES)
def test_rebinding_the_global_or_the_list_item_makes_the_derivative_anew(mode):
    global OPT
    grad = s2s.grad(obj_plus_last, mode=mode)
    np.testing.assert_allclose(grad(X), 6.0 * X)
    kept = OPT

    class Halved(Opt):
        def obj(self, x):
            v = 0.5 * np.sum(x ** 2)
            self.last = v
            return v
    try:
        OPT = Halved()
        np.testing.assert_allclose(grad(X), central(obj_plus_last, X), rtol=1e-6)
        np.testing.assert_allclose(grad(X), 3.0 * X)
    finally:
        OPT = kept
    layers = s2s.grad(layers_out, mode=mode)
    assert layers(0.7) == pytest.approx(central(layers_out, 0.7), rel=1e-6)
    first = NET[0]
    try:
        NET[0] = L(2.0)     # the derivative relied on NET[0] being that layer (its `out`): made anew
        assert layers(0.7) == pytest.approx(central(layers_out, 0.7), rel=1e-6)
    finally:
        NET[0] = first
