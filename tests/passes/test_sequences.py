"""Tuples and lists as sequences: + and *, slices, lists given to NumPy, loops over slices, gradients with
the argument's type; a window of lists kept by slicing (an L-BFGS two-loop recursion)."""
import math

import numpy as np
import pytest

import s2s
from conftest import assert_gradient, central


MODES = ["reverse", "forward", "auto"]


def check(f, x, mode, *rest, rtol=1e-6, atol=1e-8):
    got = s2s.grad(f, mode=mode)(x, *rest)
    np.testing.assert_allclose(got, central(lambda z: f(z, *rest), x), rtol=rtol, atol=atol)


H = np.array([[3.0, 0.5, 0.1], [0.5, 2.0, 0.3], [0.1, 0.3, 1.0]])


B = np.array([1.0, -0.5, 0.2])


def quad(x):
    return 0.5 * x @ H @ x - B @ x


def quad_grad(x):
    return H @ x - B


def two_loop(g, S, Y):
    q = g
    alphas = []
    for s, y in zip(reversed(S), reversed(Y)):
        a = (s @ q) / (y @ s)
        alphas.append(a)
        q = q - a * y
    r = q * ((S[-1] @ Y[-1]) / (Y[-1] @ Y[-1]) if S else 0.1)
    for (s, y), a in zip(zip(S, Y), reversed(alphas)):
        r = r + s * (a - (y @ r) / (y @ s))
    return r


def lbfgs_window(x0, m=2):
    x, S, Y = x0, [], []
    g = quad_grad(x)
    for k in range(4):
        x_new = x - two_loop(g, S, Y)
        g_new = quad_grad(x_new)
        S = (S + [x_new - x])[-m:]                 # the last m steps, kept by slicing
        Y = (Y + [g_new - g])[-m:]
        x, g = x_new, g_new
    return quad(x) + 0.01 * x0 @ x0


def lbfgs_history(x0):
    x, S, Y = x0, [], []
    g = quad_grad(x)
    for k in range(3):
        x_new = x - two_loop(g, S, Y)
        g_new = quad_grad(x_new)
        S.append(x_new - x)                          # the whole history, never trimmed
        Y.append(g_new - g)
        x, g = x_new, g_new
    return quad(x) + 0.01 * x0 @ x0


X0 = np.array([0.4, -0.2, 0.7])


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("f", [lbfgs_window, lbfgs_history])
def test_lbfgs_two_loop_recursion(mode, f):
    """Outside round 5 (ordinary Python that was refused or crashed), G7: an L-BFGS two-loop recursion over history
    lists."""
    check(f, X0, mode, rtol=1e-5, atol=1e-8)


def cat_tuples(x, y):
    t = (x,) + (y,)
    return t[0] * 2.0 + t[1] * 3.0


def cat_lists(x):
    xs = [x] + [x * 2.0]
    return xs[0] * xs[1]


def cat_in_loop(x):
    out = []
    h = x
    for i in range(3):
        h = h * 2.0
        out = out + [h]
    return out[0] + out[1] * out[2]


def cat_arguments(xs, ys):
    zs = xs + ys
    return zs[0] * zs[2] + zs[1]


def repeat_list(x):
    zs = [x] * 3
    return zs[0] * zs[1] * zs[2]


def repeat_tuple(t):
    zs = t * 2
    return zs[0] * zs[3]


def repeat_left(x):
    zs = 2 * (x, x * x)
    return zs[1] + zs[2] * 3.0


def test_tuple_concatenation():
    """Issue 12 (classes of silently wrong gradients), 1. tuples and lists: + and *."""
    assert s2s.grad(cat_tuples, wrt=(0, 1))(1.0, 2.0) == (2.0, 3.0)
    assert_gradient(cat_tuples, 1.0, 2.0, wrt=1)


@pytest.mark.parametrize("f, args", [
    (cat_lists, (1.5,)), (cat_in_loop, (1.5,)), (repeat_list, (1.5,)), (repeat_left, (0.7,)),
])
def test_sequence_operators(f, args):
    """Issue 12 (classes of silently wrong gradients), 1. tuples and lists: + and *."""
    assert_gradient(f, *args)


def test_sequence_operators_on_arguments():
    """Issue 12 (classes of silently wrong gradients), 1. tuples and lists: + and *."""
    g = s2s.grad(cat_arguments)([1.0, 2.0], [3.0])
    assert g == [3.0, 1.0]
    g = s2s.grad(cat_arguments, wrt=1)([1.0, 2.0], [3.0])
    assert g == [1.0]
    g = s2s.grad(repeat_tuple)((1.5, 2.0))
    assert isinstance(g, tuple) and g == (2.0, 1.5)


def hstack_arguments(args):
    return np.sum(np.hstack(args + (np.ones(2),)) ** 2)


def test_concatenation_of_different_shapes():
    """Issue 12 (classes of silently wrong gradients), 1. tuples and lists: + and *."""
    args = (np.array([1.0, 2.0, 3.0]), np.array([0.5, -1.0]))
    g = s2s.grad(hstack_arguments)(args)
    assert isinstance(g, tuple)
    np.testing.assert_allclose(g[0], 2 * args[0])
    np.testing.assert_allclose(g[1], 2 * args[1])


def add_number_to_tuple(x):
    t = (x, x)
    return t + 1.0


def test_sequence_plus_number_is_refused():
    """Issue 12 (classes of silently wrong gradients), 1. tuples and lists: + and *."""
    with pytest.raises(s2s.S2SError, match="tuple or list and a number"):
        s2s.grad(add_number_to_tuple)(1.0)


def slice_list(x):
    xs = x[1:]
    return xs[0] * 2 + xs[1] * 3


def copy_list(x):
    xs = x[:]
    return xs[0] * 2 + xs[1] * 3


def tuple_product(t):
    return t[0] * t[1]


def test_slices_of_lists():
    """Issue 12 (classes of silently wrong gradients), 11. slices of lists, types of gradients."""
    assert s2s.grad(slice_list)([0.9, -0.6, 0.4]) == [0.0, 2.0, 3.0]
    assert s2s.grad(copy_list)([0.9, -0.6, 0.4]) == [2.0, 3.0, 0.0]


def test_a_gradient_has_its_arguments_type():
    """Issue 12 (classes of silently wrong gradients), 11. slices of lists, types of gradients."""
    g = s2s.grad(tuple_product)((2.0, 3.0))
    assert isinstance(g, tuple) and g == (3.0, 2.0)


def sum_of_list(a, b):
    return np.sum([a * b, a, b ** 2])


def list_times_array(x):
    return np.sum([2.0, 3.0] * x)


def reductions_of_appended(x):
    xs = []
    for i in range(3):
        xs.append(x * i)
    return np.max(xs) + np.mean(xs)


def max_of_concatenation(x):
    return np.max((x, 0.5) + (0.5,))


def all_but_last(params, x):
    for W, b in params[:-1]:
        x = x * W + b
    return x


def middle_layers(params, x):
    for W, b in params[1:-1]:
        x = x * W + b
    return x


def iterate_slice(y):
    s = 0.0
    for r in y[::1]:
        s = s + r * r
    return s


def both_parts(x):
    xs = [x, 2.0 * x]
    return sum(xs) + (xs + xs)[2]


def written_list_reduced(xs0):
    acc = 0.5
    xs0[0] = math.cos(acc)
    xs0[-1] += acc
    acc = np.mean(xs0)
    xs2 = 2 * xs0 + xs0
    for i1 in range(len(xs2)):
        acc = acc + xs2[i1] * acc * acc
    return np.min(xs2[::2]) + xs2[2]


def test_lists_given_to_numpy():
    """Issue 12 (classes of silently wrong gradients), crashes found."""
    assert s2s.grad(sum_of_list, wrt=(0, 1))(2.0, 3.0) == (4.0, 8.0)
    np.testing.assert_allclose(s2s.grad(list_times_array)(np.ones(2)), [2.0, 3.0])
    assert s2s.grad(reductions_of_appended)(2.0) == pytest.approx(3.0)
    assert s2s.grad(max_of_concatenation)(0.7) == 1.0
    assert s2s.grad(max_of_concatenation, mode="forward")(0.7) == 1.0
    value, g = s2s.value_and_grad(written_list_reduced)([0.442])
    assert value == pytest.approx(written_list_reduced([0.442])) and g == [0.0]


def test_slices_and_loops_over_lists():
    """Issue 12 (classes of silently wrong gradients), crashes found."""
    params = [(2.0, 1.0), (3.0, 1.0)]
    assert s2s.grad(all_but_last)(params, 1.0) == [(1.0, 1.0), (0.0, 0.0)]
    assert s2s.grad(middle_layers)(params, 1.0) == [(0.0, 0.0), (0.0, 0.0)]
    assert s2s.grad(all_but_last, wrt=1)(params, 1.0) == 2.0
    assert s2s.grad(iterate_slice)([1.0, 2.0]) == [2.0, 4.0]
    assert s2s.grad(both_parts)(1.5) == 4.0
