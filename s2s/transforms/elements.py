"""Reverse mode for reading and writing array elements: `x[i]`, `x[i, j]`, `x[a:b]`, `out[i] = v`.

An index is basic when it is made of integers, slices, None and Ellipsis only (known when the transform runs:
constants, values of kind scalar, tuples of them); a basic index never repeats an element. On an array with a
basic index:

- the adjoint of `y = x[i]` is added into x's adjoint where it was read, `dx[i] = dx[i] + dy`, as a functional
  `setitem` on x's adjoint so far (no full-size `_scatter` per read);
- the adjoint of `out2 = setitem(out, i, v)` is `dv = dout2[i]` (summed to v's shape) and, for out,
  `setitem(dout2, i, 0.0)`: what was overwritten gets no adjoint. The forward sweep saves nothing for it
  but the index.

Both stay values (SSA): whether a `setitem` writes into the array it is given, in O(1), or into a copy is
decided at the end by s2s/passes/in_place.py, which proves that nothing else reads the old array. Any other index
(an array of indices, a slice object made at run time) and any container other than an array keep the rules
of rules/python_operators.py (`_scatter`, `_written`, `_overwritten`).
"""
from __future__ import annotations

from typing import Any

from s2s.ir import syntax
from s2s import runtime
from s2s.analysis.values import is_container
from s2s.ir.core import Atom, Block, Const, For, If, Op, Stmt, Value, While, substitute, uses_in, walk
from s2s.ir.naming import adjoint_hint

_BASIC_CONSTANTS = (int, slice, type(None), type(Ellipsis))


def basic_index(index: Atom, kinds: dict[int, Any], defining: dict[int, Op]) -> bool:
    """Whether index is made of integers, slices, None and Ellipsis only (no repeated element)."""
    if isinstance(index, Const):
        items = index.value if isinstance(index.value, tuple) else (index.value,)
        return all(isinstance(i, _BASIC_CONSTANTS) and not isinstance(i, bool) for i in items)
    kind = kinds.get(id(index))
    if kind == "scalar":            # a number used as an index: an integer (Python refuses a float)
        return True
    made = defining.get(id(index))
    if made is not None and made.prim is slice and not made.kwargs:     # x[a:b]: a slice made when it runs
        return all(isinstance(a, Const) and (a.value is None or type(a.value) is int) or kinds.get(id(a)) == "scalar"
                   for a in made.args)
    if made is not None and made.prim is runtime.make_tuple:
        return all(basic_index(a, kinds, defining) and not (isinstance(a, Value) and is_container(kinds.get(id(a))))
                   for a in made.args)
    return False


def handles(rev: Any, op: Op) -> bool:
    """Whether op is an element read or write of an array that this module reverses."""
    if op.kwargs or op.prim not in (syntax.SUBSCRIPT, runtime.setitem):
        return False
    container = op.args[0]
    if not isinstance(container, Value) or rev.kinds.get(id(container)) != "array":
        return False
    return basic_index(op.args[1], rev.kinds, rev.defining)


def reverse(rev: Any, op: Op, g: Atom, needed: list[int], out: list[Stmt]) -> None:
    """Append the adjoint statements of an element read or write (see handles) to out."""
    if op.prim is syntax.SUBSCRIPT:
        x, index = op.args
        current = rev.adj.get(id(x))
        if current is None:         # the first contribution: zeros with g in place (one array, as a rule would)
            scattered = rev.fresh(adjoint_hint(x))
            out.append(Op(runtime._scatter, [x, index, g], [scattered], loc=op.loc))
            rev.adj[id(x)] = scattered
            return
        current = rev.full(current, x, out, op.loc)
        rev.adj[id(x)] = add_at(rev, current, index, g, adjoint_hint(x), out, op.loc)
        return
    container, index, value = op.args
    if 2 in needed:
        taken = rev.fresh(adjoint_hint(value))
        out.append(Op(syntax.SUBSCRIPT, [g, index], [taken], loc=op.loc))
        written = rev.fresh(adjoint_hint(value))
        out.append(Op(runtime._unbroadcast, [taken, value], [written], loc=op.loc))
        rev.accumulate(value, written, out, op.loc)
    if 0 in needed:
        cleared = rev.fresh(adjoint_hint(container))
        out.append(Op(runtime.setitem, [g, index, Const(0.0)], [cleared], loc=op.loc))
        rev.accumulate(container, cleared, out, op.loc)


def add_at(rev: Any, current: Atom, index: Atom, g: Atom, hint: str, out: list[Stmt], loc: Any) -> Value:
    """`current` with g added at a basic index: `t = current[index] + g; current[index] = t`, as values."""
    item = rev.fresh("")            # temporaries: the emitter may write `dx[j] = dx[j] + g` on one line
    out.append(Op(syntax.SUBSCRIPT, [current, index], [item], loc=loc))
    total = rev.fresh("")
    out.append(Op(syntax.BINARY["+"], [item, g], [total], loc=loc))
    result = rev.fresh(hint)
    out.append(Op(runtime.setitem, [current, index, total], [result], loc=loc))
    return result


# ---------------------------------------------------------------- indices computed again in the reverse sweep

_CHEAP = {syntax.BINARY["+"], syntax.BINARY["-"], syntax.BINARY["*"], syntax.UNARY["-"], syntax.BINARY["//"], syntax.BINARY["%"]}


def recompute(rev: Any, forward: Block, header: list[Value], needed: dict[int, Value], index: dict[int, Atom],
              mapping: dict[int, Atom]) -> list[Op]:
    """For the values of a loop body that the reverse body reads and that are cheap arithmetic on numbers
    from the loop's index and values from outside the loop (`i - 1`, `(i, j)`, `a:b`), or an element of an
    array from outside the loop (`x[j]`: SSA values do not change, and s2s/passes/in_place.py writes into no array
    that is read later): the operations that compute them again in the reverse body, where `index` maps the
    forward loop's index to the reverse one. Fills mapping (forward value -> its recomputed value); what it
    leaves out is pushed as before."""
    defined = {id(v) for s in forward.stmts for v in s.outs}
    header = {id(v) for v in header}
    defining = {id(o): s for s in forward.stmts if isinstance(s, Op) for o in s.outs}
    chosen: dict[int, bool] = {}

    def numbers(a: Atom) -> bool:
        return isinstance(a, Const) and isinstance(a.value, (int, float)) or rev.kinds.get(id(a)) == "scalar"

    def cheap(a: Atom, depth: int) -> bool:
        if isinstance(a, Const) or id(a) in index:
            return True
        if id(a) in header:          # carried: changes from one iteration to the next
            return False
        if id(a) not in defined:     # from outside the loop
            return True
        if id(a) in chosen:
            return chosen[id(a)]
        op = defining.get(id(a))
        ok = (depth < 3 and isinstance(op, Op) and len(op.outs) == 1 and not op.kwargs and (
            (op.prim in _CHEAP and all(numbers(x) for x in op.args) and rev.kinds.get(id(a)) == "scalar") or
            (op.prim in (runtime.make_tuple, slice) and all(numbers(x) or isinstance(x, Const) and x.value is None
                                                            for x in op.args)) or
            (op.prim is syntax.SUBSCRIPT and len(op.args) == 2 and isinstance(op.args[0], Value)   # x[i] again,
             and rev.kinds.get(id(op.args[0])) == "array" and id(op.args[0]) not in defined)) # x from outside
            and all(cheap(x, depth + 1) for x in op.args))
        chosen[id(a)] = ok
        return ok

    wanted = {k for k, v in needed.items() if id(v) in defining and cheap(v, 0)}
    del cheap               # (a closure that calls itself: a cycle holding the loop's tables, freed now)
    if not wanted:
        return []
    closure: set[int] = set()

    def need(a: Atom) -> None:
        if isinstance(a, Value) and id(a) in defining and id(a) not in closure:
            closure.add(id(a))
            for x in defining[id(a)].args:
                need(x)
    for k in wanted:
        need(needed[k])
    del need
    again: list[Op] = []
    local: dict[int, Atom] = dict(index)
    for s in forward.stmts:
        if isinstance(s, Op) and s.outs and id(s.outs[0]) in closure:
            out = rev.fresh(s.outs[0].hint)
            args = [local.get(id(a), a) if isinstance(a, Value) else a for a in s.args]
            again.append(Op(s.prim, args, [out], loc=s.loc))
            local[id(s.outs[0])] = out
    for k in wanted:
        mapping[k] = local[k]
    return again


# ---------------------------------------------------------------- overwritten elements, restored

def restore_overwritten(rev: Any, loop: Any, body: list[Stmt], inits: list[Atom], carried: list[Value],
                        results: list[Atom]) -> None:
    """When the reverse body reads a whole array that the forward body writes element by element (`total +
    np.sum(out * out)` before `out[i] = v`), push the overwritten element instead of the array: before each
    write the forward body reads the old element (`old = out[i]`, a number the reverse body pops), and the
    reverse body, which carries the array from the forward loop's final one, writes it back (`out[i] = old`)
    after the last read of the newer version. Appends that carried array to inits/carried/results."""
    forward = loop.body
    read = {id(a) for a in _uses(body)}
    for j, c in enumerate(loop.carried):
        if rev.kinds.get(id(c)) != "array" or not isinstance(loop.outs[j], Value):
            continue
        chain = _chain(rev, forward, c, forward.results[j])
        if chain is None or not any(id(a) in read for a, _ in chain):
            continue
        versions = [a for a, _ in chain]           # a_0 = c, a_1, ..., a_m = the body's result
        positions = _restore_positions(body, versions)
        if positions is None:
            continue
        state = rev.fresh(c.hint)
        current: Atom = state
        mapping = {id(versions[-1]): state}
        restores = []
        for k in range(len(chain) - 1, 0, -1):
            write = chain[k][1]
            index = write.args[1]
            old = rev.fresh(c.hint)
            forward.stmts.insert(next(p for p, s in enumerate(forward.stmts) if s is write),
                                 Op(syntax.SUBSCRIPT, [versions[k - 1], index], [old], loc=write.loc))
            restored = rev.fresh(c.hint)
            restores.append((positions[k], Op(runtime.setitem, [current, index, old], [restored], loc=write.loc)))
            mapping[id(versions[k - 1])] = restored
            current = restored
        substitute(Block(body, []), mapping)
        # later positions first; at one position the newest version's restore must come first: inserted last
        order = sorted(range(len(restores)), key=lambda e: (-restores[e][0], -e))
        for e in order:
            body.insert(restores[e][0], restores[e][1])
        inits.append(loop.outs[j])
        carried.append(state)
        results.append(current)


def _uses(stmts: list[Stmt]) -> list[Atom]:
    return list(uses_in(Block(stmts, [])))


def _chain(rev: Any, forward: Block, c: Value, end: Atom) -> list[tuple[Value, Any]] | None:
    """c, then each `setitem` at the top of the body that writes the previous version, up to end (the body's
    result); None unless every version but the last is written exactly once and handed on nowhere else."""
    chain: list[tuple[Value, Any]] = [(c, None)]
    current = c
    while True:
        if sum(r is current for r in forward.results) != (1 if current is end else 0):
            return None
        if any(not (s is not None and isinstance(s, Op) and s.prim is runtime.setitem) and _writes_into(s, current)
               for s in forward.stmts):
            return None
        if current is end:
            return chain if len(chain) > 1 else None
        writes = [s for s in forward.stmts if isinstance(s, Op) and s.prim is runtime.setitem
                  and s.args[0] is current]
        if len(writes) != 1 or any(a is current for a in writes[0].args[1:]) or writes[0].kwargs \
                or not basic_index(writes[0].args[1], rev.kinds, rev.defining):
            return None
        current = writes[0].outs[0]
        chain.append((current, writes[0]))


def _writes_into(stmt: Any, v: Value) -> bool:
    """Whether a statement hands v on (a loop's start, a branch's result) or writes into it: not a plain read."""
    for s in [stmt, *walk(Block([stmt], []))]:
        if isinstance(s, (For, While)) and any(a is v for a in s.inits):
            return True
        if isinstance(s, If) and any(a is v for b in (s.then, s.orelse) for a in b.results):
            return True
        if isinstance(s, Op) and s.prim in (runtime.setitem, runtime.list_append) and s.args and s.args[0] is v:
            return True
    return False


def _restore_positions(body: list[Stmt], versions: list[Value]) -> dict[int, int] | None:
    """Where, in the reverse body, the restore of version k-1 from version k goes: after every statement that
    reads version k (or a newer one) and before any that reads an older one. None if a statement reads two."""
    level = {id(v): k for k, v in enumerate(versions)}
    reads = []
    for s in body:
        found = {level[id(a)] for a in _uses([s]) if isinstance(a, Value) and id(a) in level}
        if len(found) > 1:
            return None
        reads.append(found.pop() if found else None)
    last = len(versions) - 1
    positions: dict[int, int] = {}
    for k in range(last, 0, -1):
        # the first statement reading a version older than k
        first_older = next((p for p, r in enumerate(reads) if r is not None and r < k), len(body))
        newest_after = [r for r in reads[first_older:] if r is not None and r >= k]
        if newest_after:
            return None
        positions[k] = first_older
    return positions
