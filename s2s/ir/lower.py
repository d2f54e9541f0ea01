"""Lowering: a checked gast function to structured SSA IR (see `ir`).

Accepts what the fence lets through. Guarantees, for the IR it returns:
- every intermediate value is defined once; nested expressions are flattened
  one primitive per `Op`; augmented assignment, chained comparison, tuple
  unpacking, `and`/`or` and conditional expressions are desugared;
- `if` becomes `If` with phi outputs for the variables either branch assigns;
  `while` becomes `While`; `for` over `range`, a sequence, `enumerate` or `zip`
  becomes `For` over a range of indices (or a `While` with a counter when the
  body can `break` or `return`);
- `break`, `continue` and `return` inside branches and loops become flag
  variables carried like any other, and the statements they skip are guarded
  by an `If` on the flags, so every region has one entry and one exit;
- free names are resolved to the objects they name: functions and modules are
  constants; global and closure data become `free_name` reads at run time;
- a call to one of the user's own functions is inlined: the callee is lowered
  once (cached) and its body copied in; a recursive call is an operation calling the function
  (s2s/ir/lower_recursion.py);
- a `raise` ends its path: a branch that raises adds nothing to what the variables may hold after the branch;
- `try` is lowered by s2s/ir/lower_try.py (a branch on how the body, run as Python runs it, ended).
"""
from __future__ import annotations

import builtins
from copy import copy as _shallow_copy
import inspect
import itertools
import keyword
import operator
import types
import weakref
from typing import Any, Callable

import gast
import numpy as np

from s2s import runtime
from s2s.errors import S2SError, UnsupportedSyntax
from s2s.frontend import parsing
from s2s.frontend.desugar import helpers
from s2s.frontend.desugar.objects import specialize
from s2s.frontend.desugar.properties import GETTERS
from s2s.frontend.parse import parse_function
from s2s.frontend.fence import REFUSAL
from s2s.frontend.policy import is_user_function, library_function, library_owned, note_unreadable, plain_function
from s2s.frontend.tree import FUNCTION_PARTS, MISSING, AttributeOf, DefaultsOf, ParsedFunction, PartsOf, synthetic_of
from s2s.ir.core import IN_ARRAY, UNDEFINED, Atom, Block, Const, For, Function, If, Op, Value, While, clone_block, stmt_defs, values_kept, walk
from s2s.ir.lower_objects import unrolled_over_objects
from s2s.ir.lower_recursion import recursive_call
from s2s.ir.lower_try import lower_try, refuse_when_run_twice
from s2s.ir.liveness import Liveness, range_length
from s2s.ir.loop_sharing import LoopShares, LoopSharing
from s2s.ir import syntax
from s2s.ir.naming import Namer
from s2s.ir.object_state import PREFIX as STATE, ObjectState, key_of, unheld
from s2s.kept import FunctionTable
from s2s.rules import autograd_primitives, registry
from s2s.rules.nested import method_call

RET, RETVAL, BRK, CONT, EXPR = "$ret", "$retval", "$break", "$continue", "$expr"
RAISED = "$raised"      # TRUE once the path has raised: nothing after runs, a join ignores it
EXITED = "$exited"      # TRUE on the side of a branch a flag (return, break, continue) skips the rest on
_FLAG_HINTS = {RET: "returned", RETVAL: "retval", BRK: "broke", CONT: "skipping", EXPR: ""}
_RAISING = (helpers.raise_exception, helpers.assertion_failed)
FALSE, TRUE = Const(False), Const(True)


class _Undefined:
    def __repr__(self) -> str:
        return "<undefined>"


UNDEF = _Undefined()


_AUGMENTED = {gast.Add: "+", gast.Sub: "-", gast.Mult: "*", gast.Div: "/", gast.FloorDiv: "//", gast.Mod: "%",
              gast.Pow: "**", gast.MatMult: "@", gast.BitAnd: "&", gast.BitOr: "|", gast.BitXor: "^",
              gast.LShift: "<<", gast.RShift: ">>"}
_BINOPS = {op: syntax.BINARY[symbol] for op, symbol in _AUGMENTED.items()}       # (s2s/ir/syntax.py)
_UNARYOPS = {gast.USub: syntax.UNARY["-"], gast.UAdd: syntax.UNARY["+"], gast.Not: syntax.UNARY["not"],
             gast.Invert: syntax.UNARY["~"]}
_COMPARE = {
    gast.Lt: syntax.COMPARE["<"], gast.LtE: syntax.COMPARE["<="], gast.Gt: syntax.COMPARE[">"],
    gast.GtE: syntax.COMPARE[">="], gast.Eq: syntax.COMPARE["=="], gast.NotEq: syntax.COMPARE["!="],
    gast.Is: syntax.COMPARE["is"], gast.IsNot: syntax.COMPARE["is not"], gast.In: syntax.CONTAINS,
    gast.NotIn: syntax.CONTAINS,
}
# Attributes of arrays that are functions of the array.
# functions whose result may share memory with an argument (a view, or an item of a container)
_VIEWS = {operator.getitem, np.reshape, np.transpose, np.ravel, np.squeeze, np.expand_dims, np.swapaxes,
          np.moveaxis, np.broadcast_to, np.atleast_1d, np.atleast_2d, np.asarray, np.real, np.imag, np.diagonal,
          # views too (or the array itself, or a list of views of it): a write into one is seen through the other
          np.flip, np.fliplr, np.flipud, np.rot90, np.rollaxis, np.atleast_3d, np.permute_dims, np.matrix_transpose,
          np.split, np.hsplit, np.vsplit, np.dsplit, np.array_split, np.unstack, np.broadcast_arrays,
          np.asanyarray, np.require, np.ascontiguousarray, np.asfortranarray, np.asarray_chkfinite, np.diag,
          np.trim_zeros, np.real_if_close, np.nan_to_num, np.lib.stride_tricks.sliding_window_view,
          np.lib.stride_tricks.as_strided,
          builtins.list, builtins.tuple}                # list(A): the rows of A, views
_VIEWS_UNLESS_COPIED = {np.array, np.astype}
# comparisons: their result (an array of booleans, or one bool) indexes by mask, which always copies
_MASKS = {operator.lt, operator.le, operator.gt, operator.ge, operator.eq, operator.ne, np.less, np.less_equal,
          np.greater, np.greater_equal, np.equal, np.not_equal, np.isnan, np.isfinite, np.isinf, np.logical_and,
          np.logical_or, np.logical_not, np.logical_xor}          # with copy=False (or None): y itself, when they can
_METHODS = {"flatten": "ravel"}
_MUTATING_METHODS = {"sort", "fill", "put", "resize", "partition", "itemset", "setfield", "byteswap", "setflags"}
_NEW_ARRAY = {"sort": "use `x = np.sort(x)`, which returns a new array", "fill": "use `x = np.full_like(x, value)`",
              "partition": "use `x = np.partition(x, k)`, which returns a new array",
              "put": "use `x = x.copy(); x[indices] = values` (an assignment s2s follows)",
              "resize": "use `x = np.resize(x, shape)`, which returns a new array"}
_CONTAINER_WRITES = {"append", "insert", "extend", "add"}       # methods of lists and sets, not of arrays
# values whose methods all leave them unchanged and depend on nothing else: `names.index("c")` on a tuple of
# strings, `"x,y".split(",")`, computed when the derivative is made (the result is known, so is its kind)
_IMMUTABLE = (tuple, str, bytes, frozenset, int, float, complex, bool)
_MUTATING_FUNCTIONS = {np.copyto, np.place, np.put, np.fill_diagonal, np.put_along_axis, np.putmask}       # array methods whose NumPy function has another name
_ATTRIBUTES = {"T": np.transpose, "mT": np.matrix_transpose, "shape": np.shape, "ndim": np.ndim, "size": np.size,
               "real": np.real, "imag": np.imag, "dtype": np.result_type}


class _LoopState(Exception):
    """A loop's body writes (or forgets) objects' locations the loop does not carry yet: lowered again."""

    def __init__(self, node: Any, found: tuple):
        super().__init__("lowered again")
        self.node, self.found = node, found


def _same(a: Any, b: Any) -> bool:
    if a is b:
        return True
    if isinstance(a, Const) and isinstance(b, Const) and type(a.value) is type(b.value):
        if isinstance(a.value, (int, float, bool, str, type(None))):
            return a.value == b.value
    return False


def _stored_names(nodes: list[gast.AST]) -> list[str]:
    """Variables a statement list rebinds: assigned names, and (in SSA) the variables written into
    by `x[i] = v` or `xs.append(v)`."""
    names: dict[str, None] = {}
    Name, Subscript, AugAssign, Call, Store = gast.Name, gast.Subscript, gast.AugAssign, gast.Call, gast.Store
    for top in nodes:
        for node in parsing.walk(top):
            kind = type(node)
            if kind is Name:
                if type(node.ctx) is Store:
                    names[node.id] = None
            elif kind is Subscript:
                if isinstance(node.ctx, Store) and isinstance(node.value, Name):
                    names[node.value.id] = None
            elif kind is AugAssign:
                if isinstance(node.target, Subscript) and isinstance(node.target.value, Name):
                    names[node.target.value.id] = None
            elif kind is Call and isinstance(node.func, gast.Attribute) and node.func.attr in ("append", "pop") \
                    and isinstance(node.func.value, Name):
                names[node.func.value.id] = None
    return list(names)


def _exits(env: dict) -> bool:
    """Whether a path has certainly returned, broken or continued (its flags)."""
    return any(isinstance(flag, Const) and flag.value is True
               for flag in (env.get(RET), env.get(BRK), env.get(CONT), env.get(EXITED)))


def _base_name(env: dict, value: Any, name: str) -> str:
    """A variable other than name whose value value was read from (for a message)."""
    return next((other for other, held in env.items() if other != name and not other.startswith("$")
                 and held is not value), "the array")


def _takes_part(index: Any) -> bool:
    """An index (a gast node or a constant) with a slice, None or Ellipsis in it: it reads a view of an array."""
    if isinstance(index, gast.AST):
        return any(isinstance(n, gast.Slice) or (isinstance(n, gast.Constant) and n.value in (None, Ellipsis))
                   for n in gast.walk(index))
    parts = index if isinstance(index, tuple) else (index,)
    return any(isinstance(p, slice) or p is None or p is Ellipsis for p in parts)


def _lazy_iterator(callee: Any, it: gast.Call, lowerer: Any) -> bool:
    """An iterable of indices without len(): `reversed(range(n))` (as enumerate's argument), `np.ndindex(shape)`,
    `itertools.product(range(2), range(3))` and itertools' other iterators."""
    if callee is builtins.reversed:
        return len(it.args) == 1 and isinstance(it.args[0], gast.Call) and \
            lowerer.static(it.args[0].func)[1] is builtins.range
    return callee is np.ndindex or getattr(callee, "__module__", None) == "itertools"


_ADDED = itertools.count()       # when a name was (last) added to an environment: the order of its keys


class _Env(dict):
    """Variable name -> its value, as a dict. A branch's copy (`Lowerer.sub_block`) notes the names it sets or
    removes, so that join_if merges those alone (a function of many branches stays linear), and every copy knows
    when each name was added (a dict's order: the order of the merged values)."""

    def __init__(self, items: Any = ()) -> None:
        super().__init__(items)
        self.written: dict[str, None] | None = None
        self.added = dict(items.added) if isinstance(items, _Env) else {k: next(_ADDED) for k in self}

    def __setitem__(self, name: str, value: Any) -> None:
        if name not in self.added:
            self.added[name] = next(_ADDED)
        if self.written is not None:
            self.written[name] = None
        dict.__setitem__(self, name, value)

    def update(self, items: Any = (), **more: Any) -> None:
        for name, value in dict(items, **more).items():
            self[name] = value

    def __delitem__(self, name: str) -> None:
        self.pop(name)

    def clear(self) -> None:
        if self.written is not None:
            self.written.update(dict.fromkeys(self))
        self.added.clear()
        dict.clear(self)

    def pop(self, name: str, *default: Any) -> Any:
        if dict.__contains__(self, name):
            del self.added[name]
            if self.written is not None:
                self.written[name] = None
        return dict.pop(self, name, *default)


def _contains(nodes: list[gast.AST], kind: type, through_loops: bool) -> bool:
    stack = list(nodes)
    while stack:
        node = stack.pop()
        if isinstance(node, kind):
            return True
        if not through_loops and isinstance(node, (gast.For, gast.While)):
            stack.extend(node.orelse)
            continue
        stack.extend(gast.iter_child_nodes(node))
    return False


class Lowerer:
    def __init__(self, parsed: ParsedFunction, namer: Namer | None = None, call_stack: list | None = None,
                 functions: dict[str, Any] | None = None, state: ObjectState | None = None,
                 param_idents: dict[str, tuple] | None = None):
        self.parsed = parsed
        # objects' attributes and items written and read (s2s/ir/object_state.py); a callee is lowered inside its
        # caller's state (initial_state: the caller's forwarded values, placed in env on entry)
        self.state = ObjectState(self, state)
        self.initial_state = state.env_states(state.low.env) if state is not None else {}
        self.param_idents = param_idents or {}
        self.loop_state: dict[int, tuple] = {}      # a loop (by id) -> (locations it carries, dropped before it)
        self.loop_sharing = LoopSharing(self)       # what a loop's iterations hand on shared (loop_sharing.py)
        self.namer = namer or Namer()
        self.call_stack = call_stack or [parsed.fn]     # the functions being inlined, outermost first
        self.functions = functions or {}                # parameters bound to functions by the caller
        # for each value, the objects (named by the value that created them) whose memory it may share:
        # a view shares its base's, a container its items', a phi its inputs'
        self.bases: dict[int, frozenset] = {}
        self.item_reads: dict[int, Value] = {}  # values read as x[i] with no slice: numbers (copies) or views
        self.item_sources: dict[int, Atom] = {}     # what each of them was read from (x)
        self.contents: dict[int, frozenset] = {}        # for a container, the objects it holds
        # containers that may hold one object in two items (`[a] * 2`, `{"p": a, "q": a}`): an in-place write into
        # one item (`c[k] += v` on an array) is seen through the other (item_in_place)
        self.repeated: set[int] = set()
        self.writes: set[str] = set()                   # variables written into (x[i] = v) so far
        # a helper writing into an array it is given (`F[i] = ...` on its parameter F, Numba style): the names of
        # those parameters, with the first write's place; and the values that are the parameter's object itself
        # (it, and what writes into it made): the caller's variable follows the last one (inline_call)
        self.param_writes: dict[str, Any] = {}
        self.param_versions: set[int] = set()
        self.argument_write: Any = None         # where a parameter's array is first written into (Function)
        # the loops being lowered, innermost last: the names each carries, and the values at its body's start
        self.loop_frames: list[tuple[set, dict]] = []
        self.inlined_write: Any = None          # while follow_write runs: where the helper wrote
        self.written: set[int] = set()                  # the objects (bases) those writes went into
        self.masks: set[int] = set()                    # results of comparisons: as an index, a copy's
        self.namespaces: dict[int, str] = {}            # array namespaces (helpers.numpy_namespace): NumPy's
        self.held: set[int] = set()                     # values read from an attribute (`b = s.buf`): an object's
                                                        # (its bases: views of it share them)
        self.scalar_checks: list = []                   # see Function.scalar_checks
        self.dependencies: list = []                    # see Function.dependencies
        self.folds: list = []                           # what inlined callees folded (known_values.py)
        self.folded: set = set()                        # the attributes they folded on: (id(object), name)
        self.stmts: list = []
        self.env: dict[str, Any] = _Env()
        node = parsed.node
        params = [a.id for a in node.args.posonlyargs + node.args.args + node.args.kwonlyargs]
        found = parsed.stored       # (found by the fence's walk, when node is still the tree it walked)
        self.local_names = set(params) | set(found[1] if found is not None and found[0] is node
                                             else _stored_names(node.body))
        self.hints = dict(_FLAG_HINTS)     # IR hints of the variables lowering introduces
        # a name never read again sees no write (liveness.py); `range` read as the builtin unless rebound
        self.liveness = Liveness(parsed.node, parsed.globals.get("range", builtins.range) is builtins.range
                                 and "range" not in parsed.closure and "range" not in self.local_names)
        self._loads: dict[str, list[int]] | None = None     # name -> its reads in the function (read_after)
        # why a name is unbound where a `try` left it (lower_try.py): read there, the refusal says so
        self.unbound_reasons: dict[str, tuple[str, str]] = {}
        self._guarded: dict[int, tuple] | None = None       # (read_in_branches_after)
        self.maybe_unbound: set[int] = set()            # variables unbound on some path (join_if): checked when read
        self.run_twice: dict[int, Any] = {}             # id(statement of a `try` body) -> its `try` (lower_try.py)

    # ---------------------------------------------------------------- helpers

    def error(self, message: str, node: Any, hint: str = "", cls: type = UnsupportedSyntax) -> S2SError:
        return cls(message, self.parsed.loc(node), hint=hint)

    def op(self, prim: Any, args: list[Atom], node: Any, hint: str = "", kwargs: dict | None = None,
           n_outs: int = 1, checked: bool = True) -> Any:
        if n_outs == 1 and not kwargs and len(args) >= 2 and prim is method_call(len(args) - 2):
            method = self.state.method_of_new(args)       # `self.inner(h)` on an object this call made: inlined
            if method is not None:
                return self.inline_call(method[0], method[1], {}, node)
        if checked:         # an object this call wrote into, read whole: what it holds is checked (object_state.py)
            self.state.used([*args, *(kwargs or {}).values()], node, prim)
            if getattr(prim, "_s2s_effect", False) and prim is not runtime.state_check:
                self.state.opaque_call(node)         # a method run as Python runs it: it may change any object
        if n_outs == 1 and not kwargs and len(args) >= 2 and prim is method_call(len(args) - 2):
            known = _known_method_result(args)
            if known is not None:
                return known
        outs = [self.namer.value(hint) for _ in range(n_outs)]
        if prim in _MASKS:
            self.masks.update(id(o) for o in outs)
        if prim is operator.getitem and isinstance(args[0], Value) and self.namespaces.get(id(args[0])) == "tuple" \
                and args[1] == Const(0):
            self.namespaces[id(outs[0])] = "module"
        if prim is operator.getitem and len(args) > 1 and isinstance(args[1], Value) and id(args[1]) in self.masks:
            pass        # `a[a > 0]`: a boolean index (a comparison's result, an array or a bool) selects a copy
        elif prim in _VIEWS or prim in _VIEWS_UNLESS_COPIED and "copy" in (kwargs or {}) and not (
                isinstance(kwargs["copy"], Const) and kwargs["copy"].value is True):
            # a view, or an item of a container (or `np.array(y, copy=False)`): (part of) what it came from
            shared = self.bases_of(args[0]) | self.contents_of(args[0]) if args else frozenset()
            self.bases.update((id(o), shared) for o in outs)
            if prim is operator.getitem and not (isinstance(args[1], Const) and _takes_part(args[1].value)):
                self.item_reads.update((id(o), o) for o in outs)
                self.item_sources.update((id(o), args[0]) for o in outs)
        elif prim in (runtime.make_tuple, runtime.make_list, runtime.make_dict):
            items = args[1:] if prim is runtime.make_dict else args
            parts = [self.bases_of(a) | self.contents_of(a) for a in items]
            held = frozenset().union(*parts)
            self.contents.update((id(o), held) for o in outs)
            if sum(map(len, parts)) > len(held) or any(id(a) in self.repeated for a in items):
                self.repeated.update(id(o) for o in outs)       # two items share an object
        elif prim in (syntax.BINARY["*"], syntax.BINARY["+"], runtime.copy_method, builtins.dict, _shallow_copy) and \
                any(self.contents_of(a) for a in args):
            # `[a] * 2` (a list holding a twice), `xs + ys`, `d.copy()`, `dict(d)`: a new container holding the
            # same objects (on arrays, whose contents are none, nothing to note)
            held = frozenset().union(*(self.contents_of(a) for a in args))
            self.contents.update((id(o), held) for o in outs)
            if prim is syntax.BINARY["*"] or any(id(a) in self.repeated for a in args) or prim is syntax.BINARY["+"] \
                    and sum(len(self.contents_of(a)) for a in args) > len(held):
                self.repeated.update(id(o) for o in outs)
        elif prim in (runtime.list_append, runtime.setitem, helpers.list_pop):      # the same object, written into
            if args and isinstance(args[0], Value) and id(args[0]) in self.param_versions:
                self.param_versions.update(id(o) for o in outs)
            item = args[-1] if prim is not helpers.list_pop else Const(None)      # (a pop adds no item)
            added = self.bases_of(item) | self.contents_of(item)
            held = self.contents_of(args[0]) | added
            self.bases.update((id(o), self.bases_of(args[0])) for o in outs)
            self.contents.update((id(o), held) for o in outs)
            if id(args[0]) in self.repeated or id(item) in self.repeated or added & self.contents_of(args[0]):
                self.repeated.update(id(o) for o in outs)
        made = Op(prim, list(args), outs, dict(kwargs or {}), self.parsed.loc(node))
        self.stmts.append(made)
        self.state.made(made)
        return outs[0] if n_outs == 1 else outs

    def sub_block(self, fill: Callable[[], None]) -> tuple[list, dict[str, Any]]:
        saved_stmts, saved_env = self.stmts, self.env
        self.stmts, self.env = [], _Env(saved_env)
        self.env.written = {}
        try:
            fill()
            return self.stmts, self.env
        finally:
            self.stmts, self.env = saved_stmts, saved_env

    def branch(self, fill: Callable[[], None]) -> tuple[list, dict[str, Any]]:
        """One side of a branch decided when the code runs, as sub_block lowers it; a construct s2s refuses on it is
        refused only if the code takes it: the side raises that refusal when it runs (its place, its hint), and adds
        nothing to what the variables hold after the branch, as a `raise` does (a branch that never runs for the
        arguments at hand, `getattr(sp.sparse, X.format + "_array")(X)` for a sparse X, is never a refusal)."""
        mark = self.mark()
        try:
            return self.sub_block(fill)
        except UnsupportedSyntax as exc:
            # what the side changed, undone (the variables: sub_block kept them apart)
            (self.stmts, n, _, checks, dependencies, folds, self.held, self.written, self.writes,
             self.param_writes, state, self.argument_write) = mark
            del self.stmts[n:]
            del self.scalar_checks[checks:]
            del self.dependencies[dependencies:]
            del self.folds[folds:]
            self.state.restore(state)

            def refused() -> None:
                self.op(helpers.raise_exception, [Const(exc)], None, n_outs=0, checked=False)
                self.raises()
            return self.sub_block(refused)

    def join_if(self, cond: Atom, fill_then: Callable[[], None], fill_else: Callable[[], None], node: Any,
                deferred: bool = False) -> None:
        """Lower both branches and merge the variables they assign with phi values. deferred (an `if` statement's
        sides): a refusal on a side is raised only if that side runs (branch)."""
        side = self.branch if deferred else self.sub_block
        then_stmts, then_env = side(fill_then)
        else_stmts, else_env = side(fill_else)
        if (then_env.get(RAISED) is TRUE) != (else_env.get(RAISED) is TRUE):
            return self.join_raising(cond, then_stmts, then_env, else_stmts, else_env, node)
        self.join_states(then_stmts, then_env, else_stmts, else_env, node)
        then_res, else_res, outs = [], [], []
        # a side that has returned, broken or continued: what it leaves unbound is read after the branch only on
        # the other side's path (what follows is guarded by the flag)
        then_exits, else_exits = _exits(then_env), _exits(else_env)
        later: dict[str, bool] = {}         # name -> read after only inside other branches (asked when needed)
        # the names either branch set or removed (the others hold what they held before), in the order of the
        # keys of then_env, then else_env's others
        changed = {**then_env.written, **else_env.written}
        order = [((0, then_env.added[n]) if n in then_env else (1, else_env.added[n]), n) for n in changed
                 if n in then_env or n in else_env]
        for _, name in sorted(order):
            if name == EXITED:
                continue
            a, b = then_env.get(name, UNDEF), else_env.get(name, UNDEF)
            unbound = (a is UNDEF) != (b is UNDEF) and isinstance(node, gast.If) and (
                later[name] if name in later else later.setdefault(name, self.read_in_branches_after(node, name)))
            if unbound:
                # bound by one branch only and read after only inside other branches: unbound on the other path,
                # as in Python (`if dense: WH = ...` then `if dense: use WH` reads it where it is bound; a read
                # where it is not raises UnboundLocalError when it runs: name()). Read after unconditionally, it is
                # refused when lowered (name()).
                a, b = (Const(UNDEFINED), b) if a is UNDEF else (a, Const(UNDEFINED))
            if _same(a, b):
                self.env[name] = a
            elif (a is UNDEF and not then_exits) or (b is UNDEF and not else_exits) or (a is UNDEF and b is UNDEF):
                self.env[name] = UNDEF
                if name.startswith(STATE):
                    self.env.pop(name)
            else:
                a = Const(UNDEFINED) if a is UNDEF else a
                b = Const(UNDEFINED) if b is UNDEF else b
                out = self.namer.value(self.hints.get(name, name))
                then_res.append(a)
                else_res.append(b)
                outs.append(out)
                if unbound:
                    self.maybe_unbound.add(id(out))
                self.bases[id(out)] = self.bases_of(a) | self.bases_of(b)
                self.contents[id(out)] = self.contents_of(a) | self.contents_of(b)
                if id(a) in self.repeated or id(b) in self.repeated:
                    self.repeated.add(id(out))
                self.state.merge(out, [a, b])
                if id(a) in self.param_versions and id(b) in self.param_versions:
                    self.param_versions.add(id(out))
                if all(isinstance(v, Const) or id(v) in self.item_reads for v in (a, b)) \
                        and not (isinstance(a, Const) and isinstance(b, Const)):
                    # `left = u[i - 1] if i > 0 else 0.0`: a part read from u, or a constant (checked when it runs)
                    self.item_reads[id(out)] = out
                self.env[name] = out
        self.stmts.append(If(cond, Block(then_stmts, then_res), Block(else_stmts, else_res), outs,
                             self.parsed.loc(node)))

    def join_raising(self, cond: Atom, then_stmts: list, then_env: dict, else_stmts: list, else_env: dict,
                     node: Any) -> None:
        """A branch of which one side raises: after it, each variable holds what the other side left (a phi with
        UNDEFINED on the raising side where that value is made inside the branch)."""
        raising_then = then_env.get(RAISED) is TRUE
        live_env, live_stmts = (else_env, else_stmts) if raising_then else (then_env, then_stmts)
        made = {id(v) for stmt in walk(Block(live_stmts, [])) for v in stmt_defs(stmt)}
        then_res, else_res, outs = [], [], []
        for name in list(dict.fromkeys([*then_env, *else_env])):
            if name == EXITED:
                continue
            value = live_env.get(name, UNDEF)
            if not isinstance(value, Value) or id(value) not in made:
                self.env[name] = value
                continue
            out = self.namer.value(self.hints.get(name, name))
            (else_res if raising_then else then_res).append(value)
            (then_res if raising_then else else_res).append(Const(UNDEFINED))
            outs.append(out)
            self.bases[id(out)] = self.bases_of(value)
            self.contents[id(out)] = self.contents_of(value)
            if id(value) in self.repeated:
                self.repeated.add(id(out))
            if id(value) in self.param_versions:
                self.param_versions.add(id(out))
            if id(value) in self.item_reads:
                self.item_reads[id(out)] = out
            self.env[name] = out
        self.env.pop(RAISED, None)
        self.stmts.append(If(cond, Block(then_stmts, then_res), Block(else_stmts, else_res), outs,
                             self.parsed.loc(node)))

    def join_states(self, then_stmts: list, then_env: dict, else_stmts: list, else_env: dict, node: Any) -> None:
        """An object's location one branch wrote and the other did not (or forgot: an append): the other reads it
        back where it ends, when the location holds something now; else the value is no longer forwarded."""
        if not self.state.locations:         # (no object's location written or read so far: nothing to join)
            return
        keys = [k for k in dict.fromkeys([*then_env, *else_env]) if k.startswith(STATE)]
        for key in keys:
            a, b = then_env.get(key, UNDEF), else_env.get(key, UNDEF)
            if (a is UNDEF) == (b is UNDEF):
                continue
            stmts, env = (else_stmts, else_env) if b is UNDEF else (then_stmts, then_env)
            saved_stmts, saved_env = self.stmts, self.env
            self.stmts, self.env = stmts, env
            try:
                filled = self.state.fill(self.state.locations[key], node, carried=False)
            finally:
                self.stmts, self.env = saved_stmts, saved_env
            if filled is not None:
                env[key] = filled
            else:
                present = a if b is UNDEF else b
                then_env.pop(key, None)
                else_env.pop(key, None)
                # (marked at the end of the branch that wrote it, where the value is in scope: an object made in
                # that branch, or a value computed there)
                self.stmts, self.env = (then_stmts, then_env) if b is UNDEF else (else_stmts, else_env)
                try:
                    self.state.lost(self.state.locations[key], present, node)
                finally:
                    self.stmts, self.env = saved_stmts, saved_env

    def value_if(self, cond: Atom, then_expr: Callable[[], Atom], else_expr: Callable[[], Atom], node: Any,
                 hint: str, deferred: bool = False) -> Atom:
        """An expression-valued `If`: `then_expr() if cond else else_expr()` (deferred: as join_if's)."""
        saved = self.env.get(EXPR, UNDEF)

        def set_expr(make: Callable[[], Atom]) -> Callable[[], None]:
            return lambda: self.env.__setitem__(EXPR, make())
        self.join_if(cond, set_expr(then_expr), set_expr(else_expr), node, deferred=deferred)
        result = self.env.pop(EXPR)
        if saved is not UNDEF:
            self.env[EXPR] = saved
        if isinstance(result, Value) and result.hint == "" and hint:
            result.hint = hint
        return result

    def exit_flag(self, node: Any) -> Atom | None:
        """The flag that says the rest of the current statement list must be skipped."""
        flags = [self.env.get(n, FALSE) for n in (RET, BRK, CONT)]
        live = [f for f in flags if not (isinstance(f, Const) and not f.value)]
        if not live:
            return None
        if any(isinstance(f, Const) and f.value for f in live):
            return TRUE
        flag = live[0]
        for other in live[1:]:
            flag = self.op(operator.or_, [flag, other], node, "exiting")
        return flag

    # ---------------------------------------------------------------- function

    def close(self) -> None:
        """Drop the helpers that refer back to this lowerer (cycles): what lowering made is then freed by reference
        counting when its last reader drops it, not by a pass of the cyclic collector over a large heap."""
        self.loop_sharing = self.state = None

    def lower_function(self) -> Function:
        # the tables below are keyed by id(): a value dropped while lowering (a loop lowered again) must not hand
        # its id to a new one, which would read as sharing the old one's memory. Lowering outside a derivative
        # (the early refusals, a method's verdict) keeps its values alive itself
        with values_kept():
            return self._lower_function()

    def _lower_function(self) -> Function:
        node = self.parsed.node
        if node.args.kwonlyargs or node.args.posonlyargs:
            raise self.error("s2s does not support keyword-only or positional-only parameters yet", node,
                             hint="make them ordinary parameters")
        params = []
        known = self.parsed.facts.known
        for arg in node.args.args:
            v = self.namer.value(arg.id)
            params.append(v)
            self.env[arg.id] = self.env[f"$param:{arg.id}"] = v
            if arg.id in known:            # a method's `self`: the object its writes and reads are keyed by
                self.state.known_parameter(v, known[arg.id])
            elif arg.id in self.param_idents:
                self.state.idents[id(v)] = self.param_idents[arg.id]
        self.env.update(self.initial_state)
        self.param_bases = frozenset(id(p) for p in params)
        self.param_versions = {id(p) for p in params}
        self.env[RET], self.env[RETVAL] = FALSE, Const(None)
        self.env[BRK] = self.env[CONT] = FALSE       # flags are always bound, so branches join them
        self.block(node.body)
        result = self.env[RETVAL]
        if result is UNDEF:
            raise self.error("the function's return value may be undefined", node)
        shared = self.bases_of(result) | self.contents_of(result)
        written, finals = [], []
        for name, place in self.param_writes.items():
            final = self.env.get(name, UNDEF)
            if not isinstance(final, Value) or id(final) not in self.param_versions:
                raise self.error(f"{self.parsed.fn.__qualname__} writes into its argument {name!r}, which its "
                                 f"caller would see, and then binds {name!r} to another value", place,
                                 hint="return the array it fills instead, or write into a copy")
            written.append(node.args.args.index(next(a for a in node.args.args if a.id == name)))
            finals.append(final)
        own = self.parsed.fn          # its code and defaults, read now (a helper's defaults are folded in)
        made_from = synthetic_of(own)
        while made_from is not None and made_from.source_of is not None:
            # a specialization (desugar.objects.specialize: a clone held weakly, sharing the code and defaults of
            # the function it reads): those of that function, which lives as long as the caller can call it
            own = made_from.source_of
            made_from = synthetic_of(own)
        parts = [(PartsOf(own), part, getattr(own, part)) for part in FUNCTION_PARTS] \
            if isinstance(own, types.FunctionType) else []
        made = Function(node.name, params, Block(self.stmts, [result, *finals]), self.parsed.loc(node),
                        scalar_checks=self.scalar_checks,
                        dependencies=self.dependencies + list(self.parsed.attributes.values()) + parts,
                        result_shares=tuple(i for i, p in enumerate(params) if id(p) in shared),
                        param_writes=tuple(written),
                        writes_arguments=self.argument_write if self.written & self.param_bases else None)
        # what the desugaring folded on values known now, here and in what it inlines (the header shows them)
        made.folds = list(dict.fromkeys(self.parsed.folds + self.folds))      # type: ignore[attr-defined]
        # the objects' locations it writes (s2s/driver/effects.py saves and restores them), and its state for a
        # caller that inlines it (object_state.py)
        made.effects = list(self.state.effects)       # type: ignore[attr-defined]
        if len(self.call_stack) == 1:       # the arrays of objects it writes: read where they are read
            unheld(made, made.effects, lambda: self.namer.value("held"))
        # the attributes desugar/known_values.py folded, here and in what it inlines: (id(object), name)
        made.folded = self.folded | {(k[1], k[2]) for k in self.parsed.attributes       # type: ignore[attr-defined]
                                     if isinstance(k, tuple) and len(k) == 3 and k[0] in ("known", "known type")}
        made.object_state = self.state.summary()      # type: ignore[attr-defined]
        # its result may hold one object in two items (`return [z, z]`): a caller's `c[k] += v` checks it
        made.repeated = id(result) in self.repeated        # type: ignore[attr-defined]
        return made

    # ---------------------------------------------------------------- statements

    def block(self, stmts: list[gast.stmt]) -> None:
        for i, stmt in enumerate(stmts):
            self.stmt(stmt)
            if self.env.get(RAISED) is TRUE:        # what follows a raise never runs
                return
            flag = self.exit_flag(stmt)
            if flag is None:
                continue
            rest = stmts[i + 1:]
            if rest and not (isinstance(flag, Const) and flag.value):
                def run_rest(rest: list = rest) -> None:
                    for name in (RET, BRK, CONT):
                        if name in self.env:
                            self.env[name] = FALSE
                    self.block(rest)
                self.join_if(flag, lambda: self.env.__setitem__(EXITED, TRUE), run_rest, rest[0])
            return

    def stmt(self, node: gast.stmt) -> None:
        refusal = node.__dict__.get(REFUSAL)
        if refusal is not None:     # the fence's refusal on a side of an `if` (fence.py): raised if the side runs
            message, loc, hint = refusal
            raise UnsupportedSyntax(message, loc, hint=hint)
        method = _method(self, "stmt_", type(node))
        if method is None:
            raise self.error(f"s2s does not support the statement `{type(node).__name__}`", node)
        in_try = self.run_twice.get(id(node)) if self.run_twice else None
        if in_try is None:
            method(self, node)
            return
        start = len(self.stmts)         # a statement of a `try` body, which also runs as written (lower_try.py)
        method(self, node)
        refuse_when_run_twice(self, in_try, self.stmts[start:])

    def stmt_Pass(self, node: gast.Pass) -> None:
        pass

    def stmt_Try(self, node: gast.Try) -> None:
        lower_try(self, node)

    def unguarded(self, fill: Callable[[], None]) -> None:
        """Lower what runs whether or not the path has returned, broken or continued (a `finally` block): the
        flags are set aside while fill runs, then put back."""
        saved = {name: self.env[name] for name in (RET, BRK, CONT) if name in self.env}
        for name in saved:
            self.env[name] = FALSE
        fill()
        self.env.update(saved)

    def unbind(self, name: str, reason: tuple[str, str] | None = None) -> None:
        """name holds nothing Python would let this path read (a `try` body may have changed it before raising)."""
        self.env[name] = UNDEF
        if reason is not None:
            self.unbound_reasons[name] = reason

    def bound(self, name: str) -> bool:
        return self.env.get(name, UNDEF) is not UNDEF

    def may_exit(self, loop_only: bool = True) -> bool:
        """Whether the path may have broken or continued (or returned, unless loop_only): what it leaves in a
        variable then goes on to the loop's next iteration or past the loop (or to a `finally`)."""
        flags = (BRK, CONT) if loop_only else (BRK, CONT, RET)
        return any(not (isinstance(self.env.get(f, FALSE), Const) and self.env.get(f, FALSE).value is False)
                   for f in flags)

    def raises(self) -> None:
        """The path ends here with an exception."""
        self.env[RAISED] = TRUE

    def has_raised(self) -> bool:
        return self.env.get(RAISED) is TRUE

    @staticmethod
    def stored_names(nodes: list[gast.AST]) -> list[str]:
        return _stored_names(nodes)

    def stmt_Expr(self, node: gast.Expr) -> None:
        if isinstance(node.value, gast.Constant):      # a docstring or a bare constant
            return
        call = node.value
        if (isinstance(call, gast.Call) and isinstance(call.func, gast.Attribute) and call.func.attr == "append"
                and isinstance(call.func.value, gast.Name) and call.func.value.id in self.local_names
                and len(call.args) == 1 and not call.keywords):
            name = call.func.value.id
            if self.env.get(name, UNDEF) is UNDEF and self.parsed.resolve(name)[0]:
                raise self.error(f"s2s does not follow `{name}.append(...)` into a list the function does not own "
                                 f"(a global or an enclosing function's): the derivative would not append to it",
                                 node, hint="build a local list and return it (with has_aux=True), or log outside")
            items = self.writable(name, call.func.value, items_kept=True)
            self.env[name] = self.op(runtime.list_append, [items, self.expr(call.args[0])], node, name)
            return
        if (isinstance(call, gast.Call) and isinstance(call.func, gast.Attribute) and call.func.attr == "pop"
                and isinstance(call.func.value, gast.Name) and call.func.value.id in self.local_names
                and len(call.args) <= 1 and not call.keywords and self.env.get(call.func.value.id, UNDEF) is not UNDEF):
            name = call.func.value.id       # `xs.pop(i)` as a statement: xs bound to the list without item i
            items = self.writable(name, call.func.value, items_kept=True)
            self.env[name] = self.op(helpers.list_pop, [items, *[self.expr(a) for a in call.args]], node, name)
            return
        self.expr(node.value)
        if isinstance(call, gast.Call) and isinstance(call.func, gast.Constant) and call.func.value in _RAISING:
            self.env[RAISED] = TRUE

    def resolve_free(self, name: str) -> tuple[bool, Any]:
        """A free name's object; a function named this way is remembered, so that the derivative is made
        anew if the name is bound to another function later (a helper redefined in a notebook)."""
        found, obj = self.parsed.resolve(name)
        if found and callable(obj) and not isinstance(obj, types.ModuleType):
            # (a builtin too: one that the module defines later, `abs = ...`, is the module's from then on)
            self.dependencies.append((self.parsed.fn, name, obj))
        return found, obj

    def bases_of(self, atom: Any) -> frozenset:
        if not isinstance(atom, Value):
            return frozenset()
        return self.bases.get(id(atom), frozenset({id(atom)}))

    def contents_of(self, atom: Any) -> frozenset:
        return self.contents.get(id(atom), frozenset()) if isinstance(atom, Value) else frozenset()

    def dead_after(self, other: str, node: Any, mine: frozenset) -> bool:
        """Whether a write at node into the objects `mine` cannot be seen through the variable other: it is never
        read again (liveness.py), and the objects are not an argument's, which the caller sees."""
        return not mine & self.param_bases and self.liveness.dead_after(other, node)

    def writable(self, name: str, node: Any, items_kept: bool = False) -> Atom:
        """The value of a variable about to be written into (x[i] = v, xs.append(v), x += v on an
        array), refusing writes that Python would make visible through another name. items_kept: the write
        changes which items a list holds (append, pop), not the items, so an item read from it is not changed."""
        value = self.name(name, node)
        mine = self.bases_of(value)
        # (items read from this list itself, whose items are not the list)
        kept = {key for key, source in self.item_sources.items() if self.bases_of(source) & mine
                and not self.contents_of(source) & mine} if items_kept else set()
        for other, held in self.env.items():
            if other != name and not other.startswith("$") and isinstance(held, Value) and held is not value \
                    and id(held) not in kept \
                    and held in self.item_reads.values() and mine & self.bases_of(held) \
                    and not mine & self.contents_of(held):
                # `t = y[i]` then `y[i] = ...`: a number read from y is a copy; a row would be a view, which the
                # write would change: known when the derivative runs, where it is checked
                self.op(runtime._assert_element, [held, Const(other), Const(name)], node, n_outs=0)
                self.bases[id(held)] = frozenset({id(held)})
        for other, held in self.env.items():
            if other != name and not other.startswith("$") and isinstance(held, Value) and id(held) not in kept \
                    and other not in self.parsed.transient and mine & (self.bases_of(held) | self.contents_of(held)) \
                    and not self.dead_after(other, node, mine):
                how = "is the same object as" if held is value else "may share memory with"
                made = self.loop_sharing.made_by(mine & (self.bases_of(held) | self.contents_of(held)))
                raise self.error(f"{name!r} {how} {other!r} (a view, an alias or an item of it){made}: s2s does not "
                                 f"follow a write through one name to the other", node,
                                 hint=f"copy it first: {name} = {name}.copy()")
        if mine & self.held:
            raise self.error(f"{name!r} is held by an object (read from an attribute)"
                             f"{self.loop_sharing.made_by(mine & self.held)}: s2s does not follow a write "
                             f"into it to the object", node,
                             hint=f"copy it first ({name} = {name}.copy()) and pass the new value on, or return it")
        if len(self.call_stack) > 1 and mine & self.param_bases:
            param = self.env.get(f"$param:{name}")
            if not (isinstance(param, Value) and id(value) in self.param_versions
                    and mine & self.param_bases == {id(param)}):
                raise self.error(f"{self.parsed.fn.__qualname__} writes into its argument {name!r}, which its "
                                 f"caller would see", node, hint="return the new value instead, or write into a copy")
            self.param_writes.setdefault(name, node)     # `F[i] = ...` on its parameter F: the caller's F follows
        self.writes.add(name)
        self.written |= mine
        if mine & self.param_bases and self.argument_write is None:
            self.argument_write = self.inlined_write or self.parsed.loc(node)
        return value

    def stmt_Assign(self, node: gast.Assign) -> None:
        target = node.targets[0]
        hint = target.id if len(node.targets) == 1 and isinstance(target, gast.Name) else ""
        if (len(node.targets) == 1 and isinstance(target, (gast.Tuple, gast.List))
                and isinstance(node.value, (gast.Tuple, gast.List)) and len(target.elts) == len(node.value.elts)):
            values = [self.expr(v, self.target_hint(t)) for t, v in zip(target.elts, node.value.elts)]
            written = [self.bases_of(self.env.get(t.value.id)) for t in target.elts
                       if isinstance(t, gast.Subscript) and isinstance(t.value, gast.Name)]
            for k, (v, expression) in enumerate(zip(values, node.value.elts)):
                if isinstance(expression, gast.Subscript) and any(self.bases_of(v) & w for w in written) \
                        and _takes_part(expression.slice):
                    raise self.error("the right side reads a slice of an array that this assignment writes into: "
                                     "NumPy gives a view, which the first write changes, so this is not a swap",
                                     expression, hint="copy the right side first: a[:2], a[2:] = a[2:].copy(), "
                                                      "a[:2].copy()")
                if isinstance(expression, gast.Subscript) and any(self.bases_of(v) & w for w in written):
                    # `y[0], y[1] = y[1], y[0]` swaps numbers, but on rows the right side holds views that the
                    # first write changes: whether it is a number is known when the derivative runs
                    values[k] = self.op(runtime._element_read, [v], expression, self.target_hint(target.elts[k]))
            for t, v in zip(target.elts, values):
                self.assign(t, v)
            return
        value = self.expr(node.value, hint)
        for target in node.targets:
            self.assign(target, value)

    def stmt_AnnAssign(self, node: gast.AnnAssign) -> None:
        if node.value is not None:
            self.assign(node.target, self.expr(node.value, self.target_hint(node.target)))

    def stmt_AugAssign(self, node: gast.AugAssign) -> None:
        target = node.target
        if isinstance(target, gast.Subscript) and isinstance(target.value, gast.Name):
            # x[i] += v is x[i] = x[i] + v, reading the index once
            container = self.writable(target.value.id, target.value)
            index = self.expr(target.slice)
            current = self.op(operator.getitem, [container, index], node)
            self.item_in_place(target.value.id, container, current, node)
            updated = self.op(_BINOPS[type(node.op)], [current, self.expr(node.value)], node)
            self.env[target.value.id] = self.op(runtime.setitem, [container, index, updated], node,
                                                target.value.id)
            return
        if isinstance(target, (gast.Attribute, gast.Subscript)):
            self.augmented_store(node)
            return
        if not isinstance(target, gast.Name):
            raise self.error("s2s does not support augmented assignment into this target", node,
                             hint="assign a local variable")
        name = node.target.id
        current = self.name(name, node.target)
        mine = self.bases_of(current)
        if id(current) in self.item_reads and any(
                other != name and not other.startswith("$") and isinstance(held, Value)
                and mine & (self.bases_of(held) | self.contents_of(held)) for other, held in self.env.items()):
            # `s = b[i]` then `s -= ...`: a number read from b is a copy, a row a view (known when it runs), an
            # integer-array index a copy (the check compares memory with b)
            other, held = next(((o, h) for o, h in self.env.items() if o != name and not o.startswith("$")
                                and isinstance(h, Value) and h is not current
                                and mine & (self.bases_of(h) | self.contents_of(h))), ("the array", None))
            self.op(runtime._assert_number, [current, Const(name), Const(other)] + ([held] if held is not None else [])
                    + ([Const(_AUGMENTED[type(node.op)])] if type(node.op) is not gast.Add else []),
                    node, n_outs=0)
            mine = self.bases[id(current)] = frozenset({id(current)})
        sharing = [(other, held) for other, held in self.env.items()
                   if other != name and not other.startswith("$") and isinstance(held, Value)
                   and other not in self.parsed.transient and mine & (self.bases_of(held) | self.contents_of(held))
                   and not self.dead_after(other, node, mine)]
        if sharing:
            # on an array, `x += v` writes into the object `other` also names; on a number it does not (nor when
            # every other name holds a number: `x = x0; x += dt` with x0 a float makes x a new object)
            made = self.loop_sharing.made_by(mine & (self.bases_of(sharing[0][1]) | self.contents_of(sharing[0][1])))
            self.scalar_checks.append(((current, *(held for _, held in sharing)), self.parsed.loc(node),
                                       f"{name!r} may be the same array as {sharing[0][0]!r}{made}: `{name} "
                                       f"{_AUGMENTED[type(node.op)]}= ...` would change both"))
        elif mine & self.held:
            self.scalar_checks.append(((current,), self.parsed.loc(node),
                                       f"{name!r} may be an array an object holds (read from an attribute)"
                                       f"{self.loop_sharing.made_by(mine & self.held)}: `{name} "
                                       f"{_AUGMENTED[type(node.op)]}= ...` would change it in place, which s2s does "
                                       f"not follow to the object"))
        else:
            if len(self.call_stack) > 1 and mine & self.param_bases:
                self.scalar_checks.append(((current,), self.parsed.loc(node),
                                           f"{self.parsed.fn.__qualname__} changes its argument {name!r} in place "
                                           f"(`{name} {_AUGMENTED[type(node.op)]}= ...` on an array), which its "
                                           f"caller would see"))
        value = self.expr(node.value)
        self.env[name] = self.op(_BINOPS[type(node.op)], [current, value], node, name)

    def item_in_place(self, name: str, container: Atom, current: Atom, node: gast.AugAssign) -> None:
        """`c[k] += v`: Python runs `c[k] = c[k].__iadd__(v)`. On an array c, or on a number item, that is
        c[k] = c[k] + v, which the IR says. On an array item of a list, dict or tuple it writes into that array in
        place, which every other name and item holding it sees: refused when the derivative is made (a check on the
        kinds, Function.scalar_checks with IN_ARRAY) if anything else may hold it, the way `x += v` is."""
        mine = self.bases_of(current)         # (the item: c's objects and the objects c holds)
        sharing = [other for other, held in self.env.items()
                   if other != name and not other.startswith("$") and isinstance(held, Value)
                   and other not in self.parsed.transient and mine & (self.bases_of(held) | self.contents_of(held))
                   and not self.dead_after(other, node, mine)]
        symbol = f"{_AUGMENTED[type(node.op)]}="
        shown = f"{name}[...] {symbol} ..."
        if sharing:
            why = f"the item may be the same array as {sharing[0]!r}" \
                  f"{self.loop_sharing.made_by(mine & (self.bases_of(self.env[sharing[0]]) | self.contents_of(self.env[sharing[0]])))}"
        elif len(self.call_stack) > 1 and mine & self.param_bases:
            # (a helper writing into its caller's array, as for `x += v` on a parameter; the function
            # differentiated itself writes into its arguments' items as into its arguments, in the IR only)
            why = f"the item may be an array {self.parsed.fn.__qualname__}'s caller passed, which it would see"
        elif isinstance(container, Value) and id(container) in self.repeated:
            why = f"{name!r} may hold that array in another item too (`[a] * n`, or one array put in twice)"
        elif mine & self.held:
            why = f"the item may be an array an object holds{self.loop_sharing.made_by(mine & self.held)}"
        else:
            return
        self.scalar_checks.append(((current, IN_ARRAY, container), self.parsed.loc(node),
                                   f"`{shown}` on an array item of a list or dict writes into that array in place "
                                   f"(NumPy's {symbol}), and {why}: s2s does not follow the write to the other "
                                   f"names and items that hold it"))

    def augmented_store(self, node: gast.AugAssign) -> None:
        """`self.nfev += 1`, `self.d["n"] += 1`: read (or the value written before), computed, written back, the
        object and key evaluated once as Python does. A list or array attribute would be written in place:
        refused when it runs (runtime._held_number)."""
        target = node.target
        base = self.expr(target.value)
        if isinstance(target, gast.Attribute):
            current = self.state.read(base, "attr", target.attr, target, target.attr)
            shown = f"{_dotted(target.value)}.{target.attr}"
        else:
            index = self.expr(target.slice)
            if isinstance(index, Const) and _literal_key(index.value) and self.state.ident_of(base) is not None:
                current = self.state.read(base, "item", index.value, target, "")
            else:
                current = self.op(operator.getitem, [base, index], target)
            shown = f"{_dotted(target.value)}[...]"
        self.op(runtime._held_number, [current, Const(shown)], node, n_outs=0, checked=False)
        updated = self.op(_BINOPS[type(node.op)], [current, self.expr(node.value)], node,
                          target.attr if isinstance(target, gast.Attribute) else "")
        if isinstance(target, gast.Attribute):
            self.state.store_attribute(base, target.attr, updated, target)
        else:
            self.state.store_item(base, index, updated, target)

    def target_hint(self, target: gast.AST) -> str:
        return target.id if isinstance(target, gast.Name) else ""

    def assign(self, target: gast.AST, value: Atom) -> None:
        if isinstance(target, gast.Name):
            self.env[target.id] = value
        elif isinstance(target, (gast.Tuple, gast.List)):
            for i, elt in enumerate(target.elts):
                self.assign(elt, self.op(operator.getitem, [value, Const(i)], elt, self.target_hint(elt)))
        elif isinstance(target, gast.Subscript) and isinstance(target.value, gast.Name) \
                and target.value.id in self.local_names:
            name = target.value.id
            container = self.writable(name, target.value)
            index = self.expr(target.slice)
            self.env[name] = self.op(runtime.setitem, [container, index, value], target, name)
        elif isinstance(target, gast.Attribute):        # `self.h = v`: performed, and read back (object_state.py)
            self.state.store_attribute(self.expr(target.value), target.attr, value, target)
        elif isinstance(target, gast.Subscript):        # `self.d[k] = v`
            container = self.expr(target.value)
            self.state.store_item(container, self.expr(target.slice), value, target)
        else:
            raise self.error("s2s does not support assignment into this target", target,
                             hint="assign the item of a local variable, or build a new value")

    def stmt_Return(self, node: gast.Return) -> None:
        self.env[RETVAL] = self.expr(node.value) if node.value is not None else Const(None)
        self.env[RET] = TRUE

    def stmt_Break(self, node: gast.Break) -> None:
        self.env[BRK] = TRUE

    def stmt_Continue(self, node: gast.Continue) -> None:
        self.env[CONT] = TRUE

    def stmt_If(self, node: gast.If) -> None:
        cond = self.expr(node.test)
        self.join_if(cond, lambda: self.block(node.body), lambda: self.block(node.orelse), node, deferred=True)

    # ---------------------------------------------------------------- loops

    def loop_carried(self, body: list[gast.stmt], extra: list[str], loop: Any = None) -> list[str]:
        """The variables a loop carries: those it rebinds that are bound before it, and those it binds (its
        target included) that are read outside it, which hold their last value after it, as in Python
        (unbound, UNDEFINED, before a first iteration)."""
        if loop is not None:
            for name in self.read_after(loop):
                if self.env.get(name, UNDEF) is UNDEF:
                    self.env[name] = Const(UNDEFINED)
        names = [n for n in _stored_names(body) if n in self.env and self.env[n] is not UNDEF]
        return names + [n for n in extra if n not in names] + self.carried_state(loop)

    def carried_state(self, loop: Any) -> list[str]:
        """The objects' locations a loop's body writes (found by lowering it once: loop_state), carried like
        variables; those it changes in ways s2s does not follow, forgotten before it."""
        carry, drop, opaque = self.loop_state.get(id(loop), ((), (), False))
        if opaque:
            self.state.opaque_call(loop)
        if drop:
            self.state.drop(lambda location: location in drop, loop)
        names = []
        for location in carry:
            key = key_of(location)
            if self.env.get(key, UNDEF) is UNDEF:
                self.env[key] = self.state.fill(location, loop, carried=True)
            self.state.locations[key] = location
            self.hints[key] = self.state.hint(location)
            names.append(key)
        return names

    def loop_state_found(self, node: Any, entry: dict, entry_opaque: bool, envs: list[dict],
                         names: list[str]) -> None:
        """After a loop's body (and test) were lowered: the objects' locations it wrote or forgot that the loop
        does not carry yet. Raises _LoopState (lowered again, carrying them) if there are any."""
        carry, drop, opaque = self.loop_state.get(id(node), ((), (), False))
        carry, drop = set(carry), set(drop)
        before = (set(carry), set(drop))
        outer = self.state.made_before(entry) if self.state.classes else set()
        for env in envs if self.state.locations else ():     # (no object's location: nothing carried)
            for key in dict.fromkeys([*entry, *env]):
                if not key.startswith(STATE):
                    continue
                location = self.state.locations.get(key)
                a, b = entry.get(key, UNDEF), env.get(key, UNDEF)
                if location is None or a is b or location[0][0] == "new" and location[0] not in outer:
                    continue        # (an object an iteration makes: a new one in each, nothing to carry)
                if b is UNDEF:                  # forgotten in the body: forgotten before the loop
                    carry.discard(location)
                    drop.add(location)
                elif location not in drop:
                    carry.add(location)
        opaque_now = self.state.opaque and not entry_opaque
        if (carry, drop) != before or opaque_now and not opaque:
            raise _LoopState(node, (tuple(carry), tuple(drop), opaque or opaque_now))

    def mark(self) -> tuple:
        """What lowering a loop changes in the lowerer, to lower it again (loop_state)."""
        return (self.stmts, len(self.stmts), dict(self.env), len(self.scalar_checks), len(self.dependencies),
                len(self.folds), set(self.held), set(self.written), set(self.writes), dict(self.param_writes),
                self.state.snapshot(), self.argument_write)

    def rollback(self, mark: tuple) -> None:
        (self.stmts, n, env, checks, dependencies, folds, self.held, self.written, self.writes,
         self.param_writes, state, self.argument_write) = mark
        self.env.clear()
        self.env.update(env)
        del self.stmts[n:]
        del self.scalar_checks[checks:]
        del self.dependencies[dependencies:]
        del self.folds[folds:]
        self.state.restore(state)

    def lowered_loop(self, node: Any, lower: Callable[[], None]) -> None:
        """lower() a loop, again while its body writes objects' locations it does not carry yet."""
        while True:
            mark = self.mark()
            try:
                lower()
                return
            except _LoopState as exc:
                if exc.node is not node:
                    raise
                self.rollback(mark)
                self.loop_state[id(node)] = exc.found
            except LoopShares as exc:
                if exc.node is not node:
                    raise
                self.rollback(mark)
                self.loop_sharing.learn(exc)

    def read_in_branches_after(self, node: Any, name: str) -> bool:
        """Whether the function reads name outside node (a branch) only inside the branches of other `if`s: read
        where a correlated condition may have bound it."""
        if self._loads is None:
            self.read_after_loads()
        if self._guarded is None:           # id(name read) -> the `if` statements whose branches hold it
            self._guarded = {}

            def visit(n: Any, around: tuple) -> None:
                if type(n) is gast.Name and isinstance(n.ctx, gast.Load):
                    self._guarded[id(n)] = around
                    return
                if isinstance(n, gast.If):
                    visit(n.test, around)
                    for sub in n.body + n.orelse:
                        visit(sub, around + (id(n),))
                    return
                for child in gast.iter_child_nodes(n):
                    visit(child, around)
            visit(self.parsed.node, ())
        loads = self._loads.get(name, ())
        if not loads:
            return False
        inside = {id(n) for n in parsing.walk(node)}
        outside = [i for i in loads if i not in inside]
        return bool(outside) and all(set(self._guarded.get(i, ())) - {id(node)} for i in outside)

    def read_after_loads(self) -> None:
        self._loads = {}
        for n in parsing.walk(self.parsed.node):
            if type(n) is gast.Name and isinstance(n.ctx, gast.Load):
                self._loads.setdefault(n.id, []).append(id(n))

    def read_after(self, loop: Any) -> list[str]:
        """Names a loop binds that the function reads outside the loop."""
        if self._loads is None:          # one walk of the function for all its loops (lowering changes no node)
            self._loads = {}
            for n in parsing.walk(self.parsed.node):
                if type(n) is gast.Name and isinstance(n.ctx, gast.Load):
                    self._loads.setdefault(n.id, []).append(id(n))
        inside = {id(n) for n in parsing.walk(loop)}
        stored = _stored_names([loop.target, *loop.body] if isinstance(loop, gast.For) else loop.body)
        return [n for n in stored if any(i not in inside for i in self._loads.get(n, ()))]

    def carry_bases(self, carried: list[Value], inits: list[Atom]) -> None:
        for c, i in zip(carried, inits):
            if id(i) in self.param_versions:        # checked at the function's end: its last value must be one too
                self.param_versions.add(id(c))
            self.bases[id(c)] = self.bases_of(i) | {id(c)}
            self.contents[id(c)] = self.contents_of(i)
            if id(i) in self.repeated:
                self.repeated.add(id(c))
            if isinstance(i, Value) and id(i) in self.item_reads:
                # starts as a part read from an array (`s = b[i]` before `for j: s -= ...`): a number or a view,
                # which a write into it or into b checks when it runs
                self.item_reads[id(c)] = c

    def merge_bases(self, node: Any, names: list[str], carried: list[Value], results: list[Atom],
                    outs: list[Value], body: list) -> None:
        """After a loop: a variable's value may share memory with whatever an iteration left in it. A write
        into it inside the loop was checked against its first value only: refuse if later ones differ. A write
        into a new object made in the iteration (`v = u.copy()` then `v[i] = ...`, a Jacobi sweep) is not
        into the carried one, and needs nothing."""
        made = {id(v) for stmt in walk(Block(body, [])) for v in stmt_defs(stmt)}     # new in the iteration
        runs = range_length(node) if self.liveness.range_is_builtin else None      # (a literal range's length)
        for c, r, o in zip(carried, results, outs):
            if id(c) in self.param_versions and id(r) in self.param_versions:   # a parameter's array, written into
                self.param_versions.add(id(o))
        for name, c, r, o in zip(names, carried, results, outs):
            extra = self.bases_of(r) - self.bases_of(c) - ({id(r)} if id(r) in made else set())
            if extra and id(c) in self.written and not name.startswith("$"):
                raise self.error(f"{name!r} is written into inside a loop in which it may also become another "
                                 f"object: s2s does not follow that write", node,
                                 hint=f"assign a copy: {name} = ... .copy()")
            if runs == 0:               # `for k in range(0)`: what it started with
                self.bases[id(o)] = self.bases_of(c) - {id(c)} or self.bases_of(c)
                self.contents[id(o)] = self.contents_of(c)
                if id(c) in self.repeated:
                    self.repeated.add(id(o))
                continue
            if self.bases_of(r) <= self.bases_of(c) and self.bases_of(c) - {id(c)}:
                # every iteration left the object it started with (written into, not rebound): after the loop
                # it is the object the loop started with
                self.bases[id(o)] = self.bases_of(c) - {id(c)}
            else:
                self.bases[id(o)] = self.bases_of(c) | self.bases_of(r)
            self.contents[id(o)] = self.contents_of(c) | self.contents_of(r)
            if id(c) in self.repeated or id(r) in self.repeated or (self.contents_of(r) - self.contents_of(c)) - made:
                # (an iteration adds to the container an object made before the loop: the next adds it again)
                self.repeated.add(id(o))
        self.loop_sharing.found(node, names, carried, results, made)

    def finish_loop(self, body: list[gast.stmt], carried_names: list[str], outs: list[Value],
                    saved: dict[str, Any]) -> None:
        for name in _stored_names(body):
            self.env[name] = UNDEF               # assigned in the loop, and not read after it
        for name, out in zip(carried_names, outs):
            self.env[name] = out
        for name in (BRK, CONT):
            self.env[name] = saved.get(name, FALSE)

    def stmt_While(self, node: gast.While) -> None:
        self.lowered_loop(node, lambda: self.while_loop(node))

    def while_loop(self, node: gast.While) -> None:
        if node.orelse:
            raise self.error("s2s does not support `else` on a loop", node, hint="use a flag variable")
        extra = ([BRK] if _contains(node.body, gast.Break, False) else []) + \
                ([RET, RETVAL] if _contains(node.body, gast.Return, True) else [])
        self.make_while(node, node.body, extra, lambda: self.expr(node.test), lambda: self.block(node.body))

    def make_while(self, node: Any, body: list[gast.stmt], extra: list[str], test: Callable[[], Atom],
                   fill_body: Callable[[], None], carried_names: list[str] | None = None) -> None:
        saved = dict(self.env)
        names = carried_names or self.loop_carried(body, extra, node)
        inits = [FALSE if n == BRK else self.env[n] for n in names]
        carried = [self.namer.value(self.hints.get(n, n)) for n in names]
        self.carry_bases(carried, inits)
        self.loop_sharing.carry(node, names, carried)
        self.env.update(zip(names, carried))
        entry, entry_opaque, poison = dict(self.env), self.state.opaque, {k: dict(v) for k, v in self.state.poison.items()}
        self.state.loop_started()
        stop_flags = [c for n, c in zip(names, carried) if n in (BRK, RET)]

        def fill_test() -> None:
            if not stop_flags:
                self.env[EXPR] = test()
                return
            stop = stop_flags[0]
            for other in stop_flags[1:]:
                stop = self.op(operator.or_, [stop, other], node, "exiting")
            self.env[EXPR] = self.value_if(stop, lambda: FALSE, test, node, "")

        test_stmts, test_env = self.sub_block(fill_test)

        def fill() -> None:
            self.env[CONT] = FALSE
            for name in (BRK, RET):       # the test let the body run only while these are false
                if name in names:
                    self.env[name] = FALSE
            self.loop_frames.append((set(names), dict(self.env)))
            try:
                fill_body()
            finally:
                self.loop_frames.pop()
        body_stmts, body_env = self.sub_block(fill)
        self.state.loop_ended(poison, body_stmts, node)
        self.loop_state_found(node, entry, entry_opaque, [test_env, body_env], names)
        results = [body_env[n] for n in names]
        if any(r is UNDEF for r in results):
            raise self.error("a loop variable may be undefined at the end of an iteration", node)
        outs = [self.namer.value(c.hint) for c in carried]
        self.merge_bases(node, names, carried, results, outs, body_stmts)
        for c, i, r, o in zip(carried, inits, results, outs):
            self.state.merge(c, [i, r])
            self.state.merge(o, [c])
        self.stmts.append(While(inits, carried, Block(test_stmts, [test_env[EXPR]]), Block(body_stmts, results),
                                outs, self.parsed.loc(node)))
        self.finish_loop(body, names, outs, saved)

    def stmt_For(self, node: gast.For) -> None:
        self.lowered_loop(node, lambda: self.for_loop(node))

    def for_loop(self, node: gast.For) -> None:
        if node.orelse:
            raise self.error("s2s does not support `else` on a loop", node, hint="use a flag variable")
        if unrolled_over_objects(self, node):      # `for layer in self.layers:` of objects this call made
            return
        start, stop, step, reverse, bind = self.iteration(node)
        exits = _contains(node.body, gast.Break, False) or _contains(node.body, gast.Return, True)
        if exits:
            self.for_as_while(node, start, stop, step, reverse, bind)
            return
        saved = dict(self.env)
        names = self.loop_carried([node.target, *node.body], [], node)
        inits = [self.env[n] for n in names]
        carried = [self.namer.value(self.hints.get(n, n)) for n in names]
        self.carry_bases(carried, inits)
        self.loop_sharing.carry(node, names, carried)
        over_range = isinstance(node.iter, gast.Call) and self.static(node.iter.func)[1] in (range, reversed)
        index = self.namer.value(node.target.id if over_range and isinstance(node.target, gast.Name) else "i")
        self.env.update(zip(names, carried))
        entry, entry_opaque, poison = dict(self.env), self.state.opaque, {k: dict(v) for k, v in self.state.poison.items()}
        self.state.loop_started()

        def fill() -> None:
            self.env[CONT] = FALSE
            bind(index)
            self.loop_frames.append((set(names), dict(self.env)))
            try:
                self.block(node.body)
            finally:
                self.loop_frames.pop()
        body_stmts, body_env = self.sub_block(fill)
        self.state.loop_ended(poison, body_stmts, node)
        self.loop_state_found(node, entry, entry_opaque, [body_env], names)
        if any(body_env.get(n, UNDEF) is UNDEF for n in names):
            raise self.error("a loop variable may be undefined at the end of an iteration", node)
        outs = [self.namer.value(self.hints.get(n, n)) for n in names]
        self.merge_bases(node, names, carried, [body_env[n] for n in names], outs, body_stmts)
        for c, i, r, o in zip(carried, inits, [body_env[n] for n in names], outs):
            self.state.merge(c, [i, r])
            self.state.merge(o, [c])
        self.stmts.append(For(start, stop, step, index, inits, carried, Block(body_stmts, [body_env[n] for n in names]),
                              outs, reverse, self.parsed.loc(node)))
        self.finish_loop([node.target, *node.body], names, outs, saved)

    def for_as_while(self, node: gast.For, start: Atom, stop: Atom, step: Atom, reverse: bool,
                     bind: Callable[[Atom], None]) -> None:
        if reverse:
            raise self.error("s2s does not support `break` or `return` inside a loop over reversed(...)", node,
                             hint="loop forwards over the reversed indices")
        counter = f"$counter{len(self.hints)}"       # one per loop: loops nest
        self.hints[counter] = node.target.id if isinstance(node.target, gast.Name) else "i"
        self.env[counter] = start
        extra = ([BRK] if _contains(node.body, gast.Break, False) else []) + \
                ([RET, RETVAL] if _contains(node.body, gast.Return, True) else [])
        names = self.loop_carried([node.target, *node.body], [], node) + [counter] + extra

        def test() -> Atom:
            k = self.env[counter]
            if isinstance(step, Const) and step.value > 0:
                return self.op(operator.lt, [k, stop], node)
            if isinstance(step, Const) and step.value < 0:
                return self.op(operator.gt, [k, stop], node)
            distance = self.op(operator.sub, [k, stop], node)
            return self.op(operator.lt, [self.op(operator.mul, [distance, step], node), Const(0)], node)

        def fill_body() -> None:
            k = self.env[counter]
            self.env[counter] = self.op(operator.add, [k, step], node, "i")
            bind(k)
            self.block(node.body)
        self.make_while(node, node.body, extra, test, fill_body, carried_names=names)
        self.env.pop(counter, None)
        for name in _stored_names([node.target]):
            if name not in names:
                self.env[name] = UNDEF

    def iteration(self, node: gast.For) -> tuple[Atom, Atom, Atom, bool, Callable[[Atom], None]]:
        """(start, stop, step, reverse, bind) where bind(index) assigns the loop target for that index."""
        it = node.iter
        found, callee = self.static(it.func) if isinstance(it, gast.Call) else (False, None)
        reverse = False
        if found and callee is builtins.reversed and len(it.args) == 1 and isinstance(it.args[0], gast.Call):
            inner_found, inner = self.static(it.args[0].func)
            if inner_found and inner is builtins.range:
                it, callee, reverse = it.args[0], builtins.range, True
        if found and callee is builtins.range:
            args = [self.expr(a) for a in it.args]
            if not 1 <= len(args) <= 3 or it.keywords:
                raise self.error("range() takes one to three positional arguments here", it)
            start, stop, step = ([Const(0)] + args + [Const(1)])[:3] if len(args) == 1 else \
                (args + [Const(1)])[:3]
            if isinstance(step, Const) and step.value == 0:
                raise self.error("range() step must not be zero", it, cls=S2SError)
            if not isinstance(node.target, gast.Name):
                raise self.error("the target of a loop over range() must be a single name", node.target)
            name = node.target.id
            return start, stop, step, reverse, lambda index: self.env.__setitem__(name, index)
        if found and callee is builtins.enumerate:
            starts = it.args[1:] + [k.value for k in it.keywords if k.arg == "start"]
            if len(starts) > 1 or any(k.arg != "start" for k in it.keywords) or not it.args:
                raise self.error("enumerate() takes a sequence and one start here", it)
            offset = self.expr(starts[0]) if starts else Const(0)
            if not (isinstance(node.target, (gast.Tuple, gast.List)) and len(node.target.elts) == 2):
                raise self.error("unpack enumerate() into two names: `for i, v in enumerate(xs)`", node.target)
            count_target, item_target = node.target.elts
            n, bind_items = self.sequence(it.args[0], item_target, node)

            def bind_enumerate(index: Atom) -> None:
                count = index if _same(offset, Const(0)) else self.op(operator.add, [index, offset], node)
                self.assign(count_target, count)
                bind_items(index)
            return Const(0), n, Const(1), False, bind_enumerate
        n, bind_items = self.sequence(it, node.target, node)
        return Const(0), n, Const(1), False, bind_items

    def sequence(self, it: gast.expr, target: gast.AST, node: Any) -> tuple[Atom, Callable[[Atom], None]]:
        """(length, bind) for iterating over a sequence or zip(...) of sequences, by index."""
        found, callee = self.static(it.func) if isinstance(it, gast.Call) else (False, None)
        if found and callee is builtins.zip:
            seqs = [self.expr(a) for a in it.args]
            lengths = [self.op(len, [s], node, "n") for s in seqs]
            n = lengths[0] if len(lengths) == 1 else self.op(min, lengths, node, "n")
            targets = target.elts if isinstance(target, (gast.Tuple, gast.List)) else None
            if targets is None or len(targets) != len(seqs):
                raise self.error("unpack zip() into one name per sequence", target)

            def bind_zip(index: Atom) -> None:
                for t, s in zip(targets, seqs):
                    self.assign(t, self.op(operator.getitem, [s, index], node, self.target_hint(t)))
            return n, bind_zip
        seq = self.expr(it)
        if found and _lazy_iterator(callee, it, self):
            seq = self.op(list, [seq], node, "items")       # an iterator has no len(): read it whole, by index

        def bind_item(index: Atom) -> None:
            self.assign(target, self.op(operator.getitem, [seq, index], node, self.target_hint(target)))
        return self.op(len, [seq], node, "n"), bind_item

    # ---------------------------------------------------------------- expressions

    def static(self, node: gast.AST) -> tuple[bool, Any]:
        """(True, object) when node names a module-level object: `np`, `np.linalg.norm`, `math.sin`."""
        if isinstance(node, gast.Constant) and (callable(node.value) or isinstance(node.value, types.ModuleType)):
            # placed by the desugaring (a module: imported inside the function)
            return True, node.value
        if isinstance(node, gast.Name):
            if node.id in self.functions and self.env.get(node.id) is self.env.get(f"$param:{node.id}"):
                return True, self.functions[node.id]
            if node.id in self.local_names:       # `f = np.exp` then `f(x)`: a function held as a constant
                held = self.env.get(node.id)
                module = self.parsed.facts.known.get(node.id)
                if isinstance(module, types.ModuleType) and held is self.env.get(f"$param:{node.id}"):
                    return True, module           # a parameter given a module (`xp=np`), not rebound: its functions
                if isinstance(held, Const) and (callable(held.value) and not isinstance(held.value, type)
                                                or isinstance(held.value, types.ModuleType)):
                    return True, held.value       # (`xp = array_namespace(x)`, a module: `xp.sum(...)` is its sum)
                if isinstance(held, Value) and self.namespaces.get(id(held)) == "module":
                    return True, _ARRAY_API          # `xp, _ = get_namespace(X)`: NumPy's, checked when it runs
                return False, None
            return self.resolve_free(node.id)
        if isinstance(node, gast.Attribute):
            found, base = self.static(node.value)
            if found and isinstance(base, (types.ModuleType, type)):
                if not hasattr(base, node.attr):
                    raise self.error(f"module {getattr(base, '__name__', base)!r} has no attribute {node.attr!r}",
                                     node, cls=S2SError)
                value = getattr(base, node.attr)
                if is_user_function(plain_function(value)):
                    # `hmod.helper(x)`: made anew when the module's name is bound to another function
                    # (monkeypatched, or the module reloaded)
                    # (MISSING: a name a module's __getattr__ gives, as array_api_compat's namespaces do)
                    self.dependencies.append((AttributeOf(base), node.attr,
                                              inspect.getattr_static(base, node.attr, MISSING)))
                return True, value
        return False, None

    def name(self, name: str, node: gast.AST) -> Atom:
        if name in self.local_names:
            value = self.env.get(name, UNDEF)
            if isinstance(value, Value) and id(value) in self.maybe_unbound:      # as Python, when it runs
                self.op(runtime._bound, [value, Const(UNDEFINED), Const(name)], node, n_outs=0, checked=False)
            if value is UNDEF:
                if self.resolve_free(name)[0]:          # `RUNNING[:] = ...`, `STATS["calls"] += 1` on a global
                    raise self.error(f"{name!r} is a variable outside the function (a global or an enclosing "
                                     f"function's) that this function writes into; s2s does not follow a write "
                                     f"into data outside the differentiated function", node,
                                     hint=f"return the new value instead (`return loss, new_{name.lower()}`, with "
                                          f"has_aux=True) and store it after the call, or copy it into a local "
                                          f"variable first")
                reason = self.unbound_reasons.get(name)
                if reason is not None:
                    raise self.error(reason[0], node, hint=reason[1])
                raise self.error(f"variable {name!r} may be used before it is assigned", node, cls=S2SError,
                                 hint="assign it on every path before this line")
            return value
        found, obj = self.resolve_free(name)
        if not found:
            raise self.error(f"name {name!r} is not defined", node, cls=S2SError)
        if _is_constant_object(obj):
            return Const(obj)
        if isinstance(obj, np.matrix):      # `*` is its matrix product, `M[0]` a row: not the ndarray s2s reads
            raise self.error(f"{name!r} is a numpy.matrix, whose operators are not an ndarray's (`*` multiplies "
                             f"matrices); s2s differentiates code over ndarrays", node,
                             hint=f"keep np.asarray({name}) in the global instead, and write the matrix product with @")
        # read when the derivative runs, in the namespace of the function that names it
        return self.op(runtime.free_name, [Const(name), Const(self.parsed.fn)], node, name)

    def expr(self, node: gast.expr, hint: str = "") -> Atom:
        refusal = node.__dict__.get(REFUSAL)
        if refusal is not None:     # the fence's refusal in an operand `and`/`or`/`a if c else b` may skip (fence.py)
            message, loc, hint = refusal
            raise UnsupportedSyntax(message, loc, hint=hint)
        method = _method(self, "expr_", type(node))
        if method is None:
            raise self.error(f"s2s does not support the expression `{type(node).__name__}`", node)
        return method(self, node, hint)

    def expr_Constant(self, node: gast.Constant, hint: str) -> Atom:
        return Const(node.value)

    def expr_Name(self, node: gast.Name, hint: str) -> Atom:
        return self.name(node.id, node)

    def expr_Attribute(self, node: gast.Attribute, hint: str) -> Atom:
        found, obj = self.static(node)
        if found and not _is_constant_object(obj) and not library_owned(self.static(node.value)[1]):
            # data on the user's module or class (cfg.scale): read when the derivative runs, like a global
            return self.attribute(self.expr(node.value), node, hint or node.attr)
        if found:
            return Const(obj)
        base = self.expr(node.value)
        prim = _ATTRIBUTES.get(node.attr)
        if prim is not None:
            return self.op(prim, [base], node, hint)
        return self.attribute(base, node, hint)

    def attribute(self, base: Atom, node: gast.Attribute, hint: str) -> Atom:
        value = self.state.read(base, "attr", node.attr, node, hint)     # (written in this call: that value)
        if isinstance(value, Value):
            self.held.add(id(value))        # what an object holds: a write into it changes the object
        return value

    def expr_BinOp(self, node: gast.BinOp, hint: str) -> Atom:
        left, right = self.expr(node.left), self.expr(node.right)
        return self.op(_BINOPS[type(node.op)], [left, right], node, hint)

    def expr_UnaryOp(self, node: gast.UnaryOp, hint: str) -> Atom:
        operand = self.expr(node.operand)
        if isinstance(node.op, gast.USub) and isinstance(operand, Const) and isinstance(operand.value, (int, float)):
            return Const(-operand.value)
        return self.op(_UNARYOPS[type(node.op)], [operand], node, hint)

    def compare(self, op: gast.cmpop, left: Atom, right: Atom, node: Any, hint: str) -> Atom:
        if isinstance(op, (gast.In, gast.NotIn)):
            result = self.op(operator.contains, [right, left], node, hint)
            return self.op(operator.not_, [result], node, hint) if isinstance(op, gast.NotIn) else result
        return self.op(_COMPARE[type(op)], [left, right], node, hint)

    def expr_Compare(self, node: gast.Compare, hint: str) -> Atom:
        left = self.expr(node.left)
        right = self.expr(node.comparators[0])
        result = self.compare(node.ops[0], left, right, node, hint if len(node.ops) == 1 else "")
        if len(node.ops) == 1:
            return result
        rest = gast.Compare(left=node.comparators[0], ops=node.ops[1:], comparators=node.comparators[1:])
        gast.copy_location(rest, node)
        saved_right = right

        def more() -> Atom:
            # the middle operand is evaluated once, as Python does
            return self.compare_chain(saved_right, rest, node)
        return self.value_if(result, more, lambda: result, node, hint)

    def compare_chain(self, left: Atom, rest: gast.Compare, node: Any) -> Atom:
        right = self.expr(rest.comparators[0])
        result = self.compare(rest.ops[0], left, right, node, "")
        if len(rest.ops) == 1:
            return result
        tail = gast.Compare(left=rest.comparators[0], ops=rest.ops[1:], comparators=rest.comparators[1:])
        return self.value_if(result, lambda: self.compare_chain(right, tail, node), lambda: result, node, "")

    def expr_BoolOp(self, node: gast.BoolOp, hint: str) -> Atom:
        first = self.expr(node.values[0])
        if len(node.values) == 1:
            return first
        rest = gast.BoolOp(op=node.op, values=node.values[1:])
        gast.copy_location(rest, node)
        if isinstance(node.op, gast.And):
            return self.value_if(first, lambda: self.expr(rest), lambda: first, node, hint, deferred=True)
        return self.value_if(first, lambda: first, lambda: self.expr(rest), node, hint, deferred=True)

    def expr_IfExp(self, node: gast.IfExp, hint: str) -> Atom:
        cond = self.expr(node.test)
        return self.value_if(cond, lambda: self.expr(node.body, hint), lambda: self.expr(node.orelse, hint),
                             node, hint, deferred=True)

    def expr_Tuple(self, node: gast.Tuple, hint: str) -> Atom:
        items = [self.expr(e) for e in node.elts]
        if all(isinstance(i, Const) for i in items):
            return Const(tuple(i.value for i in items))
        return self.op(runtime.make_tuple, items, node, hint)

    def expr_List(self, node: gast.List, hint: str) -> Atom:
        return self.op(runtime.make_list, [self.expr(e) for e in node.elts], node, hint)

    def expr_Dict(self, node: gast.Dict, hint: str) -> Atom:
        if not all(isinstance(k, gast.Constant) for k in node.keys):
            raise self.error("s2s supports dicts whose keys are constants", node,
                             hint="use constant keys, such as {'W1': W1}")
        keys = tuple(k.value for k in node.keys)
        return self.op(runtime.make_dict, [Const(keys), *[self.expr(v) for v in node.values]], node, hint)

    def expr_Slice(self, node: gast.Slice, hint: str) -> Atom:
        parts = [self.expr(p) if p is not None else Const(None) for p in (node.lower, node.upper, node.step)]
        if all(isinstance(p, Const) for p in parts):
            return Const(slice(*(p.value for p in parts)))
        return self.op(slice, parts, node, hint)

    def expr_Subscript(self, node: gast.Subscript, hint: str) -> Atom:
        base = self.expr(node.value)
        index = self.expr(node.slice)
        if not hint and isinstance(index, Const) and isinstance(index.value, str) and index.value.isidentifier() \
                and not keyword.iskeyword(index.value):
            hint = index.value            # params["W1"] is called W1 (and its adjoint dW1)
        if isinstance(index, Const) and self.state.ident_of(base) is not None and _literal_key(index.value):
            return self.state.read(base, "item", index.value, node, hint)      # an object's dict: what it holds
        return self.op(operator.getitem, [base, index], node, hint)

    def expr_Call(self, node: gast.Call, hint: str) -> Atom:
        found, callee = self.static(node.func)
        if found and len(node.args) >= 2 and isinstance(node.args[1], gast.Constant) \
                and isinstance(node.args[1].value, str) and _runtime_method_call(callee):
            # `xp.linalg.slogdet(A)`, a method call the desugaring could not name (xp = get_namespace(A)), on what
            # lowering names as a module: the module's function
            held, module = self.static(node.args[0])
            if held and isinstance(module, types.ModuleType) and callable(getattr(module, node.args[1].value, None)):
                node = gast.copy_location(gast.Call(func=gast.Attribute(value=node.args[0], attr=node.args[1].value,
                                                                        ctx=gast.Load()),
                                                    args=node.args[2:], keywords=node.keywords), node)
                gast.copy_location(node.func, node)
                found, callee = self.static(node.func)
        callee = plain_function(callee)       # a call to an @njit function: its Python function, inlined
        if not found and isinstance(node.func, gast.Attribute):
            return self.method_call(node, hint)
        if not found and isinstance(node.func, (gast.Name, gast.Subscript)) and not node.keywords and not any(
                isinstance(a, gast.Starred) for a in node.args):
            # `layer(x)` on a variable: its class's __call__ once its kind is known (an argument object:
            # s2s/passes/methods.py), which refuses it otherwise (a function held in a variable is not named statically)
            called = self.expr(node.func)
            args = [self.expr(a) for a in node.args]
            return self.op(method_call(len(args)), [called, Const(helpers.CALL_OF_A_VALUE), *args], node, hint)
        if not found:
            raise self.error("s2s only differentiates calls to functions it can name statically", node,
                             hint="call the function by its name, not through a computed expression")
        if isinstance(getattr(callee, "__self__", None), np.ufunc) and getattr(callee, "__name__", "") == "at":
            raise self.error(f"s2s does not support np.{callee.__self__.__name__}.at, which changes the array it is "
                             f"given in place", node, hint="build the result instead: for sums over repeated indices, "
                             "out = out + np.bincount(idx, weights=w, minlength=out.size)")
        if callee in _MUTATING_FUNCTIONS:
            raise self.error(f"s2s does not support {getattr(callee, '__name__', callee)}, which changes the "
                             f"array it is given in place", node, hint="write with indexing on a copy: y = x.copy(); y[i] = v")
        if any(k.arg == "out" for k in node.keywords) or (isinstance(callee, np.ufunc) and len(node.args) > callee.nin):
            raise self.error(f"s2s does not support calls that write into an array they are given "
                             f"({getattr(callee, '__name__', callee)} with an output argument)", node,
                             hint="assign the result instead: y = np.exp(y)")
        args = [self.expr(a) for a in node.args]
        kwargs = {k.arg: self.expr(k.value) for k in node.keywords}
        if (getattr(callee, "__module__", None), getattr(callee, "__name__", None)) in helpers.NAMESPACE_FUNCTIONS:
            # `xp, _ = get_namespace(X)`: NumPy's namespace (checked when it runs); `xp.log(...)` is numpy.log
            result = self.op(helpers.numpy_namespace, [Const(callee), *args], node, hint or "namespace", kwargs)
            self.namespaces[id(result)] = "tuple" if callee.__name__.startswith("get_namespace") else "module"
            return result
        if is_user_function(callee):
            if not library_function(callee) and callee.__code__ not in GETTERS:
                return self.inline_call(callee, args, kwargs, node)
            kept = (len(self.stmts), dict(self.env), len(self.dependencies), len(self.folds))
            try:
                return self.inline_call(callee, args, kwargs, node)
            except S2SError as exc:        # a library's function s2s cannot read: called as it is (refused if it is
                note_unreadable(callee, exc)
                del self.stmts[kept[0]:]        # given a differentiated value and has no rule)
                self.env.clear()                # (in place: a caller may hold self.env's methods, value_if's)
                self.env.update(kept[1])
                del self.dependencies[kept[2]:]
                del self.folds[kept[3]:]
                obj = args[0].value if args and isinstance(args[0], Const) else next(
                    (s.args[0].value for s in reversed(self.stmts) if args and isinstance(s, Op)
                     and s.prim is helpers.live and s.outs == [args[0]] and isinstance(s.args[0], Const)), None)
                method = getattr(obj, callee.__name__, None) if obj is not None else None
                if getattr(getattr(method, "__func__", None), "__code__", None) is callee.__code__:
                    # `st.cauchy.logpdf(...)`: called as written, the bound method (named by its object)
                    callee, args = method, args[1:]
        if autograd_primitives.is_primitive(callee):      # `@autograd.extend.primitive`: autograd's defvjp/defjvp
            autograd_primitives.prepare(callee, len(args), list(kwargs), self.parsed.loc(node))
        rule = registry.find_adjoint(callee)
        defined = registry.definition(callee) if rule is None or _beyond(rule, args, kwargs) else None
        if defined is not None:                 # rules/definitions.py: np.ptp(x) is np.max(x) - np.min(x)
            if getattr(defined, "packed", False) and not kwargs:    # math.hypot(x, y, z): of the tuple (x, y, z)
                args = [self.op(runtime.make_tuple, args, node)]
            return self.inline_call(defined, args, kwargs, node)
        return self.op(callee, args, node, hint, kwargs)

    def inline_call(self, callee: types.FunctionType, args: list[Atom], kwargs: dict[str, Atom], node: Any) -> Atom:
        """A call to one of the user's functions is replaced by the callee's body (lowered once, cached)."""
        if callee in self.call_stack:         # a call of the function itself (lower_recursion.py)
            return recursive_call(self, callee, args, kwargs, node)
        callee = _read_for_star_call(callee, args, kwargs)
        try:
            bound = inspect.signature(callee).bind(*args, **kwargs)
        except TypeError as exc:
            raise self.error(f"the call to {callee.__qualname__} does not match its signature: {exc}", node,
                             cls=S2SError) from None
        given = set(bound.arguments)
        bound.apply_defaults()
        if set(bound.arguments) != given:       # defaults read now: replaced later, the callee is read again
            self.depend_on_defaults(callee)
        # a module given as an argument (`xp_promote(x, xp=xp)`, xp SciPy's NumPy namespace): the callee is read
        # specialized on it, so that what it decides (`if is_numpy(xp):`) is folded when it is read
        modules = {name: value.value for name, value in bound.arguments.items()
                   if isinstance(value, Const) and isinstance(value.value, types.ModuleType)}
        made = synthetic_of(callee)
        if modules and isinstance(callee, types.FunctionType) and (made is None or made.source_of is not None) \
                and not all(made is not None and made.facts.known.get(k) is v for k, v in modules.items()):
            base = made.source_of if made is not None else callee
            known = {**(made.facts.known if made is not None else {}), **modules}
            callee = specialize(base, known=known, arity=made.facts.arity if made is not None else None,
                                kwnames=made.facts.kwnames if made is not None else None)
        # functions passed as arguments (a layer's activation) are known here: the callee is lowered with them
        functions = {name: value.value for name, value in bound.arguments.items()
                     if isinstance(value, Const) and callable(value.value)}
        functions.update({name: value for name, value in bound.arguments.items()
                          if not isinstance(value, (Value, Const)) and callable(value)})
        known = getattr(synthetic_of(callee), "facts", None)
        known = known.known if known is not None else {}
        idents = {name: self.state.ident_of(value) for name, value in bound.arguments.items()
                  if isinstance(value, (Value, Const)) and name not in known}
        idents = {name: ident for name, ident in idents.items() if ident is not None and ident[0] in ("obj", "new")}
        if self.state.active() or idents:      # lowered inside this call's objects' state (not cached)
            body = Lowerer(parse_function(callee), call_stack=[*self.call_stack, callee], functions=functions,
                           state=self.state, param_idents=idents).lower_function()
        else:
            body = callee_ir(callee, [*self.call_stack, callee], functions)
        mapping: dict[int, Atom] = {}
        for param, name in zip(body.params, inspect.signature(callee).parameters):
            value = bound.arguments[name]
            mapping[id(param)] = value if isinstance(value, (Value, Const)) else Const(value)
        copy = clone_block(body.body, mapping, lambda v: self.namer.value(v.hint))
        self.scalar_checks += [(tuple(mapping.get(id(v), v) for v in values), loc, message)
                               for values, loc, message in body.scalar_checks]
        self.dependencies += body.dependencies
        self.folds += getattr(body, "folds", [])
        self.folded |= getattr(body, "folded", set())
        self.stmts.extend(copy.stmts)
        self.state.absorb(body, mapping)
        result = copy.results[0]
        for i, final in zip(body.param_writes, copy.results[1:]):
            self.follow_write(body.params[i].name, mapping[id(body.params[i])], final, callee, node,
                              body.writes_arguments)
        if getattr(body, "repeated", False) and isinstance(result, Value):
            self.repeated.add(id(result))
        if body.result_shares and isinstance(result, Value):     # `def interior(u): return u[1:-1]`: a view of u
            given = [mapping[id(body.params[i])] for i in body.result_shares]
            self.bases[id(result)] = self.bases_of(result).union(
                *(self.bases_of(a) | self.contents_of(a) for a in given))
        return result

    def depend_on_defaults(self, callee: Any) -> None:
        made = synthetic_of(callee)
        base = made.source_of if made is not None and made.source_of is not None else callee
        for name in ("__defaults__", "__kwdefaults__"):
            held = getattr(base, name, None)
            if held and not any(isinstance(o, DefaultsOf) and o.holder is base and n == name
                                for o, n, _ in self.dependencies):
                self.dependencies.append((DefaultsOf(base), name, held))

    def follow_write(self, param: str, given: Atom, final: Atom, callee: Any, node: Any, written_at: Any) -> None:
        """A helper wrote into the array given as its parameter param (`compute_forces(x, k, F)` filling F): the
        caller's variable that holds it is bound to the array as the helper left it, as Python's would show it."""
        names = [n for n, v in self.env.items() if v is given and not n.startswith("$")]
        if not isinstance(given, Value) or len(names) != 1:
            shown = "an array that is not a variable of the caller (a global, or an item)" if not names else \
                f"an array that {' and '.join(repr(n) for n in names)} name"
            raise self.error(f"{callee.__qualname__} writes into its argument {param!r}, {shown}; s2s follows such "
                             f"a write only into one local variable of the caller", node,
                             hint=f"pass a local array (`F = np.zeros_like(x)` then the call), or return the new value")
        name = names[0]
        if self.loop_frames and name not in self.loop_frames[-1][0] and self.env.get(name) is \
                self.loop_frames[-1][1].get(name):
            # `outs.append(...)` inside a helper called in a loop: the loop does not carry `outs` (nothing in it
            # assigns the name), so the write would be lost after it
            given_as = f" (its argument {param!r})" if param != name else ""
            raise self.error(f"{callee.__qualname__} writes into {name!r}{given_as} in a loop that does not assign "
                             f"{name!r}; s2s follows such a write only where the loop carries it", node,
                             hint=f"return it from the helper and assign it in the loop (`{name} = "
                                  f"{callee.__name__}(...)`), or write into it in the loop itself")
        self.inlined_write = written_at
        self.writable(name, node)           # the caller's own checks: views and aliases of it, its own parameters
        self.inlined_write = None
        if id(given) in self.param_versions:
            self.param_versions.add(id(final))
        self.bases[id(final)] = self.bases_of(given)
        self.contents[id(final)] = self.contents_of(given)
        self.env[name] = final

    def method_call(self, node: gast.Call, hint: str) -> Atom:
        """`x.sum(axis=0)` is `numpy.sum(x, axis=0)`: array methods are their NumPy functions."""
        if node.func.attr in _MUTATING_METHODS:
            raise self.error(f"s2s does not support `.{node.func.attr}()`, which changes the array in place",
                             node, hint=_NEW_ARRAY.get(node.func.attr, "build a new array and assign it"))
        if node.func.attr in ("append", "extend") and len(node.args) == 1 and not node.keywords:
            receiver = self.expr(node.func.value)
            if self.state.ident_of(receiver) is not None:       # `self.X.append(X)`: performed (object_state.py)
                self.state.append(receiver, node.func.attr, self.expr(node.args[0]), node)
                return Const(None)
        if node.func.attr in _CONTAINER_WRITES:
            # `self.vals.append(v)`, `rm.values.append(x)`, `acc.add(x)`: no array has these methods (numpy.append
            # returns a new array), so the receiver is a list, set or object whose change s2s would not follow
            raise self.error(f"s2s does not follow `.{node.func.attr}(...)` here: it changes a list, set or object "
                             f"that is not a list variable of this function (an attribute, an item, an argument)",
                             node, hint="build the list in a variable of the function (`vals = []`, then "
                                        "`vals.append(v)`) and pass it or return it; on an object of your class, "
                                        "return the new value from the method instead of storing it")
        base = self.expr(node.func.value) if _may_be_immutable(node.func.value) else None
        if base is not None:
            if isinstance(base, Const) and type(base.value) in _IMMUTABLE:
                # `label.split("-")` on a string is str.split, not numpy.split: Python's method, known now if it can be
                args = [self.expr(a) for a in node.args]
                known = None if node.keywords else _known_method_result([base, Const(node.func.attr), *args])
                if known is not None:
                    return known
                if not node.keywords:
                    return self.op(method_call(len(args)), [base, Const(node.func.attr), *args], node, hint)
        attr = _METHODS.get(node.func.attr, node.func.attr)
        function = runtime.item if attr == "item" and not node.args and not node.keywords else getattr(np, attr, None)
        if attr == "copy" and not node.args and not node.keywords:
            function = runtime.copy_method      # a list's copy is a list (np.copy would make an array of it)
        if not callable(function):
            list_way = {"pop": "read the item, then pop in a statement of its own: `y = xs[0]; xs.pop(0)` (s2s "
                               "reads xs.pop(i) on a local list in a statement that reads xs nowhere else)",
                        "remove": "`xs = [v for v in xs if v != item]`", "clear": "`xs = []`"}.get(
                attr, "a new list or dict built from the old one")
            raise self.error(f"s2s does not support the method call `.{attr}()` (there is no numpy.{attr} it "
                             f"could be read as)", node,
                             hint=f"on a list or dict, bind the name to a new one: {list_way}; on an object of "
                                  f"your class, pass the object to the function as an argument")
        if base is None:
            base = self.expr(node.func.value)
        args = [self.expr(a) for a in node.args]
        kwargs = {k.arg: self.expr(k.value) for k in node.keywords}
        packed = attr in ("reshape", "transpose") and len(args) > 1
        if packed:       # x.reshape(2, 3) is np.reshape(x, (2, 3))
            args = [Const(tuple(a.value for a in args)) if all(isinstance(a, Const) for a in args)
                    else self.op(runtime.make_tuple, args, node)]
        made = len(self.stmts)
        out = self.op(function, [base, *args], node, hint, kwargs)
        if not packed and len(self.stmts) > made and isinstance(self.stmts[-1], Op) and \
                self.stmts[-1].prim is function and self.stmts[-1].outs == [out]:
            self.stmts[-1].method = node.func.attr          # (an object's method, if base is not an array)
        return out


def _runtime_method_call(callee: Any) -> bool:
    """Whether callee is the desugaring's call of a method of an object known only when the code runs."""
    from s2s.rules import nested
    return callee is helpers.call_method or any(callee is made for made in nested._METHOD_CALLS.values())


class _ArrayAPI(types.ModuleType):
    """NumPy under the array API's names (`xp.concat`, `xp.pow`): what an array namespace is for NumPy arrays."""

    def __getattr__(self, name: str) -> Any:
        return getattr(np, {"concat": "concatenate", "pow": "power", "acos": "arccos", "asin": "arcsin",
                            "atan": "arctan", "atan2": "arctan2", "acosh": "arccosh", "asinh": "arcsinh",
                            "atanh": "arctanh", "bitwise_invert": "invert"}.get(name, name))


_ARRAY_API = _ArrayAPI("numpy")


def _known_method_result(args: list[Atom]) -> Const | None:
    """`obj.name(*rest)` computed now, when obj is a constant of an immutable type and every argument and the
    result are literal values (numbers, strings, None, tuples of them); None when not, or when it raises (it
    raises when the derivative runs, as in Python)."""
    if not all(isinstance(a, Const) for a in args):
        return None
    obj, name, *rest = (a.value for a in args)
    if not (type(obj) in _IMMUTABLE and _literal(obj) and isinstance(name, str) and not name.startswith("_")
            and all(_literal(r) for r in rest)):
        return None
    try:
        result = getattr(obj, name)(*rest)
    except Exception:
        return None
    return Const(result) if _literal(result) else None


def _may_be_immutable(node: Any) -> bool:
    """Whether a method's receiver may be a constant (a literal, or a name that may hold one): it is lowered first."""
    return isinstance(node, (gast.Constant, gast.Name))


def _literal(value: Any) -> bool:
    if type(value) in (tuple, frozenset):
        return all(_literal(v) for v in value)
    return type(value) in (type(None), bool, int, float, complex, str, bytes)


def _literal_key(key: Any) -> bool:
    if type(key) is tuple:
        return all(_literal_key(k) for k in key)
    return type(key) in (str, int, bool, type(None), bytes)


def _dotted(node: Any) -> str:
    """`self.d` as the code spells it (for a message)."""
    if isinstance(node, gast.Name):
        return node.id
    if isinstance(node, gast.Attribute):
        return f"{_dotted(node.value)}.{node.attr}"
    return "..."


def _is_constant_object(obj: Any) -> bool:
    """Modules, functions and types are named statically; data is read when the code runs."""
    return isinstance(obj, (types.ModuleType, type, types.FunctionType, types.BuiltinFunctionType, np.ufunc)) \
        or callable(obj)


_CALLEE_IR = FunctionTable()      # callee -> {the functions it was given: its IR}; freed with it (s2s/kept.py)


def clear_callee_cache() -> None:
    _CALLEE_IR.clear()


def callee_ir(callee: types.FunctionType, call_stack: list, functions: dict[str, Any]) -> Function:
    by_functions = _CALLEE_IR.setdefault(callee, {})
    key = tuple(sorted((name, id(f)) for name, f in functions.items()))
    fn = by_functions.get(key)
    if fn is None:
        fn = Lowerer(parse_function(callee), call_stack=call_stack, functions=functions).lower_function()
        by_functions[key] = fn
    return fn


def lower(parsed: ParsedFunction) -> Function:
    lowerer = Lowerer(parsed, call_stack=[parsed.fn])
    try:
        return lowerer.lower_function()
    finally:
        lowerer.close()


def _beyond(rule: Any, args: list, kwargs: dict) -> bool:
    """Whether a call passes more arguments than the adjoint rule of a function that also has a definition takes
    (`math.hypot(x, y, z)`: the rule is the two coordinates', the definition any number's)."""
    try:
        taken = _RULE_ARGUMENTS.get(rule, _UNSEEN)
    except TypeError:           # (not weakly referable)
        taken = None
    if taken is _UNSEEN or taken is None:   # (inspect.signature at every call of math.sin: a tenth of lowering)
        try:
            taken = len(inspect.signature(rule).parameters) - 2
        except (TypeError, ValueError):
            taken = False
        try:
            _RULE_ARGUMENTS[rule] = taken
        except TypeError:
            pass
    return taken is not False and len(args) + len(kwargs) > taken


_UNSEEN = object()
_RULE_ARGUMENTS: "weakref.WeakKeyDictionary[Any, int | bool]" = weakref.WeakKeyDictionary()    # rule -> arguments


_NODE_METHODS: dict[tuple, Any] = {}


def _method(lowerer: Any, prefix: str, cls: type) -> Any:
    """The Lowerer's method for a node class (`expr_BinOp`), unbound, or None: looked up once per class (a name
    formatted and looked up at every node was a tenth of lowering)."""
    key = (lowerer.__class__, prefix, cls)
    try:
        return _NODE_METHODS[key]
    except KeyError:
        found = _NODE_METHODS[key] = getattr(lowerer.__class__, prefix + cls.__name__, None)
        return found


def _read_for_star_call(callee: Any, args: list, kwargs: dict) -> Any:
    """A function with `*args` or `**kwargs` that lowering names (`xp.zeros_like(x)`, the namespace known only
    here): read for this call, its star-parameters of the lengths the call gives (as desugaring reads a call it
    names: objects._specialize_call), bound by its code's own signature (a wrapper may carry another's)."""
    code = getattr(callee, "__code__", None)
    if code is None or not code.co_flags & (inspect.CO_VARARGS | inspect.CO_VARKEYWORDS):
        return callee
    made = synthetic_of(callee)
    if made is not None and (made.facts.arity or made.facts.kwnames):
        return callee
    from s2s.frontend.desugar.specialization import code_signature
    try:
        bound = code_signature(callee).bind(*args, **kwargs)
    except TypeError:
        return callee
    params = code_signature(callee).parameters.values()
    arity = {p.name: len(bound.arguments.get(p.name, ())) for p in params if p.kind is p.VAR_POSITIONAL}
    kwnames = {p.name: tuple(bound.arguments.get(p.name, {})) for p in params if p.kind is p.VAR_KEYWORD}
    base = made.source_of if made is not None and made.source_of is not None else callee
    return specialize(base, known=made.facts.known if made is not None else None, arity=arity, kwnames=kwnames,
                      classes=made.facts.classes if made is not None else None)
