"""Issue 12: classes of silently wrong gradients, each fixed or refused with a located S2SError.

Every test compares with central differences or a closed form; the checking mode (S2S_CHECK=1, set by
conftest) also compares each derivative's forward sweep with the function's own value.
"""
import functools
import math

import numpy as np
import pytest

import s2s
from s2s.selfcheck import ReadingMismatch


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
    import s2s.api

    def wrong(x):
        return x * 3.0

    def right(x):
        return x * 2.0
    original = s2s.api.primal_ir
    monkeypatch.setattr(s2s.api, "primal_ir", lambda fn: original(wrong if fn is right else fn))
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
