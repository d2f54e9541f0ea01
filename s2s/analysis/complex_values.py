"""Complex numbers: which values of a function may be complex, and what the transforms do about it.

s2s follows autograd's convention. The gradient of a real-valued f(z), z = x + iy, is df/dx - i df/dy (gradient
descent steps along its conjugate: z - lr * conj(grad) decreases f); for a holomorphic f, grad gives f'(z). With
it the adjoint rules of holomorphic functions (+, *, /, exp, log, sin, power, matmul, sum, the FFTs...) keep
their real formulas (g * f'(z)); the others have rules of their own for complex arguments (rules/complex_numbers.py:
abs, real, imag, conj, angle); and the adjoint of a real value is real: where a contribution computed with complex
values reaches a real value, reverse mode keeps its real part (autograd's `unbroadcast`/`match_complex`).

`analyze(fn)` gives each value's possible kinds as bits, REAL | COMPLEX (both: the code decides when it runs),
from the arguments' dtypes (set with `arguments(args)` by whoever makes a derivative for arguments), constants,
the globals the function reads and the attributes of objects known then (`self.w`, `cfg.scale`: as they are when
the derivative is made; an attribute of an object known only when the code runs may be either) and a table of
what produces complex values from real ones (fft, astype with a complex dtype, ...). A function without complex values is transformed
exactly as before: nothing here writes code for it.

`rule_for(prim, ...)` is the fence: a function whose real rule assumes real arguments (maximum, sort, a
comparison mask...) is refused when it meets complex ones, at transform time, or (when only the values decide)
by a check that raises RefusedWhenRun in the derivative.
"""
from __future__ import annotations

import contextlib
import contextvars
import types
from typing import Any, Callable, Iterator

import numpy as np

from s2s import runtime
from s2s.analysis.dataflow import Domain, solve
from s2s.frontend.desugar import helpers as desugared
from s2s.ir.core import Atom, Block, Const, For, Function, If, Op, Value, prim_name, stmt_blocks, walk
from s2s.rules import registry

REAL, COMPLEX, EITHER = 1, 2, 3

# (bits of each argument, the arguments) of the derivative being made
_ARGUMENTS: contextvars.ContextVar[tuple | None] = contextvars.ContextVar("s2s_complex_arguments", default=None)

# ---------------------------------------------------------------- what is complex

def bits_of(value: Any) -> int:
    """REAL, COMPLEX or EITHER for a value (a container: what its leaves are); 0 for what is not a number."""
    if isinstance(value, (complex, np.complexfloating)):
        return COMPLEX
    if isinstance(value, (bool, int, float, np.generic)):
        return REAL
    dtype = getattr(value, "dtype", None)
    if isinstance(dtype, np.dtype) and (isinstance(value, np.ndarray) or runtime._foreign(value)):
        return COMPLEX if dtype.kind == "c" else REAL
    if isinstance(value, (tuple, list)) and len(value) < 1000:
        bits = 0
        for v in value:
            bits |= bits_of(v)
        return bits
    if isinstance(value, dict):
        return bits_of(list(value.values()))
    return 0


@contextlib.contextmanager
def arguments(args: Any) -> Iterator[None]:
    """Make the derivatives built inside for arguments like args (their dtypes decide what is complex)."""
    token = _ARGUMENTS.set(None if args is None else (tuple(bits_of(a) for a in args), tuple(args)))
    try:
        yield
    finally:
        _ARGUMENTS.reset(token)


@contextlib.contextmanager
def argument_bits(bits: tuple | None) -> Iterator[None]:
    """Make the derivatives built inside for arguments of these kinds (a function s2s made from a recursive one,
    called with the caller's values: s2s/transforms/recursion.py)."""
    token = _ARGUMENTS.set(None if bits is None else (tuple(bits), (None,) * len(bits)))
    try:
        yield
    finally:
        _ARGUMENTS.reset(token)


def _dtype_bits(value: Any) -> int | None:
    if isinstance(value, type) and issubclass(value, (complex, np.complexfloating)):
        return COMPLEX
    if isinstance(value, type) and issubclass(value, (bool, int, float, np.generic)):
        return REAL
    try:
        return COMPLEX if np.dtype(value).kind == "c" else REAL
    except TypeError:
        return None


def _const_bits(value: Any) -> int:
    if isinstance(value, (np.ndarray, np.generic, complex, float, int, bool, tuple, list)):
        return bits_of(value)
    return 0


_MISSING = object()


def _global_value(op: Op) -> Any:
    """What a global or closure variable holds now (the derivative is made for it as it is)."""
    name, owner = op.args[0].value, op.args[1].value
    if hasattr(owner, "holder"):            # an array an object holds (global_shapes.Held)
        return owner.value(name)
    fn = getattr(owner, "__func__", owner)
    code = getattr(fn, "__code__", None)
    if code is not None and name in code.co_freevars and fn.__closure__:
        try:
            return fn.__closure__[code.co_freevars.index(name)].cell_contents
        except ValueError:          # an empty cell
            return _MISSING
    return getattr(fn, "__globals__", {}).get(name, _MISSING)


def _static_attribute(obj: Any, name: str) -> Any:
    """obj.name as it is now, read without running a property that writes (its value is then not known)."""
    import inspect
    try:
        value = inspect.getattr_static(obj, name, _MISSING)
    except Exception:           # noqa: BLE001
        return _MISSING
    if isinstance(value, property) and isinstance(value.fget, types.FunctionType):
        from s2s.frontend.getters import writes
        if writes(value.fget):
            return _MISSING     # a property that writes: never run here (desugar/properties.py runs it once)
        try:
            return getattr(obj, name)
        except Exception:       # noqa: BLE001
            return _MISSING
    if value is not _MISSING and hasattr(type(value), "__get__") and not isinstance(value, (np.ndarray, np.generic)):
        return _MISSING         # a method, another descriptor: what reading it gives is known only when it runs
    return value


def _op_bits(op: Op, get: Callable[[Atom], int], known: dict[int, Any]) -> int:
    prim = op.prim
    if prim is runtime.free_name:                   # a global: as it is now
        value = _global_value(op)
        if value is not _MISSING:
            known[id(op.outs[0])] = value
        return bits_of(value) if value is not _MISSING else 0
    if prim is desugared.live and op.outs and isinstance(op.args[0], Const):
        known[id(op.outs[0])] = op.args[0].value        # an object known when the derivative is made (self)
        return 0
    if prim is getattr and len(op.args) >= 2 and isinstance(op.args[1], Const) and isinstance(op.args[1].value, str):
        owner = op.args[0]
        if isinstance(owner, Value) and id(owner) in known:    # an attribute of an object known now
            value = _static_attribute(known[id(owner)], op.args[1].value)
            if value is not _MISSING:
                known[id(op.outs[0])] = value
                return bits_of(value)
        bits = get(owner)
        return bits if bits else EITHER            # of a number or array: its kind; of an unknown object: either
    dtype = op.kwargs.get("dtype")
    position = registry.record(prim).dtype_at       # where it takes a dtype positionally (rules/record.py)
    if dtype is None and position is not None and position < len(op.args):
        dtype = op.args[position]
    if dtype is not None:
        if isinstance(dtype, Const):
            if dtype.value is not None:
                bits = _dtype_bits(dtype.value)
                return bits if bits is not None else EITHER
        else:
            return EITHER
    if isinstance(prim, type) and issubclass(prim, np.generic):       # np.complex64(x), np.float32(x)
        return COMPLEX if issubclass(prim, np.complexfloating) else REAL
    inputs = 0
    for a in list(op.args) + list(op.kwargs.values()):
        inputs |= get(a)
    if not _hashable(prim):
        return inputs
    result = registry.record(prim).complex_result       # what it gives for complex arguments (rules/record.py)
    if result == "real":
        return REAL
    if result == "complex":
        return COMPLEX
    if result == "either" or _declared_either(prim):
        return COMPLEX if inputs == COMPLEX else EITHER
    if result == "with_real":
        return inputs | REAL            # real eigenvalues, eigenvectors of the matrix's kind
    return inputs


def _declared_either(prim: Any) -> bool:
    """A function rules/ declare complex or real as the values decide (registry.complex_from_real: sqrtm)."""
    from s2s.rules import registry
    return registry.makes_complex(prim)


def _hashable(prim: Any) -> bool:
    try:
        hash(prim)
        return True
    except TypeError:
        return False


def _source(prim: Any) -> bool:
    """Whether prim makes a complex value (or one that may be) from real ones: its record's complex_result is
    "complex" or "either", or its rules compute with complex values (complex_inside)."""
    rec = registry.record(prim)
    return rec.complex_result in ("complex", "either") or rec.complex_inside


_PLAIN = {float, int, bool, str, type(None)}


def _may_make_complex(fn: Function, bits: dict[int, int], known: dict[int, Any]) -> bool:
    """Whether some operation of fn can make a value that may be complex when no argument may be (bits: the
    arguments'): a complex constant, global or attribute, a dtype, a function with complex results (the sources
    of _op_bits). One sweep; when it says no, the analysis has nothing to find: every value is real or not a
    number."""
    known = dict(known)
    plain, free_name = _PLAIN, runtime.free_name
    ordinary: dict[int, bool] = {}        # id(prim) -> none of the cases below but the constants (prims outlive fn)

    def complex_constant(atoms: Any) -> bool:
        for a in atoms:
            if a.__class__ is Const and a.value.__class__ not in plain and _const_bits(a.value) & COMPLEX:
                return True
        return False

    def block(b: Block) -> bool:
        for stmt in b.stmts:
            if stmt.__class__ is not Op:
                if any(block(inner) for inner in stmt_blocks(stmt)):
                    return True
                continue
            prim = stmt.prim
            simple = ordinary.get(id(prim))
            if simple is None:
                simple = ordinary[id(prim)] = not (_source(prim) or prim is free_name or prim is getattr or
                                                   registry.record(prim).dtype_at is not None
                                                   or isinstance(prim, type) or _hashable(prim) and _declared_either(prim))
            if simple and not stmt.kwargs:
                if complex_constant(stmt.args):
                    return True
                continue
            if _source(prim) or _hashable(prim) and _declared_either(prim):
                return True
            if prim is free_name:
                value = _global_value(stmt)
                if value is not _MISSING:
                    if bits_of(value) & COMPLEX:
                        return True
                    known[id(stmt.outs[0])] = value
                continue
            if prim is getattr:
                if len(stmt.args) < 2 or not isinstance(stmt.args[1], Const) or \
                        not isinstance(stmt.args[1].value, str):
                    return True
                owner = stmt.args[0]
                value = getattr(known[id(owner)], stmt.args[1].value, _MISSING) \
                    if isinstance(owner, Value) and id(owner) in known else _MISSING
                if value is not _MISSING:
                    if bits_of(value) & COMPLEX:
                        return True
                    known[id(stmt.outs[0])] = value
                elif not (isinstance(owner, Value) and bits.get(id(owner))):    # of an unknown object: either
                    return True
                continue
            dtype = stmt.kwargs.get("dtype")
            position = registry.record(prim).dtype_at
            if dtype is None and position is not None and position < len(stmt.args):
                dtype = stmt.args[position]
            if dtype is not None and not (isinstance(dtype, Const) and (
                    dtype.value is None or _dtype_bits(dtype.value) == REAL)):
                return True
            if isinstance(prim, type) and issubclass(prim, np.complexfloating):
                return True
            if complex_constant(stmt.args) or complex_constant(stmt.kwargs.values()):
                return True
        return False

    return block(fn.body)


class _Bits(Domain):
    """The possible kinds (REAL | COMPLEX bits) of values: a domain of s2s/analysis/dataflow.py, joined by or."""

    top = 0

    def __init__(self, params: dict, known: dict[int, Any]):
        super().__init__()
        self.facts.update(params)
        self.known = known          # objects known when the derivative is made, by id (read by _op_bits)

    def const(self, value: Any) -> int:
        return _const_bits(value)

    def join(self, a: int, b: int) -> int:
        return a | b

    def add(self, v: Atom, bits: int) -> None:
        if isinstance(v, Value):
            old = self.facts.get(v, 0)
            if old | bits != old:
                self.set(v, old | bits)

    def op(self, op: Op) -> None:
        if op.prim is runtime.push:             # the stack holds what is pushed (a pop reads it)
            self.add(op.args[0], self.of(op.args[1]))
            return
        bits = self.of(op.args[0]) if op.prim is runtime.pop else _op_bits(op, self.of, self.known)
        for o in op.outs:
            self.add(o, bits)

    def branch(self, out: Value, then: Atom, orelse: Atom) -> None:
        self.add(out, self.of(then) | self.of(orelse))

    def enter(self, loop: Any) -> None:
        if isinstance(loop, For):
            self.add(loop.index, REAL)
        for c, i, r in zip(loop.carried, loop.inits, loop.body.results):
            self.add(c, self.of(i) | self.of(r))

    def leave(self, loop: Any) -> None:
        for c, r, o in zip(loop.carried, loop.body.results, loop.outs):
            self.add(c, self.of(r))
            self.add(o, self.of(c))


class Analysis:
    """The possible kinds (bits) of every value of a function."""

    def __init__(self, fn: Function):
        given = _ARGUMENTS.get()
        self.bits: dict[int, int] = {}
        self.known: dict[int, Any] = {}         # objects known when the derivative is made: attributes read now
        for k, p in enumerate(fn.params):
            if given is None:
                self.bits[id(p)] = REAL
            elif k < len(given[0]):
                self.bits[id(p)] = given[0][k]
                if not given[0][k]:                 # an object: its attributes are read as they are now
                    self.known[id(p)] = given[1][k]
            else:
                self.bits[id(p)] = EITHER
        self.any_complex = False
        if not any(b & COMPLEX for b in self.bits.values()) and not _may_make_complex(fn, self.bits, self.known):
            return              # nothing can be complex: every value is real (or not a number), as the sweep finds
        params = {p: self.bits[id(p)] for p in fn.params if id(p) in self.bits}
        domain, = solve(fn, _Bits(params, self.known))      # (s2s/analysis/dataflow.py)
        self.bits = {id(v): bits for v, bits in domain.facts.items()}
        self.any_complex = any(b & COMPLEX for b in self.bits.values()) or any(
            isinstance(s, Op) and registry.record(s.prim).complex_inside for s in walk(fn.body))

    def of(self, atom: Atom) -> int:
        if isinstance(atom, Const):
            return _const_bits(atom.value) or REAL
        return self.bits.get(id(atom), 0) or REAL

    def touches_complex(self, op: Op) -> bool:
        """Whether an operation reads or makes a value that may be complex (or its rule computes with some)."""
        if registry.record(op.prim).complex_inside:
            return True
        return any(self.of(a) & COMPLEX for a in [*op.args, *op.kwargs.values(), *op.outs]
                   if isinstance(a, Value) or _const_bits(a.value) & COMPLEX)


def analyze(fn: Function, active: set[int] | None = None) -> Analysis:
    """The analysis of fn; refuses a function s2s takes as constant on reals that meets active complex values."""
    analysis = Analysis(fn)
    if analysis.any_complex and active is not None:
        for stmt in walk(fn.body):
            if isinstance(stmt, Op) and registry.record(stmt.prim).constant_on_reals and any(
                    isinstance(a, Value) and id(a) in active and analysis.of(a) & COMPLEX for a in stmt.args):
                from s2s.errors import NoDerivativeRule
                raise NoDerivativeRule(f"{refuse_reason(stmt.prim)} (it is constant on reals only)", stmt.loc,
                                       hint="write z / np.abs(z) for the complex sign")
    return analysis


# ---------------------------------------------------------------- the fence

def _allowed(prim: Any) -> bool:
    from s2s.rules import registry
    if not _hashable(prim):
        return False
    rec = registry.record(prim)
    if rec.holomorphic or registry.find_complex_adjoint(prim) is not None:
        return True
    if registry.linear_argnums(prim) is not None:           # linear: its adjoint is its transpose
        return True
    return rec.complex_safe or prim in runtime.EMITTED_HELPERS


def refuse_reason(prim: Any) -> str:
    return (f"s2s differentiates {prim_name(prim)} for real arguments only: its rule assumes real values, and "
            f"here it meets complex ones")


def adjoint_rule(prim: Any) -> Callable | None:
    """The adjoint rule of prim for arguments that may be complex, None when it is the real one."""
    from s2s.rules import registry
    return registry.find_complex_adjoint(prim) if _hashable(prim) else None


def tangent_rule(prim: Any) -> Callable | None:
    from s2s.rules import registry
    return registry.find_complex_tangent(prim) if _hashable(prim) else None


def allowed(prim: Any) -> bool:
    """Whether prim's rules are right for complex arguments (its own complex rule, or a holomorphic one)."""
    return _allowed(prim)


def match_real() -> Callable:
    """The helper that keeps the real part of an adjoint where its value turns out real when the code runs."""
    from s2s.rules.complex_numbers import _match_real
    return _match_real


def fence(op: Op, analysis: Analysis) -> list[Atom]:
    """Refuse op when its rule assumes real values and it meets complex ones; the values to check when the
    code runs where only they decide (complex or real)."""
    from s2s.errors import NoDerivativeRule
    from s2s.rules import registry
    if allowed(op.prim) or registry.is_nondifferentiable(op.prim):
        return []
    atoms = [a for a in [*op.args, *op.kwargs.values(), *op.outs] if isinstance(a, Value) and analysis.of(a) & COMPLEX]
    if any(analysis.of(a) == COMPLEX for a in atoms) or any(
            isinstance(a, Const) and _const_bits(a.value) & COMPLEX for a in [*op.args, *op.kwargs.values()]):
        raise NoDerivativeRule(refuse_reason(op.prim), op.loc,
                               hint="take np.real, np.imag or np.abs first, or register a rule for complex "
                                    "arguments in rules/complex_numbers.py")
    return atoms


def guarded(contribution: Atom, guard: list[Atom], prim: Any, rev: Any, out: list, loc: Any) -> Atom:
    """contribution, through a check per value of guard that raises RefusedWhenRun if it is complex."""
    if not guard or not isinstance(contribution, Value):
        return contribution
    from s2s.rules.complex_numbers import _real_only
    name = prim_name(prim)
    for atom in guard:
        checked = rev.fresh(contribution.hint)
        out.append(Op(_real_only, [contribution, atom, Const(name)], [checked], loc=loc))
        contribution = checked
    return contribution


# ---------------------------------------------------------------- shapes (s2s/analysis/shapes.py asks here)

def shape_of(op: Op, inputs: list) -> Any:
    """The abstract value (shapes.Abstract) of an FFT or of an FFT rule's helper, None if not one or unknown."""
    from s2s.analysis.values import Abstract
    prim = op.prim
    if not _hashable(prim):
        return None
    rec = registry.record(prim)
    if rec.fft is not None:        # (kind, axes): rules/fft.py declares them
        kind, axes_taken = rec.fft
        x = inputs[0] if inputs else None
        if x is None or x.python or not x.shape:
            return None
        names = ("n", "axis", "norm", "out") if axes_taken == 1 else ("s", "axes", "norm", "out")
        given = dict(zip(names, op.args[1:]))
        given.update(op.kwargs)
        if not all(isinstance(a, Const) for a in given.values()):
            return None
        values = {k: a.value for k, a in given.items()}
        try:
            if axes_taken == 1:
                n, axes = values.get("n"), [values.get("axis", -1)]
                sizes = None if n is None else [n]
            else:
                sizes = values.get("s")
                axes = values.get("axes", (-2, -1) if axes_taken == 2 else None)
                if axes is None:
                    axes = range(x.ndim) if sizes is None else range(x.ndim - len(sizes), x.ndim)
            axes = [int(k) % x.ndim for k in axes]
            shape = list(x.shape)
            for j, k in enumerate(axes):
                if sizes is not None:
                    shape[k] = sizes[j]
            last = axes[-1]
            if kind == "r":
                shape[last] = shape[last] // 2 + 1
            elif kind == "i" and (sizes is None or sizes[-1] is None):
                shape[last] = 2 * (x.shape[last] - 1)
            single = np.result_type(x.dtype, np.float32) in (np.float32, np.complex64)
            dtype = (np.float32 if single else np.float64) if kind == "i" else \
                (np.complex64 if single else np.complex128)
            return Abstract(tuple(int(n) for n in shape), np.dtype(dtype))
        except (TypeError, ValueError, IndexError):
            return None
    name = rec.shape_rule           # the complex rules' helpers (rules/complex_numbers.py, rules/fft.py)
    if name in ("real_only", "cast_like", "match_real") and len(inputs) >= 2 and \
            None not in inputs[:2] and not inputs[0].python:
        g, x = inputs[0], inputs[1]
        if name == "real_only":
            return g
        if name == "cast_like" and not x.python:
            return Abstract(g.shape, x.dtype)
        if name == "match_real" and not x.python:
            real = g.dtype.kind == "c" and x.dtype.kind != "c"
            return Abstract(g.shape, np.dtype(g.dtype.char.lower()) if real else g.dtype)
    if name in ("fit", "irfftn_adjoint") and len(inputs) >= 2 and None not in inputs[:2]:
        y, like = inputs[0], inputs[1]
        if name == "fit" and not like.python:
            return Abstract(like.shape, y.dtype)
        if name == "irfftn_adjoint" and not like.python:
            single = np.result_type(y.dtype, np.float32) in (np.float32, np.complex64)
            return Abstract(like.shape, np.dtype(np.complex64 if single else np.complex128))
    return None


def in_place_floats(fn: Function, floats: set[int]) -> set[int]:
    """Of the values the in-place pass may write float results into, those that no complex result reaches:
    where complex values occur, only complex ones (a real array cannot hold a complex result)."""
    analysis = Analysis(fn)
    if not analysis.any_complex:
        return floats
    return {k for k in floats if analysis.bits.get(k) == COMPLEX}


def is_complex_argument(i: int) -> bool:
    """Whether argument i of the derivative being made may be complex."""
    given = _ARGUMENTS.get()
    return given is not None and i < len(given[0]) and bool(given[0][i] & COMPLEX)

