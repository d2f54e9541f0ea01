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
`default=` is given. `sorted(xs, key=lambda i: v[i])` whose key reads the function's own variables (a lambda, or a nested
`def` passed by its name, that s2s cannot hand to sorted's rule as a constant) is the same: the keys computed by a loop, the positions that sort them
found as Python sorts (stable, `reverse=` kept), the items read at those positions.

Runs before `closures`, which lifts the key's lambda (it may read the function's variables, `key=lambda i: v[i]`),
and before `comprehensions`, which makes a generator argument the list it is consumed as.
"""
from __future__ import annotations

import builtins
from typing import Any

import gast

from s2s.frontend.desugar import helpers
from s2s.frontend.desugar.context import Context, constant, hoisting, listed, located, name


def applies(ctx: Context) -> bool:
    """A call of max or min with a key= occurs, or of sorted with a key reading the function's variables."""
    return ctx.any_call(lambda call: _extremum(ctx, call) is not None or _sorted_by_local_key(ctx, call))


def rewrite(ctx: Context) -> None:
    def visit(node: Any, pre: list) -> Any:
        return _sorted(ctx, node, pre) if _sorted_by_local_key(ctx, node) else _visit(ctx, node, pre)
    ctx.node.body = hoisting(ctx.node.body, visit)


def _sorted_by_local_key(ctx: Context, call: Any) -> bool:
    """`sorted(xs, key=lambda ...)` (and at most reverse=) whose lambda reads a variable of the function."""
    if not (isinstance(call, gast.Call) and len(call.args) == 1 and not isinstance(call.args[0], gast.Starred)
            and {k.arg for k in call.keywords} in ({"key"}, {"key", "reverse"})
            and ctx.names(call.func, builtins.sorted)):
        return False
    key = next(k.value for k in call.keywords if k.arg == "key")
    if isinstance(key, gast.Name):
        key = _nested_def(ctx, key.id)
    if not isinstance(key, (gast.Lambda, gast.FunctionDef)):
        return False
    params = {a.id for a in key.args.args}
    body = key.body if isinstance(key.body, list) else [key.body]
    return any(isinstance(n, gast.Name) and n.id in ctx.local_names() and n.id not in params
               for stmt in body for n in gast.walk(stmt))


def _nested_def(ctx: Context, id_: str) -> Any:
    """The nested `def id_(...)` of the function, when it is the one binding of id_ (`key=by_distance`), else None."""
    found = [n for n in ctx.node.body if isinstance(n, gast.FunctionDef) and n.name == id_]
    if len(found) != 1 or any(isinstance(n, gast.Name) and n.id == id_ and isinstance(n.ctx, gast.Store)
                              for n in gast.walk(ctx.node)):
        return None
    return found[0]


def _sorted(ctx: Context, node: gast.Call, pre: list) -> Any:
    keywords = {k.arg: k.value for k in node.keywords}
    key_fn, seq, keys, item, order, i, out = (ctx.fresh(base) for base in
                                              ("key_fn", "seq", "keys", "item", "order", "i", "ordered"))

    def assign(target: str, value: Any) -> gast.Assign:
        return located(gast.Assign(targets=[name(target, node, store=True)], value=value, type_comment=None), node)

    def appending(to: str, value: Any) -> gast.Expr:
        return gast.Expr(value=gast.Call(func=gast.Attribute(value=name(to, node), attr="append", ctx=gast.Load()),
                                         args=[value], keywords=[]))

    def loop(target: str, over: str, body: list) -> gast.For:
        return located(gast.For(target=name(target, node, store=True), iter=name(over, node), body=body, orelse=[],
                                type_comment=None), node)
    empty = gast.List(elts=[], ctx=gast.Load())
    reverse = keywords.get("reverse", constant(False, node))
    positions = gast.Call(func=constant(helpers.sorted_positions, node), args=[name(keys, node), reverse], keywords=[])
    key = keywords["key"]
    named = isinstance(key, gast.Name)      # a nested def: called by its name (the call closures lifts)
    pre += ([] if named else [assign(key_fn, key)]) + [
            assign(seq, listed(ctx, node.args[0])), assign(keys, empty),
            loop(item, seq, [appending(keys, gast.Call(func=name(key.id if named else key_fn, node),
                                                       args=[name(item, node)], keywords=[]))]),
            assign(order, positions), assign(out, gast.List(elts=[], ctx=gast.Load())),
            loop(i, order, [appending(out, gast.Subscript(value=name(seq, node), slice=name(i, node),
                                                          ctx=gast.Load()))])]
    return name(out, node)


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
    items = listed(ctx, node.args[0]) if len(node.args) == 1 else \
        located(gast.Tuple(elts=list(node.args), ctx=gast.Load()), node)
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
