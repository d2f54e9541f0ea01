"""The checking mode: s2s's reading of a function against Python's own.

With `check=True` (or `S2S_CHECK=1` in the environment) the first call of each
compiled derivative also runs the original function on copies of the same
arguments and compares its result with the value the derivative's forward
sweep computed (containers leaf by leaf, NaN equal to NaN). A mismatch means
s2s differentiated something other than what Python runs, and raises
`ReadingMismatch` naming the function, instead of returning a wrong gradient.

It then checks the derivative itself: along one random direction, the new derivative against the other mode
(reverse mode against forward mode; a vjp against a jvp), which share the rules but not the transform, the folds
nor the passes. A disagreement beyond rounding raises `DerivativeMismatch` (a ReadingMismatch) naming the
function. Where the other mode is refused (a rule without a tangent, arguments forward mode does not take),
central differences stand in, and they raise only where they are smooth (two step sizes and the one-sided
differences agree): never near a kink. Not compared: derivatives of derivatives and Hessian-vector products,
has_aux, Numba's backend, functions differentiated through a numerical solver (odeint: the two modes solve
different equations, each to the call's tolerances), functions calling methods of objects known only when they
run (which may change them at each call), and derivatives made inside s2s.testing's tools, which compare the
modes themselves. All of it on the first call only.

Functions that draw random numbers: draws from NumPy's global generator
(`np.random.randn`, ...) are replayed, since the global state is saved before
the forward sweep and restored before the original runs; a function that
draws from a generator object of its own (`rng.normal(...)`,
`RandomState(0).rand()` held in a variable) is not compared — its value differs
from call to call by design.
"""
from __future__ import annotations

import contextvars
import copy
import functools
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


# ---------------------------------------------------------------- the derivative against the other mode

class DerivativeMismatch(ReadingMismatch):
    """The checking mode found that reverse and forward mode (or central differences) disagree on a derivative."""


# False inside a tool that compares the modes itself (s2s.testing's check_grads and check_grad, with their own
# tables): the checking mode leaves the derivatives made there to it, and still compares their readings
_MODES_COMPARED: contextvars.ContextVar[bool] = contextvars.ContextVar("s2s_modes_compared", default=True)


def modes_compared_by_caller(fn: Callable) -> Callable:
    """Decorate a checking tool that compares s2s's modes itself: inside it, check_derivative compares nothing."""
    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        __tracebackhide__ = True        # noqa: F841 - pytest shows the tool's caller, as without the decorator
        token = _MODES_COMPARED.set(False)
        try:
            return fn(*args, **kwargs)
        finally:
            _MODES_COMPARED.reset(token)
    return wrapper


# functions whose derivatives s2s computes with a numerical solver at the call's own tolerances: the two modes solve
# different equations and agree to those tolerances only, so they are not compared
_SOLVED = ("scipy.integrate",)


def solved(prims: list[Any]) -> bool:
    """Whether one of prims is differentiated through a numerical solver (odeint)."""
    return any((getattr(p, "__module__", None) or "").startswith(_SOLVED) for p in prims)


def _complex_leaves(value: Any) -> bool:
    """Whether value holds a complex number or array (the directional products here are real)."""
    if isinstance(value, (tuple, list)):
        return any(_complex_leaves(v) for v in value)
    if isinstance(value, dict):
        return any(_complex_leaves(v) for v in value.values())
    return np.iscomplexobj(value) if isinstance(value, (complex, np.ndarray, np.generic)) else False


def float_leaf(value: Any) -> bool:
    return isinstance(value, (float, np.floating)) and not isinstance(value, bool) or \
        isinstance(value, np.ndarray) and value.dtype.kind == "f"


def leaves(value: Any) -> list:
    """The float leaves of value (inside tuples, lists and dicts), in order."""
    if float_leaf(value):
        return [value]
    if isinstance(value, (tuple, list)):
        return [leaf for v in value for leaf in leaves(v)]
    if isinstance(value, dict):
        return [leaf for v in value.values() for leaf in leaves(v)]
    return []


def direction(value: Any, rng: np.random.Generator) -> Any:
    """A random direction with value's structure: each float leaf replaced by random numbers of its shape and type
    (anything else by None, as a tangent or cotangent that is not there)."""
    if float_leaf(value):
        drawn = rng.uniform(-1.0, 1.0, size=np.shape(value))
        return drawn.astype(value.dtype) if isinstance(value, np.ndarray) else float(drawn)
    if isinstance(value, (tuple, list)):
        items = [direction(v, rng) for v in value]
        return type(value)(*items) if hasattr(type(value), "_fields") else type(value)(items)
    if isinstance(value, dict):
        return {k: direction(v, rng) for k, v in value.items()}
    return None


def paired(a: Any, like: Any) -> list:
    """The leaves of a (a derivative) matching like's float leaves, in order (0.0 where a has none)."""
    if float_leaf(like):
        return [a if a is not None else 0.0]
    if isinstance(like, (tuple, list)):
        items = a if isinstance(a, (tuple, list)) and len(a) == len(like) else [None] * len(like)
        return [leaf for x, v in zip(items, like) for leaf in paired(x, v)]
    if isinstance(like, dict):
        items = a if isinstance(a, dict) else {}
        return [leaf for k, v in like.items() for leaf in paired(items.get(k), v)]
    return []


def dot(a: Any, b: Any, like: Any) -> tuple[float, float]:
    """(the sum of the products of a's and b's leaves matching like's, the sum of their absolute values)."""
    total, scale = 0.0, 0.0
    for x, y in zip(paired(a, like), paired(b, like)):
        product = np.asarray(x, dtype=np.float64) * np.asarray(y, dtype=np.float64)
        total += float(np.sum(product))
        scale += float(np.sum(np.abs(product)))
    return total, scale


def agree(first: float, second: float, scale: float, low_precision: bool) -> bool:
    """Whether two derivatives along one direction agree to rounding (or are not finite: then not compared)."""
    if not (np.isfinite(first) and np.isfinite(second) and np.isfinite(scale)):
        return True
    rtol = 1e-3 if low_precision else 1e-6
    return abs(first - second) <= rtol * max(scale, abs(first), abs(second)) + 1e-12


def differences_agree(f: Callable[[float], float], derivative: float, low_precision: bool) -> bool:
    """Whether central differences of f (a function of the step along the direction) support the derivative; near
    a kink or where the differences are noisy (two step sizes, or the one-sided differences, disagree) they prove
    nothing, and the derivative is taken as it is."""
    if not np.isfinite(derivative):         # (an arbitrary vector's NaN tangent, an infinite slope): not compared
        return True
    h = 1e-3 if low_precision else 1e-6
    try:
        at, plus, minus = f(0.0), f(h), f(-h)
        plus4, minus4 = f(h / 4), f(-h / 4)
    except Exception:           # the function fails near the point: nothing to compare
        return True
    values = (at, plus, minus, plus4, minus4)
    if not all(np.isfinite(v) for v in values):
        return True
    central, fine = (plus - minus) / (2 * h), (plus4 - minus4) / (h / 2)
    forward, backward = (plus - at) / h, (at - minus) / h
    size = max(abs(central), abs(fine), abs(derivative), 1e-8)
    loose = 1e-2 if low_precision else 1e-4
    if abs(central - fine) > loose * size or abs(forward - backward) > 0.1 * size + 1e-6:
        return True             # a kink, or noise: not evidence
    return abs(derivative - central) <= 100 * loose * size


def mismatch(function_name: str, first: str, second: str, a: float, b: float | None) -> DerivativeMismatch:
    against = f"{a!r} against {b!r}" if b is not None else f"{a!r}, which the differences do not support"
    return DerivativeMismatch(
        f"s2s's derivative of {function_name} differs between {first} and {second} along a random direction: "
        f"{against}",
        hint="one of them is wrong (a rule or a fold in s2s): please report the function. Without check=True (and "
             "S2S_CHECK=1) s2s returns its result unchecked")


def _shifted(value: Any, step: Any, s: float) -> Any:
    """value + s * step, leaf by leaf (step None where value has no float leaf)."""
    if step is None:
        return value
    if isinstance(value, (tuple, list)):
        items = [_shifted(v, d, s) for v, d in zip(value, step)]
        return type(value)(*items) if hasattr(type(value), "_fields") else type(value)(items)
    if isinstance(value, dict):
        return {k: _shifted(v, step[k], s) for k, v in value.items()}
    moved = value + s * step
    return moved.astype(value.dtype) if isinstance(value, np.ndarray) else type(value)(moved)


def check_derivative(name: str, root: Callable, options: Any, args: tuple, entry: tuple, prims: list,
                     other: Callable, call: Callable) -> None:
    """The checking mode's derivative check of a new derivative (entry: its source and function) of root for
    options (the pipeline's Options) on args: along one random direction v, against the other mode, made by
    other(mode, several, with_value), or against central differences where that mode is refused; `call(function,
    args)` runs derivative code. Raises DerivativeMismatch naming the function when they disagree."""
    wrt = list(options.wrt)
    if not _MODES_COMPARED.get() or any(i >= len(args) or not leaves(args[i]) for i in wrt):
        return
    random_use = draws_random(prims)
    if random_use == "own" or solved(prims) or any(getattr(p, "_s2s_effect", False) for p in prims):
        return                  # (a method of an object known only when the code runs may change it at each call)
    state = (np.random.get_state(), random.getstate()) if random_use == "global" else None
    try:
        _compare_modes(name, root, options, args, entry, wrt, other, call, state)
    finally:            # the user's own call then draws what it would have drawn without the check
        if state is not None:
            np.random.set_state(state[0])
            random.setstate(state[1])


def _compare_modes(name: str, root: Callable, options: Any, args: tuple, entry: tuple, wrt: list,
                   other: Callable, call: Callable, state: Any) -> None:
    source, function = entry
    mode = options.mode
    low = any(np.asarray(leaf).dtype.itemsize < 8 for a in args for leaf in leaves(a))
    rng = np.random.default_rng(20270)
    v = [direction(args[i], rng) for i in wrt]

    def run(callable_: Callable, extra: tuple = ()) -> Any:
        if state is not None:
            np.random.set_state(state[0])
            random.setstate(state[1])
        return call(callable_, (*copied(args), *extra))

    def along_gradients(grads: Any) -> tuple[float, float]:
        total, scale = 0.0, 0.0
        for g, d, i in zip(grads, v, wrt):
            t, a = dot(g, d, args[i])
            total, scale = total + t, scale + a
        return total, scale

    def other_mode(kind: str, w: Any) -> tuple[float, float] | None:
        """The same products in the other mode (kind "forward": w . J v; "reverse", "vjp": (J^T w) . v), or None
        where s2s refuses that mode for these arguments, or it fails where the checked one ran."""
        try:
            if kind == "forward":
                value, tangent = run(other("forward", False, True), tuple(v))
                return dot(w, tangent, value)
            if kind == "reverse":
                # (the gradient as the checked derivative returns it, one or a tuple: the derivative a call of
                # grad(f, mode="reverse") with the same wrt makes next is the one made here, not another)
                grads = run(other("reverse", options.several, False))
                return along_gradients(list(grads) if options.several else [grads])
            return along_gradients(list(run(other("vjp", True, True), (w,))[1]))
        except Exception:       # noqa: BLE001 - refused, or failing, in that mode: central differences instead
            return None

    try:
        if mode in ("reverse", "auto", "tangent"):
            result = run(function)
            grads = result[1] if options.with_value else result
            if _complex_leaves(grads):      # a complex derivative (of a real argument): not compared here
                return
            mine, scale = along_gradients(list(grads) if options.several else [grads])
            # what mode="auto" chose (forward mode along one float, unless its output or a rule sent it back to
            # reverse mode), as the derivative's header says
            forward = mode == "tangent" or '# mode="auto" chose forward mode' in source
            first, second = ("forward mode", "reverse mode") if forward else ("reverse mode", "forward mode")
            w: Any = 1.0
            theirs = other_mode("reverse" if forward else "forward", w)
        elif mode == "forward":
            result = run(function, tuple(v))
            value, tangent = result if options.with_value else (run(root), result)
            if _complex_leaves(value) or _complex_leaves(tangent):
                return
            w = direction(value, rng)
            mine, scale = dot(w, tangent, value)
            first, second = "forward mode", "reverse mode"
            theirs = other_mode("vjp", w)
        elif mode == "vjp":
            value = run(root)
            if not leaves(value):
                return
            w = direction(value, rng)
            result = run(function, (w,))
            grads = result[1] if options.with_value else result
            mine, scale = along_gradients(list(grads) if options.several else [grads])
            first, second = "reverse mode", "forward mode"
            theirs = other_mode("forward", w)
        else:
            return
    except Exception:           # noqa: BLE001 - the derivative fails or refuses here: it says so itself when called
        return
    if theirs is not None:
        if not agree(mine, theirs[0], max(scale, theirs[1]), low):
            raise mismatch(name, first, second, mine, theirs[0])
        return

    def phi(s: float) -> float:             # the other mode is refused here: central differences, where smooth
        moved = list(copied(args))
        for i, d in zip(wrt, v):
            moved[i] = _shifted(moved[i], d, s)
        if state is not None:
            np.random.set_state(state[0])
            random.setstate(state[1])
        out = root(*moved)
        return dot(w, out, out)[0]          # (w: 1.0, or the cotangent the products are taken with)

    if not differences_agree(phi, mine, low):
        raise mismatch(name, first, "central differences", mine, None)
