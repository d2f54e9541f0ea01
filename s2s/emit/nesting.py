"""Expressions nested as a person writes them: a temporary read once is written where it is read.

`t1 = X @ W1; t2 = t1 + b1; hidden = np.tanh(t2)` reads as `hidden = np.tanh(X @ W1 + b1)`, and
`t = W2.T; dhidden = dv4 @ t` as `dhidden = dv4 @ W2.T`. `nested(fn, uses)` picks the operations the
emitter writes as part of the one statement that reads their result (s2s/emit/python.py's `inlined`). An
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

import re
from typing import Any

from s2s.ir import syntax
from s2s import runtime
from s2s.emit.source_text import Stmt
from s2s.ir.core import Block, Const, For, Function, Op, Value, stmt_blocks, walk
from s2s.passes.optimize import is_pure

MAX_NESTED = 4
_TEMPORARY = re.compile(r"(d?v\d+(_dot)?|t|)")
_NEVER = {runtime.free_name, runtime.stack_new, runtime.make_list, runtime.make_dict, runtime.pop, runtime.push,
          runtime.setitem, runtime.list_append, runtime._seed,
          runtime._masked, runtime._masked_tangent}      # (their own statements: quieted, s2s/emit/python.py)
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


def nested(fn: Function, uses: dict[int, int], inlined: dict[int, Op], fors: list[For] | None = None,
           lens: list[Op] | None = None) -> dict[int, Op]:
    """id of a value -> the operation written in its place, for the values nested into their reader.
    fors, lens: the function's `for` loops and `len` operations, when the caller has found them. One pass:
    each operation is looked at once, and a write into an array finds the expressions reading it by an index."""
    if fors is None or lens is None:
        stmts = list(walk(fn.body))
        fors = [s for s in stmts if isinstance(s, For)]
        lens = [s for s in stmts if isinstance(s, Op) and s.prim is len]
    indices = {id(s.index) for s in fors}
    chosen: dict[int, Op] = {}
    purity: dict[int, tuple] = {}       # id of a primitive -> (is_pure, the argument it writes into, in _NEVER)
    temporary: dict[str, bool] = {}     # a hint -> whether it names a temporary

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

    getitem, pop, never, mutating = syntax.SUBSCRIPT, runtime.pop, _NEVER, _MUTATING

    def block(b: Block) -> None:
        pending: dict[int, tuple[Op, int]] = {}     # a candidate's result -> (its op, the operations it holds)
        readers: dict[int, list[int]] = {}      # a value -> the pending results whose expressions read it
        indexed = False                         # readers is kept once a write into an array needs it
        for stmt in b.stmts:
            if stmt.__class__ is not Op:
                for inner in stmt_blocks(stmt):
                    block(inner)
                pending.clear()             # a loop or branch between: not looked through
                readers.clear()
                indexed = False
                continue
            total = 1
            if pending:
                for a in (stmt.args if not stmt.kwargs else list(stmt.args) + list(stmt.kwargs.values())):
                    found = pending.pop(id(a), None) if a.__class__ is Value else None
                    if found is None:
                        continue
                    op, inner_size = found
                    hint = a.hint or ""
                    is_temporary = temporary.get(hint)
                    if is_temporary is None:
                        is_temporary = temporary[hint] = _TEMPORARY.fullmatch(hint) is not None
                    # `dW = dW + dW_1`: a partial adjoint added into its value's adjoint (written
                    # `dW = dW + np.outer(g, x)`), or `dx = -math.cos(x); dx = dx + y`: one variable built up
                    if not (is_temporary or len(stmt.outs) == 1 and stmt.outs[0].hint == a.hint):
                        continue
                    loc, here = op.loc, stmt.loc
                    if loc is not None and (here is None or loc.line != here.line or loc.file != here.file):
                        continue
                    if stmt.in_place is not None and stmt.args[stmt.in_place] is a:
                        continue
                    if total + inner_size > MAX_NESTED + 1:
                        continue
                    chosen[id(a)] = op
                    total += inner_size
            prim = stmt.prim
            info = purity.get(id(prim))
            if info is None:
                info = purity[id(prim)] = (bool(is_pure(prim)), mutating.get(prim), prim in never)
            is_pure_op, k, is_never = info
            if is_pure_op and k is None and stmt.in_place is None:      # the common case: writes nothing
                if not is_never and len(stmt.outs) == 1:
                    key = id(stmt.outs[0])
                    if key not in inlined and uses.get(key) == 1 and not (
                            prim is getitem and stmt.args[1].__class__ is Value and id(stmt.args[1]) in indices):
                        pending[key] = (stmt, total)
                        if indexed:
                            for r in reads(stmt):
                                readers.setdefault(r, []).append(key)
                continue
            if not is_pure_op:
                is_pure_op = _attribute(stmt)
            if stmt.in_place is not None:
                written = stmt.args[stmt.in_place]
            else:
                written = stmt.args[k] if k is not None and stmt.args else None
            if written is not None:
                if not indexed:
                    for key, (op, _) in pending.items():
                        for r in reads(op):
                            readers.setdefault(r, []).append(key)
                    indexed = True
                for key in readers.pop(id(written), ()):
                    pending.pop(key, None)
                pending.pop(id(written), None)
            elif not is_pure_op and prim is not pop:
                pending.clear()             # a call with effects: nothing moves across it
                readers.clear()
                indexed = False
            # a candidate: pure, one result read once, not written in place, and not an item of a loop's index
            if is_pure_op and stmt.in_place is None and len(stmt.outs) == 1 and not is_never:
                key = id(stmt.outs[0])
                if key not in inlined and uses.get(key) == 1 and not (
                        prim is getitem and stmt.args[1].__class__ is Value and id(stmt.args[1]) in indices):
                    pending[key] = (stmt, total)
                    if indexed:
                        for r in reads(stmt):
                            readers.setdefault(r, []).append(key)
    block(fn.body)
    del block, reads        # (closures that call themselves: a cycle, freed now, not by the collector)
    params = {id(p) for p in fn.params}
    for stmt in lens:           # `len(xs)` of a parameter: written where it is read, however often
        if len(stmt.args) == 1 and not stmt.kwargs \
                and isinstance(stmt.args[0], Value) and id(stmt.args[0]) in params and len(stmt.outs) == 1 \
                and id(stmt.outs[0]) not in inlined:
            chosen[id(stmt.outs[0])] = stmt
    return chosen


# ---------------------------------------------------------------- initializations on one line

def merge_initializations(stmts: list[Stmt]) -> list[Stmt]:
    """Consecutive `a = []; b = []`, `da = np.zeros_like(a); db = np.zeros_like(b)` or `a = np.empty((n, 3));
    b = np.empty((n, 2))` from one line of the user's code as one statement, `da, db = np.zeros_like(a),
    np.zeros_like(b)`, as people write them.
    (source_text.assign marks them: `init` is ("list", target) or ("zeros", target, arg).)"""
    out: list[Stmt] = []
    run: list[Stmt] = []

    def place(node: Stmt) -> Any:
        loc = node.loc
        return None if loc is None else (loc.file, loc.line)

    def flush() -> None:
        if len(run) > 1:
            values = ["[]" if n.init[0] == "list" else f"np.zeros_like({n.init[2]})" if n.init[0] == "zeros"
                      else n.init[2] for n in run]
            merged = Stmt(f"{', '.join(n.init[1] for n in run)} = {', '.join(values)}", odd=run[0].odd)
            merged.loc = run[0].loc
            out.append(merged)
        else:
            out.extend(run)
        run.clear()

    for node in stmts:
        if node.body:
            node.body = merge_initializations(node.body)
        if node.orelse:
            node.orelse = merge_initializations(node.orelse)
        init = node.init
        if run and (init is None or init[0] != run[0].init[0] or place(node) != place(run[0])
                    or init[1] in {n.init[1] for n in run}
                    or init[0] == "zeros" and init[2] in {n.init[1] for n in run}
                    or init[0] == "empty" and any(re.search(rf"\b{n.init[1]}\b", init[2]) for n in run)):
            flush()
        if init is None:
            out.append(node)
        else:
            run.append(node)
    flush()
    return out
