"""Values known when the derivative is made (issue 25, item 1): branches, lookups and calls they decide are folded
before anything reads them, and every value a fold relied on is checked on entry."""
import math

import numpy as np
import pytest

import s2s
from s2s.errors import S2SError

MODES = ("reverse", "forward", "auto")


class Layer:
    def __init__(self, kind="tanh"):
        self.is_initialized = True
        self.kind = kind
        self.scale = 2.0

    def forward(self, x):
        if not self.is_initialized:
            self.n_in = x.shape[0]          # an attribute write: never read while initialized
            raise RuntimeError("not initialized")
        if self.kind == "tanh":
            y = np.tanh(x)
        elif self.kind == "exp":
            y = np.exp(x)
        else:
            try:                             # a try (issue 26), in a branch that cannot run while kind is known
                y = 1.0 / x
            except ZeroDivisionError:
                y = x
        return np.sum(self.scale * y)

    def predict(self, x, which="mean"):
        if which == "linear":
            return x * 3.0
        elif which == "mean":
            return np.exp(self.predict(x, which="linear"))       # a recursion only under the string flag
        raise ValueError(which)

    def loss(self, x):
        return np.sum(self.predict(x))


def optional_float(value, name, optional=False):
    if optional and value is None:
        return None
    try:
        return float(value)
    except TypeError:
        raise TypeError(name)


def scaled(x, scale=None):
    scale = optional_float(scale, "scale", optional=True)
    if scale is None:
        scale = 0.5
    return scale * math.sin(x) ** 2


@pytest.mark.parametrize("mode", MODES)
def test_branches_on_attributes_and_flags_are_folded(mode):
    x = np.array([0.3, -0.2, 0.5])
    layer = Layer("tanh")
    g = s2s.grad(layer.forward, mode=mode)(x)
    assert np.allclose(g, 2.0 * (1 - np.tanh(x) ** 2))
    layer = Layer("exp")
    assert np.allclose(s2s.grad(layer.forward, mode=mode)(x), 2.0 * np.exp(x))
    assert np.allclose(s2s.grad(Layer().loss, mode=mode)(x), 3.0 * np.exp(3.0 * x))


def test_a_changed_attribute_makes_the_derivative_anew():
    x = np.array([0.3, -0.2, 0.5])
    layer = Layer("tanh")
    g = s2s.grad(layer.forward)
    assert np.allclose(g(x), 2.0 * (1 - np.tanh(x) ** 2))
    layer.kind = "exp"                 # the fold relied on kind == 'tanh': checked on entry
    assert np.allclose(g(x), 2.0 * np.exp(x))
    layer.kind = "other"               # now the branch with try/except runs: made anew, and differentiated
    assert np.allclose(g(x), -2.0 / x ** 2)


def test_the_header_says_what_was_folded():
    text = s2s.source(Layer("tanh").forward, np.ones(3))
    assert "Specialized on" in text and "self.kind == 'tanh'" in text and "self.is_initialized == True" in text


def test_defaults_and_literals_decide_callees():
    for mode in MODES:
        assert s2s.grad(scaled, mode=mode)(0.7) == pytest.approx(0.5 * math.sin(1.4))
    h = s2s.hessian(scaled)(0.7)
    assert float(h) == pytest.approx(math.cos(1.4))
    # a float for scale is an argument, not a specialization: optional_float's try is then reached (issue 26)
    assert s2s.grad(scaled)(0.7, 3.0) == pytest.approx(3.0 * math.sin(1.4))


def test_lookups_with_defaults_and_presence():
    class Model:
        def __init__(self):
            self.w = 2.0

        def f(self, x):
            bias = getattr(self, "bias", 0.25)
            if hasattr(self, "offset"):
                x = x + self.offset
            if isinstance(self.w, float) and callable(np.exp):
                return self.w * x ** 2 + bias
            return x
    m = Model()
    g = s2s.grad(m.f)
    assert g(1.5) == pytest.approx(6.0)
    m.offset = 1.0                        # the presence was folded: checked on entry
    assert g(1.5) == pytest.approx(2.0 * 2 * 2.5)
    assert s2s.grad(m.f, mode="reverse")(1.5) == pytest.approx(10.0)


def test_a_property_is_not_run_by_the_guards():
    class Counted:
        calls = 0

        @property
        def flag(self):
            Counted.calls += 1
            return True

        def f(self, x):
            if self.flag:
                return x * x
            return x
    obj = Counted()
    g = s2s.grad(obj.f, check=False)
    before = Counted.calls
    for _ in range(5):
        assert g(3.0) == pytest.approx(6.0)
    # the property is read when the derivative runs (not folded): once per call, as Python does
    assert Counted.calls - before == 5


def test_a_float_that_changes_is_an_argument():
    from s2s.api import _CACHE

    def f(x, c):
        return c * x ** 2
    g = s2s.grad(f, check=False)
    for k in range(1000):
        c = 0.5 + k / 1000
        assert g(1.5, c) == pytest.approx(3.0 * c)
    assert len(_CACHE[f]) == 1


def test_a_flag_argument_selects_its_own_derivative():
    def f(x, squared=True):
        if squared:
            return x ** 2
        return x ** 3
    g = s2s.grad(f)
    assert g(2.0) == pytest.approx(4.0)
    assert g(2.0, False) == pytest.approx(12.0)
    assert g(2.0, True) == pytest.approx(4.0)


def test_a_flag_argument_takes_the_fast_path(monkeypatch):
    from s2s.driver import dispatch

    def f(x, squared=True):
        if squared:
            return np.sum(x ** 2)
        return np.sum(x ** 3)
    g = s2s.grad(f, check=False)
    x = np.array([1.0, 2.0])
    g(x, True), g(x, False)
    made = []
    real = dispatch.compiled
    monkeypatch.setattr(dispatch, "compiled", lambda *a, **k: made.append(1) or real(*a, **k))
    for _ in range(3):
        assert np.allclose(g(x, True), 2 * x) and np.allclose(g(x, False), 3 * x ** 2)
    assert made == []           # a route keyed on the flag's value: never the general path again


def scaled_by(x, factor=2.0, squared=True):
    return factor * x ** 2 if squared else factor * x


def uses_the_defaults(x):
    return scaled_by(x) + 1.0


def test_a_callees_defaults_replaced_make_the_derivative_anew():
    g = s2s.grad(uses_the_defaults)
    assert g(1.5) == pytest.approx(6.0)
    saved = scaled_by.__defaults__
    try:
        scaled_by.__defaults__ = (3.0, True)       # a default read as a constant: checked on entry
        assert g(1.5) == pytest.approx(9.0)
        scaled_by.__defaults__ = (3.0, False)      # a flag default the branch was folded on
        assert g(1.5) == pytest.approx(3.0)
    finally:
        scaled_by.__defaults__ = saved
    assert g(1.5) == pytest.approx(6.0)


import threading  # noqa: E402

_LOCAL = threading.local()
_DEFAULTS = {"scale": 3.0}


def _config():
    if not hasattr(_LOCAL, "config"):       # scikit-learn's lazy thread-local configuration
        _LOCAL.config = dict(_DEFAULTS)
    return _LOCAL.config


def configured(x):
    return _config()["scale"] * x ** 2


def test_a_lazy_initialization_already_done_is_folded_away():
    """`if not hasattr(obj, "n"): obj.n = ...` with the attribute there when the derivative is made: the branch
    cannot run (a thread-local's attributes read too), so its write is not refused; the fold is watched."""
    _config()
    for mode in MODES:
        assert s2s.grad(configured, mode=mode)(0.5) == pytest.approx(3.0)
