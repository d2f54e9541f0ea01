"""s2s.vmap's pipeline and cache: from a function, in_axes and out_axes and the arguments to a compiled batched
function.

`call(fn, spec, args)` checks in_axes against the arguments (one clear error naming the argument and the place),
finds the batch size (every batched leaf must agree), takes one example (the arguments at index 0 along their
axes) and makes, once per function, axes, argument kinds and shapes: one example's IR, specialized on one example's
shapes (a primal function as a derivative's base is prepared; a derivative s2s made, or a function s2s.vmap made,
its own IR), batched by s2s/transforms/batching.py, optimized like a derivative, emitted and compiled. The batched
code moves a batch axis given at another position to the front first, and an output's batch axis where out_axes
puts it. Where no exact batched form exists, the batched code loops over the batch, and its header says so.

`BatchSpec.batched_ir` is how the pipeline reads a function s2s.vmap made, to differentiate it or batch it again.
"""
from __future__ import annotations

import dataclasses
import operator
import os
import threading
import warnings
import weakref
from dataclasses import dataclass
from typing import Any, Callable, Sequence

import numpy as np

from s2s import runtime
from s2s.analysis import complex_values
from s2s.analysis.values import Abstract, Items, abstract_of, kind_of
from s2s import trees
from s2s.driver import dispatch, objects, pipeline, primal, selfcheck
from s2s.driver.compile import collection_paused, compile_function
from s2s.driver.primal import primal_ir, root_function
from s2s.passes.methods import inline_methods, refuse_indexing
from s2s.emit.python import emit_module
from s2s.passes.fresh_outputs import own_outputs
from s2s.errors import BadArgument, S2SError
from s2s.ir.core import UNDEFINED, Block, check_fails, Const, For, Function, If, Op, Value, checked, clone_block, stmt_blocks, values_kept, verify, walk
from s2s.ir.naming import Namer
from s2s.analysis.activity import value_kinds
from s2s.analysis.shapes import infer
from s2s.passes.specialize import shape_facts
from s2s.rules.batching import _stack_rows
from s2s.transforms.batching import NotBatchable, batch_function, state_of_kind

__all__ = ["BatchSpec", "call", "normalize_axes"]


@dataclass(frozen=True)
class BatchSpec:
    """What s2s.vmap was given: in_axes and out_axes (normalized: None, an int, or a tuple/dict tree of them)."""
    in_axes: Any = 0
    out_axes: Any = 0
    optimize: Any = True

    # the pipeline reads a function s2s.vmap made through this (s2s/driver/pipeline.py's function_ir)
    def batched_ir(self, fn: Callable, kinds: Sequence[Any], shapes: Any) -> Function:
        return batched_ir(fn, self, kinds, shapes)


def normalize_axes(axes: Any) -> Any:
    """in_axes or out_axes as a hashable tree: lists as tuples, dicts as sorted (key, axes) tuples marked."""
    if axes is None or isinstance(axes, int) and not isinstance(axes, bool):
        return axes
    if isinstance(axes, (tuple, list)):
        return tuple(normalize_axes(a) for a in axes)
    if isinstance(axes, dict):
        return _Keyed(tuple((k, normalize_axes(v)) for k, v in axes.items()))
    raise BadArgument(f"in_axes and out_axes are made of ints, None, tuples, lists and dicts, not "
                      f"{type(axes).__name__} {axes!r:.40}")


@dataclass(frozen=True)
class _Keyed:
    """A dict of axes, hashable."""
    items: tuple

    def as_dict(self) -> dict:
        return dict(self.items)


def _plain(axes: Any) -> Any:
    """A normalized tree back as Python's: dicts for _Keyed."""
    if isinstance(axes, _Keyed):
        return {k: _plain(v) for k, v in axes.items}
    if isinstance(axes, tuple):
        return tuple(_plain(a) for a in axes)
    return axes


# ---------------------------------------------------------------- the arguments

def _names(fn: Callable, count: int) -> list[str]:
    root = root_function(fn)
    code = getattr(root, "__code__", None)
    names = list(code.co_varnames[:code.co_argcount]) if code is not None else []
    return names + [f"argument {k}" for k in range(len(names), count)]


def _leaves(value: Any, axes: Any, path: str, name: str, found: list) -> Any:
    """Check axes against value's structure; append (path, leaf, axis) for every batched leaf. Returns the axes
    tree with every int made non-negative, shaped like value."""
    if isinstance(axes, _Keyed):
        if not isinstance(value, dict):
            raise BadArgument(f"in_axes gives a dict for {name}{path}, which is a {type(value).__name__}")
        given = axes.as_dict()
        if set(given) != set(value):
            raise BadArgument(f"in_axes for {name}{path} has the keys {sorted(given, key=str)}, the argument "
                              f"{sorted(value, key=str)}")
        return _Keyed(tuple((k, _leaves(value[k], given[k], f"{path}[{k!r}]", name, found)) for k in value))
    if isinstance(axes, tuple):
        if not isinstance(value, (tuple, list)) or isinstance(value, np.ndarray):
            raise BadArgument(f"in_axes gives a tuple of {len(axes)} for {name}{path}, which is a "
                              f"{type(value).__name__}", hint="give an int (or None) for an array argument")
        if len(axes) != len(value):
            raise BadArgument(f"in_axes for {name}{path} has {len(axes)} entries, the argument holds {len(value)} "
                              f"items")
        return tuple(_leaves(v, a, f"{path}[{k}]", name, found) for k, (v, a) in enumerate(zip(value, axes)))
    if axes is None:
        return None
    if isinstance(value, dict):
        return _Keyed(tuple((k, _leaves(v, axes, f"{path}[{k!r}]", name, found)) for k, v in value.items()))
    if isinstance(value, (tuple, list)) and not isinstance(value, np.ndarray):
        return tuple(_leaves(v, axes, f"{path}[{k}]", name, found) for k, v in enumerate(value))
    ndim = np.ndim(value)
    if not isinstance(value, np.ndarray) and not runtime._foreign(value):
        shown = f"a {type(value).__name__}" if not isinstance(value, (int, float, complex)) else f"the number {value!r}"
        raise BadArgument(f"in_axes={axes} batches {name}{path}, which is {shown}, not an array",
                          hint=f"give None in in_axes for {name}{path} (the same for every example), or pass an array")
    if not -ndim <= axes < ndim:
        raise BadArgument(f"in_axes={axes} for {name}{path} is out of range: it has the shape {np.shape(value)}",
                          hint=f"the batch axis of {name}{path} is one of {list(range(-ndim, ndim)) or 'none'}")
    axis = axes % ndim
    found.append((f"{name}{path}", value, axis))
    return axis


def _expand(in_axes: Any, args: tuple, fn: Callable) -> list:
    """in_axes, one tree per argument."""
    if isinstance(in_axes, int) or in_axes is None:
        return [in_axes] * len(args)
    if isinstance(in_axes, _Keyed):
        raise BadArgument("in_axes is a dict: give a tuple with one entry per positional argument")
    if len(in_axes) != len(args):
        names = _names(fn, len(args))[:len(args)]
        raise BadArgument(f"in_axes has {len(in_axes)} entries, and {root_function(fn).__qualname__} was given "
                          f"{len(args)} arguments ({', '.join(names)})",
                          hint="give one entry per positional argument: an int (the batch axis), None, or a tree "
                               "like the argument")
    return list(in_axes)


def _take(value: Any, axes: Any) -> Any:
    """One example: value at index 0 along each batched leaf's axis."""
    if axes is None:
        return value
    if isinstance(axes, _Keyed):
        given = axes.as_dict()
        return {k: _take(v, given[k]) for k, v in value.items()}
    if isinstance(axes, tuple):
        items = [_take(v, a) for v, a in zip(value, axes)]
        return type(value)(*items) if hasattr(type(value), "_fields") else type(value)(items)
    return np.take(value, 0, axis=axes)


def check_arguments(fn: Callable, spec: BatchSpec, args: tuple) -> tuple[list, int]:
    """(the axes of each argument, non-negative, shaped like it; the batch size)."""
    trees = _expand(spec.in_axes, args, fn)
    names = _names(fn, len(args))
    found: list = []
    axes = [_leaves(a, t, "", names[k], found) for k, (a, t) in enumerate(zip(args, trees))]
    if not found:
        raise BadArgument(f"s2s.vmap of {root_function(fn).__qualname__}: in_axes batches no argument",
                          hint="give the batch axis (an int) of at least one array argument")
    sizes = [(where, np.shape(leaf)[axis]) for where, leaf, axis in found]
    first = sizes[0]
    for where, size in sizes[1:]:
        if size != first[1]:
            raise BadArgument(f"the batch sizes differ: {first[0]} has {first[1]} examples along its batch axis, "
                              f"{where} has {size}", hint="every batched argument needs the same number of examples")
    if first[1] == 0:
        raise BadArgument(f"{first[0]} has no example along its batch axis (a batch of size 0)")
    return axes, first[1]


# ---------------------------------------------------------------- one example's IR, batched

def example_ir(fn: Callable, kinds: list, shapes: list, optimize: Any) -> Function:
    """The IR of fn for one example of these kinds and shapes, prepared as a derivative's base is (or the IR of a
    derivative s2s made, specialized on these shapes, or of a function s2s.vmap made)."""
    derived = getattr(fn, "__s2s__", None)
    if derived is not None:
        inner, options = derived
        if isinstance(options, BatchSpec):
            return batched_ir(inner, options, kinds, shapes)
        if options.mode in ("jacobian",) or options.checkpoint is not None:
            raise S2SError(f"s2s.vmap batches functions, gradients, jvp, vjp and Hessian-vector products, not "
                           f"this {options.mode} of {root_function(fn).__qualname__}",
                           hint="vmap the function, and take its jacobian outside (s2s.jacobian(s2s.vmap(f)))")
        passes = options.optimize
        if passes is True:
            passes = tuple(p for p in pipeline.PASSES if p not in ("in_place", "sink"))
        elif passes:
            passes = tuple(p for p in passes if p not in ("in_place", "sink"))
        inner_options = dataclasses.replace(options, optimize=passes)
        return pipeline.derivative_ir(inner, inner_options, kinds, shapes if pipeline.specializes(inner_options)
                                      else None)
    from s2s.analysis.activity import value_kinds
    from s2s.errors import UnsupportedSyntax
    from s2s.passes import sequences
    from s2s.passes.unroll import unroll
    with values_kept():
        base = pipeline.function_ir(fn, kinds, shapes)
        refuse_indexing(base, kinds)
        base = checked(sequences.resolve(base, kinds))
        base = checked(inline_methods(base, kinds, primal_ir))
        if base.scalar_checks:
            found = value_kinds(base, kinds)
            for values, loc, message in base.scalar_checks:
                if check_fails(found, values):
                    raise UnsupportedSyntax(message, loc, hint="copy it first, or write `x = x + ...`")
        if optimize:
            base = checked(unroll(base, kinds))
            passes = optimize if optimize is not True else True
            base = pipeline.optimize_ir(base, kinds, [], passes, final=False, shapes=shapes)
        return base


def _abstract(x: Any) -> Any:
    """abstract_of(x), a namedtuple's items too (a record of an object's fields: s2s/driver/objects.py)."""
    if isinstance(x, tuple) and hasattr(type(x), "_fields") and len(x) <= 64:
        return Items("tuple", tuple(range(len(x))), tuple(_abstract(v) for v in x))
    if type(x) in (tuple, list) and len(x) <= 64:
        found = abstract_of(x)
        if isinstance(found, Items):
            return Items(found.kind, found.keys, tuple(_abstract(v) for v in x))
        return found
    if type(x) is dict and len(x) <= 64 and all(type(k) in (str, int) for k in x):
        return Items("dict", tuple(x), tuple(_abstract(v) for v in x.values()))
    return abstract_of(x)


def _shape_key(args: tuple) -> tuple:
    """What the batched code depends on beyond kinds: every array's shape, inside containers (namedtuples
    too)."""
    def key(a: Any) -> Any:
        if type(a) is np.ndarray:
            return a.shape
        if isinstance(a, (tuple, list)):
            return tuple(key(v) for v in a)
        if type(a) is dict:
            return tuple((k, key(v)) for k, v in a.items())
        return None
    return tuple(key(a) for a in args)


def _facts(fn: Function, shapes: list) -> dict:
    """The abstract value of every value of fn (one example's), from its parameters' (s2s/analysis/shapes.py). A
    phi one branch leaves undefined (None: `return` inside an `if`) has the other branch's."""
    s = shape_facts(fn, list(shapes))
    env = {id(v): a for v, a in s.facts.items() if a is not None}

    def full(atom: Any) -> Any:
        return abstract_of(atom.value) if isinstance(atom, Const) else env.get(id(atom))
    for _ in range(3):              # what a missing fact hid from the shape rules, found once it is known
        grew = False
        for stmt in walk(fn.body):
            if isinstance(stmt, Op) and len(stmt.outs) == 1 and id(stmt.outs[0]) not in env:
                found = _sliced(stmt, full) or infer(stmt, full) or _trial(stmt, env)
                if found is not None:
                    env[id(stmt.outs[0])] = found
                    grew = True
        if not grew:
            break
    for stmt in walk(fn.body):
        if isinstance(stmt, If):
            for o, a, b in zip(stmt.outs, stmt.then.results, stmt.orelse.results):
                if id(o) in env:
                    continue
                for x, y in ((a, b), (b, a)):
                    if isinstance(y, Const) and (y.value is None or y.value is UNDEFINED) and isinstance(x, Value) \
                            and id(x) in env:
                        env[id(o)] = env[id(x)]
    return env


def _sliced(op: Op, full: Callable) -> Any:
    """The facts of items[a:b] of a tuple or list of known items."""
    if op.prim is operator.getitem and len(op.args) == 2 and isinstance(op.args[1], Const) and \
            isinstance(op.args[1].value, slice):
        items = full(op.args[0])
        if isinstance(items, Items) and items.kind != "dict":
            picked = items.items[op.args[1].value]
            return Items(items.kind, tuple(range(len(picked))), tuple(picked))
    return None


_TRIED = ("numpy", "operator", "_operator", "math", "builtins")
_DRAWS = ("normal", "uniform", "standard_normal", "random")


def _trial(op: Op, env: dict) -> Any:
    """The abstract value of op's result where the shape rules have none (np.outer, np.einsum...): op run on
    arrays of ones of its arguments' shapes (small ones only, pure functions only)."""
    from s2s.rules import registry
    try:
        rec = registry.record(op.prim)
    except TypeError:
        return None
    module = getattr(op.prim, "__module__", None) or ""
    if getattr(op.prim, "__name__", "") == "call_method" and len(op.args) >= 2 and isinstance(op.args[1], Const) \
            and op.args[1].value in _DRAWS and isinstance(op.kwargs.get("size"), Const):   # rng.normal(size=3)
        size = op.kwargs["size"].value
        return Abstract(tuple(size) if isinstance(size, tuple) else (size,), np.dtype(float))
    if rec.effect and not rec.random or not (module.split(".")[0] in _TRIED or op.prim in runtime.EMITTED_HELPERS
                                             or op.prim in (runtime.make_tuple, runtime.make_list, runtime.make_dict)):
        return None
    if rec.random and not module.startswith("numpy.random"):
        return None
    size = 0

    def stand_in(atom: Any) -> Any:
        nonlocal size
        if isinstance(atom, Const):
            return atom.value
        fact = env.get(id(atom))
        if isinstance(fact, Items) and op.prim in (runtime.make_tuple, runtime.make_list, runtime.make_dict):
            return _proto(fact)
        if not isinstance(fact, Abstract):
            raise LookupError
        if fact.python:
            return fact.dtype(1)
        size += int(np.prod(fact.shape))
        return np.ones(fact.shape, fact.dtype)
    try:
        args = [stand_in(a) for a in op.args]
        kwargs = {k: stand_in(a) for k, a in op.kwargs.items()}
        if size > 1 << 16:
            return None
        state = np.random.get_state() if rec.random else None      # a draw of NumPy's generator: put back
        try:
            with np.errstate(all="ignore"), warnings.catch_warnings():
                warnings.simplefilter("ignore")
                result = op.prim(*args, **kwargs)
        finally:
            if state is not None:
                np.random.set_state(state)
    except Exception:               # noqa: BLE001 - no trial, no fact
        return None
    return abstract_of(result)


def batched_ir(fn: Callable, spec: BatchSpec, kinds: Sequence[Any], shapes: Any) -> Function:
    """The batched IR of fn for arguments of these kinds and shapes (the whole batch's: what the function s2s.vmap
    made is called with)."""
    if shapes is None or any(s is None for s, k in zip(shapes, kinds) if k == "array"):
        raise S2SError(f"s2s needs the shapes of the arguments of the batched {root_function(fn).__qualname__} to "
                       f"transform it further", hint="call it with NumPy arrays (optimize=True)")
    protos = [_proto(s) for s in shapes]
    axes, size = check_arguments(fn, spec, tuple(protos))
    made, _ = _batched(fn, spec, protos, axes, size)
    return made


def _proto(fact: Any) -> Any:
    """A value of these facts (an array of zeros that takes no memory), to read kinds and shapes from."""
    if isinstance(fact, Items):
        items = [_proto(f) for f in fact.items]
        return dict(zip(fact.keys, items)) if fact.kind == "dict" else list(items) if fact.kind == "list" else \
            tuple(items)
    if isinstance(fact, Abstract):
        if fact.python:
            return fact.dtype(0)
        return np.lib.stride_tricks.as_strided(np.zeros(1, fact.dtype), fact.shape, (0,) * len(fact.shape))
    return fact


def _moved(value: Any, axes: Any) -> Any:
    """value with each batched leaf's axis moved to the front (a view)."""
    if axes is None:
        return value
    if isinstance(axes, _Keyed):
        given = axes.as_dict()
        return {k: _moved(v, given[k]) for k, v in value.items()}
    if isinstance(axes, tuple):
        items = [_moved(v, a) for v, a in zip(value, axes)]
        return type(value)(*items) if hasattr(type(value), "_fields") else type(value)(items)
    return value if axes == 0 else np.moveaxis(value, axes, 0)


def _without_stop_gradient(fn: Function) -> Function:
    """The batched code as it is shown and run: the fills of masked branches are constants for a transform that
    differentiates the batched IR (s2s.stop_gradient), and plain values in the code itself."""
    from s2s.ir.core import substitute
    mapping: dict[int, Any] = {}

    def strip(block: Block) -> None:
        kept = []
        for st in block.stmts:
            if isinstance(st, Op) and st.prim is runtime.stop_gradient and len(st.args) == 1:
                mapping[id(st.outs[0])] = st.args[0]
                continue
            kept.append(st)
            for inner in stmt_blocks(st):
                strip(inner)
        block.stmts = kept
    strip(fn.body)
    if mapping:
        substitute(fn.body, mapping)
    return fn


def _batched(fn: Callable, spec: BatchSpec, args: list, axes: list, size: int,
             shown: bool = False) -> tuple[Function, list[str]]:
    example = [_take(a, t) for a, t in zip(args, axes)]
    kinds = [kind_of(e) for e in example]
    shapes = [abstract_of(e) for e in example]
    base = example_ir(fn, kinds, shapes, spec.optimize)
    states = [state_of_kind(k, _plain_tree(t)) for k, t in zip(kinds, axes)]
    facts = _facts(base, [_abstract(e) for e in example])      # (a namedtuple's items too: facts only)
    with values_kept():
        try:
            made, _, notes = batch_function(base, states, facts, size, _plain(spec.out_axes),
                                            value_kinds(base, kinds))
        except NotBatchable as exc:
            made = loop_function(base, states, size, _plain(spec.out_axes))
            notes = [f"the whole function: s2s has no exact batched form for {exc.message}"
                     + (f" ({os.path.basename(exc.loc.file)}:{exc.loc.line})" if exc.loc is not None else "")]
        made.name = f"{base.name}_vmap"
        _move_in(made, axes)
        if shown:
            made = _without_stop_gradient(made)
        made = checked(made)
        moved = [_moved(a, t) for a, t in zip(args, axes)]
        batched_kinds = [kind_of(a) for a in moved]
        if spec.optimize:
            made = pipeline.optimize_ir(made, batched_kinds, [], spec.optimize, final=True,
                                        shapes=[abstract_of(a) for a in args])
        made.notes = notes          # type: ignore[attr-defined]
        return verify(made), notes


def _plain_tree(axes: Any) -> Any:
    if isinstance(axes, _Keyed):
        return {k: _plain_tree(v) for k, v in axes.items}
    if isinstance(axes, tuple):
        return tuple(_plain_tree(a) for a in axes)
    return None if axes is None else 0


def _move_in(fn: Function, axes: list) -> None:
    """The batched code's first lines: each batch axis given elsewhere than first, moved to the front."""
    stmts: list = []
    mapping: dict[int, Any] = {}
    namer = Namer()
    for p in fn.params:
        namer.reserve(p.name)
    for p, t in zip(fn.params, axes):
        if _all_front(t):
            continue
        mapping[id(p)] = _move_value(p, t, stmts, namer)
    if not stmts:
        return
    from s2s.ir.core import substitute
    substitute(fn.body, mapping)
    fn.body.stmts[:0] = stmts


def _all_front(axes: Any) -> bool:
    if axes is None or isinstance(axes, int):
        return axes in (None, 0)
    items = axes.items if isinstance(axes, _Keyed) else tuple(enumerate(axes))
    return all(_all_front(a) for _, a in items)


def _move_value(value: Value, axes: Any, stmts: list, namer: Namer) -> Value:
    hint = value.hint or value.name

    def emit(prim: Any, args: list) -> Value:
        v = namer.value(hint)
        stmts.append(Op(prim, args, [v]))
        return v
    if isinstance(axes, int):
        return emit(np.moveaxis, [value, Const(axes), Const(0)])
    from s2s import runtime as rt
    if isinstance(axes, _Keyed):
        keys = tuple(k for k, _ in axes.items)
        items = [_move_value(emit(operator.getitem, [value, Const(k)]), a, stmts, namer) if not _all_front(a)
                 else emit(operator.getitem, [value, Const(k)]) for k, a in axes.items]
        return emit(rt.make_dict, [Const(keys)] + items)
    items = [_move_value(emit(operator.getitem, [value, Const(k)]), a, stmts, namer) if not _all_front(a)
             else emit(operator.getitem, [value, Const(k)]) for k, a in enumerate(axes)]
    return emit(rt.make_tuple, items)


def loop_function(base: Function, states: list, size: int, out_axes: Any) -> Function:
    """The batched function as a loop over the batch: base's body once per example, its outputs stacked."""
    from s2s import runtime as rt
    namer = Namer()
    params = [Value(p.name, p.hint) for p in base.params]
    for p in params:
        namer.reserve(p.name)
    index = namer.value("i")
    rows = namer.value("rows")
    mapping: dict[int, Any] = {}
    body_stmts: list = []

    def pick(atom: Value, state: Any) -> Any:
        if state is None:
            return atom
        v = namer.value(atom.hint)
        if state is True:
            body_stmts.append(Op(operator.getitem, [atom, index], [v]))
            return v
        tag = state[0]
        if tag in ("list*",):
            raise S2SError("s2s.vmap cannot loop over a batch of lists of any length")
        keys = state[1] if tag == "dict" else range(len(state[1]))
        item_states = state[2] if tag == "dict" else state[1]
        items = []
        for k, s in zip(keys, item_states):
            item = namer.value("")
            body_stmts.append(Op(operator.getitem, [atom, Const(k)], [item]))
            items.append(pick(item, s))
        prim = rt.make_dict if tag == "dict" else rt.make_list if tag == "list" else rt.make_tuple
        body_stmts.append(Op(prim, ([Const(tuple(keys))] if tag == "dict" else []) + items, [v]))
        return v

    for old, new, s in zip(base.params, params, states):
        mapping[id(old)] = pick(new, s)
    copied = clone_block(base.body, mapping, lambda v: namer.value(v.hint))
    body_stmts.extend(copied.stmts)
    result = copied.results[0]
    if base.returns_tuple or len(copied.results) != 1:
        result = namer.value("out")
        body_stmts.append(Op(rt.make_tuple, list(copied.results), [result]))
    appended = namer.value("rows")
    body_stmts.append(Op(rt.list_append, [rows, result], [appended]))
    first = namer.value("rows")
    last = namer.value("rows")
    stacked = namer.value("out")
    stmts = [Op(rt.make_list, [], [first]),
             For(Const(0), Const(size), Const(1), index, [first], [rows], Block(body_stmts, [appended]), [last]),
             Op(_stack_rows, [last, Const(out_axes)], [stacked])]
    fn = Function(base.name, params, Block(stmts, [stacked]), base.loc, False)
    return fn


# ---------------------------------------------------------------- the cache and the call

_CACHE: "weakref.WeakKeyDictionary[Callable, dict]" = weakref.WeakKeyDictionary()
_LOCK = threading.RLock()


def _header(fn: Callable, spec: BatchSpec, args: tuple, notes: list[str]) -> str:
    root = root_function(fn)
    where = f"{os.path.basename(root.__code__.co_filename)}:{root.__code__.co_firstlineno}"
    derived = getattr(fn, "__s2s__", None)
    if derived is not None and not isinstance(derived[1], BatchSpec):
        inner, options = derived
        kinds = [kind_of(a) for a in args]
        first = pipeline._header(inner, options).splitlines()[0]
        what = first.split(": the ", 1)[1].rstrip(".")
        what = f"the {what}"
    elif derived is not None:
        what = f"s2s.vmap({root.__qualname__}) ({where})"
    else:
        what = f"{root.__qualname__} ({where})"
    header = (f"# Generated by s2s {pipeline.__version__}: {what}, batched by s2s.vmap(in_axes={_plain(spec.in_axes)!r}, "
              f"out_axes={_plain(spec.out_axes)!r}).")
    names = _names(fn, len(args))
    shown = []
    for name, a in zip(names, args):
        fact = abstract_of(a)
        kind = kind_of(a)
        shown.append(f"{name}: {fact.dtype} array of shape {fact.shape}" if isinstance(fact, Abstract) and kind ==
                     "array" else f"{name}: {type(a).__name__}" if kind == "scalar" else
                     f"{name}: {pipeline._describe(kind)}")
    header += "\n# For arguments " + ", ".join(shown) + "."
    for note in notes:
        header += f"\n# Batched by a loop over the batch: {note}."
    return header


def _own_outputs(fn: Callable, made: Function, args: tuple, axes: list) -> Function:
    """A batched derivative (`s2s.vmap(s2s.grad(f))`) whose outputs share no memory with its arguments, as a
    derivative's never do (s2s/passes/fresh_outputs.py); a batched function that is no derivative is left as it
    is."""
    if getattr(fn, "__s2s__", None) is None or pipeline.batched(fn):
        return made
    return verify(checked(own_outputs(made, [kind_of(_moved(a, t)) for a, t in zip(args, axes)])))


def generate(fn: Callable, spec: BatchSpec, args: tuple) -> tuple[str, Callable, list[str]]:
    axes, size = check_arguments(fn, spec, args)
    with complex_values.arguments(tuple(_take(a, t) for a, t in zip(args, axes))), values_kept():
        made, notes = _batched(fn, spec, list(args), axes, size, shown=True)
        made = _own_outputs(fn, made, args, axes)
        root = root_function(fn)
        emitted = emit_module(made, (), _header(fn, spec, args, notes), root)
    function = compile_function(emitted.source, made.name, root, emitted.bindings, root.__qualname__,
                                emitted.reads_user_names, emitted.user_names)
    function.__s2s_lines__ = emitted.line_map       # type: ignore[attr-defined]
    return emitted.source, function, notes


def compiled(fn: Callable, spec: BatchSpec, args: tuple) -> tuple[str, Callable, list[str]]:
    signature = pipeline._signature(args)
    key = (getattr(root_function(fn), "__code__", None), spec, signature, _shape_key(args), _globals(fn))
    with _LOCK:
        table = _CACHE.setdefault(fn, {})
        entry = table.get(key)
        if entry is None:
            check_arguments(fn, spec, args)
            with collection_paused():
                entry = table[key] = generate(fn, spec, args)
        return entry


def call(fn: Callable, spec: BatchSpec, args: tuple) -> Any:
    """The batched function of args (the general path: the cache)."""
    function = compiled(fn, spec, args)[1]
    return pipeline.call(function, args)


def caller(fn: Callable, spec: BatchSpec) -> Callable:
    """The function s2s.vmap returns: a cache hit for plain arguments (NumPy arrays and numbers) is one look-up on
    their shapes and dtypes, while no name fn reads was rebound (dispatch.py's watch list); everything else takes
    the general path."""
    fast: dict = {}             # the arguments' shapes and dtypes -> compiled code
    watch: list = [None]        # the names fn reads, as they were when the fast path was filled
    unchanged = [lambda: False]  # watch's guard, compiled once when the fast path is filled (not at every call)

    def general(args: tuple, kwargs: dict) -> Any:
        if kwargs and hasattr(fn, "__s2s__"):
            raise BadArgument("a batched derivative takes its arguments by position")
        given = spec
        if not hasattr(fn, "__s2s__"):
            positional = len(args)
            args = pipeline._bind(fn, args, kwargs)         # keywords placed, defaults filled in
            if len(args) > positional and (spec.in_axes is None or isinstance(spec.in_axes, int)):
                # an int in_axes batches the arguments given by position; keywords and defaults are the same
                # for every example
                given = dataclasses.replace(spec, in_axes=(spec.in_axes,) * positional +
                                            (None,) * (len(args) - positional))
        if dispatch.stale(fn):      # a function it calls or a global it reads was rebound: made anew
            fast.clear()
            forget(fn)
        if objects.any_object(args):            # a dataclass or registered class read as a namedtuple of its fields
            converted = tuple(objects.records(a) for a in args)
            return objects.objects_of(pipeline.call(compiled(fn, given, converted)[1], converted))
        function = compiled(fn, given, args)[1]
        if selfcheck.enabled(None):
            _check_examples(fn, given, args, function)
        key = _fast_key(args)
        root = root_function(fn)
        if key is not None and not dispatch._numeric_globals(root) and given is spec and not kwargs:
            fast[key] = function
            watch[:] = dispatch._watch_list(root)       # (a derivative batched: its function's names)
            unchanged[0] = dispatch.compiled_watch(watch)
        return pipeline.call(function, args)

    def batched(*args: Any, **kwargs: Any) -> Any:
        if not kwargs:
            key = _fast_key(args)
            function = fast.get(key) if key is not None else None
            if function is not None and unchanged[0]():
                try:
                    return function(*args)
                except Exception as exc:
                    pipeline.annotate(exc, function)
                    raise
        return general(args, kwargs)
    return batched


_CHECKED: "weakref.WeakKeyDictionary[Callable, set]" = weakref.WeakKeyDictionary()


def _check_examples(fn: Callable, spec: BatchSpec, args: tuple, function: Callable) -> None:
    """The checking mode (S2S_CHECK=1): the first call for each kind of arguments also runs fn on its first and last
    examples and compares (NaN equal to NaN, to the last digits a batched sum may reorder); a function that draws
    random numbers is not compared."""
    key = (spec, pipeline._signature(args), _shape_key(args))
    done = _CHECKED.setdefault(fn, set())
    if key in done:
        return
    done.add(key)
    root = root_function(fn)
    from s2s.rules import registry
    prims = [s.prim for s in walk(primal.lowered(root).body) if isinstance(s, Op)] \
        if getattr(root, "__code__", None) is not None else []
    if selfcheck.draws_random(prims) or any(_effect(p, registry) for p in prims):
        return                          # random draws, or a method of an object (a generator's draw): not compared
    axes, size = check_arguments(fn, spec, args)
    batched = function(*args)
    out_axes = _plain(spec.out_axes)
    for k in sorted({0, size - 1}):
        example = list(selfcheck.copied(tuple(_index(a, t, k) for a, t in zip(args, axes))))
        code = getattr(fn, "__code__", None)
        if code is not None and not hasattr(fn, "__s2s__") and code.co_kwonlyargcount:   # keyword-only, by name
            names = code.co_varnames[code.co_argcount:code.co_argcount + code.co_kwonlyargcount]
            expected = fn(*example[:code.co_argcount], **dict(zip(names, example[code.co_argcount:])))
        else:
            expected = fn(*example)
        got = _row(batched, out_axes, k)
        where = _first_difference(got, expected)
        if where is not None:
            raise selfcheck.ReadingMismatch(
                f"s2s.vmap of {root.__qualname__}: example {k} of the batch gives {where[0]!r:.80} at {where[2] or 'the output'}, "
                f"and {root.__qualname__} run on that example gives {where[1]!r:.80}",
                hint="a batching rule gives another value than a loop over the batch: please report it")


def _effect(prim: Any, registry: Any) -> bool:
    try:
        return registry.record(prim).effect
    except TypeError:
        return False


def _index(value: Any, axes: Any, k: int) -> Any:
    if axes is None:
        return value
    if isinstance(axes, _Keyed):
        given = axes.as_dict()
        return {key: _index(v, given[key], k) for key, v in value.items()}
    if isinstance(axes, tuple):
        items = [_index(v, a, k) for v, a in zip(value, axes)]
        return type(value)(*items) if hasattr(type(value), "_fields") else type(value)(items)
    return np.take(value, k, axis=axes)


def _row(out: Any, axes: Any, k: int) -> Any:
    """Example k of a batched output."""
    if isinstance(out, dict):
        keyed = axes if isinstance(axes, dict) else {key: axes for key in out}
        return {key: _row(v, keyed[key], k) for key, v in out.items()}
    if isinstance(out, (tuple, list)):
        items = axes if isinstance(axes, (tuple, list)) else [axes] * len(out)
        made = [_row(v, a, k) for v, a in zip(out, items)]
        return type(out)(*made) if hasattr(type(out), "_fields") else type(out)(made)
    if objects.is_object(out):
        return out                      # (an object's fields: compared through its leaves below)
    return out if axes is None else np.take(out, k, axis=axes)


def _first_difference(got: Any, expected: Any, path: str = "") -> tuple | None:
    got_leaves, got_def = trees.tree_flatten(got)
    expected_leaves, expected_def = trees.tree_flatten(expected)
    if len(got_leaves) != len(expected_leaves):
        return (got, expected, path)
    for k, (a, b) in enumerate(zip(got_leaves, expected_leaves)):
        try:
            same = np.shape(a) == np.shape(b) and np.allclose(a, b, rtol=1e-7, atol=1e-12, equal_nan=True)
        except TypeError:
            same = a == b
        if not same:
            return (a, b, f"leaf {k}")
    return None


def _globals(fn: Callable) -> tuple:
    """The shapes of the global arrays the user's function reads (the code is specialized on them: a derivative
    batched is made for them)."""
    return pipeline.global_state(fn, _PYTHON)


_PYTHON = BatchSpec()           # (global_state reads .backend)
object.__setattr__(_PYTHON, "backend", "python")


def _fast_key(args: tuple) -> tuple | None:
    """What the compiled code of plain arguments depends on: each array's shape and dtype, each number's type;
    None for anything else (a container, another library's array)."""
    key = []
    for a in args:
        kind = type(a)
        if kind is np.ndarray:
            key.append((a.shape, a.dtype))
        elif kind is float or kind is int or kind is bool:
            key.append(kind)
        elif kind is tuple or kind is list:         # parameters in a tuple or a list: their arrays' shapes
            inner = _fast_key(a)
            if inner is None:
                return None
            key.append((kind, inner))
        else:
            return None
    return tuple(key)


def export_module(fn: Callable, spec: BatchSpec, args: tuple, source_path: str | None = None) -> str:
    """A standalone module with the batched code (NumPy is all it imports), checking its arguments' shapes on
    entry; exporting twice gives the same bytes."""
    import hashlib

    from s2s.passes.specialize import shape_checks
    axes, size = check_arguments(fn, spec, args)
    root = root_function(fn)
    with complex_values.arguments(tuple(_take(a, t) for a, t in zip(args, axes))), values_kept():
        made, notes = _batched(fn, spec, list(args), axes, size, shown=True)
        made = _own_outputs(fn, made, args, axes)
        path = source_path or root.__code__.co_filename
        relative = os.path.relpath(path) if os.path.isabs(path) else path
        path = relative if not relative.startswith("..") else os.path.basename(path)
        try:
            with open(root.__code__.co_filename, "rb") as handle:
                digest = hashlib.sha256(handle.read()).hexdigest()[:16]
        except OSError:
            digest = "unavailable"
        full = _header(fn, spec, args, notes).splitlines()
        what = full[0].split(": ", 1)[1]
        header = "\n".join([f"# Exported by s2s {pipeline.__version__} from {path}:{root.__name__} (sha256 {digest}): "
                            f"{what}", *full[1:], "# A standalone module: it needs NumPy, not s2s."])
        emitted = emit_module(made, (), header, root, standalone=True)
    return shape_checks(emitted.source, made.name, _names(fn, len(args))[:len(args)], args)


def forget(fn: Callable) -> None:
    with _LOCK:
        _CACHE.pop(fn, None)


def source(fn: Callable, spec: BatchSpec, args: tuple) -> str:
    return compiled(fn, spec, args)[0]
