"""`functools.reduce` as the loop it runs (s2s/frontend/desugar/reductions.py) and `np.fill_diagonal(M, v)` as the
assignment it is (s2s/frontend/desugar/writers.py): both were refused ("no derivative rule for
_functools.reduce", "s2s does not support fill_diagonal") in programs written the way people write them."""
import functools
import operator

import numpy as np
import pytest

import s2s
from conftest import assert_gradient, numeric


def product_of_items(x):
    return functools.reduce(lambda p, q: p * q, list(x), 1.0)


def product_without_start(x):
    return functools.reduce(operator.mul, x)


def horner_by_reduce(x, coefficients=(0.5, -1.0, 2.0, 0.25)):
    return functools.reduce(lambda acc, c: acc * x + c, coefficients, 0.0)


def zero_diagonal(v):
    M = np.outer(v, v)
    np.fill_diagonal(M, 0.0)
    return np.sum(M ** 2)


def diagonal_from_a_value(v, a):
    M = np.outer(v, v)
    np.fill_diagonal(M, a * a)
    return np.sum(np.sin(M))


V = np.array([0.3, -1.1, 0.7, 1.6])


@pytest.mark.parametrize("f, args, wrt", [
    (product_of_items, (V,), 0),
    (product_without_start, (V,), 0),
    (horner_by_reduce, (0.7,), 0),
    (zero_diagonal, (V,), 0),
    (diagonal_from_a_value, (V, 0.4), 0),
    (diagonal_from_a_value, (V, 0.4), 1),
], ids=lambda v: getattr(v, "__name__", str(v)))
def test_gradients(f, args, wrt):
    assert_gradient(f, *args, wrt=wrt)


def test_second_order_of_reduce():
    hvp = s2s.hvp(horner_by_reduce)
    expected = 2 * 3 * 0.5 * 0.7 + 2 * -1.0          # p'' of 0.5 x^3 - x^2 + 2 x + 0.25
    np.testing.assert_allclose(hvp(0.7, 1.0), expected, rtol=1e-7)


def test_the_values_are_pythons():
    assert s2s.value_and_grad(product_without_start)(V)[0] == pytest.approx(np.prod(V))
    M = np.outer(V, V)
    np.fill_diagonal(M, 0.0)
    assert s2s.value_and_grad(zero_diagonal)(V)[0] == pytest.approx(np.sum(M ** 2))
    np.testing.assert_allclose(s2s.grad(zero_diagonal, mode="forward")(V), numeric(zero_diagonal, (V,), 0),
                               rtol=1e-6)


def fill_a_vector(x):
    y = x * 1.0
    np.fill_diagonal(y, 0.0)
    return np.sum(y * x)


def fill_a_cube(x):
    y = x * 1.0
    np.fill_diagonal(y, 0.0)
    return np.sum(y * y)


def test_fill_diagonal_raises_where_numpy_raises():
    with pytest.raises(ValueError, match="at least 2-d"):
        s2s.grad(fill_a_vector)(V)
    with pytest.raises(ValueError, match="equal length"):
        s2s.grad(fill_a_cube)(np.ones((2, 3, 3)))
    cube = np.arange(27.0).reshape(3, 3, 3) / 10
    assert_gradient(fill_a_cube, cube)
