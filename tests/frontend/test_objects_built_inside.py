"""Models as objects (issue 28): objects of the user's plain classes, written as PyTorch-like NumPy code is.

(A) built inside the differentiated function from differentiated values, then called: followed through their
attributes (s2s/frontend/desugar/instances.py opens the construction; s2s/ir/object_state.py forwards the
attributes of an object the call made; s2s/ir/lower_objects.py unrolls a loop over a list of them), in reverse,
forward and auto mode and to second order; what s2s cannot model (the object given whole to an operation or kept
by a library) refused with the place.
(B) passed as an argument, not differentiated: its methods named like NumPy's functions are its class's (the
derivative keyed on the class)."""
import numpy as np
import pytest

import s2s
from conftest import agrees, central

MODES = ["reverse", "forward", "auto"]
RNG = np.random.RandomState(0)
W0 = RNG.randn(3, 3) * 0.5
W1 = RNG.randn(3, 3) * 0.5
X = np.array([0.3, -0.2, 0.5])
XS = RNG.randn(4, 3)
V = RNG.randn(3, 3)


class Layer:
    def __init__(self, W):
        self.W = W
        self.n = W.shape[0]             # computed in __init__

    def __call__(self, x):
        return np.tanh(self.W @ x) / self.n


def two_layers(W, x):
    l1 = Layer(W)
    l2 = Layer(W.T)
    return np.sum(l2(l1(x)))


class Stack:
    def __init__(self, Wa, Wb):
        self.layers = [Layer(Wa), Layer(Wb)]

    def __call__(self, x):
        for layer in self.layers:
            x = layer(x)
        return x


def stacked(W, x):
    return np.sum(Stack(W, 2.0 * W)(x) ** 2)


class Encoder:
    def __init__(self, Wa, Wb):
        self.first = Layer(Wa)
        self.second = Layer(Wb)

    def hidden(self, x):
        return self.first(x)

    def mean(self, x):                   # named like NumPy's function, calling another method
        return np.mean(self.second(self.hidden(x)))


def encoded(W, x):
    return Encoder(W, W * W).mean(x)


class Cell:
    def __init__(self, W, size):
        self.W = W
        self.h = np.zeros(size)

    def step(self, x):
        self.h = np.tanh(self.W @ self.h + x)       # rebound by a method
        return self.h


def recurrent(W, xs):
    cell = Cell(W, xs.shape[1])
    for t in range(xs.shape[0]):
        cell.step(xs[t])
    return np.sum(cell.h ** 2)


CASES = [(two_layers, (W0, X)), (stacked, (W0, X)), (encoded, (W0, X)), (recurrent, (W0, XS))]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("f, args", CASES, ids=[f.__name__ for f, _ in CASES])
def test_objects_built_inside_from_differentiated_values(f, args, mode):
    got = agrees(f, args, mode=mode)
    np.testing.assert_allclose(got, central(lambda w: f(w, *args[1:]), args[0]), rtol=1e-6, atol=1e-9)


@pytest.mark.parametrize("f, args", CASES, ids=[f.__name__ for f, _ in CASES])
def test_objects_built_inside_second_order(f, args):
    got = s2s.hvp(f)(*args, V)
    grad = s2s.grad(f)
    eps = 1e-5
    expected = (grad(args[0] + eps * V, *args[1:]) - grad(args[0] - eps * V, *args[1:])) / (2 * eps)
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-8)


def test_the_generated_code_builds_the_objects_and_reads_no_vjp():
    """The object is made in the derivative as Python makes it, its methods inlined (no run-time vjp)."""
    text = s2s.source(stacked, W0, X, mode="reverse")
    assert "new_object(Stack)" in text and "new_object(Layer)" in text and "method_call" not in text


KEPT = []


class Kept:
    def __init__(self, W):
        self.W = W
        KEPT.append(self)                # kept by a global list

    def __call__(self, x):
        return np.tanh(self.W @ x)


class Vec:
    def __init__(self, v):
        self.v = v

    def __mul__(self, other):
        return Vec(self.v * other.v)

    def total(self):
        return np.sum(self.v)


def kept_by_init(W, x):
    return np.sum(Kept(W)(x))


def stored_in_a_global(W, x):
    layer = Layer(W)
    KEPT.append(layer)
    return np.sum(layer(x))


def given_whole_to_an_operator(w):
    a = Vec(w)
    return (a * a).total()


@pytest.mark.parametrize("mode", MODES)
def test_objects_that_escape_are_refused_with_the_place(mode):
    for f, line in ((kept_by_init, "KEPT.append(self)"), (stored_in_a_global, "KEPT.append(layer)")):
        with pytest.raises(s2s.S2SError) as info:
            s2s.grad(f, mode=mode)(W0, X)
        assert "test_objects_built_inside.py:" in str(info.value) and line in str(info.value)
    assert KEPT == []


@pytest.mark.parametrize("mode", MODES)
def test_an_object_given_to_an_operator_is_followed_through_its_method(mode):
    """(Was refused: given to an operator, the object was made as Python makes it.) `a * a` is Vec.__mul__(a, a),
    the call Python makes (s2s/frontend/desugar/operators.py): followed as the object's own method."""
    expected = central(given_whole_to_an_operator, X)
    np.testing.assert_allclose(s2s.grad(given_whole_to_an_operator, mode=mode)(X), expected, rtol=1e-7)
    np.testing.assert_allclose(s2s.grad(given_whole_to_an_operator, mode=mode)(X), 2 * X, rtol=1e-12)


# ---------------------------------------------------------------- (B) an argument of a plain class

class Model:
    def __init__(self, k):
        self.k = k

    def mean(self, x):                   # numpy.mean's name: the class's method all the same
        return self.k * np.sum(x ** 2)

    def sum(self, x):
        return self.mean(x) + np.sum(x)


class Other:
    def mean(self, x):
        return np.sum(np.sin(x))

    def sum(self, x):
        return np.sum(x ** 3)


def loss(model, x):
    return model.mean(x) + model.sum(x)


def sum_then_mean(model, x):
    return model.sum(x) + model.mean(x)


class Residual:
    def __init__(self, n):
        self.inner = Layer(np.eye(n) * 0.7)

    def block(self, h):                  # numpy.block's name
        return h + np.tanh(self.inner(h))

    def forward(self, x):
        return self.block(self.block(x))


@pytest.mark.parametrize("mode", MODES)
def test_a_method_named_like_numpy_is_the_argument_classs(mode):
    for model in (Model(2.0), Other(), Model(-0.5)):       # a derivative per class, guarded by the argument's type
        got = s2s.grad(loss, wrt=1, mode=mode)(model, X)
        np.testing.assert_allclose(got, central(lambda v: loss(model, v), X), rtol=1e-6, atol=1e-9)


@pytest.mark.parametrize("mode", MODES)
def test_an_attribute_that_shadows_a_method_is_what_python_calls(mode):
    """`model.mean = f` on the object: Python calls the object's own attribute, not the class's method; the object is
    then not read by its class (a derivative made for the class, guarded by the type alone, would call the class's)."""
    plain, shadowed = Model(2.0), Model(2.0)
    shadowed.mean = lambda v: np.sum(np.cos(v))
    for model in (plain, shadowed, plain):
        got = s2s.grad(sum_then_mean, wrt=1, mode=mode)(model, X)
        np.testing.assert_allclose(got, central(lambda v: sum_then_mean(model, v), X), rtol=1e-6, atol=1e-9)
    for model in (shadowed, plain):
        got = s2s.grad(loss, wrt=1, mode=mode)(model, X)
        np.testing.assert_allclose(got, central(lambda v: loss(model, v), X), rtol=1e-6, atol=1e-9)


class Shadowing:
    """A class whose __init__ may store an attribute named as one of its methods: Python calls the attribute."""
    def __init__(self, k, alt):
        self.k = k
        if alt:
            self.mean = lambda v: np.sum(np.cos(v))

    def mean(self, x):
        return self.k * np.sum(x ** 2)


def built_with_a_shadowing_attribute(x, alt=True):
    m = Shadowing(2.0, alt)
    return m.mean(x)


@pytest.mark.parametrize("mode", MODES)
def test_an_object_built_inside_whose_init_shadows_a_method(mode):
    """Such an object is made and run as Python makes and runs it (it gave the class's method's gradient)."""
    for alt in (True, False):
        got = s2s.grad(built_with_a_shadowing_attribute, wrt=0, mode=mode)(X, alt)
        np.testing.assert_allclose(got, central(lambda v: built_with_a_shadowing_attribute(v, alt), X),
                                   rtol=1e-6, atol=1e-9)


def test_a_bound_method_of_a_plain_class_through_vjp():
    r = Residual(3)
    value, pullback = s2s.vjp(Residual.forward, r, X, wrt=(1,))
    np.testing.assert_allclose(value, r.forward(X))
    (dx,) = pullback(np.ones(3))
    np.testing.assert_allclose(dx, central(lambda v: np.sum(r.forward(v)), X), rtol=1e-6, atol=1e-9)


# ---------------------------------------------------------------- objects made in a loop, or in a branch

def made_in_a_loop(W, x):
    y = x
    for k in range(3):
        layer = Layer(W * (k + 1))        # a new object each iteration: nothing of it carried by the loop
        y = layer(y)
    return np.sum(y)


def chosen_in_a_branch(W, x):
    if x[0] > 0:
        layer = Layer(W)
    else:
        layer = Layer(2.0 * W)
    return np.sum(layer(x))


@pytest.mark.parametrize("mode", MODES)
def test_an_object_made_in_each_iteration(mode):
    got = agrees(made_in_a_loop, (W0, X), mode=mode)
    np.testing.assert_allclose(got, central(lambda w: made_in_a_loop(w, X), W0), rtol=1e-6, atol=1e-9)


@pytest.mark.parametrize("mode", MODES)
def test_an_object_that_depends_on_a_branch_is_refused_where_it_is_read(mode):
    with pytest.raises(s2s.S2SError) as info:
        s2s.grad(chosen_in_a_branch, mode=mode)(W0, X)
    assert "test_objects_built_inside.py:" in str(info.value) and "return np.sum(layer(x))" in str(info.value)


class Recorder:
    """A plain class whose method changes a list it holds (never opened): an argument's `sum` is still its own."""
    def __init__(self):
        self.seen = []

    def sum(self, x):
        return 3.0 * np.sum(x)

    def note(self, v):
        self.seen.append(v)


@pytest.mark.parametrize("mode", MODES)
def test_a_method_named_like_numpy_of_a_class_that_changes_what_it_holds(mode):
    def scaled(model, x):
        return model.sum(x * x)
    got = s2s.grad(scaled, wrt=1, mode=mode)(Recorder(), X)
    np.testing.assert_allclose(got, 6.0 * X, rtol=1e-12)
