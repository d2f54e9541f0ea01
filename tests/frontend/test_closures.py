"""Nested functions and lambdas: recursion through a closure or a lambda is refused as
recursion; a lambda closing over a variable and given to another function is refused with the fix."""
import numpy as np
import pytest

import s2s


def ode_rhs_given_elsewhere(y0, k):
    # (sorted's key= is read since round 5, functools.reduce as its loop since stop 33)
    return np.sum(np.apply_along_axis(lambda v: v * k, 0, y0))


def test_a_lambda_closing_over_a_variable_given_to_another_function_is_refused_with_a_fix():
    """Outside round 2: crashes that became results or located refusals."""
    with pytest.raises(s2s.UnsupportedSyntax, match="lambda") as info:
        s2s.grad(ode_rhs_given_elsewhere, wrt=1)(np.array([1.0, 2.0]), 0.5)
    assert "test_closures.py:" in str(info.value) and "args=(k,)" in str(info.value)


def nested_recursion(x):
    def power(n, y):
        if n == 0:
            return y
        return power(n - 1, y * x)
    return power(3, 1.0)


def lambda_recursion(x):
    power = lambda n: 1.0 if n == 0 else x * power(n - 1)      # noqa: E731
    return power(3)


@pytest.mark.parametrize("f", [nested_recursion, lambda_recursion])
def test_nested_recursion_is_differentiated(f):
    """Outside round 2, messages: refused as recursion until issue 26, which lifts a nested function calling itself
    with its free variables."""
    for mode in ("reverse", "forward", "auto"):
        assert s2s.grad(f, mode=mode)(2.0) == pytest.approx(3 * 2.0 ** 2)
