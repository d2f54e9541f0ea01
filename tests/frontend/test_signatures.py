"""Signatures and lookups (issue 25, item 3)."""
import numpy as np
import pytest

import s2s

MODES = ("reverse", "forward", "auto")


class Problem:
    def __init__(self):
        self.offset = 0.5

    def fun(self, x, *args):
        return np.sum((x - self.offset) ** 2) * (1 + len(args))

    def shaped(self, x):
        rs = (2, 2) if x.size == 4 else (1, x.size)
        return np.sum(x.reshape(*rs) ** 2)

    def weighted(self, x, **kwargs):
        w = kwargs.get("weight", 2.0)
        return w * np.sum(x ** 2)


def test_a_method_with_star_arguments_is_never_said_unreadable():
    p = Problem()
    with pytest.raises(s2s.S2SError) as info:
        s2s.grad(p.fun)(np.ones(3))
    assert "cannot read the source" not in str(info.value) and "star-arguments" in str(info.value)
    x = np.array([1.0, 2.0, 3.0])
    for mode in MODES:      # called inside, with the arguments it takes
        assert np.allclose(s2s.grad(lambda x: p.fun(x, 1, 2), mode=mode)(x), 6 * (x - 0.5))
        assert np.allclose(s2s.grad(lambda x: p.weighted(x), mode=mode)(x), 4 * x)
        assert np.allclose(s2s.grad(lambda x: p.weighted(x, weight=3.0), mode=mode)(x), 6 * x)


def test_star_arguments_whose_length_every_branch_fixes():
    p = Problem()
    for x in (np.arange(1.0, 5.0), np.arange(1.0, 4.0)):
        for mode in MODES:
            assert np.allclose(s2s.grad(p.shaped, mode=mode)(x), 2 * x)
