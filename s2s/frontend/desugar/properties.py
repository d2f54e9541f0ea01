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

import types
from typing import Any

import gast

from s2s.frontend import parsing
from s2s.frontend.desugar.context import Context, constant, located
from s2s.frontend.getters import effectful_property

# the code objects of the getters this rewrite made calls of (lowering calls one as it is when it cannot read it)
GETTERS: set = set()



def applies(ctx: Context) -> bool:
    return gast.Attribute in ctx.kinds


def rewrite(ctx: Context) -> None:
    Attribute = gast.Attribute
    for node in parsing.walk(ctx.node):
        for field in parsing.child_fields(type(node)):
            value = getattr(node, field, None)
            if type(value) is Attribute:
                replaced = _getter_call(ctx, value)
                if replaced is not None:
                    setattr(node, field, replaced)
            elif isinstance(value, list):
                for i, item in enumerate(value):
                    if type(item) is Attribute:
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
