"""Lists and tuples of numbers passed to a Numba derivative as float64 arrays.

Numba passes a Python list as a reflected list: each call unboxes every item, and writes the list back when the
call returns; a tuple of n numbers is a type of its own for each n. A derivative that reads such an argument only
by `len` and by items at an integer index (what a loop over it, `for c in coefficients`, lowers to) computes the
same with the items in a float64 array when every item is exactly a float (a Python float or a NumPy float64:
the same numbers and the same arithmetic). `array_positions(fn, kinds, wrt)` finds those parameters of a
derivative's IR (not differentiated ones: their gradient has the argument's structure); the derivative is
compiled for arrays there, and `as_floats` is the one pass per call that checks each item's type exactly and
makes the array. Nothing is cached by the list's identity: a list changes between calls. Other items (ints,
float subclasses, float32) go to Numba as they are.
"""
from __future__ import annotations

import operator
from typing import Any, Callable, Sequence

import numpy as np

from s2s.analysis.activity import value_kinds
from s2s.ir.core import Const, Function, Op, Value, stmt_blocks, stmt_inputs

FLOATS = frozenset({float, np.float64})


def _sequence_of_numbers(kind: Any) -> bool:
    if not isinstance(kind, tuple) or len(kind) != 2:
        return False
    if kind[0] == "list*":
        return kind[1] == "scalar"
    return kind[0] == "tuple" and isinstance(kind[1], tuple) and bool(kind[1]) and \
        all(k == "scalar" for k in kind[1])


def array_positions(fn: Function, param_kinds: Sequence[Any], wrt: Sequence[int]) -> tuple[int, ...]:
    """The parameters (positions) of fn, a list or tuple of numbers not differentiated, that fn reads only by
    `len(xs)` and `xs[i]` with i a number (not a slice): they may be float64 arrays instead."""
    candidates = {id(p): k for k, p in enumerate(fn.params[:len(param_kinds)])
                  if k not in wrt and _sequence_of_numbers(param_kinds[k])}
    if not candidates:
        return ()
    kinds: dict[int, Any] | None = None
    slices: set[int] = set()
    reads: list[Op] = []
    refused: set[int] = set()

    def scan(block: Any) -> None:
        for stmt in block.stmts:
            if type(stmt) is Op:
                if stmt.prim is slice:
                    slices.update(id(o) for o in stmt.outs)
                atoms = list(stmt.args) + list(stmt.kwargs.values())
                if any(type(a) is Value and id(a) in candidates for a in atoms):
                    reads.append(stmt)
                continue
            refused.update(id(a) for a in stmt_inputs(stmt) if type(a) is Value and id(a) in candidates)
            for inner in stmt_blocks(stmt):
                scan(inner)
        refused.update(id(a) for a in block.results if type(a) is Value and id(a) in candidates)

    scan(fn.body)
    for op in reads:
        found = [a for a in list(op.args) + list(op.kwargs.values()) if type(a) is Value and id(a) in candidates]
        if op.kwargs or op.args[0] is not found[0] or len(found) > 1 or found[0] in op.args[1:]:
            refused.update(id(a) for a in found)
        elif op.prim is len and len(op.args) == 1:
            continue
        elif op.prim is operator.getitem and len(op.args) == 2:
            index = op.args[1]
            if isinstance(index, Const):
                if type(index.value) is int:
                    continue
            elif id(index) not in slices:
                if kinds is None:
                    kinds = value_kinds(fn, list(param_kinds))
                if kinds.get(id(index)) == "scalar":
                    continue
            refused.add(id(found[0]))
        else:
            refused.add(id(found[0]))
    return tuple(sorted(k for key, k in candidates.items() if key not in refused))


def as_floats(items: Any) -> Any:
    """items as a float64 array when it is a non-empty list or tuple of exact floats, else items itself."""
    if (type(items) is list or type(items) is tuple) and items and FLOATS.issuperset(map(type, items)):
        return np.fromiter(items, np.float64, len(items))
    return items


def converted(args: Sequence[Any], positions: Sequence[int]) -> tuple | None:
    """args with the lists and tuples at positions as arrays, or None when one of them is not all floats."""
    out = list(args)
    for k in positions:
        if k >= len(out):
            continue
        array = as_floats(out[k])
        if array is out[k]:
            return None
        out[k] = array
    return tuple(out)


def entry(jitted: Callable, positions: Sequence[int], n_params: int, name: str) -> Callable:
    """A Python function calling jitted with the arguments at positions converted (as_floats); it carries
    jitted and the positions for the dispatcher's fast path, which checks and converts in its own single pass."""
    params = [f"a{k}" for k in range(n_params)]
    call = ", ".join(f"_as_floats(a{k})" if k in positions else f"a{k}" for k in range(n_params))
    text = f"def {name}({', '.join(params)}):\n    return _jitted({call})\n"
    scope = {"_jitted": jitted, "_as_floats": as_floats}
    exec(compile(text, f"<s2s numba entry {name}>", "exec"), scope)
    function = scope[name]
    function.__s2s_jitted__ = jitted                # type: ignore[attr-defined]
    function.__s2s_arrays__ = tuple(positions)      # type: ignore[attr-defined]
    function.__s2s_lines__ = getattr(jitted, "__s2s_lines__", {})      # type: ignore[attr-defined]
    return function
