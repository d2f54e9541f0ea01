"""Operators on tuples and lists, told apart from arithmetic once the kinds of values are known.

Lowering writes `a + b` and `a * n` as `syntax.BINARY["+"]` and `syntax.BINARY["*"]` whatever their operands are. In
Python, on two tuples or two lists `+` concatenates, and a tuple or list times an integer repeats; NumPy
takes a list beside an array for an array. `resolve(fn, param_kinds)` rewrites, from the kinds of the
arguments the derivative is made for:
- `a + b` on two containers into `runtime.concat(a, b)`, whose adjoint splits by position;
- `a * n` / `n * a` on a container and a number into `runtime.repeat(a, n)`, whose adjoint sums the copies;
- a NumPy reduction or ufunc given a tuple or list (`np.sum([a * b, a])`) reads it as `np.array(...)` first;
- `for k in d:` over a dict, read by index when lowered, into its keys;
- `x.copy()` (lowered as runtime.copy_method) into np.copy of an array, list(x) of a list (a dict's copy stays
  copy_method, whose adjoint is the identity);
- `p.w` of a namedtuple argument into `p[k]`, k the position of the field w;
- `np.r_[a, b]` and `np.c_[a, b]` (index objects that build arrays) into the concatenations they are;
- `max(a, b)` / `min(a, b)` of two tuples or lists (compared item by item, as in `min((cost, x) for x in xs)`),
  or of values not known to be numbers: Python's choice written out, `b if b > a else a` (`b < a` for min), so
  the derivative follows the item selected (numbers keep the rule, which splits a tie's adjoint).
Any other arithmetic operator with a container operand is refused: Python raises there, or s2s would
differentiate something it does not model.
"""
from __future__ import annotations

import builtins
from typing import Any

import numpy as np

from s2s.ir import syntax
from s2s import runtime
from s2s.analysis.activity import const_kind, value_kinds
from s2s.analysis.values import NUMERIC, is_container
from s2s.errors import UnsupportedSyntax
from s2s.frontend.desugar.helpers import element_index, refused_when_run
from s2s.ir.core import Block, Const, For, Function, If, Op, Value, value_names, walk
from s2s.ir.naming import Namer
from s2s.rules import registry

_ARITHMETIC = (syntax.BINARY["-"], syntax.BINARY["/"], syntax.BINARY["//"], syntax.BINARY["%"], syntax.BINARY["**"], syntax.BINARY["@"],
               syntax.UNARY["-"], syntax.UNARY["+"])


def _sequence(kind) -> bool:
    return is_container(kind) and kind[0] in ("tuple", "list", "list*")


class LazyNamer:
    """A Namer for fn's new values, made (every name fn uses reserved: a walk of fn) at the first name asked."""

    def __init__(self, fn: Function):
        self.fn = fn
        self.namer: Namer | None = None

    def value(self, hint: str = "") -> Value:
        if self.namer is None:
            self.namer = Namer()
            for name in value_names(self.fn):
                self.namer.reserve(name)
        return self.namer.value(hint)


# the kinds resolve found for the function it left as it was: unroll, next, reads them instead of finding them
# again (a pass over the function), if the function is still that one (the same top-level statements and
# results: api's split_aux adds statements between the two)
_LAST: list = []               # [fn, its argument kinds, its fingerprint, the kinds], or empty


def forget() -> None:
    """Drop what resolve kept for the next pass: once a derivative is made (its IR names the user's function,
    which it would keep alive)."""
    _LAST.clear()


def _fingerprint(fn: Function) -> tuple:
    return fn.body, fn.body.stmts, len(fn.body.stmts), tuple(fn.body.results)


def _same(a: tuple, b: tuple) -> bool:
    return len(a[3]) == len(b[3]) and all(x is y for x, y in zip(a[:2] + a[3], b[:2] + b[3])) and a[2] == b[2]


def kinds_of(fn: Function, param_kinds: list) -> dict:
    """value_kinds(fn, param_kinds), from what resolve found if fn has not changed since (read once)."""
    last = _LAST[:]
    _LAST.clear()
    if last and last[0] is fn and last[1] == list(param_kinds) and _same(last[2], _fingerprint(fn)):
        return last[3]
    return value_kinds(fn, param_kinds)


def resolve(fn: Function, param_kinds: list) -> Function:
    namer = LazyNamer(fn)
    _LAST.clear()
    for _ in range(8):               # each rewrite can make more kinds known
        kinds = value_kinds(fn, param_kinds)
        if not _rewrite(fn, kinds, namer):
            _LAST[:] = [fn, list(param_kinds), _fingerprint(fn), kinds]
            return fn
    return fn


def _kind(atom, kinds):
    return const_kind(atom.value) if isinstance(atom, Const) else kinds.get(id(atom), "other")


def _rewrite(fn: Function, kinds: dict, namer: Any) -> bool:
    """One round of the rewrites; a refusal of an operation on a side of a branch decided when the code runs is
    raised only if that side runs (the operation becomes a call that raises it: helpers.refused_when_run)."""
    conditional: set[int] | None = None
    changed = False
    indices = {id(s.index) for s in walk(fn.body) if isinstance(s, For)}
    sequences_held = {k for k, kind in kinds.items() if _sequence(kind)}     # values that are tuples or lists
    for stmt in list(walk(fn.body)):
        if not isinstance(stmt, Op):
            continue
        try:
            changed |= _rewrite_op(fn, stmt, kinds, namer, indices, sequences_held)
        except UnsupportedSyntax as exc:
            if conditional is None:
                conditional = {id(s) for branch in walk(fn.body) if isinstance(branch, If)
                               for block in (branch.then, branch.orelse) for s in walk(block)}
            if id(stmt) not in conditional:
                raise
            stmt.prim, stmt.kwargs = refused_when_run(exc.message, exc.loc, exc.hint), {}
            changed = True
    return changed


def _rewrite_op(fn: Function, stmt: Op, kinds: dict, namer: Any, indices: set, sequences_held: set) -> bool:
    changed = False
    if stmt.prim is runtime.copy_method:        # `x.copy()`: as its kind copies itself
        kind = _kind(stmt.args[0], kinds)
        if kind in NUMERIC or kind == "slice":
            stmt.prim = np.copy
            changed = True
        elif _sequence(kind) and kind[0] != "tuple":
            stmt.prim = builtins.list
            changed = True
        return changed
    extremum = stmt.prim is builtins.max or stmt.prim is builtins.min
    if stmt.prim is not syntax.SUBSCRIPT and stmt.prim is not runtime.setitem and not extremum and not any(
            id(a) in sequences_held if isinstance(a, Value) else isinstance(a, Const) and _sequence(
                const_kind(a.value)) for a in stmt.args):
        return changed                  # no tuple or list among its operands: nothing below applies
    if stmt.prim is syntax.SUBSCRIPT and isinstance(stmt.args[1], Value) and id(stmt.args[1]) in indices \
            and is_container(_kind(stmt.args[0], kinds)) and _kind(stmt.args[0], kinds)[0] == "dict":
        stmt.prim = runtime.dict_key          # `for k in d:` goes over the keys
        changed = True
        return changed
    if stmt.prim is syntax.SUBSCRIPT and isinstance(stmt.args[1], Const) and isinstance(stmt.args[1].value, slice) \
            and is_container(_kind(stmt.args[0], kinds)) and _kind(stmt.args[0], kinds)[0] == "dict":
        raise UnsupportedSyntax("a slice of a dict, or reversed() of a dict", stmt.loc,
                                hint="name the keys in a tuple and loop over it: for k in reversed(('a', 'b')): "
                                     "... d[k]")
    if stmt.prim is getattr and len(stmt.args) == 2 and isinstance(stmt.args[1], Const) and \
            _static(_kind(stmt.args[0], kinds), stmt.args[1].value)[0]:
        # `self.activation` of an object read as a record (s2s/driver/objects.py): a constant of the code
        value = _static(_kind(stmt.args[0], kinds), stmt.args[1].value)[1]
        stmt.prim, stmt.args = syntax.SUBSCRIPT, [Const((value,)), Const(0)]
        changed = True
        return changed
    if stmt.prim is getattr and len(stmt.args) == 2 and isinstance(stmt.args[1], Const) and \
            stmt.args[1].value in _fields(_kind(stmt.args[0], kinds)):
        # `p.w` of a namedtuple: p[k], k the field's position
        stmt.prim, stmt.args = syntax.SUBSCRIPT, [stmt.args[0], Const(_fields(_kind(stmt.args[0], kinds))
                                                                       .index(stmt.args[1].value))]
        changed = True
        return changed
    if stmt.prim is syntax.SUBSCRIPT and isinstance(stmt.args[0], Const) and \
            isinstance(stmt.args[0].value, (type(np.r_), type(np.c_))):
        _index_builder(fn, stmt, namer)
        changed = True
        return changed
    if stmt.prim is runtime.setitem and is_container(_kind(stmt.args[0], kinds)) and \
            _kind(stmt.args[0], kinds)[0] == "dict" and _made_by(fn, stmt.args[1], element_index):
        # (lowered as x[element_index(x, k, j)] = v, which only an array takes: the dict's item is written in
        # place, seen by every name and item holding it)
        raise UnsupportedSyntax("a chained write `d[k][j] = v` (or `d[k][j] += v`) into an item of a dict: it "
                                "writes into the array (or list) the dict holds, in place, which s2s does not "
                                "follow to the other names and items holding it", stmt.loc,
                                hint="build the item anew: w = d[k].copy(); w[j] = v; d[k] = w")
    if stmt.prim is runtime.setitem and _sequence(_kind(stmt.args[0], kinds)) and not (
            isinstance(stmt.args[1], Const) and isinstance(stmt.args[1].value, int)) and (
            _kind(stmt.args[1], kinds) != "scalar"):
        if _made_by(fn, stmt.args[1], element_index):
            raise UnsupportedSyntax("a chained write `x[i][j] = v` into a list of lists (s2s does not follow a "
                                    "write into an item of a container)", stmt.loc,
                                    hint="build the row anew: row = list(x[i]); row[j] = v; x[i] = row, or use "
                                         "a NumPy array and x[i, j] = v")
        raise UnsupportedSyntax("assignment to a slice of a list (it may change the list's length)", stmt.loc,
                                hint="build a new list: xs = xs[:i] + [...] + xs[j:]")
    arg_kinds = [_kind(a, kinds) for a in stmt.args]
    sequences = [_sequence(k) for k in arg_kinds]
    if extremum and len(stmt.args) == 2 and not stmt.kwargs and any(
            k not in NUMERIC for k in arg_kinds):      # tuples, or items s2s cannot tell are numbers
        _extremum_of_sequences(fn, stmt, namer)
        changed = True
        return changed
    if (stmt.prim in _ARITHMETIC or stmt.prim in (syntax.BINARY["+"], syntax.BINARY["*"]) or isinstance(
            stmt.prim, np.ufunc)) and any(sequences) and "array" in arg_kinds:
        # NumPy reads a tuple or list beside an array as an array: `[2.0, 3.0] * x`
        for k, is_sequence in enumerate(sequences):
            if is_sequence:
                _as_array(fn, stmt, k, namer)
        changed = True
    elif stmt.prim is syntax.BINARY["+"] and len(stmt.args) == 2 and any(sequences):
        if all(sequences):
            stmt.prim = runtime.concat
            changed = True
        elif "scalar" in arg_kinds:
            raise UnsupportedSyntax("`+` between a tuple or list and a number", stmt.loc,
                                    hint="Python raises TypeError here; concatenate two sequences, or "
                                         "use np.array(...) for arithmetic")
        elif "array" not in arg_kinds:
            raise UnsupportedSyntax("`+` between a tuple or list and a value s2s cannot tell is a tuple, "
                                    "a list or an array", stmt.loc,
                                    hint="convert it first: list(...) to join lists, np.asarray(...) to add")
    elif stmt.prim is syntax.BINARY["*"] and len(stmt.args) == 2 and any(sequences):
        if all(sequences):
            raise UnsupportedSyntax("`*` between two tuples or lists", stmt.loc)
        count = 1 if sequences[0] else 0
        if arg_kinds[count] == "scalar":
            if count == 0:
                stmt.args = [stmt.args[1], stmt.args[0]]
            stmt.prim = runtime.repeat
            changed = True
    elif stmt.prim is syntax.BINARY["%"] and isinstance(stmt.args[0], Const) and \
            isinstance(stmt.args[0].value, str):
        return changed              # `"... %r" % [n1, n2]`: Python's string formatting (a message), kept as it is
    elif stmt.prim in _ARITHMETIC and any(sequences):
        raise UnsupportedSyntax(f"`{stmt.prim.__name__}` on a tuple or list", stmt.loc,
                                hint="convert it with np.array(...) first")
    elif (registry.record(stmt.prim).sequence_argument or isinstance(stmt.prim, np.ufunc)) and stmt.args and any(sequences):
        for k, is_sequence in enumerate(sequences):
            if is_sequence and (k == 0 or isinstance(stmt.prim, np.ufunc)):
                _as_array(fn, stmt, k, namer)
        changed = True
    return changed


def _extremum_of_sequences(fn: Function, stmt: Op, namer: Any) -> None:
    """`top = max(a, b)` of tuples or lists as Python chooses: `top = b if b > a else a` (`b < a` for min; a tie keeps
    the first), the comparison item by item; the derivative then follows the item selected, payload included."""
    first, second = stmt.args
    better = namer.value("better")
    compare = Op(syntax.COMPARE[">"] if stmt.prim is builtins.max else syntax.COMPARE["<"], [second, first], [better], loc=stmt.loc)
    choice = If(better, Block([], [second]), Block([], [first]), list(stmt.outs), loc=stmt.loc)
    _replace(fn, stmt, [compare, choice])


def _static(kind, name) -> tuple:
    """(whether, value): name is a constant field of an object read as a record (s2s/driver/objects.py)."""
    fields = _fields(kind)
    return fields.static(name) if hasattr(fields, "static") else (False, None)


def _fields(kind) -> tuple:
    """The field names of a namedtuple's kind (activity.kind_of), else ()."""
    return kind[2] if is_container(kind) and len(kind) > 2 else ()


def _made_by(fn: Function, atom, prim) -> bool:
    return isinstance(atom, Value) and any(isinstance(s, Op) and s.prim is prim and any(o is atom for o in s.outs)
                                           for s in walk(fn.body))


def _index_builder(fn: Function, stmt: Op, namer: Any) -> None:
    """`np.r_[a, b, ...]` as `np.concatenate([_r_item(a), ...])`, `np.c_[...]` as a concatenation along the last
    axis of columns; a slice in np.r_ is the constant range it stands for. Strings (np.r_['0,2', ...]) are
    refused."""
    builder = stmt.args[0].value
    columns = registry.record(builder).index_builder == "columns"
    index = stmt.args[1]
    defining = {id(s.outs[0]): s for s in walk(fn.body) if isinstance(s, Op) and len(s.outs) == 1}
    maker = defining.get(id(index)) if isinstance(index, Value) else None
    if maker is not None and maker.prim is runtime.make_tuple:
        items = list(maker.args)
    elif isinstance(index, Const) and isinstance(index.value, tuple):
        items = [Const(v) for v in index.value]
    else:
        items = [index]
    converted = []
    for item in items:
        if isinstance(item, Const) and isinstance(item.value, str):
            raise UnsupportedSyntax("np.r_/np.c_ with a directive string", stmt.loc,
                                    hint="use np.concatenate(..., axis=...) or np.stack")
        if isinstance(item, Const) and isinstance(item.value, slice):
            item = Const(builder[item.value])
        elif isinstance(item, Value) and defining.get(id(item)) is not None and defining[id(item)].prim is slice:
            raise UnsupportedSyntax("np.r_/np.c_ with a slice computed when the function runs", stmt.loc,
                                    hint="use np.arange(...)")
        shaped = namer.value(item.hint if isinstance(item, Value) else "")
        helper = runtime._c_item if columns else runtime._r_item
        _insert_before(fn, stmt, Op(helper, [item], [shaped], loc=stmt.loc))
        converted.append(shaped)
    joined = namer.value("")
    _insert_before(fn, stmt, Op(runtime.make_list, converted, [joined], loc=stmt.loc))
    stmt.prim = np.concatenate
    stmt.args = [joined]
    stmt.kwargs = {"axis": Const(-1)} if columns else {}


def _as_array(fn: Function, stmt: Op, k: int, namer: Any) -> None:
    """Argument k of stmt, a tuple or list, read as np.array(...) the way NumPy reads it."""
    arg = stmt.args[k]
    if isinstance(arg, Const):
        stmt.args = [*stmt.args[:k], Const(np.asarray(arg.value)), *stmt.args[k + 1:]]
        return
    array = namer.value(arg.hint)
    _insert_before(fn, stmt, Op(np.array, [arg], [array], loc=stmt.loc))
    stmt.args = [*stmt.args[:k], array, *stmt.args[k + 1:]]


def _insert_before(fn: Function, target: Op, new: Op) -> None:
    _replace(fn, target, [new, target])


def _replace(fn: Function, target: Op, new: list) -> None:
    """target, wherever it is in fn, replaced by the statements new."""
    from s2s.ir.core import stmt_blocks

    def visit(block) -> bool:
        for k, s in enumerate(block.stmts):
            if s is target:
                block.stmts[k:k + 1] = new
                return True
            if any(visit(inner) for inner in stmt_blocks(s)):
                return True
        return False
    visit(fn.body)
