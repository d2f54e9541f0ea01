"""Findings of the third and fourth outside testers (F- and G-numbers of their reports) that fall in rules/ and
messages: each result against central differences in both modes (and second order where it applies), each
refusal by its class and the place it names."""
import math

import numpy as np
import numpy.polynomial.polynomial as P
import pytest

import s2s
from conftest import central

MODES = ["reverse", "forward"]


def check_second_order(f, x, eps=1e-5):
    """s2s.hvp along a direction against central differences of s2s's gradient."""
    v = np.linspace(-1.0, 1.0, np.size(x)).reshape(np.shape(x)) if np.ndim(x) else 0.7
    gradient = s2s.grad(f)
    expected = (np.asarray(gradient(x + eps * v)) - np.asarray(gradient(x - eps * v))) / (2 * eps)
    got = s2s.hvp(f)(x, v)
    got = np.zeros(np.shape(x)) if got is None else got
    np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-6)


# ---- F12: NumPy 2's clip keywords, where= and initial= of the reductions, and the message for other keywords

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
    np.testing.assert_allclose(s2s.grad(f, mode=mode)(X5), central(f, X5), rtol=1e-7, atol=1e-9)


@pytest.mark.parametrize("f", [clip_keywords, sum_where, max_where_initial])
def test_reduction_and_clip_keywords_second_order(f):
    check_second_order(f, X5 + 0.05)


def prod_where(x):
    return np.prod(x, where=x > 0)


@pytest.mark.parametrize("mode", MODES)
def test_a_keyword_no_rule_takes_is_refused_in_the_users_words(mode):
    with pytest.raises(s2s.NoDerivativeRule) as info:
        s2s.grad(prod_where, mode=mode)(X5)
    message = str(info.value)
    assert "test_outside_round4.py:" in message and "s2s's rule for numpy.prod does not take" in message
    assert "where=" in message and "np.where" in message and "rule's signature" not in message


# ---- F19: np.interp computes in float64 as NumPy does (the checking mode compared it with a float32 reading)

XP = np.array([0.0, 0.25, 0.5, 0.75])


def interp_scaled(y):
    return np.interp(0.35, XP, y) * 3.0


@pytest.mark.parametrize("mode", MODES)
def test_interp_of_float32_values_reads_as_numpy_does(mode):
    y = np.array([0.3, -0.8, 1.2, 0.5], dtype=np.float32)
    value, gradient = s2s.value_and_grad(interp_scaled, mode=mode, check=True)(y)
    assert value == interp_scaled(y)            # exactly NumPy's float64 value (it was 3.6e-8 against -3.6e-8)
    assert gradient.dtype == np.float32         # float32 stays float32
    np.testing.assert_allclose(gradient, central(interp_scaled, y.astype(np.float64)), rtol=1e-6, atol=1e-6)


# ---- F12's missing rules met in ordinary code (each also has a line in tests/test_rules.py or test_definitions.py)


def heaviside_steps(x):
    return np.sum(np.heaviside(x, 0.5) * x ** 2) + np.sum(np.heaviside(x - x, x))


def trapezoid_rule(x):
    return (np.trapezoid(x ** 2) + np.trapezoid(x ** 3, x=np.array([0.0, 0.5, 1.5, 2.0, 4.0]))
            + np.trapezoid(np.reshape(x[:4], (2, 2)) ** 2, dx=0.3, axis=0)[1])


def trapezoid_coordinates(x):
    return np.trapezoid(np.sin(np.linspace(0.0, 1.0, 5)), x=x)


def multi_dot_chain(x):
    return np.linalg.multi_dot([np.reshape(x[:4], (2, 2)), np.reshape(x[1:5], (2, 2)), x[:2]]) @ x[2:4]


def logspace_grid(x):
    return np.sum(np.logspace(x[0], x[1], 4) ** 0.5) + np.sum(np.logspace(0.0, x[2], 3, base=2.0))


def math_fmod(x):
    return math.fmod(x[0] * 3.0, x[1] + 2.0) ** 2 + math.fmod(-x[2] * 5.3, 1.5) * x[3]


def insert_and_delete(x):
    return (np.sum(np.insert(x, 1, x[0] * 3.0) ** 2 * np.arange(6.0))
            + np.sum(np.insert(np.reshape(x[:4], (2, 2)), [0, 2], x[2:4], axis=1) ** 3)
            + np.sum(np.delete(x, [0, 2]) ** 2 * np.arange(3.0)) + np.sum(np.delete(np.reshape(x[:4], (2, 2)), 0, axis=0) ** 3))


def ufunc_outer(x):
    return (np.sum(np.subtract.outer(x, x[:3] ** 2) ** 2 * np.arange(15.0).reshape(5, 3))
            + np.sum(np.multiply.outer(x[:2], x) ** 2) + np.sum(np.add.outer(x[:2], x * 2) ** 3))


def polynomial_polyval(x):
    return (np.sum(P.polyval(x, [1.0, 2.0, 3.0]) ** 2) + P.polyval(x[0], x[1:4])
            + np.sum(P.polyval(x[:2], np.reshape(x[:4], (2, 2)))))


MISSING = [heaviside_steps, trapezoid_rule, trapezoid_coordinates, multi_dot_chain, logspace_grid, math_fmod,
           insert_and_delete, ufunc_outer, polynomial_polyval]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("f", MISSING)
def test_functions_that_had_no_rule(f, mode):
    np.testing.assert_allclose(s2s.grad(f, mode=mode, check=True)(X5), central(f, X5), rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("f", MISSING)
def test_functions_that_had_no_rule_second_order(f):
    check_second_order(f, X5)


# ---- F3: an object made inside the function from a differentiated value: the message says so, and what to do


class Model:
    def __init__(self, w):
        self.w = w

    def predict(self, x):
        return x @ self.w


class Vec:
    def __init__(self, v):
        self.v = v

    def __mul__(self, other):
        return Vec(self.v * other.v)

    def total(self):
        return np.sum(self.v)


XM = np.arange(6.0).reshape(2, 3)


def model_built_inside(w):
    m = Model(w)
    return np.sum(m.predict(XM) ** 2)


def vec_built_inside(w):
    a = Vec(w)
    return (a * a).total()


def model_built_outside(w, m):
    return np.sum(m.predict(XM) ** 2) + np.sum(w)


@pytest.mark.parametrize("mode", ["reverse", "forward", "auto"])
@pytest.mark.parametrize("f", [model_built_inside, vec_built_inside])
def test_an_object_built_inside_from_a_differentiated_value_is_refused_with_a_rewrite(f, mode):
    with pytest.raises(s2s.NoDerivativeRule) as info:
        s2s.grad(f, mode=mode)(np.array([0.1, 0.2, 0.3]))
    message = str(info.value)
    assert "test_outside_round4.py:" in message and "method_call" not in message and "@s2s.tangent" not in message
    assert "inside the function" in message and "outside the function and pass it in" in message


@pytest.mark.parametrize("mode", MODES)
def test_an_object_built_outside_is_a_constant(mode):
    w = np.array([0.1, 0.2, 0.3])
    m = Model(np.array([0.5, -0.4, 0.3]))
    expected = central(lambda v: model_built_outside(v, m), w)
    np.testing.assert_allclose(s2s.grad(model_built_outside, mode=mode)(w, m), expected, rtol=1e-7)


# ---- G13: a method of an object of the user's class built inside f is that class's method, never NumPy's function
# of the same name (a.add(v) was read as np.add(a, v) and removed as unused: a silently wrong value and gradient)


class Scaler:
    def __init__(self, k):
        self.k = k

    def mean(self, v):
        return self.k * v

    def clip(self, v):
        return v * v


def scaler_methods(x):
    s = Scaler(2.0)
    return s.mean(x) + s.clip(x)


class Acc:
    def __init__(self):
        self.vals = []

    def add(self, v):
        self.vals.append(v)
        return len(self.vals)


def accumulate_in_object(x):
    a = Acc()
    a.add(x * 2)
    a.add(x * 3)
    return sum(a.vals)


@pytest.mark.parametrize("mode", MODES)
def test_methods_named_like_numpy_functions_are_the_classs(mode):
    assert s2s.grad(scaler_methods, mode=mode)(0.7) == pytest.approx(central(scaler_methods, 0.7), rel=1e-7)


@pytest.mark.parametrize("mode", MODES)
def test_a_method_called_for_its_effect_on_an_object_built_inside_is_refused(mode):
    with pytest.raises(s2s.UnsupportedSyntax) as info:
        s2s.grad(accumulate_in_object, mode=mode)(0.7)
    message = str(info.value)
    assert "test_outside_round4.py:" in message and "`.add(...)`" in message and "hint:" in message


# ---- G2: sorted() of a list of tuples without a key (a TypeError in the generated helper), and an array's
# adjoint through sorted() is an array (it was a list of numbers)


def sorted_tuples(v):
    items = sorted([(abs(a), a) for a in v])
    return sum(a * k for k, (_, a) in enumerate(items))


def sorted_by_key(v):
    items = sorted([(abs(a), a) for a in v], key=lambda t: t[0])
    return sum(a * k for k, (_, a) in enumerate(items)) + sum(k * a for k, a in enumerate(sorted(v, key=abs)))


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("f", [sorted_tuples, sorted_by_key])
def test_sorted_lists_of_tuples(f, mode):
    v = np.array([0.7, -0.4, 1.3])
    gradient = s2s.grad(f, mode=mode, check=True)(v)
    assert isinstance(gradient, np.ndarray)
    np.testing.assert_allclose(gradient, central(f, v), rtol=1e-7)


# ---- G6: messages that named s2s's internals or gave advice that cannot help


def list_pop(x):
    hist = [x, x * 2.0, x * 3.0]
    hist.pop(0)
    return sum(hist)


def list_pop_value(x):
    hist = [x, x * 2.0, x * 3.0]
    return hist[1] * hist.pop(0)        # the list read again in the statement: the order would matter


@pytest.mark.parametrize("mode", MODES)
def test_list_pop_is_refused_with_a_rewrite_for_lists(mode):
    # a pop as a statement (or as the one read of the list in its statement) is supported since round 5
    assert s2s.grad(list_pop, mode=mode)(0.5) == pytest.approx(5.0, rel=1e-12)
    with pytest.raises(s2s.UnsupportedSyntax) as info:
        s2s.grad(list_pop_value, mode=mode)(0.5)
    message = str(info.value)
    assert "test_outside_round4.py:" in message and "`.pop()`" in message and "y = xs[0]; xs.pop(0)" in message
    assert "call the NumPy function" not in message


def cauchy_loglik(loc):
    import scipy.stats as st
    return -np.sum(st.cauchy.logpdf(np.array([0.1, 1.0]), loc, 1.0))


@pytest.mark.parametrize("mode", MODES)
def test_a_scipy_distribution_without_rules_is_named_by_its_public_name(mode):
    pytest.importorskip("scipy.stats")
    with pytest.raises(s2s.NoDerivativeRule) as info:
        s2s.grad(cauchy_loglik, mode=mode)(0.3)
    message = str(info.value)
    assert "test_outside_round4.py:" in message and "scipy.stats.cauchy.logpdf" in message
    assert "_distn_infrastructure" not in message and "norm" in message


# ---- G15: the builtin min / max of tuples (the argmin-with-payload idiom) crashed in the generated code with a
# TypeError: refused when the derivative is made, with the rewrite


def min_of_tuples(v):
    return min((a * a, a) for a in v)[1] * 3


def argmin_with_payload(v):
    keys = [a * a for a in v]
    i = int(np.argmin(keys))
    return [a for a in v][i] * 3 + keys[i]


@pytest.mark.parametrize("mode", MODES)
def test_min_of_tuples_follows_the_selected_payload(mode):
    # min() of (key, payload) tuples compares them as Python does; the payload's gradient follows the item chosen
    v = np.array([0.7, -0.4, 1.3, 0.2])
    np.testing.assert_allclose(s2s.grad(min_of_tuples, mode=mode)(v), [0.0, 0.0, 0.0, 3.0], atol=0)
    np.testing.assert_allclose(s2s.grad(argmin_with_payload, mode=mode)(v), central(argmin_with_payload, v),
                               rtol=1e-7, atol=1e-9)
