"""One stack where two hold the same values shifted by an iteration.

Reverse mode saves what a loop's reverse reads: a loop-carried value `h` is pushed at the start of each
iteration (`h_stack_1.append(h)`, the value the body reads) and, when the reverse also reads the value the body
computes for the next iteration, that one at its end (`h_stack.append(h)`). The second stack then holds the first
one's values shifted by one: what iteration k pushes last is what iteration k + 1 pushes first, and the last
value pushed is the loop's result. `share_shifted_stacks(fn)` drops the second stack: the reverse loop carries
the value instead, starting from the forward loop's result, each iteration handing on the value it popped from
the first stack (`h = h_1` at its end), which is the next reverse iteration's `h`.

Accepts a function after the reverse transform (any stage that keeps the stacks' pattern: one `push` of a
carried value and one of that value's update at the top of a forward loop's body, one `pop` of each at the top
of one reverse loop's body, that reverse loop in the block of the forward loop, and nothing else reading the
second stack but `len`, which reads the first one instead). Guarantees the same values everywhere: the popped
value of the dropped stack is replaced by a carried value equal to it in every iteration. In place; returned.
"""
from __future__ import annotations

from typing import Callable

from s2s import runtime
from s2s.ir.core import Block, For, Function, Op, Stmt, Value, While, stmt_blocks, stmt_inputs, substitute, uses_in
from s2s.passes.optimize import changed, is_pure
from s2s.passes.sequences import LazyNamer


def share_shifted_stacks(fn: Function) -> Function:
    stacks: dict[int, Value] = {}
    for stmt in fn.body.stmts:           # the reverse transform makes its stacks at the top of the function
        if type(stmt) is Op and stmt.prim is runtime.stack_new:
            stacks[id(stmt.outs[0])] = stmt.outs[0]
    if len(stacks) < 2:
        return fn
    pushes: dict[int, list] = {}        # stack -> [(op, the loop whose body holds it at its top, or None)]
    pops: dict[int, list] = {}
    lens: dict[int, list] = {}          # stack -> [(`len(stack)`, its block, its position)]: a trip count
    others: set[int] = set()            # stacks read any other way
    place: dict[int, tuple[Block, int]] = {}     # id of a loop -> (its block, its position there)

    def scan(block: Block, loop) -> None:
        for k, stmt in enumerate(block.stmts):
            if type(stmt) is Op:
                prim = stmt.prim
                if prim is runtime.push or prim is runtime.pop:
                    target = pushes if prim is runtime.push else pops
                    if stmt.args and type(stmt.args[0]) is Value and id(stmt.args[0]) in stacks:
                        target.setdefault(id(stmt.args[0]), []).append((stmt, loop))
                        rest = stmt.args[1:]
                    else:
                        rest = stmt.args
                elif prim is len and len(stmt.args) == 1 and type(stmt.args[0]) is Value \
                        and id(stmt.args[0]) in stacks:
                    lens.setdefault(id(stmt.args[0]), []).append((stmt, block, k))
                    continue
                else:
                    rest = stmt_inputs(stmt)
                for a in rest:
                    if type(a) is Value and id(a) in stacks:
                        others.add(id(a))
                continue
            for a in stmt_inputs(stmt):
                if type(a) is Value and id(a) in stacks:
                    others.add(id(a))
            if isinstance(stmt, (For, While)):
                place[id(stmt)] = (block, k)
            for inner in stmt_blocks(stmt):
                scan(inner, stmt if isinstance(stmt, (For, While)) and inner is stmt.body else None)
        for a in block.results:
            if type(a) is Value and id(a) in stacks:
                others.add(id(a))

    scan(fn.body, None)
    del scan                # (a closure that calls itself: a cycle holding the function's tables, freed now)

    def single(table: dict, stack: int):
        found = table.get(stack)
        return found[0] if found is not None and len(found) == 1 and found[0][1] is not None else None

    namer = LazyNamer(fn)
    dropped: set[int] = set()
    for first in stacks:
        if first in others or first in dropped:
            continue
        push_first, pop_first = single(pushes, first), single(pops, first)
        if push_first is None or pop_first is None:
            continue
        forward, backward = push_first[1], pop_first[1]
        if not isinstance(backward, For) or forward is backward:
            continue
        pushed = push_first[0].args[1]
        j = next((k for k, c in enumerate(forward.carried) if c is pushed), None)
        if j is None:
            continue
        update = forward.body.results[j]
        if update is pushed:            # a value the loop does not change: nothing shifted
            continue
        for second in stacks:
            if second == first or second in others or second in dropped:
                continue
            push_second, pop_second = single(pushes, second), single(pops, second)
            if push_second is None or pop_second is None or push_second[1] is not forward \
                    or pop_second[1] is not backward or push_second[0].args[1] is not update:
                continue
            where_forward, where_backward = place.get(id(forward)), place.get(id(backward))
            if where_forward is None or where_backward is None or where_forward[0] is not where_backward[0] \
                    or where_forward[1] > where_backward[1]:
                continue
            # the second stack's length, read between the loops, is the first one's (one push each per iteration)
            if any(block is not where_forward[0] or not where_forward[1] < k < where_backward[1]
                   for _, block, k in lens.get(second, [])):
                continue
            # the reverse loop carries the value the dropped stack held: the forward loop's result first
            popped_second, popped_first = pop_second[0].outs[0], pop_first[0].outs[0]
            carried = namer.value(popped_second.hint)
            backward.inits.append(forward.outs[j])
            backward.carried.append(carried)
            backward.outs.append(namer.value(popped_second.hint))
            backward.body.results.append(popped_first)
            substitute(backward.body, {id(popped_second): carried})
            backward.body.stmts = _pop_late([s for s in backward.body.stmts if s is not pop_second[0]],
                                            pop_first[0], is_pure)
            forward.body.stmts = [s for s in forward.body.stmts if s is not push_second[0]]
            for op, _, _ in lens.get(second, []):
                op.args = [stacks[first]]
            dropped.add(second)
            break
    if dropped:
        fn.body.stmts = [s for s in fn.body.stmts
                         if not (type(s) is Op and s.prim is runtime.stack_new and id(s.outs[0]) in dropped)]
        changed(fn)
    return fn


def _pop_late(stmts: list[Stmt], pop: Op, is_pure: Callable) -> list[Stmt]:
    """stmts with pop, and the pure operations that depend on what it pops, after the others: once the carried
    value is no longer read, the popped one takes its name (`h = h_stack.pop()`, no copy at the end of the body),
    and the rest of the body stays together (Numba's backend fuses consecutive elementwise lines). When something
    else reads the popped value (a loop, an effect), the pop goes just before the first such statement."""
    rest = [s for s in stmts if s is not pop]
    late: list[Stmt] = [pop]
    depends = {id(pop.outs[0])}
    for s in rest:
        if any(type(a) is Value and id(a) in depends for a in stmt_inputs(s)) or type(s) is not Op and any(
                type(a) is Value and id(a) in depends for inner in stmt_blocks(s) for a in uses_in(inner)):
            if type(s) is not Op or not is_pure(s.prim) or len(s.outs) != 1:
                first = next(k for k, t in enumerate(rest) if _reads(t, pop.outs[0]))
                return rest[:first] + [pop] + rest[first:]
            late.append(s)
            depends.add(id(s.outs[0]))
    early = [s for s in rest if not any(s is t for t in late)]
    return early + late


def _reads(stmt: Stmt, value: Value) -> bool:
    """Whether stmt (its nested blocks included) reads value."""
    if any(a is value for a in stmt_inputs(stmt)):
        return True
    return any(a is value for inner in stmt_blocks(stmt) for a in uses_in(inner))
