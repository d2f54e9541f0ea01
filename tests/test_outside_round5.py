"""Findings of the fifth round of outside testers (H- and K-numbers of their reports) fixed by the lead: each
result against central differences or closed forms, in both modes and to second order where it applies."""
import math

import numpy as np
import pytest

import s2s
from conftest import central, code

MODES = ["reverse", "forward"]


# ---- K12: d/dx x ** 0 is 0 at x = 0 too (it was 0 * inf = nan, or ZeroDivisionError for floats)

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
    x = np.array([0.0, 0.5, -1.5])
    np.testing.assert_allclose(s2s.grad(polynomial_features, mode=mode)(x), 1 + 2 * x + 3 * x ** 2, rtol=1e-12)
    np.testing.assert_allclose(s2s.grad(vandermonde, mode=mode)(x), x - 1.0, rtol=1e-12)
    for n, expected in [(0, 0.0), (1, 1.0), (2.0, 0.0), (3, 0.0)]:
        assert s2s.grad(power, mode=mode)(0.0, n) == expected
        assert s2s.grad(math_power, mode=mode)(0.0, float(n)) == expected + 1.0
    assert s2s.grad(power, mode=mode)(2.0, 3) == pytest.approx(12.0)
    assert s2s.grad(power, wrt=(0, 1), mode=mode)(2.0, 0.0) == pytest.approx((0.0, math.log(2.0)))


def test_a_zero_power_at_zero_to_second_order():
    x = np.array([0.0, 0.5])
    np.testing.assert_allclose(s2s.hessian(polynomial_features)(x), np.diag(2 + 6 * x), rtol=1e-12)
    np.testing.assert_allclose(s2s.hvp(polynomial_features)(x, np.array([1.0, -1.0])), (2 + 6 * x) * [1, -1],
                               rtol=1e-12)


# ---- K1: forward mode, hessian and jacobian take one sweep per coordinate; each sweep draws what the first drew

RNG = np.random.default_rng(5)


def noisy_global(w):
    return np.sum((w + 0.1 * np.random.randn(w.size)) ** 2)


def noisy_generator(w):
    return np.sum((w + 0.1 * RNG.normal(size=w.size)) ** 2)


def noisy_argument(w, rng):
    return np.sum((w + 0.1 * rng.normal(size=w.size)) ** 2)


def noisy_cube(w):
    return np.sum((w + np.random.randn(w.size)) ** 3)


W = np.array([0.5, -1.0, 2.0, 0.7])


def _one_draw(draw):
    """The noise the function draws on its one call, from a generator put back as it was."""
    return 0.1 * draw(W.size)


@pytest.mark.parametrize("check", [False, True])
def test_forward_mode_differentiates_one_realization(check):
    np.random.seed(3)
    g = s2s.grad(noisy_global, mode="forward", check=check)(W)
    after = np.random.randn()
    np.random.seed(3)
    noise = _one_draw(np.random.randn)
    np.testing.assert_allclose(g, 2 * (W + noise), rtol=1e-12)
    assert np.random.randn() == after                   # the call drew once, as reverse mode does
    np.random.seed(3)
    value, g = s2s.value_and_grad(noisy_global, mode="forward", check=check)(W)
    assert value == pytest.approx(np.sum((W + noise) ** 2), rel=1e-12)

    state = RNG.bit_generator.state
    g = s2s.grad(noisy_generator, mode="forward", check=check)(W)
    RNG.bit_generator.state = state
    np.testing.assert_allclose(g, 2 * (W + _one_draw(lambda n: RNG.normal(size=n))), rtol=1e-12)

    rng = np.random.default_rng(11)
    g = s2s.grad(noisy_argument, mode="forward", check=check)(W, rng)
    again = np.random.default_rng(11)
    np.testing.assert_allclose(g, 2 * (W + _one_draw(lambda n: again.normal(size=n))), rtol=1e-12)
    assert rng.random() == again.random()               # the caller's generator advanced by one call's draws


def test_hessian_and_jacobian_differentiate_one_realization():
    np.random.seed(4)
    H = s2s.hessian(noisy_cube)(W)
    np.random.seed(4)
    noise = np.random.randn(W.size)
    np.testing.assert_allclose(H, np.diag(6 * (W + noise)), rtol=1e-12)
    for shape in [(4,), (9,)]:                  # forward sweeps (input smaller), reverse rows (output smaller)
        x = np.linspace(-1, 1, shape[0])

        def squared(w):
            return (w[:4] + np.random.randn(4)) ** 2
        np.random.seed(5)
        J = s2s.jacobian(squared)(x)
        np.random.seed(5)
        expected = np.zeros((4, shape[0]))
        expected[:, :4] = np.diag(2 * (x[:4] + np.random.randn(4)))
        np.testing.assert_allclose(J, expected, rtol=1e-12)


# ---- K14: the checking mode runs the function and the derivative on copies: a generator passed in draws once

def gumbel_softmax_loss(logits, rng):
    u = rng.random(logits.shape)
    z = (logits - np.log(-np.log(u))) / 0.5
    e = np.exp(z - np.max(z))
    return np.sum(e / np.sum(e) * np.arange(logits.size))


@pytest.mark.parametrize("make", [np.random.default_rng, np.random.RandomState])
def test_the_checking_mode_does_not_change_what_a_generator_argument_draws(make):
    logits = np.array([0.1, -0.3, 0.8, 0.2])
    without = s2s.grad(gumbel_softmax_loss, check=False)(logits, make(3))
    rng = make(3)
    checked = s2s.grad(gumbel_softmax_loss, check=True)(logits, rng)
    np.testing.assert_allclose(checked, without, rtol=1e-12)
    expected = central(lambda l: gumbel_softmax_loss(l, make(3)), logits)
    np.testing.assert_allclose(checked, expected, rtol=1e-5, atol=1e-8)
    reference = make(3)
    reference.random(4)
    assert rng.random() == reference.random()           # advanced by the one call's draws only


# ---- H8: arrays made with sizes the shapes decide (np.empty(n) with n = u.shape[0]) have a known shape, so an
# element loop over them accumulates in place (it copied the whole adjoint array every iteration: O(n^2))

def squares_into_empty(u, alpha):
    n = u.shape[0]
    out = np.empty(n)
    for i in range(n):
        out[i] = alpha * u[i] * u[i]
    s = 0.0
    for i in range(n):
        s += out[i]
    return s


def grid_from_len(u):
    n = len(u)
    grid = np.zeros((n - 1, 2))
    for i in range(n - 1):
        grid[i, 0] = u[i + 1] - u[i]
        grid[i, 1] = u[i] * u[i + 1]
    return np.sum(grid ** 2)


def weighted_by_arange(x):
    w = np.arange(x.size) + 1.0
    acc = np.full(x.size, 0.5)
    for i in range(x.size):
        acc[i] = acc[i] + w[i] * x[i] ** 2
    return np.sum(np.sin(acc)) + np.sum(np.linspace(0.0, 1.0, x.shape[0]) * x)


@pytest.mark.parametrize("fn, wrt", [(squares_into_empty, (0, 1)), (grid_from_len, 0), (weighted_by_arange, 0)])
def test_arrays_sized_by_the_shapes_are_written_in_place(fn, wrt):
    u = np.linspace(-0.7, 1.3, 9)
    args = (u, 0.3) if fn is squares_into_empty else (u,)
    source = s2s.source(fn, *args, wrt=wrt, mode="reverse")
    assert "setitem(" not in source and "_unbroadcast(" not in source and "_scatter(" not in source
    for mode in MODES:
        got = s2s.grad(fn, wrt=wrt, mode=mode)(*args)
        got = got[0] if isinstance(wrt, tuple) else got
        np.testing.assert_allclose(got, central(lambda v: fn(v, *args[1:]), u), rtol=1e-6, atol=1e-9)
    for n in (4, 12):                   # another length: made anew, and right
        v = np.linspace(0.1, 0.9, n)
        got = s2s.grad(fn, wrt=0)(v, *args[1:])
        np.testing.assert_allclose(got, central(lambda w: fn(w, *args[1:]), v), rtol=1e-6, atol=1e-9)


# ---- found while fixing H8: `x * 1.0` is x only for a float x (`np.arange(3) * 1.0` is a float array), also
# when the 1.0 is an adjoint the shapes made a number (the gradient was an int array, its writes truncated)

def int_array_times_one(x):
    w = np.arange(3) * 1.0
    w[0] = x
    v = np.arange(3) / 1
    v[1] = x
    return np.sum(w * w) + np.sum(v * v)


def smoothing_weighted_by_position(u, k):
    u = u.copy()
    for t in range(2):
        for i in range(1, u.size - 1):
            u[i] = 0.5 * (u[i - 1] + u[i + 1])
    return np.sum(u * np.arange(len(u)))


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("check", [False, True])
def test_an_identity_with_a_float_keeps_an_integer_array_a_float_array(mode, check):
    assert s2s.grad(int_array_times_one, mode=mode, check=check)(0.7) == pytest.approx(4 * 0.7)
    u = np.array([-0.293, 0.173, 0.612, -0.586, 0.542, 0.178])
    got = s2s.grad(smoothing_weighted_by_position, mode=mode, check=check)(u, 0.3)
    assert got.dtype == np.float64
    np.testing.assert_allclose(got, central(lambda v: smoothing_weighted_by_position(v, 0.3), u), rtol=1e-6)


# ---- K26: a module-level container the function reads may be ragged (a frozen list of (W, b) layers) or an
# object read item by item (a dataset): s2s looks at what it holds without making an array of it (a ValueError)
# and without reading every item through __getitem__

_rng = np.random.default_rng(0)
FROZEN = [(_rng.standard_normal((3, 4)), _rng.standard_normal(4)), (_rng.standard_normal((4, 2)), _rng.standard_normal(2))]


class Rows:
    reads = 0

    def __init__(self, X):
        self.X = X

    def __len__(self):
        return len(self.X)

    def __getitem__(self, i):
        Rows.reads += 1
        return self.X[i]


ROWS = Rows(_rng.standard_normal((500, 3)))


def saliency(x):
    h = x
    for W, b in FROZEN:
        h = np.tanh(h @ W + b)
    return np.sum(h) + np.sum(np.tanh(ROWS[0] @ x[:, None] * 0.1))


@pytest.mark.parametrize("mode", MODES)
def test_a_ragged_global_list_and_a_dataset_object_are_read_as_the_code_reads_them(mode):
    x = np.array([0.3, -0.2, 0.8])
    Rows.reads = 0
    got = s2s.grad(saliency, mode=mode)(x)
    np.testing.assert_allclose(got, central(saliency, x), rtol=1e-6, atol=1e-9)
    assert Rows.reads < 50              # the function's own reads (each sweep, the checking mode), not 500


# ---- K24: a Jacobian or a vjp of a function whose output is not numbers (a forgotten return) is refused, as grad
# refuses it (the Jacobian was zeros)

def forgot_return(x):
    y = np.sin(x)


def returns_text(x):
    return "abc"


@pytest.mark.parametrize("fn", [forgot_return, returns_text])
def test_a_jacobian_of_what_is_not_numbers_is_refused(fn):
    with pytest.raises(s2s.NonScalarOutput, match=r"test_outside_round5.py:\d+:\d+: .* not numbers"):
        s2s.jacobian(fn)(np.ones(3))
    with pytest.raises(s2s.NonScalarOutput, match="not numbers"):
        s2s.vjp(fn, np.ones(3))


# ---- H1: a second derivative through np.where, maximum, clip, abs or min where the adjoint is exactly 0 on the
# branch taken (a residual exactly 0): the mask that keeps NaN out of the branch not taken dropped g_dot * local

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
    x = np.array([0.0, 1.0, 2.0])                   # x = 1: the residual x - 1 is exactly 0
    expected = np.diag(diagonal(x))
    np.testing.assert_allclose(s2s.hessian(fn)(x), expected, rtol=1e-12)
    np.testing.assert_allclose(s2s.hvp(fn)(x, np.array([0.0, 1.0, 0.0])), expected[:, 1], rtol=1e-12)
    np.testing.assert_allclose(central(lambda v: s2s.grad(fn)(v)[1], x), expected[1], rtol=1e-6, atol=1e-6)
    assert s2s.grad(s2s.grad(scalar_max, mode="reverse"))(1.0) == pytest.approx(2.0)
    assert s2s.grad(s2s.grad(scalar_max))(1.0) == pytest.approx(2.0)


def test_the_branch_not_taken_still_gives_no_nan_to_second_order():
    x = np.array([-1.0, 4.0])                       # sqrt of -1 on the branch not taken
    H = s2s.hessian(sqrt_where_defined)(x)
    assert np.all(np.isfinite(H))
    np.testing.assert_allclose(H, np.diag([0.0, 0.75 / 2.0]), rtol=1e-12)     # d2/dx2 x^1.5 = 0.75 / sqrt(x)


# ---- H14: NumPy functions that return views (np.split, np.flip, np.rot90, .mT, np.array(copy=False), list(A))
# and a helper returning a slice of its argument: a write through one name is refused, never lost

def kick_after_split(z, dt):
    z = z.copy()
    q, p = np.split(z, 2)
    z[2:] -= dt * q
    return np.sum(p ** 2) + np.sum(q ** 2)


def interior(u):
    return u[1:-1]


def scale_interior(u0, c):
    u = u0.copy()
    v = interior(u)
    v *= c
    return np.sum(u ** 2)


def rows_scaled(A0, c):
    A = A0.copy()
    rows = list(A)
    rows[0] *= c
    return np.sum(A ** 2)


def flipped_then_written(x, c):
    y = x.copy()
    v = np.flip(y)
    y[1, 0] = c * 3.0
    return np.sum(v ** 2) + c


def transposed_then_written(x, c):
    y = x.copy()
    v = y.mT
    y[1, 0] = c * 3.0
    return np.sum(v ** 2) + c


def not_copied_then_written(x, c):
    y = x.copy()
    v = np.array(y, copy=False)
    y[1, 0] = c * 3.0
    return np.sum(v ** 2) + c


def split_read_only(z, dt):                     # views only read: right, not refused
    q, p = np.split(z, 2)
    return np.sum(np.flip(p) ** 2 * dt) + np.sum(interior(q) ** 3)


@pytest.mark.parametrize("fn, first", [(kick_after_split, np.array([1.0, 0.5, 0.2, -0.3])),
                                       (scale_interior, np.array([1.0, 0.5, 0.2, -0.3])),
                                       (rows_scaled, np.array([[1.0, 2.0], [3.0, 4.0]])),
                                       (flipped_then_written, np.array([[1.0, 2.0], [3.0, 4.0]])),
                                       (transposed_then_written, np.array([[1.0, 2.0], [3.0, 4.0]])),
                                       (not_copied_then_written, np.array([[1.0, 2.0], [3.0, 4.0]]))])
@pytest.mark.parametrize("mode", MODES)
def test_a_write_seen_through_a_view_is_refused(fn, first, mode):
    with pytest.raises(s2s.S2SError, match=r"test_outside_round5.py:\d+:\d+: .*(share memory|view|same array)"):
        s2s.grad(fn, wrt=1, mode=mode, check=False)(first, 0.7)


@pytest.mark.parametrize("mode", MODES)
def test_views_only_read_are_differentiated(mode):
    z = np.array([1.0, 0.5, 0.2, -0.3, 0.8, 1.1])
    got = s2s.grad(split_read_only, wrt=(0, 1), mode=mode)(z, 0.7)
    np.testing.assert_allclose(got[0], central(lambda v: split_read_only(v, 0.7), z), rtol=1e-6, atol=1e-9)
    assert got[1] == pytest.approx(central(lambda d: split_read_only(z, d), 0.7), rel=1e-6)


# ---- K13/H5: an element read under a condition (`left = u[i - 1] if i > 0 else 0.0`) is a number read from u,
# as a plain `left = u[i - 1]` is: a Gauss-Seidel sweep is differentiated (a row of a 2-D array: refused when run)

def gauss_seidel(b, k):
    u = np.zeros_like(b)
    n = b.shape[0]
    for sweep in range(3):
        for i in range(n):
            left = u[i - 1] if i > 0 else 0.0
            if i < n - 1:
                right = u[i + 1]
            else:
                right = 0.0
            u[i] = (b[i] + left + right) / (2.0 + k)
    return np.sum(u ** 2)


def rows_gauss_seidel(B, k):
    U = np.zeros_like(B)
    for i in range(B.shape[0]):
        above = U[i - 1] if i > 0 else 0.0
        U[i] = (B[i] + above) / (2.0 + k)
    return np.sum(U ** 2)


@pytest.mark.parametrize("mode", MODES)
def test_a_conditional_element_read_before_a_write(mode):
    b = np.array([0.3, -0.4, 1.1, 0.7, 0.2])
    db, dk = s2s.grad(gauss_seidel, wrt=(0, 1), mode=mode)(b, 0.5)
    np.testing.assert_allclose(db, central(lambda v: gauss_seidel(v, 0.5), b), rtol=1e-6, atol=1e-9)
    assert dk == pytest.approx(central(lambda k: gauss_seidel(b, k), 0.5), rel=1e-6)
    with pytest.raises(s2s.RefusedWhenRun, match="above"):
        s2s.grad(rows_gauss_seidel, wrt=1, mode=mode)(np.ones((3, 2)), 0.5)


# ---- K5/H12: a write into a global (running statistics, a call counter) is refused as what it is, not as a
# variable "used before it is assigned" (whose hint, a local assignment, would silently stop the update)

RUNNING = np.zeros(3)
STATS = {"calls": 0}


def batch_norm_train(x, g):
    m = x.mean(axis=0)
    RUNNING[:] = 0.9 * RUNNING + 0.1 * m
    return np.sum(g * (x - m) ** 2)


def counted(x):
    STATS["calls"] += 1
    return x ** 2


@pytest.mark.parametrize("fn, args", [(batch_norm_train, (np.arange(12.0).reshape(4, 3), np.ones(3))),
                                      (counted, (3.0,))])
def test_a_write_into_a_global_is_refused_as_one(fn, args):
    with pytest.raises(s2s.S2SError, match=r"test_outside_round5.py:\d+:\d+: '(RUNNING|STATS)' is a variable "
                                           r"outside the function") as info:
        s2s.grad(fn, wrt=len(args) - 1)(*args)
    assert "has_aux" in info.value.hint


# ---- K21: a module-level value named like a helper the generated code defines is read as the user's value

_broadcast_back = np.array([1.0, 2.0, 3.0])
_expand = 2.0


def weighted_by_private_names(x):
    return np.sum(np.tanh(x) * _broadcast_back) + np.sum(np.tanh(x) * _expand)


@pytest.mark.parametrize("mode", MODES)
def test_a_global_named_like_a_helper(mode):
    x = np.array([0.3, -0.2, 0.5])
    np.testing.assert_allclose(s2s.grad(weighted_by_private_names, mode=mode)(x),
                               (1 - np.tanh(x) ** 2) * (np.array([1.0, 2.0, 3.0]) + 2.0), rtol=1e-12)


# ---- H4: a helper that fills an array it is given (Numba style: `compute_forces(x, k, F)`), returning it or
# not: the caller's variable follows the write, as Python shows it

def compute_forces(x, k, F):
    for i in range(x.shape[0]):
        F[i] = -k * x[i] ** 3
    return F


def add_springs(x, k, F):
    for i in range(1, x.shape[0]):
        f = k * (x[i] - x[i - 1])
        F[i - 1] += f
        F[i] -= f


def fill_both(x, k, F):
    compute_forces(x, k, F)          # a helper passing its own parameter on
    add_springs(x, k, F)


def energy_filled(x, k):
    F = np.zeros_like(x)
    F = compute_forces(x, k, F)
    return np.sum(F * F)


def energy_added(x, k):
    F = np.zeros_like(x)
    fill_both(x, k, F)
    return np.sum(F * F) + np.sum(F * x)


def energy_alias_kept(x, k):
    F = np.zeros_like(x)
    G = F
    add_springs(x, k, F)
    return np.sum(G * G)


def energy_into_global(x, k):
    add_springs(x, k, RUNNING)
    return np.sum(x)


def shifted_write(x, k, F):
    F = F[1:]
    F[0] = k * x[0]


def energy_shifted(x, k):
    F = np.zeros_like(x)
    shifted_write(x, k, F)
    return np.sum(F * F)


@pytest.mark.parametrize("fn", [energy_filled, energy_added])
@pytest.mark.parametrize("mode", MODES)
def test_a_helper_filling_an_array_it_is_given(fn, mode):
    x = np.array([0.5, -0.3, 1.0, 0.2])
    dx, dk = s2s.grad(fn, wrt=(0, 1), mode=mode)(x, 1.5)
    np.testing.assert_allclose(dx, central(lambda v: fn(v, 1.5), x), rtol=1e-6, atol=1e-9)
    assert dk == pytest.approx(central(lambda k: fn(x, k), 1.5), rel=1e-6)


@pytest.mark.parametrize("fn, message", [(energy_alias_kept, "an array that 'F' and 'G' name"),
                                         (energy_into_global, "not a variable of the caller"),
                                         (energy_shifted, "writes into its argument 'F'")])
def test_a_helper_write_the_caller_would_not_see_as_one_array_is_refused(fn, message):
    with pytest.raises(s2s.S2SError, match=message):
        s2s.grad(fn, wrt=1)(np.array([0.5, -0.3, 1.0]), 1.5)


# ---- a helper's write into an array or list the caller holds, in a loop that does not carry the caller's
# variable (a closure appending to the enclosing function's list): refused, never lost; outside a loop, followed

def closure_appends_in_a_loop(x):
    outs = []

    def step(h):
        outs.append(h * h)
        return np.sin(h)
    h = x
    for _ in range(3):
        h = step(h)
    return np.sum(np.stack(outs)) + np.sum(h)


def closure_appends_twice(x):
    outs = []

    def add(v):
        outs.append(v * v)
    add(x)
    add(2.0 * x)
    return sum(outs)


def test_a_helper_writing_into_what_a_loop_does_not_carry_is_refused():
    with pytest.raises(s2s.UnsupportedSyntax, match="in a loop that does not assign 'outs'"):
        s2s.grad(closure_appends_in_a_loop)(np.array([0.3, -0.2]))
    for mode in MODES:
        assert s2s.grad(closure_appends_twice, mode=mode)(0.7) == pytest.approx(10 * 0.7)


def horner_carried(x, coefficients):
    y = 0.0
    for c in coefficients:
        y = y * x + c
    return y


def int_start_carried(x):
    s = np.arange(3)
    for i in range(2):
        s = s * 1.0
        s[i] = x * (i + 1)
    return np.sum(s * s)


def test_an_identity_with_a_float_on_a_loop_carried_value():
    # y starts as 0.0 and every iteration leaves a float: `1.0 * y` is y (Horner's tangent); s starts as an
    # integer array: `s * 1.0` stays, or s[i] = x would truncate
    source = code(s2s.source(horner_carried, 0.9, [0.5, -1.0, 2.0]))
    assert "1.0 *" not in source
    assert s2s.grad(horner_carried)(0.9, [0.5, -1.0, 2.0]) == pytest.approx(2 * 0.5 * 0.9 - 1.0)
    for mode in MODES:
        assert s2s.grad(int_start_carried, mode=mode, check=False)(0.7) == pytest.approx(2 * 0.7 + 8 * 0.7)


# ---- K20: a second derivative through a derivative s2s makes when the code runs says so, without asking the user
# to register rules for s2s's own functions

def nested_jvp(w):
    return s2s.jvp(lambda u: np.sum(np.tanh(u) ** 2), (w,), (np.ones(3),))[1]


def test_second_order_through_an_inner_jvp_is_refused_by_what_it_is():
    with pytest.raises(s2s.NoDerivativeRule, match="second derivative through s2s.api.jvp") as info:
        s2s.jvp(nested_jvp, (np.ones(3),), (np.ones(3),))
    assert "s2s.hvp" in info.value.hint and "@s2s.tangent" not in info.value.hint
