"""The cached derivative of a function of a list of numbers checks every item's type at each call, exactly (the
router counts the first item's type, then falls back to the set of number types): an item of another type takes
the general path, never the derivative made for numbers."""
from fractions import Fraction

import numpy as np
import pytest

import s2s


def horner(x, coefficients):
    y = 0.0
    for c in coefficients:
        y = y * x + c
    return y


def _numeric(cs, x=0.9, h=1e-6):
    return (horner(x + h, cs) - horner(x - h, cs)) / (2 * h)


@pytest.mark.parametrize("mode", ["auto", "reverse", "forward"])
def test_items_of_one_type_then_mixed_then_another(mode):
    g = s2s.grad(horner, mode=mode)
    for cs in ([0.5, -1.0, 2.0, 0.25], [np.float64(0.5), np.float64(-1.0), 2.0],
               [1, 2, 3], [0.5, 2, np.float64(3.0)], [0.5, -1.0, 2.0, 0.25, 1.5]):
        assert g(0.9, cs) == pytest.approx(_numeric(cs), rel=1e-6)


def test_a_later_item_of_another_kind_is_not_read_as_a_number():
    g = s2s.grad(horner)
    g(0.9, [0.5, -1.0, 2.0])
    with pytest.raises(Exception):            # an array among the coefficients: the output is an array
        g(0.9, [0.5, np.array([1.0, 2.0]), 2.0])
    cs = [0.5, Fraction(1, 2), 2.0]           # not a number type s2s specializes on: the general path
    assert g(0.9, cs) == pytest.approx(_numeric([0.5, 0.5, 2.0]), rel=1e-6)
