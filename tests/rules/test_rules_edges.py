"""Edge cases of rules against closed forms (issue 12, item 9): values where a rule used to give NaN, a
zero gradient, a transposed gradient or the wrong axes. tests/rules/test_rules.py checks every rule against
central differences; these pin the exact values at the edges."""
import math

import numpy as np
import pytest

import s2s
from conftest import central

MODES = ("reverse", "forward", "auto")


@pytest.mark.parametrize("mode", MODES)
def test_power_at_zero_base_has_zero_derivative_in_the_exponent(make_fn, mode):
    f = make_fn("def f(x, y):\n    return np.sum(np.power(x, y)) + x[0] ** y[1]\n")
    x, y = np.array([0.0, 2.0]), np.array([1.5, 3.0])
    dx, dy = s2s.grad(f, wrt=(0, 1), mode=mode)(x, y)
    assert dy == pytest.approx([0.0, 8.0 * np.log(2.0)], abs=1e-12)
    assert dx == pytest.approx([0.0, 3.0 * 4.0], abs=1e-12)
    g = make_fn("def g(y):\n    return 0.0 ** y\n")
    assert s2s.grad(g, mode=mode)(2.5) == 0.0


@pytest.mark.parametrize("mode", MODES)
def test_std_of_a_constant_is_zero_not_nan(make_fn, mode):
    f = make_fn("def f(x):\n    return np.sum(np.std(x, axis=0)) + np.std(x[0, 0])\n")
    g = s2s.grad(f, mode=mode)(np.array([[1.0, 2.0, -0.5]]))
    assert np.all(g == 0.0)


@pytest.mark.parametrize("mode", MODES)
def test_inner_with_a_scalar_and_a_matrix(make_fn, mode):
    f = make_fn("def f(a, b):\n    return np.sum(np.inner(a, b) * W)\n", namespace={"W": np.arange(6.0).reshape(2, 3)})
    b = np.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    da, db = s2s.grad(f, wrt=(0, 1), mode=mode)(1.5, b)
    assert da == pytest.approx(np.sum(np.arange(6.0).reshape(2, 3) * b))
    assert db == pytest.approx(1.5 * np.arange(6.0).reshape(2, 3))        # not transposed


@pytest.mark.parametrize("mode", MODES)
def test_einsum_sublist_form_is_differentiated(make_fn, mode):
    w = np.arange(6.0).reshape(3, 2)
    f = make_fn("def f(x):\n    return np.sum(np.einsum(x, [0, 1], [1, 0]) * W)\n", namespace={"W": w})
    assert s2s.grad(f, mode=mode)(np.ones((2, 3))) == pytest.approx(w.T)


def test_det_tangent_of_a_stack_of_matrices(make_fn):
    f = make_fn("def f(a):\n    return np.linalg.det(a)\n")
    a = np.array([[[2.0, 1.0], [0.5, 3.0]], [[1.0, -2.0], [0.3, 0.7]]])
    t = np.array([[[1.0, 0.0], [0.0, 0.0]], [[0.0, 1.0], [1.0, 0.0]]])
    _, tangent = s2s.jvp(f, (a,), (t,))
    expected = [np.linalg.det(m) * np.trace(np.linalg.solve(m, d)) for m, d in zip(a, t)]
    assert tangent == pytest.approx(expected)


@pytest.mark.parametrize("mode", MODES)
def test_log2_and_log10_keep_float32(make_fn, mode):
    f = make_fn("def f(x):\n    return np.sum(np.log2(x) + np.log10(x))\n")
    g = s2s.grad(f, mode=mode)(np.array([0.5, 2.0], dtype=np.float32))
    assert g.dtype == np.float32
    assert g == pytest.approx(1 / (np.array([0.5, 2.0]) * np.log(2)) + 1 / (np.array([0.5, 2.0]) * np.log(10)), rel=1e-6)


def test_prod_second_order_with_a_zero(make_fn):
    f = make_fn("def f(x):\n    return np.prod(x)\n")
    x = np.array([0.0, 2.0, 3.0])
    expected = np.array([[0.0, 3.0, 2.0], [3.0, 0.0, 0.0], [2.0, 0.0, 0.0]])
    assert s2s.hessian(f)(x) == pytest.approx(expected)


@pytest.mark.parametrize("mode", MODES)
def test_trace_of_a_3d_array_and_dot_of_3d_arrays(make_fn, mode):
    f = make_fn("def f(x, y):\n    return np.sum(np.trace(x) * np.arange(2.0)) + np.sum(np.dot(x, y))\n")
    x, y = np.ones((3, 3, 2)), np.ones((4, 2, 5))
    dx, dy = s2s.grad(f, wrt=(0, 1), mode=mode)(x, y)
    expected = np.eye(3)[:, :, None] * np.arange(2.0) + 20.0       # each x[i, j, k] meets y[:, k, :]: 4 * 5
    assert dx == pytest.approx(expected)
    assert dy == pytest.approx(np.full((4, 2, 5), 9.0))


@pytest.mark.parametrize("ord, expected", [(1, [1.0, -1.0, 1.0]), (np.inf, [0.0, -1.0, 0.0]),
                                           (-np.inf, [1.0, 0.0, 0.0]), (3, None)])
@pytest.mark.parametrize("mode", MODES)
def test_vector_norms_of_every_order(make_fn, ord, expected, mode):
    f = make_fn("def f(x):\n    return np.linalg.norm(x, ORD)\n", namespace={"ORD": ord})
    x = np.array([0.5, -2.0, 1.0])
    if expected is None:
        expected = np.sign(x) * np.abs(x) ** 2 / np.sum(np.abs(x) ** 3) ** (2 / 3)
    assert s2s.grad(f, mode=mode)(x) == pytest.approx(expected)


def test_nuclear_norm_gradient_is_u_vt(make_fn):
    f = make_fn("def f(x):\n    return np.linalg.norm(x, 'nuc')\n")
    x = np.array([[1.0, 2.0], [0.5, -1.0], [0.0, 3.0]])
    u, _, vt = np.linalg.svd(x, full_matrices=False)
    assert s2s.grad(f)(x) == pytest.approx(u @ vt)


def test_multiple_outputs_each_get_their_adjoint(make_fn):
    """eigh's eigenvalues and eigenvectors both used: adjoints of tuple outputs are added item by item."""
    f = make_fn("def f(a):\n    w, v = np.linalg.eigh(a + a.T)\n    return np.sum(w * w) + np.sum(v[:, 0] * v[:, 0] * a[0])\n")
    s2s.check_grad(f, np.array([[1.0, 0.3, -0.2], [0.1, 2.0, 0.4], [0.5, -0.3, 3.5]]))


def test_a_rule_refuses_an_argument_it_does_not_differentiate(make_fn):
    pytest.importorskip("scipy", reason="SciPy is optional")
    f = make_fn("def f(v, x):\n    return scipy.special.jv(v, x)\n", namespace={"scipy": __import__("scipy.special")})
    with pytest.raises(s2s.S2SError, match="argument 1"):
        s2s.grad(f, wrt=0)(1.5, 2.0)
    assert s2s.grad(f, wrt=1)(1.5, 2.0) == pytest.approx(0.5 * (__import__("scipy.special").special.jv(0.5, 2.0)
                                                              - __import__("scipy.special").special.jv(2.5, 2.0)))


@pytest.mark.parametrize("mode", MODES)
def test_cumprod_at_zeros_is_exact(make_fn, mode):
    """d/dx_j sum_i c_i with c = cumprod(x): the products of the other elements, not c / x (which is 0/0 at 0)."""
    f = make_fn("def f(x):\n    return np.sum(np.cumprod(x))\n")
    x = np.array([2.0, 0.0, 3.0, 0.0])
    expected = [1.0, 2.0 + 2.0 * 3.0 + 0.0, 0.0, 0.0]      # c = (2, 0, 0, 0): only c_1 = x0 x1 moves with x1...
    expected = [1.0 + 0.0, 2.0 + 6.0, 0.0, 0.0]            # ...and c_2 = x0 x1 x2 moves with x1 by x0 x2 = 6
    assert s2s.grad(f, mode=mode)(x) == pytest.approx(expected)


def test_cumprod_hessian_at_a_zero(make_fn):
    f = make_fn("def f(x):\n    return np.sum(np.cumprod(x))\n")
    x = np.array([2.0, 0.0, 3.0])
    # sum = x0 + x0 x1 + x0 x1 x2: second derivatives x1 x2 terms
    expected = np.array([[0.0, 1.0 + 3.0, 0.0], [4.0, 0.0, 2.0], [0.0, 2.0, 0.0]])
    assert s2s.hessian(f)(x) == pytest.approx(expected)


@pytest.mark.parametrize("method, weights", [("lower", [0, 1, 0, 0, 0]), ("higher", [0, 0, 0, 1, 0]),
                                             ("nearest", [0, 1, 0, 0, 0]), ("midpoint", [0, 0.5, 0, 0.5, 0]),
                                             ("linear", [0, 0.8, 0, 0.2, 0])])
@pytest.mark.parametrize("mode", MODES)
def test_quantile_methods_pick_their_order_statistics(make_fn, method, weights, mode):
    """x sorted is (x1, x3, ...): q = 0.3 of 5 values sits at 1.2 between the 2nd and 3rd smallest."""
    f = make_fn(f"def f(x):\n    return np.quantile(x, 0.3, method='{method}')\n")
    x = np.array([5.0, 1.0, 9.0, 3.0, 7.0])           # sorted: 1 (x1), 3 (x3), 5 (x0), 7 (x4), 9 (x2)
    by_rank = {0: 1, 1: 3, 2: 0, 3: 4, 4: 2}
    expected = np.zeros(5)
    rank_weights = {"lower": {1: 1.0}, "higher": {2: 1.0}, "nearest": {1: 1.0}, "midpoint": {1: 0.5, 2: 0.5},
                    "linear": {1: 0.8, 2: 0.2}}[method]
    for rank, w in rank_weights.items():
        expected[by_rank[rank]] = w
    assert s2s.grad(f, mode=mode)(x) == pytest.approx(expected)


@pytest.mark.parametrize("mode", MODES)
def test_gradient_with_coordinates_is_numpys_stencil(make_fn, mode):
    """np.gradient is linear in f: its gradient for weights w is the transposed stencil applied to w."""
    coords = np.array([0.0, 0.5, 1.5, 1.75])
    w = np.array([1.0, -2.0, 0.5, 3.0])
    f = make_fn("def f(x):\n    return np.sum(np.gradient(x, C, edge_order=2) * W)\n", namespace={"C": coords, "W": w})
    matrix = np.stack([np.gradient(e, coords, edge_order=2) for e in np.eye(4)], axis=1)     # column j: f = e_j
    assert s2s.grad(f, mode=mode)(np.ones(4)) == pytest.approx(matrix.T @ w)


def test_full_svd_of_a_non_square_matrix_refuses_its_extra_vectors(make_fn):
    f = make_fn("def f(x):\n    u, s, vt = np.linalg.svd(x)\n    return np.sum(u * u[0])\n")
    with pytest.raises(NotImplementedError, match="extra singular vectors"):
        s2s.grad(f)(np.array([[1.0, 2.0], [0.5, -1.0], [0.0, 3.0]]))
    _, tangent = s2s.jvp(lambda x: np.linalg.svd(x)[0], (np.ones((3, 2)) + np.eye(3, 2),), (np.ones((3, 2)),))
    assert np.all(np.isnan(tangent[:, 2])) and np.all(np.isfinite(tangent[:, :2]))     # NaN, never made up


def test_complete_qr_of_a_tall_matrix_is_refused(make_fn):
    f = make_fn("def f(x):\n    q, r = np.linalg.qr(x, mode='complete')\n    return np.sum(q) + np.sum(r)\n")
    with pytest.raises(NotImplementedError, match="mode='complete' of a matrix with more rows"):
        s2s.grad(f)(np.array([[1.0, 2.0], [0.5, -1.0], [0.0, 3.0]]))


MODES = ["reverse", "forward", "auto"]


def polynomial_features(x):
    return np.sum(x[:, None] ** np.arange(4))


def vandermonde(x):
    return np.sum(np.vander(x, 3) @ np.array([0.5, -1.0, 2.0]))


def power(x, n):
    return x ** n


def math_power(x, n):
    return math.pow(x, n) + x


@pytest.mark.parametrize("mode", MODES)
def test_a_zero_power_has_derivative_zero_at_zero(mode):
    """Outside round 5, K12: d/dx x ** 0 is 0 at x = 0 too (it was 0 * inf = nan, or ZeroDivisionError for floats)."""
    x = np.array([0.0, 0.5, -1.5])
    np.testing.assert_allclose(s2s.grad(polynomial_features, mode=mode)(x), 1 + 2 * x + 3 * x ** 2, rtol=1e-12)
    np.testing.assert_allclose(s2s.grad(vandermonde, mode=mode)(x), x - 1.0, rtol=1e-12)
    for n, expected in [(0, 0.0), (1, 1.0), (2.0, 0.0), (3, 0.0)]:
        assert s2s.grad(power, mode=mode)(0.0, n) == expected
        assert s2s.grad(math_power, mode=mode)(0.0, float(n)) == expected + 1.0
    assert s2s.grad(power, mode=mode)(2.0, 3) == pytest.approx(12.0)
    assert s2s.grad(power, wrt=(0, 1), mode=mode)(2.0, 0.0) == pytest.approx((0.0, math.log(2.0)))


def test_a_zero_power_at_zero_to_second_order():
    """Outside round 5, K12: d/dx x ** 0 is 0 at x = 0 too (it was 0 * inf = nan, or ZeroDivisionError for floats)."""
    x = np.array([0.0, 0.5])
    np.testing.assert_allclose(s2s.hessian(polynomial_features)(x), np.diag(2 + 6 * x), rtol=1e-12)
    np.testing.assert_allclose(s2s.hvp(polynomial_features)(x, np.array([1.0, -1.0])), (2 + 6 * x) * [1, -1],
                               rtol=1e-12)


def masked_residuals(x):
    r = np.where(x > -10.0, x - 1.0, 0.0)
    return np.sum(r ** 2)


def clipped_residuals(x):
    return np.sum(np.clip(x - 1.0, -10.0, 10.0) ** 2) + np.sum(np.maximum(x - 1.0, -10.0) ** 3)


def shifted_abs(x):
    return np.sum(np.abs(x + 5.0) ** 2 * (x - 1.0))


def sqrt_where_defined(x):
    return np.sum(np.where(x > 0, np.sqrt(np.abs(x) * (x > 0) + (x <= 0) * -1.0), 0.0) * x)


def scalar_max(x):
    return max(x - 1.0, -10.0) ** 2


@pytest.mark.parametrize("fn, diagonal", [(masked_residuals, lambda x: 2.0 + 0 * x),
                                          (clipped_residuals, lambda x: 2.0 + 6.0 * (x - 1.0)),
                                          (shifted_abs, lambda x: 6.0 * x + 18.0)])
def test_second_derivatives_where_the_adjoint_is_zero_on_the_branch_taken(fn, diagonal):
    """Outside round 5, H1: a second derivative through np.where, maximum, clip, abs or min where the adjoint is exactly
    0 on the branch taken (a residual exactly 0): the mask that keeps NaN out of the branch not taken dropped g_dot *
    local."""
    x = np.array([0.0, 1.0, 2.0])                   # x = 1: the residual x - 1 is exactly 0
    expected = np.diag(diagonal(x))
    np.testing.assert_allclose(s2s.hessian(fn)(x), expected, rtol=1e-12)
    np.testing.assert_allclose(s2s.hvp(fn)(x, np.array([0.0, 1.0, 0.0])), expected[:, 1], rtol=1e-12)
    np.testing.assert_allclose(central(lambda v: s2s.grad(fn)(v)[1], x), expected[1], rtol=1e-6, atol=1e-6)
    assert s2s.grad(s2s.grad(scalar_max, mode="reverse"))(1.0) == pytest.approx(2.0)
    assert s2s.grad(s2s.grad(scalar_max))(1.0) == pytest.approx(2.0)


def test_the_branch_not_taken_still_gives_no_nan_to_second_order():
    """Outside round 5, H1: a second derivative through np.where, maximum, clip, abs or min where the adjoint is exactly
    0 on the branch taken (a residual exactly 0): the mask that keeps NaN out of the branch not taken dropped g_dot *
    local."""
    x = np.array([-1.0, 4.0])                       # sqrt of -1 on the branch not taken
    H = s2s.hessian(sqrt_where_defined)(x)
    assert np.all(np.isfinite(H))
    np.testing.assert_allclose(H, np.diag([0.0, 0.75 / 2.0]), rtol=1e-12)     # d2/dx2 x^1.5 = 0.75 / sqrt(x)


def test_rules_found_wrong_once():
    """Independent review: a case found silently wrong once, now right or refused."""
    def prod(x):
        return np.prod(x)

    def clamp(x):
        return min(x, 1.0) + max(x, 1.0)

    def ramp(x):
        return max(x, 0.0)

    def repeated_write(x):
        y = np.zeros(3)
        y[np.array([1, 1])] = x
        return y[1]

    assert s2s.grad(prod)(np.array([0.0, 2.0, 3.0])) == pytest.approx([6.0, 0.0, 0.0])
    assert s2s.grad(prod)(np.array([0.0, 0.0, 3.0])) == pytest.approx([0.0, 0.0, 0.0])
    assert s2s.grad(clamp)(1.0) == 1.0 and isinstance(s2s.grad(ramp)(2.0), float)
    assert s2s.grad(repeated_write)(np.array([1.0, 2.0])) == pytest.approx([0.0, 1.0])
    assert s2s.grad(lambda_free_copysign)(1.5) == -1.0


def lambda_free_copysign(x):
    return math.copysign(x, -1.0)
