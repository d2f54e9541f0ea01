"""Models as objects (issue 28, item 4): dataclasses (frozen or not), NamedTuples and registered classes are pytrees:
differentiated, batched, and given back as objects of their class with the gradients in their fields (other fields
kept). A method called on an argument object (`layer(x)`, `model.forward(x)`, a list of layers of different classes
called in a loop) is differentiated. Gradients against central differences, in reverse, forward and auto mode."""
import dataclasses
from typing import Callable, NamedTuple

import numpy as np
import pytest

import s2s

rng = np.random.default_rng(28)


@dataclasses.dataclass(frozen=True)
class Linear:
    W: np.ndarray
    b: np.ndarray

    def __call__(self, x):
        return x @ self.W + self.b


@dataclasses.dataclass
class Scale:
    """Another class of layer: the loop over layers dispatches on each one's class."""
    s: np.ndarray
    label: str = "scale"

    def __call__(self, x):
        return x * self.s


@dataclasses.dataclass
class MLP:
    layers: list
    activation: Callable = np.tanh
    depth: int = 2

    def forward(self, x):
        for layer in self.layers[:-1]:
            x = self.activation(layer(x))
        return self.layers[-1](x)


class Pair(NamedTuple):
    W: np.ndarray
    b: np.ndarray

    def apply(self, x):
        return np.tanh(x @ self.W + self.b)


class Quadratic:
    """A class registered by hand (not a dataclass)."""

    def __init__(self, A, c, name):
        self.A, self.c, self.name = A, c, name

    def energy(self, x):
        return x @ self.A @ x + self.c @ x


s2s.register_pytree_node(Quadratic, lambda q: ((q.A, q.c), q.name), lambda name, ch: Quadratic(ch[0], ch[1], name))


def make_mlp():
    return MLP([Linear(rng.normal(size=(3, 4)) / 2, rng.normal(size=4) / 4), Scale(rng.normal(size=4)),
                Linear(rng.normal(size=(4, 2)) / 2, np.zeros(2))])


def mse(model, x, y):
    return np.mean((model.forward(x) - y) ** 2)


def leaves(tree):
    return [leaf for leaf in s2s.tree_leaves(tree) if isinstance(leaf, (np.ndarray, float))]


def central_tree(f, tree, eps=1e-6):
    """The gradient of f at tree (its float leaves) by central differences, as a list of leaves."""
    flat, treedef = s2s.tree_flatten(tree)
    grads = []
    for k, leaf in enumerate(flat):
        if not isinstance(leaf, np.ndarray) or leaf.dtype.kind != "f":
            continue
        g = np.zeros_like(leaf)
        for idx in np.ndindex(leaf.shape):
            for sign in (1, -1):
                moved = leaf.copy()
                moved[idx] += sign * eps
                g[idx] += sign * f(s2s.tree_unflatten(treedef, flat[:k] + [moved] + flat[k + 1:])) / (2 * eps)
        grads.append(g)
    return grads


@pytest.mark.parametrize("mode", ["auto", "reverse"])
def test_a_dataclass_model_with_layers_of_two_classes(mode):
    model, x, y = make_mlp(), rng.normal(size=(5, 3)), rng.normal(size=(5, 2))
    g = s2s.grad(mse, mode=mode)(model, x, y)
    assert type(g) is MLP and type(g.layers[0]) is Linear and type(g.layers[1]) is Scale
    assert g.activation is np.tanh and g.depth == 2 and g.layers[1].label == "scale"     # kept as they were
    expected = central_tree(lambda m: mse(m, x, y), model)
    for a, b in zip(leaves(g), expected):
        np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-8)


def test_forward_mode_along_one_float_of_an_object():
    def f(t, layer, x):
        return np.sum(layer(x * t))
    layer, x = Linear(rng.normal(size=(3, 2)), np.ones(2)), rng.normal(size=3)
    expected = (f(1.0 + 1e-6, layer, x) - f(1.0 - 1e-6, layer, x)) / 2e-6
    for mode in ("forward", "auto", "reverse"):
        assert s2s.grad(f, mode=mode)(1.0, layer, x) == pytest.approx(expected, rel=1e-7)


def test_a_namedtuple_with_a_method():
    def loss(p, x):
        return np.sum(p.apply(x) ** 2)
    p, x = Pair(rng.normal(size=(3, 2)), rng.normal(size=2)), rng.normal(size=(4, 3))
    g = s2s.grad(loss)(p, x)
    assert type(g) is Pair
    for a, b in zip(g, central_tree(lambda q: loss(q, x), p)):
        np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-8)


def test_a_registered_class_and_its_method():
    def energy(q, x):
        return q.energy(x)
    A = rng.normal(size=(3, 3))
    q, x = Quadratic(A, rng.normal(size=3), "well"), rng.normal(size=3)
    g = s2s.grad(energy)(q, x)
    assert type(g) is Quadratic and g.name == "well"
    np.testing.assert_allclose(g.A, np.outer(x, x), rtol=1e-12)
    np.testing.assert_allclose(g.c, x, rtol=1e-12)
    np.testing.assert_allclose(s2s.grad(energy, wrt=1)(q, x), (A + A.T) @ x + q.c, rtol=1e-12)


def test_per_example_gradients_of_an_object_model():
    model, X, Y = make_mlp(), rng.normal(size=(6, 3)), rng.normal(size=(6, 2))
    per_example = s2s.vmap(s2s.grad(mse), in_axes=(None, 0, 0))(model, X, Y)
    assert type(per_example) is MLP and type(per_example.layers[1]) is Scale
    assert per_example.layers[0].W.shape == (6, 3, 4)
    for i in range(6):
        one = s2s.grad(mse)(model, X[i], Y[i])
        for a, b in zip(leaves(per_example), leaves(one)):
            np.testing.assert_allclose(a[i], b, rtol=1e-10, atol=1e-12)


def test_a_batch_of_objects():
    def out(layer, x):
        return layer(x)
    layers = Linear(rng.normal(size=(4, 3, 2)), rng.normal(size=(4, 2)))    # four layers, batched
    x = rng.normal(size=3)
    got = s2s.vmap(out, in_axes=(0, None))(layers, x)
    np.testing.assert_allclose(got, np.stack([x @ layers.W[i] + layers.b[i] for i in range(4)]))


def test_a_function_held_in_a_variable_is_still_refused():
    def f(x):
        fs = [np.sin, np.cos]
        fs.append(np.tan)
        t = 0.0
        for g in fs:
            t = t + g(x)
        return t
    with pytest.raises(s2s.S2SError, match="name statically"):
        s2s.grad(f)(0.3)
