"""Rules for NumPy: elementwise functions, reductions, shape operations and constructors.

Elementwise rules see arguments of any shape: the transform sums each adjoint back
over broadcast axes (ufuncs broadcast; other functions are declared below).
Ties: `max`/`min` reductions share the adjoint equally among the tied elements;
`maximum`/`minimum` split it half and half between equal arguments.
"""
import numpy as np

from s2s.rules.helpers import _memory_order, _trace_adjoint
from s2s.rules.registry import adjoint, elementwise, linear, nondifferentiable, tangent
from s2s.runtime import (
    _broadcast_back,
    _cumsum_adjoint,
    _diag_adjoint,
    _prod_of_others,
    _reduced_size,
    _unbroadcast,
    _unconcatenate,
    _unrepeat,
    _unstack_joined,
    _untile,
)

# ---- arithmetic (add, subtract, multiply, divide, power, negative, positive share the operators' rules in
# python_operators.py)


@adjoint(np.square)
def square(g, ans, x):
    return g * 2 * x


@adjoint(np.reciprocal)
def reciprocal(g, ans, x):
    return -g * ans * ans


@adjoint(np.absolute, np.fabs)
def absolute(g, ans, x):
    return g * np.sign(x)


@adjoint(np.maximum, np.fmax)
def maximum(g, ans, x, y):              # g times a mask keeps g's dtype (0.5 * a mask would be float64)
    return g * (x > y) + 0.5 * g * (x == y), g * (x < y) + 0.5 * g * (x == y)


@adjoint(np.minimum, np.fmin)
def minimum(g, ans, x, y):
    return g * (x < y) + 0.5 * g * (x == y), g * (x > y) + 0.5 * g * (x == y)


@adjoint(np.clip)
def clip(g, ans, x, a_min, a_max):
    inside = g
    if a_min is not None:
        inside = inside * (x >= a_min)
    if a_max is not None:
        inside = inside * (x <= a_max)
    return inside, g * (x < a_min), g * (x > a_max)


def clip_keywords(g, ans, x, a_min=None, a_max=None, out=None, min=None, max=None):
    if min is not None:                 # NumPy 2's keywords (ndarray.clip's): min=, max=
        a_min = min
    if max is not None:
        a_max = max
    inside = g
    if a_min is not None:
        inside = inside * (x >= a_min)
    if a_max is not None:
        inside = inside * (x <= a_max)
    return inside, g * (x < a_min), g * (x > a_max), None, g * (x < a_min), g * (x > a_max)


clip.with_keywords = clip_keywords      # the rule for a call that passes keywords clip does not take


@adjoint(np.where)
def where(g, ans, condition, x, y):
    return None, np.where(condition, g, 0.0), np.where(condition, 0.0, g)


# ---- exponential and logarithmic


@adjoint(np.exp)
def exp(g, ans, x):
    return g * ans


@adjoint(np.exp2)
def exp2(g, ans, x):
    return g * ans * 0.6931471805599453          # log(2), a Python float: float32 stays float32


@adjoint(np.expm1)
def expm1(g, ans, x):
    return g * (ans + 1)


@adjoint(np.log)
def log(g, ans, x):
    return g / x


@adjoint(np.log2)
def log2(g, ans, x):
    return g / (x * 0.6931471805599453)


@adjoint(np.log10)
def log10(g, ans, x):
    return g / (x * 2.302585092994046)


@adjoint(np.log1p)
def log1p(g, ans, x):
    return g / (1 + x)


@adjoint(np.logaddexp)
def logaddexp(g, ans, x, y):
    # the logistic function of x - y, written with tanh so that it never overflows, and without ans,
    # so the forward sweep need not compute logaddexp at all when only the gradient is asked for
    return g * (0.5 + 0.5 * np.tanh(0.5 * (x - y))), g * (0.5 - 0.5 * np.tanh(0.5 * (x - y)))


@adjoint(np.sqrt)
def sqrt(g, ans, x):
    return g / (2 * ans)


@adjoint(np.cbrt)
def cbrt(g, ans, x):
    return g / (3 * ans * ans)


@adjoint(np.hypot)
def hypot(g, ans, x, y):
    return g * x / ans, g * y / ans


@adjoint(np.copysign)
def copysign(g, ans, x, y):             # |x| with y's sign: piecewise constant in y
    return g * np.copysign(1.0, x) * np.copysign(1.0, y), 0.0 * g


# ---- trigonometric and hyperbolic


@adjoint(np.sin)
def sin(g, ans, x):
    return g * np.cos(x)


@adjoint(np.cos)
def cos(g, ans, x):
    return -g * np.sin(x)


@adjoint(np.tan)
def tan(g, ans, x):
    return g * (1 + ans * ans)


@adjoint(np.arcsin)
def arcsin(g, ans, x):
    return g / np.sqrt(1 - x * x)


@adjoint(np.arccos)
def arccos(g, ans, x):
    return -g / np.sqrt(1 - x * x)


@adjoint(np.arctan)
def arctan(g, ans, x):
    return g / (1 + x * x)


@adjoint(np.arctan2)
def arctan2(g, ans, y, x):
    return g * x / (x * x + y * y), -g * y / (x * x + y * y)


@adjoint(np.sinh)
def sinh(g, ans, x):
    return g * np.cosh(x)


@adjoint(np.cosh)
def cosh(g, ans, x):
    return g * np.sinh(x)


@adjoint(np.tanh)
def tanh(g, ans, x):
    return g * (1 - ans * ans)


@adjoint(np.arcsinh)
def arcsinh(g, ans, x):
    return g / np.sqrt(x * x + 1)


@adjoint(np.arccosh)
def arccosh(g, ans, x):
    return g / np.sqrt(x * x - 1)


@adjoint(np.arctanh)
def arctanh(g, ans, x):
    return g / (1 - x * x)


# ---- reductions


@adjoint(np.sum)
def sum_(g, ans, x, axis=None, dtype=None, out=None, keepdims=False, initial=0.0):
    return _broadcast_back(g, x, axis, keepdims), None, None, None, None, np.sum(g)


def sum_where(g, ans, x, axis=None, dtype=None, out=None, keepdims=False, initial=0.0, where=True):
    # only the elements where= selects are summed (where= broadcasts against x)
    return _broadcast_back(g, x, axis, keepdims) * where, None, None, None, None, np.sum(g), None


sum_.with_keywords = sum_where


@adjoint(np.mean)
def mean(g, ans, x, axis=None, dtype=None, out=None, keepdims=False):
    return _broadcast_back(g / _reduced_size(x, axis), x, axis, keepdims)


def mean_where(g, ans, x, axis=None, dtype=None, out=None, keepdims=False, where=True):
    chosen = where * np.ones_like(x)    # the mean of the elements where= selects: each gets 1/count of g
    return _broadcast_back(g, x, axis, keepdims) * chosen / np.sum(chosen, axis=axis, keepdims=True)


mean.with_keywords = mean_where


@adjoint(np.prod)
def prod(g, ans, x, axis=None, dtype=None, out=None, keepdims=False):
    return _broadcast_back(g, x, axis, keepdims) * _prod_of_others(x, axis)


@adjoint(np.max, np.amax, np.min, np.amin)
def extremum(g, ans, x, axis=None, out=None, keepdims=False):
    hit = (x == _broadcast_back(ans, x, axis, keepdims)) * np.ones_like(x)
    return _broadcast_back(g, x, axis, keepdims) * hit / np.sum(hit, axis=axis, keepdims=True)


def extremum_where(g, ans, x, axis=None, out=None, keepdims=False, initial=None, where=True):
    # the elements where= selects that equal the result share g, with initial= where it equals the result
    hit = (x == _broadcast_back(ans, x, axis, keepdims)) * where * np.ones_like(x)
    tie = (ans == initial) * 1.0 if initial is not None else 0.0
    count = np.sum(hit, axis=axis, keepdims=keepdims) + tie
    return _broadcast_back(g / count, x, axis, keepdims) * hit, None, None, None, np.sum(g * tie / count), None


extremum.with_keywords = extremum_where


@adjoint(np.var)
def var(g, ans, x, axis=None, dtype=None, out=None, ddof=0, keepdims=False):
    centered = x - np.mean(x, axis=axis, keepdims=True)
    return _broadcast_back(g, x, axis, keepdims) * centered * (2.0 / (_reduced_size(x, axis) - ddof))


@adjoint(np.std)
def std(g, ans, x, axis=None, dtype=None, out=None, ddof=0, keepdims=False):
    centered = x - np.mean(x, axis=axis, keepdims=True)
    spread = _broadcast_back(ans, x, axis, keepdims)
    # where the spread is 0 every centered value is 0 too: the adjoint is 0 (a 0-d x, an axis of length 1)
    return _broadcast_back(g, x, axis, keepdims) * centered / ((_reduced_size(x, axis) - ddof) * (spread + (spread == 0)))


@adjoint(np.nanvar, scalar="without_axis", sequence_argument=True)
def nanvar(g, ans, x, axis=None, dtype=None, out=None, ddof=0, keepdims=False):     # the NaNs skipped get none
    present = ~np.isnan(x)
    count = np.sum(present * np.ones_like(x), axis=axis, keepdims=True)        # in x's dtype
    kept = np.where(present, x, 0.0)
    centered = np.where(present, x - np.sum(kept, axis=axis, keepdims=True) / count, 0.0)
    return _broadcast_back(g, x, axis, keepdims) * centered * (2.0 / (count - ddof))


@adjoint(np.cumsum)
def cumsum(g, ans, x, axis=None, dtype=None, out=None):
    return _cumsum_adjoint(g, x, axis)


@adjoint(np.trace)
def trace(g, ans, x, offset=0, axis1=0, axis2=1):
    return _trace_adjoint(g, x, offset, axis1, axis2)


# ---- shape


@adjoint(np.reshape)
def reshape(g, ans, x, shape, order="C"):
    return np.reshape(g, np.shape(x), order=_memory_order(x, order))


@adjoint(np.ravel)
def ravel(g, ans, x, order="C"):
    return np.reshape(g, np.shape(x), order=_memory_order(x, order))


@adjoint(np.expand_dims)
def expand_dims(g, ans, x, axis):
    return np.reshape(g, np.shape(x))


@adjoint(np.squeeze)
def squeeze(g, ans, x, axis=None):
    return np.reshape(g, np.shape(x))


@adjoint(np.atleast_1d, np.atleast_2d)
def atleast(g, ans, x):
    return np.reshape(g, np.shape(x))


@adjoint(np.transpose)
def transpose(g, ans, x, axes=None):
    if axes is None:
        return np.transpose(g)
    # axes may be negative (-1 is the last): the inverse permutation of the axes as non-negative ones; a tuple
    # of ints (Dask takes no array of axes)
    return np.transpose(g, tuple(int(k) for k in np.argsort(np.mod(axes, np.ndim(x)))))


@adjoint(np.swapaxes)
def swapaxes(g, ans, x, axis1, axis2):
    return np.swapaxes(g, axis1, axis2)


@adjoint(np.moveaxis)
def moveaxis(g, ans, x, source, destination):
    return np.moveaxis(g, destination, source)


@adjoint(np.broadcast_to)
def broadcast_to(g, ans, x, shape):
    return _unbroadcast(g, x)


@adjoint(np.flip)
def flip(g, ans, x, axis=None):
    return np.flip(g, axis)


@adjoint(np.concatenate)
def concatenate(g, ans, arrays, axis=0):
    return _unconcatenate(g, arrays, axis)


@adjoint(np.stack)
def stack(g, ans, arrays, axis=0):
    return np.moveaxis(g, axis, 0)


@adjoint(np.hstack)
def hstack(g, ans, arrays):
    return _unstack_joined(g, arrays, 0 if np.ndim(arrays[0]) <= 1 else 1, np.atleast_1d)


@adjoint(np.vstack)
def vstack(g, ans, arrays):
    return _unstack_joined(g, arrays, 0, np.atleast_2d)


@adjoint(np.tile)
def tile(g, ans, x, reps):
    return _untile(g, x, reps)


@adjoint(np.repeat)
def repeat(g, ans, x, repeats, axis=None):
    return _unrepeat(g, x, repeats, axis)


@adjoint(np.diag)
def diag(g, ans, x, k=0):
    return _diag_adjoint(g, x, k)


# ---- constructors and conversions


@adjoint(np.asarray, np.copy)
def array(g, ans, x, dtype=None):
    return g


@adjoint(np.array)
def array_made(g, ans, x, dtype=None, copy=True, order="K", subok=False, ndmin=0):
    # (ndmin= may add leading axes of length 1: the adjoint has x's shape again)
    return g if ndmin == 0 else np.reshape(g, np.shape(x))


# ---- conversions that change nothing a derivative sees (the values stay; the memory layout or subclass may not)

@adjoint(np.require)
def require(g, ans, a, dtype=None, requirements=None):
    return g


@adjoint(np.asanyarray, np.ascontiguousarray, np.asfortranarray, np.asarray_chkfinite)
def as_array(g, ans, a, dtype=None, order=None):
    return g


@adjoint(np.astype)
def astype(g, ans, x, dtype):
    return np.asarray(g).astype(np.result_type(x))


@adjoint(np.linspace)
def linspace(g, ans, start, stop, num=50, endpoint=True):
    # the samples along the first axis; start and stop may be arrays (the samples' other axes)
    fraction = np.reshape(np.linspace(0.0, 1.0, num, endpoint), (-1,) + (1,) * (np.ndim(ans) - 1))
    return _unbroadcast(np.sum(g * (1.0 - fraction), axis=0), start), _unbroadcast(np.sum(g * fraction, axis=0), stop)


@adjoint(np.arange)
def arange(g, ans, start, stop=None, step=1):
    # np.arange(stop) alone: its values do not depend on stop; the length never has a derivative
    return 0.0 * np.sum(g) if stop is None else np.sum(g), 0.0 * np.sum(g), np.sum(g * np.arange(np.size(ans)))


@adjoint(np.full)
def full(g, ans, shape, fill_value, dtype=None):
    return None, np.sum(g)


@adjoint(np.full_like)
def full_like(g, ans, x, fill_value, dtype=None):
    return 0.0 * g, np.sum(g)           # x gives only its shape


elementwise(np.where, np.clip)

# ---- forward mode: the functions above that are not elementwise

linear(np.sum, np.mean, np.reshape, np.ravel, np.expand_dims, np.squeeze, np.atleast_1d, np.atleast_2d,
       np.transpose, np.swapaxes, np.moveaxis, np.broadcast_to, np.flip, np.cumsum, np.trace, np.tile, np.repeat,
       np.diag, np.array, np.asarray, np.copy, np.astype, np.concatenate, np.stack, np.hstack, np.vstack,
       np.require, np.asanyarray, np.ascontiguousarray, np.asfortranarray, np.asarray_chkfinite)
linear(np.full, argnums=(1,))


@tangent(np.reshape)                    # after linear(): the tangent reads x's elements in x's order
def reshape_tangent(t, ans, x, shape, order="C"):
    return np.reshape(t, shape, order=_memory_order(x, order)), None


@tangent(np.ravel)
def ravel_tangent(t, ans, x, order="C"):
    return (np.ravel(t, order=_memory_order(x, order)),)


@tangent(np.full_like)
def full_like_tangent(t, ans, x, fill_value, dtype=None):
    return 0.0 * ans, np.full_like(ans, t)


@tangent(np.arange)
def arange_tangent(t, ans, start, stop=None, step=1):
    return t * np.ones(np.size(ans)) if stop is not None else 0.0 * ans, 0.0 * ans, t * np.arange(np.size(ans))


@tangent(np.linspace)
def linspace_tangent(t, ans, start, stop, num=50, endpoint=True):
    fraction = np.reshape(np.linspace(0.0, 1.0, num, endpoint), (-1,) + (1,) * (np.ndim(ans) - 1))
    return t * (1.0 - fraction), t * fraction


@tangent(np.prod)
def prod_tangent(t, ans, x, axis=None, dtype=None, out=None, keepdims=False):
    return np.sum(t * _prod_of_others(x, axis), axis=axis, keepdims=keepdims)


@tangent(np.max, np.amax, np.min, np.amin)
def extremum_tangent(t, ans, x, axis=None, out=None, keepdims=False):
    hit = (x == _broadcast_back(ans, x, axis, keepdims)) * np.ones_like(x)
    return np.sum(t * hit, axis=axis, keepdims=keepdims) / np.sum(hit, axis=axis, keepdims=keepdims)


def extremum_where_tangent(t, ans, x, axis=None, out=None, keepdims=False, initial=None, where=True):
    hit = (x == _broadcast_back(ans, x, axis, keepdims)) * where * np.ones_like(x)
    tie = (ans == initial) * 1.0 if initial is not None else 0.0
    count = np.sum(hit, axis=axis, keepdims=keepdims) + tie
    return np.sum(t * hit, axis=axis, keepdims=keepdims) / count, None, None, None, t * tie / count, None


extremum_tangent.with_keywords = extremum_where_tangent


@tangent(np.var)
def var_tangent(t, ans, x, axis=None, dtype=None, out=None, ddof=0, keepdims=False):
    centered = x - np.mean(x, axis=axis, keepdims=True)
    return np.sum(centered * t, axis=axis, keepdims=keepdims) * (2.0 / (_reduced_size(x, axis) - ddof))


@tangent(np.nanvar)
def nanvar_tangent(t, ans, x, axis=None, dtype=None, out=None, ddof=0, keepdims=False):
    present = ~np.isnan(x)
    count = np.sum(present * np.ones_like(x), axis=axis, keepdims=True)        # in x's dtype
    kept = np.where(present, x, 0.0)
    centered = np.where(present, x - np.sum(kept, axis=axis, keepdims=True) / count, 0.0)
    spread = np.sum(np.where(present, centered * t, 0.0), axis=axis, keepdims=keepdims)
    return spread * (2.0 / (np.sum(present * np.ones_like(x), axis=axis, keepdims=keepdims) - ddof))


@tangent(np.std)
def std_tangent(t, ans, x, axis=None, dtype=None, out=None, ddof=0, keepdims=False):
    centered = x - np.mean(x, axis=axis, keepdims=True)
    return np.sum(centered * t, axis=axis, keepdims=keepdims) / ((_reduced_size(x, axis) - ddof) * (ans + (ans == 0)))

nondifferentiable(
    np.sign, np.floor, np.ceil, np.round, np.rint, np.trunc, np.fix, np.floor_divide, np.isnan, np.isinf, np.isfinite,
    np.argmax, np.argmin, np.argsort, np.nonzero, np.count_nonzero,
    np.any, np.all, np.shape, np.ndim, np.size, np.zeros, np.ones, np.empty, np.zeros_like, np.ones_like,
    np.empty_like, np.eye, np.identity, np.greater, np.greater_equal, np.less,
    np.less_equal, np.equal, np.not_equal, np.logical_and, np.logical_or, np.logical_not, np.logical_xor,
    np.searchsorted, np.digitize, np.isclose, np.allclose, np.array_equal,
    np.result_type, np.promote_types, np.can_cast, np.iscomplexobj, np.isrealobj, np.isscalar, np.broadcast_shapes,
)


# ---- batching (s2s.vmap): ufuncs need no rule (their arguments broadcast along the batch axis, lined up); a
# reduction's or shape function's axes move past the batch axis (rules/batching.py's _batched_axis); the rest take
# the batch as the stack NumPy already handles

from s2s.rules.batching import _batched_axis, _batched_permutation, _example_ndim, _lined_up, _squeezed_axes  # noqa: E402
from s2s.rules.registry import batching  # noqa: E402


@batching(np.where)
def where_batched(axes, condition, x=None, y=None):
    if x is None:
        return NotImplemented           # np.where(c): the indices, a different number per example
    ndim = max(_example_ndim(condition, axes[0]), _example_ndim(x, axes[1]), _example_ndim(y, axes[2]))
    return np.where(_lined_up(condition, axes[0], ndim), _lined_up(x, axes[1], ndim), _lined_up(y, axes[2], ndim)), 0


@batching(np.clip)
def clip_batched(axes, x, a_min=None, a_max=None):
    ndim = max(_example_ndim(x, axes[0]), _example_ndim(a_min, axes[1]), _example_ndim(a_max, axes[2]))
    return np.clip(_lined_up(x, axes[0], ndim), _lined_up(a_min, axes[1], ndim), _lined_up(a_max, axes[2], ndim)), 0


@batching(np.sum)
def sum_batched(axes, x, axis=None, dtype=None, out=None, keepdims=False):
    return np.sum(x, axis=_batched_axis(axis, np.ndim(x)), dtype=dtype, keepdims=keepdims), 0


@batching(np.mean)
def mean_batched(axes, x, axis=None, dtype=None, out=None, keepdims=False):
    return np.mean(x, axis=_batched_axis(axis, np.ndim(x)), dtype=dtype, keepdims=keepdims), 0


@batching(np.prod)
def prod_batched(axes, x, axis=None, dtype=None, out=None, keepdims=False):
    return np.prod(x, axis=_batched_axis(axis, np.ndim(x)), dtype=dtype, keepdims=keepdims), 0


@batching(np.max, np.amax)
def max_batched(axes, x, axis=None, out=None, keepdims=False):
    return np.max(x, axis=_batched_axis(axis, np.ndim(x)), keepdims=keepdims), 0


@batching(np.min, np.amin)
def min_batched(axes, x, axis=None, out=None, keepdims=False):
    return np.min(x, axis=_batched_axis(axis, np.ndim(x)), keepdims=keepdims), 0


@batching(np.any)
def any_batched(axes, x, axis=None, out=None, keepdims=False):
    return np.any(x, axis=_batched_axis(axis, np.ndim(x)), keepdims=keepdims), 0


@batching(np.all)
def all_batched(axes, x, axis=None, out=None, keepdims=False):
    return np.all(x, axis=_batched_axis(axis, np.ndim(x)), keepdims=keepdims), 0


@batching(np.var)
def var_batched(axes, x, axis=None, dtype=None, out=None, ddof=0, keepdims=False):
    return np.var(x, axis=_batched_axis(axis, np.ndim(x)), dtype=dtype, ddof=ddof, keepdims=keepdims), 0


@batching(np.std)
def std_batched(axes, x, axis=None, dtype=None, out=None, ddof=0, keepdims=False):
    return np.std(x, axis=_batched_axis(axis, np.ndim(x)), dtype=dtype, ddof=ddof, keepdims=keepdims), 0


@batching(np.argmax)
def argmax_batched(axes, x, axis=None, out=None, keepdims=False):
    if axis is None and not keepdims:   # an index into the example raveled
        return np.argmax(np.reshape(x, (np.shape(x)[0], -1)), axis=1), 0
    if axis is None:
        return NotImplemented
    return np.argmax(x, axis=_batched_axis(axis, np.ndim(x)), keepdims=keepdims), 0


@batching(np.argmin)
def argmin_batched(axes, x, axis=None, out=None, keepdims=False):
    if axis is None and not keepdims:
        return np.argmin(np.reshape(x, (np.shape(x)[0], -1)), axis=1), 0
    if axis is None:
        return NotImplemented
    return np.argmin(x, axis=_batched_axis(axis, np.ndim(x)), keepdims=keepdims), 0


@batching(np.cumsum)
def cumsum_batched(axes, x, axis=None, dtype=None, out=None):
    if axis is None:                    # over the example raveled
        return np.cumsum(np.reshape(x, (np.shape(x)[0], -1)), axis=1, dtype=dtype), 0
    return np.cumsum(x, axis=_batched_axis(axis, np.ndim(x)), dtype=dtype), 0


@batching(np.cumprod)
def cumprod_batched(axes, x, axis=None, dtype=None, out=None):
    if axis is None:
        return np.cumprod(np.reshape(x, (np.shape(x)[0], -1)), axis=1, dtype=dtype), 0
    return np.cumprod(x, axis=_batched_axis(axis, np.ndim(x)), dtype=dtype), 0


@batching(np.trace)
def trace_batched(axes, x, offset=0, axis1=0, axis2=1):
    return np.trace(x, offset, _batched_axis(axis1, np.ndim(x)), _batched_axis(axis2, np.ndim(x))), 0


@batching(np.reshape)
def reshape_batched(axes, x, shape, order="C", batch_size=None):
    if axes[1] is not None:
        return NotImplemented
    if isinstance(shape, tuple):
        return np.reshape(x, (batch_size,) + shape, order=order), 0
    return np.reshape(x, (batch_size, shape), order=order), 0


@batching(np.ravel)
def ravel_batched(axes, x, order="C", batch_size=None):
    return np.reshape(x, (batch_size, -1), order=order), 0


@batching(np.expand_dims)
def expand_dims_batched(axes, x, axis):
    return np.expand_dims(x, _batched_axis(axis, np.ndim(x) + 1)), 0


@batching(np.squeeze)
def squeeze_batched(axes, x, axis=None):
    if axis is None:                    # every axis of length 1 but the batch's
        return np.squeeze(x, _squeezed_axes(np.shape(x))), 0
    return np.squeeze(x, _batched_axis(axis, np.ndim(x))), 0


@batching(np.atleast_1d)
def atleast_1d_batched(axes, x):
    if np.ndim(x) == 1:
        return x[:, None], 0
    return x, 0


@batching(np.atleast_2d)
def atleast_2d_batched(axes, x):
    if np.ndim(x) == 1:
        return x[:, None, None], 0
    if np.ndim(x) == 2:
        return x[:, None, :], 0
    return x, 0


@batching(np.transpose)
def transpose_batched(batch_axes, x, axes=None):       # (np.transpose's own argument is named axes)
    return np.transpose(x, _batched_permutation(axes, np.ndim(x))), 0


@batching(np.swapaxes)
def swapaxes_batched(axes, x, axis1, axis2):
    return np.swapaxes(x, _batched_axis(axis1, np.ndim(x)), _batched_axis(axis2, np.ndim(x))), 0


@batching(np.moveaxis)
def moveaxis_batched(axes, x, source, destination):
    return np.moveaxis(x, _batched_axis(source, np.ndim(x)), _batched_axis(destination, np.ndim(x))), 0


@batching(np.broadcast_to)
def broadcast_to_batched(axes, x, shape, batch_size=None):
    if axes[1] is not None:
        return NotImplemented
    if not isinstance(shape, tuple):
        shape = (shape,)
    return np.broadcast_to(_lined_up(x, 0, len(shape)), (batch_size,) + shape), 0


@batching(np.flip)
def flip_batched(axes, x, axis=None):
    return np.flip(x, _batched_axis(axis, np.ndim(x))), 0


@batching(np.concatenate)
def concatenate_batched(axes, arrays, axis=0):
    if axis is None:
        return NotImplemented
    return np.concatenate(arrays, axis=_batched_axis(axis, np.ndim(arrays[0]))), 0


@batching(np.stack)
def stack_batched(axes, arrays, axis=0):
    return np.stack(arrays, axis=_batched_axis(axis, np.ndim(arrays[0]) + 1)), 0


@batching(np.hstack)
def hstack_batched(axes, arrays):
    if np.ndim(arrays[0]) <= 2:         # rows: one after the other
        return np.concatenate([_lined_up(a, 0, 1) for a in arrays], axis=1), 0
    return np.concatenate(arrays, axis=2), 0


@batching(np.vstack)
def vstack_batched(axes, arrays):
    if np.ndim(arrays[0]) == 1:
        return np.stack(arrays, axis=1), 0
    if np.ndim(arrays[0]) == 2:
        return np.stack(arrays, axis=1), 0
    return np.concatenate(arrays, axis=1), 0


@batching(np.tile)
def tile_batched(axes, x, reps):
    if axes[1] is not None:
        return NotImplemented
    if not isinstance(reps, tuple):
        reps = (reps,)
    if len(reps) < np.ndim(x) - 1:
        reps = (1,) * (np.ndim(x) - 1 - len(reps)) + reps
    if len(reps) > np.ndim(x) - 1:
        x = _lined_up(x, 0, len(reps))
    return np.tile(x, (1,) + reps), 0


@batching(np.repeat)
def repeat_batched(axes, x, repeats, axis=None):
    if axes[1] is not None:
        return NotImplemented
    if axis is None:
        return np.repeat(np.reshape(x, (np.shape(x)[0], -1)), repeats, axis=1), 0
    return np.repeat(x, repeats, axis=_batched_axis(axis, np.ndim(x))), 0


@batching(np.array, np.asarray)
def array_batched(axes, x, dtype=None):
    if isinstance(axes[0], tuple):      # a list of the example's numbers (or arrays): stacked after the batch
        return np.asarray(np.stack(x, axis=1), dtype=dtype), 0
    return np.asarray(x, dtype=dtype), 0


@batching(np.copy)
def copy_batched(axes, x):
    return np.copy(x), 0


@batching(np.astype)
def astype_batched(axes, x, dtype):
    return np.astype(x, dtype), 0


@batching(np.zeros_like)
def zeros_like_batched(axes, x, dtype=None):
    return np.zeros_like(x, dtype=dtype), 0


@batching(np.ones_like)
def ones_like_batched(axes, x, dtype=None):
    return np.ones_like(x, dtype=dtype), 0


@batching(np.full_like)
def full_like_batched(axes, x, fill_value, dtype=None):
    ndim = _example_ndim(x, axes[0])
    if axes[0] is None:
        return np.full((np.shape(fill_value)[0],) + np.shape(x), _lined_up(fill_value, 0, ndim), dtype=dtype), 0
    return np.full(np.shape(x), _lined_up(fill_value, axes[1], ndim), dtype=dtype), 0


@batching(np.diag)
def diag_batched(axes, x, k=0):
    if np.ndim(x) == 2:                 # a vector per example, a matrix each: a loop over the batch
        return NotImplemented
    return np.diagonal(x, k, 1, 2), 0


# ---- batching of random draws: each example draws its own numbers, from the same distribution (the parameters the
# same for every example; parameters that differ between examples: a loop over the batch)

from s2s.frontend.desugar.helpers import call_method  # noqa: E402
from s2s.rules.batching import _drawn  # noqa: E402


@batching(np.random.randn)
def randn_batched(axes, d0=None, d1=None, d2=None, d3=None, batch_size=None):
    if d0 is None:
        return np.random.randn(batch_size), 0
    if d1 is None:
        return np.random.randn(batch_size, d0), 0
    if d2 is None:
        return np.random.randn(batch_size, d0, d1), 0
    if d3 is None:
        return np.random.randn(batch_size, d0, d1, d2), 0
    return np.random.randn(batch_size, d0, d1, d2, d3), 0


@batching(np.random.rand)
def rand_batched(axes, d0=None, d1=None, d2=None, d3=None, batch_size=None):
    if d0 is None:
        return np.random.rand(batch_size), 0
    if d1 is None:
        return np.random.rand(batch_size, d0), 0
    if d2 is None:
        return np.random.rand(batch_size, d0, d1), 0
    if d3 is None:
        return np.random.rand(batch_size, d0, d1, d2), 0
    return np.random.rand(batch_size, d0, d1, d2, d3), 0


@batching(np.random.normal)
def normal_batched(axes, loc=0.0, scale=1.0, size=None, batch_size=None):
    if axes[0] is not None or axes[1] is not None:
        return NotImplemented
    return np.random.normal(loc, scale, size=_drawn(size, batch_size, loc, scale)), 0


@batching(np.random.uniform)
def uniform_batched(axes, low=0.0, high=1.0, size=None, batch_size=None):
    if axes[0] is not None or axes[1] is not None:
        return NotImplemented
    return np.random.uniform(low, high, size=_drawn(size, batch_size, low, high)), 0


@batching(np.random.standard_normal)
def standard_normal_batched(axes, size=None, batch_size=None):
    return np.random.standard_normal(size=_drawn(size, batch_size)), 0


@batching(np.random.random, np.random.random_sample)
def random_batched(axes, size=None, batch_size=None):
    return np.random.random(size=_drawn(size, batch_size)), 0


@batching(call_method)
def generator_draw_batched(axes, obj, name, a=None, b=None, size=None, batch_size=None):
    """rng.normal(...), rng.uniform(...), rng.standard_normal(...), rng.random(...) of a numpy.random.Generator."""
    if axes[0] is not None or axes[2] is not None or axes[3] is not None:
        return NotImplemented
    if name == "normal" or name == "uniform":
        a = 0.0 if a is None else a
        b = 1.0 if b is None else b
        return call_method(obj, name, a, b, size=_drawn(size, batch_size, a, b)), 0
    if name == "standard_normal" or name == "random":
        if size is None:
            size = a
        return call_method(obj, name, size=_drawn(size, batch_size)), 0
    return NotImplemented


# ---------------------------------------------------------------- facts (rules/record.py) of NumPy's functions

from s2s.rules.registry import declare  # noqa: E402

# constructors: an array whatever gives its shape (`np.zeros((n, m))`, `np.empty(x.shape)`)
declare(np.zeros, np.ones, np.empty, np.full, np.eye, np.identity, np.arange, np.linspace, np.logspace,
        constructor=True)
# what decides a result's dtype (s2s/analysis/dtypes.py), and where a dtype argument goes positionally
declare(np.array, np.asarray, np.asanyarray, np.ascontiguousarray, dtype_rule="convert", dtype_at=1)
declare(np.astype, dtype_rule="cast", dtype_at=1)
declare(np.zeros, np.ones, np.empty, dtype_rule="made", dtype_at=1)
declare(np.full, dtype_rule="fill", dtype_at=2)
declare(np.zeros_like, np.ones_like, np.empty_like, dtype_rule="like", dtype_at=1)
declare(np.full_like, dtype_rule="like", dtype_at=2)
declare(np.arange, dtype_rule="promoted")
declare(np.copy, np.reshape, np.transpose, np.ravel, np.squeeze, np.expand_dims, np.atleast_1d, np.atleast_2d,
        np.atleast_3d, np.swapaxes, np.moveaxis, np.flip, np.fliplr, np.flipud, np.roll, np.tile, np.repeat,
        np.broadcast_to, np.diag, np.diagonal, np.triu, np.tril, dtype_rule="same")
declare(np.concatenate, np.stack, np.vstack, np.hstack, np.column_stack, dtype_rule="joined")
# numbers: of arrays of any shape (np.size, np.ndim); without an axis, of the whole array (a full reduction; not
# np.trace nor np.linalg.det: of a stack of matrices, or a 3-D array, they give an array)
declare(np.size, np.ndim, scalar="always")
declare(np.sum, np.mean, np.prod, np.max, np.min, np.amax, np.amin, np.var, np.std, np.linalg.norm,
        scalar="without_axis")
# np.shape: a tuple of ints whose length the kinds do not know (`x.shape + (2,)`)
declare(np.shape, kind=lambda op, kinds: ("list*", "scalar"))
# the shape and dtype of the result, from the arguments' (s2s/analysis/shapes.py's rules, by name)
declare(np.size, shape_rule="size")
declare(np.broadcast_to, shape_rule="broadcast_to")
declare(np.expand_dims, shape_rule="expand_dims")
declare(np.zeros_like, np.ones_like, np.empty_like, shape_rule="like")
declare(np.asarray, np.asanyarray, np.ascontiguousarray, np.array, shape_rule="as_array")
declare(np.copy, shape_rule="copy")
declare(np.concatenate, np.stack, np.hstack, np.vstack, shape_rule="join")
declare(np.astype, shape_rule="cast")
declare(np.where, shape_rule="where")
declare(np.sum, np.mean, np.prod, np.max, np.min, np.amax, np.amin, shape_rule="reduction")
declare(np.dot, shape_rule="dot")
declare(np.transpose, shape_rule="transpose")
# sizes the shapes decide (s2s/analysis/sizes.py's rules, by name): what reads a shape, what makes an array of one
declare(np.shape, size_rule="shape")
declare(np.size, size_rule="size")
declare(np.ndim, size_rule="ndim")
declare(np.zeros, np.ones, np.empty, size_rule="filled")
declare(np.full, size_rule="full")
declare(np.arange, size_rule="arange")
declare(np.linspace, size_rule="linspace")
declare(np.eye, np.identity, size_rule="eye")
declare(np.diag, size_rule="diag")
declare(np.diagonal, size_rule="diagonal")
declare(np.reshape, size_rule="reshape")
# an adjoint is zero where a branch is not taken or a side loses: a contribution must not turn it into NaN
declare(np.where, np.maximum, np.minimum, np.fmax, np.fmin, np.clip, np.absolute, np.fabs, masking=True)
# a local derivative infinite at finite arguments (rules/record.py's singular)
declare(np.sqrt, np.cbrt, np.log, np.log2, np.log10, np.log1p, np.reciprocal, np.arcsin, np.arccos, np.arctanh,
        np.arccosh, np.tan, np.hypot, np.arctan2, singular="always")
declare(np.power, np.float_power, singular="power")
declare(np.divide, np.true_divide, singular="quotient")
# memory: what makes new arrays, what reads without keeping a reference, what reads only a shape, what may be a view
declare(np.zeros, np.ones, np.empty, np.full, np.zeros_like, np.ones_like, np.empty_like, np.full_like, np.array,
        np.copy, fresh=True, copies_reads=True)
declare(np.sum, np.mean, np.prod, np.dot, np.max, np.min, copies_reads=True)
declare(np.zeros, np.ones, np.empty, np.full, np.zeros_like, np.ones_like, np.empty_like, np.full_like, np.array,
        np.copy, np.arange, np.eye, np.identity, np.linspace, storage=True)
declare(np.shape, np.size, np.ndim, metadata=True, shape_reader=(0,))
declare(np.real, np.imag, np.real_if_close, view=True)
# (the functions s2s/ir/lower.py's _VIEWS lists, and einsum: `np.einsum("ij->ji", a)` is a view; any other NumPy
# function's array is new memory, s2s/passes/fresh_outputs.py)
declare(np.reshape, np.transpose, np.ravel, np.squeeze, np.expand_dims, np.swapaxes, np.moveaxis, np.broadcast_to,
        np.atleast_1d, np.atleast_2d, np.atleast_3d, np.asarray, np.diagonal, np.matrix_transpose, np.permute_dims,
        np.flip, np.fliplr, np.flipud, np.rot90, np.rollaxis, np.split, np.hsplit, np.vsplit, np.dsplit,
        np.array_split, np.unstack, np.broadcast_arrays, np.asanyarray, np.require, np.ascontiguousarray,
        np.asfortranarray, np.asarray_chkfinite, np.diag, np.trim_zeros, np.nan_to_num, np.meshgrid, np.einsum,
        np.lib.stride_tricks.sliding_window_view, np.lib.stride_tricks.as_strided, view=True)
declare(np.zeros_like, zeros="like")
declare(np.zeros, zeros="made")
# the ufuncs that are an operator: written in place into either argument (commutative) or the first
declare(np.add, np.multiply, commutative=True)
declare(np.subtract, np.divide, commutative=False)
declare(np.add, algebra="add")
declare(np.add, np.subtract, np.multiply, np.power, keeps_floats=True)
declare(np.isnan, np.isinf, np.isfinite, np.signbit, np.sign, no_out=True)
declare(np.outer, product="outer")
# their first argument is read as one array (a list of arrays becomes np.array(list): s2s/passes/sequences.py)
declare(np.sum, np.mean, np.prod, np.max, np.min, np.amax, np.amin, np.var, np.std, np.cumsum, np.cumprod, np.median,
        np.average, np.linalg.norm, np.dot, np.matmul, np.ravel, np.reshape, np.transpose, np.trace,
        sequence_argument=True)
# complex arguments: the real rules hold (holomorphic, or linear and structural); what the result is
declare(np.add, np.subtract, np.multiply, np.divide, np.true_divide, np.negative, np.positive, np.power, np.square,
        np.reciprocal, np.exp, np.exp2, np.expm1, np.log, np.log2, np.log10, np.log1p, np.sqrt, np.sin, np.cos,
        np.tan, np.arcsin, np.arccos, np.arctan, np.sinh, np.cosh, np.tanh, np.arcsinh, np.arccosh, np.arctanh,
        np.sum, np.mean, np.prod, np.cumsum, np.trace, np.reshape, np.ravel, np.expand_dims, np.squeeze,
        np.atleast_1d, np.atleast_2d, np.transpose, np.swapaxes, np.moveaxis, np.broadcast_to, np.flip,
        np.concatenate, np.stack, np.hstack, np.vstack, np.tile, np.repeat, np.diag, np.array, np.asarray, np.copy,
        np.astype, np.where, np.matmul, np.dot, np.tensordot, np.einsum, np.outer, np.inner, np.kron, np.diagonal,
        np.vdot, np.roll, np.fliplr, np.flipud, np.rot90, np.triu, np.tril, np.take, np.cumprod, holomorphic=True)
declare(np.absolute, np.real, np.imag, np.angle, np.linalg.norm, np.isfinite, np.isnan, np.isinf, np.isreal,
        np.iscomplex, np.iscomplexobj, np.isrealobj, np.shape, np.ndim, np.size, np.less, np.less_equal, np.greater,
        np.greater_equal, np.equal, np.not_equal, np.argmax, np.argmin, np.argsort, np.hypot, complex_result="real")
declare(np.roots, np.emath.sqrt, np.emath.log, np.emath.log2, np.emath.log10, np.emath.logn, np.emath.power,
        np.emath.arcsin, np.emath.arccos, np.emath.arctanh, complex_result="either")    # as the values decide
declare(np.sign, constant_on_reals=True)       # piecewise constant on reals, not on complex numbers: z / |z|
declare(np.eye, dtype_at=3)
declare(np.identity, dtype_at=1)
