"""Rules for products and numpy.linalg.

Products of 1-D operands are promoted as matmul promotes them, and batch axes
broadcast by matmul are summed back (inside the helpers, which are copied into
the generated code).
"""
import operator

import numpy as np

from s2s.registry import adjoint, linear, tangent
from s2s.runtime import (_broadcast_back, _dot_left, _dot_right, _einsum_adjoint, _matmul_left, _matmul_right,
                         _unsupported)

# ---- products


@adjoint(np.matmul, operator.matmul)
def matmul(g, ans, a, b):
    return _matmul_left(g, a, b), _matmul_right(g, a, b)


@adjoint(np.dot)
def dot(g, ans, a, b):
    return _dot_left(g, a, b), _dot_right(g, a, b)


@adjoint(np.inner)
def inner(g, ans, a, b):
    return _matmul_left(g, a, np.transpose(b)), np.transpose(_matmul_right(g, a, np.transpose(b)))


@adjoint(np.outer)
def outer(g, ans, a, b):
    return np.reshape(np.dot(g, np.ravel(b)), np.shape(a)), np.reshape(np.dot(np.ravel(a), g), np.shape(b))


@adjoint(np.einsum)
def einsum(g, ans, subscripts, a, b=None):
    return None, _einsum_adjoint(subscripts, g, a, b, 0), _einsum_adjoint(subscripts, g, a, b, 1)


# ---- numpy.linalg


@adjoint(np.linalg.inv)
def inv(g, ans, a):
    inverse_t = np.swapaxes(ans, -1, -2)
    return -(inverse_t @ g @ inverse_t)


@adjoint(np.linalg.solve)
def solve(g, ans, a, b):
    gb = np.linalg.solve(np.swapaxes(a, -1, -2), g)
    return -_matmul_left(gb, a, ans), gb


@adjoint(np.linalg.det)
def det(g, ans, a):
    return np.expand_dims(g * ans, (-1, -2)) * np.swapaxes(np.linalg.inv(a), -1, -2)


@adjoint(np.linalg.norm)
def norm(g, ans, x, ord=None, axis=None, keepdims=False):
    if ord is not None and ord != "fro" and not (ord == 2 and np.ndim(x) == 1):
        _unsupported("the derivative of numpy.linalg.norm for ord other than None, 'fro' or 2 (vectors)")
    return _broadcast_back(g, x, axis, keepdims) * x / _broadcast_back(ans, x, axis, keepdims)


# ---- forward mode

linear(np.matmul, operator.matmul, np.dot, np.inner, np.outer, argnums=(0, 1))


@tangent(np.einsum)
def einsum_tangent(t, ans, subscripts, a, b=None):
    return None, np.einsum(subscripts, t) if b is None else np.einsum(subscripts, t, b), np.einsum(subscripts, a, t)


@tangent(np.linalg.inv)
def inv_tangent(t, ans, a):
    return -(ans @ t @ ans)


@tangent(np.linalg.solve)
def solve_tangent(t, ans, a, b):
    return -np.linalg.solve(a, t @ ans), np.linalg.solve(a, t)


@tangent(np.linalg.det)
def det_tangent(t, ans, a):
    return ans * np.trace(np.linalg.solve(a, t))


@tangent(np.linalg.norm)
def norm_tangent(t, ans, x, ord=None, axis=None, keepdims=False):
    if ord is not None and ord != "fro" and not (ord == 2 and np.ndim(x) == 1):
        _unsupported("the derivative of numpy.linalg.norm for ord other than None, 'fro' or 2 (vectors)")
    return np.sum(x * t, axis=axis, keepdims=keepdims) / ans
