"""list.pop(): as a statement (the list without the item), its value used, and refused with a rewrite where
Python's order matters or another name sees the list."""
import numpy as np
import pytest

import s2s
from conftest import central


MODES = ["reverse", "forward", "auto"]


def list_pop(x):
    hist = [x, x * 2.0, x * 3.0]
    hist.pop(0)
    return sum(hist)


def list_pop_value(x):
    hist = [x, x * 2.0, x * 3.0]
    return hist[1] * hist.pop(0)        # the list read again in the statement: the order would matter


@pytest.mark.parametrize("mode", MODES)
def test_list_pop_is_refused_with_a_rewrite_for_lists(mode):
    """Outside round 4, G6: messages that named s2s's internals or gave advice that cannot help."""
    # a pop as a statement (or as the one read of the list in its statement) is supported since round 5
    assert s2s.grad(list_pop, mode=mode)(0.5) == pytest.approx(5.0, rel=1e-12)
    with pytest.raises(s2s.UnsupportedSyntax) as info:
        s2s.grad(list_pop_value, mode=mode)(0.5)
    message = str(info.value)
    assert "test_pops.py:" in message and "`.pop()`" in message and "y = xs[0]; xs.pop(0)" in message
    assert "call the NumPy function" not in message


def check(f, x, mode, *rest, rtol=1e-6, atol=1e-8):
    got = s2s.grad(f, mode=mode)(x, *rest)
    np.testing.assert_allclose(got, central(lambda z: f(z, *rest), x), rtol=rtol, atol=atol)


R = np.array([0.3, -1.2, 0.8, 0.05])


H = np.array([[3.0, 0.5, 0.1], [0.5, 2.0, 0.3], [0.1, 0.3, 1.0]])


B = np.array([1.0, -0.5, 0.2])


def quad(x):
    return 0.5 * x @ H @ x - B @ x


def quad_grad(x):
    return H @ x - B


def two_loop(g, S, Y):
    q = g
    alphas = []
    for s, y in zip(reversed(S), reversed(Y)):
        a = (s @ q) / (y @ s)
        alphas.append(a)
        q = q - a * y
    r = q * ((S[-1] @ Y[-1]) / (Y[-1] @ Y[-1]) if S else 0.1)
    for (s, y), a in zip(zip(S, Y), reversed(alphas)):
        r = r + s * (a - (y @ r) / (y @ s))
    return r


def lbfgs_window(x0, m=2):
    x, S, Y = x0, [], []
    g = quad_grad(x)
    for k in range(4):
        x_new = x - two_loop(g, S, Y)
        g_new = quad_grad(x_new)
        S = (S + [x_new - x])[-m:]                 # the last m steps, kept by slicing
        Y = (Y + [g_new - g])[-m:]
        x, g = x_new, g_new
    return quad(x) + 0.01 * x0 @ x0


X0 = np.array([0.4, -0.2, 0.7])


def lbfgs_pop(x0, m=2):
    x, S, Y = x0, [], []
    g = quad_grad(x)
    for k in range(4):
        x_new = x - two_loop(g, S, Y)
        g_new = quad_grad(x_new)
        S.append(x_new - x)
        Y.append(g_new - g)
        if len(S) > m:                  # the oldest pair dropped
            S.pop(0)
            Y.pop(0)
        x, g = x_new, g_new
    return quad(x) + 0.01 * x0 @ x0


def stack_pop(x):
    stack = [x, 2.0 * x, x * x]
    stack.pop()
    return np.sum(stack[-1] * stack[0])


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("f", [lbfgs_pop, stack_pop])
def test_list_pop_as_a_statement(mode, f):
    """Outside round 5 (ordinary Python that was refused or crashed), xs.pop(i) as a statement: the list without that
    item; a pop whose value is used is refused with a rewrite."""
    check(f, X0, mode, rtol=1e-5, atol=1e-8)
    np.testing.assert_allclose(s2s.grad(lbfgs_pop, mode=mode)(X0), s2s.grad(lbfgs_window, mode=mode)(X0),
                               rtol=1e-12)


def pop_value(x):
    S = [x, 2.0 * x, 3.0 * x]
    first = S.pop(0)                    # an item read and the list without it
    acc = np.sum(first * S[0])
    acc = acc + np.sum(S.pop())
    S.append(first * 0.5)
    acc = acc * np.sum(S.pop(0))
    return acc * np.sum(S[0])


def drain(x):
    stack = [x[0], x[1] * x[2], x[3]]
    t = 0.0
    while stack:
        t = t * 2.0 + stack.pop()
    return t


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("f", [pop_value, drain])
def test_a_pop_whose_value_is_used(mode, f):
    """Outside round 5 (ordinary Python that was refused or crashed), xs.pop(i) as a statement: the list without that
    item; a pop whose value is used is refused with a rewrite."""
    check(f, R, mode)


def pop_read_twice(x):
    S = [x, 2.0 * x, 3.0 * x]
    return np.sum(S[1] * S.pop(0))      # S read again in the statement: Python's order matters


def pop_alias(x):
    S = [x, 2.0 * x, 3.0 * x]
    T = S
    S.pop(0)
    return np.sum(T[0])


def appended_through_a_list_of_lists(x):
    S = [x, 2.0 * x]
    rows = [S]
    T = rows[0]                          # S itself, read from another list
    S.append(3.0 * x)
    return np.sum(T[-1])


def test_a_pop_whose_order_matters_or_seen_through_another_name_is_refused():
    """Outside round 5 (ordinary Python that was refused or crashed), xs.pop(i) as a statement: the list without that
    item; a pop whose value is used is refused with a rewrite."""
    # (`rows` is never read again, so the append cannot be seen through it; T, which is, is a row of S when it runs)
    with pytest.raises(s2s.UnsupportedSyntax, match="'T' is a slice or row of 'S'"):
        s2s.grad(appended_through_a_list_of_lists)(R)
    with pytest.raises(s2s.UnsupportedSyntax) as info:
        s2s.grad(pop_read_twice)(R)
    message = str(info.value)
    assert "test_pops.py:" in message and ".pop()" in message and "y = xs[0]; xs.pop(0)" in message
    with pytest.raises(s2s.UnsupportedSyntax, match="'S' is the same object as 'T'"):
        s2s.grad(pop_alias)(R)
