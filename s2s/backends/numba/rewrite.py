"""The emitted module rewritten into the subset Numba compiles in nopython mode: the rewrites in order (each in
its own module), then the module reassembled (assemble.py)."""
from __future__ import annotations

import ast
import re

from s2s.backends.numba.assemble import assemble
from s2s.backends.numba.fuse import fuse
from s2s.backends.numba.helpers import called_helpers, zeros_like_of_numbers
from s2s.backends.numba.lines import Source, refuse, stack_of
from s2s.backends.numba.ranges import count_down
from s2s.backends.numba.rows import loops_over_rows
from s2s.backends.numba.scatters import scatters_in_place
from s2s.backends.numba.stacks import drop_dead_stacks, preallocate
from s2s.backends.numba.typed import Types
from s2s.backends.numba.ufunc_out import out_by_position
from s2s.backends.numba.unpack import split_parallel

# `with np.errstate(divide='ignore', invalid='ignore'):` around a masked contribution (s2s/emit/python.py's quiet)
_QUIET = re.compile(r"^( *)with np\.errstate\(divide='ignore', invalid='ignore'\):$", re.MULTILINE)


def to_numba(source: str, name: str, line_map: dict, types: Types | None = None) -> tuple[str, dict]:
    """The emitted module `source` (defining `name`) rewritten for Numba; its new line map. types: the
    variables' types (Numba's names) when a first compilation found them: stacks pushed in a loop of known trip
    count become preallocated arrays, and elementwise lines over arrays of one shape are fused."""
    source, line_map = split_parallel(source, line_map)
    source = _QUIET.sub(r"\1if True:", source)     # Numba never warns: the quieted statement as it is, line for line
    tree = ast.parse(source)
    defs = {node.name: node for node in tree.body if isinstance(node, ast.FunctionDef)}
    main = defs.pop(name)
    edits = Source(source)
    helpers = called_helpers(main, defs, source, line_map)
    count_down(main, source, edits, line_map)
    out_by_position(main, source, edits)
    scatters_in_place(main, source, edits)
    loops_over_rows(main, source, edits)
    drop_dead_stacks(main, edits)
    if types:                   # what a first compilation's typing decides
        preallocate(main, source, edits, types)
        fuse(main, source, edits, types)
    helpers += zeros_like_of_numbers(main, edits)
    none_on_a_stack(main, line_map)
    for node in ast.walk(main):
        if isinstance(node, (ast.Dict, ast.DictComp, ast.Lambda, ast.GeneratorExp, ast.Try, ast.Raise)):
            raise refuse(f"`{ast.get_source_segment(source, node)}`", line_map, node.lineno)
    helpers.append("_add_outer")
    return assemble(source, main, defs, edits, helpers, line_map)


def none_on_a_stack(main: ast.FunctionDef, line_map: dict) -> None:
    """A name that starts as None and is saved on a stack (the value an early `return` in a loop gives) is
    refused: Numba types the stack as numbers and fails when it runs, on the None."""
    nones = {node.targets[0].id: node for node in ast.walk(main) if isinstance(node, ast.Assign)
             and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name)
             and isinstance(node.value, ast.Constant) and node.value.value is None}
    for node in ast.walk(main):
        pushed = stack_of(node, "append") if isinstance(node, ast.Expr) else None
        value = node.value.args[0] if pushed and len(node.value.args) == 1 else None
        if isinstance(value, ast.Name) and value.id in nones:
            raise refuse("a `return` inside a loop (the derivative saves the value returned, None until the "
                         "loop returns, and Numba stores no None among numbers)", line_map, nones[value.id].lineno,
                         hint="break out of the loop and return after it, or use the default backend "
                              "(backend='python')")
