"""The right-hand side of `scipy.integrate.odeint` reading the function's variables: they go through `args=`.

    odeint(lambda y, t: -k * y, y0, ts)     ->     odeint(lambda y, t, k: -k * y, y0, ts, args=(k,))

    def rhs(y, t):                                 def rhs(y, t, k):
        return -k * y                ->                return -k * y
    odeint(rhs, y0, ts)                            odeint(rhs, y0, ts, args=(k,))

odeint calls func(y, t, *args) (or func(t, y, *args) with tfirst=True), so the variables func reads become
parameters after its own, given their values at the call (when odeint runs func: exact) and differentiated
through odeint's rule (rules/integrate.py) like any argument. A nested `def` is rewritten when odeint is its only
use; given `args=` other than a tuple display, the call is left as it is (refused by the fence).
"""
from __future__ import annotations

from typing import Any

import gast

from s2s.frontend.desugar.closures import _free_locals
from s2s.frontend.desugar.context import Context, located, name

def _odeint() -> Any:
    """scipy.integrate.odeint, or None without SciPy (imported here, where a function names odeint: SciPy is
    optional, and importing it takes longer than s2s does)."""
    try:
        import scipy.integrate
    except ImportError:                         # pragma: no cover - SciPy is optional
        return None
    return scipy.integrate.odeint


def applies(ctx: Context) -> bool:
    return "odeint" in ctx.used and _odeint() is not None


def rewrite(ctx: Context) -> None:
    _ODEINT = _odeint() if "odeint" in ctx.used else None
    if _ODEINT is None:
        return
    calls = [n for n in gast.walk(ctx.node) if isinstance(n, gast.Call) and n.args and ctx.names(n.func, _ODEINT)]
    nested = [s for s in gast.walk(ctx.node) if isinstance(s, gast.FunctionDef) and s is not ctx.node]
    defs = {s.name: s for s in nested if sum(d.name == s.name for d in nested) == 1}
    for call in calls:
        func = call.args[0]
        if isinstance(func, gast.Lambda):
            _pass_free(ctx, call, func.args, [func.body])
        elif isinstance(func, gast.Name) and func.id in defs and _only_given_to_odeint(ctx, func.id, calls):
            node = defs[func.id]
            _pass_free(ctx, call, node.args, node.body, others=[c for c in calls if c is not call and
                                                               isinstance(c.args[0], gast.Name) and
                                                               c.args[0].id == func.id])


def _only_given_to_odeint(ctx: Context, target: str, calls: list) -> bool:
    given = {id(c.args[0]) for c in calls}
    uses = [n for n in gast.walk(ctx.node) if isinstance(n, gast.Name) and n.id == target]
    stores = [n for n in uses if not isinstance(n.ctx, gast.Load)]
    return not stores and all(id(n) in given for n in uses)


def _pass_free(ctx: Context, call: gast.Call, args: gast.arguments, body: list, others: list = ()) -> None:
    if args.vararg is not None or args.kwarg is not None or args.kwonlyargs or args.posonlyargs or args.defaults:
        return
    free = _free_locals(ctx, args, [b if isinstance(b, gast.stmt) else gast.Expr(value=b) for b in body])
    if not free:
        return
    extras = [_args_display(c) for c in (call, *others)]
    if any(e is None for e in extras):
        return
    args.args = list(args.args) + [gast.Name(id=f, ctx=gast.Param(), annotation=None, type_comment=None)
                                   for f in free]
    for c, (display, given) in zip((call, *others), extras):
        display.elts = list(display.elts) + [name(f, c) for f in free]
        if not given:
            c.keywords = list(c.keywords) + [gast.keyword(arg="args", value=display)]


def _args_display(call: gast.Call) -> tuple | None:
    """(the tuple display of the call's args=, whether the call gave one); None if given otherwise."""
    given = call.args[3] if len(call.args) > 3 else next((k.value for k in call.keywords if k.arg == "args"), None)
    if given is None:
        return located(gast.Tuple(elts=[], ctx=gast.Load()), call), False
    if isinstance(given, gast.Tuple):
        return given, True
    return None
