"""Reverse mode on straight-line code: closed forms, the API's forms, the seed example."""
import math

import numpy as np
import pytest

import s2s
from s2s.testing import check_grads


def seed(x1, x2):
    return math.log(x1) + x1 * x2 - math.sin(x2)


def test_seed_example_value_and_gradient():
    value, (d1, d2) = s2s.value_and_grad(seed, wrt=(0, 1))(2.0, 5.0)
    assert value == pytest.approx(math.log(2) + 10 - math.sin(5))
    assert d1 == pytest.approx(1 / 2 + 5)
    assert d2 == pytest.approx(2 - math.cos(5))
    assert round(value, 6) == 11.652071 and round(d2, 6) == 1.716338


@pytest.mark.parametrize("x", [0.3, 2.0, 7.5])
def test_seed_example_against_central_differences(x):
    check_grads(seed, (x, 1.7), order=2)          # both modes, and second order


# each case: (function, gradient in closed form), at x = 1.7 (and c = 3)
def c_minus_x(x):
    return 3.0 - x


def x_minus_c(x):
    return x - 3.0


def c_over_x(x):
    return 3.0 / x


def x_over_c(x):
    return x / 3.0


def x_pow_c(x):
    return x ** 3


def c_pow_x(x):
    return 3.0 ** x


def x_pow_x(x):
    return x ** x


def neg(x):
    return -x * 2.0


CLOSED_FORMS = [
    (c_minus_x, lambda x: -1.0),
    (x_minus_c, lambda x: 1.0),
    (c_over_x, lambda x: -3.0 / x ** 2),
    (x_over_c, lambda x: 1 / 3.0),
    (x_pow_c, lambda x: 3 * x ** 2),
    (c_pow_x, lambda x: math.log(3.0) * 3.0 ** x),
    (x_pow_x, lambda x: x ** x * (math.log(x) + 1)),
    (neg, lambda x: -2.0),
]


@pytest.mark.parametrize("fn, closed_form", CLOSED_FORMS, ids=[f.__name__ for f, _ in CLOSED_FORMS])
@pytest.mark.parametrize("x", [0.4, 1.7, 3.2])
def test_closed_forms(fn, closed_form, x):
    assert s2s.grad(fn)(x) == pytest.approx(closed_form(x), rel=1e-12)
    s2s.check_grad(fn, x)


def two_args(x, y):
    return x ** y - y / x


def test_x_pow_y_both_arguments():
    x, y = 1.3, 2.4
    dx, dy = s2s.grad(two_args, wrt=(0, 1))(x, y)
    assert dx == pytest.approx(y * x ** (y - 1) + y / x ** 2)
    assert dy == pytest.approx(x ** y * math.log(x) - 1 / x)


def test_wrt_by_name_and_position_agree():
    x, y = 1.3, 2.4
    assert s2s.grad(two_args, wrt="y")(x, y) == s2s.grad(two_args, wrt=1)(x, y)
    assert s2s.grad(two_args, wrt=("x", "y"))(x, y) == s2s.grad(two_args, wrt=(0, 1))(x, y)
    assert s2s.grad(two_args, wrt=-1)(x, y) == s2s.grad(two_args, wrt=1)(x, y)


def test_decorator_forms():
    @s2s.grad
    def square(x):
        return x * x

    @s2s.grad(wrt=1)
    def product(x, y):
        return x * y * y

    assert square(3.0) == 6.0
    assert product(2.0, 3.0) == 12.0


def test_keyword_arguments_and_defaults():
    def scaled(x, scale=2.0):
        return scale * x * x

    g = s2s.grad(scaled)
    assert g(3.0) == 12.0
    assert g(3.0, scale=1.0) == 6.0
    assert g(x=3.0, scale=1.0) == 6.0


def test_reassigned_variables_and_tuple_unpacking():
    def f(x, y):
        a, b = x * y, x + y
        a = a * a
        a += b
        a, b = b, a
        return a * b

    x, y = 0.7, -1.3
    # f = (x + y) * ((x y)^2 + x + y), so d/dx (x + y) * ((x y)^2 + x + y) = ((x y)^2 + x + y) + (x + y) * (2 x y^2 + 1)
    expected_dx = ((x * y) ** 2 + x + y) + (x + y) * (2 * x * y * y + 1)
    assert s2s.grad(f)(x, y) == pytest.approx(expected_dx)
    s2s.check_grad(f, x, y, wrt=(0, 1))


def test_integer_operations_carry_no_adjoint():
    def f(x):
        k = x // 1.0
        r = round(x)
        return x * k + r * x + (x > 1.0)

    x = 2.6
    # k = 2, r = 3: d/dx = k + r
    assert s2s.grad(f)(x) == pytest.approx(5.0)


def test_modulo_on_floats():
    def f(x):
        return x % 1.5

    assert s2s.grad(f)(4.0) == pytest.approx(1.0)
    s2s.check_grad(f, 4.0)


def test_unused_argument_has_zero_gradient():
    def f(x, y):
        return y * 2.0

    assert s2s.grad(f, wrt=(0, 1))(1.0, 2.0) == (0.0, 2.0)


def test_constant_function_has_zero_gradient():
    def f(x):
        return 3.0

    assert s2s.grad(f)(1.0) == 0.0


def test_globals_are_read_at_call_time():
    def f(x):
        return SCALE * x  # noqa: F821  (resolved through the test module's globals)

    globals()["SCALE"] = 2.0
    g = s2s.grad(f)
    assert g(1.0) == 2.0
    globals()["SCALE"] = 5.0
    assert g(1.0) == 5.0


def test_closure_variables_are_read_at_call_time():
    factor = 2.0

    def f(x):
        return factor * x * x

    g = s2s.grad(f)
    assert g(1.0) == 4.0
    factor = 3.0
    assert g(1.0) == 6.0


def test_math_module_imported_under_other_names():
    from math import sin as s
    import math as m

    def f(x):
        return s(x) + m.cos(x)

    assert s2s.grad(f)(0.4) == pytest.approx(math.cos(0.4) - math.sin(0.4))


def test_value_and_grad_returns_the_value():
    value, gradient = s2s.value_and_grad(lambda_free)(3.0)
    assert value == 9.0 and gradient == 6.0


def lambda_free(x):
    return x * x


def test_numpy_scalars_are_accepted():
    assert s2s.grad(lambda_free)(np.float64(3.0)) == 6.0
