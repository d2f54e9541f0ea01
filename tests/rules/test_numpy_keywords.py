"""NumPy's functions with their keywords, as people call them: initial=, where=, prepend= and append=, order=,
mode=, axis=None, clip's min= and max=; in both modes against central differences, to second order, and a keyword
no rule takes refused in the user's words."""
import numpy as np
import pytest

import s2s
from conftest import agrees, central


MODES = ["reverse", "forward", "auto"]


def fortran_ravel(x):
    return np.sum(x.ravel(order="F") * np.arange(6.0)) + np.sum(np.reshape(x, (3, 2), order="F")[:, 0] ** 2)


def memory_order(x):
    return np.sum(x.T.ravel(order="K") * np.arange(6.0)) + np.sum(x.T.reshape(6, order="A") ** 3 * np.arange(6.0))


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("f", [fortran_ravel, memory_order])
def test_ravel_and_reshape_read_the_elements_in_their_order(f, mode):
    """Outside round 1 (the first outside tester's programs, written in their own style)."""
    agrees(f, (np.arange(6.0).reshape(2, 3) / 3.0 + 0.1,), mode=mode)


def with_initial(x):
    return np.sum(x ** 2, initial=10.0) + np.sum(np.diff(x, prepend=5.0) ** 2) + \
        np.sum(np.diff(x, append=[2.0, 1.0]) ** 2)


@pytest.mark.parametrize("mode", MODES)
def test_constant_keyword_values_stay_out_of_the_tangent(mode):
    """Outside round 1 (the first outside tester's programs, written in their own style)."""
    x = np.array([1.0, 2.0, 3.0, 4.0])
    agrees(with_initial, (x,), mode=mode)


def initial_is_differentiated(x, c):
    return np.sum(x * x, initial=c * c)


def test_an_active_initial_value():
    """Outside round 1 (the first outside tester's programs, written in their own style)."""
    x = np.array([1.0, 2.0])
    assert s2s.grad(initial_is_differentiated, wrt=1, mode="reverse")(x, 3.0) == pytest.approx(6.0)
    with pytest.raises(s2s.S2SError, match="keyword"):
        s2s.grad(initial_is_differentiated, wrt=1, mode="forward")(x, 3.0)


def clipped_take(x):
    return np.sum(np.take(x, [0, 5], mode="clip") * np.array([2.0, 8.0])) + np.sum(np.take(x, [-1, 6], mode="wrap"))


@pytest.mark.parametrize("mode", MODES)
def test_take_with_clip_and_wrap(mode):
    """Outside round 1 (the first outside tester's programs, written in their own style)."""
    np.testing.assert_allclose(agrees(clipped_take, (np.arange(4.0),), mode=mode), [2.0, 0.0, 1.0, 9.0])


def flat_join(A):
    return np.sum(np.concatenate([A, A ** 2], axis=None) * np.arange(8.0))


@pytest.mark.parametrize("mode", MODES)
def test_concatenate_without_an_axis(mode):
    """Outside round 1 (the first outside tester's programs, written in their own style)."""
    agrees(flat_join, (np.array([[1.0, 2.0], [3.0, 4.0]]),), mode=mode)


def check_second_order(f, x, eps=1e-5):
    """s2s.hvp along a direction against central differences of s2s's gradient."""
    v = np.linspace(-1.0, 1.0, np.size(x)).reshape(np.shape(x)) if np.ndim(x) else 0.7
    gradient = s2s.grad(f)
    expected = (np.asarray(gradient(x + eps * v)) - np.asarray(gradient(x - eps * v))) / (2 * eps)
    got = s2s.hvp(f)(x, v)
    got = np.zeros(np.shape(x)) if got is None else got
    np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-6)


X5 = np.array([0.3, -0.8, 1.2, 0.5, 1.2])


def clip_keywords(x):
    return np.sum(x.clip(min=-0.5, max=1.0) ** 2) + np.sum(np.clip(x, max=0.4) ** 3)


def sum_where(x):
    return np.sum(x ** 2, where=x > 0) + np.mean(x ** 3, where=x > 0)


def max_where_initial(x):
    return np.max(x * 2, where=x < 1.0, initial=-5.0) + np.min(x ** 2, where=x > 0, initial=10.0)


def max_initial_wins(x):
    return np.max(x, initial=5.0) * x[0] + np.max(x[:2], initial=x[3])


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("f", [clip_keywords, sum_where, max_where_initial, max_initial_wins])
def test_reduction_and_clip_keywords_of_numpy_2(f, mode):
    """Outside round 3, F12: NumPy 2's clip keywords, where= and initial= of the reductions, and the message for other
    keywords."""
    np.testing.assert_allclose(s2s.grad(f, mode=mode)(X5), central(f, X5), rtol=1e-7, atol=1e-9)


@pytest.mark.parametrize("f", [clip_keywords, sum_where, max_where_initial])
def test_reduction_and_clip_keywords_second_order(f):
    """Outside round 3, F12: NumPy 2's clip keywords, where= and initial= of the reductions, and the message for other
    keywords."""
    check_second_order(f, X5 + 0.05)


def prod_where(x):
    return np.prod(x, where=x > 0)


@pytest.mark.parametrize("mode", MODES)
def test_a_keyword_no_rule_takes_is_refused_in_the_users_words(mode):
    """Outside round 3, F12: NumPy 2's clip keywords, where= and initial= of the reductions, and the message for other
    keywords."""
    with pytest.raises(s2s.NoDerivativeRule) as info:
        s2s.grad(prod_where, mode=mode)(X5)
    message = str(info.value)
    assert "test_numpy_keywords.py:" in message and "s2s's rule for numpy.prod does not take" in message
    assert "where=" in message and "np.where" in message and "rule's signature" not in message
