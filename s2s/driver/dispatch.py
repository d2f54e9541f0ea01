"""The callable `grad` returns: the generated code for the arguments at the cost of a type check.

A cache hit is one dictionary look-up keyed on the arguments' types (`_entry`); where the code depends on more
(an array's shape and dtype, a list being a list of numbers) a router keys on that too (`_router`). Everything
else goes through `dispatcher`'s general path, which also notices when a function the code names, or a global
number it reads, was rebound since the derivative was made (`stale`), and makes it anew.
"""
from __future__ import annotations

import builtins
import inspect
import types
import weakref
from typing import Any, Callable

import numpy as np

from s2s import runtime
from s2s.analysis import complex_values
from s2s.analysis.activity import global_is_scalar
from s2s.analysis.global_shapes import GlobalChanged, global_is_array
from s2s.analysis.values import SCALAR_TYPES as _ACTIVITY_SCALARS
from s2s.backends import numba as numba_backend
from s2s.driver import objects
from s2s.driver import foreign, pipeline, primal
from s2s.driver.pipeline import _LOCK, Options, _bind, annotate, compiled
from s2s.driver.primal import lowered, root_function
from s2s.frontend.tree import AttributeOf, ItemOf
from s2s.ir.core import Op, walk
from s2s.ir.lower import clear_callee_cache

# ---------------------------------------------------------------- arguments

_SCALAR_TYPES = frozenset({float, int, bool, np.float64, np.float32, np.float16, np.int64, np.int32})
_LIST_SCALARS = _ACTIVITY_SCALARS        # a list of these is a list of numbers (kind_of), any length


_MISSING = object()


def _current(owner: Callable, name: str) -> Any:
    if isinstance(owner, AttributeOf):           # a method of an object known when the derivative was made
        return inspect.getattr_static(owner.holder, name, _MISSING)
    if isinstance(owner, ItemOf):                # a function read from a dict by a known key
        return owner.holder.get(name, _MISSING)
    code = owner.__code__
    if name in code.co_freevars:
        try:
            return owner.__closure__[code.co_freevars.index(name)].cell_contents
        except ValueError:
            return _MISSING
    return owner.__globals__.get(name, getattr(builtins, name, _MISSING))


def _numeric_globals(fn: Callable) -> list:
    """(owner, name) of each global variable fn (or a function it inlines) reads when its derivative runs."""
    cached = primal._PRIMAL.get(root_function(fn))
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


# per function: whether each global it reads held complex values, and a number, when its derivative was made
# (complex_values and the kinds decide on the values as they are then; one that turns complex or real, or from a
# number into something else, makes the derivative anew)
_COMPLEX_GLOBALS: "weakref.WeakKeyDictionary[Callable, list]" = weakref.WeakKeyDictionary()


# per function: how many times its derivatives were found stale (each derivative object compares with its own count)
_GENERATION: "weakref.WeakKeyDictionary[Callable, int]" = weakref.WeakKeyDictionary()


def _global_state(owner: Callable, name: str) -> tuple:
    """What a derivative is specialized on about a global it reads: whether it is complex, a number, and an array
    (its shape and dtype, when the derivative is specialized on them, it checks on entry: s2s/analysis/global_shapes.py)."""
    value = _current(owner, name)
    # (complex_values.bits_of as the analysis reads it: np.iscomplexobj would make an array of a list of layers,
    # or read a whole dataset object through its __getitem__)
    return value is not _MISSING and bool(complex_values.bits_of(value) & complex_values.COMPLEX), \
        global_is_scalar(owner, name), global_is_array(owner, name)


def stale(fn: Callable) -> bool:
    """Whether a function fn names by a bare name is now another object, or a global it reads turned complex (or
    real): then its derivative is made anew."""
    root = root_function(fn)
    cached = primal._PRIMAL.get(root)
    if cached is None:
        return False
    seen = _COMPLEX_GLOBALS.get(root)
    if seen is None:
        _COMPLEX_GLOBALS[root] = _global_states(fn)
    if any(_current(owner, name) is not obj for owner, name, obj in cached[1].dependencies) or (
            seen is not None and any(_global_state(owner, name) != was for owner, name, was in seen)):
        _COMPLEX_GLOBALS.pop(root, None)
        _GENERATION[root] = _GENERATION.get(root, 0) + 1
        with _LOCK:
            primal._PRIMAL.pop(root, None)
            pipeline._CACHE.pop(fn, None)
            pipeline._VERIFIED.pop(fn, None)
            clear_callee_cache()
            # the state the next derivative is made for (the next thing the caller does), noted now: noted at the
            # next call instead, a global rebound in between (a float, then an array again) would go unseen
            try:
                lowered(root)
            except Exception:       # noqa: BLE001 - refused when the derivative is made, as before
                return True
            _COMPLEX_GLOBALS[root] = _global_states(fn)
        return True
    return False


def _global_states(fn: Callable) -> list:
    return [(o, n, _global_state(o, n)) for o, n in _numeric_globals(fn)]


def _watch_list(fn: Callable) -> list:
    """(namespace, name, object, in it) for each function fn names by a bare global name; [None] when one is a
    closure variable (then `stale` checks every call)."""
    cached = primal._PRIMAL.get(root_function(fn))
    if cached is None or hasattr(fn, "__s2s__"):
        return [None]
    found = []
    for owner, name, obj in cached[1].dependencies:
        if isinstance(owner, AttributeOf):          # `self.e`: the object's own attributes, and its classes'
            found.extend(_attribute_watch(owner.holder, name))
            continue
        if isinstance(owner, ItemOf):               # `LOSSES["mse"]`: the dict's item
            found.append((owner.holder, name, obj, name in owner.holder))
            continue
        if name in owner.__code__.co_freevars:
            return [None]
        if not isinstance(obj, types.ModuleType):      # a module (np, math) is not redefined as a function is
            found.append((owner.__globals__, name, obj, name in owner.__globals__))
    for owner, name in _numeric_globals(fn):         # a global value rebound: `stale` asks whether it turned complex
        value = owner.__globals__.get(name, _MISSING)
        if value is not _MISSING and not isinstance(value, (types.ModuleType, type)) and not callable(value):
            found.append((owner.__globals__, name, value, True))
    return found


def _attribute_watch(holder: Any, name: str) -> list:
    """Watch entries for holder.name: absent from (or the same in) the object's __dict__, and the same in the first
    class of its type's MRO that defines it (absent from those before it)."""
    entries = []
    own = getattr(holder, "__dict__", None)
    if isinstance(own, dict):
        entries.append((own, name, own.get(name, _MISSING), name in own))
    for cls in type(holder).__mro__:
        present = name in cls.__dict__
        entries.append((cls.__dict__, name, cls.__dict__.get(name, _MISSING), present))
        if present:
            break
    return entries


def _unchanged(watch: list) -> bool:
    """Whether every name in watch still names its object (a global, or a builtin not shadowed since)."""
    for entry in watch:
        if entry is None:
            return False
        namespace, name, obj, present = entry
        if (namespace.get(name, _MISSING) is not obj) if present else name in namespace:
            return False
    return True


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

    def general(args: tuple, kwargs: dict, remade: bool = False) -> Any:
        if kwargs or keyword_only or len(args) != positional:
            args = _bind(fn, args, kwargs)      # keyword-only parameters are parameters of the derivative too
        if objects.any_object(args):            # a dataclass or registered class read as a namedtuple of its fields
            return objects.objects_of(general(tuple(objects.records(a) for a in args), {}, remade))
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
        except GlobalChanged:
            if remade:
                raise
        except Exception as exc:
            annotate(exc, function)
            raise
        # a global array it is specialized on changed shape or dtype (s2s/analysis/global_shapes.py): the pipeline's cache
        # keys on them, this one's tables on the arguments alone
        cache.clear()
        table.clear()
        shaped.clear()
        return general(args, {}, True)

    namespace = {"_s2s_table": table, "_s2s_general": general, "_s2s_watch": watch, "_s2s_unchanged": _unchanged,
                 "_s2s_annotate": annotate, "_s2s_changed": GlobalChanged, "_s2s_list": list, "_s2s_ndarray": np.ndarray,
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
            f"    except _s2s_changed:\n"
            f"        pass\n"
            f"    except Exception as exc:\n"
            f"        _s2s_annotate(exc, function)\n"
            f"        raise\n"
            f"    return _s2s_general(({', '.join(names)},), {{}})\n")
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
                f"    except _s2s_changed:\n"
                f"        pass\n"
                f"    except Exception as _s2s_exc:\n"
                f"        _s2s_annotate(_s2s_exc, _s2s_function)\n"
                f"        raise\n"
                f"    return _s2s_general(({arguments}), {{}})\n")
    scope = dict(namespace)
    exec(compile(text, "<s2s dispatcher>", "exec"), scope)
    derivative = scope["derivative"]
    derivative.__defaults__ = root.__defaults__ if plain else None
    return derivative
