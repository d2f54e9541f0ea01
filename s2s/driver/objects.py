"""Models as objects: a dataclass (frozen or not, as Equinox modules are written) or an instance of a class given
to s2s.register_pytree_node, passed to a function s2s transforms, is read as a namedtuple of its fields.

`records(x)` gives x with every such object (inside tuples, lists, dicts and namedtuples too) replaced by a record:
an instance of a namedtuple class made once per class (and per value of its constant fields), whose fields are the
object's arrays, numbers and containers of them, in order, and whose class attributes are its other fields (a
string, an int, a function: constants of the code made for it, s2s/passes/sequences.py). The record's kind names
the object's class, so that a method called on it (`model.forward(x)`, `layer(x)`) is inlined from the class's
source (s2s/passes/methods.py). `objects_of(g)` gives g, a gradient (or an output) holding records, with objects
of their classes: the gradients in the array fields, the other fields kept as they were.
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


def _record_class(cls: type, names: tuple, statics: tuple, order: tuple = (), aux: Any = None) -> type:
    """The namedtuple class of the records of cls's objects with these fields and constants; order: every field's
    name, in the object's order; aux: what a registered class's unflatten needs besides its children."""
    key = (cls, names, tuple((n, trees._static_key(v)) for n, v in statics), trees._static_key(aux))
    made = _RECORDS.get(key)
    if made is None:
        base = collections.namedtuple(cls.__name__, names)
        attributes: dict[str, Any] = {"__slots__": (), "_fields": trees.Fields(names, cls, statics),
                                      "__s2s_object__": cls, "__s2s_order__": order, "__s2s_aux__": aux,
                                      "__module__": cls.__module__, "__qualname__": cls.__qualname__}
        for name, value in statics:
            attributes[name] = staticmethod(value) if isinstance(value, types.FunctionType) else value
        made = _RECORDS[key] = type(cls.__name__, (base,), attributes)
    return made


def records(x: Any) -> Any:
    """x with its objects read as records (x itself when it holds none)."""
    if is_object(x):
        names, values, aux = _fields(x)
        dynamic = [(n, records(v)) for n, v in zip(names, values) if _dynamic(v)]
        statics = tuple((n, v) for n, v in zip(names, values) if not _dynamic(v))
        cls = _record_class(type(x), tuple(n for n, _ in dynamic), statics, tuple(names), aux)
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


def objects_of(x: Any) -> Any:
    """x with every record (s2s's namedtuple standing for an object) back as an object of its class: its values in
    the fields s2s read (a gradient's, a batch's), the record's constants in the others."""
    cls = getattr(type(x), "__s2s_object__", None)
    if cls is not None and isinstance(x, tuple):
        fields = type(x)._fields
        values = dict(zip(fields, (objects_of(v) for v in x)))
        values.update(dict(fields.statics))
        order = type(x).__s2s_order__
        found = trees.registered(cls)
        if found is not None:
            return found[1](type(x).__s2s_aux__, [values[n] for n in order])
        made = object.__new__(cls)
        for name in order:
            object.__setattr__(made, name, values[name])
        return made
    if type(x) in (tuple, list):
        items = [objects_of(v) for v in x]
        return x if all(a is b for a, b in zip(items, x)) else type(x)(items)
    if isinstance(x, tuple) and hasattr(type(x), "_fields"):
        items = [objects_of(v) for v in x]
        return x if all(a is b for a, b in zip(items, x)) else type(x)(*items)
    if type(x) is dict:
        items = {k: objects_of(v) for k, v in x.items()}
        return x if all(items[k] is x[k] for k in x) else items
    return x
