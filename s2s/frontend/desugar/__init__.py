"""Desugaring: the rich surface of Python rewritten into the small core that lowering knows.

Runs between the front end and lowering, on the gast tree of one function
(`desugar(parsed)` changes `parsed.node` in place). Each construct has its own
gast-to-gast rewrite in a module of this package, small and testable alone:

- `tries`: each `try` keeps its body as written, for the derivative to run it as Python does (lowering reads
  the `try` as a branch on how that body ended: s2s/ir/lower_try.py);
- `imports`: `import` inside the function, read when the derivative is made;
- `autograd_code`: autograd.numpy and autograd.scipy read as NumPy and SciPy, autograd.grad as s2s.grad;
- `loop_else`: `else` on a loop, as a flag its `break`s set;
- `signature`: keyword-only and positional-only parameters become ordinary
  ones; `*args` / `**kwargs` of a known length become fixed parameters;
- `known_values`: branches, `hasattr`/`getattr`/`isinstance`/`len`... decided by values known when the
  derivative is made (literal arguments, `self`'s attributes, globals) folded, guarded on entry;
- `function_arguments`: `g(x)` on a parameter given a function (the derivative specialized on which) as the call
  of that function;
- `properties`: a property whose getter writes into an object, read on an object known now, as a call of its
  getter (its writes are performed as the function's own, once per call);
- `function_choice`: `f = a if ... else b` as a branch, then `f(x)`: each call the choice of the two calls;
- `statements`: `assert`, `raise`, f-strings, `print` and `with` blocks over
  inactive context managers become calls that run as Python runs them;
- `writers`: `operator.setitem(y, i, v)`, `operator.iadd(y, v)`, `np.copyto`, `np.place`, `np.put` on a
  variable of the function, as the assignments they are;
- `odeint_closures`: the variables odeint's right-hand side reads passed through its `args=`;
- `keyed_extrema`: `max(xs, key=f)` / `min(xs, key=f)` as the loop Python runs;
- `partials`: a `functools.partial` made in the function and only called: calls of the function it wraps;
- `reduce_calls`: `functools.reduce(f, items, start)` as the loop it runs;
- `closures`: nested `def` and `lambda` become functions of their own (lifted,
  their free variables passed as arguments at each call); `map` a loop;
- `dict_pairs`: `dict(zip(keys, values))` and `dict(enumerate(xs))` as the dict comprehensions they are;
- `comprehensions`: list comprehensions and generator expressions become the
  loops they are;
- `containers`: `dict.items/values/keys/get`, `list.extend/insert`;
- `iterators`: `it = iter(xs)` read by `next(it)`, `next(it, d)` and `for v in it` as a list and a position;
- `function_tables`: loops over a dict of functions unrolled, `D[key](x)` as a chain of ifs over its keys;
- `reversed_items`: `reversed(xs)` of a list, tuple or array as `xs[::-1]`;
- `zips`: `for p in zip(...)`, a zip of zips, `zip(*rows)` (a transpose), a zip given to list or sorted;
- `pops`: `y = xs.pop(i)` as `y = xs[i]; xs.pop(i)` (a pop as a statement is lowering's);
- `chained_writes`: `B[i][j] = v` on a NumPy array as `B[i, j] = v` (checked when it runs);
- `reductions`: `max(xs)` / `min(xs)` of one sequence as a loop over the two-argument form;
- `inline_gradients`: `s2s.grad(loss)(w)` inside the function: the gradient made when the derivative is;
- `operators`: `S @ x`, `u + v` on an object of the user's class as the call of the method Python calls
  (`S.__matmul__(x)`), refused where which one is known only when the code runs;
- `instances`: a construction of the user's plain class (`Layer(W)`) as the object made empty, then its
  `__init__` called, so that its attributes are followed as written (s2s/ir/object_state.py);
- `instance_properties`: a property read or written on an object of a known class (built in the function, or
  `self` of its methods) as its getter's or setter's call;
- `objects`: calls through objects (a method of a value whose class is known: the class's, instances.py) (`self.forward(x)`, `layer(x)`), methods of
  library objects, frozen distributions, loops over lists of layers unrolled;
  with `starred`: star-arguments and starred targets of a known length;
- `fills`: `y.fill(v)` on an array variable as `y[...] = v` (after `objects`: a method of the user's class is
  its own call by then);
- `derivatives`: a call of a gradient s2s made is an operation whose rules are
  that gradient's own derivatives.

A rewrite places an object it knows when the derivative is made as a
`gast.Constant` holding it (a lifted function, a method specialized on its
object); lowering names such a callee statically. Every node a rewrite makes
carries the location of the user's node it comes from.
"""
from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any, Callable

import gast

from s2s.frontend.desugar import (
    autograd_code,
    chained_writes,
    closures,
    comprehensions,
    containers,
    dict_pairs,
    fills,
    function_arguments,
    function_choice,
    function_tables,
    imports,
    inline_gradients,
    instance_properties,
    iterators,
    instances,
    keyed_extrema,
    known_values,
    loop_else,
    objects,
    odeint_closures,
    operators,
    partials,
    pops,
    properties,
    reduce_calls,
    reductions,
    reversed_items,
    signature,
    statements,
    tries,
    writers,
    zips,
)

if TYPE_CHECKING:
    from s2s.frontend.desugar.context import Context
    from s2s.frontend.tree import ParsedFunction

# (A loop's variables read after it need no rewrite: lowering carries them out, unbound before a first
# iteration as in Python.)
REWRITES = (tries.rewrite, imports.rewrite, autograd_code.rewrite, signature.rewrite, known_values.rewrite,
            function_arguments.rewrite, properties.rewrite, function_choice.rewrite, statements.rewrite,
            writers.rewrite, loop_else.rewrite,
            odeint_closures.rewrite, keyed_extrema.rewrite, partials.rewrite, reduce_calls.rewrite, closures.rewrite,
            containers.rewrite, dict_pairs.rewrite,
            comprehensions.rewrite, iterators.rewrite,
            function_tables.rewrite, reversed_items.rewrite, zips.rewrite, pops.rewrite, chained_writes.rewrite,
            reductions.rewrite, inline_gradients.rewrite, operators.rewrite, instances.rewrite,
            instance_properties.rewrite, objects.rewrite, fills.rewrite)
# each rewrite's `applies(ctx)`: whether its construct occurs in the tree as last scanned (Context.scan)
_APPLIES = {rewrite: getattr(__import__(rewrite.__module__, fromlist=["applies"]), "applies", None)
            for rewrite in REWRITES}      # (a rewrite without one always runs)


def desugar(parsed: "ParsedFunction") -> None:
    """Run the rewrites in order, each only where its construct occurs: one walk of the tree finds what occurs,
    and another after each rewrite that ran (the tree changed). With S2S_VERIFY=1 (the test suite), the rewrites
    skipped also run, on a copy of the tree, which they must leave as it was: those skipped one after another
    (the tree the same for each) on one copy, before the tree next changes."""
    from s2s.frontend.desugar.context import Context
    ctx = Context(parsed)
    check = os.environ.get("S2S_VERIFY") == "1"
    changed = False
    skipped: list[Callable] = []        # (S2S_VERIFY) the rewrites skipped since the tree last changed
    for rewrite in REWRITES:
        if changed:
            ctx.scan()
        applies = _APPLIES.get(rewrite)
        changed = applies is None or applies(ctx)
        if changed:
            if skipped:
                _check_skipped(ctx, skipped)
                skipped = []
            rewrite(ctx)
            ctx.fresh_scan = False
        elif check:
            skipped.append(rewrite)
    if skipped:
        _check_skipped(ctx, skipped)
    ctx.close()


def _check_skipped(ctx: "Context", rewrites: list[Callable]) -> None:
    """Rewrites skipped (their `applies` said no) change nothing: run them in turn on one copy of the tree and
    compare the copy with the tree. If it changed (or a rewrite raised), each runs alone on a fresh copy, to name
    the one whose applies() is wrong."""
    if _changes(ctx, rewrites):
        for rewrite in rewrites:
            if _changes(ctx, [rewrite]):
                raise AssertionError(f"desugaring skipped {rewrite.__module__}.rewrite for "
                                     f"{ctx.parsed.fn.__qualname__}, which would have changed it: its applies() "
                                     f"is wrong")
        raise AssertionError(f"desugaring skipped {', '.join(r.__module__ for r in rewrites)} for "
                             f"{ctx.parsed.fn.__qualname__}, which together would have changed it: an applies() "
                             f"is wrong")


def _changes(ctx: "Context", rewrites: list[Callable]) -> bool:
    """Whether running rewrites in turn on a copy of the tree changes it (or raises)."""
    from s2s.frontend.tree import clone_tree
    parsed = ctx.parsed
    kept, parsed.node = parsed.node, clone_tree(parsed.node)
    fresh, ctx.fresh_scan = ctx.fresh_scan, False        # (the scan's calls are the original's, not the copy's)
    # what the rewrites record as they run on the copy is not the derivative's: a dependency recorded here alone
    # would make the suite (S2S_VERIFY=1) watch what a user's derivative does not
    attributes, folds = dict(parsed.attributes), list(parsed.folds)
    try:
        for rewrite in rewrites:
            rewrite(ctx)
        return not _same_tree(kept, parsed.node)
    except Exception:
        return True
    finally:
        parsed.node = kept
        ctx.fresh_scan = fresh
        parsed.attributes.clear()
        parsed.attributes.update(attributes)
        parsed.folds[:] = folds


def _same_tree(a: Any, b: Any) -> bool:
    """Whether two gast trees read the same: the same node types with the same fields, leaf for leaf (locations
    aside); the objects constants hold compared as the copy holds them (the same object) or by their text."""
    pending = [(a, b)]
    while pending:
        x, y = pending.pop()
        kind = type(x)
        if kind is not type(y):
            return False
        if kind is list:
            if len(x) != len(y):
                return False
            pending.extend(zip(x, y))
        elif isinstance(x, gast.AST):
            pending.extend((getattr(x, f, None), getattr(y, f, None)) for f in x._fields)
        elif x is not y and (kind not in _ATOMIC or x != y) and (kind in _ATOMIC or repr(x) != repr(y)):
            return False
    return True


_ATOMIC = frozenset({type(None), bool, int, float, complex, str, bytes})
