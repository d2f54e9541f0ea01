"""Statements that run as Python runs them, with nothing to differentiate: `assert`, `raise`, f-strings,
`with` blocks over inactive context managers. Each becomes a call of a helper (s2s.frontend.desugar.helpers),
which activity analysis knows carries no derivative. (`print` needs no rewrite: it is a call.)

    assert x > 0, "x"          ->  if not x > 0: assertion_failed("x")
    raise ValueError(msg)      ->  raise_exception(ValueError(msg))
    f"{x:.3f} {y!r}"           ->  format_string("{:.3f} {!r}", x, y)
    with np.errstate(...):     ->  manager = np.errstate(...); enter(manager); body; exit_(manager)

A raise is an exit of the forward sweep: the derivative raises where the function does. A `with` block's
manager is left before the reverse sweep runs (the derivative's own arithmetic runs outside it).
"""
from __future__ import annotations

import gast

from s2s.frontend.desugar import helpers
from s2s.frontend.desugar.context import Context, constant, located, map_statements, name


def applies(ctx: Context) -> bool:
    return not ctx.kinds.isdisjoint((gast.Assert, gast.Raise, gast.With, gast.JoinedStr))


def rewrite(ctx: Context) -> None:
    ctx.node.body = map_statements(ctx.node.body, lambda stmt: _statement(ctx, stmt))
    for node in list(gast.walk(ctx.node)):
        for field, value in gast.iter_fields(node):
            if isinstance(value, gast.JoinedStr):
                setattr(node, field, f_string(value))
            elif isinstance(value, list):
                setattr(node, field, [f_string(v) if isinstance(v, gast.JoinedStr) else v for v in value])


def _statement(ctx: Context, stmt: gast.stmt) -> list | None:
    if isinstance(stmt, gast.Assert):
        return [assert_(stmt)]
    if isinstance(stmt, gast.Raise) and stmt.exc is not None:
        return [raise_(stmt)]
    if isinstance(stmt, gast.With):
        return with_(ctx, stmt)
    return None


def _call(fn: object, args: list, like: gast.AST) -> gast.Expr:
    call = gast.Call(func=constant(fn, like), args=args, keywords=[])
    return located(gast.Expr(value=call), like)


def assert_(stmt: gast.Assert) -> gast.If:
    args = [stmt.msg] if stmt.msg is not None else []
    test = gast.UnaryOp(op=gast.Not(), operand=stmt.test)
    return located(gast.If(test=test, body=[_call(helpers.assertion_failed, args, stmt)], orelse=[]), stmt)


def raise_(stmt: gast.Raise) -> gast.Expr:
    args = [stmt.exc] + ([stmt.cause] if stmt.cause is not None else [])
    return _call(helpers.raise_exception, args, stmt)


def with_(ctx: Context, stmt: gast.With) -> list:
    before, after = [], []
    for item in stmt.items:
        manager = ctx.fresh("manager")
        before.append(located(gast.Assign(targets=[name(manager, item.context_expr, store=True)],
                                          value=item.context_expr, type_comment=None), stmt))
        entered = gast.Call(func=constant(helpers.enter, stmt), args=[name(manager, stmt)], keywords=[])
        if item.optional_vars is not None:
            before.append(located(gast.Assign(targets=[item.optional_vars], value=entered, type_comment=None),
                                  stmt))
        else:
            before.append(located(gast.Expr(value=entered), stmt))
        after.insert(0, _call(helpers.exit_, [name(manager, stmt)], stmt))
    return before + stmt.body + after


def f_string(node: gast.JoinedStr) -> gast.expr:
    template, values = [], []
    for part in node.values:
        if isinstance(part, gast.Constant):
            template.append(str(part.value).replace("{", "{{").replace("}", "}}"))
            continue
        field = "{"
        if part.conversion not in (-1, None):
            field += "!" + chr(part.conversion)
        spec = part.format_spec
        if spec is not None:
            if not all(isinstance(v, gast.Constant) for v in spec.values):
                return node              # a computed format spec: left for the fence to refuse
            field += ":" + "".join(str(v.value) for v in spec.values)
        template.append(field + "}")
        values.append(part.value)
    call = gast.Call(func=constant(helpers.format_string, node), args=[constant("".join(template), node)] + values,
                     keywords=[])
    return located(call, node)
