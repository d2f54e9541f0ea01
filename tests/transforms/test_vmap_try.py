"""s2s.vmap of a function with try / except (found by an outside tester: breaker2 F11): the batched code ran the
body as written once per example, then ignored how it ended (`failure is None` was one answer for the batch) and
returned the handler's value for every example. Now each example's body decides its own path (the branch on it is
batched as an `if` on a batched condition: both sides, merged by np.where, the body's side given only the inputs
of examples where it completed). Compared with a Python loop over the examples, and gradients with central
differences (the derivative batched, in the three modes)."""
import math

import numpy as np
import pytest

import s2s

MODES = ("auto", "reverse", "forward")


def sqrt_or_negative(x):
    try:
        return math.sqrt(x)
    except ValueError:
        return -x


def two_handlers(x):
    y = x * 2
    try:
        y = math.log(x) + y
    except ValueError:
        y = y - 1.0
    except ZeroDivisionError:
        y = 0.0
    return y * x


CASES = [(sqrt_or_negative, [0.3, -0.5, 0.8]), (sqrt_or_negative, [0.3, 0.5]), (sqrt_or_negative, [-0.3, -0.5]),
         (two_handlers, [0.3, -0.5, 0.8, 2.0])]


def central(f, x, eps=1e-6):
    return (f(x + eps) - f(x - eps)) / (2 * eps)


@pytest.mark.parametrize("f, xs", CASES, ids=[f"{f.__name__}-{len(xs)}" for f, xs in CASES])
def test_each_example_takes_its_own_path_through_the_try(f, xs):
    """breaker2 F11: `s2s.vmap(h)` returned the handler's value `-x` for every example."""
    xs = np.array(xs)
    np.testing.assert_allclose(s2s.vmap(f)(xs), [f(v) for v in xs], rtol=1e-12)     # (each example: xs[i])
    for mode in MODES:
        np.testing.assert_allclose(s2s.vmap(s2s.grad(f, mode=mode))(xs), [central(f, v) for v in xs], rtol=1e-6,
                                   err_msg=mode)
