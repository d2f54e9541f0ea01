"""Batching (s2s.vmap): a Function over one example to the Function over a batch of examples, as NumPy.

`batch_function(fn, states, facts, size, out_axes)` takes the IR of a function of one example (a primal function
or a derivative s2s made), which parameters are batched (`states`: None, BATCHED, or a container's structure with
the state of each item), the facts (s2s/analysis/shapes.py's abstract values) of one example's values and the
batch size, and gives a Function of the same parameters, each batched leaf carrying the batch along its first axis.
Every value keeps one batch state: unbatched values (those that do not depend on the batch) stay unbatched and are
computed once.

Each primitive applied to a batched value is batched by, in order:
- its record's batching rule (`@batching(prim)` in rules/: `rule(axes, *args, **kwargs) -> (result, out_axis)`),
  parsed and inlined like a derivative rule, with `axes` a constant so that its branches fold away here, when the
  batched code is made (`np.ndim` and `np.shape` of a value whose shape is known fold too);
- an elementwise function (a ufunc, an operator): the same function, its batched arguments first given the
  singleton axes that line their example axes up (`m[:, None]` beside a row of logits);
- the structure of containers (tuples, lists, dicts, stacks of derivative code): per item;
- else a loop over the batch in the generated code (`notes` says where: the header shows it).

Control flow on a batched condition:
- `if`: both branches run on the whole batch and a select (np.where) merges what they yield. A branch that could
  produce a NaN or a warning where it is not taken (a log, a division, a square root...) reads its inputs masked:
  where an example does not take it, the input of an example that does (`np.where(c, x, x[i])`, the fill held
  constant for derivatives), so that neither its value nor its adjoint is computed where it is not defined; when no
  example takes it, it does not run. A phi that a branch leaves undefined takes the other branch's value.
- `while` on a batched test: the body runs on the examples still active only (indexed by the mask), whose new
  values are written back, until every example is done.
- `for` over a range with batched bounds: the same, as a while loop over the index.
What no exact batched form exists for (a while loop whose body saves values for a reverse sweep, a container whose
items are batched differently at one place) raises NotBatchable: the driver then loops over the batch.
"""
from __future__ import annotations

import builtins
import inspect
from typing import Any, Callable

import numpy as np

from s2s.ir import syntax
from s2s import runtime
from s2s.analysis.dataflow import Domain, solve
from s2s.analysis.shapes import infer
from s2s.analysis.values import Abstract, Items, abstract_of
from s2s.errors import BadArgument, S2SError
from s2s.ir.core import (
    UNDEFINED,
    Atom,
    Block,
    Const,
    For,
    Function,
    If,
    Loc,
    Op,
    Stmt,
    Value,
    While,
    clone_block,
    prim_name,
    stmt_defs,
    walk,
)
from s2s.ir.naming import Namer
from s2s.rules import registry
from s2s.rules.batching import _batch_lift as _LIFT
from s2s.rules.batching import _batch_repeat as _REPEAT
from s2s.rules.batching import _fill_tree_rows as _FILL_ROWS
from s2s.transforms.rule_inline import rule_ir

BATCHED = True


class NotBatchable(S2SError):
    """What s2s has no exact batched form for: the driver loops over the batch instead (said in the header)."""


class _Restart(Exception):
    """A loop's carried value (or a stack) turned out batched after it was read as unbatched: transform again."""


# ---------------------------------------------------------------- batch states

def is_batched(state: Any) -> bool:
    if state is None:
        return False
    if state is True:
        return True
    return any(is_batched(s) for s in _item_states(state))


def _item_states(state: Any) -> tuple:
    if state[0] in ("list*", "stack"):
        return (state[1],)
    return state[-1]


def join(a: Any, b: Any) -> Any:
    """The state of a value that is a or b (a phi, a loop's carried value): batched wherever either is."""
    if a is None or a == b:
        return b
    if b is None:
        return a
    if a is True or b is True:
        raise NotBatchable("a value is an array at one place and a container at another")
    ta, tb = a[0], b[0]
    if ta == "dict" or tb == "dict":
        if ta == tb and a[1] == b[1]:
            return ("dict", a[1], tuple(join(x, y) for x, y in zip(a[2], b[2])))
        raise NotBatchable("a dict with different keys at different places")
    if ta == tb and ta in ("tuple", "list") and len(a[1]) == len(b[1]):
        return (ta, tuple(join(x, y) for x, y in zip(a[1], b[1])))
    if ta == "stack" or tb == "stack":
        if ta == tb:
            return ("stack", join(a[1], b[1]))
        raise NotBatchable("a stack and another container at one place")
    items = [s for x in (a, b) for s in _item_states(x)]
    found = None
    for s in items:
        found = join(found, s)
    return ("list*", found)


def widens(old: Any, new: Any) -> bool:
    """Whether new is batched somewhere old is not."""
    return join(old, new) != old


def everything(fact: Any) -> Any:
    """The state of a value of these facts batched in every leaf."""
    if isinstance(fact, Items):
        items = tuple(everything(f) for f in fact.items)
        return ("dict", fact.keys, items) if fact.kind == "dict" else (fact.kind, items)
    return True


def state_of_kind(kind: Any, axes: Any) -> Any:
    """The state of an argument of this kind given its in_axes entry (normalized: None, an int, or a tree)."""
    if axes is None:
        return None
    if isinstance(axes, int):
        if isinstance(kind, tuple):
            if kind[0] == "list*":
                return ("list*", True)
            if kind[0] == "dict":
                return ("dict", tuple(k for k, _ in kind[1]), tuple(state_of_kind(k, axes) for _, k in kind[1]))
            return (kind[0] if kind[0] in ("tuple", "list") else "tuple",
                    tuple(state_of_kind(k, axes) for k in kind[1]))
        return True
    if isinstance(axes, dict):
        keys = tuple(k for k, _ in kind[1])
        return ("dict", keys, tuple(state_of_kind(k, axes[key]) for key, (_, k) in zip(keys, kind[1])))
    if kind[0] == "list*":
        found = None
        for a in axes:
            found = join(found, None if a is None else True)
        return ("list*", found)
    return (kind[0] if kind[0] in ("tuple", "list") else "tuple",
            tuple(state_of_kind(k, a) for k, a in zip(kind[1], axes)))


# ---------------------------------------------------------------- what never produces a NaN or a warning

def _safe(op: Op) -> bool:
    """A branch made of operations whose records say total runs on every example unmasked: finite inputs give
    finite values and adjoints (a reduction given where= excepted)."""
    rec = registry.record(op.prim)
    return rec.total and not (rec.shape_rule == "reduction" and op.kwargs.get("where") is not None)


class _ReachesWarning(Domain):
    """The values that reach an operation which may produce a NaN or a warning (a backward domain of
    s2s/analysis/dataflow.py; facts: value -> True): what such an operation reads, what a masked value's
    operation reads, an If's branch results when one of its results is masked, and all of a loop's starts,
    updates and carried values when one of its results or carried values is."""

    backward = True

    def mark(self, atoms: list) -> None:
        for a in atoms:
            if a.__class__ is Value and a not in self.facts:
                self.facts[a] = True
                self.changed = True

    def op(self, op: Op) -> None:
        if not _safe(op) or any(o in self.facts for o in op.outs):
            self.mark(list(op.args) + list(op.kwargs.values()))

    def merge(self, stmt: If) -> None:
        if any(o in self.facts for o in stmt.outs):
            self.mark(list(stmt.then.results) + list(stmt.orelse.results))

    def enter(self, loop: Any) -> None:
        if any(v in self.facts for v in list(loop.outs) + list(loop.carried)):
            self.mark(list(loop.inits) + list(loop.body.results) + list(loop.carried))

    leave = enter       # (after the body: what it read of the carried values)


def masked_inputs(block: Block) -> set[int]:
    """The values a branch reads that reach an operation which may produce a NaN or a warning where the branch is
    not taken (a log, a division...): masked (by id). The others (np.sum(x) beside np.log(s)) are read as they
    are."""
    domain, = solve(block, _ReachesWarning())
    return {id(v) for v in domain.facts}


# elementwise operators that are not declared so (no derivative: comparisons, integer operations)
_ELEMENTWISE_OPS = {syntax.COMPARE["<"], syntax.COMPARE["<="], syntax.COMPARE[">"], syntax.COMPARE[">="], syntax.COMPARE["=="], syntax.COMPARE["!="], syntax.BINARY["//"],
                    syntax.BINARY["&"], syntax.BINARY["|"], syntax.BINARY["^"], syntax.UNARY["~"], syntax.BINARY["<<"], syntax.BINARY[">>"],
                    runtime._shaped_like}

_INDEXING = {syntax.SUBSCRIPT, runtime.setitem, runtime._scatter}

# the helpers of a container's adjoint (derivative code's): batched item by item
_ADJOINT_TREES = {runtime._add, runtime._zeros_like_tree, runtime._item, runtime._scatter, runtime._fill_tree}

_STRUCTURAL = {runtime.make_tuple, runtime.make_list, runtime.make_dict, runtime.list_append, runtime.stack_new,
               runtime.push, runtime.pop}


class Region:
    """Where statements are being made: the batch size there, and how a batched value made outside is read inside
    (masked in a branch, indexed by the active examples in a while loop)."""

    def __init__(self, batcher: "_Batcher", size: Atom, outer: "Region | None", adapt: Callable | None = None,
                 only: set | None = None):
        self.batcher, self._size, self.outer, self.adapt = batcher, size, outer, adapt
        self.only = only            # the values made outside it that it adapts (None: every one)
        self.head: list[Stmt] = []          # what the region computes first (the active rows, their number)
        self.prologue: list[Stmt] = []      # then the values made outside it, as it reads them
        self.cache: dict[int, Atom] = {}
        self.size_op: Callable | None = None

    @property
    def size(self) -> Atom:
        if self._size is None:          # the number of active examples: counted when first needed
            self._size = self.size_op()
        return self._size

    def chain(self) -> list["Region"]:
        found, r = [], self
        while r is not None:
            found.append(r)
            r = r.outer
        return found


class _Batcher:
    def __init__(self, fn: Function, states: list, facts: dict, size: int, widened: dict):
        self.fn = fn
        self.facts = facts          # id(old value) -> the abstract value of one example's
        self.size = size
        self.widened = widened      # id(old carried value or stack) -> the state it must have: kept across restarts
        self.namer = Namer()
        self.env: dict[int, Atom] = {}
        self.state: dict[int, Any] = {}          # id(old value) -> its batch state
        self.owner: dict[int, Region] = {}       # id(new value) -> the region that made it
        self.built: dict[int, tuple] = {}        # id(new container value) -> (prim, items): what a make_tuple holds
        self.abstract: dict[int, Any] = {}       # id(new value) -> its batched abstract value, where known
        self.batched_new: dict[int, bool] = {}   # id(new value) -> whether it is batched (rules' intermediates too)
        self.stacks: dict[int, Any] = {}         # id(old stack) -> the state of what it holds
        self.notes: list[str] = []
        self.top = Region(self, Const(size), None)
        self.region = self.top
        self.params = []
        for p, s in zip(fn.params, states):
            new = Value(p.name, p.hint)
            self.namer.reserve(p.name)
            self.params.append(new)
            self.env[id(p)] = new
            self.state[id(p)] = s
            self.owner[id(new)] = self.top
            self.batched_new[id(new)] = is_batched(s)
            self.abstract[id(new)] = self.batched_fact(self.facts.get(id(p)), s)

    # ------------------------------------------------------------ facts

    def batched_fact(self, fact: Any, state: Any) -> Any:
        if fact is None or state is None:
            return fact
        if state is True:
            if not isinstance(fact, Abstract):
                return None
            dtype = fact.dtype if not fact.python else np.asarray(fact.proto()).dtype
            return Abstract((self.size,) + fact.shape, dtype)
        if isinstance(fact, Items) and state[0] in ("tuple", "list", "dict"):
            items = _item_states(state)
            if len(items) == len(fact.items):
                return Items(fact.kind, fact.keys, tuple(self.batched_fact(f, s) for f, s in zip(fact.items, items)))
        return None

    def example_ndim(self, atom: Atom) -> int | None:
        """The number of axes of one example's value of an old atom."""
        if isinstance(atom, Const):
            return np.ndim(atom.value) if not isinstance(atom.value, (tuple, list)) else None
        fact = self.facts.get(id(atom))
        return fact.ndim if isinstance(fact, Abstract) else None

    def full(self, atom: Atom) -> Any:
        if isinstance(atom, Const):
            return abstract_of(atom.value)
        return self.abstract.get(id(atom))

    def fresh(self, hint: str = "") -> Value:
        v = self.namer.value(hint)
        self.owner[id(v)] = self.region
        return v

    def emit(self, out: list, prim: Any, args: list, hint: str = "", kwargs: dict | None = None,
             loc: Loc | None = None, batched: bool = False, fact: Any = None) -> Value:
        v = self.fresh(hint)
        op = Op(prim, list(args), [v], dict(kwargs or {}), loc)
        out.append(op)
        self.batched_new[id(v)] = batched
        self.abstract[id(v)] = fact if fact is not None else infer(op, self.full)
        return v

    # ------------------------------------------------------------ reading values

    def get(self, atom: Atom) -> tuple[Atom, Any]:
        """The new atom for an old one, read in the current region, and its state."""
        if not isinstance(atom, Value):
            return atom, None
        state = self.state.get(id(atom))
        new = self.env[id(atom)]
        return self.read(new, state, id(atom)), state

    def read(self, new: Atom, state: Any, old: int | None = None) -> Atom:
        if not isinstance(new, Value) or not is_batched(state):
            return new
        made = self.owner.get(id(new), self.top)
        path = []
        r = self.region
        while r is not None and r is not made:
            path.append(r)
            r = r.outer
        if r is None:           # made in a region that is not around this one: read as it is
            return new
        for region in reversed(path):
            if region.adapt is None or region.only is not None and old not in region.only:
                continue
            cached = region.cache.get(id(new))
            if cached is None:
                cached = region.cache[id(new)] = self.adapt_in(region, new, state)
            new = cached
        return new

    def adapt_in(self, region: Region, new: Atom, state: Any) -> Atom:
        """new, made outside region, as region reads it (each batched leaf through region.adapt)."""
        saved = self.region
        self.region = region
        try:
            if state is True:
                return region.adapt(new, region.prologue)
            built = self.built.get(id(new))
            if built is None:
                raise NotBatchable("a container of batched values made outside a branch or loop is read inside it")
            prim, items, keys = built
            adapted = [self.adapt_in(region, a, s) if is_batched(s) else a
                       for a, s in zip(items, _item_states(state))]
            args = ([Const(keys)] if prim is runtime.make_dict else []) + adapted
            v = self.emit(region.prologue, prim, args, new.hint if isinstance(new, Value) else "", batched=True)
            self.built[id(v)] = (prim, adapted, keys)
            return v
        finally:
            self.region = saved

    def bind(self, old: Value, new: Atom, state: Any) -> None:
        self.env[id(old)] = new
        self.state[id(old)] = state
        if isinstance(new, Value):
            if id(new) not in self.batched_new:
                self.batched_new[id(new)] = is_batched(state)
            if self.abstract.get(id(new)) is None:
                self.abstract[id(new)] = self.batched_fact(self.facts.get(id(old)), state)

    # ------------------------------------------------------------ broadcasting an unbatched value to the batch

    def broadcast(self, new: Atom, old: Atom | None, state: Any, out: list, loc: Loc | None,
                  dtype: Any = None) -> Atom:
        """new (unbatched, or batched in fewer leaves) as a value of the given state: its unbatched leaves repeated
        for every example of the region."""
        if not is_batched(state):
            return new
        current = self.state.get(id(old)) if isinstance(old, Value) else None
        if state is True:
            if current is True and dtype is None:
                return new
            fact = self.facts.get(id(old)) if isinstance(old, Value) else abstract_of(old.value) \
                if isinstance(old, Const) else None
            if current is True:
                return self.emit(out, np.asarray, [new], new.hint if isinstance(new, Value) else "",
                                 {"dtype": Const(dtype)}, loc, batched=True)
            size = self.region.size
            if isinstance(fact, Abstract) and isinstance(size, Const):
                shape = (size.value,) + fact.shape
                kwargs = {"dtype": Const(dtype)} if dtype is not None else {}
                return self.emit(out, np.full, [Const(shape if len(shape) > 1 else shape[0]), new],
                                 new.hint if isinstance(new, Value) else "", kwargs, loc, batched=True,
                                 fact=Abstract(shape, np.dtype(dtype) if dtype is not None else
                                               np.asarray(fact.proto()).dtype))
            args = [new, size] + ([Const(dtype)] if dtype is not None else [])
            return self.emit(out, _batch_repeat(), args, new.hint if isinstance(new, Value) else "", {}, loc,
                             batched=True)
        # a container: each leaf
        built = self.built.get(id(new)) if isinstance(new, Value) else None
        fact = self.facts.get(id(old)) if isinstance(old, Value) else None
        cur_items = _item_states(current) if current is not None and current is not True else None
        if state[0] in ("list*", "stack"):
            if built is None:
                raise NotBatchable("a list of values batched at some places only")
            items = [self._broadcast_item(a, None, None, state[1], out, loc) for a in built[1]]
            v = self.emit(out, built[0], items, new.hint if isinstance(new, Value) else "", loc=loc, batched=True)
            self.built[id(v)] = (built[0], items, None)
            return v
        keys = state[1] if state[0] == "dict" else None
        items = []
        for k, s in enumerate(_item_states(state)):
            if built is not None:
                item = built[1][k]
            else:
                key = keys[k] if keys is not None else k
                item = self.emit(out, syntax.SUBSCRIPT, [new, Const(key)], "", loc=loc,
                                 batched=cur_items is not None and is_batched(cur_items[k]))
            item_fact = fact.items[k] if isinstance(fact, Items) and k < len(fact.items) else None
            c = cur_items[k] if cur_items is not None else None
            items.append(self._broadcast_item(item, item_fact, c, s, out, loc))
        prim = {"tuple": runtime.make_tuple, "list": runtime.make_list, "dict": runtime.make_dict}[state[0]]
        args = ([Const(keys)] if keys is not None else []) + items
        v = self.emit(out, prim, args, new.hint if isinstance(new, Value) else "", loc=loc, batched=True)
        self.built[id(v)] = (prim, items, keys)
        return v

    def _broadcast_item(self, item: Atom, fact: Any, current: Any, state: Any, out: list, loc: Loc | None) -> Atom:
        if not is_batched(state) or not widens(current, state):
            return item
        if state is True:
            size = self.region.size
            if isinstance(fact, Abstract) and isinstance(size, Const):
                shape = (size.value,) + fact.shape
                return self.emit(out, np.full, [Const(shape if len(shape) > 1 else shape[0]), item], "", {}, loc,
                                 batched=True)
            return self.emit(out, _batch_repeat(), [item, size], "", {}, loc, batched=True)
        holder = Value("item")
        self.facts[id(holder)] = fact
        self.state[id(holder)] = current
        return self.broadcast(item, holder, state, out, loc)

    # ------------------------------------------------------------ the function

    def run(self, out_axes: Any) -> tuple[Function, Any]:
        body = self.block(self.fn.body, self.top)
        olds = self.fn.body.results
        if self.fn.returns_tuple:
            trees = list(out_axes) if isinstance(out_axes, (tuple, list)) else [out_axes] * len(olds)
            if len(trees) != len(olds):
                raise BadArgument(f"out_axes has {len(trees)} entries for the {len(olds)} outputs of {self.fn.name}")
            paths = [f"[{k}]" for k in range(len(olds))]
        else:
            trees, paths = [out_axes], [""]
        states = []
        for k, (old, tree, path) in enumerate(zip(olds, trees, paths)):
            state = self.result_state(old)
            body.results[k] = self.place(body.results[k], state, self.facts.get(id(old)) if isinstance(old, Value)
                                         else abstract_of(old.value), tree, body.stmts, path)
            states.append(state)
        return Function(self.fn.name, self.params, body, self.fn.loc, self.fn.returns_tuple), states

    def place(self, new: Atom, state: Any, fact: Any, axes: Any, out: list, path: str) -> Atom:
        """An output with its batch axis where out_axes puts it (an unbatched one repeated for every example)."""
        if axes == 0 and state is not None and state is not True and _every_leaf(state):
            return new              # a container batched in every leaf, as out_axes=0 wants it (its type kept)
        if isinstance(fact, Items) or (state is not None and state is not True) or isinstance(axes, (tuple, list,
                                                                                                     dict)):
            if not isinstance(fact, Items):
                if isinstance(axes, (tuple, list, dict)):
                    raise BadArgument(f"out_axes{path} is a {type(axes).__name__}, and the output{path} is not "
                                      f"a container")
                raise NotBatchable("an output container whose structure is not known when the batched code is made")
            keys = fact.keys
            if isinstance(axes, dict):
                if set(axes) != set(keys):
                    raise BadArgument(f"out_axes{path} has the keys {sorted(axes)}, the output{path} "
                                      f"{sorted(keys)}")
                picked = [axes[k] for k in keys]
            elif isinstance(axes, (tuple, list)):
                if len(axes) != len(keys):
                    raise BadArgument(f"out_axes{path} has {len(axes)} entries, the output{path} holds {len(keys)} "
                                      f"items")
                picked = list(axes)
            else:
                picked = [axes] * len(keys)
            item_states = _item_states(state) if state is not None and state is not True else [None] * len(keys)
            items = self.container_items(new, None, ("dict", keys, item_states) if fact.kind == "dict" else
                                         ("tuple", item_states), out, None)
            placed = [self.place(i, s, f, a, out, f"{path}[{k!r}]")
                      for i, s, f, a, k in zip(items, item_states, fact.items, picked, keys)]
            prim = {"tuple": runtime.make_tuple, "list": runtime.make_list, "dict": runtime.make_dict}[fact.kind]
            return self.emit(out, prim, ([Const(keys)] if fact.kind == "dict" else []) + placed,
                             new.hint if isinstance(new, Value) else "out", batched=True)
        if axes is None:
            if is_batched(state):
                raise BadArgument(f"out_axes{path} is None, but the output{path} differs between examples",
                                  hint="give an int out_axes for it (0 puts the batch first)")
            return new
        if fact is None and not is_batched(state):
            raise NotBatchable(f"an output{path} the same for every example, whose structure is not known")
        if not isinstance(axes, int) or isinstance(axes, bool):
            raise BadArgument(f"out_axes{path} must be an int or None, not {axes!r}")
        ndim = fact.ndim if isinstance(fact, Abstract) else None
        if ndim is not None and not -(ndim + 1) <= axes <= ndim:
            what = "a number" if ndim == 0 else f"an array of {ndim} axes"
            raise BadArgument(f"out_axes{path}={axes} is out of range: one example's output{path} is {what}, so the "
                              f"batch axis can go at {', '.join(str(k) for k in range(-(ndim + 1), ndim + 1))}",
                              hint="out_axes=0 puts the batch first")
        if not is_batched(state):
            new = self.broadcast(new, _holder(self, new, fact), True, out, None)
        axis = axes % (ndim + 1) if ndim is not None else axes
        if axis == 0:
            return new
        return self.emit(out, np.moveaxis, [new, Const(0), Const(axis)], new.hint if isinstance(new, Value) else "",
                         batched=True)

    def block(self, block: Block, region: Region) -> Block:
        """block's statements made in a region of their own, which reads what is made outside it."""
        saved = self.region
        self.region = region
        try:
            out: list[Stmt] = []
            self.stmts(block.stmts, out)
            results = [self.get(r)[0] for r in block.results]
            return Block(region.head + region.prologue + out, results)
        finally:
            self.region = saved

    def stmts(self, stmts: list[Stmt], out: list) -> None:
        for stmt in stmts:
            if isinstance(stmt, Op):
                self.op(stmt, out)
            elif isinstance(stmt, If):
                self.branch(stmt, out)
            elif isinstance(stmt, While):
                self.while_loop(stmt, out)
            else:
                self.for_loop(stmt, out)

    # ------------------------------------------------------------ operations

    def op(self, op: Op, out: list) -> None:
        prim = op.prim
        got = [self.get(a) for a in op.args]
        args = [a for a, _ in got]
        axes = [s for _, s in got]
        kw = {k: self.get(a) for k, a in op.kwargs.items()}
        kwargs = {k: a for k, (a, _) in kw.items()}
        kw_batched = any(is_batched(s) for _, s in kw.values())
        rec = registry.record(prim)
        if prim in _STRUCTURAL or self.structural(op, axes):
            self.container_op(op, args, axes, kwargs, out)
            return
        if prim in _ADJOINT_TREES and self.adjoint_tree(op, args, axes, out):
            return
        unbatched = not any(is_batched(s) for s in axes) and not kw_batched
        if unbatched and not rec.random and not (rec.effect and rec.batch is not None):
            self.copy(op, args, kwargs, out)
            return
        if len(op.outs) != 1:
            raise NotBatchable(f"{prim_name(prim)} gives several results", op.loc)
        if registry.record(prim).joins and axes and axes[0] is not None and axes[0] is not True:
            args[0], axes[0] = self.uniform(args[0], op.args[0], axes[0], out, op.loc)
        if any(s is not None and s is not True for k, s in enumerate(axes)
               if not (k == 1 and prim in _INDEXING or k == 0 and registry.record(prim).joins)):
            raise NotBatchable(f"{prim_name(prim)} of a container of batched values", op.loc)
        if prim in (syntax.SUBSCRIPT, runtime.setitem) and (isinstance(self.facts.get(id(op.args[0])), Items) or
                                                            isinstance(op.args[0], Const) and
                                                            isinstance(op.args[0].value, (tuple, list, dict))):
            raise NotBatchable("an item of a container chosen by a batched index", op.loc)
        result = None
        if rec.batch is not None and not kw_batched:
            result = self.apply_rule(rec.batch, op, args, axes, kwargs, out)
        elif (rec.elementwise or prim in _ELEMENTWISE_OPS) and not kw_batched and not op.kwargs:
            result = self.elementwise(op, args, axes, out)
        if result is None and unbatched and not rec.random:     # a method call that is not a random draw
            self.copy(op, args, kwargs, out)
            return
        if result is None:
            result = self.loop_over_batch(op, args, axes, kwargs, out)
        new, state = result
        self.bind(op.outs[0], new, state)

    def copy(self, op: Op, args: list, kwargs: dict, out: list) -> None:
        """op on unbatched values: computed once for the batch."""
        outs = [self.fresh(o.hint) for o in op.outs]
        out.append(Op(op.prim, args, outs, kwargs, op.loc))
        for o, n in zip(op.outs, outs):
            self.bind(o, n, None)
            self.abstract[id(n)] = self.facts.get(id(o))

    def uniform(self, new: Atom, old: Atom, state: Any, out: list, loc: Loc | None) -> tuple[Atom, Any]:
        """A list or tuple of arrays, some batched, as one whose every item is (what np.concatenate is given)."""
        if state[0] not in ("tuple", "list"):
            raise NotBatchable("a list of arrays, batched or not, of a length known only when the code runs", loc)
        whole = (state[0], tuple(True for _ in state[1]))
        return self.broadcast(new, old, whole, out, loc), whole

    def in_active_rows(self) -> bool:
        return any(isinstance(r.adapt, _ActiveRows) for r in self.region.chain())

    def is_container(self, old: Atom, state: Any) -> bool:
        if state is not None and state is not True:
            return True
        if isinstance(old, Const):
            return isinstance(old.value, (tuple, list, dict))
        return isinstance(self.facts.get(id(old)), Items)

    def adjoint_tree(self, op: Op, args: list, axes: list, out: list) -> bool:
        """The helpers of a container's adjoint (derivative code's, where shapes are not known): _scatter into a
        list or dict, _add of two, _item, _zeros_like_tree, _fill_tree. Whether op was one of them on a container."""
        prim, o = op.prim, op.outs[0]
        if not any(is_batched(s) for s in axes):
            return False            # the same for every example: computed once
        if prim is runtime._add:
            if not (self.is_container(op.args[0], axes[0]) or self.is_container(op.args[1], axes[1])):
                new, state = self.elementwise(op, args, axes, out)      # numbers or arrays: elementwise
                self.bind(o, new, state)
                return True
            state = join_adjoints(axes[0], axes[1])
        elif prim is runtime._zeros_like_tree:
            state = axes[0]
        elif prim is runtime._item:
            if not self.is_container(op.args[0], axes[0]):
                return False
            if not isinstance(op.args[1], Const):
                raise NotBatchable("an item of a container's adjoint chosen when the code runs", op.loc)
            state = _adjoint_item(axes[0], op.args[1].value)
        elif prim is runtime._scatter:
            if not self.is_container(op.args[0], axes[0]):
                return False
            if not isinstance(op.args[1], Const) or is_batched(axes[0]):
                raise NotBatchable("the adjoint of an item of a container chosen when the code runs", op.loc)
            fact, key = self.facts.get(id(op.args[0])) if isinstance(op.args[0], Value) else None, op.args[1].value
            if isinstance(fact, Items) and fact.kind == "dict":
                state = ("dict", (key,), (axes[2],))
            elif isinstance(fact, Items) or isinstance(op.args[0], Const):
                n = len(fact.items) if isinstance(fact, Items) else len(op.args[0].value)
                items: list = [None] * n
                if isinstance(key, slice):
                    given = _item_states(axes[2]) if axes[2] is not None and axes[2] is not True else \
                        [axes[2]] * len(range(n)[key])
                    items[key] = list(given)
                else:
                    items[key] = axes[2]
                state = ("list", tuple(items))
            else:
                raise NotBatchable("the adjoint of an item of a container of unknown length", op.loc)
        elif prim is runtime._fill_tree:
            if not self.is_container(op.args[1], axes[1]) or is_batched(axes[1]):
                return False
            if not is_batched(axes[0]):
                state = None
            else:
                fact = self.facts.get(id(op.args[1])) if isinstance(op.args[1], Value) else None
                if not isinstance(fact, Items):
                    raise NotBatchable("the gradient of a container of unknown structure", op.loc)
                state = everything(fact)        # every leaf a batch (zeros where g has no gradient)
                v = self.emit(out, _FILL_ROWS, [args[0], args[1], Const(_axes_tree(axes[0])), self.region.size],
                              o.hint, loc=op.loc, batched=True)
                self.bind(o, v, state)
                return True
        else:
            return False
        v = self.emit(out, prim, list(args), o.hint, loc=op.loc, batched=is_batched(state))
        self.bind(o, v, state if is_batched(state) else None)
        return True

    def structural(self, op: Op, axes: list) -> bool:
        if op.prim in (syntax.SUBSCRIPT, runtime.setitem, builtins.len) and axes:
            s = axes[0]
            return s is not None and s is not True
        return False

    def elementwise(self, op: Op, args: list, axes: list, out: list) -> tuple[Atom, Any]:
        """The same function on the batched arguments, each given the singleton axes after its batch axis that line
        its example axes up with the widest argument's."""
        ndims = [self.example_ndim(a) for a in op.args]
        batched = [is_batched(s) for s in axes]
        aligned = list(args)
        if len(args) > 1 and None in ndims:
            target = self.runtime_ndim(op.args, args, batched, out, op.loc)
            for k, b in enumerate(batched):
                if b:
                    aligned[k] = self.emit(out, _batch_lift(), [args[k], target], "", loc=op.loc, batched=True)
        elif len(args) > 1:
            top = max(ndims)
            for k, (b, d) in enumerate(zip(batched, ndims)):
                if b and d < top:
                    index = (slice(None),) + (None,) * (top - d)
                    aligned[k] = self.emit(out, syntax.SUBSCRIPT, [args[k], Const(index)],
                                           args[k].hint if isinstance(args[k], Value) else "", loc=op.loc,
                                           batched=True)
        v = self.emit(out, op.prim, aligned, op.outs[0].hint, {}, op.loc, batched=True,
                      fact=self.batched_fact(self.facts.get(id(op.outs[0])), True))
        return v, True

    def runtime_ndim(self, old_args: list, args: list, batched: list, out: list, loc: Loc | None) -> Atom:
        """The number of example axes of the widest argument, computed when the code runs (shapes unknown)."""
        found: Atom | None = None
        for old, a, b in zip(old_args, args, batched):
            d = self.example_ndim(old)
            if d is not None:
                atom: Atom = Const(d)
            else:
                atom = self.emit(out, np.ndim, [a], "", loc=loc)
                if b:
                    atom = self.emit(out, syntax.BINARY["-"], [atom, Const(1)], "", loc=loc)
            found = atom if found is None else self.emit(out, builtins.max, [found, atom], "", loc=loc)
        return found

    # ------------------------------------------------------------ batching rules

    def apply_rule(self, rule: Callable, op: Op, args: list, axes: list, kwargs: dict,
                   out: list) -> tuple[Atom, Any] | None:
        fn, signature = rule_ir(rule)
        names = list(signature.parameters)
        params = signature.parameters
        if len(args) + 1 > len(names) or any(k not in params for k in kwargs):
            return None         # a call the rule does not take: a loop over the batch
        axes_value = tuple(0 if s is True else None if s is None else _axes_of(s) for s in axes)
        # a parameter given by keyword or left to its default is not batched (a batched keyword: a loop)
        axes_value += (None,) * (len([n for n in names[1:] if n != "batch_size"]) - len(axes_value))
        if names[0] in kwargs:
            return None
        bound: dict[str, Atom] = dict(zip(names[1:], args))
        bound.update(kwargs)
        bound[names[0]] = Const(axes_value)
        if "batch_size" in params:
            bound["batch_size"] = self.region.size
        mapping: dict[int, Atom] = {}
        for param, name in zip(fn.params, names):
            if name in bound:
                mapping[id(param)] = bound[name]
            elif params[name].default is not inspect.Parameter.empty:
                mapping[id(param)] = Const(params[name].default)
            else:
                return None
        evaluator = _Evaluator(self, op.loc)
        for k, a in enumerate(args):
            if isinstance(a, Value):
                evaluator.batched[id(a)] = is_batched(axes[k])
        made: list[Stmt] = []
        result = evaluator.block(fn.body, mapping, made)[0]
        if isinstance(result, Const) and result.value is NotImplemented:
            return None
        items = evaluator.items(result)
        if items is None or len(items) != 2 or not isinstance(items[1], Const):
            if evaluator.unknown:       # a shape the rule asks about is known only when the code runs: a loop
                return None
            raise S2SError(f"the batching rule {rule.__module__}.{rule.__qualname__} must return (result, out_axis) "
                           f"with out_axis known when the batched code is made", op.loc)
        value, axis = items[0], items[1].value
        if isinstance(value, Const) and value.value is NotImplemented:
            return None
        out.extend(made)
        if axis is None:
            if isinstance(value, Value):
                self.abstract.setdefault(id(value), self.facts.get(id(op.outs[0])))
            return value, None
        if axis != 0:
            value = self.emit(out, np.moveaxis, [value, Const(axis), Const(0)], op.outs[0].hint, loc=op.loc,
                              batched=True)
        if isinstance(value, Value):
            if any(value is o for st in made if isinstance(st, Op) for o in st.outs) and op.outs[0].hint:
                value.hint = op.outs[0].hint          # the user's name for what the rule made
                value.name = self.namer.value(value.hint).name
            fact = self.batched_fact(self.facts.get(id(op.outs[0])), True)
            if fact is not None:
                self.abstract[id(value)] = fact
        return value, True

    # ------------------------------------------------------------ a loop over the batch

    def loop_over_batch(self, op: Op, args: list, axes: list, kwargs: dict, out: list) -> tuple[Atom, Any]:
        if isinstance(self.facts.get(id(op.outs[0])), Items):
            raise NotBatchable(f"{prim_name(op.prim)} has no batching rule and returns a container", op.loc)
        where = f" ({op.loc.file.rsplit('/', 1)[-1]}:{op.loc.line})" if op.loc is not None else ""
        note = f"{prim_name(op.prim)}{where}, which has no batching rule"
        if note not in self.notes:
            self.notes.append(note)
        size = self.region.size
        first = self.emit(out, runtime.make_list, [], "rows", loc=op.loc)
        index = self.fresh("i")
        acc = self.fresh("rows")
        body: list[Stmt] = []
        saved = self.region
        inner = Region(self, size, saved)
        self.region = inner
        try:
            picked = [self.emit(body, syntax.SUBSCRIPT, [a, index], a.hint if isinstance(a, Value) else "",
                                loc=op.loc) if is_batched(s) else a for a, s in zip(args, axes)]
            kw = {}
            for k, a in kwargs.items():
                old = op.kwargs[k]
                s = self.state.get(id(old)) if isinstance(old, Value) else None
                kw[k] = self.emit(body, syntax.SUBSCRIPT, [a, index], "", loc=op.loc) if is_batched(s) else a
            row = self.emit(body, op.prim, picked, op.outs[0].hint, kw, op.loc)
            appended = self.emit(body, runtime.list_append, [acc, row], "rows", loc=op.loc)
        finally:
            self.region = saved
        last = self.fresh("rows")
        out.append(For(Const(0), size, Const(1), index, [first], [acc], Block(body, [appended]), [last],
                       loc=op.loc))
        v = self.emit(out, np.array, [last], op.outs[0].hint, loc=op.loc, batched=True,
                      fact=self.batched_fact(self.facts.get(id(op.outs[0])), True))
        return v, True

    # ------------------------------------------------------------ containers

    def container_op(self, op: Op, args: list, axes: list, kwargs: dict, out: list) -> None:
        prim = op.prim
        o = op.outs[0] if op.outs else None
        if prim in (runtime.make_tuple, runtime.make_list):
            state = ("tuple" if prim is runtime.make_tuple else "list", tuple(axes))
            self.made(o, prim, args, None, state if any(is_batched(s) for s in axes) else None, op, out)
            return
        if prim is runtime.make_dict:
            keys = op.args[0].value
            state = ("dict", tuple(keys), tuple(axes[1:]))
            self.made(o, prim, args[1:], tuple(keys), state if is_batched(state) else None, op, out)
            return
        if prim is runtime.list_append:
            items, value = args
            s_items, s_value = axes
            built = self.built.get(id(items))
            if s_items is None:
                s_items = ("list", ()) if built is not None and not built[1] else None
            if s_items is not None and s_items[0] == "list":
                state: Any = ("list", tuple(s_items[1]) + (s_value,))
            elif s_items is not None:
                state = join(s_items, ("list*", s_value))
                if state[1] is True and s_value is None:
                    value = self.broadcast(value, op.args[1], True, out, op.loc)
            else:
                state = ("list*", s_value) if is_batched(s_value) else None
            if not is_batched(state):
                state = None
            v = self.emit(out, prim, [items, value], o.hint, loc=op.loc, batched=is_batched(state))
            if built is not None:
                self.built[id(v)] = (runtime.make_list, list(built[1]) + [value], None)
            self.bind(o, v, state)
            return
        if prim is runtime.stack_new:
            v = self.emit(out, prim, [], o.hint, loc=op.loc)
            self.bind(o, v, None)
            return
        if prim is runtime.push:
            stack, value = op.args
            s_value = axes[1]
            if self.in_active_rows() and is_batched(s_value):
                raise NotBatchable("a value saved in a while loop whose trip count differs between examples", op.loc)
            known = self.stacks.get(id(stack), self.widened.get(id(stack)))
            joined = join(known, s_value)
            if id(stack) in self.stacks and widens(self.stacks[id(stack)], joined):
                self.widened[id(stack)] = joined
                raise _Restart()
            self.stacks[id(stack)] = joined
            v = args[1]
            if widens(s_value, joined):
                v = self.broadcast(v, value, joined, out, op.loc)
            out.append(Op(prim, [args[0], v], [], {}, op.loc))
            return
        if prim is runtime.pop:
            state = self.stacks.get(id(op.args[0]), self.widened.get(id(op.args[0])))
            v = self.emit(out, prim, [args[0]], o.hint, loc=op.loc, batched=is_batched(state))
            self.bind(o, v, state)
            return
        if prim is builtins.len:
            v = self.emit(out, prim, args, o.hint, loc=op.loc)
            self.bind(o, v, None)
            return
        container, index = args[0], args[1]
        s_container, s_index = axes[0], axes[1]
        if prim is syntax.SUBSCRIPT:
            if is_batched(s_index):
                raise NotBatchable("an item of a container chosen by a batched index", op.loc)
            built = self.built.get(id(container))
            key = op.args[1].value if isinstance(op.args[1], Const) else None
            if s_container[0] in ("list*", "stack"):
                state = s_container[1]
            elif isinstance(op.args[1], Const) and isinstance(key, (int, str)):
                items = _item_states(s_container)
                position = s_container[1].index(key) if s_container[0] == "dict" else key
                state = items[position]
                if built is not None and s_container[0] != "dict":
                    self.bind(o, built[1][position], state)
                    return
                if built is not None and s_container[0] == "dict":
                    self.bind(o, built[1][position], state)
                    return
            elif isinstance(op.args[1], Const) and isinstance(key, slice):
                items = _item_states(s_container)
                state = (s_container[0], tuple(items[key]))
            else:
                found = None
                for s in _item_states(s_container):
                    found = join(found, s)
                if any(s != found for s in _item_states(s_container)):
                    raise NotBatchable("an item of a container, batched differently item by item, chosen when the "
                                       "code runs", op.loc)
                state = found
            v = self.emit(out, prim, [container, index], o.hint, loc=op.loc, batched=is_batched(state))
            if state is not None and state is not True and isinstance(key, slice) and built is not None:
                self.built[id(v)] = (built[0], list(built[1][key]), None)
            self.abstract[id(v)] = self.batched_fact(self.facts.get(id(o)), state)
            self.bind(o, v, state if is_batched(state) else None)
            return
        # setitem into a container
        value = args[2]
        s_value = axes[2]
        if is_batched(s_index):
            raise NotBatchable("a container item written at a batched index", op.loc)
        if isinstance(op.args[1], Const) and s_container[0] in ("tuple", "list", "dict"):
            key = op.args[1].value
            items = list(_item_states(s_container))
            position = s_container[1].index(key) if s_container[0] == "dict" else key
            items[position] = s_value
            state = (s_container[0], s_container[1], tuple(items)) if s_container[0] == "dict" else \
                (s_container[0], tuple(items))
        else:
            state = join(s_container, ("list*", s_value))
            if state[0] == "list*" and state[1] is True and s_value is None:
                value = self.broadcast(value, op.args[2], True, out, op.loc)
        v = self.emit(out, prim, [container, index, value], o.hint, loc=op.loc, batched=True)
        self.bind(o, v, state)

    def made(self, o: Value | None, prim: Any, items: list, keys: Any, state: Any, op: Op, out: list) -> None:
        args = ([Const(keys)] if keys is not None else []) + items
        v = self.emit(out, prim, args, o.hint if o is not None else "", loc=op.loc, batched=is_batched(state),
                      fact=self.batched_fact(self.facts.get(id(o)), state) if o is not None else None)
        self.built[id(v)] = (prim, list(items), keys)
        if o is not None:
            self.bind(o, v, state if is_batched(state) else None)

    # ------------------------------------------------------------ branches

    def branch(self, stmt: If, out: list) -> None:
        cond, s_cond = self.get(stmt.cond)
        if not is_batched(s_cond):
            then = self.block(stmt.then, Region(self, self.region.size, self.region))
            orelse = self.block(stmt.orelse, Region(self, self.region.size, self.region))
            states = [join(self.result_state(a), self.result_state(b))
                      for a, b in zip(stmt.then.results, stmt.orelse.results)]
            self.merge_results(then, stmt.then.results, states, stmt.loc)
            self.merge_results(orelse, stmt.orelse.results, states, stmt.loc)
            outs = [self.fresh(o.hint) for o in stmt.outs]
            out.append(If(cond, then, orelse, outs, stmt.loc))
            for o, n, s, a, b in zip(stmt.outs, outs, states, stmt.then.results, stmt.orelse.results):
                self.bind(o, n, s if is_batched(s) else None)
                fa, fb = self.facts.get(id(o)), None
                self.abstract[id(n)] = self.batched_fact(fa, s)
            return
        self.select(stmt, cond, out)

    def result_state(self, atom: Atom) -> Any:
        return self.state.get(id(atom)) if isinstance(atom, Value) else None

    def merge_results(self, block: Block, old_results: list, states: list, loc: Loc | None) -> None:
        """A branch's (or loop body's) results broadcast to the states the merged values have."""
        saved = self.region
        for k, (r, old, s) in enumerate(zip(block.results, old_results, states)):
            if widens(self.result_state(old), s):
                if isinstance(old, Const) and (old.value is None or old.value is UNDEFINED):
                    continue
                block.results[k] = self.broadcast(r, old, s, block.stmts, loc)
        self.region = saved

    def as_bool(self, cond: Atom, old: Atom, out: list, loc: Loc | None) -> Atom:
        fact = self.facts.get(id(old)) if isinstance(old, Value) else None
        if isinstance(fact, Abstract) and (fact.dtype is bool or not fact.python and fact.dtype == np.dtype(bool)):
            return cond
        return self.emit(out, np.asarray, [cond], "c", {"dtype": Const(bool)}, loc, batched=True)

    def select(self, stmt: If, cond: Atom, out: list) -> None:
        """An `if` on a batched condition: both branches, merged by np.where."""
        loc = stmt.loc
        cond = self.as_bool(cond, stmt.cond, out, loc)
        sides = []
        for block, negate in ((stmt.then, False), (stmt.orelse, True)):
            tainted = masked_inputs(block)
            if not tainted:
                made = self.block(block, Region(self, self.region.size, self.region))
                out.extend(made.stmts)
                sides.append(made.results)
                continue
            # masked: the inputs of an example that takes this branch where one does not
            taken = cond if not negate else self.emit(out, np.logical_not, [cond], "c", loc=loc, batched=True)
            first = self.emit(out, np.argmax, [taken], "i", loc=loc)
            any_taken = self.emit(out, syntax.SUBSCRIPT, [taken, first], "", loc=loc)
            region = Region(self, self.region.size, self.region, _Masked(self, taken, first, loc), tainted)
            made = self.block(block, region)
            # a branch that pushes or pops runs unguarded: its reverse (or forward) sweep must run it too
            stacks = any(isinstance(st, Op) and st.prim in (runtime.push, runtime.pop) for st in walk(block))
            placeholders = None if stacks else self.placeholders(block, loc)
            if placeholders is None:
                out.extend(made.stmts)
                sides.append(made.results)
                continue
            skip_stmts, skip_results = placeholders
            outs = []
            for r in block.results:
                v = self.fresh(r.hint if isinstance(r, Value) else "")
                outs.append(v)
                if isinstance(r, Value):
                    self.batched_new[id(v)] = self.batched_new.get(id(self.env.get(id(r))), False)
                    self.abstract[id(v)] = self.abstract.get(id(self.env.get(id(r))))
            out.append(If(any_taken, made, Block(skip_stmts, skip_results), outs, loc))
            sides.append(outs)
        results = []
        for k, o in enumerate(stmt.outs):
            a_old, b_old = stmt.then.results[k], stmt.orelse.results[k]
            a, b = sides[0][k], sides[1][k]
            sa, sb = self.result_state(a_old), self.result_state(b_old)
            undefined_a = isinstance(a_old, Const) and (a_old.value is None or a_old.value is UNDEFINED)
            undefined_b = isinstance(b_old, Const) and (b_old.value is None or b_old.value is UNDEFINED)
            if undefined_a or undefined_b:
                kept, s = (b, sb) if undefined_a else (a, sa)
                self.bind(o, kept, s)
                continue
            if isinstance(a_old, Const) and isinstance(b_old, Const) and a_old.value is True and b_old.value is False:
                self.bind(o, cond, True)
                continue
            if isinstance(a_old, Const) and isinstance(b_old, Const) and a_old.value is False and b_old.value is True:
                v = self.emit(out, np.logical_not, [cond], o.hint, loc=loc, batched=True)
                self.bind(o, v, True)
                continue
            if a is b and not is_batched(sa):
                self.bind(o, a, sa)
                continue
            v, s = self.where(cond, a, b, a_old, b_old, o, out, loc)
            self.bind(o, v, s)

    def where(self, cond: Atom, a: Atom, b: Atom, a_old: Atom, b_old: Atom, o: Value, out: list,
              loc: Loc | None) -> tuple[Atom, Any]:
        sa, sb = self.result_state(a_old), self.result_state(b_old)
        if (sa is not None and sa is not True) or (sb is not None and sb is not True):
            s = join(sa, sb)
            if s is True or s[0] in ("list*", "stack"):
                raise NotBatchable("a container chosen by a batched condition", loc)
            items_a = self.container_items(a, a_old, s, out, loc)
            items_b = self.container_items(b, b_old, s, out, loc)
            merged, states = [], []
            for k, (x, y) in enumerate(zip(items_a, items_b)):
                hx, hy = Value("a"), Value("b")
                self.state[id(hx)], self.state[id(hy)] = _item_states(sa)[k] if sa else None, \
                    _item_states(sb)[k] if sb else None
                fa = self.facts.get(id(a_old))
                fb = self.facts.get(id(b_old))
                self.facts[id(hx)] = fa.items[k] if isinstance(fa, Items) else None
                self.facts[id(hy)] = fb.items[k] if isinstance(fb, Items) else None
                hv = Value(o.hint)
                self.facts[id(hv)] = self.facts[id(hx)]
                m, ms = self.where(cond, x, y, hx, hy, hv, out, loc)
                merged.append(m)
                states.append(ms)
            prim = {"tuple": runtime.make_tuple, "list": runtime.make_list, "dict": runtime.make_dict}[s[0]]
            keys = s[1] if s[0] == "dict" else None
            state = ("dict", keys, tuple(states)) if keys is not None else (s[0], tuple(states))
            v = self.emit(out, prim, ([Const(keys)] if keys is not None else []) + merged, o.hint, loc=loc,
                          batched=True)
            self.built[id(v)] = (prim, merged, keys)
            return v, state
        fact = self.facts.get(id(o))
        d = fact.ndim if isinstance(fact, Abstract) else None
        if d is None:
            da, db = self.example_ndim(a_old), self.example_ndim(b_old)
            d = max(da, db) if da is not None and db is not None else None
        if d is None:
            target = self.runtime_ndim([a_old, b_old], [a, b], [sa is True, sb is True], out, loc)
            c = self.emit(out, _batch_lift(), [cond, target], "c", loc=loc, batched=True)
        elif d > 0:
            c = self.emit(out, syntax.SUBSCRIPT, [cond, Const((slice(None),) + (None,) * d)], "c", loc=loc,
                          batched=True)
        else:
            c = cond
        v = self.emit(out, np.where, [c, a, b], o.hint, loc=loc, batched=True,
                      fact=self.batched_fact(fact, True))
        return v, True

    def container_items(self, new: Atom, old: Atom, state: Any, out: list, loc: Loc | None) -> list:
        built = self.built.get(id(new)) if isinstance(new, Value) else None
        if built is not None:
            return list(built[1])
        if isinstance(new, Const) and isinstance(new.value, (tuple, list)):
            return [Const(v) for v in new.value]
        keys = state[1] if state[0] == "dict" else range(len(state[1]))
        return [self.emit(out, syntax.SUBSCRIPT, [new, Const(k)], "", loc=loc) for k in keys]

    def placeholders(self, block: Block, loc: Loc | None) -> tuple[list, list] | None:
        """What a branch no example takes yields instead of running: zeros of its results' shapes, or None when
        a shape is unknown (then the branch runs on the masked inputs)."""
        stmts: list[Stmt] = []
        made = []
        size = self.region.size
        inside = {id(v) for st in walk(block) for v in stmt_defs(st)}
        for r in block.results:
            if isinstance(r, Const):
                made.append(r)
                continue
            fact = self.facts.get(id(r))
            state = self.state.get(id(r))
            if not is_batched(state):
                if id(r) in inside:
                    return None
                made.append(self.env[id(r)])
                continue
            if state is not True or not isinstance(fact, Abstract) or not isinstance(size, Const):
                return None
            dtype = fact.dtype if not fact.python else np.asarray(fact.proto()).dtype
            shape = (size.value,) + fact.shape
            saved = self.region
            kwargs = {"dtype": Const(dtype.type if dtype.kind != "b" else bool)} if dtype != np.float64 else {}
            made.append(self.emit(stmts, np.zeros, [Const(shape if len(shape) > 1 else shape[0])], "", kwargs, loc,
                                  batched=True))
        return stmts, made

    # ------------------------------------------------------------ loops

    def carried_states(self, loop: While | For) -> list:
        states = []
        for c, i in zip(loop.carried, loop.inits):
            s = self.state.get(id(i)) if isinstance(i, Value) else None
            states.append(join(s, self.widened.get(id(c))))
        return states

    def check_widening(self, loop: While | For, states: list, results: list) -> None:
        restart = False
        for c, s, r in zip(loop.carried, states, results):
            rs = self.result_state(r)
            if widens(s, rs):
                self.widened[id(c)] = join(s, rs)
                restart = True
        if restart:
            raise _Restart()

    def enter_loop(self, loop: While | For, states: list, out: list) -> list:
        inits = []
        for c, i, s in zip(loop.carried, loop.inits, states):
            new, s_init = self.get(i)
            if widens(s_init, s):
                new = self.broadcast(new, i, s, out, loop.loc, dtype=self.carried_dtype(loop, c, s))
            elif s is True:
                dtype = self.carried_dtype(loop, c, s)
                if dtype is not None:
                    new = self.emit(out, np.asarray, [new], i.hint if isinstance(i, Value) else "",
                                    {"dtype": Const(dtype)}, loop.loc, batched=True)
            inits.append(new)
        return inits

    def carried_dtype(self, loop: While | For, carried: Value, state: Any) -> Any:
        """The dtype a batched carried number or array must have to hold every iteration's value (a Python int
        that becomes a float in the loop: float64 from the start)."""
        if state is not True:
            return None
        k = loop.carried.index(carried)
        found = []
        for atom in (loop.inits[k], loop.body.results[k]):
            fact = self.facts.get(id(atom)) if isinstance(atom, Value) else abstract_of(atom.value) \
                if isinstance(atom, Const) else None
            if not isinstance(fact, Abstract):
                return None
            found.append(np.asarray(fact.proto()).dtype)
        dtype = np.result_type(*found)
        if dtype == found[0]:
            return None                 # what the first value already has
        return dtype.type

    def for_loop(self, loop: For, out: list) -> None:
        bounds = [self.get(a) for a in (loop.start, loop.stop, loop.step)]
        if any(is_batched(s) for _, s in bounds):
            self.while_loop(_as_while(loop, self.namer), out)
            return
        states = self.carried_states(loop)
        inits = self.enter_loop(loop, states, out)
        index = self.fresh(loop.index.hint)
        self.bind(loop.index, index, None)
        carried = [self.fresh(c.hint) for c in loop.carried]
        for c, n, s in zip(loop.carried, carried, states):
            self.bind(c, n, s if is_batched(s) else None)
            self.abstract[id(n)] = self.batched_fact(self.facts.get(id(c)), s)
        body = self.block(loop.body, Region(self, self.region.size, self.region))
        self.check_widening(loop, states, loop.body.results)
        self.merge_results(body, loop.body.results, states, loop.loc)
        outs = [self.fresh(o.hint) for o in loop.outs]
        out.append(For(bounds[0][0], bounds[1][0], bounds[2][0], index, inits, carried, body, outs, loop.reverse,
                       loop.loc))
        for o, n, s in zip(loop.outs, outs, states):
            self.bind(o, n, s if is_batched(s) else None)
            self.abstract[id(n)] = self.batched_fact(self.facts.get(id(o)), s)

    def while_loop(self, loop: While, out: list) -> None:
        states = self.carried_states(loop)
        inits = self.enter_loop(loop, states, out)
        for c, n, s in zip(loop.carried, inits, states):
            self.bind(c, n, s if is_batched(s) else None)
        # the test on the values the loop starts from: batched or not decides how the loop is batched
        first: list[Stmt] = []
        self.stmts(loop.test.stmts, first)
        test0, s_test = self.get(loop.test.results[0])
        if not is_batched(s_test):
            self.plain_while(loop, states, inits, out)
            return
        # a batched test: every carried value the body changes differs between examples
        restart = False
        for c, r, s in zip(loop.carried, loop.body.results, states):
            whole = everything(self.facts.get(id(c)))
            if r is not c and s != whole:
                self.widened[id(c)] = whole
                restart = True
        if restart:
            raise _Restart()
        out.extend(first)
        active0 = self.as_bool(test0, loop.test.results[0], out, loop.loc)
        # while some example is active: the body on the active ones, their new values written back
        carried = [self.fresh(c.hint) for c in loop.carried]
        active = self.fresh("active")
        self.batched_new[id(active)] = True
        for c, n, s in zip(loop.carried, carried, states):
            self.batched_new[id(n)] = is_batched(s)
            self.abstract[id(n)] = self.batched_fact(self.facts.get(id(c)), s)
        test_stmts: list[Stmt] = []
        going = self.emit(test_stmts, np.any, [active], "going", loc=loop.loc)
        saved = self.region
        region = Region(self, None, saved)
        rows = _ActiveRows(self, active, region, loop.loc)
        region.adapt = rows
        region.size_op = lambda: self.emit(region.head, builtins.len, [rows.index], "n_active", loc=loop.loc)
        self.region = region
        try:
            for c, n, s in zip(loop.carried, carried, states):
                if is_batched(s) and s is not True:
                    raise NotBatchable("a container carried by a while loop whose trip count differs between "
                                       "examples", loop.loc)
                picked = self.emit(region.head, syntax.SUBSCRIPT, [n, rows.index], n.hint, loc=loop.loc,
                                   batched=True, fact=self.abstract.get(id(n))) if is_batched(s) else n
                self.bind(c, picked, s if is_batched(s) else None)
            body: list[Stmt] = []
            self.stmts(loop.body.stmts, body)
            stepped = [self.get(r)[0] for r in loop.body.results]
            self.check_widening(loop, states, loop.body.results)
            for k, (r, old, s) in enumerate(zip(stepped, loop.body.results, states)):
                if widens(self.result_state(old), s):
                    stepped[k] = self.broadcast(r, old, s, body, loop.loc)
            for c, r, s in zip(loop.carried, stepped, states):      # the test, on the new values
                self.bind(c, r, s if is_batched(s) else None)
            self.stmts(loop.test.stmts, body)
            still = self.as_bool(self.get(loop.test.results[0])[0], loop.test.results[0], body, loop.loc)
            written = [self.emit(body, runtime.setitem, [n, rows.index, r], n.hint, loc=loop.loc, batched=True)
                       if is_batched(s) else r for n, r, s in zip(carried, stepped, states)]
            active_next = self.emit(body, runtime.setitem, [active, rows.index, still], "active", loc=loop.loc,
                                    batched=True)
            body_stmts = region.head + region.prologue + body
        finally:
            self.region = saved
        outs = [self.fresh(o.hint) for o in loop.outs] + [self.fresh("active")]
        out.append(While(inits + [active0], carried + [active], Block(test_stmts, [going]),
                         Block(body_stmts, written + [active_next]), outs, loop.loc))
        for o, n, s in zip(loop.outs, outs, states):
            self.bind(o, n, s if is_batched(s) else None)
            self.abstract[id(n)] = self.batched_fact(self.facts.get(id(o)), s)

    def plain_while(self, loop: While, states: list, inits: list, out: list) -> None:
        carried = [self.fresh(c.hint) for c in loop.carried]
        for c, n, s in zip(loop.carried, carried, states):
            self.bind(c, n, s if is_batched(s) else None)
            self.abstract[id(n)] = self.batched_fact(self.facts.get(id(c)), s)
        test = self.block(loop.test, Region(self, self.region.size, self.region))
        if is_batched(self.result_state(loop.test.results[0])):
            raise _Restart()
        body = self.block(loop.body, Region(self, self.region.size, self.region))
        self.check_widening(loop, states, loop.body.results)
        self.merge_results(body, loop.body.results, states, loop.loc)
        outs = [self.fresh(o.hint) for o in loop.outs]
        out.append(While(inits, carried, test, body, outs, loop.loc))
        for o, n, s in zip(loop.outs, outs, states):
            self.bind(o, n, s if is_batched(s) else None)
            self.abstract[id(n)] = self.batched_fact(self.facts.get(id(o)), s)


def _holder(batcher: "_Batcher", new: Atom, fact: Any) -> Value:
    """An old value standing for new, unbatched, with these facts (to broadcast it)."""
    holder = Value("out")
    batcher.facts[id(holder)] = fact
    batcher.state[id(holder)] = None
    return holder


class _Masked:
    """How a branch not every example takes reads a batched value made outside it: where an example does not
    take it, the value of the first example that does (held constant for derivatives)."""

    def __init__(self, batcher: _Batcher, taken: Atom, first: Atom, loc: Loc | None):
        self.b, self.taken, self.first, self.loc = batcher, taken, first, loc

    def __call__(self, new: Atom, prologue: list) -> Atom:
        b = self.b
        hint = new.hint if isinstance(new, Value) else ""
        fill = b.emit(prologue, syntax.SUBSCRIPT, [new, self.first], "", loc=self.loc)
        fill = b.emit(prologue, runtime.stop_gradient, [fill], "", loc=self.loc)
        fact = b.abstract.get(id(new))
        ndim = fact.ndim - 1 if isinstance(fact, Abstract) else None
        if ndim is None:
            target = b.emit(prologue, syntax.BINARY["-"], [b.emit(prologue, np.ndim, [new], "", loc=self.loc), Const(1)],
                            "", loc=self.loc)
            taken = b.emit(prologue, _batch_lift(), [self.taken, target], "c", loc=self.loc, batched=True)
        elif ndim:
            taken = b.emit(prologue, syntax.SUBSCRIPT, [self.taken, Const((slice(None),) + (None,) * ndim)], "c",
                           loc=self.loc, batched=True)
        else:
            taken = self.taken
        return b.emit(prologue, np.where, [taken, new, fill], hint, loc=self.loc, batched=True, fact=fact)


class _ActiveRows:
    """How the body of a while loop on a batched test reads a batched value made outside it: the rows of the
    examples still active."""

    def __init__(self, batcher: _Batcher, active: Atom, region: Region, loc: Loc | None):
        self.b, self.loc = batcher, loc
        saved = batcher.region
        batcher.region = region
        nonzero = batcher.emit(region.head, np.nonzero, [active], "", loc=loc)
        self.index = batcher.emit(region.head, syntax.SUBSCRIPT, [nonzero, Const(0)], "rows", loc=loc)
        batcher.region = saved

    def __call__(self, new: Atom, prologue: list) -> Atom:
        fact = self.b.abstract.get(id(new))
        return self.b.emit(prologue, syntax.SUBSCRIPT, [new, self.index], new.hint if isinstance(new, Value) else "",
                           loc=self.loc, batched=True, fact=fact)


def _as_while(loop: For, namer: Namer) -> While:
    """A for loop over a range whose bounds differ between examples, as the while loop over its index."""
    if not isinstance(loop.step, Const) or not isinstance(loop.step.value, int) or loop.step.value == 0:
        raise NotBatchable("a for loop whose bounds differ between examples, with a step not known when the "
                           "batched code is made", loop.loc)
    if loop.reverse:
        raise NotBatchable("a reversed for loop whose bounds differ between examples", loop.loc)
    index = Value(namer.value(loop.index.hint or "i").name, loop.index.hint or "i")
    mapping: dict[int, Atom] = {id(loop.index): index}
    carried = [Value(namer.value(c.hint).name, c.hint) for c in loop.carried]
    for c, n in zip(loop.carried, carried):
        mapping[id(c)] = n
    body = clone_block(loop.body, mapping, lambda v: Value(namer.value(v.hint).name, v.hint))
    step = Value(namer.value(index.hint).name, index.hint)
    body.stmts.append(Op(syntax.BINARY["+"], [index, loop.step], [step], {}, loop.loc))
    test_value = Value(namer.value("").name)
    compare = syntax.COMPARE["<"] if loop.step.value > 0 else syntax.COMPARE[">"]
    test = Block([Op(compare, [index, loop.stop], [test_value], {}, loop.loc)], [test_value])
    last_index = Value(namer.value(index.hint).name, index.hint)
    return While([loop.start] + list(loop.inits), [index] + carried, test, Block(body.stmts, [step] + body.results),
                 [last_index] + list(loop.outs), loop.loc)


def _every_leaf(state: Any) -> bool:
    if state is True:
        return True
    if state is None:
        return False
    return all(_every_leaf(s) for s in _item_states(state))


def join_adjoints(a: Any, b: Any) -> Any:
    """The state of the sum of two adjoints of a container (runtime._add): a dict's keys together."""
    if a is None or b is None or a is True or b is True:
        return join(a, b)
    if a[0] == "dict" and b[0] == "dict":
        keys = list(a[1]) + [k for k in b[1] if k not in a[1]]
        found = dict(zip(a[1], a[2]))
        for k, s in zip(b[1], b[2]):
            found[k] = join_adjoints(found.get(k), s)
        return ("dict", tuple(keys), tuple(found[k] for k in keys))
    if a[0] in ("tuple", "list") and b[0] in ("tuple", "list") and len(a[1]) == len(b[1]):
        return ("list", tuple(join_adjoints(x, y) for x, y in zip(a[1], b[1])))
    return join(a, b)


def _adjoint_item(state: Any, key: Any) -> Any:
    if state is None or state is True:
        return state
    if state[0] == "dict":
        return dict(zip(state[1], state[2])).get(key)
    if state[0] in ("list*", "stack"):
        return state[1]
    items = state[1]
    return items[key] if isinstance(key, int) and -len(items) <= key < len(items) else None


def _axes_tree(state: Any) -> Any:
    """A state as the axes tree _fill_tree_rows reads: 0 or None for a leaf, a tuple for a list or tuple, a
    tuple of (key, axes) pairs marked "dict" for a dict."""
    if state is None:
        return None
    if state is True:
        return 0
    if state[0] == "dict":
        return ("dict", tuple((k, _axes_tree(s)) for k, s in zip(state[1], state[2])))
    if state[0] in ("list*", "stack"):
        return ("all", _axes_tree(state[1]))
    return tuple(_axes_tree(s) for s in state[1])


def _items_of_kind(kind: Any) -> Any:
    """The facts a container's kind gives (its structure; its leaves' shapes unknown), or None (a list of any
    length)."""
    if not isinstance(kind, tuple):
        return None
    if kind[0] == "dict":
        return Items("dict", tuple(k for k, _ in kind[1]), tuple(_items_of_kind(k) for _, k in kind[1]))
    if kind[0] in ("tuple", "list") and kind[1] is not None:
        return Items(kind[0], tuple(range(len(kind[1]))), tuple(_items_of_kind(k) for k in kind[1]))
    return None


def _axes_of(state: Any) -> Any:
    """A container's state as the axes a batching rule sees: a tuple of its items' axes."""
    if state is None:
        return None
    if state is True:
        return 0
    return tuple(_axes_of(s) for s in _item_states(state))


# ---------------------------------------------------------------- inlining a batching rule, folded

class _Evaluator:
    """Copies a batching rule's IR into the batched function, folding what is known when the code is made: the
    axes, the rule's arithmetic on them, np.ndim and np.shape of values whose shapes are known, the branches on
    them, and the tuples it builds."""

    def __init__(self, batcher: _Batcher, loc: Loc | None):
        self.b = batcher
        self.loc = loc
        self.tuples: dict[int, list] = {}        # id(value) -> the atoms of a tuple built by the rule
        self.batched: dict[int, bool] = {}       # id(argument) -> batched
        self.unknown = False                     # whether the rule asked np.ndim of a value of unknown shape

    def items(self, atom: Atom) -> list | None:
        if isinstance(atom, Const) and isinstance(atom.value, (tuple, list)):
            return [Const(v) for v in atom.value]
        if isinstance(atom, Value):
            found = self.tuples.get(id(atom))
            if found is None and id(atom) in self.b.built and self.b.built[id(atom)][0] in (runtime.make_tuple,
                                                                                             runtime.make_list):
                found = list(self.b.built[id(atom)][1])
            return found
        return None

    def block(self, block: Block, env: dict, out: list) -> list:
        for stmt in block.stmts:
            if isinstance(stmt, Op):
                self.op(stmt, env, out)
            elif isinstance(stmt, If):
                cond = self.sub(stmt.cond, env)
                if isinstance(cond, Const):
                    chosen = stmt.then if cond.value else stmt.orelse
                    results = self.block(chosen, env, out)
                    for o, r in zip(stmt.outs, results):
                        env[id(o)] = r
                    continue
                then_out: list[Stmt] = []
                else_out: list[Stmt] = []
                then = self.block(stmt.then, env, then_out)
                orelse = self.block(stmt.orelse, env, else_out)
                outs = [self.b.fresh(o.hint) for o in stmt.outs]
                out.append(If(cond, Block(then_out, then), Block(else_out, orelse), outs, self.loc))
                for o, n in zip(stmt.outs, outs):
                    env[id(o)] = n
            else:
                copied = clone_block(Block([stmt], []), env, lambda v: self.b.fresh(v.hint), self.loc)
                out.extend(copied.stmts)
        return [self.sub(r, env) for r in block.results]

    def sub(self, atom: Atom, env: dict) -> Atom:
        return env.get(id(atom), atom) if isinstance(atom, Value) else atom

    def op(self, op: Op, env: dict, out: list) -> None:
        args = [self.sub(a, env) for a in op.args]
        kwargs = {k: self.sub(a, env) for k, a in op.kwargs.items()}
        folded = self.fold(op.prim, args, kwargs)
        if folded is not None:
            env[id(op.outs[0])] = folded
            return
        if op.prim is syntax.BINARY["+"] and len(args) == 2:      # tuples joined: one tuple of their items
            a, b = self.items(args[0]), self.items(args[1])
            if a is not None and b is not None and isinstance(args[0], (Const, Value)) and not (
                    isinstance(args[0], Const) and isinstance(args[0].value, list)):
                v = self.b.fresh(op.outs[0].hint)
                out.append(Op(runtime.make_tuple, a + b, [v], {}, self.loc))
                self.tuples[id(v)] = a + b
                self.b.abstract[id(v)] = None
                env[id(op.outs[0])] = v
                return
        kwargs = _without_defaults(op.prim, kwargs)
        outs = [self.b.fresh(o.hint) for o in op.outs]
        new = Op(op.prim, args, outs, kwargs, self.loc)
        out.append(new)
        if len(outs) == 1:
            self.b.abstract[id(outs[0])] = infer(new, self.b.full) or _tried(new, self.b.full)
            if op.prim is runtime.make_tuple:
                self.tuples[id(outs[0])] = list(args)
            if registry.record(op.prim).size_rule == "shape" and len(args) == 1 and not kwargs:      # (the batch size, then known axes)
                fact = self.b.full(args[0])
                if isinstance(fact, Abstract):
                    self.tuples[id(outs[0])] = [self.b.region.size] + [Const(n) for n in fact.shape[1:]]
        for o, n in zip(op.outs, outs):
            env[id(o)] = n

    def fold(self, prim: Any, args: list, kwargs: dict) -> Atom | None:
        if prim is runtime.free_name and args and isinstance(args[0], Const) and args[0].value == "NotImplemented":
            return Const(NotImplemented)        # a rule declining: a loop over the batch
        consts = all(isinstance(a, Const) for a in args) and all(isinstance(a, Const) for a in kwargs.values())
        rec = registry.record(prim)        # (the rules' arithmetic on axes folds too: axis_fold)
        foldable = rec.axis_fold or rec.fold
        if consts and (foldable or prim in (syntax.COMPARE["is"], syntax.COMPARE["is not"])):
            try:
                return Const(prim(*[a.value for a in args], **{k: a.value for k, a in kwargs.items()}))
            except Exception:           # noqa: BLE001 - what fails when folded fails when it runs: left to it
                return None
        if prim in (syntax.COMPARE["is"], syntax.COMPARE["is not"]) and len(args) == 2:
            known = [a for a in args if isinstance(a, Const)]
            other = [a for a in args if isinstance(a, Value)]
            if known and other and known[0].value is None and (
                    id(other[0]) in self.tuples or self.b.full(other[0]) is not None or
                    self.batched.get(id(other[0]), self.b.batched_new.get(id(other[0]), False))):
                return Const(prim is syntax.COMPARE["is not"])       # an array, a number or a tuple: not None
        if rec.size_rule == "ndim" and len(args) == 1 and not kwargs:
            fact = self.b.full(args[0])
            if isinstance(fact, Abstract):
                return Const(fact.ndim)
            self.unknown = True
        if rec.size_rule == "shape" and len(args) == 1 and not kwargs:
            fact = self.b.full(args[0])
            if isinstance(fact, Abstract):
                batched = self.batched.get(id(args[0]), self.b.batched_new.get(id(args[0]), False))
                size = self.b.region.size if batched else None
                if not batched or isinstance(size, Const):
                    return Const(fact.shape)
                return None
        if prim is isinstance and len(args) == 2 and isinstance(args[1], Const):
            fact = self.b.full(args[0])
            kinds = args[1].value if isinstance(args[1].value, tuple) else (args[1].value,)
            if isinstance(args[0], Value) and id(args[0]) in self.tuples:
                return Const(any(k is tuple for k in kinds))
            if isinstance(fact, Abstract) and all(k in (tuple, list, dict, str) for k in kinds):
                return Const(False)
            if isinstance(fact, Items):
                return Const(any(isinstance({"tuple": (), "list": [], "dict": {}}[fact.kind], k) for k in kinds))
        if prim is syntax.SUBSCRIPT and len(args) == 2 and isinstance(args[1], Const):
            items = self.items(args[0])
            if items is not None:
                key = args[1].value
                if isinstance(key, int) and -len(items) <= key < len(items):
                    return items[key]
                if isinstance(key, slice):
                    picked = items[key]
                    if all(isinstance(a, Const) for a in picked):
                        return Const(tuple(a.value for a in picked))
        if prim is syntax.BINARY["+"] and len(args) == 2:
            a, b = self.items(args[0]), self.items(args[1])
            if a is not None and b is not None:
                joined = a + b
                if all(isinstance(x, Const) for x in joined):
                    return Const(tuple(x.value for x in joined))
        if prim is builtins.len and len(args) == 1:
            items = self.items(args[0])
            if items is not None:
                return Const(len(items))
        return None


def _tried(op: Op, full: Callable) -> Any:
    """The abstract value of a shape function's result where the shape rules have none: the function run on
    stand-ins that take no memory (small results only)."""
    if not registry.record(op.prim).shape_by_trial:
        return None
    size = 0

    def stand_in(atom: Atom) -> Any:
        nonlocal size
        if isinstance(atom, Const):
            return atom.value
        fact = full(atom)
        if not isinstance(fact, Abstract):
            raise LookupError
        if fact.python:
            return fact.dtype(1)
        size += int(np.prod(fact.shape))
        return np.lib.stride_tricks.as_strided(np.zeros(1, fact.dtype), fact.shape, (0,) * len(fact.shape))
    try:
        args = [stand_in(a) for a in op.args]
        kwargs = {k: stand_in(a) for k, a in op.kwargs.items()}
        if size > 1 << 20:
            return None
        return abstract_of(op.prim(*args, **kwargs))
    except Exception:               # noqa: BLE001 - no trial, no fact
        return None


def _without_defaults(prim: Any, kwargs: dict) -> dict:
    """A rule's keyword arguments, without those that say what leaving them out says (dtype=None,
    keepdims=False): the batched code reads as written by hand."""
    if not kwargs:
        return kwargs
    try:
        params = inspect.signature(prim).parameters
    except (TypeError, ValueError):
        return kwargs
    kept = {}
    for k, a in kwargs.items():
        p = params.get(k)
        if p is not None and isinstance(a, Const) and p.default is not inspect.Parameter.empty and (
                a.value is None and (p.default is None or p.default is np._NoValue) or
                k in ("keepdims", "order") and a.value == (p.default if p.default is not np._NoValue else False)
                or k == "order" and a.value == "C"):
            continue
        kept[k] = a
    return kept


def _batch_repeat() -> Callable:
    return _REPEAT


def _batch_lift() -> Callable:
    return _LIFT


def batch_function(fn: Function, states: list, facts: dict, size: int, out_axes: Any = 0, kinds: dict | None = None
                   ) -> tuple[Function, list, list[str]]:
    """fn batched: (the batched Function, the state of each result, the notes for the header). kinds: the kind of
    each of fn's values (s2s/analysis/activity.py), where facts have no shape: a container is not a leaf."""
    widened: dict[int, Any] = {}
    facts = dict(facts)
    for key, kind in (kinds or {}).items():
        if key not in facts and isinstance(kind, tuple):
            found = _items_of_kind(kind)
            if found is not None:
                facts[key] = found
    for _ in range(64):
        batcher = _Batcher(fn, states, dict(facts), size, widened)
        try:
            made, result_states = batcher.run(out_axes)
        except _Restart:
            continue
        return made, result_states, batcher.notes
    raise NotBatchable("the batch states of a loop's values do not settle", fn.loc)
