"""The adjoint of a full reduction is spread lazily (an array of ones' shape, smaller than the value); its real part
(`_match_real`, where the value may be complex: a dtype NumPy decides when the code runs) is spread lazily too, so a
rule that needs the value's full shape expands it. It had been read as full: `_overwritten(dv, mask)` indexed a
(1,)-shaped adjoint with a mask of the value's length (statsmodels' Hampel.rho, reverse mode: IndexError)."""
import numpy as np
import pytest

import s2s


def rho(z):
    z_isscalar = np.isscalar(z)
    z = np.atleast_1d(z)
    dt = np.promote_types(z.dtype, "float")
    v = np.zeros(z.shape, dtype=dt)
    big = np.abs(z) > 1.0
    v[big] = z[big] ** 2
    v[~big] += 3.0 * z[~big]
    if z_isscalar:
        v = v[0]
    return v


def total(z):
    return np.sum(rho(z))


def weighted(z):
    return np.sum(rho(z) * np.array([1.0, 2.0, 3.0]))


@pytest.mark.parametrize("mode", ["auto", "reverse", "forward"])
@pytest.mark.parametrize("f, weights", [(total, np.ones(3)), (weighted, np.array([1.0, 2.0, 3.0]))])
def test_masked_writes_after_a_dtype_decided_when_the_code_runs(mode, f, weights):
    x = np.array([0.7, 1.3, -2.1])
    exact = np.where(np.abs(x) > 1.0, 2 * x, 3.0) * weights
    assert s2s.grad(f, mode=mode)(x) == pytest.approx(exact, rel=1e-12)
