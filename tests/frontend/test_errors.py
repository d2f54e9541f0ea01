"""Unsupported code and bad arguments give an S2SError with the place and what to do."""
import math
import re

import numpy as np
import pytest

import s2s


def _line_of(fn, text):
    import inspect
    lines, first = inspect.getsourcelines(fn)
    for k, line in enumerate(lines):
        if text in line:
            return first + k
    raise AssertionError(text)


def with_try(x):
    try:
        a = x * 2
        y = math.log(a)
    except ValueError:
        y = a           # what the body assigned before it raised: refused
    return y


def with_yield(x):
    yield x


def with_with(x):
    with open("f") as handle:
        pass
    return x


def with_global(x):
    global COUNTER
    COUNTER = 1
    return x


def with_del(x):
    y = x
    del y
    return x


def with_class(x):
    class Point:
        pass
    return x


def with_lambda(x):
    f = lambda t: t * x  # noqa: E731
    return f


def with_eval(x):
    return eval("x * 2")


def with_walrus(x):
    if (y := x * 2) > 1:
        return y
    return x


def with_star(x, n=2):
    return math.hypot(*[x * (k + 1) for k in range(n)])


def with_match(x):
    match x:
        case 1.0:
            return x
    return x


async def with_async(x):
    return x


def with_nonlocal_outer():
    total = 0.0

    def with_nonlocal(x):
        nonlocal total
        total = x
        return x
    return with_nonlocal


with_nonlocal = with_nonlocal_outer()


def with_attribute_write(x, holder):
    holder.value = x
    return x


def with_star_signature(*xs):
    return xs[0]


def with_comprehension(x):
    return sum({x * k for k in range(3)})


def with_raise(x):
    if x < 0:
        raise ValueError("negative")
    return x


CASES = [
    (with_async, "async functions", "async def with_async"),
    (with_nonlocal, "`nonlocal`", "nonlocal total"),
    (with_attribute_write, "assignment into an attribute", "holder.value = x"),
    (with_star_signature, "star-arguments", "def with_star_signature"),
    (with_comprehension, "set comprehensions", "{x * k for k in range(3)}"),
    (with_try, "`try`", "y = a"),
    (with_yield, "generators", "yield x"),
    (with_global, "`global` declarations", "global COUNTER"),
    (with_del, "`del`", "del y"),
    (with_class, "class definitions", "class Point"),
    (with_lambda, "`lambda`", "lambda t"),
    (with_eval, "`eval`", 'eval("x * 2")'),
    (with_walrus, "walrus", "(y := x * 2)"),
    (with_match, "`match`", "match x:"),
]


@pytest.mark.parametrize("fn, phrase, text", CASES, ids=[c[0].__name__ for c in CASES])
def test_unsupported_constructs_are_refused_with_their_place(fn, phrase, text):
    with pytest.raises(s2s.UnsupportedSyntax) as info:
        s2s.grad(fn)
    message = str(info.value)
    line = _line_of(fn, text)
    assert f"test_errors.py:{line}:" in message
    assert phrase in message
    assert text.strip() in message           # the source line is shown
    assert "^" in message and "hint:" in message


def test_star_arguments_of_unknown_length_given_a_derivative_are_refused_with_their_place():
    """(Given no value with a derivative, such a call is Python's: tests/frontend/test_star_arguments.py.)"""
    with pytest.raises(s2s.S2SError) as info:
        s2s.grad(with_star)(1.5)
    message = str(info.value)
    assert f"test_errors.py:{_line_of(with_star, 'math.hypot(*')}:" in message
    assert "star-arguments" in message and "pass the arguments one by one" in message and "^" in message


def test_caret_points_at_the_column():
    with pytest.raises(s2s.UnsupportedSyntax) as info:
        s2s.grad(with_eval)
    lines = str(info.value).splitlines()
    source_line, caret_line = lines[-2], lines[-1]
    assert source_line[caret_line.index("^"):].startswith("eval(")


def test_missing_rule_names_the_function_and_the_fix():
    def f(x):
        return math.remainder(x, 0.3)       # (math.gamma was the example until it had a rule)

    with pytest.raises(s2s.NoDerivativeRule) as info:
        s2s.grad(f)(2.0)
    message = str(info.value)
    assert "no derivative rule for math.remainder" in message
    assert "s2s.adjoint" in message and "rules/math_functions.py" in message
    assert f"test_errors.py:{_line_of(f, 'math.remainder(x, 0.3)')}:" in message


def test_builtin_without_source():
    with pytest.raises(s2s.SourceUnavailable, match="cannot read the source of 'remainder'"):
        s2s.grad(math.remainder)            # (math.gamma has a rule now)


def test_lambda_is_differentiated():      # issue 13: found by its code object's positions
    assert s2s.grad(lambda x: x * x)(3.0) == 6.0


def square(x):
    return x * x


def vector(x):
    return x * 2.0


@pytest.mark.parametrize("wrt, phrase", [("z", "names no argument"), (3, "out of range"), ((0, 0), "twice"),
                                         (1.5, "position or name")])
def test_bad_wrt(wrt, phrase):
    with pytest.raises(s2s.BadArgument, match=phrase):
        s2s.grad(square, wrt=wrt)


def test_integer_argument_in_differentiated_position():
    with pytest.raises(TypeError, match=r"argument 'x' of square is differentiated but is int 2"):
        s2s.grad(square)(2)
    with pytest.raises(s2s.BadArgument, match="str"):
        s2s.grad(square)("a")


def test_non_scalar_output_is_refused():
    with pytest.raises(TypeError, match="scalar output"):
        s2s.grad(vector)(np.array([1.0, 2.0]))


def test_undefined_variable_on_some_path():
    def f(x):
        if x > 0:
            y = x
        return y

    with pytest.raises(s2s.S2SError, match="'y' may be used before it is assigned"):
        s2s.grad(f)


def test_error_class_hierarchy():
    for cls in (s2s.UnsupportedSyntax, s2s.NoDerivativeRule, s2s.SourceUnavailable, s2s.BadArgument):
        assert issubclass(cls, s2s.S2SError)
    assert issubclass(s2s.BadArgument, TypeError)
