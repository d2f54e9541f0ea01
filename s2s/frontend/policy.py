"""The user-code policy: which functions, classes and objects are read, inlined and differentiated, and which are
called as they are, through a rule. One place, below the desugaring stage and the lowering that both ask it.

Library Python is user code: a Python function of any installed package (NumPy's and SciPy's included) that has
no rule is read like the user's own (`scipy.optimize.rosen`, `numpy.polynomial.chebyshev.chebval`,
`scipy.stats.norm._cdf`, a statsmodels likelihood). Not read: functions with a rule, C and Cython functions (not
Python functions at all), s2s's own, the frameworks that trace code themselves (JAX, PyTorch; autograd's
functions are read as the NumPy functions they wrap: desugar/autograd_code.py), and the standard library's.
A library's function that cannot be read (it uses what s2s refuses) is called as it is, as before: lowering
falls back to an operation, refused only if it is given a differentiated value (`library_function`)."""
from __future__ import annotations

import os
import sys
import types
import weakref
from typing import Any

from s2s.rules import registry

# the top-level packages whose functions are never read: s2s's own, and frameworks that trace code themselves
NOT_INLINED = frozenset({"s2s", "jax", "torch", "autograd"})
# the libraries whose data never changes (np.pi) and whose functions were never read before library Python was
LIBRARIES = frozenset({"numpy", "scipy"})


def _library_module(name: str | None) -> bool:
    top = (name or "").split(".")[0]
    return top in NOT_INLINED or top in LIBRARIES or top in sys.stdlib_module_names or top == "builtins"


def library_function(fn: Any) -> bool:
    """A function read as user code that belongs to an installed library (not the user's own): when it cannot be
    read, lowering calls it as it is instead (a rule, or a constant when nothing differentiated reaches it)."""
    module = getattr(fn, "__module__", None) or ""
    top = module.split(".")[0]
    if top in LIBRARIES:
        return True
    return _installed(top)


_INSTALLED: dict[str, bool] = {}        # top-level module -> whether it is an installed package's


def _installed(top: str) -> bool:
    """Whether the top-level module top was installed by an installer: under site-packages (dist-packages), or in a
    directory of the path that holds installers' records (`*.dist-info`: `pip install --target DIR`, a wheel
    unpacked on PYTHONPATH). A project's own package (an editable install: its records stay in site-packages) is
    not."""
    found = _INSTALLED.get(top)
    if found is None:
        where = getattr(sys.modules.get(top), "__file__", None) or ""
        found = "site-packages" in where or "dist-packages" in where
        if not found and where:
            folder = os.path.dirname(where)
            folder = os.path.dirname(folder) if os.path.basename(where) == "__init__.py" else folder
            try:
                found = any(name.endswith(".dist-info") for name in os.listdir(folder))
            except OSError:
                found = False
        if top in sys.modules:          # (a module imported later is asked again)
            _INSTALLED[top] = found
    return found


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


# library functions s2s tried to read and could not, with the first reason (said when no rule stands in)
_UNREADABLE: "weakref.WeakKeyDictionary[Any, str]" = weakref.WeakKeyDictionary()


def note_unreadable(fn: Any, reason: BaseException) -> None:
    try:
        text = str(reason).splitlines()[0]
        _UNREADABLE.setdefault(getattr(fn, "__wrapped_source__", fn), text)
    except TypeError:
        pass


def unreadable(fn: Any) -> str | None:
    """Why a library function without a rule could not be read, if s2s tried."""
    try:
        return _UNREADABLE.get(fn)
    except TypeError:
        return None
