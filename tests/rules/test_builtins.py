"""Python's builtins on differentiated values: enumerate with start=."""
import numpy as np
import pytest

from conftest import agrees


MODES = ["reverse", "forward", "auto"]


def weighted(x):
    return sum(k * xi for k, xi in enumerate(x, start=1))


@pytest.mark.parametrize("mode", MODES)
def test_enumerate_start_keyword(mode):
    """Outside round 1 (the first outside tester's programs, written in their own style)."""
    np.testing.assert_allclose(agrees(weighted, (np.ones(3),), mode=mode), [1.0, 2.0, 3.0])


def float32_product(x):
    return np.sum(np.float32(x) * x)


def float32_of_a_float(x):
    return np.float32(x) * 2.0 + x


@pytest.mark.parametrize("mode", MODES)
def test_float32_of_a_differentiated_value(mode):
    """`np.float32(x)` was refused (no rule): a rounding, whose derivative is 1 (rules/python_operators.py), the
    adjoint in x's precision. Checked against central differences at float32 points (where the cast is exact) and
    against the closed form at float64 points (central differences with a small step cannot follow the
    rounding)."""
    import s2s
    x32 = np.array([0.5, -1.25, 2.0], dtype=np.float32)
    got = s2s.grad(float32_product, mode=mode)(x32)
    assert got.dtype == np.float32
    h = 2.0 ** -10                  # (x32 +- h is a float32: the differences see no rounding)
    central = [(float32_product(x32 + h * e) - float32_product(x32 - h * e)) / (2 * h) for e in np.eye(3)]
    np.testing.assert_allclose(got, central, rtol=1e-6)
    np.testing.assert_allclose(got, 2 * x32, rtol=1e-6)
    x64 = np.array([0.3, -1.1, 2.7])
    np.testing.assert_allclose(s2s.grad(float32_product, mode=mode)(x64), x64 + x64.astype(np.float32), rtol=1e-7)
    assert s2s.grad(float32_of_a_float, mode=mode)(0.7) == pytest.approx(3.0, rel=1e-7)
    np.testing.assert_allclose(s2s.hessian(float32_product)(x64), 2 * np.eye(3), rtol=1e-6)


def wrapped_phase(x, y):
    q, r = divmod(x * x, y)
    return r * r + q * np.sin(r)


@pytest.mark.parametrize("wrt", [0, 1])
def test_divmod_of_floats(wrt):
    """`divmod(x, y)` on floats was refused ("no derivative rule for divmod"; an outside tester's report): the
    quotient is piecewise constant, the remainder x - y * floor(x / y) (rules/python_operators.py)."""
    import s2s
    from conftest import assert_gradient
    from s2s.testing import check_grads
    assert_gradient(wrapped_phase, 2.1, 1.3, wrt=wrt)
    check_grads(wrapped_phase, (2.1, 1.3), order=2, modes=("forward", "reverse"), wrt=wrt)
    # closed form: d r / d y = -q
    assert s2s.grad(lambda x, y: divmod(x, y)[1], wrt=1)(7.5, 2.0) == pytest.approx(-3.0)
    assert s2s.grad(lambda x, y: divmod(x, y)[1], wrt=1, mode="forward")(-7.5, 2.0) == pytest.approx(4.0)
