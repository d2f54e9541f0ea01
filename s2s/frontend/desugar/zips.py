"""`zip` in the forms lowering does not read (it reads `for a, b in zip(xs, ys)`, one name per sequence):

    for p in zip(xs, ys):                 ->  for p_0, p_1 in zip(xs, ys): p = (p_0, p_1); ...
    for (s, y), a in zip(zip(S, Y), A):   ->  for s, y, a in zip(S, Y, A):        (zip of zips: one zip, as long)
    for row in zip(*M):                   ->  for j in range(zip_length(M)):      (the transpose of a list of rows:
                                                  items = []                       item j of each row, as a tuple)
                                                  for r in M: items.append(r[j])
                                                  row = tuple(items)
    sorted(zip(w, v)), list(zip(a, b))    ->  the list of tuples it gives, built by such a loop first
    for a, b in itertools.pairwise(xs):   ->  items = list(xs); for a, b in zip(items[:-1], items[1:]):

Runs after `comprehensions` (whose loops are then for loops) and `reversed_items`.
"""
from __future__ import annotations

import builtins
import itertools
from typing import Any

import gast

from s2s.frontend.desugar import helpers
from s2s.frontend.desugar.context import Context, constant, hoisting, listed, located, map_statements, name
from s2s.frontend.tree import clone_tree

# calls that consume a zip whole, where the list of its tuples is the same
_CONSUMERS = (builtins.list, builtins.tuple, builtins.sorted, builtins.min, builtins.max, builtins.sum)


def _is_zip(ctx: Context, node: Any) -> bool:
    return isinstance(node, gast.Call) and not node.keywords and ctx.names(node.func, builtins.zip)


def applies(ctx: Context) -> bool:
    return ctx.calls_to(builtins.zip, _PAIRWISE)


_PAIRWISE = getattr(itertools, "pairwise", None)      # Python 3.10+


def _pairwise(ctx: Context, node: Any, pre: list) -> Any:
    """`itertools.pairwise(xs)` as `zip(items[:-1], items[1:])` over `items = list(xs)`: the same pairs."""
    if not (isinstance(node, gast.Call) and len(node.args) == 1 and not node.keywords and _PAIRWISE is not None
            and not isinstance(node.args[0], gast.Starred) and ctx.names(node.func, _PAIRWISE)):
        return node
    items = ctx.fresh("items")
    pre.append(located(gast.Assign(targets=[name(items, node, store=True)], value=listed(ctx, node.args[0]),
                                   type_comment=None), node))

    def part(lower: Any, upper: Any) -> gast.Subscript:
        return gast.Subscript(value=name(items, node), slice=gast.Slice(lower=lower, upper=upper, step=None),
                              ctx=gast.Load())
    minus_one = gast.UnaryOp(op=gast.USub(), operand=constant(1, node))
    firsts, seconds = part(None, minus_one), part(constant(1, node), None)
    return located(gast.Call(func=constant(builtins.zip, node), args=[firsts, seconds], keywords=[]), node)


def rewrite(ctx: Context) -> None:
    ctx.node.body = hoisting(ctx.node.body, lambda node, pre: _consumed(ctx, _pairwise(ctx, node, pre), pre))
    ctx.node.body = map_statements(ctx.node.body, lambda stmt: _loop(ctx, stmt))


def _consumed(ctx: Context, node: Any, pre: list) -> Any:
    """A zip given to list, sorted, ... as the list of its tuples, built just before."""
    if not (isinstance(node, gast.Call) and node.args and any(ctx.names(node.func, f) for f in _CONSUMERS)
            and _is_zip(ctx, node.args[0])):
        return node
    made = ctx.fresh("zipped")
    item = ctx.fresh("item")
    append = gast.Call(func=gast.Attribute(value=name(made, node), attr="append", ctx=gast.Load()),
                       args=[name(item, node)], keywords=[])
    loop = gast.For(target=name(item, node, store=True), iter=node.args[0], body=[gast.Expr(value=append)],
                    orelse=[], type_comment=None)
    start = gast.Assign(targets=[name(made, node, store=True)], value=gast.List(elts=[], ctx=gast.Load()),
                        type_comment=None)
    for stmt in (start, loop):
        pre.extend(_loop(ctx, located(stmt, node)) or [located(stmt, node)])
    node.args[0] = name(made, node)
    return node


def _loop(ctx: Context, stmt: Any) -> list | None:
    if not (isinstance(stmt, gast.For) and _is_zip(ctx, stmt.iter)):
        return None
    it = stmt.iter
    if len(it.args) == 1 and isinstance(it.args[0], gast.Starred):
        return _transposed(ctx, stmt)
    if any(isinstance(a, gast.Starred) for a in it.args):
        return None
    targets = list(stmt.target.elts) if isinstance(stmt.target, (gast.Tuple, gast.List)) else None
    bind: list = []
    if targets is None:                         # `for p in zip(xs, ys)`: p is the tuple of the items
        targets = [name(ctx.fresh(f"{_base(stmt.target)}_{k}"), stmt, store=True) for k in range(len(it.args))]
        bind.append(_assign(stmt.target, _tuple([name(t.id, stmt) for t in targets], stmt), stmt))
    if len(targets) != len(it.args):
        return None
    args, flat = [], []
    changed = bool(bind)
    for arg, target in zip(it.args, targets):
        if _is_zip(ctx, arg) and not any(isinstance(a, gast.Starred) for a in arg.args):
            inner = list(target.elts) if isinstance(target, (gast.Tuple, gast.List)) else None
            if inner is None:
                inner = [name(ctx.fresh(f"{_base(target)}_{k}"), stmt, store=True) for k in range(len(arg.args))]
                bind.append(_assign(target, _tuple([name(t.id, stmt) for t in inner], stmt), stmt))
            if len(inner) == len(arg.args):
                args += arg.args
                flat += inner
                changed = True
                continue
        args.append(arg)
        flat.append(target)
    if not changed:
        return None
    stmt.iter = located(gast.Call(func=it.func, args=args, keywords=[]), it)
    stmt.target = located(gast.Tuple(elts=flat, ctx=gast.Store()), stmt.target)
    stmt.body = bind + stmt.body
    return _loop(ctx, stmt) or [stmt]


def _transposed(ctx: Context, stmt: gast.For) -> list:
    rows, j, items, row = ctx.fresh("rows"), ctx.fresh("j"), ctx.fresh("items"), ctx.fresh("row")
    read = lambda id_: name(id_, stmt)      # noqa: E731
    append = gast.Call(func=gast.Attribute(value=read(items), attr="append", ctx=gast.Load()),
                       args=[gast.Subscript(value=read(row), slice=read(j), ctx=gast.Load())], keywords=[])
    gather = [_assign(name(items, stmt, store=True), gast.List(elts=[], ctx=gast.Load()), stmt),
              located(gast.For(target=name(row, stmt, store=True), iter=read(rows), body=[gast.Expr(value=append)],
                               orelse=[], type_comment=None), stmt),
              _assign(stmt.target, gast.Call(func=constant(builtins.tuple, stmt), args=[read(items)], keywords=[]),
                      stmt)]
    count = gast.Call(func=constant(helpers.zip_length, stmt), args=[read(rows)], keywords=[])
    loop = gast.For(target=name(j, stmt, store=True),
                    iter=gast.Call(func=constant(builtins.range, stmt), args=[count], keywords=[]),
                    body=gather + stmt.body, orelse=[], type_comment=None)
    return [_assign(name(rows, stmt, store=True), stmt.iter.args[0].value, stmt), located(loop, stmt)]


def _assign(target: Any, value: Any, like: Any) -> gast.Assign:
    return located(gast.Assign(targets=[clone_tree(target)], value=value, type_comment=None), like)


def _tuple(elts: list, like: Any) -> gast.Tuple:
    return located(gast.Tuple(elts=elts, ctx=gast.Load()), like)


def _base(target: Any) -> str:
    return target.id if isinstance(target, gast.Name) else "item"
