"""s2s's run-time helpers as Numba can type them: written out in the module where the derivative calls them
(`_seed`), or chosen by type through `numba.extending.overload` (`_zeros_like`, `_masked`, and
typed_helpers.py's: `setitem`, `_scatter`, `_unbroadcast`, ...); and why each helper Numba cannot type is
refused, with what to write instead."""
from __future__ import annotations

from typing import Any

from s2s.backends.numba.typed_helpers import TEXTS

NUMBA_HELPERS = {
    "_seed": '''def _seed(y):
    """The adjoint 1 of a scalar output (Numba target: the output is a number)."""
    return 1.0
''',
}
NUMBA_HELPERS |= {name: text for name, (text, _) in TEXTS.items()}    # typed_helpers.py: chosen by type

NUMBA_HELPERS["_zeros_like"] = '''def _zeros_like(x):
    """Zeros shaped like x: 0.0 for a number (np.zeros_like would give a 0-d array)."""
    return np.zeros_like(x) if isinstance(x, np.ndarray) else 0.0
'''

NUMBA_HELPERS["_masked"] = '''def _masked(contribution, g):
    """contribution where the adjoint g is nonzero, exactly zero where g is zero (0 * inf stays 0)."""
    return contribution if g != 0 else 0.0
'''

_OVERLOADED: dict[str, Any] = {}


def overloaded_helpers(numba: Any) -> dict[str, Any]:
    """The helpers that choose by type, as functions Numba compiles through @overload (made once)."""
    if _OVERLOADED:
        return _OVERLOADED
    import numpy as np
    from numba.core import types as nbtypes
    from numba.extending import overload

    def _zeros_like(x):        # no annotations: Numba compares the overload's signature with this one
        return np.zeros_like(x) if isinstance(x, np.ndarray) else 0.0

    @overload(_zeros_like)
    def _zeros_like_typed(x):
        if isinstance(x, nbtypes.Array):
            return lambda x: np.zeros_like(x)
        if isinstance(x, (nbtypes.Float, nbtypes.Integer, nbtypes.Boolean)):
            return lambda x: 0.0
        return None

    def _masked(contribution, g):
        return contribution if g != 0 else 0.0

    @overload(_masked)
    def _masked_typed(contribution, g):
        if isinstance(contribution, nbtypes.Array) or isinstance(g, nbtypes.Array):
            return lambda contribution, g: np.where(g == 0, 0.0, contribution)
        return lambda contribution, g: contribution if g != 0 else 0.0

    _OVERLOADED["_zeros_like"] = _zeros_like
    _OVERLOADED["_masked"] = _masked
    return _OVERLOADED


WHY = {
    "_unbroadcast": "an adjoint whose shape is not known when the derivative is made",
    "_expand": "an adjoint whose shape is not known when the derivative is made",
    "_shaped_like": "a value whose shape is not known when the derivative is made",
    "_broadcast_back": "the adjoint of a reduction whose shape is not known when the derivative is made",
    "_add": "adding adjoints of containers (tuples, lists or dicts)",
    "_zeros_like_tree": "the gradient of a tuple, list or dict",
    "_fill_tree": "the gradient of a tuple, list or dict argument",
    "_spread": "the adjoint of sum() over a list",
    "_einsum_arg_adjoint": "the adjoint of np.einsum",
    "_einsum_adjoint": "the adjoint of np.einsum",
    "_foreign": "arrays of other libraries",
}


_SHAPES = ("backend='numba' needs the shape of each array the derivative computes, and s2s could not tell this "
           "one from the arguments' shapes (an array whose shape a loop changes, a number that a loop makes an "
           "array, or a function s2s has no shape rule for); make it an array of fixed shape before the loop "
           "(`out = np.zeros(n)`, then `out[i] = ...`) or keep it a number (`total = 0.0`, `total += x[i]`), or "
           "use the default backend (backend='python')")
_CONTAINERS = "pass the values as separate float or array arguments, or differentiate with backend='python'"
_EINSUM = ("Numba compiles no np.einsum: write the contraction with @, np.dot or a loop, or use the default "
           "backend (backend='python')")
HINTS = {"_unbroadcast": _SHAPES, "_expand": _SHAPES, "_shaped_like": _SHAPES, "_broadcast_back": _SHAPES,
         "_add": _CONTAINERS, "_zeros_like_tree": _CONTAINERS, "_fill_tree": _CONTAINERS, "_spread": _CONTAINERS,
         "_foreign": "pass NumPy arrays, or differentiate with backend='python'",
         "_einsum_arg_adjoint": _EINSUM, "_einsum_adjoint": _EINSUM}


STANDALONE_OVERLOADS = {name: overload for name, (_, overload) in TEXTS.items()}
STANDALONE_OVERLOADS |= {
    "_masked": '''@numba.extending.overload(_masked)
def _masked_typed(contribution, g):
    if isinstance(contribution, numba.types.Array) or isinstance(g, numba.types.Array):
        return lambda contribution, g: np.where(g == 0, 0.0, contribution)
    return lambda contribution, g: contribution if g != 0 else 0.0
''',
    "_zeros_like": '''@numba.extending.overload(_zeros_like)
def _zeros_like_typed(x):
    if isinstance(x, numba.types.Array):
        return lambda x: np.zeros_like(x)
    return lambda x: 0.0
''',
}
