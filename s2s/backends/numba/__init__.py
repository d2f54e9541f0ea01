"""The Numba target: a derivative's emitted module, rewritten into the subset Numba compiles in nopython mode,
and compiled by numba.njit.

The emitter (emit.py) stays the one source of truth; this package transforms its output line by line, so that
the comments quoting the user's code survive and every line still maps to the user's place. One rewrite per
module, applied in this order by `rewrite.to_numba`:

- unpack.py    parallel assignments of independent values become one line each;
- helpers.py   s2s's run-time helpers Numba cannot type are replaced by Numba-typable ones or refused (those
               that shapes did not remove, typed_helpers.py: overloads chosen by Numba's types);
- ranges.py    `reversed(range(a, b))` becomes `range(b - 1, a - 1, -1)` (a constant step s: the range back);
- rewrite.py   a name that starts as None and is saved on a stack (an early `return` in a loop) is refused;
- ufunc_out.py `np.tanh(t, out=t)` becomes `np.tanh(t, t)` (Numba takes a ufunc's output by position only);
- rows.py      `for x in xs` over an argument becomes a loop over indices (contiguous rows);
- stacks.py    stacks pushed once per iteration of a loop of known trip count become arrays allocated before
               it (of numbers: 1-D; of arrays: one row per push);
- fuse.py      consecutive elementwise NumPy lines over arrays of one shape become one loop (Numba does not
               fuse array expressions, each of which allocates).

What the IR's passes already did before emission is not done again here: stacks nothing reads are gone
(passes/optimize.py's eliminate_dead_stacks), and an adjoint accumulated from one element or across a loop is
added into in place (passes/specialize.py, in_place.py, accumulate_in_place.py, contractions.py).

assemble.py puts the module back together with the helpers it calls and its line map; typed.py reads what a
first compilation's typing says about the variables (the last two rewrites need it). compiler.py compiles the result with `numba.njit` (with the options of the user's `@njit` dispatcher, when the
user's function is one) for the argument types it is called with, at once: whatever Numba cannot type is refused
when the derivative is made, as an S2SError naming the generated line and the user's line it comes from, never
at the first call inside Numba's own error text. sequences.py passes a list or tuple of floats that the
derivative reads by index as a float64 array (checked and converted at each call: no reflected list).
export.py writes the standalone module; dispatchers.py knows Numba's dispatchers and options.
"""
from s2s.backends.numba.compiler import build, compile_numba
from s2s.backends.numba.dispatchers import (
           INSTALL_HINT,
           NumbaUnsupported,
           call_args,
           call_key,
           dispatcher_options,
           is_dispatcher,
           numba_module,
           plain_function,
           resolve_backend,
)
from s2s.backends.numba.export import standalone
from s2s.backends.numba.rewrite import to_numba
from s2s.backends.numba.sequences import FLOATS, array_positions

__all__ = ["FLOATS", "INSTALL_HINT", "NumbaUnsupported", "array_positions", "build", "call_args", "call_key",
           "compile_numba", "dispatcher_options", "is_dispatcher", "numba_module", "plain_function", "resolve_backend",
           "standalone", "to_numba"]
