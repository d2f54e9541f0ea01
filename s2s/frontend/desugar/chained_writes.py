"""Chained element writes on a NumPy array: `B[i][j] = v` (and `B[i][j] += v`, deeper chains) as one write.

    B[i][j] = v        ->      B[element_index(B, i, j)] = v           (B[i, j] = v)

With B a NumPy array and i an integer, B[i] is a view of one row of B, so writing into it writes into B: the
same as `B[i, j] = v`, which s2s models. `element_index` checks that when the code runs (B a list of lists,
or i a slice or an index array, where B[i] is another object or a copy, is refused at this line).
"""
from __future__ import annotations

from typing import Any

import gast

from s2s.frontend.desugar.context import Context, constant, located, map_statements
from s2s.frontend.desugar.helpers import element_index


def applies(ctx: Context) -> bool:
    return gast.Subscript in ctx.kinds         # (a write `B[i][j] = v` holds two)


def rewrite(ctx: Context) -> None:
    ctx.node.body = map_statements(ctx.node.body, _statement)


def _statement(stmt: Any) -> None:
    if isinstance(stmt, gast.Assign):
        stmt.targets = [_flattened(t) or t for t in stmt.targets]
    elif isinstance(stmt, gast.AugAssign):
        stmt.target = _flattened(stmt.target) or stmt.target
    return None


def _flattened(target: Any) -> Any:
    """target = `B[i]...[j]` (two subscripts or more, B a name) as `B[element_index(B, i, ..., j)]`, else None."""
    if not (isinstance(target, gast.Subscript) and isinstance(target.value, gast.Subscript)):
        return None
    inner = target.value
    if isinstance(inner.value, gast.Subscript):
        inner = _flattened(inner)
        if inner is None:
            return None
    if not isinstance(inner.value, gast.Name):
        return None
    base = inner.value
    read = gast.Name(id=base.id, ctx=gast.Load(), annotation=None, type_comment=None)
    index = gast.Call(func=constant(element_index, target), args=[read, inner.slice, target.slice], keywords=[])
    return located(gast.Subscript(value=base, slice=index, ctx=gast.Store()), target)
