"""A `functools.partial` made inside the function and only called: its calls call the function it wraps.

    f = functools.partial(act, a, kind=k)     ->   f_arg = a; f_kind = k
    y = f(x) + f(z, kind="tanh")                    y = act(f_arg, x, kind=f_kind) + act(f_arg, z, kind="tanh")

The arguments are evaluated where the partial is made, once, as Python does; a keyword given at the call
replaces the partial's, as it does in Python. Applies when the name is bound once (not a parameter), every read
of it is a call, and the wrapped function is named (a global or a name bound once in the function) or a lambda.
Anything else is left as it is (and refused later where s2s cannot name the callee).
"""
from __future__ import annotations

import functools
from typing import Any

import gast

from s2s.frontend.desugar.context import Context, located, map_statements, name
from s2s.frontend.tree import clone_tree


def _partial_made(ctx: Context, stmt: Any) -> tuple | None:
    """(the name, the call of functools.partial) of `f = functools.partial(g, ...)`, else None."""
    if not (isinstance(stmt, gast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], gast.Name)
            and isinstance(stmt.value, gast.Call) and stmt.value.args
            and not any(isinstance(a, gast.Starred) for a in stmt.value.args)
            and all(k.arg is not None for k in stmt.value.keywords)):
        return None
    return (stmt.targets[0].id, stmt.value) if ctx.names(stmt.value.func, functools.partial) else None


def applies(ctx: Context) -> bool:
    return ctx.calls_to(functools.partial)


def rewrite(ctx: Context) -> None:
    made: dict[str, tuple] = {}     # the partial's name -> (function node, argument nodes, {keyword: node})

    def statement(stmt: Any) -> list | None:
        found = _partial_made(ctx, stmt)
        if found is None or not _only_called(ctx, found[0]):
            return None
        target, call = found
        out: list = []
        function = call.args[0]
        if isinstance(function, gast.Lambda):          # lifted by `closures` as a function bound to a name
            lifted = ctx.fresh(f"{target}_fn")
            out.append(located(gast.Assign(targets=[name(lifted, stmt, store=True)], value=function,
                                           type_comment=None), stmt))
            function = name(lifted, function)
        elif not _named_once(ctx, function):
            return None

        def bound(value: Any, base: str) -> Any:
            if isinstance(value, gast.Constant):
                return value
            held = ctx.fresh(base)
            out.append(located(gast.Assign(targets=[name(held, value, store=True)], value=value, type_comment=None),
                               stmt))
            return name(held, value)
        args = [bound(a, f"{target}_arg") for a in call.args[1:]]
        keywords = {k.arg: bound(k.value, f"{target}_{k.arg}") for k in call.keywords}
        made[target] = (function, args, keywords)
        return out

    ctx.node.body = map_statements(ctx.node.body, statement)
    if not made:
        return

    class Calls(gast.NodeTransformer):
        def visit_Call(self, node: gast.Call) -> Any:
            self.generic_visit(node)
            if isinstance(node.func, gast.Name) and node.func.id in made:
                function, args, keywords = made[node.func.id]
                given = {k.arg for k in node.keywords}
                node.func = gast.copy_location(clone_tree(function), node.func)
                node.args = [clone_tree(a) for a in args] + node.args
                node.keywords = [located(gast.keyword(arg=k, value=clone_tree(v)), node)
                                 for k, v in keywords.items() if k not in given] + node.keywords
            return node
    ctx.node.body = [Calls().visit(stmt) for stmt in ctx.node.body]


def _only_called(ctx: Context, id_: str) -> bool:
    """Whether id_ is bound once in the function, not a parameter, and every read of it is a call's callee."""
    if ctx.assigned(id_) is False or id_ in {a.id for a in ctx.node.args.args + ctx.node.args.kwonlyargs}:
        return False
    stores = loads = called = 0
    for node in gast.walk(ctx.node):
        if isinstance(node, gast.Name) and node.id == id_:
            if isinstance(node.ctx, gast.Load):
                loads += 1
            else:
                stores += 1
        elif isinstance(node, gast.Call) and isinstance(node.func, gast.Name) and node.func.id == id_:
            called += 1
    return stores == 1 and loads == called


def _named_once(ctx: Context, node: Any) -> bool:
    """A global (or an attribute of one) known now, or a name the function binds once (a nested def)."""
    if isinstance(node, gast.Attribute):
        return ctx.static(node)[0]
    if not isinstance(node, gast.Name):
        return False
    if node.id not in ctx.local_names():
        return ctx.static(node)[0]
    return sum(1 for n in gast.walk(ctx.node) if isinstance(n, gast.Name) and n.id == node.id
               and not isinstance(n.ctx, gast.Load)) + sum(
        1 for n in gast.walk(ctx.node) if isinstance(n, gast.FunctionDef) and n.name == node.id) == 1
