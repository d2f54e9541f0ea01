"""The stacks of the forward sweep pushed once per iteration of a loop whose trip count is known before it runs,
as arrays allocated before that loop (Numba's lists grow by reallocation). (Stacks nothing reads were dropped
from the IR: s2s/passes/optimize.py's eliminate_dead_stacks.)"""
from __future__ import annotations

import ast

from s2s.backends.numba.lines import Source, calls, indent, name_of, stack_of
from s2s.backends.numba.typed import DTYPES, Types, array_type, element_type


def trip_count(loop: ast.For, text: str) -> str | None:
    """The number of iterations of `for v in range(a[, b])` or `for v in xs`, as an expression evaluated
    before the loop; None for other loops."""
    it = loop.iter
    if isinstance(it, ast.Name):
        return f"len({it.id})"
    if isinstance(it, ast.Call) and name_of(it.func) == "range" and len(it.args) == 1 and not it.keywords \
            and isinstance(it.args[0], ast.Call) and name_of(it.args[0].func) == "len":
        return ast.get_source_segment(text, it.args[0])
    if isinstance(it, ast.Call) and name_of(it.func) == "range" and not it.keywords and 1 <= len(it.args) <= 2 \
            and all(isinstance(a, (ast.Name, ast.Constant)) for a in it.args):
        parts = [ast.get_source_segment(text, a) for a in it.args]
        return parts[0] if len(parts) == 1 else f"{parts[1]} - {parts[0]}"
    return None


def preallocate(fn: ast.FunctionDef, text: str, source: Source, types: Types) -> None:
    """Stacks pushed once per iteration of a loop whose trip count is known before it runs become arrays
    allocated before that loop, with a counter: `x_stack[x_stack_top] = x; x_stack_top += 1` and
    `x_stack_top -= 1; x = x_stack[x_stack_top]` (Numba's lists grow by reallocation). A stack of numbers is
    1-D; a stack of arrays has a row per push, its rows shaped at the first push (every later push is checked
    to have that shape: NumPy would broadcast a smaller one silently)."""
    taken = {n.id for n in ast.walk(fn) if isinstance(n, ast.Name)}
    for top in fn.body:
        if not isinstance(top, ast.For) or top.orelse:
            continue
        trip = trip_count(top, text)
        if trip is None:
            continue
        pushed = [s for s in top.body if stack_of(s, "append")]
        counts: dict[str, int] = {}
        for stmt in pushed:
            counts[stack_of(stmt, "append")] = counts.get(stack_of(stmt, "append"), 0) + 1
        for stack, count in counts.items():
            element = element_type(types, stack)
            rows = array_type(element)
            dtype = DTYPES.get(rows[0] if rows else element or "")
            counter = f"{stack}_top"
            push = next(s for s in pushed if stack_of(s, "append") == stack)
            if count != 1 or dtype is None or counter in taken or push.lineno != push.end_lineno or rows and (
                    rows[1] < 1 or not isinstance(push.value.args[0], ast.Name)):
                continue
            creations = [s for s in fn.body[:fn.body.index(top)] if isinstance(s, ast.Assign)
                         and len(s.targets) == 1 and name_of(s.targets[0]) == stack
                         and isinstance(s.value, ast.List) and not s.value.elts]
            pops = [s for s in ast.walk(fn) if isinstance(s, ast.stmt) and stack_of(s, "pop") == stack
                    and s.lineno > top.end_lineno]
            lens = [c for c in calls(fn) if name_of(c.func) == "len" and len(c.args) == 1
                    and name_of(c.args[0]) == stack]
            uses = sum(1 for n in ast.walk(fn) if isinstance(n, ast.Name) and n.id == stack)
            if len(creations) != 1 or uses != 2 + len(pops) + len(lens) or any(
                    source.lines[s.lineno - 1] is None for s in pops + [push]):
                continue
            value = ast.get_source_segment(text, push.value.args[0])
            loop_line = source.lines[top.lineno - 1]
            pad = indent(loop_line)
            size = f"max(int({trip}), 0)"
            source.drop(creations[0].lineno)
            line = source.lines[push.lineno - 1]
            at = indent(line)
            if rows is None:
                source.replace(top.lineno, f"{pad}{stack} = np.empty({size}, {dtype})\n{pad}{counter} = 0\n{loop_line}")
                source.replace(push.lineno, f"{at}{stack}[{counter}] = {value}\n{at}{counter} += 1")
            else:
                empty = "(" + ", ".join([size] + ["0"] * rows[1]) + ")"
                source.replace(top.lineno, f"{pad}{stack} = np.empty({empty}, {dtype})  # rows shaped at the "
                                           f"first push\n{pad}{counter} = 0\n{loop_line}")
                source.replace(push.lineno, "\n".join([
                    f"{at}if {counter} == 0:",
                    f"{at}    {stack} = np.empty(({stack}.shape[0],) + {value}.shape, {dtype})",
                    f"{at}elif {value}.shape != {stack}.shape[1:]:",
                    f"{at}    raise ValueError(\"s2s: the Numba backend saves {value} in an array shaped at the first "
                    f"iteration, and its shape changes from one iteration to the next: use backend='python'\")",
                    f"{at}{stack}[{counter}] = {value}",
                    f"{at}{counter} += 1"]))
            for pop in pops:
                line = source.lines[pop.lineno - 1]
                source.replace(pop.lineno, f"{indent(line)}{counter} -= 1\n"
                                           f"{indent(line)}{pop.targets[0].id} = {stack}[{counter}]")
            for call in lens:
                line = source.lines[call.lineno - 1]
                source.replace(call.lineno, line.replace(f"len({stack})", counter))
