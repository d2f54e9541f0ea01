"""`import` inside the function: the module (or the object imported from it) is imported when the derivative is
made, the statement goes, and each use of the name it binds holds that object, as a module-level import would:

    import scipy.stats as st          ->   (removed)
    return st.norm.logpdf(x)          ->   return <scipy.stats>.norm.logpdf(x)

Relative imports, `from m import *` and a name the function also assigns are left for the fence to refuse.
"""
from __future__ import annotations

import importlib
from typing import Any

import gast

from s2s.frontend.desugar.context import Context, constant


def applies(ctx: Context) -> bool:
    return gast.Import in ctx.kinds or gast.ImportFrom in ctx.kinds


def rewrite(ctx: Context) -> None:
    statements = [n for n in gast.walk(ctx.node) if isinstance(n, (gast.Import, gast.ImportFrom))]
    if not statements:
        return
    bound: dict[str, Any] = {}
    removed = set()
    for stmt in statements:
        names = _imported(stmt)
        if names is None or any(name in ctx.local_names() or name in bound for name in names):
            continue
        bound.update(names)
        removed.add(id(stmt))

    class Replace(gast.NodeTransformer):
        def visit_Name(self, node: gast.Name) -> Any:
            if node.id in bound and isinstance(node.ctx, gast.Load):
                return constant(bound[node.id], node)
            return node

        def generic_visit(self, node: Any) -> Any:
            for field in ("body", "orelse", "finalbody"):
                block = getattr(node, field, None)
                if isinstance(block, list):
                    kept = [s for s in block if id(s) not in removed]
                    setattr(node, field, kept or [gast.Pass()])
            return super().generic_visit(node)
    Replace().visit(ctx.node)


def _imported(stmt: Any) -> dict[str, Any] | None:
    """The names an import binds and their objects, or None when it is not one s2s reads now."""
    try:
        if isinstance(stmt, gast.Import):
            out = {}
            for alias in stmt.names:
                module = importlib.import_module(alias.name)
                if alias.asname:
                    out[alias.asname] = module
                else:
                    out[alias.name.split(".")[0]] = importlib.import_module(alias.name.split(".")[0])
            return out
        if stmt.level or any(alias.name == "*" for alias in stmt.names):
            return None
        module = importlib.import_module(stmt.module)
        out = {}
        for alias in stmt.names:
            if hasattr(module, alias.name):
                out[alias.asname or alias.name] = getattr(module, alias.name)
            else:
                out[alias.asname or alias.name] = importlib.import_module(f"{stmt.module}.{alias.name}")
        return out
    except ImportError:
        return None
