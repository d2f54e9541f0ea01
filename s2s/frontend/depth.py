"""Deep expressions: room on the stack while a derivative is made, and one clear error beyond it.

The front end, lowering and the emitter walk an expression recursively, two or three Python frames per level of
nesting. Python itself compiles an expression nested up to about three times its recursion limit (a 2,900-term
product `x*x*...*x` at the default limit of 1,000), so at that limit s2s would fail on code Python runs, with a
raw RecursionError. `room(fn)` is the context in which a derivative is made: it raises the recursion limit by
`ROOM` frames (enough for every expression Python compiles at its default limit; frames of Python calls take no C
stack in CPython 3.11+), and puts the limit back when the last thread inside leaves. A RecursionError inside
becomes one `UnsupportedSyntax` naming the deepest expression of fn and its place (`deepest`), with the fix.
"""
from __future__ import annotations

import ast
import contextlib
import linecache
import os
import sys
import threading
from typing import Any, Iterator

from s2s.errors import UnsupportedSyntax
from s2s.ir.core import Loc

ROOM = 12_000        # frames added to the recursion limit while a derivative is made
_NOTED = 100         # a RecursionError with no expression nested deeper than this is not about depth: re-raised

_lock = threading.Lock()
_inside = 0          # threads inside room()
_raised: tuple[int, int] | None = None       # (the limit before, the limit set) while one is


def _after_fork_in_child() -> None:
    """The thread that forked is the only one in the child: the others' entries are gone with them."""
    global _lock, _inside, _raised
    _lock = threading.Lock()
    if _inside and _raised is not None and sys.getrecursionlimit() == _raised[1]:
        sys.setrecursionlimit(_raised[0])
    _inside, _raised = 0, None


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)


@contextlib.contextmanager
def room(fn: Any = None) -> Iterator[None]:
    """Make a derivative of fn inside: deep expressions fit; a RecursionError is one error at fn's deepest
    expression."""
    global _inside, _raised
    with _lock:
        if _inside == 0:
            before = sys.getrecursionlimit()
            _raised = (before, before + ROOM)
            sys.setrecursionlimit(before + ROOM)
        _inside += 1
    try:
        yield
    except RecursionError as exc:
        refusal = _refusal(fn)
        if refusal is None:
            raise
        raise refusal from exc
    finally:
        with _lock:
            _inside -= 1
            if _inside == 0 and _raised is not None:
                if sys.getrecursionlimit() == _raised[1]:      # (not if the user set one since)
                    sys.setrecursionlimit(_raised[0])
                _raised = None


def _refusal(fn: Any) -> UnsupportedSyntax | None:
    found = deepest(fn)
    if found is None or found[0] <= _NOTED:
        return None
    depth, loc = found
    return UnsupportedSyntax(
        f"an expression nested {depth} deep: s2s reads expressions nested up to about {_levels()} deep",
        loc, hint="split it into statements (t = x * x * ... ; y = t * ...), or raise sys.setrecursionlimit")


def _levels() -> int:
    """The deepest nesting s2s reads, at the recursion limit as it is (outside room())."""
    limit = sys.getrecursionlimit() - (ROOM if _raised is not None else 0)
    return (limit + ROOM) // 4


def deepest(fn: Any) -> tuple[int, Loc] | None:
    """(how deep, where) the deepest-nested expression of fn's source is; None when its source is not read."""
    fn = getattr(fn, "__func__", fn)
    while hasattr(fn, "__s2s__"):
        fn = fn.__s2s__[0]
    code = getattr(fn, "__code__", None)
    if code is None:
        return None
    filename = code.co_filename
    lines = linecache.getlines(filename)
    if not lines:
        return None
    first = code.co_firstlineno
    last = max((line for _, _, line in code.co_lines() if line is not None), default=first)
    try:
        tree = ast.parse("".join(lines))
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    best: tuple[int, Any] = (0, None)       # the depth, and the outermost expression of the deepest chain
    stack: list[tuple[Any, int, Any]] = [(tree, 0, None)]
    while stack:                     # (iteratively: the tree is too deep to walk by recursion)
        node, depth, top = stack.pop()
        inside = isinstance(node, ast.expr) and first <= getattr(node, "lineno", 0) <= last
        if inside:
            depth, top = depth + 1, top or node
            if depth > best[0]:
                best = (depth, top)
        else:
            depth, top = 0, None
        stack.extend((child, depth, top) for child in ast.iter_child_nodes(node))
    if best[1] is None:
        return None
    node = best[1]
    text = lines[node.lineno - 1] if node.lineno <= len(lines) else ""
    return best[0], Loc(filename, node.lineno, node.col_offset, text)
