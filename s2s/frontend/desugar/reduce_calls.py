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

import functools
from typing import Any

import gast

from s2s.frontend.desugar.context import Context, hoisting
from s2s.frontend.desugar.reductions import fold_loop


def applies(ctx: Context) -> bool:
    return ctx.calls_to(functools.reduce)


def rewrite(ctx: Context) -> None:
    ctx.node.body = hoisting(ctx.node.body, lambda node, pre: _visit(ctx, node, pre))


def _visit(ctx: Context, node: Any, pre: list) -> Any:
    if not (isinstance(node, gast.Call) and ctx.names(node.func, functools.reduce) and len(node.args) in (2, 3)
            and not node.keywords and not any(isinstance(a, gast.Starred) for a in node.args)
            and isinstance(node.args[0], (gast.Name, gast.Attribute, gast.Constant, gast.Lambda))):
        return node
    start = node.args[2] if len(node.args) == 3 else None
    return fold_loop(ctx, node, node.args[1], node.args[0], start, pre, "acc")
