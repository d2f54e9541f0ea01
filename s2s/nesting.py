"""Expressions nested as a person writes them: a temporary read once is written where it is read.

`t1 = X @ W1; t2 = t1 + b1; hidden = np.tanh(t2)` reads as `hidden = np.tanh(X @ W1 + b1)`, and
`t = W2.T; dhidden = dv4 @ t` as `dhidden = dv4 @ W2.T`. `nested(fn, uses)` picks the operations the
emitter writes as part of the one statement that reads their result (s2s/emit.py's `inlined`). An
operation is nested only where that changes nothing Python does but the order of pure operations:

- it is pure, has one result, read exactly once, by a later operation of the same block, from the same
  line of the user's code (so each comment still quotes the line its code comes from);
- the result is a temporary (the user's variables, such as `z` or `hidden`, keep their names) and not
  written in place by its reader (`t *= 0.5` needs the name);
- nothing between the two writes into an array the expression reads (an in-place update, an item
  assignment, an append), and nothing between them is a call with effects;
- the statement it goes into holds at most MAX_NESTED operations, so lines stay short.
"""
from __future__ import annotations

import ast
import operator
import re
from typing import Any

from . import runtime
from .ir import Block, Const, For, Function, Op, Value, stmt_blocks, walk
from .optimize import is_pure

MAX_NESTED = 4
_TEMPORARY = re.compile(r"(d?v\d+(_dot)?|t|)")
_NEVER = {runtime.free_name, runtime.stack_new, runtime.make_list, runtime.make_dict, runtime.pop, runtime.push,
          runtime.setitem, runtime.list_append, runtime._seed}
_MUTATING = {runtime.setitem: 0, runtime.push: 0, runtime.list_append: 0}


def _mutated(op: Op) -> Any:
    """The value op writes into, if any."""
    if op.in_place is not None:
        return op.args[op.in_place]
    k = _MUTATING.get(op.prim)
    return op.args[k] if k is not None and op.args else None


def _attribute(op: Op) -> bool:
    """`W.T`: an attribute read that computes nothing."""
    return op.prim is getattr and isinstance(op.args[1], Const) and op.args[1].value in ("T", "real", "imag", "shape")


def _accumulates(op: Op, part: Value) -> bool:
    """`dW = dW + dW_1`: a partial adjoint added into its value's adjoint (written `dW = dW + np.outer(g, x)`),
    or `dx = -math.cos(x); dx = dx + y`: one variable built up (written `dx = -math.cos(x) + y`)."""
    return len(op.outs) == 1 and op.outs[0].hint == part.hint


def nested(fn: Function, uses: dict[int, int], inlined: dict[int, Op]) -> dict[int, Op]:
    """id of a value -> the operation written in its place, for the values nested into their reader."""
    indices = {id(s.index) for s in walk(fn.body) if isinstance(s, For)}
    chosen: dict[int, Op] = {}
    size: dict[int, int] = {}           # an operation -> how many operations its statement holds

    def reads(op: Op) -> set[int]:
        """The values op's expression reads, through what is nested into it."""
        found: set[int] = set()
        for a in list(op.args) + list(op.kwargs.values()):
            if isinstance(a, Value):
                found.add(id(a))
                inner = chosen.get(id(a))
                if inner is not None:
                    found |= reads(inner)
        return found

    def candidate(op: Op) -> bool:
        if len(op.outs) != 1 or op.in_place is not None or op.prim in _NEVER or not (is_pure(op.prim) or _attribute(op)):
            return False
        out = op.outs[0]
        if id(out) in inlined or uses.get(id(out)) != 1:
            return False
        return not (op.prim is operator.getitem and isinstance(op.args[1], Value) and id(op.args[1]) in indices)

    def block(b: Block) -> None:
        pending: dict[int, tuple[Op, int]] = {}       # a candidate's result -> (its op, its position)
        for position, stmt in enumerate(b.stmts):
            for inner in stmt_blocks(stmt):
                block(inner)
            if not isinstance(stmt, Op):
                pending.clear()             # a loop or branch between: not looked through
                continue
            total = 1
            for a in list(stmt.args) + list(stmt.kwargs.values()):
                found = pending.pop(id(a), None) if isinstance(a, Value) else None
                if found is None:
                    continue
                op, _ = found
                if not (_TEMPORARY.fullmatch(a.hint or "") or _accumulates(stmt, a)):
                    continue
                if op.loc is not None and (stmt.loc is None or (op.loc.file, op.loc.line) !=
                                           (stmt.loc.file, stmt.loc.line)):
                    continue
                if stmt.in_place is not None and stmt.args[stmt.in_place] is a:
                    continue
                if total + size.get(id(op), 1) > MAX_NESTED + 1:
                    continue
                chosen[id(a)] = op
                total += size.get(id(op), 1)
            size[id(stmt)] = total
            written = _mutated(stmt)
            if written is not None or not (is_pure(stmt.prim) or _attribute(stmt)) and stmt.prim is not runtime.pop:
                spoiled = [k for k, (op, _) in pending.items()
                           if written is None or id(written) in reads(op) or k == id(written)]
                for k in spoiled:
                    del pending[k]
            if candidate(stmt):
                pending[id(stmt.outs[0])] = (stmt, position)
    block(fn.body)
    params = {id(p) for p in fn.params}
    for stmt in walk(fn.body):          # `len(xs)` of a parameter: written where it is read, however often
        if isinstance(stmt, Op) and stmt.prim is len and len(stmt.args) == 1 and not stmt.kwargs \
                and isinstance(stmt.args[0], Value) and id(stmt.args[0]) in params and len(stmt.outs) == 1 \
                and id(stmt.outs[0]) not in inlined:
            chosen[id(stmt.outs[0])] = stmt
    return chosen


# ---------------------------------------------------------------- initializations on one line

def _initialization(node: ast.stmt) -> str | None:
    """The kind of a statement `name = []` ("list") or `name = np.zeros_like(other)` ("zeros"), else None."""
    if not (isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name)):
        return None
    value = node.value
    if isinstance(value, ast.List) and not value.elts:
        return "list"
    if isinstance(value, ast.Call) and not value.keywords and len(value.args) == 1 \
            and isinstance(value.args[0], ast.Name) and isinstance(value.func, ast.Attribute) \
            and value.func.attr == "zeros_like" and isinstance(value.func.value, ast.Name) \
            and value.func.value.id == "np":
        return "zeros"
    return None


def merge_initializations(stmts: list[ast.stmt], locs: dict[int, Any]) -> list[ast.stmt]:
    """Consecutive `a = []; b = []` or `da = np.zeros_like(a); db = np.zeros_like(b)` from one line of the
    user's code as one statement, `da, db = np.zeros_like(a), np.zeros_like(b)`, as people write them."""
    out: list[ast.stmt] = []
    run: list[ast.stmt] = []

    def place(node: ast.stmt) -> Any:
        loc = locs.get(id(node))
        return None if loc is None else (loc.file, loc.line)

    def flush() -> None:
        if len(run) > 1:
            merged = ast.Assign(targets=[ast.Tuple(elts=[n.targets[0] for n in run], ctx=ast.Store())],
                                value=ast.Tuple(elts=[n.value for n in run], ctx=ast.Load()), type_comment=None)
            if id(run[0]) in locs:
                locs[id(merged)] = locs[id(run[0])]
            out.append(merged)
        else:
            out.extend(run)
        run.clear()

    for node in stmts:
        for field in ("body", "orelse"):
            inner = getattr(node, field, None)
            if isinstance(inner, list) and inner and isinstance(inner[0], ast.stmt):
                setattr(node, field, merge_initializations(inner, locs))
        kind = _initialization(node)
        if run and (kind != _initialization(run[0]) or place(node) != place(run[0])
                    or node.targets[0].id in {n.targets[0].id for n in run}
                    or kind == "zeros" and node.value.args[0].id in {n.targets[0].id for n in run}):
            flush()
        if kind is None:
            out.append(node)
        else:
            run.append(node)
    flush()
    return out
