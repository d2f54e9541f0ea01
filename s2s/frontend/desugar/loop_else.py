"""`else` on a loop: it runs when the loop ends without `break`.

    for x in xs:              broke = False
        if test(x):           for x in xs:
            break      ->         if test(x):
    else:                             broke = True
        found = None                  break
                              if not broke:
                                  found = None

A loop without a `break` of its own runs its `else` always: the block simply follows the loop.
"""
from __future__ import annotations

from typing import Any

import gast

from s2s.frontend.desugar.context import Context, constant, located, map_statements, name


def applies(ctx: Context) -> bool:
    return any(loop.orelse for loop in ctx.loops)


def rewrite(ctx: Context) -> None:
    ctx.node.body = map_statements(ctx.node.body, lambda stmt: _loop_else(ctx, stmt))


def _loop_else(ctx: Context, stmt: Any) -> list | None:
    if not isinstance(stmt, (gast.For, gast.While)) or not stmt.orelse:
        return None
    orelse, stmt.orelse = stmt.orelse, []
    flag = ctx.fresh("broke")
    if not _mark_breaks(stmt.body, flag, stmt):
        return [stmt] + orelse

    def assign(value: bool) -> gast.Assign:
        return located(gast.Assign(targets=[name(flag, stmt, store=True)], value=constant(value, stmt),
                                   type_comment=None), stmt)
    check = located(gast.If(test=gast.UnaryOp(op=gast.Not(), operand=name(flag, stmt)), body=orelse, orelse=[]),
                    stmt)
    return [assign(False), stmt, check]


def _mark_breaks(body: list, flag: str, loop: Any) -> bool:
    """Set flag before each `break` of this loop (not of loops inside it, except in their `else`)."""
    found = False
    k = 0
    while k < len(body):
        stmt = body[k]
        if isinstance(stmt, gast.Break):
            body.insert(k, located(gast.Assign(targets=[name(flag, stmt, store=True)], value=constant(True, stmt),
                                               type_comment=None), stmt))
            found = True
            k += 2
            continue
        if isinstance(stmt, (gast.For, gast.While)):
            found |= _mark_breaks(stmt.orelse, flag, loop)
        elif not isinstance(stmt, (gast.FunctionDef, gast.AsyncFunctionDef, gast.ClassDef)):
            for field in ("body", "orelse", "finalbody"):
                inner = getattr(stmt, field, None)
                if isinstance(inner, list):
                    found |= _mark_breaks(inner, flag, loop)
            for handler in getattr(stmt, "handlers", []) or []:
                found |= _mark_breaks(handler.body, flag, loop)
        k += 1
    return found
