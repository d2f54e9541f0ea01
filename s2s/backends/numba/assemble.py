"""The rewritten module put back together: the lines before the derivative, the Numba helpers it calls, the
derivative with its replaced and dropped lines, NumPy imported if a rewrite made it needed, and the line map
(generated line -> the user's place) recounted."""
from __future__ import annotations

import ast
import re
from typing import Any

from s2s.backends.numba.helpers import NUMBA_HELPERS
from s2s.backends.numba.lines import Source, calls, name_of


def assemble(source: str, main: ast.FunctionDef, defs: dict, edits: Source, helpers: list[str], line_map: dict
             ) -> tuple[str, dict]:
    """The module's text and its line map."""
    used = {h for h in helpers if h not in defs}      # added by this transform
    for call in calls(main):
        if name_of(call.func) in NUMBA_HELPERS and name_of(call.func) in defs:
            used.add(name_of(call.func))
    used = {h for h in used if any(line and f"{h}(" in line for line in edits.lines[main.lineno:])}
    first_def = min([d.lineno - len(d.decorator_list) for d in defs.values()] + [main.lineno])
    out: list[str] = []
    new_map: dict[int, Any] = {}
    for k in range(first_def - 1):
        out.append(edits.lines[k])
    for helper in sorted(used):
        out.extend(NUMBA_HELPERS[helper].rstrip("\n").split("\n"))
        out.extend(["", ""])
    for k in range(main.lineno - 1, len(edits.lines)):
        line = edits.lines[k]
        if line is None:
            continue
        for piece in line.split("\n"):         # a replaced line may have become several
            out.append(piece)
            if k + 1 in line_map:
                new_map[len(out)] = line_map[k + 1]
    if any(line and "np." in line and not line.lstrip().startswith("#") for line in out) and \
            not re.search(r"^import numpy as np$", source, re.M):
        at = next((k for k, line in enumerate(out) if line and line.startswith(("import ", "from "))), None)
        added = ["import numpy as np"] if at is not None else ["import numpy as np", ""]
        at = at if at is not None else next(k for k, line in enumerate(out) if line and line.startswith("def ")) - 1
        out[at:at] = added
        new_map = {k + (len(added) if k > at else 0): v for k, v in new_map.items()}
    text = "\n".join(out)
    text = re.sub(r"\n{4,}", "\n\n\n", text)
    if text.count("\n") != "\n".join(out).count("\n"):       # blank lines folded: recount the map
        return _recount(text, out, new_map)
    return text, new_map


def _recount(text: str, out: list[str], new_map: dict) -> tuple[str, dict]:
    """The line map after runs of blank lines were folded."""
    mapping, position, blanks = {}, 0, 0
    for k, line in enumerate(out, start=1):
        if line.strip() == "":
            blanks += 1
            if blanks > 2:
                continue
        else:
            blanks = 0
        position += 1
        if k in new_map:
            mapping[position] = new_map[k]
    return text, mapping
