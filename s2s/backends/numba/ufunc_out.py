"""A ufunc's output array passed by keyword, `np.tanh(t1, out=t1)`, passed by position, `np.tanh(t1, t1)`:
Numba takes a ufunc's output array only as a positional argument."""
from __future__ import annotations

import ast

import numpy as np

from s2s.backends.numba.lines import Source


def out_by_position(fn: ast.FunctionDef, text: str, source: Source) -> None:
    """Every one-line call of a NumPy ufunc with all its inputs and `out=` alone as keyword, rewritten."""
    for call in [n for n in ast.walk(fn) if isinstance(n, ast.Call)]:
        func = call.func
        if not (isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id == "np"
                and isinstance(getattr(np, func.attr, None), np.ufunc) and call.lineno == call.end_lineno
                and len(call.keywords) == 1 and call.keywords[0].arg == "out"
                and len(call.args) == getattr(np, func.attr).nin):
            continue
        line = source.lines[call.lineno - 1]
        segment = ast.get_source_segment(text, call)
        if line is None or line.count(segment) != 1:
            continue
        arguments = [ast.get_source_segment(text, a) for a in call.args + [call.keywords[0].value]]
        source.replace(call.lineno, line.replace(segment, f"np.{func.attr}({', '.join(arguments)})"))
