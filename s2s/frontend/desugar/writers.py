"""Library calls that write into an array they are given, as the assignments they are:

    operator.setitem(y, i, v)      ->  y[i] = v                 (operator.__setitem__ is the same function)
    operator.iadd(y, v)            ->  assert_array(y); y += v  (isub, imul, itruediv, ifloordiv, ipow, imatmul)
    z = operator.iadd(y, v)        ->  assert_array(y); y += v; z = y
    np.copyto(y, x)                ->  y[...] = x               (where=w: y[...] = np.where(w, x, y))
    np.place(y, mask, v)           ->  y[mask] = v
    np.put(y, ind, v)              ->  y[np.unravel_index(ind, np.shape(y))] = v
    np.fill_diagonal(y, v)         ->  y[diagonal_index(y)] = v (wrap=False: the positions NumPy writes)

where y is a variable of the function: lowering then follows the write as it follows `y[i] = v`, and refuses it
where Python would show it through another name. An in-place operator writes into an array; on a number Python's
call returns a new one and leaves y as it was, so `assert_array` refuses a number when the code runs (`y += v`
would rebind y). Anything else is left as it is: lowering refuses copyto, place and put on what is not a
variable, and a call given a differentiated value that may write into an array it is given, without a rule or
source, is refused when the derivative is made (s2s/driver/mutation.py: refuse_opaque_writers).
"""
from __future__ import annotations

import operator
from typing import Any

import gast
import numpy as np

from s2s.frontend.desugar import helpers
from s2s.frontend.desugar.context import Context, constant, located, map_statements, name

_IN_PLACE = {operator.iadd: gast.Add, operator.isub: gast.Sub, operator.imul: gast.Mult,
             operator.itruediv: gast.Div, operator.ifloordiv: gast.FloorDiv, operator.ipow: gast.Pow,
             operator.imatmul: gast.MatMult}
_WRITERS = (operator.setitem, np.copyto, np.place, np.put, np.fill_diagonal, *_IN_PLACE)


def applies(ctx: Context) -> bool:
    return ctx.calls_to(*_WRITERS)


def rewrite(ctx: Context) -> None:
    ctx.node.body = map_statements(ctx.node.body, lambda stmt: _statement(ctx, stmt))


def _which(ctx: Context, call: Any) -> Any:
    found, obj = ctx.static(call.func)
    return obj if found and any(obj is w for w in _WRITERS) else None


def _statement(ctx: Context, stmt: Any) -> list | None:
    target = None
    if isinstance(stmt, gast.Expr) and isinstance(stmt.value, gast.Call):
        call = stmt.value
    elif isinstance(stmt, gast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.value, gast.Call):
        call, target = stmt.value, stmt.targets[0]
    else:
        return None
    writer = _which(ctx, call)
    if writer is None or any(isinstance(a, gast.Starred) for a in call.args) or not call.args \
            or not isinstance(call.args[0], gast.Name) or any(k.arg is None for k in call.keywords):
        return None
    array = call.args[0]
    keywords = {k.arg: k.value for k in call.keywords}
    if writer in _IN_PLACE:
        if len(call.args) != 2 or keywords:
            return None
        check = located(gast.Expr(value=gast.Call(
            func=constant(helpers.assert_array, call), args=[name(array.id, array), constant(writer.__name__, call)],
            keywords=[])), stmt)
        update = located(gast.AugAssign(target=name(array.id, array, store=True), op=_IN_PLACE[writer](),
                                        value=call.args[1]), stmt)
        out = [check, update]
        if target is not None:
            out.append(located(gast.Assign(targets=[target], value=name(array.id, array), type_comment=None), stmt))
        return out
    if target is not None:          # the value of a writer that returns None: left to lowering
        return None
    if writer is operator.setitem:
        if len(call.args) != 3 or keywords:
            return None
        index, value = call.args[1], call.args[2]
    elif writer is np.copyto:
        if len(call.args) != 2 or set(keywords) - {"where", "casting"} or keywords.get("casting") is not None and \
                not (isinstance(keywords["casting"], gast.Constant) and keywords["casting"].value == "same_kind"):
            return None
        index, value = constant(Ellipsis, call), call.args[1]
        if "where" in keywords:
            value = _np_call(ctx, "where", [keywords["where"], value, name(array.id, array)], call)
    elif writer is np.place:
        if len(call.args) != 3 or keywords:
            return None
        index, value = call.args[1], call.args[2]
    elif writer is np.fill_diagonal:
        # (wrap=True, or a value NumPy would repeat along a longer diagonal, is left to lowering's refusal; a value
        # of another length than the diagonal fails in the assignment, as it would not in NumPy)
        if len(call.args) != 2 or set(keywords) - {"wrap"} or "wrap" in keywords and not (
                isinstance(keywords["wrap"], gast.Constant) and keywords["wrap"].value is False):
            return None
        index = located(gast.Call(func=constant(helpers.diagonal_index, call), args=[name(array.id, array)],
                                  keywords=[]), call)
        value = call.args[1]
    else:                           # np.put, in its default mode: positions in the flattened array
        if len(call.args) != 3 or keywords:
            return None
        shape = _np_call(ctx, "shape", [name(array.id, array)], call)
        index, value = _np_call(ctx, "unravel_index", [call.args[1], shape], call), call.args[2]
    store = gast.Subscript(value=name(array.id, array), slice=index, ctx=gast.Store())
    return [located(gast.Assign(targets=[store], value=value, type_comment=None), stmt)]


def _np_call(ctx: Context, function: str, args: list, like: Any) -> gast.Call:
    return located(gast.Call(func=constant(getattr(np, function), like), args=args, keywords=[]), like)
