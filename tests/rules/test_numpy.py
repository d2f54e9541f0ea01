"""NumPy semantics: shapes, dtypes, broadcasting undone, integer arrays, methods, ties."""
import numpy as np
import pytest

import s2s
from conftest import agrees, central, numeric


def test_scalar_plus_matrix_row_plus_matrix_column_times_row():
    def f(s, row, column, M):
        return np.sum((s + M) * 2.0 + row * M + column * row)

    rng = np.random.default_rng(1)
    s, row, column, M = 0.7, rng.normal(size=3), rng.normal(size=(2, 1)), rng.normal(size=(2, 3))
    ds, drow, dcolumn, dM = s2s.grad(f, wrt=(0, 1, 2, 3))(s, row, column, M)
    assert isinstance(ds, float) and ds == pytest.approx(2.0 * M.size)
    assert drow.shape == (3,) and drow == pytest.approx(M.sum(axis=0) + column.sum())
    assert dcolumn.shape == (2, 1) and dcolumn == pytest.approx(np.full((2, 1), row.sum()))
    assert dM == pytest.approx(2.0 + row + np.zeros((2, 3)))
    s2s.check_grad(f, s, row, column, M, wrt=(0, 1, 2, 3))


def test_adjoint_has_the_shape_and_float32_dtype_of_its_value():
    def loss(W, b, X):
        h = np.tanh(X @ W + b)
        return np.mean(h * h) + np.sum(b) * 0.5

    rng = np.random.default_rng(2)
    W = rng.normal(size=(4, 3)).astype(np.float32)
    b = np.zeros(3, dtype=np.float32)
    X = rng.normal(size=(5, 4)).astype(np.float32)
    dW, db = s2s.grad(loss, wrt=(0, 1))(W, b, X)
    assert dW.dtype == np.float32 and dW.shape == (4, 3)
    assert db.dtype == np.float32 and db.shape == (3,)
    dW64, db64 = s2s.grad(loss, wrt=(0, 1))(W.astype(np.float64), b.astype(np.float64), X.astype(np.float64))
    assert dW == pytest.approx(dW64, rel=1e-4, abs=1e-6)


def test_gradient_of_a_sum_is_a_fresh_writable_array():
    def f(x):
        return np.sum(x)

    g = s2s.grad(f)(np.arange(6.0).reshape(2, 3))
    assert g.shape == (2, 3) and g.flags.writeable and g.flags.owndata
    g *= 2.0
    assert np.all(g == 2.0)


def test_integer_and_boolean_arrays_carry_no_adjoint():
    def f(x, index, mask):
        picked = x[index]
        k = np.argmax(x)
        return np.sum(picked * picked) + np.sum(x * mask) + np.sum(x * (x > 0)) + x[k]

    x = np.array([0.5, -1.0, 2.0, 3.0])
    index, mask = np.array([0, 2, 2]), np.array([True, False, True, False])
    expected = np.zeros(4)
    np.add.at(expected, index, 2 * x[index])
    expected += mask.astype(float) + (x > 0)
    expected[np.argmax(x)] += 1
    assert s2s.grad(f)(x, index, mask) == pytest.approx(expected)
    with pytest.raises(s2s.BadArgument, match="array of int"):
        s2s.grad(f, wrt=1)(x, index, mask)


def test_array_methods_and_attributes():
    def f(x, y):
        n = len(x)
        rows, columns = x.shape
        total = x.sum(axis=0).dot(y) + x.T.mean() * n
        return total + x.reshape(columns, rows).max() + (x @ y).sum() / columns

    rng = np.random.default_rng(3)
    x, y = rng.normal(size=(2, 3)), rng.normal(size=3)
    s2s.check_grad(f, x, y, wrt=(0, 1))


def test_ties_share_the_adjoint():
    def top(x):
        return np.max(x)

    def pairwise(x, y):
        return np.sum(np.maximum(x, y))

    assert s2s.grad(top)(np.array([1.0, 3.0, 3.0])) == pytest.approx([0.0, 0.5, 0.5])
    dx, dy = s2s.grad(pairwise, wrt=(0, 1))(np.array([1.0, 2.0]), np.array([1.0, 0.0]))
    assert dx == pytest.approx([0.5, 1.0]) and dy == pytest.approx([0.5, 0.0])


def test_constructors_inside_the_function():
    def f(a, b):
        v = np.array([a, a * b, 3.0])
        M = np.zeros((3, 3)) + np.eye(3) * v + np.ones_like(v)
        s = np.stack([a, b])
        return np.sum(M * M) + np.sum(np.full((2,), a) * s) + np.sum(np.arange(3) * v)

    s2s.check_grad(f, 0.7, -1.3, wrt=(0, 1))


def test_loop_over_rows_with_numpy_in_the_body():
    def f(W, X):
        total = 0.0
        for row in X:
            total = total + np.sum(np.tanh(W @ row))
        return total

    rng = np.random.default_rng(4)
    s2s.check_grad(f, rng.normal(size=(2, 3)), rng.normal(size=(4, 3)), wrt=(0, 1))


LAZY_CHAINS = [
    "np.sum(s * M)",
    "np.mean(M + s) * s",
    "np.sum(np.sum(M, axis=0) * s + row)",
    "np.sum(np.sum(M, axis=1, keepdims=True) * row * s)",
    "np.sum((np.mean(M, axis=0) + s) * row) + np.max(M) * s",
    "np.sum(np.sum(M) + M * s)",
    "np.sum(np.sum(M, axis=0) + column)",
    "np.sum(np.exp(np.sum(M * s, axis=1)) + s)",
    "np.sum(np.sum(M, axis=0)[1:] * s)",
    "np.sum(np.reshape(np.sum(M, axis=0) + s, (3, 1)) * column.T)",
    "np.sum(np.sum(M, axis=0) @ M.T) * s",
]


@pytest.mark.parametrize("expression", LAZY_CHAINS)
def test_reduction_adjoints_spread_lazily_count_every_copy(expression, make_fn):
    """A reduction's adjoint stays small until needed; every broadcast copy must still count."""
    f = make_fn(f"def f(s, row, column, M):\n    return {expression}\n")
    rng = np.random.default_rng(5)
    args = (0.7, rng.normal(size=3), rng.normal(size=(2, 1)), rng.normal(size=(2, 3)))
    s2s.check_grad(f, *args, wrt=(0, 1, 2, 3))
    reverse = s2s.grad(f, wrt=(0, 1, 2, 3))(*args)
    forward = s2s.grad(f, wrt=(0, 1, 2, 3), mode="forward")(*args)
    for r, fw in zip(reverse, forward):
        assert np.asarray(fw) == pytest.approx(np.asarray(r), rel=1e-9, abs=1e-12)


MODES = ["reverse", "forward", "auto"]


IDX = np.array([0, 1, 1, 2])


def segment_sum(w):
    return np.sum(np.bincount(IDX, weights=w, minlength=4) ** 2)


@pytest.mark.parametrize("mode", MODES)
def test_bincount_with_weights_differentiates_the_weights(mode):
    """Outside round 1 (the first outside tester's programs, written in their own style)."""
    w = np.array([1.0, 2.0, 3.0, 4.0])
    np.testing.assert_allclose(agrees(segment_sum, (w,), mode=mode), [2.0, 10.0, 10.0, 8.0])


def test_bincount_second_order():
    """Outside round 1 (the first outside tester's programs, written in their own style)."""
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
    """Outside round 1 (the first outside tester's programs, written in their own style)."""
    with pytest.raises(s2s.S2SError, match=r"np\.add\.at") as info:
        s2s.grad(scatter_add)(np.ones(4))
    assert "test_numpy.py" in str(info.value) and "bincount" in str(info.value)


@pytest.mark.parametrize("mode", MODES)
def test_unique_of_an_active_value_is_refused_not_zero(mode):
    """Outside round 1 (the first outside tester's programs, written in their own style)."""
    with pytest.raises(s2s.S2SError, match="unique"):
        s2s.grad(unique_squares, mode=mode)(np.array([3.0, 1.0, 2.0]))


def half_square(x):
    return (np.sum(x ** 2) * 0.5).item()


@pytest.mark.parametrize("mode", MODES)
def test_item_carries_the_derivative(mode):
    """Outside round 1 (the first outside tester's programs, written in their own style)."""
    x = np.array([1.0, 2.0, 3.0])
    np.testing.assert_allclose(agrees(half_square, (x,), mode=mode), x)
    assert s2s.jvp(half_square, (x,), (np.ones(3),))[1] == pytest.approx(6.0)


def fixed_times(x):
    return np.sum(np.fix(x) * x)


def cast_scalars(x):
    return np.float64(x) ** 2 + float(x) * 3.0


@pytest.mark.parametrize("mode", MODES)
def test_fix_has_derivative_zero_and_float64_is_the_identity(mode):
    """Outside round 2, reasonable code that was refused."""
    np.testing.assert_allclose(agrees(fixed_times, (np.array([1.5, -2.5, 0.3]),), mode=mode), [1.0, -2.0, 0.0])
    assert agrees(cast_scalars, (2.0,), mode=mode) == pytest.approx(7.0)
    assert s2s.grad(s2s.grad(cast_scalars))(2.0) == pytest.approx(2.0)


XP = np.array([0.0, 0.25, 0.5, 0.75])


def interp_scaled(y):
    return np.interp(0.35, XP, y) * 3.0


@pytest.mark.parametrize("mode", MODES)
def test_interp_of_float32_values_reads_as_numpy_does(mode):
    """Outside round 3, F19: np.interp computes in float64 as NumPy does (the checking mode compared it with a float32
    reading)."""
    y = np.array([0.3, -0.8, 1.2, 0.5], dtype=np.float32)
    value, gradient = s2s.value_and_grad(interp_scaled, mode=mode, check=True)(y)
    assert value == interp_scaled(y)            # exactly NumPy's float64 value (it was 3.6e-8 against -3.6e-8)
    assert gradient.dtype == np.float32         # float32 stays float32
    np.testing.assert_allclose(gradient, central(interp_scaled, y.astype(np.float64)), rtol=1e-6, atol=1e-6)


def r_builder(x):
    return np.sum(np.r_[x, np.ones(2)] ** 2 * np.arange(4.0))


def c_builder(x):
    return np.sum(np.c_[x, np.ones(2), x] ** 2 * np.arange(6.0).reshape(2, 3))


def r_with_range(x):
    return np.sum(np.r_[0:2, x, 3.0] * np.arange(5.0))


@pytest.mark.parametrize("f", [r_builder, c_builder, r_with_range])
def test_index_objects_are_concatenations(f):
    """Issue 12 (classes of silently wrong gradients), 9 and 10. index objects, views on the right."""
    x = np.array([0.5, -1.5])
    expected = numeric(f, (x,), 0)
    np.testing.assert_allclose(s2s.grad(f)(x), expected, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(s2s.grad(f, mode="forward")(x), expected, rtol=1e-6, atol=1e-8)
    hessian = s2s.hessian(f)(x)
    gradient = s2s.grad(f)
    for k in range(2):
        e = np.eye(2)[k] * 1e-6
        np.testing.assert_allclose(hessian[:, k], (gradient(x + e) - gradient(x - e)) / 2e-6, atol=1e-5)
