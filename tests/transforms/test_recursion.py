"""Recursion on values known only when the code runs: differentiated by recursive derivative functions, a forward
sweep that returns what its reverse sweep reads and the reverse sweep (reverse mode), a jvp (forward mode), made
from the recursive function's IR and emitted beside the derivative (s2s/transforms/recursion.py). Checked against
central differences in reverse, forward and mode="auto", and to second order."""
import math

import numpy as np
import pytest

import s2s
from conftest import code
from s2s.testing import check_grads


def central(f, x, eps=1e-6):
    return (f(x + eps) - f(x - eps)) / (2 * eps)


def halving_series(x, eps):
    """A series whose depth depends on a float: it stops when the term is below eps."""
    if abs(x) < eps:
        return x
    return x + halving_series(x * 0.5, eps) * math.sin(x)


@pytest.mark.parametrize("x", [1.0, -0.3, 2.5])
def test_a_series_whose_depth_depends_on_a_float(x):
    check_grads(halving_series, (x, 1e-3), wrt=0)
    expected = central(lambda v: halving_series(v, 1e-3), x)
    for mode in ("reverse", "forward", "auto"):
        assert s2s.grad(halving_series, mode=mode)(x, 1e-3) == pytest.approx(expected, rel=1e-7)


def test_the_derivative_functions_are_readable_and_recursive():
    text = code(s2s.source(halving_series, 1.0, 1e-3, mode="reverse"))
    assert "def halving_series_fwd(x, eps):" in text and "def halving_series_rev(record, " in text
    assert "halving_series_fwd(x * 0.5, eps)" in text           # the forward sweep calls itself
    assert "halving_series_rev(" in text.split("def halving_series_rev")[1].split("def ")[0]
    assert "_stack" not in text                                  # no tape: the record is the call's own
    forward = code(s2s.source(halving_series, 1.0, 1e-3, mode="forward"))
    assert "def halving_series_jvp(x, eps, x_dot):" in forward


def countdown(x, n):
    if n == 0:
        return x
    return countdown(x * 2.0, n - 1) + math.sin(x)


@pytest.mark.parametrize("n", [0, 3, 7, 2])
def test_depth_changes_between_calls_without_a_stale_derivative(n):
    gradient = s2s.grad(countdown)                # one derivative object, called at several depths
    expected = 2.0 ** n + sum(math.cos(0.3 * 2.0 ** k) * 2.0 ** k for k in range(n))
    assert gradient(0.3, n) == pytest.approx(expected)
    assert s2s.grad(countdown, mode="reverse")(0.3, n) == pytest.approx(expected)


def even_part(x, n):
    if n == 0:
        return x
    return x * 0.5 + odd_part(x * x, n - 1)


def odd_part(x, n):
    if n == 0:
        return 1.0
    return math.sin(x) + even_part(x, n - 1)


@pytest.mark.parametrize("n", [1, 4, 7])
def test_mutual_recursion(n):
    check_grads(even_part, (0.7, n), wrt=0)


def tree_total(tree, w):
    """A tree of nested tuples, walked."""
    if isinstance(tree, tuple):
        return tree_total(tree[0], w) + w * tree_total(tree[1], w)
    return tree * w


TREE = ((1.0, 2.0), (3.0, (4.0, 5.0)))


def test_a_tree_walk_over_nested_tuples():
    check_grads(tree_total, (TREE, 0.5), wrt=1)
    check_grads(tree_total, (TREE, 0.5), wrt=0, order=1)
    gradient = s2s.grad(tree_total, wrt=(0, 1))(TREE, 0.5)
    assert gradient[0] == ((0.5, 0.25), (0.25, (0.125, 0.0625)))
    for mode in ("reverse", "forward", "auto"):
        assert s2s.grad(tree_total, wrt=1, mode=mode)(TREE, 0.5) == pytest.approx(
            central(lambda w: tree_total(TREE, w), 0.5), rel=1e-7)
    deeper = (TREE, (TREE, 1.0))                  # another shape: another derivative, by the tree's kind
    assert s2s.grad(tree_total, wrt=1)(deeper, 0.5) == pytest.approx(
        central(lambda w: tree_total(deeper, w), 0.5), rel=1e-7)


def log_partition(natural_params):
    """A recursive helper in the style of an autodiff example program: a list of sequences, or one sequence."""
    if isinstance(natural_params, list):
        return sum(log_partition(p) for p in natural_params)
    return np.log(np.sum(np.exp(natural_params)))


def test_a_helper_that_calls_itself_for_a_list():
    params = [np.array([0.1, 0.5, -0.3]), np.array([1.0, -2.0])]
    check_grads(log_partition, (params,))
    single = np.array([0.2, -0.4])
    check_grads(log_partition, (single,))


def sweeps(x, n):
    """A loop inside the recursion: its stack is part of the call's record."""
    if n == 0:
        return x
    y = 0.0
    for k in range(n):
        y = y + math.sin(x * (k + 1))
    return y * sweeps(x * 0.9, n - 1)


def in_a_loop(w, xs):
    """The recursion called inside a loop: each call's record is pushed, popped in the reverse loop."""
    total = 0.0
    for x in xs:
        total = total + depth_sum(w, x, 3)
    return total


def depth_sum(w, x, n):
    if n == 0:
        return np.tanh(w @ x)
    return np.sum(w * x) + depth_sum(w * 0.5, x, n - 1)


def test_loops_inside_and_around_the_recursion():
    for n in (1, 4):
        check_grads(sweeps, (0.7, n), wrt=0)
    w, xs = np.array([0.3, -0.2, 0.5]), [np.array([1.0, 2.0, 0.5]), np.array([-1.0, 0.3, 0.2])]
    check_grads(in_a_loop, (w, xs), wrt=0)


def deep(x, n):
    if n == 0:
        return x
    return math.sin(deep(x, n - 1))


def test_pythons_recursion_limit_applies_with_a_clear_error():
    assert s2s.grad(deep)(0.5, 50) == pytest.approx(central(lambda v: deep(v, 50), 0.5), rel=1e-6)
    for mode in ("reverse", "forward"):
        with pytest.raises(s2s.S2SError) as info:
            s2s.grad(deep, mode=mode, check=False)(0.5, 50000)
        message = str(info.value)
        assert "recursion limit" in message and "test_recursion.py:" in message and "setrecursionlimit" in message


# ---------------------------------------------------------------- memoized recursion

def combinations(t, k, w, memo):
    """The elementary symmetric polynomial e_k(w[:t]) by its recursion, memoized in a dict over (t, k)."""
    if t < k:
        return 0.0
    if k == 0:
        return 1.0
    if (t, k) in memo:
        return memo[(t, k)]
    v = combinations(t - 1, k, w, memo) + combinations(t - 1, k - 1, w, memo) * w[t - 1]
    memo[(t, k)] = v
    return v


def denominator(w, t, k):
    memo = {}
    return combinations(t, k, np.exp(w), memo)


def conditional_denominator(params, t, k):
    """In the style of a conditional likelihood: a nested memoized recursion over (t, k), its cache a dict of the
    enclosing function's, looked up with try/except KeyError."""
    exb = np.exp(params)
    memo = {}

    def f(t, k):
        if t < k:
            return 0.0
        if k == 0:
            return 1.0
        try:
            return memo[(t, k)]
        except KeyError:
            pass
        v = f(t - 1, k) + f(t - 1, k - 1) * exb[t - 1]
        memo[(t, k)] = v
        return v
    return f(t, k)


W = np.array([0.1, -0.3, 0.5, 0.2, -0.1])


@pytest.mark.parametrize("fn", [denominator, conditional_denominator])
def test_a_memoized_recursion_with_a_dict_cache(fn):
    check_grads(fn, (W, 5, 2), wrt=0)
    expected = np.exp(W) * [sum(np.exp(W[j]) for j in range(5) if j != i) for i in range(5)]   # d e_2 / dw_i
    for mode in ("reverse", "forward", "auto"):
        np.testing.assert_allclose(s2s.grad(fn, mode=mode)(W, 5, 2), expected, rtol=1e-12)


def test_the_cache_is_shared_between_calls_as_in_python():
    w = np.linspace(-0.5, 0.5, 24)       # 2 ** 24 calls without the cache, 24 * 12 with it
    gradient = s2s.grad(denominator, mode="reverse")(w, 24, 12)
    e = np.zeros_like(w)
    e[3] = 1e-6
    assert gradient[3] == pytest.approx((denominator(w + e, 24, 12) - denominator(w - e, 24, 12)) / 2e-6, rel=1e-6)
