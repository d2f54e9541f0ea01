"""More rules for NumPy: the ufuncs and array functions autograd differentiates beyond numpy_functions.py.

Real arguments only: `real`, `conj` and `real_if_close` are the identity on them, `imag` and `angle`
are constant. Functions that pick elements (sort, partition, median, percentile, take) route the
adjoint back to the elements picked; ties in sort keep NumPy's order.
"""
import builtins

import numpy as np

from s2s.rules.helpers import (
    _cumprod_adjoint,
    _cumprod_tangent,
    _diff_adjoint,
    _gradient_adjoint,
    _gradient_apply,
    _kron_adjoint,
    _quantile_adjoint,
    _quantile_tangent,
    _rollaxis_destination,
    _running_record,
    _select_adjoint,
    _sort_order,
    _sorted_like,
    _take_adjoint,
    _take_along_axis_adjoint,
    _unappend,
    _uncolumn_stack,
    _undiagonal,
    _unpad,
    _unsort,
    _unsorted,
    _unsplit,
)
from s2s.rules.registry import adjoint, elementwise, linear, nondifferentiable, several_results, tangent, template
from s2s.runtime import _cumsum_adjoint, _unbroadcast

_DEGREE = 0.017453292519943295          # pi / 180, a Python float: float32 stays float32

# ---- ufuncs


@adjoint(np.deg2rad, np.radians)
def deg2rad(g, ans, x):
    return g * _DEGREE


@adjoint(np.rad2deg, np.degrees)
def rad2deg(g, ans, x):
    return g / _DEGREE


@adjoint(np.logaddexp2)
def logaddexp2(g, ans, x, y):           # 2^x / (2^x + 2^y), written with tanh
    return g * (0.5 + 0.5 * np.tanh(0.34657359027997264 * (x - y))), g * (0.5 - 0.5 * np.tanh(0.34657359027997264 * (x - y)))


@adjoint(np.remainder, np.mod, np.fmod)
def remainder(g, ans, x, y):            # x - y * floor(x / y) (fmod: trunc); x // y is piecewise constant
    return g, -g * ((x - ans) / y)


@adjoint(np.sinc)
def sinc(g, ans, x):                    # (cos(pi x) - sinc(x)) / x, 0 at x = 0
    return g * (np.cos(3.141592653589793 * x) - ans) / (x + (x == 0))


@adjoint(np.conjugate, np.conj, np.real, np.real_if_close)
def real(g, ans, x):
    return g


@adjoint(np.imag, np.angle)
def imag(g, ans, x):                    # constant on real arguments (angle: 0 or pi)
    return 0.0 * g


@adjoint(np.nan_to_num)
def nan_to_num(g, ans, x, copy=True, nan=0.0, posinf=None, neginf=None):
    return g * np.isfinite(x)


elementwise(np.real, np.imag, np.angle, np.real_if_close, np.nan_to_num, np.sinc)

# ---- reductions and scans


@adjoint(np.cumprod)
def cumprod(g, ans, x, axis=None, dtype=None, out=None):
    return _cumprod_adjoint(g, x, axis)


@tangent(np.cumprod)
def cumprod_tangent(t, ans, x, axis=None, dtype=None, out=None):
    return _cumprod_tangent(t, x, axis)


@adjoint(np.median)
def median(g, ans, x, axis=None, out=None, overwrite_input=False, keepdims=False):
    return _quantile_adjoint(g, x, 0.5, axis, keepdims)


@tangent(np.median)
def median_tangent(t, ans, x, axis=None, out=None, overwrite_input=False, keepdims=False):
    return _quantile_tangent(t, x, 0.5, axis, keepdims)


@adjoint(np.nanmedian)
def nanmedian(g, ans, x, axis=None, out=None, overwrite_input=False, keepdims=False):
    return _quantile_adjoint(g, x, 0.5, axis, keepdims, "linear", True)


@tangent(np.nanmedian)
def nanmedian_tangent(t, ans, x, axis=None, out=None, overwrite_input=False, keepdims=False):
    return _quantile_tangent(t, x, 0.5, axis, keepdims, "linear", True)


# every method: each picks an order statistic or interpolates between two (rules/helpers.py)


@adjoint(np.quantile)
def quantile(g, ans, x, q, axis=None, out=None, overwrite_input=False, method="linear", keepdims=False):
    return _quantile_adjoint(g, x, q, axis, keepdims, method), None


@tangent(np.quantile)
def quantile_tangent(t, ans, x, q, axis=None, out=None, overwrite_input=False, method="linear", keepdims=False):
    return _quantile_tangent(t, x, q, axis, keepdims, method), None


@adjoint(np.nanquantile)
def nanquantile(g, ans, x, q, axis=None, out=None, overwrite_input=False, method="linear", keepdims=False):
    return _quantile_adjoint(g, x, q, axis, keepdims, method, True), None


@tangent(np.nanquantile)
def nanquantile_tangent(t, ans, x, q, axis=None, out=None, overwrite_input=False, method="linear", keepdims=False):
    return _quantile_tangent(t, x, q, axis, keepdims, method, True), None


@adjoint(np.percentile)
def percentile(g, ans, x, q, axis=None, out=None, overwrite_input=False, method="linear", keepdims=False):
    return _quantile_adjoint(g, x, np.asarray(q) / 100.0, axis, keepdims, method), None


@tangent(np.percentile)
def percentile_tangent(t, ans, x, q, axis=None, out=None, overwrite_input=False, method="linear", keepdims=False):
    return _quantile_tangent(t, x, np.asarray(q) / 100.0, axis, keepdims, method), None


@adjoint(np.nanpercentile)
def nanpercentile(g, ans, x, q, axis=None, out=None, overwrite_input=False, method="linear", keepdims=False):
    return _quantile_adjoint(g, x, np.asarray(q) / 100.0, axis, keepdims, method, True), None


@tangent(np.nanpercentile)
def nanpercentile_tangent(t, ans, x, q, axis=None, out=None, overwrite_input=False, method="linear",
                          keepdims=False):
    return _quantile_tangent(t, x, np.asarray(q) / 100.0, axis, keepdims, method, True), None


@adjoint(np.diff)
def diff(g, ans, x, n=1, axis=-1, prepend=None, append=None):
    full = _diff_adjoint(g, n, axis)    # the adjoint of the array prepend and append joined with x: x's part
    if prepend is None and append is None:
        return full
    k = 0 if prepend is None else (1 if np.ndim(prepend) == 0 else np.shape(prepend)[axis])
    return np.take(full, np.arange(k, k + np.shape(x)[axis]), axis=axis)


# ---- shape and order


@adjoint(np.roll)
def roll(g, ans, x, shift, axis=None):
    return np.roll(g, np.negative(shift), axis)


@adjoint(np.rot90)
def rot90(g, ans, x, k=1, axes=(0, 1)):
    return np.rot90(g, -k, axes)


@adjoint(np.fliplr)
def fliplr(g, ans, x):
    return np.fliplr(g)


@adjoint(np.flipud)
def flipud(g, ans, x):
    return np.flipud(g)


@adjoint(np.rollaxis)
def rollaxis(g, ans, x, axis, start=0):
    return np.moveaxis(g, _rollaxis_destination(x, axis, start), axis)


@adjoint(np.atleast_3d)
def atleast_3d(g, ans, x):
    return np.reshape(g, np.shape(x))


@adjoint(np.tril)
def tril(g, ans, x, k=0):
    return np.tril(g, k)


@adjoint(np.triu)
def triu(g, ans, x, k=0):
    return np.triu(g, k)


@adjoint(np.diagonal)
def diagonal(g, ans, x, offset=0, axis1=0, axis2=1):
    return _undiagonal(g, x, offset, axis1, axis2)


@adjoint(np.pad)
def pad(g, ans, x, pad_width, mode="constant", constant_values=0):
    dx = _unpad(g, x, pad_width, mode)
    return dx, None, None, np.sum(g) - np.sum(dx) if mode == "constant" else None


@adjoint(np.sort)
def sort(g, ans, x, axis=-1, kind=None, order=None):
    return _unsort(g, x, _sort_order(x, axis, None), axis)


@tangent(np.sort)
def sort_tangent(t, ans, x, axis=-1, kind=None, order=None):
    return np.take_along_axis(t, _sort_order(x, axis, None), axis) if axis is not None else \
        np.take(t, _sort_order(x, axis, None))


@adjoint(np.partition)
def partition(g, ans, x, kth, axis=-1, kind="introselect", order=None):
    return _unsort(g, x, _sort_order(x, axis, kth), axis), None


@tangent(np.partition)
def partition_tangent(t, ans, x, kth, axis=-1, kind="introselect", order=None):
    return np.take_along_axis(t, _sort_order(x, axis, kth), axis) if axis is not None else \
        np.take(t, _sort_order(x, axis, kth)), None


@adjoint(np.take)
def take(g, ans, x, indices, axis=None, out=None, mode="raise"):
    return _take_adjoint(g, x, indices, axis, mode), None


@adjoint(np.take_along_axis)
def take_along_axis(g, ans, x, indices, axis):
    return _take_along_axis_adjoint(g, x, indices, axis), None


@adjoint(np.split, np.array_split)
def split(g, ans, x, indices_or_sections, axis=0):
    return _unsplit(g, ans, axis), None


@adjoint(np.hsplit)
def hsplit(g, ans, x, indices_or_sections):
    return _unsplit(g, ans, 1 if np.ndim(x) > 1 else 0), None


@adjoint(np.vsplit)
def vsplit(g, ans, x, indices_or_sections):
    return _unsplit(g, ans, 0), None


@adjoint(np.dsplit)
def dsplit(g, ans, x, indices_or_sections):
    return _unsplit(g, ans, 2), None


@adjoint(np.append)
def append(g, ans, arr, values, axis=None):
    return _unappend(g, arr, values, axis, 0), _unappend(g, arr, values, axis, 1)


@adjoint(np.column_stack)
def column_stack(g, ans, arrays):
    return _uncolumn_stack(g, arrays)


@adjoint(np.dstack)
def dstack(g, ans, arrays):
    return _uncolumn_stack(g, arrays, 2)


@adjoint(np.gradient)
def gradient(g, ans, f, spacing=None, more_spacing=None, axis=None, edge_order=1):     # along one axis
    return _gradient_adjoint(g, f, spacing, more_spacing, axis, edge_order)


@tangent(np.gradient)
def gradient_tangent(t, ans, f, spacing=None, more_spacing=None, axis=None, edge_order=1):
    return (_gradient_apply(t, f, spacing, more_spacing, axis, edge_order),)       # not in the spacing


@adjoint(builtins.sorted)
def sorted_(g, ans, items, key=None, reverse=False):
    return _unsorted(g, items, key, reverse)


@tangent(builtins.sorted)
def sorted_tangent(t, ans, items, key=None, reverse=False):
    return _sorted_like(t, items, key, reverse)


several_results(builtins.sorted, kind=lambda args, kwargs: ("list*", "scalar"))

# ---- products


@adjoint(np.kron)
def kron(g, ans, a, b):
    return _kron_adjoint(g, a, b, 0), _kron_adjoint(g, a, b, 1)


def _as_3_vectors(v):
    """v, whose last axis holds 2- or 3-vectors, as 3-vectors: (x, y) is (x, y, 0), as np.cross reads it."""
    if np.shape(v)[-1] == 2:
        return np.concatenate([v, 0.0 * v[..., :1]], axis=-1)
    return v


@adjoint(np.cross)
def cross(g, ans, a, b, axisa=-1, axisb=-1, axisc=-1, axis=None):
    # with the vector axes moved last (axis= sets all three): g . (a x b) = a . (b x g) = b . (g x a); two
    # 2-vectors give the z component alone (axisc unused), so g is (0, 0, g); broadcast operands are summed back
    if axis is not None:
        axisa, axisb, axisc = axis, axis, axis
    a_last = np.moveaxis(a, axisa, -1)
    b_last = np.moveaxis(b, axisb, -1)
    if np.shape(a_last)[-1] == 2 and np.shape(b_last)[-1] == 2:
        g_last = np.stack([0.0 * g, 0.0 * g, g], axis=-1)
    else:
        g_last = np.moveaxis(g, axisc, -1)
    da = np.cross(_as_3_vectors(b_last), g_last)[..., :np.shape(a_last)[-1]]
    db = np.cross(g_last, _as_3_vectors(a_last))[..., :np.shape(b_last)[-1]]
    return np.moveaxis(_unbroadcast(da, a_last), -1, axisa), np.moveaxis(_unbroadcast(db, b_last), -1, axisb)


@adjoint(np.select)
def select(g, ans, condlist, choicelist, default=0):
    return None, _select_adjoint(g, condlist, choicelist, -1), _select_adjoint(g, condlist, choicelist, 0)


linear(np.diff, np.roll, np.rot90, np.fliplr, np.flipud, np.rollaxis, np.atleast_3d, np.tril, np.triu, np.diagonal,
       np.take, np.take_along_axis, np.split, np.array_split, np.hsplit, np.vsplit, np.dsplit, np.column_stack,
       np.dstack, np.deg2rad, np.radians, np.rad2deg, np.degrees, np.conjugate, np.conj, np.real, np.real_if_close)
several_results(np.split, np.array_split, np.hsplit, np.vsplit, np.dsplit, kind=lambda args, kwargs: ("list*", "array"))
linear(np.kron, np.cross, argnums=(0, 1))
template(_as_3_vectors)


@tangent(np.append)
def append_tangent(t, ans, arr, values, axis=None):        # affine in each argument: the other gives zeros
    # (either may be a list of numbers: zeros of its shape, in its precision)
    return np.append(t, 0.0 * np.asarray(values), axis), np.append(0.0 * np.asarray(arr), t, axis)


@tangent(np.select)
def select_tangent(t, ans, condlist, choicelist, default=0):
    return None, np.select(condlist, t, 0.0), np.where(np.any(np.array(condlist), axis=0), 0.0 * t, t)


@tangent(np.pad)
def pad_tangent(t, ans, x, pad_width, mode="constant", constant_values=0):
    return np.pad(t, pad_width, mode), None, None, (np.pad(0.0 * x, pad_width, "constant", constant_values=1.0) * t
                                                    if mode == "constant" else None)


@tangent(np.imag, np.angle)
def imag_tangent(t, ans, x):
    return 0.0 * ans


# ---- ufunc methods: reduce and accumulate


@adjoint(np.add.reduce)
def add_reduce(g, ans, x, axis=0, dtype=None, out=None, keepdims=False):
    return _broadcast_back(g, x, axis, keepdims)


@adjoint(np.multiply.reduce)
def multiply_reduce(g, ans, x, axis=0, dtype=None, out=None, keepdims=False):
    return _broadcast_back(g, x, axis, keepdims) * _prod_of_others(x, axis)


@tangent(np.multiply.reduce)
def multiply_reduce_tangent(t, ans, x, axis=0, dtype=None, out=None, keepdims=False):
    return np.sum(t * _prod_of_others(x, axis), axis=axis, keepdims=keepdims)


@adjoint(np.maximum.reduce, np.minimum.reduce)
def extremum_reduce(g, ans, x, axis=0, dtype=None, out=None, keepdims=False):
    hit = (x == _broadcast_back(ans, x, axis, keepdims)) * np.ones_like(x)
    return _broadcast_back(g, x, axis, keepdims) * hit / np.sum(hit, axis=axis, keepdims=True)


@tangent(np.maximum.reduce, np.minimum.reduce)
def extremum_reduce_tangent(t, ans, x, axis=0, dtype=None, out=None, keepdims=False):
    hit = (x == _broadcast_back(ans, x, axis, keepdims)) * np.ones_like(x)
    return np.sum(t * hit, axis=axis, keepdims=keepdims) / np.sum(hit, axis=axis, keepdims=keepdims)


@adjoint(np.logaddexp.reduce)
def logaddexp_reduce(g, ans, x, axis=0, dtype=None, out=None, keepdims=False):
    return _broadcast_back(g, x, axis, keepdims) * np.exp(x - _broadcast_back(ans, x, axis, keepdims))


@tangent(np.logaddexp.reduce)
def logaddexp_reduce_tangent(t, ans, x, axis=0, dtype=None, out=None, keepdims=False):
    return np.sum(t * np.exp(x - _broadcast_back(ans, x, axis, keepdims)), axis=axis, keepdims=keepdims)


@adjoint(np.logaddexp2.reduce)
def logaddexp2_reduce(g, ans, x, axis=0, dtype=None, out=None, keepdims=False):
    return _broadcast_back(g, x, axis, keepdims) * np.exp2(x - _broadcast_back(ans, x, axis, keepdims))


@tangent(np.logaddexp2.reduce)
def logaddexp2_reduce_tangent(t, ans, x, axis=0, dtype=None, out=None, keepdims=False):
    return np.sum(t * np.exp2(x - _broadcast_back(ans, x, axis, keepdims)), axis=axis, keepdims=keepdims)


@adjoint(np.logaddexp.accumulate)
def logaddexp_accumulate(g, ans, x, axis=0, dtype=None, out=None):
    # dx_j = sum over i >= j of g_i exp(x_j - y_i), scaled by y_0 (the smallest y): exp(y_0 - y_i) <= 1
    first = np.take(ans, [0], axis=axis)
    return _cumsum_adjoint(g * np.exp(first - ans), x, axis) * np.exp(x - first)


@tangent(np.logaddexp.accumulate)
def logaddexp_accumulate_tangent(t, ans, x, axis=0, dtype=None, out=None):
    first = np.take(ans, [0], axis=axis)
    return np.exp(first - ans) * np.cumsum(t * np.exp(x - first), axis=axis)


@adjoint(np.maximum.accumulate, np.minimum.accumulate)
def extremum_accumulate(g, ans, x, axis=0, dtype=None, out=None):
    # each running extremum's adjoint goes to the element that set it (the last of equal ones)
    return _take_along_axis_adjoint(g, x, _running_record(x, ans, axis), axis)


@tangent(np.maximum.accumulate, np.minimum.accumulate)
def extremum_accumulate_tangent(t, ans, x, axis=0, dtype=None, out=None):
    return np.take_along_axis(t, _running_record(x, ans, axis), axis)


@adjoint(np.add.accumulate)
def add_accumulate(g, ans, x, axis=0, dtype=None, out=None):
    return _cumsum_adjoint(g, x, axis)


@adjoint(np.multiply.accumulate)
def multiply_accumulate(g, ans, x, axis=0, dtype=None, out=None):
    return _cumprod_adjoint(g, x, axis)


@tangent(np.multiply.accumulate)
def multiply_accumulate_tangent(t, ans, x, axis=0, dtype=None, out=None):
    return _cumprod_tangent(t, x, axis)


linear(np.add.reduce, np.add.accumulate)

@adjoint(np.bincount)
def bincount(g, ans, x, weights=None, minlength=0):    # sums of weights by index: the adjoint gathers
    return None, g[x], None


@tangent(np.bincount)
def bincount_tangent(t, ans, x, weights=None, minlength=0):
    return None, np.bincount(x, t, minlength), None


# np.unique and np.histogram are left without rules: their values (sorted values, bin edges from the data's
# range) depend on the data, so they are refused when their argument carries a derivative.
nondifferentiable(np.argpartition, np.lexsort, np.signbit, np.iscomplex,
                  np.isreal, np.isneginf, np.isposinf, np.shares_memory, np.may_share_memory)

from s2s.runtime import _broadcast_back, _prod_of_others  # noqa: E402


@adjoint(np.convolve)
def convolve(g, ans, a, v, mode="full"):
    # every mode is a window of the full convolution (same: it starts at (min(n, m) - 1) // 2): g padded back to
    # the full length, then correlated with the other operand
    n, m = np.size(a), np.size(v)
    start = 0 if mode == "full" else (min(n, m) - 1) // 2 if mode == "same" else min(n, m) - 1
    full = np.pad(g, (start, n + m - 1 - start - np.size(g)))
    return np.convolve(full, np.flip(v), "valid"), np.convolve(full, np.flip(a), "valid")


linear(np.convolve, argnums=(0, 1))


# ---- functions met in ordinary code (the third outside tester's F12)


@adjoint(np.heaviside)
def heaviside(g, ans, x, h0):           # piecewise constant in x (as np.sign); h0 is the value at x == 0
    return 0.0 * g, g * (x == 0)


@adjoint(np.add.outer)
def add_outer(g, ans, a, b):            # ans[I, J] = a[I] + b[J]: each adjoint sums g over the other's axes
    return (np.sum(g, axis=tuple(range(np.ndim(a), np.ndim(g)))),
            np.sum(g, axis=tuple(range(np.ndim(a)))))


@adjoint(np.subtract.outer)
def subtract_outer(g, ans, a, b):
    return (np.sum(g, axis=tuple(range(np.ndim(a), np.ndim(g)))),
            -np.sum(g, axis=tuple(range(np.ndim(a)))))


@adjoint(np.multiply.outer)
def multiply_outer(g, ans, a, b):
    return (np.sum(g * b, axis=tuple(range(np.ndim(a), np.ndim(g)))),
            np.sum(g * np.reshape(a, np.shape(a) + (1,) * np.ndim(b)), axis=tuple(range(np.ndim(a)))))


@tangent(np.add.outer)
def add_outer_tangent(t, ans, a, b):    # the other operand held: its zeros keep the result's shape
    return (np.add.outer(t, np.zeros(np.shape(b), np.result_type(t))),
            np.add.outer(np.zeros(np.shape(a), np.result_type(t)), t))


@tangent(np.subtract.outer)
def subtract_outer_tangent(t, ans, a, b):
    return (np.subtract.outer(t, np.zeros(np.shape(b), np.result_type(t))),
            np.subtract.outer(np.zeros(np.shape(a), np.result_type(t)), t))


linear(np.multiply.outer, argnums=(0, 1))


@adjoint(np.delete)
def delete(g, ans, arr, obj, axis=None):    # np.take of the indices kept
    kept = np.delete(np.arange(np.size(arr) if axis is None else np.shape(arr)[axis]), obj)
    return _take_adjoint(g, arr, kept, axis, "raise"), None


linear(np.delete)


@adjoint(np.insert)
def insert(g, ans, arr, obj, values, axis=None):
    # where arr's elements and values' elements land: np.insert of their (flat) indices, -1 elsewhere
    flat = np.ravel(g)
    slots = np.ravel(np.insert(np.reshape(np.arange(np.size(arr)), np.shape(arr)), obj, np.full(np.shape(values), -1),
                               axis))
    sources = np.ravel(np.insert(np.full(np.shape(arr), -1), obj,
                                 np.reshape(np.arange(np.size(values)), np.shape(values)), axis))
    inserted = np.nonzero(sources >= 0)[0]
    return (np.reshape(np.take(flat, np.nonzero(slots >= 0)[0]), np.shape(arr)), None,
            _take_adjoint(np.take(flat, inserted), values, np.take(sources, inserted), None, "raise"), None)


@tangent(np.insert)
def insert_tangent(t, ans, arr, obj, values, axis=None):
    return (np.insert(t, obj, np.zeros_like(values * 1.0), axis), None,
            np.insert(np.zeros(np.shape(arr), np.result_type(arr, t)), obj, t, axis), None)
