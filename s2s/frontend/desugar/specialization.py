"""Functions read for one kind of call: `specialize(fn, known=..., arity=..., kwnames=..., classes=...)` gives a
distinct function object (so that lowering caches its IR apart) carrying the facts its desugaring may use
(s2s/frontend/tree.py's Facts) and the signature of that call; one per function and facts, for as long as
something holds it."""
from __future__ import annotations

import inspect
import types
import weakref
from typing import Any

from s2s.frontend.desugar.known_values import is_literal_value
from s2s.frontend.tree import Facts, Synthetic, register_synthetic, synthetic_of


# (fn, the known objects' ids, the call's form) -> the clone, for as long as something holds the clone (the IR of a
# function that calls it): held strongly, every object a method was ever specialized on (a model) stayed alive
_SPECIALIZED: "weakref.WeakValueDictionary[tuple, types.FunctionType]" = weakref.WeakValueDictionary()


def _known_key(value: Any) -> Any:
    """How a specialization keys a known value: a literal by its value (two equal strings are one), an object
    by its identity."""
    return ("value", type(value), value) if is_literal_value(value) and not isinstance(value, float) or \
        isinstance(value, float) and value == value else ("object", id(value))


def specialize(fn: types.FunctionType, known: dict | None = None, arity: dict | None = None,
               kwnames: dict | None = None, classes: dict | None = None,
               shadowed: dict | None = None) -> types.FunctionType:
    """fn read for one kind of call: a distinct function object (so that lowering caches its IR apart)
    with the facts its desugaring may use, and the signature of that call."""
    known, arity, kwnames, classes = known or {}, arity or {}, kwnames or {}, classes or {}
    shadowed = {k: v for k, v in (shadowed or {}).items() if v}
    key = (fn, tuple((k, _known_key(v)) for k, v in known.items()), tuple(arity.items()), tuple(kwnames.items()),
           tuple(classes.items()), tuple(sorted(shadowed.items())))
    cached = _SPECIALIZED.get(key)
    if cached is not None and all(_known_key(synthetic_of(cached).facts.known.get(k)) == _known_key(v)
                                  for k, v in known.items()) \
            and cached.__defaults__ is fn.__defaults__ and cached.__kwdefaults__ == fn.__kwdefaults__ \
            and cached.__code__ is fn.__code__:
        return cached
    clone = types.FunctionType(fn.__code__, fn.__globals__, fn.__name__, fn.__defaults__, fn.__closure__)
    clone.__kwdefaults__ = fn.__kwdefaults__
    clone.__qualname__, clone.__module__ = fn.__qualname__, fn.__module__
    if arity or kwnames:
        clone.__signature__ = _fixed_signature(fn, arity, kwnames)
    base = synthetic_of(fn)
    facts = Facts(known={**(base.facts.known if base else {}), **known}, arity=arity, kwnames=kwnames,
                  classes={**(base.facts.classes if base else {}), **classes},
                  shadowed={**(base.facts.shadowed if base else {}), **shadowed})
    register_synthetic(clone, Synthetic(None, fn.__code__.co_filename, facts, source_of=fn))
    _SPECIALIZED[key] = clone
    return clone


def code_signature(fn: types.FunctionType) -> inspect.Signature:
    """The signature fn's own code has: not the `__signature__` a wrapper may be given to stand for another
    function (array_api_compat's `get_xp` wrappers, `def wrapped_f(*args, **kwargs)`, say they take `x, /, *,
    dtype=None`), which is not the parameters its body reads."""
    if "__signature__" not in getattr(fn, "__dict__", {}):
        return inspect.signature(fn, follow_wrapped=False)
    plain = types.FunctionType(fn.__code__, fn.__globals__, fn.__name__, fn.__defaults__, fn.__closure__)
    plain.__kwdefaults__ = fn.__kwdefaults__
    return inspect.signature(plain, follow_wrapped=False)


def _fixed_signature(fn: Any, arity: dict, kwnames: dict) -> inspect.Signature:
    params = []
    for p in code_signature(fn).parameters.values():
        if p.kind is p.VAR_POSITIONAL:
            params += [inspect.Parameter(f"{p.name}_{i}", inspect.Parameter.POSITIONAL_ONLY)
                       for i in range(arity.get(p.name, 0))]
        elif p.kind is p.VAR_KEYWORD:
            params += [inspect.Parameter(k, inspect.Parameter.KEYWORD_ONLY) for k in kwnames.get(p.name, ())]
        elif p.kind is p.POSITIONAL_OR_KEYWORD and arity:
            params.append(p.replace(kind=inspect.Parameter.POSITIONAL_ONLY))
        else:
            params.append(p)
    return inspect.Signature(params)
