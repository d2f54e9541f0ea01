"""Operators on tuples and lists, told apart from arithmetic once the kinds of values are known.

Lowering writes `a + b` and `a * n` as `operator.add` and `operator.mul` whatever their operands are. In
Python, on two tuples or two lists `+` concatenates, and a tuple or list times an integer repeats; NumPy
takes a list beside an array for an array. `resolve(fn, param_kinds)` rewrites, from the kinds of the
arguments the derivative is made for:
- `a + b` on two containers into `runtime.concat(a, b)`, whose adjoint splits by position;
- `a * n` / `n * a` on a container and a number into `runtime.repeat(a, n)`, whose adjoint sums the copies;
- a NumPy reduction or ufunc given a tuple or list (`np.sum([a * b, a])`) reads it as `np.array(...)` first.
Any other arithmetic operator with a container operand is refused: Python raises there, or s2s would
differentiate something it does not model.
"""
from __future__ import annotations

import operator

import numpy as np

from . import runtime
from .activity import is_container, value_kinds
from .errors import UnsupportedSyntax
from .ir import Const, Function, Op, Value, value_names, walk
from .naming import Namer

_ARITHMETIC = (operator.sub, operator.truediv, operator.floordiv, operator.mod, operator.pow, operator.matmul,
               operator.neg, operator.pos)
# NumPy functions whose first argument is read as one array (a list becomes np.array(list))
_ARRAY_FIRST = {np.sum, np.mean, np.prod, np.max, np.min, np.amax, np.amin, np.var, np.std, np.cumsum,
                np.cumprod, np.median, np.average, np.linalg.norm, np.dot, np.matmul, np.ravel, np.reshape,
                np.transpose, np.trace}


def _sequence(kind) -> bool:
    return is_container(kind) and kind[0] in ("tuple", "list", "list*")


def resolve(fn: Function, param_kinds: list) -> Function:
    namer = Namer()
    for name in value_names(fn):
        namer.reserve(name)
    for _ in range(8):               # each rewrite can make more kinds known
        kinds = value_kinds(fn, param_kinds)
        if not _rewrite(fn, kinds, namer):
            return fn
    return fn


def _kind(atom, kinds):
    if isinstance(atom, Const):
        if isinstance(atom.value, (tuple, list)):
            return (type(atom.value).__name__, tuple("scalar" for _ in atom.value))
        return "scalar" if isinstance(atom.value, (int, float, bool, np.generic)) else "other"
    return kinds.get(id(atom), "other")


def _rewrite(fn: Function, kinds: dict, namer: Namer) -> bool:
    changed = False
    for stmt in list(walk(fn.body)):
        if not isinstance(stmt, Op):
            continue
        arg_kinds = [_kind(a, kinds) for a in stmt.args]
        sequences = [_sequence(k) for k in arg_kinds]
        if stmt.prim is operator.add and len(stmt.args) == 2 and any(sequences):
            if all(sequences):
                stmt.prim = runtime.concat
                changed = True
            elif "scalar" in arg_kinds:
                raise UnsupportedSyntax("`+` between a tuple or list and a number", stmt.loc,
                                        hint="Python raises TypeError here; concatenate two sequences, or "
                                             "use np.array(...) for arithmetic")
            elif "array" not in arg_kinds:
                raise UnsupportedSyntax("`+` between a tuple or list and a value s2s cannot tell is a tuple, "
                                        "a list or an array", stmt.loc,
                                        hint="convert it first: list(...) to join lists, np.asarray(...) to add")
        elif stmt.prim is operator.mul and len(stmt.args) == 2 and any(sequences):
            if all(sequences):
                raise UnsupportedSyntax("`*` between two tuples or lists", stmt.loc)
            count = 1 if sequences[0] else 0
            if arg_kinds[count] == "scalar":
                if count == 0:
                    stmt.args = [stmt.args[1], stmt.args[0]]
                stmt.prim = runtime.repeat
                changed = True
        elif stmt.prim in _ARITHMETIC and any(sequences) and not any(k == "array" for k in arg_kinds):
            raise UnsupportedSyntax(f"`{stmt.prim.__name__}` on a tuple or list", stmt.loc,
                                    hint="convert it with np.array(...) first")
        elif stmt.prim in _ARRAY_FIRST and stmt.args and sequences[0]:
            array = namer.value(stmt.args[0].hint if isinstance(stmt.args[0], Value) else "")
            _insert_before(fn, stmt, Op(np.array, [stmt.args[0]], [array], loc=stmt.loc))
            stmt.args = [array, *stmt.args[1:]]
            changed = True
    return changed


def _insert_before(fn: Function, target: Op, new: Op) -> None:
    from .ir import stmt_blocks

    def visit(block) -> bool:
        for k, s in enumerate(block.stmts):
            if s is target:
                block.stmts.insert(k, new)
                return True
            if any(visit(inner) for inner in stmt_blocks(s)):
                return True
        return False
    visit(fn.body)
