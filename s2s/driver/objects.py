"""Models as objects: a dataclass (frozen or not, as Equinox modules are written) or an instance of a class given
to s2s.register_pytree_node, passed to a function s2s transforms, is read as a namedtuple of its fields.

`records(x)` gives x with every such object (inside tuples, lists, dicts and namedtuples too) replaced by a record:
an instance of a namedtuple class made once per class (and per value of its constant fields), whose fields are the
object's arrays, numbers and containers of them, in order, and whose class attributes are its other fields (a
string, an int, a function: constants of the code made for it, s2s/passes/sequences.py). The record's kind names
the object's class, so that a method called on it (`model.forward(x)`, `layer(x)`) is inlined from the class's
source (s2s/passes/methods.py). `restore(g, x)` gives g, a gradient (or an output) shaped like records(x), as
objects of x's classes: the gradients in the array fields, the other fields kept as they are.
"""
from __future__ import annotations

import collections
import dataclasses
import types
from typing import Any

import numpy as np

from s2s import runtime, trees
from s2s.errors import BadArgument

_RECORDS: dict[tuple, type] = {}


def is_object(x: Any) -> bool:
    """A dataclass instance or an instance of a registered class: read as a namedtuple of its fields."""
    kind = type(x)
    if trees.registered(kind) is not None:
        return True
    return dataclasses.is_dataclass(x) and not isinstance(x, type)


def _dynamic(value: Any) -> bool:
    """A field s2s differentiates and batches: a float (or complex) number or array, or a container or object
    holding them."""
    if isinstance(value, bool):
        return False
    if isinstance(value, (float, complex, np.inexact)):
        return True
    if isinstance(value, np.ndarray) or runtime._foreign(value):
        return np.issubdtype(value.dtype, np.inexact)
    if isinstance(value, (tuple, list)):
        return bool(value) and all(_dynamic(v) or isinstance(v, (int, np.integer)) for v in value) \
            and any(_dynamic(v) for v in value)
    if isinstance(value, dict):
        return bool(value) and any(_dynamic(v) for v in value.values())
    return is_object(value)


def _fields(x: Any) -> tuple[list[str], list[Any], Any]:
    """(names, values, aux) of an object's fields: a dataclass's in order; a registered class's children, named
    by the attributes that hold them."""
    found = trees.registered(type(x))
    if found is None:
        names = [f.name for f in dataclasses.fields(x)]
        return names, [getattr(x, n) for n in names], None
    children, aux = found[0](x)
    attributes = getattr(x, "__dict__", {})
    names = []
    for child in children:
        name = next((n for n, v in attributes.items() if v is child and n not in names), None)
        if name is None:
            raise BadArgument(f"s2s reads an object of {type(x).__name__} (a registered pytree class) by its "
                              f"attributes, and one of the children its flatten function gives is none of them",
                              hint="make flatten return attributes of the object (self.w, self.b), or make the "
                                   "class a dataclass")
        names.append(name)
    return names, list(children), aux


def _record_class(cls: type, names: tuple, statics: tuple) -> type:
    key = (cls, names, tuple((n, trees._static_key(v)) for n, v in statics))
    made = _RECORDS.get(key)
    if made is None:
        base = collections.namedtuple(cls.__name__, names)
        attributes: dict[str, Any] = {"__slots__": (), "_fields": trees.Fields(names, cls, statics),
                                      "__s2s_object__": cls, "__module__": cls.__module__,
                                      "__qualname__": cls.__qualname__}
        for name, value in statics:
            attributes[name] = staticmethod(value) if isinstance(value, types.FunctionType) else value
        made = _RECORDS[key] = type(cls.__name__, (base,), attributes)
    return made


def records(x: Any) -> Any:
    """x with its objects read as records (x itself when it holds none)."""
    if is_object(x):
        names, values, _ = _fields(x)
        dynamic = [(n, records(v)) for n, v in zip(names, values) if _dynamic(v)]
        statics = tuple((n, v) for n, v in zip(names, values) if not _dynamic(v))
        cls = _record_class(type(x), tuple(n for n, _ in dynamic), statics)
        return cls(*[v for _, v in dynamic])
    if type(x) in (tuple, list):
        items = [records(v) for v in x]
        return x if all(a is b for a, b in zip(items, x)) else type(x)(items)
    if isinstance(x, tuple) and hasattr(type(x), "_fields"):
        items = [records(v) for v in x]
        return x if all(a is b for a, b in zip(items, x)) else type(x)(*items)
    if type(x) is dict:
        items = {k: records(v) for k, v in x.items()}
        return x if all(items[k] is x[k] for k in x) else items
    return x


def any_object(args: tuple) -> bool:
    """Whether an argument is (or holds) an object read as a record."""
    for a in args:
        kind = type(a)
        if kind is np.ndarray or kind is float or kind is int:
            continue
        if is_object(a) or isinstance(a, (tuple, list, dict)) and records(a) is not a:
            return True
    return False


def restore(g: Any, x: Any) -> Any:
    """g, shaped like records(x), with x's objects as objects of their classes: g's values in the fields s2s
    read, x's own in the others."""
    if is_object(x):
        names, values, aux = _fields(x)
        if isinstance(g, (int, float)) and g == 0:          # no gradient at all: zeros
            g = [0.0] * sum(1 for v in values if _dynamic(v))
        got = iter(list(g))
        children = [restore(next(got), v) if _dynamic(v) else v for v in values]
        found = trees.registered(type(x))
        if found is not None:
            return found[1](aux, children)
        made = object.__new__(type(x))
        for name, value in zip(names, children):
            object.__setattr__(made, name, value)
        return made
    if isinstance(x, (tuple, list)) and isinstance(g, (tuple, list)) and len(g) == len(x):
        items = [restore(a, b) for a, b in zip(g, x)]
        if isinstance(x, tuple) and hasattr(type(x), "_fields"):
            return type(x)(*items)
        return type(g)(items) if type(g) in (tuple, list) else type(x)(items)
    if isinstance(x, dict) and isinstance(g, dict):
        return {k: restore(g[k], x[k]) if k in g else g.get(k) for k in g}
    return g


def restore_gradient(result: Any, args: tuple, wrt: tuple, several: bool, with_value: bool,
                     has_aux: bool) -> Any:
    """A gradient's result (as grad and value_and_grad give it) with the gradients of objects restored."""
    if with_value:
        value, grads = result
    elif has_aux:
        grads, aux = result
    else:
        grads = result
    if several:
        grads = tuple(restore(g, args[i]) for g, i in zip(grads, wrt))
    else:
        grads = restore(grads, args[wrt[0]])
    if with_value:
        return value, grads
    if has_aux:
        return grads, aux
    return grads
