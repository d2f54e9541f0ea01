"""Rules for the helpers that derivative code calls, so that a derivative can be differentiated again.

Forward mode over the code of a gradient (a Hessian-vector product, a second derivative) meets
these helpers; they are linear in the adjoint they spread, sum or move.
"""
import numpy as np

from s2s import runtime
from s2s.rules.registry import adjoint, linear, nondifferentiable, tangent
from s2s.runtime import _einsum_adjoint

linear(runtime._unbroadcast, runtime._expand, runtime._fill, runtime._broadcast_back, runtime._cumsum_adjoint,
       runtime._unconcatenate, runtime._unstack_joined, runtime._untile, runtime._unrepeat, runtime._diag_adjoint)
linear(runtime._scatter, argnums=(2,))
linear(runtime._spread, runtime._overwritten, runtime._item, runtime._fill_tree, runtime._masked_tangent)
# linear but where g is zero: there the contribution g * local is 0 and its tangent g_dot * local is not
linear(runtime._masked, applied=runtime._masked_tangent)
linear(runtime._written, argnums=(0,))


@adjoint(runtime._unbroadcast)
def unbroadcast_adjoint(c, ans, g, x, result=None):
    # (x and result give shapes only) g summed to x's shape (first spread to result's when given): c spread back to g's shape (reverse mode over
    # an adjoint's code: an autograd vjp rule transposed into forward mode, rules/autograd_primitives.py)
    if result is None:
        return c + np.zeros_like(g)         # (an array of g's own library: a Dask adjoint stays lazy)
    return runtime._unbroadcast(np.broadcast_to(c, np.shape(result)), g)


@tangent(runtime._add)
def add_tangent(t, ans, a, b):
    return t, t


# _add(own, _scatter(x, index, v)) written into own (s2s/passes/accumulate_items.py): linear in own and v together,
# differentiated as that sum when a derivative's code is differentiated again (it reads none of own's values)
# (x, the container read, is read for its length: no adjoint, 0.0)
@tangent(runtime._scatter_into)
def scatter_into_tangent(t, ans, own, x, index, v):
    return t, 0.0, None, runtime._scatter(x, index, t)


@adjoint(runtime._scatter_into)
def scatter_into_adjoint(g, ans, own, x, index, v):
    return g, 0.0, None, runtime._item(g, index)


linear(runtime._matmul_left, runtime._dot_left, argnums=(0, 2))
linear(runtime._matmul_right, runtime._dot_right, argnums=(0, 1))


@tangent(runtime._einsum_adjoint)
def einsum_adjoint(t, ans, subscripts, g, a, b, k):
    # linear in g and in the operand other than k; operand k gives only its shape
    return (None, _einsum_adjoint(subscripts, t, a, b, k),
            _einsum_adjoint(subscripts, g, t, b, k) if k == 1 else 0.0 * ans,
            _einsum_adjoint(subscripts, g, a, t, k) if k == 0 else 0.0 * ans)


nondifferentiable(runtime._seed, runtime._shaped_like, runtime._reduced_size, runtime._axes, runtime.zeros_like,
                  runtime._zeros_like_tree,
                  runtime.stack_new, runtime._unsupported, runtime.free_name, runtime.stop_gradient, runtime._reads_only)


# ---- the helpers of rules/helpers.py

from s2s.rules import helpers  # noqa: E402

# linear in the adjoint (or tangent) they move, sum or spread; the other arguments give shapes or positions
linear(helpers._undiagonal, helpers._trace_adjoint, helpers._diff_adjoint, helpers._gradient_adjoint,
       helpers._gradient_apply,
       helpers._quantile_adjoint, helpers._quantile_tangent, helpers._unsort, helpers._take_adjoint,
       helpers._take_along_axis_adjoint, helpers._unpad, helpers._unsplit, helpers._uncolumn_stack,
       helpers._unappend, helpers._select_adjoint, helpers._unsorted, helpers._sorted_like, helpers._unlisted, helpers._unpopped, helpers._listed_tangent,
       helpers._uninserted, helpers._inserted_item, helpers._placed,
       helpers._banded_transpose, helpers._band_of, helpers._leading, helpers._completed)
linear(helpers._einsum_call, argnums=(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10))
linear(helpers._dot_nd_left, argnums=(0, 2))
linear(helpers._dot_nd_right, argnums=(0, 1))
linear(helpers._banded_matmul, argnums=(0, 3))
nondifferentiable(helpers._einsum_parse, helpers._tensordot_axes, helpers._matrix_axes, helpers._norm_kind,
                  helpers._qr_mode, helpers._rollaxis_destination, helpers._quantile_weights,
                  helpers._sort_order, helpers._sorted_order, helpers._inserted_place, helpers._running_record, helpers._convolution_padding)


@tangent(helpers._cumprod_adjoint)
def cumprod_adjoint_tangent(t, ans, g, x, axis=None):       # linear in g
    return helpers._cumprod_adjoint(t, x, axis), helpers._cumprod_adjoint_in_x(g, x, t, axis), None


@tangent(helpers._cumprod_tangent)
def cumprod_tangent_tangent(t, ans, dx, x, axis=None):     # linear in dx; in x it is third order: not written
    return (helpers._cumprod_tangent(t, x, axis),)


@tangent(runtime._prod_of_others)
def prod_of_others_tangent(t, ans, x, axis=None):
    return helpers._prod_of_others_tangent(x, t, axis), None


# bilinear: in g and in the operand other than k (operand k gives only its shape, so its contribution is 0)

@tangent(helpers._tensordot_adjoint)
def tensordot_adjoint_tangent(t, ans, g, a, b, axes, k):
    return (helpers._tensordot_adjoint(t, a, b, axes, k),
            helpers._tensordot_adjoint(g, t, b, axes, k) if k == 1 else 0.0 * ans,
            helpers._tensordot_adjoint(g, a, t, axes, k) if k == 0 else 0.0 * ans, None, None)


@tangent(helpers._kron_adjoint)
def kron_adjoint_tangent(t, ans, g, a, b, k):
    return (helpers._kron_adjoint(t, a, b, k), helpers._kron_adjoint(g, t, b, k) if k == 1 else 0.0 * ans,
            helpers._kron_adjoint(g, a, t, k) if k == 0 else 0.0 * ans, None)


@tangent(helpers._einsum_arg_adjoint)
def einsum_arg_adjoint_tangent(t, ans, g, p, x0, x1=None, x2=None, x3=None, x4=None, x5=None, x6=None, x7=None, x8=None, x9=None, x10=None):
    return (helpers._einsum_arg_adjoint(t, p, x0, x1, x2, x3, x4, x5, x6, x7, x8, x9, x10), None,
            helpers._einsum_arg_adjoint(g, p, t, x1, x2, x3, x4, x5, x6, x7, x8, x9, x10) if p != 0 else 0.0 * ans,
            helpers._einsum_arg_adjoint(g, p, x0, t, x2, x3, x4, x5, x6, x7, x8, x9, x10) if p != 1 else 0.0 * ans,
            helpers._einsum_arg_adjoint(g, p, x0, x1, t, x3, x4, x5, x6, x7, x8, x9, x10) if p != 2 else 0.0 * ans,
            helpers._einsum_arg_adjoint(g, p, x0, x1, x2, t, x4, x5, x6, x7, x8, x9, x10) if p != 3 else 0.0 * ans,
            helpers._einsum_arg_adjoint(g, p, x0, x1, x2, x3, t, x5, x6, x7, x8, x9, x10) if p != 4 else 0.0 * ans,
            helpers._einsum_arg_adjoint(g, p, x0, x1, x2, x3, x4, t, x6, x7, x8, x9, x10) if p != 5 else 0.0 * ans,
            helpers._einsum_arg_adjoint(g, p, x0, x1, x2, x3, x4, x5, t, x7, x8, x9, x10) if p != 6 else 0.0 * ans,
            helpers._einsum_arg_adjoint(g, p, x0, x1, x2, x3, x4, x5, x6, t, x8, x9, x10) if p != 7 else 0.0 * ans,
            helpers._einsum_arg_adjoint(g, p, x0, x1, x2, x3, x4, x5, x6, x7, t, x9, x10) if p != 8 else 0.0 * ans,
            helpers._einsum_arg_adjoint(g, p, x0, x1, x2, x3, x4, x5, x6, x7, x8, t, x10) if p != 9 else 0.0 * ans,
            helpers._einsum_arg_adjoint(g, p, x0, x1, x2, x3, x4, x5, x6, x7, x8, x9, t) if p != 10 else 0.0 * ans)


# ---- batching (s2s.vmap) of the helpers derivative code calls: a gradient batched (per-example gradients)


from s2s.rules.batching import _batched_axis, _every, _example_ndim, _example_shape, _lined_up, _unbroadcast_rows  # noqa: E402
from s2s.rules.registry import batching  # noqa: E402


@batching(runtime._seed)
def seed_batched(axes, y):
    if np.ndim(y) != 1:                 # an example's output is not a number: the loop over the batch refuses it
        return NotImplemented
    return np.ones_like(y), 0


@batching(runtime.zeros_like)
def zeros_like_batched(axes, x):
    return np.zeros_like(x), 0


@batching(runtime.stop_gradient)
def stop_gradient_batched(axes, x):
    return runtime.stop_gradient(x), 0


@batching(runtime._masked)
def masked_batched(axes, contribution, g):
    ndim = max(_example_ndim(contribution, axes[0]), _example_ndim(g, axes[1]))
    lined = _lined_up(contribution, axes[0], ndim)      # as runtime._masked: a finite contribution as it is
    return np.where((_lined_up(g, axes[1], ndim) == 0) & ~np.isfinite(lined).all(), 0.0, lined), 0


@batching(runtime._reduced_size)
def reduced_size_batched(axes, x, axis=None):      # the same count for every example
    return runtime._reduced_size(x, _batched_axis(axis, np.ndim(x))), None


@batching(runtime._broadcast_back)
def broadcast_back_batched(axes, g, x, axis=None, keepdims=False, batch_size=None):
    if axes[0] is None:                 # the same adjoint for every example: x's shape alone decides
        return runtime._broadcast_back(g, x[0], axis, keepdims), None
    x = _every(x, axes[1], batch_size)
    return runtime._broadcast_back(g, x, _batched_axis(axis, np.ndim(x)), keepdims), 0


@batching(runtime._unbroadcast)
def unbroadcast_batched(axes, g, x, result=None, batch_size=None):
    if axes[0] is None:
        return NotImplemented
    if result is not None:
        g = np.broadcast_to(_lined_up(g, 0, _example_ndim(result, axes[2])), _every(result, axes[2], batch_size).shape)
    if axes[1] is None:
        return _unbroadcast_rows(g, np.shape(x)), 0
    return _unbroadcast_rows(g, np.shape(x)[1:]), 0


@batching(runtime._fill)
def fill_batched(axes, g, x, batch_size=None):
    if axes[0] is not None and _example_shape(np.shape(g), True) == _example_shape(np.shape(x), axes[1] is not None):
        return g, 0                     # already the shape of x (known when the batched code is made)
    x = _every(x, axes[1], batch_size)
    return runtime._fill(_lined_up(g, axes[0], np.ndim(x) - 1), x), 0


@batching(runtime._expand)
def expand_batched(axes, g, like, batch_size=None):
    like = _every(like, axes[1], batch_size)
    return runtime._expand(_lined_up(g, axes[0], np.ndim(like) - 1), like), 0


@batching(runtime._fill_tree)
def fill_tree_batched(axes, g, x, batch_size=None):
    if isinstance(x, (tuple, list, dict)) or axes[0] is None or isinstance(axes[0], tuple):
        return NotImplemented           # a container's: a loop over the batch
    if _example_shape(np.shape(g), True) == _example_shape(np.shape(x), axes[1] is not None):
        return g, 0
    x = _every(x, axes[1], batch_size)
    return runtime._fill(_lined_up(g, axes[0], np.ndim(x) - 1), x), 0


from s2s.rules.linear_algebra import _matmul_of_batch  # noqa: E402


@batching(runtime._matmul_left)
def matmul_left_batched(axes, g, a, b):         # a's adjoint in a @ b: g @ b.T, b.T a column for a vector b
    da, db = _example_ndim(a, axes[1]), _example_ndim(b, axes[2])
    if da == 1 and db == 1:
        return _lined_up(g, axes[0], 1) * b, 0
    if da == 2 and db == 1:
        return _lined_up(g, axes[0], 1)[..., :, None] * b[..., None, :], 0
    if da > 2 or db > 2:
        return NotImplemented
    return _matmul_of_batch((axes[0], axes[2]), g, np.swapaxes(b, -1, -2))


@batching(runtime._matmul_right)
def matmul_right_batched(axes, g, a, b):        # b's adjoint in a @ b: a.T @ g, a.T a column for a vector a
    da, db = _example_ndim(a, axes[1]), _example_ndim(b, axes[2])
    if da == 1 and db == 1:
        return _lined_up(g, axes[0], 1) * a, 0
    if da == 1 and db == 2:
        return a[..., :, None] * _lined_up(g, axes[0], 1)[..., None, :], 0
    if da > 2 or db > 2:
        return NotImplemented
    return _matmul_of_batch((axes[1], axes[0]), np.swapaxes(a, -1, -2), g)


# ---------------------------------------------------------------- facts (rules/record.py) of the IR's own operations

from s2s.rules.registry import declare  # noqa: E402

# what decides a result's dtype (s2s/analysis/dtypes.py); lists, tuples and dicts (a float put in one stays one)
declare(runtime.setitem, dtype_rule="same", writes_into=True)
declare(runtime.list_append, writes_into=True)
declare(runtime.make_list, runtime.make_tuple, dtype_rule="items")
declare(runtime.make_list, runtime.make_tuple, runtime.make_dict, runtime.list_append, runtime.concat, runtime.repeat,
        container=True)
# helpers of derivative code: the kind (array or number) of the argument whose shape they take
declare(runtime._unbroadcast, runtime._expand, runtime._fill, runtime._broadcast_back, runtime._matmul_left,
        runtime._dot_left, shaped_by=1)
declare(runtime._scatter, runtime._masked, runtime._masked_tangent, runtime.zeros_like, shaped_by=0)
declare(runtime._matmul_right, runtime._dot_right, shaped_by=2)
declare(runtime._diag_adjoint, size_rule="diag_adjoint")       # np.diag's adjoint: a shape of its arguments'
# memory: new arrays; storage a later result may be written into; what reads only a shape (positions)
declare(runtime.zeros_like, runtime._scatter, runtime._seed, fresh=True, copies_reads=True)
declare(runtime.setitem, fresh=True)
declare(runtime.make_list, runtime.make_dict, runtime.setitem, runtime.list_append, storage=True)
declare(runtime.zeros_like, zeros="like")
declare(runtime._zeros_like_tree, zeros="tree")
declare(runtime._add, algebra="add_items")
declare(runtime._scatter, scatter_into=runtime._scatter_into)
declare(runtime._scatter_into, effect=True, shape_reader=(1,))   # (writes into its first argument: never merged,
#   moved or dropped; reads x for its length)
declare(runtime._broadcast_back, runtime._expand, runtime._fill, shape_reader=(1,))
declare(runtime._unbroadcast, shape_reader=(1, 2))
declare(runtime._reduced_size, runtime.zeros_like, runtime._scatter, shape_reader=(0,))
