"""Shapes the specializer (s2s/passes/specialize.py) now resolves in code written the way statistics packages write
it, so that no broadcasting helper is left: np.clip with a bound left out, a slice bounded by a shape, np.ones with
its dtype given by position, a quotient by a computed number, `hi is not None` of a known number, and a number's
adjoint spread over an array and summed back into it. Each against central differences in every mode."""
import numpy as np
import pytest

import s2s

MODES = ("reverse", "forward", "auto")
HELPERS = ("_unbroadcast(", "_shaped_like(", "_broadcast_back(", "_expand(", "_dot_nd_right(", "_seed(")
X = np.array([[0.3, -0.2, 0.5], [1.1, 0.4, -0.7], [-0.6, 0.9, 0.2], [0.8, -1.3, 0.1], [0.05, 0.6, -0.4]])
Y = np.array([1.0, 0.0, 2.0, 1.0, 3.0])
LIMIT = np.log(np.finfo(np.float64).max) - 1.0          # a NumPy float, as statsmodels' EXP_UPPER_LIMIT is


def numeric(f, x, h=1e-6):
    out = np.zeros_like(x)
    for i in range(x.size):
        e = np.zeros_like(x)
        e[i] = h
        out[i] = (f(x + e) - f(x - e)) / (2 * h)
    return out


def poisson(params):
    xb = np.dot(X, params)
    return np.sum(-np.exp(np.clip(xb, None, LIMIT)) + Y * xb)


def sliced(params):
    alpha = params[-1]
    fitted = np.dot(X, params[: X.shape[1]])
    return np.sum(Y * fitted - np.exp(fitted) / alpha)


def gaussian(params):
    mu = np.asarray(np.dot(X, params))
    v = np.ones(mu.shape, np.float64)
    scale = np.sum((Y - mu) ** 2 / v) / 2.0
    ll = -(Y - mu) ** 2 / scale - np.log(scale)
    return np.sum(ll)


CASES = {"poisson": (poisson, np.array([0.2, -0.1, 0.3])),
         "sliced": (sliced, np.array([0.2, -0.1, 0.3, 1.7])),
         "gaussian": (gaussian, np.array([0.2, -0.1, 0.3]))}


@pytest.mark.parametrize("name", sorted(CASES))
def test_no_broadcasting_helper_is_left(name):
    f, p = CASES[name]
    body = str(s2s.source(f, p, mode="reverse")).split(f"def {f.__name__}_grad")[1]
    assert not [h for h in HELPERS if h in body], body
    assert " is not None" not in body


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("name", sorted(CASES))
def test_against_central_differences(name, mode):
    f, p = CASES[name]
    assert np.allclose(s2s.grad(f, mode=mode)(p), numeric(f, p), rtol=1e-6, atol=1e-6)


def test_a_global_number_rebound_to_another_class_makes_the_derivative_anew():
    global LIMIT
    p = CASES["poisson"][1]
    g = s2s.grad(poisson)
    saved = LIMIT
    try:
        for limit in (saved, 0.1, 1, np.float32(0.2), np.array([0.1, 0.0, 5.0, -0.2, 0.3]), saved):
            LIMIT = limit                   # the bound now cuts some rows off: their derivative is zero
            assert np.allclose(g(p), numeric(poisson, p), rtol=1e-6, atol=1e-6), limit
    finally:
        LIMIT = saved
