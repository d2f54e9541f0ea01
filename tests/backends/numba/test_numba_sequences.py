"""Lists and tuples of numbers on the Numba backend (issue 29, item 3): passed as float64 arrays, each call checking
every item's type exactly and converting in one pass (s2s/backends/numba/sequences.py), never by the list's
identity; anything else goes to Numba as it is. Every gradient is checked against central differences and the
Python backend.
"""
from __future__ import annotations

import numpy as np
import pytest

import s2s

numba = pytest.importorskip("numba", reason="the Numba backend needs numba: pip install -e '.[numba]'")

from s2s.backends.numba.sequences import array_positions, as_floats  # noqa: E402


def horner(x, coefficients):
    y = 0.0
    for c in coefficients:
        y = y * x + c
    return y


def weighted(w, values):
    total = 0.0
    for i in range(len(values)):
        total = total + w * values[i] * values[len(values) - 1 - i]
    return total


def appended(x, values):
    more = values + [x]                # list concatenation: not what an array's + does
    total = 0.0
    for v in more:
        total = total + v * x
    return total


def central(f, args, eps=1e-6):
    return (f(args[0] + eps, *args[1:]) - f(args[0] - eps, *args[1:])) / (2 * eps)


def test_a_list_of_floats_is_an_array_for_numba_checked_and_converted_at_each_call():
    coefficients = [0.5, -1.25, 2.0, 0.75, -0.3]
    gradient = s2s.grad(horner, backend="numba")
    first = gradient(0.9, coefficients)
    assert first == pytest.approx(central(horner, (0.9, coefficients)), rel=1e-8)
    assert first == pytest.approx(s2s.grad(horner)(0.9, coefficients), rel=1e-14)
    jitted = gradient(0.9, coefficients) and s2s.api.compiled(horner, gradient.__s2s__[1], (0.9, coefficients))[1]
    assert jitted.__s2s_arrays__ == (1,)
    assert [s[1] for s in jitted.__s2s_jitted__.signatures] == [numba.float64[::1]]     # no reflected list
    coefficients[2] = -4.0                  # the same list, changed: read again, not remembered by identity
    assert gradient(0.9, coefficients) == pytest.approx(central(horner, (0.9, coefficients)), rel=1e-8)
    numpy_floats = [np.float64(c) for c in coefficients]     # NumPy's floats are floats: converted too
    assert gradient(0.9, numpy_floats) == pytest.approx(central(horner, (0.9, coefficients)), rel=1e-8)
    integers = [1, -2, 3]                  # not floats: Numba gets the list itself, as before
    assert gradient(0.9, integers) == pytest.approx(central(horner, (0.9, integers)), rel=1e-8)
    longer = coefficients + [1.5, -0.5]    # any length: the same compiled derivative
    assert gradient(0.9, longer) == pytest.approx(central(horner, (0.9, longer)), rel=1e-8)


def test_a_tuple_of_floats_and_an_index_computed_from_the_length():
    values = (0.3, -1.1, 2.4, 0.7)
    gradient = s2s.grad(weighted, backend="numba")
    assert gradient(0.6, values) == pytest.approx(central(weighted, (0.6, values)), rel=1e-8)
    assert gradient(0.6, values[:3]) == pytest.approx(central(weighted, (0.6, values[:3])), rel=1e-8)


def test_only_a_list_read_by_length_and_index_is_converted():
    from s2s.analysis.values import kind_of
    from s2s.api import Options, derivative_ir
    for fn, args, expected in ((horner, (0.9, [0.5, 1.5]), (1,)), (appended, (0.9, [0.5, 1.5]), ())):
        kinds = [kind_of(a) for a in args]
        ir = derivative_ir(fn, Options((0,), mode="reverse"), kinds)
        assert array_positions(ir, kinds, (0,)) == expected
        assert array_positions(ir, kinds, (0, 1)) == ()         # differentiated: its gradient is a list


def test_the_conversion_takes_exact_floats_only():
    class Tagged(float):
        pass
    assert isinstance(as_floats([1.0, np.float64(2.0)]), np.ndarray)
    for other in ([1.0, 2], [Tagged(1.0)], [np.float32(1.0)], [], [1.0, [2.0]], "12", [1.0, None]):
        assert as_floats(other) is other
