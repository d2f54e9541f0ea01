"""An iterator made by `iter()` and read by `next()`: its items as a list, and a position counting them.

    it = iter(xs)               ->  it = list(xs); it_at = 0
    v = next(it)                ->  v = it[next_position(it, it_at)]; it_at = it_at + 1
    v = next(it, d)             ->  item = d
                                    if it_at < len(it): item = it[it_at]; it_at = it_at + 1
                                    v = item
    for v in it: ...            ->  for v in it[it_at:]: ...         (a loop without `break`)
                                    it_at = len(it)
    next(iter(xs))              ->  items = list(xs); items[next_position(items, 0)]     (and next(iter(xs), d))

`next_position` raises StopIteration where Python's `next` would. Applies to a name bound once, by `it = iter(X)`
with one argument, that the function reads only as `next(it)`, `next(it, d)` (each evaluated once, where it
stands: not in a loop's test, a branch of `a if c else b` or an operand of `and`/`or`) and `for v in it` (no
`break` in it); then the items are read as lowering reads a list's. Runs after `comprehensions`, whose loops are
then for loops (`[next(it) for _ in range(3)]` is covered). Any other use leaves the iterator to lowering, as
Python's: refused when its items carry a derivative.
"""
from __future__ import annotations

import builtins
from typing import Any

import gast

from s2s.frontend.desugar import helpers
from s2s.frontend.desugar.context import Context, constant, hoisting, listed, located, map_statements, name
from s2s.frontend.tree import clone_tree


def applies(ctx: Context) -> bool:
    return ctx.calls_to(builtins.iter)


def _iter_of(ctx: Context, node: Any) -> Any:
    """X when node is `iter(X)`, else None."""
    if isinstance(node, gast.Call) and len(node.args) == 1 and not node.keywords \
            and not isinstance(node.args[0], gast.Starred) and ctx.names(node.func, builtins.iter):
        return node.args[0]
    return None


def _next_of(ctx: Context, node: Any) -> Any:
    """The iterator expression when node is `next(it)` or `next(it, d)`, else None."""
    if isinstance(node, gast.Call) and 1 <= len(node.args) <= 2 and not node.keywords \
            and not any(isinstance(a, gast.Starred) for a in node.args) and ctx.names(node.func, builtins.next):
        return node.args[0]
    return None


def _candidates(ctx: Context) -> set[str]:
    """The names bound once, by `it = iter(X)`, and read only by next() and for loops without break."""
    made: dict[str, int] = {}
    for sub in gast.walk(ctx.node):
        if isinstance(sub, gast.Assign) and len(sub.targets) == 1 and isinstance(sub.targets[0], gast.Name) \
                and _iter_of(ctx, sub.value) is not None:
            made[sub.targets[0].id] = made.get(sub.targets[0].id, 0) + 1
    names = {n for n, count in made.items() if count == 1}
    if not names:
        return set()
    allowed: set[int] = set()               # ids of the Name nodes read as allowed
    for sub in gast.walk(ctx.node):
        if isinstance(sub, gast.Assign) and len(sub.targets) == 1 and isinstance(sub.targets[0], gast.Name) \
                and sub.targets[0].id in names and _iter_of(ctx, sub.value) is not None:
            allowed.add(id(sub.targets[0]))
        elif isinstance(sub, gast.Call) and isinstance(_next_of(ctx, sub), gast.Name):
            allowed.add(id(sub.args[0]))
        elif isinstance(sub, gast.For) and isinstance(sub.iter, gast.Name) and sub.iter.id in names:
            if not any(isinstance(n, gast.Break) for n in _own_statements(sub.body)) and not sub.orelse:
                allowed.add(id(sub.iter))
    nested = [n for n in gast.walk(ctx.node) if isinstance(n, (gast.FunctionDef, gast.Lambda)) and n is not ctx.node]
    inside_nested = {id(m) for n in nested for m in gast.walk(n)}
    for sub in gast.walk(ctx.node):
        if isinstance(sub, gast.Name) and sub.id in names and (id(sub) not in allowed or id(sub) in inside_nested):
            names.discard(sub.id)
    return names


def _own_statements(body: list) -> list:
    """The statements of a loop body, nested ones included, but not those of inner loops (their break is theirs)."""
    out: list = []
    for stmt in body:
        out.append(stmt)
        if isinstance(stmt, (gast.For, gast.While, gast.FunctionDef)):
            continue
        for field in ("body", "orelse", "finalbody"):
            inner = getattr(stmt, field, None)
            if isinstance(inner, list):
                out.extend(_own_statements(inner))
        for handler in getattr(stmt, "handlers", []) or []:
            out.extend(_own_statements(handler.body))
    return out


def rewrite(ctx: Context) -> None:
    iterators = _candidates(ctx)
    positions = {it: ctx.fresh(f"{it}_at") for it in sorted(iterators)}

    def statement(stmt: Any) -> list | None:
        if isinstance(stmt, gast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], gast.Name) \
                and stmt.targets[0].id in iterators:
            it = stmt.targets[0].id
            items = listed(ctx, _iter_of(ctx, stmt.value))
            return [located(gast.Assign(targets=[name(it, stmt, store=True)], value=items, type_comment=None),
                            stmt),
                    _assign(positions[it], constant(0, stmt), stmt)]
        if isinstance(stmt, gast.For) and isinstance(stmt.iter, gast.Name) and stmt.iter.id in iterators:
            it = stmt.iter.id
            rest = located(gast.Slice(lower=name(positions[it], stmt), upper=None, step=None), stmt)
            stmt.iter = located(gast.Subscript(value=name(it, stmt), slice=rest, ctx=gast.Load()), stmt)
            return [stmt, _assign(positions[it], _len(name(it, stmt)), stmt)]
        return None

    def visit(node: Any, pre: list) -> Any:
        iterator = _next_of(ctx, node)
        if iterator is None:
            return node
        if isinstance(iterator, gast.Name) and iterator.id in iterators:
            it, at, advance = iterator.id, positions[iterator.id], True
        elif _iter_of(ctx, iterator) is not None:
            it, at, advance = ctx.fresh("items"), None, False
            pre.append(_assign(it, listed(ctx, _iter_of(ctx, iterator)), node))
        else:
            return node
        position = name(at, node) if at is not None else constant(0, node)
        item = ctx.fresh("item")
        if len(node.args) == 1:
            index = located(gast.Call(func=constant(helpers.next_position, node),
                                      args=[name(it, node), position], keywords=[]), node)
            pre.append(_assign(item, gast.Subscript(value=name(it, node), slice=index, ctx=gast.Load()), node))
            if advance:
                pre.append(_assign(at, _plus_one(name(at, node)), node))
            return name(item, node)
        pre.append(_assign(item, node.args[1], node))
        taken = [_assign(item, gast.Subscript(value=name(it, node), slice=clone_tree(position), ctx=gast.Load()),
                         node)]
        if advance:
            taken.append(_assign(at, _plus_one(name(at, node)), node))
        test = gast.Compare(left=clone_tree(position), ops=[gast.Lt()], comparators=[_len(name(it, node))])
        pre.append(located(gast.If(test=test, body=taken, orelse=[]), node))
        return name(item, node)

    if iterators:
        ctx.node.body = map_statements(ctx.node.body, statement)
    ctx.node.body = hoisting(ctx.node.body, visit)
    for sub in gast.walk(ctx.node):
        iterator = _next_of(ctx, sub) if isinstance(sub, gast.Call) else None
        if isinstance(iterator, gast.Name) and iterator.id in iterators:
            raise ctx.error(f"s2s reads `next({iterator.id})` only where it is evaluated once, as a statement's own "
                            f"expression (not in a loop's test, a branch of `a if c else b` or an operand of "
                            f"`and`/`or`)", sub,
                            hint=f"assign it first (`item = next({iterator.id})`, in the loop's body or the branch)")


def _assign(target: str, value: Any, like: Any) -> Any:
    return located(gast.Assign(targets=[name(target, like, store=True)], value=value, type_comment=None), like)


def _len(node: Any) -> Any:
    return located(gast.Call(func=constant(builtins.len, node), args=[node], keywords=[]), node)


def _plus_one(node: Any) -> Any:
    return located(gast.BinOp(left=node, op=gast.Add(), right=gast.Constant(value=1, kind=None)), node)
