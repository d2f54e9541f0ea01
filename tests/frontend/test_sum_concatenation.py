"""`sum(items, start)` with a list or tuple start is concatenation (found by an outside tester: breaker2 F10, C3, C5):
`sum(pairs, [])`, `sum(pairs, ())`, `sum(parts, [1.0])` were differentiated as a numeric sum (every pair received the
whole adjoint list; forward mode raised TypeError in generated code), and `functools.reduce(operator.add, lists)` and
the loop `acc = acc + item` over a list of lists raised ValueError in generated code (the items' kinds were lost, so
`+` was read as arithmetic). Now the desugaring writes the loop of `+` (s2s/frontend/desugar/reductions.py), the
kinds of a list built in a loop are kept (s2s/analysis/activity.py), and a start held by a variable is refused.
Gradients against central differences in the three modes."""
import functools
import operator

import numpy as np
import pytest

import s2s

MODES = ("auto", "reverse", "forward")
X = np.array([0.3, -0.5, 0.8])


def central(f, x, eps=1e-6):
    return np.array([(f(x + eps * e) - f(x - eps * e)) / (2 * eps) for e in np.eye(len(x))])


def flatten_lists(x):
    pairs = [[t, 2 * t] for t in x]
    flat = sum(pairs, [])
    return flat[0] * flat[3]


def flatten_then_array(x):
    return np.sum(np.array(sum([[t, t * t] for t in x], [])))


def flatten_tuples(x):
    flat = sum([(t, 2 * t) for t in x], ())
    return flat[0] * flat[3] + flat[5] ** 2


def nonempty_start(x):
    parts = [[x[0]], [x[1], x[2]]]
    flat = sum(parts, [1.0])
    return flat[0] + flat[1] * flat[2] * flat[3]


def start_keyword(x):
    flat = sum([[t, t ** 3] for t in x], start=[x[2]])
    return flat[0] * flat[2] - flat[6]


def reduce_add(x):
    flat = functools.reduce(operator.add, [[t, 2 * t] for t in x])
    return flat[0] * flat[3]


def reduce_add_start(x):
    flat = functools.reduce(operator.add, [[t, 2 * t] for t in x], [x[1]])
    return flat[0] * flat[4]


def loop_over_lists(x):
    pairs = [[t, 2 * t] for t in x]
    acc = []
    for item in pairs:
        acc = acc + item
    return acc[0] * acc[3] + acc[5]


def numeric_sum_keeps_its_rule(x):
    return sum([x[0], x[1]], x[2]) * sum(x)


CASES = [flatten_lists, flatten_then_array, flatten_tuples, nonempty_start, start_keyword, reduce_add,
         reduce_add_start, loop_over_lists, numeric_sum_keeps_its_rule]


@pytest.mark.parametrize("f", CASES, ids=[f.__name__ for f in CASES])
def test_concatenation_by_sum_and_reduce_is_differentiated_as_python_runs_it(f):
    """breaker2 F10 / C3 / C5: a wrong reverse gradient and a forward crash for `sum(lists, [])`; ValueError in
    generated code for `functools.reduce(operator.add, lists)`."""
    expected = central(f, X)
    for mode in MODES:
        value, g = s2s.value_and_grad(f, mode=mode)(X)
        assert value == pytest.approx(f(X), rel=1e-12)
        np.testing.assert_allclose(g, expected, rtol=1e-6, atol=1e-9, err_msg=mode)


def start_held_by_a_variable(x):
    start = []
    pairs = [[t, 2 * t] for t in x]
    flat = sum(pairs, start)
    return flat[0] * flat[3]


def test_a_sequence_start_held_by_a_variable_is_refused_at_its_place():
    """breaker2 F10: the numeric sum's rule is never used for a concatenation."""
    for mode in MODES:
        with pytest.raises(s2s.S2SError) as info:
            s2s.grad(start_held_by_a_variable, mode=mode)(X)
        message = str(info.value)
        assert "test_sum_concatenation.py:" in message and "flat = sum(pairs, start)" in message
        assert "concatenates" in message
