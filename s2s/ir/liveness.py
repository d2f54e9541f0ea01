"""Whether a variable is read again after a statement: the names a write into a shared object cannot be seen through.

Lowering refuses a write into an array that another variable may also name (`Lowerer.writable`, the checks of
`x += v`): Python would show the write through the other name, and the IR does not. When the other name is never
read again before it is bound anew, nothing can see the difference, and the write is followed exactly:

    for k in range(n):
        a[0] = a[0] * 0.5 + b[1]    # from the second iteration on, b is a: but b is not read after this
        b = a

Accepts a function's desugared gast tree (what lowering reads). Guarantees: `dead_after(name, node)` is True only
if, on every path from the statement holding node (once that statement has run), `name` is bound anew before it
is read, or the function returns first. It is conservative everywhere else (False): a read anywhere in a loop the
path may run, in a `try`, in a nested function or class, a `break` or `continue` before the name is bound again,
a `global`/`nonlocal`/`del` of the name, or a statement whose order of evaluation around the write is not plain
(the write inside an expression that reads the name too).
"""
from __future__ import annotations

from typing import Any

import gast

from s2s.frontend import parsing

READ, BOUND, OPEN = "read", "bound", "open"
_LOOPS = (gast.For, gast.While, gast.AsyncFor)


class Liveness:
    def __init__(self, root: Any, range_is_builtin: bool = True) -> None:
        self.root = root
        self.range_is_builtin = range_is_builtin        # (no variable of the function, global or closure `range`)
        self._parents: dict[int, Any] | None = None
        self._captured: set[str] | None = None      # names a nested function, lambda or class reads

    def parents(self) -> dict[int, Any]:
        if self._parents is None:
            self._parents = {}
            for node in parsing.walk(self.root):
                for child in gast.iter_child_nodes(node):
                    self._parents[id(child)] = node
            self._captured = set()
            for node in parsing.walk(self.root):
                if node is not self.root and isinstance(node, (gast.FunctionDef, gast.AsyncFunctionDef,
                                                               gast.Lambda, gast.ClassDef)):
                    self._captured |= {n.id for n in parsing.walk(node) if type(n) is gast.Name}
        return self._parents

    def dead_after(self, name: str, node: Any) -> bool:
        parents = self.parents()
        if name in self._captured:
            return False
        stmt = node
        while stmt is not None and not isinstance(stmt, gast.stmt):
            stmt = parents.get(id(stmt))
        if stmt is None or not self.write_is_last(stmt, node, name):
            return False
        above = parents.get(id(stmt))
        while above is not None:
            if isinstance(above, gast.Try):     # (an exception may reach a handler that reads it)
                return False
            above = parents.get(id(above))
        while True:
            parent = parents.get(id(stmt))
            if parent is None:
                return False
            block = _block_of(parent, stmt)
            if block is None:           # (a statement in an expression's position: not met)
                return False
            found = self.scan(block[block.index(stmt) + 1:], name)
            if found == READ:
                return False
            if found == BOUND:
                return True
            if parent is self.root:
                return True             # the function ends: its variables are gone
            if not isinstance(parent, (gast.If, gast.With, *_LOOPS)):
                return False
            if isinstance(parent, _LOOPS) and block is parent.body:
                # the next iteration (the test first), then whatever follows the loop
                if isinstance(parent, gast.While) and _reads(parent.test, name):
                    return False
                if self.scan(parent.body, name) == READ:
                    return False
                if parent.orelse:
                    return False
            stmt = parent

    @staticmethod
    def write_is_last(stmt: Any, node: Any, name: str) -> bool:
        """Whether every read of name in stmt comes before the write node makes (`a[i] = v`, `a[i] += v`,
        `x += v`: the right side and the index are evaluated first)."""
        if not _reads(stmt, name):
            return True
        if isinstance(stmt, gast.AugAssign):
            return True
        if isinstance(stmt, gast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], gast.Subscript) \
                and isinstance(stmt.targets[0].value, gast.Name) and stmt.targets[0].value is node:
            return True
        return False

    def scan(self, stmts: list, name: str) -> str:
        """READ if some path through stmts may read name before binding it, BOUND if every path binds it first (or
        leaves the function), OPEN otherwise (it falls through, name unread and maybe unbound)."""
        for stmt in stmts:
            found = self.scan_one(stmt, name)
            if found != OPEN:
                return found
        return OPEN

    def scan_one(self, stmt: Any, name: str) -> str:
        if isinstance(stmt, gast.Assign):
            if _reads(stmt.value, name) or any(_reads(t, name) for t in stmt.targets):
                return READ
            return BOUND if any(_binds(t, name) for t in stmt.targets) else OPEN
        if isinstance(stmt, gast.AnnAssign):
            if stmt.value is None:
                return READ if _mentions(stmt, name) else OPEN
            if _reads(stmt.value, name) or _reads(stmt.target, name):
                return READ
            return BOUND if _binds(stmt.target, name) else OPEN
        if isinstance(stmt, (gast.Return, gast.Raise)):      # (no `try` around the write: the function ends)
            return READ if _reads(stmt, name) else BOUND
        if isinstance(stmt, gast.If):
            if _reads(stmt.test, name):
                return READ
            found = (self.scan(stmt.body, name), self.scan(stmt.orelse, name))
            if READ in found:
                return READ
            return BOUND if found == (BOUND, BOUND) else OPEN
        if isinstance(stmt, gast.For) and self.range_is_builtin and range_length(stmt) == 0 \
                and not _mentions(stmt.iter, name):
            return OPEN                 # `for i in range(0)`: its body never runs
        if isinstance(stmt, gast.For) and self.range_is_builtin and _runs(stmt) and not _reads(stmt.iter, name) \
                and not _mentions(stmt.target, name) and not stmt.orelse:
            # `for j in range(2)`: its first iteration runs the body from its start (then, if the name is unread
            # and maybe unbound there, the rest of it is read like any loop)
            found = self.scan(stmt.body, name)
            if found != OPEN:
                return found
        if isinstance(stmt, (gast.Break, gast.Continue)):
            return READ                 # (goes elsewhere: not followed)
        if isinstance(stmt, (gast.Expr, gast.Assert, gast.Pass)):
            return READ if _mentions(stmt, name) else OPEN
        # loops (which may run no iteration), with, try, del, global, nested definitions: unread or read
        return READ if _mentions(stmt, name) or _jumps(stmt) else OPEN


def range_length(loop: Any) -> int | None:
    """How many iterations a `for` over `range` of number literals runs (`range(2)`, `range(1, 3)`); None for any
    other loop. (The caller checks that `range` is the builtin.)"""
    call = loop.iter if isinstance(loop, gast.For) else None
    if not (isinstance(call, gast.Call) and isinstance(call.func, gast.Name) and call.func.id == "range"
            and not call.keywords and 1 <= len(call.args) <= 2):
        return None
    if not all(isinstance(a, gast.Constant) and type(a.value) is int for a in call.args):
        return None
    return len(range(*(a.value for a in call.args)))


def _runs(loop: Any) -> bool:
    """Whether a `for` over `range` of number literals runs its body at least once."""
    return (range_length(loop) or 0) > 0


def _block_of(parent: Any, stmt: Any) -> list | None:
    for field in ("body", "orelse", "finalbody"):
        block = getattr(parent, field, None)
        if isinstance(block, list) and any(s is stmt for s in block):
            return block
    return None


def _names(node: Any, name: str) -> list:
    return [n for n in parsing.walk(node) if type(n) is gast.Name and n.id == name]


def _reads(node: Any, name: str) -> bool:
    return any(not isinstance(n.ctx, gast.Store) for n in _names(node, name))


def _mentions(node: Any, name: str) -> bool:
    return bool(_names(node, name)) or any(isinstance(n, (gast.Global, gast.Nonlocal)) and name in n.names
                                           for n in parsing.walk(node))


def _binds(target: Any, name: str) -> bool:
    if isinstance(target, gast.Name):
        return target.id == name
    if isinstance(target, (gast.Tuple, gast.List)):
        return any(_binds(t, name) for t in target.elts)
    return False


def _jumps(stmt: Any) -> bool:
    """A break or continue in stmt that leaves it (not one of a loop inside it)."""
    def visit(node: Any) -> bool:
        if isinstance(node, (gast.Break, gast.Continue)):
            return True
        if isinstance(node, _LOOPS) or isinstance(node, (gast.FunctionDef, gast.AsyncFunctionDef, gast.ClassDef)):
            return any(visit(s) for s in node.orelse) if isinstance(node, _LOOPS) else False
        return any(visit(c) for c in gast.iter_child_nodes(node) if isinstance(c, gast.stmt))
    return any(visit(c) for c in gast.iter_child_nodes(stmt) if isinstance(c, gast.stmt)) \
        if not isinstance(stmt, _LOOPS) else any(visit(s) for s in stmt.orelse)
