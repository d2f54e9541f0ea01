"""A function chosen by a branch that runs when the code runs, then called:

    if np.any(np.iscomplex(params)):            if np.any(np.iscomplex(params)):
        gamma_ln = loggamma                         gamma_ln_first = True
    else:                               ->      else:
        gamma_ln = gammaln                          gamma_ln_first = False
    coeff = gamma_ln(size + endog)              coeff = loggamma(size + endog) if gamma_ln_first else gammaln(size + endog)

(statsmodels' negative binomial likelihoods). Only when each branch binds the name to a function known now, the
name is bound nowhere else, and it is only ever called: every call becomes the choice between the two calls,
each differentiated as itself (the one taken runs).
"""
from __future__ import annotations

from typing import Any

import gast

from s2s.frontend import parsing
from s2s.frontend.desugar.context import Context, constant, located, name
from s2s.frontend.tree import clone_tree


def applies(ctx: Context) -> bool:
    return gast.If in ctx.kinds


def rewrite(ctx: Context) -> None:
    for stmt in [n for n in parsing.walk(ctx.node) if type(n) is gast.If]:
        _choice(ctx, stmt)


def _bound_function(ctx: Context, body: list, target: str | None) -> tuple[str, Any, Any] | None:
    """(name, the assignment, the function) for the one `name = f` in body that binds a function known now."""
    found = [s for s in body if isinstance(s, gast.Assign) and len(s.targets) == 1
             and isinstance(s.targets[0], gast.Name) and (target is None or s.targets[0].id == target)]
    if len(found) != 1:
        return None
    stmt = found[0]
    known, fn = ctx.static(stmt.value)
    if not known or not callable(fn) or isinstance(fn, type):
        return None
    return stmt.targets[0].id, stmt, stmt.value


def _choice(ctx: Context, stmt: gast.If) -> None:
    first = _bound_function(ctx, stmt.body, None)
    if first is None or not stmt.orelse:
        return
    var = first[0]
    second = _bound_function(ctx, stmt.orelse, var)
    if second is None:
        return
    stores = [n for n in gast.walk(ctx.node) if isinstance(n, gast.Name) and n.id == var
              and not isinstance(n.ctx, gast.Load)]
    calls = [n for n in gast.walk(ctx.node) if isinstance(n, gast.Call) and isinstance(n.func, gast.Name)
             and n.func.id == var]
    loads = [n for n in gast.walk(ctx.node) if isinstance(n, gast.Name) and n.id == var
             and isinstance(n.ctx, gast.Load)]
    if len(stores) != 2 or not calls or len(loads) != len(calls):
        return
    flag = ctx.fresh(f"{var}_first")
    for (_, assign, _), value in ((first, True), (second, False)):
        assign.targets = [name(flag, assign, store=True)]
        assign.value = constant(value, assign.value)
    functions = (first[2], second[2])

    class Calls(gast.NodeTransformer):
        def visit_Call(self, node: gast.Call) -> Any:
            self.generic_visit(node)
            if not (isinstance(node.func, gast.Name) and node.func.id == var):
                return node
            made = []
            for fn in functions:
                call = clone_tree(node)
                call.func = clone_tree(fn)
                made.append(call)
            return located(gast.IfExp(test=name(flag, node), body=made[0], orelse=made[1]), node)
    Calls().visit(ctx.node)
