"""The checking mode: s2s's reading of a function against Python's own.

With `check=True` (or `S2S_CHECK=1` in the environment) the first call of each
compiled derivative also runs the original function on copies of the same
arguments and compares its result with the value the derivative's forward
sweep computed (containers leaf by leaf, NaN equal to NaN). A mismatch means
s2s differentiated something other than what Python runs, and raises
`ReadingMismatch` naming the function, instead of returning a wrong gradient.

Functions that draw random numbers: draws from NumPy's global generator
(`np.random.randn`, ...) are replayed, since the global state is saved before
the forward sweep and restored before the original runs; a function that
draws from a generator object of its own (`rng.normal(...)`,
`RandomState(0).rand()` held in a variable) is not compared — its value differs
from call to call by design.
"""
from __future__ import annotations

import copy
import os
import random
from typing import Any, Callable

import numpy as np

from s2s.errors import S2SError


class ReadingMismatch(S2SError):
    """The checking mode found that the derivative's forward sweep computes another value than the function."""


def enabled(check: bool | None) -> bool:
    """check=True/False as given, or S2S_CHECK=1 from the environment when it is None."""
    if check is not None:
        return bool(check)
    return os.environ.get("S2S_CHECK", "") not in ("", "0")


def copied(args: tuple) -> tuple:
    """Deep copies of args (arrays, containers, generator objects), or args itself if they cannot be copied."""
    try:
        return copy.deepcopy(args)
    except Exception:           # an object that cannot be copied is passed as it is
        return args


def draws_random(prims: list[Any]) -> str:
    """'own' if any of prims draws from a generator object of the user's, 'global' if from NumPy's or Python's
    global generator, else ''."""
    found = ""
    for prim in prims:
        owner = getattr(prim, "__self__", None)
        if owner is np.random.mtrand._rand or owner is random._inst:
            found = "global"
        elif isinstance(owner, (np.random.Generator, np.random.RandomState, np.random.BitGenerator, random.Random)):
            return "own"
        elif (getattr(prim, "__module__", None) or "").startswith("numpy.random"):
            found = "global"
    return found


def _leaves_equal(a: Any, b: Any, path: str) -> str:
    """'' when a and b are the same value (to rounding), else where they differ."""
    if isinstance(a, dict) and isinstance(b, dict):
        if a.keys() != b.keys():
            return f"{path or 'the result'} has keys {list(a)} in Python, {list(b)} in the derivative"
        return next((d for k in a if (d := _leaves_equal(a[k], b[k], f"{path}[{k!r}]"))), "")
    if isinstance(a, (tuple, list)) and isinstance(b, (tuple, list)):
        if len(a) != len(b):
            return f"{path or 'the result'} has {len(a)} items in Python, {len(b)} in the derivative"
        return next((d for i, (x, y) in enumerate(zip(a, b)) if (d := _leaves_equal(x, y, f"{path}[{i}]"))), "")
    if a is None or b is None or isinstance(a, (str, bytes)) or isinstance(b, (str, bytes)):
        return "" if a == b else f"{path or 'the result'} is {a!r} in Python, {b!r} in the derivative"
    try:
        x, y = np.asarray(a), np.asarray(b)
    except Exception:
        return ""
    if x.dtype == object or y.dtype == object:
        return ""
    if x.shape != y.shape:
        return f"{path or 'the result'} has shape {x.shape} in Python, {y.shape} in the derivative"
    if x.size == 0:
        return ""
    if not (np.issubdtype(x.dtype, np.number) or x.dtype == bool) or not (
            np.issubdtype(y.dtype, np.number) or y.dtype == bool):
        return ""
    low = np.float32 in (x.dtype.type, y.dtype.type) or np.float16 in (x.dtype.type, y.dtype.type)
    rtol, atol = (1e-4, 1e-5) if low else (1e-7, 1e-10)
    scale = float(np.nanmax(np.abs(np.where(np.isfinite(x), x, 0)))) if np.issubdtype(x.dtype, np.number) else 1.0
    if np.allclose(x, y, rtol=rtol, atol=atol * max(1.0, scale), equal_nan=True):
        return ""
    shown = (lambda v: repr(v.item()) if v.size == 1 else np.array2string(v, threshold=8, precision=6))
    return f"{path or 'the result'} is {shown(x)} in Python, {shown(y)} in the derivative"


def compare(function_name: str, original: Callable, args: tuple, computed: Callable[[Any], Any],
            random_use: str, effects: Any = None) -> None:
    """Run the original on copies of args, then `computed(expected)` (the derivative, returning the value its
    forward sweep computed), and raise ReadingMismatch if the two differ. effects (s2s/driver/effects.py): the
    objects the function writes, put back after each run (the user's own call then writes them once), and what
    each run left in them compared too."""
    if random_use == "own":
        return
    if random_use == "global":
        np_state, py_state = np.random.get_state(), random.getstate()
    left = []
    try:
        expected = original(*copied(args))
        if effects:
            left.append(effects.state())
    except Exception:           # the function itself fails here: the derivative will say where
        return
    finally:
        if random_use == "global":
            np.random.set_state(np_state)
            random.setstate(py_state)
        if effects:
            effects.undo()
    try:
        value = computed(expected)
        if effects:
            left.append(effects.state())
    finally:            # the user's own call then draws what it would have drawn without the check
        if random_use == "global":
            np.random.set_state(np_state)
            random.setstate(py_state)
        if effects:
            effects.undo()
    where = _leaves_equal(expected, value, "")
    if not where and effects:
        for (kind, obj, name), before, after in zip(effects.places, *left):
            shown = f"{type(obj).__name__}.{name}" if kind == "attr" else \
                f"the {type(obj).__name__}'s item {name!r}" if kind == "item" else f"a {type(obj).__name__}"
            where = _leaves_equal(before, after, f"what the call leaves in {shown}")
            if where:
                break
    if where:
        raise ReadingMismatch(
            f"s2s's reading of {function_name} differs from Python's: {where}",
            hint="unless the function's value changes from call to call (it advances an iterator or a counter "
                 "it keeps, `next(STEP)`, or changes state it reads), this is a bug in s2s: please report the "
                 "function. Without check=True (and S2S_CHECK=1) s2s returns its result unchecked")
