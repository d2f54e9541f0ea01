"""A gradient has its argument's dtype, float16 included (issue 27, item 17).

The helpers that hand a gradient back (`_fill`, `_broadcast_back`, `_scatter`, ...) made it "at least float32",
so a float16 argument got a float32 gradient; and along a NumPy number, forward mode's seed, the Python number
1.0, made `np.where`, `np.dot`, `np.clip`, `np.maximum` and `np.cumsum` of numbers float64. The rule is one
helper now (`runtime._gradient_dtype`: the arguments' own float or complex dtype, integers at least float32), and a
tangent along a NumPy number is converted to its type.
"""
import numpy as np
import pytest

import s2s

# f, its derivative (elementwise, for an array of equal entries x: d/dx_i of f)
FUNCTIONS = {
    "product": (lambda x: np.sum(x * x * 3.0), lambda x: 6.0 * x),
    "sin": (lambda x: np.sum(np.sin(x) * x), lambda x: np.cos(x) * x + np.sin(x)),
    "mean of tanh": (lambda x: np.mean(np.tanh(x)), lambda x: (1 - np.tanh(x) ** 2) / np.size(x)),
    "dot": (lambda x: np.dot(x, x), lambda x: 2.0 * x),
    "where": (lambda x: np.sum(np.where(x > 0, x, 2 * x)), lambda x: np.where(x > 0, 1.0, 2.0)),
    "norm": (lambda x: np.linalg.norm(x), lambda x: x / np.linalg.norm(x)),
    "max": (lambda x: np.max(x * 2.0), None),
    "log": (lambda x: np.sum(np.log(x + 2.0)), lambda x: 1.0 / (x + 2.0)),
    "clip": (lambda x: np.sum(np.clip(x, 0.1, 0.9) ** 2), lambda x: 2.0 * x),
    "maximum": (lambda x: np.sum(np.maximum(x, 0.2)), lambda x: np.ones_like(x)),
    "cumsum": (lambda x: np.sum(np.cumsum(x) * 2.0), None),
    "quotient": (lambda x: np.sum(1.0 / (x + 1.0)), lambda x: -1.0 / (x + 1.0) ** 2),
}
MODES = ("auto", "reverse", "forward")


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("name", list(FUNCTIONS))
@pytest.mark.parametrize("shape", [(), (3,)], ids=["number", "array"])
def test_a_float16_argument_gets_a_float16_gradient(name, mode, shape):
    f, derivative = FUNCTIONS[name]
    x = np.full(shape, 0.5, dtype=np.float16)[()]
    g = s2s.grad(f, mode=mode)(x)
    assert np.asarray(g).dtype == np.float16, type(g)
    assert np.shape(g) == shape
    if derivative is not None:
        expected = derivative(np.full(shape, 0.5))
        assert np.allclose(np.asarray(g, dtype=float), expected, rtol=5e-3, atol=5e-3)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("name", ["where", "dot", "clip", "cumsum", "sin"])
@pytest.mark.parametrize("shape", [(), (3,)], ids=["number", "array"])
def test_other_float_dtypes_keep_theirs(dtype, mode, name, shape):
    f = FUNCTIONS[name][0]
    g = s2s.grad(f, mode=mode)(np.full(shape, 0.5, dtype=dtype)[()])
    assert np.asarray(g).dtype == dtype


@pytest.mark.parametrize("mode", ["auto", "reverse"])
@pytest.mark.parametrize("shape", [(), (3,)], ids=["number", "array"])
def test_complex64_keeps_its_dtype(mode, shape):
    def f(z):
        return np.real(np.sum(z * z * 3.0))
    z = np.full(shape, 0.5 + 0.25j, dtype=np.complex64)[()]
    g = s2s.grad(f, mode=mode)(z)
    assert np.asarray(g).dtype == np.complex64
    assert np.allclose(g, 6.0 * z)         # df/dx - i df/dy (autograd's convention) of 3x^2 - 3y^2


def test_value_and_grad_and_a_tuple_of_one_along_a_float16_number():
    f = FUNCTIONS["where"][0]
    value, g = s2s.value_and_grad(f)(np.float16(0.5))
    assert type(g) is np.float16 and g == 1.0 and value == np.float16(0.5)
    (g,) = s2s.grad(f, wrt=(0,))(np.float16(-0.5))
    assert type(g) is np.float16 and g == 2.0


def test_the_second_derivative_along_a_float16_number():
    def f(x):
        return x ** 3 * 2.0
    assert type(s2s.grad(s2s.grad(f))(np.float16(2.0))) is np.float16
    assert s2s.grad(s2s.grad(f))(np.float16(2.0)) == pytest.approx(24.0)


def test_a_float16_array_among_other_arguments():
    def f(w, x):
        return np.sum(np.tanh(x @ w))
    w = np.array([0.1, -0.2], dtype=np.float16)
    x = np.arange(4.0, dtype=np.float16).reshape(2, 2)
    for mode in MODES:
        gw = s2s.grad(f, mode=mode)(w, x)
        assert gw.dtype == np.float16
        expected = x.astype(float).T @ (1 - np.tanh(x.astype(float) @ w.astype(float)) ** 2)
        assert np.allclose(gw, expected, rtol=1e-2, atol=1e-2)
    gw, gx = s2s.grad(f, wrt=(0, 1))(w, x)
    assert gw.dtype == gx.dtype == np.float16


def test_an_integer_array_inside_still_gives_float_adjoints():
    from s2s import runtime
    assert runtime._gradient_dtype(np.dtype(np.int8)) == np.float32
    assert runtime._gradient_dtype(np.dtype(np.int64)) == np.float64
    assert runtime._gradient_dtype(np.dtype(np.bool_)) == np.float32
    assert runtime._gradient_dtype(np.dtype(np.float16)) == np.float16
    assert runtime._gradient_dtype(1.0, np.dtype(np.float16)) == np.float16
