"""`reversed(range(a, b))` as `range(b - 1, a - 1, -1)`: Numba has no `reversed` over a range."""
from __future__ import annotations

import ast
import re

from .lines import Source, calls, name_of, refuse


def reversed_range(node: ast.Call, text: str, line_map: dict) -> str:
    """`reversed(range(...))` as a range that counts down."""
    inner = node.args[0] if len(node.args) == 1 and not node.keywords else None
    if not (isinstance(inner, ast.Call) and isinstance(inner.func, ast.Name) and inner.func.id == "range"
            and 1 <= len(inner.args) <= 2 and not inner.keywords):
        raise refuse(f"`{ast.get_source_segment(text, node)}` (reversed() of something other than a range "
                      f"with step 1)", line_map, node.lineno)
    parts = [ast.get_source_segment(text, a) for a in inner.args]
    start, stop = ("0", parts[0]) if len(parts) == 1 else parts
    return f"range({_minus_one(stop)}, {_minus_one(start)}, -1)"


def _minus_one(expression: str) -> str:
    if re.fullmatch(r"-?\d+", expression):
        return str(int(expression) - 1)
    return f"{expression} - 1" if expression.isidentifier() else f"({expression}) - 1"


def count_down(main: ast.FunctionDef, source: str, edits: Source, line_map: dict) -> None:
    """Every `reversed(range(...))` of main rewritten in place."""
    for call in calls(main):
        if name_of(call.func) == "reversed":
            line = edits.lines[call.lineno - 1]
            segment = ast.get_source_segment(source, call)
            if call.lineno != call.end_lineno or line.count(segment) != 1:
                raise refuse(f"`{segment}` over several lines", line_map, call.lineno)
            edits.replace(call.lineno, line.replace(segment, reversed_range(call, source, line_map)))
