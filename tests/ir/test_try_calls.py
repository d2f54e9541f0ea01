"""Calls in a `try` body (found by an outside tester: breaker2 C4, C6): a recursive call of the function raised an
internal KeyError (s2s/ir/lower_try.py named the body as written like the function, so the call was of the body
itself); a function defined inside the function raised NameError in generated code in every mode (the body as
written cannot be given the lifted function): refused where it is called, with the rewrite."""
import math

import pytest

import s2s

MODES = ("auto", "reverse", "forward")


def central(f, x, eps=1e-6):
    return (f(x + eps) - f(x - eps)) / (2 * eps)


def rec_try(x, n):
    if n == 0:
        return x
    try:
        return rec_try(math.log(x) + 2.0, n - 1)
    except ValueError:
        return x


def through_recursion(x):
    return rec_try(x, 4)


def recursion_reaching_the_handler(x):
    return rec_try(x - 2.0, 3) * x      # log of a negative number at the first level below 0


@pytest.mark.parametrize("f, x", [(through_recursion, 1.7), (recursion_reaching_the_handler, 1.5),
                                  (recursion_reaching_the_handler, 2.5)])
def test_a_recursive_call_in_a_try_body(f, x):
    """breaker2 C4: KeyError: 'rec_try' from lower_try._probe in every mode."""
    for mode in MODES:
        value, g = s2s.value_and_grad(f, mode=mode)(x)
        assert value == pytest.approx(f(x), rel=1e-12)
        assert g == pytest.approx(central(f, x), rel=1e-6), mode


def test_the_recursive_function_itself():
    """breaker2 C4, differentiating rec_try directly."""
    for mode in MODES:
        assert s2s.grad(rec_try, mode=mode)(1.7, 4) == pytest.approx(central(lambda v: rec_try(v, 4), 1.7), rel=1e-6)


def calls_a_nested_function(x):
    k = x * 2

    def g(t):
        return math.log(t) * k
    try:
        return g(x)
    except ValueError:
        return k


def test_a_nested_function_called_in_a_try_body_is_refused_where_it_is_called():
    """breaker2 C6: NameError: name 'g' is not defined, from generated code, in every mode."""
    for mode in MODES:
        with pytest.raises(s2s.S2SError) as info:
            s2s.grad(calls_a_nested_function, mode=mode)(1.7)
        message = str(info.value)
        assert "test_try_calls.py:" in message and "return g(x)" in message
        assert "defined inside the function" in message and "module level" in message
