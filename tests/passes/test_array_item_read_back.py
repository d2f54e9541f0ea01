"""An item written into an array and read back is the array's item, not the value written: written into an integer
array, 2.6 reads back as 2 (simplify read it back as the value written, through setitem, which made the gradient of
`z[1] = v * 2; return z[1] * v` 5.2 where it is 2: the integer item has no derivative). Lists and dicts built in the
function still read back what was written."""
import numpy as np
import pytest

import s2s

MODES = ("reverse", "forward", "auto")


def integer_item(v):
    z = np.arange(4)
    z[1] = v * 2
    return z[1] * v


def integer_items_in_a_loop(v):
    z = np.arange(4)
    acc = 0.0
    for i in range(4):
        z[i] = v * i
        acc = acc + z[i] * v
    return acc


def list_item(v):
    xs = [0.0, 1.0]
    xs[1] = v * 2
    return xs[1] * v


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("f, want", [(integer_item, lambda v: 2.0), (integer_items_in_a_loop, lambda v: 0 + 1 + 2 + 3.0),
                                     (list_item, lambda v: 4 * v)])
def test_read_back(f, want, mode):
    v = 1.3
    h = 1e-6
    assert s2s.grad(f, mode=mode)(v) == pytest.approx(want(v))
    assert s2s.grad(f, mode=mode)(v) == pytest.approx((f(v + h) - f(v - h)) / (2 * h), rel=1e-5)


def test_a_list_item_is_still_read_back():
    text = str(s2s.source(list_item, 1.3, mode="reverse")).split("def list_item_grad")[1]
    code = [line for line in text.splitlines() if not line.strip().startswith("#")]
    assert not [line for line in code if "xs" in line], text
