"""Reading the emitted module for the Numba rewrites: its lines as edits (replaced or dropped, each keeping its
original number so that the comments quoting the user's code and the line map survive), and the few questions
the rewrites ask of its syntax tree (accumulations, stacks, whether a value is read again)."""
from __future__ import annotations

import ast
from typing import Any

from s2s.backends.numba.dispatchers import NumbaUnsupported
from s2s.backends.numba.dispatchers import refuse as refuse_at


class Source:
    """The emitted module as lines that can be replaced or dropped, each remembering its original number."""

    def __init__(self, text: str):
        self.lines: list[str | None] = text.split("\n")

    def replace(self, lineno: int, text: str) -> None:
        self.lines[lineno - 1] = text

    def drop(self, lineno: int) -> None:
        self.lines[lineno - 1] = None


def indent(line: str) -> str:
    return line[:len(line) - len(line.lstrip())]


def refuse(message: str, line_map: dict, lineno: int, hint: str = "") -> NumbaUnsupported:
    """dispatchers.refuse at the user's place of a generated line."""
    return refuse_at(message, line_map.get(lineno), hint)


def calls(tree: ast.AST) -> list[ast.Call]:
    return [n for n in ast.walk(tree) if isinstance(n, ast.Call)]


def name_of(node: ast.AST) -> str | None:
    return node.id if isinstance(node, ast.Name) else None


def accumulation(stmt: ast.stmt, target: str) -> str | None:
    """The name added to target by `target = target + X`, `target = X + target` or `target += X`."""
    added = accumulated(stmt, target)
    return name_of(added) if added is not None else None


def accumulated(stmt: ast.stmt, target: str) -> ast.expr | None:
    """The expression added to target by `target = target + X`, `target = X + target` or `target += X`."""
    if isinstance(stmt, ast.AugAssign) and name_of(stmt.target) == target and isinstance(stmt.op, ast.Add):
        return stmt.value
    if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and name_of(stmt.targets[0]) == target \
            and isinstance(stmt.value, ast.BinOp) and isinstance(stmt.value.op, ast.Add):
        if name_of(stmt.value.left) == target:
            return stmt.value.right
        if name_of(stmt.value.right) == target:
            return stmt.value.left
    return None


def stack_of(stmt: ast.stmt, method: str) -> str | None:
    """The stack of `x = s.pop()` (method "pop") or `s.append(x)` (method "append")."""
    call = stmt.value if isinstance(stmt, (ast.Assign, ast.Expr)) else None
    if isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute) and call.func.attr == method \
            and isinstance(call.func.value, ast.Name):
        if method == "pop" and not (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1
                                    and isinstance(stmt.targets[0], ast.Name)):
            return None
        return call.func.value.id
    return None


def blocks(fn: ast.FunctionDef) -> list[tuple[list[ast.stmt], ast.stmt | None]]:
    """Every statement list of fn, with the loop whose body it is (None for other bodies and else-branches)."""
    found: list[tuple[list[ast.stmt], ast.stmt | None]] = []
    for node in ast.walk(fn):
        if isinstance(getattr(node, "body", None), list):
            found.append((node.body, node if isinstance(node, (ast.For, ast.While)) else None))
    return found + [(node.orelse, None) for node in ast.walk(fn) if isinstance(getattr(node, "orelse", None), list)]


def _reads(node: ast.AST, name: str) -> bool:
    return any(isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Load) for n in ast.walk(node))


def first_use(stmts: list[ast.stmt], name: str) -> str | None:
    """What running stmts does first with name's value: "read", "write" (rebinds it unread, or returns
    without reading it), or None (neither, on some path). Loops may run no iteration; statements this does
    not follow count as reads."""
    for stmt in stmts:
        if isinstance(stmt, ast.Return):
            return "read" if stmt.value is not None and _reads(stmt.value, name) else "write"
        if isinstance(stmt, (ast.For, ast.While)):
            head = stmt.iter if isinstance(stmt, ast.For) else stmt.test
            if _reads(head, name) or first_use(stmt.body, name) == "read" or first_use(stmt.orelse, name) == "read":
                return "read"
            if isinstance(stmt, ast.For) and any(isinstance(n, ast.Name) and n.id == name
                                                 for n in ast.walk(stmt.target)):
                return "read"           # the loop variable itself: left alone
            continue
        if isinstance(stmt, ast.If):
            if _reads(stmt.test, name):
                return "read"
            branches = [first_use(stmt.body, name), first_use(stmt.orelse, name)]
            if "read" in branches:
                return "read"
            if branches == ["write", "write"]:
                return "write"
            continue
        if not isinstance(stmt, (ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Expr, ast.Pass)):
            return "read"
        if _reads(stmt, name) or isinstance(stmt, ast.AugAssign) and name_of(stmt.target) == name:
            return "read"
        if any(isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Store) for n in ast.walk(stmt)):
            return "write"
    return None


def dead_at(fn: ast.FunctionDef, block: list[ast.stmt], loop: ast.stmt | None, k: int, name: str) -> bool:
    """Whether the value name holds after block[k] is never read, on any path: rebound unread in the rest of
    the block, in the next iteration of the loops around it, or after them."""
    parents = {id(b): (node, field) for node in ast.walk(fn) for field in ("body", "orelse")
               for b in [getattr(node, field, None)] if isinstance(b, list)}
    where = {id(s): (b, i) for node in ast.walk(fn) for field in ("body", "orelse")
             for b in [getattr(node, field, None)] if isinstance(b, list) for i, s in enumerate(b)}
    stmts, at = block, k
    while True:
        found = first_use(stmts[at + 1:], name)
        if found is not None:
            return found == "write"
        node, field = parents[id(stmts)]
        if node is fn:
            return True
        if isinstance(node, (ast.For, ast.While)) and field == "body":     # the next iteration, then the exit
            head = node.test if isinstance(node, ast.While) else None
            if head is not None and _reads(head, name) or first_use(node.body, name) == "read":
                return False
            if first_use(node.orelse, name) == "read":
                return False
        stmts, at = where[id(node)]
