"""Derivatives of recursive calls: recursive derivative functions, made from the recursive function's IR.

Accepts an `Op` whose primitive is a `Callee` (s2s/ir/calls.py): a recursive function of the user's, or a function
made here from one. Reverse mode (`reverse_call`) turns the call

    y = series(x, n)        ->   forward sweep:  y, y_record = series_fwd(x, n)
                                 reverse sweep:  dx = series_rev(y_record, dy)

where `series_fwd` is the recursive function's forward sweep, which returns, besides its value, the values its
reverse sweep reads (its record: the values of its own body, its stacks, and its recursive calls' records), and
`series_rev(record, dy)` is its reverse sweep, which returns the adjoints of its differentiated parameters. Both
are made from the function's IR by reverse_function (cotangent in) split where its forward sweep ends, and both are
recursive: a recursive call inside is transformed the same way, calling the same pair. Forward mode
(`forward_call`) turns it into `y, y_dot = series_jvp(x, n, x_dot)`, forward_function of the IR returning every
result and its tangent. The functions made are emitted into the derivative's module, before it, one `def` each
(s2s/emit/python.py), readable, and differentiated again like any other code (second order: the jvp of
`series_fwd` and of `series_rev`).

Each function is made once per derivative for the parameters' kinds (joined over the calls that reach it: a tree
walk's parameter is a tuple at the root and a float at a leaf, "other" for both) and the set of differentiated
parameters (the union over the calls that reach it; a call differentiating fewer passes zeros). The depth of the
recursion is the one Python takes when the derivative runs: a derivative is never specialized on it.
"""
from __future__ import annotations

import contextlib
import operator
import threading
from typing import Any, Callable, Iterator

from s2s import runtime
from s2s.analysis import complex_values
from s2s.analysis.activity import _join, active_values, const_kind, value_kinds
from s2s.analysis.dataflow import Domain, solve
from s2s.errors import S2SError
from s2s.ir.calls import Callee
from s2s.ir.core import (
    UNDEFINED,
    Atom,
    Block,
    Const,
    For,
    Function,
    If,
    Op,
    Value,
    While,
    clone_function,
    stmt_defs,
    uses_in,
    walk,
)
from s2s.ir.naming import Namer, adjoint_hint, tangent_hint
from s2s.rules import registry


class _Session(threading.local):
    stack: list | None = None


_SESSION = _Session()


@contextlib.contextmanager
def session(prepare: Callable[[Function, list], Function]) -> Iterator[list[Callee]]:
    """The functions made while one derivative is made (yielded, to be optimized by the caller); prepare(fn, kinds)
    gives a recursive function's IR as the transforms take it (the pipeline's passes before a transform)."""
    if _SESSION.stack is None:
        _SESSION.stack = []
    made: list[Callee] = []
    _SESSION.stack.append({"made": made, "pairs": [], "jvps": [], "prepare": prepare})
    try:
        yield made
    finally:
        _SESSION.stack.pop()


def _current() -> dict:
    if not _SESSION.stack:
        raise S2SError("a recursive function is differentiated only inside s2s's pipeline")
    return _SESSION.stack[-1]


def _kind(atom: Atom, kinds: dict) -> Any:
    return const_kind(atom.value) if isinstance(atom, Const) else kinds.get(id(atom), "other")


def _joined(a: list, b: list) -> list:
    return [_join(x, y) for x, y in zip(a, b)]


def _covers(kinds: list, wanted: list) -> bool:
    return _joined(kinds, wanted) == kinds


def _settle(callee: Callee, kinds: list, positions: set[int]) -> tuple[list, set[int]]:
    """The parameters' kinds and the differentiated parameters for every call that reaches the function from this
    one: joined over its recursive calls until they no longer change."""
    prepared: dict = {}
    for _ in range(20):
        key = (tuple(kinds), frozenset(positions))
        fn = prepared.get(key)
        if fn is None:
            fn = prepared[key] = _prepared(callee, kinds)
        found = value_kinds(fn, kinds)
        active = active_values(fn, sorted(positions))
        new_kinds, new_positions = list(kinds), set(positions)
        for stmt in walk(fn.body):
            if isinstance(stmt, Op) and stmt.prim is callee:
                new_kinds = _joined(new_kinds, [_kind(a, found) for a in stmt.args])
                new_positions |= {i for i, a in enumerate(stmt.args) if isinstance(a, Value) and id(a) in active}
        if new_kinds == kinds and new_positions == positions:
            return kinds, positions
        kinds, positions = new_kinds, new_positions
    return ["other"] * len(kinds), positions


def _prepared(callee: Callee, kinds: list) -> Function:
    namer = Namer()
    fn = clone_function(callee.function(), lambda v: namer.value(v.hint))
    return _current()["prepare"](fn, kinds)


def _name(callee: Callee, role: str) -> str:
    """`series_fwd` for the user's `series`; `series_fwd_jvp` for the jvp of a function made from it."""
    base = callee.origin.__name__ if callee.origin is not None and not callee.role else callee.name
    return f"{base}_{role}"


def _results_kinds(callee: Callee, kinds: list) -> list:
    """The kinds of what a call of callee gives, one per output."""
    declared = registry.kind_from_arguments(callee)
    found = declared(kinds) if declared is not None else None
    return found if isinstance(found, list) else [found if found is not None else "other"]


def _declare(made: Callee, result_kinds: list) -> None:
    made.result_kinds = list(result_kinds)
    registry.result_kind_from(made, kind=lambda kinds: list(made.result_kinds) if len(made.result_kinds) > 1
                              else made.result_kinds[0])


# ---------------------------------------------------------------- reverse mode

class _Pair:
    def __init__(self, callee: Callee, kinds: list, wrt: list[int]):
        self.callee, self.kinds, self.wrt = callee, kinds, wrt
        self.forward = Callee(_name(callee, "fwd"))
        self.reverse = Callee(_name(callee, "rev"))
        for made, role in ((self.forward, "forward"), (self.reverse, "reverse")):
            made.origin, made.role = callee.origin, role


def reverse_pair(callee: Callee, kinds: list, positions: set[int], reverse_function: Callable,
                 bits: tuple = ()) -> _Pair:
    session = _current()
    for pair in session["pairs"]:
        if pair.callee is callee and _covers(pair.kinds, kinds) and positions <= set(pair.wrt):
            return pair
    if callee.generated and callee.role:
        raise S2SError(f"s2s does not differentiate {callee.name} (a function it made from a recursive function) in "
                       f"reverse mode again", hint="take second derivatives with s2s.hessian or s2s.hvp (forward over "
                                                   "reverse)")
    with complex_values.argument_bits(bits):      # (what may be complex: what the call is given)
        kinds, positions = _settle(callee, kinds, positions)
        pair = _Pair(callee, kinds, sorted(positions))
        _declare(pair.forward, [*_results_kinds(callee, kinds), ("tuple", None)])     # (the record's: once made)
        _declare(pair.reverse, [kinds[i] for i in pair.wrt])
        session["pairs"].append(pair)
        _build_pair(pair, reverse_function)
    pair.forward.argument_bits = bits
    pair.reverse.argument_bits = _either(bits, 2)
    session["made"].extend([pair.forward, pair.reverse])
    return pair


def _either(bits: tuple, count: int) -> tuple:
    """The kinds (complex_values' bits) of parameters made of the values of all of bits: real when they all are."""
    return (complex_values.REAL if all(b == complex_values.REAL for b in bits) else complex_values.EITHER,) * count


def _build_pair(pair: _Pair, reverse_function: Callable) -> None:
    fn = _prepared(pair.callee, pair.kinds)
    count = len(fn.body.results)
    if count > 1:           # its value and the arguments it wrote into: one tuple, whose adjoint the caller gives
        packed_results = Value("results", "results")
        fn.body.stmts.append(Op(runtime.make_tuple, list(fn.body.results), [packed_results], loc=fn.loc))
        fn.body.results = [packed_results]
    vjp = reverse_function(fn, pair.wrt, pair.kinds, False, several=len(pair.wrt) != 1, cotangent=True)
    boundary, output = vjp.sweep_boundary, vjp.primal_output     # type: ignore[attr-defined]
    forward_stmts, reverse_stmts = vjp.body.stmts[:boundary], vjp.body.stmts[boundary:]
    outputs = [output] if count == 1 else [_unpacked(forward_stmts, output, k, fn) for k in range(count)]
    params, seed = vjp.params[:-1], vjp.params[-1]
    defined = {id(p) for p in params}
    for stmt in forward_stmts:
        defined.update(id(v) for v in stmt_defs(stmt))
    record: dict[int, Value] = {}
    for atom in uses_in(Block(reverse_stmts, vjp.body.results)):
        if isinstance(atom, Value) and id(atom) in defined and id(atom) not in record:
            record[id(atom)] = atom
    kinds = value_kinds(vjp, [*pair.kinds, pair.forward.result_kinds[0] if count == 1 else
                              ("tuple", tuple(pair.forward.result_kinds[:-1]))])
    _bound_on_every_path(forward_stmts, record)
    # the forward sweep: the primal value and the record
    namer = Namer()
    namer.used.update(v.name for v in record.values())
    packed = namer.value(f"{pair.callee.name}_record")
    stmts = list(forward_stmts) + [Op(runtime.make_tuple, list(record.values()), [packed], loc=fn.loc)]
    fresh = Namer()
    pair.forward.fn = clone_function(Function(pair.forward.name, list(params), Block(stmts, [*outputs, packed]),
                                              fn.loc, returns_tuple=True), lambda v: fresh.value(v.hint))
    pair.forward.kinds = list(pair.kinds)
    record_kind = ("tuple", tuple(_kind(v, kinds) for v in record.values()))
    pair.forward.result_kinds[-1] = record_kind
    # the reverse sweep: the record's values, then the adjoints
    given = Value(packed.name, "record")
    reads = [Op(operator.getitem, [given, Const(k)], [v], loc=fn.loc) for k, v in enumerate(record.values())]
    results = list(vjp.body.results)
    body = reads + list(reverse_stmts)
    if len(pair.wrt) != 1:          # the adjoints, one result each (not the tuple reverse_function built)
        last = body[-1] if body else None
        if isinstance(last, Op) and last.prim is runtime.make_tuple and last.outs[0] is results[0]:
            body, results = body[:-1], list(last.args)
        else:
            results = [_item(body, results[0], k, fn) for k in range(len(pair.wrt))]
    copy = Namer()
    pair.reverse.fn = clone_function(Function(pair.reverse.name, [given, seed], Block(body, results), fn.loc,
                                              returns_tuple=len(results) != 1), lambda v: copy.value(v.hint))
    pair.reverse.fn.name = pair.reverse.name
    results_kind = pair.forward.result_kinds[0] if count == 1 else ("tuple", tuple(pair.forward.result_kinds[:-1]))
    pair.reverse.kinds = [record_kind, results_kind]


class _Needed(Domain):
    """The values a record needs bound on every path (a backward domain of s2s/analysis/dataflow.py; facts:
    value -> True): the record's own, then both branch results of a needed If result and the start, carried value
    and update of a needed loop result."""

    backward = True

    def __init__(self, record: dict[int, Value]):
        super().__init__()
        self.facts = dict.fromkeys(record.values(), True)

    def mark(self, atom: Atom) -> None:
        if atom.__class__ is Value and atom not in self.facts:
            self.facts[atom] = True
            self.changed = True

    def op(self, op: Op) -> None:
        pass                    # an operation binds what it makes: nothing more is needed for it

    def branch(self, out: Value, then: Atom, orelse: Atom) -> None:
        if out in self.facts:
            self.mark(then)
            self.mark(orelse)

    def enter(self, loop: Any) -> None:
        for out, i, c, r in zip(loop.outs, loop.inits, loop.carried, loop.body.results):
            if out in self.facts:
                self.mark(i)
                self.mark(c)
                self.mark(r)

    leave = enter


def _bound_on_every_path(stmts: list, record: dict[int, Value]) -> None:
    """A value of the record that a branch or a loop leaves unbound on some path (UNDEFINED: read only on the
    other), directly or through the branches and loops nested in it, holds None there: the record is made on every
    path. (What is needed: _Needed; then each unbound start or branch result of a needed value is None.)"""
    block = Block(stmts, [])
    needed = solve(block, _Needed(record))[0].facts
    for stmt in walk(block):
        if isinstance(stmt, If):
            for k, out in enumerate(stmt.outs):
                if out in needed:
                    for branch in (stmt.then, stmt.orelse):
                        if _unset(branch.results[k]):
                            branch.results[k] = Const(None)
        elif isinstance(stmt, (For, While)):
            for k, out in enumerate(stmt.outs):
                if out in needed and _unset(stmt.inits[k]):
                    stmt.inits[k] = Const(None)


def _unset(atom: Atom) -> bool:
    return isinstance(atom, Const) and atom.value is UNDEFINED


def _item(body: list, tuple_value: Atom, k: int, fn: Function) -> Value:
    item = Value(f"{getattr(tuple_value, 'name', 'grads')}_{k}", "")
    body.append(Op(operator.getitem, [tuple_value, Const(k)], [item], loc=fn.loc))
    return item


def reverse_call(rev: Any, op: Op, out: list, reverse_function: Callable) -> None:
    """The reverse of `y = f(args)` (`y, memo = f(args, memo)` for a function that writes into an argument): the
    forward sweep calls f's forward sweep (which also returns its record), the reverse sweep its reverse sweep, given
    the outputs' adjoints, whose adjoints accumulate into the arguments'."""
    callee = op.prim
    given = [rev.adj.get(id(o)) for o in op.outs]
    positions = {i for i, a in enumerate(op.args) if rev.is_active(a)}
    if all(g is None for g in given) or not positions:
        return
    kinds = [_kind(a, rev.kinds) for a in op.args]
    bits = tuple(rev.complex.of(a) for a in op.args)
    pair = reverse_pair(callee, kinds, positions, reverse_function, bits)
    if len(op.outs) == 1:
        g = rev.full(given[0], op.outs[0], out, op.loc)
    else:
        items = [rev.full(a, o, out, op.loc) if a is not None else rev.zero(o, out, loc=op.loc)
                 for a, o in zip(given, op.outs)]
        g = rev.fresh("dresults")
        out.append(Op(runtime.make_tuple, items, [g], loc=op.loc))
    y = op.outs[0]
    record = rev.fresh(f"{y.hint or callee.name}_record")
    op.prim = pair.forward
    op.outs = [*op.outs, record]
    rev.kinds[id(record)] = pair.forward.result_kinds[-1]
    adjoints = [rev.fresh(adjoint_hint(op.args[i]) if isinstance(op.args[i], Value) else "d") for i in pair.wrt]
    out.append(Op(pair.reverse, [record, g], adjoints, loc=op.loc))
    for i, adjoint in zip(pair.wrt, adjoints):
        rev.kinds[id(adjoint)] = pair.kinds[i]
        rev.accumulate(op.args[i], adjoint, out, op.loc)


# ---------------------------------------------------------------- forward mode

class _Jvp:
    def __init__(self, callee: Callee, kinds: list, seeds: list[int]):
        self.callee, self.kinds, self.seeds = callee, kinds, seeds
        self.made = Callee(_name(callee, "jvp"))
        self.made.origin, self.made.role = callee.origin, "jvp"


def jvp_of(callee: Callee, kinds: list, positions: set[int], forward_function: Callable, parameter: Any,
           bits: tuple = ()) -> _Jvp:
    session = _current()
    for jvp in session["jvps"]:
        if jvp.callee is callee and _covers(jvp.kinds, kinds) and positions <= set(jvp.seeds):
            return jvp
    with complex_values.argument_bits(bits):
        kinds, positions = _settle(callee, kinds, positions)
        jvp = _Jvp(callee, kinds, sorted(positions))
        results = _results_kinds(callee, kinds)
        _declare(jvp.made, results + results)
        session["jvps"].append(jvp)
        _build_jvp(jvp, forward_function, parameter)
    jvp.made.argument_bits = tuple(bits) + tuple(bits[i] for i in jvp.seeds)
    session["made"].append(jvp.made)
    return jvp


def _build_jvp(jvp: _Jvp, forward_function: Callable, parameter: Any) -> None:
    fn = _prepared(jvp.callee, jvp.kinds)
    results = list(fn.body.results)
    namer = Namer()
    namer.used.update(v.name for s in walk(fn.body) for v in stmt_defs(s))
    namer.used.update(p.name for p in fn.params)
    packed = namer.value("results")
    fn.body.stmts.append(Op(runtime.make_tuple, results, [packed], loc=fn.loc))
    fn.body.results = [packed]
    made = forward_function(fn, {i: parameter for i in jvp.seeds}, jvp.kinds, True, "jvp")
    # its last operation pairs the value (the packed results) with its tangent: one result each instead
    last = made.body.stmts[-1]
    assert isinstance(last, Op) and last.prim is runtime.make_tuple and len(last.args) == 2
    made.body.stmts.pop()
    value, tangent = last.args
    items = [_unpacked(made.body.stmts, value, k, fn) for k in range(len(results))]
    tangents = [_unpacked(made.body.stmts, tangent, k, fn) for k in range(len(results))]
    made.body.results = items + tangents
    made.returns_tuple = True
    made.name = jvp.made.name
    fresh = Namer()
    jvp.made.fn = clone_function(made, lambda v: fresh.value(v.hint))
    jvp.made.kinds = list(jvp.kinds) + [jvp.kinds[i] for i in jvp.seeds]


def _unpacked(stmts: list, packed: Atom, k: int, fn: Function) -> Atom:
    """Item k of a tuple the function made: the atom it was made from, or a read of it."""
    for stmt in stmts:
        if isinstance(stmt, Op) and stmt.prim is runtime.make_tuple and stmt.outs and stmt.outs[0] is packed:
            return stmt.args[k]
    if isinstance(packed, Const):
        return Const(packed.value[k])
    item = Value(f"{getattr(packed, 'name', 'item')}_{k}", "")
    stmts.append(Op(operator.getitem, [packed, Const(k)], [item], loc=fn.loc))
    return item


def forward_call(fwd: Any, op: Op, out: list, forward_function: Callable, parameter: Any) -> bool:
    """The tangent of `outs = f(args)`: `outs, outs_dot = f_jvp(args, tangents)`. False when no argument varies."""
    callee = op.prim
    varying = {i for i, a in enumerate(op.args) if fwd.tangent(a) is not None}
    if not varying:
        return False
    kinds = [_kind(a, fwd.kinds) if not isinstance(a, Const) else const_kind(a.value) for a in op.args]
    bits = tuple(fwd.complex.of(a) for a in op.args)
    jvp = jvp_of(callee, kinds, varying, forward_function, parameter, bits)
    if out and out[-1] is op:           # (the call itself: replaced by the jvp's, which gives its outputs too)
        out.pop()
    tangents = [fwd.tangent_or_zero(op.args[i], out, op.loc) for i in jvp.seeds]
    dots = [fwd.fresh(tangent_hint(o)) for o in op.outs]
    out.append(Op(jvp.made, [*op.args, *tangents], [*op.outs, *dots], loc=op.loc))
    for o, d, k in zip(op.outs, dots, jvp.made.result_kinds or []):
        fwd.tan[id(o)] = d
        fwd.kinds[id(d)] = k
    return True
