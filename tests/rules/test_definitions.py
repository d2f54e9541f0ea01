"""Library functions defined by Python code (rules/definitions.py): both modes and second order against central
differences, with the checking mode comparing the definition's value with the library's."""
import math

import numpy as np
import pytest

import s2s
from s2s.testing.gradcheck import numerical_gradient

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
 "math": (lambda a: math.radians(a) * math.degrees(a * a) + math.fsum([a, a * a, 3.0]) + math.prod([a, a + 1.0, 2.0]), (0.7,)),
}


@pytest.mark.parametrize("mode", ["reverse", "forward"])
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
