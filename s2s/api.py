"""The public API: grad, value_and_grad, jvp, vjp, hvp, hessian, jacobian, source, ir, export (and the cache's
cache_size and clear_cache, from the pipeline).

Each takes the user's function (a function, lambda, bound method, partial, callable object or @njit dispatcher),
checks its options, and hands it to the pipeline (s2s/driver/pipeline.py) through a dispatcher (s2s/driver/dispatch.py).
"""
from __future__ import annotations

import dataclasses
import hashlib
import inspect
import os
from typing import Any, Callable, Sequence

import numpy as np

from s2s import runtime
from s2s.analysis import complex_values
from s2s.analysis.values import abstract_of, kind_of, shape_key  # noqa: F401  (shape_key: reached as s2s.api.shape_key)
from s2s.backends import numba as numba_backend
from s2s.driver.callables import as_function
from s2s.driver import batched as batching
from s2s.driver import objects, selfcheck
from s2s.driver import split as splitting
from s2s.driver.derivative import derivative
from s2s.driver.dispatch import dispatcher, stale

# and the pipeline's names that tools, benchmarks and tests reach through s2s.api
from s2s.driver.pipeline import (  # noqa: F401
    _CACHE,
    _NON_SCALAR_HINT,
    MODES,
    Options,
    __version__,
    _bind,
    _check_differentiable,
    _defaults,
    _function_place,
    _header,
    _param_names,
    _refuse_early,
    _resolve_wrt,
    _signature,
    _verify_reading,
    batched,
    cache_size,
    call,
    clear_cache,
    compiled,
    derivative_ir,
    emitted_ir,
    function_ir,
    generate,
    lowered,
    primal_ir,
    resolve_mode,
    root_function,
    specializes,
)
from s2s.driver.effects import Effects
from s2s.driver.replay import Draws
from s2s.emit.python import emit_module
from s2s.emit.source_text import comment_text
from s2s.errors import BadArgument, NonScalarOutput
from s2s.ir.core import (
    format_function,
    verify_every_pass,  # noqa: F401  (reached as s2s.api.verify_every_pass)
)
from s2s.passes.optimize import PASSES
from s2s.passes.specialize import shape_checks
from s2s.rules import registry
from s2s.tools.display import Source
from s2s.transforms.checkpoint import checked_option


def _current(fn: Callable, *rest: Any) -> tuple:
    """compiled(fn, ...) for the wrappers that call it directly (jvp, hvp, vjp, forward-mode grad, jacobian):
    first, whether a function fn names or a global it reads was rebound since (then made anew)."""
    stale(fn)
    return compiled(fn, *rest)


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


def _wrap(fn: Callable, options: Options, body: Callable, name: str, made: tuple) -> Callable:
    """The derivative returned: called as body, named `{f}_{name}`, pickled as the call made (the transformation,
    the callable it was given, its keyword arguments): s2s/driver/derivative.py."""
    made_object = derivative(body, root_function(fn), name, made)
    made_object.__s2s__ = (fn, options)                   # type: ignore[attr-defined]
    return made_object


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
    made = (value_and_grad if with_value else grad, fn,        # (how it is pickled: derivative.py)
            dict(wrt=wrt, mode=mode, has_aux=has_aux, optimize=optimize, check=check, checkpoint=checkpoint,
                 backend=backend))
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
        if has_aux or checkpoint is not None:
            given = "has_aux" if has_aux else "checkpoint"
            raise BadArgument(f"{given} is for reverse mode, not mode='forward'", _function_place(fn),
                              hint="use mode='reverse' (or 'auto')")
        return _forward_gradient(fn, indices, several, with_value, optimize, made, check, backend, numba_options)
    if mode not in ("auto", "reverse"):
        raise BadArgument(f"mode={mode!r}: grad takes mode='auto', 'reverse' or 'forward'")
    options = Options(indices, several, mode, with_value, optimize, has_aux, checkpoint, backend, numba_options)
    return _wrap(fn, options, dispatcher(fn, options, check), "value_and_grad" if with_value else "grad", made)


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
                      optimize: bool, made: tuple, check: bool | None = None, backend: str = "python",
                      numba_options: tuple = ()) -> Callable:
    def gradient(*args: Any, **kwargs: Any) -> Any:
        args = _bind(fn, args, kwargs)
        if objects.any_object(args):        # a dataclass or registered class read as a namedtuple of its fields
            args = tuple(objects.records(a) for a in args)
        for i in indices:
            if not isinstance(args[i], (float, int, np.floating, np.ndarray)):
                raise BadArgument(f"mode='forward' differentiates float and array arguments; "
                                  f"{_param_names(fn)[i]!r} is a {type(args[i]).__name__}", _function_place(fn),
                                  hint="use reverse mode, or s2s.jvp with a tangent of the same structure")
            if np.iscomplexobj(args[i]):        # df/dx - i df/dy needs both parts: reverse mode
                raise BadArgument(f"mode='forward' differentiates real arguments; {_param_names(fn)[i]!r} is "
                                  f"complex", _function_place(fn),
                                  hint="use mode='reverse' (or 'auto'), or s2s.jvp along a direction")
        options = Options(indices, False, "forward", True, optimize, backend=backend, numba_options=numba_options)
        jvp_function = _current(fn, options, args, check)[1]       # one jvp per basis direction (Numba's too)
        grads, value = [], None
        several_sweeps = sum(np.size(args[i]) for i in indices) > 1
        draws = Draws(fn, args) if several_sweeps else None
        effects = Effects(fn) if several_sweeps else None     # each sweep writes what one call of f writes
        for i in indices:
            g = np.zeros_like(args[i], dtype=runtime._gradient_dtype(args[i])) \
                if isinstance(args[i], np.ndarray) else 0.0
            for k, e in _basis(args[i]):
                tangents = [e if j == i else _zero_like(args[j]) for j in indices]
                if value is not None:
                    draws.again()           # every sweep draws what the first drew: one realization
                    effects.again()         # and starts from the objects' state the first did
                value, directional = call(jvp_function, (*args, *tangents))
                if isinstance(value, (tuple, list, dict)) or np.size(value) != 1:
                    shown = f"an array of shape {np.shape(value)}" if isinstance(value, np.ndarray) else \
                        f"a {type(value).__name__}"
                    raise NonScalarOutput(f"grad needs a function with a scalar output, but it returned {shown}",
                                          _function_place(fn), hint=_NON_SCALAR_HINT)
                if np.ndim(directional):            # an output of one element, as reverse mode takes it
                    directional = np.reshape(directional, ())[()]
                if isinstance(g, np.ndarray):
                    g[k] = directional
                elif isinstance(args[i], np.floating):      # a NumPy number's gradient has its type (float16)
                    g = type(args[i])(directional)
                else:
                    g = directional
            grads.append(g)
        result = tuple(grads) if several else grads[0]
        return (value, result) if with_value else result

    # as a function to differentiate again it is the gradient, whichever mode computes it
    return _wrap(fn, Options(indices, several, "reverse", with_value, optimize), gradient,
                 "value_and_grad" if with_value else "grad", made)


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
    return call(_current(fn, options, primals, check)[1], (*primals, *[tangents[i] for i in indices]))


def forward_derivative(fn: Callable, wrt: Any = 0, *, optimize: bool = True) -> Callable:
    """fn's forward-mode derivative as a function, `f_jvp(*args, *tangents)`: the directional derivative along the
    tangents of the arguments wrt. s2s differentiates it again (forward over forward: rules/fixed_points.py)."""
    made_by = (forward_derivative, fn, dict(wrt=wrt, optimize=optimize))
    fn = _underlying(fn)
    _refuse_early(fn)
    indices, _ = _resolve_wrt(fn, wrt)
    options = Options(indices, False, "forward", False, optimize)
    count = len(_param_names(fn))

    def derivative(*args: Any) -> Any:
        if len(args) != count + len(indices):
            raise BadArgument(f"{root_function(fn).__qualname__}'s jvp takes its {count} arguments and "
                              f"{len(indices)} tangents, not {len(args)} values")
        return call(_current(fn, options, args[:count], None)[1], args)

    made = _wrap(fn, options, derivative, "jvp", made_by)
    made.__s2s_arity__ = count + len(indices)          # type: ignore[attr-defined]
    return made


def hvp(fn: Callable, wrt: Any = 0, *, optimize: bool = True, check: bool | None = None) -> Callable:
    """`hvp(f)(*args, v)`: the Hessian of f (with respect to argument wrt) times v, in one sweep
    (forward mode over the reverse-mode gradient), without forming the Hessian."""
    made = (hvp, fn, dict(wrt=wrt, optimize=optimize, check=check))
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
        return call(_current(fn, options, primals, check)[1], (*primals, v))

    return _wrap(fn, options, product, "hvp", made)


def hessian(fn: Callable, wrt: Any = 0, *, optimize: bool = True, check: bool | None = None,
            argnums: Any = None, backend: str | None = None) -> Callable:
    """The Hessian: a scalar for a scalar argument, shape x.shape + x.shape for an array; one Hessian-vector
    product (forward over reverse) per coordinate. With wrt a tuple, the blocks as nested tuples
    (`H[i][j]` of shape x_i.shape + x_j.shape), as JAX gives them."""
    wrt = _argnums(wrt, argnums)
    made = (hessian, fn, dict(wrt=wrt, optimize=optimize, check=check, backend=backend))
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
        function = _current(fn, options, args, check)[1]
        blocks = [[None] * len(indices) for _ in indices]
        draws, first = Draws(fn, args), True
        effects = Effects(fn)           # the objects' state each sweep starts from: one call's writes
        for b, j in enumerate(indices):
            columns = []
            for _, e in _basis(args[j]):
                tangents = [e if k == j else _zero_like(args[k]) for k in indices]
                if not first:
                    draws.again()           # every sweep draws what the first drew: one realization
                    effects.again()
                first = False
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

    return _wrap(fn, options, matrix, "hessian", made)


def vjp(fn: Callable, *args: Any, wrt: Any = None, optimize: bool = True, check: bool | None = None,
        has_aux: bool = False) -> tuple[Any, Callable]:
    """`(f(*args), vjp_fn)`; `vjp_fn(cotangent)` gives the adjoints of the arguments (all of them, or wrt). f runs
    once: the derivative's forward sweep computes its value and saves what vjp_fn reads, and vjp_fn runs the
    reverse sweep (as often as it is called). With `has_aux=True` (f returns `(output, aux)`):
    `(output, vjp_fn, aux)`, as JAX gives them."""
    fn = _underlying(fn)
    _refuse_early(fn)
    names = _param_names(fn)
    if wrt is None:
        wrt = tuple(range(len(names)))
    indices, several = _resolve_wrt(fn, wrt)
    options = Options(indices, True, "vjp", True, optimize, has_aux)
    args = _bind(fn, args, {})
    # the checking mode compares the derivative's reading of f with f's, at the first call for these arguments
    checking = (lambda: _current(fn, options, args, check)) if selfcheck.enabled(check) else None
    stale(fn)
    before = Effects(fn)
    if before:      # f writes into objects: its writes happen here, once; each pullback runs from the state f
        function = _current(fn, options, args, check)[1]        # started from, and leaves them as they were
        value = fn(*args)
    else:           # f runs once: the derivative's forward sweep gives its value and saves what the pullback reads
        entry = splitting.compiled_split(fn, options, args, (len(args),), checking)
        early, saved = splitting.run_early(entry, args)
        value = early[0] if early else call(entry[1], (*args, *saved, _zero_output(fn, args)))[0]
    out = value[0] if has_aux else value
    _refuse_non_numeric(fn, out, "a vjp")

    def pullback(cotangent: Any) -> tuple:
        if _tree_shape(cotangent) != _tree_shape(out):
            raise BadArgument(f"the cotangent has the structure and shapes {_tree_shape(cotangent)}, the "
                              f"output {_tree_shape(out)}", hint="give a cotangent shaped like f's output")
        if not before:
            return call(entry[1], (*args, *saved, cotangent))[1]
        now = Effects(fn, before.places)
        before.again()
        try:
            return call(function, (*args, cotangent))[1]
        finally:
            now.again()

    return (out, pullback, value[1]) if has_aux else (out, pullback)


def _zero_output(fn: Callable, args: tuple) -> Any:
    """A cotangent of zeros shaped like f's output (f run once more: only where its forward sweep cannot give it)."""
    return _zero_tree(fn(*args))


def _zero_tree(x: Any) -> Any:
    if isinstance(x, (tuple, list)):
        return type(x)(_zero_tree(v) for v in x)
    if isinstance(x, dict):
        return {k: _zero_tree(v) for k, v in x.items()}
    return np.zeros_like(x) if isinstance(x, np.ndarray) else 0.0


def _numeric(value: Any) -> bool:
    if isinstance(value, (tuple, list)):
        return all(_numeric(v) for v in value)
    if isinstance(value, dict):
        return all(_numeric(v) for v in value.values())
    if isinstance(value, np.ndarray) or runtime._foreign(value):       # NumPy's, Dask's, CuPy's
        return value.dtype.kind in "biufc"
    return isinstance(value, (int, float, complex, np.number, np.bool_))


def _refuse_non_numeric(fn: Callable, out: Any, what: str) -> None:
    """A Jacobian or a vjp is of a function whose output is numbers (an array, a tuple of them): None (a
    forgotten return) or a string would give zeros."""
    if not _numeric(out):
        shown = repr(out) if out is None or isinstance(out, (str, bytes)) else f"a {type(out).__name__}"
        raise NonScalarOutput(f"{root_function(fn).__qualname__} returned {shown:.60}, not numbers: {what} needs a function whose "
                              f"output is a number, an array, or a tuple of them", _function_place(fn),
                              hint="did the function forget a `return`?" if out is None else "")


def jacobian(fn: Callable, wrt: Any = 0, *, optimize: bool = True, check: bool | None = None,
             argnums: Any = None) -> Callable:
    """The Jacobian of f, shape f.shape + x.shape: forward mode (one sweep per input coordinate) when the input
    is smaller, reverse mode otherwise. With wrt a tuple, a tuple over the arguments; for f returning a tuple,
    a tuple over its outputs (of tuples over the arguments), as JAX nests them."""
    wrt = _argnums(wrt, argnums)
    made = (jacobian, fn, dict(wrt=wrt, optimize=optimize, check=check))
    fn = _underlying(fn)
    _refuse_early(fn)
    indices, several = _resolve_wrt(fn, wrt)

    def forward_blocks(args: tuple, index: int, outputs: list, draws: Draws, effects: Effects) -> list:
        """d(output k)/d(argument index) for every output k, from one forward sweep per coordinate."""
        x = args[index]
        function = _current(fn, Options((index,), False, "forward", True, optimize), args, check)[1]
        columns = []
        for _, e in _basis(x):
            draws.again()               # each sweep draws what f drew: one realization
            effects.again()       # and starts from the objects' state f started from
            columns.append(call(function, (*args, e))[1])
        if len(outputs) == 1:
            columns = [(c,) for c in columns]
        blocks = [np.stack([np.asarray(c[k]) * np.ones(np.shape(out)) for c in columns], axis=-1)
                  .reshape(np.shape(out) + np.shape(x)) for k, out in enumerate(outputs)]
        return [b if b.shape else float(b) for b in blocks]

    def array_block(args: tuple, index: int, out: np.ndarray, draws: Draws, effects: Effects) -> np.ndarray:
        x = args[index]
        if np.size(x) <= out.size:
            return forward_blocks(args, index, [out], draws, effects)[0]
        function = _current(fn, Options((index,), True, "vjp", True, optimize), args, check)[1]
        rows = []
        for _, e in _basis(out):
            draws.again()
            effects.again()
            rows.append(np.asarray(call(function, (*args, e))[1][0]))
        return np.stack(rows, axis=0).reshape(out.shape + np.shape(x))

    def matrix(*args: Any) -> Any:
        args = _bind(fn, args, {})
        draws = Draws(fn, args)         # f, then every sweep, draws what f drew: one realization
        stale(fn)                       # (the objects f writes, as its derivative made now finds them)
        effects = Effects(fn)           # and writes what f writes, once: each sweep starts from the state f did
        out = fn(*args)
        _refuse_non_numeric(fn, out, "a Jacobian")
        if isinstance(out, dict):
            raise BadArgument("jacobian of a function returning a dict: return a tuple or an array")
        if any(complex_values.bits_of(v) & complex_values.COMPLEX for v in [out, *(args[i] for i in indices)]):
            raise BadArgument("jacobian of complex arguments or results: s2s does not pick a convention for it",
                              hint="use s2s.grad of a real-valued function, s2s.jvp or s2s.vjp")
        if isinstance(out, (tuple, list)):
            per_argument = [forward_blocks(args, i, list(out), draws, effects) for i in indices]
            return tuple(tuple(blocks[k] for blocks in per_argument) if several else per_argument[0][k]
                         for k in range(len(out)))
        out = np.asarray(out)
        blocks = [array_block(args, i, out, draws, effects) for i in indices]
        return tuple(blocks) if several else blocks[0]

    return _wrap(fn, Options(indices, several, "jacobian", False, optimize), matrix, "jacobian", made)


# ---------------------------------------------------------------- source and IR

def _example_args(fn: Callable, args: tuple) -> tuple:
    if args:
        try:
            return _bind(fn, args, {})
        except TypeError as exc:        # as many example arguments as the function takes (`s2s FILE:f --args`)
            root = root_function(fn)
            why = str(exc).removeprefix(f"{root.__qualname__}() ")      # (the function is named here already)
            raise BadArgument(f"{len(args)} example argument{'s' * (len(args) != 1)} for {root.__qualname__}"
                              f"{_signature_text(root)}: {why}", _function_place(fn),
                              hint="give one example value per parameter, in order") from None
    return _bind(fn, tuple(1.0 for _ in _param_names(fn)), {})


def _signature_text(fn: Callable) -> str:
    try:
        return str(inspect.signature(fn))
    except (TypeError, ValueError):
        return "(...)"


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
    if batched(fn) and mode == "auto" and order == 1 and checkpoint is None:     # a function s2s.vmap made
        return Source(batching.source(fn.__s2s__[0], fn.__s2s__[1], args))
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
        derivative = emitted_ir(fn, options, [kind_of(a) for a in example],
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
    if batched(fn) and mode == "auto" and order == 1:       # a function s2s.vmap made: its batched code
        return batching.export_module(fn.__s2s__[0], fn.__s2s__[1], args, source_path)
    if order == 2:
        mode = "hvp"
    options = _options_for(fn, wrt, mode, with_value, True)
    if backend == "numba":          # Numba's derivative checks no globals on entry (s2s/analysis/global_shapes.py)
        options = dataclasses.replace(options, backend=backend)
    example = _example_args(fn, args)
    with complex_values.arguments(example):
        derivative = emitted_ir(fn, options, [kind_of(a) for a in example],
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
    header = (comment_text(f"# Exported by s2s {__version__} from {path}:{root.__name__} (sha256 {digest}): the "
                           f"{what}.") + f"\n{kinds_line}\n# A standalone module: it needs NumPy, not s2s.")
    emitted = emit_module(derivative, _defaults(fn, derivative), header, root, standalone=True,
                          target=numba_backend.SYNTAX if backend == "numba" else None)
    if backend == "numba":
        return numba_backend.standalone(emitted, derivative.name, root, numba_options, example)
    return shape_checks(emitted.source, derivative.name, _param_names(fn), example)


# ---------------------------------------------------------------- JAX's other names: jacfwd, jacrev, linearize

def _differentiable_positions(args: tuple) -> tuple[int, ...]:
    from s2s.analysis.values import non_float_leaf
    return tuple(i for i, a in enumerate(args) if non_float_leaf(a) is None)


def linearize(fn: Callable, *primals: Any, optimize: bool = True, check: bool | None = None) -> tuple[Any, Callable]:
    """`(f(*primals), jvp_fn)`, as JAX's: `jvp_fn(*tangents)` is the directional derivative of f at primals along
    tangents (one per primal; None, or 0, for an argument not differentiated). f's forward sweep runs once, here:
    what the tangents do not change is computed now and saved, and jvp_fn computes the tangent part alone (a loop
    that carries tangents runs again in jvp_fn, with its values)."""
    fn = _underlying(fn)
    _refuse_early(fn)
    primals = _bind(fn, tuple(primals), {})
    indices = _differentiable_positions(primals)
    if not indices:
        raise BadArgument("linearize differentiates float arguments; none of these is one")
    options = Options(indices, False, "forward", True, optimize)
    checking = (lambda: _current(fn, options, primals, check)) if selfcheck.enabled(check) else None
    stale(fn)
    late = tuple(range(len(primals), len(primals) + len(indices)))
    entry = splitting.compiled_split(fn, options, primals, late, checking)
    early, saved = splitting.run_early(entry, primals)
    if early:
        value = early[0]
    else:           # the output is computed with the tangents (inside a loop that carries them): with zeros
        value = call(entry[1], (*primals, *saved, *[_zero_tree(primals[i]) for i in indices]))[0]

    def jvp_fn(*tangents: Any) -> Any:
        if len(tangents) != len(primals):
            raise BadArgument(f"jvp_fn takes one tangent per primal: {len(primals)} primals, {len(tangents)} "
                              f"tangents")
        for i in indices:
            if tangents[i] is not None and _tree_shape(tangents[i]) != _tree_shape(primals[i]) and \
                    np.ndim(tangents[i]) != 0:
                raise BadArgument(f"the tangent of argument {i} has the structure and shapes "
                                  f"{_tree_shape(tangents[i])}, the argument {_tree_shape(primals[i])}")
        given = [_zero_tree(primals[i]) if tangents[i] is None else tangents[i] for i in indices]
        return call(entry[1], (*primals, *saved, *given))[1]

    return value, jvp_fn


def _jacobian_blocks(fn: Callable, args: tuple, indices: tuple, forward: bool, has_aux: bool, optimize: Any,
                     check: bool | None) -> tuple[Any, Any, list]:
    """(f's output, aux, [[d output_k / d argument_i] for k] for i): forward mode (one sweep per coordinate of an
    argument) or reverse mode (one sweep per coordinate of an output)."""
    draws = Draws(fn, args)
    if forward:
        per_argument, out, aux = [], None, None
        for i in indices:
            function = _current(fn, Options((i,), False, "forward", True, optimize, has_aux), args, check)[1]
            columns = []
            for _, e in _basis(args[i]):
                draws.again()
                value, t = call(function, (*args, e))
                columns.append(t)
            out, aux = (value[0], value[1]) if has_aux else (value, None)
            outputs = list(out) if isinstance(out, (tuple, list)) else [out]
            if not isinstance(out, (tuple, list)):
                columns = [(c,) for c in columns]
            per_argument.append([_stacked([c[k] for c in columns], np.shape(o), np.shape(args[i]), -1)
                                 for k, o in enumerate(outputs)])
        return out, aux, per_argument
    function = _current(fn, Options(indices, True, "vjp", True, optimize, has_aux), args, check)[1]
    probe = call(function, (*args, _zero_output_of(fn, args, has_aux)))[0]
    out, aux = (probe[0], probe[1]) if has_aux else (probe, None)
    outputs = list(out) if isinstance(out, (tuple, list)) else [out]
    per_argument = [[None] * len(outputs) for _ in indices]
    for k, o in enumerate(outputs):
        rows = []
        for _, e in _basis(np.asarray(o, dtype=float) if np.ndim(o) else float(o)):
            draws.again()
            cotangent = e
            if isinstance(out, (tuple, list)):
                cotangent = type(out)(e if j == k else _zero_tree(p) for j, p in enumerate(outputs))
            rows.append(call(function, (*args, cotangent))[1])
        for a, i in enumerate(indices):
            per_argument[a][k] = _stacked([r[a] for r in rows], np.shape(o), np.shape(args[i]), 0)
    return out, aux, per_argument


def _zero_output_of(fn: Callable, args: tuple, has_aux: bool) -> Any:
    out = fn(*args)
    return _zero_tree(out[0] if has_aux else out)


def _stacked(parts: list, out_shape: tuple, in_shape: tuple, axis: int) -> Any:
    """One Jacobian block, shape out_shape + in_shape, from one sweep per coordinate (of the argument: axis -1;
    of the output: axis 0)."""
    if axis == -1:
        block = np.stack([np.asarray(p, dtype=float) * np.ones(out_shape) for p in parts], axis=-1)
    else:
        block = np.stack([np.asarray(p, dtype=float) * np.ones(in_shape) for p in parts], axis=0)
    block = block.reshape(out_shape + in_shape)
    return block if block.shape else float(block)


def _jacobian_maker(fn: Any, argnums: Any, has_aux: bool, optimize: Any, check: bool | None, forward: bool,
                    name: str) -> Callable:
    made = (jacfwd if forward else jacrev, fn, dict(argnums=argnums, has_aux=has_aux, optimize=optimize, check=check))
    fn = _underlying(fn)
    _refuse_early(fn)
    indices, several = _resolve_wrt(fn, argnums)

    def matrix(*args: Any) -> Any:
        args = _bind(fn, args, {})
        for i in indices:
            if any(np.iscomplexobj(v) for v in [args[i]]):
                raise BadArgument(f"{name} of complex arguments: s2s does not pick a convention for it",
                                  hint="use s2s.grad of a real-valued function, s2s.jvp or s2s.vjp")
        out, aux, blocks = _jacobian_blocks(fn, args, indices, forward, has_aux, optimize, check)
        _refuse_non_numeric(fn, out, "a Jacobian")
        if isinstance(out, (tuple, list)):
            result: Any = tuple(tuple(b[k] for b in blocks) if several else blocks[0][k] for k in range(len(out)))
        else:
            result = tuple(b[0] for b in blocks) if several else blocks[0][0]
        return (result, aux) if has_aux else result

    return _wrap(fn, Options(indices, several, "jacobian", False, optimize), matrix, name, made)


def jacfwd(fn: Any, argnums: Any = 0, has_aux: bool = False, *, optimize: bool = True,
           check: bool | None = None) -> Callable:
    """The Jacobian by forward mode (one jvp per coordinate of the argument), shape f.shape + x.shape, as JAX's
    jacfwd: argnums a position (or name) or a tuple of them (then a tuple of Jacobians), has_aux=True for f
    returning (output, aux) (then (Jacobian, aux)); f returning a tuple gives one Jacobian per output."""
    return _jacobian_maker(fn, argnums, has_aux, optimize, check, True, "jacfwd")


def jacrev(fn: Any, argnums: Any = 0, has_aux: bool = False, *, optimize: bool = True,
           check: bool | None = None) -> Callable:
    """The Jacobian by reverse mode (one vjp per coordinate of the output), as JAX's jacrev (see jacfwd)."""
    return _jacobian_maker(fn, argnums, has_aux, optimize, check, False, "jacrev")


# ---------------------------------------------------------------- batching

def vmap(fn: Any = None, in_axes: Any = 0, out_axes: Any = 0, *, optimize: Any = True) -> Any:
    """The function of a batch of examples: `s2s.vmap(f, in_axes=(None, 0))(params, X)` is `f(params, x)` for each
    row x of X, stacked, computed by vectorized NumPy code that s2s generates from f's source (a loop over the batch
    only where no batched form exists, said in the code's header). in_axes: the batch axis of each argument (an
    int for all of them, None for one the same for every example, or a tuple with one entry per argument, each an
    int, None or a tree like the argument); out_axes: where the batch axis goes in the output (as JAX has them).
    fn may be a derivative s2s made (`s2s.vmap(s2s.grad(loss), in_axes=(None, 0, 0))`: per-example gradients), and
    the result can be differentiated or batched again. `s2s.source(s2s.vmap(f), *args)` shows the batched code."""
    if fn is None:
        return lambda f: vmap(f, in_axes, out_axes, optimize=optimize)
    if isinstance(in_axes, dict):
        raise BadArgument("in_axes is a dict: give a tuple with one entry per positional argument (a dict there "
                          "for a dict argument)")
    spec = batching.BatchSpec(batching.normalize_axes(in_axes), batching.normalize_axes(out_axes), _passes(optimize))
    made = (vmap, fn, dict(in_axes=in_axes, out_axes=out_axes, optimize=optimize))
    fn = _underlying(fn)
    _refuse_early(fn)
    return _wrap(fn, spec, batching.caller(fn, spec), "vmap", made)


# the rules that call s2s's transformations when they run find them here (rules/nested.py, rules/integrate.py); the
# desugaring knows s2s.grad and s2s.value_and_grad called inside a function by this mark
registry.provide(grad=grad, value_and_grad=value_and_grad, jvp=jvp, vjp=vjp, hvp=hvp,
                 forward_derivative=forward_derivative)
grad.__s2s_maker__ = value_and_grad.__s2s_maker__ = vmap.__s2s_maker__ = True      # type: ignore[attr-defined]
