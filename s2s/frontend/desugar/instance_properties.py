"""A property of an object whose class is known when the derivative is made, read or written as the call Python
makes: `layer.effW` as `Layer.effW.fget(layer)`, `o.a = v` as `Layer.a.fset(o, v)`, `o.a += v` as
`Layer.a.fset(o, Layer.a.fget(o) + v)`.

The class is known for an object built in the function (`layer = Layer(W)`, opened by desugar/instances.py) and
for a parameter the function is specialized on by class (`self` in a method of such an object). Its attributes
are followed as the function writes them (s2s/ir/object_state.py); a property's getter computes from them, so it
must run as code s2s reads: the getter (and setter) specialized on the object's class, called with the object
first as a method is (instances.method_call), and inlined by lowering. Read as a plain attribute, the getter ran
when the derivative ran, its result a constant: `np.sum(Layer(W, 0.5).effW ** 2)` had gradient 0 (found by an
outside tester). A descriptor other than a property of the user's functions (`functools.cached_property`, a
library's descriptor) is refused by lowering where it is read or written on such an object.
"""
from __future__ import annotations

import inspect
import types
from typing import Any

import gast

from s2s.frontend import parsing
from s2s.frontend.desugar import helpers, instances
from s2s.frontend.desugar.context import Context, constant, located, map_statements
from s2s.frontend.policy import is_user_function


def applies(ctx: Context) -> bool:
    """An attribute, and an object of a known class: a parameter specialized by class, or one made here."""
    return gast.Attribute in ctx.kinds and (bool(ctx.parsed.facts.classes) or any(
        ctx.static(call.func)[1] is helpers.new_object for call in ctx.calls))


def rewrite(ctx: Context) -> None:
    ctx.node.body = map_statements(ctx.node.body, lambda stmt: _store(ctx, stmt))
    for node in parsing.walk(ctx.node):
        for field in parsing.child_fields(type(node)):
            value = getattr(node, field, None)
            if type(value) is gast.Attribute:
                replaced = _read(ctx, value)
                if replaced is not None:
                    setattr(node, field, replaced)
            elif isinstance(value, list):
                for i, item in enumerate(value):
                    if type(item) is gast.Attribute:
                        replaced = _read(ctx, item)
                        if replaced is not None:
                            value[i] = replaced


def _property(ctx: Context, node: gast.Attribute) -> tuple[type, property] | None:
    """(class, property) where node reads or writes a property of the user's on an object of a known class."""
    if not isinstance(node.value, gast.Name):
        return None
    cls = instances.receiver_class(ctx, node.value)
    if cls is None:
        return None
    found = inspect.getattr_static(cls, node.attr, None)
    if not isinstance(found, property):
        return None
    ctx._depend_on_attribute(cls, node.attr)     # (replaced on the class: the derivative is made again)
    return cls, found


def _accessor(ctx: Context, cls: type, fn: Any, receiver: gast.Name, node: Any) -> gast.expr | None:
    if not isinstance(fn, types.FunctionType) or not is_user_function(fn):
        return None                              # (a library's getter: read as Python reads it)
    shadowed = ctx.parsed.facts.shadowed.get(receiver.id, frozenset())
    return constant(instances.specialized_method(fn, cls, shadowed), node)


def _receiver(node: gast.Attribute) -> gast.Name:
    return gast.Name(id=node.value.id, ctx=gast.Load(), annotation=None, type_comment=None)


def _read(ctx: Context, node: gast.Attribute) -> Any:
    if not isinstance(node.ctx, gast.Load):
        return None
    found = _property(ctx, node)
    if found is None:
        return None
    cls, prop = found
    getter = _accessor(ctx, cls, prop.fget, node.value, node)
    if getter is None:
        return None
    return located(gast.Call(func=getter, args=[_receiver(node)], keywords=[]), node)


def _store(ctx: Context, stmt: Any) -> list | None:
    """`o.a = v` / `o.a += v` on a property a: the setter's call (`o.a` elsewhere in v is read by `_read`)."""
    if type(stmt) is gast.Assign and len(stmt.targets) == 1 and type(stmt.targets[0]) is gast.Attribute:
        target, value = stmt.targets[0], stmt.value
    elif type(stmt) is gast.AugAssign and type(stmt.target) is gast.Attribute:
        target = stmt.target
        read = gast.Attribute(value=_receiver(target), attr=target.attr, ctx=gast.Load())
        value = located(gast.BinOp(left=located(read, target), op=stmt.op, right=stmt.value), stmt)
    else:
        return None
    found = _property(ctx, target)
    if found is None:
        return None
    cls, prop = found
    if prop.fset is None:
        raise ctx.error(f"`{target.attr}` is a property of {cls.__name__} without a setter: Python raises "
                        f"AttributeError here", target, hint="write the attribute the getter reads")
    setter = _accessor(ctx, cls, prop.fset, target.value, target)
    if setter is None:
        return None
    call = located(gast.Call(func=setter, args=[_receiver(target), value], keywords=[]), stmt)
    return [located(gast.Expr(value=call), stmt)]
