"""The public API; the pipeline and its cache.

`derivative_ir` is the whole compiler in order: front end and lowering (or the
IR of a derivative s2s made, to differentiate it again), the transform, the
optimizing passes, each followed by the verifier. `emit_module` and
`compile_function` turn its result into code. Compiled derivatives are cached
per function object (weakly: dropping the function frees them) and per
(wrt, mode, options, argument kinds); a function redefined with new source is
a new object and compiles anew, and a cache hit costs one dictionary look-up.
"""
from __future__ import annotations

import builtins
import functools
import hashlib
import inspect
import operator
import os
import threading
import types
import weakref
import dataclasses
from dataclasses import dataclass
from typing import Any, Callable, Sequence

import numpy as np

from .callables import as_function
from .activity import Kind, float_values, kind_of, scalar_values, value_kinds
from .activity import _SCALAR_TYPES as _ACTIVITY_SCALARS
from .checkpoint import checked_option
from .compile import collection_paused, compile_function
from .display import Source
from .emit import emit_module
from .errors import BadArgument, NoDerivativeRule, NonScalarOutput, RefusedWhenRun, S2SError, UnsupportedSyntax
from .forward import PARAMETER, forward_function
from .frontend import parse_function
from .ir import Const, Function, Op, Value, clone_function, format_function, verify, walk
from . import complex_values, foreign, numba_backend, runtime, selfcheck, sequences
from .naming import Namer
from .lower import clear_callee_cache, lower
from .in_place import write_elements_in_place
from .optimize import (PASSES, eliminate_common_subexpressions, eliminate_dead_code, eliminate_dead_stacks,
                       hoist_loop_invariants,
                       replace_shape_only_values, simplify, sink_pure_operations, write_in_place)
from .reverse import reverse_function
from .shapes import abstract_of, shape_key
from .specialize import shape_checks, specialize
from .unroll import unroll

__version__ = "0.1.0"

def verify_every_pass() -> bool:
    """The verifier runs after every pass when S2S_VERIFY=1 (the test suite sets it); otherwise once, at the end.
    Read when a derivative is made, so that setting it after s2s is imported (a conftest) counts."""
    return os.environ.get("S2S_VERIFY") == "1"


def checked(fn: Function) -> Function:
    return verify(fn) if verify_every_pass() else fn

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

_PRIMAL: "weakref.WeakKeyDictionary[Callable, tuple]" = weakref.WeakKeyDictionary()


def primal_ir(fn: Callable) -> Function:
    """fn lowered to IR: once per function (and code), then a fresh copy for each transform to work on."""
    namer = Namer()
    return clone_function(lowered(fn), lambda v: namer.value(v.hint))


def lowered(fn: Callable) -> Function:
    """fn lowered to IR, made once per function (and code) and cached: for callers that only read it."""
    cached = _PRIMAL.get(fn) if isinstance(fn, types.FunctionType) else None
    if cached is None or cached[0] is not fn.__code__:
        cached = (getattr(fn, "__code__", None), checked(lower(parse_function(fn))))
        _PRIMAL[fn] = cached
    return cached[1]


def function_ir(fn: Callable, param_kinds: Sequence[Kind]) -> Function:
    """The IR of fn: lowered from its source, or, for a derivative s2s made, that derivative's IR."""
    derived = getattr(fn, "__s2s__", None)
    if derived is not None:
        inner, options = derived
        return derivative_ir(inner, options, param_kinds)
    return primal_ir(fn)


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
    """shapes: the arguments' abstract values (s2s/shapes.py) when the derivative is specialized on them."""
    kinds = list(param_kinds)
    auto = options.mode == "auto"
    options = resolve_mode(options, kinds)[0]
    base = checked(sequences.resolve(function_ir(fn, kinds), kinds))
    if base.scalar_checks:
        found = value_kinds(base, kinds)
        for value, loc, message in base.scalar_checks:
            if found.get(id(value)) != "scalar":
                raise UnsupportedSyntax(message, loc, hint="copy it first, or write `x = x + ...`")
    if options.has_aux:
        base = split_aux(base, kinds)
    if specializes(options):    # loops over containers of known length: unrolled (s2s/unroll.py)
        base = checked(unroll(base, kinds))
    if options.optimize:        # fold what the transform need not see (containers read back, constants)
        base = optimize_ir(base, kinds, [], options.optimize, final=False)
    wrt = list(options.wrt)
    derivative, fallback = None, ""
    if options.mode in ("reverse", "tangent") and hasattr(fn, "__s2s__"):
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
        derivative = forward_function(base, {wrt[0]: Const(1.0)}, kinds, options.with_value, "grad")
    elif options.mode == "tangent":         # mode="auto" along one float: forward mode, seeded, no stack
        output = base.body.results[0]
        kind = value_kinds(base, kinds).get(id(output), "other") if isinstance(output, Value) else "constant"
        try:
            if kind != "scalar":        # reverse mode refuses what is not a number, and checks arrays when run
                fallback = f"the output is {'a constant' if kind == 'constant' else 'not known to be a number'}"
            else:
                derivative = forward_function(base, {wrt[0]: Const(1.0)}, kinds, options.with_value, "grad",
                                              several=options.several)
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
                               options.optimize, final=False)
        derivative = forward_function(gradient, {i: PARAMETER for i in wrt}, kinds, options.with_value, "jvp")
    else:
        raise S2SError(f"unknown mode {options.mode!r}; s2s has the modes {', '.join(MODES)}")
    if shapes is not None and options.mode in ("forward", "hvp") and len(derivative.params) == len(kinds) + len(wrt):
        shapes = [*shapes, *(shapes[i] for i in wrt)]          # a tangent has its primal's shape
    result = verify(optimize_ir(checked(derivative), kinds, wrt, options.optimize, final=True, shapes=shapes))
    result.auto_fallback = fallback        # type: ignore[attr-defined]  # said in the header (_header)
    return result


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


def optimize_ir(fn: Function, kinds: list[Kind], wrt: list[int], optimize: Any, final: bool,
                shapes: Any = None) -> Function:
    """The optimizing passes selected by optimize (True: all of PASSES), each followed by the verifier."""
    selected = set(PASSES) if optimize is True else set(optimize or ())
    if "simplify" in selected:
        fn = checked(simplify(fn))
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
    if final and "specialize" in selected and shapes is not None:     # helpers the shapes decide: NumPy
        fn = checked(eliminate_dead_code(eliminate_dead_stacks(simplify(checked(specialize(fn, list(shapes)))))))
    if final and "sink" in selected:       # scheduling is for the emitter, once: it is not stable
        fn = checked(sink_pure_operations(fn))
    if final and "in_place" in selected:   # a hint for the emitter: a later transform must see plain values
        fn = checked(write_in_place(fn, scalar_values(fn, kinds), complex_values.in_place_floats(
            fn, float_values(fn, wrt))))        # a real array is not written with complex results
        fn = checked(write_elements_in_place(fn, shapes))      # out[i] = v in O(1): s2s/in_place.py
    return fn


def root_function(fn: Callable) -> Callable:
    """The user's function behind a derivative of a derivative."""
    while hasattr(fn, "__s2s__"):
        fn = fn.__s2s__[0]
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
    if root is not fn:
        what = f"derivative of a derivative ({what})"
    where = os.path.basename(root.__code__.co_filename)
    header = (f"# Generated by s2s {__version__}: the {what} of {root.__qualname__} ({where}:"
              f"{root.__code__.co_firstlineno}), {'forward' if options.mode == 'tangent' else options.mode} mode.")
    if kinds:        # the code is specialized on these: it is valid for arguments of these kinds
        names = _param_names(fn)
        shown = [f"{a.dtype} array of shape {a.shape}" if a is not None and k == "array" else _describe(k)
                 for k, a in zip(kinds, shapes or [None] * len(kinds))]      # shapes: specialized on them
        header += "\n# For arguments " + ", ".join(f"{n}: {d}" for n, d in zip(names, shown)) + "."
    if why:
        header += "\n" + why
    return header


def generate(fn: Callable, options: Options, param_kinds: Sequence[Kind], shapes: Any = None,
             args: tuple | None = None) -> tuple[str, Callable]:
    with complex_values.arguments(args):         # their dtypes say which values may be complex
        derivative = derivative_ir(fn, options, param_kinds, shapes)
        root = root_function(fn)
        emitted = emit_module(derivative, _defaults(fn, derivative),
                              _header(fn, options, param_kinds, shapes, derivative.auto_fallback), root)
    if options.backend == "numba":      # the same module, rewritten for Numba and compiled for args' types
        return numba_backend.build(emitted, derivative.name, root, options.numba_options,
                                   numba_backend.call_args(args, options.mode, options.wrt))
    compiled = compile_function(emitted.source, derivative.name, root, emitted.bindings, root.__qualname__,
                                emitted.reads_user_names)
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
    try:
        return foreign.call(function, args)         # Dask arrays: never computed by derivative code
    except Exception as exc:
        annotate(exc, function)
        raise


# ---------------------------------------------------------------- arguments

_SCALAR_TYPES = frozenset({float, int, bool, np.float64, np.float32, np.float16, np.int64, np.int32})
_LIST_SCALARS = _ACTIVITY_SCALARS        # a list of these is a list of numbers (kind_of), any length


def _param_names(fn: Callable) -> list[str]:
    code = root_function(fn).__code__
    return list(code.co_varnames[:code.co_argcount])


def _resolve_wrt(fn: Callable, wrt: Any) -> tuple[tuple[int, ...], bool]:
    """(indices, several) for wrt given as a position, a name, or a tuple of them."""
    names = _param_names(fn)
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
            if not -len(names) <= item < len(names):
                raise BadArgument(f"wrt={item} is out of range: {qualname} has {len(names)} arguments "
                                  f"{tuple(names)}")
            indices.append(item % len(names))
    if len(set(indices)) != len(indices):
        raise BadArgument(f"wrt={wrt!r} names an argument twice")
    return tuple(indices), several


def _check_differentiable(fn: Callable, args: tuple, wrt: tuple[int, ...]) -> None:
    names = _param_names(fn)
    qualname = root_function(fn).__qualname__
    for i in wrt:
        if i >= len(args):
            raise BadArgument(f"{qualname} was called without its differentiated argument {names[i]!r}")
        bad = _non_float_leaf(args[i])
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


def _non_float_leaf(value: Any) -> Any:
    """The first leaf of value (an array, a float, or a tuple, list or dict of them) that is not a float."""
    if isinstance(value, (tuple, list)):
        return next((bad for v in value if (bad := _non_float_leaf(v)) is not None), None)
    if isinstance(value, dict):
        return next((bad for v in value.values() if (bad := _non_float_leaf(v)) is not None), None)
    if isinstance(value, np.ndarray) or runtime._foreign(value):      # NumPy's, Dask's, CuPy's
        return None if np.issubdtype(value.dtype, np.inexact) else value        # float or complex
    return None if isinstance(value, (float, complex, np.inexact)) and not isinstance(value, bool) else value


# ---------------------------------------------------------------- the cache

_CACHE: "weakref.WeakKeyDictionary[Callable, dict]" = weakref.WeakKeyDictionary()
_LOCK = threading.RLock()


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
    signature = _signature(args)
    shaped = specializes(options)           # the shape pass: arrays' shapes are part of the key
    with _LOCK:
        table = _CACHE.setdefault(fn, {})
        key = (getattr(root_function(fn), "__code__", None), options, signature, shape_key(args) if shaped else None)
        entry = table.get(key)
        if entry is None:
            _check_differentiable(fn, args, options.wrt)
            with collection_paused():           # the transform's objects live until it ends: no gc passes
                entry = table[key] = generate(fn, options, list(signature[0]),
                                              [abstract_of(a) for a in args] if shaped else None, args)
        verified = _VERIFIED.setdefault(fn, set())      # made by an unchecked call first: compared now
        if selfcheck.enabled(check) and key not in verified and not foreign.has_dask(args):  # (Dask: computes)
            try:
                _verify_reading(fn, options, args, entry[1])
            except BaseException:
                table.pop(key, None)
                raise
            verified.add(key)
        return entry


# the keys, per function, of the derivatives already compared with Python in the checking mode
_VERIFIED: "weakref.WeakKeyDictionary[Callable, set]" = weakref.WeakKeyDictionary()


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
    if options.mode == "forward":
        run = lambda expected: call(valued, (*args, *[_zero_tree(args[i]) for i in options.wrt]))[0]
    elif options.mode == "vjp":
        run = lambda expected: call(valued, (*args, _zero_tree(expected)))[0]
    else:
        run = lambda expected: call(valued, args)[0]
    root = root_function(fn)
    prims = [s.prim for s in walk(lowered(root).body) if isinstance(s, Op)]
    selfcheck.compare(root.__qualname__ if root is fn else f"the derivative of {root.__qualname__}", fn, args,
                      run, selfcheck.draws_random(prims))


def _argnums(wrt: Any, argnums: Any) -> Any:
    """JAX's spelling: argnums= is wrt=."""
    if argnums is None:
        return wrt
    if wrt != 0:
        raise BadArgument("give wrt= or argnums=, not both")
    return argnums


def _tree_shape(x: Any) -> Any:
    """The structure and shapes of a value: what a tangent or cotangent must match."""
    if isinstance(x, (tuple, list)):
        return tuple(_tree_shape(v) for v in x)
    if isinstance(x, dict):
        return tuple((k, _tree_shape(v)) for k, v in x.items())
    return np.shape(x)


def _underlying(fn: Any) -> Callable:
    if isinstance(fn, (staticmethod, classmethod)):
        fn = fn.__func__
    if not callable(fn):
        raise BadArgument(f"s2s differentiates functions, not {type(fn).__name__} objects")
    fn = numba_backend.plain_function(fn)        # an @njit dispatcher: its Python function
    return as_function(fn)        # a bound method, partial, callable object or rule as a function


def _bind(fn: Callable, args: tuple, kwargs: dict) -> tuple:
    """All of fn's arguments, positionally: keywords placed, defaults filled in."""
    root = root_function(fn)
    if not kwargs and len(args) == root.__code__.co_argcount and not root.__code__.co_kwonlyargcount:
        return args
    bound = inspect.signature(root).bind(*args, **kwargs)
    bound.apply_defaults()
    return tuple(bound.arguments.values())


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


_MISSING = object()


def _current(owner: Callable, name: str) -> Any:
    code = owner.__code__
    if name in code.co_freevars:
        try:
            return owner.__closure__[code.co_freevars.index(name)].cell_contents
        except ValueError:
            return _MISSING
    return owner.__globals__.get(name, getattr(builtins, name, _MISSING))


def _numeric_globals(fn: Callable) -> list:
    """(owner, name) of each global variable fn (or a function it inlines) reads when its derivative runs."""
    cached = _PRIMAL.get(root_function(fn))
    if cached is None or hasattr(fn, "__s2s__"):
        return []
    found = {}
    for op in walk(cached[1].body):
        if isinstance(op, Op) and op.prim is runtime.free_name:
            owner, name = op.args[1].value, op.args[0].value
            owner = getattr(owner, "__func__", owner)
            if hasattr(owner, "__globals__") and name not in owner.__code__.co_freevars:
                found[(id(owner), name)] = (owner, name)
    return list(found.values())


# per function: whether each global it reads held complex values when its derivative was made (complex_values
# decides on the values as they are then; one that turns complex, or real, makes the derivative anew)
_COMPLEX_GLOBALS: "weakref.WeakKeyDictionary[Callable, list]" = weakref.WeakKeyDictionary()


# per function: how many times its derivatives were found stale (each derivative object compares with its own count)
_GENERATION: "weakref.WeakKeyDictionary[Callable, int]" = weakref.WeakKeyDictionary()


def _complex_now(owner: Callable, name: str) -> bool:
    value = _current(owner, name)
    return value is not _MISSING and bool(np.iscomplexobj(value))


def stale(fn: Callable) -> bool:
    """Whether a function fn names by a bare name is now another object, or a global it reads turned complex (or
    real): then its derivative is made anew."""
    root = root_function(fn)
    cached = _PRIMAL.get(root)
    if cached is None:
        return False
    seen = _COMPLEX_GLOBALS.get(root)
    if seen is None:
        _COMPLEX_GLOBALS[root] = [(o, n, _complex_now(o, n)) for o, n in _numeric_globals(fn)]
    if any(_current(owner, name) is not obj for owner, name, obj in cached[1].dependencies) or (
            seen is not None and any(_complex_now(owner, name) != was for owner, name, was in seen)):
        _COMPLEX_GLOBALS.pop(root, None)
        _GENERATION[root] = _GENERATION.get(root, 0) + 1
        with _LOCK:
            _PRIMAL.pop(root, None)
            _CACHE.pop(fn, None)
            _VERIFIED.pop(fn, None)
            clear_callee_cache()
        return True
    return False


def _watch_list(fn: Callable) -> list:
    """(namespace, name, object, in it) for each function fn names by a bare global name; [None] when one is a
    closure variable (then `stale` checks every call)."""
    cached = _PRIMAL.get(root_function(fn))
    if cached is None or hasattr(fn, "__s2s__"):
        return [None]
    found = []
    for owner, name, obj in cached[1].dependencies:
        if name in owner.__code__.co_freevars:
            return [None]
        if not isinstance(obj, types.ModuleType):      # a module (np, math) is not redefined as a function is
            found.append((owner.__globals__, name, obj, name in owner.__globals__))
    for owner, name in _numeric_globals(fn):         # a global value rebound: `stale` asks whether it turned complex
        value = owner.__globals__.get(name, _MISSING)
        if value is not _MISSING and not isinstance(value, (types.ModuleType, type)) and not callable(value):
            found.append((owner.__globals__, name, value, True))
    return found


def _unchanged(watch: list) -> bool:
    """Whether every name in watch still names its object (a global, or a builtin not shadowed since)."""
    for entry in watch:
        if entry is None:
            return False
        namespace, name, obj, present = entry
        if (namespace.get(name, _MISSING) is not obj) if present else name in namespace:
            return False
    return True


def _wrap(fn: Callable, options: Options, body: Callable, name: str) -> Callable:
    root = root_function(fn)
    functools.update_wrapper(body, root)
    body.__name__ = body.__qualname__ = f"{root.__name__}_{name}"
    body.__s2s__ = (fn, options)                   # type: ignore[attr-defined]
    body.__wrapped__ = root                        # type: ignore[attr-defined]
    return body


def _passes(optimize: Any) -> Any:
    """optimize= as the pipeline takes it: True, False, or a tuple of known pass names."""
    if isinstance(optimize, bool):
        return optimize
    names = tuple(optimize)
    for name in names:
        if name not in PASSES:
            raise BadArgument(f"no optimizing pass named {name!r}; the passes are {', '.join(PASSES)}")
    return names


def _make_derivative(fn: Any, wrt: Any, with_value: bool, optimize: Any, mode: str = "auto",
                     has_aux: bool = False, check: bool | None = None, checkpoint: Any = None,
                     backend: str | None = None) -> Callable:
    backend, numba_options = numba_backend.resolve_backend(fn, backend)
    fn = _underlying(fn)
    optimize = _passes(optimize)
    _refuse_early(fn)
    indices, several = _resolve_wrt(fn, wrt)
    checkpoint = checked_option(checkpoint)
    if checkpoint is not None and backend != "python":
        raise BadArgument(f"checkpoint= runs its schedule as a Python generator: it does not combine with "
                          f"backend={backend!r}", _function_place(fn),
                          hint="drop checkpoint= (Numba's stacks are arrays), or use backend='python'")
    if mode == "forward":
        if has_aux or checkpoint is not None or backend != "python":
            given = "has_aux" if has_aux else "checkpoint" if checkpoint is not None else f"backend={backend!r}"
            raise BadArgument(f"{given} is for reverse mode, not mode='forward'", _function_place(fn),
                              hint="use mode='reverse' (or 'auto')" + (
                                  ", or s2s.jvp(f, backend='numba') for forward mode" if backend != "python" else ""))
        return _forward_gradient(fn, indices, several, with_value, optimize, check)
    if mode not in ("auto", "reverse"):
        raise BadArgument(f"mode={mode!r}: grad takes mode='auto', 'reverse' or 'forward'")
    options = Options(indices, several, mode, with_value, optimize, has_aux, checkpoint, backend, numba_options)
    return _wrap(fn, options, dispatcher(fn, options, check), "value_and_grad" if with_value else "grad")


# ---------------------------------------------------------------- the dispatcher

def dispatcher(fn: Callable, options: Options, check: bool | None) -> Callable:
    """The callable grad returns: generated code, found for the arguments at the cost of a type check.

    A cache hit is one dictionary look-up keyed on the arguments' types; where the code depends on more than
    types (an array's shape and dtype, a list being a list of numbers), a router made for those types keys on
    that too. Everything else (keywords, defaults, containers, Dask, a helper rebound since) takes the general
    path (`general`), which makes or finds the derivative and installs the fast path for such arguments."""
    root = root_function(fn)
    code = root.__code__
    watched = bool(lowered(fn).dependencies or _numeric_globals(fn)) if not hasattr(fn, "__s2s__") else True
    positional = code.co_argcount
    keyword_only = bool(code.co_kwonlyargcount)
    numba = options.backend == "numba"
    cache: dict = {}            # (the arguments' types, shapes and dtypes) -> generated function
    table: dict = {}            # the fast path: the arguments' types -> generated function, or a router
    shaped: dict = {}           # the arguments' types -> the router's table (shapes, dtypes -> function)
    watch: list = []            # the bare names fn's code reads, checked cheaply on every call (_unchanged)
    generation = [_GENERATION.get(root, 0)]      # fn's derivatives made stale so far (by any derivative of fn)

    def general(args: tuple, kwargs: dict) -> Any:
        if kwargs or keyword_only or len(args) != positional:
            args = _bind(fn, args, kwargs)      # keyword-only parameters are parameters of the derivative too
        key = tuple([(a.shape, a.dtype) if type(a) is np.ndarray else type(a) for a in args]) \
            if not numba else numba_backend.call_key(args)
        function = cache.get(key)
        if watched and (function is None or watch and not _unchanged(watch)):
            if stale(fn) or _GENERATION.get(root, 0) != generation[0]:
                # a function fn calls by name was rebound (seen here or by another derivative of fn): made anew
                cache.clear()
                table.clear()
                shaped.clear()
                function = None
                generation[0] = _GENERATION.get(root, 0)
            watch[:] = _watch_list(fn)
        through = None
        if function is None:
            function = compiled(fn, options, args, check)[1]        # containers, other libraries: by kind...
            if numba and key is not None or not numba and all(
                    type(a) is np.ndarray or type(a) in _SCALAR_TYPES for a in args):
                cache[key] = function
            elif not numba:
                through = foreign.call              # Dask arrays: never computed by derivative code
        if not watched or _unchanged(watch):
            _install(args, function, table, shaped, route_to, numba)
        try:
            return function(*args) if through is None else through(function, args)
        except Exception as exc:
            annotate(exc, function)
            raise

    namespace = {"_s2s_table": table, "_s2s_general": general, "_s2s_watch": watch, "_s2s_unchanged": _unchanged,
                 "_s2s_annotate": annotate, "_s2s_list": list, "_s2s_ndarray": np.ndarray,
                 "_s2s_scalars": _LIST_SCALARS}

    def route_to(types: tuple, routes: dict) -> Callable:
        return _router(types, routes, namespace, positional)

    return _entry(root, namespace, general)


def _install(args: tuple, function: Callable, table: dict, shaped: dict, route_to: Callable, numba: bool) -> None:
    """The fast path for arguments like args (when their types, shapes and dtypes decide the code)."""
    types = tuple(map(type, args))
    if numba and numba_backend.call_key(args) is None:
        return
    shapes, dtypes = [], []
    for a, t in zip(args, types):
        if t is np.ndarray:
            shapes.append(a.shape)
            dtypes.append(a.dtype)
        elif t is list and not numba and a and _LIST_SCALARS.issuperset(map(type, a)):
            pass                                        # a list of numbers, whatever its length (kind_of)
        elif t not in _SCALAR_TYPES:
            return
    if not shapes and list not in types:
        table[types] = function
        return
    routes = shaped.get(types)
    if routes is None:
        routes = shaped[types] = {}
        table[types] = route_to(types, routes)
    routes[tuple(shapes)] = (function, *dtypes)      # dtypes compared by identity: held here, never reused


def _router(types: tuple, routes: dict, namespace: dict, n: int) -> Callable:
    """For arguments of these types: the generated function by the arrays' shapes (and the dtypes it was made
    for, the same objects), after checking that each list is still a list of numbers."""
    names = [f"a{i}" for i in range(n)]
    arrays = [i for i, t in enumerate(types) if t is np.ndarray]
    key = "".join(f"a{i}.shape, " for i in arrays)
    dtypes = "".join(f" or entry[{k + 1}] is not a{i}.dtype" for k, i in enumerate(arrays))
    lists = "".join(f" or not (a{i} and _s2s_scalars.issuperset(map(type, a{i})))"
                    for i, t in enumerate(types) if t is list)
    text = (f"def route({', '.join(names)}):\n"
            f"    entry = routes.get(({key}))\n"
            f"    if entry is None{dtypes}{lists}:\n"
            f"        return _s2s_general(({', '.join(names)},), {{}})\n"
            f"    function = entry[0]\n"
            f"    try:\n"
            f"        return function({', '.join(names)})\n"
            f"    except Exception as exc:\n"
            f"        _s2s_annotate(exc, function)\n"
            f"        raise\n")
    scope = dict(namespace, routes=routes)
    exec(compile(text, "<s2s dispatcher>", "exec"), scope)
    return scope["route"]


def _entry(root: Callable, namespace: dict, general: Callable) -> Callable:
    """The function grad returns, with root's parameters: a type look-up, then the generated code."""
    code = root.__code__
    params = list(code.co_varnames[:code.co_argcount])
    plain = not (code.co_flags & (inspect.CO_VARARGS | inspect.CO_VARKEYWORDS) or code.co_kwonlyargcount)
    if not plain or any(p.startswith("_s2s_") for p in params):
        text = ("def derivative(*args, **kwargs):\n"
                "    return _s2s_general(args, kwargs)\n")
    else:
        signature = ", ".join(params[:code.co_posonlyargcount] + ["/"] * bool(code.co_posonlyargcount) +
                              params[code.co_posonlyargcount:])
        arguments = ", ".join(params) + ("," if len(params) == 1 else "")
        text = (f"def derivative({signature}):\n"
                f"    _s2s_function = _s2s_table.get(({''.join(f'type({p}), ' for p in params)}))\n"
                f"    if _s2s_function is None or _s2s_watch and not _s2s_unchanged(_s2s_watch):\n"
                f"        return _s2s_general(({arguments}), {{}})\n"
                f"    try:\n"
                f"        return _s2s_function({', '.join(params)})\n"
                f"    except Exception as _s2s_exc:\n"
                f"        _s2s_annotate(_s2s_exc, _s2s_function)\n"
                f"        raise\n")
    scope = dict(namespace)
    exec(compile(text, "<s2s dispatcher>", "exec"), scope)
    derivative = scope["derivative"]
    derivative.__defaults__ = root.__defaults__ if plain else None
    return derivative


def grad(fn: Any = None, wrt: Any = 0, *, mode: str = "auto", has_aux: bool = False, optimize: bool = True,
         check: bool | None = None, checkpoint: Any = None, argnums: Any = None, backend: str | None = None) -> Any:
    """The gradient of a scalar-valued function with respect to argument(s) `wrt`.

    `wrt` is a position or a name, or a tuple of them (the gradient is then a
    tuple). Works as `s2s.grad(f)`, `@s2s.grad` and `@s2s.grad(wrt=1)`. The
    gradient has the shape and dtype of its argument. `mode="auto"` (the default) computes it in forward
    mode when it is with respect to one float argument (one sweep, no stack), in reverse mode otherwise;
    `mode="reverse"` forces reverse mode, `mode="forward"` forward mode (one sweep per element). The result is
    itself differentiable: `s2s.grad(s2s.grad(f))`. With `has_aux=True`, f returns
    `(output, aux)` and the result is `(gradient, aux)`. With `check=True` (or S2S_CHECK=1), the first call
    for each kind of arguments also runs f and compares its value with the derivative's forward sweep.
    With `checkpoint=40` (snapshots) or `checkpoint="200MB"` (a budget), the loops of f that no loop
    encloses are reversed by binomial checkpointing: memory for 40 states instead of every iteration's values.
    `argnums=` is accepted as another spelling of `wrt=`, as JAX spells it. `backend="numba"` compiles the
    derivative with numba.njit (the default for an @njit function).
    """
    wrt = _argnums(wrt, argnums)
    if fn is None:
        return lambda f: grad(f, wrt, mode=mode, has_aux=has_aux, optimize=optimize, check=check,
                              checkpoint=checkpoint, backend=backend)
    return _make_derivative(fn, wrt, False, optimize, mode, has_aux, check, checkpoint, backend)


def value_and_grad(fn: Any = None, wrt: Any = 0, *, mode: str = "auto", has_aux: bool = False,
                   optimize: bool = True, check: bool | None = None, checkpoint: Any = None,
                   argnums: Any = None, backend: str | None = None) -> Any:
    """Like `grad`, but returns `(f(*args), gradient)` from one forward and one reverse sweep
    (`((output, aux), gradient)` with `has_aux=True`)."""
    wrt = _argnums(wrt, argnums)
    if fn is None:
        return lambda f: value_and_grad(f, wrt, mode=mode, has_aux=has_aux, optimize=optimize, check=check,
                                        checkpoint=checkpoint, backend=backend)
    return _make_derivative(fn, wrt, True, optimize, mode, has_aux, check, checkpoint, backend)


# ---------------------------------------------------------------- forward mode and higher order

def _basis(x: Any):
    """The unit directions of x's coordinates, each shaped and typed like x."""
    if isinstance(x, np.ndarray):
        for k in np.ndindex(x.shape):
            e = np.zeros_like(x)
            e[k] = 1
            yield k, e
    else:
        yield (), 1.0


def _forward_gradient(fn: Callable, indices: tuple[int, ...], several: bool, with_value: bool,
                      optimize: bool, check: bool | None = None) -> Callable:
    def gradient(*args: Any, **kwargs: Any) -> Any:
        args = _bind(fn, args, kwargs)
        for i in indices:
            if not isinstance(args[i], (float, int, np.floating, np.ndarray)):
                raise BadArgument(f"mode='forward' differentiates float and array arguments; "
                                  f"{_param_names(fn)[i]!r} is a {type(args[i]).__name__}",
                                  hint="use reverse mode, or s2s.jvp with a tangent of the same structure")
            if np.iscomplexobj(args[i]):        # df/dx - i df/dy needs both parts: reverse mode
                raise BadArgument(f"mode='forward' differentiates real arguments; {_param_names(fn)[i]!r} is "
                                  f"complex", hint="use mode='reverse' (or 'auto'), or s2s.jvp along a direction")
        options = Options(indices, False, "forward", True, optimize)
        jvp_function = compiled(fn, options, args, check)[1]
        grads, value = [], None
        for i in indices:
            g = np.zeros_like(args[i], dtype=np.result_type(args[i], np.float32)) \
                if isinstance(args[i], np.ndarray) else 0.0
            for k, e in _basis(args[i]):
                tangents = [e if j == i else _zero_like(args[j]) for j in indices]
                value, directional = call(jvp_function, (*args, *tangents))
                if isinstance(value, (tuple, list, dict)) or np.size(value) != 1:
                    shown = f"an array of shape {np.shape(value)}" if isinstance(value, np.ndarray) else \
                        f"a {type(value).__name__}"
                    raise NonScalarOutput(f"grad needs a function with a scalar output, but it returned {shown}",
                                          _function_place(fn), hint=_NON_SCALAR_HINT)
                if isinstance(g, np.ndarray):
                    g[k] = directional
                else:
                    g = directional
            grads.append(g)
        result = tuple(grads) if several else grads[0]
        return (value, result) if with_value else result

    # as a function to differentiate again it is the gradient, whichever mode computes it
    return _wrap(fn, Options(indices, several, "reverse", with_value, optimize), gradient,
                 "value_and_grad" if with_value else "grad")


def _zero_like(x: Any) -> Any:
    return np.zeros_like(x) if isinstance(x, np.ndarray) else 0.0


def jvp(fn: Callable, primals: Sequence[Any], tangents: Sequence[Any], *, optimize: bool = True,
        check: bool | None = None, backend: str | None = None) -> tuple:
    """`(f(*primals), directional derivative of f along tangents)`, in one forward sweep.

    tangents has one entry per primal: None (or 0) for an argument not differentiated."""
    backend, numba_options = numba_backend.resolve_backend(fn, backend)
    fn = _underlying(fn)
    primals, tangents = tuple(primals), tuple(tangents)
    if len(tangents) != len(primals):
        raise BadArgument(f"jvp takes one tangent per primal: {len(primals)} primals, {len(tangents)} tangents")
    indices = tuple(i for i, t in enumerate(tangents)
                    if t is not None and not (np.isscalar(t) and t == 0 and not isinstance(primals[i], np.ndarray)))
    primals = _bind(fn, primals, {})            # arguments left to their defaults get no tangent
    if not indices:
        return fn(*primals), 0.0
    for i in indices:
        if _tree_shape(tangents[i]) != _tree_shape(primals[i]):
            raise BadArgument(f"the tangent of argument {i} has the structure and shapes "
                              f"{_tree_shape(tangents[i])}, the argument {_tree_shape(primals[i])}",
                              hint="give a tangent of the argument's structure and shapes, or None")
    options = Options(indices, False, "forward", True, optimize, backend=backend, numba_options=numba_options)
    return call(compiled(fn, options, primals, check)[1], (*primals, *[tangents[i] for i in indices]))


def hvp(fn: Callable, wrt: Any = 0, *, optimize: bool = True, check: bool | None = None) -> Callable:
    """`hvp(f)(*args, v)`: the Hessian of f (with respect to argument wrt) times v, in one sweep
    (forward mode over the reverse-mode gradient), without forming the Hessian."""
    fn = _underlying(fn)
    _refuse_early(fn)
    indices, several = _resolve_wrt(fn, wrt)
    if several:
        raise BadArgument("hvp differentiates with respect to one argument")
    options = Options(indices, False, "hvp", False, optimize)

    def product(*args: Any) -> Any:
        needed = len(_param_names(fn)) - len(root_function(fn).__defaults__ or ())
        if len(args) < needed + 1:
            raise BadArgument(f"hvp(f)(*args, v) takes f's arguments and then the direction v: "
                              f"{root_function(fn).__qualname__} needs at least {needed} arguments, "
                              f"and {len(args)} values were given in all")
        *given, v = args
        primals = _bind(fn, tuple(given), {})
        if _tree_shape(v) != _tree_shape(primals[indices[0]]) and np.ndim(v) != 0:
            raise BadArgument(f"the direction v has the shape {_tree_shape(v)}, the argument "
                              f"{_tree_shape(primals[indices[0]])}")
        return call(compiled(fn, options, primals, check)[1], (*primals, v))

    return _wrap(fn, options, product, "hvp")


def hessian(fn: Callable, wrt: Any = 0, *, optimize: bool = True, check: bool | None = None,
            argnums: Any = None, backend: str | None = None) -> Callable:
    """The Hessian: a scalar for a scalar argument, shape x.shape + x.shape for an array; one Hessian-vector
    product (forward over reverse) per coordinate. With wrt a tuple, the blocks as nested tuples
    (`H[i][j]` of shape x_i.shape + x_j.shape), as JAX gives them."""
    wrt = _argnums(wrt, argnums)
    backend, numba_options = numba_backend.resolve_backend(fn, backend)
    fn = _underlying(fn)
    _refuse_early(fn)
    indices, several = _resolve_wrt(fn, wrt)
    options = Options(indices, several, "hvp", False, optimize, backend=backend, numba_options=numba_options)

    def matrix(*args: Any) -> Any:
        args = _bind(fn, args, {})
        for i in indices:
            if not isinstance(args[i], (float, int, np.floating, np.ndarray)):
                raise BadArgument(f"hessian differentiates a float or an array, not a {type(args[i]).__name__}",
                                  hint="use s2s.hvp with a direction of the same structure")
        function = compiled(fn, options, args, check)[1]
        blocks = [[None] * len(indices) for _ in indices]
        for b, j in enumerate(indices):
            columns = []
            for _, e in _basis(args[j]):
                tangents = [e if k == j else _zero_like(args[k]) for k in indices]
                column = call(function, (*args, *tangents))
                columns.append(column if several else (column,))
            for a, i in enumerate(indices):
                shape = np.shape(args[i]) + np.shape(args[j])
                block = np.stack([np.asarray(c[a], dtype=float) * np.ones(np.shape(args[i])) for c in columns],
                                 axis=-1).reshape(shape)
                blocks[a][b] = block if shape else float(block)
        if not several:
            return blocks[0][0]
        return tuple(tuple(row) for row in blocks)

    return _wrap(fn, options, matrix, "hessian")


def vjp(fn: Callable, *args: Any, wrt: Any = None, optimize: bool = True,
        check: bool | None = None) -> tuple[Any, Callable]:
    """`(f(*args), vjp_fn)`; `vjp_fn(cotangent)` gives the adjoints of the arguments (all of them, or wrt)."""
    fn = _underlying(fn)
    _refuse_early(fn)
    names = _param_names(fn)
    if wrt is None:
        wrt = tuple(range(len(names)))
    indices, several = _resolve_wrt(fn, wrt)
    options = Options(indices, True, "vjp", True, optimize)
    args = _bind(fn, args, {})
    function = compiled(fn, options, args, check)[1]
    value = fn(*args)

    def pullback(cotangent: Any) -> tuple:
        if _tree_shape(cotangent) != _tree_shape(value):
            raise BadArgument(f"the cotangent has the structure and shapes {_tree_shape(cotangent)}, the "
                              f"output {_tree_shape(value)}", hint="give a cotangent shaped like f's output")
        return call(function, (*args, cotangent))[1]

    return value, pullback


def jacobian(fn: Callable, wrt: Any = 0, *, optimize: bool = True, check: bool | None = None,
             argnums: Any = None) -> Callable:
    """The Jacobian of f, shape f.shape + x.shape: forward mode (one sweep per input coordinate) when the input
    is smaller, reverse mode otherwise. With wrt a tuple, a tuple over the arguments; for f returning a tuple,
    a tuple over its outputs (of tuples over the arguments), as JAX nests them."""
    wrt = _argnums(wrt, argnums)
    fn = _underlying(fn)
    _refuse_early(fn)
    indices, several = _resolve_wrt(fn, wrt)

    def forward_blocks(args: tuple, index: int, outputs: list) -> list:
        """d(output k)/d(argument index) for every output k, from one forward sweep per coordinate."""
        x = args[index]
        function = compiled(fn, Options((index,), False, "forward", True, optimize), args, check)[1]
        columns = [call(function, (*args, e))[1] for _, e in _basis(x)]
        if len(outputs) == 1:
            columns = [(c,) for c in columns]
        blocks = [np.stack([np.asarray(c[k]) * np.ones(np.shape(out)) for c in columns], axis=-1)
                  .reshape(np.shape(out) + np.shape(x)) for k, out in enumerate(outputs)]
        return [b if b.shape else float(b) for b in blocks]

    def array_block(args: tuple, index: int, out: np.ndarray) -> np.ndarray:
        x = args[index]
        if np.size(x) <= out.size:
            return forward_blocks(args, index, [out])[0]
        function = compiled(fn, Options((index,), True, "vjp", True, optimize), args, check)[1]
        rows = [np.asarray(call(function, (*args, e))[1][0]) for _, e in _basis(out)]
        return np.stack(rows, axis=0).reshape(out.shape + np.shape(x))

    def matrix(*args: Any) -> Any:
        args = _bind(fn, args, {})
        out = fn(*args)
        if isinstance(out, dict):
            raise BadArgument("jacobian of a function returning a dict: return a tuple or an array")
        if any(complex_values.bits_of(v) & complex_values.COMPLEX for v in [out, *(args[i] for i in indices)]):
            raise BadArgument("jacobian of complex arguments or results: s2s does not pick a convention for it",
                              hint="use s2s.grad of a real-valued function, s2s.jvp or s2s.vjp")
        if isinstance(out, (tuple, list)):
            per_argument = [forward_blocks(args, i, list(out)) for i in indices]
            return tuple(tuple(blocks[k] for blocks in per_argument) if several else per_argument[0][k]
                         for k in range(len(out)))
        out = np.asarray(out)
        blocks = [array_block(args, i, out) for i in indices]
        return tuple(blocks) if several else blocks[0]

    return _wrap(fn, Options(indices, several, "jacobian", False, optimize), matrix, "jacobian")


# ---------------------------------------------------------------- source and IR

def _example_args(fn: Callable, args: tuple) -> tuple:
    if args:
        return _bind(fn, args, {})
    return _bind(fn, tuple(1.0 for _ in _param_names(fn)), {})


def _options_for(fn: Callable, wrt: Any, mode: str, with_value: bool, optimize: Any) -> Options:
    optimize = _passes(optimize)
    if mode not in MODES:
        raise BadArgument(f"mode={mode!r}: the modes are {', '.join(MODES)}")
    indices, several = _resolve_wrt(fn, wrt)
    return Options(indices, several or mode == "vjp", mode, with_value or mode == "vjp", optimize)


def source(fn: Any, *args: Any, wrt: Any = 0, mode: str = "auto", order: int = 1, with_value: bool = False,
           optimize: bool = True, checkpoint: Any = None, backend: str | None = None) -> Source:
    """The generated source of a derivative, as a string (a str that Jupyter shows highlighted).

    The code depends on which arguments are scalars and which arrays: pass example
    arguments to say so; without them every argument is taken as a float. `mode` is
    "auto" (the gradient: in forward mode along one float, in reverse mode otherwise; the header says which
    and why), "reverse" (the gradient), "forward" (the jvp, with a tangent parameter per wrt
    argument), "hvp" or "vjp"; `order=2` gives the second derivative (forward over reverse).
    `backend="numba"`: the code Numba compiles, typed on the example arguments.
    """
    backend, numba_options = numba_backend.resolve_backend(fn, backend)
    fn = _underlying(fn)
    if order == 2:
        mode = "hvp"
    elif order != 1:
        raise BadArgument("order is 1 or 2")
    options = _options_for(fn, wrt, mode, with_value, optimize)
    if checkpoint is not None:          # the checkpointed gradient (checkpoint.py)
        if mode not in ("auto", "reverse", "vjp"):
            raise BadArgument("checkpoint is for reverse mode")
        options = dataclasses.replace(options, checkpoint=checked_option(checkpoint))
    example = _example_args(fn, args)
    if backend == "numba":          # what runs: the module rewritten for Numba, compiled for the examples
        options = dataclasses.replace(options, backend=backend, numba_options=numba_options)
        return Source(generate(fn, options, [kind_of(a) for a in example],
                               [abstract_of(a) for a in example] if specializes(options) else None, example)[0])
    with complex_values.arguments(example):
        derivative = derivative_ir(fn, options, [kind_of(a) for a in example],
                                   [abstract_of(a) for a in example] if specializes(options) else None)
        root = root_function(fn)
        kinds = [kind_of(a) for a in example]
        shapes = [abstract_of(a) for a in example] if specializes(options) else None
        return Source(emit_module(derivative, _defaults(fn, derivative),
                                  _header(fn, options, kinds, shapes, derivative.auto_fallback), root).source)


def ir(fn: Any, *args: Any, wrt: Any = None, mode: str = "reverse", with_value: bool = False,
       optimize: bool = True) -> str:
    """The SSA text of fn; with `wrt`, the SSA text of its derivative."""
    fn = _underlying(fn)
    example = _example_args(fn, args)
    kinds = [kind_of(a) for a in example]
    if wrt is None:
        return format_function(function_ir(fn, kinds))
    with complex_values.arguments(example):
        return format_function(derivative_ir(fn, _options_for(fn, wrt, mode, with_value, optimize), kinds))


# ---------------------------------------------------------------- export

def export(fn: Any, *args: Any, wrt: Any = 0, mode: str = "auto", order: int = 1, with_value: bool = False,
           source_path: str | None = None, backend: str | None = None) -> str:
    """A self-contained module holding the derivative (and the helpers it needs): NumPy is all it imports.

    Its header names the source file and a hash of it, and the s2s version; exporting twice gives the same
    bytes. Globals the function reads are imported from its module; a closure variable cannot be exported.
    With `backend="numba"` the module compiles it with numba.njit (and imports Numba).
    """
    backend, numba_options = numba_backend.resolve_backend(fn, backend)
    fn = _underlying(fn)
    root = root_function(fn)
    if order == 2:
        mode = "hvp"
    options = _options_for(fn, wrt, mode, with_value, True)
    example = _example_args(fn, args)
    with complex_values.arguments(example):
        derivative = derivative_ir(fn, options, [kind_of(a) for a in example],
                                   [abstract_of(a) for a in example] if specializes(options) else None)
    path = source_path or root.__code__.co_filename
    relative = os.path.relpath(path) if os.path.isabs(path) else path
    path = relative if not relative.startswith("..") else os.path.basename(path)
    try:
        with open(root.__code__.co_filename, "rb") as handle:
            digest = hashlib.sha256(handle.read()).hexdigest()[:16]
    except OSError:
        digest = "unavailable"
    kinds = [kind_of(a) for a in example]
    full = _header(fn, options, kinds, [abstract_of(a) for a in example], derivative.auto_fallback)
    what = full.splitlines()[0].split(": the ", 1)[1].rstrip(".")
    kinds_line = "\n".join(full.splitlines()[1:])
    header = (f"# Exported by s2s {__version__} from {path}:{root.__name__} (sha256 {digest}): the {what}.\n"
              f"{kinds_line}\n# A standalone module: it needs NumPy, not s2s.")
    emitted = emit_module(derivative, _defaults(fn, derivative), header, root, standalone=True)
    if backend == "numba":
        return numba_backend.standalone(emitted, derivative.name, root, numba_options, example)
    return shape_checks(emitted.source, derivative.name, _param_names(fn), example)
