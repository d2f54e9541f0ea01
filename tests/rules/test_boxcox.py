"""scipy.special.boxcox and boxcox1p (rules/special.py), in x and in lmbda: an outside tester's report ("no
derivative rule for boxcox1p"). Against central differences in every mode and to second order, and the closed
forms at lmbda = 0 (log x, whose lmbda-derivative is log(x)**2 / 2) and near it (the series)."""
import math

import numpy as np
import pytest
import scipy.special as sp

import s2s
from conftest import assert_gradient
from s2s.testing import check_grads


def transformed(x, lmbda):
    return np.sum(sp.boxcox(x, lmbda) ** 2) + np.sum(sp.boxcox1p(x, lmbda))


def known_lambda(x):
    return np.sum(sp.boxcox(x, 0.5) * sp.boxcox1p(x, -0.7))


X = np.array([0.4, 1.3, 2.7])


@pytest.mark.parametrize("f, args, wrt", [
    (transformed, (X, 0.6), 0),
    (transformed, (X, 0.6), 1),
    (transformed, (X, 0.0), 1),
    (transformed, (X, -1e-5), 1),
    (transformed, (1.7, -1.2), 0),
    (known_lambda, (X,), 0),
], ids=lambda v: getattr(v, "__name__", str(v)))
def test_gradients(f, args, wrt):
    assert_gradient(f, *args, wrt=wrt)
    check_grads(f, args, order=2, modes=("forward", "reverse"), wrt=wrt)


@pytest.mark.parametrize("mode", ["auto", "reverse", "forward"])
@pytest.mark.parametrize("lmbda", [0.0, 1e-9, 3e-4, 0.8])
def test_closed_form_in_lambda(mode, lmbda):
    x = 2.5
    L = np.log(x)
    u = lmbda * L                   # d/dl (exp(u) - 1) / l = L**2 * sum over k >= 1 of k u**(k-1) / (k+1)!
    expected = L * L * sum(k * u ** (k - 1) / math.factorial(k + 1) for k in range(1, 30))
    assert s2s.grad(lambda l: sp.boxcox(x, l), mode=mode)(lmbda) == pytest.approx(expected, rel=1e-10)
    assert s2s.grad(lambda l: sp.boxcox1p(x - 1.0, l), mode=mode)(lmbda) == pytest.approx(expected, rel=1e-10)
    assert s2s.grad(lambda t: sp.boxcox(t, lmbda), mode=mode)(x) == pytest.approx(x ** (lmbda - 1))
