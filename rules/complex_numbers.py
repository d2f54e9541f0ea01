"""Rules for complex arguments, where the real rule does not hold (the function is not holomorphic).

Autograd's convention (s2s/analysis/complex_values.py): the gradient of a real f(z) is df/dx - i df/dy, so that a
holomorphic function's adjoint is g * f'(z), as for reals. These rules are used instead of the real ones
(rules/numpy_functions.py, numpy_more.py) when an argument may be complex; they give the real rule's value
on real arguments too. Tangents are the real-linear differentials (d|z| = Re(conj(z) dz) / |z|).
"""
import builtins
import cmath
import operator

import numpy as np

from s2s.rules.registry import adjoint, complex_adjoint, complex_tangent, elementwise, helper, linear, nondifferentiable
from s2s.runtime import _broadcast_back, _reduced_size


def _match_real(g, x):
    """g, the adjoint of x: its real part when x is real (the adjoint of a real value is real)."""
    if np.iscomplexobj(g) and not np.iscomplexobj(x):
        return np.real(g)
    return g


def _cast_like(g, x):
    """g in x's dtype: its real part for a real x (the adjoint of x.astype(...))."""
    if np.iscomplexobj(g) and not np.iscomplexobj(x):
        g = np.real(g)
    return np.asarray(g).astype(np.result_type(x))


def _real_only(g, x, name):
    """g, after checking that x is real: name's rule assumes real values."""
    if np.iscomplexobj(x):
        raise ValueError(f"s2s: {name} met complex values when the code ran; s2s differentiates it for real "
                         f"arguments only (take np.real, np.imag or np.abs first)")
    return g


@adjoint(_match_real)
def match_real(g, ans, h, x):
    return g, None


@adjoint(_cast_like)
def cast_like(g, ans, h, x):
    return g, None


@adjoint(_real_only)
def real_only(g, ans, h, x, name):
    return g, None, None


helper(_match_real)
helper(_real_only)
helper(_cast_like)
linear(_match_real, _real_only, _cast_like)


# ---- the functions that are not holomorphic


@complex_adjoint(np.absolute, np.abs, builtins.abs, operator.abs)
def absolute(g, ans, x):                # conj(z) / |z|, 0 at z = 0 (as autograd)
    return g * (np.conj(x) / (ans + (ans == 0)))


@complex_tangent(np.absolute, np.abs, builtins.abs, operator.abs)
def absolute_tangent(t, ans, x):
    return (np.real(np.conj(x) * t) / (ans + (ans == 0)),)


@complex_adjoint(np.real)
def real(g, ans, x):
    return g + 0j


@complex_adjoint(np.imag)
def imag(g, ans, x):
    return g * -1j


@complex_tangent(np.imag)
def imag_tangent(t, ans, x):
    return (np.imag(t),)


@complex_adjoint(np.conj, np.conjugate)
def conj(g, ans, x):
    return np.conj(g)


@complex_adjoint(np.angle)
def angle(g, ans, x, deg=False):        # atan2(y, x): (-y - ix) / |z|^2 = -i conj(z) / |z|^2
    scale = 57.29577951308232 if deg else 1.0
    return g * (np.conj(x) * (-1j * scale)) / np.real(x * np.conj(x))


@complex_tangent(np.angle)
def angle_tangent(t, ans, x, deg=False):
    scale = 57.29577951308232 if deg else 1.0
    return (np.imag(np.conj(x) * t) * scale / np.real(x * np.conj(x)),)


@complex_adjoint(np.astype)
def astype(g, ans, x, dtype):
    return _cast_like(g, x)


# ---- conjugating products


@adjoint(np.vdot)
def vdot(g, ans, a, b):                 # sum(conj(a) * b), flattened
    return np.reshape(np.conj(g * b), np.shape(a)), np.reshape(g * np.conj(a), np.shape(b))


linear(np.vdot, argnums=(0, 1))         # conjugate-linear in a, linear in b: the tangent is vdot of the tangent


# ---- making complex numbers


@adjoint(builtins.complex)
def complex_(g, ans, real=0.0, imag=0.0):   # real + 1j * imag (the real parts of these: the transform)
    return g, g * 1j


elementwise(builtins.complex)


# ---- norms and spreads of complex values: |z| inside


def _euclidean_only(x, ord, axis):
    """Refuse the norms other than the 2-norm of vectors and the Frobenius norm, for complex values."""
    matrix = (axis is None and np.ndim(x) == 2 and ord is not None) or (axis is not None and np.ndim(axis) == 1
                                                                        and len(axis) == 2)
    if not (ord is None or ord == "fro" or (ord == 2 and not matrix)):
        raise ValueError(f"s2s: numpy.linalg.norm with ord={ord!r} of complex values is not differentiated "
                         f"(the 2-norm of vectors and the Frobenius norm are)")
    return 0.0


helper(_euclidean_only)
nondifferentiable(_euclidean_only)


@complex_adjoint(np.linalg.norm)
def norm(g, ans, x, ord=None, axis=None, keepdims=False):       # conj(z) / |z|, 0 at z = 0
    n = _broadcast_back(ans, x, axis, keepdims) + _euclidean_only(x, ord, axis)
    return _broadcast_back(g, x, axis, keepdims) * (np.conj(x) / (n + (n == 0)))


@complex_tangent(np.linalg.norm)
def norm_tangent(t, ans, x, ord=None, axis=None, keepdims=False):
    n = ans + _euclidean_only(x, ord, axis)
    return (np.real(np.sum(np.conj(x) * t, axis=axis, keepdims=keepdims)) / (n + (n == 0)),)


@complex_adjoint(np.var)
def var(g, ans, x, axis=None, dtype=None, out=None, ddof=0, keepdims=False):   # mean |z - mean|^2
    centered = x - np.mean(x, axis=axis, keepdims=True)
    return _broadcast_back(g, x, axis, keepdims) * np.conj(centered) * (2.0 / (_reduced_size(x, axis) - ddof))


@complex_tangent(np.var)
def var_tangent(t, ans, x, axis=None, dtype=None, out=None, ddof=0, keepdims=False):
    centered = x - np.mean(x, axis=axis, keepdims=True)
    return (np.real(np.sum(np.conj(centered) * t, axis=axis, keepdims=keepdims)) * (2.0 / (_reduced_size(x, axis) - ddof)),)


@complex_adjoint(np.std)
def std(g, ans, x, axis=None, dtype=None, out=None, ddof=0, keepdims=False):
    centered = x - np.mean(x, axis=axis, keepdims=True)
    spread = _broadcast_back(ans, x, axis, keepdims)
    return _broadcast_back(g, x, axis, keepdims) * np.conj(centered) / (
        (_reduced_size(x, axis) - ddof) * (spread + (spread == 0)))


@complex_tangent(np.std)
def std_tangent(t, ans, x, axis=None, dtype=None, out=None, ddof=0, keepdims=False):
    centered = x - np.mean(x, axis=axis, keepdims=True)
    return (np.real(np.sum(np.conj(centered) * t, axis=axis, keepdims=keepdims)) / (
        (_reduced_size(x, axis) - ddof) * (ans + (ans == 0))),)


# ---------------------------------------------------------------- facts (rules/record.py)

from s2s.rules.registry import declare  # noqa: E402

# the shapes of the helpers above (s2s/analysis/complex_values.py's shape_of)
declare(_real_only, shape_rule="real_only")
declare(_cast_like, shape_rule="cast_like")
declare(_match_real, shape_rule="match_real")


# ---- cmath: complex results, also of real arguments; holomorphic, so the real rules hold (autograd's convention)

@adjoint(cmath.exp)
def cmath_exp(g, ans, x):
    return g * ans


@adjoint(cmath.sqrt)
def cmath_sqrt(g, ans, x):
    return g / (2 * ans)


@adjoint(cmath.log)
def cmath_log(g, ans, x):
    return g / x


elementwise(cmath.exp, cmath.sqrt, cmath.log)
declare(cmath.exp, cmath.sqrt, cmath.log, holomorphic=True, complex_result="complex")
