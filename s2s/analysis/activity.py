"""Activity analysis, and which values are known to be scalars.

`active_values(fn, wrt)` gives the values that both depend on a differentiated
parameter (through differentiable primitives) and reach the function's
result: only they get adjoints or tangents. Constants, integers from `len` or
`//`, comparisons and everything computed from them are inactive.

`value_kinds(fn, param_kinds)` gives the kind of each value (scalar, array, container structure);
`scalar_values(fn, param_kinds)` the values known to be Python or
NumPy scalars, so the transforms can write `0.0` instead of `np.zeros_like(x)`
and skip unbroadcasting where no broadcasting can happen.

Each is a domain of s2s/analysis/dataflow.py (`Varied`, `Useful` backward, `Kinds`, `Floats`), keyed by Value;
the functions here solve one and give its facts by id, as the transforms read them.
"""
from __future__ import annotations

import functools

import builtins
from typing import Any, Callable

import numpy as np

from s2s.ir import syntax
from s2s import runtime
from s2s.analysis import dtypes
from s2s.analysis.global_shapes import global_is_array, checked_number
from s2s.analysis import dataflow
from s2s.analysis.dataflow import Domain
from s2s.analysis.values import NUMERIC, SCALAR_TYPES, Kind, is_container, kind_of  # noqa: F401  (kind_of: reached here)
from s2s.errors import S2SError
from s2s.ir.core import UNDEFINED, Atom, Const, For, Function, Op, Value, While
from s2s.rules import registry


def _differentiable(op: Op) -> bool:
    return not registry.is_nondifferentiable(op.prim) and op.prim is not runtime.free_name and not _casts_to_integers(op)


def _casts_to_integers(op: Op) -> bool:
    """`x.astype(int)`, `np.array(x, dtype=bool)`: integers hold no derivative (as int(x) holds none). The
    functions that convert to a dtype given (at record.dtype_at, or `dtype=`) say so in their record."""
    rec = registry.record(op.prim)
    if rec.dtype_rule not in ("convert", "cast"):
        return False
    position = rec.dtype_at
    dtype = op.kwargs.get("dtype", op.args[position] if len(op.args) > position else None)
    if not isinstance(dtype, Const) or dtype.value is None:
        return False
    try:
        return not np.issubdtype(np.dtype(dtype.value), np.inexact)
    except TypeError:
        return False



def integer_arrays(fn: Function) -> set[int]:
    """Values that are arrays of an integer or boolean dtype (s2s/analysis/dtypes.py): a float written into one is
    truncated, so it carries no derivative, nor does anything made from it."""
    return dtypes.integer_arrays(fn)


class Varied(Domain):
    """The values that depend on the parameters wrt through differentiable primitives (a domain of
    s2s/analysis/dataflow.py; facts: value -> True). A value is marked where it is defined, after everything it
    reads; only a mark that reaches back (a loop's update to its carried value, a push onto a stack) asks the
    engine for another sweep."""

    def __init__(self, wrt: list[int], integers: set[Value]):
        super().__init__()
        self.wrt = wrt
        self.integers = integers        # made integer (s2s/analysis/dtypes.py): a float written in is truncated
        self.differentiable: dict[int, bool] = {}   # id(prim) -> not declared nondifferentiable (prims outlive it)

    def start(self, fn: Function) -> None:
        for i in self.wrt:
            self.facts[fn.params[i]] = True

    def has(self, atom: Atom) -> bool:
        return atom.__class__ is not Const and atom in self.facts

    def mark(self, values: list[Value], late: bool = False) -> None:
        for v in values:
            if v not in self.facts:
                self.facts[v] = True
                self.changed |= late        # read before it was made, in program order: sweep again

    def reads_varied(self, op: Op) -> bool:
        facts = self.facts
        for a in op.args:
            if a.__class__ is not Const and a in facts:
                return True
        return any(self.has(a) for a in op.kwargs.values()) if op.kwargs else False

    def op(self, op: Op) -> None:
        prim = op.prim
        if prim is runtime.push:           # a stack varies once a varying value is pushed on it
            if self.has(op.args[1]):
                self.mark([op.args[0]], late=True)
        elif prim is runtime.setitem and op.outs[0] in self.integers:
            if self.has(op.args[0]):       # a float written into an integer array is truncated
                self.mark(op.outs)
        elif self.reads_varied(op):
            ok = self.differentiable.get(id(prim))
            if ok is None:
                ok = self.differentiable[id(prim)] = not registry.is_nondifferentiable(prim) and \
                    prim is not runtime.free_name
            if ok and not _casts_to_integers(op):
                for o in op.outs:
                    if o not in self.integers:       # made integer (s2s/analysis/dtypes.py): no derivative
                        self.facts[o] = True

    def branch(self, out: Value, then: Atom, orelse: Atom) -> None:
        if self.has(then) or self.has(orelse):
            self.mark([out])

    def enter(self, loop: While | For) -> None:
        self.mark([c for c, i in zip(loop.carried, loop.inits) if self.has(i)])

    def leave(self, loop: While | For) -> None:
        self.mark([c for c, r in zip(loop.carried, loop.body.results) if self.has(r)], late=True)
        self.mark([o for o, c in zip(loop.outs, loop.carried) if c in self.facts])


def varied_values(fn: Function, wrt: list[int]) -> set[int]:
    """Ids of the values that depend on the parameters wrt through differentiable primitives (Varied)."""
    domain, = dataflow.solve(fn, Varied(wrt, dtypes.integer_values(fn)))
    return {id(v) for v in domain.facts}


class Useful(Domain):
    """The values from which a result can be reached through differentiable primitives (a backward domain of
    s2s/analysis/dataflow.py; facts: value -> True). A value is marked after every read of it; only a mark that
    reaches back (a loop body's read of a carried value, a pop from a stack) asks for another sweep."""

    backward = True
    reads_tests = False     # a While's condition carries no derivative, and its test's values are read there alone

    def __init__(self) -> None:
        super().__init__()
        self.differentiable: dict[int, bool] = {}     # id(prim) -> not declared nondifferentiable
        self.before: list[list[bool]] = []            # per loop being walked: its carried values' marks on entry

    def start(self, fn: Function) -> None:
        self.mark(fn.body.results)

    def mark(self, atoms: list[Atom]) -> bool:
        new = False
        for a in atoms:
            if a.__class__ is Value and a not in self.facts:
                self.facts[a] = True
                new = True
        return new

    def op(self, op: Op) -> None:
        prim = op.prim
        facts = self.facts
        if prim is runtime.push:
            if op.args[0] in facts:
                self.mark([op.args[1]])
            return
        for o in op.outs:
            if o in facts:
                break
        else:
            return
        ok = self.differentiable.get(id(prim))
        if ok is None:
            ok = self.differentiable[id(prim)] = not registry.is_nondifferentiable(prim) and \
                prim is not runtime.free_name
        if ok and not _casts_to_integers(op):
            for a in op.args:
                if a.__class__ is not Const and a not in facts:
                    facts[a] = True
                    self.changed |= prim is runtime.pop     # the pushes came before: sweep again
            if op.kwargs:         # (a dtype= carries no derivative: transforms/common.py)
                if self.mark([v for k, v in op.kwargs.items() if k != "dtype"]) and prim is runtime.pop:
                    self.changed = True

    def branch(self, out: Value, then: Atom, orelse: Atom) -> None:
        if out in self.facts:
            self.mark([then, orelse])

    def enter(self, loop: While | For) -> None:
        facts = self.facts
        self.mark([c for c, o in zip(loop.carried, loop.outs) if o in facts])
        self.before.append([c in facts for c in loop.carried])
        for c, r, i in zip(loop.carried, loop.body.results, loop.inits):
            if c in facts:
                self.mark([r, i])

    def leave(self, loop: While | For) -> None:
        if self.before.pop() != [c in self.facts for c in loop.carried]:
            self.changed = True             # read in the body: its results and inits again


def useful_values(fn: Function) -> set[int]:
    """Ids of the values from which a result can be reached through differentiable primitives (Useful)."""
    domain, = dataflow.solve(fn, Useful())
    return {id(v) for v in domain.facts}


def active_values(fn: Function, wrt: list[int]) -> set[int]:
    return varied_values(fn, wrt) & useful_values(fn)


# ---------------------------------------------------------------- scalars

def _is_scalar_const(atom: Atom) -> bool:
    # None and UNDEFINED stand for "no value yet" (a return value before the return): they never vary
    return isinstance(atom, Const) and (isinstance(atom.value, (int, float, bool, np.generic))
                                        or atom.value is None or atom.value is UNDEFINED)


def _unset(atom: Atom) -> bool:
    return atom.__class__ is Const and atom.value is UNDEFINED


# "scalar" | "array" | ("tuple" | "list", kinds or None) | ("list*", kind of every item)
# | ("dict", ((key, kind), ...)) | "slice" (a slice made when the function runs) | "other"
# | NOTHING: an item of a list known to be empty, read by an index known when the code runs (in a sweep before
# the list's kind is known, a comprehension's list is still `[]`): no value, so that a loop's join does not widen
# on it; what follows from it is NOTHING too, and one left at the end is "other"
NOTHING = "nothing"


def _join(a: Kind, b: Kind) -> Kind:
    if a == b or b == NOTHING:
        return a
    if a == NOTHING:
        return b
    if a in NUMERIC and b in NUMERIC:
        return "array"
    if is_container(a) and is_container(b) and a[0] in ("list", "list*") and b[0] in ("list", "list*"):
        # a list that grows in a loop (`acc = []`, then `acc = acc + item` or `acc.append(item)`): a list of
        # items of one kind, whatever its length, when the items on both paths are of that kind
        items = {k for kind in (a, b) for k in ((kind[1],) if kind[0] == "list*" else ("?",) if kind[1] is None else kind[1])}
        if len(items) == 1 and "?" not in items:
            return ("list*", items.pop())
        return ("list", None)
    if is_container(a) and is_container(b) and a[0] == b[0]:
        return (a[0], None)
    return "other"


def const_kind(value: Any) -> Kind:
    """The kind of a constant: a number, None (no value yet), an array, or a tuple or list of them."""
    if value is None or value is UNDEFINED:
        return "scalar"
    if isinstance(value, (tuple, list)) and not isinstance(value, str) and len(value) < 1000:
        return (type(value).__name__ if type(value) in (tuple, list) else "tuple",
                tuple(const_kind(v) for v in value))
    if isinstance(value, np.ndarray):
        return "array"
    return "scalar" if isinstance(value, (int, float, complex, bool, np.generic)) else "other"


def _concat_kind(a: Kind, b: Kind) -> Kind:
    if not (is_container(a) and is_container(b)):
        return "other"
    if a[0] == "list*" or b[0] == "list*":
        items = {a[1] if a[0] == "list*" else k for k in (a[1] or ("other",))} | \
                {b[1] if b[0] == "list*" else k for k in (b[1] or ("other",))}
        return ("list*", items.pop()) if len(items) == 1 else ("list", None)
    if a[1] is None or b[1] is None:
        return (a[0], None)
    return (a[0], a[1] + b[1])


def _repeat_kind(a: Kind, count: Any) -> Kind:
    if not is_container(a) or a[0] == "list*":
        return a if is_container(a) else "other"
    if a[1] is None or not isinstance(count, int):
        return (a[0], None)
    return (a[0], a[1] * max(count, 0))


def _element(kind: Kind, key: Any) -> Kind:
    if isinstance(key, slice) and is_container(kind):       # a slice of a tuple or list is a tuple or list
        if kind[0] == "dict":
            return "other"
        if kind[0] == "list*" or kind[1] is None:
            return kind
        return (kind[0], tuple(kind[1][key]))
    if not is_container(kind) or kind[1] is None:
        return "other"
    if kind[0] == "list*":
        return kind[1]
    items = [k for _, k in kind[1]] if kind[0] == "dict" else list(kind[1])
    if key is None and not items and kind[0] != "dict":
        return NOTHING
    if key is None:              # an index known only at run time: the items' common kind, if they share one,
        if items and all(k == items[0] for k in items):
            return items[0]
        joined = functools.reduce(_join, items) if items else "other"     # or lists (tuples) all: their join
        return joined if is_container(joined) and joined[0] in ("list", "list*", "tuple") else "other"
    if kind[0] == "dict":
        return dict(kind[1]).get(key, "other")
    try:
        return kind[1][key]
    except (IndexError, TypeError):
        return "other"


def value_kinds(fn: Function, param_kinds: list[Kind]) -> dict[int, Kind]:
    """The kind of every value, by id (Kinds)."""
    domain, = dataflow.solve(fn, Kinds(param_kinds))
    return {id(v): "other" if k == NOTHING else k for v, k in domain.facts.items()}


def global_is_scalar(owner: Any, name: str) -> bool:
    """Whether the global variable name of owner's module holds a number now. The derivative is specialized on
    it: one rebound to something else makes it anew (api.stale)."""
    owner = getattr(owner, "__func__", owner)
    if not hasattr(owner, "__globals__") or name in owner.__code__.co_freevars:
        return False
    return type(owner.__globals__.get(name)) in SCALAR_TYPES


def _op_kind(op: Op, kind: Callable[[Atom], Kind]) -> Kind:
    prim = op.prim
    if prim is runtime.free_name:       # `x += DT` with DT a global float: a number; U a global array: an array
        owner, name = op.args[1].value, op.args[0].value    # (self.slope, a number checked on entry: a number)
        return "scalar" if global_is_scalar(owner, name) or checked_number(owner, name) else \
            "array" if global_is_array(owner, name) else "other"
    args = list(op.args) + list(op.kwargs.values())
    arg_kinds = [kind(a) for a in args]
    rec = registry.record(prim)       # what it gives (rules/record.py): scalar, constructor, kind
    if rec.scalar == "always":
        return "scalar"
    if rec.scalar == "without_axis" and len(op.args) == 1 and op.kwargs.get("axis", Const(None)) == Const(None) \
            and op.kwargs.get("keepdims", Const(False)) == Const(False):      # (keepdims=True: an array)
        return "scalar"
    if rec.kind is not None:
        found = rec.kind(op, arg_kinds)
        if found is not None:
            return found
    if rec.constructor:       # an array, whatever gives its shape: `np.zeros((n, m))`, `np.empty(x.shape)`
        return "array"
    if prim in (runtime.make_tuple, runtime.make_list):
        return ("tuple" if prim is runtime.make_tuple else "list", tuple(arg_kinds))
    if prim is runtime.make_dict:
        return ("dict", tuple(zip(op.args[0].value, arg_kinds[1:])))
    if prim is runtime.list_append:       # a list of items of one kind, of any length (a comprehension's), or not
        items = arg_kinds[0]
        if is_container(items) and items[0] in ("list", "list*") and items[1] is not None and all(
                k == arg_kinds[1] for k in ((items[1],) if items[0] == "list*" else items[1])):
            return ("list*", arg_kinds[1])
        return ("list", None)
    sequences = [is_container(k) and k[0] in ("tuple", "list", "list*") for k in arg_kinds]
    if prim is runtime.concat or (prim is syntax.BINARY["+"] and len(sequences) == 2 and all(sequences)):
        return _concat_kind(*arg_kinds[:2])
    if prim is syntax.BINARY["*"] and len(sequences) == 2 and any(sequences) and "scalar" in arg_kinds:
        seq = 0 if sequences[0] else 1
        count = op.args[1 - seq].value if isinstance(op.args[1 - seq], Const) else None
        return _repeat_kind(arg_kinds[seq], count)
    if prim is runtime.repeat:
        count = op.args[1].value if isinstance(op.args[1], Const) else None
        return _repeat_kind(arg_kinds[0], count)
    if prim is runtime.setitem:
        container = arg_kinds[0]
        if container == "array" or not is_container(container):
            return container
        if container[0] == "list*" and arg_kinds[2] == container[1] and not isinstance(
                op.args[1], Const) or (container[0] == "list*" and isinstance(op.args[1], Const)
                                       and isinstance(op.args[1].value, int) and arg_kinds[2] == container[1]):
            return container
        if container[0] == "dict" and container[1] is not None and isinstance(op.args[1], Const):
            entries = dict(container[1])
            entries[op.args[1].value] = arg_kinds[2]
            return ("dict", tuple(entries.items()))
        return (container[0], None)
    if prim is runtime._shaped_like:
        return "array" if "array" in arg_kinds else "scalar" if all(k == "scalar" for k in arg_kinds) else "other"
    if rec.shaped_by is not None:      # helpers of derivative code: the kind of the value whose shape they take
        donor = arg_kinds[rec.shaped_by] if len(arg_kinds) > rec.shaped_by else "other"
        return donor if donor in NUMERIC else "other"
    if prim is builtins.slice:      # `xs[-m:]` with m known when it runs: a slice of a tuple or list is one
        return "slice"
    if prim is syntax.SUBSCRIPT:
        if arg_kinds[0] == "array":
            return "array"
        if len(arg_kinds) > 1 and arg_kinds[1] == "slice" and is_container(arg_kinds[0]):
            container = arg_kinds[0]
            return container if container[0] == "list*" else "other" if container[0] == "dict" else (container[0], None)
        return _element(arg_kinds[0], op.args[1].value if isinstance(op.args[1], Const) else None)
    elementwise = rec.scalar == "of_scalars"
    if elementwise and all(k == "scalar" for k in arg_kinds):
        return "scalar"
    if (prim is builtins.list or prim is builtins.tuple) and len(arg_kinds) == 1 and not op.kwargs:
        items = arg_kinds[0]            # the same items (an array's rows, of a rank the kinds do not know)
        if items == "array":
            return ("list*", "array") if prim is builtins.list else ("tuple", None)
        if is_container(items) and items[0] in ("tuple", "list", "list*"):
            if items[0] == "list*":
                return items if prim is builtins.list else ("tuple", None)
            return items if items[0] == prim.__name__ else (prim.__name__, items[1])
        return "other"
    if prim is builtins.sorted and arg_kinds:       # a list of the items, in another order: their kind
        items = arg_kinds[0]
        if items == "array" or (is_container(items) and items[0] == "list*"):
            return ("list*", "scalar" if items == "array" else items[1])
        if is_container(items) and items[1] is not None and len(set(items[1])) == 1:
            return ("list*", items[1][0])
        return ("list", None)
    from_kinds = registry.kind_from_arguments(prim)
    if from_kinds is not None:              # a kind that follows from the arguments' (s2s.fixed_point's is x0's)
        try:
            found = from_kinds(arg_kinds)
        except S2SError as error:           # a rule refusing its arguments' kinds: at the call's place
            raise type(error)(error.message, error.loc or op.loc, error.hint) from None
        if found is not None:
            return found
    try:
        declared = registry.result_kind(prim, [a.value if isinstance(a, Const) else registry.UNKNOWN for a in op.args],
                                        {k: a.value if isinstance(a, Const) else registry.UNKNOWN
                                         for k, a in op.kwargs.items()})
    except S2SError as error:       # a rule refusing the call's arguments (odeint's full_output): at its place
        raise type(error)(error.message, error.loc or op.loc, error.hint) from None
    if declared is not None:       # a tuple or list of arrays (numpy.linalg.eigh, numpy.split): rules/ declare it
        return declared
    if (elementwise or rec.array_result) and all(k in NUMERIC for k in arg_kinds[:1]):
        return "array"
    return "other"


class Kinds(Domain):
    """The kind of every value (a domain of s2s/analysis/dataflow.py; facts: value -> Kind). Optimistic for
    loops: a carried value keeps its start's kind unless an update has another; that joins the two (`widened`,
    kept from sweep to sweep) and asks for another sweep, which works the kinds out anew from the parameters'."""

    top = "other"

    def __init__(self, param_kinds: list[Kind]):
        super().__init__()
        self.param_kinds = param_kinds
        self.widened: dict[Value, Kind] = {}
        # id(prim) -> "scalar" (its result is a scalar whatever it gets), True (elementwise: a scalar of scalars)
        # or False (the general case): looked up once per function (its prims live as long as it does)
        self.classes: dict[int, Any] = {}

    def sweep(self, fn: Function) -> None:
        self.facts = dict(zip(fn.params, self.param_kinds))

    def const(self, value: Any) -> Kind:
        return const_kind(value)

    def op(self, op: Op) -> None:
        kinds = self.facts
        prim = op.prim
        known = self.classes.get(id(prim))
        if known is None:
            known = self.classes[id(prim)] = _prim_class(prim)
        k = None
        if known is True and not op.kwargs:     # elementwise: a scalar of scalars
            k = "scalar"
            for a in op.args:
                if (const_kind(a.value) if a.__class__ is Const else kinds.get(a, "other")) != "scalar":
                    k = None
                    break
        elif known == "scalar":
            k = "scalar"
        if k is None:
            k = _op_kind(op, self.of)
            if k != NOTHING and any(kinds.get(a) == NOTHING for a in op.args if a.__class__ is not Const):
                k = NOTHING
        if k.__class__ is list:         # one kind per output (a call of a recursion's derivative function)
            for o, each in zip(op.outs, k):
                kinds[o] = each
            return
        for o in op.outs:
            kinds[o] = k

    def branch(self, out: Value, then: Atom, orelse: Atom) -> None:
        # (UNDEFINED: the side where the value is never read; the other side's kind)
        of = self.of
        self.facts[out] = of(orelse) if _unset(then) else of(then) if _unset(orelse) else _join(of(then), of(orelse))

    def enter(self, loop: While | For) -> None:
        if isinstance(loop, For):
            self.facts[loop.index] = "scalar"
        for c, i in zip(loop.carried, loop.inits):
            self.facts[c] = self.widened.get(c, self.of(i))

    def leave(self, loop: While | For) -> None:
        kinds = self.facts
        for c, r, o in zip(loop.carried, loop.body.results, loop.outs):
            joined = _join(kinds[c], self.of(r))
            if joined != kinds[c]:
                self.widened[c] = joined        # read when the loop is entered again, in the next sweep
                self.changed = True
            kinds[o] = kinds[c]


def _prim_class(prim: Any) -> Any:
    """What _op_kind says of prim before it looks at the arguments: "scalar" when it always gives a scalar (a
    function whose record says scalar="always"), True when it is elementwise (a scalar of scalars; none of the
    special cases of _op_kind applies to it then), False otherwise."""
    rec = registry.record(prim)
    if rec.scalar == "always":
        return "scalar"
    return rec.scalar == "of_scalars"


def scalar_values(fn: Function, param_kinds: list[Kind]) -> set[int]:
    return {key for key, k in value_kinds(fn, param_kinds).items() if k == "scalar"}


# ---------------------------------------------------------------- floats

def _float_producing(prim: object) -> bool:
    """A function whose result is a float whatever numbers it gets (exp, log, true division...)."""
    return registry.record(prim).floats


class Floats(Domain):
    """Values known to be floats (or float arrays): what they hold can be overwritten by float results (a domain
    of s2s/analysis/dataflow.py; facts: value -> True). An operation's result is one where the function makes
    floats of anything, or keeps them and reads one; nothing flows through a merge or a loop's carried values,
    so one sweep settles it. What a function does with floats is looked up once per function."""

    def __init__(self, float_params: list[int]):
        super().__init__()
        self.float_params = float_params
        self.producing: dict[int, bool] = {}      # id(prim) -> makes floats of anything (prims live while fn does)
        self.passing: dict[int, bool] = {}        # id(prim) -> its result is a float when an argument is

    def start(self, fn: Function) -> None:
        for i in self.float_params:
            self.facts[fn.params[i]] = True

    def op(self, op: Op) -> None:
        prim = op.prim
        makes = self.producing.get(id(prim))
        if makes is None:
            makes = self.producing[id(prim)] = _float_producing(prim)
        if not makes:
            keeps = self.passing.get(id(prim))
            if keeps is None:
                keeps = self.passing[id(prim)] = not registry.is_nondifferentiable(prim) and \
                    prim is not runtime.pop and prim is not runtime.free_name
            if not keeps:
                return
            for a in op.args:
                if (isinstance(a.value, float) if a.__class__ is Const else a in self.facts):
                    break
            else:
                return
        for o in op.outs:
            self.facts[o] = True

    def branch(self, out: Value, then: Atom, orelse: Atom) -> None:
        pass

    def enter(self, loop: While | For) -> None:
        pass

    def leave(self, loop: While | For) -> None:
        pass


def float_values(fn: Function, float_params: list[int]) -> set[int]:
    """Ids of the values known to be floats (Floats)."""
    domain, = dataflow.solve(fn, Floats(float_params))
    return {id(v) for v in domain.facts}


def scalars_and_floats(fn: Function, param_kinds: list[Kind], float_params: list[int]) -> tuple[set[int], set[int]]:
    """scalar_values and float_values of fn, solved in one walk (Kinds and Floats together)."""
    kinds, floats = dataflow.solve(fn, Kinds(param_kinds), Floats(float_params))
    return {id(v) for v, k in kinds.facts.items() if k == "scalar"}, {id(v) for v in floats.facts}
