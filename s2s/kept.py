"""What s2s keeps about a function, kept on the function: freed with it.

A `weakref.WeakKeyDictionary` keyed by a function never frees the function when its value refers to it, and what
s2s makes of a function does (its IR names it as the owner of the globals it reads; the derivative of a closure
reads its cells): the dictionary, a module global, holds the value, and the value the key (3,000 closures
differentiated and dropped kept 80 MB). A `FunctionTable` keeps its values in the function's own `__dict__`
instead (one slot for every table, `__s2s_kept__`), so that a function and what s2s made of it are one cycle,
which the garbage collector frees when nothing else holds the function.

The slot pickles as an empty dict (cloudpickle pickles a function's `__dict__` with it, and the machine that
unpickles it need not have s2s); a function whose `__dict__` was copied from another one (`functools.wraps`)
does not read the other's tables: a slot knows the function it belongs to. A derivative s2s made keeps its own the
same way (its class says `__s2s_kept_on_self__`); anything else is kept in a WeakKeyDictionary, as before.
"""
from __future__ import annotations

import types
import weakref
from typing import Any

ATTRIBUTE = "__s2s_kept__"
_MISSING = object()


class _Slot:
    """The tables' values for one function, in its __dict__."""
    __slots__ = ("__weakref__", "owner", "values")

    def __init__(self, owner: Any) -> None:
        self.owner = weakref.ref(owner)
        # table -> value (weakly: the values of a table dropped, a test's fresh one, go with it)
        self.values: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()

    def __reduce__(self) -> tuple:      # (pickled with the function by cloudpickle: as nothing s2s needs)
        return dict, ()

    def __repr__(self) -> str:
        return "<what s2s made of this function>"


class FunctionTable:
    """A mapping from functions to values that does not keep a function alive, even when its value refers to it
    (the methods the pipeline uses: get, [], []=, setdefault, pop, in, clear)."""

    def __init__(self) -> None:
        self._slots: weakref.WeakSet[_Slot] = weakref.WeakSet()     # the slots holding a value of this table
        self._others: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()

    def _slot(self, fn: Any, make: bool) -> Any:
        if type(fn) is not types.FunctionType and not getattr(type(fn), "__s2s_kept_on_self__", False):
            return None
        d = fn.__dict__
        slot = d.get(ATTRIBUTE)
        if type(slot) is _Slot and slot.owner() is fn:
            return slot
        if not make:
            return _MISSING
        slot = d[ATTRIBUTE] = _Slot(fn)
        return slot

    def get(self, fn: Any, default: Any = None) -> Any:
        slot = self._slot(fn, False)
        if slot is None:
            try:
                return self._others.get(fn, default)
            except TypeError:           # not weakly referable: never kept
                return default
        return default if slot is _MISSING else slot.values.get(self, default)

    def __getitem__(self, fn: Any) -> Any:
        found = self.get(fn, _MISSING)
        if found is _MISSING:
            raise KeyError(fn)
        return found

    def __contains__(self, fn: Any) -> bool:
        return self.get(fn, _MISSING) is not _MISSING

    def __setitem__(self, fn: Any, value: Any) -> None:
        slot = self._slot(fn, True)
        if slot is None:
            self._others[fn] = value
            return
        slot.values[self] = value
        self._slots.add(slot)

    def setdefault(self, fn: Any, default: Any) -> Any:
        found = self.get(fn, _MISSING)
        if found is _MISSING:
            self[fn] = found = default
        return found

    def pop(self, fn: Any, default: Any = None) -> Any:
        slot = self._slot(fn, False)
        if slot is None:
            try:
                return self._others.pop(fn, default)
            except TypeError:
                return default
        return default if slot is _MISSING else slot.values.pop(self, default)

    def clear(self) -> None:
        for slot in list(self._slots):
            slot.values.pop(self, None)     # (a WeakKeyDictionary: pop(key, default))
        self._slots = weakref.WeakSet()
        self._others.clear()

    def __len__(self) -> int:
        return sum(self in slot.values for slot in list(self._slots)) + len(self._others)

    def __hash__(self) -> int:          # (a key of the slots' dicts: by identity)
        return id(self)

    def __eq__(self, other: object) -> bool:
        return self is other
