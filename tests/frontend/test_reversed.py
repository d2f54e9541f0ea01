"""reversed() over lists, tuples, arrays, an array's rows and lists of arrays, with break
and to second order; reversed() of a dict is refused where it is."""
import math

import numpy as np
import pytest

import s2s
from conftest import agrees


MODES = ["reverse", "forward", "auto"]


def horner(x, coeffs):
    r = 0.0
    for c in reversed(coeffs):
        r = r * x + c
    return r


def reversed_everywhere(xs):
    total = sum([c * k for k, c in enumerate(reversed(xs))])
    for a, b in zip(reversed(xs), xs):
        total = total + a * b
    return total + sum(reversed(xs)) ** 2


def reversed_with_break(xs):
    s = 0.0
    for c in reversed(xs):
        if c < 0.5:
            break
        s = s + c ** 2
    return s


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("coeffs", [[1.0, 2.0, 3.0], (1.0, 2.0, 3.0), np.array([1.0, 2.0, 3.0])])
def test_reversed_over_a_list_tuple_or_array(coeffs, mode):
    """Outside round 2: crashes that became results or located refusals."""
    # 3 x^2 + 2 x + 1 at x = 2: 17, its derivative 6 x + 2 = 14
    assert horner(2.0, coeffs) == pytest.approx(17.0)
    assert s2s.grad(horner, mode=mode)(2.0, coeffs) == pytest.approx(14.0)
    if isinstance(coeffs, np.ndarray):
        np.testing.assert_allclose(agrees(horner, (2.0, coeffs), 1, mode=mode), [1.0, 2.0, 4.0])
        xs = np.array([0.2, 2.0, 3.0])
        np.testing.assert_allclose(agrees(reversed_with_break, (xs,), mode=mode), [0.0, 4.0, 6.0])
        agrees(reversed_everywhere, (np.array([0.5, -1.0, 2.0]),), mode=mode)


def test_reversed_second_order_and_list_gradient():
    """Outside round 2: crashes that became results or located refusals."""
    np.testing.assert_allclose(s2s.grad(horner, wrt=1)(2.0, [1.0, 2.0, 3.0]), [1.0, 2.0, 4.0])
    d2 = s2s.grad(s2s.grad(horner))(2.0, np.array([1.0, 2.0, 3.0]))
    assert d2 == pytest.approx(6.0)


def reversed_dict(x):
    d = {0: x, 1: 2 * x}
    s = 0.0
    for k in reversed(d):
        s = s * 2 + d[k] * k
    return s


@pytest.mark.parametrize("mode", MODES)
def test_reversed_of_a_dict_is_refused_where_it_is(mode):
    """Outside round 2: crashes that became results or located refusals."""
    with pytest.raises(s2s.UnsupportedSyntax, match=r"reversed\(\) of a dict") as info:
        s2s.grad(reversed_dict, mode=mode)(1.0)
    assert "test_reversed.py:" in str(info.value) and "for k in reversed(d)" in str(info.value)


def reversed_rows(X):
    s = np.zeros(2)
    for r in reversed(X):
        s = s * 0.5 + r ** 2
    return np.sum(s)


def reversed_layers(W, x):
    layers = [W, W * 2.0, np.sin(W)]
    h = x
    for M in reversed(layers):
        h = np.tanh(M @ h)
    return np.sum(h)


@pytest.mark.parametrize("mode", MODES)
def test_reversed_rows_of_an_array_and_a_list_of_arrays(mode):
    """Outside round 2, reasonable code that was refused."""
    X = np.array([[1.0, 2.0], [0.5, -1.0], [0.2, 0.3]])
    np.testing.assert_allclose(agrees(reversed_rows, (X,), mode=mode), [[2.0, 4.0], [0.5, -1.0], [0.1, 0.15]])
    agrees(reversed_layers, (np.array([[0.5, -0.2], [0.1, 0.3]]), np.ones(2)), mode=mode)


COEFFS = [1.0, -2.0, 0.5, 0.25]


def horner_of_coefficients(x):
    acc = 0.0
    for c in reversed(COEFFS):
        acc = acc * x + c
    return acc


def shadowed_numpy(x):
    import math as np
    return np.sin(x) * x


@pytest.mark.parametrize("mode", MODES)
def test_reversed_list_and_shadowed_import(mode):
    """Outside round 5 (ordinary Python that was refused or crashed), G8 and F4 stay fixed: reversed() of a list of
    floats, `import math as np` inside the function."""
    assert s2s.grad(horner_of_coefficients, mode=mode)(0.7) == pytest.approx(-2.0 + 0.7 + 0.75 * 0.49, rel=1e-12)
    assert s2s.grad(shadowed_numpy, mode=mode)(0.7) == pytest.approx(math.cos(0.7) * 0.7 + math.sin(0.7),
                                                                      rel=1e-12)
