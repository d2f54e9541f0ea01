"""Star arguments in calls: `np.random.rand(*h.shape)` draws what
`np.random.random_sample(h.shape)` draws."""
import numpy as np
import pytest

import s2s
from conftest import central


MODES = ["reverse", "forward", "auto"]


def check(f, x, mode, *rest, rtol=1e-6, atol=1e-8):
    got = s2s.grad(f, mode=mode)(x, *rest)
    np.testing.assert_allclose(got, central(lambda z: f(z, *rest), x), rtol=rtol, atol=atol)


R = np.array([0.3, -1.2, 0.8, 0.05])


def dropout_layer(w):
    np.random.seed(3)
    h = np.tanh(np.outer(w, w[:2]))
    keep = np.random.rand(*h.shape) > 0.5
    noise = np.random.randn(*h.shape[:1])
    return np.sum(h * keep) + noise @ w


@pytest.mark.parametrize("mode", MODES)
def test_a_mask_drawn_with_star_shape(mode):
    """Outside round 5 (ordinary Python that was refused or crashed), a dropout mask drawn with np.random.rand(*h.shape)
    (K9): the same draw, as random_sample(h.shape)."""
    check(dropout_layer, R, mode)


# Star-arguments forwarded through wrappers, in the style of a library's helper that moves one argument of a function
# to the front (autograd_gamma's central_difference_of_): `*args` rebound in straight-line code, then spread again.
# The length every spread has is known from the call's arity, through the slices and the concatenation.

def moved_to_front(f, argnum=0):
    front = lambda x, *args: f(*args[:argnum], x, *args[argnum:])        # noqa: E731

    def call(*args):
        x = args[argnum]
        args = args[:argnum] + args[argnum + 1:]
        return front(x, *args)
    return call


def weighted_power(a, x, p):
    return a * x ** p


power_in_x = moved_to_front(weighted_power, argnum=1)


def loss_through_wrappers(x, a):
    return np.sum(power_in_x(a, x, 3.0)) + power_in_x(a[0], x[1], 2.0)


@pytest.mark.parametrize("mode", MODES)
def test_star_arguments_rebound_and_forwarded_through_wrappers(mode):
    x, a = np.array([0.5, 1.5, -0.7]), np.array([2.0, -1.0, 0.3])
    check(loss_through_wrappers, x, mode, a)
    expected = 3 * a * x ** 2 + np.array([0.0, 2 * a[0] * x[1], 0.0])     # the closed form
    np.testing.assert_allclose(s2s.grad(loss_through_wrappers, mode=mode)(x, a), expected, rtol=1e-12)


def test_star_arguments_forwarded_through_wrappers_second_order():
    x, a = np.array([0.5, 1.5, -0.7]), np.array([2.0, -1.0, 0.3])
    expected = np.diag(6 * a * x) + np.diag([0.0, 2 * a[0], 0.0])
    np.testing.assert_allclose(s2s.hessian(loss_through_wrappers)(x, a), expected, rtol=1e-12, atol=1e-14)
    assert s2s.grad(s2s.grad(lambda t: power_in_x(2.0, t, 3.0)))(1.5) == pytest.approx(12 * 1.5, rel=1e-12)


def rebound_in_a_loop(x, n):
    args = (x, 2.0 * x, 3.0 * x)
    for _ in range(n):          # n known only when it runs: so is the length
        args = args[1:]
    return weighted_power(*args, 2.0)


def read_by_a_lambda_then_rebound(x):
    args = (x, 2.0)
    later = lambda: weighted_power(x, *args)        # noqa: E731  (reads args when called: the later binding)
    args = (3.0, 2.0)
    return later()


@pytest.mark.parametrize("f", [rebound_in_a_loop, read_by_a_lambda_then_rebound])
def test_a_star_argument_whose_binding_is_not_known_is_refused(f):
    # (refused where the call is differentiated: given no derivative, such a call is Python's, below)
    with pytest.raises(s2s.S2SError, match=r"star-arguments \(`\*args`\) whose length is known only when the code "
                                           r"runs, given a value that carries a derivative"):
        s2s.grad(f)(1.5, 1) if f is rebound_in_a_loop else s2s.grad(f)(1.5)


def _dtype_of_floats(*arrays):
    """In the style of scikit-learn's _find_matching_floating_dtype: star-arguments of a filtered list."""
    floating = [a.dtype for a in arrays if np.issubdtype(a.dtype, np.floating)]
    return np.result_type(*floating) if floating else np.float64


def scaled_by_a_dtype_helper(x, w):
    dtype = _dtype_of_floats(x, w, np.arange(3))
    return np.sum(np.asarray(x, dtype=dtype) * w)


def star_of_differentiated_values(x):
    parts = [v for v in x if v > 0]
    return np.hypot(*parts[:2]) if len(parts) >= 2 else np.sum(x)


@pytest.mark.parametrize("mode", ["auto", "reverse", "forward"])
def test_a_call_with_star_arguments_of_unknown_length_given_no_derivative_runs_as_python(mode):
    """`np.result_type(*floating)` with floating's length known only when the code runs was refused at the fence
    ("star-arguments whose length is not known"); given no value that carries a derivative it is Python's call."""
    x, w = np.array([0.5, -1.0, 2.0]), np.array([1.5, 0.25, -0.5])
    np.testing.assert_allclose(s2s.grad(scaled_by_a_dtype_helper, wrt=0, mode=mode)(x, w), w)
    np.testing.assert_allclose(s2s.grad(scaled_by_a_dtype_helper, wrt=1, mode=mode)(x, w), x)


@pytest.mark.parametrize("mode", ["auto", "reverse", "forward"])
def test_a_call_with_star_arguments_of_unknown_length_given_a_derivative_is_refused(mode):
    with pytest.raises(s2s.S2SError, match="star-arguments .* whose length is known only when the code runs"):
        s2s.grad(star_of_differentiated_values, mode=mode)(np.array([0.5, 1.0, -2.0]))
