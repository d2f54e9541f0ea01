"""Property getters that write: which of an object's properties run code with a side effect when read.

Below the desugaring (desugar/context.py never runs such a getter when it reads what an expression names;
desugar/properties.py makes a call of it, performed as the function's own side effect)."""
from __future__ import annotations

import ast
import inspect
import textwrap
import types
from typing import Any

from s2s.frontend.policy import is_user_function

_EFFECTFUL: dict[types.CodeType, bool] = {}
_MUTATORS = {"append", "extend", "insert", "pop", "remove", "clear", "update", "setdefault", "add", "discard",
             "popitem", "sort", "reverse"}


def effectful_property(obj: Any, name: str) -> property | None:
    """The property `name` of obj's class when its getter is Python code that writes into an object."""
    try:
        prop = inspect.getattr_static(type(obj), name, None)
    except Exception:           # noqa: BLE001
        return None
    if not isinstance(prop, property) or not isinstance(prop.fget, types.FunctionType) \
            or not is_user_function(prop.fget):
        return None
    return prop if writes(prop.fget) else None


def writes(fn: types.FunctionType) -> bool:
    """Whether fn's source writes into an attribute or item, or calls a method that changes a container."""
    code = fn.__code__
    found = _EFFECTFUL.get(code)
    if found is None:
        try:
            tree = ast.parse(textwrap.dedent(inspect.getsource(fn)))
        except (OSError, TypeError, SyntaxError):
            found = True            # unread: not run when the derivative is made
        else:
            found = any(_writes(n) for n in ast.walk(tree))
        _EFFECTFUL[code] = found
    return found


def _writes(node: ast.AST) -> bool:
    if isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Delete)):
        targets = node.targets if isinstance(node, (ast.Assign, ast.Delete)) else [node.target]
        return any(isinstance(t, (ast.Attribute, ast.Subscript)) or isinstance(t, (ast.Tuple, ast.List)) and any(
            isinstance(e, (ast.Attribute, ast.Subscript)) for e in t.elts) for t in targets)
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in _MUTATORS:
        return True
    return isinstance(node, (ast.Global, ast.Nonlocal))
