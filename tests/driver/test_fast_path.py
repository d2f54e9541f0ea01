"""A cached derivative's call takes the fast path (one look-up on the arguments' types, s2s/driver/dispatch.py) for
the programs of the real-program benchmark (benchmarks/real_programs.py) that missed it: a function with a
parameter left to None or given a string (statsmodels' `loglike(params, scale=None)`) went through the general path
at every call (1-4 ms), and a method s2s read specialized for its call (`MODEL.loss(x, y)` calling
`self.forward`) was lowered and transformed again at every call (20-100 ms), because the specialization, a clone
held weakly, was watched for its code and defaults and was gone by the next call."""
import numpy as np
import pytest

import s2s
import s2s.driver.dispatch
import s2s.driver.pipeline
import s2s.driver.primal

MODES = ("reverse", "forward", "auto")


@pytest.fixture
def no_new_derivative(monkeypatch):
    """After it is called: making or looking up a derivative (the general path) fails the test."""
    def forbid():
        def fail(*args, **kwargs):
            raise AssertionError("the cached call took the general path")
        monkeypatch.setattr(s2s.driver.dispatch, "compiled", fail)
        monkeypatch.setattr(s2s.driver.dispatch, "stale", fail)
        monkeypatch.setattr(s2s.driver.primal, "_lowered_unfolding_writes", fail)
    return forbid


class Net:
    def __init__(self):
        rng = np.random.default_rng(0)
        self.W = rng.normal(size=(3, 2))
        self.activation = np.tanh

    def forward(self, x):
        return self.activation(x @ self.W)

    def loss(self, x, y):
        return np.mean((self.forward(x) - y) ** 2)


NET = Net()
Y = np.array([0.3, -0.2])


def net_loss(x):
    return NET.loss(x, Y)


def net_loss_hand(x):
    h = np.tanh(x @ NET.W)
    return (2.0 / h.size) * ((h - Y) * (1.0 - h ** 2)) @ NET.W.T


@pytest.mark.parametrize("mode", MODES)
def test_a_method_read_for_its_call_is_not_read_again_at_each_call(mode, no_new_derivative):
    x = np.array([0.5, -1.0, 0.25])
    gradient = s2s.grad(net_loss, mode=mode)
    np.testing.assert_allclose(gradient(x), net_loss_hand(x), rtol=1e-12)
    no_new_derivative()
    for _ in range(3):
        np.testing.assert_allclose(gradient(x), net_loss_hand(x), rtol=1e-12)


def test_a_method_read_for_its_call_is_still_watched_for_its_code(make_fn):
    class Model:
        def __init__(self):
            self.scale = 2.0

        def inner(self, x):
            return self.scale * x ** 2

        def loss(self, x):
            return np.sum(self.inner(x))
    model = Model()
    f = make_fn("def f(x):\n    return model.loss(x)\n", namespace={"model": model})
    x = np.array([1.0, 3.0])
    gradient = s2s.grad(f)
    np.testing.assert_allclose(gradient(x), 4.0 * x)
    np.testing.assert_allclose(gradient(x), 4.0 * x)
    # the method's code replaced, as IPython's autoreload does: the derivative is made anew
    Model.inner.__code__ = make_fn("def inner(self, x):\n    return self.scale * x ** 3\n").__code__
    np.testing.assert_allclose(gradient(x), 6.0 * x ** 2)


def scaled_loss(x, scale=None, kind="square"):
    s = 1.0 if scale is None else scale
    if kind == "square":
        return s * np.sum(x ** 2)
    return s * np.sum(x ** 3)


@pytest.mark.parametrize("mode", MODES)
def test_none_and_strings_take_the_fast_path_and_strings_by_their_value(mode, no_new_derivative):
    x = np.array([1.0, -2.0])
    gradient = s2s.grad(scaled_loss, mode=mode)
    calls = [((x,), 2.0 * x), ((x, None, "cube"), 3.0 * x ** 2), ((x, 0.5, "cube"), 1.5 * x ** 2),
             ((x, None, "square"), 2.0 * x)]
    for args, want in calls:
        np.testing.assert_allclose(gradient(*args), want, rtol=1e-12)
    no_new_derivative()
    for _ in range(2):
        for args, want in calls:         # each string's own derivative, never another's
            np.testing.assert_allclose(gradient(*args), want, rtol=1e-12)


@pytest.mark.parametrize("mode", MODES)
def test_a_builtin_the_code_reads_then_defined_by_the_users_module(make_fn, mode):
    # the generated code's namespace keeps the builtins it reads (runtime helpers read isinstance, len, ...); one
    # that the user's module defines later is the user's from then on, as in Python
    f = make_fn("def f(x):\n    return abs(x) * y + len([x]) * x\n", namespace={"y": 2.0})
    gradient = s2s.grad(f, mode=mode)
    assert gradient(-3.0) == pytest.approx(-1.0)
    assert gradient(-3.0) == pytest.approx(-1.0)
    f.__globals__["abs"] = lambda v: v * v
    f.__globals__["len"] = lambda v: 3.0
    assert gradient(-3.0) == pytest.approx(2.0 * -3.0 * 2.0 + 3.0)
    assert s2s.grad(f, mode=mode)(-3.0) == pytest.approx(-9.0)


@pytest.mark.parametrize("mode", MODES)
def test_a_container_argument_keeps_its_watch_and_still_sees_a_helper_rebound(make_fn, mode, monkeypatch):
    # a tuple argument takes the general path at every call (lifelines' Ts=(times,)): the watch over the
    # functions it read, still holding, is not made again each time (a compile() per call)
    h = make_fn("def h(x):\n    return x ** 2\n")
    f = make_fn("def f(x, pair):\n    return np.sum(h(x) * pair[0]) + pair[1]\n", namespace={"h": h})
    x, pair = np.array([1.0, 2.0]), (np.array([3.0, 4.0]), 0.5)
    gradient = s2s.grad(f, mode=mode)
    np.testing.assert_allclose(gradient(x, pair), 2.0 * x * pair[0])
    made = []
    original = s2s.driver.dispatch.compiled_watch
    monkeypatch.setattr(s2s.driver.dispatch, "compiled_watch", lambda watch: made.append(1) or original(watch))
    for _ in range(3):
        np.testing.assert_allclose(gradient(x, pair), 2.0 * x * pair[0])
    assert made == []
    f.__globals__["h"] = make_fn("def h(x):\n    return x ** 3\n")
    np.testing.assert_allclose(gradient(x, pair), 3.0 * x ** 2 * pair[0])
    np.testing.assert_allclose(gradient(x, pair), 3.0 * x ** 2 * pair[0])


def _decorated(f):
    def wrapper(x):
        return 2.0 * f(x)
    return wrapper


@pytest.mark.parametrize("mode", MODES)
def test_a_function_read_from_a_closure_takes_the_fast_path_and_its_cell_is_watched(mode, no_new_derivative):
    # a decorator's wrapper reads the function it wraps from a closure cell: that cell is watched (its contents
    # the same object) rather than the general path taken at every call (20 us on a function of 0.5 us)
    wrapper = _decorated(lambda x: x ** 3)
    gradient = s2s.grad(wrapper, mode=mode)
    assert gradient(2.0) == pytest.approx(24.0)
    wrapper.__closure__[0].cell_contents = lambda x: x ** 2     # the cell rebound (as `nonlocal f; f = ...` does)
    assert gradient(2.0) == pytest.approx(8.0)
    assert gradient(2.0) == pytest.approx(8.0)
    no_new_derivative()
    for _ in range(3):
        assert gradient(3.0) == pytest.approx(12.0)
