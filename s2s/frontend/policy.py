"""The user-code policy: which functions, classes and objects are the user's (read, inlined and differentiated)
and which are a library's (called as they are, through a rule). One place, below the desugaring stage and the
lowering that both ask it."""
from __future__ import annotations

import sys
import types
from typing import Any

from s2s.rules import registry

# the top-level packages whose functions are never read: they have rules, or are s2s's own
NOT_INLINED = frozenset({"numpy", "scipy", "s2s", "jax", "torch", "autograd"})


def _library_module(name: str | None) -> bool:
    top = (name or "").split(".")[0]
    return top in NOT_INLINED or top in sys.stdlib_module_names or top == "builtins"


def is_user_function(obj: Any) -> bool:
    """A Python function of the user's (not a library's), without a rule of its own: s2s inlines it."""
    if not isinstance(obj, types.FunctionType):
        return False
    if registry.find_adjoint(obj) or registry.find_tangent(obj) or registry.is_nondifferentiable(obj):
        return False
    top = (obj.__module__ or "").split(".")[0]
    return top not in NOT_INLINED and top not in sys.stdlib_module_names


def is_user_class(cls: type) -> bool:
    """A class the user wrote (not a library's, nor Python's)."""
    return not _library_module(cls.__module__)


def library_owned(base: Any) -> bool:
    """A library module or class (numpy, math, the standard library): its data never changes (np.pi)."""
    name = getattr(base, "__module__", None) if isinstance(base, type) else getattr(base, "__name__", None)
    return _library_module(name)


# ---------------------------------------------------------------- compiled functions read as Python

def is_dispatcher(obj: Any) -> bool:
    """Whether obj is a Numba-compiled function (`@numba.njit`), without importing Numba."""
    return (type(obj).__module__ or "").startswith("numba.") and isinstance(getattr(obj, "py_func", None),
                                                                           types.FunctionType)


def plain_function(obj: Any) -> Any:
    """The Python function behind a Numba dispatcher (`g.py_func`); anything else unchanged."""
    return obj.py_func if is_dispatcher(obj) else obj
