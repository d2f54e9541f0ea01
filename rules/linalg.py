"""Rules for numpy.linalg's norms and decompositions.

Every rule is written with NumPy functions that have rules themselves, so that second order (forward
over reverse) differentiates the rule's own code. Matrices may be stacked (batch axes first).
Decompositions of several outputs get the adjoint of each output (0.0 for an output not used) as g[i].

Sources: Giles, "An extended collection of matrix derivative results for forward and reverse mode
algorithmic differentiation" (2008) for inv, det, eigh, qr; Murray, "Differentiation of the Cholesky
decomposition" (2016); Townsend, "Differentiating the singular value decomposition" (2016); Golub and
Pereyra (1973) for pinv. Degenerate cases follow autograd and JAX: repeated eigenvalues or singular
values give infinite or NaN adjoints for the vectors (the vectors are not unique there); pinv is
differentiated as if the rank were constant (the formula of Golub and Pereyra, as JAX).
"""
import numpy as np

from s2s.rules.helpers import _matrix_axes, _norm_kind
from s2s.rules.registry import adjoint, several_results, tangent, template
from s2s.runtime import _broadcast_back


def _eye(n, like):
    """The identity in like's float type (float32 stays float32)."""
    return np.eye(n, dtype=np.result_type(like, np.float32))


def _t(a):
    return np.swapaxes(a, -1, -2)


# ---- norms


def _norm_direction(x, ans, ord, axis, keepdims):
    """The gradient of the norm for a unit adjoint, broadcastable to x (ties of max and min share it)."""
    kind = _norm_kind(x, ord, axis)
    n = _broadcast_back(ans, x, axis, keepdims)
    if kind == "euclid":                    # 2-norm of vectors, Frobenius; 0 at x = 0 (a subgradient, as JAX)
        d = x / (n + (n == 0))
    elif kind == "p":                       # sum(|x| ** p) ** (1 / p)
        d = np.sign(x) * (np.abs(x) / (n + (n == 0))) ** (ord - 1)
    elif kind == "max":                     # ord = inf or -inf on vectors: the extreme entries
        hit = (np.abs(x) == n) * np.ones_like(x)
        d = np.sign(x) * hit / np.sum(hit, axis=axis, keepdims=True)
    elif kind == "zero":                    # the count of nonzero entries: piecewise constant
        d = 0.0 * x
    elif kind == "columns" or kind == "rows":   # ord = 1, -1 (column sums), inf, -inf (row sums) of matrices
        rows, columns = _matrix_axes(x, axis)
        sums = np.sum(np.abs(x), axis=rows if kind == "columns" else columns, keepdims=True)
        hit = (sums == n) * np.ones_like(sums)
        d = np.sign(x) * hit / np.sum(hit, axis=columns if kind == "columns" else rows, keepdims=True)
    else:                                   # "nuc", 2, -2 of matrices: through the SVD
        rows, columns = _matrix_axes(x, axis)
        u, s, vt = np.linalg.svd(np.moveaxis(x, (rows, columns), (-2, -1)), full_matrices=False)
        if kind == "nuc":
            m = u @ vt
        elif ord == 2:
            m = u[..., :, :1] @ vt[..., :1, :]
        else:
            m = u[..., :, -1:] @ vt[..., -1:, :]
        d = np.moveaxis(m, (-2, -1), (rows, columns))
    return d


@adjoint(np.linalg.norm)
def norm(g, ans, x, ord=None, axis=None, keepdims=False):
    return _broadcast_back(g, x, axis, keepdims) * _norm_direction(x, ans, ord, axis, keepdims)


@tangent(np.linalg.norm)
def norm_tangent(t, ans, x, ord=None, axis=None, keepdims=False):
    return np.sum(_norm_direction(x, ans, ord, axis, keepdims) * t, axis=axis, keepdims=keepdims)


# ---- determinants


@adjoint(np.linalg.slogdet)
def slogdet(g, ans, a):                 # the sign has no derivative
    return np.expand_dims(g[1], (-1, -2)) * _t(np.linalg.inv(a))


@tangent(np.linalg.slogdet)
def slogdet_tangent(t, ans, a):
    return ((0.0 * ans[0], np.trace(np.linalg.solve(a, t), axis1=-2, axis2=-1)),)


# ---- decompositions


def _lower(uplo):
    """Whether numpy.linalg's UPLO names the lower triangle ("L", the default; NumPy takes "l" too)."""
    return uplo == "L" or uplo == "l"


def _read(t, lower):
    """The symmetric matrix a decomposition reads from t when it reads t's lower (or upper) triangle only."""
    if lower:
        return np.tril(t) + _t(np.tril(t, -1))
    return np.triu(t) + _t(np.triu(t, 1))


def _onto_triangle(s, lower):
    """The adjoint of a from s, that of the symmetric matrix read from a's lower (upper) triangle (_read's
    transpose): each entry of the triangle read stands for itself and its mirror; the other triangle is not read,
    so its adjoint is zero (NumPy's value does not change with it)."""
    if lower:
        return np.tril(s + _t(s)) - s * _eye(np.shape(s)[-1], s)
    return np.triu(s + _t(s)) - s * _eye(np.shape(s)[-1], s)


def _phi(m):
    """The lower triangle of m with its diagonal halved (Murray 2016)."""
    return np.tril(m) - 0.5 * m * _eye(np.shape(m)[-1], m)


@adjoint(np.linalg.cholesky)
def cholesky(g, ans, a, upper=False):
    # Murray 2016: A_bar = L^-T Phi(L^T L_bar) L^-1 for a symmetric perturbation; NumPy reads the lower triangle
    # (the upper one with upper=True), so the other triangle's adjoint is zero (_onto_triangle)
    low = _t(ans) if upper else ans
    gl = _t(g) if upper else g
    p = _phi(_t(low) @ gl)
    s = _t(np.linalg.solve(_t(low), _t(np.linalg.solve(_t(low), p))))
    return _onto_triangle(s, not upper)


@tangent(np.linalg.cholesky)
def cholesky_tangent(t, ans, a, upper=False):
    # the symmetric matrix NumPy reads from t's lower triangle (upper with upper=True)
    low = _t(ans) if upper else ans
    sym = _read(t, not upper)
    inner = np.linalg.solve(low, _t(np.linalg.solve(low, _t(sym))))      # L^-1 dA L^-T
    dl = low @ _phi(inner)
    return _t(dl) if upper else dl


@adjoint(np.linalg.eigh)
def eigh(g, ans, a, UPLO="L"):
    # Giles 2008: A_bar = V (diag(w_bar) + F o (V^T V_bar)) V^T, F_ij = 1 / (w_j - w_i) off the diagonal, for a
    # symmetric perturbation; NumPy reads the UPLO triangle alone (_onto_triangle); repeated eigenvalues:
    # infinite, as autograd and JAX
    w, v = ans[0], ans[1]
    n = np.shape(w)[-1]
    eye = _eye(n, w)
    gap = np.expand_dims(w, -2) - np.expand_dims(w, -1) + eye
    f = (1.0 - eye) / gap
    inner = np.expand_dims(g[0] + 0.0 * w, -2) * eye + f * (_t(v) @ (g[1] + 0.0 * v))
    s = v @ inner @ _t(v)
    return _onto_triangle(s, _lower(UPLO))


@tangent(np.linalg.eigh)
def eigh_tangent(t, ans, a, UPLO="L"):
    w, v = ans[0], ans[1]
    n = np.shape(w)[-1]
    eye = _eye(n, w)
    p = _t(v) @ _read(t, _lower(UPLO)) @ v
    f = (1.0 - eye) / (np.expand_dims(w, -2) - np.expand_dims(w, -1) + eye)
    return ((np.diagonal(p, 0, -2, -1), v @ (f * p)),)


@adjoint(np.linalg.eigvalsh)
def eigvalsh(g, ans, a, UPLO="L"):
    v = np.linalg.eigh(a, UPLO)[1]
    s = (v * np.expand_dims(g, -2)) @ _t(v)
    return _onto_triangle(s, _lower(UPLO))


@tangent(np.linalg.eigvalsh)
def eigvalsh_tangent(t, ans, a, UPLO="L"):
    v = np.linalg.eigh(a, UPLO)[1]
    return np.diagonal(_t(v) @ _read(t, _lower(UPLO)) @ v, 0, -2, -1)


def _svd_f(s):
    """F_ij = 1 / (s_j^2 - s_i^2) off the diagonal, 0 on it (Townsend 2016)."""
    eye = _eye(np.shape(s)[-1], s)
    s2 = s * s
    return (1.0 - eye) / (np.expand_dims(s2, -2) - np.expand_dims(s2, -1) + eye)


@adjoint(np.linalg.svd)
def svd(g, ans, a, full_matrices=True, compute_uv=True, hermitian=False):
    # Townsend 2016, for the reduced SVD; a full SVD of a non-square matrix through its first min(m, n)
    # singular vectors only (the others are arbitrary: _leading refuses an adjoint on them). With hermitian=True
    # NumPy decomposes the symmetric matrix read from a's lower triangle (through eigh)
    if hermitian:
        a = _read(a, True)
    k = min(np.shape(a)[-2], np.shape(a)[-1])
    if compute_uv:
        u, s, vt = ans[0][..., :, :k], ans[1], ans[2][..., :k, :]
        gu, gs, gvt = _leading(g[0], k, -1) + 0.0 * u, g[1] + 0.0 * s, _leading(g[2], k, -2) + 0.0 * vt
    else:
        u, s, vt = np.linalg.svd(a, full_matrices=False, hermitian=hermitian)
        gu, gs, gvt = 0.0 * u, g, 0.0 * vt
    v, gv = _t(vt), _t(gvt)
    f = _svd_f(s)
    eye_k = _eye(np.shape(s)[-1], s)
    sm = np.expand_dims(s, -2) * eye_k
    inv_s = np.expand_dims(1.0 / s, -2)
    ju = f * (_t(u) @ gu - _t(gu) @ u)
    jv = f * (_t(v) @ gv - _t(gv) @ v)
    core = u @ (ju @ sm + np.expand_dims(gs, -2) * eye_k + sm @ jv) @ vt
    left = (gu - u @ (_t(u) @ gu)) * inv_s @ vt
    right = (u * inv_s) @ (_t(gv) - (_t(gv) @ v) @ vt)
    if hermitian:
        return _onto_triangle(core + left + right, True)
    return core + left + right


@tangent(np.linalg.svd)
def svd_tangent(t, ans, a, full_matrices=True, compute_uv=True, hermitian=False):
    if hermitian:                       # the symmetric matrix read from the lower triangles
        a = _read(a, True)
        t = _read(t, True)
    k = min(np.shape(a)[-2], np.shape(a)[-1])
    u, s, vt = np.linalg.svd(a, full_matrices=False, hermitian=hermitian)
    v = _t(vt)
    p = _t(u) @ t @ v
    ds = np.diagonal(p, 0, -2, -1)
    f = _svd_f(s)
    sm = np.expand_dims(s, -2) * _eye(np.shape(s)[-1], s)
    inv_s = np.expand_dims(1.0 / s, -2)
    du = u @ (f * (p @ sm + sm @ _t(p))) + (t @ v - u @ p) * inv_s
    dv = v @ (f * (sm @ p + _t(p) @ sm)) + (_t(t) @ u - v @ _t(p)) * inv_s
    # a full SVD of a non-square matrix: NaN for the tangents of the arbitrary extra vectors
    return ((_completed(du, ans[0], k, -1), ds, _completed(_t(dv), ans[2], k, -2)) if compute_uv else ds,)


@adjoint(np.linalg.qr)
def qr(g, ans, a, mode="reduced"):
    # A_bar = (Q_bar + Q copyltu(M)) R^-T, M = R R_bar^T - Q_bar^T Q for a tall or square A (Walter and Lehmann
    # 2018, as autograd; copyltu(M) copies the lower triangle of M to the upper); a wide A = [X Y] is
    # Q [U V] with X = Q U and V = Q^T Y (as JAX), so Y_bar = Q V_bar and Q_bar gains Y V_bar^T
    k = _qr_mode(a, mode)
    if mode == "r":
        q, r = np.linalg.qr(a)
        gq, gr = 0.0 * q, g
    else:
        q, r = ans[0], ans[1]
        gq, gr = g[0] + 0.0 * q, g[1] + 0.0 * r
    y, gu, gv = a[..., :, k:], gr[..., :, :k], gr[..., :, k:]
    gq = gq + y @ _t(gv)
    m = r[..., :, :k] @ _t(gu) - _t(gq) @ q
    b = gq + q @ (np.tril(m) + _t(np.tril(m, -1)))
    return np.concatenate([_t(np.linalg.solve(r[..., :, :k], _t(b))), q @ gv], axis=-1)


@tangent(np.linalg.qr)
def qr_tangent(t, ans, a, mode="reduced"):
    k = _qr_mode(a, mode)
    q, r = np.linalg.qr(a) if mode == "r" else (ans[0], ans[1])
    u, tx, ty = r[..., :, :k], t[..., :, :k], t[..., :, k:]
    c = _t(np.linalg.solve(_t(u), _t(_t(q) @ tx)))          # Q^T dX U^-1
    omega = np.tril(c, -1) - _t(np.tril(c, -1))
    dq = q @ omega + _t(np.linalg.solve(_t(u), _t(tx - q @ (_t(q) @ tx))))
    dr = np.concatenate([(c - omega) @ u, _t(dq) @ a[..., :, k:] + _t(q) @ ty], axis=-1)
    return (dr if mode == "r" else (dq, dr),)


@adjoint(np.linalg.pinv)
def pinv(g, ans, a, rcond=None, hermitian=False, rtol=None):
    # Golub and Pereyra 1973; valid where the rank does not change (as JAX); hermitian=True reads the lower
    # triangle alone
    p = ans
    if hermitian:
        a = _read(a, True)
    eye_m = _eye(np.shape(a)[-2], a)
    eye_n = _eye(np.shape(a)[-1], a)
    out = (-_t(p) @ g @ _t(p) + (eye_m - a @ p) @ _t(g) @ p @ _t(p)
           + _t(p) @ p @ _t(g) @ (eye_n - p @ a))
    if hermitian:
        return _onto_triangle(out, True)
    return out


@tangent(np.linalg.pinv)
def pinv_tangent(t, ans, a, rcond=None, hermitian=False, rtol=None):
    p = ans
    if hermitian:
        a = _read(a, True)
        t = _read(t, True)
    eye_m = _eye(np.shape(a)[-2], a)
    eye_n = _eye(np.shape(a)[-1], a)
    return -p @ t @ p + p @ _t(p) @ _t(t) @ (eye_m - a @ p) + (eye_n - p @ a) @ _t(t) @ _t(p) @ p


@adjoint(np.linalg.matrix_power)
def matrix_power(g, ans, a, n):
    # A^n = B^m with B = A (n >= 0) or inv(A) (n < 0), m = |n|: B_bar = sum_k (B^T)^k G (B^T)^(m-1-k)
    b = a if n >= 0 else np.linalg.inv(a)
    m = n if n >= 0 else -n
    bt = _t(b)
    gb = 0.0 * b
    for k in range(m):
        gb = gb + np.linalg.matrix_power(bt, k) @ g @ np.linalg.matrix_power(bt, m - 1 - k)
    return gb if n >= 0 else -(_t(b) @ gb @ _t(b)), None


@tangent(np.linalg.matrix_power)
def matrix_power_tangent(t, ans, a, n):
    b = a if n >= 0 else np.linalg.inv(a)
    tb = t if n >= 0 else -(b @ t @ b)
    m = n if n >= 0 else -n
    out = 0.0 * b
    for k in range(m):
        out = out + np.linalg.matrix_power(b, k) @ tb @ np.linalg.matrix_power(b, m - 1 - k)
    return out, None


@adjoint(np.linalg.lstsq)
def lstsq(g, ans, a, b, rcond=None):
    # the solution x = pinv(a) @ b (a of full rank); the residuals |a x - b|^2 (given when a is tall and of
    # full column rank) have the adjoints 2 r x^T and -2 r, since a^T r = 0 at the solution
    x, residuals = ans[0], ans[1]
    p = np.linalg.pinv(a)
    b2 = np.reshape(b, (np.shape(b)[0], -1))
    x2 = np.reshape(x, (np.shape(x)[0], -1))
    gx2 = np.reshape(g[0] + 0.0 * x, np.shape(x2))
    r = a @ x2 - b2
    gres = g[1] + 0.0 * residuals if np.size(residuals) else 0.0 * np.sum(x2, axis=0)
    ga = _pinv_adjoint(p, a, gx2 @ _t(b2)) + 2.0 * (r * gres) @ _t(x2)
    gb = _t(p) @ gx2 - 2.0 * r * gres
    return ga, np.reshape(gb, np.shape(b)), None


def _pinv_adjoint(p, a, g):
    eye_m = _eye(np.shape(a)[-2], a)
    eye_n = _eye(np.shape(a)[-1], a)
    return (-_t(p) @ g @ _t(p) + (eye_m - a @ p) @ _t(g) @ p @ _t(p)
            + _t(p) @ p @ _t(g) @ (eye_n - p @ a))


@tangent(np.linalg.lstsq)
def lstsq_tangent(t, ans, a, b, rcond=None):
    x, residuals = ans[0], ans[1]
    p = np.linalg.pinv(a)
    b2 = np.reshape(b, (np.shape(b)[0], -1))
    x2 = np.reshape(x, (np.shape(x)[0], -1))
    r = a @ x2 - b2
    eye_m = _eye(np.shape(a)[-2], a)
    eye_n = _eye(np.shape(a)[-1], a)
    t_a = -p @ t @ p + p @ _t(p) @ _t(t) @ (eye_m - a @ p) + (eye_n - p @ a) @ _t(t) @ _t(p) @ p
    t_b = np.reshape(t, np.shape(b2))
    dx_a = np.reshape(t_a @ b2, np.shape(x))
    dx_b = np.reshape(p @ t_b, np.shape(x))
    dres_a = 2.0 * np.sum(r * (t @ x2), axis=0) if np.size(residuals) else 0.0 * residuals
    dres_b = -2.0 * np.sum(r * t_b, axis=0) if np.size(residuals) else 0.0 * residuals
    return (dx_a, dres_a, 0, 0.0 * ans[3]), (dx_b, dres_b, 0, 0.0 * ans[3]), None


from s2s.rules.helpers import _completed, _leading, _qr_mode  # noqa: E402

# ---- which of these return several arrays (a tuple: each output's adjoint is g[i])

def _pair(args, kwargs):
    return ("tuple", ("array", "array"))


def _svd_results(args, kwargs):
    compute_uv = kwargs.get("compute_uv", args[2] if len(args) > 2 else True)
    return ("tuple", ("array", "array", "array")) if compute_uv else None


def _lstsq_results(args, kwargs):
    return ("tuple", ("array", "array", "scalar", "array"))


def _qr_results(args, kwargs):
    return None if kwargs.get("mode", args[1] if len(args) > 1 else "reduced") == "r" else _pair(args, kwargs)


several_results(np.linalg.eigh, np.linalg.slogdet, kind=_pair)
several_results(np.linalg.qr, kind=_qr_results)
several_results(np.linalg.svd, kind=_svd_results)
several_results(np.linalg.lstsq, kind=_lstsq_results)


# shared parts of the formulas above, inlined into the rules that call them (second order differentiates them)
for _part in (_eye, _t, _norm_direction, _lower, _read, _onto_triangle, _phi, _svd_f, _pinv_adjoint):
    template(_part)


# ---- eig (general square matrices, complex eigen-decomposition; appended with complex numbers, issue 14)
# w, v = eig(a): a v = v diag(w), columns of v of unit norm. With P = v^-1 da v and F_ij = 1 / (w_j - w_i) off the
# diagonal (0 on it): dw = diag(P), dv = v (F o P) - v Re(diag(v^H v (F o P))) (the second term keeps the
# columns' norm; their phase is whatever LAPACK picks, so only phase-invariant uses of v have a derivative: as
# autograd and JAX). The adjoint is autograd's grad_eig, the transpose of this under the complex convention
# (s2s/analysis/complex_values.py). Repeated eigenvalues: F divides by zero, giving inf/NaN adjoints for v (the vectors
# are not unique there), as autograd (which adds 1e-20) and JAX; a use of w alone stays finite. A real matrix: the
# adjoint's real part (the transform keeps it: the adjoint of a real value is real).


@adjoint(np.linalg.eig)
def eig(g, ans, a):
    w, v = ans[0], ans[1]
    n = np.shape(w)[-1]
    eye = _eye(n, w)
    vt = _t(v)
    inner = np.expand_dims(g[0] + 0.0 * w, -2) * eye
    if np.ndim(g[1]) != 0:              # the vectors are read (0.0 stands for an output nothing reads)
        f = (1.0 - eye) / (np.expand_dims(w, -2) - np.expand_dims(w, -1) + eye)
        gvt = vt @ g[1]
        inner = inner + f * gvt - f * (vt @ np.conj(v) @ (np.real(gvt) * eye))
    return np.linalg.solve(vt, inner @ vt)


@tangent(np.linalg.eig)
def eig_tangent(t, ans, a):
    w, v = ans[0], ans[1]
    n = np.shape(w)[-1]
    eye = _eye(n, w)
    f = (1.0 - eye) / (np.expand_dims(w, -2) - np.expand_dims(w, -1) + eye)
    p = np.linalg.solve(v, t @ v)
    dv = v @ (f * p)
    dv = dv - v * np.real(np.sum(np.conj(v) * dv, axis=-2, keepdims=True))
    return ((np.diagonal(p, 0, -2, -1), dv),)


several_results(np.linalg.eig, kind=_pair)


@adjoint(np.linalg.eigvals)
def eigvals(g, ans, a):                 # eig's adjoint without the vectors' part: v^-T diag(g) v^T
    v = np.linalg.eig(a)[1]
    vt = _t(v)
    return np.linalg.solve(vt, (np.expand_dims(g + 0.0 * ans, -2) * _eye(np.shape(ans)[-1], ans)) @ vt)


@tangent(np.linalg.eigvals)
def eigvals_tangent(t, ans, a):
    v = np.linalg.eig(a)[1]
    return (np.diagonal(np.linalg.solve(v, t @ v), 0, -2, -1),)


# ---------------------------------------------------------------- facts (rules/record.py): complex arguments

from s2s.rules.registry import declare  # noqa: E402

declare(np.linalg.eigvals, np.linalg.inv, np.linalg.solve, np.linalg.det, np.linalg.eig, holomorphic=True)
declare(np.linalg.eig, np.linalg.eigvals, complex_result="either")     # a real matrix's eigenvalues may be complex
declare(np.linalg.eigh, complex_result="with_real")       # real eigenvalues, eigenvectors of the matrix's kind
declare(np.linalg.eigvalsh, complex_result="real")
