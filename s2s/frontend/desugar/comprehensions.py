"""List comprehensions and generator expressions become the loops they are, computed just before the
statement that uses them (a generator given to sum, min, max, any, all, tuple, list, np.stack... is
consumed whole there, so a list is the same):

    return sum(w * x for w, x in zip(ws, xs) if w > 0)
->
    items = []
    for w_1, x_1 in zip(ws, xs):
        if w_1 > 0:
            items.append(w_1 * x_1)
    return sum(items)

The comprehension's variables are renamed, as they are local to it in Python. A comprehension inside a
condition or a short-circuit operand (evaluated only sometimes) is left for the fence to refuse.
"""
from __future__ import annotations

from typing import Any

import gast

from s2s.frontend.desugar.context import Context, hoisting, located, name


def applies(ctx: Context) -> bool:
    return not ctx.kinds.isdisjoint((gast.ListComp, gast.GeneratorExp, gast.DictComp))


def rewrite(ctx: Context) -> None:
    ctx.node.body = hoisting(ctx.node.body, lambda node, pre: _visit(ctx, node, pre))


def _visit(ctx: Context, node: Any, pre: list) -> Any:
    if isinstance(node, (gast.ListComp, gast.GeneratorExp)):
        return comprehension(ctx, node, pre)
    if isinstance(node, gast.DictComp):
        return comprehension(ctx, node, pre, into_dict=True)
    return node


def comprehension(ctx: Context, node: Any, pre: list, into_dict: bool = False) -> gast.Name:
    result = ctx.fresh("items" if not into_dict else "table")
    ctx.parsed.transient.add(result)             # read once, where the comprehension was
    renames: dict[str, str] = {}
    generators = []
    for gen in node.generators:
        if gen.is_async:
            return node
        iterable = _renamed(gen.iter, renames)        # the first is read in the enclosing scope
        for target in gast.walk(gen.target):
            if isinstance(target, gast.Name):
                renames[target.id] = ctx.fresh(target.id)
        generators.append((_renamed(gen.target, renames), iterable, [_renamed(c, renames) for c in gen.ifs]))
    if into_dict:
        store = gast.Subscript(value=name(result, node), slice=_renamed(node.key, renames), ctx=gast.Store())
        inner: Any = gast.Assign(targets=[store], value=_renamed(node.value, renames), type_comment=None)
    else:
        append = gast.Attribute(value=name(result, node), attr="append", ctx=gast.Load())
        inner = gast.Expr(value=gast.Call(func=append, args=[_renamed(node.elt, renames)], keywords=[]))
    body = [located(inner, node)]
    for target, iterable, conditions in reversed(generators):
        for condition in reversed(conditions):
            body = [located(gast.If(test=condition, body=body, orelse=[]), condition)]
        body = [located(gast.For(target=target, iter=iterable, body=body, orelse=[], type_comment=None), node)]
    empty = gast.Dict(keys=[], values=[]) if into_dict else gast.List(elts=[], ctx=gast.Load())
    pre.append(located(gast.Assign(targets=[name(result, node, store=True)], value=empty, type_comment=None), node))
    pre.extend(body)
    if len(generators) == 1 and not generators[0][2] and not into_dict:
        # as long as what it iterates over (`[f(a) for a in args]`: starred.py knows `*items`' length from it)
        ctx.same_length[result] = generators[0][1]
    return name(result, node)


def _renamed(node: Any, renames: dict[str, str]) -> Any:
    if not renames:
        return node

    class Rename(gast.NodeTransformer):
        def visit_Name(self, sub: gast.Name) -> Any:
            if sub.id in renames:
                sub.id = renames[sub.id]
            return sub
    return Rename().visit(node)
