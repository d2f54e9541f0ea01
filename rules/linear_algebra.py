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


# ---- batching (s2s.vmap): products become products over the batch (matmul's broadcasting, or np.einsum with a
# letter for the batch); np.linalg's functions take stacks of matrices as they are

from s2s.rules.batching import _batched_subscripts, _lined_up  # noqa: E402
from s2s.rules.registry import batching  # noqa: E402


@batching(np.matmul, operator.matmul)
def matmul_batched(axes, a, b):
    return _matmul_of_batch(axes, a, b)


def _matmul_of_batch(axes, a, b):
    if axes[0] is None:                 # one a for every example
        if np.ndim(b) == 2 and np.ndim(a) == 1:
            return b @ a, 0
        if np.ndim(b) == 2 and np.ndim(a) == 2:
            return b @ a.T, 0           # a @ b for each row b
        if np.ndim(b) == 2:
            return NotImplemented
        return a @ b, 0
    if axes[1] is None:                 # one b for every example
        if np.ndim(a) == 2 and np.ndim(b) > 2:
            return NotImplemented
        return a @ b, 0
    if np.ndim(a) == 2 and np.ndim(b) == 2:
        return np.einsum("ni,ni->n", a, b), 0
    if np.ndim(a) == 2:
        return np.einsum("ni,n...ij->n...j", a, b), 0
    if np.ndim(b) == 2:
        return np.einsum("n...ij,nj->n...i", a, b), 0
    ndim = max(np.ndim(a), np.ndim(b)) - 1
    return _lined_up(a, 0, ndim) @ _lined_up(b, 0, ndim), 0


template(_matmul_of_batch)


@batching(np.dot)
def dot_batched(axes, a, b):
    if np.ndim(a) - (axes[0] is not None) == 0 or np.ndim(b) - (axes[1] is not None) == 0:
        ndim = max(np.ndim(a) - (axes[0] is not None), np.ndim(b) - (axes[1] is not None))
        return _lined_up(a, axes[0], ndim) * _lined_up(b, axes[1], ndim), 0
    if np.ndim(b) - (axes[1] is not None) > 2 or np.ndim(a) - (axes[0] is not None) > 2:
        return NotImplemented
    if axes[0] is None and np.ndim(a) == 2 and np.ndim(b) == 2:
        return b @ a.T, 0
    if axes[0] is None and np.ndim(a) == 1 and np.ndim(b) == 2:
        return b @ a, 0
    return _matmul_of_batch(axes, a, b)


@batching(np.outer)
def outer_batched(axes, a, b):
    if axes[0] is not None and np.ndim(a) != 2 or axes[1] is not None and np.ndim(b) != 2:
        return NotImplemented           # an example's operand of more (or fewer) than one axis: raveled first
    if axes[0] is None:
        return np.einsum("i,nj->nij", np.ravel(a), b), 0
    if axes[1] is None:
        return np.einsum("ni,j->nij", a, np.ravel(b)), 0
    return np.einsum("ni,nj->nij", a, b), 0


@batching(np.inner)
def inner_batched(axes, a, b):
    if np.ndim(a) - (axes[0] is not None) == 0 or np.ndim(b) - (axes[1] is not None) == 0:
        ndim = max(np.ndim(a) - (axes[0] is not None), np.ndim(b) - (axes[1] is not None))
        return _lined_up(a, axes[0], ndim) * _lined_up(b, axes[1], ndim), 0
    if axes[0] is None:
        return np.einsum("...i,n...i->n...", a, b) if np.ndim(a) == 1 else NotImplemented, 0
    if axes[1] is None:
        return np.einsum("n...i,...i->n...", a, b) if np.ndim(b) == 1 else NotImplemented, 0
    if np.ndim(a) == 2 and np.ndim(b) == 2:
        return np.einsum("ni,ni->n", a, b), 0
    return NotImplemented


@batching(np.einsum)
def einsum_batched(axes, x0, x1=None, x2=None, x3=None, x4=None, x5=None, optimize=False):
    if not isinstance(x0, str) or axes[0] is not None:
        return NotImplemented           # the sublist form: a loop over the batch
    flags = tuple(a is not None for a in axes[1:])
    subscripts = _batched_subscripts(x0, flags)
    if x2 is None:
        return np.einsum(subscripts, x1), 0
    if x3 is None:
        return np.einsum(subscripts, x1, x2), 0
    if x4 is None:
        return np.einsum(subscripts, x1, x2, x3), 0
    if x5 is None:
        return np.einsum(subscripts, x1, x2, x3, x4), 0
    return np.einsum(subscripts, x1, x2, x3, x4, x5), 0


@batching(np.linalg.inv)
def inv_batched(axes, a):
    return np.linalg.inv(a), 0


@batching(np.linalg.det)
def det_batched(axes, a):
    return np.linalg.det(a), 0


@batching(np.linalg.solve)
def solve_batched(axes, a, b):
    if np.ndim(b) - (axes[1] is not None) == 1:        # one vector per example: a column
        if axes[0] is None:
            return np.linalg.solve(a, b.T).T, 0
        if axes[1] is None:
            return np.linalg.solve(a, np.broadcast_to(b, np.shape(a)[:-1])[..., None])[..., 0], 0
        return np.linalg.solve(a, b[..., None])[..., 0], 0
    if axes[0] is None:
        return np.linalg.solve(a, b), 0
    if axes[1] is None:
        return np.linalg.solve(a, b), 0
    return np.linalg.solve(a, b), 0
