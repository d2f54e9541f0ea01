"""Rules for products and numpy.linalg.

Products of 1-D operands are promoted as matmul promotes them, and batch axes
broadcast by matmul are summed back (inside the helpers, which are copied into
the generated code).
"""
import operator

import numpy as np

from s2s.rules.helpers import _dot_nd_left, _dot_nd_right, _einsum_arg_adjoint, _einsum_call, _tensordot_adjoint
from s2s.rules.registry import adjoint, linear, tangent, template
from s2s.runtime import _matmul_left, _matmul_right

# ---- products


@adjoint(np.matmul, operator.matmul)
def matmul(g, ans, a, b):
    return _matmul_left(g, a, b), _matmul_right(g, a, b)


@adjoint(np.dot)
def dot(g, ans, a, b):
    return _dot_nd_left(g, a, b), _dot_nd_right(g, a, b)


@adjoint(np.inner)
def inner(g, ans, a, b):                # np.tensordot(a, b, (-1, -1)), or a * b when one is a scalar
    return _tensordot_adjoint(g, a, b, (-1, -1), 0), _tensordot_adjoint(g, a, b, (-1, -1), 1)


@adjoint(np.tensordot)
def tensordot(g, ans, a, b, axes=2):
    return _tensordot_adjoint(g, a, b, axes, 0), _tensordot_adjoint(g, a, b, axes, 1)


@adjoint(np.outer)
def outer(g, ans, a, b):
    return np.reshape(np.dot(g, np.ravel(b)), np.shape(a)), np.reshape(np.dot(np.ravel(a), g), np.shape(b))


@adjoint(np.einsum)
def einsum(g, ans, x0, x1=None, x2=None, x3=None, x4=None, x5=None, x6=None, x7=None, x8=None, x9=None, x10=None, optimize=False):
    # any number of operands (up to five in the sublist form with its output, eleven arguments; up to ten in the
    # string form), ellipses and repeated indices; the adjoint of an argument that is not an operand (subscripts,
    # sublists) is None and never used
    return (_einsum_arg_adjoint(g, 0, x0, x1, x2, x3, x4, x5, x6, x7, x8, x9, x10),
            _einsum_arg_adjoint(g, 1, x0, x1, x2, x3, x4, x5, x6, x7, x8, x9, x10),
            _einsum_arg_adjoint(g, 2, x0, x1, x2, x3, x4, x5, x6, x7, x8, x9, x10),
            _einsum_arg_adjoint(g, 3, x0, x1, x2, x3, x4, x5, x6, x7, x8, x9, x10),
            _einsum_arg_adjoint(g, 4, x0, x1, x2, x3, x4, x5, x6, x7, x8, x9, x10),
            _einsum_arg_adjoint(g, 5, x0, x1, x2, x3, x4, x5, x6, x7, x8, x9, x10),
            _einsum_arg_adjoint(g, 6, x0, x1, x2, x3, x4, x5, x6, x7, x8, x9, x10),
            _einsum_arg_adjoint(g, 7, x0, x1, x2, x3, x4, x5, x6, x7, x8, x9, x10),
            _einsum_arg_adjoint(g, 8, x0, x1, x2, x3, x4, x5, x6, x7, x8, x9, x10),
            _einsum_arg_adjoint(g, 9, x0, x1, x2, x3, x4, x5, x6, x7, x8, x9, x10),
            _einsum_arg_adjoint(g, 10, x0, x1, x2, x3, x4, x5, x6, x7, x8, x9, x10))


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
    return np.expand_dims(g * np.ones_like(ans), (-1, -2)) * _cofactors(a, ans)      # (float32 stays float32)


def _cofactors(a, ans):
    """The cofactor matrix of each matrix of a (ans its determinant): det's derivative, det(a) inv(a)^T where
    a is well conditioned; from the minors (each a determinant) where it is singular or nearly so, where
    inv fails or loses the digits."""
    n = np.shape(a)[-1]
    if n == 1:
        return np.ones_like(a * 1.0)
    scale = np.prod(np.linalg.norm(a, axis=-1), axis=-1)       # Hadamard's bound on |det(a)|
    if np.all(np.abs(ans) > 1e-8 * scale):
        return np.expand_dims(ans, (-1, -2)) * np.swapaxes(np.linalg.inv(a), -1, -2)
    others = np.nonzero(1 - np.eye(n, dtype=int))[1].reshape(n, n - 1)      # row i: every index but i
    minors = np.swapaxes(np.take(np.take(a, others, axis=-2), others, axis=-1), -3, -2)
    determinants = np.linalg.det(minors)
    return np.where(np.add.outer(np.arange(n), np.arange(n)) % 2 == 1, -determinants, determinants)


# ---- forward mode

linear(np.matmul, operator.matmul, np.dot, np.inner, np.outer, np.tensordot, argnums=(0, 1))


@tangent(np.einsum)
def einsum_tangent(t, ans, x0, x1=None, x2=None, x3=None, x4=None, x5=None, x6=None, x7=None, x8=None, x9=None, x10=None, optimize=False):
    return (_einsum_call(t, x1, x2, x3, x4, x5, x6, x7, x8, x9, x10),
            _einsum_call(x0, t, x2, x3, x4, x5, x6, x7, x8, x9, x10),
            _einsum_call(x0, x1, t, x3, x4, x5, x6, x7, x8, x9, x10),
            _einsum_call(x0, x1, x2, t, x4, x5, x6, x7, x8, x9, x10),
            _einsum_call(x0, x1, x2, x3, t, x5, x6, x7, x8, x9, x10),
            _einsum_call(x0, x1, x2, x3, x4, t, x6, x7, x8, x9, x10),
            _einsum_call(x0, x1, x2, x3, x4, x5, t, x7, x8, x9, x10),
            _einsum_call(x0, x1, x2, x3, x4, x5, x6, t, x8, x9, x10),
            _einsum_call(x0, x1, x2, x3, x4, x5, x6, x7, t, x9, x10),
            _einsum_call(x0, x1, x2, x3, x4, x5, x6, x7, x8, t, x10),
            _einsum_call(x0, x1, x2, x3, x4, x5, x6, x7, x8, x9, t))


@tangent(np.linalg.inv)
def inv_tangent(t, ans, a):
    return -(ans @ t @ ans)


@tangent(np.linalg.solve)
def solve_tangent(t, ans, a, b):
    return -np.linalg.solve(a, t @ ans), np.linalg.solve(a, t)


@tangent(np.linalg.det)
def det_tangent(t, ans, a):             # each matrix of a stack: its last two axes
    return np.sum(_cofactors(a, ans) * t, axis=(-2, -1))


# shared parts of the formulas above, inlined into the rules that call them (second order differentiates them)
template(_cofactors)
