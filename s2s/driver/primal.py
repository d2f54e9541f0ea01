"""A function's primal IR: lowered from its source once per function and code object, and cached; `root_function`
is the user's function behind a derivative of a derivative. Below the pipeline: the checks that read other
functions' code (mutation.py, replay.py) read it here."""
from __future__ import annotations

import types
from typing import Callable

from s2s.frontend import depth
from s2s.frontend.parse import parse_function
from s2s.ir.core import Function, checked, clone_function
from s2s.ir.lower import lower
from s2s.ir.naming import Namer
from s2s.kept import FunctionTable

_PRIMAL = FunctionTable()         # fn -> (its code, its IR): kept on fn, freed with it (s2s/kept.py)


def primal_ir(fn: Callable) -> Function:
    """fn lowered to IR: once per function (and code), then a fresh copy for each transform to work on."""
    namer = Namer()
    return clone_function(lowered(fn), lambda v: namer.value(v.hint))


def lowered(fn: Callable) -> Function:
    """fn lowered to IR, made once per function (and code) and cached: for callers that only read it."""
    cached = _PRIMAL.get(fn) if isinstance(fn, types.FunctionType) else None
    if cached is None or cached[0] is not fn.__code__:
        with depth.room(fn):        # expressions nested as deep as Python compiles
            cached = (getattr(fn, "__code__", None), checked(lower(parse_function(fn))))
        _PRIMAL[fn] = cached
    return cached[1]


def root_function(fn: Callable) -> Callable:
    """The user's function behind a derivative of a derivative."""
    while hasattr(fn, "__s2s__"):
        fn = fn.__s2s__[0]
    return fn
