"""Compiling the module the emitter wrote for Numba with numba.njit for the types of example arguments, at once,
so that what Numba cannot type is refused when the derivative is made, at the user's line."""
from __future__ import annotations

import re
import types
from typing import Any, Callable, Sequence

from s2s.backends.numba.dispatchers import NumbaUnsupported, is_dispatcher, numba_module
from s2s.backends.numba.helpers import HINTS, NUMBA_HELPERS, WHY, overloaded_helpers
from s2s.backends.numba.sequences import converted, entry
from s2s.backends.numba.typed_helpers import typed_helpers


def _namespace(bindings: dict, user_fn: Any, reads_user_names: bool | frozenset) -> dict:
    """The globals Numba compiles against: the module's names, then (a snapshot of) the user's."""
    namespace: dict = {}
    if reads_user_names and user_fn is not None:
        namespace.update(user_fn.__globals__)
        code, cells = user_fn.__code__, user_fn.__closure__ or ()
        for var, cell in zip(code.co_freevars, cells):
            try:
                namespace[var] = cell.cell_contents
            except ValueError:
                pass
        if isinstance(reads_user_names, frozenset):     # the names it reads as the user's: no other shadows a builtin
            namespace = {k: v for k, v in namespace.items() if k in reads_user_names}
    namespace.update(bindings)
    return namespace


def compile_numba(source: str, name: str, user_fn: Any, bindings: dict, label: str, reads_user_names: bool | frozenset,
                  line_map: dict, options: tuple, args: Sequence[Any] | None) -> Callable:
    """The module exec'd and its function compiled by numba.njit; with args, compiled for their types now,
    so that what Numba cannot type is refused here, at the user's line."""
    numba = numba_module()
    from s2s.driver.compile import compile_function
    python = compile_function(source, name, user_fn, {}, label, False)
    namespace = python.__globals__
    extra = _namespace(bindings, user_fn, reads_user_names)
    for key, value in extra.items():
        namespace.setdefault(key, value)
    overloaded = {**overloaded_helpers(numba), **typed_helpers(numba)}
    for helper in NUMBA_HELPERS:
        if helper in overloaded and helper in namespace:
            namespace[helper] = overloaded[helper]
        elif helper in namespace and isinstance(namespace[helper], types.FunctionType):
            namespace[helper] = numba.njit(namespace[helper])
    for key, value in list(namespace.items()):          # the user's other @njit functions stay compiled
        if key != name and is_dispatcher(value):
            namespace[key] = value
    jitted = numba.njit(**dict(options))(python)
    if args is not None:
        try:
            signature = tuple(numba.typeof(a) for a in args)
        except ValueError as exc:
            raise NumbaUnsupported(f"the Numba backend cannot pass an argument to Numba: {exc}",
                                   hint="call it with floats and NumPy arrays, or differentiate with backend='python'") from None
        try:
            jitted.compile(signature)
        except numba.core.errors.NumbaError as exc:
            raise translated(exc, source, line_map) from None
    jitted.__s2s_python__ = python                      # type: ignore[attr-defined]
    return jitted


def translated(exc: Exception, source: str, line_map: dict) -> NumbaUnsupported:
    """Numba's typing error as an S2SError at the user's line (Numba's first line kept as the reason)."""
    text = str(exc)
    lines = source.split("\n")
    found = [int(n) for n in re.findall(r'File "<s2s-[^"]*", line (\d+)', text)]
    lineno = next((n for n in reversed(found) if n in line_map), found[-1] if found else None)
    plain = re.sub(r"\x1b\[[0-9;]*m", "", text)
    reason = next((line.strip() for line in plain.splitlines() if line.strip()
                   and not line.strip().startswith(("Failed in", "During:", "File ", "- ", "Resolution failure",
                                                    "There are", ">>>"))), type(exc).__name__)
    generated = lines[lineno - 1].strip() if lineno and lineno <= len(lines) else "the derivative"
    helper = next((h for h in WHY if f"{h}(" in generated), None)
    if lineno not in line_map:  # no line of the user's: the first call of a helper that may have caused it
        found = next(((k, h) for k, line in enumerate(lines, 1) for h in WHY
                      if k in line_map and f"{h}(" in line and not line.lstrip().startswith("def ")), None)
        if found is not None:
            lineno, helper = found
            generated = lines[lineno - 1].strip()
    if helper is not None:      # a helper whose overload has no version for these types (typed_helpers.py)
        return NumbaUnsupported(f"the Numba backend cannot express {WHY[helper]} (`{generated}`)",
                                line_map.get(lineno) if lineno else None, hint=HINTS.get(helper, ""))
    return NumbaUnsupported(f"the Numba backend cannot compile `{generated}` (Numba: {reason[:300]})",
                            line_map.get(lineno) if lineno else None,
                            hint="write this line with floats and the NumPy functions Numba supports, or "
                                 "differentiate with backend='python'")


def build(emitted: Any, name: str, root: Any, options: tuple, args: Sequence[Any] | None,
          arrays: Sequence[int] = ()) -> tuple[str, Callable]:
    """(source, compiled function) of a derivative the emitter wrote for the Numba target (syntax.py), compiled
    for args' types at once when given. arrays: the positions of lists and tuples of numbers the derivative may
    take as float64 arrays (sequences.py); when args has exact floats there, it is compiled for arrays, and the
    function returned converts them at each call."""
    examples = converted(args, arrays) if args is not None and arrays else None
    if examples is not None:
        args = examples
    label = getattr(root, "__qualname__", name)
    reads = emitted.user_names or emitted.reads_user_names      # (the names it reads as the user's, when known)
    jitted = compile_numba(emitted.source, name, root, emitted.bindings, label, reads,
                           emitted.line_map, options, args)
    jitted.__s2s_lines__ = emitted.line_map             # type: ignore[attr-defined]
    if examples is not None:
        return emitted.source, entry(jitted, arrays, len(examples), name)
    return emitted.source, jitted
