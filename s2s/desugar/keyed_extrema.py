"""`max(items, key=f)` and `min(items, key=f)`: the loop Python runs, the key called once per item in order, the
first item with the greatest (least) key kept, so the derivative follows the item selected (its payload too):

    best = max(pairs, key=lambda p: p[0])   ->   seq = pairs; key_fn = lambda p: p[0]
                                                  best_1 = seq[0]; best_key = key_fn(best_1)
                                                  for k in range(1, len(seq)):
                                                      item = seq[k]; item_key = key_fn(item)
                                                      if item_key > best_key:      (`<` for min)
                                                          best_1 = item; best_key = item_key
                                                  best = best_1

`max(a, b, key=f)` runs over the tuple (a, b). An empty sequence raises ValueError as Python's max does, unless
`default=` is given. Runs before `closures`, which lifts the key's lambda (it may read the function's variables,
`key=lambda i: v[i]`), and before `comprehensions`, which makes a generator argument the list it is consumed as.
"""
from __future__ import annotations

import builtins
from typing import Any

import gast

from . import helpers
from .context import Context, constant, hoisting, located, name


def applies(ctx: Context) -> bool:
    """A call of max or min with a key= occurs."""
    return ctx.any_call(lambda call: _extremum(ctx, call) is not None)


def rewrite(ctx: Context) -> None:
    ctx.node.body = hoisting(ctx.node.body, lambda node, pre: _visit(ctx, node, pre))


def _extremum(ctx: Context, call: gast.Call) -> Any:
    """builtins.max or builtins.min when call is one of them given key= (and at most default=), else None."""
    names = [k.arg for k in call.keywords]
    if "key" not in names or not set(names) <= {"key", "default"} or not call.args \
            or any(isinstance(a, gast.Starred) for a in call.args) or ("default" in names and len(call.args) > 1):
        return None
    key = next(k.value for k in call.keywords if k.arg == "key")
    if not isinstance(key, (gast.Lambda, gast.Name, gast.Attribute)):
        return None
    found, fn = ctx.static(call.func)
    return fn if found and (fn is builtins.max or fn is builtins.min) else None


def _visit(ctx: Context, node: Any, pre: list) -> Any:
    fn = _extremum(ctx, node) if isinstance(node, gast.Call) else None
    if fn is None:
        return node
    keywords = {k.arg: k.value for k in node.keywords}
    seq, best, best_key, k, item, item_key = (ctx.fresh(base) for base in
                                             ("seq", "best", "best_key", "k", "item", "item_key"))

    def assign(target: str, value: Any) -> gast.Assign:
        return located(gast.Assign(targets=[name(target, node, store=True)], value=value, type_comment=None), node)

    def call(func: Any, *args: Any) -> gast.Call:
        return located(gast.Call(func=func, args=list(args), keywords=[]), node)

    def read(id_: str) -> gast.Name:
        return name(id_, node)
    key = keywords["key"]
    if isinstance(key, gast.Lambda):             # evaluated once, as Python evaluates the argument
        key_fn = ctx.fresh("key_fn")
        pre.append(assign(key_fn, key))
        key = read(key_fn)
    items = node.args[0] if len(node.args) == 1 else located(gast.Tuple(elts=list(node.args), ctx=gast.Load()), node)
    pre.append(assign(seq, items))
    length = call(constant(builtins.len, node), read(seq))
    first = [assign(best, gast.Subscript(value=read(seq), slice=constant(0, node), ctx=gast.Load())),
             assign(best_key, call(key, read(best)))]
    better = gast.Compare(left=read(item_key), ops=[gast.Gt() if fn is builtins.max else gast.Lt()],
                          comparators=[read(best_key)])
    step = [assign(item, gast.Subscript(value=read(seq), slice=read(k), ctx=gast.Load())),
            assign(item_key, call(key, read(item))),
            located(gast.If(test=better, body=[assign(best, read(item)), assign(best_key, read(item_key))],
                            orelse=[]), node)]
    loop = located(gast.For(target=name(k, node, store=True),
                            iter=call(constant(builtins.range, node), constant(1, node), length),
                            body=step, orelse=[], type_comment=None), node)
    empty = gast.Compare(left=length, ops=[gast.Eq()], comparators=[constant(0, node)])
    if "default" in keywords:
        pre.append(located(gast.If(test=empty, body=[assign(best, keywords["default"])], orelse=first + [loop]),
                           node))
    else:
        message = f"{fn.__name__}() iterable argument is empty"
        fail = call(constant(helpers.raise_exception, node), call(constant(ValueError, node), constant(message, node)))
        pre += [located(gast.If(test=empty, body=[located(gast.Expr(value=fail), node)], orelse=[]), node)] + first \
            + [loop]
    return read(best)
