"""`y.fill(v)` on a NumPy array variable of the function, as the assignment it is:

    y.fill(v)        ->      assert_fillable(y); y[...] = v

Lowering then follows the write as it follows `y[i] = v` (in place when nothing reads the old array, else a copy;
refused where Python would show it through another name; a float written into an integer array keeps no
derivative). Runs after `objects`, so a `fill` method of the user's class (on an object known when the derivative
is made) has become a call of that method already; what is left is a method of a value whose type is known only
when the code runs, which `assert_fillable` checks is an array (anything else is refused at this line when it
runs). `y.fill(v)` as a value (it is None), or on what is not a variable, is left to lowering's refusal.
"""
from __future__ import annotations

from typing import Any

import gast

from s2s.frontend.desugar import helpers
from s2s.frontend.desugar.context import Context, constant, located, map_statements, name


def applies(ctx: Context) -> bool:
    return "fill" in ctx.attributes


def rewrite(ctx: Context) -> None:
    ctx.node.body = map_statements(ctx.node.body, _statement)


def _statement(stmt: Any) -> list | None:
    if not (isinstance(stmt, gast.Expr) and isinstance(stmt.value, gast.Call)):
        return None
    call = stmt.value
    if not (isinstance(call.func, gast.Attribute) and call.func.attr == "fill"
            and isinstance(call.func.value, gast.Name) and len(call.args) == 1 and not call.keywords
            and not isinstance(call.args[0], gast.Starred)):
        return None
    array = call.func.value
    check = located(gast.Expr(value=gast.Call(func=constant(helpers.assert_fillable, call),
                                              args=[name(array.id, array)], keywords=[])), stmt)
    store = gast.Subscript(value=name(array.id, array, store=False), slice=constant(Ellipsis, call),
                           ctx=gast.Store())
    return [check, located(gast.Assign(targets=[store], value=call.args[0], type_comment=None), stmt)]
