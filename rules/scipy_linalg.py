"""Rules for scipy.linalg and scipy.signal (registered when SciPy is installed).

Each rule is written with functions that have rules themselves, so second order differentiates it
again: the Frechet derivative of expm is read off expm of a block matrix (Higham 2008, 10.6), the
derivatives of sqrtm and solve_sylvester solve Sylvester equations, triangular solves give
triangular adjoints (only the triangle read is differentiated, as SciPy reads only it).
"""
import numpy as np
import scipy.linalg as la
import scipy.signal as signal

from s2s.rules.linalg import _onto_triangle, _read
from s2s.rules.registry import (adjoint, complex_adjoint, complex_from_real, complex_tangent, several_results, tangent,
                                template)


def _transposed(trans):
    """Whether solve_triangular's trans argument solves with the transpose."""
    return trans == 1 or trans == "T" or trans == "C" or trans == 2


def _triangle(m, lower, unit_diagonal):
    """The part of m a triangular solve reads: its lower or upper triangle (without the diagonal when unit)."""
    if lower:
        return np.tril(m, -1 if unit_diagonal else 0)
    return np.triu(m, 1 if unit_diagonal else 0)


# ---- triangular and Cholesky solves


@adjoint(la.solve_triangular)
def solve_triangular(g, ans, a, b, trans=0, lower=False, unit_diagonal=False, overwrite_b=False,
                     check_finite=True):
    # x = A^-1 b (or A^-T b): b_bar = A^-T g (A^-1 g), A_bar = -b_bar x^T (x b_bar^T) on the triangle read
    gb = la.solve_triangular(a, g, 0 if _transposed(trans) else 1, lower, unit_diagonal)
    x2 = np.reshape(ans, (np.shape(ans)[0], -1))
    gb2 = np.reshape(gb, np.shape(x2))
    ga = -(x2 @ np.swapaxes(gb2, -1, -2)) if _transposed(trans) else -(gb2 @ np.swapaxes(x2, -1, -2))
    return _triangle(ga, lower, unit_diagonal), gb


@tangent(la.solve_triangular)
def solve_triangular_tangent(t, ans, a, b, trans=0, lower=False, unit_diagonal=False, overwrite_b=False,
                             check_finite=True):
    tri = _triangle(t, lower, unit_diagonal)
    x2 = np.reshape(ans, (np.shape(ans)[0], -1))
    moved = np.swapaxes(tri, -1, -2) @ x2 if _transposed(trans) else tri @ x2
    return (-la.solve_triangular(a, np.reshape(moved, np.shape(ans)), trans, lower, unit_diagonal),
            la.solve_triangular(a, t, trans, lower, unit_diagonal))


@adjoint(la.cho_factor)
def cho_factor(g, ans, a, lower=False, overwrite_a=False, check_finite=True):
    # c holds the Cholesky factor in one triangle and a's own entries in the other (SciPy leaves them):
    # the factor's adjoint goes through numpy.linalg.cholesky's rule (Murray 2016), the rest straight to a
    gc = g[0] + 0.0 * ans[0]
    factor = np.tril(ans[0]) if lower else np.triu(ans[0])
    low = factor if lower else np.swapaxes(factor, -1, -2)
    gl = np.tril(gc) if lower else np.swapaxes(np.triu(gc), -1, -2)
    p = np.tril(np.swapaxes(low, -1, -2) @ gl) - 0.5 * (np.swapaxes(low, -1, -2) @ gl) * np.eye(np.shape(a)[-1])
    s = np.swapaxes(np.linalg.solve(np.swapaxes(low, -1, -2), np.swapaxes(np.linalg.solve(np.swapaxes(low, -1, -2), p), -1, -2)), -1, -2)
    rest = np.triu(gc, 1) if lower else np.tril(gc, -1)
    return _onto_triangle(s, lower) + rest          # the factor reads a's one triangle


@tangent(la.cho_factor)
def cho_factor_tangent(t, ans, a, lower=False, overwrite_a=False, check_finite=True):
    factor = np.tril(ans[0]) if lower else np.triu(ans[0])
    low = factor if lower else np.swapaxes(factor, -1, -2)
    sym = _read(t, lower)                            # the symmetric matrix read from t's triangle
    inner = np.linalg.solve(low, np.swapaxes(np.linalg.solve(low, np.swapaxes(sym, -1, -2)), -1, -2))
    dl = low @ (np.tril(inner) - 0.5 * inner * np.eye(np.shape(a)[-1]))
    dfactor = dl if lower else np.swapaxes(dl, -1, -2)
    rest = np.triu(t, 1) if lower else np.tril(t, -1)
    return ((dfactor + rest, 0.0),)


@adjoint(la.cho_solve)
def cho_solve(g, ans, c_and_lower, b, overwrite_b=False, check_finite=True):
    # x = A^-1 b with A = L L^T (or U^T U) read from c's triangle: b_bar = A^-1 g, A_bar = -b_bar x^T,
    # and L_bar = (A_bar + A_bar^T) L (U_bar = U (A_bar + A_bar^T)) on that triangle
    c, lower = c_and_lower[0], c_and_lower[1]
    gb = la.cho_solve(c_and_lower, g)
    x2 = np.reshape(ans, (np.shape(ans)[0], -1))
    ga = -(np.reshape(gb, np.shape(x2)) @ np.swapaxes(x2, -1, -2))
    sym = ga + np.swapaxes(ga, -1, -2)
    gc = np.tril(sym @ np.tril(c)) if lower else np.triu(np.triu(c) @ sym)
    return [gc, 0.0], gb


@tangent(la.cho_solve)
def cho_solve_tangent(t, ans, c_and_lower, b, overwrite_b=False, check_finite=True):
    c, lower = c_and_lower[0], c_and_lower[1]
    tc = t[0]
    factor = np.tril(c) if lower else np.triu(c)
    dfactor = np.tril(tc) if lower else np.triu(tc)
    da = dfactor @ np.swapaxes(factor, -1, -2) + factor @ np.swapaxes(dfactor, -1, -2) if lower else \
        np.swapaxes(dfactor, -1, -2) @ factor + np.swapaxes(factor, -1, -2) @ dfactor
    x2 = np.reshape(ans, (np.shape(ans)[0], -1))
    return -la.cho_solve(c_and_lower, np.reshape(da @ x2, np.shape(ans))), la.cho_solve(c_and_lower, t)


@adjoint(la.solve_banded)
def solve_banded(g, ans, l_and_u, ab, b, overwrite_ab=False, overwrite_b=False, check_finite=True):
    # b_bar = A^-T g (the transpose is banded too, with the bands swapped), A_bar = -b_bar x^T on the bands
    lower, upper = l_and_u[0], l_and_u[1]
    gb = la.solve_banded((upper, lower), _banded_transpose(ab, lower, upper), g)
    x2 = np.reshape(ans, (np.shape(ans)[0], -1))
    gab = -_band_of(np.reshape(gb, np.shape(x2)) @ np.swapaxes(x2, -1, -2), lower, upper)
    return None, gab, gb


@tangent(la.solve_banded)
def solve_banded_tangent(t, ans, l_and_u, ab, b, overwrite_ab=False, overwrite_b=False, check_finite=True):
    lower, upper = l_and_u[0], l_and_u[1]
    return None, -la.solve_banded(l_and_u, ab, _banded_matmul(t, lower, upper, ans)), la.solve_banded(l_and_u, ab, t)


several_results(la.cho_factor, kind=lambda args, kwargs: ("tuple", ("array", "other")))

# ---- matrix functions


def _frechet(a, e):
    """The Frechet derivative of expm at a along e: the upper right block of expm([[a, e], [0, a]])."""
    n = np.shape(a)[-1]
    top = np.concatenate([a, e], axis=-1)
    bottom = np.concatenate([0.0 * a, a], axis=-1)
    return la.expm(np.concatenate([top, bottom], axis=-2))[..., :n, n:]


@adjoint(la.expm)
def expm(g, ans, a):                    # the adjoint of L(a, .) is L(a^T, .)
    return _frechet(np.swapaxes(a, -1, -2), g)


@tangent(la.expm)
def expm_tangent(t, ans, a):
    return _frechet(a, t)


@adjoint(la.solve_sylvester)
@complex_adjoint(la.solve_sylvester)            # holomorphic in each argument: the same formulas for complex values
def solve_sylvester(g, ans, a, b, q):
    # a x + x b = q: q_bar = solve_sylvester(a^T, b^T, g), a_bar = -q_bar x^T, b_bar = -x^T q_bar
    gq = la.solve_sylvester(np.swapaxes(a, -1, -2), np.swapaxes(b, -1, -2), g)
    return -(gq @ np.swapaxes(ans, -1, -2)), -(np.swapaxes(ans, -1, -2) @ gq), gq


@tangent(la.solve_sylvester)
@complex_tangent(la.solve_sylvester)
def solve_sylvester_tangent(t, ans, a, b, q):
    return la.solve_sylvester(a, b, -(t @ ans)), la.solve_sylvester(a, b, -(ans @ t)), la.solve_sylvester(a, b, t)


@adjoint(la.sqrtm)
@complex_adjoint(la.sqrtm)
def sqrtm(g, ans, a, disp=True, blocksize=64):    # x x = a: x dx + dx x = da (a Sylvester equation)
    # holomorphic: the same formula for complex values (a real matrix with a negative eigenvalue has a complex
    # square root; the adjoint of the real matrix is the real part, s2s/analysis/complex_values.py)
    return la.solve_sylvester(np.swapaxes(ans, -1, -2), np.swapaxes(ans, -1, -2), g)


@tangent(la.sqrtm)
@complex_tangent(la.sqrtm)
def sqrtm_tangent(t, ans, a, disp=True, blocksize=64):
    return la.solve_sylvester(ans, ans, t)


complex_from_real(la.sqrtm)


# ---- scipy.signal: convolution and correlation (real arrays), linear in each operand


@adjoint(signal.convolve)
def convolve(g, ans, in1, in2, mode="full", method="auto"):
    # every mode is a window of the full convolution: pad g back to the full length, then correlate
    # (full: in1_bar = correlate(g, in2, 'valid'), in2_bar = correlate(g, in1, 'valid'))
    full = np.pad(g, _convolution_padding(in1, in2, mode))
    return signal.correlate(full, in2, "valid"), signal.correlate(full, in1, "valid")


@adjoint(signal.correlate)
def correlate(g, ans, in1, in2, mode="full", method="auto"):
    # correlate(x, y) = convolve(x, flip(y)) for real arrays
    flipped = np.flip(in2)
    full = np.pad(g, _convolution_padding(in1, flipped, mode))
    return signal.correlate(full, flipped, "valid"), np.flip(signal.correlate(full, in1, "valid"))


for _part in (_transposed, _triangle, _frechet):
    template(_part)

from s2s.rules.helpers import _band_of, _banded_matmul, _banded_transpose, _convolution_padding  # noqa: E402
from s2s.rules.registry import linear  # noqa: E402

linear(signal.convolve, signal.correlate, argnums=(0, 1))
