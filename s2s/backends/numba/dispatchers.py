"""Numba itself, optional: importing it with a clear error, recognizing its dispatchers (`@numba.njit`
functions) and their options, and what a compiled derivative is specialized on at each call."""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from s2s.errors import S2SError
from s2s.frontend.policy import is_dispatcher, plain_function  # noqa: F401  (the back end's names too)

INSTALL_HINT = "install Numba: pip install 's2s[numba]' (or pip install numba)"


class NumbaUnsupported(S2SError):
    """A construct the Numba target cannot express (or Numba cannot type), found when the derivative is made."""


PYTHON_BACKEND = "differentiate this function with backend='python' (the default)"


def refuse(message: str, loc: Any, hint: str = "") -> NumbaUnsupported:
    """What the Numba target cannot express, at the user's place loc, with the hint to use the Python backend."""
    return NumbaUnsupported(f"the Numba backend cannot express {message}", loc, hint=hint or PYTHON_BACKEND)


# ---------------------------------------------------------------- Numba itself and its dispatchers

def numba_module() -> Any:
    """numba, or a clear error saying what to install."""
    try:
        import numba
    except ImportError:
        raise S2SError("backend='numba' needs Numba, which is not installed", hint=INSTALL_HINT) from None
    return numba


_KEPT_OPTIONS = ("fastmath", "error_model", "boundscheck", "nogil", "cache", "inline")


def dispatcher_options(obj: Any) -> tuple:
    """The options of an `@njit` dispatcher the derivative is compiled with, hashable (parallel=False)."""
    found = getattr(obj, "targetoptions", {}) or {}
    items = []
    for key in _KEPT_OPTIONS:
        if key in found:
            value = found[key]
            if isinstance(value, (set, frozenset, list)):
                value = frozenset(value)
            elif isinstance(value, dict):
                value = tuple(sorted(value.items()))
            items.append((key, value))
    return tuple(items)


def resolve_backend(obj: Any, backend: str | None) -> tuple[str, tuple]:
    """(backend, Numba options): a dispatcher's derivative is compiled with Numba unless told otherwise."""
    if backend is None:
        backend = "numba" if is_dispatcher(obj) else "python"
    if backend not in ("python", "numba"):
        raise S2SError(f"backend={backend!r}: the backends are 'python' and 'numba'")
    if backend == "numba":
        numba_module()
    return backend, dispatcher_options(obj) if is_dispatcher(obj) else ()


def call_key(args: Sequence[Any]) -> tuple | None:
    """What a Numba derivative is specialized on, read cheaply at each call: types, and arrays' shapes and
    dtypes; None (no fast path) for anything else."""
    key = []
    for a in args:
        kind = type(a)
        if kind is float or kind is int:
            key.append(kind)
        elif kind is np.ndarray:
            key.append((a.shape, a.dtype.char))
        elif kind in _NUMPY_SCALARS:
            key.append(kind)
        else:
            return None
    return tuple(key)


_NUMPY_SCALARS = frozenset({np.float64, np.float32, np.int64, np.int32, bool})


def call_args(args: Sequence[Any] | None, mode: str, wrt: Sequence[int]) -> tuple | None:
    """Example arguments for the derivative's whole signature: a jvp and an hvp also take a tangent per
    differentiated argument (typed like it); a vjp's cotangent is not known, so it compiles at its first call."""
    if args is None or mode == "vjp":
        return None
    if mode in ("forward", "hvp"):
        return (*args, *(args[i] for i in wrt))
    return tuple(args)
