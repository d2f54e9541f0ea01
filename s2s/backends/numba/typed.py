"""What Numba's typing of a first compilation says about the derivative's variables, read by the rewrites that
need it (fuse.py): Numba's type names by variable, every SSA version of a name together."""
from __future__ import annotations

import re
from typing import Any

Types = dict[str, set[str]]          # variable -> the names of the Numba types its versions have

_ARRAY = re.compile(r"array\((\w+), (\d+)d, [CAF]\)$")
NUMBER_TYPES = {"float64", "float32", "int64", "int32", "intp", "uint64", "bool"}
DTYPES = {"float64": "np.float64", "float32": "np.float32", "int64": "np.int64", "int32": "np.int32",
          "bool": "np.bool_", "uint64": "np.uint64"}


def variable_types(jitted: Any) -> Types:
    """The types of the compiled function's variables (Numba's temporaries and argument copies left out)."""
    found: Types = {}
    for compiled in jitted.overloads.values():
        typemap = getattr(getattr(compiled, "type_annotation", None), "typemap", {}) or {}
        for var, typ in typemap.items():
            name = str(var)
            if not name.startswith(("$", "arg.")):
                found.setdefault(name.split(".")[0], set()).add(str(typ))
    return found


def array_type(name: str | None) -> tuple[str, int] | None:
    """(dtype, ndim) of an array type's name."""
    match = _ARRAY.match(name or "")
    return (match.group(1), int(match.group(2))) if match else None


def array_of(types: Types, name: str) -> tuple[str, int] | None:
    """(dtype, ndim) when every version of the variable is an array of that dtype and rank (any layout)."""
    found = {array_type(t) for t in types.get(name, set())}
    return found.pop() if len(found) == 1 and None not in found else None


def number(types: Types, name: str) -> bool:
    """Whether every version of the variable is a number."""
    seen = types.get(name, set())
    return bool(seen) and seen <= NUMBER_TYPES
