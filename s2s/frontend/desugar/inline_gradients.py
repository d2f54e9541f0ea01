"""A gradient made inside the differentiated function, the JAX way: `g = s2s.grad(loss)(w, X, y)`.

When what `s2s.grad(...)` is given is known when the derivative is made (a function named by a global or closure
name, constant options), the gradient is made then, once, and the call is a call of it (`derivatives`: an operation
whose rules are the gradient's own derivatives), as `dloss = s2s.grad(loss)` at module level is. The name it reads
is watched: rebound, the derivative is made anew. Otherwise (`s2s.grad(lambda u: ...)` reading the function's
variables) the call is refused here, with the rewrite that works.
"""
from __future__ import annotations

from typing import Any

import gast

from s2s.frontend.desugar.context import Context, calls_in_order, constant


def _maker(ctx: Context, node: Any) -> Any:
    """s2s.grad or s2s.value_and_grad (marked `__s2s_maker__` by s2s/api.py) when node calls one of them, else None."""
    if not isinstance(node, gast.Call):
        return None
    found, fn = ctx.static(node.func)
    return fn if found and getattr(fn, "__s2s_maker__", False) is True else None


def _literal(ctx: Context, node: Any) -> tuple[bool, Any]:
    """(True, value) when node's value is known now: ctx.static's, or a tuple or list of them (in_axes=(None, 0))."""
    if isinstance(node, (gast.Tuple, gast.List)):
        items = [_literal(ctx, e) for e in node.elts]
        if all(found for found, _ in items):
            values = [v for _, v in items]
            return True, tuple(values) if isinstance(node, gast.Tuple) else values
        return False, None
    if isinstance(node, gast.Dict) and all(k is not None for k in node.keys):
        keys, values = [_literal(ctx, k) for k in node.keys], [_literal(ctx, v) for v in node.values]
        if all(found for found, _ in keys + values):
            return True, {k: v for (_, k), (_, v) in zip(keys, values)}
        return False, None
    return ctx.static(node)


def applies(ctx: Context) -> bool:
    return ctx.any_call(lambda call: _maker(ctx, call.func) is not None)


def rewrite(ctx: Context) -> None:
    for call, _, _ in calls_in_order(ctx.node.body):
        maker = _maker(ctx, call.func)
        if maker is None:
            continue
        inner = call.func
        parts = list(inner.args) + [k.value for k in inner.keywords]
        known = [_literal(ctx, p) for p in parts]
        if any(isinstance(a, gast.Starred) for a in inner.args) or any(k.arg is None for k in inner.keywords) \
                or not all(found for found, _ in known):
            raise ctx.error(f"s2s differentiates a gradient (or a batched function) made inside the function only when what "
                            f"s2s.{maker.__name__}(...) is given is known when the derivative is made", inner,
                            hint="make the gradient once, at module level (dloss = s2s.grad(loss)), and call it "
                                 "here; pass the values the function reads as its arguments")
        values = [value for _, value in known]
        for p in parts:                  # a global or closure name read: watched (rebound, made anew)
            if isinstance(p, gast.Name) and p.id not in ctx.local_names():
                ctx.parsed.attributes.setdefault((id(ctx.parsed.fn), p.id),
                                                 (ctx.parsed.fn, p.id, ctx.parsed.resolve(p.id)[1]))
        made = maker(*values[:len(inner.args)], **dict(zip((k.arg for k in inner.keywords),
                                                           values[len(inner.args):])))
        call.func = gast.copy_location(constant(made, inner), inner)
