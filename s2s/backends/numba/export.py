"""The exported module for Numba: it runs with NumPy and Numba, without s2s."""
from __future__ import annotations

from typing import Any, Sequence

from s2s.backends.numba.compiler import compile_numba
from s2s.backends.numba.dispatchers import numba_module
from s2s.backends.numba.helpers import STANDALONE_OVERLOADS


def standalone(emitted: Any, name: str, root: Any, options: tuple, args: Sequence[Any]) -> str:
    """The exported module for Numba: the derivative the emitter wrote for Numba (compiled for args once, so
    that what Numba cannot type is refused now), `@numba.njit` on it and on its helpers, and the overloads that
    let Numba type the helpers chosen by type (`_zeros_like`, ...)."""
    numba = numba_module()
    compile_numba(emitted.source, name, root, emitted.bindings, name, emitted.reads_user_names, emitted.line_map,
                  options, args)
    text = emitted.source
    text = text.replace("# A standalone module: it needs NumPy, not s2s.",
                        f"# A standalone module: it needs NumPy and Numba (written for {numba.__version__}), not s2s.")
    settings = ", ".join(f"{k}={v!r}" for k, v in options)
    lines = text.split("\n")
    out: list[str] = []
    imported = False
    for line in lines:
        if line.startswith("def ") and not imported:
            out[-2:-2] = ["import numba", "import numba.extending"] if not any(
                l == "import numba" for l in out) else []
            imported = True
        if line.startswith(f"def {name}("):
            out.append(f"@numba.njit({settings})")
        elif line.startswith(tuple(f"def {helper}(" for helper in STANDALONE_OVERLOADS)):
            pass
        elif line.startswith("def _"):
            out.append("@numba.njit")
        out.append(line)
    text = "\n".join(out)
    wanted = [block for helper, block in STANDALONE_OVERLOADS.items() if f"def {helper}(" in text]
    if wanted:
        head, sep, rest = text.partition(f"\n\n\n@numba.njit({settings})\ndef {name}(")
        text = head + "".join("\n\n\n" + block.rstrip("\n") for block in wanted) + sep + rest
    return text
