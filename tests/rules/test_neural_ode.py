"""odeint with parameters in containers: a neural ODE (issue 27, item 4).

`odeint(nn_predict, y0, t, tuple((params,)), rtol=0.01)` with params a list of (W, b) pairs gave NaN gradients, and
`args=([W],)` crashed with `TypeError: unsupported operand type(s) for -: 'NoneType' and 'float'` in reverse mode
(forward mode silently left the list out). The rules of rules/integrate.py took only floats and float arrays
among odeint's args; they take tuples, lists and dicts of them now, in both ODEs and to second order.
"""
import numpy as np
import pytest

import s2s

scipy_integrate = pytest.importorskip("scipy.integrate")
odeint = scipy_integrate.odeint

_rng = np.random.default_rng(4)
PARAMS = [(0.3 * _rng.normal(size=(2, 4)), 0.1 * _rng.normal(size=4)),
          (0.3 * _rng.normal(size=(4, 2)), 0.1 * _rng.normal(size=2))]
TIMES = np.linspace(0.0, 1.0, 5)
Y0 = np.array([1.0, -0.5])


def nn_predict(y, t, params):
    h = y
    for W, b in params:
        h = np.tanh(h @ W + b)
    return h


def loss(params):
    return np.sum(odeint(nn_predict, Y0, TIMES, tuple((params,)), rtol=1e-11, atol=1e-11) ** 2)


def loss_loose(params):                    # the issue's tolerance
    return np.sum(odeint(nn_predict, Y0, TIMES, tuple((params,)), rtol=0.01) ** 2)


def first_layer(y, t, ws):
    return np.tanh(y @ ws[0])


def loss_list(W):
    return np.sum(odeint(first_layer, Y0, TIMES, args=([W],), rtol=1e-11, atol=1e-11) ** 2)


def scaled(y, t, config):
    return -config["rate"] * y + config["drive"] * np.sin(t)


def loss_dict(rate, drive):
    return np.sum(odeint(scaled, Y0, TIMES, args=({"rate": rate, "drive": drive},), rtol=1e-11, atol=1e-11))


def _direction(params):
    return [tuple(_rng.normal(size=np.shape(a)) for a in pair) for pair in params]


def _shifted(params, direction, h):
    return [tuple(a + h * d for a, d in zip(pair, dpair)) for pair, dpair in zip(params, direction)]


def _along(gradient, direction):
    return sum(float(np.sum(g * d)) for gpair, dpair in zip(gradient, direction) for g, d in zip(gpair, dpair))


def test_a_list_of_layers_in_args_in_reverse_mode_and_jvp():
    v = _direction(PARAMS)
    h = 1e-4
    expected = (loss(_shifted(PARAMS, v, h)) - loss(_shifted(PARAMS, v, -h))) / (2 * h)
    for mode in ("reverse", "auto"):
        gradient = s2s.grad(loss, mode=mode)(PARAMS)
        assert all(g.shape == a.shape for gp, ap in zip(gradient, PARAMS) for g, a in zip(gp, ap))
        assert _along(gradient, v) == pytest.approx(expected, rel=1e-6)
    value, directional = s2s.jvp(loss, (PARAMS,), (v,))
    assert value == pytest.approx(loss(PARAMS)) and directional == pytest.approx(expected, rel=1e-6)


def test_the_issue_tolerance_gives_finite_gradients_close_to_the_exact_ones():
    gradient = s2s.grad(loss_loose)(PARAMS)
    exact = s2s.grad(loss)(PARAMS)
    for gp, ep in zip(gradient, exact):
        for g, e in zip(gp, ep):
            assert np.all(np.isfinite(g))
            assert g == pytest.approx(e, rel=0.05, abs=0.05 * np.max(np.abs(e)))


@pytest.mark.parametrize("mode", ["reverse", "forward", "auto"])
def test_a_list_of_one_array_in_args(mode):
    W = _rng.normal(size=(2, 2))
    h = 1e-4
    expected = np.zeros_like(W)
    for k in np.ndindex(W.shape):
        e = np.zeros_like(W)
        e[k] = h
        expected[k] = (loss_list(W + e) - loss_list(W - e)) / (2 * h)
    assert s2s.grad(loss_list, mode=mode)(W) == pytest.approx(expected, rel=1e-6, abs=1e-8)


def test_second_order_through_a_list_in_args():
    W = _rng.normal(size=(2, 2))
    v = _rng.normal(size=(2, 2))
    gradient = s2s.grad(loss_list, mode="reverse")
    h = 1e-5
    expected = (gradient(W + h * v) - gradient(W - h * v)) / (2 * h)
    assert s2s.hvp(loss_list)(W, v) == pytest.approx(expected, rel=1e-5, abs=1e-7)


@pytest.mark.parametrize("mode", ["reverse", "forward", "auto"])
def test_a_dict_in_args(mode):
    """y' = -r y + d sin t: each component y(t) = y0 e^(-r t) + d (r sin t - cos t + e^(-r t)) / (1 + r^2)."""
    rate, drive = 0.7, 0.4
    h = 1e-5
    d_rate = (loss_dict(rate + h, drive) - loss_dict(rate - h, drive)) / (2 * h)
    d_drive = (loss_dict(rate, drive + h) - loss_dict(rate, drive - h)) / (2 * h)
    decay = np.exp(-rate * TIMES)
    closed = 2 * np.sum((rate * np.sin(TIMES) - np.cos(TIMES) + decay) / (1 + rate ** 2))
    assert d_drive == pytest.approx(closed, rel=1e-6)
    gradient = s2s.grad(loss_dict, wrt=(0, 1), mode=mode)(rate, drive)
    assert gradient == pytest.approx((d_rate, closed), rel=1e-6)
