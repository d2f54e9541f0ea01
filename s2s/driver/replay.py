"""Random draws replayed across the sweeps of one derivative call.

`grad(f, mode="forward")`, `hessian` and `jacobian` take one sweep per coordinate, and every sweep runs f's
computation again. A function that draws random numbers (dropout, a Gumbel-softmax, a noisy objective) must see
the same draws in each sweep, or each coordinate would be the derivative of another realization, and the
result the gradient of none. `Draws(fn, args)` saves the state of every generator the call can draw from
(NumPy's or Python's global one, or a generator object, where f's code names it; and those among the
arguments, their items and attributes); `again()` puts it back before each sweep after the first, so the call draws once, as
reverse mode (one sweep) does.
"""
from __future__ import annotations

import random
import weakref
from typing import Any, Callable

import numpy as np

from s2s.ir.core import Op, walk

_GENERATORS = (np.random.Generator, np.random.RandomState, np.random.BitGenerator, random.Random)


def _state(g: Any) -> Any:
    if isinstance(g, np.random.Generator):
        return g.bit_generator.state
    if isinstance(g, np.random.BitGenerator):
        return g.state
    return g.get_state() if isinstance(g, np.random.RandomState) else g.getstate()


def _restore(g: Any, state: Any) -> None:
    if isinstance(g, np.random.Generator):
        g.bit_generator.state = state
    elif isinstance(g, np.random.BitGenerator):
        g.state = state
    elif isinstance(g, np.random.RandomState):
        g.set_state(state)
    else:
        g.setstate(state)


def _found_in(value: Any, found: dict, depth: int = 0) -> None:
    """The generators among value, its items and its attributes (a model holding `self.rng`), a few levels down."""
    if isinstance(value, _GENERATORS):
        found[id(value)] = value
    elif depth < 3 and isinstance(value, (tuple, list)):
        for v in value:
            _found_in(v, found, depth + 1)
    elif depth < 3 and isinstance(value, dict):
        for v in value.values():
            _found_in(v, found, depth + 1)
    elif depth < 3 and hasattr(value, "__dict__") and not isinstance(value, (type, np.ndarray)):
        for v in vars(value).values():
            _found_in(v, found, depth + 1)


def _named_in_code(fn: Callable) -> list:
    """The generators f's code (and what it inlines) draws from by name: NumPy's or Python's global one
    (`np.random.randn`, `random.gauss`), or an object's (`RNG.normal` with RNG a module-level Generator)."""
    from s2s.driver.primal import lowered, root_function
    try:
        body = lowered(root_function(fn))
    except Exception:               # a function s2s cannot read has no derivative to sweep either
        return []
    known = _IN_CODE.get(body)
    if known is None:
        found: dict[int, Any] = {}
        for op in walk(body.body):
            if isinstance(op, Op):
                owner = getattr(op.prim, "__self__", None)
                if isinstance(owner, _GENERATORS):
                    found[id(owner)] = owner
                elif (getattr(op.prim, "__module__", None) or "").startswith("numpy.random"):
                    found[id(np.random.mtrand._rand)] = np.random.mtrand._rand     # np.random.randn, ...
        known = _IN_CODE[body] = list(found.values())
    return known


# per lowered function: the generators its code names (saving NumPy's global state costs about 50 µs: only
# for a function that draws from it)
_IN_CODE: "weakref.WeakKeyDictionary[Any, list]" = weakref.WeakKeyDictionary()


class Draws:
    """The generators one call of fn on args can draw from, and their states before it."""

    def __init__(self, fn: Callable, args: tuple) -> None:
        found: dict[int, Any] = {}
        for g in _named_in_code(fn):
            found[id(g)] = g
        _found_in(args, found)
        self.saved = [(g, _state(g)) for g in found.values()]

    def again(self) -> None:
        """Every generator as it was before the call: the next sweep draws what the first one drew."""
        for g, state in self.saved:
            _restore(g, state)
