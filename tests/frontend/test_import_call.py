"""`__import__("cmath").exp(x)` is cmath.exp (s2s/frontend/desugar/context.py's static look-up): it was read as a
method `.exp` of an unknown value, numpy.exp, and failed on the rule's arity, an error that was not about the code."""
import cmath
import math

import pytest

import s2s

MODES = ["auto", "reverse", "forward"]


def through_import(x):
    return __import__("cmath").exp(x).real + __import__("math").sin(x)


def central(f, x, h=1e-6):
    return (f(x + h) - f(x - h)) / (2 * h)


@pytest.mark.parametrize("mode", MODES)
def test_a_module_from_import_is_read_as_the_module(mode):
    x = 0.7
    got = s2s.grad(through_import, mode=mode)(x)
    assert got == pytest.approx(central(through_import, x), rel=1e-7)
    assert got == pytest.approx(cmath.exp(x).real + math.cos(x), rel=1e-12)
    assert s2s.hessian(through_import)(x) == pytest.approx(math.exp(x) - math.sin(x), rel=1e-9)
