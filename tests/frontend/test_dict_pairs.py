"""`dict(zip(keys, values))` and `dict(enumerate(xs))` as dict comprehensions (s2s/frontend/desugar/dict_pairs.py).
An outside tester's report: `dict(zip(keys, values))` with differentiated values was refused ("no derivative
rule for dict")."""
import numpy as np
import pytest

import s2s
from conftest import assert_gradient
from s2s.testing import check_grads


def named_parameters(a, b):
    params = dict(zip(["scale", "shift"], [a * 2.0, b]))
    return params["scale"] * np.sin(params["shift"]) + params["scale"] ** 2


def keys_from_an_argument(x, names):
    p = dict(zip(names, x))
    return p["w"] * p["b"] + np.exp(p["w"])


def a_later_key_wins(a, b, c):
    d = dict(zip(("u", "v", "u"), (a, b, c)))      # {"u": c, "v": b}
    return d["u"] * d["v"] * 3.0 + a


def shorter_values(x):
    d = dict(zip(["p", "q", "r"], [x, x * x]))     # zip stops at the shorter: no "r"
    return sum(v * v for v in d.values()) + len(d)


def by_position(x):
    d = dict(enumerate(x))
    return d[0] * d[2] + np.cos(d[1])


X = np.array([0.4, -1.2, 0.9])


@pytest.mark.parametrize("f, args, wrt", [
    (named_parameters, (0.7, 0.3), 0),
    (named_parameters, (0.7, 0.3), 1),
    (keys_from_an_argument, (np.array([0.5, 1.5]), ["w", "b"]), 0),
    (a_later_key_wins, (0.6, 1.1, -0.8), 0),
    (a_later_key_wins, (0.6, 1.1, -0.8), 2),
    (shorter_values, (1.3,), 0),
    (by_position, (X,), 0),
], ids=lambda v: getattr(v, "__name__", str(v)))
def test_gradients(f, args, wrt):
    assert_gradient(f, *args, wrt=wrt)
    check_grads(f, args, order=2, modes=("forward", "reverse"), wrt=wrt)


def test_closed_forms():
    # a_later_key_wins = 3 b c + a
    assert s2s.grad(a_later_key_wins, wrt=2)(0.6, 1.1, -0.8) == pytest.approx(3 * 1.1)
    assert s2s.grad(a_later_key_wins, wrt=0, mode="forward")(0.6, 1.1, -0.8) == pytest.approx(1.0)
    assert s2s.value_and_grad(shorter_values)(1.3)[0] == pytest.approx(shorter_values(1.3))
