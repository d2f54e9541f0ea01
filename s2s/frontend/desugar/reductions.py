"""`max(a, b, c)` as `max(max(a, b), c)`; `max(xs)` and `min(xs)` of one sequence: a loop over its items with the two-argument form, which has a
rule (Python's own order: the first of equal items wins, as `max(best, v)` keeps best on a tie).

    top = max(items)   ->   seq = list(items); best = seq[0]          (a dict's items are its keys)
                            for k in range(1, len(seq)): best = max(best, seq[k])
                            top = best

`sum(items, start)` with a list or tuple written as start (`sum(pairs, [])`, `sum(rows, ())`) concatenates, as
Python runs it: the loop of `+` (whose adjoint on two lists splits by position, s2s/passes/sequences.py); a numeric
sum keeps builtins.sum's rule.

    flat = sum(pairs, [])   ->   seq = list(pairs); total = []
                                 for k in range(0, len(seq)): total = total + seq[k]
"""
from __future__ import annotations

import builtins
from typing import Any

import gast

from s2s.frontend.desugar.context import Context, constant, hoisting, listed, located, name


def applies(ctx: Context) -> bool:
    """A call of max or min with one argument, or with more than two, occurs."""
    def reduction(call: gast.Call) -> bool:
        if _concatenation(call) is not None:
            found, fn = ctx.callee(call)
            if found and fn is builtins.sum:
                return True
        if call.keywords or len(call.args) == 2 or not call.args:
            return False
        found, fn = ctx.callee(call)
        return found and (fn is builtins.max or fn is builtins.min)
    return ctx.any_call(reduction)


def _concatenation(call: gast.Call) -> Any:
    """The start of `sum(items, start)` when it is a list or tuple written out (else None)."""
    if any(isinstance(a, gast.Starred) for a in call.args) or len(call.args) + len(call.keywords) != 2:
        return None
    if len(call.args) == 2:
        start = call.args[1]
    elif len(call.args) == 1 and call.keywords[0].arg == "start":
        start = call.keywords[0].value
    else:
        return None
    return start if isinstance(start, (gast.List, gast.Tuple)) else None


def rewrite(ctx: Context) -> None:
    ctx.node.body = hoisting(ctx.node.body, lambda node, pre: _visit(ctx, node, pre))


def _visit(ctx: Context, node: Any, pre: list) -> Any:
    if isinstance(node, gast.Call) and len(node.args) > 2 and not node.keywords \
            and not any(isinstance(a, gast.Starred) for a in node.args) \
            and (ctx.names(node.func, builtins.max) or ctx.names(node.func, builtins.min)):
        # max(a, b, c) is max(max(a, b), c): Python's order, the first of equal items wins
        fold = node.args[0]
        for arg in node.args[1:]:
            fold = located(gast.Call(func=node.func, args=[fold, arg], keywords=[]), node)
        return fold
    if isinstance(node, gast.Call) and _concatenation(node) is not None and ctx.names(node.func, builtins.sum):
        return fold_loop(ctx, node, node.args[0], None, _concatenation(node), pre, "total")
    if not (isinstance(node, gast.Call) and len(node.args) == 1 and not node.keywords
            and not isinstance(node.args[0], gast.Starred)):
        return node
    fn = builtins.max if ctx.names(node.func, builtins.max) else builtins.min if ctx.names(node.func, builtins.min) \
        else None
    if fn is None:
        return node
    return fold_loop(ctx, node, node.args[0], constant(fn, node), None, pre, "best")


def fold_loop(ctx: Context, node: Any, items: Any, combine: Any, start: Any, pre: list, result: str) -> gast.Name:
    """The statements (appended to pre) of `result = combine(result, item)` over items, from start, or from the
    first item when start is None; the name of the result. (max/min of one sequence, functools.reduce; combine
    None: `result = result + item`, sum's)"""
    seq, acc, k = ctx.fresh("seq"), ctx.fresh(result), ctx.fresh("k")

    def assign(target: str, value: Any) -> gast.Assign:
        return located(gast.Assign(targets=[name(target, node, store=True)], value=value, type_comment=None), node)

    def item(index: Any) -> gast.Subscript:
        return gast.Subscript(value=name(seq, node), slice=index, ctx=gast.Load())
    length = gast.Call(func=constant(builtins.len, node), args=[name(seq, node)], keywords=[])
    step = assign(acc, gast.Call(func=combine, args=[name(acc, node), item(name(k, node))], keywords=[])
                  if combine is not None else located(gast.BinOp(left=name(acc, node), op=gast.Add(),
                                                                 right=item(name(k, node))), node))
    first = 0 if start is not None else 1
    loop = gast.For(target=name(k, node, store=True),
                    iter=gast.Call(func=constant(builtins.range, node), args=[constant(first, node), length],
                                   keywords=[]),
                    body=[step], orelse=[], type_comment=None)
    pre += [assign(seq, listed(ctx, items)), assign(acc, start if start is not None else item(constant(0, node))),
            located(loop, node)]
    return name(acc, node)
