"""Callables that are not plain Python functions, as functions s2s can differentiate.

`as_function(obj)` returns obj itself for a Python function (a lambda included: the front end finds it
by its code object) or a derivative s2s made; for a bound method (`model.loss`, a classmethod), a
`functools.partial`, a callable object (`__call__`) or a function with a rule but no source
(`np.sin`, `math.exp`), it returns a small wrapper function taking the remaining parameters:

    def loss(x, y):                       # s2s.grad(model.loss): self is a constant
        return Model.loss'(model, x, y)   # the method, specialized on model (desugar.objects)

The wrapper is a real function (calling it calls obj), registered with its tree, so the rest of the
pipeline sees an ordinary function; `wrt` counts the wrapper's parameters.
"""
from __future__ import annotations

import collections
import functools
import inspect
import linecache
import types
from typing import Any

import gast
import numpy as np

from s2s.frontend.tree import Facts, Synthetic, register_synthetic
from s2s.rules import registry

# the wrappers made last (so that s2s.grad(model.loss) called again finds its derivatives): a wrapper holds its
# object (a model), so only the most recently used are kept; the derivatives of one that leaves go with it
_WRAPPERS: "collections.OrderedDict[Any, tuple]" = collections.OrderedDict()
_KEPT_WRAPPERS = 64


def as_function(obj: Any) -> Any:
    if hasattr(obj, "__s2s__") or (isinstance(obj, types.FunctionType) and not _forwards_arguments(obj)):
        return obj
    key = _key(obj)
    cached = _WRAPPERS.get(key)
    if cached is not None and cached[0] is _identity(obj):
        try:
            _WRAPPERS.move_to_end(key)
        except KeyError:        # (another thread dropped it meanwhile)
            pass
        return cached[1]
    wrapper = _wrap(obj)
    if wrapper is None:
        return obj
    _WRAPPERS[key] = (_identity(obj), wrapper)
    while len(_WRAPPERS) > _KEPT_WRAPPERS:
        try:
            _WRAPPERS.popitem(last=False)
        except KeyError:
            break
    return wrapper


def forget_wrappers() -> None:
    """Drop the wrappers kept (s2s.clear_cache)."""
    _WRAPPERS.clear()


def _identity(obj: Any) -> Any:
    return obj.__self__ if isinstance(obj, types.MethodType) else obj


def _key(obj: Any) -> Any:
    if isinstance(obj, types.MethodType):
        return ("method", obj.__func__, id(obj.__self__))
    return ("object", id(obj))


def _has_rule(obj: Any) -> bool:
    try:
        return registry.find_adjoint(obj) is not None or registry.find_tangent(obj) is not None
    except TypeError:
        return False


def _signature(obj: Any) -> inspect.Signature | None:
    if isinstance(obj, np.ufunc):
        names = ["x"] if obj.nin == 1 else [f"x{i + 1}" for i in range(obj.nin)]
        return inspect.Signature([inspect.Parameter(n, inspect.Parameter.POSITIONAL_OR_KEYWORD) for n in names])
    try:
        return inspect.signature(obj)
    except (TypeError, ValueError):
        return None


def _forwards_arguments(fn: types.FunctionType) -> bool:
    """A decorator's wrapper, `def wrapper(*args, **kwargs)` with functools.wraps: its own code takes
    star-arguments and its signature (followed through __wrapped__) names the parameters. s2s
    differentiates the wrapper's own code, called with those parameters, so the wrapper is never read
    as the function it wraps."""
    takes_star = fn.__code__.co_flags & (inspect.CO_VARARGS | inspect.CO_VARKEYWORDS)
    if not takes_star or not hasattr(fn, "__wrapped__"):
        return False
    signature = _signature(fn)
    return signature is not None and not any(
        p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD) for p in signature.parameters.values())


def _forwarding_specialization(fn: types.FunctionType, signature: inspect.Signature) -> types.FunctionType:
    """The wrapper's own code read for the call its parameters make: positional ones fill `*args`,
    keyword-only ones `**kwargs` (as desugar.objects reads a call of a helper taking star-arguments)."""
    from s2s.frontend.desugar.objects import specialize
    own = inspect.signature(fn, follow_wrapped=False).parameters.values()
    named = [p for p in own if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    positional = sum(p.kind is not p.KEYWORD_ONLY for p in signature.parameters.values())
    keywords = tuple(p.name for p in signature.parameters.values() if p.kind is p.KEYWORD_ONLY)
    arity = {p.name: max(0, positional - len(named)) for p in own if p.kind is p.VAR_POSITIONAL}
    kwnames = {p.name: keywords for p in own if p.kind is p.VAR_KEYWORD}
    return specialize(fn, arity=arity, kwnames=kwnames)


def _wrap(obj: Any) -> Any:
    from s2s.frontend.desugar.context import is_user_object
    if isinstance(obj, types.FunctionType) or isinstance(obj, types.MethodType) or isinstance(obj, functools.partial):
        target = obj
    elif is_user_object(obj) and callable(obj):
        target = obj
    elif callable(obj) and _has_rule(obj):
        target = obj
    else:
        return None
    signature = _signature(target)
    if signature is None or any(p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD) for p in signature.parameters.values()):
        return None
    name = getattr(obj, "__name__", None) or getattr(getattr(obj, "func", None), "__name__", None) \
        or type(obj).__name__
    name = name if name.isidentifier() and not name.startswith("<") else "function"
    qualname = getattr(obj, "__qualname__", None) or f"{type(obj).__qualname__}.__call__"
    params, defaults, call_args = [], {}, []
    star_done = False
    bound = getattr(target, "keywords", {}) if isinstance(target, functools.partial) else {}
    for p in signature.parameters.values():
        if p.kind is p.KEYWORD_ONLY and p.name in bound:
            continue                   # a keyword the partial binds: a constant of the wrapper's body
        text = p.name
        if p.default is not p.empty:
            defaults[f"_d{len(defaults)}"] = p.default
            text += f"=_d{len(defaults) - 1}"
        if p.kind is p.KEYWORD_ONLY and not star_done:
            params.append("*")
            star_done = True
        params.append(text)
        call_args.append(f"{p.name}={p.name}" if p.kind is p.KEYWORD_ONLY else p.name)
    filename = f"<s2s: {qualname}>"
    inner = f"def {name}({', '.join(params)}):\n    return _target({', '.join(call_args)})\n"
    linecache.cache[filename] = (len(inner), None, inner.splitlines(keepends=True), filename)
    source = "def __s2s_make__(_target, " + ", ".join(defaults) + "):\n" + \
        "".join("    " + line + "\n" for line in inner.splitlines()) + f"    return {name}\n"
    namespace: dict = {}
    globals_ = getattr(obj, "__globals__", None) or getattr(getattr(obj, "__func__", None), "__globals__", None) or \
        getattr(getattr(obj, "func", None), "__globals__", None) or {"__name__": "s2s.driver.callables"}
    exec(compile(source, filename, "exec"), dict(globals_), namespace)
    made = namespace["__s2s_make__"](target, *defaults.values())
    wrapper = types.FunctionType(made.__code__, globals_, name, made.__defaults__, made.__closure__)
    wrapper.__kwdefaults__ = made.__kwdefaults__
    wrapper.__qualname__ = qualname
    node = gast.parse(inner).body[0]
    call = node.body[0].value
    read = _forwarding_specialization(target, signature) if isinstance(target, types.FunctionType) else target
    call.func = gast.copy_location(gast.Constant(value=read, kind=None), call.func)
    register_synthetic(wrapper, Synthetic(node, filename, Facts()))
    return wrapper
