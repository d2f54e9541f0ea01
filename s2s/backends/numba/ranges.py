"""`reversed(range(a, b))` as `range(b - 1, a - 1, -1)`, and `reversed(range(a, b, s))` of a constant step s
as the range that counts back from its last item: Numba has no `reversed` over a range."""
from __future__ import annotations

import ast
import re

from s2s.backends.numba.lines import Source, calls, name_of, refuse


def reversed_range(node: ast.Call, text: str, line_map: dict) -> str:
    """`reversed(range(...))` as a range that counts down."""
    inner = node.args[0] if len(node.args) == 1 and not node.keywords else None
    if not (isinstance(inner, ast.Call) and isinstance(inner.func, ast.Name) and inner.func.id == "range"
            and 1 <= len(inner.args) <= 3 and not inner.keywords):
        raise refuse(f"`{ast.get_source_segment(text, node)}` (reversed() of something other than a range)",
                     line_map, node.lineno)
    parts = [ast.get_source_segment(text, a) for a in inner.args]
    if len(parts) == 3:
        return _stepped(parts, _constant(inner.args[2]), ast.get_source_segment(text, inner), text, node, line_map)
    start, stop = ("0", parts[0]) if len(parts) == 1 else parts
    return f"range({_minus_one(stop)}, {_minus_one(start)}, -1)"


def _constant(node: ast.expr) -> int | None:
    """The integer a literal step is (`3`, `-1`), or None."""
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        inner = _constant(node.operand)
        return -inner if inner is not None else None
    return node.value if isinstance(node, ast.Constant) and type(node.value) is int else None


def _stepped(parts: list[str], step: int | None, whole: str, text: str, node: ast.Call, line_map: dict) -> str:
    """reversed(range(a, b, s)) for a constant s: from the last item a + (n - 1) * s back to a."""
    if not step:
        raise refuse(f"`{ast.get_source_segment(text, node)}` (the step of the range is not a constant)",
                     line_map, node.lineno, hint="write the loop with a constant step (range(n - 2, -1, -1)), "
                                                 "or differentiate with backend='python' (the default)")
    start = parts[0] if parts[0].isidentifier() or re.fullmatch(r"-?\d+", parts[0]) else f"({parts[0]})"
    if step == 1:
        return f"range({_minus_one(parts[1])}, {_minus_one(parts[0])}, -1)"
    if step == -1:        # a, a - 1, ..., b + 1 reversed
        return f"range({_plus_one(parts[1])}, {_plus_one(parts[0])})"
    return f"range({start} + (len({whole}) - 1) * {step}, {start} - {step}, {-step})"


def _plus_one(expression: str) -> str:
    if re.fullmatch(r"-?\d+", expression):
        return str(int(expression) + 1)
    return f"{expression} + 1" if expression.isidentifier() else f"({expression}) + 1"


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
