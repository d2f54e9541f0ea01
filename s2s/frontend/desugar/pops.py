"""A list's `pop` whose value is used, as the item read and then a pop statement (which lowering knows: the list
without that item):

    oldest = xs.pop(0)          ->   oldest = xs[0]; xs.pop(0)
    acc = acc + xs.pop()        ->   item = xs[-1]; xs.pop(); acc = acc + item

Applies where the statement reads the list nowhere else (so reading the item first is the order Python observes),
the index is a constant or a name, and the pop is evaluated once, unconditionally (not in a condition, a loop test
or a comprehension). Anything else is left to lowering, which refuses it with a rewrite.
"""
from __future__ import annotations

from typing import Any

import gast

from s2s.frontend.desugar.context import Context, constant, hoisting, located, map_statements, name
from s2s.frontend.tree import clone_tree


def applies(ctx: Context) -> bool:
    return "pop" in ctx.attributes


def _pop_of(ctx: Context, node: Any) -> str | None:
    """The list's name when node is `xs.pop()` or `xs.pop(i)` (i a constant or a name) on a local name xs."""
    if not (isinstance(node, gast.Call) and isinstance(node.func, gast.Attribute) and node.func.attr == "pop"
            and isinstance(node.func.value, gast.Name) and not node.keywords and len(node.args) <= 1
            and all(isinstance(a, (gast.Constant, gast.Name)) for a in node.args)):
        return None
    target = node.func.value.id
    return target if target in ctx.local_names() and not any(
        isinstance(a, gast.Name) and a.id == target for a in node.args) else None


def rewrite(ctx: Context) -> None:
    ctx.node.body = map_statements(ctx.node.body, lambda stmt: _statement(ctx, stmt))


def _statement(ctx: Context, stmt: Any) -> list | None:
    if isinstance(stmt, (gast.For, gast.While, gast.If, gast.FunctionDef, gast.With, gast.Try)) or (
            isinstance(stmt, gast.Expr) and _pop_of(ctx, stmt.value) is not None):
        return None                 # (a compound statement's own bodies are visited on their own; a bare pop is kept)
    pops = [n for n in gast.walk(stmt) if _pop_of(ctx, n) is not None]
    if len(pops) != 1:
        return None
    listed = _pop_of(ctx, pops[0])
    if sum(1 for n in gast.walk(stmt) if isinstance(n, gast.Name) and n.id == listed) != 1:
        return None                 # the list read elsewhere in the statement: the order would matter

    done: list = []

    def visit(node: Any, pre: list) -> Any:
        if node is not pops[0] or done:
            return node
        done.append(node)
        item = ctx.fresh("popped")
        index = node.args[0] if node.args else constant(-1, node)
        read = gast.Subscript(value=name(listed, node), slice=clone_tree(index), ctx=gast.Load())
        pre += [located(gast.Assign(targets=[name(item, node, store=True)], value=read, type_comment=None), node),
                located(gast.Expr(value=node), node)]
        return name(item, node)
    out = hoisting([stmt], visit)
    return out if len(out) > 1 else None
