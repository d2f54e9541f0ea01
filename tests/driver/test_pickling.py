"""A derivative pickles by reference to its function and options (issue 27, item 15).

`pickle.dumps(s2s.grad(loss))` raised `PicklingError: attribute lookup loss_grad ... failed`, so a derivative
could not be sent to a process pool or a Dask worker. A derivative is a `Derivative` object now, pickled as the
call that made it (s2s/driver/derivative.py); one of a function pickle cannot find by name raises a
PicklingError naming that function.
"""
import concurrent.futures
import copy
import functools
import inspect
import pickle

import numpy as np
import pickled_functions as pf
import pytest

import s2s

W = np.array([0.1, -0.2, 0.3])
X = np.arange(6.0).reshape(2, 3) / 6.0


def _same(a, b):
    if isinstance(a, (tuple, list)):
        return len(a) == len(b) and all(_same(u, v) for u, v in zip(a, b))
    return np.allclose(a, b, rtol=0, atol=0)


def _round_trip(d, protocol=pickle.HIGHEST_PROTOCOL):
    return pickle.loads(pickle.dumps(d, protocol=protocol))


@pytest.mark.parametrize("mode", ["auto", "reverse", "forward"])
@pytest.mark.parametrize("protocol", [2, pickle.HIGHEST_PROTOCOL])
def test_a_gradient_round_trips(mode, protocol):
    g = s2s.grad(pf.loss, mode=mode)
    again = _round_trip(g, protocol)
    assert again is not g and again.__name__ == "loss_grad"
    assert _same(again(W, X), g(W, X))
    expected = 2 * X.T @ (np.tanh(X @ W) * (1 - np.tanh(X @ W) ** 2))
    assert np.allclose(again(W, X), expected)


@pytest.mark.parametrize("make, args", [
    (lambda: s2s.value_and_grad(pf.loss, wrt=(0, 1), mode="reverse"), (W, X)),
    (lambda: s2s.grad(pf.loss, wrt="x"), (W, X)),
    (lambda: s2s.hessian(pf.loss), (W, X)),
    (lambda: s2s.hvp(pf.loss), (W, X, np.ones(3))),
    (lambda: s2s.jacobian(pf.loss), (W, X)),
    (lambda: s2s.grad(s2s.grad(pf.cube)), (1.5,)),
    (lambda: s2s.grad(pf.Model(3.0).energy), (W,)),
    (lambda: s2s.grad(functools.partial(pf.loss, x=X)), (W,)),
    (lambda: s2s.grad(pf.loss, checkpoint=4, optimize=("simplify", "dce")), (W, X)),
], ids=["value_and_grad", "wrt-name", "hessian", "hvp", "jacobian", "second", "method", "partial", "options"])
def test_every_transformation_round_trips(make, args):
    d = make()
    assert _same(_round_trip(d)(*args), d(*args))


def test_the_options_travel_with_it():
    g = s2s.value_and_grad(pf.loss, wrt=(0, 1), mode="reverse", check=False)
    again = _round_trip(g)
    assert again.__s2s__[1] == g.__s2s__[1]


def test_a_derivative_a_module_name_holds_is_pickled_by_that_name():
    assert _round_trip(pf.cube_grad) is pf.cube_grad
    assert pf.cube_grad(2.0) == pytest.approx(12.0)
    # the function it was made from, differentiated again: pickled as that derivative's __wrapped__
    second = s2s.grad(pf.cube_grad.__wrapped__, mode="forward")
    assert _round_trip(second)(2.0) == pytest.approx(12.0)


def test_a_lambdas_derivative_raises_a_picklingerror_naming_it():
    g = s2s.grad(lambda x: x * x)
    with pytest.raises(pickle.PicklingError, match=r"the derivative of \S*<lambda> \(test_pickling.py:\d+\).*is a lambda"):
        pickle.dumps(g)


def test_a_nested_functions_derivative_raises_a_picklingerror_naming_it():
    def inner(x):
        return x * x
    with pytest.raises(pickle.PicklingError, match="the derivative of .*inner .*defined inside another function"):
        pickle.dumps(s2s.hessian(inner))


def test_cloudpickle_pickles_a_lambdas_derivative_by_value():
    cloudpickle = pytest.importorskip("cloudpickle")
    g = s2s.grad(lambda x: np.sin(x) * x)
    again = pickle.loads(cloudpickle.dumps(g))
    assert again(0.5) == pytest.approx(np.cos(0.5) * 0.5 + np.sin(0.5))


def _gradient_norm(g, w):
    return float(np.linalg.norm(g(w, X)))


def test_a_process_pool_maps_a_derivative():
    g = s2s.grad(pf.loss)
    ws = [W, 2 * W, -W]
    with concurrent.futures.ProcessPoolExecutor(2) as pool:
        found = list(pool.map(g, ws, [X] * 3))
    for w, gradient in zip(ws, found):
        assert np.allclose(gradient, g(w, X))


def test_it_still_behaves_as_a_function():
    g = s2s.grad(pf.loss)
    assert callable(g) and g.__wrapped__ is pf.loss and g.__module__ == pf.__name__
    assert list(inspect.signature(g).parameters) == ["w", "x"]
    assert copy.copy(g) is g and copy.deepcopy(g) is g
    assert "loss_grad" in repr(g)
    assert g.__doc__ == pf.loss.__doc__ and g.__annotations__ == pf.loss.__annotations__
    s2s.check_grad(s2s.grad(pf.cube), 1.5)          # a derivative checked as a function: its second derivative

    class Holder:
        method_grad = s2s.grad(pf.cube)          # a class attribute binds as a method, as a function does
    assert Holder.method_grad(2.0) == pytest.approx(12.0)
    with pytest.raises(TypeError):
        Holder().method_grad(2.0)                # (self is passed first: as it would be to a function)
