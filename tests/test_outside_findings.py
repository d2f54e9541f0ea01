"""Programs an outside tester wrote in their own style, which gave silent wrong gradients, crashed, or were refused
with a confusing message: each is now right (against central differences, both modes) or refused with its place."""
import functools

import numpy as np
import pytest

import s2s
from s2s.check import numerical_gradient

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
    import s2s.pipeline as api
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
