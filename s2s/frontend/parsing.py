"""Source text to gast trees, fast: what the front end reads a function with.

- `parse(text)` is `gast.parse(text)`, node for node (types, fields, their order and the locations):
  `ast.parse` and then `to_gast`, a direct converter (gast's own goes through a NodeTransformer and a
  keyword-argument constructor per node, about twice as slow; a 3,200-line function took 0.1 s).
- `definition(...)` finds the lines of a function's `def` (with its decorators) from its code object's first
  line, in an index of the file's definitions built once per file text (linecache's entry), instead of
  `inspect.getsourcelines`, which looks up the function's module among all modules and tokenizes the block
  in Python at each call.
- `walk(node)` is `gast.walk`'s order (breadth first) as a list, without the leaves that hold no node a rewrite
  looks for (the `ctx` of a name, the operator of an operation).
"""
from __future__ import annotations

import ast
import linecache
from typing import Any

import gast

_LOCATION = ("lineno", "col_offset", "end_lineno", "end_col_offset")
_PLAIN: dict[type, tuple] = {}      # ast class -> (gast class, fields, attributes)
_EMPTY: dict[type, type] = {}       # ast classes without fields (contexts, operators) -> gast class
_SPECIAL: dict[type, Any] = {}      # the classes gast converts by hand (ast3.py's visit_ methods, Python 3.8-3.11)


def parse(text: str) -> gast.Module:
    return to_gast(ast.parse(text))


def to_gast(node: ast.AST) -> Any:
    """gast.ast_to_gast(node), without the visitor."""
    cls = type(node)
    entry = _PLAIN.get(cls)
    if entry is None:
        made = _EMPTY.get(cls)
        if made is not None:
            return made.__new__(made)
        special = _SPECIAL.get(cls)
        if special is not None:
            return special(node)
        made = getattr(gast, cls.__name__, None)
        if made is None:
            return None
        if not cls._fields and not cls._attributes:
            _EMPTY[cls] = made
            return made.__new__(made)
        _PLAIN[cls] = entry = (made, cls._fields, cls._attributes)
    return _plain(node, entry)


def _plain(node: ast.AST, entry: tuple) -> Any:
    made, fields, attributes = entry
    new = made.__new__(made)
    d = new.__dict__
    for field in fields:
        try:
            value = getattr(node, field)
        except AttributeError:
            continue
        if type(value) is list:
            value = [to_gast(v) if isinstance(v, ast.AST) else v for v in value]
        elif isinstance(value, ast.AST):
            value = to_gast(value)
        d[field] = value
    for attr in attributes:
        try:
            d[attr] = getattr(node, attr)
        except AttributeError:
            pass
    return new


def _value(value: Any) -> Any:
    if type(value) is list:
        return [to_gast(v) if isinstance(v, ast.AST) else v for v in value]
    return to_gast(value) if isinstance(value, ast.AST) else value


def _made(cls: type, values: tuple, node: ast.AST) -> Any:
    new = cls.__new__(cls)
    d = new.__dict__
    d.update(zip(cls._fields, values))
    for attr in _LOCATION:
        try:
            d[attr] = getattr(node, attr)
        except AttributeError:
            pass
    return new


def _name(node: ast.Name) -> gast.Name:
    try:        # (the most frequent node: built directly)
        position = (node.lineno, node.col_offset, node.end_lineno, node.end_col_offset)
    except AttributeError:
        return _made(gast.Name, (node.id, to_gast(node.ctx), None, None), node)
    ctx = type(node.ctx)
    made = _EMPTY.get(ctx) or getattr(gast, ctx.__name__)
    new = _GName.__new__(_GName)
    d = new.__dict__
    d["id"] = node.id
    d["ctx"] = made.__new__(made)
    d["annotation"] = None
    d["type_comment"] = None
    d.update(zip(_LOCATION, position))
    return new


_GName = gast.Name


def _arg(node: ast.arg) -> gast.Name:
    return _made(gast.Name, (node.arg, gast.Param(), _value(node.annotation), _value(node.type_comment)), node)


def _handler(node: ast.ExceptHandler) -> gast.ExceptHandler:
    if not node.name:
        return _plain(node, (gast.ExceptHandler, ast.ExceptHandler._fields, ast.ExceptHandler._attributes))
    return _made(gast.ExceptHandler, (_value(node.type), gast.Name(node.name, gast.Store(), None, None),
                                      _value(node.body)), node)


def _function(cls: type) -> Any:
    def convert(node: Any) -> Any:
        return _made(cls, (node.name, _value(node.args), _value(node.body), _value(node.decorator_list),
                           _value(node.returns), _value(node.type_comment), []), node)
    return convert


def _class(node: ast.ClassDef) -> gast.ClassDef:
    return _made(gast.ClassDef, (node.name, _value(node.bases), _value(node.keywords), _value(node.body),
                                 _value(node.decorator_list), []), node)


_SPECIAL.update({ast.Name: _name, ast.arg: _arg, ast.ExceptHandler: _handler, ast.ClassDef: _class,
                 ast.FunctionDef: _function(gast.FunctionDef), ast.AsyncFunctionDef: _function(gast.AsyncFunctionDef)})


def supported() -> bool:
    """The direct converter reproduces gast 0.5-0.7 on Python 3.8-3.11 (3.12 adds type parameters)."""
    import sys
    return (3, 8) <= sys.version_info[:2] < (3, 12) and len(gast.FunctionDef._fields) == 7


if not supported():          # another Python or gast: gast's own converter
    to_gast = gast.ast_to_gast  # noqa: F811


# ---------------------------------------------------------------- walking

# fields that never hold a node a rewrite looks for: contexts, operators, and names, numbers and strings (an
# ExceptHandler's `name` is a gast.Name, so `name` is not among them)
_LEAF_FIELDS = frozenset({"ctx", "op", "ops", "id", "attr", "arg", "type_comment", "kind", "conversion",
                          "is_async", "level", "module", "asname"})
_CHILD_FIELDS: dict[type, tuple] = {}


def child_fields(cls: type) -> tuple:
    """The fields of a node class that may hold nodes (all of them for a class that is not gast's)."""
    fields = _CHILD_FIELDS.get(cls)
    if fields is None:
        own = getattr(gast, cls.__name__, None) is cls
        fields = _CHILD_FIELDS[cls] = tuple(f for f in cls._fields if not own or f not in _LEAF_FIELDS)
    return fields


def walk(root: Any) -> list:
    """The nodes of root's tree in gast.walk's order, less the contexts and operators."""
    out = [root]
    i = 0
    fields_of = _CHILD_FIELDS
    AST = ast.AST
    while i < len(out):
        node = out[i]
        i += 1
        cls = type(node)
        fields = fields_of.get(cls)
        if fields is None:
            fields = child_fields(cls)
        for field in fields:
            value = getattr(node, field, None)
            if type(value) is list:
                out.extend([v for v in value if isinstance(v, AST)])
            elif isinstance(value, AST):
                out.append(value)
    return out


# ---------------------------------------------------------------- where a definition is

_FILES: dict[str, tuple] = {}        # filename -> (the linecache lines it was built from, index)
_KEPT = 32                           # files indexed at most (the oldest is dropped)


def _index(lines: list[str]) -> dict | None:
    """first line (of the decorators, or the def) -> [(name, last line, the def's ast)] for each def in the
    text (found among the statements only: a def is one)."""
    try:
        tree = ast.parse("".join(lines))
    except (SyntaxError, ValueError):
        return None
    index: dict[Any, list] = {}
    stack = [tree.body]
    while stack:
        for node in stack.pop():
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                first = min([node.lineno] + [d.lineno for d in node.decorator_list])
                index.setdefault(first, []).append((node.name, node.end_lineno, node))
            for field in ("body", "orelse", "finalbody", "handlers", "cases"):
                inner = getattr(node, field, None)
                if isinstance(inner, list) and inner:
                    stack.append(inner if isinstance(inner[0], ast.stmt) else
                                 [s for part in inner for s in part.body])     # except handlers, match cases
    return index


def file_lines(filename: str, module_globals: dict | None = None) -> list[str]:
    """The file's lines as inspect reads them: linecache's entry, checked against the file on disk first."""
    linecache.checkcache(filename)
    return linecache.getlines(filename, module_globals)


def definition(filename: str, first_line: int, name: str, module_globals: dict | None = None
               ) -> tuple[list[str], ast.AST] | None:
    """(the lines of the definition of name whose first line is first_line, its ast in the file's
    coordinates), or None when the file's text has no such single definition (then inspect reads it, and
    says why it cannot)."""
    lines = file_lines(filename, module_globals)
    if not lines:
        return None
    cached = _FILES.get(filename)
    if cached is None or cached[0] is not lines:
        if cached is None and len(_FILES) >= _KEPT:
            del _FILES[next(iter(_FILES))]
        cached = _FILES[filename] = (lines, _index(lines))
    index = cached[1]
    found = index.get(first_line) if index is not None else None
    if not found or len(found) != 1 or found[0][0] != name:
        return None
    return lines[first_line - 1:found[0][1]], found[0][2]
