"""`a.fill(v)` on a NumPy array as the write `a[...] = v` (s2s/frontend/desugar/fills.py). An outside tester's
report: `.fill()` was refused ("s2s does not support `.fill()`, which changes the array in place") on an array
made inside the function and on a copy of an argument."""
import numpy as np
import pytest

import s2s
from conftest import assert_gradient
from s2s.testing import check_grads


def filled_inside(x):
    a = np.empty(3)
    a.fill(x)
    return np.sum(a * np.arange(1.0, 4.0) * x)


def filled_copy(x):
    a = x.copy()
    a.fill(x[0] * x[1])
    return np.sum(np.sin(a) * x)


def filled_argument(a, x):
    a.fill(x)               # into the argument: the caller's array is left alone
    return np.sum(a ** 2) * x


def filled_in_a_loop(x):
    a = np.zeros(2)
    total = 0.0
    for k in range(3):
        a.fill(x * k)
        total = total + np.sum(np.exp(a))
    return total


def filled_integers(x):
    a = np.zeros(3, dtype=int)
    a.fill(x)               # truncated, as NumPy truncates: no derivative through a
    return np.sum(a) + x * x


X = np.array([0.3, -1.1, 0.7])


@pytest.mark.parametrize("f, args, wrt", [
    (filled_inside, (0.7,), 0),
    (filled_copy, (X,), 0),
    (filled_argument, (np.ones(3), 0.6), 1),
    (filled_in_a_loop, (0.4,), 0),
    (filled_integers, (2.5,), 0),
], ids=lambda v: getattr(v, "__name__", str(v)))
def test_gradients(f, args, wrt):
    assert_gradient(f, *args, wrt=wrt)
    check_grads(f, args, order=2, modes=("forward", "reverse"), wrt=wrt)


def test_closed_form_and_the_callers_array():
    # filled_inside(x) = 6 x^2
    assert s2s.grad(filled_inside)(0.7) == pytest.approx(12 * 0.7)
    a = np.ones(3)
    s2s.grad(filled_argument, wrt=1)(a, 0.6)
    np.testing.assert_array_equal(a, np.ones(3))


def test_a_list_is_refused_where_it_is():
    def filled_list(x):
        a = [x, x]
        a.fill(x)
        return a[0]

    # (a list's write `a[...] = v` is refused when the derivative is made, at the line of the fill)
    with pytest.raises(s2s.S2SError, match=r"test_fills.py:\d+:8: .*list") as info:
        s2s.grad(filled_list)(0.5)
    assert "a.fill(x)" in str(info.value)


def test_an_argument_objects_fill_is_its_method():
    def filled_object(a, x):
        a.fill(x)
        return x * 2.0

    assert s2s.grad(filled_object, wrt=1)(Canvas(1.0), 0.5) == pytest.approx(2.0)
    assert s2s.grad(filled_object, wrt=1, mode="forward")(Canvas(1.0), 0.5) == pytest.approx(2.0)


def test_an_alias_is_refused():
    def filled_alias(x):
        a = np.zeros(2)
        b = a
        a.fill(x)
        return np.sum(b)

    with pytest.raises(s2s.S2SError, match="test_fills.py"):
        s2s.grad(filled_alias)(0.5)


class Canvas:
    def __init__(self, v):
        self.v = v

    def fill(self, w):
        return self.v * w


def test_a_fill_method_of_a_users_class_is_its_own():
    def painted(x):
        c = Canvas(x)
        return c.fill(x) * 2.0

    assert_gradient(painted, 0.8)
