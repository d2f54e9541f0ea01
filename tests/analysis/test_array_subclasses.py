"""Subclasses of numpy.ndarray as arguments (issue 27, item 7).

A masked array's `np.mean(x * x)` got the size folded from the shape (the mask ignored: 0.667 instead of 1); with
np.matrix `x * x` is a matrix product for Python and an elementwise one for the derivative. Arrays are taken by
exact type: a subclass that changes no arithmetic, indexing or ufunc hook (np.memmap, a subclass adding attributes)
is read through np.asarray; one that does is refused with BadArgument before anything runs, whatever derivative
was made before for plain arrays of the same shape.
"""
import numpy as np
import pytest

import s2s


def mean_square(x):
    return np.mean(x * x)


def total_square(x, scale):
    return np.sum(x * x) * scale


class Tagged(np.ndarray):
    """A subclass that adds an attribute and changes nothing NumPy computes."""


class Doubled(np.ndarray):
    """A subclass whose product is not NumPy's."""

    def __mul__(self, other):
        return np.multiply(np.asarray(self), other) * 2.0


MODES = ("reverse", "forward", "auto")


@pytest.mark.parametrize("mode", MODES)
def test_masked_array_is_refused_before_anything_runs(mode):
    x = np.ma.array([1.0, 2.0, 3.0], mask=[False, True, False])
    with pytest.raises(s2s.BadArgument, match="numpy.ma.MaskedArray") as info:
        s2s.grad(mean_square, mode=mode)(x)
    assert "filled" in info.value.hint


def test_masked_array_after_a_plain_array_of_the_same_shape_is_refused():
    """The derivative made for a plain array of shape (3,) is not used for a masked array of that shape."""
    gradient = s2s.grad(mean_square)
    assert gradient(np.array([1.0, 2.0, 3.0])) == pytest.approx([2 / 3, 4 / 3, 2.0])
    with pytest.raises(s2s.BadArgument, match="MaskedArray"):
        gradient(np.ma.array([1.0, 2.0, 3.0], mask=[False, True, False]))
    with pytest.raises(s2s.BadArgument, match="MaskedArray"):
        s2s.value_and_grad(total_square, wrt=(0, 1))(np.ma.array([1.0, 2.0]), 2.0)


@pytest.mark.parametrize("mode", MODES)
def test_matrix_is_refused(mode):
    with pytest.raises(s2s.BadArgument, match="numpy.matrix") as info:
        s2s.grad(total_square, mode=mode)(np.matrix([[1.0, 2.0], [3.0, 4.0]]), 1.0)
    assert "@" in info.value.hint


def test_subclass_in_a_container_and_in_every_entry_point():
    masked = np.ma.array([1.0, 2.0])

    def f(params):
        return np.sum(params[0] * params[1])
    with pytest.raises(s2s.BadArgument, match=r"argument 'params'\[1\]"):
        s2s.grad(f)([np.ones(2), masked])
    with pytest.raises(s2s.BadArgument):
        s2s.jvp(mean_square, (masked,), (np.ones(2),))
    with pytest.raises(s2s.BadArgument):
        s2s.hessian(mean_square)(masked)
    with pytest.raises(s2s.BadArgument):
        s2s.hvp(mean_square)(masked, np.ones(2))
    with pytest.raises(s2s.BadArgument):
        s2s.grad(total_square, wrt=1)(masked, 2.0)        # a subclass not differentiated is refused too


def test_a_subclass_that_changes_a_product_is_refused():
    x = np.array([1.0, 2.0]).view(Doubled)
    with pytest.raises(s2s.BadArgument, match="__mul__"):
        s2s.grad(total_square)(x, 1.0)


@pytest.mark.parametrize("mode", MODES)
def test_memmap_and_plain_subclasses_are_read_as_arrays(mode, tmp_path):
    mapped = np.memmap(tmp_path / "x.dat", dtype=float, mode="w+", shape=(3,))
    mapped[:] = [1.0, 2.0, 3.0]
    tagged = np.array([1.0, 2.0, 3.0]).view(Tagged)
    for x in (mapped, tagged):
        gradient = s2s.grad(total_square, mode=mode)(x, 1.5)
        assert type(gradient) is np.ndarray
        assert gradient == pytest.approx([3.0, 6.0, 9.0])
        value, (dx, ds) = s2s.value_and_grad(total_square, wrt=(0, 1), mode=mode)(x, 1.5)
        assert value == pytest.approx(21.0) and ds == pytest.approx(14.0) and type(dx) is np.ndarray
    assert s2s.hvp(total_square)(mapped, 1.5, np.ones(3)) == pytest.approx([3.0, 3.0, 3.0])
