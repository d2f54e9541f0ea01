"""Dicts of functions known when the derivative is made (`LOSSES = {"mse": ..., "huber": ...}`, `self.fns`):

    for name, fn in LOSSES.items():     ->   name = "mse"; t = t + LOSSES["mse"](x)      (one copy of the body per
        t = t + fn(x)                        name = "huber"; t = t + LOSSES["huber"](x)    key, in the dict's order)
    (also `for fn in LOSSES.values()`, `for name in LOSSES` and `.keys()`)

    y = LOSSES[loss](x)                 ->   key = loss
    (the key known only when it runs)        if key == "mse": y = LOSSES["mse"](x)
                                             elif key == "huber": y = LOSSES["huber"](x)
                                             else: raise KeyError(key)

Each `LOSSES["mse"]` is then a function read from a dict by a known key (Context.static): named statically and
watched, as the dict's keys are (`KeysOf`): a function replaced, or a key added or removed, makes the derivative
anew. Keys must be strings or integers; a loop with `break` or `continue`, or whose variables its body
rebinds, is left as it is. Runs after `comprehensions` (`sum(fn(x) for fn in LOSSES.values())` is a loop then);
`containers` leaves dicts of functions to it.
"""
from __future__ import annotations

from typing import Any

import gast

from s2s.frontend.desugar import helpers
from s2s.frontend.desugar.context import Context, constant, hoisting, located, map_statements, name
from s2s.frontend.tree import ItemOf, clone_tree


class KeysOf:
    """The keys of a dict, watched like a dict's item: `get("keys")` is the tuple of keys seen when the derivative
    was made (the same object) while the dict still has exactly those keys, and `default` once it has others."""

    def __init__(self, table: dict):
        self.table = table
        self.keys = tuple(table)

    def get(self, name: str, default: Any = None) -> Any:
        return self.keys if tuple(self.table) == self.keys else default

    def __getitem__(self, name: str) -> Any:
        """(as the dispatcher's compiled guard reads a watched dict: KeyError once the keys changed)"""
        if tuple(self.table) != self.keys:
            raise KeyError(name)
        return self.keys

    def __contains__(self, name: str) -> bool:
        return True


def _known_table(ctx: Context, node: Any) -> dict | None:
    """The dict of functions node names now (keys strings or integers, values callables), else None."""
    if not isinstance(node, (gast.Name, gast.Attribute)):
        return None
    found, table = ctx.static(node)
    if not (found and type(table) is dict and table and all(type(k) in (str, int) for k in table)
            and all(callable(v) and not isinstance(v, type) for v in table.values())):
        return None
    return table


def is_table(ctx: Context, node: Any) -> bool:
    """Whether node names a dict of functions now (its loops are this rewrite's)."""
    return _known_table(ctx, node) is not None


def _table(ctx: Context, node: Any) -> dict | None:
    """_known_table(ctx, node), its keys watched from now on."""
    table = _known_table(ctx, node)
    if table is None:
        return None
    dependency = (id(table), "keys")
    if dependency not in ctx.parsed.attributes:
        watched = KeysOf(table)
        ctx.parsed.attributes[dependency] = (ItemOf(watched), "keys", watched.keys)    # type: ignore[arg-type]
    return table


def _loop_parts(ctx: Context, stmt: gast.For) -> tuple | None:
    """(the dict's node, the dict, the key's target name or None, the function's target name or None)."""
    it, target = stmt.iter, stmt.target
    method = it.func.attr if isinstance(it, gast.Call) and isinstance(it.func, gast.Attribute) and not it.args \
        and not it.keywords else None
    source = it.func.value if method in ("items", "values", "keys") else it
    if method == "items":
        if not (isinstance(target, gast.Tuple) and len(target.elts) == 2
                and all(isinstance(e, gast.Name) for e in target.elts)):
            return None
        key_name, fn_name = target.elts[0].id, target.elts[1].id
    elif isinstance(target, gast.Name):
        key_name, fn_name = (None, target.id) if method == "values" else (target.id, None)
    else:
        return None
    if method is None and not isinstance(it, (gast.Name, gast.Attribute)):
        return None
    table = _table(ctx, source)
    return None if table is None else (source, table, key_name, fn_name)


def _substitute(node: Any, values: dict[str, Any]) -> Any:
    class Substitute(gast.NodeTransformer):
        def visit_Name(self, sub: gast.Name) -> Any:
            if sub.id in values and isinstance(sub.ctx, gast.Load):
                return gast.copy_location(clone_tree(values[sub.id]), sub)
            return sub
    return Substitute().visit(node)


def _unrolled(ctx: Context, stmt: Any) -> list | None:
    if not isinstance(stmt, gast.For) or stmt.orelse:
        return None
    parts = _loop_parts(ctx, stmt)
    if parts is None:
        return None
    source, table, key_name, fn_name = parts
    bound = {n for n in (key_name, fn_name) if n is not None}
    if any(isinstance(n, (gast.Break, gast.Continue)) or isinstance(n, gast.Name) and n.id in bound
           and not isinstance(n.ctx, gast.Load) for s in stmt.body for n in gast.walk(s)):
        return None
    out: list = []
    values: dict = {}
    for key in table:
        values = {}
        if key_name is not None:
            values[key_name] = constant(key, stmt)
        if fn_name is not None:
            values[fn_name] = located(gast.Subscript(value=clone_tree(source), slice=constant(key, stmt),
                                                     ctx=gast.Load()), stmt)
        out += [_substitute(s, values) for s in clone_tree(stmt.body)]
    for target, value in values.items():             # the loop's variables after it, as Python leaves them
        out.append(located(gast.Assign(targets=[name(target, stmt, store=True)], value=value, type_comment=None),
                           stmt))
    return out


def _dispatch(ctx: Context, node: Any, pre: list) -> Any:
    """`D[key](args)` with key known only when it runs: a chain of ifs over D's keys (see the module's doc)."""
    if not (isinstance(node, gast.Call) and isinstance(node.func, gast.Subscript)
            and not isinstance(node.func.slice, gast.Slice)):
        return node

    def assign(target: str, value: Any) -> gast.Assign:
        return located(gast.Assign(targets=[name(target, node, store=True)], value=value, type_comment=None), node)
    known, value = ctx.static(node.func.slice)
    if known:           # a key known now (a literal, a flag argument): absent, Python's KeyError where it runs
        table = _known_table(ctx, node.func.value) if isinstance(value, (str, int)) else None
        if table is None or value in table:
            return node
        _table(ctx, node.func.value)                    # (a key added later makes the derivative anew)
        result = ctx.fresh("called")
        pre.append(assign(result, gast.Call(func=constant(helpers.raise_exception, node), args=[gast.Call(
            func=constant(KeyError, node), args=[constant(value, node)], keywords=[])], keywords=[])))
        return name(result, node)
    table = _table(ctx, node.func.value)
    if table is None:
        return node
    key, result = ctx.fresh("key"), ctx.fresh("called")
    missing = gast.Call(func=constant(helpers.raise_exception, node),
                        args=[gast.Call(func=constant(KeyError, node), args=[name(key, node)], keywords=[])],
                        keywords=[])
    chain: list = [assign(result, missing)]           # (raises: `result` is bound on every path for lowering)
    for k in reversed(list(table)):
        item = gast.Subscript(value=clone_tree(node.func.value), slice=constant(k, node), ctx=gast.Load())
        call = gast.Call(func=item, args=clone_tree(node.args), keywords=clone_tree(node.keywords))
        test = gast.Compare(left=name(key, node), ops=[gast.Eq()], comparators=[constant(k, node)])
        chain = [located(gast.If(test=test, body=[assign(result, call)], orelse=chain), node)]
    pre += [assign(key, node.func.slice)] + chain
    return name(result, node)


def applies(ctx: Context) -> bool:
    """A loop over a dict's items, values or keys, or over a dict of functions, or a call of an item, occurs."""
    def over_table(loop: Any) -> bool:
        it = loop.iter
        return isinstance(it, gast.Call) and isinstance(it.func, gast.Attribute) and \
            it.func.attr in ("items", "values", "keys") or _known_table(ctx, it) is not None
    return any(isinstance(loop, gast.For) and over_table(loop) for loop in ctx.loops) or ctx.any_call(
        lambda call: isinstance(call.func, gast.Subscript))


def rewrite(ctx: Context) -> None:
    ctx.node.body = map_statements(ctx.node.body, lambda stmt: _unrolled(ctx, stmt))
    ctx.node.body = hoisting(ctx.node.body, lambda node, pre: _dispatch(ctx, node, pre))

