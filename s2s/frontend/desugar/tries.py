"""`try` statements, prepared for lowering (s2s/ir/lower_try.py), which reads them as a branch decided while the
body runs.

Runs first of the rewrites, on the tree as the user wrote it:

- each `try` keeps a copy of its body as written (`node.s2s_probe`), before any other rewrite changes it: the
  derivative runs that copy, as Python would, to find how the body ends (completed, or which exception it raised);
- `node.s2s_locals`: the function's own variables (its parameters, the names it binds and the functions and classes
  it defines), as Python sees them;
- a bare `raise` in a handler re-raises the exception the handler caught, by a name:

      except KeyError:        ->   except KeyError as error:
          raise                        raise error

- with a `finally`, a `raise` in a handler or in `else` runs the `finally` block first, as Python does:

      raise ValueError(m)     ->   raised = ValueError(m); <finally block>; raise raised

A `try` nested in another is prepared too (its copy is of its own body as written).
"""
from __future__ import annotations

from typing import Any

import gast

from s2s.frontend.desugar.context import Context, located, name
from s2s.frontend.tree import clone_tree


def applies(ctx: Context) -> bool:
    return gast.Try in ctx.kinds


def rewrite(ctx: Context) -> None:
    defined = _defined_inside(ctx.node)
    local_names = frozenset(ctx.local_names()) | defined
    for node in list(gast.walk(ctx.node)):
        if isinstance(node, gast.Try) and not hasattr(node, "s2s_probe"):
            node.s2s_probe = clone_tree(node.body)
            node.s2s_locals = local_names
            node.s2s_defined = defined
    for node in list(gast.walk(ctx.node)):
        if isinstance(node, gast.Try) and not getattr(node, "s2s_prepared", False):
            node.s2s_prepared = True        # (a nested function's tree is read again when it is lifted)
            for handler in node.handlers:
                _name_reraise(ctx, handler)
            if node.finalbody:
                for handler in node.handlers:
                    handler.body = _finally_before_raise(ctx, handler.body, node.finalbody)
                node.orelse = _finally_before_raise(ctx, node.orelse, node.finalbody)


def _defined_inside(fn: Any) -> frozenset:
    """The functions and classes fn's own scope defines (`def g(t): ...` in its body): variables of fn, which the
    body of a `try` as written cannot be given (lifted by the closures rewrite, they hold no value there)."""
    found, stack = set(), list(fn.body)
    while stack:
        node = stack.pop()
        if isinstance(node, (gast.FunctionDef, gast.AsyncFunctionDef, gast.ClassDef)):
            found.add(node.name)
            continue
        if isinstance(node, gast.Lambda):
            continue
        stack.extend(gast.iter_child_nodes(node))
    return frozenset(found)


def _name_reraise(ctx: Context, handler: gast.ExceptHandler) -> None:
    """A bare `raise` in handler (not in a handler nested in it, which re-raises its own) re-raises by name."""
    bare = [r for r in _own_statements(handler.body, gast.Raise) if r.exc is None]
    if not bare:
        return
    if handler.name is None:
        handler.name = name(ctx.fresh("error"), handler, store=True)
    for r in bare:
        r.exc = name(handler.name.id, r)


def _own_statements(body: list, kind: type) -> list:
    """The statements of kind in body and its blocks, not in nested functions nor in nested handlers."""
    found, stack = [], list(body)
    while stack:
        stmt = stack.pop()
        if isinstance(stmt, kind):
            found.append(stmt)
        if isinstance(stmt, (gast.FunctionDef, gast.AsyncFunctionDef, gast.ClassDef)):
            continue
        for field in ("body", "orelse", "finalbody"):
            stack.extend(getattr(stmt, field, None) or [])
        if isinstance(stmt, gast.Try):
            continue              # (its handlers re-raise what they caught)
    return found


def _finally_before_raise(ctx: Context, body: list, finalbody: list) -> list:
    """body with finalbody run before each of its own `raise` statements (the exception evaluated first)."""
    out: list = []
    for stmt in body:
        if isinstance(stmt, gast.Raise) and stmt.exc is not None:
            raised = ctx.fresh("raised")
            out.append(located(gast.Assign(targets=[name(raised, stmt, store=True)], value=stmt.exc,
                                           type_comment=None), stmt))
            out.extend(clone_tree(finalbody))
            stmt.exc = name(raised, stmt)
            out.append(stmt)
            continue
        if not isinstance(stmt, (gast.FunctionDef, gast.AsyncFunctionDef, gast.ClassDef, gast.Try)):
            for field in ("body", "orelse"):
                inner = getattr(stmt, field, None)
                if isinstance(inner, list) and inner and isinstance(inner[0], gast.stmt):
                    setattr(stmt, field, _finally_before_raise(ctx, inner, finalbody))
        out.append(stmt)
    return out


def probe_body(node: Any) -> list | None:
    """The body of a `try` as the user wrote it (None for one the desugaring did not prepare)."""
    return getattr(node, "s2s_probe", None)
