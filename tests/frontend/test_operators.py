"""An arithmetic operator on an object of the user's class is the call of the method Python calls
(s2s/frontend/desugar/operators.py): `S @ x` is `S.__matmul__(x)`, `u + v` is `u.__add__(v)`, `2.0 * u` is
`u.__rmul__(2.0)`. Was a TypeError inside the generated code (`_matmul_right`: float * Scale): the rule of `mul`
was applied to the object itself."""
import numpy as np
import pytest

import s2s
from conftest import central, numeric

MODES = ["auto", "reverse", "forward"]


class Scale:                    # __mul__ and __matmul__, no reflected method (the tester's repro)
    def __init__(self, a):
        self.a = a

    def __matmul__(self, x):
        return self.a * x

    def __mul__(self, x):
        return self.a * x


S = Scale(2.0)


def scaled_matmul(x):
    return (S @ x) * x              # 2 x^2


def scaled_mul(x):
    return S * x + x                # 3 x


def scaled_by_argument(x, s):
    return s * x + x * (s @ x)


class Vec:
    def __init__(self, x):
        self.x = x

    def __add__(self, other):
        return Vec(self.x + other.x)

    def __sub__(self, other):
        return Vec(self.x - other.x)

    def __mul__(self, k):
        return Vec(self.x * k)

    def __rmul__(self, k):
        return Vec(k * self.x)

    def __neg__(self):
        return Vec(-self.x)

    def total(self):
        return np.sum(self.x)


def added(x):
    u = Vec(x)
    v = Vec(np.sin(x))
    w = u + v
    return np.sum(w.x * x)


def mixed(x):
    u = Vec(x)
    d = u - Vec(x * x)
    return (u * x).total() + (3.0 * d).total() + (-u).total()


@pytest.mark.parametrize("mode", MODES)
def test_a_global_object_with_mul_and_matmul(mode):
    for f, x, exact in ((scaled_matmul, 0.7, 4 * 0.7), (scaled_mul, 0.7, 3.0)):
        got = s2s.grad(f, mode=mode)(x)
        assert got == pytest.approx(central(f, x), rel=1e-6) and got == pytest.approx(exact, rel=1e-12)
        a = np.array([0.3, -1.1])
        vector = s2s.grad(lambda v: np.sum(f(v)), mode=mode)(a)
        np.testing.assert_allclose(vector, central(lambda v: np.sum(f(v)), a), rtol=1e-6)


@pytest.mark.parametrize("mode", MODES)
def test_an_argument_of_a_user_class(mode):
    s = Scale(1.5)
    for x in (0.7, np.array([0.2, -0.4, 1.3])):
        f = (lambda v: scaled_by_argument(v, s)) if np.ndim(x) == 0 else \
            (lambda v: np.sum(scaled_by_argument(v, s)))
        got = s2s.grad(f, mode=mode)(x)
        np.testing.assert_allclose(got, central(f, x), rtol=1e-6)
    got = s2s.grad(scaled_by_argument, mode=mode)(0.7, s)
    assert got == pytest.approx(1.5 + 2 * 1.5 * 0.7, rel=1e-12)         # 1.5 x + 1.5 x^2


def test_second_order():
    assert s2s.hessian(scaled_matmul)(0.7) == pytest.approx(4.0, rel=1e-9)
    assert s2s.grad(s2s.grad(scaled_matmul))(0.3) == pytest.approx(4.0, rel=1e-9)
    x = np.array([0.3, -0.8])
    h = s2s.hessian(lambda v: added(v))(x)
    expected = np.diag(2 + 2 * np.cos(x) - x * np.sin(x))      # d2/dx2 of x^2 + x sin x, elementwise
    np.testing.assert_allclose(h, expected, rtol=1e-7, atol=1e-9)


@pytest.mark.parametrize("mode", MODES)
def test_operators_returning_new_objects(mode):
    """`Vec.__add__` returns a new Vec: followed through its fields as an object made inside the function."""
    for f in (added, mixed):
        for x in (np.array([0.5, -1.0, 2.0]), 0.7):
            got = s2s.grad(f, mode=mode)(x)
            np.testing.assert_allclose(got, numeric(f, (x,), 0), rtol=1e-6, atol=1e-8)


class Declines:
    def __init__(self, a):
        self.a = a

    def __mul__(self, other):
        if isinstance(other, Declines):
            return NotImplemented
        return self.a * other


D = Declines(2.0)


class OnlyReflected:
    def __init__(self, a):
        self.a = a

    def __rmul__(self, other):
        return self.a * other


R = OnlyReflected(3.0)


def declined(x):
    return D * x


def unknown_left(x):
    return x * R


def number_left(x):
    return 2.0 * R + x


@pytest.mark.parametrize("mode", MODES)
def test_what_is_known_only_when_the_code_runs_is_refused_at_the_operator(mode):
    with pytest.raises(s2s.S2SError, match=r"test_operators\.py:\d+:\d+: .*Declines\.__mul__ may return "
                                           r"NotImplemented"):
        s2s.grad(declined, mode=mode)(0.7)
    with pytest.raises(s2s.S2SError, match=r"test_operators\.py:\d+:\d+: .*the left operand is known only when the "
                                           r"code runs") as info:
        s2s.grad(unknown_left, mode=mode)(0.7)
    assert "R.__rmul__" in str(info.value)
    assert s2s.grad(number_left, mode=mode)(0.7) == pytest.approx(1.0)      # 2.0 * R: R.__rmul__(2.0)
