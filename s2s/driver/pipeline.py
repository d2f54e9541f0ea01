"""The pipeline and its cache: from a function and its arguments' kinds to generated, compiled code.

`derivative_ir` is the whole compiler in order: front end and lowering (or the IR of a derivative s2s made, to
differentiate it again), the transform, the optimizing passes, each followed by the verifier. `generate` emits and
compiles its result; `compiled` caches it per function object (weakly: dropping the function frees it) and per
(wrt, mode, options, argument kinds and, when specialized, shapes), and in the checking mode compares a new
derivative's reading of the function with Python's, and its derivative along a random direction with the other
mode's (s2s/driver/selfcheck.py).
"""
from __future__ import annotations

import collections
import dataclasses
import inspect
import operator
import os
import sys
import threading
import types
import weakref
from dataclasses import dataclass
from typing import Any, Callable, Sequence

import numpy as np

from s2s import runtime
from s2s.analysis import complex_values, global_shapes
from s2s.analysis.activity import scalars_and_floats, value_kinds
from s2s.analysis.values import Abstract, Kind, abstract_of, kind_of, non_float_leaf, shape_key
from s2s.backends import numba as numba_backend
from s2s.driver import foreign, mutation, primal, selfcheck
from s2s.driver.callables import forget_wrappers
from s2s.driver.compile import collection_paused, compile_function
from s2s.driver.effects import Effects
from s2s.driver.primal import lowered, primal_ir, root_function  # noqa: F401  (reached as s2s.api.*)
from s2s.emit.python import emit_module
from s2s.emit.source_text import comment_text
from s2s.errors import BadArgument, NoDerivativeRule, NonScalarOutput, RefusedWhenRun, S2SError, UnsupportedSyntax
from s2s.frontend import depth
from s2s.frontend.desugar.instances import plain
from s2s.frontend.parse import parse_function
from s2s.ir.object_methods import python_methods
from s2s.ir.core import Const, Function, Op, Value, check_fails, checked, values_kept, verify, walk
from s2s.ir.lower import clear_callee_cache
from s2s.kept import FunctionTable
from s2s.passes import sequences, type_tests
from s2s.passes.accumulate_in_place import accumulate_in_place
from s2s.passes.accumulate_items import accumulate_items
from s2s.passes.fuse_elementwise import fuse_elementwise
from s2s.passes.stack_rows import shape_facts, stacks_as_rows
from s2s.passes.contractions import contract_accumulations
from s2s.passes.dtype_guards import guard_writes
from s2s.passes.fresh_outputs import own_outputs
from s2s.passes.in_place import write_elements_in_place
from s2s.passes.methods import inline_methods, refuse_indexing
from s2s.passes.optimize import (
    PASSES,
    eliminate_common_subexpressions,
    eliminate_dead_code,
    eliminate_dead_stacks,
    hoist_loop_invariants,
    replace_shape_only_values,
    simplify,
    sink_pure_operations,
    write_in_place,
)
from s2s.passes.shifted_stacks import share_shifted_stacks
from s2s.passes.specialize import specialize
from s2s.passes.known_sizes import unroll_known
from s2s.passes.unroll import unroll
from s2s.transforms.forward import PARAMETER, forward_function
from s2s.transforms import recursion
from s2s.transforms.reverse import reverse_function

__version__ = "0.1.0"

MODES = ("auto", "reverse", "forward", "hvp", "vjp")
# "tangent" is internal: what mode="auto" becomes along one float argument (forward mode seeded with 1.0, the
# signature and result of the reverse-mode gradient, no tangent parameter); see resolve_mode.


@dataclass(frozen=True)
class Options:
    wrt: tuple[int, ...]
    several: bool = False         # wrt was given as a tuple: the gradient is a tuple too
    mode: str = "reverse"         # reverse: gradient; forward: jvp; hvp: forward over reverse; vjp: cotangent in;
                                  # auto: tangent (forward, seeded) along one float, else reverse (resolve_mode)
    with_value: bool = False
    optimize: Any = True          # True, False, or a tuple of pass names (see optimize.PASSES)
    has_aux: bool = False         # the function returns (output, aux); aux is passed through
    checkpoint: Any = None        # reverse mode: snapshots (or a budget "200MB") for the outermost loops
    backend: str = "python"       # "numba": compiled with numba.njit (numba_backend.py)
    numba_options: tuple = ()     # the user's @njit options the derivative is compiled with


# ---------------------------------------------------------------- the pipeline

def function_ir(fn: Callable, param_kinds: Sequence[Kind], shapes: Any = None) -> Function:
    """The IR of fn: lowered from its source, or, for a derivative s2s made, that derivative's IR (for a function
    s2s.vmap made, its batched IR: s2s/driver/batched.py, which needs the arguments' shapes)."""
    derived = getattr(fn, "__s2s__", None)
    if derived is not None:
        inner, options = derived
        if hasattr(options, "batched_ir"):
            return options.batched_ir(inner, param_kinds, shapes)
        return derivative_ir(inner, options, param_kinds)
    return primal_ir(fn)


def batched(fn: Callable) -> bool:
    """Whether fn is a function s2s.vmap made (its IR is an ordinary function's, to differentiate as one)."""
    return hasattr(getattr(fn, "__s2s__", (None, None))[1], "batched_ir")


def resolve_mode(options: Options, kinds: Sequence[Kind], names: Sequence[str] = ()) -> tuple[Options, str]:
    """mode="auto" as the mode it stands for with arguments of these kinds, and why (a line of the header).

    One scalar: the derivative is with respect to one argument (wrt a position or a name, or a tuple of one)
    and that argument is a float (a Python or NumPy float, not an array or a container). Then forward mode,
    seeded with 1.0, computes the gradient in one sweep and needs no stack ("tangent"); otherwise reverse mode.
    checkpoint= is reverse mode's; it keeps reverse mode."""
    if options.mode != "auto":
        return options, ""
    shown = ", ".join(names[i] if i < len(names) else f"argument {i}" for i in options.wrt)
    if options.checkpoint is not None:
        mode, why = "reverse", "checkpoint= is for reverse mode"
    elif len(options.wrt) != 1:
        mode, why = "reverse", f"the derivative is with respect to {len(options.wrt)} arguments ({shown})"
    elif options.wrt[0] >= len(kinds) or kinds[options.wrt[0]] != "scalar":
        what = _describe(kinds[options.wrt[0]]) if options.wrt[0] < len(kinds) else "not given"
        mode, why = "reverse", f"the differentiated argument ({shown}) is {'an' if what[0] in 'aeio' else 'a'} {what}"
    elif complex_values.is_complex_argument(options.wrt[0]):     # df/dx - i df/dy: both parts, reverse mode
        mode, why = "reverse", f"the differentiated argument ({shown}) is complex"
    else:
        mode, why = "tangent", f"the derivative is with respect to one float ({shown}): no stack"
    label = "forward" if mode == "tangent" else mode
    return dataclasses.replace(options, mode=mode), f'# mode="auto" chose {label} mode: {why}.'


def derivative_ir(fn: Callable, options: Options, param_kinds: Sequence[Kind], shapes: Any = None) -> Function:
    """shapes: the arguments' abstract values (s2s/analysis/shapes.py) when the derivative is specialized on them; then
    on the global arrays' too (checked on entry: s2s/analysis/global_shapes.py). The derivative functions of a
    recursion it calls (s2s/transforms/recursion.py) go through the same passes."""
    with global_shapes.checked_on_entry(shapes is not None and options.backend == "python"), values_kept(), \
            depth.room(fn), \
            recursion.session(lambda ir, kinds: _callee_ir(ir, kinds, options)) as made:
        try:
            result = _derivative_ir(fn, options, param_kinds, shapes)
        finally:
            sequences.forget()
        if made and (options.checkpoint is not None or options.backend != "python"):
            what = "checkpoint=" if options.checkpoint is not None else f"backend={options.backend!r}"
            raise S2SError(f"s2s differentiates recursion with derivative functions that call each other; {what} "
                           f"does not take them yet", result.loc, hint="drop " + what)
        for callee in made:
            with complex_values.argument_bits(callee.argument_bits):
                callee.fn = verify(optimize_ir(checked(callee.fn), list(callee.kinds), [], options.optimize,
                                               final=True))
        return result


def _callee_ir(fn: Function, kinds: list, options: Options) -> Function:
    """A recursive function's IR as a transform takes it: the passes _derivative_ir runs before the transform."""
    fn = checked(sequences.resolve(type_tests.fold(fn, kinds), kinds))
    fn = checked(guard_writes(fn, list(range(len(fn.params))), None))
    if specializes(options):
        fn = checked(unroll(fn, kinds))
    if options.optimize:
        fn = optimize_ir(fn, kinds, [], options.optimize, final=False)
    return fn


def _derivative_ir(fn: Callable, options: Options, param_kinds: Sequence[Kind], shapes: Any = None) -> Function:
    kinds = list(param_kinds)
    auto = options.mode == "auto"
    options = resolve_mode(options, kinds)[0]
    base = python_methods(function_ir(fn, kinds, shapes), kinds)     # `s.std()` on a pandas Series: its own
    refuse_indexing(base, kinds)            # an object read as a namedtuple (s2s/driver/objects.py) is not indexed
    base = checked(sequences.resolve(type_tests.fold(base, kinds), kinds))
    base = checked(inline_methods(base, kinds, primal_ir))        # model.forward(x) on an argument object
    base = checked(guard_writes(base, list(options.wrt), shapes))    # a float written into an integer array
    base = mutation.refuse_hidden_changes(base, list(options.wrt))         # an object a method call changed
    base = mutation.refuse_opaque_writers(base, list(options.wrt), kinds)  # a compiled function's writes
    if base.scalar_checks:
        found = value_kinds(base, kinds)
        for values, loc, message in base.scalar_checks:     # fine if the value is a number, or every other
            if check_fails(found, values):                      # name holds one (core.check_fails)
                raise UnsupportedSyntax(message, loc, hint="copy it first, or write `x = x + ...`")
    if options.has_aux:
        base = split_aux(base, kinds)
    free = global_facts(fn, options) if shapes is not None else None
    if specializes(options):    # loops over containers of known length, or of a range the shapes decide: unrolled
        # (not under checkpoint=, which checkpoints the loops as they are)
        base = checked(unroll_known(base, kinds, shapes if options.checkpoint is None else None, free))
    if options.optimize:        # fold what the transform need not see (containers read back, constants)
        base = optimize_ir(base, kinds, [], options.optimize, final=False, shapes=shapes)
    wrt = list(options.wrt)
    derivative, fallback = None, ""
    if options.mode in ("reverse", "tangent") and hasattr(fn, "__s2s__") and not batched(fn):
        # the derivative of a derivative: forward mode over its code, along one scalar argument
        inner = fn.__s2s__[1]
        if inner.checkpoint is not None:
            raise S2SError("s2s differentiates a checkpointed gradient no further",
                           hint="take the second derivative of the gradient without checkpoint=")
        if inner.several or inner.with_value or inner.has_aux or inner.mode not in ("reverse", "forward", "auto"):
            raise NonScalarOutput(f"{root_function(fn).__qualname__}'s derivative returns a tuple (several "
                                  f"gradients, a value, or aux data), not a number: grad needs a scalar output",
                                  hint="differentiate one gradient at a time (wrt= one argument), or use "
                                       "s2s.hessian / s2s.jacobian")
        if len(wrt) != 1 or options.several or kinds[wrt[0]] != "scalar" or \
                complex_values.is_complex_argument(wrt[0]):
            raise S2SError("s2s differentiates a derivative it generated along one scalar argument (a float, not "
                           "a complex number)",
                           hint="for array arguments use s2s.hessian, s2s.hvp or s2s.jacobian")
        derivative = forward_function(base, {wrt[0]: Const(1.0)}, kinds, options.with_value, "grad",
                                      typed=_number_type(shapes, wrt[0]))
    elif options.mode == "tangent":         # mode="auto" along one float: forward mode, seeded, no stack
        output = base.body.results[0]
        kind = value_kinds(base, kinds).get(id(output), "other") if isinstance(output, Value) else "constant"
        try:
            if kind != "scalar":        # reverse mode refuses what is not a number, and checks arrays when run
                fallback = f"the output is {'a constant' if kind == 'constant' else 'not known to be a number'}"
            else:
                derivative = forward_function(base, {wrt[0]: Const(1.0)}, kinds, options.with_value, "grad",
                                              several=options.several, typed=_number_type(shapes, wrt[0]))
        except NoDerivativeRule as exc:       # a function with an adjoint but no tangent rule: reverse mode
            if not auto:
                raise
            fallback = f"forward mode would need a {exc.message.removeprefix('no ')}"
        if fallback:
            options = dataclasses.replace(options, mode="reverse")
    if derivative is not None:
        pass
    elif options.mode in ("reverse", "vjp"):
        derivative = reverse_function(base, wrt, kinds, options.with_value, options.several,
                                      cotangent=options.mode == "vjp", checkpoint=options.checkpoint)
    elif options.mode == "forward":
        derivative = forward_function(base, {i: PARAMETER for i in wrt}, kinds, options.with_value)
    elif options.mode == "hvp":
        gradient = optimize_ir(checked(reverse_function(base, wrt, kinds, False, options.several)), kinds, wrt,
                               options.optimize, final=False, shapes=shapes)
        # the rules' code inlined into it (an autograd vjp rule's `args[:k] + args[k + 1:]`): its tuples' `+`
        # told apart from arithmetic, as the function's own were, before forward mode differentiates it
        gradient = checked(sequences.resolve(gradient, kinds))
        derivative = forward_function(gradient, {i: PARAMETER for i in wrt}, kinds, options.with_value, "jvp")
    else:
        raise S2SError(f"unknown mode {options.mode!r}; s2s has the modes {', '.join(MODES)}")
    if shapes is not None and options.mode in ("forward", "hvp") and len(derivative.params) == len(kinds) + len(wrt):
        shapes = [*shapes, *(shapes[i] for i in wrt)]          # a tangent has its primal's shape
    if hasattr(base, "size_globals"):      # the globals whose shapes decided a folded size: checked on entry
        derivative.size_globals = base.size_globals     # type: ignore[attr-defined]
    result = verify(optimize_ir(checked(derivative), kinds, wrt, options.optimize, final=True, shapes=shapes,
                                free=free, backend=options.backend))
    result.auto_fallback = fallback        # type: ignore[attr-defined]  # said in the header (_header)
    return result


def _number_type(shapes: Any, i: int) -> Any:
    """The type of argument i when it is a NumPy float number other than float64 (np.float16, np.float32): the
    gradient along it, seeded with the Python number 1.0, is converted to it (np.where or np.dot of Python numbers
    would make it float64). Known when the derivative is specialized on its arguments (shapes)."""
    a = shapes[i] if shapes is not None and i < len(shapes) else None
    if isinstance(a, Abstract) and not a.python and a.shape == () and a.dtype.kind == "f" and a.dtype != np.float64:
        return a.dtype.type
    return None


def split_aux(fn: Function, kinds: list[Kind]) -> Function:
    """A function returning (output, aux) as one returning the two separately: only output is differentiated."""
    result = fn.body.results[0]
    kind = value_kinds(fn, kinds).get(id(result), "other") if isinstance(result, Value) else "other"
    if not (isinstance(kind, tuple) and kind[0] in ("tuple", "list") and kind[1] is not None
            and len(kind[1]) == 2):
        shown = f"a {kind[0]} of {len(kind[1])}" if isinstance(kind, tuple) and kind[1] is not None else \
            "something else"
        raise NonScalarOutput(f"with has_aux=True, {fn.name} must return a pair (output, aux); it returns {shown}",
                              fn.loc, hint="return (loss, aux), with everything auxiliary in aux (a tuple or dict)")
    output, aux = Value("output", "output"), Value("aux", "aux")
    fn.body.stmts.append(Op(operator.getitem, [result, Const(0)], [output], loc=fn.loc))
    fn.body.stmts.append(Op(operator.getitem, [result, Const(1)], [aux], loc=fn.loc))
    fn.body.results = [output, aux]
    return checked(fn)


def global_facts(fn: Callable, options: Options) -> dict | None:
    """The shapes of the global arrays fn reads, as they are now (s2s/analysis/global_shapes.py): specialized on like
    the arguments' (the derivative checks them on entry). Not for Numba, which freezes globals itself."""
    if options.backend != "python" or not isinstance(root_function(fn), types.FunctionType):
        return None
    return global_shapes.facts(lowered(root_function(fn)))


def _float_params(wrt: list[int], shapes: Any) -> list[int]:
    """The parameters known to hold floats: the differentiated ones, and those the derivative is specialized on
    as floats or float arrays (what simplify needs to drop `x * 1.0`)."""
    known = [i for i, a in enumerate(shapes or ()) if isinstance(a, Abstract) and (
        a.dtype in (float, complex) if a.python else a.dtype.kind in "fc")]
    return sorted(set(wrt) | set(known))


def optimize_ir(fn: Function, kinds: list[Kind], wrt: list[int], optimize: Any, final: bool,
                shapes: Any = None, free: dict | None = None, backend: str = "python") -> Function:
    """The optimizing passes selected by optimize (True: all of PASSES), each followed by the verifier.
    free: the shapes of the global arrays fn reads (global_facts), with shapes. backend: the target's own
    passes run too (Numba's: stack_rows.py, fuse_elementwise.py)."""
    selected = set(PASSES) if optimize is True else set(optimize or ())
    if "simplify" in selected:
        fn = checked(simplify(fn, _float_params(wrt, shapes)))
    if "hoist" in selected:
        fn = checked(hoist_loop_invariants(fn))
    if "cse" in selected:
        fn = checked(eliminate_common_subexpressions(fn))
    if "dce" in selected:
        fn = checked(eliminate_dead_code(fn))
    if "shapes" in selected:
        fn = checked(replace_shape_only_values(fn))
        if "dce" in selected:
            fn = checked(eliminate_dead_code(fn))
    if final and "stacks" in selected:     # one stack where two hold the same values shifted by an iteration
        fn = checked(share_shifted_stacks(fn))
    if final and "specialize" in selected and shapes is not None:     # helpers the shapes decide: NumPy
        fn = checked(specialize(fn, list(shapes), free))
        if getattr(fn, "specialized", True):    # (what it did not rewrite, the passes before it simplified)
            fn = simplify(fn, _float_params(wrt, shapes))
        fn = checked(eliminate_dead_code(eliminate_dead_stacks(fn)))
        if "contract" in selected:      # sums of outer products over a reverse loop: one product after it
            fn = checked(eliminate_dead_code(contract_accumulations(fn, list(shapes), free)))
    if final and backend == "numba" and shapes is not None:     # Numba allocates each array expression's result
        facts = shape_facts(fn, list(shapes), free)         # (read once: the passes' new values have none)
        fn = checked(stacks_as_rows(fn, list(shapes), free, facts))       # a loop's stack as rows of an array,
        fn = checked(fuse_elementwise(fn, list(shapes), free, facts))     # elementwise lines as one loop
    if final and "sink" in selected:       # scheduling is for the emitter, once: it is not stable
        fn = checked(sink_pure_operations(fn))
    if final and "in_place" in selected:   # a hint for the emitter: a later transform must see plain values
        scalars, floats = scalars_and_floats(fn, kinds, wrt)      # (one walk of the dataflow engine)
        fn = checked(write_in_place(fn, scalars, complex_values.in_place_floats(
            fn, floats)))        # a real array is not written with complex results
        fn = checked(write_elements_in_place(fn, shapes, free))      # out[i] = v in O(1): s2s/passes/in_place.py
        fn = checked(accumulate_in_place(fn))          # dW += g across a loop, into the adjoint's own zeros
        fn = checked(accumulate_items(fn))             # dxs[i] += dv into a list's adjoint of its own
    return fn


def _describe(kind: Kind) -> str:
    if isinstance(kind, tuple):
        if kind[0] == "list*":
            return "list of numbers"
        if kind[0] == "dict":
            return "{" + ", ".join(f"{k!r}: {_describe(v)}" for k, v in kind[1]) + "}" if kind[1] else "dict"
        return f"{kind[0]} of {len(kind[1])}" if kind[1] is not None else kind[0]
    return {"scalar": "float", "array": "array"}.get(kind, "object")


def _header(fn: Callable, options: Options, kinds: Sequence[Kind] = (), shapes: Any = None,
            fallback: str = "") -> str:
    options, why = resolve_mode(options, kinds, _param_names(fn))
    if fallback:          # auto chose forward mode, which a function without a tangent rule refused
        options, why = dataclasses.replace(options, mode="reverse"), f'# mode="auto" chose reverse mode: {fallback}.'

    gradient = "value and gradient" if options.with_value else "gradient"
    what = {"reverse": gradient, "tangent": gradient,
            "forward": "value and directional derivative" if options.with_value else "directional derivative",
            "hvp": "Hessian-vector product", "vjp": "vector-Jacobian product"}[options.mode]
    root = root_function(fn)
    name = root.__qualname__
    if batched(fn):             # a function s2s.vmap made, differentiated
        name = f"s2s.vmap({name})"
    elif root is not fn:
        what = f"derivative of a derivative ({what})"
    where = os.path.basename(root.__code__.co_filename)
    lines = [f"# Generated by s2s {__version__}: the {what} of {name} ({where}:"
             f"{root.__code__.co_firstlineno}), {'forward' if options.mode == 'tangent' else options.mode} mode."]
    if kinds:        # the code is specialized on these: it is valid for arguments of these kinds
        names = _param_names(fn)
        shown = [f"{a.dtype} array of shape {a.shape}" if a is not None and k == "array" else
                 "int" if k == "scalar" and a is not None and a.dtype in (int, bool) else _describe(k)
                 for k, a in zip(kinds, shapes or [None] * len(kinds))]      # shapes: specialized on them
        lines.append("# For arguments " + ", ".join(f"{n}: {d}" for n, d in zip(names, shown)) + ".")
    if why:
        lines.append(why)
    lines += ["# Specialized on " + ", ".join(folds) + " (checked on entry: a change makes it anew)."
              for folds in [_folds(fn)] if folds]
    # each a line of its own: a file or function name, a dict key, with a line break in it stays in its comment
    return "\n".join(comment_text(line) for line in lines)


def _folds(fn: Callable) -> list[str]:
    """What the derivative is specialized on besides kinds and shapes: the argument values it was made for (None,
    strings, booleans) and what the desugaring folded on values known then (desugar/known_values.py)."""
    root = root_function(fn)
    if not isinstance(root, types.FunctionType):
        return []
    try:
        folds = list(getattr(lowered(root), "folds", []))
    except Exception:           # noqa: BLE001 - a derivative of a derivative: its own header says enough
        return []
    known = primal.known_for(root)
    return [f"{name} == {value!r}" for name, value in known.items()] + folds


def emitted_ir(fn: Callable, options: Options, param_kinds: Sequence[Kind], shapes: Any = None) -> Function:
    """The derivative's IR as it is emitted: derivative_ir's, with outputs that share no memory with the arguments
    or globals, which the caller may change in place (s2s/passes/fresh_outputs.py). (derivative_ir's own is what a
    derivative of the derivative reads.)"""
    derivative = derivative_ir(fn, options, param_kinds, shapes)
    owned = own_outputs(derivative, _derivative_kinds(derivative, param_kinds, options),
                        checks=options.backend != "numba")
    return owned if owned is derivative else verify(checked(owned))    # (derivative_ir's own was verified)


def _derivative_kinds(derivative: Function, param_kinds: Sequence[Kind], options: Options) -> list:
    """The kinds of a derivative's parameters: its function's, then (forward mode, hvp) a tangent's is its
    primal's; a vjp's cotangent's is its output's."""
    kinds = list(param_kinds)
    wrt = list(options.wrt)
    if len(derivative.params) == len(kinds) + len(wrt) and options.mode not in ("vjp", "reverse"):
        kinds += [kinds[i] for i in wrt]
    elif options.mode == "vjp" and len(derivative.params) == len(kinds) + 1 and derivative.body.results:
        # a cotangent has the kind of the function's output, the vjp's first result
        output = derivative.body.results[0]
        made = next((st for st in derivative.body.stmts if isinstance(st, Op) and output in st.outs), None)
        if made is not None and made.prim is runtime.make_tuple and made.args:    # (value, gradients)
            output = made.args[0]
        kinds.append(value_kinds(derivative, [*kinds, "other"]).get(id(output), "other") if isinstance(
            output, Value) else "other")
    return kinds


def generate(fn: Callable, options: Options, param_kinds: Sequence[Kind], shapes: Any = None,
             args: tuple | None = None) -> tuple[str, Callable]:
    with depth.room(fn):        # (the emitter and the compiler too)
        with complex_values.arguments(args), values_kept():      # args' dtypes say which values may be complex
            derivative = emitted_ir(fn, options, param_kinds, shapes)
            root = root_function(fn)
            emitted = emit_module(derivative, _defaults(fn, derivative),
                                  _header(fn, options, param_kinds, shapes, derivative.auto_fallback), root,
                                  target=numba_backend.SYNTAX if options.backend == "numba" else None)
        if options.backend == "numba":      # the same module, rewritten for Numba and compiled for args' types
            return numba_backend.build(emitted, derivative.name, root, options.numba_options,
                                       numba_backend.call_args(args, options.mode, options.wrt),
                                       numba_backend.array_positions(derivative, param_kinds, options.wrt))
        compiled = compile_function(emitted.source, derivative.name, root, emitted.bindings, root.__qualname__,
                                    emitted.reads_user_names, emitted.user_names)
    compiled.__s2s_lines__ = emitted.line_map         # type: ignore[attr-defined]
    return emitted.source, compiled


_NON_SCALAR = "grad needs a function with a scalar output"          # runtime._seed's message starts so
_NON_SCALAR_HINT = "use s2s.jacobian for the whole Jacobian, s2s.vjp (or s2s.jvp) for its products with a vector"


def _function_place(fn: Callable) -> Any:
    """The Loc of fn's definition, for an error about the function as a whole (None if unknown)."""
    try:
        parsed = parse_function(root_function(fn))
        return parsed.loc(parsed.node)
    except Exception:
        return None


def annotate(exc: BaseException, function: Callable) -> None:
    """Name, on an exception raised inside generated code, the user's line that code comes from."""
    code = function.__code__
    lines = getattr(function, "__s2s_lines__", {})
    tb, lineno = exc.__traceback__, None
    while tb is not None:
        if tb.tb_frame.f_code is code:
            lineno = tb.tb_lineno
        tb = tb.tb_next
    loc = lines.get(lineno)
    if loc is None:
        return
    if isinstance(exc, RecursionError):         # the recursion of a recursive function, in its derivative functions
        raise RefusedWhenRun(f"the recursion went deeper than Python's recursion limit ({sys.getrecursionlimit()}) "
                             f"in the derivative", loc,
                             hint="raise the limit with sys.setrecursionlimit(...), or write the recursion as a loop "
                                  "(s2s differentiates loops without a stack of Python frames)") from None
    if isinstance(exc, TypeError) and not isinstance(exc, S2SError) and str(exc).startswith(_NON_SCALAR):
        # the reverse sweep's seed found an array output: at the function's place, as forward mode says it
        raise NonScalarOutput(str(exc).split("; use ")[0], loc, hint=_NON_SCALAR_HINT) from exc
    if isinstance(exc, ValueError) and not isinstance(exc, S2SError) and str(exc).startswith("s2s: "):
        # a refusal that only the arguments decide, raised by a check in the derivative: located, as an S2SError
        raise RefusedWhenRun(str(exc)[len("s2s: "):], loc) from exc
    note = (f"s2s: raised in the derivative of {os.path.basename(loc.file)}:{loc.line}  {loc.text.strip()}  "
            f"(generated {code.co_filename} line {lineno})")
    if hasattr(exc, "add_note"):
        exc.add_note(note)
    else:                                       # Python 3.10: no notes; say it in the arguments
        exc.args = (*exc.args, note)


def call(function: Callable, args: tuple) -> Any:
    args = foreign.plain(args)          # subclasses of ndarray as compiled() took them (np.memmap: an array)
    try:
        return foreign.call(function, args)         # Dask arrays: never computed by derivative code
    except Exception as exc:
        annotate(exc, function)
        raise


def _param_names(fn: Callable) -> list[str]:
    code = root_function(fn).__code__
    return list(code.co_varnames[:code.co_argcount])


def _all_param_names(fn: Callable) -> list[str]:
    """The positional parameters, then the keyword-only ones: the derivative's parameters, in order (_bind)."""
    code = root_function(fn).__code__
    return list(code.co_varnames[:code.co_argcount + code.co_kwonlyargcount])


def _resolve_wrt(fn: Callable, wrt: Any) -> tuple[tuple[int, ...], bool]:
    """(indices, several) for wrt given as a position, a name (keyword-only ones too), or a tuple of them."""
    positional, names = _param_names(fn), _all_param_names(fn)
    qualname = root_function(fn).__qualname__
    several = isinstance(wrt, (tuple, list))
    items = list(wrt) if several else [wrt]
    if not items:
        raise BadArgument("wrt names no argument")
    indices = []
    for item in items:
        if isinstance(item, bool) or not isinstance(item, (int, str)):
            raise BadArgument(f"wrt must be an argument position or name, not {item!r}")
        if isinstance(item, str):
            if item not in names:
                raise BadArgument(f"wrt={item!r} names no argument of {qualname}{tuple(names)}")
            indices.append(names.index(item))
        else:
            if not -len(positional) <= item < len(positional):
                raise BadArgument(f"wrt={item} is out of range: {qualname} has {len(positional)} positional "
                                  f"arguments {tuple(positional)}", hint="name a keyword-only argument: wrt='name'")
            indices.append(item % len(positional))
    if len(set(indices)) != len(indices):
        raise BadArgument(f"wrt={wrt!r} names an argument twice")
    return tuple(indices), several


def _check_differentiable(fn: Callable, args: tuple, wrt: tuple[int, ...]) -> None:
    names = _all_param_names(fn)
    qualname = root_function(fn).__qualname__
    for i, arg in enumerate(args):
        if isinstance(arg, np.matrix):       # `*` is its matrix product, `x[0]` a row: not the ndarray s2s reads
            raise BadArgument(f"argument {names[i] if i < len(names) else i!r} of {qualname} is a numpy.matrix, whose "
                              f"operators are not an ndarray's (`*` multiplies matrices); s2s differentiates ndarrays",
                              _function_place(fn), hint="pass np.asarray(M), and write the matrix product with @")
    for i in wrt:
        if i >= len(args):
            raise BadArgument(f"{qualname} was called without its differentiated argument {names[i]!r}")
        bad = non_float_leaf(args[i])
        # (non_float_leaf's None means "no such leaf"; a None inside a container is a leaf without a gradient)
        if args[i] is None:
            raise BadArgument(f"argument {names[i]!r} of {qualname} is differentiated but is None; s2s "
                              f"differentiates float arguments", hint="pass a float or a float array")
        if bad is not None and (dataclasses.is_dataclass(bad) and not isinstance(bad, type)
                                or hasattr(bad, "__dict__") and not isinstance(bad, (np.ndarray, np.generic))):
            kind = "a dataclass" if dataclasses.is_dataclass(bad) else "an object"
            raise BadArgument(f"argument {names[i]!r} of {qualname} is differentiated but holds {kind}, "
                              f"{type(bad).__name__}; s2s differentiates floats, float arrays, and tuples (namedtuples "
                              f"too), lists and dicts of them", _function_place(fn),
                              hint=f"make {type(bad).__name__} a typing.NamedTuple (its fields read as before: "
                                   f"{names[i]}.{next(iter(vars(bad)), 'w')}), or pass its fields as separate "
                                   f"arguments")
        if bad is not None:
            value = bad
            shown = f"an array of {value.dtype}" if isinstance(value, np.ndarray) else \
                f"{type(value).__name__} {value!r}"
            raise BadArgument(f"argument {names[i]!r} of {qualname} is differentiated but is {shown}; "
                              f"s2s differentiates float arguments",
                              hint="pass a float (2.0, not 2) or a float array")


# ---------------------------------------------------------------- the cache

_CACHE = FunctionTable()          # fn -> {key: (source, compiled)}: kept on fn, freed with it (s2s/kept.py)
_LOCK = threading.RLock()


def _after_fork_in_child() -> None:
    """A process forked while another thread made a derivative: that thread is not in the child, and the lock it
    held would be held for ever; the child gets a free one. (A `with _LOCK:` the forking thread itself is in
    releases the lock it entered, the old one.)"""
    global _LOCK
    _LOCK = threading.RLock()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)


def _dtypes(value: Any) -> Any:
    if isinstance(value, np.ndarray) or runtime._foreign(value):     # one derivative for NumPy, Dask, CuPy
        return value.dtype.str
    if isinstance(value, (tuple, list)):
        return tuple(_dtypes(v) for v in value)
    if isinstance(value, dict):
        return tuple((k, _dtypes(v)) for k, v in value.items())
    return type(value)


def specializes(options: Options) -> bool:
    """Whether the derivative is specialized on its arguments' shapes (the pass "specialize" selected)."""
    return options.optimize is True or bool(options.optimize) and "specialize" in options.optimize


def _signature(args: tuple) -> tuple:
    """What the generated code is specialized on: kinds (scalar, array, container structure) and types."""
    kinds = tuple(kind_of(a) for a in args)
    return kinds, tuple(_dtypes(a) if not (isinstance(k, tuple) and k[0] == "list*") else "list*"
                        for a, k in zip(args, kinds))


def compiled(fn: Callable, options: Options, args: tuple, check: bool | None = None) -> tuple[str, Callable]:
    """(source, function) of fn's derivative for arguments like args: from the cache, or made once.
    In the checking mode a new derivative's reading of fn is first compared with Python's on args."""
    args = foreign.plain(args, _all_param_names(fn))   # a subclass of ndarray: read as an array, or refused
    signature = _signature(args)
    shaped = specializes(options)           # the shape pass: arrays' shapes are part of the key
    with _LOCK:
        table = _CACHE.setdefault(fn, {})
        known = known_arguments(fn, args, options.wrt)
        with primal.known_arguments(root_function(fn), known):
            key = (getattr(root_function(fn), "__code__", None), options, signature,
                   shape_key(args) if shaped else None, global_state(fn, options) if shaped else None,
                   primal.value_key(known))
            entry = table.get(key)
            if entry is None:
                _check_differentiable(fn, args, options.wrt)
                with collection_paused():           # the transform's objects live until it ends: no gc passes
                    entry = table[key] = generate(fn, options, list(signature[0]),
                                                  [abstract_of(a) for a in args] if shaped else None, args)
        _used(fn, key)
        verified = _VERIFIED.setdefault(fn, set())      # made by an unchecked call first: compared now
        if selfcheck.enabled(check) and key not in verified and not foreign.has_dask(args):  # (Dask: computes)
            try:
                with primal.known_arguments(root_function(fn), known):
                    _verify_reading(fn, options, args, entry[1])
                    _verify_derivative(fn, options, args, entry)
            except BaseException:
                table.pop(key, None)
                raise
            verified.add(key)
        return entry


# ---------------------------------------------------------------- the bound

DEFAULT_CACHE_SIZE = 512


def _size_from_environment() -> int:
    text = os.environ.get("S2S_CACHE_SIZE", "").strip()
    if not text:
        return DEFAULT_CACHE_SIZE
    try:
        size = int(text)
        if size < 1:
            raise ValueError
    except ValueError:
        import warnings
        warnings.warn(f"S2S_CACHE_SIZE={text!r} is not a positive integer: s2s keeps {DEFAULT_CACHE_SIZE} "
                      f"derivatives", stacklevel=2)
        return DEFAULT_CACHE_SIZE
    return size


_SIZE = [_size_from_environment()]
# every derivative in the cache, least recently made or looked up first: (id of its function, its key) -> a weak
# reference to the function (what a function still holds when it is dropped goes with it: s2s/kept.py)
_ORDER: "collections.OrderedDict[tuple, weakref.ref]" = collections.OrderedDict()
_REFERENCES = FunctionTable()       # fn -> the weak reference _ORDER holds (one per function)
_DEAD: list = []                    # appended to when a function in _ORDER is freed: _ORDER is swept
_FAST_PATHS = FunctionTable()       # fn -> the dispatchers' tables holding its derivatives (FastPath)
_ALL_FAST_PATHS: "weakref.WeakSet" = weakref.WeakSet()


class FastPath:
    """A dispatcher's own tables of generated functions (s2s/driver/dispatch.py): emptied when a derivative of its
    function leaves the cache (it finds the others in the cache again, and notes them as used)."""
    __slots__ = ("tables", "__weakref__")

    def __init__(self, fn: Callable, *tables: dict) -> None:
        self.tables = tables
        with _LOCK:
            _FAST_PATHS.setdefault(fn, weakref.WeakSet()).add(self)
            _ALL_FAST_PATHS.add(self)

    def clear(self) -> None:
        for table in self.tables:
            table.clear()


def _used(fn: Callable, key: tuple) -> None:
    """The derivative of fn under key was made or looked up: the last to leave the cache (under _LOCK)."""
    place = (id(fn), key)
    existing = _ORDER.get(place)
    if existing is not None and existing() is fn:
        _ORDER.move_to_end(place)
        return
    reference = _REFERENCES.get(fn)
    if reference is None:
        reference = _REFERENCES[fn] = weakref.ref(fn, _DEAD.append)
    _ORDER[place] = reference           # (a place a freed function left, its id now another's: taken over)
    _ORDER.move_to_end(place)
    _evict(_SIZE[0])


def _evict(size: int) -> None:
    """Derivatives leave the cache, least recently used first, until it holds size of them (under _LOCK)."""
    if _DEAD:           # functions freed since: their derivatives went with them
        _DEAD.clear()
        for place in [p for p, r in _ORDER.items() if r() is None]:
            del _ORDER[place]
    while len(_ORDER) > size:
        (_, key), reference = _ORDER.popitem(last=False)
        fn = reference()
        if fn is None:
            continue
        table = _CACHE.get(fn)
        if table is not None:
            table.pop(key, None)        # (its generated source leaves linecache with the function: compile.py)
        verified = _VERIFIED.get(fn)
        if verified is not None:
            verified.discard(key)
        for fast in list(_FAST_PATHS.get(fn, ())):
            fast.clear()


def cache_size(size: int | None = None) -> int:
    """How many derivatives s2s keeps compiled, all functions together (each specialization counts: another
    argument kind, shape or dtype, another mode); with size, set it (the least recently used leave now) and
    return the previous one. The default is 512, or the environment variable S2S_CACHE_SIZE. A derivative that
    left is made again when it is next needed."""
    with _LOCK:
        previous = _SIZE[0]
        if size is not None:
            if isinstance(size, bool) or not isinstance(size, int) or size < 1:
                raise BadArgument(f"cache_size takes a positive number of derivatives, not {size!r}")
            _SIZE[0] = size
            _evict(size)
        return previous


def clear_cache() -> None:
    """Forget every derivative and IR s2s made (the derivatives returned still work: they are made again
    when next called), with their generated sources in linecache."""
    with _LOCK:
        _CACHE.clear()
        _VERIFIED.clear()
        _ORDER.clear()
        primal._PRIMAL.clear()
        clear_callee_cache()
        forget_wrappers()
        for fast in list(_ALL_FAST_PATHS):
            fast.clear()


def known_arguments(fn: Callable, args: tuple, wrt: tuple) -> dict:
    """The arguments (by parameter name) the derivative is specialized on by value: None, strings, booleans, and
    functions (`def f(x, g): return g(x) ** 2`: the call of g read as the call of the function passed), not
    differentiated (s2s/driver/primal.py's `literal`, `function_value`); and by class, an object of a plain class of the user's
    (primal.InstanceOf: its methods are its class's). A derivative of a derivative: none (its own function's)."""
    root = root_function(fn)
    if root is not fn:
        # a derivative of a derivative given the function's own arguments (a gradient's): specialized on the
        # functions among them, as the derivative it differentiates is
        if not isinstance(root, types.FunctionType) or len(args) != len(_all_param_names(root)):
            return {}
        names = _all_param_names(root)
        return {names[i]: a for i, a in enumerate(args) if i not in wrt and primal.function_value(a)}
    if not isinstance(root, types.FunctionType):
        return {}
    names = _all_param_names(fn)
    known = {names[i]: a for i, a in enumerate(args) if i < len(names) and i not in wrt and
             (primal.literal(a) or primal.function_value(a))}
    known.update({names[i]: primal.InstanceOf(type(a), _shadowed(a)) for i, a in enumerate(args)  # (keyed on the
                  if i < len(names) and i not in wrt and plain(type(a))})                       # class)
    return known


def _shadowed(obj: Any) -> frozenset:
    """The names obj holds attributes of its own for that are functions of its class (`model.mean = f`): Python calls
    the object's attribute there, not the class's method (looked at each call: part of the cache's key)."""
    cls = type(obj)
    own = getattr(obj, "__dict__", None)
    return frozenset(name for name in own if not name.startswith("__") and callable(getattr(cls, name, None))) \
        if own else frozenset()


def global_state(fn: Callable, options: Options) -> tuple:
    """The shapes and dtypes of the global arrays fn reads, as the cache keys on them (global_facts)."""
    if options.backend != "python" or not isinstance(root_function(fn), types.FunctionType):
        return ()
    return global_shapes.state(lowered(root_function(fn)))


# the keys, per function, of the derivatives already compared with Python in the checking mode
_VERIFIED = FunctionTable()


def _zero_tree(x: Any) -> Any:
    if isinstance(x, (tuple, list)):
        items = [_zero_tree(v) for v in x]
        return type(x)(*items) if hasattr(type(x), "_fields") else type(x)(items)
    if isinstance(x, dict):
        return {k: _zero_tree(v) for k, v in x.items()}
    return np.zeros_like(x) if isinstance(x, np.ndarray) else 0.0


def _verify_reading(fn: Callable, options: Options, args: tuple, function: Callable) -> None:
    """The checking mode: the value the derivative's forward sweep computes against fn(*args)."""
    if options.mode in ("forward", "vjp", "auto") and options.with_value:
        valued = function
    else:
        mode = options.mode if options.mode in ("forward", "auto") else "reverse"
        several = options.several if mode in ("reverse", "auto") else False
        valued = compiled(fn, Options(options.wrt, several, mode, True, options.optimize, options.has_aux,
                                      options.checkpoint if mode in ("reverse", "auto") else None),
                          args, check=False)[1]
        if options.mode == "vjp":
            mode = "vjp"
    # the derivative runs here on copies too: a generator passed in (rng.normal) then draws for the user's own
    # call what it would have drawn without the check
    copied = selfcheck.copied(args)
    if options.mode == "forward":
        run = lambda expected: call(valued, (*copied, *[_zero_tree(args[i]) for i in options.wrt]))[0]
    elif options.mode == "vjp":
        run = lambda expected: call(valued, (*copied, _zero_tree(expected[0] if options.has_aux else expected)))[0]
    else:
        run = lambda expected: call(valued, copied)[0]
    root = root_function(fn)
    prims = [s.prim for s in walk(lowered(root).body) if isinstance(s, Op)]
    selfcheck.compare(root.__qualname__ if root is fn else f"the derivative of {root.__qualname__}", fn, args,
                      run, selfcheck.draws_random(prims), Effects(fn))


def _verify_derivative(fn: Callable, options: Options, args: tuple, entry: tuple[str, Callable]) -> None:
    """The checking mode: the new derivative along one random direction against the other mode's, or central
    differences (selfcheck.check_derivative). Not for derivatives of derivatives, Hessian-vector products, has_aux
    or Numba's backend."""
    if hasattr(fn, "__s2s__") or options.has_aux or options.backend != "python" or options.mode == "hvp":
        return
    root = root_function(fn)
    prims = [s.prim for s in walk(lowered(root).body) if isinstance(s, Op)]

    def other(mode: str, several: bool, with_value: bool) -> Callable:
        made = dataclasses.replace(options, several=several, mode=mode, with_value=with_value, checkpoint=None)
        return compiled(fn, made, args, check=False)[1]
    selfcheck.check_derivative(root.__qualname__, root, options, args, entry, prims, other, call)


def _bind(fn: Callable, args: tuple, kwargs: dict) -> tuple:
    """All of fn's arguments, positionally: keywords placed, defaults filled in; a subclass of ndarray read as an
    array, or refused (s2s/driver/foreign.py: plain)."""
    root = root_function(fn)
    if not kwargs and len(args) == root.__code__.co_argcount and not root.__code__.co_kwonlyargcount:
        return foreign.plain(args, _all_param_names(fn))     # (a subclass of ndarray: an array, or refused)
    if not kwargs and len(args) == getattr(fn, "__s2s_arity__", None):      # a jvp: f's arguments, then tangents
        return foreign.plain(args, _all_param_names(fn))
    try:
        bound = inspect.signature(root).bind(*args, **kwargs)
    except TypeError as exc:        # named as Python names it: `loss() missing a required argument: 'y'`
        raise TypeError(f"{root.__qualname__}() {exc}") from None
    bound.apply_defaults()
    return foreign.plain(tuple(bound.arguments.values()), _all_param_names(fn))


def _defaults(fn: Callable, derivative: Function) -> tuple:
    """The defaults a generated signature may carry: the user's, when it takes exactly the user's
    parameters (a jvp's or vjp's extra parameters come after them, so the wrappers fill defaults in)."""
    root = root_function(fn)
    return (root.__defaults__ or ()) if len(derivative.params) == root.__code__.co_argcount else ()


def _refuse_early(fn: Callable) -> None:
    """Unreadable or unsupported functions are refused when wrapped, not at the first call."""
    if not hasattr(fn, "__s2s__"):
        with collection_paused():
            lowered(fn)
