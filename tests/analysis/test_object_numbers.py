"""Numbers read from objects (`self.df_resid`, `self.slope`: a Python or NumPy int or float) are specialized on by
their class, as held arrays are by shape and dtype (issue 29, item 4): known as numbers when the derivative is
made, read once on entry and checked; another class makes the derivative anew, another value is simply read."""
import numpy as np
import pytest

import s2s

MODES = ("reverse", "forward", "auto")
HELPERS = ("_seed", "_unbroadcast", "_shaped_like", "_broadcast_back", "_expand", "_dot_nd_right")


def numeric(f, x, h=1e-6):
    """Central differences of a scalar function of a float or a float array."""
    if np.ndim(x) == 0:
        return (f(x + h) - f(x - h)) / (2 * h)
    out = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        e = np.zeros_like(x)
        e[i] = h
        out[i] = (f(x + e) - f(x - e)) / (2 * h)
    return out


class GaussianGLM:
    """A Gaussian likelihood with its scale estimated from the fit, as statistics packages write it: the degrees of
    freedom and the offset are numbers the model holds."""

    def __init__(self, n=12, k=3, seed=0):
        rng = np.random.default_rng(seed)
        self.exog = rng.normal(size=(n, k))
        self.endog = rng.normal(size=n)
        self.df_resid = np.int64(n - k)             # statsmodels' is a NumPy integer
        self._offset_exposure = 0.25

    def loglike(self, params):
        mu = np.dot(self.exog, params) + self._offset_exposure
        scale = np.sum((self.endog - mu) ** 2) / self.df_resid
        ll = -(self.endog - mu) ** 2 / scale
        ll += -np.log(scale) - np.log(2 * np.pi)
        return np.sum(ll) / 2


PARAMS = np.array([0.2, -0.4, 0.3])


@pytest.mark.parametrize("mode", MODES)
def test_a_likelihood_with_numbers_the_model_holds(mode):
    m = GaussianGLM()
    g = s2s.grad(m.loglike, mode=mode)
    assert np.allclose(g(PARAMS), numeric(m.loglike, PARAMS), rtol=1e-6, atol=1e-6)


def test_the_numbers_are_checked_on_entry_and_the_helpers_are_gone():
    m = GaussianGLM()
    text = s2s.source(m.loglike, PARAMS, mode="reverse")
    assert "_global_number(_const.df_resid, np.int64, 'self.df_resid')" in text
    assert "_offset_exposure_ = _global_number(_const._offset_exposure, float," in text
    assert not [h for h in HELPERS if h in text], text


class LeakyReLU:
    """An activation in numpy-ml's style: its slope is a number the object holds."""

    def __init__(self, alpha=0.3):
        self.alpha = alpha

    def fn(self, z):
        return np.where(z > 0, z, self.alpha * z)

    def loss(self, z):
        return np.sum(self.fn(z) ** 2 * self.alpha)

    def penalty(self, z):
        return self.alpha * z * z + self.alpha


ACT = LeakyReLU()


def leaky_of_a_float(z):
    return ACT.penalty(z)


def leaky_loss(z):
    return ACT.loss(z)


def test_a_number_an_object_holds_is_a_number_to_mode_auto():
    # the output is known to be a number: mode="auto" differentiates along the float in forward mode
    text = s2s.source(leaky_of_a_float, 1.5)
    assert 'mode="auto" chose forward mode' in text, text
    assert "_seed" not in text
    for mode in MODES:
        assert np.isclose(s2s.grad(leaky_of_a_float, mode=mode)(1.5), numeric(leaky_of_a_float, 1.5))


Z = np.array([0.7, -1.2, 0.4, -0.1])


@pytest.mark.parametrize("mode", MODES)
def test_the_held_numbers_class_changing_between_calls_makes_the_derivative_anew(mode):
    ACT.alpha = 0.3
    g, h = s2s.grad(leaky_loss, mode=mode), s2s.grad(leaky_of_a_float, mode=mode)
    try:
        for alpha in (0.3, 2, np.float64(0.7), 0.45, np.array(0.2), np.array([0.1, 0.2, 0.3, 0.4]), 3, 0.05):
            ACT.alpha = alpha
            assert np.allclose(g(Z), numeric(leaky_loss, Z), rtol=1e-6, atol=1e-7), alpha
            if np.ndim(alpha) == 0:
                assert np.isclose(h(1.5), numeric(leaky_of_a_float, 1.5)), alpha
    finally:
        ACT.alpha = 0.3


@pytest.mark.parametrize("mode", MODES)
def test_the_held_numbers_value_changing_between_calls_is_followed(mode):
    m = GaussianGLM()
    g = s2s.grad(m.loglike, mode=mode)
    first = g(PARAMS)
    m._offset_exposure, m.df_resid = 1.5, np.int64(4)       # same classes: read at each call
    second = g(PARAMS)
    assert np.allclose(second, numeric(m.loglike, PARAMS), rtol=1e-6, atol=1e-6)
    assert not np.allclose(first, second)
    m.df_resid = 4.0                                        # a float where a NumPy integer was: made anew
    assert np.allclose(g(PARAMS), numeric(m.loglike, PARAMS), rtol=1e-6, atol=1e-6)


def test_a_changed_class_raises_globalchanged_in_the_derivative_itself():
    ACT.alpha = 0.3
    try:
        s2s.grad(leaky_loss)(Z)
        ACT.alpha = 1
        from s2s.analysis.global_shapes import GlobalChanged, global_number
        with pytest.raises(GlobalChanged, match="'self.alpha'"):
            global_number(ACT.alpha, float, "self.alpha")
    finally:
        ACT.alpha = 0.3


class Counter:
    def __init__(self):
        self.scale = 2.0

    def step(self, x):
        self.scale = self.scale * 1.5          # written by the call: read where it is, never on entry
        return np.sum(x ** 2) * self.scale


def test_a_number_the_function_writes_is_read_where_it_is():
    c = Counter()
    g = s2s.grad(c.step, mode="reverse")
    x = np.array([0.5, -1.0])
    before = c.scale
    got = g(x)
    assert np.allclose(got, 2 * x * before * 1.5)
    assert c.scale == before * 1.5                      # the write performed once per call


def test_second_order_with_numbers_the_model_holds():
    m = GaussianGLM()
    g = s2s.grad(m.loglike)
    expected = np.array([numeric(lambda p: g(p)[i], PARAMS, h=1e-5) for i in range(3)])
    assert np.allclose(s2s.hessian(m.loglike)(PARAMS), expected, rtol=1e-5, atol=1e-5)


def closure_with_a_number():
    c = 2.0

    def f(p):
        return np.sum(p * c) ** 2

    def rebind(value):
        nonlocal c
        c = value
    return f, rebind


@pytest.mark.parametrize("mode", MODES)
def test_a_number_in_a_closure_is_checked_on_entry_and_read_at_each_call(mode):
    f, rebind = closure_with_a_number()
    g = s2s.grad(f, mode=mode)
    for c in (2.0, 3.5, 1, np.array([1.0, -2.0, 0.5])):      # a new value, an int, an array: each followed
        rebind(c)
        assert np.allclose(g(PARAMS), numeric(f, PARAMS), rtol=1e-6, atol=1e-6), c
    rebind(2.0)
    assert "_global_number(c, float, 'c')" in s2s.source(f, PARAMS, mode="reverse")
