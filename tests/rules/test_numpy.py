"""NumPy semantics: shapes, dtypes, broadcasting undone, integer arrays, methods, ties."""
import numpy as np
import pytest

import s2s


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
