"""A construct the fence refuses (s2s/frontend/fence.py), on a side of an `if` decided when the code runs, is refused
only if that side runs, as lowering's refusals are: library code as shipped keeps such constructs in branches for
inputs the caller never gives (scikit-learn's check_array reads a pandas DataFrame's dtypes with a generator in an
`elif`). The side raises the fence's refusal, with its place, when the derivative takes it; the other paths are
differentiated exactly. What changes the whole function wherever it stands (`yield`, `global`) is refused when the
derivative is made. Written in the style of scikit-learn's validation helpers; checked against closed forms and
central differences in every mode."""
import inspect

import numpy as np
import pytest

import s2s
from conftest import central

MODES = ("reverse", "forward", "auto")


def _line(fn, text):
    lines, first = inspect.getsourcelines(fn)
    return first + next(k for k, line in enumerate(lines) if text in line)


def _dtype_of(array, dtypes_orig, pandas_requires_conversion):
    # check_array's way: the dtypes of a DataFrame's columns, read with generators in the conditions of an `elif`
    if array.ndim > 2.5:
        dtype_orig = None
    elif pandas_requires_conversion > 0.5 and any(d == object for d in dtypes_orig):
        dtype_orig = object
    else:
        dtype_orig = array.dtype
    return dtype_orig


def squared_error(y_true, y_pred, flag):
    dtype = _dtype_of(y_pred, [np.float64], flag)
    if dtype is object:
        y_pred = y_pred.astype(np.float64)
    return np.mean((y_true - y_pred) ** 2)


def test_a_generator_in_an_elif_that_does_not_run_is_not_refused():
    y, p = np.array([1.0, 2.0, 3.0]), np.array([1.5, 1.7, 3.3])
    expected = 2 * (p - y) / 3                  # the closed form
    for mode in MODES:
        np.testing.assert_allclose(s2s.grad(squared_error, wrt=1, mode=mode)(y, p, 0.0), expected, rtol=1e-12)
    np.testing.assert_allclose(central(lambda q: squared_error(y, q, 0.0), p), expected, rtol=1e-6)
    np.testing.assert_allclose(s2s.hessian(squared_error, wrt=1)(y, p, 0.0), 2 * np.eye(3) / 3, atol=1e-12)


def test_the_generator_is_refused_with_its_place_when_its_side_runs():
    y, p = np.array([1.0, 2.0, 3.0]), np.array([1.5, 1.7, 3.3])
    line = _line(_dtype_of, "any(d == object")
    for mode in MODES:
        with pytest.raises(s2s.UnsupportedSyntax, match="generator expression") as info:
            s2s.grad(squared_error, wrt=1, mode=mode)(y, p, 1.0)
        assert f"test_fence_on_a_branch.py:{line}:" in str(info.value) and "hint:" in str(info.value)


def cleaned(x, scale):
    y = np.sin(x) * scale
    if scale > 100.0:
        y = y / scale
        del scale                               # refused if this side runs
    elif scale < -100.0:
        total = sum({k * 2.0 for k in range(3)})        # a set comprehension
        y = y * total
    return y * x


@pytest.mark.parametrize("scale, construct, text", [(200.0, "`del`", "del scale"),
                                                    (-200.0, "set comprehensions", "sum({k * 2.0")])
def test_each_side_raises_its_own_refusal_when_it_runs(scale, construct, text):
    x = 0.7
    expected = (np.cos(x) * x + np.sin(x)) * 3.0
    for mode in MODES:
        assert s2s.grad(cleaned, mode=mode)(x, 3.0) == pytest.approx(expected, rel=1e-12)
        with pytest.raises(s2s.UnsupportedSyntax, match=construct) as info:
            s2s.grad(cleaned, mode=mode)(x, scale)
        assert f"test_fence_on_a_branch.py:{_line(cleaned, text)}:" in str(info.value)
    assert central(lambda t: cleaned(t, 3.0), x) == pytest.approx(expected, rel=1e-6)
    assert s2s.grad(s2s.grad(cleaned))(x, 3.0) == pytest.approx((2 * np.cos(x) - x * np.sin(x)) * 3.0, rel=1e-12)


def helper_made_on_a_branch(x, n):
    if n > 3.0:
        def double(t):          # binds `double` on this side only: a read after the `if` is Python's error
            return eval("t * 2")
        x = double(x)
    return np.exp(x)


def test_a_definition_on_a_side_that_does_not_run():
    assert s2s.grad(helper_made_on_a_branch)(0.3, 1.0) == pytest.approx(np.exp(0.3), rel=1e-12)
    with pytest.raises(s2s.UnsupportedSyntax, match="eval"):
        s2s.grad(helper_made_on_a_branch)(0.3, 5.0)


def generator_on_a_branch(x):
    if x > 1.0:
        yield x                 # the function is a generator whichever side runs
    return x * 2.0


COUNT = 0


def global_on_a_branch(x):
    if x > 1.0:
        global COUNT            # the name is global in the whole function
        COUNT = 1
    return x * 2.0


@pytest.mark.parametrize("fn, phrase, text", [(generator_on_a_branch, "generators", "yield x"),
                                              (global_on_a_branch, "`global`", "global COUNT")])
def test_what_changes_the_whole_function_is_refused_when_the_derivative_is_made(fn, phrase, text):
    with pytest.raises(s2s.UnsupportedSyntax, match=phrase) as info:
        s2s.grad(fn)(0.5)
    assert f"test_fence_on_a_branch.py:{_line(fn, text)}:" in str(info.value)


def arm_that_is_skipped(x):
    y = x * x if x > 0.0 else sum({x * k for k in range(3)})       # the set comprehension: refused if this arm runs
    return np.sin(y)


def test_an_arm_of_a_conditional_expression_is_refused_only_if_it_runs():
    for mode in MODES:
        assert s2s.grad(arm_that_is_skipped, mode=mode)(0.8) == pytest.approx(np.cos(0.64) * 1.6, rel=1e-12)
        with pytest.raises(s2s.UnsupportedSyntax, match="set comprehensions") as info:
            s2s.grad(arm_that_is_skipped, mode=mode)(-0.8)
        assert f"test_fence_on_a_branch.py:{_line(arm_that_is_skipped, 'sum({x * k')}:" in str(info.value)
    assert central(arm_that_is_skipped, 0.8) == pytest.approx(np.cos(0.64) * 1.6, rel=1e-6)
