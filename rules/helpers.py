"""Helpers that the rules of rules/ call, copied into derivative code like s2s.runtime's (NumPy only).

Each is registered with `s2s.registry.helper`; its own rule (linear or tangent) sits in
rules/runtime_helpers.py, so that derivative code using it can be differentiated again.
"""
import numpy as np

from s2s.registry import helper
from s2s.runtime import _axes, _broadcast_back, _prod_of_others, _unbroadcast


def _undiagonal(g, x, offset=0, axis1=0, axis2=1):
    """The adjoint of numpy.diagonal(x, offset, axis1, axis2): g written back on that diagonal, zeros elsewhere."""
    ndim = np.ndim(x)
    a1, a2 = axis1 % ndim, axis2 % ndim
    moved = np.moveaxis(np.zeros(np.shape(x), dtype=np.result_type(g, x, np.float32)), (a1, a2), (-2, -1))
    n = np.shape(g)[-1]
    i = np.arange(n)
    if offset >= 0:
        moved[..., i, i + offset] = g
    else:
        moved[..., i - offset, i] = g
    return np.moveaxis(moved, (-2, -1), (a1, a2))


def _trace_adjoint(g, x, offset=0, axis1=0, axis2=1):
    """The adjoint of numpy.trace: g on the diagonal of each matrix (the trailing axes of x are batch axes)."""
    n = np.shape(np.diagonal(x, offset, axis1, axis2))
    return _undiagonal(np.broadcast_to(np.expand_dims(g, -1), n), x, offset, axis1, axis2)


def _prod_of_others_tangent(x, t, axis=None):
    """The tangent of _prod_of_others(x, axis) along t: for each i, the sum over j != i of t_j times the
    product of the elements other than i and j (exact with zeros: O(n^2) per reduction)."""
    x = np.asarray(x)
    t = np.broadcast_to(t, x.shape)
    axes = _axes(axis, x.ndim)
    last = tuple(range(x.ndim - len(axes), x.ndim))
    moved = np.moveaxis(x, axes, last)
    flat = moved.reshape(moved.shape[:x.ndim - len(axes)] + (-1,))
    tflat = np.moveaxis(t, axes, last).reshape(flat.shape)
    eye = np.eye(flat.shape[-1], dtype=bool)
    others = np.where(eye, np.ones_like(flat[..., None, :]), flat[..., None, :])   # row i: x with x_i = 1
    steps = np.where(eye, np.zeros_like(tflat[..., None, :]), tflat[..., None, :])
    out = np.sum(steps * _prod_of_others(others, -1), axis=-1)
    return np.moveaxis(out.reshape(moved.shape), last, axes)


def _dot_nd_left(g, a, b):
    """The adjoint of a in numpy.dot(a, b) for any dimensions (a's last axis meets b's second to last)."""
    if np.ndim(a) == 0 or np.ndim(b) == 0:
        return np.sum(g * b) if np.ndim(a) == 0 else g * b
    if np.ndim(b) == 1:
        return np.multiply.outer(g, b)
    rest = [i for i in range(np.ndim(b)) if i != np.ndim(b) - 2]
    return np.tensordot(g, b, axes=(list(range(np.ndim(a) - 1, np.ndim(g))), rest))


def _dot_nd_right(g, a, b):
    """The adjoint of b in numpy.dot(a, b) for any dimensions."""
    if np.ndim(a) == 0 or np.ndim(b) == 0:
        return np.sum(g * a) if np.ndim(b) == 0 else g * a
    lead = list(range(np.ndim(a) - 1))
    out = np.tensordot(a, g, axes=(lead, lead))      # (a's last axis,) + b's other axes
    return out if np.ndim(b) == 1 else np.moveaxis(out, 0, -2)


def _tensordot_axes(a, b, axes):
    """numpy.tensordot's axes argument as two lists of non-negative axes."""
    if np.ndim(axes) == 0:
        return list(range(np.ndim(a) - axes, np.ndim(a))), list(range(axes))
    first, second = axes
    first = [first] if np.ndim(first) == 0 else list(first)
    second = [second] if np.ndim(second) == 0 else list(second)
    return [i % np.ndim(a) for i in first], [i % np.ndim(b) for i in second]


def _tensordot_adjoint(g, a, b, axes, k):
    """The adjoint of operand k of numpy.tensordot(a, b, axes): the result's axes are a's free axes, then b's."""
    if np.ndim(a) == 0 or np.ndim(b) == 0:            # numpy.inner with a scalar: a * b
        other = b if k == 0 else a
        return np.sum(g * other) if np.ndim(a if k == 0 else b) == 0 else g * other
    first, second = _tensordot_axes(a, b, axes)
    free_a = [i for i in range(np.ndim(a)) if i not in first]
    free_b = [i for i in range(np.ndim(b)) if i not in second]
    g_a = list(range(len(free_a)))
    g_b = list(range(len(free_a), len(free_a) + len(free_b)))
    if k == 0:
        out = np.tensordot(g, b, axes=(g_b, free_b))      # axes: free_a, then b's contracted axes in order
        return np.transpose(out, tuple(np.argsort(free_a + [first[second.index(j)] for j in sorted(second)])))
    out = np.tensordot(a, g, axes=(free_a, g_a))          # axes: a's contracted axes in order, then free_b
    return np.transpose(out, tuple(np.argsort([second[first.index(i)] for i in sorted(first)] + free_b)))


def _einsum_parse(args):
    """numpy.einsum's arguments (string form, or the sublist form `x, [0, 1], y, [1, 2], [0, 2]`) as
    (the explicit subscripts of each operand, the output's, the operands, each operand's position in args).
    An ellipsis becomes upper-case letters, one per axis it stands for."""
    args = [a for a in args if a is not None]
    if isinstance(args[0], str):
        spec = args[0].replace(" ", "")
        operands = args[1:]
        positions = list(range(1, len(args)))
        inputs, output = spec.split("->") if "->" in spec else (spec, None)
        terms = inputs.split(",")
    else:
        letters = "abcdefghijklmnopqrstuvwxyz"

        def term(sublist):
            return "".join("..." if s is Ellipsis else letters[s] for s in sublist)
        operands = args[0::2][:len(args) // 2]
        positions = list(range(0, 2 * len(operands), 2))
        terms = [term(s) for s in args[1::2][:len(operands)]]
        output = term(args[-1]) if len(args) % 2 else None
    dots = max([np.ndim(o) - len(t.replace("...", "")) for t, o in zip(terms, operands) if "..." in t] or [0])
    fill = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"[:dots]
    terms = [t.replace("...", fill[dots - (np.ndim(o) - len(t.replace("...", ""))):]) for t, o in zip(terms, operands)]
    if output is None:
        joined = "".join(terms)
        output = fill + "".join(sorted(c for c in set(joined) if joined.count(c) == 1 and c.islower()))
    else:
        output = output.replace("...", fill)
    return terms, output, operands, positions


def _einsum_arg_adjoint(g, p, x0, x1=None, x2=None, x3=None, x4=None, x5=None):
    """The adjoint of argument p of numpy.einsum(x0, x1, ...), None when argument p is not an operand.

    The adjoint of an operand is the einsum of the output's adjoint with the other operands, into the
    operand's subscripts; an index repeated in the operand (a diagonal) is written through an identity,
    and an index of the operand found nowhere else (summed away) through ones."""
    terms, output, operands, positions = _einsum_parse([x0, x1, x2, x3, x4, x5])
    if p not in positions:
        return None
    k = positions.index(p)
    target = terms[k]
    others = [(t, o) for j, (t, o) in enumerate(zip(terms, operands)) if j != k]
    used = set(output + target + "".join(t for t, _ in others))
    spare = [c for c in "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ" if c not in used]
    shape = np.shape(operands[k])
    dtype = np.result_type(g, operands[k], np.float32)
    first, extra_terms, extra_operands = "", [], []
    for axis, c in enumerate(target):
        if c in first:                      # a repeated index: a fresh letter tied to the first by an identity
            fresh = spare.pop(0)
            extra_terms.append(c + fresh)
            extra_operands.append(np.eye(shape[axis], dtype=dtype))
            first += fresh
        else:
            first += c
    seen = output + "".join(t for t, _ in others)
    for axis, c in enumerate(first):
        if c not in seen and c not in "".join(extra_terms):
            extra_terms.append(c)
            extra_operands.append(np.ones(shape[axis], dtype=dtype))
    expression = ",".join([output] + [t for t, _ in others] + extra_terms) + "->" + first
    return np.einsum(expression, g, *[o for _, o in others], *extra_operands)


def _einsum_call(x0, x1=None, x2=None, x3=None, x4=None, x5=None):
    """numpy.einsum of the arguments that are given (a rule passes a fixed number)."""
    return np.einsum(*[a for a in (x0, x1, x2, x3, x4, x5) if a is not None])


def _matrix_axes(x, axis):
    """The (rows, columns) axes of a matrix norm, non-negative."""
    if axis is None:
        axis = (0, 1)
    return axis[0] % np.ndim(x), axis[1] % np.ndim(x)


def _norm_kind(x, ord, axis):
    """Which formula numpy.linalg.norm applies for ord and axis."""
    matrix = (axis is None and np.ndim(x) == 2 and ord is not None) or (axis is not None and np.ndim(axis) == 1
                                                                        and len(axis) == 2)
    if ord is None or ord == "fro" or (ord == 2 and not matrix):
        return "euclid"
    if ord == "nuc":
        return "nuc"
    if matrix:
        if ord == 1 or ord == -1:
            return "columns"
        if ord == np.inf or ord == -np.inf:
            return "rows"
        if ord == 2 or ord == -2:
            return "spectral"
        raise ValueError(f"invalid norm order {ord!r} for matrices")
    if ord == np.inf or ord == -np.inf:
        return "max"
    if ord == 0:
        return "zero"
    return "p"


def _square_or_reduced(a, full_matrices, compute_uv):
    """Refuse the derivative of a full SVD of a non-square matrix (its extra singular vectors are arbitrary)."""
    if compute_uv and full_matrices and np.shape(a)[-1] != np.shape(a)[-2]:
        raise NotImplementedError("the derivative of numpy.linalg.svd with full_matrices=True of a non-square "
                                  "matrix: pass full_matrices=False")


def _tall(a, mode):
    """Refuse the derivative of QR of a wide matrix, or in a mode other than 'reduced'."""
    if mode != "reduced" or np.shape(a)[-2] < np.shape(a)[-1]:
        raise NotImplementedError("the derivative of numpy.linalg.qr is for mode='reduced' and matrices with "
                                  "at least as many rows as columns")


def _rollaxis_destination(x, axis, start):
    """Where numpy.rollaxis(x, axis, start) moves axis to, as numpy.moveaxis's destination."""
    n = np.ndim(x)
    axis, start = axis % n, start % (n + 1) if start < 0 else start
    return start - 1 if start > axis else start


def _diff_adjoint(g, n=1, axis=-1):
    """The adjoint of numpy.diff(x, n, axis): each difference sends +g to its right element, -g to its left."""
    for _ in range(n):
        pad = [(0, 0)] * np.ndim(g)
        pad[axis % np.ndim(g)] = (1, 1)
        g = -np.diff(np.pad(g, pad), axis=axis)
    return g


def _kron_adjoint(g, a, b, k):
    """The adjoint of operand k of numpy.kron(a, b): g as blocks, each weighted by the other operand."""
    ndim = max(np.ndim(a), np.ndim(b))
    sa = (1,) * (ndim - np.ndim(a)) + np.shape(a)
    sb = (1,) * (ndim - np.ndim(b)) + np.shape(b)
    blocks = np.reshape(g, [n for pair in zip(sa, sb) for n in pair])       # axes a0, b0, a1, b1, ...
    if k == 0:
        other = np.reshape(b, [n for s in sb for n in (1, s)])
        return np.reshape(np.sum(blocks * other, axis=tuple(range(1, 2 * ndim, 2))), np.shape(a))
    other = np.reshape(a, [n for s in sa for n in (s, 1)])
    return np.reshape(np.sum(blocks * other, axis=tuple(range(0, 2 * ndim, 2))), np.shape(b))


def _quantile_weights(x, q, axis=None, keepdims=False, method="linear"):
    """The weights w (x's shape, before the reduction's axes are moved) with quantile(x, q) = sum(w * x) over axis:
    linear interpolation between the two order statistics around q (n - 1); numpy's default method."""
    if method != "linear" or np.ndim(q) != 0:
        raise NotImplementedError("the derivative of numpy.quantile/percentile/median is for one q and "
                                  "method='linear'")
    x = np.asarray(x)
    axes = _axes(axis, x.ndim)
    last = tuple(range(x.ndim - len(axes), x.ndim))
    moved = np.moveaxis(x, axes, last)
    flat = moved.reshape(moved.shape[:x.ndim - len(axes)] + (-1,))
    n = flat.shape[-1]
    position = q * (n - 1)
    low = int(np.floor(position))
    high = min(low + 1, n - 1)
    fraction = position - low
    order = np.argsort(flat, axis=-1, kind="stable")
    weights = np.zeros(flat.shape, dtype=np.result_type(x, np.float32))
    np.put_along_axis(weights, order[..., low:low + 1], 1.0 - fraction, axis=-1)
    taken = np.take_along_axis(weights, order[..., high:high + 1], axis=-1)
    np.put_along_axis(weights, order[..., high:high + 1], taken + fraction, axis=-1)
    return np.moveaxis(weights.reshape(moved.shape), last, axes)


def _quantile_adjoint(g, x, q, axis=None, keepdims=False, method="linear"):
    return _broadcast_back(g, x, axis, keepdims) * _quantile_weights(x, q, axis, keepdims, method)


def _quantile_tangent(t, x, q, axis=None, keepdims=False, method="linear"):
    return np.sum(t * _quantile_weights(x, q, axis, keepdims, method), axis=axis, keepdims=keepdims)


def _sort_order(x, axis=-1, kth=None):
    """The indices that sort (kth None) or partition x along axis (None: flattened)."""
    if kth is None:
        return np.argsort(x, axis=axis, kind="stable")
    return np.argpartition(x, kth, axis=axis)


def _unsort(g, x, order, axis=-1):
    """The adjoint of x taken in order along axis: g sent back to where each element came from."""
    if axis is None:
        out = np.zeros(np.size(x), dtype=np.result_type(g, x, np.float32))
        out[order] = g
        return out.reshape(np.shape(x))
    out = np.zeros(np.shape(x), dtype=np.result_type(g, x, np.float32))
    np.put_along_axis(out, order, g, axis=axis)
    return out


def _take_adjoint(g, x, indices, axis=None):
    """The adjoint of numpy.take: g added back at the indices (repeated indices add up)."""
    out = np.zeros(np.size(x) if axis is None else np.shape(x), dtype=np.result_type(g, x, np.float32))
    if axis is None:
        np.add.at(out, indices, g)
        return out.reshape(np.shape(x))
    axis = axis % np.ndim(x)
    index = (slice(None),) * axis + (indices,)
    np.add.at(out, index, g)
    return out


def _take_along_axis_adjoint(g, x, indices, axis):
    """The adjoint of numpy.take_along_axis: g added back at the indices along axis."""
    out = np.zeros(np.size(x) if axis is None else np.shape(x), dtype=np.result_type(g, x, np.float32))
    if axis is None:
        np.add.at(out, indices, g)
        return out.reshape(np.shape(x))
    axis = axis % np.ndim(x)
    grids = list(np.ogrid[tuple(slice(n) for n in np.shape(indices))])
    grids[axis] = indices
    np.add.at(out, tuple(grids), g)
    return out


def _unpad(g, x, pad_width, mode="constant"):
    """The adjoint of numpy.pad(x, pad_width, mode) for the modes that copy elements of x (constant with
    any value, edge, reflect, symmetric, wrap): each element of g added back to the element it copies."""
    size = np.size(x)
    source = np.pad(np.arange(size).reshape(np.shape(x)), pad_width,
                    mode, **({"constant_values": -1} if mode == "constant" else {}))
    if mode not in ("constant", "edge", "reflect", "symmetric", "wrap"):
        raise NotImplementedError(f"the derivative of numpy.pad with mode={mode!r}")
    keep = source >= 0
    out = np.zeros(size, dtype=np.result_type(g, x, np.float32))
    np.add.at(out, source[keep], np.broadcast_to(g, np.shape(source))[keep])
    return out.reshape(np.shape(x))


def _unsplit(g, pieces, axis=0):
    """The adjoint of numpy.split and its relatives: the pieces' adjoints (0.0 for an unused piece) joined."""
    parts = [np.zeros_like(p, dtype=np.result_type(p, np.float32)) if np.ndim(d) == 0 and d == 0
             else np.broadcast_to(d, np.shape(p)) for d, p in zip(g, pieces)]
    return np.concatenate(parts, axis=axis)


def _unappend(g, arr, values, axis, k):
    """The adjoint of argument k (0: arr, 1: values) of numpy.append."""
    if axis is None:
        flat = np.ravel(g)
        return np.reshape(flat[:np.size(arr)], np.shape(arr)) if k == 0 else \
            np.reshape(flat[np.size(arr):], np.shape(values))
    n = np.shape(arr)[axis]
    return np.take(g, np.arange(n), axis=axis) if k == 0 else \
        np.take(g, np.arange(n, np.shape(g)[axis]), axis=axis)


def _uncolumn_stack(g, arrays, axis=1):
    """The adjoints of the pieces of numpy.column_stack (axis 1) or numpy.dstack (axis 2)."""
    out, start = [], 0
    for a in arrays:
        width = np.shape(a)[axis] if np.ndim(a) > axis else 1
        piece = np.take(g, np.arange(start, start + width), axis=axis)
        out.append(np.reshape(piece, np.shape(a)))
        start += width
    return out


def _select_adjoint(g, condlist, choicelist, k):
    """The adjoint of numpy.select's choices (k = -1) or of its default (k = 0): g where each was chosen."""
    taken = np.zeros(np.shape(g), dtype=bool)
    out = []
    for c in condlist:
        chosen = np.logical_and(c, np.logical_not(taken))
        out.append(np.where(chosen, g, 0.0 * g))
        taken = np.logical_or(taken, c)
    if k == 0:
        return np.where(taken, 0.0 * g, g)
    return [_unbroadcast(o, choice) for o, choice in zip(out, choicelist)]


def _convolution_padding(in1, in2, mode="full"):
    """How to pad the adjoint of scipy.signal.convolve(in1, in2, mode) back to the full convolution's shape."""
    pads = []
    for n, m in zip(np.shape(in1), np.shape(in2)):
        if mode == "full":
            pads.append((0, 0))
        elif mode == "valid":
            if n < m:
                raise NotImplementedError("the derivative of scipy.signal.convolve in mode 'valid' is for a first "
                                          "operand at least as large as the second on every axis")
            pads.append((m - 1, m - 1))
        elif mode == "same":
            pads.append(((m - 1) // 2, m - 1 - (m - 1) // 2))
        else:
            raise ValueError(f"unknown convolution mode {mode!r}")
    return pads


def _banded_transpose(ab, lower, upper):
    """The banded storage (upper, lower bands) of the transpose of the matrix stored in ab (scipy.linalg's
    solve_banded layout: A[i, j] = ab[upper + i - j, j])."""
    rows, n = np.shape(ab)
    out = np.zeros(np.shape(ab), dtype=np.result_type(ab, np.float32))
    for k in range(rows):
        shift = k - lower
        lo, hi = max(0, -shift), min(n, n - shift)
        out[k, lo:hi] = ab[lower + upper - k, lo + shift:hi + shift]
    return out


def _band_of(m, lower, upper):
    """The banded storage of the bands of the dense matrix m (the other entries are dropped)."""
    n = np.shape(m)[-1]
    out = np.zeros((lower + upper + 1, n), dtype=np.result_type(m, np.float32))
    for r in range(lower + upper + 1):
        j = np.arange(max(0, upper - r), min(n, n + upper - r))
        out[r, j] = m[r - upper + j, j]
    return out


def _banded_matmul(ab, lower, upper, x):
    """The matrix stored in ab (banded) times x."""
    n = np.shape(ab)[-1]
    dense = np.zeros((n, n), dtype=np.result_type(ab, np.float32))
    for r in range(lower + upper + 1):
        j = np.arange(max(0, upper - r), min(n, n + upper - r))
        dense[r - upper + j, j] = ab[r, j]
    return dense @ x


def _sorted_order(items, key=None, reverse=False):
    """The positions, in items, of the elements of sorted(items, reverse=reverse) (stable, like sorted)."""
    if key is not None:
        raise NotImplementedError("the derivative of sorted() with a key function")
    values = np.asarray(items, dtype=float)
    return [int(i) for i in np.argsort(-values if reverse else values, kind="stable")]


def _unsorted(g, items, key=None, reverse=False):
    """The adjoint of sorted(items): the adjoint of each element sent back to where it came from."""
    out = [0.0] * len(items)
    for k, i in enumerate(_sorted_order(items, key, reverse)):
        out[i] = g[k]
    return out


def _sorted_like(t, items, key=None, reverse=False):
    """t (a list like items) taken in the order that sorts items."""
    return [t[i] for i in _sorted_order(items, key, reverse)]


def _gradient_adjoint(g, f, axis=None, edge_order=1):
    """The adjoint of numpy.gradient(f, axis=axis, edge_order=edge_order) with unit spacing, along one axis
    (f 1-D, or axis an int): central differences inside, one-sided ones at the edges."""
    if axis is None and np.ndim(f) != 1 or np.ndim(axis) != 0 and axis is not None:
        raise NotImplementedError("the derivative of numpy.gradient along several axes: give one axis")
    a = 0 if axis is None else axis % np.ndim(f)
    w = np.moveaxis(np.asarray(g), a, 0)
    d = np.zeros(w.shape, dtype=np.result_type(w, f, np.float32))
    d[2:] += 0.5 * w[1:-1]
    d[:-2] -= 0.5 * w[1:-1]
    if edge_order == 1:
        d[0] -= w[0]
        d[1] += w[0]
        d[-1] += w[-1]
        d[-2] -= w[-1]
    else:
        d[0] -= 1.5 * w[0]
        d[1] += 2.0 * w[0]
        d[2] -= 0.5 * w[0]
        d[-1] += 1.5 * w[-1]
        d[-2] -= 2.0 * w[-1]
        d[-3] += 0.5 * w[-1]
    return np.moveaxis(d, 0, a)


# registered at the end, not by a decorator: the emitter copies each function's source as it is
for _function in list(globals().values()):
    if callable(_function) and getattr(_function, "__module__", None) == __name__:
        helper(_function)
