"""Functions held in variables and containers: called through a local name, looped over in a list or a
tuple, picked from a dict by a key known when the derivative is made or only when it runs; a changed table makes
the derivative anew."""
import numpy as np
import pytest

import s2s
from conftest import agrees, central


MODES = ["reverse", "forward", "auto"]


def through_local_names(x):
    g = np.exp
    total = 0.0
    for act in (np.sin, np.cos, np.tanh):
        total = total + np.sum(act(x))
    return np.sum(g(x)) + total


@pytest.mark.parametrize("mode", MODES)
def test_functions_called_through_local_names(mode):
    """Outside round 1 (the first outside tester's programs, written in their own style)."""
    x = np.array([0.2, 0.5])
    np.testing.assert_allclose(agrees(through_local_names, (x,), mode=mode),
                               np.exp(x) + np.cos(x) - np.sin(x) + 1 - np.tanh(x) ** 2)


def central_difference(f, x, *rest, eps=1e-6):
    return (f(x + eps, *rest) - f(x - eps, *rest)) / (2 * eps)


def local_function_list(x):
    fs = [np.sin, np.cos]
    t = 0.0
    for g in fs:
        t = t + g(x)
    more = (np.exp, lambda v: v ** 3)
    for h in more:
        t = t + h(x)
    return t


def local_function_list_changed(x):
    fs = [np.sin, np.cos]
    fs.append(np.tan)           # no longer the list it was made: not named statically
    t = 0.0
    for g in fs:
        t = t + g(x)
    return t


@pytest.mark.parametrize("mode", ["reverse", "forward", "auto"])
def test_functions_held_in_a_local_list(mode):
    """Outside round 3, F6: `fs = [np.sin, np.cos]; for g in fs:` was refused, while a global list or a tuple display
    worked."""
    assert s2s.grad(local_function_list, mode=mode)(1.4) == pytest.approx(central_difference(local_function_list, 1.4),
                                                                          rel=1e-7)
    with pytest.raises(s2s.S2SError, match=r"test_function_tables\.py:\d+:\d+: .*name statically"):
        s2s.grad(local_function_list_changed, mode=mode)(1.4)


LOSSES = {"mse": lambda r: np.mean(r ** 2), "huber": lambda r: np.mean(np.sqrt(1 + r ** 2) - 1)}


def by_literal_key(x):
    return LOSSES["mse"](x)


class Dispatching:
    def __init__(self):
        self.fns = {"tanh": np.tanh, "sin": np.sin}
        self.kind = "sin"

    def loss(self, x):
        return np.sum(self.fns[self.kind](x))


@pytest.mark.parametrize("mode", ["reverse", "forward", "auto"])
def test_functions_held_in_a_dict_by_a_known_key(mode, monkeypatch):
    """Outside round 4, G5: `LOSSES["mse"](x)` and `self.fns[self.kind](x)` were refused as "not named statically"."""
    x = np.array([0.3, -1.2, 0.8])
    gradient = s2s.grad(by_literal_key, mode=mode)
    assert np.allclose(gradient(x), 2 * x / 3)
    monkeypatch.setitem(LOSSES, "mse", lambda r: np.mean(r ** 4))          # the item replaced: made anew
    assert np.allclose(gradient(x), 4 * x ** 3 / 3)
    model = Dispatching()
    loss = s2s.grad(model.loss, mode=mode)
    assert np.allclose(loss(x), np.cos(x))
    model.kind = "tanh"                                                     # the key changed: made anew
    assert np.allclose(loss(x), 1 - np.tanh(x) ** 2)


def check(f, x, mode, *rest, rtol=1e-6, atol=1e-8):
    got = s2s.grad(f, mode=mode)(x, *rest)
    np.testing.assert_allclose(got, central(lambda z: f(z, *rest), x), rtol=rtol, atol=atol)


def check_hvp(f, x, eps=1e-5):
    """s2s.hvp along a direction against central differences of s2s's gradient."""
    v = np.linspace(-1.0, 1.0, np.size(x))
    gradient = s2s.grad(f)
    expected = (np.asarray(gradient(x + eps * v)) - np.asarray(gradient(x - eps * v))) / (2 * eps)
    np.testing.assert_allclose(s2s.hvp(f)(x, v), expected, rtol=1e-4, atol=1e-6)


R = np.array([0.3, -1.2, 0.8, 0.05])


LOSS_TABLE = {
    "mse": lambda r: np.mean(r ** 2),
    "huber": lambda r: np.mean(np.sqrt(1.0 + r ** 2) - 1.0),
    "cauchy": lambda r: np.mean(np.log1p(r ** 2)),
}


def robust_loss(r, loss="huber"):
    return LOSS_TABLE[loss](r) + 0.1 * np.sum(r ** 2)


def total_loss(r):
    t = 0.0
    for name, fn in LOSS_TABLE.items():
        weight = 2.0 if name == "mse" else 1.0
        t = t + weight * fn(r)
    return t


def sum_of_values(r):
    return sum(fn(r) for fn in LOSS_TABLE.values())


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("loss", ["huber", "mse", "cauchy"])
def test_a_loss_picked_from_a_dict_by_a_string_argument(mode, loss):
    """Outside round 5 (ordinary Python that was refused or crashed), G5: a dict of loss functions, looked up by a key
    known only when the function runs, or looped over."""
    check(robust_loss, R, mode, loss)


@pytest.mark.parametrize("mode", MODES)
def test_a_loss_picked_by_its_default_key(mode):
    """Outside round 5 (ordinary Python that was refused or crashed), G5: a dict of loss functions, looked up by a key
    known only when the function runs, or looped over."""
    got = s2s.grad(robust_loss, mode=mode)(R)
    np.testing.assert_allclose(got, central(robust_loss, R), rtol=1e-6, atol=1e-8)


def test_a_key_missing_from_the_dict_raises_keyerror_as_python_does():
    """Outside round 5 (ordinary Python that was refused or crashed), G5: a dict of loss functions, looked up by a key
    known only when the function runs, or looped over."""
    with pytest.raises(KeyError):
        s2s.grad(robust_loss)(R, "l1")


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("f", [total_loss, sum_of_values], ids=["items", "values"])
def test_every_loss_of_a_dict(mode, f):
    """Outside round 5 (ordinary Python that was refused or crashed), G5: a dict of loss functions, looked up by a key
    known only when the function runs, or looped over."""
    check(f, R, mode)


ACTS = {"relu": lambda z: np.maximum(z, 0.0), "tanh": np.tanh}


W3 = np.array([[0.6, 0.1, -0.2], [0.1, 0.5, 0.1], [0.3, -0.1, 0.7]])


def stacked_layers(x, kinds=("tanh", "relu", "tanh")):
    h = x
    for k in kinds:                                    # the key a loop variable over a tuple of strings (K8)
        h = ACTS[k](W3 @ h)
    return np.sum(h ** 2)


@pytest.mark.parametrize("mode", MODES)
def test_layers_picked_from_a_dict_in_a_loop(mode):
    """Outside round 5 (ordinary Python that was refused or crashed), G5: a dict of loss functions, looked up by a key
    known only when the function runs, or looped over."""
    check(stacked_layers, R[:3] + 0.4, mode)


def test_losses_over_a_dict_second_order():
    """Outside round 5 (ordinary Python that was refused or crashed), G5: a dict of loss functions, looked up by a key
    known only when the function runs, or looped over."""
    check_hvp(total_loss, R)
    check_hvp(robust_loss, R)


def test_a_changed_dict_makes_the_derivative_anew():
    """Outside round 5 (ordinary Python that was refused or crashed), G5: a dict of loss functions, looked up by a key
    known only when the function runs, or looped over."""
    table = {"a": lambda r: np.sum(r ** 2)}

    def loss(r, key="a"):
        return table[key](r)
    grad = s2s.grad(loss)
    np.testing.assert_allclose(grad(R), 2 * R)
    table["b"] = lambda r: np.sum(r ** 3)            # a key added: the chain of keys is made again
    np.testing.assert_allclose(grad(R, "b"), 3 * R ** 2)
    table["a"] = lambda r: np.sum(np.sin(r))          # an item replaced
    np.testing.assert_allclose(grad(R), np.cos(R))

    def every(r):
        t = 0.0
        for fn in table.values():
            t = t + fn(r)
        return t
    grad = s2s.grad(every)
    np.testing.assert_allclose(grad(R), np.cos(R) + 3 * R ** 2)
    del table["b"]
    np.testing.assert_allclose(grad(R), np.cos(R))
