"""A derivative split in two: what does not depend on some of its parameters, run once; the rest, run as often as
asked (s2s.vjp's pullback and s2s.linearize's jvp_fn reuse the forward sweep instead of running it again).

`split(fn, late)` takes a derivative's IR and the positions of the parameters known only later (a vjp's cotangent,
a jvp's tangents) and gives two Functions:
- `early(*the other parameters)` runs every top-level statement that reads none of the late parameters (for a vjp,
  the whole forward sweep with its loops and stacks) and returns the results that need nothing else, then the values
  the rest reads (`saved`);
- `late(*the other parameters, *saved, *the late parameters)` runs the rest and returns every result. A stack the
  forward sweep filled is copied on entry, so that `late` can run again (a pullback called twice).
A statement (a loop, a branch) that reads a late parameter anywhere runs in `late`, with everything after it that
depends on it.
"""
from __future__ import annotations

from typing import Any

from s2s import runtime
from s2s.ir.core import UNDEFINED, Atom, Block, Const, Function, If, Op, Value, free_values, stmt_blocks, stmt_defs, \
    stmt_inputs, substitute, walk
from s2s.ir.naming import Namer


def _reads(stmt: Any) -> list[Atom]:
    found = list(stmt_inputs(stmt))
    for inner in stmt_blocks(stmt):
        found.extend(free_values(inner))
    return found


def split(fn: Function, late: list[int]) -> tuple[Function, Function, int]:
    """(early, late, how many of fn's results early returns: the first ones)."""
    late_params = {id(fn.params[k]) for k in late}
    depends: set[int] = set(late_params)
    stacks = {id(st.outs[0]) for st in walk(fn.body) if isinstance(st, Op) and st.prim is runtime.stack_new}
    early_stmts, late_stmts = [], []
    for stmt in fn.body.stmts:
        reads = _reads(stmt)
        if any(isinstance(a, Value) and id(a) in depends for a in reads):
            late_stmts.append(stmt)
            for st in [stmt, *[s for b in stmt_blocks(stmt) for s in walk(b)]]:
                depends.update(id(v) for v in stmt_defs(st))
            # a stack it pushes or pops: what comes after it on that stack comes after it in time too
            depends.update(id(a) for a in reads if isinstance(a, Value) and id(a) in stacks)
            continue
        early_stmts.append(stmt)
    # a stack popped late is the late part's (it is filled early: passed on, copied)
    defined_early = {id(v) for st in early_stmts for s in [st, *[x for b in stmt_blocks(st) for x in walk(b)]]
                     for v in stmt_defs(s)}
    others = [p for k, p in enumerate(fn.params) if k not in late]
    late_reads: dict[int, Value] = {}
    for atom in free_values(Block(late_stmts, list(fn.body.results))):
        if isinstance(atom, Value) and id(atom) in defined_early:
            late_reads[id(atom)] = atom
    saved = list(late_reads.values())
    results = list(fn.body.results)
    if len(results) == 1 and isinstance(results[0], Value):     # a tuple (value, derivative): its items
        made = next((st for st in fn.body.stmts if isinstance(st, Op) and st.prim is runtime.make_tuple
                     and st.outs[0] is results[0]), None)
        if made is not None:
            results = list(made.args)
    results_early = 0
    for r in results:
        if isinstance(r, Value) and id(r) in depends:
            break
        results_early += 1
    saved = [v for v in saved if not any(v is r for r in results[:results_early])]
    early_stmts = _bound_on_every_path(early_stmts, {id(v) for v in [*results[:results_early], *saved]})
    early = Function(f"{fn.name}_forward", list(others), Block(early_stmts, results[:results_early] + saved), fn.loc)
    saved = list(results[:results_early]) + saved        # the rest reads these too (as its parameters)
    namer = Namer()
    for name in _names(fn):
        namer.reserve(name)
    copies: dict[int, Atom] = {}
    entry = []
    params = []
    for v in saved:
        if not isinstance(v, Value):
            params.append(namer.value("unused"))
            continue
        p = namer.value(v.hint or "saved")
        params.append(p)
        if id(v) in stacks:             # popped late: a copy, so that the late part can run again
            copy = namer.value(v.hint or "stack")
            entry.append(Op(list, [p], [copy]))
            copies[id(v)] = copy
        else:
            copies[id(v)] = p
    body = Block(entry + late_stmts, list(fn.body.results))
    substitute(body, copies)
    late_fn = Function(f"{fn.name}_rest", list(others) + params + [fn.params[k] for k in late], body, fn.loc)
    return early, late_fn, results_early


def _bound_on_every_path(stmts: list, returned: set[int]) -> list:
    """stmts, with a branch's result that a path does not define (a value the rest reads only on the path that
    defines it: `v = v[0]` under `if z_isscalar:`) bound to None on that path where the early part returns it: it
    returns every value it saves, whichever path ran."""
    out = []
    for stmt in stmts:
        if isinstance(stmt, If) and any(id(v) in returned for v in stmt.outs):
            blocks = []
            for block in (stmt.then, stmt.orelse):
                results = [Const(None) if id(v) in returned and isinstance(r, Const) and r.value is UNDEFINED else r
                           for v, r in zip(stmt.outs, block.results)]
                blocks.append(Block(block.stmts, results))
            stmt = If(stmt.cond, blocks[0], blocks[1], stmt.outs, stmt.loc)
        out.append(stmt)
    return out


def _names(fn: Function) -> set[str]:
    names = {p.name for p in fn.params}
    for st in walk(fn.body):
        names.update(v.name for v in stmt_defs(st))
    return names
