"""Where derivative rules are registered and found.

A rule is found by the Python object it differentiates (`math.sin`,
`numpy.sin`, `operator.mul`), never by how the user spelled the call.

Rules are Python functions that s2s parses and inlines into the derivative,
so they read like a table of derivatives and the code they produce can be
differentiated again:

    @adjoint(math.sin)
    def sin(g, ans, x):          # g: adjoint of the output, ans: the output
        return g * math.cos(x)   # one adjoint per argument (a tuple for several; None for none)

    @tangent(math.sin)
    def sin(ans, x, dx):         # the tangents of the arguments follow the arguments
        return math.cos(x) * dx

A tangent rule receives 0.0 for the tangent of an argument that does not vary.
"""
from __future__ import annotations

import importlib
from typing import Any, Callable

import numpy as np

_ADJOINTS: dict[Any, Callable] = {}
_TANGENTS: dict[Any, Callable] = {}
_NONDIFFERENTIABLE: dict[Any, None] = {}
_BROADCASTING: dict[Any, None] = {}
_BUILTIN_RULE_MODULES = ("python_operators", "math_functions", "numpy_functions", "linear_algebra")
_loaded = False


def _key(prim: Any) -> Any:
    try:
        hash(prim)
        return prim
    except TypeError:
        return ("id", id(prim))


def adjoint(*prims: Any) -> Callable[[Callable], Callable]:
    """Register a reverse-mode rule `rule(g, ans, *args, **kwargs) -> adjoint(s) of args` for prims."""
    def register(rule: Callable) -> Callable:
        for prim in prims:
            _ADJOINTS[_key(prim)] = rule
        return rule
    return register


def tangent(*prims: Any) -> Callable[[Callable], Callable]:
    """Register a forward-mode rule `rule(ans, *args, *tangents, **kwargs) -> tangent of ans` for prims."""
    def register(rule: Callable) -> Callable:
        for prim in prims:
            _TANGENTS[_key(prim)] = rule
        return rule
    return register


def nondifferentiable(*prims: Any) -> None:
    """Declare functions whose result carries no derivative (integer- or boolean-valued, or piecewise constant)."""
    for prim in prims:
        _NONDIFFERENTIABLE[_key(prim)] = None


def broadcasting(*prims: Any) -> None:
    """Declare functions that broadcast their arguments: the transform sums each adjoint back to its
    argument's shape. Elementwise NumPy ufuncs are broadcasting without being declared."""
    for prim in prims:
        _BROADCASTING[_key(prim)] = None


def broadcasts(prim: Any) -> bool:
    _ensure_loaded()
    return (isinstance(prim, np.ufunc) and prim.signature is None) or _key(prim) in _BROADCASTING


def _ensure_loaded() -> None:
    global _loaded
    if not _loaded:
        _loaded = True
        for name in _BUILTIN_RULE_MODULES:
            importlib.import_module(f"s2s.rules.{name}")


def find_adjoint(prim: Any) -> Callable | None:
    _ensure_loaded()
    return _ADJOINTS.get(_key(prim))


def find_tangent(prim: Any) -> Callable | None:
    _ensure_loaded()
    return _TANGENTS.get(_key(prim))


def is_nondifferentiable(prim: Any) -> bool:
    _ensure_loaded()
    return _key(prim) in _NONDIFFERENTIABLE


def registered_adjoints() -> list[Any]:
    _ensure_loaded()
    return [p for p in _ADJOINTS if not isinstance(p, tuple)]
