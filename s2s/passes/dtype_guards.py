"""A check where a float with a derivative is written into an array whose dtype the code does not decide (an array
argument that is not differentiated, what a helper returns): `runtime._assert_inexact` on the array where it is
made, so that an integer array never silently truncates a value with a derivative (s2s/analysis/dtypes.py finds
the arrays the code itself makes integer)."""
from __future__ import annotations

from typing import Any

import numpy as np

from s2s import runtime
from s2s.analysis import dtypes, global_shapes
from s2s.analysis.activity import varied_values
from s2s.ir.core import Block, Const, For, Function, Op, Value, While, stmt_blocks
from s2s.rules import registry


def guard_writes(fn: Function, wrt: list[int], shapes: Any = None) -> Function:
    """fn with a check (runtime._assert_inexact) on each array of a class the code does not decide that a value
    with a derivative is written into: where the array is made (before a loop that writes into it, not in it).
    shapes: the arguments' abstract values (s2s/analysis/shapes.py), when the derivative is specialized on them."""
    if not any(isinstance(s, Op) and s.prim is runtime.setitem for s in dtypes._ops(fn.body)):
        return fn
    varied = varied_values(fn, wrt)
    known = {id(fn.params[i]) for i in wrt}
    for param, abstract in zip(fn.params, shapes or ()):
        if abstract is not None and isinstance(getattr(abstract, "dtype", None), np.dtype):
            known.add(id(param)) if dtypes.dtype_class(abstract.dtype) == dtypes.FLOAT else None
    if shapes is not None:      # and the global float arrays it reads, checked on entry (s2s/analysis/global_shapes.py)
        known.update(id(s.outs[0]) for s in dtypes._ops(fn.body) if isinstance(s, Op) and s.prim is runtime.free_name
                     and len(s.outs) == 1 and global_shapes.checked_inexact(s))
    found = dtypes.classes(fn, frozenset(known))
    made: dict[int, Any] = {}              # value id: the Op that makes it, or (loop, position) of a carried value
    for stmt in dtypes._ops(fn.body):
        if isinstance(stmt, Op):
            made.update((id(o), stmt) for o in stmt.outs)
        elif isinstance(stmt, (For, While)):
            made.update((id(c), (stmt, k)) for k, c in enumerate(stmt.carried))
            made.update((id(o), (stmt, k, "out")) for k, o in enumerate(stmt.outs))

    def written_from(result: Any, carried: Value) -> bool:
        """Whether a loop body's result is its carried value with elements written (the same array)."""
        while isinstance(result, Value) and isinstance(made.get(id(result)), Op) \
                and registry.record(made[id(result)].prim).writes_into:
            result = made[id(result)].args[0]
        return result is carried

    def origin(array: Value) -> Value:
        """The value to check for array: through writes, and out of loops that only write into it."""
        while True:
            maker = made.get(id(array))
            if isinstance(maker, Op) and registry.record(maker.prim).writes_into and isinstance(maker.args[0], Value):
                array = maker.args[0]
            elif isinstance(maker, tuple) and len(maker) == 3:      # after a loop: its carried value
                array = maker[0].carried[maker[1]]
            elif isinstance(maker, tuple) and isinstance(maker[0].inits[maker[1]], Value) and \
                    written_from(maker[0].body.results[maker[1]], array):
                array = maker[0].inits[maker[1]]
            else:
                return array

    checks: dict[int, tuple[Value, Any]] = {}
    for stmt in dtypes._ops(fn.body):
        if isinstance(stmt, Op) and stmt.prim is runtime.setitem and isinstance(stmt.args[0], Value) \
                and isinstance(stmt.args[2], Value) and id(stmt.args[2]) in varied and id(stmt.args[0]) not in found:
            array = origin(stmt.args[0])
            maker = made.get(id(array))
            if not (isinstance(maker, Op) and registry.record(maker.prim).container):     # a list or dict keeps floats
                checks.setdefault(id(array), (array, stmt.loc))
    if not checks:
        return fn

    def check(array: Value) -> Op:
        value, loc = checks.pop(id(array))
        return Op(runtime._assert_inexact, [value, Const(value.hint or "the array")], [], loc=loc)

    def block(b: Block, carried: list) -> None:
        stmts = [check(v) for v in carried if id(v) in checks]     # a carried value the loop may make another
        for stmt in b.stmts:
            stmts.append(stmt)
            for inner in stmt_blocks(stmt):
                block(inner, list(getattr(stmt, "carried", ())) if inner is getattr(stmt, "body", None) else [])
            stmts.extend(check(o) for o in stmt.outs if id(o) in checks)
        b.stmts = stmts

    block(fn.body, [p for p in fn.params if id(p) in checks])
    assert not checks, "every written array is made somewhere"
    return fn
