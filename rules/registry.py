"""Where derivative rules are registered and found.

A rule is found by the Python object it differentiates (`math.sin`,
`numpy.sin`, `operator.mul`), never by how the user spelled the call.

Rules are Python functions that s2s parses and inlines into the derivative,
so they read like a table of derivatives and the code they produce can be
differentiated again:

    @adjoint(math.sin)
    def sin(g, ans, x):          # g: adjoint of the output, ans: the output
        return g * math.cos(x)   # one adjoint per argument (a tuple for several; None for none)

    @tangent(np.matmul)
    def matmul(t, ans, a, b):    # t: the tangent of one argument; one contribution per argument
        return t @ b, a @ t

An elementwise function needs no tangent rule: its adjoint rule, applied to a
tangent instead of an adjoint, gives the tangent (g * cos(x) with g := dx).
Functions linear in some arguments are declared with `linear`.
"""
from __future__ import annotations

import importlib
import sys
from typing import Any, Callable

import numpy as np

_ADJOINTS: dict[Any, Callable] = {}
_TANGENTS: dict[Any, Callable] = {}
_NONDIFFERENTIABLE: dict[Any, None] = {}
_BROADCASTING: dict[Any, None] = {}
_LINEAR: dict[Any, tuple[int, ...]] = {}
_LINEAR_APPLIED: dict[Any, Callable] = {}
_RESULT_KINDS: dict[Any, Callable] = {}
_REFUSED: dict[Any, str] = {}
_DEFINITIONS: dict[Any, Callable] = {}
_COMPLEX_ADJOINTS: dict[Any, Callable] = {}
_COMPLEX_TANGENTS: dict[Any, Callable] = {}
_COMPLEX_FROM_REAL: dict[Any, None] = {}
_BUILTIN_RULE_MODULES = ("python_operators", "sequences", "math_functions", "numpy_functions", "numpy_more", "linear_algebra",
                         "linalg", "fft", "complex_numbers", "runtime_helpers", "special", "stats", "scipy_linalg",
                         "integrate", "definitions", "fixed_points")
_loaded = False
# SciPy's rule modules (they import SciPy, which takes longer than s2s itself): loaded once SciPy is imported (a
# function can reach SciPy's objects only then), at the first look-up that misses after that
_SCIPY_RULE_MODULES = ("special", "stats", "scipy_linalg", "integrate")
_deferred: list[str] = []
_MISSING = object()


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
    """Register a forward-mode rule `rule(t, ans, *args, **kwargs) -> contribution per argument` for prims:
    element i of the result is the output's tangent when argument i has tangent t and the others none."""
    def register(rule: Callable) -> Callable:
        for prim in prims:
            _TANGENTS[_key(prim)] = rule
        return rule
    return register


def complex_adjoint(*prims: Any) -> Callable[[Callable], Callable]:
    """Register the adjoint rule of prims for complex arguments (same calling convention as adjoint): found before
    the real one when an argument may be complex (s2s/analysis/complex_values.py)."""
    def register(rule: Callable) -> Callable:
        for prim in prims:
            _COMPLEX_ADJOINTS[_key(prim)] = rule
        return rule
    return register


def complex_tangent(*prims: Any) -> Callable[[Callable], Callable]:
    """Register the tangent rule of prims for complex arguments (as tangent)."""
    def register(rule: Callable) -> Callable:
        for prim in prims:
            _COMPLEX_TANGENTS[_key(prim)] = rule
        return rule
    return register


def complex_from_real(*prims: Any) -> None:
    """Declare functions whose result may be complex for real arguments, as the values decide (scipy.linalg.sqrtm
    of a matrix with a negative eigenvalue): s2s/analysis/complex_values.py then takes the real part of a real
    argument's adjoint. Their rules must hold for complex values (registered with complex_adjoint too)."""
    for prim in prims:
        _COMPLEX_FROM_REAL[_key(prim)] = None


def makes_complex(prim: Any) -> bool:
    """Whether prim was declared with complex_from_real."""
    if not _loaded:
        _ensure_loaded()
    return _lookup(_COMPLEX_FROM_REAL, prim, False) is None


def find_complex_adjoint(prim: Any) -> Callable | None:
    if not _loaded:
        _ensure_loaded(everything=False)
    return _lookup(_COMPLEX_ADJOINTS, prim)


def find_complex_tangent(prim: Any) -> Callable | None:
    if not _loaded:
        _ensure_loaded(everything=False)
    return _lookup(_COMPLEX_TANGENTS, prim)


def template(fn: Callable) -> Callable:
    """Declare a function that rules call as part of their formula (a shared sub-expression): s2s inlines it
    into the rule, as it inlines a user's function, so that its code is differentiated again in second order.
    (s2s never inlines its own modules' functions; a template is given a module name outside s2s.)"""
    fn.__module__ = "s2s_rule_templates"
    return fn


def helper(fn: Callable) -> Callable:
    """Declare a NumPy-only function that rules call: the emitter copies its source into derivative code
    (as it does s2s.runtime's helpers), so that generated code keeps needing NumPy alone. A helper used
    in an adjoint needs its own rule (tangent or linear) for second order."""
    from s2s import runtime
    runtime.EMITTED_HELPERS.add(fn)
    setattr(runtime, fn.__name__, fn)           # the emitter finds the helpers a helper calls by name
    return fn


def nondifferentiable(*prims: Any) -> None:
    """Declare functions whose result carries no derivative (integer- or boolean-valued, or piecewise constant)."""
    for prim in prims:
        _NONDIFFERENTIABLE[_key(prim)] = None


def linear(*prims: Any, argnums: tuple[int, ...] = (0,), applied: Callable | None = None) -> None:
    """Declare functions linear in each of the arguments argnums (the others held fixed): the tangent
    for argument i is the function applied with that argument replaced by its tangent. The other
    arguments must be read for their shapes only, or be integers. applied: the function to apply instead
    (runtime._masked is linear only where its other argument is not zero)."""
    for prim in prims:
        _LINEAR[_key(prim)] = argnums
        if applied is not None:
            _LINEAR_APPLIED[_key(prim)] = applied


def linear_applied(prim: Any) -> Callable:
    """What forward mode applies to a linear function's tangent: the function itself, unless linear says."""
    return _lookup(_LINEAR_APPLIED, prim) or prim


def linear_argnums(prim: Any) -> tuple[int, ...] | None:
    if not _loaded:
        _ensure_loaded(everything=False)
    return _lookup(_LINEAR, prim)


def elementwise(*prims: Any) -> None:
    """Declare elementwise functions (which broadcast their arguments): the transform sums each adjoint
    back to its argument's shape, and forward mode applies the adjoint rule to tangents.
    Elementwise NumPy ufuncs need no declaration."""
    for prim in prims:
        _BROADCASTING[_key(prim)] = None


def several_results(*prims: Any, kind: Callable) -> None:
    """Declare functions that return a tuple or list of arrays (numpy.linalg.eigh, numpy.split): kind(args,
    kwargs) gives the result's kind for activity analysis (("tuple", ("array", ...)) or ("list*", "array")),
    or None where the call returns one array; args and kwargs are the call's constant values (UNKNOWN
    for a value known only at run time)."""
    for prim in prims:
        _RESULT_KINDS[_key(prim)] = kind


_KINDS_FROM_ARGUMENTS: dict[Any, Callable] = {}


def result_kind_from(*prims: Any, kind: Callable) -> None:
    """Declare functions whose result's kind follows from their arguments' kinds (s2s.fixed_point's is its x0's):
    kind(argument kinds) gives it for activity analysis, or None where it cannot say; a list gives one kind per
    output of an operation with several (a call of a recursion's derivative function: transforms/recursion.py)."""
    for prim in prims:
        _KINDS_FROM_ARGUMENTS[_key(prim)] = kind


def kind_from_arguments(prim: Any) -> Callable | None:
    """The function declared with result_kind_from for prim, if any."""
    if not _loaded:
        _ensure_loaded()
    return _lookup(_KINDS_FROM_ARGUMENTS, prim)


def refused(*prims: Any, reason: str) -> None:
    """Declare pure functions that derivative code calls (rules/integrate.py's ODE solvers) and that have no rule
    in some mode (or in any): differentiating them there raises NoDerivativeRule with the reason, when the
    derivative is made. (A rule of another mode, registered with tangent, is still used.)"""
    for prim in prims:
        _REFUSED[_key(prim)] = reason


def refusal(prim: Any) -> str | None:
    """Why prim is not differentiated, if it was declared with refused."""
    if not _loaded:
        _ensure_loaded(everything=False)
    return _lookup(_REFUSED, prim)


def defined_as(*prims: Any) -> Callable[[Callable], Callable]:
    """Define library functions by Python code over functions that have rules (rules/definitions.py:
    `np.ptp(x)` is `np.max(x) - np.min(x)`): a call is inlined as a user's function is, so both modes and
    every order follow from the definition's own operations."""
    def register(fn: Callable) -> Callable:
        fn.__module__ = "s2s_rule_definitions"        # inlined as a user's function (s2s's own are not)
        for prim in prims:
            _DEFINITIONS[_key(prim)] = fn
        return fn
    return register


def definition(prim: Any) -> Callable | None:
    _ensure_loaded(everything=False)
    try:
        return _DEFINITIONS.get(_key(prim))
    except TypeError:
        return None


UNKNOWN = object()

# s2s's own transformations (grad, jvp, vjp, ...), for the rules that call them when they run (a gradient called
# inside a differentiated function, odeint's adjoint): the API provides them when it is imported, so that rules
# never import the API
_TRANSFORMATIONS: dict[str, Callable] = {}


def provide(**transformations: Callable) -> None:
    _TRANSFORMATIONS.update(transformations)


def transformation(name: str) -> Callable:
    """s2s.grad, s2s.jvp, s2s.vjp... by name (s2s/api.py provides them; derivative code exists only after that)."""
    return _TRANSFORMATIONS[name]


def result_kind(prim: Any, args: list[Any], kwargs: dict[str, Any]) -> Any:
    """The kind declared with several_results for a call of prim, or None."""
    _ensure_loaded(everything=False)
    kind = _lookup(_RESULT_KINDS, prim)
    return kind(args, kwargs) if kind is not None else None


def is_elementwise(prim: Any) -> bool:
    if not _loaded:
        _ensure_loaded(everything=False)
    return (isinstance(prim, np.ufunc) and prim.signature is None) or _lookup(_BROADCASTING, prim, False) is None


def sizes() -> tuple[int, int, int]:
    """How many functions have a rule, are declared nondifferentiable or refused (a rule registered since
    changes it: what is pure, for dead-code elimination, may change with it)."""
    return len(_ADJOINTS), len(_NONDIFFERENTIABLE), len(_REFUSED)


def _ensure_loaded(everything: bool = True) -> None:
    """Import the rule modules; SciPy's only when SciPy is imported already, or when everything is asked for (to
    list or check every rule)."""
    global _loaded
    if not _loaded:
        _loaded = True
        for name in _BUILTIN_RULE_MODULES:
            if name in _SCIPY_RULE_MODULES:
                _deferred.append(name)
            else:
                _import_rules(name)
    if _deferred and (everything or "scipy" in sys.modules):
        names = list(_deferred)
        _deferred.clear()
        for name in names:
            _import_rules(name)


def _import_rules(name: str) -> None:
    try:
        importlib.import_module(f"s2s.rules.{name}")
    except ImportError as error:        # SciPy's rules, when SciPy is not installed
        if not (error.name or "").startswith("scipy"):
            raise


def _lookup(table: dict, prim: Any, default: Any = None) -> Any:
    """table's entry for prim (_key's: the object itself, or its id when it is not hashable): one hash. A miss
    loads SciPy's rules first if SciPy was imported since the rules were."""
    try:
        found = table.get(prim, _MISSING)
    except TypeError:
        found = table.get(("id", id(prim)), _MISSING)
    if found is _MISSING:
        if _deferred and "scipy" in sys.modules:
            _ensure_loaded(everything=False)
            return _lookup(table, prim, default)
        return default
    return found


def find_adjoint(prim: Any) -> Callable | None:
    if not _loaded:
        _ensure_loaded(everything=False)
    return _lookup(_ADJOINTS, prim)


def find_tangent(prim: Any) -> Callable | None:
    if not _loaded:
        _ensure_loaded(everything=False)
    return _lookup(_TANGENTS, prim)


def is_nondifferentiable(prim: Any) -> bool:
    if not _loaded:
        _ensure_loaded(everything=False)
    return _lookup(_NONDIFFERENTIABLE, prim, False) is not False


def registered_adjoints(builtin_only: bool = False) -> list[Any]:
    """The functions with a reverse-mode rule (only those of s2s's own rules/, with builtin_only)."""
    _ensure_loaded()
    return [p for p, rule in _ADJOINTS.items() if not isinstance(p, tuple)
            and (not builtin_only or rule.__module__.startswith("s2s.rules."))]
