"""Where derivative rules and the other facts of each primitive are registered and found: one `Record` per
primitive (rules/record.py says what each field means).

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

Every declaration takes the primitive's other facts as keywords (`@adjoint(np.sum, holomorphic=True)`), and
`declare(*prims, **facts)` states facts alone; `record(prim)` is the primitive's whole record.
"""
from __future__ import annotations

import importlib
import sys
from collections.abc import MutableMapping
from typing import Any, Callable, Iterator

import numpy as np

from s2s.rules.record import FACTS, Record

_RECORDS: dict[Any, Record] = {}
_BUILTIN_RULE_MODULES = ("python_operators", "sequences", "math_functions", "numpy_functions", "numpy_more", "linear_algebra",
                         "linalg", "fft", "complex_numbers", "runtime_helpers", "special", "stats", "scipy_linalg",
                         "integrate", "definitions", "fixed_points", "batching")
_loaded = False
# SciPy's rule modules (they import SciPy, which takes longer than s2s itself): loaded once SciPy is imported (a
# function can reach SciPy's objects only then), at the first look-up that misses after that
_SCIPY_RULE_MODULES = ("special", "stats", "scipy_linalg", "integrate")
_deferred: list[str] = []
_version = 0            # how many declarations were made: a cache keyed on it sees any new one


def _key(prim: Any) -> Any:
    try:
        hash(prim)
        return prim
    except TypeError:
        return ("id", id(prim))


# ---------------------------------------------------------------- records

def record(prim: Any) -> Record:
    """prim's record: the one rules/ declared, or a description of what the object is (describe)."""
    if not _loaded:
        _ensure_loaded(everything=False)
    try:
        found = _RECORDS.get(prim)
    except TypeError:
        found = _RECORDS.get(("id", id(prim)))
    if found is not None:
        return found
    if _deferred and ("scipy" in sys.modules or _scipy_derivative(prim)):      # SciPy imported since the rules
        _ensure_loaded(everything=False)                                       # were loaded: its rules now
        return record(prim)
    found = describe(prim)
    if _long_lived(prim):             # a library's function: described once
        _RECORDS[_key(prim)] = found
    return found


def _scipy_derivative(prim: Any) -> bool:
    """Whether prim is one of math's functions whose derivative is SciPy's (math.gamma's is digamma: their rules are
    in rules/special.py), SciPy imported for it if installed."""
    import math
    if prim is not math.gamma and prim is not math.lgamma:
        return False
    try:
        import scipy.special  # noqa: F401
    except ImportError:
        return False
    return True


def declare(*prims: Any, **facts: Any) -> None:
    """State facts of prims (the fields of rules/record.py's Record, by name)."""
    global _version
    unknown = set(facts) - set(FACTS)
    if unknown:
        raise TypeError(f"no such fact of a primitive: {', '.join(sorted(unknown))} (rules/record.py lists them)")
    for prim in prims:
        rec = _declared(prim)
        for name, value in facts.items():
            setattr(rec, name, value)
            rec.declared.add(name)
    _version += 1


def _declared(prim: Any) -> Record:
    """prim's record, made (from describe) if it has none yet: to be filled by a declaration."""
    key = _key(prim)
    found = _RECORDS.get(key)
    if found is None:
        found = _RECORDS[key] = describe(prim)
    return found


def _fill(prims: tuple, name: str, value: Any, facts: dict) -> None:
    declare(*prims, **{name: value}, **facts)


def records() -> list[Record]:
    """Every record declared (or described once) so far."""
    _ensure_loaded()
    return list(_RECORDS.values())


# ---------------------------------------------------------------- what an undeclared function is

_LIBRARY_ROOTS = ("numpy", "math", "operator", "_operator", "builtins", "scipy", "cmath")


def _module(prim: Any) -> str:
    module = getattr(prim, "__module__", None)
    return module if isinstance(module, str) else ""


def _long_lived(prim: Any) -> bool:
    """A function of a library's module (it lives as long as the process): its description is kept."""
    return isinstance(prim, np.ufunc) or _module(prim).split(".")[0] in _LIBRARY_ROOTS


def describe(prim: Any) -> Record:
    """What s2s knows of a function nobody declared, from what the object is. The one place that reads where a
    function comes from: a NumPy ufunc is elementwise; a function of `math` gives a Python number; the
    operators are numbers of numbers; a NumPy function gives arrays; numpy.random draws; a marked function of
    s2s's has an effect."""
    rec = Record(prim)
    module = _module(prim)
    root = module.split(".")[0]
    if isinstance(prim, np.ufunc):
        rec.elementwise = prim.signature is None
        rec.scalar = "of_scalars"
        rec.array_result = True
        rec.floats = all(t.split("->")[-1][-1:] in "efdgFDGO" for t in prim.types)   # (an object loop: may be)
    elif root == "math" and callable(prim):
        rec.scalar = "always"
        rec.shape_rule = "of_numbers"
        rec.fold = True
        rec.floats = True
    elif root in ("operator", "_operator"):
        rec.scalar = "of_scalars"
        rec.fold = True
    elif root == "numpy" and callable(prim):
        rec.array_result = True
    if module.startswith("numpy.random"):
        rec.random = True
        rec.effect = True
    if module in ("s2s.runtime", "s2s.rules.helpers", "s2s.rules.complex_numbers"):
        rec.complex_safe = True         # s2s's own helpers: each keeps what it moves, or refuses it
    if getattr(prim, "_s2s_effect", False):
        rec.effect = True
    return rec


# ---------------------------------------------------------------- declarations

def adjoint(*prims: Any, **facts: Any) -> Callable[[Callable], Callable]:
    """Register a reverse-mode rule `rule(g, ans, *args, **kwargs) -> adjoint(s) of args` for prims (and the
    facts given as keywords: rules/record.py)."""
    def register(rule: Callable) -> Callable:
        _fill(prims, "adjoint", rule, facts)
        return rule
    return register


def tangent(*prims: Any, **facts: Any) -> Callable[[Callable], Callable]:
    """Register a forward-mode rule `rule(t, ans, *args, **kwargs) -> contribution per argument` for prims:
    element i of the result is the output's tangent when argument i has tangent t and the others none."""
    def register(rule: Callable) -> Callable:
        _fill(prims, "tangent", rule, facts)
        return rule
    return register


def complex_adjoint(*prims: Any, **facts: Any) -> Callable[[Callable], Callable]:
    """Register the adjoint rule of prims for complex arguments (same calling convention as adjoint): found before
    the real one when an argument may be complex (s2s/analysis/complex_values.py)."""
    def register(rule: Callable) -> Callable:
        _fill(prims, "complex_adjoint", rule, facts)
        return rule
    return register


def complex_tangent(*prims: Any, **facts: Any) -> Callable[[Callable], Callable]:
    """Register the tangent rule of prims for complex arguments (as tangent)."""
    def register(rule: Callable) -> Callable:
        _fill(prims, "complex_tangent", rule, facts)
        return rule
    return register


def batching(*prims: Any, **facts: Any) -> Callable[[Callable], Callable]:
    """Register the batching rule of prims (rules/record.py's Record.batch says its calling convention)."""
    def register(rule: Callable) -> Callable:
        _fill(prims, "batch", rule, facts)
        return rule
    return register


def complex_from_real(*prims: Any) -> None:
    """Declare functions whose result may be complex for real arguments, as the values decide (Record's
    complex_from_real: scipy.linalg.sqrtm)."""
    declare(*prims, complex_from_real=True)


def makes_complex(prim: Any) -> bool:
    """Whether prim was declared with complex_from_real."""
    return record(prim).complex_from_real


def find_complex_adjoint(prim: Any) -> Callable | None:
    return record(prim).complex_adjoint


def find_complex_tangent(prim: Any) -> Callable | None:
    return record(prim).complex_tangent


def template(fn: Callable) -> Callable:
    """Declare a function that rules call as part of their formula (a shared sub-expression): s2s inlines it
    into the rule, as it inlines a user's function, so that its code is differentiated again in second order.
    (s2s never inlines its own modules' functions; a template is given a module name outside s2s.)"""
    fn.__module__ = "s2s_rule_templates"
    return fn


def helper(fn: Callable, **facts: Any) -> Callable:
    """Declare a NumPy-only function that rules call: the emitter copies its source into derivative code
    (as it does s2s.runtime's helpers), so that generated code keeps needing NumPy alone. A helper used
    in an adjoint needs its own rule (tangent or linear) for second order."""
    from s2s import runtime
    runtime.EMITTED_HELPERS.add(fn)
    setattr(runtime, fn.__name__, fn)           # the emitter finds the helpers a helper calls by name
    declare(fn, helper=True, **facts)
    return fn


def nondifferentiable(*prims: Any, **facts: Any) -> None:
    """Declare functions whose result carries no derivative (integer- or boolean-valued, or piecewise constant)."""
    _fill(prims, "nondifferentiable", True, facts)


def linear(*prims: Any, argnums: tuple[int, ...] = (0,), applied: Callable | None = None, **facts: Any) -> None:
    """Declare functions linear in each of the arguments argnums (the others held fixed): the tangent
    for argument i is the function applied with that argument replaced by its tangent. The other
    arguments must be read for their shapes only, or be integers. applied: the function to apply instead
    (runtime._masked is linear only where its other argument is not zero)."""
    _fill(prims, "linear", tuple(argnums), facts)
    if applied is not None:
        declare(*prims, linear_applied=applied)


def linear_applied(prim: Any) -> Callable:
    """What forward mode applies to a linear function's tangent: the function itself, unless linear says."""
    return record(prim).linear_applied or prim


def linear_argnums(prim: Any) -> tuple[int, ...] | None:
    return record(prim).linear


def elementwise(*prims: Any, **facts: Any) -> None:
    """Declare elementwise functions (which broadcast their arguments): the transform sums each adjoint
    back to its argument's shape, and forward mode applies the adjoint rule to tangents.
    Elementwise NumPy ufuncs need no declaration."""
    _fill(prims, "elementwise", True, facts)


def several_results(*prims: Any, kind: Callable, **facts: Any) -> None:
    """Declare functions that return a tuple or list of arrays (numpy.linalg.eigh, numpy.split): kind(args,
    kwargs) gives the result's kind for activity analysis (("tuple", ("array", ...)) or ("list*", "array")),
    or None where the call returns one array; args and kwargs are the call's constant values (UNKNOWN
    for a value known only at run time)."""
    _fill(prims, "result_kind", kind, facts)


def result_kind_from(*prims: Any, kind: Callable) -> None:
    """Declare functions whose result's kind follows from their arguments' kinds (Record's kind_from_arguments)."""
    declare(*prims, kind_from_arguments=kind)


def kind_from_arguments(prim: Any) -> Callable | None:
    """The function declared with result_kind_from for prim, if any."""
    return record(prim).kind_from_arguments


def refused(*prims: Any, reason: str, **facts: Any) -> None:
    """Declare pure functions that derivative code calls (rules/integrate.py's ODE solvers) and that have no rule
    in some mode (or in any): differentiating them there raises NoDerivativeRule with the reason, when the
    derivative is made. (A rule of another mode, registered with tangent, is still used.)"""
    _fill(prims, "refused", reason, facts)


def refusal(prim: Any) -> str | None:
    """Why prim is not differentiated, if it was declared with refused."""
    return record(prim).refused


def defined_as(*prims: Any, **facts: Any) -> Callable[[Callable], Callable]:
    """Define library functions by Python code over functions that have rules (rules/definitions.py:
    `np.ptp(x)` is `np.max(x) - np.min(x)`): a call is inlined as a user's function is, so both modes and
    every order follow from the definition's own operations."""
    def register(fn: Callable) -> Callable:
        fn.__module__ = "s2s_rule_definitions"        # inlined as a user's function (s2s's own are not)
        _fill(prims, "definition", fn, facts)
        return fn
    return register


def definition(prim: Any) -> Callable | None:
    return record(prim).definition


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
    kind = record(prim).result_kind
    return kind(args, kwargs) if kind is not None else None


def is_elementwise(prim: Any) -> bool:
    return record(prim).elementwise


def sizes() -> tuple[int, ...]:
    """A key that changes whenever a rule or fact is declared (what is pure, for dead-code elimination, may
    change with it)."""
    return (_version,)


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


def find_adjoint(prim: Any) -> Callable | None:
    return record(prim).adjoint


def find_tangent(prim: Any) -> Callable | None:
    return record(prim).tangent


def is_nondifferentiable(prim: Any) -> bool:
    return record(prim).nondifferentiable


def registered_adjoints(builtin_only: bool = False) -> list[Any]:
    """The functions with a reverse-mode rule (only those of s2s's own rules/, with builtin_only)."""
    _ensure_loaded()
    return [rec.prim for rec in list(_RECORDS.values()) if rec.adjoint is not None
            and (not builtin_only or rec.adjoint.__module__.startswith("s2s.rules."))]


# ---------------------------------------------------------------- one field of every record, as a table

class _Column(MutableMapping):
    """The records' values of one field, as the dictionary the registry once kept for it (keyed as _key keys):
    what tests save, clear and restore around rules they register. A flag's value is None, as it was."""

    def __init__(self, name: str, flag: bool = False):
        self.name, self.flag = name, flag
        self.default = getattr(Record(), name)

    def _present(self, rec: Record) -> bool:
        value = getattr(rec, self.name)
        return bool(value) if self.flag else value is not None

    def __getitem__(self, key: Any) -> Any:
        rec = _RECORDS.get(key)
        if rec is None or not self._present(rec):
            raise KeyError(key)
        return None if self.flag else getattr(rec, self.name)

    def __setitem__(self, key: Any, value: Any) -> None:
        rec = _RECORDS.get(key)
        if rec is None:             # (an unhashable primitive's key names a record that exists)
            rec = _declared(key)
        setattr(rec, self.name, True if self.flag else value)
        rec.declared.add(self.name)
        global _version
        _version += 1

    def __delitem__(self, key: Any) -> None:
        rec = _RECORDS.get(key)
        if rec is None or not self._present(rec):
            raise KeyError(key)
        setattr(rec, self.name, self.default)
        rec.declared.discard(self.name)
        global _version
        _version += 1

    def __iter__(self) -> Iterator[Any]:
        return iter([k for k, rec in list(_RECORDS.items()) if self._present(rec)])

    def __len__(self) -> int:
        return sum(1 for rec in list(_RECORDS.values()) if self._present(rec))


_ADJOINTS = _Column("adjoint")
_TANGENTS = _Column("tangent")
_NONDIFFERENTIABLE = _Column("nondifferentiable", flag=True)
_BROADCASTING = _Column("elementwise", flag=True)
_LINEAR = _Column("linear")
_LINEAR_APPLIED = _Column("linear_applied")
_RESULT_KINDS = _Column("result_kind")
_REFUSED = _Column("refused")
_DEFINITIONS = _Column("definition")
_COMPLEX_ADJOINTS = _Column("complex_adjoint")
_COMPLEX_TANGENTS = _Column("complex_tangent")
