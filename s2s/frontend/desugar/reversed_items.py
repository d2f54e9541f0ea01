"""`reversed()` of a list, a tuple or an array: the same items read from a slice that counts down.

    for c in reversed(coeffs):      ->      for c in coeffs[::-1]:
    list(reversed(xs))              ->      list(xs[::-1])          (also in tuple, enumerate, zip, sum, max, min, sorted)

`reversed(range(...))` is left to lowering, which counts the loop down. Runs after the comprehensions are
loops, so `[f(c) for c in reversed(xs)]` is covered. A dict has no slice: `reversed(d)` is refused where it is.
"""
from __future__ import annotations

import builtins
from typing import Any

import gast

from s2s.frontend.desugar.context import Context, located

_TAKING_ITEMS = (builtins.list, builtins.tuple, builtins.enumerate, builtins.zip, builtins.sum, builtins.max, builtins.min,
                 builtins.sorted)


def applies(ctx: Context) -> bool:
    return "reversed" in ctx.used


def rewrite(ctx: Context) -> None:
    if "reversed" not in ctx.used:
        return
    for sub in gast.walk(ctx.node):
        if isinstance(sub, gast.For):
            sub.iter = _sliced(ctx, sub.iter)
        elif isinstance(sub, gast.Call) and any(ctx.names(sub.func, f) for f in _TAKING_ITEMS):
            sub.args = [_sliced(ctx, a) for a in sub.args]


def _sliced(ctx: Context, node: Any) -> Any:
    """reversed(X) as X[::-1], unless X is range(...) (or node is not a call of reversed)."""
    if not (isinstance(node, gast.Call) and len(node.args) == 1 and not node.keywords
            and not isinstance(node.args[0], gast.Starred) and ctx.names(node.func, builtins.reversed)):
        return node
    inner = node.args[0]
    if isinstance(inner, gast.Call) and ctx.names(inner.func, builtins.range):
        return node
    step = located(gast.UnaryOp(op=gast.USub(), operand=gast.Constant(value=1, kind=None)), node)
    index = located(gast.Slice(lower=None, upper=None, step=step), node)
    return located(gast.Subscript(value=inner, slice=index, ctx=gast.Load()), node)
