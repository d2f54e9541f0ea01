"""Chained element writes (`B[0][1] = x`) on arrays, in both modes and to second
order; the ones Python would not make on an array (into a list of lists, through a slice) refused with their place."""
import numpy as np
import pytest

import s2s
from conftest import agrees


MODES = ["reverse", "forward", "auto"]


COEFFICIENTS = np.array([[1.0, 2.0], [3.0, 4.0]])


def chained_writes(x):
    B = np.zeros((2, 2))
    B[0][1] = x
    B[1][0] = x * x
    B[1][1] += 3.0 * x
    return np.sum(B * COEFFICIENTS)


def chained_writes_3d(x):
    B = np.zeros((2, 2, 2))
    for i in range(2):
        B[i][1][0] = x * i
        B[i][0] = np.sin(x)
    return np.sum(B * np.arange(8.0).reshape(2, 2, 2))


def chained_write_into_a_list(x):
    B = [[0.0, 0.0], [0.0, 0.0]]
    B[0][1] = x
    return B[0][1] * 2.0


def chained_write_through_a_slice(x):
    B = np.zeros((3, 2))
    B[0:2][1] = x
    return np.sum(B)


@pytest.mark.parametrize("mode", MODES)
def test_chained_element_writes_on_an_array(mode):
    """Outside round 2, reasonable code that was refused."""
    assert agrees(chained_writes, (2.0,), mode=mode) == pytest.approx(2.0 + 3.0 * 4.0 + 4.0 * 3.0)
    agrees(chained_writes_3d, (0.7,), mode=mode)
    assert s2s.grad(s2s.grad(chained_writes))(2.0) == pytest.approx(6.0)


@pytest.mark.parametrize("mode", MODES)
def test_chained_writes_python_would_not_make_on_an_array_are_refused(mode):
    """Outside round 2, reasonable code that was refused."""
    with pytest.raises(s2s.UnsupportedSyntax, match="list of lists") as info:
        s2s.grad(chained_write_into_a_list, mode=mode)(2.0)
    assert "test_chained_writes.py:" in str(info.value) and "B[0][1] = x" in str(info.value)
    with pytest.raises(s2s.RefusedWhenRun, match="slice") as info:
        s2s.grad(chained_write_through_a_slice, mode=mode)(2.0)
    assert "test_chained_writes.py:" in str(info.value) and "B[0:2][1] = x" in str(info.value)
