"""Outputs of their own: a derivative never hands back the caller's arrays.

A gradient that Python, autograd or JAX computes is a new array, which the caller may change in place (`g *= 0.1`,
gradient clipping, a learning rate) without touching its data. Optimized, a derivative may instead return an
argument itself (the gradient of `np.sum(w * x)` along w is x; an hvp of `0.5 * np.sum(t ** 2)` is its tangent v;
the value of `x + 0.0` is x), a view of one (`x.T`, `x[1:]`, a reshape), a global array the function reads, or an
array constant of the generated code (then changed for every later call).

Accepts a derivative's final IR (after s2s/driver/pipeline.py's optimizing passes) and the kinds of its
parameters (those the kinds do not cover, a tangent or a cotangent, are taken as unknown). Guarantees, for each
output, and for each item of a tuple, list or dict of outputs the function makes at its end:

- a number (by its kind) is returned as it is (numbers are immutable);
- an array that is an argument, a global, an array constant, or a view of one (what the rules' `view` says may
  be one: a reshape, a transpose, a slice) is returned as `np.copy(out)` (such a value of a kind not known, a cotangent: `_copied(out)`, which
  copies the arrays in it);
- anything else that may hold one of them, because an operation that may return its argument (or a view of it)
  made it from one (a runtime helper: `_unbroadcast(g, x)` is g itself when nothing was broadcast), is returned
  as `_unshared(out, x, ...)` (s2s/runtime.py), which copies the arrays in it that share memory with those
  arguments or globals when it runs: a check in O(1) per array (np.may_share_memory, bounds only), a copy only
  where the memory is shared;
- an output made new (a ufunc, arithmetic, a reduction, a constructor: the rules' `fresh` or `copies_reads`; an
  array a NumPy function returns, unless the rules say it `view`s its argument) is returned as it is.

An argument read only for its shape (the rules' `shape_reader`, `metadata`) is not held by the result.
"""
from __future__ import annotations

import copy
from typing import Any

import numpy as np

from s2s import runtime
from s2s.analysis.activity import value_kinds
from s2s.analysis.dataflow import Domain, solve
from s2s.ir.core import Atom, Block, Const, For, Function, If, Op, Value, While, stmt_inputs, value_names, walk
from s2s.ir.naming import Namer
from s2s.rules import registry

_CONTAINERS = (runtime.make_tuple, runtime.make_list, runtime.make_dict)


class _Roots(Domain):
    """For every value of a function, the arguments, globals and array constants whose memory it may share (ids;
    a domain of s2s/analysis/dataflow.py: facts are sets, joined by union). `atoms` maps each id back to its atom,
    `in_scope` says which of them the function's end can read, `made_by` gives each value's operation."""

    top = frozenset()

    def __init__(self, kinds: dict[int, Any]):
        super().__init__()
        self.kinds = kinds
        self.atoms: dict[int, Atom] = {}
        self.in_scope: set[int] = set()
        self.made_by: dict[int, Op] = {}
        self.outer: set[int] = set()        # the operations of the function's own block (not in a loop or branch)

    def start(self, fn: Function | Block) -> None:
        assert isinstance(fn, Function)
        self.outer = {id(st) for st in fn.body.stmts}
        for p in fn.params:
            self.atoms[id(p)] = p
            self.in_scope.add(id(p))
            if self.kinds.get(id(p)) != "scalar":
                self.facts[p] = frozenset({id(p)})

    def const(self, value: Any) -> frozenset:
        if not runtime._leaves(value):
            return frozenset()
        self.atoms.setdefault(id(value), Const(value))
        self.in_scope.add(id(value))
        return frozenset({id(value)})

    def join(self, a: frozenset, b: frozenset) -> frozenset:
        return a | b

    def op(self, op: Op) -> None:
        for out in op.outs:
            self.made_by[id(out)] = op
        if op.prim is runtime.free_name:        # a global: the caller's (or the module's) object
            out = op.outs[0]
            self.atoms[id(out)] = out
            if id(op) in self.outer:
                self.in_scope.add(id(out))
            self.set(out, frozenset({id(out)}))
            return
        kinds = [self.kinds.get(id(o)) for o in op.outs]
        rec = registry.record(op.prim)
        told = {"out", "copy"} & set(op.kwargs)
        arrays = all(k == "array" for k in kinds)
        if all(k == "scalar" for k in kinds) or rec.metadata or not told and (
                rec.copies_reads or isinstance(op.prim, np.ufunc) or rec.fresh and arrays
                or rec.array_result and not rec.view and not rec.helper and arrays):
            # new memory: a reduction or product, a ufunc, a new array (a new list or dict, `fresh`, may hold its
            # items' arrays), a library's array function that is no view (rules' `view`)
            return
        skipped = set(rec.shape_reader or ())
        found = frozenset().union(*(self.of(a) for k, a in enumerate(op.args) if k not in skipped),
                                  *(self.of(a) for a in op.kwargs.values()))
        for out in op.outs:
            self.set(out, found)

    def direct(self, atom: Atom) -> bool:
        """Whether atom is an argument, global or array constant itself, or a view of one."""
        if isinstance(atom, Const):
            return id(atom.value) in self.atoms
        if id(atom) in self.atoms:
            return True
        op = self.made_by.get(id(atom))
        return op is not None and not op.kwargs and bool(op.args) and registry.record(op.prim).view and \
            self.direct(op.args[0])

    def held(self, atom: Atom) -> frozenset:
        return self.of(atom)


def own_outputs(fn: Function, param_kinds: list, checks: bool = True) -> Function:
    """fn, or a copy of it (fn itself is left as it is: a derivative of it reads it) whose outputs share no memory
    with its arguments, the globals it reads or its constants (module docstring). Without checks (Numba's code,
    which compiles no run-time helper of this pass), an array output that may share memory is copied whatever it
    turns out to be, and an output of another kind is left as it is."""
    param_kinds = list(param_kinds) + ["other"] * (len(fn.params) - len(param_kinds))
    if _holds_nothing(fn, param_kinds):
        return fn
    kinds = value_kinds(fn, param_kinds)
    roots, = solve(fn, _Roots(kinds))
    if not any(roots.held(r) for r in _outputs(fn, roots)):
        return fn
    fn = copy.copy(fn)
    fn.body = Block(list(fn.body.stmts), list(fn.body.results))
    namer = Namer()
    for name in value_names(fn):
        namer.reserve(name)
    stmts = fn.body.stmts
    loc = None      # (no line of the user's: the copies are the return's)

    read = {id(a) for st in walk(fn.body) for a in _inputs(st)}       # (what the outputs' containers may be moved)
    order = list(roots.atoms)
    replaced: list[Op] = []     # containers of outputs made anew: gone if nothing else reads them

    def own(atom: Atom) -> Atom:
        held = roots.held(atom)
        kind = kinds.get(id(atom))
        if not held or kind == "scalar":
            return atom
        op = roots.made_by.get(id(atom))
        if op is not None and op.prim in _CONTAINERS and op in stmts:     # a tuple of outputs: each its own
            items = [own(a) for a in (op.args[1:] if op.prim is runtime.make_dict else op.args)]
            args = [op.args[0], *items] if op.prim is runtime.make_dict else items
            if id(atom) not in read:        # made for the return alone: made after the copies
                stmts.remove(op)
                stmts.append(Op(op.prim, args, list(op.outs), dict(op.kwargs), op.loc))
                return atom
            made = namer.value(atom.hint if isinstance(atom, Value) else "")
            stmts.append(Op(op.prim, args, [made], dict(op.kwargs), loc))
            replaced.append(op)
            return made
        out = namer.value(atom.hint if isinstance(atom, Value) and atom.hint else "out")
        others = [roots.atoms[i] for i in sorted(held, key=order.index) if i in roots.in_scope]
        if kind == "array" and (roots.direct(atom) or len(others) < len(held) or not checks):
            # an argument, a global or a constant, or a view of one (or made from a global read in a loop, out of
            # scope here): a copy
            stmts.append(Op(np.copy, [atom], [out], {}, loc))
        elif not checks:            # (Numba compiles no such helper: what is not known an array is left)
            return atom
        elif roots.direct(atom) or len(others) < len(held):         # the same, of a kind not known: its arrays
            stmts.append(Op(runtime._copied, [atom], [out], {}, loc))
        else:       # made from one by operations that may return it: copied where it shares memory, when it runs
            stmts.append(Op(runtime._unshared, [atom, *others], [out], {}, loc))
        return out

    fn.body.results = [own(r) for r in fn.body.results]
    own = None      # type: ignore[assignment]  # (a recursive closure is a cycle: let the IR go by reference counting)
    for op in reversed(replaced):       # (the outermost first: what it read may then be read by nothing)
        needed = {id(a) for st in walk(fn.body) for a in _inputs(st)} | {id(r) for r in fn.body.results}
        if not any(id(o) in needed for o in op.outs):
            stmts.remove(op)
    return fn


def _holds_nothing(fn: Function, param_kinds: list) -> bool:
    """Whether nothing _Roots starts from occurs in fn: every parameter is a number, no operation reads a global,
    no constant holds an array. Then no value shares memory with one, and fn is its outputs' own owner, known
    without the kinds and the roots of every value (two walks of the dataflow engine over a large function)."""
    if any(k != "scalar" for k in param_kinds):
        return False
    free, plain = runtime.free_name, _PLAIN_CONSTANTS
    for stmt in walk(fn.body):
        if stmt.__class__ is Op:
            if stmt.prim is free:
                return False
            atoms = [*stmt.args, *stmt.kwargs.values()] if stmt.kwargs else stmt.args
        else:
            atoms = _inputs(stmt)
        for a in atoms:
            if a.__class__ is Const and type(a.value) not in plain and runtime._leaves(a.value):
                return False
    return not any(a.__class__ is Const and type(a.value) not in plain and runtime._leaves(a.value)
                   for a in fn.body.results)


_PLAIN_CONSTANTS = frozenset({float, int, bool, complex, str, type(None)})


def _inputs(stmt: Any) -> list[Atom]:
    """What a statement reads (a nested block's results too: stmt_inputs gives its own operands)."""
    found = list(stmt_inputs(stmt))
    for block in (stmt.then, stmt.orelse) if isinstance(stmt, If) else (
            (stmt.test, stmt.body) if isinstance(stmt, While) else (stmt.body,) if isinstance(stmt, For) else ()):
        found += block.results
    return found


def _outputs(fn: Function, roots: _Roots) -> list[Atom]:
    """The function's outputs, and the items of the tuples, lists and dicts of them it makes at its end."""
    def items(atom: Atom) -> list[Atom]:
        op = roots.made_by.get(id(atom))
        if op is None or op.prim not in _CONTAINERS:
            return [atom]
        return [atom, *(i for a in (op.args[1:] if op.prim is runtime.make_dict else op.args) for i in items(a))]
    found = [i for r in fn.body.results for i in items(r)]
    items = None        # type: ignore[assignment]  # (the recursive closure's cycle broken)
    return found
