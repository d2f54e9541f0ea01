"""Runtime helpers: the primitives that transforms insert into the IR.

Each is a plain function that defines the primitive's meaning. The emitter
spells the simple ones inline (`stack.append(v)`, `[]`, `0.0`) and copies the
source of the others into the generated module, so derivative code never
imports s2s: it runs with NumPy alone.
"""
from __future__ import annotations

import numpy as np


def stack_new():
    return []


def push(stack, value):
    stack.append(value)


def pop(stack):
    return stack.pop()


def make_tuple(*items):
    return items


def make_list(*items):
    return list(items)


def free_name(name):
    """A global or closure variable, read when the generated code runs (never frozen)."""
    raise NotImplementedError("spelled as a bare name by the emitter")


def zeros_like(x):
    return np.zeros_like(x)


def _unbroadcast(g, x):
    """Sum g over the axes that broadcasting added or stretched, so it has x's shape."""
    shape = np.shape(x)
    if np.shape(g) == shape:
        return g
    g = np.sum(g, axis=tuple(range(np.ndim(g) - len(shape)))) if np.ndim(g) > len(shape) else g
    axes = tuple(i for i, n in enumerate(shape) if n == 1 and np.shape(g)[i] != 1)
    if axes:
        g = np.sum(g, axis=axes, keepdims=True)
    return g if isinstance(x, np.ndarray) else g.item() if np.ndim(g) == 0 and not isinstance(x, np.generic) else g


def _seed(y):
    """The adjoint 1 of a scalar output; refuses an array with more than one element."""
    if np.size(y) != 1:
        raise TypeError(f"grad needs a function with a scalar output, but it returned an array of shape {np.shape(y)}; "
                        "use s2s.vjp or s2s.jacobian for vector outputs")
    return np.ones_like(y)


def _scatter(x, index, g):
    """The adjoint of x[index]: zeros shaped like x, with g added at index (repeated indices add up)."""
    out = np.zeros(np.shape(x), dtype=np.result_type(np.asarray(x).dtype, np.asarray(g).dtype, np.float32))
    np.add.at(out, index, g)
    return out


# Helpers whose source the emitter copies into the generated module when it uses them.
EMITTED_HELPERS = {_unbroadcast, _seed, _scatter}
