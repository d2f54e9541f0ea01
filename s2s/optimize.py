"""Optimizing passes, each a function from IR to IR (in place; the result is returned).

- `eliminate_dead_code`: removes pure operations whose values nobody reads,
  phi values and loop-carried values that are never read, and regions left empty.
- `simplify`: folds operations on constants and applies identities
  (`x * 1`, `x + 0`, `x ** 1`, `--x`), forwarding the surviving atom.

Effects are kept: pushes and pops of the loop stacks, `print`, and calls to
functions s2s knows nothing about.
"""
from __future__ import annotations

import builtins
import math
import operator
from typing import Any

import numpy as np

from . import registry, runtime
from .ir import Atom, Block, Const, For, Function, If, Op, Stmt, Value, While, stmt_blocks, substitute

_PURE_RUNTIME = {runtime.stack_new, runtime.make_tuple, runtime.make_list, runtime.free_name, runtime.zeros_like,
                 runtime._unbroadcast, runtime._scatter}


def is_pure(prim: Any) -> bool:
    if prim in (print, runtime.push, runtime.pop, runtime._seed):
        return False
    if prim in _PURE_RUNTIME:
        return True
    return registry.find_adjoint(prim) is not None or registry.is_nondifferentiable(prim)


# ---------------------------------------------------------------- dead code

def eliminate_dead_code(fn: Function) -> Function:
    eliminate_dead_code_in(fn.body, list(fn.body.results))
    return fn


def eliminate_dead_code_in(block: Block, roots: list[Atom]) -> None:
    live: set[int] = {id(a) for a in roots if isinstance(a, Value)}
    live_stmts: set[int] = set()

    def mark(atoms: list[Atom]) -> bool:
        new = [a for a in atoms if isinstance(a, Value) and id(a) not in live]
        live.update(id(a) for a in new)
        return bool(new)

    def scan(b: Block) -> bool:
        changed = False
        for stmt in reversed(b.stmts):
            if isinstance(stmt, Op):
                if any(id(o) in live for o in stmt.outs) or not is_pure(stmt.prim):
                    if id(stmt) not in live_stmts:
                        live_stmts.add(id(stmt))
                        changed = True
                    changed |= mark(list(stmt.args) + list(stmt.kwargs.values()))
                continue
            if isinstance(stmt, If):
                for o, a, b_ in zip(stmt.outs, stmt.then.results, stmt.orelse.results):
                    if id(o) in live:
                        changed |= mark([a, b_])
            else:
                for c, o, r, i in zip(stmt.carried, stmt.outs, stmt.body.results, stmt.inits):
                    if id(o) in live or id(c) in live:
                        changed |= mark([c, r, i])
            for inner in stmt_blocks(stmt):
                changed |= scan(inner)
            needed = any(id(o) in live for o in stmt.outs) or any(_has_live_stmt(inner, live_stmts)
                                                                   for inner in stmt_blocks(stmt))
            if needed and id(stmt) not in live_stmts:
                live_stmts.add(id(stmt))
                changed = True
            if id(stmt) in live_stmts:
                if isinstance(stmt, If):
                    changed |= mark([stmt.cond])
                elif isinstance(stmt, While):
                    changed |= mark(list(stmt.test.results))
                else:
                    changed |= mark([stmt.start, stmt.stop, stmt.step])
        return changed

    while scan(block):
        pass
    _sweep(block, live, live_stmts)


def _has_live_stmt(block: Block, live_stmts: set[int]) -> bool:
    return any(id(s) in live_stmts for s in block.stmts)


def _sweep(block: Block, live: set[int], live_stmts: set[int]) -> None:
    kept: list[Stmt] = []
    for stmt in block.stmts:
        if id(stmt) not in live_stmts:
            continue
        if isinstance(stmt, If):
            keep = [j for j, o in enumerate(stmt.outs) if id(o) in live]
            stmt.outs = [stmt.outs[j] for j in keep]
            stmt.then.results = [stmt.then.results[j] for j in keep]
            stmt.orelse.results = [stmt.orelse.results[j] for j in keep]
        elif isinstance(stmt, (While, For)):
            keep = [j for j, (c, o) in enumerate(zip(stmt.carried, stmt.outs)) if id(c) in live or id(o) in live]
            stmt.inits = [stmt.inits[j] for j in keep]
            stmt.carried = [stmt.carried[j] for j in keep]
            stmt.outs = [stmt.outs[j] for j in keep]
            stmt.body.results = [stmt.body.results[j] for j in keep]
        for inner in stmt_blocks(stmt):
            _sweep(inner, live, live_stmts)
        kept.append(stmt)
    block.stmts = kept


# ---------------------------------------------------------------- simplification

_FOLDABLE_MODULES = ("math", "_operator", "operator")


def _foldable(prim: Any) -> bool:
    return getattr(prim, "__module__", None) in _FOLDABLE_MODULES or prim in (abs, min, max, float, int, pow)


def _is(atom: Atom, number: float) -> bool:
    return isinstance(atom, Const) and type(atom.value) in (int, float) and atom.value == number


def _identity(op: Op) -> Atom | None:
    """The atom op is equal to, when an identity makes the op unnecessary."""
    if len(op.args) != 2 or op.kwargs:
        return None
    x, y = op.args
    prim = op.prim
    if prim is operator.mul:
        if _is(y, 1):
            return x
        if _is(x, 1):
            return y
    elif prim is operator.add:
        if _is(y, 0):
            return x
        if _is(x, 0):
            return y
    elif prim is operator.sub and _is(y, 0):
        return x
    elif prim is operator.truediv and _is(y, 1):
        return x
    elif prim is operator.pow and _is(y, 1):
        return x
    return None


def simplify(fn: Function) -> Function:
    mapping: dict[int, Atom] = {}
    negations: dict[int, Atom] = {}      # -x -> x, to undo double negation
    booleans: set[int] = set()           # values known to be True or False

    def sub(atom: Atom) -> Atom:
        while isinstance(atom, Value) and id(atom) in mapping:
            atom = mapping[id(atom)]
        return atom

    def block(b: Block) -> None:
        kept: list[Stmt] = []
        for stmt in b.stmts:
            if not isinstance(stmt, Op):
                substitute(Block([stmt], []), {k: sub(v) for k, v in mapping.items()})
                for inner in stmt_blocks(stmt):
                    block(inner)
                if isinstance(stmt, If):
                    _forward_boolean_phis(stmt, booleans, mapping)
                kept.append(stmt)
                continue
            stmt.args = [sub(a) for a in stmt.args]
            stmt.kwargs = {k: sub(a) for k, a in stmt.kwargs.items()}
            replacement = _fold(stmt)
            if replacement is None:
                replacement = _identity(stmt)
            if replacement is None and stmt.prim is operator.neg and isinstance(stmt.args[0], Value) \
                    and id(stmt.args[0]) in negations:
                replacement = negations[id(stmt.args[0])]
            if replacement is not None and len(stmt.outs) == 1:
                mapping[id(stmt.outs[0])] = replacement
                continue
            if stmt.prim is operator.mul and (_is(stmt.args[0], -1) or _is(stmt.args[1], -1)):
                stmt.prim, stmt.args = operator.neg, [stmt.args[1] if _is(stmt.args[0], -1) else stmt.args[0]]
            if stmt.prim is operator.neg and len(stmt.outs) == 1:
                negations[id(stmt.outs[0])] = stmt.args[0]
            if stmt.prim in _COMPARISONS:
                booleans.update(id(o) for o in stmt.outs)
            kept.append(stmt)
        b.stmts = kept
        b.results = [sub(a) for a in b.results]

    block(fn.body)
    return fn


_COMPARISONS = {operator.lt, operator.le, operator.gt, operator.ge, operator.eq, operator.ne, operator.not_,
                operator.is_, operator.is_not, operator.contains}


def _forward_boolean_phis(stmt: If, booleans: set[int], mapping: dict[int, Atom]) -> None:
    """`if c: b = True else: b = False` is `b = c` when c is a comparison."""
    if not (isinstance(stmt.cond, Value) and id(stmt.cond) in booleans):
        return
    keep = []
    for j, (a, b) in enumerate(zip(stmt.then.results, stmt.orelse.results)):
        if isinstance(a, Const) and a.value is True and isinstance(b, Const) and b.value is False:
            mapping[id(stmt.outs[j])] = stmt.cond
        else:
            keep.append(j)
    stmt.outs = [stmt.outs[j] for j in keep]
    stmt.then.results = [stmt.then.results[j] for j in keep]
    stmt.orelse.results = [stmt.orelse.results[j] for j in keep]


def _fold(op: Op) -> Atom | None:
    if not _foldable(op.prim) or not all(isinstance(a, Const) for a in op.args) or op.kwargs or len(op.outs) != 1:
        return None
    values = [a.value for a in op.args]
    if not all(type(v) in (int, float, bool) for v in values):
        return None
    try:
        result = op.prim(*values)
    except (ArithmeticError, ValueError, TypeError):
        return None
    if type(result) in (int, float, bool) and not (isinstance(result, float) and not math.isfinite(result)):
        return Const(result)
    return None
