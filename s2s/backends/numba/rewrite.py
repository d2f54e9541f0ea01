"""The emitted module rewritten where a first compilation's typing decides (fuse.py), then reassembled
(assemble.py). Everything else Numba's syntax needs the emitter wrote from the IR (syntax.py), and the stacks
are rows of arrays already (s2s/passes/stack_rows.py)."""
from __future__ import annotations

import ast

from s2s.backends.numba.assemble import assemble
from s2s.backends.numba.fuse import fuse
from s2s.backends.numba.lines import Source
from s2s.backends.numba.typed import Types


def to_numba(source: str, name: str, line_map: dict, types: Types | None = None) -> tuple[str, dict]:
    """The emitted module `source` (defining `name`) rewritten for Numba; its new line map. types: the
    variables' types (Numba's names) when a first compilation found them: elementwise lines over arrays of one
    shape are fused."""
    if not types:
        return source, line_map
    tree = ast.parse(source)
    defs = {node.name: node for node in tree.body if isinstance(node, ast.FunctionDef)}
    main = defs.pop(name)
    edits = Source(source)
    fuse(main, source, edits, types)
    return assemble(source, main, defs, edits, [], line_map)
