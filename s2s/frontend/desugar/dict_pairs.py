"""`dict(...)` of a `zip` or `enumerate`: the dict comprehension it is, made before comprehensions are loops.

    dict(zip(keys, values))         ->      {k: v for k, v in zip(keys, values)}
    dict(enumerate(xs))             ->      {k: v for k, v in enumerate(xs)}

Python builds the dict from the pairs in order, a later key replacing an earlier one, as the comprehension does;
lowering then follows each item as it follows `d[k] = v`. `dict` of anything else (a mapping, keywords, a list of
pairs) is left as it is.
"""
from __future__ import annotations

import builtins
from typing import Any

import gast

from s2s.frontend.desugar.context import Context, located, name


def applies(ctx: Context) -> bool:
    return ctx.any_call(lambda call: _pairs(ctx, call) is not None)


def rewrite(ctx: Context) -> None:
    for sub in list(gast.walk(ctx.node)):
        for field, value in gast.iter_fields(sub):
            if isinstance(value, list):
                for i, item in enumerate(value):
                    if isinstance(item, gast.Call) and _pairs(ctx, item) is not None:
                        value[i] = _comprehension(ctx, item)
            elif isinstance(value, gast.Call) and _pairs(ctx, value) is not None:
                setattr(sub, field, _comprehension(ctx, value))


def _pairs(ctx: Context, call: gast.Call) -> Any:
    """The zip or enumerate call `dict(...)` is given, else None."""
    if not (ctx.names(call.func, builtins.dict) and len(call.args) == 1 and not call.keywords):
        return None
    inner = call.args[0]
    if isinstance(inner, gast.Call) and not any(isinstance(a, gast.Starred) for a in inner.args) and (
            ctx.names(inner.func, builtins.zip) and len(inner.args) == 2 and not inner.keywords
            or ctx.names(inner.func, builtins.enumerate) and len(inner.args) >= 1):
        return inner
    return None


def _comprehension(ctx: Context, call: gast.Call) -> gast.DictComp:
    pairs = _pairs(ctx, call)
    key, value = ctx.fresh("key"), ctx.fresh("item")
    target = located(gast.Tuple(elts=[name(key, call, store=True), name(value, call, store=True)],
                                ctx=gast.Store()), call)
    loop = gast.comprehension(target=target, iter=pairs, ifs=[], is_async=0)
    return located(gast.DictComp(key=name(key, call), value=name(value, call), generators=[loop]), call)
