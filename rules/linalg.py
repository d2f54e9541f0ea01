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

from s2s.registry import adjoint, several_results, tangent, template
from s2s.rules.helpers import _matrix_axes, _norm_kind
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


def _phi(m):
    """The lower triangle of m with its diagonal halved (Murray 2016)."""
    return np.tril(m) - 0.5 * m * _eye(np.shape(m)[-1], m)


@adjoint(np.linalg.cholesky)
def cholesky(g, ans, a, upper=False):
    # Murray 2016: A_bar = L^-T Phi(L^T L_bar) L^-1, symmetrized (numpy reads one triangle: a symmetric
    # perturbation is the only one that keeps a valid input, as in autograd and JAX)
    low = _t(ans) if upper else ans
    gl = _t(g) if upper else g
    p = _phi(_t(low) @ gl)
    s = _t(np.linalg.solve(_t(low), _t(np.linalg.solve(_t(low), p))))
    return 0.5 * (s + _t(s))


@tangent(np.linalg.cholesky)
def cholesky_tangent(t, ans, a, upper=False):
    low = _t(ans) if upper else ans
    inner = np.linalg.solve(low, _t(np.linalg.solve(low, _t(t))))        # L^-1 dA L^-T
    dl = low @ _phi(inner)
    return _t(dl) if upper else dl


@adjoint(np.linalg.eigh)
def eigh(g, ans, a, UPLO="L"):
    # Giles 2008: A_bar = V (diag(w_bar) + F o (V^T V_bar)) V^T, F_ij = 1 / (w_j - w_i) off the diagonal;
    # symmetrized (numpy reads one triangle); repeated eigenvalues: infinite, as autograd and JAX
    w, v = ans[0], ans[1]
    n = np.shape(w)[-1]
    eye = _eye(n, w)
    gap = np.expand_dims(w, -2) - np.expand_dims(w, -1) + eye
    f = (1.0 - eye) / gap
    inner = np.expand_dims(g[0] + 0.0 * w, -2) * eye + f * (_t(v) @ (g[1] + 0.0 * v))
    s = v @ inner @ _t(v)
    return 0.5 * (s + _t(s))


@tangent(np.linalg.eigh)
def eigh_tangent(t, ans, a, UPLO="L"):
    w, v = ans[0], ans[1]
    n = np.shape(w)[-1]
    eye = _eye(n, w)
    sym = 0.5 * (t + _t(t))
    p = _t(v) @ sym @ v
    f = (1.0 - eye) / (np.expand_dims(w, -2) - np.expand_dims(w, -1) + eye)
    return ((np.diagonal(p, 0, -2, -1), v @ (f * p)),)


@adjoint(np.linalg.eigvalsh)
def eigvalsh(g, ans, a, UPLO="L"):
    v = np.linalg.eigh(a, UPLO)[1]
    s = (v * np.expand_dims(g, -2)) @ _t(v)
    return 0.5 * (s + _t(s))


@tangent(np.linalg.eigvalsh)
def eigvalsh_tangent(t, ans, a, UPLO="L"):
    v = np.linalg.eigh(a, UPLO)[1]
    return np.diagonal(_t(v) @ (0.5 * (t + _t(t))) @ v, 0, -2, -1)


def _svd_f(s):
    """F_ij = 1 / (s_j^2 - s_i^2) off the diagonal, 0 on it (Townsend 2016)."""
    eye = _eye(np.shape(s)[-1], s)
    s2 = s * s
    return (1.0 - eye) / (np.expand_dims(s2, -2) - np.expand_dims(s2, -1) + eye)


@adjoint(np.linalg.svd)
def svd(g, ans, a, full_matrices=True, compute_uv=True, hermitian=False):
    # Townsend 2016, for the reduced SVD (full_matrices=True only for square matrices, where it is the same)
    if compute_uv:
        u, s, vt = ans[0], ans[1], ans[2]
        gu, gs, gvt = g[0] + 0.0 * u, g[1] + 0.0 * s, g[2] + 0.0 * vt
    else:
        u, s, vt = np.linalg.svd(a, full_matrices=False)
        gu, gs, gvt = 0.0 * u, g, 0.0 * vt
    _square_or_reduced(a, full_matrices, compute_uv)
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
    return core + left + right


@tangent(np.linalg.svd)
def svd_tangent(t, ans, a, full_matrices=True, compute_uv=True, hermitian=False):
    _square_or_reduced(a, full_matrices, compute_uv)
    u, s, vt = np.linalg.svd(a, full_matrices=False)
    v = _t(vt)
    p = _t(u) @ t @ v
    ds = np.diagonal(p, 0, -2, -1)
    f = _svd_f(s)
    sm = np.expand_dims(s, -2) * _eye(np.shape(s)[-1], s)
    inv_s = np.expand_dims(1.0 / s, -2)
    du = u @ (f * (p @ sm + sm @ _t(p))) + (t @ v - u @ p) * inv_s
    dv = v @ (f * (sm @ p + _t(p) @ sm)) + (_t(t) @ u - v @ _t(p)) * inv_s
    return ((du, ds, _t(dv)) if compute_uv else ds,)


@adjoint(np.linalg.qr)
def qr(g, ans, a, mode="reduced"):
    # A_bar = (Q_bar + Q copyltu(M)) R^-T, M = R R_bar^T - Q_bar^T Q (reduced QR of a tall or square matrix;
    # Walter and Lehmann 2018, as autograd); copyltu(M) copies the lower triangle of M to the upper
    q, r = ans[0], ans[1]
    _tall(a, mode)
    gq, gr = g[0] + 0.0 * q, g[1] + 0.0 * r
    m = r @ _t(gr) - _t(gq) @ q
    b = gq + q @ (np.tril(m) + _t(np.tril(m, -1)))
    return _t(np.linalg.solve(r, _t(b)))


@tangent(np.linalg.qr)
def qr_tangent(t, ans, a, mode="reduced"):
    q, r = ans[0], ans[1]
    _tall(a, mode)
    c = _t(np.linalg.solve(_t(r), _t(_t(q) @ t)))          # Q^T dA R^-1
    omega = np.tril(c, -1) - _t(np.tril(c, -1))
    dq = q @ omega + _t(np.linalg.solve(_t(r), _t(t - q @ (_t(q) @ t))))
    return ((dq, (c - omega) @ r),)


@adjoint(np.linalg.pinv)
def pinv(g, ans, a, rcond=None, hermitian=False, rtol=None):
    # Golub and Pereyra 1973; valid where the rank does not change (as JAX)
    p = ans
    eye_m = _eye(np.shape(a)[-2], a)
    eye_n = _eye(np.shape(a)[-1], a)
    return (-_t(p) @ g @ _t(p) + (eye_m - a @ p) @ _t(g) @ p @ _t(p)
            + _t(p) @ p @ _t(g) @ (eye_n - p @ a))


@tangent(np.linalg.pinv)
def pinv_tangent(t, ans, a, rcond=None, hermitian=False, rtol=None):
    p = ans
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


from s2s.rules.helpers import _square_or_reduced, _tall  # noqa: E402


# ---- which of these return several arrays (a tuple: each output's adjoint is g[i])

def _pair(args, kwargs):
    return ("tuple", ("array", "array"))


def _svd_results(args, kwargs):
    compute_uv = kwargs.get("compute_uv", args[2] if len(args) > 2 else True)
    return ("tuple", ("array", "array", "array")) if compute_uv else None


def _lstsq_results(args, kwargs):
    return ("tuple", ("array", "array", "scalar", "array"))


several_results(np.linalg.eigh, np.linalg.qr, np.linalg.slogdet, kind=_pair)
several_results(np.linalg.svd, kind=_svd_results)
several_results(np.linalg.lstsq, kind=_lstsq_results)


# shared parts of the formulas above, inlined into the rules that call them (second order differentiates them)
for _part in (_eye, _t, _norm_direction, _phi, _svd_f, _pinv_adjoint):
    template(_part)
