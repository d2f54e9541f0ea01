"""Runtime helpers: the primitives that transforms insert into the IR.

Each is a plain function that defines the primitive's meaning. The emitter
spells the simple ones inline (`stack.append(v)`, `[]`, `0.0`) and copies the
source of the others into the generated module, so derivative code never
imports s2s: it runs with NumPy alone.

The helpers call NumPy's functions, never NumPy's conversions: an array of another library (a Dask or
CuPy array, which take NumPy's functions through `__array_function__` and `__array_ufunc__`) stays in its
library: no `np.asarray` or `np.array` of an argument, no `.item()` or `float()` of an array, no `if` on
an array's value, and new arrays are made `*_like` an argument, so that they live where it lives.
"""
from __future__ import annotations

import numpy as np


def stack_new():
    return []


def push(stack, value):
    stack.append(value)


def pop(stack):
    return stack.pop()


def make_tuple(*items):
    return items


def make_list(*items):
    return list(items)


def make_dict(keys, *values):
    return dict(zip(keys, values))


def list_append(items, value):
    """`items.append(value)`, as a value: the transforms see a new list (the emitter appends in place
    when nothing reads the old one)."""
    return items + [value]


def setitem(container, index, value):
    """`container[index] = value`, as a value: the transforms see a new array, list or dict (the emitter
    writes in place when nothing reads the old one)."""
    if isinstance(container, dict):
        return {**container, index: value}
    if isinstance(container, list):
        container = list(container)
    else:
        container = container.copy() if _foreign(container) else np.array(container, copy=True)
    container[index] = value
    return container


def free_name(name, owner):
    """A global or closure variable of the function owner, read when the generated code runs (never frozen)."""
    raise NotImplementedError("spelled as a name by the emitter")


def stop_gradient(x):
    """x, through which no derivative flows: s2s treats the result as a constant."""
    return x


def zeros_like(x):
    return np.zeros_like(x)


def _foreign(x):
    """Whether x is an array of a library other than NumPy (Dask, CuPy): it takes NumPy's functions through
    NumPy's dispatch protocol, and is never converted to NumPy or to a Python number."""
    cls = type(x)           # (NumPy's arrays and Python's numbers first: the helpers ask about them most, and a
    # failed hasattr costs 0.5 us)
    return cls is not np.ndarray and cls is not float and cls is not int and cls is not np.float64 and \
        hasattr(cls, "__array_function__") and not isinstance(x, (np.ndarray, np.generic))


def _array(x):
    """x as an array: NumPy's for numbers and NumPy values, unchanged for another library's array."""
    return x if _foreign(x) else np.asarray(x)


def _gradient_dtype(*values):
    """The dtype of a gradient of values like these: their common dtype when it is a float or complex one (float16
    stays float16), else (integers, booleans) at least float32."""
    dtype = np.result_type(*values)
    return dtype if dtype.kind in "fc" else np.result_type(dtype, np.float32)


def _basic_index(index):
    """Whether index selects without integer or boolean arrays (its elements are distinct: no repeats)."""
    items = index if isinstance(index, tuple) else (index,)
    return all(i is None or i is Ellipsis or isinstance(i, (int, slice, np.integer)) for i in items)


def _unbroadcast(g, x, result=None):
    """Sum g, the adjoint of an elementwise result, over the axes that broadcasting added to x or
    stretched, so that it broadcasts to x's shape.

    An adjoint may be smaller than its value (a reduction's adjoint is spread lazily); given the
    result, g first stands for its full shape (a view), so stretched axes count every copy."""
    # (a NumPy array's shape read as its attribute: np.shape's dispatch costs 0.2 us, and this runs on every
    # elementwise adjoint whose shapes were not known when the derivative was made)
    if type(g) is float and type(x) is float and (result is None or type(result) is float):
        return g                            # numbers both: nothing was broadcast (np.shape costs 1 us a call)
    shape = x.shape if type(x) is np.ndarray else np.shape(x)
    if result is not None:
        full = result.shape if type(result) is np.ndarray else np.shape(result)
        if shape == full:                   # x was not broadcast: g (small or not) broadcasts to it
            return g
        if (g.shape if type(g) is np.ndarray else np.shape(g)) != full:
            g = np.broadcast_to(g, full)
    found = g.shape if type(g) is np.ndarray else np.shape(g)
    if found == shape:
        return g
    if not shape:                           # a scalar: everything sums into it
        # (a NumPy float array summed by its ufunc: np.sum's wrapping costs a microsecond)
        total = np.add.reduce(g, axis=None) if type(g) is np.ndarray and g.dtype.kind in "fc" else np.sum(g)
        if isinstance(x, (np.ndarray, np.generic)) or not isinstance(total, (np.ndarray, np.generic)):
            return total                    # another library's sum stays an array of it (lazy, on the GPU)
        return total.item()
    if len(found) > len(shape):
        g = np.sum(g, axis=tuple(range(len(found) - len(shape))))
        found = np.shape(g)
    offset = len(shape) - len(found)
    axes = tuple(i for i, n in enumerate(found) if n != 1 and shape[offset + i] == 1)
    if axes:
        g = np.sum(g, axis=axes, keepdims=True)
    return g


def _expand(g, like):
    """g, broadcast (as a view) to the shape of like: for rules that need the adjoint's full shape.

    Like another library's array, g is added to zeros like it: a Dask array keeps like's chunks."""
    if (g.shape if type(g) is np.ndarray else np.shape(g)) == (like.shape if type(like) is np.ndarray else
                                                               np.shape(like)):
        return g
    if _foreign(like):
        return g + np.zeros_like(like, dtype=np.result_type(g, like))
    return np.broadcast_to(g, np.shape(like))


def _fill(g, x):
    """A gradient handed back to the user: x's shape, its own memory (x's library, chunks and device)."""
    if np.shape(g) == np.shape(x):
        return g
    dtype = _gradient_dtype(g, x)
    if _foreign(x) or _foreign(g):
        return g + np.zeros_like(x, dtype=dtype, shape=np.shape(x))
    return np.array(np.broadcast_to(g, np.shape(x)), dtype=dtype)


def _seed(y):
    """The adjoint 1 of a scalar output; refuses an array with more than one element, and what is not a number."""
    if type(y) is float:                    # (the common case, without NumPy's dispatch: 5 us a call)
        return 1.0
    array = isinstance(y, np.ndarray) or _foreign(y)         # NumPy's, Dask's, CuPy's
    if not (array or isinstance(y, (int, float, complex, np.generic))) or isinstance(y, bool) or (
            array and not np.issubdtype(y.dtype, np.number)):
        raise TypeError(f"grad needs a function whose output is a number, but it returned {type(y).__name__} "
                        f"{y!r:.60}; did the function forget a `return`?")
    if np.prod(np.shape(y)) != 1:            # not np.size: Dask computes an array to count it
        raise TypeError(f"grad needs a function with a scalar output, but it returned an array of shape {np.shape(y)}; "
                        "use s2s.vjp or s2s.jacobian for vector outputs")
    one = np.ones_like(y)
    return one[()] if isinstance(y, np.generic) else one    # a NumPy number stays one: a 0-d array is slow in loops


def _real_output(y):
    """Before the reverse sweep of a gradient with respect to real arguments: the output must be real."""
    if np.iscomplexobj(y):
        raise ValueError("s2s: the function returned a complex number of real arguments: reverse mode would give the "
                         "derivative of its real part only. Use mode=\"forward\" for df/dx (complex), or "
                         "differentiate np.real(...), np.imag(...) or np.abs(...) of the output")


def _scatter(x, index, g):
    """The adjoint of x[index]: zero everywhere but at index, where g is added (repeated indices add up).

    For a dict, only the key read; for a list or tuple, a list of zeros (0.0) with g in place."""
    if isinstance(x, dict):
        return {index: g}
    if isinstance(x, (list, tuple)):
        out = [0.0] * len(x)
        out[index] = g
        return out
    dtype = _gradient_dtype(_array(x).dtype, _array(g).dtype)
    if not _foreign(x):
        out = np.zeros(np.shape(x), dtype=dtype)
        np.add.at(out, index, g)
        return out
    out = np.zeros_like(x, dtype=dtype)
    if _basic_index(index):                 # no index repeats: written in place (Dask, CuPy: in their library)
        out[index] = g
        return out
    try:
        np.add.at(out, index, g)
    except TypeError as exc:
        raise NotImplementedError(f"the adjoint of indexing a {type(x).__module__}.{type(x).__name__} with an "
                                  "array of indices: repeated indices add up with numpy.add.at, which that "
                                  "library does not support; index with slices or integers") from exc
    return out


def _scatter_into(g_all, x, index, g):
    """_add(g_all, _scatter(x, index, g)) where g_all is an adjoint of x's own, which nothing else reads (made by
    _zeros_like_tree, handed from one sum to the next): g added at index in place (s2s/passes/accumulate_items.py)."""
    if type(g_all) is list and isinstance(index, (int, np.integer)):
        g_all[index] = _add(g_all[index], g)
        return g_all
    if type(g_all) is dict and type(x) is dict:
        g_all[index] = _add(g_all[index], g) if index in g_all else g
        return g_all
    return _add(g_all, _scatter(x, index, g))


def _add(a, b):
    """The sum of two adjoints of a container (dicts by key, lists and tuples item by item); 0.0 is no adjoint."""
    if isinstance(a, (int, float)) and a == 0:
        return b
    if isinstance(b, (int, float)) and b == 0:
        return a
    if isinstance(a, dict) and isinstance(b, dict):
        out = dict(a)
        for key, value in b.items():
            out[key] = _add(out[key], value) if key in out else value
        return out
    if isinstance(a, (list, tuple)) or isinstance(b, (list, tuple)):
        if len(a) != len(b):
            raise ValueError(f"adjoints of lists of lengths {len(a)} and {len(b)} cannot be added")
        return [_add(x, y) for x, y in zip(a, b)]
    return a + b


def concat(a, b):
    """`a + b` on two tuples or two lists: their concatenation."""
    return a + b


def repeat(items, count):
    """`items * count` on a tuple or list: count copies one after the other."""
    return items * count


def _element_read(x):
    """A part of an array read on the right of `a[i], a[j] = a[j], a[i]`: a number is a copy, and so a swap;
    a row or a slice would be a view that the first write changes, which s2s does not follow."""
    if np.ndim(x) > 0:
        raise ValueError("s2s: the right side of this assignment reads a slice or row of an array that the "
                         "assignment writes into; NumPy gives a view, which the first write changes (so this "
                         "is not a swap). Copy it first: a[0], a[1] = a[1].copy(), a[0].copy()")
    return x


def _assert_element(x, name, written):
    """Before `written[...] = ...`: `name`, read from written earlier, must be a number (a copy), not a view."""
    if np.ndim(x) > 0:
        raise ValueError(f"s2s: {name!r} is a slice or row of {written!r} (a view), and {written!r} is written into "
                         f"while {name!r} is still used; s2s does not follow a write through one name to the other. "
                         f"Copy it first: {name} = {written}[...].copy()")


def _assert_number(x, name, other, held=None, symbol="+"):
    """Before `name += ...` where name was read from other (held, its value): it must be a number or an array of its
    own (`x[idx]` with an integer array is a copy), not a row, a slice or an item of a list (the same array)."""
    if np.ndim(x) > 0 and not (isinstance(held, np.ndarray) and isinstance(x, np.ndarray)
                               and not np.may_share_memory(x, held)):
        part = "an item" if isinstance(held, (list, tuple, dict)) else "a slice or row"
        raise ValueError(f"s2s: {name!r} is {part} of {other!r} (the same array), so `{name} {symbol}= ...` would "
                         f"change {other!r} too; s2s does not follow a write through one name to the other. Copy it "
                         f"first: {name} = {name}.copy()")


def _assert_inexact(array, name):
    """Before `name[...] = v` where v has a derivative: name must hold floats. An integer array truncates v, so it
    keeps no derivative of it, and s2s could not tell from the code which of the two it is."""
    dtype = getattr(array, "dtype", None)      # a list or dict keeps the float it is given
    if dtype is not None and not np.issubdtype(dtype, np.inexact):
        raise ValueError(f"s2s: {name!r} holds {dtype} numbers, so writing a float into it "
                         f"truncates the float, and keeps no derivative of it; s2s could not tell this from the "
                         f"code. Make {name!r} a float array ({name} = {name}.astype(float), or np.zeros(n) for a "
                         f"new one), or write int(v) if truncating is meant")


def item(x):
    """`x.item()`: the one number an array (or NumPy number) holds, as a Python number."""
    return x.item() if hasattr(x, "item") else x


def copy_method(x):
    """`x.copy()` as Python runs it: a list's copy is a list, a dict's a dict, an array's an array.
    (s2s/passes/sequences.py replaces it with np.copy or list() once the kinds of values are known.)"""
    return x.copy()


def dict_key(d, index):
    """Key number index of a dict, in its order: what `for k in d:` binds."""
    return list(d)[index]


def _r_item(x):
    """An item of np.r_[...]: at least one dimension (a number becomes a one-element array)."""
    return np.atleast_1d(x)


def _c_item(x):
    """An item of np.c_[...]: at least two dimensions, a 1-D array as a column."""
    x = np.asarray(x)
    return x.reshape(-1, 1) if x.ndim == 1 else x.reshape(1, 1) if x.ndim == 0 else x


def _joined(a, b):
    """The tangent of a + b on sequences: the tangents of both, one list (0.0 stands for a zero tangent)."""
    return list(a) + list(b)


def _head(g, a):
    """The adjoint of a from the adjoint g of a + b (a list; 0.0 for no adjoint)."""
    if isinstance(g, (int, float)) and g == 0:
        return 0.0
    return list(g[:len(a)])


def _tail(g, a):
    """The adjoint of b from the adjoint g of a + b."""
    if isinstance(g, (int, float)) and g == 0:
        return 0.0
    return list(g[len(a):])


def _sum_copies(g, items, count):
    """The adjoint of items from the adjoint of items * count: the copies' adjoints added item by item."""
    if isinstance(g, (int, float)) and g == 0:
        return 0.0
    n = len(items)
    total = [0.0] * n
    for k in range(count):
        total = [_add(t, x) for t, x in zip(total, g[k * n:(k + 1) * n])]
    return total


def _item(g, key):
    """Item key of a container's adjoint: no entry is no adjoint (0.0)."""
    if isinstance(g, dict):
        return g.get(key, 0.0)
    if isinstance(g, (list, tuple, np.ndarray)) or _foreign(g):
        return g[key]
    return g


def _zeros_like_tree(x):
    if type(x) is float:                    # (the common case first: a number's adjoint, in a loop's reverse sweep)
        return 0.0
    if isinstance(x, dict):
        return {key: _zeros_like_tree(value) for key, value in x.items()}
    if isinstance(x, (list, tuple)):
        return [_zeros_like_tree(value) for value in x]
    return np.zeros_like(x) if isinstance(x, np.ndarray) or _foreign(x) else 0.0


def _fill_tree(g, x):
    """A container's gradient handed back to the user: the structure, shapes and types of x."""
    if isinstance(g, (int, float)) and not isinstance(x, (int, float)) and g == 0:
        return _zeros_like_tree(x) if not isinstance(x, (tuple, list, dict)) else _fill_tree({}, x) \
            if isinstance(x, dict) else _fill_tree([0.0] * len(x), x)
    if isinstance(x, dict):
        g = g if isinstance(g, dict) else {}
        return {key: _fill_tree(g[key], value) if key in g else _zeros_like_tree(value) for key, value in x.items()}
    if isinstance(x, (list, tuple)):
        items = [_fill_tree(_item(g, k), value) for k, value in enumerate(x)]
        if isinstance(x, tuple):            # a namedtuple's gradient is one of its kind
            return type(x)(*items) if hasattr(type(x), "_fields") else tuple(items)
        return items
    if _foreign(x) or _foreign(g):          # another library's array or 0-d array: stays one
        return _fill(g, x)
    if isinstance(x, np.ndarray):
        return _fill(g, x) if np.ndim(g) else np.full(np.shape(x), g, dtype=_gradient_dtype(x))
    return float(g)


def _spread(g, items):
    """The adjoint of each item of the builtin sum over a list (or an array's rows): g, for every item, summed
    back to the item's shape where the sum broadcast it (`sum([W, b])` with b a row)."""
    if isinstance(items, np.ndarray):
        return np.broadcast_to(g, np.shape(items))
    if _foreign(items):
        return _expand(g, items)
    return [_unbroadcast(g, item) for item in items]


def _overwritten(g, index):
    """The adjoint of a container before `container[index] = value`: what was overwritten gets none."""
    if isinstance(g, dict):
        return {k: v for k, v in g.items() if k != index}
    if isinstance(g, list):
        g = list(g)
        g[index] = 0.0
        return g
    g = g.copy() if _foreign(g) else np.array(g, copy=True)
    g[index] = 0
    return g


def _written(g, index, value):
    """The adjoint of the value written by `container[index] = value`; where an index repeats, only the
    last write stays in the array, and only it gets an adjoint."""
    if isinstance(g, dict):
        return g.get(index, 0.0)
    if isinstance(g, list):
        return g[index]
    taken = g[index]
    if _basic_index(index):                 # no index repeats: every write stays
        return _unbroadcast(taken, value)
    order = np.full(np.shape(g), -1)
    order[index] = np.arange(np.size(taken)).reshape(np.shape(taken))
    last = order[index] == np.arange(np.size(taken)).reshape(np.shape(taken))
    return _unbroadcast(np.where(last, taken, 0.0) if not np.all(last) else taken, value)


def _axes(axis, ndim):
    """A reduction's axis argument as a sorted tuple of non-negative axes."""
    if axis is None:
        return tuple(range(ndim))
    axes = (axis,) if np.ndim(axis) == 0 else tuple(axis)
    if ndim == 0:       # a number reduced over axis 0 or -1 (scipy.special.logsumexp allows it): nothing to put back
        return ()
    return tuple(sorted(a % ndim for a in axes))


def _reduced_size(x, axis=None):
    """How many elements of x each result of a reduction over axis combines."""
    shape = np.shape(x)
    count = 1
    for a in _axes(axis, len(shape)):
        count *= shape[a]
    return count


def _broadcast_back(g, x, axis=None, keepdims=False):
    """The adjoint g of a reduction of x over axis, with the reduced axes put back as size 1.

    The result broadcasts to x's shape without being copied to it: the transform spreads it lazily."""
    shape = np.shape(x)
    # x's dtype if it is a float one, else at least float32; a Python number counts as float64 (not as NEP 50's weak
    # scalar, which float32 would win over)
    dtype = _gradient_dtype(x if hasattr(x, "dtype") else np.asarray(x).dtype)
    if axis is None and not keepdims:       # a full reduction: one number, as an array of ones' shape
        if isinstance(g, (np.ndarray, np.generic)) or _foreign(g):    # an array: kept in its library
            return np.reshape(g, (1,) * len(shape)).astype(dtype, copy=False)
        return np.full_like(x, g, dtype=dtype, shape=(1,) * len(shape))
    axes = _axes(axis, len(shape))
    kept = tuple(1 if i in axes else n for i, n in enumerate(shape))
    if not shape and np.size(g) == 1:       # a number reduced with keepdims (scipy's logsumexp gives it a shape)
        return np.reshape(g, ()).astype(dtype, copy=False)
    if not keepdims:
        g = np.broadcast_to(g, tuple(n for i, n in enumerate(shape) if i not in axes))
    return np.reshape(np.broadcast_to(g, kept) if keepdims else g, kept).astype(dtype, copy=False)


def _matmul_promote(g, a, b):
    """Operands and adjoint as matmul sees them: 1-D operands become a row (a) or a column (b)."""
    g = _array(g)
    if np.ndim(b) == 1:
        g, b = g[..., None], _array(b)[:, None]
    if np.ndim(a) == 1:
        g, a = g[..., None, :], _array(a)[None, :]
    return g, a, b


def _matmul_left(g, a, b):
    """The adjoint of a in a @ b."""
    if np.ndim(a) == 2:
        if np.ndim(b) == 2:
            return g @ b.T
        if np.ndim(b) == 1:
            return np.outer(g, b)
    if np.ndim(a) == 0 or np.ndim(b) == 0:
        return _unbroadcast(g * b, a)
    g2, a2, b2 = _matmul_promote(g, a, b)
    da = g2 @ np.swapaxes(b2, -1, -2)
    if np.ndim(a) == 1:
        da = da[..., 0, :]
    return _unbroadcast(da, a)


def _matmul_right(g, a, b):
    """The adjoint of b in a @ b."""
    if np.ndim(a) == 2 and np.ndim(b) in (1, 2):
        return a.T @ g
    if np.ndim(a) == 0 or np.ndim(b) == 0:
        return _unbroadcast(g * a, b)
    g2, a2, b2 = _matmul_promote(g, a, b)
    db = np.swapaxes(a2, -1, -2) @ g2
    if np.ndim(b) == 1:
        db = db[..., 0]
    return _unbroadcast(db, b)


def _dot_left(g, a, b):
    """The adjoint of a in numpy.dot(a, b), which is a @ b up to two dimensions."""
    if max(np.ndim(a), np.ndim(b)) > 2:
        raise NotImplementedError("the derivative of numpy.dot of arrays with more than 2 dimensions: use @")
    return _matmul_left(g, a, b)


def _dot_right(g, a, b):
    """The adjoint of b in numpy.dot(a, b)."""
    if max(np.ndim(a), np.ndim(b)) > 2:
        raise NotImplementedError("the derivative of numpy.dot of arrays with more than 2 dimensions: use @")
    return _matmul_right(g, a, b)


def _prod_of_others(x, axis=None):
    """For each element of x, the product of the other elements it is reduced with (exact with zeros)."""
    x = _array(x)
    axes = _axes(axis, x.ndim)
    moved = np.moveaxis(x, axes, tuple(range(x.ndim - len(axes), x.ndim)))
    flat = moved.reshape(moved.shape[:x.ndim - len(axes)] + (-1,))
    ones = np.ones_like(flat, shape=flat.shape[:-1] + (1,))
    before = np.cumprod(np.concatenate([ones, flat[..., :-1]], axis=-1), axis=-1)
    after = np.flip(np.cumprod(np.concatenate([ones, np.flip(flat, -1)[..., :-1]], axis=-1), axis=-1), -1)
    return np.moveaxis((before * after).reshape(moved.shape), tuple(range(x.ndim - len(axes), x.ndim)), axes)


def _cumsum_adjoint(g, x, axis=None):
    if axis is None:
        return np.reshape(np.flip(np.cumsum(np.flip(np.ravel(g)))), np.shape(x))
    return np.flip(np.cumsum(np.flip(g, axis), axis), axis)


def _unconcatenate(g, arrays, axis=0):
    """The adjoints of the pieces of a concatenation along axis (None: of the flattened pieces)."""
    if axis is None:
        flat = _unconcatenate(g, [np.ravel(a) for a in arrays], 0)
        return [np.reshape(p, np.shape(a)) for p, a in zip(flat, arrays)]
    axis = axis % np.ndim(g)
    pieces, start = [], 0
    for a in arrays:                        # slices, not numpy.split: Dask does not implement it
        size = np.shape(a)[axis]
        pieces.append(g[(slice(None),) * axis + (slice(start, start + size),)])
        start += size
    return pieces


def _unstack_joined(g, arrays, axis, promote):
    """The adjoints of the pieces of hstack / vstack: split where they were joined, reshaped back."""
    pieces = [promote(a) for a in arrays]
    return [np.reshape(p, np.shape(a)) for p, a in zip(_unconcatenate(g, pieces, axis), arrays)]


def _untile(g, x, reps):
    shape = np.shape(x)
    reps = (reps,) if np.ndim(reps) == 0 else tuple(reps)
    ndim = max(len(shape), len(reps))
    shape = (1,) * (ndim - len(shape)) + shape
    reps = (1,) * (ndim - len(reps)) + tuple(reps)
    g = np.reshape(g, [n for pair in zip(reps, shape) for n in pair])
    return np.reshape(np.sum(g, axis=tuple(range(0, 2 * ndim, 2))), np.shape(x))


def _unrepeat(g, x, repeats, axis=None):
    x = _array(x)
    if axis is None:
        source, g, axis = x.ravel(), np.ravel(g), 0
    else:
        source = x
    n = source.shape[axis]
    if np.ndim(repeats) == 0:               # each element repeated alike: sum the copies, in any library
        moved = np.moveaxis(g, axis, 0)
        summed = np.sum(np.reshape(moved, (n, int(repeats)) + moved.shape[1:]), axis=1)
        return np.reshape(np.moveaxis(summed, 0, axis), x.shape).astype(_gradient_dtype(x), copy=False)
    index = np.repeat(np.arange(n), repeats)
    out = np.zeros((n,) + np.moveaxis(g, axis, 0).shape[1:], dtype=_gradient_dtype(x))
    np.add.at(out, index, np.moveaxis(g, axis, 0))
    return np.reshape(np.moveaxis(out, 0, axis), x.shape)


def _diag_adjoint(g, x, k=0):
    if np.ndim(x) == 1:
        return np.diagonal(g, k)
    if _foreign(g) or _foreign(x):          # in g's library: numpy.diag's square, cut and padded to x's shape
        m, n = np.shape(x)
        square = np.diag(g, k)[:m, :n]
        return np.pad(square, ((0, m - square.shape[0]), (0, n - square.shape[1])))
    out = np.zeros(np.shape(x), dtype=_gradient_dtype(x))
    i = np.arange(len(g))
    if k >= 0:
        out[i, i + k] = g
    else:
        out[i - k, i] = g
    return out


def _einsum_adjoint(subscripts, g, a, b, k):
    """The adjoint of operand k of a one- or two-operand einsum without ellipsis or repeated indices."""
    spec = subscripts.replace(" ", "")
    if "->" in spec:
        inputs, output = spec.split("->")
    else:
        inputs = spec
        letters = inputs.replace(",", "")
        output = "".join(sorted(c for c in set(letters) if letters.count(c) == 1))
    terms = inputs.split(",")
    operands = [a, b][:len(terms)]
    target = terms[k]
    if "." in spec or len(set(target)) != len(target):
        raise NotImplementedError(f"the derivative of einsum {subscripts!r}: ellipsis and repeated indices "
                                  "in one operand are not supported")
    others = [(t, o) for j, (t, o) in enumerate(zip(terms, operands)) if j != k]
    seen = output + "".join(t for t, _ in others)
    missing = [c for c in target if c not in seen]
    ones = [np.ones_like(operands[k], shape=(np.shape(operands[k])[target.index(c)],)) for c in missing]
    expression = ",".join([output] + [t for t, _ in others] + missing) + "->" + target
    return np.einsum(expression, g, *[o for _, o in others], *ones)


def _shaped_like(*operands):
    """An uninitialized array with the shape and dtype an elementwise operation on operands would give.

    Stands in for a value the derivative needs only for its shape (the optimizer's shape pass). A list or tuple
    (a constant the user wrote, `t * [[0.5, 1.0]]`) is read as the array NumPy makes of it."""
    if any(isinstance(o, (list, tuple)) for o in operands):
        operands = tuple(np.asarray(o) if isinstance(o, (list, tuple)) else o for o in operands)
    shapes = {np.shape(o) for o in operands} - {()}
    shape = shapes.pop() if len(shapes) == 1 else np.broadcast_shapes(*(np.shape(o) for o in operands))
    dtype = np.result_type(*operands)
    foreign = [o for o in operands if _foreign(o)]
    if foreign:                             # in their library, lazy; a Dask array's chunks when it has the shape
        like = next((o for o in foreign if np.shape(o) == shape), foreign[0])
        return np.empty_like(like, dtype=dtype, shape=shape)
    return np.empty(shape, dtype)


def _masked(contribution, g):
    """contribution where the adjoint g is nonzero, and exactly zero where g is zero.

    Below np.where, maximum or abs the adjoint is zero on the branch not taken, whose values may be
    NaN or infinite there (np.sqrt of a negative number); 0 times them must stay 0, not become NaN. So at a
    function whose derivative is infinite somewhere (sqrt at 0): a value it gives that is discarded gets a zero
    adjoint. The contribution is linear in g, so where it is finite it is already zero where g is: a finite
    contribution (the usual case) is returned as it is, after one test."""
    if np.ndim(contribution) == 0 and np.ndim(g) == 0 and not (_foreign(g) or _foreign(contribution)):
        return contribution if g != 0 else 0.0
    if not (_foreign(g) or _foreign(contribution)) and np.isfinite(contribution).all():
        return contribution
    return np.where(_array(g) == 0, 0.0, contribution)


def _masked_tangent(t, g):
    """The tangent of _masked(contribution, g): the contribution's tangent t, also where g is zero (the
    contribution g * local has the tangent g_dot * local there: a residual exactly 0 on the branch taken), but
    zero where t is not finite there (local is NaN or infinite on a branch not taken)."""
    if np.ndim(t) == 0 and np.ndim(g) == 0 and not (_foreign(g) or _foreign(t)):
        return t if g != 0 or np.isfinite(t) else 0.0
    if not (_foreign(g) or _foreign(t)) and np.isfinite(t).all():
        return t
    return np.where((_array(g) == 0) & ~np.isfinite(t), 0.0, t)


def _unsupported(message):
    raise NotImplementedError(message)


def _shaped_as(x, like):
    """x, which has like's shape and dtype: a loop's carried value read back from a checkpoint, like the loop's
    result (the shape pass takes x's shape from it, then reads x itself: nothing of this is left)."""
    return x


def _leaves(x):
    """The arrays x is or holds (items of lists, tuples and dicts, at any depth)."""
    if type(x) is np.ndarray:
        return [x]
    if isinstance(x, dict):
        return [a for v in x.values() for a in _leaves(v)]
    if isinstance(x, (list, tuple)):
        return [a for v in x for a in _leaves(v)]
    return [x] if isinstance(x, np.ndarray) or _foreign(x) else []


def _owner(x):
    """The object whose memory the array x uses: x, or the array (or buffer) its views lead back to."""
    while isinstance(x, np.ndarray) and x.base is not None:
        x = x.base
    return x


def _shared(value, held):
    """Whether the array value may share memory with one of the arrays held."""
    if type(value) is not np.ndarray:       # another library's array: its own object, or not
        return any(value is a for a in held)
    mine = _owner(value)
    for a in held:
        if type(a) is not np.ndarray:
            continue
        theirs = _owner(a)
        if theirs is mine:
            return True
        # two arrays owning their memory never share it; views of buffers of other kinds (bytes, mmap) are
        # compared by their bounds
        if not (type(mine) is np.ndarray and type(theirs) is np.ndarray) and np.may_share_memory(value, a):
            return True
    return False


def _copied(value):
    """value with every array in it copied (numbers as they are): a derivative's output that is the caller's own."""
    return _unshared(value, value)


def _unshared(value, *others):
    """value, an output of a derivative, with every array in it that shares memory with one of others (the
    arguments and globals the derivative read, which the caller holds) replaced by a copy: the caller may change
    the output in place (`g *= 0.1`) without changing its own data, as with a gradient Python computed. (A check
    per array in O(1): the objects whose memory they use.)"""
    if type(value) is np.ndarray:            # the common case: one NumPy array, and NumPy arrays given
        mine = value if value.base is None else _owner(value)
        for o in others:
            if type(o) is not np.ndarray or type(mine) is not np.ndarray:
                return value.copy() if _shared(value, [a for o in others for a in _leaves(o)]) else value
            if o is mine or o.base is not None and _owner(o) is mine:
                return value.copy()
        return value
    if isinstance(value, dict):
        held = [a for o in others for a in _leaves(o)]
        return {k: _unshared(v, *held) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        held = [a for o in others for a in _leaves(o)]
        items = [_unshared(v, *held) for v in value]
        return items if type(value) is list else tuple(items) if type(value) is tuple else type(value)(*items)
    if isinstance(value, np.ndarray) or _foreign(value):
        return value.copy() if _shared(value, [a for o in others for a in _leaves(o)]) else value
    return value


# Helpers whose source the emitter copies into the generated module when it uses them.
EMITTED_HELPERS = {copy_method, _scatter_into, _assert_number, _assert_inexact, _real_output, _prod_of_others, _add, _head, _tail, _joined, _r_item, _c_item, _element_read, _assert_element, _sum_copies, _item, _zeros_like_tree, _fill_tree, _spread, _overwritten, _written, setitem,
                   list_append,
                   _unbroadcast, _expand, _fill, _seed, _scatter, _broadcast_back, _reduced_size, _matmul_left, _matmul_right, _dot_left,
                   _dot_right, _matmul_promote, _axes, _cumsum_adjoint,
                   _unconcatenate, _unstack_joined, _untile, _unrepeat, _diag_adjoint, _einsum_adjoint, _unsupported,
                   _shaped_like, stop_gradient, _masked, _masked_tangent, _foreign, _array, _basic_index,
                   _gradient_dtype, _shaped_as, _unshared, _leaves, _copied, _owner, _shared}


# ---------------------------------------------------------------- Python's side effects on objects
# (s2s/ir/object_state.py: performed once, in the forward sweep, with the primal value; the emitter spells the
# writes as Python does: `obj.name = value`, `container[key] = value`, `items.append(value)`)

def store_attribute(obj, name, value):
    """`obj.name = value`: an effect, performed where Python performs it."""
    setattr(obj, name, value)


def store_item(container, key, value):
    """`container[key] = value` on a dict, list or array an object holds: an effect."""
    container[key] = value


def held_append(items, value):
    """`items.append(value)` on a list an object holds: an effect."""
    items.append(value)


def held_extend(items, values):
    """`items.extend(values)` on a list an object holds: an effect."""
    items.extend(values)


def state_lost(value, token, place):
    """A mark (removed before code is emitted): value, written into an object, is no longer forwarded."""


def state_check(tokens, place, *values):
    """A mark (removed before code is emitted): a read of an object after the writes `tokens` named (and of
    the forwarded values) sees only their primal values; refused if one of them carries a derivative."""


def _held_number(x, name):
    """Before `obj.name += v`: NumPy writes an array (a list extends) in place, which other names may share."""
    if any(hasattr(type(x), method) for method in ("__iadd__", "__imul__", "__ior__")):
        raise ValueError(f"s2s: `{name} += ...` on a {type(x).__name__} writes into it in place, which s2s does "
                         f"not follow to the other names that may hold it. Write `{name} = {name} + ...`")


def _bound(x, unbound, name):
    """A read of a variable one branch bound (s2s/ir/lower.py join_if): unbound on this path, as Python says."""
    if x is unbound:
        raise UnboundLocalError(f"cannot access local variable {name!r} where it is not associated with a value")


# (performed where Python performs them: never dropped, merged or moved, s2s/passes/optimize.py; not methods run
# as Python runs them, which s2s/driver/mutation.py checks)
OBJECT_EFFECTS = frozenset({store_attribute, store_item, held_append, held_extend, state_lost, state_check,
                            _held_number})
for _effect in (*OBJECT_EFFECTS, _bound):
    _effect._s2s_effect = True
EMITTED_HELPERS |= {_held_number, _bound}


def _reads_only(function, *args, **kwargs):
    """function(*args, **kwargs), a library's Python function s2s neither reads nor has a rule for, given arrays
    that carry a derivative (s2s/driver/mutation.py: refuse_opaque_writers): called as Python calls it, and refused
    if it wrote into one of them, which s2s would not follow. Its result carries no derivative (the transform
    refuses a call whose result needs one)."""
    before = [_contents(a) for a in (*args, *kwargs.values())]
    result = function(*args, **kwargs)
    for then in before:
        if then is not None and _changed(then):
            raise ValueError(f"s2s: {getattr(function, '__qualname__', function)} wrote into an array, list or dict "
                             f"it was given that carries a derivative, which s2s does not follow: register a rule "
                             f"for it, or call it outside the differentiated function")
    return result


def _contents(a):
    """What _changed compares: an array's values, a list's or dict's items (which objects, in which order) and theirs."""
    if type(a) is np.ndarray:
        return (a, a.copy())
    if type(a) in (list, tuple):
        return (a, list(a), [_contents(v) for v in a])
    if type(a) is dict:
        return (a, list(a.items()), [_contents(v) for v in a.values()])
    return None


def _changed(then):
    a = then[0]
    if type(a) is np.ndarray:
        return not np.array_equal(a, then[1], equal_nan=True)
    items = list(a.items()) if type(a) is dict else list(a)
    if len(items) != len(then[1]) or any((k is not j) if type(a) is not dict else (k[0] != j[0] or k[1] is not j[1])
                                         for k, j in zip(items, then[1])):
        return True
    return any(inner is not None and _changed(inner) for inner in then[2])


_reads_only._s2s_effect = True          # (never dropped: Python runs the call)
EMITTED_HELPERS.update({_reads_only, _contents, _changed})
