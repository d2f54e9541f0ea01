"""Derivatives of derivatives: the generated code is itself differentiable."""
import math

import numpy as np
import pytest

import s2s
from conftest import code
from s2s.testing import check_grads
import test_control_flow as cf

SECOND_DERIVATIVES = {
    "math.sin(x)": lambda x: -math.sin(x),
    "math.cos(x)": lambda x: -math.cos(x),
    "math.tan(x)": lambda x: 2 * math.tan(x) / math.cos(x) ** 2,
    "math.exp(x)": math.exp,
    "math.expm1(x)": math.exp,
    "math.log(x)": lambda x: -1 / x ** 2,
    "math.log(x, 3.0)": lambda x: -1 / (x ** 2 * math.log(3.0)),
    "math.log1p(x)": lambda x: -1 / (1 + x) ** 2,
    "math.log2(x)": lambda x: -1 / (x ** 2 * math.log(2)),
    "math.log10(x)": lambda x: -1 / (x ** 2 * math.log(10)),
    "math.sqrt(x)": lambda x: -0.25 * x ** -1.5,
    "math.asin(x)": lambda x: x / (1 - x * x) ** 1.5,
    "math.acos(x)": lambda x: -x / (1 - x * x) ** 1.5,
    "math.atan(x)": lambda x: -2 * x / (1 + x * x) ** 2,
    "math.sinh(x)": math.sinh,
    "math.cosh(x)": math.cosh,
    "math.tanh(x)": lambda x: -2 * math.tanh(x) * (1 - math.tanh(x) ** 2),
    "math.erf(x)": lambda x: -4 * x / math.sqrt(math.pi) * math.exp(-x * x),
    "math.atan2(x, 2.0)": lambda x: -4 * x / (x * x + 4) ** 2,
    "math.hypot(x, 2.0)": lambda x: 4 / (x * x + 4) ** 1.5,
    "math.pow(x, 3.5)": lambda x: 3.5 * 2.5 * x ** 1.5,
    "x ** 4": lambda x: 12 * x * x,
    "2.0 ** x": lambda x: math.log(2) ** 2 * 2 ** x,
    "1.0 / x": lambda x: 2 / x ** 3,
    "x * x * x - 3.0 * x": lambda x: 6 * x,
    "abs(x) * x": lambda x: 2 * math.copysign(1.0, x),
}


@pytest.mark.parametrize("expression", SECOND_DERIVATIVES)
@pytest.mark.parametrize("x", [0.3, 0.7])
def test_second_derivative_of_each_math_rule(expression, x, make_fn):
    f = make_fn(f"def f(x):\n    return {expression}\n")
    assert s2s.grad(s2s.grad(f))(x) == pytest.approx(SECOND_DERIVATIVES[expression](x), rel=1e-9)
    assert s2s.hessian(f)(x) == pytest.approx(SECOND_DERIVATIVES[expression](x), rel=1e-9)


def rosenbrock(x):
    return np.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1 - x[:-1]) ** 2)


def rosenbrock_hessian(x):
    a, b = x
    return np.array([[1200 * a * a - 400 * b + 2, -400 * a], [-400 * a, 200.0]])


@pytest.mark.parametrize("point", [(-1.2, 1.0), (1.0, 1.0), (0.3, -0.8), (2.0, 3.5)])
def test_hessian_of_rosenbrock_against_its_closed_form(point):
    x = np.array(point)
    assert s2s.hessian(rosenbrock)(x) == pytest.approx(rosenbrock_hessian(x), rel=1e-12)


def test_hvp_against_finite_differences_of_gradients():
    rng = np.random.default_rng(8)
    x, v = rng.normal(size=5), rng.normal(size=5)
    check_grads(rosenbrock, (x,), order=2)        # hvp against differences of the gradient, both modes
    product = s2s.hvp(rosenbrock)(x, v)
    assert product == pytest.approx(s2s.hessian(rosenbrock)(x) @ v, rel=1e-12)


def horner(x, coefficients):
    y = 0.0
    for c in coefficients:
        y = y * x + c
    return y


def test_third_derivative_of_a_polynomial_in_a_for_loop():
    coefficients = [2.0, -1.0, 0.5, 3.0, 1.0]     # 2x^4 - x^3 + 0.5x^2 + 3x + 1
    x = 0.7
    third = s2s.grad(s2s.grad(s2s.grad(horner)))(x, coefficients)
    assert third == pytest.approx(48 * x - 6, rel=1e-12)
    second = s2s.grad(s2s.grad(horner))(x, coefficients)
    assert second == pytest.approx(24 * x * x - 6 * x + 1, rel=1e-12)


@pytest.mark.parametrize("fn, args", [(cf.power_loop, (1.3, 5)), (cf.while_depends_on_x, (3.3,)),
                                      (cf.nested_break_continue, (1.2,)), (cf.early_return, (1.1,)),
                                      (cf.power_and_branch, (1.3, 6))])
def test_second_derivative_through_loops_and_branches(fn, args):
    check_grads(fn, args, order=2, wrt=0)         # grad(grad(fn)) and hvp against differences of the gradient


def test_second_derivative_source_is_readable_python():
    source = code(s2s.source(horner, 0.7, [1.0, 2.0], order=2))
    assert "def horner_grad_jvp(x, coefficients, x_dot):" in source
    assert "_dot_stack" in source         # the tangents of the values the gradient saves


def test_derivative_of_derivative_along_an_array_is_refused_with_advice():
    with pytest.raises(s2s.S2SError, match="hessian"):
        s2s.grad(s2s.grad(rosenbrock))(np.array([1.0, 2.0]))


def list_read_twice(x):
    ys = []
    for i in range(2):
        ys.append(x)
    return ys[0] * ys[1]


def list_parameter(ws, x):
    return ws[0] * ws[1] * x + ws[0] * ws[0]


def dict_in_loop(x):
    d = {"a": x, "b": 1.0}
    for i in range(3):
        d["b"] = d["b"] * d["a"] + x
    return d["b"]


def test_second_derivatives_through_containers():
    """Independent review: a case found silently wrong once, now right or refused."""
    assert s2s.grad(s2s.grad(list_read_twice))(3.0) == pytest.approx(2.0)
    assert s2s.hessian(list_read_twice)(3.0) == pytest.approx(2.0)
    product = s2s.hvp(list_parameter)([1.0, 2.0], 0.5, [1.0, 0.0])
    assert product == pytest.approx([2.0 + 0.0, 0.5])
    x, eps = 0.7, 1e-5
    gradient = s2s.grad(dict_in_loop)
    assert s2s.hessian(dict_in_loop)(x) == pytest.approx((gradient(x + eps) - gradient(x - eps)) / (2 * eps),
                                                         rel=1e-6)
    with pytest.raises(s2s.BadArgument, match="hessian differentiates a float or an array"):
        s2s.hessian(list_parameter)([1.0, 2.0], 0.5)
