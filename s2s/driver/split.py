"""A derivative compiled in two parts (s2s/transforms/split.py), cached like the pipeline's: what s2s.vjp runs once
(the forward sweep, which gives f's value) and what its pullback runs for each cotangent; what s2s.linearize runs
once and what its jvp_fn runs for each tangent."""
from __future__ import annotations

import threading
import weakref
from typing import Callable

from s2s.analysis import complex_values
from s2s.analysis.values import abstract_of, kind_of, shape_key
from s2s.driver import dispatch, pipeline, primal
from s2s.driver.compile import collection_paused, compile_function
from s2s.driver.primal import root_function
from s2s.emit.python import emit_module
from s2s.ir.core import values_kept, verify
from s2s.transforms.split import split

_CACHE: "weakref.WeakKeyDictionary[Callable, dict]" = weakref.WeakKeyDictionary()
_LOCK = threading.RLock()


def compiled_split(fn: Callable, options: pipeline.Options, args: tuple, late: tuple[int, ...],
                   check: Callable[[], object] | None = None) -> tuple:
    """(early, late, how many of the results early gives) for fn's derivative of these options on args; late: the
    positions of the derivative's parameters given later (after args). check (the checking mode's check of the
    whole derivative, s2s/driver/pipeline.py): run before the first use of each entry, as the pipeline's first call
    of a derivative is checked; not again at each call (s2s.vjp inside an integrator's step)."""
    signature = pipeline._signature(args)
    shaped = pipeline.specializes(options)
    known = pipeline.known_arguments(fn, args, options.wrt)      # (an argument's class: its methods are the class's)
    with _LOCK, primal.known_arguments(root_function(fn), known):
        key = (getattr(root_function(fn), "__code__", None), options, signature, shape_key(args) if shaped else None,
               pipeline.global_state(fn, options) if shaped else None, late, primal.value_key(known),
               # made stale (a function or a global fn reads rebound: dispatch.stale, by whichever call saw it)
               dispatch._GENERATION.get(root_function(fn), 0))
        table = _CACHE.setdefault(fn, {})
        # (checked again once the pipeline forgets what it checked for fn: clear_cache, a name fn reads rebound)
        if check is not None and (table.get(("checked", key)) is not pipeline._VERIFIED.get(fn) or
                                  pipeline._VERIFIED.get(fn) is None):
            check()
            table[("checked", key)] = pipeline._VERIFIED.get(fn)
        entry = table.get(key)
        if entry is None:
            pipeline._check_differentiable(fn, args, options.wrt)
            with collection_paused():
                entry = table[key] = _generate(fn, options, args, late)
        return entry


def _generate(fn: Callable, options: pipeline.Options, args: tuple, late: tuple[int, ...]) -> tuple:
    kinds = [kind_of(a) for a in args]
    shapes = [abstract_of(a) for a in args] if pipeline.specializes(options) else None
    root = root_function(fn)
    with complex_values.arguments(args), values_kept():
        derivative = pipeline.emitted_ir(fn, options, kinds, shapes)
        early, rest, count = split(derivative, list(late))
        header = pipeline._header(fn, options, kinds, shapes, derivative.auto_fallback)
        made = []
        for part, what in ((early, "the forward sweep, run once"), (rest, "the rest, run for each cotangent or "
                                                                     "tangent")):
            emitted = emit_module(verify(part), (), f"{header}\n# This part: {what}.", root)
            function = compile_function(emitted.source, part.name, root, emitted.bindings, root.__qualname__,
                                        emitted.reads_user_names, emitted.user_names)
            function.__s2s_lines__ = emitted.line_map      # type: ignore[attr-defined]
            made.append((emitted.source, function))
    return made[0][1], made[1][1], count, len(early.body.results), made[0][0] + "\n\n" + made[1][0]


def run_early(entry: tuple, args: tuple) -> tuple[list, tuple]:
    """(the results the early part gives, the values the rest reads: those results, then what it saved)."""
    function, _, count, total = entry[:4]
    out = pipeline.call(function, args)
    items = (out,) if total == 1 else out
    return list(items[:count]), tuple(items)
