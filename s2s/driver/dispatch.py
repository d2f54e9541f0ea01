"""The callable `grad` returns: the generated code for the arguments at the cost of a type check.

A cache hit is one dictionary look-up keyed on the arguments' types (`_entry`); where the code depends on more
(an array's shape and dtype, a list being a list of numbers) a router keys on that too (`_router`). Everything
else goes through `dispatcher`'s general path, which also notices when a function the code names, or a global
number it reads, was rebound since the derivative was made (`stale`), and makes it anew.

A derivative is guarded on every function it read, however it was reached: a global or closure name, a module's
attribute (`hmod.helper`, monkeypatched or reloaded), an object's method, a dict's or list's item (and each look-up
that reached the object: `self.layer` replaced, a global rebound), the type a fold asked about, and each function's own
`__code__`, `__defaults__` and `__kwdefaults__` (IPython's autoreload replaces `__code__`; a helper's defaults are
folded into the derivative). A cached call checks them with one compiled expression of identity tests (`compiled_watch`);
the function's own defaults are read at each call (`_entry`), and its own code by the entry.
"""
from __future__ import annotations

import builtins
import gc
import inspect
import operator
import types
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
from s2s.driver.pipeline import Options, _bind, annotate, compiled
from s2s.driver.primal import lowered, root_function
from s2s.frontend.tree import FUNCTION_PARTS, MISSING, AttributeOf, DefaultsOf, ItemOf, PartsOf, TypeOf
from s2s.ir.core import Op, walk
from s2s.ir.lower import clear_callee_cache
from s2s.kept import FunctionTable

# ---------------------------------------------------------------- arguments

_SCALAR_TYPES = frozenset({float, int, bool, np.float64, np.float32, np.float16, np.int64, np.int32})
_LITERALS = frozenset({bool, str, type(None)})      # arguments a derivative is specialized on by value (primal.literal)
_LIST_SCALARS = _ACTIVITY_SCALARS        # a list of these is a list of numbers (kind_of), any length


_MISSING = MISSING       # (the value a dependency records for an attribute that is absent: desugar/known_values.py)


def _current(owner: Callable, name: str) -> Any:
    if isinstance(owner, PartsOf):               # a function's __code__, __defaults__, __kwdefaults__
        function = owner.function
        return _MISSING if function is None else getattr(function, name, _MISSING)
    if isinstance(owner, AttributeOf):           # a method of an object known when the derivative was made
        return inspect.getattr_static(owner.holder, name, _MISSING)
    if isinstance(owner, ItemOf):                # a function read from a dict by a known key (or a list's item)
        holder = owner.holder
        if type(holder) is list:
            return holder[name] if name < len(holder) else _MISSING
        return holder.get(name, _MISSING)
    if isinstance(owner, TypeOf):                # the type of what a look-up gives (`isinstance(self.w, ...)`)
        value = _current(owner.owner, name)
        return _MISSING if value is _MISSING else type(value)
    if isinstance(owner, DefaultsOf):            # a callee's defaults, read when it was inlined
        return getattr(owner.holder, name, _MISSING)
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
_COMPLEX_GLOBALS = FunctionTable()      # (s2s/kept.py: freed with the function)


# per function: how many times its derivatives were found stale (each derivative object compares with its own count)
_GENERATION = FunctionTable()


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
        with pipeline._LOCK:        # (read when used: a forked child gets a new one)
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


class _Parts:
    """A watch entry for the functions a derivative read (fn and those it inlined): each one's __code__,
    __defaults__ and __kwdefaults__ still the objects they were (attribute reads, no look-up by name)."""
    __slots__ = ("functions",)

    def __init__(self, functions: list):
        self.functions = tuple(functions)

    def same(self) -> bool:
        for function, code, defaults, kwdefaults in self.functions:
            if function.__code__ is not code or function.__defaults__ is not defaults or \
                    function.__kwdefaults__ is not kwdefaults:
                return False
        return True


class _CellOf:
    """The namespace of a watch entry for a closure variable: the cell, whose contents are compared."""
    __slots__ = ("cell",)

    def __init__(self, cell: Any):
        self.cell = cell


class _TypeOfEntry:
    """A watch entry for the type of what a namespace (a dict, or a closure's cell) holds under a name: a fold
    relied on that type (`isinstance`, `is None`), not on the object, which may be rebound (an array)."""
    __slots__ = ("namespace", "name", "type")

    def __init__(self, namespace: Any, name: str, type_: type):
        self.namespace, self.name, self.type = namespace, name, type_


def _watch_list(fn: Callable) -> list:
    """(namespace, name, object, in it) for each function fn names by a bare global name, a closure variable (its
    cell) or a module's attribute, and one _Parts for the code and defaults of the functions it read; [None] when
    one of those functions is gone (then `stale` checks every call)."""
    cached = primal._PRIMAL.get(root_function(fn))
    if cached is None or hasattr(fn, "__s2s__"):
        return [None]
    found: list = []
    parts: dict = {}
    root = root_function(fn)
    for owner, name, obj in cached[1].dependencies:
        if isinstance(owner, PartsOf):
            function = owner.function
            if function is None:
                return [None]
            if function is root:            # its defaults are read at each call (_entry), its code by the entry
                continue
            parts.setdefault(id(function), {"function": function})[name] = obj
            continue
        if isinstance(owner, AttributeOf):          # `self.e`: the object's own attributes, and its classes'
            found.extend(_attribute_watch(owner.holder, name))
            continue
        if isinstance(owner, ItemOf):               # `LOSSES["mse"]`: the dict's item (`LAYERS[0]`: the list's)
            present = name < len(owner.holder) if type(owner.holder) is list else name in owner.holder
            found.append((owner.holder, name, obj, present))
            continue
        if isinstance(owner, TypeOf):               # `isinstance(CFG.w, np.ndarray)`: the type of what it holds
            inner = owner.owner
            if isinstance(inner, AttributeOf):
                found.append(_TypeOfEntry(inner.holder.__dict__, name, obj))
            elif name in inner.__code__.co_freevars:
                found.append(_TypeOfEntry(_CellOf(inner.__closure__[inner.__code__.co_freevars.index(name)]),
                                          name, obj))
            else:
                found.append(_TypeOfEntry(inner.__globals__, name, obj))
            continue
        if isinstance(owner, DefaultsOf):           # a callee's defaults: the same tuple (or dict)
            found.append((owner, name, obj, True))
            continue
        if name in owner.__code__.co_freevars:      # a decorator's `f`: the cell still holding the same object
            found.append((_CellOf(owner.__closure__[owner.__code__.co_freevars.index(name)]), name, obj, True))
            continue
        if not isinstance(obj, types.ModuleType):      # a module (np, math) is not redefined as a function is
            found.append((owner.__globals__, name, obj, name in owner.__globals__))
    for owner, name in _numeric_globals(fn):         # a global value rebound: `stale` asks whether it turned complex
        value = owner.__globals__.get(name, _MISSING)
        if value is not _MISSING and not isinstance(value, (types.ModuleType, type)) and not callable(value):
            found.append((owner.__globals__, name, value, True))
    if parts:
        found.append(_Parts([(p["function"], *(p.get(part) for part in FUNCTION_PARTS)) for p in parts.values()]))
    return found


def _attribute_watch(holder: Any, name: str) -> list:
    """Watch entries for holder.name: absent from (or the same in) the object's __dict__, and the same in the first
    class of its type's MRO that defines it (absent from those before it); for a class, the first of its own MRO."""
    entries = []
    if isinstance(holder, type):                # `Physics.energy(x)`: the class or a base defines it
        for cls in holder.__mro__:
            present = name in cls.__dict__
            entries.append((cls.__dict__, name, cls.__dict__.get(name, _MISSING), present))
            if present:
                break
        return entries
    own = getattr(holder, "__dict__", None)
    if isinstance(own, dict):
        entries.append((own, name, own.get(name, _MISSING), name in own))
        if isinstance(holder, types.ModuleType):        # `hmod.helper`: the module's own namespace alone
            return entries
    for cls in type(holder).__mro__:
        present = name in cls.__dict__
        entries.append((cls.__dict__, name, cls.__dict__.get(name, _MISSING), present))
        if present:
            break
    return entries


def _plain_dict(namespace: Any) -> Any:
    """A class's __dict__ (a read-only proxy) as the dict behind it, which a look-up reads in half the time; the
    same object Python writes when the class is changed (`Cls.f = g`). Anything else as it is."""
    if type(namespace) is types.MappingProxyType:
        found = [d for d in gc.get_referents(namespace) if type(d) is dict]
        if len(found) == 1 and found[0].keys() == namespace.keys():
            return found[0]
    return namespace


def compiled_watch(watch: list) -> Callable[[], bool]:
    """Whether every entry of watch still holds, as one generated function of no arguments: each entry one inline
    subscript and identity test, or one `not in`, and each function read its code and defaults (a Python loop over
    the entries cost about 0.3 µs each; a `.get` on a class's mapping proxy 0.1 µs; this, under 30 ns). The
    namespaces, names and objects are the function's defaults: fast locals. A name gone from a namespace that held
    it raises KeyError: changed."""
    if any(entry is None for entry in watch):
        return lambda: False
    scope: dict = {}
    tests, params, seen = [], [], {}
    for k, entry in enumerate(watch):
        if entry.__class__ is _Parts:               # a function read: its __code__, __defaults__, __kwdefaults__
            for j, parts in enumerate(entry.functions):
                names = [f"f{k}_{j}", f"c{k}_{j}", f"d{k}_{j}", f"w{k}_{j}"]
                params += names
                scope.update(zip(names, parts))
                tests.append(f"f{k}_{j}.__code__ is c{k}_{j} and f{k}_{j}.__defaults__ is d{k}_{j} and "
                             f"f{k}_{j}.__kwdefaults__ is w{k}_{j}")
            continue
        if entry.__class__ is _TypeOfEntry:         # `type(n['w']) is o`, `type(cell.cell_contents) is o`
            params += [f"c{k}", f"o{k}"]
            scope[f"c{k}"], scope[f"o{k}"] = entry.namespace, entry.type
            if entry.namespace.__class__ is _CellOf:
                scope[f"c{k}"] = entry.namespace.cell
                tests.append(f"type(c{k}.cell_contents) is o{k}")
            else:
                key = repr(entry.name) if type(entry.name) in (str, int) else None
                if key is None:
                    params.append(f"k{k}")
                    scope[f"k{k}"], key = entry.name, f"k{k}"
                tests.append(f"type(c{k}[{key}]) is o{k}")
            continue
        namespace, name, obj, present = entry
        if isinstance(namespace, DefaultsOf):       # `f.__defaults__ is d`
            params += [f"f{k}", f"o{k}"]
            scope[f"f{k}"], scope[f"o{k}"] = namespace.holder, obj
            tests.append(f"f{k}.{name} is o{k}")
            continue
        if namespace.__class__ is _CellOf:          # a closure variable: `cell.cell_contents is o` (empty: ValueError)
            params += [f"c{k}", f"o{k}"]
            scope[f"c{k}"], scope[f"o{k}"] = namespace.cell, obj
            tests.append(f"c{k}.cell_contents is o{k}")
            continue
        namespace = _plain_dict(namespace)
        n = seen.get(id(namespace))
        if n is None:
            n = seen[id(namespace)] = f"n{len(seen)}"
            params.append(n)
            scope[n] = namespace
        key = repr(name) if type(name) in (str, int) else f"k{k}"
        if type(name) not in (str, int):
            params.append(key)
            scope[key] = name
        if present:
            params.append(f"o{k}")
            scope[f"o{k}"] = obj
            if isinstance(namespace, (dict, types.MappingProxyType, list)):
                tests.append(f"{n}[{key}] is o{k}")
            else:               # a dict's keys watched as a whole (function_tables.KeysOf): its get
                if "_s2s_missing" not in scope:
                    params.append("_s2s_missing")
                    scope["_s2s_missing"] = _MISSING
                tests.append(f"{n}.get({key}, _s2s_missing) is o{k}")
        else:
            tests.append(f"{key} not in {n}")
    signature = ", ".join(f"{p}={p}" for p in params)
    text = (f"def unchanged({signature}):\n"
            f"    try:\n"
            f"        return {' and '.join(tests) or 'True'}\n"
            f"    except (KeyError, ValueError, IndexError):\n"
            f"        return False\n")
    exec(compile(text, "<s2s guards>", "exec"), scope)
    return scope["unchanged"]


# ---------------------------------------------------------------- the dispatcher

def dispatcher(fn: Callable, options: Options, check: bool | None) -> Callable:
    """The callable grad returns: generated code, found for the arguments at the cost of a type check.

    A cache hit is one dictionary look-up keyed on the arguments' types; where the code depends on more than
    types (an array's shape and dtype, a list being a list of numbers), a router made for those types keys on
    that too. Everything else (keywords, defaults, containers, Dask, a helper rebound since) takes the general
    path (`general`), which makes or finds the derivative and installs the fast path for such arguments."""
    root = root_function(fn)
    code = root.__code__
    watched = any(not (isinstance(owner, PartsOf) and owner.function is root) for owner, _, _ in
                  lowered(fn).dependencies) or bool(_numeric_globals(fn)) \
        if not hasattr(fn, "__s2s__") else True
    positional = code.co_argcount
    keyword_only = bool(code.co_kwonlyargcount)
    names = code.co_varnames[:positional + code.co_kwonlyargcount]
    numba = options.backend == "numba"
    cache: dict = {}            # (the arguments' types, shapes and dtypes) -> generated function
    table: dict = {}            # the fast path: the arguments' types -> generated function, or a router
    shaped: dict = {}           # the arguments' types -> the router's table (shapes, dtypes -> function)
    watch: list = []            # the bare names fn's code reads, checked cheaply on every call (compiled_watch)
    fast = pipeline.FastPath(fn, cache, table, shaped)      # emptied when a derivative of fn leaves the cache
    generation = [_GENERATION.get(root, 0)]      # fn's derivatives made stale so far (by any derivative of fn)

    def general(args: tuple, kwargs: dict, remade: bool = False) -> Any:
        if kwargs or keyword_only or len(args) != positional:
            args = _bind(fn, args, kwargs)      # keyword-only parameters are parameters of the derivative too
        if objects.any_object(args):            # a dataclass or registered class read as a namedtuple of its fields
            return objects.objects_of(general(tuple(objects.records(a) for a in args), {}, remade))
        args = foreign.plain(args, names)       # subclasses of ndarray: read as arrays, or refused (np.ma, matrix)
        # (a boolean or a string by its value: a derivative is specialized on the flags and modes it is given,
        # s2s/driver/primal.py; None is its type's one value)
        key = tuple([(a.shape, a.dtype) if type(a) is np.ndarray else (type(a), a) if type(a) in _LITERALS
                     else type(a) for a in args]) if not numba else numba_backend.call_key(args)
        function = cache.get(key)
        recode = root.__code__ is not namespace["_s2s_code"]          # `f.__code__ = ...` (autoreload)
        # (arguments whose derivative this table does not keep, containers: the watch, still holding and made since
        # fn was last found stale, answers for the functions and globals it read, without making it again)
        fresh = function is None and bool(watch) and _GENERATION.get(root, 0) == generation[0] and \
            namespace["_s2s_check"]()
        if watched and (function is None and not fresh or watch and not namespace["_s2s_check"]()) or recode:
            if stale(fn) or _GENERATION.get(root, 0) != generation[0] or recode:
                namespace["_s2s_code"] = root.__code__
                # a function fn calls by name was rebound (seen here or by another derivative of fn): made anew,
                # not found in the pipeline's cache either (stale clears it for the function it was asked about)
                with pipeline._LOCK:
                    pipeline._CACHE.pop(fn, None)
                    pipeline._VERIFIED.pop(fn, None)
                cache.clear()
                table.clear()
                shaped.clear()
                function = None
                generation[0] = _GENERATION.get(root, 0)
            watch[:] = _watch_list(fn)
            namespace["_s2s_check"] = compiled_watch(watch)
        through = None
        if function is None:
            function = compiled(fn, options, args, check)[1]        # containers, other libraries: by kind...
            if numba and key is not None or not numba and all(
                    type(a) is np.ndarray or type(a) in _SCALAR_TYPES or type(a) in _LITERALS for a in args):
                cache[key] = function
            elif not numba:
                through = foreign.call              # Dask arrays: never computed by derivative code
        if not watched or namespace["_s2s_check"]():
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

    namespace = {"_s2s_table": table, "_s2s_general": general, "_s2s_watch": watch, "_s2s_check": compiled_watch(watch),
                 "_s2s_root": root, "_s2s_code": code,
                 "_s2s_annotate": annotate, "_s2s_changed": GlobalChanged, "_s2s_list": list, "_s2s_ndarray": np.ndarray,
                 "_s2s_scalars": _LIST_SCALARS, "_s2s_floats": numba_backend.FLOATS, "_s2s_count": operator.countOf, "_s2s_fromiter": np.fromiter,
                 "_s2s_float64": np.float64, "_s2s_fast": fast}     # (fast: held as long as the entry is)

    def route_to(types: tuple, routes: dict, converted: tuple = ()) -> Callable:
        return _router(types, routes, namespace, positional, converted)

    return _entry(root, namespace, general)


def _install(args: tuple, function: Callable, table: dict, shaped: dict, route_to: Callable, numba: bool) -> None:
    """The fast path for arguments like args (when their types, shapes and dtypes decide the code). A Numba
    derivative that takes lists or tuples of floats as arrays (numba/sequences.py) is called directly, the
    router checking and converting them."""
    types = tuple(map(type, args))
    arrays = getattr(function, "__s2s_arrays__", ()) if numba else ()
    if arrays:
        arrays = tuple(k for k in arrays if types[k] is list or types[k] is tuple)
        if numba_backend.call_key([a for k, a in enumerate(args) if k not in arrays]) is None:
            return
        function = function.__s2s_jitted__
    elif numba and numba_backend.call_key(args) is None:
        return
    shapes, dtypes = [], []
    for k, (a, t) in enumerate(zip(args, types)):
        if t is np.ndarray:
            shapes.append(a.shape)
            dtypes.append(a.dtype)
        elif (t is bool or t is str) and not numba:
            shapes.append(a)                            # a flag or a mode: the derivative is specialized on its value
        elif a is None and not numba:
            pass                                        # None: its type says its value
        elif t is list and not numba and a and _LIST_SCALARS.issuperset(map(type, a)):
            pass                                        # a list of numbers, whatever its length (kind_of)
        elif k in arrays:
            if not (a and numba_backend.FLOATS.issuperset(map(type, a))):
                return
            if t is tuple:
                shapes.append(len(a))                   # a tuple's derivative is made for its length
        elif t not in _SCALAR_TYPES or t is bool:
            return
    if not shapes and list not in types and not arrays:
        table[types] = function
        return
    routes = shaped.get(types)
    if routes is None:
        routes = shaped[types] = {}
        table[types] = route_to(types, routes, arrays)
    routes[tuple(shapes)] = (function, *dtypes)      # dtypes compared by identity: held here, never reused


def _router(types: tuple, routes: dict, namespace: dict, n: int, converted: tuple = ()) -> Callable:
    """For arguments of these types: the generated function by the arrays' shapes (and the dtypes it was made
    for, the same objects), after checking that each list is still a list of numbers. converted: the positions of
    lists and tuples a Numba derivative takes as float64 arrays: each checked to hold floats exactly and
    converted, in one pass (a tuple's length is part of the key)."""
    names = [f"a{i}" for i in range(n)]
    arrays = [i for i, t in enumerate(types) if t is np.ndarray]
    key = "".join(f"a{i}.shape, " if t is np.ndarray else f"a{i}, " if t is bool or t is str else f"len(a{i}), "
                  for i, t in enumerate(types) if t is np.ndarray or t is bool or t is str
                  or i in converted and t is tuple)
    dtypes = "".join(f" or entry[{k + 1}] is not a{i}.dtype" for k, i in enumerate(arrays))
    # (items of one type, the common case, counted first: countOf compares by identity, faster than the set)
    lists = "".join(f" or not (a{i} and (type(a{i}[0]) in _s2s_scalars and _s2s_count(map(type, a{i}), "
                    f"type(a{i}[0])) == len(a{i}) or _s2s_scalars.issuperset(map(type, a{i}))))"
                    for i, t in enumerate(types) if t is list and i not in converted)
    lists += "".join(f" or not (a{i} and _s2s_floats.issuperset(map(type, a{i})))" for i in converted)
    passed = [f"_s2s_fromiter(a{i}, _s2s_float64, len(a{i}))" if i in converted else f"a{i}" for i in range(n)]
    text = (f"def route({', '.join(names)}):\n"
            f"    entry = routes.get(({key}))\n"
            f"    if entry is None{dtypes}{lists}:\n"
            f"        return _s2s_general(({', '.join(names)},), {{}})\n"
            f"    function = entry[0]\n"
            f"    try:\n"
            f"        return function({', '.join(passed)})\n"
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
        defaulted = len(root.__defaults__ or ())
        # a parameter left to its default gets the one root has when it is called (`f.__defaults__ = (10.0,)`
        # rebinds them), not the one it had when the derivative was made
        named = [f"{p}=_s2s_unset" if k >= len(params) - defaulted else p for k, p in enumerate(params)]
        signature = ", ".join(named[:code.co_posonlyargcount] + ["/"] * bool(code.co_posonlyargcount) +
                              named[code.co_posonlyargcount:])
        arguments = ", ".join(params) + ("," if len(params) == 1 else "")
        fill = "".join(f"    if {p} is _s2s_unset:\n        {p} = _s2s_default({len(params) - k})\n"
                       for k, p in enumerate(params) if k >= len(params) - defaulted)
        text = (f"def derivative({signature}):\n"
                f"{fill}"
                f"    _s2s_function = _s2s_table.get(({''.join(f'type({p}), ' for p in params)}))\n"
                f"    if _s2s_function is None or _s2s_watch and not _s2s_check() or "
                f"_s2s_root.__code__ is not _s2s_code:\n"
                f"        return _s2s_general(({arguments}), {{}})\n"
                f"    try:\n"
                f"        return _s2s_function({', '.join(params)})\n"
                f"    except _s2s_changed:\n"
                f"        pass\n"
                f"    except Exception as _s2s_exc:\n"
                f"        _s2s_annotate(_s2s_exc, _s2s_function)\n"
                f"        raise\n"
                f"    return _s2s_general(({arguments}), {{}})\n")
    def default(k: int) -> Any:
        """root's default for its k-th parameter from the end, as it is now."""
        defaults = root.__defaults__ or ()
        if k > len(defaults):
            raise TypeError(f"{root.__qualname__}() missing its argument {params[-k]!r} (it has no default now)")
        return defaults[-k]

    namespace.update(_s2s_unset=_UNSET, _s2s_default=default)     # (general updates _s2s_code in it)
    exec(compile(text, "<s2s dispatcher>", "exec"), namespace)
    derivative = namespace["derivative"]
    derivative.__qualname__ = root.__qualname__     # a call with the wrong arguments: `loss() missing ...`
    return derivative


_UNSET = type("unset", (), {"__repr__": lambda self: "<the function's default>"})()
