"""A function's primal IR: lowered from its source once per function and code object, and cached; `root_function`
is the user's function behind a derivative of a derivative. Below the pipeline: the checks that read other
functions' code (mutation.py, replay.py) read it here."""
from __future__ import annotations

import types
import weakref
from contextlib import contextmanager
from dataclasses import dataclass
from contextvars import ContextVar
from typing import Any, Callable, Iterator

import numpy as np

from s2s.frontend import depth
from s2s.frontend.desugar.objects import specialize
from s2s.frontend.parse import parse_function
from s2s.ir.core import Function, checked, clone_function
from s2s.ir.lower import lower
from s2s.ir.naming import Namer
from s2s.kept import FunctionTable

_PRIMAL = FunctionTable()         # fn -> (its code, its IR): kept on fn, freed with it (s2s/kept.py)


def primal_ir(fn: Callable) -> Function:
    """fn lowered to IR: once per function (and code), then a fresh copy for each transform to work on."""
    namer = Namer()
    return clone_function(lowered(fn), lambda v: namer.value(v.hint))


def lowered(fn: Callable) -> Function:
    """fn lowered to IR, made once per function (and code) and cached: for callers that only read it.

    Specialized on the values of the arguments that are None, a string or a boolean (what decides a branch: a
    flag, a mode): those of the call being differentiated inside `known_arguments(fn, ...)`, else fn's defaults
    (the canonical lowering, which the dispatcher's guards and the early checks read)."""
    known = _KNOWN.get().get(fn) if isinstance(fn, types.FunctionType) else None
    canonical = literal_defaults(fn)
    if known is not None and _key(known) != _key(canonical):
        return _specialized(fn, known)
    cached = _PRIMAL.get(fn) if isinstance(fn, types.FunctionType) else None
    if cached is None or cached[0] is not fn.__code__:
        read = _specialization(fn, canonical) if canonical else fn
        with depth.room(fn):        # expressions nested as deep as Python compiles
            cached = (getattr(fn, "__code__", None), _lowered_unfolding_writes(read))
        _PRIMAL[fn] = cached
    return cached[1]


def _lowered_unfolding_writes(read: Callable) -> Function:
    """read lowered; again, without those folds, while a fold relied on an attribute that the function (or a method
    it calls) writes: `self.advance(); if self.done: ...` reads done after advance() wrote it, never before."""
    from s2s.frontend.desugar.known_values import WRITTEN
    from s2s.ir.lower import clear_callee_cache
    for _ in range(8):
        made = checked(lower(parse_function(read)))
        written = {(id(obj), name) for kind, obj, name in getattr(made, "effects", ()) if kind == "attr"}
        conflicts = written & getattr(made, "folded", set())
        if not conflicts:
            return made
        WRITTEN.update(conflicts)
        clear_callee_cache()
    return made


# ---------------------------------------------------------------- arguments known when the derivative is made

_KNOWN: ContextVar[dict] = ContextVar("s2s_known_arguments", default={})
_SPECIALIZED: "weakref.WeakKeyDictionary[Callable, dict]" = weakref.WeakKeyDictionary()
_LITERALS = (type(None), str, bool)


def literal(value: Any) -> bool:
    """An argument a derivative is specialized on (by value): None, a string, a boolean, or a tuple of them. A
    number is an argument: a float that changes from call to call never makes a new derivative."""
    return type(value) in _LITERALS or type(value) is tuple and bool(value) and all(map(literal, value))


def function_value(value: Any) -> bool:
    """An argument that is a function (a Python function or lambda, a builtin, a NumPy ufunc): the derivative is
    specialized on which one it is, as on a function a global names (a derivative made for each function passed;
    one made for each new lambda when a lambda is made anew for every call)."""
    return isinstance(value, (types.FunctionType, types.BuiltinFunctionType, np.ufunc))


def literal_defaults(fn: Callable) -> dict:
    """fn's parameters whose defaults a derivative is specialized on, by name."""
    code = getattr(fn, "__code__", None)
    if code is None:
        return {}
    names = code.co_varnames[:code.co_argcount]
    out = {n: v for n, v in zip(names[len(names) - len(fn.__defaults__ or ()):], fn.__defaults__ or ()) if literal(v)}
    out.update({n: v for n, v in (fn.__kwdefaults__ or {}).items() if literal(v)})
    return out


def _key(known: dict) -> tuple:
    return tuple(sorted((k, type(v).__name__, v) for k, v in known.items()))


def value_key(known: dict) -> tuple:
    """What a cache keys on about the argument values a derivative is specialized on."""
    return _key(known)


def known_for(fn: Callable) -> dict:
    """The argument values fn is being lowered for (those of the call, else its literal defaults)."""
    known = _KNOWN.get().get(fn)
    return literal_defaults(fn) if known is None else known


@contextmanager
def known_arguments(fn: Callable, known: dict) -> Iterator[None]:
    """Inside: fn is lowered specialized on these argument values (s2s/driver/pipeline.py, per call)."""
    token = _KNOWN.set({**_KNOWN.get(), fn: known})
    try:
        yield
    finally:
        _KNOWN.reset(token)


@dataclass(frozen=True)
class InstanceOf:
    """An argument known, when the derivative is made, by its class alone (a plain class's object not
    differentiated): its methods are the class's (s2s/frontend/desugar/instances.py), but for the names it holds
    attributes of its own for (`model.mean = f`: Python calls those); the cache keys on both, and the dispatcher
    checks each argument's type on entry."""
    cls: type
    shadowed: frozenset = frozenset()


def _specialization(fn: Callable, known: dict) -> Callable:
    classes = {k: v.cls for k, v in known.items() if isinstance(v, InstanceOf)}
    shadowed = {k: v.shadowed for k, v in known.items() if isinstance(v, InstanceOf)}
    return specialize(fn, known={k: v for k, v in known.items() if not isinstance(v, InstanceOf)}, classes=classes,
                      shadowed=shadowed)


def _specialized(fn: Callable, known: dict) -> Function:
    table = _SPECIALIZED.setdefault(fn, {})
    key = (fn.__code__, _key(known))
    found = table.get(key)
    if found is None:
        found = table[key] = _lowered_unfolding_writes(_specialization(fn, known))
        try:        # its guards are the canonical lowering's too: the dispatcher watches those
            canonical = lowered(fn)
            held = {(id(o), n, id(v)) for o, n, v in canonical.dependencies}
            canonical.dependencies.extend(d for d in found.dependencies if (id(d[0]), d[1], id(d[2])) not in held)
        except Exception:           # noqa: BLE001 - the canonical lowering is refused: nothing to add to
            pass
    return found


def root_function(fn: Callable) -> Callable:
    """The user's function behind a derivative of a derivative."""
    while hasattr(fn, "__s2s__"):
        fn = fn.__s2s__[0]
    return fn
