"""Library functions defined by Python code (rules/definitions.py): both modes and second order against central
differences, with the checking mode comparing the definition's value with the library's."""
import math
import statistics

import numpy as np
import pytest
import numpy.polynomial.polynomial as P

import s2s
from s2s.testing.gradcheck import numerical_gradient
from conftest import agrees, central

rng = np.random.default_rng(1)
x = rng.normal(size=6)
X = rng.normal(size=(3, 5))
w = rng.random(5) + 0.5
cases = {
 "ptp": (lambda a: np.ptp(a) * 2 + np.sum(np.ptp(X * a[0], axis=0)) + np.sum(np.nansum(X * a[1], 1, None)), (x,)),
 "average": (lambda a: np.average(a) + np.sum(np.average(X * a[:5], axis=1, weights=np.ones(5) * a[5] ** 2 + w)), (x,)),
 "nan": (lambda a: np.nansum(np.where(a > 0.5, np.nan, a)) + np.nanmean(np.where(a > 0.5, np.nan, a ** 2)) + np.nanmax(np.where(a > 1.5, np.nan, a)) + np.nanmin(a ** 3), (x,)),
 "polyval": (lambda a: np.sum(np.polyval(a[:3], a[3:])) + np.polyval([1.0, 2.0, 3.0], a[0]), (x,)),
 "vander": (lambda a: np.sum(np.vander(a[:3], 4) ** 2) + np.sum(np.vander(a, increasing=True)[:, 1]), (x,)),
 "cov": (lambda a: np.sum(np.cov(X * a[:5]) ** 2) + np.cov(a) + np.sum(np.cov(X.T * a[:3], rowvar=False, bias=True)), (x,)),
 "corrcoef": (lambda a: np.sum(np.corrcoef(X * a[:5]) * np.arange(9.0).reshape(3, 3)) + np.corrcoef(a, a ** 2)[0, 1], (x,)),
 "cov_two": (lambda a: np.sum(np.cov(a[:3], a[3:] ** 2) ** 2) + np.sum(np.cov(X.T * a[:3], X.T[:, :2] * a[4], rowvar=False)), (x,)),
 "interp": (lambda a: np.sum(np.interp(np.array([-1.0, 0.3, 0.7, 2.0, 3.5]), np.array([0.0, 0.5, 1.0, 3.0]), a[:4] ** 2, right=a[5])) + np.interp(a[4], np.array([-2.0, 0.0, 2.0]), np.array([1.0, 3.0, -1.0])), (x,)),
 "correlate": (lambda a: sum(np.sum(np.correlate(a, a[:k] * 2, mode) ** 2) for k, mode in [(2, "valid"), (3, "same"), (4, "full")]), (x,)),
 "convolve": (lambda a: np.sum(np.convolve(a[:2], a * 3, "same") ** 2) + np.sum(np.convolve(a, a[:4], "valid") ** 2) + np.sum(np.convolve(a[:3], a[1:5], "full") * np.arange(6.0)), (x,)),
 "compress": (lambda a: np.sum(np.compress([True, False, True], X * a[0], axis=0) ** 2) + np.sum(np.compress(a > 0, a) ** 2), (x,)),
 "trapezoid": (lambda a: np.trapezoid(a ** 2) + np.trapezoid(X * a[:5], x=a[:5] * 2, axis=1)[1] + np.trapezoid(X.T * a[0], dx=0.3, axis=0)[2], (x,)),
 "multi_dot": (lambda a: np.linalg.multi_dot([X * a[0], X.T * a[1:4], a[:3]]) @ a[3:] + np.sum(np.linalg.multi_dot([a[:3], X])), (x,)),
 "logspace": (lambda a: np.sum(np.logspace(a[0], a[1], 4) ** 0.5) + np.sum(np.logspace(0.0, a[2], 3, base=2.0)), (x,)),
 "polynomial_polyval": (lambda a: np.sum(np.polynomial.polynomial.polyval(a, [1.0, 2.0, 3.0]) ** 2) + np.polynomial.polynomial.polyval(a[0], a[1:4]) + np.sum(np.polynomial.polynomial.polyval(a[:2], np.reshape(a[:4], (2, 2)))), (x,)),
 "statistics": (lambda a: statistics.mean([a, a * a, 3.0]) * statistics.pstdev([a, 1.0, a ** 3]) + statistics.stdev((a, 2.0 * a, 0.5)) + statistics.variance([a, a * a], 0.1) + statistics.fmean([a, a * a], [1.0, a]) + statistics.pvariance([a, 0.2]), (0.7,)),
 "math": (lambda a: math.radians(a) * math.degrees(a * a) + math.fsum([a, a * a, 3.0]) + math.prod([a, a + 1.0, 2.0]), (0.7,)),
}


@pytest.mark.parametrize("mode", ["reverse", "forward", "auto"])
@pytest.mark.parametrize("name", sorted(cases))
def test_definition_against_central_differences(name, mode):
    f, args = cases[name]
    got = s2s.grad(f, mode=mode, check=True)(*args)
    np.testing.assert_allclose(got, numerical_gradient(f, args, 0, 1e-6), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("name", sorted(cases))
def test_definition_second_order(name):
    f, args = cases[name]
    h = s2s.hessian(f)(*args)
    first = s2s.grad(f)
    a = np.asarray(args[0], dtype=float)
    rows = [(np.asarray(first(*_moved(args, a, k, 1e-5))) - np.asarray(first(*_moved(args, a, k, -1e-5)))) / 2e-5
            for k in range(a.size)]
    expected = np.reshape(np.stack(rows, axis=-1), np.shape(h)) if rows[0].ndim else np.reshape(rows, np.shape(h))
    np.testing.assert_allclose(h, expected, rtol=1e-4, atol=1e-5)


def _moved(args, a, k, step):
    moved = a.copy()
    moved.flat[k] += step
    return (moved if moved.ndim else float(moved),) + tuple(args[1:])


def test_each_definition_gives_the_library_value():
    from s2s.rules import registry
    for name, (f, args) in cases.items():
        value, _ = s2s.value_and_grad(f)(*args)
        np.testing.assert_allclose(value, f(*args), rtol=1e-12, atol=1e-12)
    assert registry.definition(np.interp) is not None and registry.definition(np.sum) is None


MODES = ["reverse", "forward", "auto"]


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
    """Outside round 2: crashes that became results or located refusals."""
    assert s2s.value_and_grad(f)(x)[0] == pytest.approx(f(x))
    agrees(f, (x,), mode=mode, rtol=1e-5)


def test_periodic_interp_second_order():
    """Outside round 2: crashes that became results or located refusals."""
    h = s2s.hessian(periodic_interp_values)(FP)
    eps = 1e-5
    numeric = np.array([(s2s.grad(periodic_interp_values)(FP + eps * e) -
                         s2s.grad(periodic_interp_values)(FP - eps * e)) / (2 * eps) for e in np.eye(3)])
    np.testing.assert_allclose(h, numeric, atol=1e-6)


def central_difference(f, x, *rest, eps=1e-6):
    return (f(x + eps, *rest) - f(x - eps, *rest)) / (2 * eps)


def spaced(a):
    return np.sum(np.logspace(a, a * 2, 5) ** 0.5) + np.sum(np.logspace(np.array([a, 1.0]), 2.0, 4, axis=1) * 0.1) \
        + np.sum(np.linspace(np.array([a, a * a]), np.array([2.0, a]), 3) ** 2)


@pytest.mark.parametrize("optimize", [True, False])
@pytest.mark.parametrize("mode", ["reverse", "forward", "auto"])
def test_linspace_and_logspace_of_array_endpoints(mode, optimize):
    """Outside round 3, found rerunning the third tester's harness: linspace's rules assumed number endpoints (a crash
    with arrays), and logspace's definition passed linspace an axis= its rule does not take (refused without the
    passes)."""
    assert s2s.grad(spaced, mode=mode, optimize=optimize)(0.3) == pytest.approx(central_difference(spaced, 0.3),
                                                                              rel=1e-7)


def check_second_order(f, x, eps=1e-5):
    """s2s.hvp along a direction against central differences of s2s's gradient."""
    v = np.linspace(-1.0, 1.0, np.size(x)).reshape(np.shape(x)) if np.ndim(x) else 0.7
    gradient = s2s.grad(f)
    expected = (np.asarray(gradient(x + eps * v)) - np.asarray(gradient(x - eps * v))) / (2 * eps)
    got = s2s.hvp(f)(x, v)
    got = np.zeros(np.shape(x)) if got is None else got
    np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-6)


X5 = np.array([0.3, -0.8, 1.2, 0.5, 1.2])


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
    """Outside round 3, F12's missing rules met in ordinary code (each also has a line in tests/rules/test_rules.py or
    test_definitions.py)."""
    np.testing.assert_allclose(s2s.grad(f, mode=mode, check=True)(X5), central(f, X5), rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("f", MISSING)
def test_functions_that_had_no_rule_second_order(f):
    """Outside round 3, F12's missing rules met in ordinary code (each also has a line in tests/rules/test_rules.py or
    test_definitions.py)."""
    check_second_order(f, X5)
