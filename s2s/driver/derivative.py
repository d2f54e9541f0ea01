"""The object `s2s.grad` (value_and_grad, hvp, hessian, jacobian) returns: callable as a function, and picklable.

A function made at run time cannot be pickled: pickle finds a function by its module and name, and `loss_grad`
is in no module, so a derivative could not go to a process pool or a Dask worker. A `Derivative` is called as the
function it was made from (its class's `__call__` is the dispatcher's entry function, with the user's
signature: one look-up more per call than a function), binds as a method like a function, and pickles by
reference to what it was made of: `s2s.grad(f, wrt=1)` is pickled as the call `s2s.grad(f, wrt=1)`, made again
where it is unpickled. It pickles whenever its function does; otherwise pickling raises a PicklingError naming
the function (a lambda, a function defined inside another), except under a pickler that pickles such functions by
value (cloudpickle, dill: Dask falls back to cloudpickle), which is then given the function's source lines too.
A derivative that a module-level name holds (`@s2s.grad` on a `def`) is pickled by that name.
"""
from __future__ import annotations

import linecache
import os
import pickle
import sys
import types
from typing import Any, Callable

from s2s.driver.primal import root_function


class Derivative:
    """A derivative s2s made: called with the arguments of the function it differentiates."""
    __slots__ = ("__dict__", "__weakref__")
    __s2s_kept_on_self__ = True         # what s2s makes of it lives in its __dict__ (s2s/kept.py)

    def __get__(self, instance: Any, owner: Any = None) -> Any:
        """In a class body, a method: bound to the instance, as a function is."""
        return self if instance is None else types.MethodType(self, instance)

    def __copy__(self) -> Derivative:           # (a function copies as itself)
        return self

    def __deepcopy__(self, memo: dict) -> Derivative:
        return self

    def __repr__(self) -> str:
        return f"<s2s derivative {self.__qualname__} at {id(self):#x}>"

    def __reduce_ex__(self, protocol: int) -> Any:
        make, fn, keywords = self.__s2s_call__
        named = _named(self)
        if named is not None:           # `@s2s.grad def loss`: the module's `loss` is this derivative
            return named
        by_value = _pickled_by_value()
        lines = _source_lines(fn) if by_value else None
        return _made, (make, _reference(fn, self, by_value), keywords, lines)


def derivative(body: Callable, root: Callable, name: str, made: tuple) -> Derivative:
    """A Derivative whose call is body, with root's name, module and documentation (functools.wraps's), named
    `{root}_{name}`; made: (the transformation, the callable it was given, its keyword arguments)."""
    cls = type(f"{root.__name__}_{name}", (Derivative,), {"__call__": staticmethod(body), "__slots__": ()})
    cls.__module__ = __name__
    made_object = object.__new__(cls)
    d = made_object.__dict__
    for attribute in ("__module__", "__doc__", "__annotations__"):     # (functools.wraps's)
        d[attribute] = getattr(root, attribute, None)
    d.update({k: v for k, v in getattr(root, "__dict__", {}).items() if k != "__s2s_kept__"})
    d["__name__"] = d["__qualname__"] = f"{root.__name__}_{name}"
    d["__wrapped__"] = root
    d["__s2s_call__"] = made
    return made_object


def _made(make: Callable, fn: Any, keywords: dict, lines: list | None = None) -> Any:
    """The derivative again, where it is unpickled: make(fn, **keywords)."""
    code = getattr(root_function(fn), "__code__", None)
    if lines and code is not None:
        filename = code.co_filename
        if not linecache.getlines(filename):        # (a notebook cell's, or a file this machine does not have)
            linecache.cache[filename] = (sum(map(len, lines)), None, list(lines), filename)
    return make(fn, **keywords)


def _unwrapped(derivative: Derivative) -> Callable:
    return derivative.__wrapped__


def _lookup(module_name: Any, qualname: Any) -> Any:
    module = sys.modules.get(module_name) if isinstance(module_name, str) else None
    if module is None or not isinstance(qualname, str) or "<locals>" in qualname:
        return None
    found: Any = module
    for part in qualname.split("."):
        found = getattr(found, part, None)
        if found is None:
            return None
    return found


def _named(derivative: Derivative) -> str | None:
    """The module-level name that holds this derivative (a function decorated with @s2s.grad), if any."""
    root = root_function(derivative)
    qualname = getattr(root, "__qualname__", None)
    if _lookup(derivative.__module__, qualname) is derivative:
        return qualname
    return None


def _reference(fn: Any, derivative: Derivative, by_value: bool) -> Any:
    """fn as pickle can save it by reference; a PicklingError naming it when it cannot be."""
    if not isinstance(fn, types.FunctionType):
        return fn           # a method, a partial, a callable object, a derivative: pickled as pickle does
    found = _lookup(fn.__module__, fn.__qualname__)
    if found is fn:
        return fn
    if isinstance(found, Derivative) and root_function(found) is fn:   # its name holds its derivative now
        return _Unwrapped(found)
    if by_value:
        return fn
    code = fn.__code__
    where = f"{os.path.basename(code.co_filename)}:{code.co_firstlineno}"
    why = "a lambda" if fn.__name__ == "<lambda>" else \
        "defined inside another function" if "<locals>" in fn.__qualname__ else \
        f"not found as {fn.__module__}.{fn.__qualname__}"
    raise pickle.PicklingError(
        f"cannot pickle {derivative.__qualname__}, the derivative of {fn.__qualname__} ({where}): a derivative is "
        f"pickled by reference to its function, and {fn.__qualname__} is {why}; define it at the top level of "
        f"a module (cloudpickle, as Dask uses, pickles it by value)")


class _Unwrapped:
    """The function a module-level derivative was made from, pickled as that derivative's `__wrapped__`."""
    __slots__ = ("derivative",)

    def __init__(self, derivative: Derivative) -> None:
        self.derivative = derivative

    def __reduce__(self) -> Any:
        return _unwrapped, (self.derivative,)


def _pickled_by_value() -> bool:
    """Whether the pickler at work pickles functions by value (cloudpickle, dill): found on the stack."""
    frame = sys._getframe(2)
    for _ in range(12):
        if frame is None:
            return False
        if frame.f_globals.get("__name__", "").split(".")[0] in ("cloudpickle", "dill"):
            return True
        frame = frame.f_back
    return False


def _source_lines(fn: Any) -> list | None:
    """The lines of the file fn was read from, for a machine that does not have it (a function pickled by
    value)."""
    root = root_function(fn)
    code = getattr(root, "__code__", None)
    if code is None:
        code = getattr(getattr(root, "__func__", None), "__code__", None)
    return linecache.getlines(code.co_filename) or None if code is not None else None
