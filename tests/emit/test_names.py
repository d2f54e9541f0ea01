"""Names in the generated code: values alive at once never share a name; the user's names that look
generated (`x_dot`, `t1`, `dt1`) and globals named like s2s's helpers stay the user's."""
import math

import numpy as np
import pytest

import s2s
from conftest import assert_gradient


MODES = ["reverse", "forward", "auto"]


_broadcast_back = np.array([1.0, 2.0, 3.0])


_expand = 2.0


def weighted_by_private_names(x):
    return np.sum(np.tanh(x) * _broadcast_back) + np.sum(np.tanh(x) * _expand)


@pytest.mark.parametrize("mode", MODES)
def test_a_global_named_like_a_helper(mode):
    """Outside round 5, K21: a module-level value named like a helper the generated code defines is read as the user's
    value."""
    x = np.array([0.3, -0.2, 0.5])
    np.testing.assert_allclose(s2s.grad(weighted_by_private_names, mode=mode)(x),
                               (1 - np.tanh(x) ** 2) * (np.array([1.0, 2.0, 3.0]) + 2.0), rtol=1e-12)


def h_shadow(q):
    for a in (1.5, 1.89):
        q = a / math.tanh(q)
    return q


def caller_shadow(x):
    a = math.sin(x)
    return h_shadow(a)


def fuzz_shadow(x, y):
    for a in (math.tan(0.5 * math.tanh(y)), y):
        if y >= h0(x):
            for b in (a - y, a):
                x -= -0.41 * math.tanh(b * abs(x))
    return y + -0.68 * x


def h0(p):
    a = math.tanh(p)
    return a + 0.54 * a + (-0.96) * p


def jacobi_scalar(u, a):
    for t in range(1):
        v = u * a
        for i in range(2):
            v = v * a + u
        u = v
    return u


def jacobi_while(u, a):
    t = 0
    while t < 2:
        v = u * a
        for i in range(2):
            v = v * a + u
        u = v
        t += 1
    return u


def swap_after_inner(u, a):
    v = u
    for t in range(2):
        v = u * a
        for i in range(2):
            v = v * a + u
        u, v = v, u
    return u * v


def if_instead_of_loop(u, a):
    if a > 0:
        v = u * a
        for i in range(2):
            v = v * a + u
        u = v
    return u


@pytest.mark.parametrize("f, args", [
    (caller_shadow, (1.607,)), (fuzz_shadow, (-1.53, 1.84)), (fuzz_shadow, (0.3, 2.0)),
    (jacobi_scalar, (0.7, 0.3)), (jacobi_while, (0.7, 0.3)), (swap_after_inner, (0.7, 0.3)),
    (if_instead_of_loop, (0.7, 0.3)),
])
def test_values_alive_at_once_never_share_a_name(f, args):
    """Issue 12 (classes of silently wrong gradients), 7 and 8. names of values alive at once."""
    for wrt in range(len(args)):
        assert_gradient(f, *args, wrt=wrt)
        value, _ = s2s.value_and_grad(f, wrt=wrt)(*args)
        assert value == pytest.approx(f(*args), rel=1e-12)


def lagrangian(x, x_dot):
    return x * x_dot ** 2


def test_arguments_named_like_generated_names():
    """Issue 12 (classes of silently wrong gradients), crashes found."""
    assert s2s.grad(lagrangian, mode="forward")(1.0, 2.0) == 4.0
    assert s2s.jvp(lagrangian, (1.0, 2.0), (1.0, 0.0)) == (4.0, 4.0)
    assert s2s.hvp(lagrangian)(1.0, 2.0, 1.0) == 0.0
    assert s2s.hvp(lagrangian, wrt=1)(1.0, 2.0, 1.0) == 2.0
    assert s2s.grad(lagrangian, wrt="x_dot")(1.5, 2.0) == 6.0


def named_like_temporaries(y_dot, tmp):
    a = tmp * tmp
    t1 = 0.0
    t2 = np.zeros(len(y_dot))
    for dt1 in range(len(y_dot)):
        t1 = t1 * a * 0.5 + y_dot[dt1]
        t2[dt1] = t1
    y_dot = t2
    return np.sum(np.sin(y_dot)) + y_dot[0]


def test_user_names_that_look_generated_in_every_mode():
    """Issue 12 (classes of silently wrong gradients), keyword arguments, loops over dicts."""
    y = np.array([-0.742, 0.617, 0.18, -0.79, 0.425, 0.438])
    for wrt in (0, 1):
        assert_gradient(named_like_temporaries, y, -0.64, wrt=wrt)
