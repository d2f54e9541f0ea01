"""What the batching rules share (s2s.vmap; s2s/transforms/batching.py): templates that move an example's axis
argument past the batch axis and line batched arguments up, and the helpers batched code calls where a shape is
known only when it runs.

A batching rule sees each argument with the batch along its first axis (`axes[k] == 0`) or unbatched
(`axes[k] is None`); `np.ndim` of an argument whose shape is known folds when the batched code is made, so the
templates' branches fold away and the code reads as NumPy written for the batch (`np.sum(x, axis=1)`).
The rules themselves sit beside each family's derivative rules, under "# ---- batching".
"""
import numpy as np

from s2s.rules.registry import adjoint, batching, helper, linear, template
from s2s.runtime import _fill_tree, _item


# ---- the helpers batched code calls (copied into it, as derivative code's helpers are)

def _batch_repeat(x, n, dtype=None):
    """x, the same for every example, as a batch of n copies (its own memory)."""
    x = np.asarray(x, dtype=dtype)
    return np.broadcast_to(x, (n,) + np.shape(x)).copy()


def _batch_lift(x, ndim):
    """A batched x given singleton axes after its batch axis, until each example has ndim axes (so that it lines
    up with a wider argument of an elementwise function)."""
    shape = np.shape(x)
    return np.reshape(x, shape[:1] + (1,) * (ndim + 1 - len(shape)) + shape[1:])


def _batched_axis(axis, ndim):
    """An example's axis argument (an int, a tuple, or None: every axis) as the batched array's (ndim axes with
    the batch first): negative axes count from the end and stay."""
    if axis is None:
        return tuple(range(1, ndim)) if ndim != 2 else 1
    if isinstance(axis, tuple):
        return tuple(a + 1 if a >= 0 else a for a in axis)
    return axis + 1 if axis >= 0 else axis


def _batched_permutation(axes, ndim):
    """np.transpose's axes for one example (None: reversed) as the batched array's."""
    if axes is None:
        return (0,) + tuple(range(ndim - 1, 0, -1))
    return (0,) + tuple(a % (ndim - 1) + 1 for a in axes)


def _batched_subscripts(subscripts, batched):
    """np.einsum's subscripts for one example as the batch's: a letter the subscripts do not use, first in each
    batched operand and in the output."""
    if "->" in subscripts:
        inputs, output = subscripts.replace(" ", "").split("->")
    else:
        inputs = subscripts.replace(" ", "")
        letters = inputs.replace(",", "").replace(".", "")
        output = ("..." if "..." in inputs else "") + "".join(sorted(c for c in set(letters)
                                                                     if letters.count(c) == 1))
    used = set(subscripts)
    b = next(c for c in "nbzyxwvutsrqponmlkjihgfedcaZYXWVUTSRQPONMLKJIHGFEDCBA" if c not in used)
    parts = inputs.split(",")
    parts = [b + p if flag else p for p, flag in zip(parts, batched)]
    return ",".join(parts) + "->" + b + output


def _example_shape(shape, batched):
    """One example's shape, from a value's shape and whether it is batched."""
    return tuple(shape[1:]) if batched else tuple(shape)


def _unbroadcast_rows(g, shape):
    """The adjoint g (a batch) of values broadcast from one example's shape `shape`: summed over the axes
    broadcasting added or stretched, after the batch axis."""
    inner = np.shape(g)[1:]
    if inner == tuple(shape):
        return g
    extra = len(inner) - len(shape)
    if extra > 0:
        g = np.sum(g, axis=tuple(range(1, 1 + extra)))
    elif extra < 0:
        g = np.reshape(g, np.shape(g)[:1] + (1,) * -extra + np.shape(g)[1:])
    axes = tuple(1 + i for i, k in enumerate(np.shape(g)[1:]) if k != 1 and shape[i] == 1)
    if axes:
        g = np.sum(g, axis=axes, keepdims=True)
    return g


def _squeezed_axes(shape):
    """The axes of length 1 of a batch of this shape, but the batch's own."""
    return tuple(k for k, n in enumerate(shape) if n == 1 and k > 0)


helper(_squeezed_axes, fold=True)
for _made in (_batch_repeat, _batch_lift, _unbroadcast_rows):
    helper(_made)
helper(_batched_axis, fold=True)
helper(_batched_permutation, fold=True)
helper(_batched_subscripts, fold=True)
helper(_example_shape, fold=True)
linear(_batch_lift, _batch_repeat, _unbroadcast_rows)


@adjoint(_batch_lift)
def _batch_lift_adjoint(g, ans, x, ndim):
    return np.reshape(g, np.shape(x)), None


@adjoint(_batch_repeat)
def _batch_repeat_adjoint(g, ans, x, n, dtype=None):
    return np.sum(g, axis=0), None, None


@adjoint(_unbroadcast_rows)
def _unbroadcast_rows_adjoint(g, ans, grads, shape):
    return np.broadcast_to(g, np.shape(grads)), None


# ---- templates the rules share (inlined into them)

@template
def _lined_up(x, axis, ndim):
    """x with the batch first and ndim axes per example (an unbatched x as it is: it broadcasts from the right)."""
    if axis is None:
        return x
    extra = ndim - (np.ndim(x) - 1)
    if extra <= 0:
        return x
    return x[(slice(None),) + (None,) * extra]


@template
def _example_ndim(x, axis):
    """How many axes one example of x has."""
    if axis is None:
        return np.ndim(x)
    return np.ndim(x) - 1


@template
def _leading(index):
    """An index of one example as the batch's: every example's rows first."""
    if isinstance(index, tuple):
        return (slice(None),) + index
    return (slice(None), index)


@template
def _rows(n, ndim):
    """The batch's row numbers, shaped to broadcast against an index array of ndim axes per example."""
    if ndim == 0:
        return np.arange(n)
    return np.reshape(np.arange(n), (n,) + (1,) * ndim)


@template
def _every(x, axis, n):
    """x as a batch: as it is if it is one, else repeated for each of the n examples (a view)."""
    if axis is None:
        return np.broadcast_to(x, (n,) + np.shape(x))
    return x


# ---- batching rules of the helpers above (a batch of batches: s2s.vmap of s2s.vmap)

@batching(_batch_lift)
def _batch_lift_batched(axes, x, ndim):
    if axes[1] is not None:
        return NotImplemented
    if axes[0] is None:
        return _batch_lift(x, ndim), None
    return np.reshape(x, np.shape(x)[:2] + (1,) * (ndim + 2 - np.ndim(x)) + np.shape(x)[2:]), 0


@batching(_batch_repeat)
def _batch_repeat_batched(axes, x, n, dtype=None):
    if axes[1] is not None:
        return NotImplemented
    if axes[0] is None:
        return _batch_repeat(x, n, dtype), None
    return np.repeat(np.asarray(x, dtype=dtype)[:, None], n, axis=1), 0


# ---- where no exact batched form exists: the loop over the batch's outputs, stacked

def _stack_rows(rows, out_axes):
    """The outputs of each example of a loop over the batch, stacked into the batch's output (the batch along
    out_axes: an int, None for an output the same for every example, or a tree of them like the output)."""
    first = rows[0]
    if isinstance(first, dict):
        keyed = out_axes if isinstance(out_axes, dict) else {k: out_axes for k in first}
        return {k: _stack_rows([r[k] for r in rows], keyed[k]) for k in first}
    if isinstance(first, (tuple, list)):
        axes = out_axes if isinstance(out_axes, (tuple, list)) else [out_axes] * len(first)
        items = [_stack_rows([r[k] for r in rows], axes[k]) for k in range(len(first))]
        return type(first)(*items) if hasattr(type(first), "_fields") else type(first)(items)
    if out_axes is None:
        return first
    return np.stack([np.asarray(r) for r in rows], axis=out_axes)


helper(_stack_rows)


@template
def _batched_index(index, axis, n):
    """An index of one example that differs between examples, as the batch's: each example's row number first
    (a tuple's batched items are each example's numbers)."""
    if isinstance(axis, tuple):
        return (np.arange(n),) + index
    return (_rows(n, np.ndim(index) - 1), index)


@template
def _selected_ndim(x, index, axes):
    """How many axes one example's x[index] has (axes: the batch axes of x and index)."""
    if axes[1] is None:
        return np.ndim(x[_leading(index)]) - (axes[0] is not None)
    if isinstance(axes[1], tuple):      # a tuple of each example's numbers (and the same numbers or slices)
        return np.ndim(x) - (axes[0] is not None) - len(index)
    return np.ndim(x) - (axes[0] is not None) - 1 + np.ndim(index) - 1


@template
def _drawn(size, n, a=None, b=None):
    """The size= of a random draw for the batch: n draws of one example's size (which, without size=, is the
    shape its parameters broadcast to)."""
    if size is None:
        shape = np.broadcast_shapes(np.shape(a), np.shape(b))
        if shape == ():
            return n
        return (n,) + shape
    if isinstance(size, tuple):
        return (n,) + size
    return (n, size)


# ---- a container's gradient, batched (derivative code's _fill_tree where shapes are not known)

def _axis_item(axes, key):
    """The batch axes of item key of a container whose axes tree is axes (_fill_tree_rows)."""
    if axes is None or axes == 0:
        return axes
    if axes[0] == "dict":
        return dict(axes[1]).get(key)
    if axes[0] == "all":
        return axes[1]
    return axes[key] if isinstance(key, int) and key < len(axes) else None


def _fill_tree_rows(g, x, axes, n):
    """A container's gradient handed back to the user, for a batch of n: x's structure and types, each leaf n
    gradients of x's leaf's shape (g's where axes, its batch axes as a tree, says g is batched; the same for every
    example elsewhere)."""
    if isinstance(x, dict):
        g = g if isinstance(g, dict) else {}
        return {k: _fill_tree_rows(g.get(k, 0.0), v, _axis_item(axes, k), n) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        items = [_fill_tree_rows(_item(g, k), v, _axis_item(axes, k), n) for k, v in enumerate(x)]
        if isinstance(x, tuple):
            return type(x)(*items) if hasattr(type(x), "_fields") else tuple(items)
        return items
    shape = np.shape(x)
    if axes is None:
        one = _fill_tree(g, x)
        return np.array(np.broadcast_to(one, (n,) + shape), dtype=np.result_type(one, x, np.float32))
    extra = len(shape) - (np.ndim(g) - 1)
    if extra > 0:
        g = np.reshape(g, np.shape(g)[:1] + (1,) * extra + np.shape(g)[1:])
    return np.array(np.broadcast_to(g, np.shape(g)[:1] + shape), dtype=np.result_type(g, x, np.float32))


helper(_axis_item)
helper(_fill_tree_rows)


# ---------------------------------------------------------------- facts for s2s/transforms/batching.py (rules/record.py)

import builtins  # noqa: E402
import math  # noqa: E402
import operator  # noqa: E402

from s2s import runtime  # noqa: E402
from s2s.rules.registry import declare  # noqa: E402

# finite of finite, without a warning: a branch of these alone is batched unmasked
declare(operator.add, operator.sub, operator.mul, operator.neg, operator.pos, operator.abs, builtins.abs,
        operator.matmul, operator.getitem, operator.lt, operator.le, operator.gt, operator.ge, operator.eq,
        operator.ne, operator.not_, operator.truth, operator.and_, operator.or_, operator.is_, operator.is_not,
        builtins.max, builtins.min, builtins.float, builtins.int, builtins.bool, builtins.len,
        np.add, np.subtract, np.multiply, np.negative, np.positive, np.absolute, np.maximum, np.minimum,
        np.tanh, np.sin, np.cos, np.where, np.sum, np.max, np.min, np.amax, np.amin, np.matmul, np.dot,
        np.outer, np.inner, np.einsum, np.transpose, np.reshape, np.concatenate, np.stack, np.zeros_like,
        np.ones_like, np.shape, np.ndim, np.size, np.clip, np.copy, np.asarray, np.array, np.square,
        np.float64, np.sign, np.greater, np.less, np.equal, np.logical_and, np.logical_or, np.logical_not,
        math.sin, math.cos, math.tanh, math.fabs,
        runtime.make_tuple, runtime.make_list, runtime.make_dict, runtime.list_append, runtime.setitem,
        runtime.push, runtime.pop, runtime.stack_new, runtime.zeros_like, runtime.stop_gradient,
        runtime._seed, runtime._scatter, total=True)
# the rules' arithmetic on axes: computed when the batched code is made
declare(isinstance, slice, range, tuple, len, builtins.max, builtins.min, builtins.abs, builtins.int, builtins.bool,
        builtins.sorted, builtins.list, runtime.make_tuple, np.ndim, np.broadcast_shapes, axis_fold=True)
# a list of arrays first: its items batched alike
declare(np.concatenate, np.stack, np.hstack, np.vstack, np.column_stack, np.dstack, np.array, np.asarray, joins=True)
# shapes found by running the function on stand-ins
declare(np.swapaxes, np.moveaxis, np.transpose, np.expand_dims, np.einsum, np.outer, np.inner, np.dot, np.matmul,
        operator.matmul, np.stack, np.concatenate, np.broadcast_to, np.reshape, shape_by_trial=True)
