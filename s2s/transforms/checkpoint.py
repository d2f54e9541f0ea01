"""Checkpointed reversal of loops: long loops in bounded memory.

`s2s.grad(f, checkpoint=40)` (a number of snapshots) or `checkpoint="200MB"` (a
budget, divided at run time by the size of the loop's carried values) reverses
each loop of f that no other loop encloses this way instead of with stacks:

- the forward sweep runs the loop exactly as the user wrote it, saving nothing;
  a `while` loop also counts its iterations there (that sweep is the counting
  pass, so a tolerance-based `while` is checkpointed like a `for`);
- the reverse sweep is a visible `while` over the tasks of a schedule, the
  generator `_revolve` below, copied into the generated module like the other
  helpers. A task either advances the carried values from index i to j with a
  copy of the body (the schedule keeps what it needs as a snapshot), or runs
  the body once at index i and reverses it at once, so per-iteration values live
  only for that one step. The body may hold loops and branches: they are
  reversed as in any straight-line code (a nested loop's stacks last one step).

Only the carried values are snapshots: at most s of them, and with s snapshots
and n steps each step runs forward at most t more times, t the least with
C(s + t, s) >= n (Griewank's binomial checkpointing, "revolve"): the fewest
recomputations for s snapshots.

`reverse_loop(rev, loop, out, snapshots)` is called by reverse.py for such a loop.
"""
from __future__ import annotations

import operator
import re
from typing import Any

from s2s import runtime
from s2s.errors import BadArgument, UnsupportedSyntax
from s2s.ir.core import Atom, Block, Const, For, If, Op, Stmt, Value, While, clone_block, free_values, walk
from s2s.ir.naming import adjoint_hint

_BUDGET = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([kKMG]?B)\s*$")


def checked_option(checkpoint: Any) -> Any:
    """checkpoint= as the pipeline takes it: None, a number of snapshots (>= 1), or a budget "200MB"."""
    if checkpoint is None:
        return None
    if isinstance(checkpoint, bool) or not isinstance(checkpoint, (int, str)):
        raise BadArgument(f"checkpoint={checkpoint!r}: give a number of snapshots (checkpoint=40) or a memory "
                          f"budget (checkpoint=\"200MB\")")
    if isinstance(checkpoint, int) and checkpoint < 1:
        raise BadArgument(f"checkpoint={checkpoint}: a checkpointed loop needs at least one snapshot")
    if isinstance(checkpoint, str) and not _BUDGET.match(checkpoint):
        raise BadArgument(f"checkpoint={checkpoint!r}: a budget is a number and a unit, B, kB, MB or GB "
                          f"(checkpoint=\"200MB\")")
    return checkpoint


# ---------------------------------------------------------------- the schedule (copied into generated code)

def _revolve(indices, snapshots, state):
    """Binomial checkpointing (Griewank's revolve) of a loop over `indices` whose carried values start as
    `state`: a generator of tasks `(i, j, state)`. With j, run the body from index i up to j (exclusive) and
    send the carried values reached; with j None, reverse the step at index i (send None). At most
    `snapshots` states are kept (a budget such as "200MB" is divided by the size of a state); each step
    runs forward at most t more times, t the least with C(s + t, s) >= steps: the fewest possible."""
    if isinstance(snapshots, str):
        def size(x):
            if isinstance(x, (tuple, list)):
                return 64 + sum(size(v) for v in x)
            if isinstance(x, dict):
                return 64 + sum(size(v) for v in x.values())
            return getattr(x, "nbytes", 0) + 100
        unit = snapshots.lstrip("0123456789. ").strip()
        scale = {"B": 1, "kB": 1e3, "KB": 1e3, "MB": 1e6, "GB": 1e9}[unit]
        snapshots = max(1, int(float(snapshots.strip()[:-len(unit)]) * scale // size(state)))
    count, first, step = len(indices), indices[0] if len(indices) else 0, indices.step
    kept = [(0, state)]                       # the snapshots: (position, carried values), last in first out
    todo = [(0, count, snapshots)] if count else []   # steps p..q-1 to reverse from the snapshot at p, with s
    while todo:
        p, q, s = todo.pop()
        x = kept[-1][1]
        while q - p > 1:                      # advance to a split point m; reverse m..q-1 first
            t, b = 0, 1                       # b = C(s + t, s): what s snapshots reverse with t repetitions
            while b < q - p:
                t += 1
                b = b * (s + t) // t
            left = b * t // (s + t)           # C(s + t - 1, s)
            m = p + max(1, left * (t - 1) // (s + t - 1), q - p - b * s // (s + t))
            todo.append((p, m, s))
            x = yield first + p * step, first + m * step, x
            p, s = m, s - 1
            if q - p > 1:
                kept.append((p, x))
        yield first + p * step, None, x
        if kept[-1][0] == p:
            kept.pop()


def _resume(schedule, reached):
    """The schedule's next task, given the state the last one reached (None when it is done)."""
    try:
        return schedule.send(reached)
    except StopIteration:
        return None


def _advancing(task):
    """Whether task advances (the schedule's first descent, which the forward sweep runs, is advances only)."""
    return task is not None and task[1] is not None


runtime.EMITTED_HELPERS.update({_revolve, _resume, _advancing})
_revolve._s2s_effect = _resume._s2s_effect = True      # type: ignore[attr-defined]  # generators: never merged


def _refuse_draws(loop: While | For) -> None:
    """A checkpointed loop runs its steps again: a random draw (or a method of an object known only when the code
    runs, which may draw) would give other numbers the second time."""
    from s2s.driver.selfcheck import draws_random
    for stmt in walk(loop.body):
        if isinstance(stmt, Op) and ((getattr(stmt.prim, "_s2s_effect", False) and not getattr(
                stmt.prim, "_s2s_again", False)) or draws_random([stmt.prim])):
            raise UnsupportedSyntax(
                "checkpoint= runs the loop's steps again, and this call may draw random numbers (or change its "
                "object), which would differ the second time", stmt.loc,
                hint="draw the numbers before the loop (z = rng.normal(size=n), then z[i] inside), or drop checkpoint=")


# ---------------------------------------------------------------- the transform

def reverse_loop(rev: Any, loop: While | For, out: list[Stmt], snapshots: Any) -> None:
    """Append to out the checkpointed reverse of loop (a loop of rev's forward sweep that no loop encloses);
    rev is reverse.py's transform, whose adjoint table, activity and naming this shares."""
    _refuse_draws(loop)
    loc = loop.loc
    n_state = len(loop.carried)
    active_carried = [j for j, c in enumerate(loop.carried) if rev.is_active(c)]
    inner = {id(c) for c in loop.carried} | ({id(loop.index)} if isinstance(loop, For) else set())
    free = [v for v in free_values(loop.body) if rev.is_active(v) and id(v) not in inner]

    def emit(prim: Any, args: list[Atom], hint: str, where: list[Stmt]) -> Value:
        value = rev.fresh(hint)
        where.append(Op(prim, args, [value], loc=loc))
        return value

    def copy_body(mapping: dict[int, Atom]) -> Block:
        """The body with fresh values, reading mapping's; the copies share activity and kinds."""
        body = clone_block(loop.body, mapping, lambda v: rev.fresh(v.hint))
        for key, new in mapping.items():
            if isinstance(new, Value):
                if key in rev.active:
                    rev.active.add(id(new))
                if key in rev.kinds:
                    rev.kinds[id(new)] = rev.kinds[key]
                if key in rev.complex.bits:         # which may be complex (complex_values.py)
                    rev.complex.bits[id(new)] = rev.complex.bits[key]
                rev.values[id(new)] = new
        for stmt in walk(body):     # what defines each copy: `x[i, j]` is an element read there too (elements.py),
            if isinstance(stmt, Op):        # accumulated in place into the adjoint array, which keeps its dtype
                rev.defining.update((id(o), stmt) for o in stmt.outs)
        return body

    # two copies of the body, made before a while loop gains its counter: one advances, one is reversed
    i = rev.fresh("i")
    carried = [rev.fresh(c.hint) for c in loop.carried]
    for c, x in zip(loop.carried, carried):
        rev.values[id(x)] = x
        if rev.is_active(c):
            rev.active.add(id(x))
        if id(c) in rev.kinds:
            rev.kinds[id(x)] = rev.kinds[id(c)]
        if id(c) in rev.complex.bits:
            rev.complex.bits[id(x)] = rev.complex.bits[id(c)]
    heads = [rev.fresh(c.hint) for c in loop.carried]
    index = rev.fresh(loop.index.hint if isinstance(loop, For) else "_")
    mapping: dict[int, Atom] = {id(c): h for c, h in zip(loop.carried, heads)}
    if isinstance(loop, For):
        mapping[id(loop.index)] = index
    stepped = copy_body(mapping)
    mapping = {id(c): x for c, x in zip(loop.carried, carried)}
    if isinstance(loop, For):
        mapping[id(loop.index)] = i
    taped = copy_body(mapping)

    # the adjoints carried around the schedule's loop: of the carried values, and of the free values read
    inits: list[Atom] = []
    for j in active_carried:
        g = rev.adj.get(id(loop.outs[j]))
        inits.append(rev.full(g, loop.outs[j], out, loc) if g is not None else rev.zero(loop.outs[j], out, loc=loc))
    for f in free:
        g = rev.adj.get(id(f))
        inits.append(rev.full(g, f, out, loc) if g is not None else rev.zero(f, out, loc=loc))

    # the indices the loop runs over, as a range (a while loop counts its iterations: after the copies)
    forward: list[Stmt] = out
    if isinstance(loop, While):
        count = rev._count_iterations(loop)
        indices = emit(range, [count], "indices", out)
        step: Atom = Const(1)
    else:           # the forward sweep is the schedule's first descent (below): it runs where the loop ran
        forward = []
        bounds = [loop.stop] if (isinstance(loop.start, Const) and loop.start.value == 0 and
                                 isinstance(loop.step, Const) and loop.step.value == 1) else \
            [loop.start, loop.stop, loop.step]
        indices = emit(range, bounds, "indices", forward)
        if loop.reverse:
            indices = emit(operator.getitem, [indices, Const(slice(None, None, -1))], "indices", forward)
        if isinstance(loop.step, Const):
            step = Const(-loop.step.value if loop.reverse else loop.step.value)
        else:
            step = emit(operator.neg, [loop.step], "step", forward) if loop.reverse else loop.step

    start = emit(runtime.make_tuple, list(loop.inits[:n_state]), "state", forward)
    schedule = emit(_revolve, [indices, Const(snapshots), start], "schedule", forward)
    first = emit(_resume, [schedule, Const(None)], "task", forward)
    if isinstance(loop, For):
        first = _first_descent(rev, loop, forward, schedule, first, step, copy_body, emit)

    task = rev.fresh("task")
    dcarried = [rev.fresh(adjoint_hint(loop.carried[j])) for j in active_carried]
    accumulators = [rev.fresh(adjoint_hint(f)) for f in free]
    test: list[Stmt] = []
    more = emit(operator.is_not, [task, Const(None)], "", test)
    body: list[Stmt] = []
    body.append(Op(operator.getitem, [task, Const(0)], [i], loc=loc))
    j = emit(operator.getitem, [task, Const(1)], "j", body)
    state = emit(operator.getitem, [task, Const(2)], "state", body)
    for k, x in enumerate(carried):    # with the shapes the loop's values have (the shape pass reads them there)
        read = emit(operator.getitem, [state, Const(k)], x.hint, body)
        body.append(Op(runtime._shaped_as, [read, loop.outs[k]], [x], loc=loc))
    advancing = emit(operator.is_not, [j, Const(None)], "advancing", body)

    # advance: for t in range(i, j, step): carried = body(carried)
    advance: list[Stmt] = []
    ends = [rev.fresh(c.hint) for c in heads]
    advance.append(For(i, j, step, index, list(carried), heads, stepped, ends, False, loc))
    reached = emit(runtime.make_tuple, list(ends), "reached", advance)

    # reverse one step: the body at index i, then its reverse
    before = rev.adj
    rev.adj = {id(f): acc for f, acc in zip(free, accumulators)}
    turn: list[Stmt] = []
    for k, dc in zip(active_carried, dcarried):
        rev.accumulate(taped.results[k], dc, turn, loc)
    rev.checkpoint = None            # loops inside the step are reversed with stacks, which last one step
    rev.block(taped, turn, 0)
    rev.checkpoint = snapshots
    turned: list[Atom] = []
    for k in active_carried:
        g = rev.adj.get(id(carried[k]))
        turned.append(rev.full(g, carried[k], turn, loc) if g is not None else rev.zero(carried[k], turn, loc=loc))
    turned.extend(rev.full(rev.adj[id(f)], acc, turn, loc) for f, acc in zip(free, accumulators))
    rev.adj = before

    merged = [rev.fresh("reached")] + [rev.fresh(v.hint) for v in dcarried + accumulators]
    body.append(If(advancing, Block(advance, [reached, *dcarried, *accumulators]),
                      Block(taped.stmts + turn, [Const(None), *turned]), merged, loc))
    following = emit(_resume, [schedule, merged[0]], "task", body)
    outs = [rev.fresh("task")] + [rev.fresh(v.hint) for v in dcarried + accumulators]
    out.append(While([first, *inits], [task, *dcarried, *accumulators], Block(test, [more]),
                     Block(body, [following, *merged[1:]]), outs, loc))
    for f, o in zip(free, outs[1 + len(dcarried):]):
        rev.adj[id(f)] = o
    for k, o in zip(active_carried, outs[1:]):
        rev.accumulate(loop.inits[k], o, out, loc)


def _first_descent(rev: Any, loop: For, forward: list[Stmt], schedule: Value, first: Value, step: Atom,
                   copy_body: Any, emit: Any) -> Value:
    """The forward sweep of a checkpointed `for` loop, in the loop's place: the schedule's first descent (its
    advances, each keeping its snapshot) then the last step, whose results are the loop's. revolve's first sweep
    is this one: the loop runs once, not once more before the schedule starts over. Each advance of the first
    descent starts where the one before stopped, so the carried values go around the loop of tasks as they go
    around the user's loop (their shapes found the same way). Returns the task it stops at (the reverse of the
    last step, or None for no step), where the reverse sweep's schedule continues."""
    loc = loop.loc
    task = rev.fresh("task")
    carried = [rev.fresh(c.hint) for c in loop.carried]
    test: list[Stmt] = []
    more = emit(_advancing, [task], "", test)
    body: list[Stmt] = []
    i = emit(operator.getitem, [task, Const(0)], "i", body)
    j = emit(operator.getitem, [task, Const(1)], "j", body)
    heads = [rev.fresh(c.hint) for c in loop.carried]
    index = rev.fresh(loop.index.hint)
    mapping: dict[int, Atom] = {id(c): h for c, h in zip(loop.carried, heads)}
    mapping[id(loop.index)] = index
    stepped = copy_body(mapping)
    ends = [rev.fresh(c.hint) for c in loop.carried]
    body.append(For(i, j, step, index, list(carried), heads, stepped, ends, False, loc))
    reached = emit(runtime.make_tuple, list(ends), "reached", body)
    following = emit(_resume, [schedule, reached], "task", body)
    last = rev.fresh("task")
    reached_last = [rev.fresh(c.hint) for c in loop.carried]
    forward.append(While([first, *loop.inits], [task, *carried], Block(test, [more]),
                         Block(body, [following, *ends]), [last, *reached_last], loc))
    # the last step, from where the descent stopped (the step the schedule reverses first): the loop's results
    stepping = emit(operator.is_not, [last, Const(None)], "", forward)
    then: list[Stmt] = []
    at = emit(operator.getitem, [last, Const(0)], loop.index.hint, then)
    mapping = {id(c): x for c, x in zip(loop.carried, reached_last)}
    mapping[id(loop.index)] = at
    final = copy_body(mapping)
    then.extend(final.stmts)
    forward.append(If(stepping, Block(then, list(final.results)), Block([], list(reached_last)), list(loop.outs),
                      loc))
    block = rev.forward_block
    k = next(k for k, s in enumerate(block.stmts) if s is loop)
    block.stmts[k:k + 1] = forward
    return last
