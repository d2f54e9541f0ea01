"""The front end's stage: a Python function object to its checked, desugared gast tree.

`parse_function(fn)` reads fn's source (source.py), runs the desugaring stage (`s2s.frontend.desugar`: the rich
surface of Python rewritten into the core that lowering knows) and then the fence (fence.py): every construct
still outside the supported set is refused here, before any transform, with `file:line:col`.
"""
from __future__ import annotations

from typing import Any

from s2s.frontend.desugar import desugar
from s2s.frontend.fence import fence
from s2s.frontend.source import read_function
from s2s.frontend.tree import ParsedFunction


def parse_function(fn: Any) -> ParsedFunction:
    parsed = read_function(fn)
    desugar(parsed)
    fence(parsed)
    return parsed
