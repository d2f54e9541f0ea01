"""The front end's data: a function read for differentiation (`ParsedFunction`), the facts the desugaring may take
as known when it is read for one caller (`Facts`), and the functions s2s makes itself (`Synthetic`, registered with
`register_synthetic` together with their tree). Below both the reading (source.py) and the desugaring stage."""
from __future__ import annotations

import builtins
import copy
import weakref
from dataclasses import dataclass, field
from typing import Any

import gast

from s2s.frontend import parsing
from s2s.ir.core import Loc


class _Missing:
    """What an attribute or name a derivative depends on holds when it holds nothing (absent)."""
    __slots__ = ()

    def __repr__(self) -> str:
        return "<missing>"


MISSING = _Missing()


@dataclass
class Facts:
    """What the desugaring may take as known about a function's parameters when it is read for one caller:
    `known` maps a parameter to the object every caller passes (a method's `self`), `arity` a `*args`
    parameter to the number of values it receives, `kwnames` a `**kwargs` parameter to its keywords, `classes` a
    parameter to the class of the objects every caller passes (s2s/frontend/desugar/instances.py), `shadowed` such
    a parameter to the names its object holds attributes of its own for that its class has functions of (Python
    calls the object's attribute)."""
    known: dict[str, Any] = field(default_factory=dict)
    arity: dict[str, int] = field(default_factory=dict)
    kwnames: dict[str, tuple] = field(default_factory=dict)
    classes: dict[str, type] = field(default_factory=dict)
    shadowed: dict[str, frozenset] = field(default_factory=dict)


@dataclass(frozen=True, eq=False)
class AttributeOf:
    """The owner in a dependency on an attribute of an object (Function.dependencies)."""
    holder: Any


class PartsOf:
    """The owner in a dependency on what a function s2s read is made of: its `__code__` (IPython's autoreload
    replaces it), `__defaults__` and `__kwdefaults__` (Function.dependencies). It holds the function weakly: the
    function's own IR, cached while the function lives, names it (`function` is None once it is freed)."""
    __slots__ = ("_ref",)

    def __init__(self, function: Any):
        self._ref = weakref.ref(function)

    @property
    def function(self) -> Any:
        return self._ref()


FUNCTION_PARTS = ("__code__", "__defaults__", "__kwdefaults__")


@dataclass(frozen=True, eq=False)
class DefaultsOf:
    """The owner in a dependency on a function's defaults (`__defaults__`, `__kwdefaults__`): a callee inlined with
    them (or specialized on them) is read again when they are replaced."""
    holder: Any


@dataclass(frozen=True, eq=False)
class TypeOf:
    """The owner in a dependency on the type of what another owner holds under the name (a fold relied on the type:
    `isinstance(self.w, np.ndarray)`, `W is None`): a global or closure variable's owner (the function), or an
    AttributeOf whose holder keeps the value in its own `__dict__`."""
    owner: Any


@dataclass(frozen=True, eq=False)
class ItemOf:
    """The owner in a dependency on an item of a dict (`LOSSES["mse"](x)`: a function read from a global dict)."""
    holder: dict


@dataclass
class ParsedFunction:
    fn: Any
    node: gast.FunctionDef
    filename: str
    line_offset: int          # add to a gast line number to get the file's line
    col_offset: int           # the indentation removed by dedent
    lines: list[str]          # the file's lines, for error messages
    closure: dict[str, Any] = field(default_factory=dict)   # name -> cell
    facts: Facts = field(default_factory=Facts)
    # methods read from objects known when the derivative is made (`self.e(x)`): (AttributeOf(object), name,
    # what the name held then); a derivative is made anew when one is replaced (on the object or its class)
    attributes: dict = field(default_factory=dict)
    # names the desugaring made for a value it hands on and never reads again (a comprehension's result): they
    # do not count as another name of the object (`m = {k: 0.0 for k in ks}; m[k] = v`)
    transient: set = field(default_factory=set)
    # (node, the variables its body rebinds) as the fence found them walking node (lowering's local names)
    stored: tuple | None = None
    # what the desugaring folded on values known when the derivative is made ("self.is_initialized == True"):
    # shown in the generated header (desugar/known_values.py)
    folds: list = field(default_factory=list)

    @property
    def globals(self) -> dict[str, Any]:
        return self.fn.__globals__

    def loc(self, node: Any) -> Loc:
        line = getattr(node, "lineno", None)
        if line is None:
            return Loc(self.filename, self.line_offset + self.node.lineno, self.col_offset)
        line += self.line_offset
        text = self.lines[line - 1] if 0 < line <= len(self.lines) else ""
        return Loc(self.filename, line, getattr(node, "col_offset", 0) + self.col_offset, text)

    def resolve(self, name: str) -> tuple[bool, Any]:
        """(found, object) for a free name, looked up as Python would at this moment."""
        if name in self.closure:
            try:
                return True, self.closure[name].cell_contents
            except ValueError:       # an empty cell: the enclosing function has not bound it yet
                return False, None
        if name in self.globals:
            return True, self.globals[name]
        if hasattr(builtins, name):
            return True, getattr(builtins, name)
        return False, None


@dataclass
class Synthetic:
    """A function s2s made: its tree (a FunctionDef in file coordinates), where it came from, its facts."""
    node: gast.FunctionDef
    filename: str
    facts: Facts
    source_of: Any = None     # a specialization: read this function's source instead, with the facts
    line_offset: int = 0      # as in ParsedFunction, for a tree cut out of a function read from a file
    col_offset: int = 0


_SYNTHETIC: "weakref.WeakKeyDictionary[Any, Synthetic]" = weakref.WeakKeyDictionary()


def register_synthetic(fn: Any, synthetic: Synthetic) -> None:
    _SYNTHETIC[fn] = synthetic


def synthetic_of(fn: Any) -> Synthetic | None:
    try:
        return _SYNTHETIC.get(fn)
    except TypeError:
        return None


def clone_tree(node: Any) -> Any:
    """A deep copy of a gast tree that shares the objects its constants hold (a model, a function).

    copy.deepcopy's copy, made directly for nodes and lists (a node shared in the tree is shared in the copy, as
    deepcopy's memo keeps it); anything else a node holds goes to copy.deepcopy with the same memo."""
    roots = node if isinstance(node, list) else [node]
    memo = {id(sub.value): sub.value for root in roots for sub in parsing.walk(root) if isinstance(sub, gast.Constant)}
    return _clone(node, memo)


_ATOMIC = frozenset({type(None), bool, int, float, complex, str, bytes})
_NODE_KINDS: dict = {}        # type -> whether _clone copies it as a node (its state is its __dict__)


def _clone(value: Any, memo: dict) -> Any:
    kind = type(value)
    if kind in _ATOMIC:
        return value
    seen = memo.get(id(value), memo)
    if seen is not memo:
        return seen
    if kind is list:
        copied: Any = []
        memo[id(value)] = copied
        copied.extend([_clone(item, memo) for item in value])
    else:
        node = _NODE_KINDS.get(kind)
        if node is None:
            node = _NODE_KINDS[kind] = issubclass(kind, gast.AST) and kind.__reduce_ex__ is gast.AST.__reduce_ex__
        if not node:
            return copy.deepcopy(value, memo)
        copied = kind.__new__(kind)
        memo[id(value)] = copied
        state = copied.__dict__
        for key, item in value.__dict__.items():
            state[key] = item if type(item) in _ATOMIC else _clone(item, memo)
    copy._keep_alive(value, memo)       # (as deepcopy does: value's id is not reused while memo lives)
    return copied
