"""Pytrees, with JAX's conventions: containers whose leaves are arrays and numbers.

A pytree is a leaf (an array, a number, anything not registered) or a node: a tuple, a list, a dict (its leaves
in sorted key order), a namedtuple, None (a node with no children), a dataclass (its fields, in order: frozen or
not, as Equinox modules are written), or an instance of a class given to `register_pytree_node(cls, flatten,
unflatten)`, where `flatten(obj)` returns `(children, aux)` and `unflatten(aux, children)` rebuilds it.

`tree_flatten(tree)` returns `(leaves, treedef)`; `tree_unflatten(treedef, leaves)` rebuilds; `tree_leaves`,
`tree_structure`, `tree_map(f, tree, *rest)`. s2s's transformations read registered classes and dataclasses as
the containers they flatten to (s2s/analysis/values.py): a gradient comes back as an object of the same class.
"""
from __future__ import annotations

import dataclasses
from typing import Any, Callable

__all__ = ["PyTreeDef", "register_pytree_node", "tree_flatten", "tree_leaves", "tree_map", "tree_structure",
           "tree_unflatten", "registered", "node_of"]

_REGISTRY: dict[type, tuple[Callable, Callable]] = {}


def register_pytree_node(cls: type, flatten: Callable, unflatten: Callable) -> None:
    """Register cls as a pytree node: flatten(obj) -> (children, aux); unflatten(aux, children) -> obj."""
    if not isinstance(cls, type):
        raise TypeError(f"register_pytree_node takes a class, not {cls!r}")
    _REGISTRY[cls] = (flatten, unflatten)


def registered(cls: type) -> tuple[Callable, Callable] | None:
    return _REGISTRY.get(cls)


def _is_namedtuple(x: Any) -> bool:
    return isinstance(x, tuple) and isinstance(getattr(type(x), "_fields", None), tuple)


def _dataclass_fields(x: Any) -> tuple[str, ...] | None:
    if dataclasses.is_dataclass(x) and not isinstance(x, type):
        return tuple(f.name for f in dataclasses.fields(x))
    return None


def node_of(x: Any) -> tuple[Any, list, Any] | None:
    """(the node's kind, its children, what rebuilding it needs) of a pytree node, or None for a leaf."""
    kind = type(x)
    found = _REGISTRY.get(kind)
    if found is not None:
        children, aux = found[0](x)
        return ("registered", kind), list(children), aux
    if x is None:
        return ("none", None), [], None
    if _is_namedtuple(x):
        return ("namedtuple", kind), list(x), None
    if kind in (tuple, list):
        return (kind.__name__, None), list(x), None
    if isinstance(x, dict):
        keys = sorted(x)
        return ("dict", kind), [x[k] for k in keys], tuple(keys)
    fields = _dataclass_fields(x)
    if fields is not None:
        return ("dataclass", kind), [getattr(x, f) for f in fields], fields
    return None


def _rebuild(kind: tuple, aux: Any, children: list) -> Any:
    tag, cls = kind
    if tag == "registered":
        return _REGISTRY[cls][1](aux, children)
    if tag == "none":
        return None
    if tag == "namedtuple":
        return cls(*children)
    if tag == "tuple":
        return tuple(children)
    if tag == "list":
        return list(children)
    if tag == "dict":
        made = dict(zip(aux, children))
        return made if cls is dict else cls(made)
    obj = object.__new__(cls)           # a dataclass: its fields set as they are (a frozen one too)
    for name, value in zip(aux, children):
        object.__setattr__(obj, name, value)
    return obj


class PyTreeDef:
    """The structure of a pytree: its nodes and where its leaves go."""

    __slots__ = ("kind", "aux", "children")

    def __init__(self, kind: Any, aux: Any, children: tuple):
        self.kind, self.aux, self.children = kind, aux, children

    @property
    def num_leaves(self) -> int:
        if self.kind is None:
            return 1
        return sum(c.num_leaves for c in self.children)

    def unflatten(self, leaves: Any) -> Any:
        return tree_unflatten(self, leaves)

    def _key(self) -> tuple:
        return (self.kind, _hashable(self.aux), tuple(c._key() for c in self.children))

    def __eq__(self, other: Any) -> bool:
        return isinstance(other, PyTreeDef) and self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def __repr__(self) -> str:
        if self.kind is None:
            return "*"
        tag, cls = self.kind
        inner = ", ".join(repr(c) for c in self.children)
        if tag == "dict":
            inner = ", ".join(f"{k!r}: {c!r}" for k, c in zip(self.aux, self.children))
            return f"PyTreeDef({{{inner}}})"
        if tag in ("tuple", "list"):
            return f"PyTreeDef({'(' if tag == 'tuple' else '['}{inner}{',' if tag == 'tuple' and len(self.children) == 1 else ''}{')' if tag == 'tuple' else ']'})"
        if tag == "none":
            return "PyTreeDef(None)"
        return f"PyTreeDef({cls.__name__}({inner}))"


def _hashable(aux: Any) -> Any:
    try:
        hash(aux)
        return aux
    except TypeError:
        return repr(aux)


def _flatten(tree: Any, leaves: list, is_leaf: Callable | None) -> PyTreeDef:
    if is_leaf is not None and is_leaf(tree):
        leaves.append(tree)
        return PyTreeDef(None, None, ())
    node = node_of(tree)
    if node is None:
        leaves.append(tree)
        return PyTreeDef(None, None, ())
    kind, children, aux = node
    return PyTreeDef(kind, aux, tuple(_flatten(c, leaves, is_leaf) for c in children))


def tree_flatten(tree: Any, is_leaf: Callable | None = None) -> tuple[list, PyTreeDef]:
    """(the leaves, left to right; a dict's in sorted key order, the treedef)."""
    leaves: list = []
    treedef = _flatten(tree, leaves, is_leaf)
    return leaves, treedef


def tree_unflatten(treedef: PyTreeDef, leaves: Any) -> Any:
    """The pytree of this structure with these leaves."""
    leaves = list(leaves)
    if len(leaves) != treedef.num_leaves:
        raise ValueError(f"tree_unflatten: the treedef {treedef!r} has {treedef.num_leaves} leaves, and "
                         f"{len(leaves)} were given")
    items = iter(leaves)

    def build(d: PyTreeDef) -> Any:
        if d.kind is None:
            return next(items)
        return _rebuild(d.kind, d.aux, [build(c) for c in d.children])
    return build(treedef)


def tree_leaves(tree: Any, is_leaf: Callable | None = None) -> list:
    return tree_flatten(tree, is_leaf)[0]


def tree_structure(tree: Any, is_leaf: Callable | None = None) -> PyTreeDef:
    return tree_flatten(tree, is_leaf)[1]


def tree_map(f: Callable, tree: Any, *rest: Any, is_leaf: Callable | None = None) -> Any:
    """f applied to every leaf (with the matching leaves of rest, which have tree's structure)."""
    leaves, treedef = tree_flatten(tree, is_leaf)
    others = []
    for r in rest:
        r_leaves, r_def = tree_flatten(r, is_leaf)
        if r_def != treedef:
            raise ValueError(f"tree_map: the trees have different structures: {treedef!r} and {r_def!r}")
        others.append(r_leaves)
    return tree_unflatten(treedef, [f(*xs) for xs in zip(leaves, *others)])


# ---------------------------------------------------------------- the field names of a namedtuple's kind

class Fields(tuple):
    """A namedtuple's field names as s2s's kinds hold them (s2s/analysis/values.py), with the class they belong to
    (whose methods a call on the value runs: s2s/passes/methods.py) and, for an object read as a namedtuple
    (a dataclass, a registered class: s2s/driver/objects.py), its other fields, which are not arrays or numbers,
    as (name, value) pairs: constants of the code made for it. Equal only for the same class and constants."""

    owner: Any
    statics: tuple

    def __new__(cls, names: tuple, owner: Any, statics: tuple = ()) -> "Fields":
        made = super().__new__(cls, names)
        made.owner = owner
        made.statics = statics
        return made

    def _identity(self) -> tuple:
        return (tuple(self), id(self.owner), tuple((n, _static_key(v)) for n, v in self.statics))

    def __eq__(self, other: Any) -> bool:
        if isinstance(other, Fields):
            return self._identity() == other._identity()
        return tuple.__eq__(self, other)

    def __ne__(self, other: Any) -> bool:
        return not self == other

    def __hash__(self) -> int:
        return hash(self._identity())

    def __reduce__(self) -> tuple:
        return (tuple, (tuple(self),))

    def static(self, name: str) -> tuple[bool, Any]:
        for n, v in self.statics:
            if n == name:
                return True, v
        return False, None


def _static_key(value: Any) -> Any:
    try:
        hash(value)
        return ("value", type(value), value)
    except TypeError:
        return ("id", id(value))


_FIELDS: dict[type, Fields] = {}


def fields_of(cls: type) -> Fields:
    """The Fields of a namedtuple class (its own, for a class s2s made to read an object as a namedtuple)."""
    own = cls.__dict__.get("_fields")
    if isinstance(own, Fields):
        return own
    found = _FIELDS.get(cls)
    if found is None:
        found = _FIELDS[cls] = Fields(tuple(cls._fields), cls)
    return found
