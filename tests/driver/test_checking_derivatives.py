"""The checking mode checks derivatives too (issue 27, "What to build").

On the first call with check=True (S2S_CHECK=1) a new derivative is compared, along one random direction, with the
other mode (reverse against forward; a vjp against a jvp), and a disagreement raises DerivativeMismatch (a
ReadingMismatch) naming the function: a wrong rule or fold is loud at the user's site. Where the other mode is
refused, central differences stand in, and they never raise alone near a kink or where they are noisy. Later calls
pay nothing.
"""
import numpy as np
import pytest

import s2s
from s2s.driver.selfcheck import DerivativeMismatch, ReadingMismatch


def cube(x):
    return x * x * x


@s2s.adjoint(cube)
def cube_adjoint_wrong(g, ans, x):
    return g * 2.0 * x * x              # wrong on purpose: 3 x^2


@s2s.tangent(cube)
def cube_tangent(t, ans, x):
    return (t * 3.0 * x * x,)


def quartic(x):
    return x ** 4


@s2s.adjoint(quartic)
def quartic_adjoint_wrong(g, ans, x):  # no tangent rule: forward mode is refused, central differences stand in
    return g * 3.0 * x ** 3


def kinked(x):
    return np.abs(x)


@s2s.adjoint(kinked)
def kinked_adjoint(g, ans, x):          # at 0 the subgradient 0; the differences there prove nothing
    return g * np.sign(x)


MODES = ("reverse", "forward", "auto")


@pytest.mark.parametrize("mode", MODES)
def test_a_wrong_rule_is_found_on_the_first_call(mode, make_fn):
    f = make_fn("def f(x):\n    return np.sum(cube(x) * W)\n", namespace={"cube": cube, "W": np.arange(1.0, 4.0)})
    with pytest.raises(DerivativeMismatch, match=r"derivative of f differs between") as info:
        s2s.grad(f, mode=mode, check=True)(np.array([0.5, -1.0, 2.0]))
    assert isinstance(info.value, ReadingMismatch) and "report" in info.value.hint
    g = make_fn("def g(x):\n    return cube(x) + x\n", namespace={"cube": cube})
    with pytest.raises(DerivativeMismatch):
        s2s.grad(g, mode=mode, check=True)(1.5)             # auto: forward mode along a float, against reverse


def test_jvp_and_vjp_are_checked_against_each_other(make_fn):
    f = make_fn("def f(x):\n    return cube(x) * 2.0\n", namespace={"cube": cube})
    x = np.array([0.5, -1.0, 2.0])
    with pytest.raises(DerivativeMismatch, match="forward mode and reverse mode"):
        s2s.jvp(f, (x,), (np.ones(3),), check=True)
    with pytest.raises(DerivativeMismatch, match="reverse mode and forward mode"):
        s2s.vjp(f, x, check=True)


def test_central_differences_stand_in_where_the_other_mode_is_refused(make_fn):
    f = make_fn("def f(x):\n    return np.sum(quartic(x))\n", namespace={"quartic": quartic})
    with pytest.raises(DerivativeMismatch, match="central differences"):
        s2s.grad(f, mode="reverse", check=True)(np.array([0.5, -1.0, 2.0]))
    assert s2s.grad(f, mode="reverse", check=False)(np.array([1.0])) == pytest.approx([3.0])   # unchecked: as is


def test_no_alarm_from_differences_at_a_kink(make_fn):
    """kinked has no tangent rule: the check falls back to differences, which at x = 0 (the kink) prove nothing."""
    f = make_fn("def f(x):\n    return np.sum(kinked(x))\n", namespace={"kinked": kinked})
    assert s2s.grad(f, mode="reverse", check=True)(np.array([0.0, 0.0])) == pytest.approx([0.0, 0.0])


@pytest.mark.parametrize("mode", MODES)
def test_right_derivatives_pass_and_later_calls_pay_nothing(mode, make_fn):
    calls = []

    def counted(x):
        calls.append(1)
        return x

    f = make_fn("def f(x, y):\n    return np.sum(np.sin(x) * y) + np.prod(x) / (1.0 + np.sum(y ** 2))\n")
    x, y = np.array([0.5, -1.0, 2.0]), np.array([1.5, 0.3, -0.7])
    gradient = s2s.grad(f, wrt=(0, 1), mode=mode, check=True)
    first = gradient(x, y)
    h = 1e-6
    for k, (g, a) in enumerate(zip(first, (x, y))):
        e = np.zeros(3)
        e[0] = h
        plus = f(*(a + e if j == k else b for j, b in enumerate((x, y))))
        minus = f(*(a - e if j == k else b for j, b in enumerate((x, y))))
        assert g[0] == pytest.approx((plus - minus) / (2 * h), rel=1e-6)
    from s2s.driver import pipeline
    checked = []
    original = pipeline._verify_derivative
    pipeline._verify_derivative = lambda *a: checked.append(a)
    try:
        gradient(x, y)
        gradient(x * 2.0, y)
    finally:
        pipeline._verify_derivative = original
    assert not checked


def test_a_random_function_draws_the_same_numbers_in_both_modes(make_fn):
    """A function drawing from NumPy's global generator: each evaluation of the check replays the same draws."""
    f = make_fn("def f(x):\n    return np.sum(x * np.random.normal(size=3))\n")
    np.random.seed(0)
    expected = np.random.normal(size=3)
    np.random.seed(0)
    assert s2s.grad(f, mode="reverse", check=True)(np.ones(3)) == pytest.approx(expected)
