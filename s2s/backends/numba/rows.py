"""`for x in xs:` over an argument as a loop over indices: the rows Numba's iteration yields are typed as
non-contiguous, which makes `W @ x` take a slow path."""
from __future__ import annotations

import ast

from s2s.backends.numba.lines import Source, indent, name_of


def loops_over_rows(fn: ast.FunctionDef, text: str, source: Source) -> None:
    """`for x in xs:` over an argument as `for x_i in range(len(xs)): x = xs[x_i]`: Numba types the rows an
    iteration yields as non-contiguous ('A' layout), which makes `W @ x` take a slow path; xs[i] of a
    C-contiguous array is contiguous."""
    params = {a.arg for a in fn.args.args}
    taken = {n.id for n in ast.walk(fn) if isinstance(n, ast.Name)}
    for loop in [n for n in ast.walk(fn) if isinstance(n, ast.For)]:
        target, it = name_of(loop.target), name_of(loop.iter)
        index = f"{target}_i"
        if target is None or it not in params or index in taken or loop.body[0].lineno == loop.lineno:
            continue
        line = source.lines[loop.lineno - 1]
        if line is None or line.strip() != f"for {target} in {it}:":
            continue
        inner = indent(source.lines[loop.body[0].lineno - 1] or line + "    ")
        source.replace(loop.lineno, f"{indent(line)}for {index} in range(len({it})):\n{inner}{target} = {it}[{index}]")
