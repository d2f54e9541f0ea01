"""Methods of dicts and lists that lowering does not know, as the forms it does:

    for k, v in d.items():   ->  for k in keys_of(d): v = d[k]
    for v in d.values():     ->  for key in keys_of(d): v = d[key]
    d.values(), d.items()    ->  [d[key] for key in keys_of(d)], [(key, d[key]) for key in keys_of(d)]
    d.keys()                 ->  keys_of(d)   (a list of the keys, which carry no derivative)
    d.get(k, default)        ->  d[k] if k in d else default
    xs.extend(ys)            ->  for item in ys: xs.append(item)
    xs.insert(i, v)          ->  xs = list_insert(xs, i, v)   (refused by the transform when v is active)
    xs.reverse()             ->  xs = xs[::-1]   (a list the function made and reads only by name: no other name holds it)
"""
from __future__ import annotations

from typing import Any

import gast

from s2s.frontend.desugar import function_tables, helpers
from s2s.frontend.desugar.context import Context, constant, located, map_statements, name

_METHODS = frozenset({"get", "keys", "values", "items", "extend", "insert", "reverse"})


def applies(ctx: Context) -> bool:
    return not ctx.attributes.isdisjoint(_METHODS)


def _dict_or_unknown(ctx: Context, node: Any) -> bool:
    """Whether node is not known now, or is a dict (a global configuration dict, read when the code runs) that is
    not a dict of functions (`function_tables` unrolls the loops over those)."""
    known, obj = ctx.static(node)
    return not known or isinstance(obj, dict) and not function_tables.is_table(ctx, node)


def rewrite(ctx: Context) -> None:
    ctx.node.body = map_statements(ctx.node.body, lambda stmt: _statement(ctx, stmt))

    class Get(gast.NodeTransformer):
        def visit_Call(self, node: gast.Call) -> Any:
            self.generic_visit(node)
            func = node.func
            if isinstance(func, gast.Attribute) and func.attr == "get" and isinstance(func.value, gast.Name) \
                    and 1 <= len(node.args) <= 2 and not node.keywords and _dict_or_unknown(ctx, func.value):
                key = node.args[0]
                default = node.args[1] if len(node.args) == 2 else constant(None, node)
                test = gast.Compare(left=key, ops=[gast.In()], comparators=[name(func.value.id, func)])
                item = gast.Subscript(value=name(func.value.id, func), slice=key, ctx=gast.Load())
                return located(gast.IfExp(test=test, body=item, orelse=default), node)
            if isinstance(func, gast.Attribute) and func.attr == "keys" and not node.args \
                    and _dict_or_unknown(ctx, func.value):
                return located(gast.Call(func=constant(helpers.keys_of, func), args=[func.value], keywords=[]), node)
            if isinstance(func, gast.Attribute) and func.attr in ("values", "items") and not node.args \
                    and isinstance(func.value, gast.Name) and _dict_or_unknown(ctx, func.value):
                key = ctx.fresh("key")        # a list of the values (or pairs), as a comprehension
                item = gast.Subscript(value=name(func.value.id, func), slice=name(key, node), ctx=gast.Load())
                elt = item if func.attr == "values" else gast.Tuple(elts=[name(key, node), item], ctx=gast.Load())
                keys = gast.Call(func=constant(helpers.keys_of, func), args=[name(func.value.id, func)], keywords=[])
                loop = gast.comprehension(target=name(key, node, store=True), iter=keys, ifs=[], is_async=0)
                return located(gast.ListComp(elt=elt, generators=[loop]), node)
            return node
    ctx.node.body = [Get().visit(stmt) for stmt in ctx.node.body]


def _dict_loop(ctx: Context, stmt: gast.For) -> list | None:
    it = stmt.iter
    if not (isinstance(it, gast.Call) and isinstance(it.func, gast.Attribute) and not it.args
            and it.func.attr in ("items", "values") and isinstance(it.func.value, gast.Name)):
        return None
    table = it.func.value
    if it.func.attr == "items":
        if not (isinstance(stmt.target, gast.Tuple) and len(stmt.target.elts) == 2):
            return None
        key_target, value_target = stmt.target.elts
    else:
        key_target, value_target = name(ctx.fresh("key"), stmt, store=True), stmt.target
    if not isinstance(key_target, gast.Name) or function_tables.is_table(ctx, table):
        return None
    read = gast.Subscript(value=name(table.id, table), slice=name(key_target.id, key_target), ctx=gast.Load())
    bind = located(gast.Assign(targets=[value_target], value=read, type_comment=None), stmt)
    stmt.target = key_target
    stmt.iter = located(gast.Call(func=constant(helpers.keys_of, it), args=[name(table.id, table)], keywords=[]), it)
    stmt.body = [bind] + stmt.body
    return [stmt]


def _statement(ctx: Context, stmt: Any) -> list | None:
    if isinstance(stmt, gast.For):
        return _dict_loop(ctx, stmt)
    if not (isinstance(stmt, gast.Expr) and isinstance(stmt.value, gast.Call)):
        return None
    call = stmt.value
    func = call.func
    if not (isinstance(func, gast.Attribute) and isinstance(func.value, gast.Name)) or call.keywords \
            or ctx.static(func.value)[0]:
        return None
    target = func.value.id
    if func.attr == "extend" and len(call.args) == 1:
        item = ctx.fresh("item")
        append = gast.Call(func=gast.Attribute(value=name(target, func), attr="append", ctx=gast.Load()),
                           args=[name(item, stmt)], keywords=[])
        loop = gast.For(target=name(item, stmt, store=True), iter=call.args[0], body=[gast.Expr(value=append)],
                        orelse=[], type_comment=None)
        return [located(loop, stmt)]
    if func.attr == "reverse" and not call.args and _own_list(ctx, target):
        step = gast.UnaryOp(op=gast.USub(), operand=gast.Constant(value=1, kind=None))
        value = gast.Subscript(value=name(target, func), slice=gast.Slice(lower=None, upper=None, step=step),
                               ctx=gast.Load())
        return [located(gast.Assign(targets=[name(target, stmt, store=True)], value=value, type_comment=None),
                        stmt)]
    if func.attr == "insert" and len(call.args) == 2:
        value = gast.Call(func=constant(helpers.list_insert, func), args=[name(target, func)] + call.args,
                          keywords=[])
        return [located(gast.Assign(targets=[name(target, stmt, store=True)], value=value, type_comment=None),
                        stmt)]
    return None


_READERS = ("len", "sum", "max", "min", "sorted", "list", "tuple", "enumerate", "zip", "reversed")


def _own_list(ctx: Context, id_: str) -> bool:
    """Whether id_ is a list the function assigns from a display or a comprehension, every read of which reads it
    (an item, a method, a loop, a builtin that copies or reads it): no other name holds it, so that rebinding it to
    its reversed copy is what reversing it in place does."""
    if id_ in {a.id for a in ctx.node.args.args + ctx.node.args.kwonlyargs + ctx.node.args.posonlyargs}:
        return False
    assigned = [s for s in gast.walk(ctx.node) if isinstance(s, gast.Assign)
                and any(isinstance(t, gast.Name) and t.id == id_ for t in s.targets)]
    if not assigned or not all(len(s.targets) == 1 and isinstance(s.value, (gast.List, gast.ListComp))
                               or isinstance(s.value, gast.Subscript) and isinstance(s.value.value, gast.Name)
                               and s.value.value.id == id_ for s in assigned):
        return False
    if any(isinstance(s, (gast.AugAssign, gast.AnnAssign, gast.For, gast.With)) and any(
            isinstance(n, gast.Name) and n.id == id_ and isinstance(n.ctx, gast.Store) for n in gast.walk(
                s.target if not isinstance(s, gast.With) else s)) for s in gast.walk(ctx.node)):
        return False
    allowed: set = set()
    for node in gast.walk(ctx.node):
        if isinstance(node, (gast.Attribute, gast.Subscript)) and isinstance(node.value, gast.Name):
            allowed.add(id(node.value))
        elif isinstance(node, (gast.For, gast.comprehension)) and isinstance(node.iter, gast.Name):
            allowed.add(id(node.iter))
        elif isinstance(node, gast.Call) and isinstance(node.func, gast.Name) and node.func.id in _READERS:
            allowed.update(id(a) for a in node.args if isinstance(a, gast.Name))
    return not any(isinstance(n, gast.Name) and n.id == id_ and isinstance(n.ctx, gast.Load) and id(n) not in allowed
                   for n in gast.walk(ctx.node))
