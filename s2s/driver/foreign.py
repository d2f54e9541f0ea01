"""Derivative code run on another library's arrays (Dask, CuPy): no silent conversion to NumPy.

Derivative code is NumPy calls, and its helpers (s2s.runtime) never convert an argument to NumPy or to a
Python number; Dask and CuPy arrays take NumPy's functions through `__array_function__` and
`__array_ufunc__`, so the same code builds a Dask graph or runs on a GPU. CuPy refuses a conversion itself
(a TypeError). Dask does not: asked for values (`np.asarray`, `float()`, an `if` on an array) or given a
NumPy function it does not implement (numpy.linalg.det, numpy.sort...), it computes the whole array into
NumPy, silently but for a FutureWarning. `call` runs derivative code on Dask arrays with a scheduler
that refuses to compute anything, so that such a conversion is a `ForeignArrayError` naming the NumPy
function (and, through s2s's note, the user's line), never a silent computation of the data set.

The checking mode (check=True, S2S_CHECK=1) does not compare values on Dask arguments: it would compute them.

The refusing scheduler is set in Dask's configuration for the duration of the call; a computation asked
for meanwhile by another thread goes to the scheduler that was in place before.

Arrays are taken by exact type: `numpy.ndarray` and the documented foreign arrays (Dask, CuPy). A subclass of
ndarray is handled or refused before anything runs (`plain`): one that changes no arithmetic, indexing or ufunc
hook (`np.memmap`, a subclass that adds attributes) is read through `np.asarray`, so derivative code and its
results are plain arrays; one that does (`np.ma.MaskedArray` ignores masked entries in a mean, `np.matrix` reads
`*` as a matrix product) is refused with `BadArgument`: s2s would differentiate NumPy's semantics, not its own.
"""
from __future__ import annotations

import sys
import threading
from typing import Any, Callable

import numpy as np

from s2s.analysis.shapes import AnyShape
from s2s.errors import BadArgument, S2SError


class ForeignArrayError(S2SError, TypeError):
    """Derivative code would convert another library's array (Dask's) to NumPy or to a Python number."""


def has_dask(value: Any) -> bool:
    """Whether value is a Dask array or a tuple, list or dict holding one."""
    if isinstance(value, (tuple, list)):
        return any(has_dask(v) for v in value)
    if isinstance(value, dict):
        return any(has_dask(v) for v in value.values())
    return type(value).__module__.startswith("dask.")


def call(function: Callable, args: tuple) -> Any:
    """function(*args); with Dask arrays among args, any computation it asks of Dask raises ForeignArrayError."""
    if not has_dask(args):
        return function(*args)
    import dask
    import dask.base
    import dask.threaded

    owner = threading.get_ident()
    previous = dask.base.get_scheduler() or dask.threaded.get

    def refuse(graph: Any, keys: Any, **kwargs: Any) -> Any:
        if threading.get_ident() != owner:
            return previous(graph, keys, **kwargs)
        raise ForeignArrayError(_conversion(), hint="compute what the function needs first (dask.compute), "
                                "or use a function Dask implements; s2s never computes a Dask array itself")

    with dask.config.set(scheduler=refuse):
        return function(*args)


_CONVERSIONS = {"__array__": "np.asarray", "__bool__": "a truth value (if, while, and, or)",
                "__float__": "float()", "__int__": "int()", "__index__": "an index", "__complex__": "complex()",
                "__len__": "len()", "tolist": ".tolist()"}


def _conversion() -> str:
    """What, on the stack above the refusing scheduler, asked Dask for values, and where."""
    frames = []
    frame = sys._getframe(2)
    while frame is not None:
        frames.append(frame)
        frame = frame.f_back
    caller = next((f for f in frames if not f.f_globals.get("__name__", "").startswith(("dask", "numpy"))
                   and f.f_code.co_filename != __file__), None)
    where = f" (in {caller.f_code.co_name}, {caller.f_code.co_filename}:{caller.f_lineno})" if caller else ""
    tail = "; s2s's derivative code does not convert a Dask array"
    for f in frames:
        if f.f_code.co_name == "handle_nonmatching_names" and f.f_globals.get("__name__", "").startswith("dask"):
            func = f.f_locals.get("func")
            name = f"{getattr(func, '__module__', '')}.{getattr(func, '__name__', func)}"
            return f"{name} is not implemented by Dask: it would compute the Dask array into NumPy{where}{tail}"
    for f in frames:
        if f.f_code.co_name in _CONVERSIONS and f.f_globals.get("__name__", "").startswith("dask"):
            return (f"the values of a Dask array were asked for ({_CONVERSIONS[f.f_code.co_name]}), which would "
                    f"compute it into NumPy{where}{tail}")
    return f"Dask was asked to compute an array{where}{tail}"


# what a subclass of ndarray may not define otherwise and still compute what NumPy's arrays compute (np.memmap
# defines __getitem__, __array_wrap__ and __array_finalize__, for views that stay memory maps: the same values)
_HOOKS = ("__array_ufunc__", "__array_function__", "__setitem__", "__len__",
          "__iter__", "__array__", "__float__", "__bool__") + tuple(
    f"__{op}__" for name in ("add", "sub", "mul", "truediv", "floordiv", "mod", "pow", "matmul", "divmod", "and",
                             "or", "xor", "lshift", "rshift")
    for op in (name, "r" + name, "i" + name)) + tuple(
    f"__{op}__" for op in ("neg", "pos", "abs", "invert", "lt", "le", "gt", "ge", "eq", "ne"))
_SUBCLASSES: dict[type, tuple] = {}        # subclass -> the hooks it changes (types outlive calls)
_PLAIN_TYPES = frozenset({np.ndarray, AnyShape, float, int, bool, complex, str, type(None), np.float64, np.float32,
                          np.float16, np.int64, np.int32, np.complex128})       # (AnyShape: the CLI's placeholder)


def changed_hooks(cls: type) -> tuple:
    """The arithmetic, indexing and ufunc hooks a subclass of ndarray defines otherwise than ndarray."""
    found = _SUBCLASSES.get(cls)
    if found is None:
        found = _SUBCLASSES[cls] = tuple(name for name in _HOOKS if getattr(cls, name, None) is not getattr(
            np.ndarray, name, None))
    return found


def _plain(value: Any, where: str) -> Any:
    kind = type(value)
    if kind in _PLAIN_TYPES:
        return value
    if isinstance(value, np.ndarray):
        hooks = changed_hooks(kind)
        if hooks:
            name = f"{kind.__module__}.{kind.__qualname__}".replace("numpy.ma.core.", "numpy.ma.").replace(
                "numpy.matrixlib.defmatrix.", "numpy.")
            raise BadArgument(
                f"{where} is a {name}, a subclass of numpy.ndarray that computes otherwise than NumPy's arrays "
                f"(it defines {', '.join(hooks[:4])}{'...' if len(hooks) > 4 else ''}): s2s differentiates plain "
                f"arrays", hint=_SUBCLASS_HINTS.get(kind.__name__, "pass np.asarray(x) if its values are what the "
                                                    "function computes with, or a plain array of them"))
        return np.asarray(value)        # np.memmap, a subclass that adds attributes: the same arithmetic
    if kind is tuple or kind is list:
        items = [_plain(v, f"{where}[{k}]") for k, v in enumerate(value)]
        return value if all(a is b for a, b in zip(items, value)) else kind(items)
    if isinstance(value, tuple) and hasattr(kind, "_fields"):          # a namedtuple
        items = [_plain(v, f"{where}.{f}") for f, v in zip(kind._fields, value)]
        return value if all(a is b for a, b in zip(items, value)) else kind(*items)
    if kind is dict:
        items = {k: _plain(v, f"{where}[{k!r}]") for k, v in value.items()}
        return value if all(items[k] is value[k] for k in value) else items
    return value


_SUBCLASS_HINTS = {
    "MaskedArray": "fill or drop the masked entries first (x.filled(0.0), x.compressed()), or pass the data and the "
                   "mask as two arrays and select with np.where(mask, ..., ...)",
    "matrix": "pass np.asarray(x) and write matrix products with @",
}


def plain(args: tuple, names: Any = None) -> tuple:
    """args for derivative code: every subclass of ndarray among them (or in their containers) read through
    np.asarray when it changes no hook, else refused with BadArgument naming the argument (names: their names)."""
    for a in args:
        if type(a) not in _PLAIN_TYPES:
            break
    else:
        return args
    out = tuple(_plain(a, f"argument {names[k]!r}" if names and k < len(names) else f"argument {k}")
                for k, a in enumerate(args))
    return args if all(a is b for a, b in zip(out, args)) else out
