"""A property with a side effect, read on an object known when the derivative is made, runs as often as in Python.

`self.factor` where `factor` is a property of `self`'s class whose getter writes into an object (`self.reads += 1`,
`self.cache.append(...)`) is rewritten as a call of the getter on the object (`Counted.factor.fget(self)`), which
the `objects` rewrite then reads and lowering inlines: its writes are the function's own side effects, performed
once per call of the derivative (s2s/ir/object_state.py) and never run by s2s itself when it makes the derivative.

A property whose getter writes nothing is left alone: it is read when the derivative runs, and may be read when the
derivative is made (`for layer in self.layers`: desugar/context.py `static`), which no one can observe. A getter s2s
cannot read is called as Python calls it (lowering's fallback for such getters: `GETTERS`).
"""
from __future__ import annotations

import ast
import inspect
import textwrap
import types
from typing import Any

import gast

from s2s.frontend.desugar.context import Context, constant, located
from s2s.frontend.policy import is_user_function

# the code objects of the getters this rewrite made calls of (lowering calls one as it is when it cannot read it)
GETTERS: set = set()

_EFFECTFUL: dict[types.CodeType, bool] = {}
_MUTATORS = {"append", "extend", "insert", "pop", "remove", "clear", "update", "setdefault", "add", "discard",
             "popitem", "sort", "reverse"}


def applies(ctx: Context) -> bool:
    return gast.Attribute in ctx.kinds


def rewrite(ctx: Context) -> None:
    for node in list(gast.walk(ctx.node)):
        for field, value in gast.iter_fields(node):
            if isinstance(value, gast.Attribute):
                replaced = _getter_call(ctx, value)
                if replaced is not None:
                    setattr(node, field, replaced)
            elif isinstance(value, list):
                for i, item in enumerate(value):
                    if isinstance(item, gast.Attribute):
                        replaced = _getter_call(ctx, item)
                        if replaced is not None:
                            value[i] = replaced


def _getter_call(ctx: Context, node: gast.Attribute) -> Any:
    if not isinstance(node.ctx, gast.Load):
        return None
    found, obj = ctx.static(node.value)
    if not found or isinstance(obj, (type, types.ModuleType)):
        return None
    prop = effectful_property(obj, node.attr)
    if prop is None:
        return None
    GETTERS.add(prop.fget.__code__)
    call = gast.Call(func=constant(types.MethodType(prop.fget, obj), node), args=[], keywords=[])
    return located(call, node)


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
