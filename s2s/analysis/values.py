"""What s2s reads of a run-time value, before any analysis: its kind (a number, an array, the structure of a
container: what derivative code is specialized on), its abstract value (shape and dtype: what a shape-specialized
derivative is specialized on), and whether it can be differentiated (every leaf a float). The bottom of the
analyses: the driver keys its cache on these, and the analyses start from them."""
from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import Any

import numpy as np

from s2s import runtime
from s2s.trees import fields_of

Kind = Any
SCALAR_TYPES = {float, int, np.float64, np.float32}
NUMERIC = ("scalar", "array")


def kind_of(value: Any) -> Kind:
    """What s2s specializes derivative code on: scalars, arrays, and the structure of containers."""
    if isinstance(value, (int, float, complex, bool, np.number, np.bool_)):
        return "scalar"
    if isinstance(value, np.ndarray) or runtime._foreign(value):      # NumPy's, Dask's, CuPy's
        return "array"
    if isinstance(value, list) and value and set(map(type, value)) <= SCALAR_TYPES:
        return ("list*", "scalar")              # a list of numbers, whatever its length
    if isinstance(value, tuple) and isinstance(getattr(type(value), "_fields", None), tuple):
        # a namedtuple: a tuple whose fields s2s/passes/sequences.py reads by position (p.w is p[0])
        return ("tuple", tuple(kind_of(v) for v in value), fields_of(type(value)))
    if isinstance(value, (tuple, list)):
        return (type(value).__name__, tuple(kind_of(v) for v in value))
    if isinstance(value, dict):
        return ("dict", tuple((k, kind_of(v)) for k, v in value.items()))
    return "other"


def is_container(kind: Kind) -> bool:
    return isinstance(kind, tuple)



_PYTHON = (bool, int, float, complex)


@dataclass(frozen=True)
class Abstract:
    shape: tuple
    dtype: Any          # a numpy.dtype, or bool/int/float/complex for a Python number

    @cached_property
    def python(self) -> bool:
        return not isinstance(self.dtype, np.dtype)

    @cached_property
    def key(self) -> tuple:
        """What the facts inferred from it depend on (a NumPy float64 is equal to float, and yet not the same)."""
        return self.shape, self.python, self.dtype

    @property
    def ndim(self) -> int:
        return len(self.shape)

    def proto(self) -> Any:
        """A value of this dtype for NumPy's promotion rules: a Python number stays weak."""
        return self.dtype(1) if self.python else np.ones((), self.dtype)


@dataclass(frozen=True)
class Items:
    """A tuple, list or dict of known length (keys): the abstract value of each item (None when unknown)."""
    kind: str                   # "tuple", "list" or "dict"
    keys: tuple                 # 0, 1, ... for a tuple or list; the keys, in order, for a dict
    items: tuple                # Abstract | Items | None for each key

    def item(self, key: Any) -> Abstract | Items | None:
        return self.items[self.keys.index(key)] if key in self.keys else None


def abstract_of(x: Any) -> Abstract | Items | None:
    if type(x) in _PYTHON:
        return _NUMBERS[type(x)]
    if type(x) is np.ndarray or isinstance(x, np.generic):
        return Abstract(tuple(x.shape), x.dtype) if x.dtype.kind in "biufc" else None
    if type(x) in (tuple, list) and len(x) <= 64 and not _numbers(x):
        return Items(type(x).__name__, tuple(range(len(x))), tuple(abstract_of(v) for v in x))
    if type(x) is dict and len(x) <= 64 and all(type(k) in (str, int) for k in x):
        return Items("dict", tuple(x), tuple(abstract_of(v) for v in x.values()))
    return None


_NUMBERS = {t: Abstract((), t) for t in _PYTHON}       # one each: facts are compared, never changed


def join(a: Any, b: Any) -> Any:
    """What two abstract values have in common (at a branch's end, a loop's carried value)."""
    return a if a == b else None


def _numbers(x: Any) -> bool:
    """A list of numbers: one kind whatever its length (activity.kind_of), so no length is specialized on."""
    return isinstance(kind_of(x), tuple) and kind_of(x)[0] == "list*"


def shape_key(args: tuple) -> tuple:
    """What a shape-specialized derivative depends on beyond kinds: each NumPy array's shape (None else),
    inside tuples, lists and dicts too (their items' shapes are known to the code: abstract_of)."""
    return tuple(_shape_key(a) for a in args)


def _shape_key(a: Any) -> Any:
    if type(a) is np.ndarray:
        return a.shape
    if type(a) in (tuple, list) and len(a) <= 64 and not _numbers(a):
        return tuple(_shape_key(v) for v in a)
    if type(a) is dict and len(a) <= 64:
        return tuple((k, _shape_key(v)) for k, v in a.items())
    return None



def non_float_leaf(value: Any) -> Any:
    """The first leaf of value (an array, a float, or a tuple, list or dict of them) that is not a float."""
    if type(value) is list and kind_of(value) == ("list*", "scalar"):
        # a list of numbers, ints among them: its one derivative serves every such list (kind_of), so an int item
        # is accepted on the first call as on the cached ones after a list of floats
        return None
    if isinstance(value, (tuple, list)):
        return next((bad for v in value if (bad := non_float_leaf(v)) is not None), None)
    if isinstance(value, dict):
        return next((bad for v in value.values() if (bad := non_float_leaf(v)) is not None), None)
    if isinstance(value, np.ndarray) or runtime._foreign(value):      # NumPy's, Dask's, CuPy's
        return None if np.issubdtype(value.dtype, np.inexact) else value        # float or complex
    return None if isinstance(value, (float, complex, np.inexact)) and not isinstance(value, bool) else value
