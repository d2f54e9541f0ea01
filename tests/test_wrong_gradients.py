"""Issue 12: classes of silently wrong gradients, each fixed or refused with a located S2SError.

Every test compares with central differences or a closed form; the checking mode (S2S_CHECK=1, set by
conftest) also compares each derivative's forward sweep with the function's own value.
"""
import functools
import math

import numpy as np
import pytest

import s2s
from s2s.driver.selfcheck import ReadingMismatch


def numeric(f, args, i, eps=1e-6):
    """Central differences of f along argument i (a float, an array, or a tuple/list of floats)."""
    args = list(args)
    x = args[i]
    if isinstance(x, (tuple, list)):
        out = []
        for k in range(len(x)):
            up, down = list(x), list(x)
            up[k] += eps
            down[k] -= eps
            args[i] = type(x)(up)
            hi = f(*args)
            args[i] = type(x)(down)
            lo = f(*args)
            out.append((hi - lo) / (2 * eps))
        return type(x)(out)
    if isinstance(x, np.ndarray):
        g = np.zeros_like(x)
        for k in np.ndindex(x.shape):
            up, down = x.copy(), x.copy()
            up[k] += eps
            down[k] -= eps
            args[i] = up
            hi = f(*args)
            args[i] = down
            lo = f(*args)
            g[k] = (hi - lo) / (2 * eps)
        return g
    args[i] = x + eps
    hi = f(*args)
    args[i] = x - eps
    lo = f(*args)
    return (hi - lo) / (2 * eps)


def assert_gradient(f, *args, wrt=0, modes=("reverse", "forward"), optimize=(True, False)):
    expected = numeric(f, args, wrt)
    for opt in optimize:
        got = s2s.grad(f, wrt=wrt, optimize=opt)(*args)
        assert type(got) is type(expected) or isinstance(expected, float)
        np.testing.assert_allclose(np.asarray(got, dtype=float), np.asarray(expected, dtype=float),
                                   rtol=1e-5, atol=1e-6)
        if "forward" in modes and isinstance(args[wrt], (float, np.ndarray)):
            got = s2s.grad(f, wrt=wrt, optimize=opt, mode="forward")(*args)
            np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-6)


# ---------------------------------------------------------------- 1. tuples and lists: + and *

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
    assert s2s.grad(cat_tuples, wrt=(0, 1))(1.0, 2.0) == (2.0, 3.0)
    assert_gradient(cat_tuples, 1.0, 2.0, wrt=1)


@pytest.mark.parametrize("f, args", [
    (cat_lists, (1.5,)), (cat_in_loop, (1.5,)), (repeat_list, (1.5,)), (repeat_left, (0.7,)),
])
def test_sequence_operators(f, args):
    assert_gradient(f, *args)


def test_sequence_operators_on_arguments():
    g = s2s.grad(cat_arguments)([1.0, 2.0], [3.0])
    assert g == [3.0, 1.0]
    g = s2s.grad(cat_arguments, wrt=1)([1.0, 2.0], [3.0])
    assert g == [1.0]
    g = s2s.grad(repeat_tuple)((1.5, 2.0))
    assert isinstance(g, tuple) and g == (2.0, 1.5)


def hstack_arguments(args):
    return np.sum(np.hstack(args + (np.ones(2),)) ** 2)


def test_concatenation_of_different_shapes():
    args = (np.array([1.0, 2.0, 3.0]), np.array([0.5, -1.0]))
    g = s2s.grad(hstack_arguments)(args)
    assert isinstance(g, tuple)
    np.testing.assert_allclose(g[0], 2 * args[0])
    np.testing.assert_allclose(g[1], 2 * args[1])


def add_number_to_tuple(x):
    t = (x, x)
    return t + 1.0


def test_sequence_plus_number_is_refused():
    with pytest.raises(s2s.S2SError, match="tuple or list and a number"):
        s2s.grad(add_number_to_tuple)(1.0)


# ---------------------------------------------------------------- 4 and 6. what grad needs

def forgot_return(x):
    y = x * 2.0


def returns_text(x):
    return "x"


def returns_pair(x, y):
    return x * y, x + y


def three_with_aux(x):
    return x * x, x, 3.0


def test_output_must_be_a_number():
    with pytest.raises(s2s.NonScalarOutput, match="(?s)forgot_return returned None.*forget a `return`"):
        s2s.value_and_grad(forgot_return)(1.0)
    with pytest.raises(s2s.NonScalarOutput, match="returned 'x'"):
        s2s.grad(returns_text)(1.0)
    with pytest.raises(s2s.NonScalarOutput, match="returns a tuple"):
        s2s.grad(returns_pair)(1.0, 2.0)


def test_tuple_valued_derivatives_are_not_differentiated_again():
    with pytest.raises(s2s.NonScalarOutput, match="derivative returns a tuple"):
        s2s.grad(s2s.grad(cat_tuples, wrt=(0, 1)))(1.0, 2.0)
    with pytest.raises(s2s.NonScalarOutput, match="must return a pair.*tuple of 3"):
        s2s.grad(three_with_aux, has_aux=True)(2.0)


# ---------------------------------------------------------------- 7 and 8. names of values alive at once

def h_shadow(q):
    for a in (1.5, 1.89):
        q = a / math.tanh(q)
    return q


def caller_shadow(x):
    a = math.sin(x)
    return h_shadow(a)


def fuzz_shadow(x, y):
    for a in (math.tan(0.5 * math.tanh(y)), y):
        if y >= h0(x):
            for b in (a - y, a):
                x -= -0.41 * math.tanh(b * abs(x))
    return y + -0.68 * x


def h0(p):
    a = math.tanh(p)
    return a + 0.54 * a + (-0.96) * p


def jacobi_scalar(u, a):
    for t in range(1):
        v = u * a
        for i in range(2):
            v = v * a + u
        u = v
    return u


def jacobi_while(u, a):
    t = 0
    while t < 2:
        v = u * a
        for i in range(2):
            v = v * a + u
        u = v
        t += 1
    return u


def swap_after_inner(u, a):
    v = u
    for t in range(2):
        v = u * a
        for i in range(2):
            v = v * a + u
        u, v = v, u
    return u * v


def if_instead_of_loop(u, a):
    if a > 0:
        v = u * a
        for i in range(2):
            v = v * a + u
        u = v
    return u


def stencil(u, k):
    for t in range(2):
        v = u.copy()
        for i in range(1, 3):
            v[i] = u[i] + k * u[i - 1]
        u = v
    return np.sum(u * u)


def heat(u, k):
    for t in range(5):
        v = u.copy()
        for i in range(1, len(u) - 1):
            v[i] = u[i] + k * (u[i - 1] - 2.0 * u[i] + u[i + 1])
        u = v
    return np.sum(u * u)


@pytest.mark.parametrize("f, args", [
    (caller_shadow, (1.607,)), (fuzz_shadow, (-1.53, 1.84)), (fuzz_shadow, (0.3, 2.0)),
    (jacobi_scalar, (0.7, 0.3)), (jacobi_while, (0.7, 0.3)), (swap_after_inner, (0.7, 0.3)),
    (if_instead_of_loop, (0.7, 0.3)),
])
def test_values_alive_at_once_never_share_a_name(f, args):
    for wrt in range(len(args)):
        assert_gradient(f, *args, wrt=wrt)
        value, _ = s2s.value_and_grad(f, wrt=wrt)(*args)
        assert value == pytest.approx(f(*args), rel=1e-12)


def test_stencil_reads_the_old_array():
    u = np.array([0.3, -0.7, 1.1, 0.4])
    for opt in (True, False):
        value, (du, dk) = s2s.value_and_grad(stencil, wrt=(0, 1), optimize=opt)(u, 0.5)
        assert value == pytest.approx(stencil(u, 0.5))
        np.testing.assert_allclose(du, numeric(stencil, (u, 0.5), 0), rtol=1e-6)
        assert dk == pytest.approx(numeric(stencil, (u, 0.5), 1), rel=1e-6)
    assert s2s.grad(stencil)(u, 0.5)[1] == pytest.approx(0.15)


def test_heat_equation():
    u = np.sin(np.linspace(0, np.pi, 200))
    dk = s2s.grad(heat, wrt=1)(u, 0.2)
    assert dk == pytest.approx(numeric(heat, (u, 0.2), 1), rel=1e-5)


# ---------------------------------------------------------------- 11. slices of lists, types of gradients

def slice_list(x):
    xs = x[1:]
    return xs[0] * 2 + xs[1] * 3


def copy_list(x):
    xs = x[:]
    return xs[0] * 2 + xs[1] * 3


def tuple_product(t):
    return t[0] * t[1]


def test_slices_of_lists():
    assert s2s.grad(slice_list)([0.9, -0.6, 0.4]) == [0.0, 2.0, 3.0]
    assert s2s.grad(copy_list)([0.9, -0.6, 0.4]) == [2.0, 3.0, 0.0]


def test_a_gradient_has_its_arguments_type():
    g = s2s.grad(tuple_product)((2.0, 3.0))
    assert isinstance(g, tuple) and g == (3.0, 2.0)


# ---------------------------------------------------------------- the checking mode

def test_checking_mode_catches_a_wrong_reading(monkeypatch):
    import s2s.driver.pipeline

    def wrong(x):
        return x * 3.0

    def right(x):
        return x * 2.0
    original = s2s.driver.pipeline.primal_ir
    monkeypatch.setattr(s2s.driver.pipeline, "primal_ir", lambda fn: original(wrong if fn is right else fn))
    with pytest.raises(ReadingMismatch, match="right differs from Python's: the result is 2.0 in Python, 3.0"):
        s2s.grad(right, check=True)(1.0)
    assert s2s.grad(right, check=False)(1.0) == 3.0       # unchecked, the wrong reading goes through


def draws_global(x):
    return x * np.random.randn()


_rng = np.random.RandomState(0)


def draws_own(x):
    return x * _rng.randn()


def test_checking_mode_and_random_draws():
    np.random.seed(1)
    g = s2s.grad(draws_global, check=True)(2.0)
    np.random.seed(1)
    assert g == np.random.randn()
    assert isinstance(s2s.grad(draws_own, check=True)(2.0), float)


# ---------------------------------------------------------------- 9 and 10. index objects, views on the right

def r_builder(x):
    return np.sum(np.r_[x, np.ones(2)] ** 2 * np.arange(4.0))


def c_builder(x):
    return np.sum(np.c_[x, np.ones(2), x] ** 2 * np.arange(6.0).reshape(2, 3))


def r_with_range(x):
    return np.sum(np.r_[0:2, x, 3.0] * np.arange(5.0))


@pytest.mark.parametrize("f", [r_builder, c_builder, r_with_range])
def test_index_objects_are_concatenations(f):
    x = np.array([0.5, -1.5])
    expected = numeric(f, (x,), 0)
    np.testing.assert_allclose(s2s.grad(f)(x), expected, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(s2s.grad(f, mode="forward")(x), expected, rtol=1e-6, atol=1e-8)
    hessian = s2s.hessian(f)(x)
    gradient = s2s.grad(f)
    for k in range(2):
        e = np.eye(2)[k] * 1e-6
        np.testing.assert_allclose(hessian[:, k], (gradient(x + e) - gradient(x - e)) / 2e-6, atol=1e-5)


def swap_rows(B):
    B = B.copy()
    B[0, :], B[1, :] = B[1, :], B[0, :]
    return np.sum(B * np.array([[1.0, 2, 3], [4, 5, 6]]))


def swap_halves(y):
    y = y.copy()
    y[:2], y[2:] = y[2:], y[:2]
    return np.sum(y * np.arange(4.0))


def swap_numbers(y):
    y = y.copy()
    y[0], y[2] = y[2], y[0]
    return np.sum(y * np.arange(3.0))


def swap_rows_by_index(B):
    B = B.copy()
    B[0], B[1] = B[1], B[0]
    return np.sum(B * np.array([[1.0, 2, 3], [4, 5, 6]]))


def test_tuple_assignment_of_views_is_refused_and_of_numbers_is_a_swap():
    with pytest.raises(s2s.UnsupportedSyntax, match="NumPy gives a view"):
        s2s.grad(swap_rows)(np.arange(6.0).reshape(2, 3))
    with pytest.raises(s2s.UnsupportedSyntax, match="NumPy gives a view"):
        s2s.grad(swap_halves)(np.ones(4))
    with pytest.raises(s2s.RefusedWhenRun, match="NumPy gives a view"):     # rows or numbers: known when it runs
        s2s.grad(swap_rows_by_index)(np.arange(6.0).reshape(2, 3))
    np.testing.assert_allclose(s2s.grad(swap_numbers)(np.ones(3)), [2.0, 1.0, 0.0])


# ---------------------------------------------------------------- crashes found

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


def lagrangian(x, x_dot):
    return x * x_dot ** 2


def written_list_reduced(xs0):
    acc = 0.5
    xs0[0] = math.cos(acc)
    xs0[-1] += acc
    acc = np.mean(xs0)
    xs2 = 2 * xs0 + xs0
    for i1 in range(len(xs2)):
        acc = acc + xs2[i1] * acc * acc
    return np.min(xs2[::2]) + xs2[2]


def rebinds_tuple_argument(b):
    if b[0] > -5.0:
        b = (0.5,)
    return b[0]


def loop_variable_rebinds_parameter(x, y):
    for k in range(2):
        for y in (y, 1.0):
            x = x * y
    return x - y


def test_lists_given_to_numpy():
    assert s2s.grad(sum_of_list, wrt=(0, 1))(2.0, 3.0) == (4.0, 8.0)
    np.testing.assert_allclose(s2s.grad(list_times_array)(np.ones(2)), [2.0, 3.0])
    assert s2s.grad(reductions_of_appended)(2.0) == pytest.approx(3.0)
    assert s2s.grad(max_of_concatenation)(0.7) == 1.0
    assert s2s.grad(max_of_concatenation, mode="forward")(0.7) == 1.0
    value, g = s2s.value_and_grad(written_list_reduced)([0.442])
    assert value == pytest.approx(written_list_reduced([0.442])) and g == [0.0]


def test_slices_and_loops_over_lists():
    params = [(2.0, 1.0), (3.0, 1.0)]
    assert s2s.grad(all_but_last)(params, 1.0) == [(1.0, 1.0), (0.0, 0.0)]
    assert s2s.grad(middle_layers)(params, 1.0) == [(0.0, 0.0), (0.0, 0.0)]
    assert s2s.grad(all_but_last, wrt=1)(params, 1.0) == 2.0
    assert s2s.grad(iterate_slice)([1.0, 2.0]) == [2.0, 4.0]
    assert s2s.grad(both_parts)(1.5) == 4.0


def test_arguments_named_like_generated_names():
    assert s2s.grad(lagrangian, mode="forward")(1.0, 2.0) == 4.0
    assert s2s.jvp(lagrangian, (1.0, 2.0), (1.0, 0.0)) == (4.0, 4.0)
    assert s2s.hvp(lagrangian)(1.0, 2.0, 1.0) == 0.0
    assert s2s.hvp(lagrangian, wrt=1)(1.0, 2.0, 1.0) == 2.0
    assert s2s.grad(lagrangian, wrt="x_dot")(1.5, 2.0) == 6.0


def test_branches_and_loop_variables():
    assert s2s.jvp(rebinds_tuple_argument, ([-0.169],), ([1.0],)) == (0.5, 0.0)
    for mode in ("reverse", "forward"):
        assert s2s.grad(loop_variable_rebinds_parameter, mode=mode)(-0.453, 0.291) == pytest.approx(0.291)
        assert s2s.grad(loop_variable_rebinds_parameter, wrt=1, mode=mode)(-0.453, 0.291) == pytest.approx(-0.453)


def sine_times(x, y):
    return np.sin(x) * y


def pair(x, y):
    return x * y, x + y


def test_jacobian_and_hessian_of_several():
    x, y = np.array([0.3, -0.4]), np.array([1.5, 2.0])
    jx, jy = s2s.jacobian(sine_times, wrt=(0, 1))(x, y)
    np.testing.assert_allclose(jx, np.diag(np.cos(x) * y))
    np.testing.assert_allclose(jy, np.diag(np.sin(x)))
    assert s2s.jacobian(pair)(1.0, 2.0) == (2.0, 1.0)
    assert s2s.jacobian(pair, wrt=(0, 1))(1.0, 2.0) == ((2.0, 1.0), (1.0, 1.0))
    h = s2s.hessian(sine_times, wrt=(0, 1))(1.0, 2.0)
    assert h[0][0] == pytest.approx(-2.0 * math.sin(1.0)) and h[0][1] == pytest.approx(math.cos(1.0))
    assert h[1][0] == pytest.approx(math.cos(1.0)) and h[1][1] == 0.0


def test_clear_errors_for_misuse():
    with pytest.raises(s2s.BadArgument, match="direction v"):
        s2s.hvp(sine_times)(1.0, 2.0)
    _, pullback = s2s.vjp(sine_times, np.ones(2), np.ones(2))
    with pytest.raises(s2s.BadArgument, match="cotangent"):
        pullback(np.ones(3))
    assert s2s.grad(sine_times, argnums=1)(1.0, 2.0) == pytest.approx(math.sin(1.0))
    W, b = np.ones((2, 3)), np.ones(2)

    def affine(p, v):
        return np.sum(p[0] @ v + p[1])
    with pytest.raises(s2s.BadArgument, match="tangent of argument 0"):
        s2s.jvp(affine, ((W, b), np.ones(3)), ((W, np.ones(3)), None))


def affine_sum(p, v):
    W, b = p
    return np.sum(W @ v + b)


def test_jvp_with_containers_of_different_shapes():
    W, b, v = np.ones((2, 3)), np.ones(2), np.arange(3.0)
    value, tangent = s2s.jvp(affine_sum, ((W, b), v), ((np.ones((2, 3)), np.ones(2)), None))
    assert value == affine_sum((W, b), v) and tangent == pytest.approx(2 * 3.0 + 2)


# ---------------------------------------------------------------- the last value of a loop's variables

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
    assert_gradient(f, *args)
    h = 1e-5
    gradient = s2s.grad(f)
    second = (gradient(args[0] + h, *args[1:]) - gradient(args[0] - h, *args[1:])) / (2 * h)
    assert s2s.grad(s2s.grad(f))(*args) == pytest.approx(second, abs=1e-5)


# ---------------------------------------------------------------- element code that is correct is not refused

def lower_triangle_sums(u, k):
    w = np.zeros(len(u))
    for i in range(len(u)):
        for j in range(i + 1):
            w[i] += u[j] * k
    u = w
    return np.sum(u * np.arange(len(u)))


def gauss_seidel(u, f):
    u = u * 1.0
    for t in range(3):
        for i in range(1, len(u) - 1):
            u[i] = 0.5 * (u[i - 1] + u[i + 1] + f[i])
    return np.sum(u * u)


def swap_then_sweep(u, v):
    for t in range(2):
        u, v = v, u
    u = u * 1.0
    for i in range(1, len(u)):
        u[i] = 0.4 * u[i - 1] + u[i]
    return np.sum(u)


def swap_through_temporary(y):
    y = y.copy()
    t = y[0]
    y[0] = y[2]
    y[2] = t
    return np.sum(y * np.arange(4.0))


def rows_through_temporary(B):
    B = B.copy()
    t = B[0]
    B[0] = B[1]
    B[1] = t
    return np.sum(B)


@pytest.mark.parametrize("f, args", [
    (lower_triangle_sums, (np.array([0.3, -1.0, 2.0]), 0.5)), (gauss_seidel, (np.linspace(0, 1, 5), np.ones(5))),
    (swap_then_sweep, (np.array([1.0, 2.0, 3.0]), np.array([-1.0, 0.5, 2.0]))),
    (swap_through_temporary, (np.array([1.0, 2.0, 3.0, 4.0]),)),
])
def test_element_loops_and_swaps(f, args):
    for wrt in range(len(args)):
        assert_gradient(f, *args, wrt=wrt)


def test_a_row_held_while_its_array_is_written_is_refused():
    with pytest.raises(s2s.RefusedWhenRun, match="'t' is a slice or row of 'B'"):
        s2s.grad(rows_through_temporary)(np.ones((2, 3)))


# ---------------------------------------------------------------- keyword arguments, loops over dicts

try:
    import scipy.special
    import scipy.stats
except ImportError:             # scipy is optional: the tests that use it are skipped, with the reason
    scipy = None


def normal_loglik(x, mu, s):
    return np.sum(scipy.stats.norm.logpdf(x, loc=mu, scale=s))


def weighted_logsumexp(x, w):
    return scipy.special.logsumexp(x, b=w)


def over_dict_keys(x):
    d = {"a": x, "b": 2.0 * x}
    s = 0.0
    for k in d:
        s = s + d[k] * d[k]
    return s


def test_keyword_arguments_carry_derivatives():
    pytest.importorskip("scipy.special", reason="scipy is an optional dependency (its rules)")
    x = np.array([0.3, -1.0, 2.0])
    for wrt in (1, 2):
        assert_gradient(normal_loglik, x, 0.5, 1.5, wrt=wrt)
    w = np.array([0.5, 2.0, 1.0])
    np.testing.assert_allclose(s2s.grad(weighted_logsumexp, wrt=1)(x, w), numeric(weighted_logsumexp, (x, w), 1),
                               rtol=1e-6)
    np.testing.assert_allclose(s2s.grad(weighted_logsumexp, wrt=1, mode="forward")(x, w),
                               numeric(weighted_logsumexp, (x, w), 1), rtol=1e-6)


def test_loops_over_dict_keys():
    assert s2s.grad(over_dict_keys)(1.5) == pytest.approx(15.0)
    assert s2s.grad(over_dict_keys, mode="forward")(1.5) == pytest.approx(15.0)


def named_like_temporaries(y_dot, tmp):
    a = tmp * tmp
    t1 = 0.0
    t2 = np.zeros(len(y_dot))
    for dt1 in range(len(y_dot)):
        t1 = t1 * a * 0.5 + y_dot[dt1]
        t2[dt1] = t1
    y_dot = t2
    return np.sum(np.sin(y_dot)) + y_dot[0]


def test_user_names_that_look_generated_in_every_mode():
    y = np.array([-0.742, 0.617, 0.18, -0.79, 0.425, 0.438])
    for wrt in (0, 1):
        assert_gradient(named_like_temporaries, y, -0.64, wrt=wrt)
