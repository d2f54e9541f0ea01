"""s2s.vjp and s2s.linearize after a function or a number the function reads is rebound: their derivatives (cached
in two parts, s2s/driver/split.py) are made anew, like grad's, whichever call first saw the rebinding."""
import numpy as np
import pytest

import s2s


def _sin2(x):
    return np.sin(x) * 2.0


def _sin5(x):
    return np.sin(x) * 5.0


F = _sin2
SCALE = 2.0


def through_global_function(x):
    return F(x)


def through_global_number(x):
    return np.sin(x) * SCALE


X = np.array([0.3, 0.5])


def _pullback(fn):
    out, back = s2s.vjp(fn, X)
    return out, back(np.ones(2))[0]


def _linearized(fn):
    out, jvp_fn = s2s.linearize(fn, X)
    return out, jvp_fn(np.ones(2))


@pytest.mark.parametrize("make", [_pullback, _linearized])
@pytest.mark.parametrize("grad_first", [False, True])
def test_a_rebound_function_is_followed(make, grad_first):
    global F
    F = _sin2
    try:
        out, d = make(through_global_function)
        assert np.allclose(out, 2 * np.sin(X)) and np.allclose(d, 2 * np.cos(X))
        F = _sin5
        if grad_first:          # grad's call sees the rebinding first
            assert np.isclose(s2s.grad(lambda x: np.sum(through_global_function(x)))(X)[0], 5 * np.cos(0.3))
        out, d = make(through_global_function)
        assert np.allclose(out, 5 * np.sin(X)) and np.allclose(d, 5 * np.cos(X))
    finally:
        F = _sin2


@pytest.mark.parametrize("make", [_pullback, _linearized])
def test_a_rebound_number_is_followed(make):
    global SCALE
    SCALE = 2.0
    try:
        out, d = make(through_global_number)
        assert np.allclose(d, 2 * np.cos(X))
        SCALE = 3.0
        out, d = make(through_global_number)
        assert np.allclose(out, 3 * np.sin(X)) and np.allclose(d, 3 * np.cos(X))
    finally:
        SCALE = 2.0
