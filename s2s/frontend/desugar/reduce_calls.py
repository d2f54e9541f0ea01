"""`functools.reduce(f, items[, start])` as the loop it runs, with `f` called at each step:

    p = reduce(f, items, start)   ->   seq = list(items); acc = start
                                       for k in range(0, len(seq)): acc = f(acc, seq[k])
                                       p = acc
    p = reduce(f, items)          ->   seq = list(items); acc = seq[0]
                                       for k in range(1, len(seq)): acc = f(acc, seq[k])

Runs before `closures`, so that a lambda reading the function's variables (`reduce(lambda acc, c: acc * x + c,
coefficients, 0.0)`) becomes a lambda called in the loop, which closures lifts as any called lambda. `f` must be a
name, an attribute or a lambda (evaluated at each step without effect); anything else is left to lowering. Python's
order: f, then items, then start. (An empty sequence without start raises IndexError here, TypeError in Python.)
"""
from __future__ import annotations

import builtins
import functools
from typing import Any

import gast

from s2s.frontend.desugar.context import Context, constant, hoisting, listed, located, name


def applies(ctx: Context) -> bool:
    return ctx.any_call(lambda call: ctx.names(call.func, functools.reduce))


def rewrite(ctx: Context) -> None:
    ctx.node.body = hoisting(ctx.node.body, lambda node, pre: _visit(ctx, node, pre))


def _visit(ctx: Context, node: Any, pre: list) -> Any:
    if not (isinstance(node, gast.Call) and ctx.names(node.func, functools.reduce) and len(node.args) in (2, 3)
            and not node.keywords and not any(isinstance(a, gast.Starred) for a in node.args)
            and isinstance(node.args[0], (gast.Name, gast.Attribute, gast.Constant, gast.Lambda))):
        return node
    combine, items = node.args[0], node.args[1]
    start = node.args[2] if len(node.args) == 3 else None
    seq, acc, k = ctx.fresh("seq"), ctx.fresh("acc"), ctx.fresh("k")

    def assign(target: str, value: Any) -> gast.Assign:
        return located(gast.Assign(targets=[name(target, node, store=True)], value=value, type_comment=None), node)

    def item(index: Any) -> gast.Subscript:
        return gast.Subscript(value=name(seq, node), slice=index, ctx=gast.Load())
    length = gast.Call(func=constant(builtins.len, node), args=[name(seq, node)], keywords=[])
    step = assign(acc, gast.Call(func=combine, args=[name(acc, node), item(name(k, node))], keywords=[]))
    first = 0 if start is not None else 1
    loop = gast.For(target=name(k, node, store=True),
                    iter=gast.Call(func=constant(builtins.range, node), args=[constant(first, node), length],
                                   keywords=[]),
                    body=[step], orelse=[], type_comment=None)
    pre += [assign(seq, listed(ctx, items)), assign(acc, start if start is not None else item(constant(0, node))),
            located(loop, node)]
    return name(acc, node)
