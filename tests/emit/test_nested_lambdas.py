"""Lambdas on one line, nested as JAX users write them (issue 27, item 10).

`s2s.grad(lambda x: s2s.grad(lambda y: y ** 3)(x))` made a derivative named `lambda__grad` calling the inner
derivative, bound under the same name `lambda__grad`: the generated function called itself (RecursionError). A
bound object never takes the generated function's name (or a local's) now.
"""
import math

import numpy as np
import pytest

import s2s

MODES = ("auto", "reverse", "forward")


@pytest.mark.parametrize("mode", MODES)
def test_gradient_of_a_gradient_both_lambdas(mode):
    g = s2s.grad(lambda x: s2s.grad(lambda y: y ** 3)(x), mode=mode)
    for x in (2.0, -0.5, 1.3):
        assert g(x) == pytest.approx(6.0 * x)        # d/dx 3x^2


@pytest.mark.parametrize("mode", MODES)
def test_gradient_of_a_gradient_times_x(mode):
    # the JAX spelling with the inner gradient used in an expression: d/dx (3x^2 * x) = 9x^2
    g = s2s.grad(lambda x: s2s.grad(lambda y: y ** 3)(x) * x, mode=mode)
    for x in (2.0, -0.5, 1.3):
        assert g(x) == pytest.approx(9.0 * x ** 2)


@pytest.mark.parametrize("mode", MODES)
def test_two_inner_lambdas_with_different_bodies(mode):
    g = s2s.grad(lambda x: s2s.grad(lambda y: np.sin(y) * y)(x) + s2s.grad(lambda z: z ** 2)(x), mode=mode)
    for x in (0.7, -1.2):
        assert g(x) == pytest.approx(2 * math.cos(x) - x * math.sin(x) + 2.0)


@pytest.mark.parametrize("mode", MODES)
def test_two_lambdas_on_one_line_are_told_apart(mode):
    f, g = (lambda x: x ** 2), (lambda x: x ** 3)
    a, b = lambda x: x * x, lambda x: x * x * x
    assert s2s.grad(f, mode=mode)(2.0) == pytest.approx(4.0)
    assert s2s.grad(g, mode=mode)(2.0) == pytest.approx(12.0)
    assert s2s.grad(a, mode=mode)(3.0) == pytest.approx(6.0)
    assert s2s.grad(b, mode=mode)(3.0) == pytest.approx(27.0)


def test_the_generated_code_calls_the_inner_derivative_by_another_name():
    text = s2s.source(lambda x: s2s.grad(lambda y: y ** 3)(x), 2.0, mode="reverse")
    body = text.partition("def lambda__grad(x):")[2]
    assert "lambda__grad(x)" not in body          # the function does not call itself
    assert "lambda__grad_1(x)" in body
