"""Optimizing passes, each a function from IR to IR (in place; the result is returned).

- `eliminate_dead_code`: removes pure operations whose values nobody reads,
  phi values and loop-carried values that are never read, and regions left empty.
- `simplify`: folds operations on constants and applies identities
  (`x * 1`, `x + 0`, `x ** 1`, `--x`), forwarding the surviving atom.

Effects are kept: pushes and pops of the loop stacks, `print`, and calls to
functions s2s knows nothing about.
"""
from __future__ import annotations

import math
from typing import Any, Callable, Sequence

import numpy as np

from s2s.analysis.dataflow import Domain, solve
from s2s.ir import syntax
from s2s import runtime
from s2s.ir.core import (
    UNDEFINED,
    Atom,
    Block,
    Const,
    For,
    Function,
    If,
    Op,
    Stmt,
    Value,
    While,
    stmt_blocks,
    stmt_inputs,
    substitute,
    uses_in,
)
from s2s.rules import registry

_PURE_RUNTIME = {runtime.stack_new, runtime.make_tuple, runtime.make_list, runtime.make_dict, runtime.free_name,
                 runtime.zeros_like,
                 runtime._unbroadcast, runtime._scatter}


_EFFECTS = (print, runtime.push, runtime.pop, runtime._seed, runtime._unsupported, runtime._assert_element,
            runtime._assert_number, runtime._assert_inexact, runtime._real_output)


def is_pure(prim: Any) -> bool:
    if prim in _EFFECTS or getattr(prim, "_s2s_effect", False):
        return False       # an effect: `rng.normal()` twice draws twice (kept, never merged); a checkpoint schedule
    if prim in _PURE_RUNTIME or prim in runtime.EMITTED_HELPERS:
        return True
    return (registry.find_adjoint(prim) is not None or registry.is_nondifferentiable(prim)
            or registry.refusal(prim) is not None)        # a helper of derivative code (registry.refused)


def _substitute_arguments(op: Op, sub: Callable[[Atom], Atom]) -> None:
    """op reading sub(a) for each of its arguments a (keywords too)."""
    op.args = [sub(a) for a in op.args]
    if op.kwargs:
        op.kwargs = {k: sub(a) for k, a in op.kwargs.items()}


def _purity() -> Any:
    """is_pure, remembered per primitive for the length of one pass (the registry may change between passes)."""
    known: dict[Any, bool] = {}

    def pure(prim: Any) -> bool:
        try:
            return known[prim]
        except KeyError:
            known[prim] = found = is_pure(prim)
            return found
        except TypeError:           # an unhashable primitive
            return is_pure(prim)
    return pure


# ---------------------------------------------------------------- what a pass leaves for the next one

def changed(fn: Function) -> None:
    """Say that fn changed since eliminate_dead_code last ran on it (every pass that changes a function says so,
    except where it knows it created no dead code): the next eliminate_dead_code then looks at it again."""
    fn.__dict__.pop("_no_dead_code", None)


def _no_dead_code(fn: Function) -> bool:
    """Whether fn is as eliminate_dead_code left it (removing dead code twice removes nothing the second time)."""
    stamp = fn.__dict__.get("_no_dead_code")
    return stamp is not None and stamp[0] is fn.body and stamp[1] == len(fn.body.stmts)


# ---------------------------------------------------------------- dead code

def eliminate_dead_code(fn: Function) -> Function:
    if _no_dead_code(fn):       # nothing changed it since it last ran: a pass with nothing to do
        return fn
    eliminate_dead_code_in(fn.body, list(fn.body.results))
    fn.__dict__["_no_dead_code"] = (fn.body, len(fn.body.stmts))
    return fn


class _Live(Domain):
    """What the roots and the effects need (a backward domain of s2s/analysis/dataflow.py): facts, the values
    needed (value -> True); `stmts`, the statements kept: an operation with an effect or a needed result, a branch
    or loop with a needed result or a statement kept inside (and then its condition, or its bounds). In a block
    every reader comes after what it reads, so one backward sweep sees a value's readers before its definition;
    only a loop reads values back (its carried values and, for a while loop, its test): a carried value the body
    turned out to read, or a test's result needed once the loop is, asks the engine for another sweep."""

    backward = True

    def __init__(self, roots: list[Atom]):
        super().__init__()
        self.facts = {a: True for a in roots if isinstance(a, Value)}
        self.stmts: set[Stmt] = set()
        self.pure = _purity()
        self.carried: list[int] = []        # per loop being walked: how many of its carried values are needed

    def mark(self, atom: Atom) -> bool:
        if isinstance(atom, Value) and atom not in self.facts:
            self.facts[atom] = True
            return True
        return False

    def op(self, op: Op) -> None:
        if op in self.stmts:
            return
        for o in op.outs:
            if o in self.facts:
                break
        else:
            if self.pure(op.prim):
                return
        self.stmts.add(op)
        for a in op.args:
            self.mark(a)
        for a in op.kwargs.values():
            self.mark(a)

    def branch(self, out: Value, then: Atom, orelse: Atom) -> None:
        if out in self.facts:
            self.mark(then)
            self.mark(orelse)

    def fork(self, stmt: If) -> None:
        if stmt not in self.stmts and (any(o in self.facts for o in stmt.outs) or _has_live_stmt(stmt.then, self.stmts)
                                       or _has_live_stmt(stmt.orelse, self.stmts)):
            self.stmts.add(stmt)
            self.mark(stmt.cond)

    def needed(self, loop: While | For) -> int:
        return sum(1 for c, o in zip(loop.carried, loop.outs) if o in self.facts or c in self.facts)

    def enter(self, loop: While | For) -> None:
        """The carried values needed before the body is walked: their updates and starts too."""
        needed = 0
        for c, o, r, i in zip(loop.carried, loop.outs, loop.body.results, loop.inits):
            if o in self.facts or c in self.facts:
                needed += 1
                self.mark(c)
                self.mark(r)        # (an update may be another carried value: counted once walked again)
                self.mark(i)
        self.carried.append(needed)

    def leave(self, loop: While | For) -> None:
        if loop not in self.stmts and (any(o in self.facts for o in loop.outs)
                                       or any(_has_live_stmt(inner, self.stmts) for inner in stmt_blocks(loop))):
            self.stmts.add(loop)
            bounds = loop.test.results if isinstance(loop, While) else [loop.start, loop.stop, loop.step]
            for x in bounds:
                if self.mark(x) and isinstance(loop, While):
                    self.changed = True     # the test's result: computed in the test block, walked again
        # a carried value the body turned out to read: its update and start are needed, walked again
        if self.needed(loop) != self.carried.pop():
            self.changed = True


def eliminate_dead_code_in(block: Block, roots: list[Atom]) -> None:
    """Mark what the roots and the effects need (_Live, on the dataflow engine), then sweep the rest."""
    live, = solve(block, _Live(roots))
    _sweep(block, live.facts, live.stmts)


def eliminate_dead_stacks(fn: Function) -> Function:
    """A stack whose popped values nobody reads is not built: its `[]`, pushes and pops go (what was pushed
    may then be dead code too). The shape pass leaves such stacks: a popped value read only for its shape."""
    if not _makes_stacks(fn.body):
        return fn
    reads: dict[int, int] = {}
    for atom in uses_in(fn.body):
        if isinstance(atom, Value):
            reads[id(atom)] = reads.get(id(atom), 0) + 1
    stacks: dict[int, int] = {}          # stack -> its reads by push and pop
    popped: dict[int, list[Value]] = {}
    for stmt in _all_stmts(fn.body):
        if isinstance(stmt, Op) and stmt.prim is runtime.stack_new:
            stacks.setdefault(id(stmt.outs[0]), 0)
    for stmt in _all_stmts(fn.body):
        if isinstance(stmt, Op) and stmt.prim in (runtime.push, runtime.pop) and id(stmt.args[0]) in stacks:
            stacks[id(stmt.args[0])] += 1
            if stmt.prim is runtime.pop:
                popped.setdefault(id(stmt.args[0]), []).extend(stmt.outs)
    dead = {k for k, n in stacks.items() if reads.get(k, 0) == n
            and all(reads.get(id(v), 0) == 0 for v in popped.get(k, []))}
    if dead:
        changed(fn)

        def sweep(block: Block) -> None:
            block.stmts = [st for st in block.stmts if not (isinstance(st, Op) and (
                (st.prim is runtime.stack_new and id(st.outs[0]) in dead)
                or (st.prim in (runtime.push, runtime.pop) and id(st.args[0]) in dead)))]
            for st in block.stmts:
                for inner in stmt_blocks(st):
                    sweep(inner)
        sweep(fn.body)
    return fn


def _makes_stacks(block: Block) -> bool:
    for stmt in block.stmts:
        if type(stmt) is Op:
            if stmt.prim is runtime.stack_new:
                return True
        elif any(_makes_stacks(inner) for inner in stmt_blocks(stmt)):
            return True
    return False


def _has_live_stmt(block: Block, live_stmts: set[Stmt]) -> bool:
    return any(s in live_stmts for s in block.stmts)


def _sweep(block: Block, live: dict[Value, Any], live_stmts: set[Stmt]) -> None:
    kept: list[Stmt] = []
    for stmt in block.stmts:
        if stmt not in live_stmts:
            continue
        if type(stmt) is Op:
            kept.append(stmt)
            continue
        if isinstance(stmt, If):
            keep = [j for j, o in enumerate(stmt.outs) if o in live]
            stmt.outs = [stmt.outs[j] for j in keep]
            stmt.then.results = [stmt.then.results[j] for j in keep]
            stmt.orelse.results = [stmt.orelse.results[j] for j in keep]
        elif isinstance(stmt, (While, For)):
            keep = [j for j, (c, o) in enumerate(zip(stmt.carried, stmt.outs)) if c in live or o in live]
            stmt.inits = [stmt.inits[j] for j in keep]
            stmt.carried = [stmt.carried[j] for j in keep]
            stmt.outs = [stmt.outs[j] for j in keep]
            stmt.body.results = [stmt.body.results[j] for j in keep]
        for inner in stmt_blocks(stmt):
            _sweep(inner, live, live_stmts)
        kept.append(stmt)
    block.stmts = kept


# ---------------------------------------------------------------- values needed only for their shape

# helpers whose result has the shape of one of their arguments
_SHAPE_OF = {runtime._scatter: 0, runtime._expand: 1, runtime._fill: 1}


def replace_shape_only_values(fn: Function) -> Function:
    """An elementwise result read only for its shape is replaced by an empty array of that shape.

    The mean of a big array needs the array's shape to spread its adjoint back, not its values: when only
    the gradient is asked for, the elementwise work that produced it is skipped.
    """
    if not _reads_shapes(fn.body):        # no value is read for its shape alone: nothing to replace
        return fn
    while True:
        uses: dict[int, list[tuple[Any, int]]] = {}
        ops = [s for s in walk_ops(fn.body)]
        for stmt in _all_stmts(fn.body):
            for position, atom in enumerate(_reads(stmt)):
                if isinstance(atom, Value):
                    prim = stmt.prim if isinstance(stmt, Op) else None
                    uses.setdefault(id(atom), []).append((prim, position))
        for atom in fn.body.results:
            if isinstance(atom, Value):
                uses.setdefault(id(atom), []).append((None, -1))
        rewrote = False
        for op in ops:
            if not (len(op.outs) == 1 and op.prim is not runtime._shaped_like and not op.kwargs
                    and uses.get(id(op.outs[0]))
                    and all(_reads_shape(*use) or use[0] is runtime._shaped_like
                            for use in uses[id(op.outs[0])])):
                continue
            if registry.is_elementwise(op.prim):
                op.prim = runtime._shaped_like
                rewrote = True
            elif op.prim in _SHAPE_OF:
                op.prim, op.args = runtime._shaped_like, [op.args[_SHAPE_OF[op.prim]]]
                rewrote = True
        if not rewrote:
            return fn
        changed(fn)


def _reads_shape(prim: Any, position: int) -> bool:
    """Whether prim reads only the shape and dtype of its argument at position (its record's shape_reader)."""
    return prim is not None and position in (registry.record(prim).shape_reader or ())


def _shape_reading(prim: Any) -> bool:
    return prim is runtime._shaped_like or registry.record(prim).shape_reader is not None


def _reads_shapes(block: Block) -> bool:
    """Whether some operation of the block (nested blocks included) reads an argument for its shape alone."""
    for stmt in block.stmts:
        if type(stmt) is Op:
            try:
                if _shape_reading(stmt.prim):
                    return True
            except TypeError:           # an unhashable primitive reads no shape
                pass
        elif any(_reads_shapes(inner) for inner in stmt_blocks(stmt)):
            return True
    return False


def walk_ops(block: Block) -> list[Op]:
    return [s for s in _all_stmts(block) if isinstance(s, Op)]


def _all_stmts(block: Block) -> list[Stmt]:
    found: list[Stmt] = []
    for stmt in block.stmts:
        found.append(stmt)
        for inner in stmt_blocks(stmt):
            found.extend(_all_stmts(inner))
            found.append(_Results(inner.results))
    return found


class _Results:
    """The results of a nested block, as a reader (for the use lists)."""

    def __init__(self, results: list[Atom]):
        self.results = results


def _reads(stmt: Any) -> list[Atom]:
    return list(stmt.results) if isinstance(stmt, _Results) else stmt_inputs(stmt)


# ---------------------------------------------------------------- writing into dead temporaries

def write_in_place(fn: Function, scalars: set[int], floats: set[int]) -> Function:
    """`t2 = t1 * 0.5`, where t1 is a fresh float temporary read nowhere else, becomes `t1 *= 0.5`.

    Each array temporary NumPy allocates costs page faults on first touch; reusing a dead one
    avoids them. Only results of elementwise operations qualify (they never alias anything), only
    with a scalar other operand (the result keeps t1's shape) or between two adjoints of one value.
    """
    small = getattr(fn, "small", {})    # arrays too small for in place to pay (s2s/passes/specialize.py): nested
    if not _may_write_in_place(fn.body, floats, small, {id(p) for p in fn.params}):    # (a parameter's storage
        return fn                                                                         # is not fresh)
    changed(fn)
    uses: dict[int, int] = {}
    block_of: dict[int, int] = {}
    defining: dict[int, Op] = {}

    def scan(block: Block) -> None:
        for stmt in block.stmts:
            for atom in _reads(stmt):
                if isinstance(atom, Value):
                    uses[id(atom)] = uses.get(id(atom), 0) + 1
            for out in stmt.outs:
                block_of[id(out)] = id(block)
                if isinstance(stmt, Op):
                    defining[id(out)] = stmt
            for inner in stmt_blocks(stmt):
                scan(inner)
        for atom in block.results:
            if isinstance(atom, Value):
                uses[id(atom)] = uses.get(id(atom), 0) + 1

    def fresh(v: Value) -> bool:
        op = defining.get(id(v))
        if op is None:
            return False
        if op.prim is runtime._unbroadcast:        # returns its first argument or a new array...
            first = op.args[0]
            return (len(op.args) == 2          # ...or, given the result's shape, a read-only broadcast view
                    and isinstance(first, Value) and uses.get(id(first)) == 1 and fresh(first))
        if id(v) in written_into:               # `t *= 0.5`, `np.tanh(t, out=t)`: t's own (fresh) storage
            return True
        return registry.is_elementwise(op.prim) and op.in_place is None and not registry.record(op.prim).view

    carried_by: dict[int, tuple[Atom, Atom]] = {}     # a loop-carried value -> (its start, its update)

    def owned(v: Atom, block: Block) -> bool:
        """Storage created in this function that nothing else reads: it may be written into."""
        if not isinstance(v, Value) or uses.get(id(v)) != 1:
            return False
        if id(v) in carried_by:
            start, update = carried_by[id(v)]
            return owned(start, block=None) and isinstance(update, Value) and id(update) in written
        op = defining.get(id(v))
        if op is None or (block is not None and block_of.get(id(v)) != id(block)):
            return False
        rec = registry.record(op.prim)
        return rec.storage or (registry.is_elementwise(op.prim) and not rec.view)

    written: set[int] = set()
    written_into: set[int] = set()          # results written into a fresh array of this function (in place)

    def rewrite(block: Block) -> None:
        for stmt in block.stmts:
            if isinstance(stmt, (While, For)):
                for c, i, r in zip(stmt.carried, stmt.inits, stmt.body.results):
                    carried_by[id(c)] = (i, r)
            for inner in stmt_blocks(stmt):
                rewrite(inner)
            if isinstance(stmt, Op) and stmt.prim in (runtime.setitem, runtime.list_append):
                written.add(id(stmt.outs[0]))
        for stmt in block.stmts:
            if isinstance(stmt, Op) and stmt.prim in (runtime.setitem, runtime.list_append) \
                    and owned(stmt.args[0], block):
                stmt.in_place = 0
        def array(target: Atom) -> bool:
            """Known to be a NumPy array (not a number): `out=` can be written into it."""
            found = arrays.get(id(target))
            return big and found is not None and len(found[0]) > 0 and np.dtype(found[1]).kind == "f"

        def reusable(target: Atom) -> bool:
            # a number is never written in place (`t += c` makes a new one, in a statement of its own: nested)
            return (isinstance(target, Value) and uses.get(id(target)) == 1 and id(target) in floats
                    and id(target) not in small and id(target) not in scalars
                    and block_of.get(id(target)) == id(block) and fresh(target))

        for stmt in block.stmts:
            if not isinstance(stmt, Op) or stmt.kwargs or len(stmt.outs) != 1:
                continue
            if _unary_ufunc(stmt.prim) and len(stmt.args) == 1 and reusable(stmt.args[0]) and array(stmt.args[0]):
                stmt.kwargs = {"out": stmt.args[0]}         # np.tanh(t, out=t): no new array
                written_into.add(id(stmt.outs[0]))
                continue
            rec = registry.record(stmt.prim)       # commutative: True, False, or None (not written in place)
            if rec.commutative is None or len(stmt.args) != 2:
                continue
            for k in ((0, 1) if rec.commutative else (0,)):
                target, other = stmt.args[k], stmt.args[1 - k]
                if reusable(target) and (stmt.same_shape or isinstance(other, Const) or id(other) in scalars
                                         or arrays.get(id(target)) == arrays.get(id(stmt.outs[0])) is not None):
                    stmt.in_place = k
                    written_into.add(id(stmt.outs[0]))
                    break
            else:
                target, other = stmt.args[1], stmt.args[0]        # `c - t`, `c / t`: np.subtract(c, t, out=t)
                if rec.ufunc is not None and reusable(target) and array(target) and \
                        isinstance(other, Const) and type(other.value) in (int, float):
                    stmt.prim, stmt.kwargs = rec.ufunc, {"out": target}
                    written_into.add(id(stmt.outs[0]))

    # shapes and dtypes where known (s2s/passes/specialize.py): `t = g + t` is `t += g` when they match
    arrays = {k: (shape, dtype) for k, (shape, dtype, v) in getattr(fn, "arrays", {}).items() if id(v) == k}
    big = hasattr(fn, "small")         # the shapes are known: only there `out=` is written
    scan(fn.body)
    rewrite(fn.body)
    return fn


_WRITES = (runtime.setitem, runtime.list_append)


def _may_write_in_place(block: Block, floats: set[int], small: Any, params: set[int]) -> bool:
    """Whether write_in_place can mark anything (one cheap scan): an element write or append, or an operation
    it rewrites with an argument it could reuse (a float value, not a small array nor a parameter)."""
    for stmt in block.stmts:
        if type(stmt) is not Op:
            if any(_may_write_in_place(inner, floats, small, params) for inner in stmt_blocks(stmt)):
                return True
            continue
        prim = stmt.prim
        if prim in _WRITES:
            return True
        if stmt.kwargs or len(stmt.outs) != 1 or not (registry.record(prim).commutative is not None or isinstance(prim, np.ufunc)):
            continue
        for a in stmt.args:
            if isinstance(a, Value) and id(a) in floats and id(a) not in small and id(a) not in params:
                return True
    return False


def _unary_ufunc(prim: Any) -> bool:
    """An elementwise NumPy function of one array whose result has its argument's float dtype and shape."""
    return isinstance(prim, np.ufunc) and prim.nin == 1 and prim.nout == 1 and registry.is_elementwise(prim) \
        and prim.types is not None and not registry.record(prim).no_out \
        and "dd->d" not in prim.types and any(t == "d->d" for t in prim.types)


# ---------------------------------------------------------------- loop invariants



def _by_a_nonzero_number(op: Op) -> bool:
    """`h / 2`: a division by a number other than zero cannot raise either (a float's overflow gives inf)."""
    return op.prim is syntax.BINARY["/"] and len(op.args) == 2 and isinstance(op.args[1], Const) \
        and type(op.args[1].value) in (int, float) and op.args[1].value != 0


def _may_rebind_globals(body: Block) -> bool:
    """Whether a loop body may run code that rebinds a global (`global` is refused in f and what it inlines, so
    only an operation s2s does not know can): else a global read in it reads the same object every iteration."""
    pure = _purity()
    return any(type(s) is Op and s.prim is not runtime.free_name and not pure(s.prim) for s in _all_stmts(body))


def hoist_loop_invariants(fn: Function) -> Function:
    """Move an operation of a loop body that reads only values from outside the loop to before the loop.

    It is then computed once, and the reverse sweep reads it directly instead of saving it on a stack
    every iteration (`-k` in `y = y + h * (-k * y)`, or a global array A in `r = A @ w - b`)."""
    changed(fn)
    def block(b: Block) -> None:
        new: list[Stmt] = []
        for stmt in b.stmts:
            for inner in stmt_blocks(stmt):
                block(inner)
            if isinstance(stmt, (While, For)):
                inside = {id(v) for s in _all_stmts(stmt.body) if not isinstance(s, _Results) for v in s.outs}
                inside |= {id(c) for c in stmt.carried} | ({id(stmt.index)} if isinstance(stmt, For) else set())
                kept = []
                globals_stay = _may_rebind_globals(stmt.body)
                for op in stmt.body.stmts:
                    if (isinstance(op, Op) and (registry.record(op.prim).never_raises or _by_a_nonzero_number(op)
                                                or op.prim is runtime.free_name and not globals_stay)
                            and len(op.outs) == 1 and not op.kwargs
                            and all(not isinstance(a, Value) or id(a) not in inside for a in op.args)):
                        new.append(op)
                        inside.discard(id(op.outs[0]))
                    else:
                        kept.append(op)
                stmt.body.stmts = kept
            new.append(stmt)
        b.stmts = new

    block(fn.body)
    return fn


# ---------------------------------------------------------------- scheduling

def sink_pure_operations(fn: Function) -> Function:
    """Move each pure operation down to just before its first reader in the same block.

    Shorter lifetimes let a value take the name of the one it replaces (`y = y * 0.99` rather than
    `y_1 = y * 0.99` and a copy at the end of the loop), so fewer temporaries live at once."""
    changed(fn)
    pure = _purity()
    lone_pops: set[int] = set()     # the block's pops of a stack nothing else in the block touches

    def movable(stmt: Stmt) -> bool:
        return type(stmt) is Op and len(stmt.outs) == 1 and (pure(stmt.prim) or _transpose(stmt)
                                                             or stmt.prim is runtime.pop and id(stmt) in lone_pops) \
            and stmt.prim is not runtime.stack_new

    def block(b: Block) -> None:
        for stmt in b.stmts:
            if type(stmt) is not Op:
                for inner in stmt_blocks(stmt):
                    block(inner)
        lone_pops.clear()
        lone_pops.update(_lone_pops(b))
        # the statements that stay in place, in order; before each, the pure operations it is the first to
        # read (each after the ones it reads itself); what nothing reads, at the end. Linear in the block.
        position = {id(stmt): k for k, stmt in enumerate(b.stmts)}
        moving = [movable(stmt) for stmt in b.stmts]
        pending: dict[int, Op] = {id(stmt.outs[0]): stmt for stmt, m in zip(b.stmts, moving) if m}
        placed: list[Stmt] = []

        def place(stmt: Stmt) -> None:
            stack: list[tuple[Stmt, bool]] = [(stmt, False)]
            while stack:
                current, ready = stack.pop()
                if ready:
                    placed.append(current)
                    continue
                stack.append((current, True))
                if type(current) is Op:
                    needed = []
                    for a in (current.args if not current.kwargs else [*current.args, *current.kwargs.values()]):
                        if isinstance(a, Value):
                            op = pending.pop(id(a), None)
                            if op is not None:
                                needed.append(op)
                else:
                    needed = [pending.pop(v) for v in _read_ids(current) if v in pending]
                if len(needed) > 1:
                    needed.sort(key=lambda o: position[id(o)], reverse=True)
                for op in needed:
                    stack.append((op, False))

        for stmt, m in zip(b.stmts, moving):
            if not m:
                place(stmt)
        if pending:
            for op in sorted(pending.values(), key=lambda o: position[id(o)]):
                if id(op.outs[0]) in pending:
                    pending.pop(id(op.outs[0]))
                    place(op)
        b.stmts = placed

    block(fn.body)
    return fn


def _lone_pops(b: Block) -> set[int]:
    """The pops of a block (by id) whose stack no other statement of the block reads (a push, another pop, its
    length): it moves down to its first reader like a pure operation (the stacks' order is kept)."""
    pops: dict[int, Op] = {}
    touched: dict[int, int] = {}
    for stmt in b.stmts:
        if type(stmt) is Op:
            if stmt.prim is runtime.pop and stmt.args and type(stmt.args[0]) is Value:
                pops[id(stmt)] = stmt
            reads = stmt.args
        else:
            reads = [a for a in _read_ids_atoms(stmt)]
        for a in reads:
            if type(a) is Value:
                touched[id(a)] = touched.get(id(a), 0) + 1
    return {k for k, op in pops.items() if touched.get(id(op.args[0])) == 1}


def _read_ids_atoms(stmt: Stmt) -> list[Atom]:
    return list(_reads(stmt)) + [a for inner in stmt_blocks(stmt) for a in uses_in(inner)]


def _transpose(op: Op) -> bool:
    """`x.T`, which the shape pass writes for a matmul's adjoint: a view, computed where it is read."""
    return op.prim is getattr and len(op.args) == 2 and op.args[1] == Const("T")


def _read_ids(stmt: Stmt) -> set[int]:
    """The values a statement reads, its nested blocks included."""
    if type(stmt) is Op:
        return {id(a) for a in (stmt.args if not stmt.kwargs else [*stmt.args, *stmt.kwargs.values()])
                if isinstance(a, Value)}
    atoms = list(_reads(stmt)) + [a for inner in stmt_blocks(stmt) for a in uses_in(inner)]
    return {id(a) for a in atoms if isinstance(a, Value)}


# ---------------------------------------------------------------- common subexpressions

def _atom_key(atom: Atom) -> Any:
    """What an atom is for comparing operations: its id for a value (a number: never equal to a constant's key)."""
    if isinstance(atom, Value):
        return id(atom)
    try:
        hash(atom.value)
        return ("const", type(atom.value), atom.value)
    except TypeError:
        return ("object", id(atom.value))


def eliminate_common_subexpressions(fn: Function) -> Function:
    """A pure operation computed again on the same atoms reuses the first result (where it is visible:
    earlier in the block, or in an enclosing block)."""
    mapping: dict[int, Atom] = {}
    pure = _purity()

    def sub(atom: Atom) -> Atom:
        return mapping.get(id(atom), atom) if isinstance(atom, Value) else atom

    def block(b: Block, available: dict) -> None:
        """available: the operations visible here, by key; those b adds are taken out again when b is done (a
        copy of the enclosing blocks' for each nested block made the pass quadratic in a function of many)."""
        kept: list[Stmt] = []
        added: list = []
        for stmt in b.stmts:
            if type(stmt) is not Op:
                substitute(Block([stmt], []), mapping)
                for inner in stmt_blocks(stmt):
                    block(inner, available)
                kept.append(stmt)
                continue
            if mapping:
                _substitute_arguments(stmt, sub)
            if len(stmt.outs) == 1 and stmt.prim is not runtime.stack_new and pure(stmt.prim):
                try:
                    key = (stmt.prim, tuple([id(a) if type(a) is Value else _atom_key(a) for a in stmt.args]),
                           tuple(sorted([(k, _atom_key(a)) for k, a in stmt.kwargs.items()]))
                           if stmt.kwargs else ())
                    hash(key)
                except TypeError:
                    key = None
                if key is not None:
                    found = available.get(key)
                    if found is not None:
                        mapping[id(stmt.outs[0])] = found
                        continue
                    available[key] = stmt.outs[0]
                    added.append(key)
            kept.append(stmt)
        for key in added:
            del available[key]
        b.stmts = kept
        if mapping:
            b.results = [sub(a) for a in b.results]

    block(fn.body, {})
    if mapping:
        changed(fn)
    return fn


# ---------------------------------------------------------------- simplification

def _foldable(prim: Any) -> bool:
    """A pure function of numbers, computed when the derivative is made on constants (its record's fold)."""
    return registry.record(prim).fold


def _is(atom: Atom, number: float) -> bool:
    return isinstance(atom, Const) and type(atom.value) in (int, float) and atom.value == number


def _is_float(atom: Atom, floats: dict, joined: bool = False) -> bool:
    """atom is a float; joined: or, as one side of a branch's result, undefined there (never read on that path)."""
    if isinstance(atom, Const):
        return type(atom.value) is float or joined and atom.value is UNDEFINED
    return atom in floats


class _KnownFloats(Domain):
    """The values known to be floats (or float arrays, or complex): a domain of s2s/analysis/dataflow.py (facts:
    value -> True). The parameters float_params, what _floats_made says an operation makes of them, a branch's
    result that is a float on both sides, and a loop's carried value that starts as one and that every iteration
    leaves as one (assumed, then checked: an assumption that fails is dropped for good, and the engine sweeps
    again, the facts worked out anew)."""

    def __init__(self, float_params: Sequence[int]):
        super().__init__()
        self.float_params = float_params
        self.dropped: set[Value] = set()          # carried values an iteration left something else

    def sweep(self, fn: Function) -> None:
        self.facts = {fn.params[i]: True for i in self.float_params if i < len(fn.params)}

    def op(self, op: Op) -> None:
        if len(op.outs) == 1 and _floats_made(op, self.facts):
            self.facts[op.outs[0]] = True

    def branch(self, out: Value, then: Atom, orelse: Atom) -> None:
        if _is_float(then, self.facts, True) and _is_float(orelse, self.facts, True):
            self.facts[out] = True

    def enter(self, loop: While | For) -> None:
        for c, i in zip(loop.carried, loop.inits):
            if c not in self.dropped and _is_float(i, self.facts, True):
                self.facts[c] = True

    def leave(self, loop: While | For) -> None:
        for c, r, o in zip(loop.carried, loop.body.results, loop.outs):
            if c in self.facts:
                if _is_float(r, self.facts, True):
                    self.facts[o] = True
                else:
                    self.dropped.add(c)
                    self.changed = True


def _known_floats(fn: Function, float_params: Sequence[int]) -> set[int]:
    """Ids of the values known to be floats (_KnownFloats)."""
    domain, = solve(fn, _KnownFloats(float_params))
    return {id(v) for v in domain.facts}


def _floats_made(op: Op, floats: dict) -> bool:
    """Whether op's result is a float (or a float array) for sure: true division, a math function with a float
    result, a ufunc with float results only, or arithmetic with a float operand (an int array times 0.5)."""
    rec = registry.record(op.prim)     # (rules/record.py)
    if rec.keeps_floats:
        return any(_is_float(a, floats) for a in op.args)
    return rec.floats and not rec.int_result


def _identity_keeps_type(op: Op, floats: set[int] | None) -> bool:
    """-1.0 * x is -x only for a float x."""
    return not any(type(a.value) is float for a in op.args if isinstance(a, Const)) or floats is not None and all(
        isinstance(a, Const) or id(a) in floats for a in op.args)


def _identity(op: Op, floats: set[int] | None) -> Atom | None:
    """The atom op is equal to, when an identity makes the op unnecessary. An identity with a float (`x * 1.0`,
    `x + 0.0`, `x / 1`) holds only for an x known to be a float: `np.arange(3) * 1.0` is a float array."""
    if len(op.args) != 2 or op.kwargs:
        return None
    x, y = op.args
    prim = op.prim
    if (prim is syntax.BINARY["/"] or any(type(a.value) is float for a in op.args if isinstance(a, Const))) and not (
            floats is not None and all(isinstance(a, Const) or id(a) in floats for a in op.args)):
        return None
    if prim is syntax.BINARY["*"]:
        if _is(y, 1):
            return x
        if _is(x, 1):
            return y
    elif prim is syntax.BINARY["+"]:
        if _is(y, 0):
            return x
        if _is(x, 0):
            return y
    elif prim is syntax.BINARY["-"] and _is(y, 0):
        return x
    elif prim is syntax.BINARY["-"] and _is(x, 0):
        op.prim, op.args = syntax.UNARY["-"], [y]          # 0 - y is -y: rewritten in place
        return None
    elif prim is syntax.BINARY["/"] and _is(y, 1):
        return x
    elif prim is syntax.BINARY["**"] and _is(y, 1):
        return x
    return None


def simplify(fn: Function, float_params: Sequence[int] = ()) -> Function:
    """Constants folded, identities (`x * 1`) and double negations removed, items read back from the container
    they were put in. An identity with a float (`x * 1.0`, `x + 0.0`, `x / 1`) needs x known to be a float: one
    of float_params (the differentiated arguments), or made by an operation that gives floats (see _floats_made)."""
    floats = _known_floats(fn, float_params)
    mapping: dict[int, Atom] = {}
    negations: dict[int, Atom] = {}      # -x -> x, to undo double negation
    booleans: set[int] = set()           # values known to be True or False
    defining: dict[int, Op] = {}         # the operation that defines each value seen so far
    rewritten = []                       # operations changed in place, and branches decided

    def sub(atom: Atom) -> Atom:
        while isinstance(atom, Value) and id(atom) in mapping:
            atom = mapping[id(atom)]
        return atom

    class _Resolved:
        """mapping with every chain followed to its end (what substitute reads), without copying it."""

        def get(self, key: int, default: Atom) -> Atom:
            return sub(mapping[key]) if key in mapping else default

    resolved = _Resolved()

    def block(b: Block) -> None:
        kept: list[Stmt] = []
        for stmt in b.stmts:
            if not isinstance(stmt, Op):
                substitute(Block([stmt], []), resolved)
                if isinstance(stmt, If) and isinstance(stmt.cond, Const):
                    # a branch decided by a constant (a rule's `if axis is None`): keep the branch taken
                    taken = stmt.then if stmt.cond.value else stmt.orelse
                    rewritten.append(stmt)
                    block(taken)
                    kept.extend(taken.stmts)
                    for out, result in zip(stmt.outs, taken.results):
                        mapping[id(out)] = sub(result)
                    continue
                for inner in stmt_blocks(stmt):
                    block(inner)
                if isinstance(stmt, If):
                    _forward_boolean_phis(stmt, booleans, mapping)
                kept.append(stmt)
                continue
            if mapping:
                _substitute_arguments(stmt, sub)
            flags = _simplify_flags(stmt.prim)
            args = stmt.args
            constants = sum(1 for a in args if isinstance(a, Const))
            replacement = _fold(stmt) if flags & _FOLDS and constants == len(args) else None
            if replacement is None and flags & _IDENTITIES and constants:
                replacement = _identity(stmt, floats)   # (0 - y becomes -y in place)
                if isinstance(replacement, Value) and id(replacement) in booleans:
                    replacement = None          # 1.0 * (x > y) is a float, not a bool
            prim = stmt.prim
            if flags & _IDENTITIES and prim is syntax.UNARY["-"]:
                rewritten.append(stmt)          # 0 - y: -y
            if replacement is None and prim is syntax.SUBSCRIPT:
                replacement = _fold_container(stmt, defining)
            if replacement is None and prim is syntax.UNARY["-"] and isinstance(stmt.args[0], Value) \
                    and id(stmt.args[0]) in negations:
                replacement = negations[id(stmt.args[0])]
            if replacement is not None and len(stmt.outs) == 1:
                mapping[id(stmt.outs[0])] = replacement
                continue
            if prim is syntax.BINARY["*"] and len(stmt.args) == 2 and negations:
                # c * (-x) is (-c) * x
                for k in (0, 1):
                    c, x = stmt.args[k], stmt.args[1 - k]
                    if isinstance(c, Const) and type(c.value) in (int, float) and isinstance(x, Value) \
                            and id(x) in negations:
                        stmt.args = [Const(-c.value), negations[id(x)]]
                        rewritten.append(stmt)
                        break
            if prim is syntax.BINARY["*"] and constants and (_is(stmt.args[0], -1) or _is(stmt.args[1], -1)) and \
                    _identity_keeps_type(stmt, floats):
                stmt.prim, stmt.args = syntax.UNARY["-"], [stmt.args[1] if _is(stmt.args[0], -1) else stmt.args[0]]
                prim = syntax.UNARY["-"]
                rewritten.append(stmt)
            if prim is syntax.UNARY["-"] and len(stmt.outs) == 1:
                negations[id(stmt.outs[0])] = stmt.args[0]
            if flags & _COMPARES:
                for o in stmt.outs:
                    booleans.add(id(o))
            if prim in _CONTAINERS_READ_BACK:       # what _fold_container looks through
                for o in stmt.outs:
                    defining[id(o)] = stmt
            kept.append(stmt)
        b.stmts = kept
        b.results = [sub(a) for a in b.results]

    block(fn.body)
    if mapping or rewritten:
        changed(fn)
    return fn


_FOLDS, _IDENTITIES, _COMPARES = 1, 2, 4
_IDENTITY_PRIMS = {syntax.BINARY["*"], syntax.BINARY["+"], syntax.BINARY["-"], syntax.BINARY["/"], syntax.BINARY["**"]}     # see _identity
_CONTAINERS_READ_BACK = (runtime.make_tuple, runtime.make_list, runtime.make_dict, runtime.setitem)
_FLAGS: dict[Any, int] = {}


def _simplify_flags(prim: Any) -> int:
    """Which of simplify's rules may apply to prim (remembered: they depend on the primitive alone)."""
    try:
        return _FLAGS[prim]
    except KeyError:
        found = _FLAGS[prim] = _flags_of(prim)
        return found
    except TypeError:               # unhashable
        return _flags_of(prim)


def _flags_of(prim: Any) -> int:
    return (_FOLDS if _foldable(prim) else 0) | (_IDENTITIES if prim in _IDENTITY_PRIMS else 0) | \
        (_COMPARES if prim in _COMPARISONS else 0)


_COMPARISONS = {syntax.COMPARE["<"], syntax.COMPARE["<="], syntax.COMPARE[">"], syntax.COMPARE[">="], syntax.COMPARE["=="], syntax.COMPARE["!="], syntax.UNARY["not"],
                syntax.COMPARE["is"], syntax.COMPARE["is not"], syntax.CONTAINS}


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


def _fold_container(op: Op, defining: dict[int, Op]) -> Atom | None:
    """An item read back from a container built (or written) in the function is the value put there."""
    if op.prim is not syntax.SUBSCRIPT or not isinstance(op.args[1], Const) or not isinstance(op.args[0], Value):
        return None
    key = op.args[1].value
    source = defining.get(id(op.args[0]))
    while source is not None:
        if source.prim in (runtime.make_tuple, runtime.make_list) and type(key) is int \
                and -len(source.args) <= key < len(source.args):
            return source.args[key]
        if source.prim is runtime.make_dict and key in source.args[0].value:
            return source.args[1 + source.args[0].value.index(key)]
        if source.prim is runtime.setitem and isinstance(source.args[1], Const) \
                and type(source.args[1].value) is type(key) and isinstance(source.args[0], Value) \
                and _python_container(source, defining):
            if source.args[1].value == key:
                return source.args[2]
            if isinstance(key, str):          # another key of a dict: look further back
                source = defining.get(id(source.args[0]))
                continue
        return None
    return None


def _python_container(write: Op, defining: dict[int, Op]) -> bool:
    """Whether a chain of setitems writes into a list or dict built in the function: an array's item is not the
    value written (`z[1] = 2.6` into an integer array reads back 2)."""
    source: Op | None = write
    while source is not None and source.prim is runtime.setitem and isinstance(source.args[0], Value):
        source = defining.get(id(source.args[0]))
    return source is not None and source.prim in (runtime.make_list, runtime.make_dict)


def _fold(op: Op) -> Atom | None:
    if not _foldable(op.prim) or not all(isinstance(a, Const) for a in op.args) or op.kwargs or len(op.outs) != 1:
        return None
    values = [a.value for a in op.args]
    if op.prim in (syntax.COMPARE["is"], syntax.COMPARE["is not"]):
        return Const(op.prim(*values))
    if not all(type(v) in (int, float, bool, str) for v in values):
        return None
    try:
        result = op.prim(*values)
    except (ArithmeticError, ValueError, TypeError):
        return None
    if type(result) in (int, float, bool) and not (isinstance(result, float) and not math.isfinite(result)):
        return Const(result)
    return None


# The passes in the order the pipeline runs them; `optimize=` names a subset to run only those.
PASSES = ("simplify", "hoist", "cse", "dce", "shapes", "stacks", "specialize", "contract", "sink", "in_place")
