"""The shapes of the arrays a function reads from its globals and closures: specialized on like an argument's.

A derivative is specialized on its arguments' shapes (s2s/analysis/shapes.py, s2s/passes/specialize.py). An array the function
reads from a module global or a closure variable (`U` in `u = U.copy()`) is known just as well when the
derivative is made: `facts(fn)` gives the abstract value of each (an `Abstract` for a NumPy array of numbers;
nothing else is specialized on), keyed as `key_of` keys the IR's `runtime.free_name` reads, and `state(fn)` is
what the pipeline's cache keys on. A number an object holds (`self.df_resid`, `self.slope`: a Python or NumPy int
or float; and a number a module global or a closure variable holds) is specialized on the same way, by its type
(`Abstract((), float)`): the transform knows it is a number
of that type (its kind "scalar": mode="auto" may take forward mode, the shape pass resolves the adjoints around it),
its value is still read at each call.

Such a derivative is only right while each of those globals still holds an array of that shape and dtype. It
checks so on entry, once per global (the emitter writes `U_ = _global_array(U, (20, 20), np.float64, 'U')`: the
global read into a local that every later read uses, its class, shape and dtype checked), and raises
`GlobalChanged` when one does not hold; a held number's local is `df_resid_ = _global_number(_const.df_resid,
float, 'self.df_resid')`, its exact class checked (an int, a NumPy float or an array in its place makes the
derivative anew; another value of that class is simply the value this call reads);
the dispatcher (s2s/driver/dispatch.py) then makes the derivative anew for the global as it is now. A global rebound to
another shape, another dtype or a list, or reshaped in place (`U.shape = ...`, `U.resize(...)`), is never served
by a derivative that assumed the old shape. An exported derivative raises a ValueError instead (there is no
dispatcher to make it anew).
"""
from __future__ import annotations

from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any, Callable, Iterator

import numpy as np

from s2s import runtime
from s2s.analysis.values import Abstract, abstract_of
from s2s.errors import S2SError
from s2s.ir.core import Function, Op, walk

_MISSING = object()


class Held:
    """The owner of a `runtime.free_name` read of an array an object holds (`self.exog`, `self.parameters["W"]`):
    specialized on like a global array (s2s/ir/object_state.py makes such reads). item: a dict's item, else an
    instance attribute."""
    __slots__ = ("holder", "item", "shown")

    def __init__(self, holder: Any, item: bool, shown: str):
        self.holder, self.item, self.shown = holder, item, shown

    def value(self, name: str) -> Any:
        if self.item:
            return self.holder.get(name, _MISSING)
        return getattr(self.holder, "__dict__", {}).get(name, _MISSING)

    def namespace(self) -> dict:
        return self.holder if self.item else self.holder.__dict__


def owner_key(owner: Any) -> int:
    """What a read's owner is keyed by: the function (its globals or closure), or the object holding the array."""
    if isinstance(owner, Held):
        return id(owner.holder)
    return id(getattr(owner, "__func__", owner))


class GlobalChanged(S2SError):
    """Raised on entry by a derivative specialized on a global array's shape and dtype (or a held number's type)
    when they changed."""

    def __init__(self, name: str, what: str = "an array of the shape and dtype"):
        self.name = name
        super().__init__(f"the global {name!r} no longer holds {what} this derivative was made for",
                         hint="call the derivative s2s returned (s2s.grad(f)): it makes it anew")


def key_of(op: Op) -> tuple[int, str]:
    """(id of the owner function, or of the object holding the array, name) of a `runtime.free_name` read."""
    return owner_key(op.args[1].value), op.args[0].value


def value_of(owner: Any, name: str) -> Any:
    """The value a read of name in owner finds now: a closure cell's contents, else the module global (or what an
    object holds)."""
    if isinstance(owner, Held):
        return owner.value(name)
    owner = getattr(owner, "__func__", owner)
    code = getattr(owner, "__code__", None)
    if code is None:
        return _MISSING
    if name in code.co_freevars:
        try:
            return owner.__closure__[code.co_freevars.index(name)].cell_contents
        except ValueError:          # an empty cell: not assigned yet
            return _MISSING
    return owner.__globals__.get(name, _MISSING)


def reads(ir: Function) -> list[tuple[Any, str]]:
    """(owner, name) of each global or closure variable the function's IR reads (once each)."""
    found = getattr(ir, "free_reads", None)
    if found is None:
        found = {key_of(op): (op.args[1].value, op.args[0].value) for op in walk(ir.body)
                 if isinstance(op, Op) and op.prim is runtime.free_name}
        found = ir.free_reads = list(found.values())       # type: ignore[attr-defined]
    return found


def abstract_global(value: Any) -> Abstract | None:
    """What a derivative is specialized on about a global's value: a NumPy array's shape and dtype, or nothing."""
    if type(value) is not np.ndarray:
        return None
    found = abstract_of(value)
    return found if isinstance(found, Abstract) else None


# the numbers an object holds that a derivative is specialized on by their class (checked on entry): not bool (a
# flag, which code branches on) nor complex (s2s/analysis/complex_values.py decides on those as they are)
HELD_NUMBERS = frozenset({float, int, np.float64, np.float32, np.int64, np.int32})


def abstract_held(value: Any) -> Abstract | None:
    """What a derivative is specialized on about a value an object holds: an array's shape and dtype, a number's
    type (`Abstract((), float)`, `Abstract((), dtype('float64'))` for a NumPy float), or nothing."""
    if type(value) in HELD_NUMBERS:
        return abstract_of(value)
    return abstract_global(value)


def abstract_read(owner: Any, name: str) -> Abstract | None:
    """What a derivative is specialized on about a `runtime.free_name` read, as the value is now: an array's shape
    and dtype, a number's class (one an object holds, a module global, a closure variable)."""
    return abstract_held(value_of(owner, name))


def checked_number(owner: Any, name: str) -> bool:
    """Whether a read is of a number (an object's, a global, a closure variable) that the derivative being made
    checks on entry: a number to the transform (the kind "scalar")."""
    return _CHECKED.get() and type(value_of(owner, name)) in HELD_NUMBERS


# whether the derivative being made checks on entry the global arrays it reads (specialized on their shapes)
_CHECKED: ContextVar[bool] = ContextVar("s2s_global_checks", default=False)


@contextmanager
def checked_on_entry(on: bool) -> Iterator[None]:
    """The derivative made inside checks the global arrays it reads on entry (on) or not."""
    token = _CHECKED.set(on)
    try:
        yield
    finally:
        _CHECKED.reset(token)


def global_is_array(owner: Any, name: str) -> bool:
    """Whether a global read is an array to the transform (the kind "array", as an array argument): a NumPy array
    of numbers now, in a module global (one rebound to something else makes the derivative anew: dispatch.stale)
    or, when the derivative checks the globals it reads on entry, in a closure variable."""
    if isinstance(owner, Held):
        return _CHECKED.get() and abstract_global(owner.value(name)) is not None
    owner = getattr(owner, "__func__", owner)
    code = getattr(owner, "__code__", None)
    if code is None or name in code.co_freevars and not _CHECKED.get():
        return False
    return abstract_global(value_of(owner, name)) is not None


def checked_inexact(op: Op) -> bool:
    """Whether a `runtime.free_name` read is a global float (or complex) array, or a float an object holds, that
    the derivative checks on entry."""
    if not _CHECKED.get():
        return False
    found = abstract_read(op.args[1].value, op.args[0].value)
    return found is not None and (found.dtype is float if found.python else found.dtype.kind in "fc")


def facts(ir: Function) -> dict[tuple[int, str], Abstract]:
    """The abstract value of each global array the function's IR reads, as the globals are now."""
    found = {}
    for owner, name in reads(ir):
        abstract = abstract_read(owner, name)
        if abstract is not None:
            found[owner_key(owner), name] = abstract
    return found


def state(ir: Function) -> tuple:
    """What a derivative specialized on the globals' shapes depends on: a key for the pipeline's cache (each
    global array's shape and dtype, each number's class, in the order of reads(ir)). Cheap: the api's wrappers ask
    it on every call."""
    places = getattr(ir, "free_places", None)
    if places is None:
        places = ir.free_places = [_place(owner, name) for owner, name in reads(ir)]  # type: ignore[attr-defined]
    found = []
    for cell, namespace, name in places:
        if cell is not None:
            try:
                value = cell.cell_contents
            except ValueError:
                value = None
        else:
            value = namespace.get(name) if namespace is not None else None
        found.append((value.shape, value.dtype) if type(value) is np.ndarray else
                     type(value) if type(value) in HELD_NUMBERS else None)
    return tuple(found)


def _place(owner: Any, name: str) -> tuple:
    """(the closure cell, or None; the module's namespace, or None; name) where a read of name in owner looks."""
    if isinstance(owner, Held):
        return None, owner.namespace(), name
    owner = getattr(owner, "__func__", owner)
    code = getattr(owner, "__code__", None)
    if code is None:
        return None, None, name
    if name in code.co_freevars:
        return owner.__closure__[code.co_freevars.index(name)], None, name
    return None, owner.__globals__, name


def dtype_text(dtype: np.dtype) -> str:
    """The dtype as the generated code spells it: np.float64, or np.dtype('>f8') when no NumPy name gives it."""
    name = dtype.type.__name__
    if getattr(np, name, None) is dtype.type and np.dtype(dtype.type) == dtype:
        return f"np.{name}"
    return f"np.dtype({dtype.str!r})"


def global_array(value: Any, shape: tuple, dtype: Any, name: str) -> Any:
    """value, a global array read on entry by a derivative specialized on its shape and dtype; GlobalChanged if
    it no longer has them (about 0.1 µs)."""
    if value.__class__ is not np.ndarray or value.shape != shape or value.dtype != dtype:
        raise GlobalChanged(name)
    return value


def global_number(value: Any, cls: type, name: str) -> Any:
    """value, a number an object holds, read on entry by a derivative specialized on its class; GlobalChanged if it
    is now of another class (an int where a float was, an array)."""
    if value.__class__ is not cls:
        raise GlobalChanged(name, f"a {cls.__name__}")
    return value


def number_class(owner: Any, name: str, abstract: Abstract) -> type | None:
    """The class a number's read is checked for (float, np.float64), or None: an array's shape and dtype are.
    (A NumPy scalar and a 0-d array have one abstract value: which one it is, is read from the value.)"""
    if abstract.python:
        return abstract.dtype
    if abstract.shape == () and type(value_of(owner, name)) is not np.ndarray:
        return abstract.dtype.type
    return None


def _class_text(cls: type) -> str:
    return cls.__name__ if cls in (float, int) else f"np.{cls.__name__}"


def read_text(read: str, name: str, abstract: Abstract, reference: Callable[[Any, str], str],
              number: type | None = None) -> str:
    """The expression that reads the global (read: its live read) once, on entry, checking it (number: the class
    of a held number, number_class)."""
    if number is not None:
        return f"{reference(global_number, '_global_number')}({read}, {_class_text(number)}, {name!r})"
    return (f"{reference(global_array, '_global_array')}({read}, {abstract.shape!r}, {dtype_text(abstract.dtype)}, "
            f"{name!r})")


def exported_check(local: str, name: str, abstract: Abstract, number: type | None = None) -> tuple[str, str]:
    """(the test, the raise) an exported module checks its global with: there is no dispatcher to make the
    derivative anew, so it says what to do."""
    if number is not None:
        return (f"type({local}) is not {_class_text(number)}",
                f"raise ValueError(\"{name!s} is not a {number.__name__}: export the derivative again\")")
    test = (f"type({local}) is not np.ndarray or {local}.shape != {abstract.shape!r} or "
            f"{local}.dtype != {dtype_text(abstract.dtype)}")
    return test, (f"raise ValueError(\"the global {name!s} is not a {abstract.dtype} array of shape "
                  f"{abstract.shape!r}: export the derivative again\")")
