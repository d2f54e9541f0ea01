"""Control flow: branches and loops become branches and loops in the derivative."""
import math

import numpy as np
import pytest

import s2s
from conftest import code, agrees, assert_gradient
from s2s import runtime
from s2s.analysis.values import kind_of
from s2s.api import Options, derivative_ir
from s2s.ir.core import Op, walk
from golden_cases import power_and_branch  # noqa: F401  (shared with the golden files)


def pushes(fn, *args, wrt=0):
    """How many values the forward sweep saves for the reverse sweep (stack pushes in the derivative)."""
    derivative = derivative_ir(fn, Options((wrt,)), [kind_of(a) for a in args])
    return sum(1 for s in walk(derivative.body) if isinstance(s, Op) and s.prim is runtime.push)


# ---------------------------------------------------------------- branches

def piecewise(x):
    if x < -1.0:
        y = -x * x
    elif x < 1.0:
        y = x * 3.0
    else:
        y = math.exp(x)
    return y


@pytest.mark.parametrize("x, expected", [(-2.0, 4.0), (0.5, 3.0), (2.0, math.exp(2.0))])
def test_if_elif_else(x, expected):
    assert s2s.grad(piecewise)(x) == pytest.approx(expected)
    s2s.check_grad(piecewise, x)


def conditional_expression(x):
    return x * x if x > 0 else -x


def boolean_operators(x, y):
    if x > 0 and not y > 2.0 or x < -5.0:
        return x * y
    return x + y


def chained(x):
    if 0.0 < x < 1.0:
        return x ** 3
    return 2.0 * x


@pytest.mark.parametrize("x", [-1.5, 0.4, 3.0])
def test_conditional_expression(x):
    assert s2s.grad(conditional_expression)(x) == pytest.approx(2 * x if x > 0 else -1.0)


@pytest.mark.parametrize("x, y", [(1.0, 1.0), (1.0, 3.0), (-6.0, 3.0), (-1.0, 0.5)])
def test_and_or_not(x, y):
    taken = (x > 0 and not y > 2.0) or x < -5.0
    dx, dy = s2s.grad(boolean_operators, wrt=(0, 1))(x, y)
    assert (dx, dy) == ((y, x) if taken else (1.0, 1.0))


@pytest.mark.parametrize("x", [0.5, 1.5, -0.2])
def test_chained_comparison(x):
    assert s2s.grad(chained)(x) == pytest.approx(3 * x * x if 0 < x < 1 else 2.0)


def branch_with_pass(x):
    y = x
    if x > 100.0:
        pass
    else:
        y = y * y
    return y


def test_pass():
    assert s2s.grad(branch_with_pass)(3.0) == 6.0


# ---------------------------------------------------------------- loops: trip counts

def power_loop(x, n):
    y = 1.0
    for _ in range(n):
        y = y * x
    return y


@pytest.mark.parametrize("n", [0, 1, 7])
def test_for_loop_zero_one_many_iterations(n):
    x = 1.3
    assert s2s.grad(power_loop)(x, n) == pytest.approx(n * x ** (n - 1) if n else 0.0)


def range_forms(x, a, b, c):
    s = 0.0
    for i in range(b):
        s = s + x * i
    for i in range(a, b):
        s = s + x * x * i
    for i in range(b, a, c):
        s = s + math.sin(x) * i
    return s


def test_range_with_one_two_three_computed_arguments():
    x, a, b, c = 0.7, 2, 9, -3
    expected = sum(range(b)) + 2 * x * sum(range(a, b)) + math.cos(x) * sum(range(b, a, c))
    assert s2s.grad(range_forms)(x, a, b, c) == pytest.approx(expected)


def reversed_range(x, n):
    s = 0.0
    for i in reversed(range(n)):
        s = s * x + i
    return s


def test_reversed_range():
    s2s.check_grad(reversed_range, 0.9, 6)


def while_accumulate(x, n):
    y = 0.0
    i = 0
    while i < n:
        y = y + x
        i += 1
    return y


def test_while_loop_needs_only_the_trip_count():
    assert s2s.grad(while_accumulate)(1.5, 4) == 4.0
    assert pushes(while_accumulate, 1.5, 4) == 0
    assert pushes(power_loop, 1.5, 4) == 1          # y = y * x needs each iteration's y


def sum_loop(x, n):
    y = 0.0
    for _ in range(n):
        y = y + x
    return y


def test_additive_loop_saves_nothing():
    assert pushes(sum_loop, 1.5, 4) == 0
    source = code(s2s.source(sum_loop, 1.5, 4, mode="reverse"))
    assert "append" not in source


def while_depends_on_x(x):
    y = x
    steps = 0
    while y < 100.0:
        y = y * 2.0 + x
        steps += 1
    return y


@pytest.mark.parametrize("x", [0.3, 3.3, 150.0])
def test_while_trip_count_depends_on_x(x):
    # the derivative of the branch actually taken: y_k = 2^k x + (2^k - 1) x
    y, k = x, 0
    while y < 100.0:
        y, k = y * 2.0 + x, k + 1
    assert s2s.grad(while_depends_on_x)(x) == pytest.approx(2 ** (k + 1) - 1)
    s2s.check_grad(while_depends_on_x, x)


def long_loop(x, n):
    y = x
    for _ in range(n):
        y = y * 0.99999 + 0.00001 * math.sin(y)
    return y


def test_loop_of_100000_iterations():
    n = 100_000
    g = s2s.grad(long_loop)(0.5, n)
    eps = 1e-6
    numeric = (long_loop(0.5 + eps, n) - long_loop(0.5 - eps, n)) / (2 * eps)
    assert g == pytest.approx(numeric, rel=1e-5)


# ---------------------------------------------------------------- loops over sequences

def over_list(x):
    s = 0.0
    for c in [1.0, 2.0, 3.0]:
        s = s + c * x * x
    for v in (x, x * x, 2.0):
        s = s + v
    return s


def test_for_over_list_and_tuple():
    x = 0.8
    assert s2s.grad(over_list)(x) == pytest.approx(12 * x + 1 + 2 * x)


def over_rows(w, X):
    s = 0.0
    for row in X:
        s = s + row[0] * w + row[1] * w * w
    return s


def test_for_over_rows_of_an_array():
    X = np.array([[1.0, 2.0], [3.0, -1.0], [0.5, 0.5]])
    w = 0.7
    assert s2s.grad(over_rows)(w, X) == pytest.approx(X[:, 0].sum() + 2 * w * X[:, 1].sum())
    s2s.check_grad(over_rows, w, X, wrt=(0, 1))


def over_enumerate_and_zip(x, xs, ys):
    s = 0.0
    for i, v in enumerate(xs):
        s = s + i * v * x
    for a, b in zip(xs, ys):
        s = s + a * b * x * x
    return s


def test_enumerate_and_zip():
    xs, ys = np.array([1.0, 2.0, 3.0]), np.array([0.5, -1.0])
    x = 1.1
    expected = sum(i * v for i, v in enumerate(xs)) + 2 * x * sum(a * b for a, b in zip(xs, ys))
    assert s2s.grad(over_enumerate_and_zip)(x, xs, ys) == pytest.approx(expected)
    s2s.check_grad(over_enumerate_and_zip, x, xs, ys, wrt=(0, 1, 2))


# ---------------------------------------------------------------- break, continue, return

def nested_break_continue(x):
    s = 0.0
    for i in range(4):
        for j in range(5):
            if j == 1:
                continue
            if i * j > 6:
                break
            s = s + x ** (i + 1) * j
        if s > 1000.0:
            break
    return s


@pytest.mark.parametrize("x", [0.5, 1.2, 4.0])
def test_nested_loops_with_break_and_continue(x):
    s2s.check_grad(nested_break_continue, x)


def expected_nested(x):
    total = 0.0
    derivative = 0.0
    for i in range(4):
        for j in range(5):
            if j == 1:
                continue
            if i * j > 6:
                break
            total += x ** (i + 1) * j
            derivative += (i + 1) * x ** i * j
        if total > 1000.0:
            break
    return derivative


@pytest.mark.parametrize("x", [0.5, 1.2, 4.0])
def test_nested_loops_match_the_analytic_derivative(x):
    assert s2s.grad(nested_break_continue)(x) == pytest.approx(expected_nested(x))


def early_return(x):
    y = x
    for i in range(10):
        if y > 5.0:
            return y * y
        y = y + x
    return -y


@pytest.mark.parametrize("x, expected", [(1.1, 2 * 5 * 5.5), (0.1, -11.0), (6.0, 12.0)])
def test_return_from_inside_a_loop(x, expected):
    # x=1.1: returns (5x)^2 after four additions; x=0.1 never returns early (y = 11x); x=6 returns x^2 at once
    assert s2s.grad(early_return)(x) == pytest.approx(expected)


def return_in_while(x):
    while True:
        x = x * 1.5
        if x > 10.0:
            return x * 2.0


def test_return_from_while_true():
    x = 1.0
    k = 0
    while True:
        x *= 1.5
        k += 1
        if x > 10.0:
            break
    assert s2s.grad(return_in_while)(1.0) == pytest.approx(2.0 * 1.5 ** k)


def return_in_branch(x):
    if x > 0:
        return math.sqrt(x)
    y = x * x
    return y


def test_return_from_a_branch():
    assert s2s.grad(return_in_branch)(4.0) == pytest.approx(0.25)
    assert s2s.grad(return_in_branch)(-3.0) == pytest.approx(-6.0)


def while_with_break(x):
    y = x
    while y < 1e6:
        y = y * y + 1.0
        if y > 50.0:
            break
    return y


def test_while_with_break():
    s2s.check_grad(while_with_break, 1.3)


# ---------------------------------------------------------------- the shape of the generated code

def test_reverse_of_a_loop_is_a_loop():
    source = code(s2s.source(power_loop, 1.0, 3, mode="reverse"))
    assert "for _ in reversed(range(n)):" in source
    assert "y_stack.append(y)" in source and "y = y_stack.pop()" in source


def test_reverse_of_a_while_loop_counts_its_iterations():
    source = code(s2s.source(while_depends_on_x, mode="reverse"))
    assert "n_iter = n_iter + 1" in source
    assert "for _ in range(n_iter):" in source


def test_reverse_of_a_branch_is_a_branch_on_the_recorded_condition():
    source = code(s2s.source(power_and_branch, 1.0, 3, mode="reverse"))
    assert source.count("if ") >= 2
    assert "_stack.pop()" in source


def test_branch_inside_loop():
    s2s.check_grad(power_and_branch, 1.3, 6)


def enumerate_zip(w, xs, ys):
    total = 0.0
    for i, (x, y) in enumerate(zip(xs, ys), 1):
        total += i * (w * x - y) ** 2
    return total


def test_enumerate_over_zip():
    xs, ys = np.array([1.0, 2.0, 3.0]), np.array([0.5, 1.0])
    w = 0.3
    expected = sum(2 * i * (w * x - y) * x for i, (x, y) in enumerate(zip(xs, ys), 1))
    assert s2s.grad(enumerate_zip)(w, xs, ys) == pytest.approx(expected)
    assert s2s.grad(enumerate_zip, mode="forward")(w, xs, ys) == pytest.approx(expected)


# ---------------------------------------------------------------- loops over iterators without len() (finding F9)

def _over_reversed_indices(v):
    acc = 0.0
    for k, i in enumerate(reversed(range(len(v)))):
        acc = acc * 0.5 + v[i] * (k + 1)
    return acc


def _over_ndindex(M):
    total = 0.0
    for idx in np.ndindex(M.shape):
        total += M[idx] ** 2
    return total


def _over_product(v):
    import itertools
    total = 0.0
    for i, j in itertools.product(range(2), range(2)):
        total += v[i] * v[j]
    return total


@pytest.mark.parametrize("fn, x", [(_over_reversed_indices, np.array([0.7, -1.3, 2.1])),
                                   (_over_ndindex, np.array([[0.7], [-1.3], [2.1]])),
                                   (_over_product, np.array([0.7, -1.3, 2.1]))])
@pytest.mark.parametrize("mode", ["reverse", "forward", "auto"])
def test_a_loop_over_an_iterator_of_indices_reads_it_whole(fn, x, mode):
    eps = 1e-6
    numeric = np.zeros_like(x)
    for k in np.ndindex(x.shape):
        e = np.zeros_like(x)
        e[k] = eps
        numeric[k] = (fn(x + e) - fn(x - e)) / (2 * eps)
    np.testing.assert_allclose(s2s.grad(fn, mode=mode)(x), numeric, rtol=1e-6, atol=1e-8)


MODES = ["reverse", "forward", "auto"]


def first_above(x, t):
    total = 0.0
    for k in range(len(x)):
        if x[k] > t:
            total = total + x[k] * 2.0
            break
        total = total + np.sin(x[k])
    else:
        total = total * 10.0
    return total


def newton_sqrt(a):
    x = a
    n = 0
    while n < 50:
        x = 0.5 * (x + a / x)
        if abs(x * x - a) < 1e-12:
            break
        n += 1
    else:
        x = -1.0
    return x


def else_without_break(x):
    s = 0.0
    for k in range(3):
        for j in range(2):
            if j > 5:
                break
        else:
            s = s + x * k
    else:
        s = s * x
    return s


@pytest.mark.parametrize("mode", MODES)
def test_else_on_loops(mode):
    """Outside round 1 (the first outside tester's programs, written in their own style)."""
    agrees(first_above, (np.array([0.1, 0.2, 0.9]), 0.5), mode=mode)
    agrees(first_above, (np.array([0.1, 0.2, 0.3]), 0.5), mode=mode)
    assert agrees(newton_sqrt, (2.0,), mode=mode) == pytest.approx(0.5 / np.sqrt(2.0))
    assert agrees(else_without_break, (1.5,), mode=mode) == pytest.approx(9.0)


def scalar_becomes_array(x):
    a = x[0]
    for k in range(2):
        a = np.sin(x) * np.sum(a)
    return np.sum(a)


def array_becomes_scalar(x):
    b = x * 2.0
    for k in range(2):
        c = np.sum(b) * 0.5
        b = -1.22 + c * 0.0
    return b + np.sum(x)


def test_loop_variables_that_change_shape():
    """Independent review: a case found silently wrong once, now right or refused."""
    x = np.array([0.5, 1.0, 1.5])
    s2s.check_grad(scalar_becomes_array, x)
    s2s.check_grad(array_becomes_scalar, x)
    assert s2s.grad(scalar_becomes_array, mode="forward")(x) == pytest.approx(s2s.grad(scalar_becomes_array)(x))


def rebinds_tuple_argument(b):
    if b[0] > -5.0:
        b = (0.5,)
    return b[0]


def loop_variable_rebinds_parameter(x, y):
    for k in range(2):
        for y in (y, 1.0):
            x = x * y
    return x - y


def test_branches_and_loop_variables():
    """Issue 12 (classes of silently wrong gradients), crashes found."""
    assert s2s.jvp(rebinds_tuple_argument, ([-0.169],), ([1.0],)) == (0.5, 0.0)
    for mode in ("reverse", "forward", "auto"):
        assert s2s.grad(loop_variable_rebinds_parameter, mode=mode)(-0.453, 0.291) == pytest.approx(0.291)
        assert s2s.grad(loop_variable_rebinds_parameter, wrt=1, mode=mode)(-0.453, 0.291) == pytest.approx(-0.453)


def predict(x, ws):
    for w in ws:
        h = math.tanh(w * x)
        x = h + 0.1
    return h * w + x


def last_index(x):
    for i in range(3):
        y = x * i
    return y + i


def last_in_while(x):
    k = 0
    while k < 3:
        z = x * k
        k += 1
    return z


def last_after_break(x):
    for i in range(10):
        y = x * i
        if i >= 4:
            break
    return y * i


@pytest.mark.parametrize("f, args", [(predict, (0.3, [0.5, -1.2, 0.7])), (last_index, (0.7,)),
                                     (last_in_while, (0.7,)), (last_after_break, (0.7,))])
def test_variables_of_a_loop_keep_their_last_value(f, args):
    """Issue 12 (classes of silently wrong gradients), the last value of a loop's variables."""
    assert_gradient(f, *args)
    h = 1e-5
    gradient = s2s.grad(f)
    second = (gradient(args[0] + h, *args[1:]) - gradient(args[0] - h, *args[1:])) / (2 * h)
    assert s2s.grad(s2s.grad(f))(*args) == pytest.approx(second, abs=1e-5)
