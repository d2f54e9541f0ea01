"""Parallel assignments of independent values, one per line: `h_stack, x_stack = [], []` and
`ds, dx = np.zeros_like(s), np.zeros_like(x)` become two lines each, so that the rewrites after this one
(stacks.py, scatters.py, fuse.py) see every stack and adjoint made on a line of its own. An assignment whose
values read one of its targets (a swap) stays as it is."""
from __future__ import annotations

import ast
from typing import Any

from s2s.backends.numba.lines import indent


def split_parallel(source: str, line_map: dict) -> tuple[str, dict]:
    """The module with such assignments split, and its line map (each new line maps where its line did)."""
    tree = ast.parse(source)
    lines = source.split("\n")
    split: dict[int, list[str]] = {}
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Tuple)
                and isinstance(node.value, ast.Tuple) and len(node.targets[0].elts) == len(node.value.elts) > 1):
            continue
        targets = [t.id if isinstance(t, ast.Name) else None for t in node.targets[0].elts]
        reads = {n.id for n in ast.walk(node.value) if isinstance(n, ast.Name)}
        if None in targets or reads & set(targets) or len(set(targets)) != len(targets) or any(
                isinstance(v, ast.Starred) or v.lineno != v.end_lineno for v in node.value.elts):
            continue
        line = lines[node.lineno - 1]
        if "\n".join(lines[node.lineno - 1:node.end_lineno]).strip() != ast.get_source_segment(source, node).strip():
            continue                                # a comment or another statement on its lines
        pad = indent(line)
        split[node.lineno] = [f"{pad}{t} = {ast.get_source_segment(source, v)}"
                              for t, v in zip(targets, node.value.elts)]
        for lineno in range(node.lineno + 1, node.end_lineno + 1):
            split[lineno] = []
    if not split:
        return source, line_map
    out: list[str] = []
    mapping: dict[int, Any] = {}
    for k, line in enumerate(lines, start=1):
        for piece in split.get(k, [line]):
            out.append(piece)
            if k in line_map:
                mapping[len(out)] = line_map[k]
    return "\n".join(out), mapping
