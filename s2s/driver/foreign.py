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
"""
from __future__ import annotations

import sys
import threading
from typing import Any, Callable

from s2s.errors import S2SError


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
