"""A fold is watched through every look-up that reaches its value (desugar/known_values.py, driver/dispatch.py):
the global, closure variable, attribute or item that holds the object is checked on entry, not only the value read
from it. Replacing the holder (`OP = Opts(True)`, `self.opts = ...`, `CFG.model = ...`, a closure rebound, a
layer put in a list's place) makes the derivative anew, in every mode; a fold that asked only of a type
(`isinstance(W, np.ndarray)`, `W is None`) is watched on the type, so rebinding an array does not make it anew;
and a test a fold could not decide is not watched at all."""
import math

import numpy as np
import pytest

import s2s
from conftest import central

MODES = ("reverse", "forward", "auto")


class Opts:
    def __init__(self, sq):
        self.sq = sq


class Cfg:
    def __init__(self, n, kind):
        self.n = n
        self.kind = kind


def _derivatives(f):
    """value_and_grad of f in each mode, made now (before what the test changes)."""
    return {mode: s2s.value_and_grad(f, mode=mode) for mode in MODES}


def _assert_right(derivatives, f, x):
    expected = central(f, x)
    for mode, d in derivatives.items():
        value, gradient = d(x)
        assert value == pytest.approx(f(x), rel=1e-12), mode
        assert gradient == pytest.approx(expected, rel=1e-6, abs=1e-9), mode


OP = Opts(False)


def squared_if_op(x):
    return x * x if OP.sq else 3.0 * x


def test_a_global_object_rebound():
    """Found by the tester (W3): the old branch was kept (3.0, right 1.4) when the global was another object."""
    global OP
    saved = OP
    try:
        ds = _derivatives(squared_if_op)
        _assert_right(ds, squared_if_op, 0.7)
        OP = Opts(True)
        _assert_right(ds, squared_if_op, 0.7)
        assert ds["reverse"](0.7)[1] == pytest.approx(1.4, rel=1e-12)
        OP.sq = False                       # the same object changed: watched as before
        _assert_right(ds, squared_if_op, 0.7)
    finally:
        OP = saved


H = Opts(False)


def squared_if_h(x):
    return x * x if H.sq else 3.0 * x


def test_the_entry_check_reads_the_new_object():
    """H.sq = True, then H = Opts(False): the check on entry read the old object (1.4, right 3.0)."""
    global H
    saved = H
    try:
        ds = _derivatives(squared_if_h)
        _assert_right(ds, squared_if_h, 0.7)
        H.sq = True
        _assert_right(ds, squared_if_h, 0.7)
        H = Opts(False)
        _assert_right(ds, squared_if_h, 0.7)
        assert ds["forward"](0.7)[1] == pytest.approx(3.0, rel=1e-12)
    finally:
        H = saved


class Model:
    def __init__(self):
        self.opts = Opts(False)

    def loss(self, x):
        return x * x if self.opts.sq else 3.0 * x


def test_an_attribute_object_replaced():
    m = Model()
    ds = _derivatives(m.loss)
    _assert_right(ds, m.loss, 0.7)
    m.opts = Opts(True)
    _assert_right(ds, m.loss, 0.7)
    m.opts = Opts(False)
    _assert_right(ds, m.loss, 0.7)


C = Cfg(2, "sin")


def repeated(x):
    y = x
    for _ in range(C.n):
        y = math.sin(y) if C.kind == "sin" else math.tanh(y)
    return y


def test_a_string_field_of_a_rebound_object():
    """`C.kind == "sin"` folded; `C = Cfg(5, "tanh")` used the new n with the old branch."""
    global C
    saved = C
    try:
        ds = _derivatives(repeated)
        _assert_right(ds, repeated, 0.7)
        C = Cfg(5, "tanh")
        _assert_right(ds, repeated, 0.7)
        C.n = 1
        _assert_right(ds, repeated, 0.7)
    finally:
        C = saved


def test_a_closure_variable_rebound():
    cfg = Opts(False)

    def f(x):
        return x * x if cfg.sq else 3.0 * x
    ds = _derivatives(f)
    _assert_right(ds, f, 0.7)
    cfg = Opts(True)                        # rebinds the cell
    _assert_right(ds, f, 0.7)
    lim = 1.0

    def h(x):
        return x * x if x > lim else 3.0 * x
    dh = _derivatives(h)
    _assert_right(dh, h, 1.5)
    lim = 2.0
    _assert_right(dh, h, 1.5)


class Holder:
    pass


CFG = Holder()
CFG.model = Holder()
CFG.model.opts = Opts(False)


def two_levels(x):
    return np.sin(x) * x if CFG.model.opts.sq else 3.0 * x


def test_a_holder_two_levels_up_replaced():
    saved = CFG.model
    try:
        ds = _derivatives(two_levels)
        _assert_right(ds, two_levels, 0.7)
        replaced = Holder()
        replaced.opts = Opts(True)
        CFG.model = replaced
        _assert_right(ds, two_levels, 0.7)
        CFG.model.opts = Opts(False)
        _assert_right(ds, two_levels, 0.7)
    finally:
        CFG.model = saved


SETTINGS = {"opts": Opts(False)}
CHOICES = [Opts(False)]


def by_item(x):
    return x * x if SETTINGS["opts"].sq else 3.0 * x


def by_index(x):
    return x * x if CHOICES[0].sq else 3.0 * x


@pytest.mark.parametrize("f, container, key", [(by_item, SETTINGS, "opts"), (by_index, CHOICES, 0)])
def test_an_item_replaced(f, container, key):
    saved = container[key]
    try:
        ds = _derivatives(f)
        _assert_right(ds, f, 0.7)
        container[key] = Opts(True)
        _assert_right(ds, f, 0.7)
    finally:
        container[key] = saved


class Linear:
    def __init__(self, k):
        self.k = k

    def forward(self, x):
        return x * self.k


class Square(Linear):
    def forward(self, x):
        return x * x


class Net:
    def __init__(self):
        self.layer = Linear(3.0)

    def loss(self, x):
        return self.layer.forward(x)


LAYER = Linear(3.0)


def through_global_layer(x):
    return LAYER.forward(x)


def test_a_method_of_a_replaced_object():
    """A method read through its holder (`self.layer.forward(x)`, `LAYER.forward(x)`): another object of another
    class put in its place runs its own method (the old one's ran with the new one's attributes: 1.0, not 1.4)."""
    global LAYER
    net = Net()
    ds = _derivatives(net.loss)
    _assert_right(ds, net.loss, 0.7)
    net.layer = Square(1.0)
    _assert_right(ds, net.loss, 0.7)
    saved = LAYER
    try:
        dg = _derivatives(through_global_layer)
        _assert_right(dg, through_global_layer, 0.7)
        LAYER = Square(1.0)
        _assert_right(dg, through_global_layer, 0.7)
        assert dg["auto"](0.7)[1] == pytest.approx(1.4, rel=1e-12)
    finally:
        LAYER = saved


class Lazy:
    def __init__(self):
        self._opts = Opts(False)

    @property
    def opts(self):
        return self._opts


LAZY = Lazy()


def behind_a_property(x):
    return x * x if LAZY.opts.sq else 3.0 * x


def test_a_value_behind_a_property_is_read_when_it_runs():
    saved = LAZY._opts
    try:
        ds = _derivatives(behind_a_property)
        _assert_right(ds, behind_a_property, 0.7)
        LAZY._opts = Opts(True)
        _assert_right(ds, behind_a_property, 0.7)
    finally:
        LAZY._opts = saved


class Exact(Opts):
    pass


KIND = Opts(2.0)


def by_class(x):
    return x * x if isinstance(KIND, Exact) else 3.0 * x


def test_isinstance_of_a_rebound_global():
    global KIND
    saved = KIND
    try:
        ds = _derivatives(by_class)
        _assert_right(ds, by_class, 0.7)
        KIND = Exact(1.0)
        _assert_right(ds, by_class, 0.7)
    finally:
        KIND = saved


W = np.array([1.0, 2.0])
MASK = None


def weighted(x):
    if W is None or not isinstance(W, np.ndarray):
        return np.sum(x ** 2)
    y = np.sum(W * x ** 2)
    if MASK is not None:
        y = y * 2.0
    return y


def test_a_type_test_on_a_rebound_array_watches_the_type(monkeypatch):
    """`isinstance(W, np.ndarray)` and `W is None` ask only of W's type: W rebound to another array (a training
    step) is read when the code runs, and the derivative is not made again; W = None makes it anew."""
    from s2s.driver import dispatch
    global W, MASK
    saved = W, MASK
    x = np.array([0.3, -0.4])
    try:
        g = s2s.grad(weighted, check=False)
        np.testing.assert_allclose(g(x), 2 * W * x, rtol=1e-12)
        made = []
        real = dispatch.compiled
        monkeypatch.setattr(dispatch, "compiled", lambda *a, **k: made.append(1) or real(*a, **k))
        for k in range(3):
            W = np.array([1.0 + k, -2.0])
            np.testing.assert_allclose(g(x), 2 * W * x, rtol=1e-12)
        assert made == []
        MASK = np.ones(2)
        np.testing.assert_allclose(g(x), 4 * W * x, rtol=1e-12)
        W = None
        for mode in MODES:
            np.testing.assert_allclose(g(x), 2 * x, rtol=1e-12)
            np.testing.assert_allclose(s2s.grad(weighted, mode=mode)(x), 2 * x, rtol=1e-12)
    finally:
        W, MASK = saved


class State:
    def __init__(self, t):
        self.t = t


STATE = State(0)


def undecided(x):
    return x * x if STATE.t > x else 3.0 * x


def test_a_test_not_decided_is_not_watched(monkeypatch):
    """`STATE.t > x` is decided when the code runs: STATE rebound at every step does not make the derivative
    anew (the look-ups of a value no fold relied on are not dependencies)."""
    from s2s.driver import dispatch
    global STATE
    saved = STATE
    try:
        g = s2s.grad(undecided, check=False)
        assert g(0.7) == pytest.approx(3.0)
        made = []
        real = dispatch.compiled
        monkeypatch.setattr(dispatch, "compiled", lambda *a, **k: made.append(1) or real(*a, **k))
        for t in range(1, 4):
            STATE = State(t)
            assert g(0.7) == pytest.approx(1.4)
        assert made == []
    finally:
        STATE = saved


def test_the_checking_mode_sees_the_replaced_holder():
    """check=True: the derivative made for the new object is checked (and right), not the old one's."""
    global OP
    saved = OP
    try:
        g = s2s.grad(squared_if_op, check=True)
        assert g(0.7) == pytest.approx(3.0)
        OP = Opts(True)
        assert g(0.7) == pytest.approx(1.4)
        assert s2s.grad(squared_if_op, check=True)(0.7) == pytest.approx(1.4)
    finally:
        OP = saved


def test_second_order_follows_the_holder():
    global OP
    saved = OP
    try:
        h = s2s.hessian(squared_if_op)
        assert float(h(0.7)) == pytest.approx(0.0, abs=1e-12)
        OP = Opts(True)
        assert float(h(0.7)) == pytest.approx(2.0, rel=1e-12)
    finally:
        OP = saved
