"""Arrays read from objects (`self.exog`, `self.params["W"]`) are specialized on like global arrays (issue 25, item 1):
their shapes and dtypes are known when the derivative is made, read once on entry and checked; a change makes the
derivative anew. What the function writes is read where it is read."""
import numpy as np
import pytest

import s2s

MODES = ("reverse", "forward", "auto")
HELPERS = ("_broadcast_back", "_match_real", "_expand", "_unbroadcast", "_dot_nd_right")


class Logistic:
    """A binary-choice likelihood in the style of a statistics package: the data live on the model."""

    def __init__(self, endog, exog):
        self.endog = endog
        self.exog = exog

    def cdf(self, z):
        return 1 / (1 + np.exp(-z))

    def loglike(self, params):
        q = 2 * self.endog - 1
        return np.sum(np.log(self.cdf(q * np.dot(self.exog, params))))

    def score(self, params):
        z = np.dot(self.exog, params)
        return np.dot(self.endog - self.cdf(z), self.exog)

    def hessian(self, params):
        p = self.cdf(np.dot(self.exog, params))
        return -np.dot(p * (1 - p) * self.exog.T, self.exog)


def model(n=12, k=3, dtype=np.float64, seed=0):
    rng = np.random.default_rng(seed)
    exog = rng.normal(size=(n, k)).astype(dtype)
    endog = (rng.random(n) < 0.5).astype(dtype)
    return Logistic(endog, exog)


PARAMS = np.array([0.2, -0.4, 0.3])


@pytest.mark.parametrize("mode", MODES)
def test_the_likelihood_of_data_an_object_holds(mode):
    m = model()
    assert np.allclose(s2s.grad(m.loglike, mode=mode, check=True)(PARAMS), m.score(PARAMS))
    assert np.allclose(s2s.hessian(m.loglike, check=True)(PARAMS), m.hessian(PARAMS))


def test_the_derivative_is_specialized_on_the_arrays_shapes_and_dtypes():
    m = model()
    text = s2s.source(m.loglike, PARAMS, mode="reverse")
    assert "_global_array(_const.exog, (12, 3), np.float64, 'self.exog')" in text
    assert "_global_array(_const.endog, (12,), np.float64, 'self.endog')" in text
    assert not [h for h in HELPERS if h in text], text


def test_an_array_rebound_to_another_shape_or_dtype_makes_the_derivative_anew():
    m = model()
    g = s2s.grad(m.loglike)
    assert np.allclose(g(PARAMS), m.score(PARAMS))
    other = model(n=20, seed=1)
    m.exog, m.endog = other.exog, other.endog          # another shape: checked on entry, made anew
    assert np.allclose(g(PARAMS), m.score(PARAMS))
    m.exog = m.exog.astype(np.float32)                 # another dtype
    assert np.allclose(g(PARAMS), m.score(PARAMS), rtol=1e-5)
    m.exog = other.exog * 2.0                          # the same shape and dtype: the same derivative, new values
    assert np.allclose(g(PARAMS), m.score(PARAMS))


class Layer:
    def __init__(self):
        self.params = {"W": np.array([[0.5, -0.2], [0.1, 0.4], [0.3, 0.3]]), "b": np.array([0.1, -0.1])}
        self.h = np.zeros(2)

    def forward(self, x):
        z = np.tanh(x @ self.params["W"] + self.params["b"])
        self.h = 0.5 * self.h + z               # written: read where it is read, never on entry
        return np.sum(self.h ** 2)


@pytest.mark.parametrize("mode", MODES)
def test_arrays_in_an_objects_dict_and_an_array_it_writes(mode):
    layer = Layer()
    x = np.array([0.3, -0.6, 0.9])
    h0 = layer.h.copy()

    def reference(v):
        z = np.tanh(v @ layer.params["W"] + layer.params["b"])
        return np.sum((0.5 * h0 + z) ** 2)
    eps = 1e-6
    numeric = np.array([(reference(x + e) - reference(x - e)) / (2 * eps) for e in np.eye(3) * eps])
    assert np.allclose(s2s.grad(layer.forward, mode=mode, check=True)(x), numeric, atol=1e-6)
    text = s2s.source(Layer().forward, x, mode="reverse")
    assert "(3, 2), np.float64, \"self.params['W']\")" in text
    assert "_global_array(_const.h" not in text      # the array it writes is not read on entry
