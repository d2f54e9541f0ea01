"""The same derivative code on CuPy arrays (a GPU), float32 kept as float32.

The CuPy tests are skipped, with the reason, when CuPy or a GPU is missing. A stand-in runs everywhere:
`StrictArray` behaves as CuPy does towards NumPy (it takes NumPy's functions through
`__array_function__`/`__array_ufunc__`, refuses to be converted to NumPy or to a Python number, and refuses
NumPy arrays as operands), so derivative code that would convert or mix is caught on any machine.
"""
import numpy as np
import pytest

import s2s
import sys
import os

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "examples"))
import logistic_regression  # noqa: E402
import mlp  # noqa: E402


class StrictArray(np.lib.mixins.NDArrayOperatorsMixin):
    """An array of another library, as strict as CuPy: no conversion to NumPy, no NumPy array operand."""

    def __init__(self, data):
        self.data = np.asarray(data)

    shape = property(lambda self: self.data.shape)
    dtype = property(lambda self: self.data.dtype)
    ndim = property(lambda self: self.data.ndim)
    size = property(lambda self: self.data.size)
    T = property(lambda self: StrictArray(self.data.T))

    def __repr__(self):
        return f"StrictArray({self.data!r})"

    def __len__(self):
        return len(self.data)

    def __getitem__(self, index):
        return StrictArray(self.data[_unwrap(index)])

    def __setitem__(self, index, value):
        self.data[_unwrap(index)] = _unwrap(value)

    def copy(self):
        return StrictArray(self.data.copy())

    def astype(self, dtype, copy=True):
        return StrictArray(self.data.astype(dtype, copy=copy))

    def reshape(self, *shape):
        return StrictArray(self.data.reshape(*shape))

    def __array__(self, *args, **kwargs):
        raise TypeError("Implicit conversion to a NumPy array is not allowed (StrictArray, as CuPy)")

    def __float__(self):
        raise TypeError("float() of a StrictArray: derivative code must not make a Python number of an array")

    __int__ = __bool__ = __index__ = item = __float__

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        _refuse_numpy(inputs)
        return _wrap(getattr(ufunc, method)(*_unwrap(inputs), **_unwrap(kwargs)))

    def __array_function__(self, func, types, args, kwargs):
        _refuse_numpy(args)
        return _wrap(func(*_unwrap(args), **_unwrap(kwargs)))


def _unwrap(value):
    if isinstance(value, StrictArray):
        return value.data
    if isinstance(value, (tuple, list)):
        return type(value)(_unwrap(v) for v in value)
    if isinstance(value, dict):
        return {k: _unwrap(v) for k, v in value.items()}
    return value


def _wrap(value):
    if isinstance(value, (np.ndarray, np.generic)):     # CuPy's reductions give 0-d arrays, not NumPy scalars
        return StrictArray(value)
    if isinstance(value, (tuple, list)):
        return type(value)(_wrap(v) for v in value)
    return value


def _refuse_numpy(values):
    for v in values:
        if isinstance(v, (tuple, list)):
            _refuse_numpy(v)
        elif isinstance(v, np.ndarray):
            raise TypeError(f"a NumPy array of shape {v.shape} as an operand with a StrictArray (CuPy refuses it)")


def _logistic_data(xp, dtype=np.float32):
    X, y = logistic_regression.make_data(n=300, features=4, seed=7)
    X = (X - X.mean(axis=0)) / X.std(axis=0)
    w = np.random.default_rng(8).normal(size=4)
    return X.astype(dtype), y.astype(dtype), w.astype(dtype), [xp(a) for a in (X.astype(dtype), y.astype(dtype),
                                                                            w.astype(dtype))]


def test_stand_in_logistic_gradient_float32_stays_in_its_library():
    X, y, w, (Xs, ys, ws) = _logistic_data(StrictArray)
    b = np.float32(0.2)
    value, (dw, db) = s2s.value_and_grad(logistic_regression.loss, wrt=("w", "b"))(ws, b, Xs, ys)
    assert isinstance(dw, StrictArray) and isinstance(value, StrictArray)
    assert dw.dtype == np.float32
    expected = s2s.grad(logistic_regression.loss, wrt=("w", "b"))(w, b, X, y)
    np.testing.assert_allclose(dw.data, expected[0], rtol=1e-5, atol=1e-7)
    assert float(_unwrap(db)) == pytest.approx(float(expected[1]), rel=1e-5, abs=1e-7)
    z = X.astype(np.float64) @ w + b
    np.testing.assert_allclose(dw.data, X.T @ (1 / (1 + np.exp(-z)) - y) / len(y), rtol=1e-4, atol=1e-6)


def test_stand_in_mlp_gradient_float32():
    X, Y = mlp.make_task(n=64, seed=9)
    params = [p.astype(np.float32) for p in mlp.init(hidden=8, seed=10)]
    X, Y = X.astype(np.float32), Y.astype(np.float32)
    wrt = (0, 1, 2, 3)
    expected = s2s.grad(mlp.mse, wrt=wrt)(*params, X, Y)
    got = s2s.grad(mlp.mse, wrt=wrt)(*[StrictArray(p) for p in params], StrictArray(X), StrictArray(Y))
    for g, e in zip(got, expected):
        assert isinstance(g, StrictArray) and g.dtype == np.float32
        np.testing.assert_allclose(g.data, e, rtol=1e-5, atol=1e-6)


# ---------------------------------------------------------------- CuPy itself, when there is a GPU

def _cupy():
    cupy = pytest.importorskip("cupy", reason="CuPy is not installed: pip install -e '.[cupy]' (an NVIDIA GPU)")
    try:
        devices = cupy.cuda.runtime.getDeviceCount()
    except Exception as exc:        # CuPy without a driver or a device
        pytest.skip(f"no GPU for CuPy: {exc}")
    if not devices:
        pytest.skip("no GPU for CuPy")
    return cupy


def test_cupy_logistic_gradient_float32():
    cupy = _cupy()
    X, y, w, (Xc, yc, wc) = _logistic_data(cupy.asarray)
    b = np.float32(0.2)
    value, (dw, db) = s2s.value_and_grad(logistic_regression.loss, wrt=("w", "b"))(wc, b, Xc, yc)
    assert isinstance(dw, cupy.ndarray) and dw.dtype == np.float32
    expected = s2s.grad(logistic_regression.loss, wrt=("w", "b"))(w, b, X, y)
    np.testing.assert_allclose(cupy.asnumpy(dw), expected[0], rtol=1e-5, atol=1e-7)
    assert float(db) == pytest.approx(float(expected[1]), rel=1e-5, abs=1e-7)


def test_cupy_mlp_gradient_float32():
    cupy = _cupy()
    X, Y = mlp.make_task(n=64, seed=9)
    params = [p.astype(np.float32) for p in mlp.init(hidden=8, seed=10)]
    X, Y = X.astype(np.float32), Y.astype(np.float32)
    wrt = (0, 1, 2, 3)
    expected = s2s.grad(mlp.mse, wrt=wrt)(*params, X, Y)
    got = s2s.grad(mlp.mse, wrt=wrt)(*[cupy.asarray(p) for p in params], cupy.asarray(X), cupy.asarray(Y))
    for g, e in zip(got, expected):
        assert isinstance(g, cupy.ndarray) and g.dtype == np.float32
        np.testing.assert_allclose(cupy.asnumpy(g), e, rtol=1e-5, atol=1e-6)
