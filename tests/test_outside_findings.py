"""Programs an outside tester wrote in their own style, which gave silent wrong gradients, crashed, or were refused
with a confusing message: each is now right (against central differences, both modes) or refused with its place."""
import collections
import dataclasses
import functools
import typing

import numpy as np
import pytest

import s2s
from scipy.integrate import odeint

from s2s.testing.gradcheck import numerical_gradient

MODES = ["reverse", "forward"]


def agrees(f, args, i=0, mode="reverse", rtol=1e-6, atol=1e-8):
    got = s2s.grad(f, wrt=i, mode=mode)(*args)
    np.testing.assert_allclose(got, numerical_gradient(f, args, i, 1e-6), rtol=rtol, atol=atol)
    return got


IDX = np.array([0, 1, 1, 2])


def segment_sum(w):
    return np.sum(np.bincount(IDX, weights=w, minlength=4) ** 2)


@pytest.mark.parametrize("mode", MODES)
def test_bincount_with_weights_differentiates_the_weights(mode):
    w = np.array([1.0, 2.0, 3.0, 4.0])
    np.testing.assert_allclose(agrees(segment_sum, (w,), mode=mode), [2.0, 10.0, 10.0, 8.0])


def test_bincount_second_order():
    h = s2s.hessian(lambda w: np.sum(np.bincount(IDX, weights=w) ** 3))(np.array([1.0, 2.0, 3.0, 4.0]))
    expected = np.zeros((4, 4))
    expected[0, 0], expected[1:3, 1:3], expected[3, 3] = 6.0, 30.0, 24.0
    np.testing.assert_allclose(h, expected)


def scatter_add(w):
    out = np.zeros(3)
    np.add.at(out, IDX, w)
    return np.sum(out ** 2)


def unique_squares(x):
    return np.sum(np.unique(x) ** 2)


def test_ufunc_at_writes_in_place_and_is_refused():
    with pytest.raises(s2s.S2SError, match=r"np\.add\.at") as info:
        s2s.grad(scatter_add)(np.ones(4))
    assert "test_outside_findings.py" in str(info.value) and "bincount" in str(info.value)


@pytest.mark.parametrize("mode", MODES)
def test_unique_of_an_active_value_is_refused_not_zero(mode):
    with pytest.raises(s2s.S2SError, match="unique"):
        s2s.grad(unique_squares, mode=mode)(np.array([3.0, 1.0, 2.0]))


def casts(x):
    return np.sum(x.astype(int) * x) + np.sum(np.asarray(x, dtype=bool) * x) + np.sum(np.array(x, dtype=np.int64))


@pytest.mark.parametrize("mode", MODES)
def test_a_cast_to_integers_or_booleans_carries_no_derivative(mode):
    x = np.array([0.3, 1.7, 2.5])
    got = s2s.grad(casts, mode=mode)(x)
    np.testing.assert_allclose(got, [0.0 + 1, 1.0 + 1, 2.0 + 1])


def fortran_ravel(x):
    return np.sum(x.ravel(order="F") * np.arange(6.0)) + np.sum(np.reshape(x, (3, 2), order="F")[:, 0] ** 2)


def memory_order(x):
    return np.sum(x.T.ravel(order="K") * np.arange(6.0)) + np.sum(x.T.reshape(6, order="A") ** 3 * np.arange(6.0))


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("f", [fortran_ravel, memory_order])
def test_ravel_and_reshape_read_the_elements_in_their_order(f, mode):
    agrees(f, (np.arange(6.0).reshape(2, 3) / 3.0 + 0.1,), mode=mode)


def half_square(x):
    return (np.sum(x ** 2) * 0.5).item()


@pytest.mark.parametrize("mode", MODES)
def test_item_carries_the_derivative(mode):
    x = np.array([1.0, 2.0, 3.0])
    np.testing.assert_allclose(agrees(half_square, (x,), mode=mode), x)
    assert s2s.jvp(half_square, (x,), (np.ones(3),))[1] == pytest.approx(6.0)


def with_initial(x):
    return np.sum(x ** 2, initial=10.0) + np.sum(np.diff(x, prepend=5.0) ** 2) + \
        np.sum(np.diff(x, append=[2.0, 1.0]) ** 2)


@pytest.mark.parametrize("mode", MODES)
def test_constant_keyword_values_stay_out_of_the_tangent(mode):
    x = np.array([1.0, 2.0, 3.0, 4.0])
    agrees(with_initial, (x,), mode=mode)


def initial_is_differentiated(x, c):
    return np.sum(x * x, initial=c * c)


def test_an_active_initial_value():
    x = np.array([1.0, 2.0])
    assert s2s.grad(initial_is_differentiated, wrt=1, mode="reverse")(x, 3.0) == pytest.approx(6.0)
    with pytest.raises(s2s.S2SError, match="keyword"):
        s2s.grad(initial_is_differentiated, wrt=1, mode="forward")(x, 3.0)


def scaled_columns(w, X):
    n = X.shape[1]
    scales = np.array([1.0] * n)
    signs = np.array((1.0, -1.0) * (n // 2) + (1.0,) * (n % 2))
    grid = np.zeros(X.shape + (2,))
    return np.sum((X * scales) @ w) + np.sum(signs * w) + np.sum(grid) * np.sum(w) + X.size * w[0] + X.ndim * w[1]


@pytest.mark.parametrize("mode", MODES)
def test_integers_from_shape_size_and_ndim_repeat_and_join_sequences(mode):
    w, X = np.array([1.0, 2.0, 3.0]), np.ones((2, 3))
    assert s2s.value_and_grad(scaled_columns)(w, X)[0] == pytest.approx(scaled_columns(w, X))
    np.testing.assert_allclose(agrees(scaled_columns, (w, X), mode=mode), [2 + 1 + 6, 2 - 1 + 2, 2 + 1])


def weighted(x):
    return sum(k * xi for k, xi in enumerate(x, start=1))


@pytest.mark.parametrize("mode", MODES)
def test_enumerate_start_keyword(mode):
    np.testing.assert_allclose(agrees(weighted, (np.ones(3),), mode=mode), [1.0, 2.0, 3.0])


def normalize_(u):
    u /= np.linalg.norm(u)
    return u


def uses_normalized(x):
    y = x * 2.0
    z = normalize_(y)
    return np.sum(y) + np.sum(z)


def test_a_helper_dividing_its_argument_in_place_is_refused():
    with pytest.raises(s2s.S2SError, match="changes its argument 'u' in place") as info:
        s2s.grad(uses_normalized)(np.array([3.0, 4.0]))
    assert "test_outside_findings.py" in str(info.value)


def scalar_step(x, dx):
    x += dx
    return x


def uses_scalar_step(a):
    return scalar_step(a, a * a) * 3.0


def test_a_helper_adding_to_a_number_argument_is_fine():
    agrees(uses_scalar_step, (0.7,))


class Base:
    def forward(self, z):
        return np.tanh(z)


class Scaled(Base):
    def forward(self, z):
        return 2.0 * super().forward(z)


MODEL = Scaled()


def model_loss(x):
    return np.sum(MODEL.forward(x))


@pytest.mark.parametrize("mode", MODES)
def test_super_in_a_method(mode):
    x = np.array([0.1, 0.2])
    np.testing.assert_allclose(agrees(model_loss, (x,), mode=mode), 2 * (1 - np.tanh(x) ** 2))


def by_magnitude(xs):
    ys = sorted(xs, key=abs)
    return ys[0] * 3.0 + ys[-1]


def test_sorted_with_a_key():
    assert s2s.grad(by_magnitude)([0.3, -0.8, 1.2]) == [3.0, 0.0, 1.0]


def clipped_take(x):
    return np.sum(np.take(x, [0, 5], mode="clip") * np.array([2.0, 8.0])) + np.sum(np.take(x, [-1, 6], mode="wrap"))


@pytest.mark.parametrize("mode", MODES)
def test_take_with_clip_and_wrap(mode):
    np.testing.assert_allclose(agrees(clipped_take, (np.arange(4.0),), mode=mode), [2.0, 0.0, 1.0, 9.0])


def flat_join(A):
    return np.sum(np.concatenate([A, A ** 2], axis=None) * np.arange(8.0))


@pytest.mark.parametrize("mode", MODES)
def test_concatenate_without_an_axis(mode):
    agrees(flat_join, (np.array([[1.0, 2.0], [3.0, 4.0]]),), mode=mode)


def three_way(a, b, c):
    return max(a, b * 2.0, c) + min(a, b, c * c)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("point", [(1.0, 0.7, 0.5), (1.0, 0.3, 2.0), (0.2, 0.9, 0.1)])
def test_max_and_min_of_three(point, mode):
    for i in range(3):
        agrees(three_way, point, i, mode=mode)


def twice(fn):
    @functools.wraps(fn)
    def wrapper(*a, **k):
        return 2.0 * fn(*a, **k)
    return wrapper


@twice
def doubled_square(x):
    return x ** 2


def calls_decorated(x):
    return doubled_square(x) + 1.0


@pytest.mark.parametrize("mode", MODES)
def test_a_decorated_helper(mode):
    assert agrees(calls_decorated, (1.5,), mode=mode) == pytest.approx(6.0)


def through_local_names(x):
    g = np.exp
    total = 0.0
    for act in (np.sin, np.cos, np.tanh):
        total = total + np.sum(act(x))
    return np.sum(g(x)) + total


@pytest.mark.parametrize("mode", MODES)
def test_functions_called_through_local_names(mode):
    x = np.array([0.2, 0.5])
    np.testing.assert_allclose(agrees(through_local_names, (x,), mode=mode),
                               np.exp(x) + np.cos(x) - np.sin(x) + 1 - np.tanh(x) ** 2)


try:
    import scipy.stats as st
except ImportError:          # the test below skips
    st = None


def frozen_nll(mu, sigma):
    d = st.norm(mu, sigma)
    return -np.sum(d.logpdf(np.array([0.5, 1.5, -0.2])))


@pytest.mark.parametrize("mode", MODES)
def test_a_frozen_distribution_assigned_to_a_name(mode):
    pytest.importorskip("scipy", reason="scipy.stats is an optional dependency")
    for i in range(2):
        agrees(frozen_nll, (0.3, 1.2), i, mode=mode)


def imports_inside(mu, sigma):
    import math
    import numpy.linalg as la
    from numpy import tanh as th
    return math.sin(mu) * sigma + la.norm(np.array([mu, sigma])) + th(mu * sigma)


@pytest.mark.parametrize("mode", MODES)
def test_imports_inside_the_function(mode):
    for i in range(2):
        agrees(imports_inside, (0.3, 1.2), i, mode=mode)


def test_a_relative_import_inside_the_function_is_refused():
    def f(x):
        from . import nothing    # noqa: F401
        return x
    with pytest.raises(s2s.S2SError, match="import"):
        s2s.grad(f)(1.0)


def accumulate_from_an_element(b):
    xs = np.zeros(2)
    s = b[0]
    s -= 2.0 * b[1]
    xs[0] = s
    return np.sum(xs * b)


def accumulate_from_a_row(B):
    s = B[0]
    s -= 1.0
    return np.sum(s * B)


@pytest.mark.parametrize("mode", MODES)
def test_a_number_read_from_an_array_takes_augmented_assignment(mode):
    agrees(accumulate_from_an_element, (np.array([1.0, 2.0]),), mode=mode)


def test_a_row_read_from_an_array_is_refused_before_augmented_assignment():
    with pytest.raises(s2s.S2SError, match="would change 'B' too"):
        s2s.grad(accumulate_from_a_row)(np.ones((2, 2)))


class Doubled(Base):
    def forward(self, z):
        return 2.0 * super(Doubled, self).forward(z)


DOUBLED = Doubled()


def explicit_super_loss(x):
    return np.sum(DOUBLED.forward(x))


def test_super_with_its_class_named():
    x = np.array([0.1, 0.2])
    np.testing.assert_allclose(agrees(explicit_super_loss, (x,)), 2 * (1 - np.tanh(x) ** 2))


def test_check_true_compares_a_derivative_an_unchecked_call_made_first(monkeypatch):
    import s2s.driver.pipeline as api
    seen = []
    original = api._verify_reading

    def spy(*args, **kwargs):
        seen.append(1)
        return original(*args, **kwargs)
    monkeypatch.setattr(api, "_verify_reading", spy)
    monkeypatch.delenv("S2S_CHECK", raising=False)

    def f(x):
        return np.sum(x ** 3)
    x = np.array([1.0, 2.0])
    s2s.value_and_grad(f, check=False)(x)
    assert not seen
    s2s.value_and_grad(f, check=True)(x)
    s2s.value_and_grad(f, check=True)(x)
    assert len(seen) == 1


LOG = []


def logs_to_a_global(x):
    LOG.append(1)
    return np.sum(x ** 2)


def test_appending_to_a_global_list_is_refused_clearly():
    with pytest.raises(s2s.S2SError, match=r"LOG\.append"):
        s2s.grad(logs_to_a_global)(np.ones(2))


def gauss_seidel_with_an_accumulator(b, A):
    x = np.zeros(3)
    for sweep in range(4):
        for i in range(3):
            s = b[i]
            for j in range(3):
                if j != i:
                    s -= A[i, j] * x[j]
            x[i] = s / A[i, i]
    return np.sum(x * x)


def accumulate_into_a_row(B):
    s = B[0]
    for j in range(2):
        s -= 1.0
    return np.sum(s * B)


MATRIX = np.array([[4.0, 1.0, 0.5], [1.0, 3.0, 0.2], [0.5, 0.2, 2.0]])


@pytest.mark.parametrize("mode", MODES)
def test_gauss_seidel_with_a_scalar_accumulator(mode):
    b = np.array([1.0, 2.0, -0.5])
    agrees(gauss_seidel_with_an_accumulator, (b, MATRIX), 0, mode=mode)
    agrees(gauss_seidel_with_an_accumulator, (b, MATRIX), 1, mode=mode)


def test_gauss_seidel_with_a_scalar_accumulator_second_order():
    b = np.array([1.0, 2.0, -0.5])
    h = s2s.hessian(lambda v: gauss_seidel_with_an_accumulator(v, MATRIX))(b)
    g = s2s.grad(lambda v: gauss_seidel_with_an_accumulator(v, MATRIX))
    rows = [(g(b + e * 1e-5) - g(b - e * 1e-5)) / 2e-5 for e in np.eye(3)]
    np.testing.assert_allclose(h, np.array(rows), rtol=1e-5, atol=1e-7)


def test_a_row_accumulated_in_a_loop_is_refused_when_it_runs():
    with pytest.raises(s2s.S2SError, match="would change 'B' too"):
        s2s.grad(accumulate_into_a_row)(np.ones((2, 2)))


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
    agrees(first_above, (np.array([0.1, 0.2, 0.9]), 0.5), mode=mode)
    agrees(first_above, (np.array([0.1, 0.2, 0.3]), 0.5), mode=mode)
    assert agrees(newton_sqrt, (2.0,), mode=mode) == pytest.approx(0.5 / np.sqrt(2.0))
    assert agrees(else_without_break, (1.5,), mode=mode) == pytest.approx(9.0)


def into_an_integer_buffer(x):
    out = np.zeros(3, dtype=int)
    out[0] = x[0] * 10
    flags = np.zeros(2, dtype=bool)
    for k in range(2):
        flags[k] = x[k] > 0.5
    floats = np.zeros(3)
    floats[1] = x[1] * 10
    return np.sum(out * x) + np.sum(flags * x[:2]) + np.sum(floats * x)


@pytest.mark.parametrize("mode", MODES)
def test_a_float_written_into_an_integer_array_carries_no_derivative(mode):
    x = np.array([0.31, 1.7, 2.2])
    got = agrees(into_an_integer_buffer, (x,), mode=mode)
    np.testing.assert_allclose(got, [3.0, 1.0 + 20 * 1.7, 0.0])


def test_a_float_written_into_an_integer_array_second_order():
    h = s2s.hessian(into_an_integer_buffer)(np.array([0.31, 1.7, 2.2]))
    expected = np.zeros((3, 3))
    expected[1, 1] = 20.0
    np.testing.assert_allclose(h, expected)


def _rebound_helper(x):
    return x * x


def _uses_rebound_helper(x):
    return _rebound_helper(x) * 2.0


def test_every_derivative_of_a_function_sees_a_helper_rebound():
    g1 = s2s.grad(_uses_rebound_helper, mode="reverse")
    g2 = s2s.value_and_grad(_uses_rebound_helper, mode="reverse")
    assert g1(3.0) == pytest.approx(12.0) and g2(3.0) == (pytest.approx(18.0), pytest.approx(12.0))
    original = globals()["_rebound_helper"]
    globals()["_rebound_helper"] = lambda x: x * x * x
    try:
        assert g1(3.0) == pytest.approx(54.0)
        assert g2(3.0) == (pytest.approx(54.0), pytest.approx(54.0))
    finally:
        globals()["_rebound_helper"] = original


SCALE = 2.0


def _scaled_power(x):
    return np.sum(np.abs(SCALE * x) ** 2)


def test_a_global_that_turns_complex_makes_the_derivative_anew():
    global SCALE
    x = np.array([1.0, 3.0])
    a, b = s2s.grad(_scaled_power), s2s.value_and_grad(_scaled_power)
    np.testing.assert_allclose(a(x), 8 * x)
    np.testing.assert_allclose(b(x)[1], 8 * x)
    SCALE = 2.0j
    try:
        for got in (a(x), b(x)[1]):
            assert not np.iscomplexobj(got)
            np.testing.assert_allclose(got, 8 * x)
        SCALE = 3.0
        np.testing.assert_allclose(a(x), 18 * x)
    finally:
        SCALE = 2.0


# ---- outside tester, round 2: crashes that became results or located refusals

def horner(x, coeffs):
    r = 0.0
    for c in reversed(coeffs):
        r = r * x + c
    return r


def reversed_everywhere(xs):
    total = sum([c * k for k, c in enumerate(reversed(xs))])
    for a, b in zip(reversed(xs), xs):
        total = total + a * b
    return total + sum(reversed(xs)) ** 2


def reversed_with_break(xs):
    s = 0.0
    for c in reversed(xs):
        if c < 0.5:
            break
        s = s + c ** 2
    return s


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("coeffs", [[1.0, 2.0, 3.0], (1.0, 2.0, 3.0), np.array([1.0, 2.0, 3.0])])
def test_reversed_over_a_list_tuple_or_array(coeffs, mode):
    # 3 x^2 + 2 x + 1 at x = 2: 17, its derivative 6 x + 2 = 14
    assert horner(2.0, coeffs) == pytest.approx(17.0)
    assert s2s.grad(horner, mode=mode)(2.0, coeffs) == pytest.approx(14.0)
    if isinstance(coeffs, np.ndarray):
        np.testing.assert_allclose(agrees(horner, (2.0, coeffs), 1, mode=mode), [1.0, 2.0, 4.0])
        xs = np.array([0.2, 2.0, 3.0])
        np.testing.assert_allclose(agrees(reversed_with_break, (xs,), mode=mode), [0.0, 4.0, 6.0])
        agrees(reversed_everywhere, (np.array([0.5, -1.0, 2.0]),), mode=mode)


def test_reversed_second_order_and_list_gradient():
    np.testing.assert_allclose(s2s.grad(horner, wrt=1)(2.0, [1.0, 2.0, 3.0]), [1.0, 2.0, 4.0])
    d2 = s2s.grad(s2s.grad(horner))(2.0, np.array([1.0, 2.0, 3.0]))
    assert d2 == pytest.approx(6.0)


def reversed_dict(x):
    d = {0: x, 1: 2 * x}
    s = 0.0
    for k in reversed(d):
        s = s * 2 + d[k] * k
    return s


@pytest.mark.parametrize("mode", MODES)
def test_reversed_of_a_dict_is_refused_where_it_is(mode):
    with pytest.raises(s2s.UnsupportedSyntax, match=r"reversed\(\) of a dict") as info:
        s2s.grad(reversed_dict, mode=mode)(1.0)
    assert "test_outside_findings.py:" in str(info.value) and "for k in reversed(d)" in str(info.value)


TS = np.linspace(0.0, 1.0, 5)
DECAY = 0.5


def ode_constant_rhs(y0):
    return np.sum(odeint(lambda y, t: -DECAY * y, y0, TS))


def ode_rate_through_args(y0, k):
    return np.sum(odeint(lambda y, t, kk: -kk * y, y0, TS, args=(k,)) ** 2)


def ode_rate_through_closure(k):
    return np.sum(odeint(lambda y, t: -k * y, np.array([1.0]), TS))


@pytest.mark.parametrize("mode", MODES)
def test_odeint_with_a_lambda_that_reads_no_variable(mode):
    y0 = np.array([1.0, 2.0])
    expected = np.sum(np.exp(-DECAY * TS))              # d/dy0_i of sum_t y0_i exp(-DECAY t)
    assert ode_constant_rhs(y0) == pytest.approx(3 * expected, rel=1e-6)
    np.testing.assert_allclose(s2s.grad(ode_constant_rhs, mode=mode)(y0), [expected, expected], rtol=1e-5)
    got = s2s.grad(ode_rate_through_args, wrt=1, mode=mode)(np.array([1.0]), 0.7)
    assert got == pytest.approx(numerical_gradient(ode_rate_through_args, (np.array([1.0]), 0.7), 1, 1e-6),
                                rel=1e-4)


def ode_nested_rhs(y0, k):
    def rhs(y, t):
        return -k * y + np.sin(t) * y0[0]
    return np.sum(odeint(rhs, y0, TS, rtol=1e-10, atol=1e-10))


def ode_rhs_given_elsewhere(y0, k):
    return functools.reduce(lambda acc, v: acc + v * k, [y0[0], y0[1]], 0.0)     # (sorted's key= is read since round 5)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("f", [ode_rate_through_closure, ode_nested_rhs])
def test_odeint_rhs_reading_the_functions_variables_gets_them_through_args(f, mode):
    args = (0.7,) if f is ode_rate_through_closure else (np.array([1.0, 2.0]), 0.7)
    if f is ode_rate_through_closure:        # sum_t exp(-k t): its derivative -sum_t t exp(-k t)
        assert s2s.grad(f, mode=mode)(0.7) == pytest.approx(-np.sum(TS * np.exp(-0.7 * TS)), rel=1e-5)
    for i in range(len(args)):
        got = s2s.grad(f, wrt=i, mode=mode)(*args)
        np.testing.assert_allclose(got, numerical_gradient(f, args, i, 1e-6), rtol=1e-4, atol=1e-7)


def test_a_lambda_closing_over_a_variable_given_to_another_function_is_refused_with_a_fix():
    with pytest.raises(s2s.UnsupportedSyntax, match="lambda") as info:
        s2s.grad(ode_rhs_given_elsewhere, wrt=1)(np.array([1.0, 2.0]), 0.5)
    assert "test_outside_findings.py:" in str(info.value) and "args=(k,)" in str(info.value)


XP, FP = np.array([0.0, 1.0, 2.5]), np.array([1.0, 3.0, 2.0])
AW, FW = np.array([1.0, 2.0, 3.0]), np.array([1, 2, 3])


def periodic_interp(x):
    return np.sum(np.interp(x, XP, FP, period=3.0) ** 2)


def periodic_interp_values(fp):
    return np.sum(np.interp(np.array([-0.3, 0.7, 2.9, 4.2]), XP, fp, period=3.0) ** 2)


def average_returned(x):
    mean, total = np.average(x, returned=True)
    return mean * total


def weighted_average_returned(x):
    mean, total = np.average(x, axis=0, weights=np.array([1.0, 2.0]), returned=True)
    return np.sum(mean ** 2 * total)


def cov_aweights(x):
    return np.sum(np.cov(x, aweights=AW) ** 2)


def cov_fweights(x):
    return np.sum(np.cov(x, fweights=FW) ** 2)


def cov_both(x):
    return np.sum(np.cov(x, fweights=FW, aweights=AW) ** 2) + np.sum(np.cov(x, fweights=FW, aweights=AW, ddof=0))


def cov_in_the_weights(w):
    return np.sum(np.cov(np.array([[1.0, 2.0, 4.0], [0.0, 1.0, 3.0]]), aweights=w) ** 2)


X23 = np.array([[1.0, 2.0, 4.0], [0.0, 1.0, 3.0]])


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("f, x", [(periodic_interp, np.array([-0.3, 0.7, 2.9, 4.2])), (periodic_interp_values, FP),
                                  (average_returned, np.array([1.0, 2.0, 4.0])), (weighted_average_returned, X23),
                                  (cov_aweights, X23), (cov_fweights, X23), (cov_both, X23),
                                  (cov_in_the_weights, AW)])
def test_definitions_model_the_options_they_asserted_on(f, x, mode):
    assert s2s.value_and_grad(f)(x)[0] == pytest.approx(f(x))
    agrees(f, (x,), mode=mode, rtol=1e-5)


def test_periodic_interp_second_order():
    h = s2s.hessian(periodic_interp_values)(FP)
    eps = 1e-5
    numeric = np.array([(s2s.grad(periodic_interp_values)(FP + eps * e) -
                         s2s.grad(periodic_interp_values)(FP - eps * e)) / (2 * eps) for e in np.eye(3)])
    np.testing.assert_allclose(h, numeric, atol=1e-6)


def doubled(x):
    return x * 2


@pytest.mark.parametrize("mode", MODES)
def test_grad_of_an_array_valued_function_is_non_scalar_output_in_both_modes(mode):
    with pytest.raises(s2s.NonScalarOutput, match=r"shape \(3,\)") as info:
        s2s.grad(doubled, mode=mode)(np.ones(3))
    text = str(info.value)
    assert "test_outside_findings.py:" in text and "def doubled" in text and "s2s.jacobian" in text


def det(a):
    return np.linalg.det(a)


def det_squared_plus(a):
    return np.linalg.det(a) ** 2 + np.linalg.det(a) * np.sum(a)


SINGULAR = np.array([[1.0, 2.0], [2.0, 4.0]])
SINGULAR3 = np.array([[1.0, 2.0, 3.0], [2.0, 4.0, 6.0], [1.0, 0.0, 1.0]])


@pytest.mark.parametrize("mode", MODES)
def test_det_gradient_at_singular_matrices(mode):
    np.testing.assert_allclose(s2s.grad(det, mode=mode)(SINGULAR), [[4.0, -2.0], [-2.0, 1.0]])
    # the cofactors of SINGULAR3: rows (4, 4, -4), (-2, -2, 2), (0, 0, 0)
    np.testing.assert_allclose(agrees(det, (SINGULAR3,), mode=mode), [[4, 4, -4], [-2, -2, 2], [0, 0, 0]],
                               atol=1e-8)
    np.testing.assert_allclose(s2s.grad(det, mode=mode)(np.diag([1.0, 1.0, 0.0, 0.0])), np.zeros((4, 4)))
    stack = np.stack([SINGULAR, np.array([[2.0, 1.0], [0.5, 3.0]])])
    total = lambda a: np.sum(np.linalg.det(a))                          # noqa: E731
    np.testing.assert_allclose(s2s.grad(total, mode=mode)(stack), [[[4, -2], [-2, 1]], [[3, -0.5], [-1, 2]]])


@pytest.mark.parametrize("a", [SINGULAR, SINGULAR3, np.array([[2.0, 1.0], [0.5, 3.0]])])
def test_det_second_order_at_singular_matrices(a):
    h = s2s.hessian(det_squared_plus)(a)
    n = a.size
    eps = 1e-5
    numeric = np.array([((s2s.grad(det_squared_plus)(a + eps * e.reshape(a.shape)) -
                          s2s.grad(det_squared_plus)(a - eps * e.reshape(a.shape))) / (2 * eps)).ravel()
                        for e in np.eye(n)])
    np.testing.assert_allclose(h.reshape(n, n), numeric, atol=1e-6)
    if a.shape == (2, 2):          # det of a 2x2 matrix is a0 a3 - a1 a2: its Hessian is constant
        np.testing.assert_allclose(s2s.hessian(det)(a).reshape(4, 4),
                                   [[0, 0, 0, 1], [0, 0, -1, 0], [0, -1, 0, 0], [1, 0, 0, 0]], atol=1e-12)


# ---- messages

def row_alias(x):
    a = x * 1.0
    row = a[0]
    row[1] = 2.0
    return np.sum(a * row)


def same_object(x):
    a = x * 1.0
    b = a
    b[0] = 2.0
    return np.sum(a)


@pytest.mark.parametrize("f, phrase", [(row_alias, "'row' may share memory with 'a'"),
                                       (same_object, "'b' is the same object as 'a'")])
def test_alias_refusals_read_right(f, phrase):
    with pytest.raises(s2s.UnsupportedSyntax) as info:
        s2s.grad(f)(np.ones((2, 2)) if f is row_alias else np.ones(2))
    text = str(info.value)
    assert phrase in text and " is may " not in text and "test_outside_findings.py:" in text


def nested_recursion(x):
    def power(n, y):
        if n == 0:
            return y
        return power(n - 1, y * x)
    return power(3, 1.0)


def lambda_recursion(x):
    power = lambda n: 1.0 if n == 0 else x * power(n - 1)      # noqa: E731
    return power(3)


@pytest.mark.parametrize("f", [nested_recursion, lambda_recursion])
def test_nested_recursion_is_differentiated(f):
    # (refused as recursion until issue 26: a nested function calling itself is lifted with its free variables)
    for mode in ("reverse", "forward", "auto"):
        assert s2s.grad(f, mode=mode)(2.0) == pytest.approx(3 * 2.0 ** 2)


class Documented:
    def loss(self, x):
        """A method's docstring
        on two lines, indented in its class."""
        return documented(x) * 2.0


def test_functions_and_methods_with_multi_line_docstrings_are_read():
    # the text s2s reads is re-indented before it is compared with the code that runs: the docstring is the same
    assert s2s.grad(documented)(3.0) == pytest.approx(6.0)
    assert s2s.grad(Documented().loss)(3.0) == pytest.approx(12.0)


def documented(x):
    """A docstring on
    two lines (the text s2s reads is re-indented: the docstring is the same)."""
    return x * x


def sine_energy(x):
    return np.sum(np.sin(x) ** 2)


def test_forward_mode_with_the_numba_backend_runs_one_compiled_jvp_per_direction():
    pytest.importorskip("numba", reason="the Numba backend needs numba")
    x = np.array([0.3, -1.2, 2.0])
    got = s2s.grad(sine_energy, mode="forward", backend="numba")(x)
    np.testing.assert_allclose(got, 2 * np.sin(x) * np.cos(x), rtol=1e-13)      # d/dx sin^2 = sin 2x


def test_numba_refusals_name_the_python_backend():
    pytest.importorskip("numba")
    from s2s.backends.numba.lines import refuse
    error = refuse("`{1: x}`", {}, 1)
    assert "backend='python'" in str(error) and error.hint


# ---- reasonable code that was refused

def fixed_times(x):
    return np.sum(np.fix(x) * x)


def cast_scalars(x):
    return np.float64(x) ** 2 + float(x) * 3.0


@pytest.mark.parametrize("mode", MODES)
def test_fix_has_derivative_zero_and_float64_is_the_identity(mode):
    np.testing.assert_allclose(agrees(fixed_times, (np.array([1.5, -2.5, 0.3]),), mode=mode), [1.0, -2.0, 0.0])
    assert agrees(cast_scalars, (2.0,), mode=mode) == pytest.approx(7.0)
    assert s2s.grad(s2s.grad(cast_scalars))(2.0) == pytest.approx(2.0)


COEFFICIENTS = np.array([[1.0, 2.0], [3.0, 4.0]])


def chained_writes(x):
    B = np.zeros((2, 2))
    B[0][1] = x
    B[1][0] = x * x
    B[1][1] += 3.0 * x
    return np.sum(B * COEFFICIENTS)


def chained_writes_3d(x):
    B = np.zeros((2, 2, 2))
    for i in range(2):
        B[i][1][0] = x * i
        B[i][0] = np.sin(x)
    return np.sum(B * np.arange(8.0).reshape(2, 2, 2))


def chained_write_into_a_list(x):
    B = [[0.0, 0.0], [0.0, 0.0]]
    B[0][1] = x
    return B[0][1] * 2.0


def chained_write_through_a_slice(x):
    B = np.zeros((3, 2))
    B[0:2][1] = x
    return np.sum(B)


@pytest.mark.parametrize("mode", MODES)
def test_chained_element_writes_on_an_array(mode):
    assert agrees(chained_writes, (2.0,), mode=mode) == pytest.approx(2.0 + 3.0 * 4.0 + 4.0 * 3.0)
    agrees(chained_writes_3d, (0.7,), mode=mode)
    assert s2s.grad(s2s.grad(chained_writes))(2.0) == pytest.approx(6.0)


@pytest.mark.parametrize("mode", MODES)
def test_chained_writes_python_would_not_make_on_an_array_are_refused(mode):
    with pytest.raises(s2s.UnsupportedSyntax, match="list of lists") as info:
        s2s.grad(chained_write_into_a_list, mode=mode)(2.0)
    assert "test_outside_findings.py:" in str(info.value) and "B[0][1] = x" in str(info.value)
    with pytest.raises(s2s.RefusedWhenRun, match="slice") as info:
        s2s.grad(chained_write_through_a_slice, mode=mode)(2.0)
    assert "test_outside_findings.py:" in str(info.value) and "B[0:2][1] = x" in str(info.value)


def cholesky_sum(A):
    n = A.shape[0]
    L = np.zeros((n, n))
    for i in range(n):
        for j in range(i + 1):
            s = A[i, j]
            for k in range(j):
                s -= L[i, k] * L[j, k]
            if i == j:
                L[i, j] = np.sqrt(s)
            else:
                L[i, j] = s / L[j, j]
    return np.sum(L * np.arange(1.0, n * n + 1.0).reshape(n, n))


@pytest.mark.parametrize("mode", MODES)
def test_cholesky_with_a_two_dimensional_running_sum(mode):
    A = np.array([[4.0, 2.0, 0.6], [2.0, 3.0, 0.4], [0.6, 0.4, 2.0]])
    assert cholesky_sum(A) == pytest.approx(np.sum(np.linalg.cholesky(A) * np.arange(1.0, 10.0).reshape(3, 3)))
    agrees(cholesky_sum, (A,), mode=mode, rtol=1e-5)


def hermitian_signal(x):
    return np.sum(np.fft.hfft(x) ** 2) + np.sum(np.fft.hfft(x, 5, norm="ortho") * np.arange(5.0))


def hermitian_spectrum(x):
    return np.sum(np.abs(np.fft.ihfft(x)) ** 2) + np.sum(np.real(np.fft.ihfft(x, norm="forward")) ** 3)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("f, x", [(hermitian_signal, np.array([1.0, 2.0, -0.5])),
                                  (hermitian_spectrum, np.array([1.0, 2.0, 3.0, -4.0, 0.5]))])
def test_hfft_and_ihfft(f, x, mode):
    assert s2s.value_and_grad(f)(x)[0] == pytest.approx(f(x))
    agrees(f, (x,), mode=mode, rtol=1e-5)


Params = collections.namedtuple("Params", "w b")


class TypedParams(typing.NamedTuple):
    w: np.ndarray
    b: float


@dataclasses.dataclass(frozen=True)
class FrozenParams:
    w: np.ndarray
    b: float


def _layer(q, x):
    return np.tanh(q.w @ x + q.b)


def namedtuple_loss(p, x):
    return np.sum(p.w * x) + p.b ** 2 + _layer(p, x) + p[1]


def namedtuple_inside(w, x):
    p = Params(w, 0.5)
    return np.sum(p.w * x)


@pytest.mark.parametrize("kind", [Params, TypedParams])
def test_a_namedtuple_of_parameters_reads_its_fields_by_position(kind):
    p, x = kind(np.array([1.0, 2.0]), 0.5), np.array([1.0, -0.5])
    got = s2s.grad(namedtuple_loss)(p, x)
    assert type(got) is kind
    dw, db = got
    slope = 1.0 - np.tanh(p.w @ x + p.b) ** 2
    np.testing.assert_allclose(dw, x + slope * x)
    assert db == pytest.approx(2 * p.b + slope + 1.0)
    s2s.check_grad(namedtuple_loss, p, x)
    np.testing.assert_allclose(agrees(namedtuple_loss, (p, x), 1), p.w + slope * p.w)
    tangent = s2s.jvp(namedtuple_loss, (p, x), (kind(np.array([1.0, 0.0]), 1.0), np.zeros(2)))[1]
    assert tangent == pytest.approx(dw[0] + db)


def dataclass_loss(p, x):
    return np.sum(p.w * x) + p.b ** 2 + _layer(p, x)


def test_a_dataclass_of_parameters_is_read_by_its_fields_and_indexing_it_is_refused():
    # issue 28 (models as objects): a dataclass is differentiated as its fields, and its gradient is one of its
    # class; indexing it (`p[1]`, which namedtuple_loss does) is what Python refuses, so s2s refuses it too
    p, x = FrozenParams(np.array([1.0, 2.0]), 0.5), np.array([1.0, -0.5])
    got = s2s.grad(dataclass_loss)(p, x)
    assert type(got) is FrozenParams
    slope = 1.0 - np.tanh(p.w @ x + p.b) ** 2
    np.testing.assert_allclose(got.w, x + slope * x)
    assert got.b == pytest.approx(2 * p.b + slope)
    with pytest.raises(s2s.UnsupportedSyntax, match="FrozenParams is indexed") as info:
        s2s.grad(namedtuple_loss)(FrozenParams(np.ones(2), 0.5), np.ones(2))
    text = str(info.value)
    assert "test_outside_findings.py:" in text and "typing.NamedTuple" in text and "p.w" in text


@pytest.mark.parametrize("mode", MODES)
def test_a_namedtuple_built_inside_is_refused_by_name(mode):
    with pytest.raises(s2s.NoDerivativeRule, match="namedtuple|attribute") as info:
        s2s.grad(namedtuple_inside, mode=mode)(np.ones(2), np.ones(2))
    assert "test_outside_findings.py:" in str(info.value) and "getattr" not in str(info.value).split("\n")[0]


def numba_einsum(x):
    return np.sum(np.einsum("i,i->", x, x))


def numba_list(xs):
    return xs[0] * xs[1]


@pytest.mark.parametrize("f, arg, phrase", [(numba_einsum, np.ones(3), "write the contraction with @"),
                                            (numba_list, [1.0, 2.0], "separate float or array arguments")])
def test_numba_refusals_are_located_and_say_what_to_do(f, arg, phrase):
    pytest.importorskip("numba")
    with pytest.raises(s2s.S2SError) as info:
        s2s.grad(f, backend="numba")(arg)
    text = str(info.value)
    assert "test_outside_findings.py:" in text and phrase in text and "backend='python'" in text


@pytest.mark.parametrize("mode", MODES)
def test_det_gradient_keeps_float32(mode):
    for a in (SINGULAR.astype(np.float32), np.eye(3, dtype=np.float32)):
        assert s2s.grad(det, mode=mode)(a).dtype == np.float32


def reversed_rows(X):
    s = np.zeros(2)
    for r in reversed(X):
        s = s * 0.5 + r ** 2
    return np.sum(s)


def reversed_layers(W, x):
    layers = [W, W * 2.0, np.sin(W)]
    h = x
    for M in reversed(layers):
        h = np.tanh(M @ h)
    return np.sum(h)


@pytest.mark.parametrize("mode", MODES)
def test_reversed_rows_of_an_array_and_a_list_of_arrays(mode):
    X = np.array([[1.0, 2.0], [0.5, -1.0], [0.2, 0.3]])
    np.testing.assert_allclose(agrees(reversed_rows, (X,), mode=mode), [[2.0, 4.0], [0.5, -1.0], [0.1, 0.15]])
    agrees(reversed_layers, (np.array([[0.5, -0.2], [0.1, 0.3]]), np.ones(2)), mode=mode)


def two_dimensional_running_sums(A):
    s = A[0, 1]
    s -= A[1, 1] * A[0, 0]
    t = A[1][0]
    t -= A[1][1]
    return s * t


@pytest.mark.parametrize("mode", MODES)
def test_a_number_read_with_a_two_dimensional_index_then_updated(mode):
    A = np.array([[4.0, 2.0], [2.0, 3.0]])
    # s = 2 - 12 = -10, t = 2 - 3 = -1
    np.testing.assert_allclose(agrees(two_dimensional_running_sums, (A,), mode=mode),
                               [[-3.0 * -1, -1.0], [-10.0, -4.0 * -1 + 10.0]])
