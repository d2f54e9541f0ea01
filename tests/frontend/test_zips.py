"""zip(*M), the transpose of a list-of-lists matrix; zip in other forms (one name for the
pair, sorted pairs), itertools.pairwise, and list() of an array's rows."""
import itertools

import numpy as np
import pytest

import s2s
from conftest import central


MODES = ["reverse", "forward", "auto"]


def check(f, x, mode, *rest, rtol=1e-6, atol=1e-8):
    got = s2s.grad(f, mode=mode)(x, *rest)
    np.testing.assert_allclose(got, central(lambda z: f(z, *rest), x), rtol=rtol, atol=atol)


def check_hvp(f, x, eps=1e-5):
    """s2s.hvp along a direction against central differences of s2s's gradient."""
    v = np.linspace(-1.0, 1.0, np.size(x))
    gradient = s2s.grad(f)
    expected = (np.asarray(gradient(x + eps * v)) - np.asarray(gradient(x - eps * v))) / (2 * eps)
    np.testing.assert_allclose(s2s.hvp(f)(x, v), expected, rtol=1e-4, atol=1e-6)


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


def transpose_quadratic(x):
    M = [[x[0], x[1], x[2]], [x[3], x[0] * x[1], 1.0]]
    T = [list(col) for col in zip(*M)]                 # 3 rows of 2
    return sum(row[0] * row[1] for row in T) + T[2][0] ** 2


def column_sums(x):
    M = [[x[0], 2.0 * x[1]], [x[2] ** 2, x[3]], [x[0] * x[3], 1.0]]
    return sum(sum(col) ** 2 for col in zip(*M))


def weighted_pairs(x):
    w = [3.0, 1.0, 2.0, 0.5]
    t = 0.0
    for pair in zip(w, x):                             # one name for the pair
        t = t + pair[0] * pair[1] ** 2
    order = sorted(zip(w, x))                          # sorted by weight
    return t + sum(k * a for k, (_, a) in enumerate(order))


def total_variation(x):
    return sum(abs(b - a) for a, b in itertools.pairwise(x)) + sum(list(x)) * x[0]


def rows_of_a_matrix(x):
    rows = list(x.reshape(2, 2))                       # the rows of an array
    first, second = tuple(rows)
    return first @ second + np.sum(rows[0] ** 2)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("f", [transpose_quadratic, column_sums, weighted_pairs, rows_of_a_matrix, total_variation])
def test_zip_and_list_forms(mode, f):
    """Outside round 5 (ordinary Python that was refused or crashed), zip(*M): the transpose of a list-of-lists matrix;
    zip in other forms."""
    check(f, R, mode)


def test_transpose_and_lbfgs_second_order():
    """Outside round 5 (ordinary Python that was refused or crashed), zip(*M): the transpose of a list-of-lists matrix;
    zip in other forms."""
    check_hvp(column_sums, R)
    check_hvp(lbfgs_window, X0)
