"""Parameters: keyword-only and positional-only ones become ordinary; `*args` and `**kwargs` of a known
length (`Facts.arity`, `Facts.kwnames`: the function is read for one call) become fixed parameters, and
the body starts by packing them: `args = (args_0, args_1)`, `kwargs = {'a': kwargs_a}`.

The order of the parameters is that of `inspect.signature`, which the inlining of a call binds by."""
from __future__ import annotations

import gast

from s2s.frontend.desugar.context import Context, constant, located, name


def applies(ctx: Context) -> bool:
    args = ctx.node.args
    return bool(args.posonlyargs or args.kwonlyargs or args.vararg or args.kwarg or args.defaults
                or args.kw_defaults)


def rewrite(ctx: Context) -> None:
    node = ctx.node
    args = node.args
    params = list(args.posonlyargs) + list(args.args)
    packing: list = []
    if args.vararg is not None and args.vararg.id in ctx.parsed.facts.arity:
        star = args.vararg.id
        items = [_param(ctx.fresh(f"{star}_{i}"), args.vararg)
                 for i in range(ctx.parsed.facts.arity[star])]
        params += items
        display = gast.Tuple(elts=[name(p.id, p) for p in items], ctx=gast.Load())
        packing.append(located(gast.Assign(targets=[name(star, args.vararg, store=True)], value=display,
                                           type_comment=None), args.vararg))
        args.vararg = None
    params += list(args.kwonlyargs)
    if args.kwarg is not None and args.kwarg.id in ctx.parsed.facts.kwnames:
        star = args.kwarg.id
        keys = ctx.parsed.facts.kwnames[star]
        items = [_param(ctx.fresh(f"{star}_{k}"), args.kwarg) for k in keys]
        params += items
        display = gast.Dict(keys=[constant(k, args.kwarg) for k in keys], values=[name(p.id, p) for p in items])
        packing.append(located(gast.Assign(targets=[name(star, args.kwarg, store=True)], value=display,
                                           type_comment=None), args.kwarg))
        args.kwarg = None
    args.posonlyargs, args.args, args.kwonlyargs = [], params, []
    args.defaults, args.kw_defaults = [], []
    node.body = packing + node.body


def _param(id_: str, like: gast.AST) -> gast.Name:
    return gast.copy_location(gast.Name(id=id_, ctx=gast.Param(), annotation=None, type_comment=None), like)
