"""Compiling generated source into a function that reads the user's globals live.

The generated module runs in a namespace of its own (its imports, helpers and
bound objects). Any other name it reads, a global or a closure variable of the
user's function, is looked up in the user's function when the code runs, so
changing a global between two calls is seen by the second one.
The source is registered in linecache, so tracebacks, pdb and inspect show it, for as long as the function
lives (the pipeline's cache is bounded: s2s/driver/pipeline.py).

`collection_paused()` is the context in which a derivative is made: the transform allocates millions of small
objects that live until it ends (IR, trees), and the cyclic collector would scan the growing heap again and
again (about 40% of the time of a 3,000-line function); what is garbage is collected after it, as usual.
"""
from __future__ import annotations

import builtins
import contextlib
import gc
import heapq
import itertools
import linecache
import os
import threading
import types
import weakref
from typing import Any, Callable, Iterator

_counter = itertools.count(1)


_paused_by: list = []        # the thread that turned the collector off, while it is off


@contextlib.contextmanager
def collection_paused() -> Iterator[None]:
    """The cyclic garbage collector off inside (reference counting still frees what it can), on again after,
    if it was on before: nested and concurrent uses never leave it off (nor does a fork: _after_fork_in_child)."""
    if not gc.isenabled():
        yield
        return
    gc.disable()
    _paused_by[:] = [threading.get_ident()]
    try:
        yield
    finally:
        _paused_by.clear()
        gc.enable()


def _after_fork_in_child() -> None:
    """Forked while another thread made a derivative: that thread, gone in the child, would never turn the
    collector on again."""
    if _paused_by and _paused_by[0] != threading.get_ident() and not gc.isenabled():
        _paused_by.clear()
        gc.enable()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)


class LiveNamespace(dict):
    """Globals of generated code: its own names first, then the user's function's, read at each access. Given
    user_names (the names the code reads as the user's), any other name is a builtin: the generated code's own
    `range`, `len` or `max` is never a global of the user's module that shadows it (`from numpy import max`)."""

    def __init__(self, user_fn: types.FunctionType | None, user_names: frozenset | None = None):
        super().__init__()
        self._user_names = user_names
        self._user_globals = user_fn.__globals__ if user_fn is not None else {}
        code = user_fn.__code__ if user_fn is not None else None
        cells = user_fn.__closure__ or () if user_fn is not None else ()
        self._cells = dict(zip(code.co_freevars, cells)) if code is not None else {}

    def __missing__(self, name: str) -> Any:
        users = self._user_names is None or name in self._user_names
        cell = self._cells.get(name) if users else None
        if cell is not None:
            return cell.cell_contents
        if users and name in self._user_globals:
            return self._user_globals[name]
        try:
            found = getattr(builtins, name)
        except AttributeError:
            raise KeyError(name) from None
        # a builtin (`isinstance` in the runtime helpers, `len` in the user's code): kept, so that the next read is
        # a dict look-up rather than this method (0.3 us a read, in every helper). A builtin the user's code calls
        # and a global of the user's module defines later is seen by the dispatcher (dispatch.py watches that the
        # name is still absent from those globals), which makes the derivative, and this namespace, anew
        self[name] = found
        return found


def compile_function(source: str, name: str, user_fn: types.FunctionType | None, bindings: dict[str, Any],
                     label: str, reads_user_names: bool = True, user_names: frozenset | None = None) -> Callable:
    """exec the module and return its function. Its globals are a plain dict (the fastest look-ups)
    unless it reads the user's globals or closure variables by bare name (user_names: those names, when known)."""
    number = heapq.heappop(_free_numbers) if _free_numbers else next(_counter)
    filename = f"<s2s-{number} {label}>"
    lines = source.splitlines(keepends=True)
    linecache.cache[filename] = (len(source), None, lines, filename)
    namespace: dict = LiveNamespace(user_fn, user_names or None) if reads_user_names else {}
    namespace.update(bindings)
    namespace["__name__"] = f"s2s.generated.{name}"
    exec(compile(source, filename, "exec"), namespace)
    function = namespace[name]
    # its source leaves linecache with its code (a traceback holds the code: it is shown until then), and the
    # number is used again (CPython keeps each file name a code object had: a number per derivative ever made
    # would grow without bound)
    weakref.finalize(function.__code__, _forget, filename, number)
    return function


_free_numbers: list[int] = []       # the numbers of the generated sources freed, to use again (a heap)


def _forget(filename: str, number: int) -> None:
    linecache.cache.pop(filename, None)
    heapq.heappush(_free_numbers, number)
