"""Helpers that the rules of rules/ call, copied into derivative code like s2s.runtime's (NumPy only).

Each is registered with `s2s.rules.registry.helper`; its own rule (linear or tangent) sits in
rules/runtime_helpers.py, so that derivative code using it can be differentiated again.
"""
import numpy as np

from s2s.rules.registry import helper, nondifferentiable
from s2s.runtime import _axes, _foreign, _prod_of_others, _unbroadcast, _zeros_like_tree


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
    if _foreign(x) and np.ndim(x) == 2 and (axis1, axis2) in ((0, 1), (-2, -1)):
        # another library's matrix (Dask, CuPy): g on its diagonal, made in that library
        eye = np.eye(np.shape(x)[0], np.shape(x)[1], k=offset, dtype=np.result_type(x.dtype, np.float32))
        return np.zeros_like(x, dtype=eye.dtype) + g * eye
    if not hasattr(g, "dtype"):     # a Python number (the seed 1.0) takes x's precision
        g = np.asarray(g, dtype=np.result_type(getattr(x, "dtype", np.float64), np.float32))
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


def _einsum_arg_adjoint(g, p, x0, x1=None, x2=None, x3=None, x4=None, x5=None, x6=None, x7=None, x8=None, x9=None, x10=None):
    """The adjoint of argument p of numpy.einsum(x0, x1, ...), None when argument p is not an operand.

    The adjoint of an operand is the einsum of the output's adjoint with the other operands, into the
    operand's subscripts; an index repeated in the operand (a diagonal) is written through an identity,
    and an index of the operand found nowhere else (summed away) through ones."""
    terms, output, operands, positions = _einsum_parse([x0, x1, x2, x3, x4, x5, x6, x7, x8, x9, x10])
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


def _einsum_call(x0, x1=None, x2=None, x3=None, x4=None, x5=None, x6=None, x7=None, x8=None, x9=None, x10=None):
    """numpy.einsum of the arguments that are given (a rule passes a fixed number)."""
    return np.einsum(*[a for a in (x0, x1, x2, x3, x4, x5, x6, x7, x8, x9, x10) if a is not None])


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


def _leading(g, k, axis):
    """The first k columns (axis -1) or rows (axis -2) of the adjoint g of U or V^T from a full SVD of a
    non-square matrix. The others complete U or V^T arbitrarily (LAPACK's choice; autograd and JAX refuse their
    derivative too): s2s differentiates a function of them only where its adjoint there is 0 (they are unused)."""
    if np.ndim(g) == 0:
        return g
    extra = g[..., :, k:] if axis == -1 else g[..., k:, :]
    if np.any(extra != 0):
        raise NotImplementedError("the derivative of numpy.linalg.svd(full_matrices=True) of a non-square matrix "
                                  "through its extra singular vectors (they complete U or V arbitrarily): use only "
                                  "the first min(m, n) of them, or pass full_matrices=False")
    return g[..., :, :k] if axis == -1 else g[..., :k, :]


def _completed(d, full, k, axis):
    """The tangent d of the first k columns (axis -1) or rows (-2) of U or V^T, completed to full's shape with NaN
    for the arbitrary others (a result that reads them is NaN, not silently wrong)."""
    if np.shape(d) == np.shape(full):
        return d
    extra = np.full(np.shape(full[..., :, k:] if axis == -1 else full[..., k:, :]), np.nan, dtype=d.dtype)
    return np.concatenate([d, extra], axis=axis)


def _qr_mode(a, mode):
    """min(m, n) for a QR the rules differentiate (a value the rule uses, so the check is not dropped as dead code).
    Refuse the derivative of QR in the modes whose extra columns of Q are not differentiated here: 'complete'
    of a tall matrix (its last columns complete Q arbitrarily; JAX follows LAPACK's Householder choice), 'raw'."""
    if mode not in ("reduced", "complete", "r"):
        raise NotImplementedError(f"the derivative of numpy.linalg.qr with mode={mode!r}: use mode='reduced'")
    if mode == "complete" and np.shape(a)[-2] > np.shape(a)[-1]:
        raise NotImplementedError("the derivative of numpy.linalg.qr with mode='complete' of a matrix with more rows "
                                  "than columns: use mode='reduced' (or 'r')")
    return min(np.shape(a)[-2], np.shape(a)[-1])


def _rollaxis_destination(x, axis, start):
    """Where numpy.rollaxis(x, axis, start) moves axis to, as numpy.moveaxis's destination."""
    n = np.ndim(x)
    axis, start = axis % n, start + n if start < 0 else start       # (NumPy adds n to a negative start)
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


def _quantile_weights(x, q, axis=None, method="linear", ignore_nan=False):
    """W, of shape q's + x's, with quantile(x, q, axis) = sum(W * x) over axis: every method of numpy.quantile
    picks one order statistic or interpolates between two neighbours, (1 - f) s_j + f s_j+1, with j and f
    depending only on q, the count and the method, so the quantile of 0, 1, ..., m - 1 is j + f. NaNs
    (nanquantile) sort last and get no weight."""
    x = np.asarray(x)
    qs = np.asarray(q)
    axes = _axes(axis, x.ndim)
    last = tuple(range(x.ndim - len(axes), x.ndim))
    moved = np.moveaxis(x, axes, last)
    flat = moved.reshape(moved.shape[:x.ndim - len(axes)] + (-1,))
    order = np.argsort(flat, axis=-1, kind="stable")
    counts = np.sum(~np.isnan(flat), axis=-1) if ignore_nan else np.full(flat.shape[:-1], flat.shape[-1])
    weights = np.zeros(qs.shape + flat.shape, dtype=np.result_type(x, np.float32))
    for k in np.ndindex(qs.shape):
        for m in np.unique(counts):
            if m == 0:
                continue
            position = float(np.quantile(np.arange(m, dtype=float), qs[k], method=method))
            low = min(int(np.floor(position)), m - 1)
            high = min(low + 1, m - 1)
            fraction = position - low
            w = np.zeros(flat.shape, dtype=weights.dtype)
            np.put_along_axis(w, order[..., low:low + 1], 1.0 - fraction, axis=-1)
            taken = np.take_along_axis(w, order[..., high:high + 1], axis=-1)
            np.put_along_axis(w, order[..., high:high + 1], taken + fraction, axis=-1)
            weights[k] = np.where(np.expand_dims(counts == m, -1), w, weights[k])
    return np.moveaxis(weights.reshape(qs.shape + moved.shape), tuple(qs.ndim + a for a in last),
                       tuple(qs.ndim + a for a in axes))


def _quantile_adjoint(g, x, q, axis=None, keepdims=False, method="linear", ignore_nan=False):
    """The adjoint of numpy.quantile (and percentile, median, their nan versions) with respect to x."""
    lead = np.ndim(q)
    g = np.asarray(g)
    if not keepdims:
        g = np.expand_dims(g, tuple(lead + a for a in _axes(axis, np.ndim(x))))
    return np.sum(g * _quantile_weights(x, q, axis, method, ignore_nan), axis=tuple(range(lead)))


def _quantile_tangent(t, x, q, axis=None, keepdims=False, method="linear", ignore_nan=False):
    weights = _quantile_weights(x, q, axis, method, ignore_nan)
    return np.sum(weights * t, axis=tuple(np.ndim(q) + a for a in _axes(axis, np.ndim(x))), keepdims=keepdims)


def _along_first(x, axis):
    """x with axis moved first (flattened for axis None), as numpy.cumsum and numpy.cumprod read it."""
    return np.ravel(x) if axis is None else np.moveaxis(np.asarray(x), axis, 0)


def _from_first(d, x, axis):
    return np.reshape(d, np.shape(x)) if axis is None else np.moveaxis(d, 0, axis)


def _cumprod_suffix(g, x):
    """r_j = g_j + x_j+1 r_j+1 along the first axis: r_j = sum over i >= j of g_i x_j+1 ... x_i."""
    r = np.array(g, dtype=np.result_type(g, x, np.float32))
    for j in range(np.shape(x)[0] - 2, -1, -1):
        r[j] = r[j] + x[j + 1] * r[j + 1]
    return r


def _exclusive_cumprod(x):
    """1, x_0, x_0 x_1, ... along the first axis: the products before each element."""
    return np.concatenate([np.ones_like(x[:1]), np.cumprod(x, axis=0)[:-1]], axis=0)


def _cumprod_adjoint(g, x, axis=None):
    """The adjoint of numpy.cumprod(x, axis), exact where x has zeros (no division):
    dx_j = (x_0 ... x_j-1) r_j, r as in _cumprod_suffix."""
    xs = _along_first(x, axis)
    gs = np.reshape(g, np.shape(xs)) if axis is None else np.moveaxis(np.asarray(g), axis, 0)
    return _from_first(_exclusive_cumprod(xs) * _cumprod_suffix(gs, xs), x, axis)


def _cumprod_tangent(t, x, axis=None):
    """The tangent of numpy.cumprod(x, axis) along t, exact at zeros: dc_i = dc_i-1 x_i + c_i-1 t_i."""
    xs = _along_first(x, axis)
    ts = np.broadcast_to(_along_first(t, axis), np.shape(xs))
    out = np.array(ts, dtype=np.result_type(t, x, np.float32))
    before = _exclusive_cumprod(xs)
    out[0] = ts[0]
    for i in range(1, np.shape(xs)[0]):
        out[i] = out[i - 1] * xs[i] + before[i] * ts[i]
    return out if axis is None else np.moveaxis(out, 0, axis)        # flat for axis None, as cumprod


def _cumprod_adjoint_in_x(g, x, t, axis=None):
    """The tangent of _cumprod_adjoint(g, x, axis) along t (a tangent of x), for second order:
    the products before each element move by the exclusive cumprod's tangent, r by r's own recurrence
    driven by t_j+1 r_j+1."""
    xs = _along_first(x, axis)
    ts = np.broadcast_to(_along_first(t, axis), np.shape(xs))
    gs = np.reshape(g, np.shape(xs)) if axis is None else np.moveaxis(np.asarray(g), axis, 0)
    r = _cumprod_suffix(gs, xs)
    driven = np.concatenate([ts[1:] * r[1:], np.zeros_like(r[:1])], axis=0)
    moved = _cumprod_tangent(ts, xs, 0)
    before_tangent = np.concatenate([np.zeros_like(moved[:1]), moved[:-1]], axis=0)
    return _from_first(before_tangent * r + _exclusive_cumprod(xs) * _cumprod_suffix(driven, xs), x, axis)


def _running_record(x, ans, axis=0):
    """For each element of numpy.maximum.accumulate(x, axis) (or minimum's, ans), the index along axis of the
    element that set it: the last index j <= i where x_j equals the running extremum."""
    x = np.asarray(x)
    positions = np.arange(np.shape(x)[axis]).reshape([-1 if k == axis % x.ndim else 1 for k in range(x.ndim)])
    return np.maximum.accumulate(np.where(x == ans, positions, 0), axis=axis)


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


def _take_adjoint(g, x, indices, axis=None, mode="raise"):
    """The adjoint of numpy.take: g added back at the indices (repeated indices add up)."""
    out = np.zeros(np.size(x) if axis is None else np.shape(x), dtype=np.result_type(g, x, np.float32))
    n = np.size(x) if axis is None else np.shape(x)[axis]
    if mode == "clip":
        indices = np.clip(indices, 0, n - 1)
    elif mode == "wrap":
        indices = np.mod(indices, n)
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
    if key is not None:                 # the key of each element, as sorted calls it
        return sorted(range(len(items)), key=lambda i: key(items[i]), reverse=reverse)
    return sorted(range(len(items)), key=items.__getitem__, reverse=reverse)    # Python's order (tuples too)


def _unsorted(g, items, key=None, reverse=False):
    """The adjoint of sorted(items): the adjoint of each element sent back to where it came from. sorted(d) of a
    dict is its keys, which carry no derivative: a zero adjoint for each of d's values."""
    if isinstance(items, dict):
        return _zeros_like_tree(items)
    out = [0.0] * len(items)
    for k, i in enumerate(_sorted_order(items, key, reverse)):
        out[i] = g[k]
    return np.array(out) if isinstance(items, np.ndarray) else out      # an array's adjoint is an array


def _sorted_like(t, items, key=None, reverse=False):
    """t (a list like items) taken in the order that sorts items (a dict's keys: constants)."""
    if isinstance(items, dict):
        return [0.0] * len(items)
    return [t[i] for i in _sorted_order(items, key, reverse)]


def _unlisted(g, items):
    """The adjoint of list(items) or tuple(items): a list's (a tuple's) is the list of adjoints itself, an array's
    the array of its rows' adjoints (0.0 for a row without one)."""
    if isinstance(items, dict):             # its keys: no derivative
        return {key: 0.0 for key in items}
    if isinstance(items, (set, frozenset)):
        raise ValueError("s2s: list() or tuple() of a set of differentiated values (a set has no order s2s follows); "
                         "keep the values in a list")
    if isinstance(items, np.ndarray) or _foreign(items):
        rows = [np.broadcast_to(r, np.shape(items)[1:]) for r in g]
        return np.stack(rows).astype(np.result_type(items, np.float32), copy=False) if rows else np.zeros_like(items)
    return list(g)


def _listed_tangent(t, items, ans):
    """The tangent of list(items) or tuple(items) (ans): the items' tangents, as ans holds them (a dict's keys: none)."""
    if isinstance(items, dict):
        return type(ans)([0.0] * len(items))
    if isinstance(items, (set, frozenset)):
        raise ValueError("s2s: list() or tuple() of a set of differentiated values (a set has no order s2s follows); "
                         "keep the values in a list")
    return type(ans)(t)


def _unpopped(g, items, index=-1):
    """The adjoint of items.pop(index) (the list without that item): the item removed gets none."""
    out = list(g)
    out.insert(index % len(items), 0.0)
    return out


def _inserted_place(items, index):
    """Where items.insert(index, item) puts item: counted from the end if negative, clipped to the list."""
    place = index + len(items) if index < 0 else index
    return min(max(place, 0), len(items))


def _uninserted(g, items, index):
    """The list's part of the adjoint of items.insert(index, item) (a new list): without the inserted place."""
    place = _inserted_place(items, index)
    return list(g[:place]) + list(g[place + 1:])


def _inserted_item(g, items, index):
    """The item's part of the adjoint of items.insert(index, item): the adjoint at its place."""
    return g[_inserted_place(items, index)]


def _placed(t, items, index):
    """The item's contribution to the tangent of items.insert(index, item): t at its place, 0.0 elsewhere."""
    out = [0.0] * (len(items) + 1)
    out[_inserted_place(items, index)] = t
    return out


def _gradient_stencil(n, spacing=None, edge_order=1):
    """numpy.gradient along an axis of length n as a stencil: output i is the sum over k of
    weights[i, k] * f[index[i, k]]. spacing: None (1), a number, or the coordinates of the n points
    (numpy's second-order formulas for uneven spacing, which reduce to the even ones)."""
    if spacing is None or np.ndim(spacing) == 0:
        dx = np.full(n - 1, 1.0 if spacing is None else float(spacing))
    else:
        dx = np.diff(np.asarray(spacing, dtype=float))
    index = np.zeros((n, 3), dtype=int)
    weights = np.zeros((n, 3))
    hs, hd = dx[:-1], dx[1:]
    index[1:-1] = np.arange(n - 2)[:, None] + np.arange(3)
    weights[1:-1] = np.stack([-hd / (hs * (hs + hd)), (hd - hs) / (hs * hd), hs / (hd * (hs + hd))], axis=-1)
    if edge_order == 1:
        index[0], weights[0] = [0, 1, 1], [-1.0 / dx[0], 1.0 / dx[0], 0.0]
        index[-1], weights[-1] = [n - 2, n - 1, n - 1], [-1.0 / dx[-1], 1.0 / dx[-1], 0.0]
    else:
        a, b = dx[0], dx[1]
        index[0], weights[0] = [0, 1, 2], [-(2 * a + b) / (a * (a + b)), (a + b) / (a * b), -a / (b * (a + b))]
        a, b = dx[-2], dx[-1]
        index[-1], weights[-1] = [n - 3, n - 2, n - 1], [b / (a * (a + b)), -(a + b) / (a * b),
                                                        (2 * b + a) / (b * (a + b))]
    return index, weights


def _gradient_axis(f, axis=None, more_spacing=None):
    """The one axis numpy.gradient differentiates along here (several axes give a list: refused)."""
    if more_spacing is not None or axis is None and np.ndim(f) != 1 or axis is not None and np.ndim(axis) != 0:
        raise NotImplementedError("the derivative of numpy.gradient along several axes: give one axis")
    return 0 if axis is None else axis % np.ndim(f)


def _gradient_apply(t, f, spacing=None, more_spacing=None, axis=None, edge_order=1):
    """numpy.gradient(t, spacing, axis=axis, edge_order=edge_order), written as its stencil (the tangent)."""
    a = _gradient_axis(f, axis, more_spacing)
    moved = np.moveaxis(np.broadcast_to(t, np.shape(f)), a, 0)
    index, weights = _gradient_stencil(np.shape(moved)[0], spacing, edge_order)
    w = weights.astype(np.result_type(moved, np.float32)).reshape((-1, 3) + (1,) * (moved.ndim - 1))
    out = w[:, 0] * moved[index[:, 0]] + w[:, 1] * moved[index[:, 1]] + w[:, 2] * moved[index[:, 2]]
    return np.moveaxis(out, 0, a)


def _gradient_adjoint(g, f, spacing=None, more_spacing=None, axis=None, edge_order=1):
    """The adjoint of numpy.gradient(f, spacing, axis=axis, edge_order=edge_order) along one axis: each output's
    adjoint sent back to the three inputs of its stencil."""
    a = _gradient_axis(f, axis, more_spacing)
    moved = np.moveaxis(np.asarray(g), a, 0)
    index, weights = _gradient_stencil(np.shape(moved)[0], spacing, edge_order)
    w = weights.astype(np.result_type(moved, f, np.float32)).reshape((-1, 3) + (1,) * (moved.ndim - 1))
    d = np.zeros(np.shape(moved), dtype=np.result_type(moved, f, np.float32))
    for k in range(3):
        np.add.at(d, index[:, k], w[:, k] * moved)
    return np.moveaxis(d, 0, a)


def _memory_order(x, order):
    """'C' or 'F': the order in which np.ravel/np.reshape read x's elements for order 'A' or 'K'."""
    if order in ("C", "F"):
        return order
    x = np.asarray(x)
    if order == "A" or x.flags.c_contiguous or x.flags.f_contiguous:
        return "F" if x.flags.f_contiguous and not x.flags.c_contiguous else "C"
    strides = [abs(s) for s, n in zip(x.strides, x.shape) if n > 1]
    if min(x.strides, default=0) >= 0 and strides == sorted(strides, reverse=True):
        return "C"
    if min(x.strides, default=0) >= 0 and strides == sorted(strides):
        return "F"
    raise ValueError("s2s: order='K' of an array whose elements lie in neither C nor Fortran order (a permuted "
                     "or reversed view): s2s cannot follow that order; copy it first (np.ascontiguousarray)")


# registered at the end, not by a decorator: the emitter copies each function's source as it is
for _function in list(globals().values()):
    if callable(_function) and getattr(_function, "__module__", None) == __name__:
        helper(_function)


nondifferentiable(_memory_order)
