"""The Numba target: a derivative's IR emitted in the subset of Python Numba compiles in nopython mode, and
compiled by numba.njit.

The emitter (s2s/emit/python.py) stays the one writer of the module: given `target=SYNTAX` (syntax.py) it spells
what Numba needs spelled otherwise, from the IR, so that the comments quoting the user's code survive and every
line still maps to the user's place: `reversed(range(a, b))` counts down with `range(b - 1, a - 1, -1)`; a
ufunc's `out=` is passed by position; parallel assignments of independent values are one line each; `for x in
xs` over an argument is a loop over indices (contiguous rows); the run-time helpers are their Numba-typable
texts (helpers.py, typed_helpers.py: overloads chosen by Numba's types), and one Numba cannot type is refused;
a dict, and a None saved on a stack (an early `return` in a loop), are refused, at the user's line.

What the IR's passes already did before emission is not done again here: stacks nothing reads are gone
(passes/optimize.py's eliminate_dead_stacks), and an adjoint accumulated from one element or across a loop is
added into in place (passes/specialize.py, in_place.py, accumulate_in_place.py, contractions.py).

The pipeline runs the Numba target's own passes on the IR, from the values' shapes and dtypes known when the
derivative is made: s2s/passes/stack_rows.py makes a loop's stacks the rows of an array allocated before it
(`v_rows[i] = v`, read back in reverse as `v = v_rows[i]`: Numba's lists grow by reallocation), and
s2s/passes/fuse_elementwise.py writes consecutive elementwise operations over 1-D float64 arrays of one length as
one loop (Numba does not fuse array expressions, each of which allocates). Nothing here reads emitted text back.

compiler.py compiles the result with `numba.njit` (with the options of the user's `@njit` dispatcher, when the
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
from s2s.backends.numba.sequences import FLOATS, array_positions
from s2s.backends.numba.syntax import SYNTAX

__all__ = [
           "FLOATS",
           "INSTALL_HINT",
           "SYNTAX",
           "NumbaUnsupported",
           "array_positions",
           "build",
           "call_args",
           "call_key",
           "compile_numba",
           "dispatcher_options",
           "is_dispatcher",
           "numba_module",
           "plain_function",
           "resolve_backend",
           "standalone",
]
