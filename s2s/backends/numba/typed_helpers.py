"""Run-time helpers that stay in a derivative whose shapes do not remove them, spelled so that Numba types
them: each is its Python meaning (copied into the module, as the other helpers are) and a
`numba.extending.overload` that picks, by the Numba types of its arguments, a version Numba compiles. The same
texts serve the derivative compiled in this process (`typed_helpers`) and the exported module (export.py).

- `setitem(a, i, v)`: `a[i] = v` on a copy, where s2s/passes/in_place.py could not prove that nothing reads the old
  array (`cp = np.zeros(n); dp = np.zeros(n)` made one array, written twice);
- `_diag_adjoint(g, x, k)`: the adjoint of `np.diag`, a loop writing g on the diagonal;
- `_scatter`, `_item`, `_add` on a list of numbers (`conc = [a + h * da, ...]`): the adjoint of a list is a
  list of floats, read and added item by item; `_scatter_into` adds an item's adjoint into a list's adjoint of
  its own in place (s2s/passes/accumulate_items.py).
"""
from __future__ import annotations

from typing import Any

TEXTS = {
    "setitem": ('''def setitem(container, index, value):
    """`container[index] = value` on a copy (the derivative still reads the old array or list)."""
    out = container.copy()
    out[index] = value
    return out
''', '''@numba.extending.overload(setitem)
def _setitem_typed(container, index, value):
    if isinstance(container, (numba.types.Array, numba.types.List)):
        def copied(container, index, value):
            out = container.copy()
            out[index] = value
            return out
        return copied
    return None
'''),
    "_diag_adjoint": ('''def _diag_adjoint(g, x, k=0):
    """The adjoint of np.diag(x, k): the k-th diagonal of g (x a vector), or g on it (x a matrix)."""
    if np.ndim(x) == 1:
        return np.diag(g, k)
    out = np.zeros(np.shape(x), np.result_type(x, np.float32))
    for i in range(len(g)):
        if k >= 0:
            out[i, i + k] = g[i]
        else:
            out[i - k, i] = g[i]
    return out
''', '''@numba.extending.overload(_diag_adjoint)
def _diag_adjoint_typed(g, x, k=0):
    if not (isinstance(x, numba.types.Array) and isinstance(g, numba.types.Array)):
        return None
    if x.ndim == 1:
        return lambda g, x, k=0: np.diag(g, k)
    dtype = x.dtype if isinstance(x.dtype, numba.types.Float) else numba.types.float64

    def on_matrix(g, x, k=0):
        out = np.zeros(x.shape, dtype)
        for i in range(g.shape[0]):
            if k >= 0:
                out[i, i + k] = g[i]
            else:
                out[i - k, i] = g[i]
        return out
    return on_matrix
'''),
    "_scatter": ('''def _scatter(x, index, g):
    """The adjoint of x[index]: zeros but g at index (a list: a list of floats)."""
    if isinstance(x, list):
        out = [0.0] * len(x)
        out[index] = g
        return out
    out = np.zeros_like(x)
    out[index] += g
    return out
''', '''@numba.extending.overload(_scatter)
def _scatter_typed(x, index, g):
    if isinstance(x, numba.types.List):
        def on_list(x, index, g):
            out = [0.0] * len(x)
            out[index] = g
            return out
        return on_list

    def on_array(x, index, g):
        out = np.zeros_like(x)
        out[index] += g
        return out
    return on_array
'''),
    "_item": ('''def _item(g, key):
    """Item key of a list's adjoint (a number stands for no adjoint)."""
    return g[key] if isinstance(g, (list, tuple, np.ndarray)) else g
''', '''@numba.extending.overload(_item)
def _item_typed(g, key):
    if isinstance(g, (numba.types.List, numba.types.BaseTuple, numba.types.Array)):
        return lambda g, key: g[key]
    return lambda g, key: g
'''),
    "_add": ('''def _add(a, b):
    """The sum of two adjoints of a list, item by item (the number 0.0 is no adjoint)."""
    if not isinstance(a, list):
        return list(b) if isinstance(b, list) else a + b
    if not isinstance(b, list):
        return list(a)
    return [a[i] + b[i] for i in range(len(a))]
''', '''@numba.extending.overload(_add)
def _add_typed(a, b):
    listed = isinstance(a, numba.types.List), isinstance(b, numba.types.List)
    if listed == (True, True):
        return lambda a, b: [a[i] + b[i] for i in range(len(a))]
    if listed == (True, False):
        return lambda a, b: list(a)
    if listed == (False, True):
        return lambda a, b: list(b)
    if all(isinstance(t, (numba.types.Number, numba.types.Array)) for t in (a, b)):
        return lambda a, b: a + b
    return None             # tuples, dicts: Numba refuses the call, at the user's line
'''),
}

TEXTS["_scatter_into"] = ('''def _scatter_into(g_all, x, index, g):
    """g added at item index of g_all, an adjoint of x's own that nothing else reads (a list or an array: in
    place)."""
    g_all[index] = g_all[index] + g
    return g_all
''', '''@numba.extending.overload(_scatter_into)
def _scatter_into_typed(g_all, x, index, g):
    if isinstance(g_all, (numba.types.List, numba.types.Array)) and isinstance(index, numba.types.Integer):
        def into(g_all, x, index, g):
            g_all[index] = g_all[index] + g
            return g_all
        return into
    return None             # a dict, a tuple: refused at the user's line
''')

TEXTS["_unbroadcast"] = ('''def _unbroadcast(g, x, result=None):
    """g summed to x's shape, where x is a number (a sum a loop carries: `total += v[i] ** 2`) or g is one;
    given result, g stands for result's whole shape (each copy counts)."""
    if np.ndim(x) == 0:
        if result is None or np.ndim(result) == 0:
            return g if np.ndim(g) == 0 else np.sum(g)
        return np.sum(g) * (np.size(result) // np.size(g))
    return g
''', '''@numba.extending.overload(_unbroadcast)
def _unbroadcast_typed(g, x, result=None):
    number = (numba.types.Number, numba.types.Boolean)
    whole = result is None or isinstance(result, (numba.types.NoneType, numba.types.Omitted) + number)
    if isinstance(x, number) and whole:
        if isinstance(g, number):
            return lambda g, x, result=None: g
        if isinstance(g, numba.types.Array):
            return lambda g, x, result=None: np.sum(g)
    if isinstance(x, number) and isinstance(result, numba.types.Array):
        if isinstance(g, number):
            return lambda g, x, result=None: g * result.size
        if isinstance(g, numba.types.Array):
            return lambda g, x, result=None: np.sum(g) * (result.size // g.size)
    if isinstance(x, numba.types.Array) and isinstance(g, number) and (
            result is None or isinstance(result, (numba.types.NoneType, numba.types.Omitted))):
        return lambda g, x, result=None: g
    return None             # arrays whose shapes only the run tells: refused at the user's line
''')

# a @ b's adjoints by the operands' dimensions (1 or 2), as s2s/passes/specialize.py writes them when it knows them
TEXTS["_matmul_left"] = ('''def _matmul_left(g, a, b):
    """The adjoint of a in a @ b (vectors and matrices)."""
    if np.ndim(a) == 2:
        return g @ b.T if np.ndim(b) == 2 else np.outer(g, b)
    return b @ g if np.ndim(b) == 2 else g * b
''', '''@numba.extending.overload(_matmul_left)
def _matmul_left_typed(g, a, b):
    if not (isinstance(a, numba.types.Array) and isinstance(b, numba.types.Array) and a.ndim in (1, 2)
            and b.ndim in (1, 2)):
        return None
    if a.ndim == 2:
        if b.ndim == 2:
            return lambda g, a, b: g @ b.T
        return lambda g, a, b: np.outer(g, b)
    if b.ndim == 2:
        return lambda g, a, b: b @ g
    return lambda g, a, b: g * b
''')

TEXTS["_matmul_right"] = ('''def _matmul_right(g, a, b):
    """The adjoint of b in a @ b (vectors and matrices)."""
    if np.ndim(a) == 2:
        return a.T @ g
    return np.outer(a, g) if np.ndim(b) == 2 else g * a
''', '''@numba.extending.overload(_matmul_right)
def _matmul_right_typed(g, a, b):
    if not (isinstance(a, numba.types.Array) and isinstance(b, numba.types.Array) and a.ndim in (1, 2)
            and b.ndim in (1, 2)):
        return None
    if a.ndim == 2:
        return lambda g, a, b: a.T @ g
    if b.ndim == 2:
        return lambda g, a, b: np.outer(a, g)
    return lambda g, a, b: g * a
''')

TEXTS["_expand"] = ('''def _expand(g, like):
    """g broadcast to like's shape (a copy: Numba has no read-only view to give)."""
    if np.ndim(like) == 0:
        return g
    out = np.empty(np.shape(like), np.result_type(g, np.float32))
    out[...] = g
    return out
''', '''@numba.extending.overload(_expand)
def _expand_typed(g, like):
    number = (numba.types.Number, numba.types.Boolean)
    if isinstance(like, number) and isinstance(g, number):
        return lambda g, like: g
    if not isinstance(like, numba.types.Array) or isinstance(g, numba.types.Array) and g.ndim > like.ndim:
        return None
    dtype = g.dtype if isinstance(g, numba.types.Array) else g
    dtype = dtype if isinstance(dtype, (numba.types.Float, numba.types.Complex)) else numba.types.float64

    def spread(g, like):
        out = np.empty(like.shape, dtype)
        out[...] = g
        return out
    return spread
''')

TEXTS["_broadcast_back"] = ('''def _broadcast_back(g, x, axis=None, keepdims=False):
    """The adjoint g of a whole reduction of x (axis None), as an array of ones' shape."""
    return np.full((1,) * np.ndim(x), g, np.result_type(x, np.float32)) if np.ndim(x) else g
''', '''@numba.extending.overload(_broadcast_back)
def _broadcast_back_typed(g, x, axis=None, keepdims=False):
    number = (numba.types.Number, numba.types.Boolean)
    whole = axis is None or isinstance(axis, (numba.types.NoneType, numba.types.Omitted))
    if not (whole and isinstance(g, number)):
        return None             # along an axis: refused at the user's line
    if isinstance(x, number):
        return lambda g, x, axis=None, keepdims=False: g
    if not isinstance(x, numba.types.Array) or isinstance(x.dtype, numba.types.Complex):
        return None
    ones = (1,) * x.ndim
    dtype = x.dtype if isinstance(x.dtype, numba.types.Float) else numba.types.float64
    return lambda g, x, axis=None, keepdims=False: np.full(ones, g, dtype)
''')

_MADE: dict[str, Any] = {}


def typed_helpers(numba: Any) -> dict[str, Any]:
    """The helpers above as Python functions whose overloads Numba compiles (registered once per process)."""
    if not _MADE:
        import numba.extending  # noqa: F401 - the overload texts use it
        import numpy as np
        for name, (text, overload) in TEXTS.items():
            namespace: dict[str, Any] = {"np": np, "numba": numba}
            exec(compile(text + "\n\n" + overload, f"<s2s-numba-helper {name}>", "exec"), namespace)
            _MADE[name] = namespace[name]
    return _MADE
