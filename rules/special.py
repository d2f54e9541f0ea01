"""Rules for scipy.special (registered when SciPy is installed).

Most of these functions are ufuncs: elementwise, so that their rules also give forward mode. An
argument without a closed-form derivative (the order of a Bessel function, the parameters of the
incomplete gamma and beta functions) gets no adjoint: differentiating with respect to it is refused
when the derivative is made, as in autograd. Derivatives: DLMF (https://dlmf.nist.gov) 5.15, 7.2,
8.8, 8.17, 10.6, 10.29.
"""
import math

import numpy as np
import scipy.special as sp

from s2s.rules.registry import adjoint, elementwise, nondifferentiable, tangent, template
from s2s.runtime import _broadcast_back, _unbroadcast

_SQRT_PI = 1.7724538509055159
_SQRT_2PI = 2.5066282746310002

# ---- logistic


@adjoint(sp.expit)
def expit(g, ans, x):
    return g * ans * (1 - ans)


@adjoint(sp.log_expit)
def log_expit(g, ans, x):
    return g * sp.expit(-x)


@adjoint(sp.logit)
def logit(g, ans, x):
    return g / (x * (1 - x))


# ---- gamma and beta functions


@adjoint(sp.gamma)
def gamma(g, ans, x):
    return g * ans * sp.digamma(x)


@adjoint(sp.gammaln)
def gammaln(g, ans, x):
    return g * sp.digamma(x)


@adjoint(math.gamma)                    # math's gamma functions: their derivatives are SciPy's digamma
def math_gamma(g, ans, x):
    return g * ans * sp.digamma(x)


@adjoint(math.lgamma)                   # log |Gamma(x)|, also for negative x
def math_lgamma(g, ans, x):
    return g * sp.digamma(x)


elementwise(math.gamma, math.lgamma)


@adjoint(sp.loggamma)
def loggamma(g, ans, x):                # holomorphic: log Gamma's derivative is digamma (gammaln's, on x > 0)
    return g * sp.digamma(x)


@adjoint(sp.digamma)
def digamma(g, ans, x):                 # the trigamma function polygamma(1, x) = zeta(2, x)
    return g * sp.zeta(2.0, x)


@adjoint(sp.polygamma)
def polygamma(g, ans, n, x):            # polygamma(n + 1, x), written with zeta (polygamma gives float64 always)
    return None, g * ((-1) ** n * math.factorial(n + 1)) * sp.zeta(n + 2.0, x)


@adjoint(sp.zeta)
def zeta(g, ans, s, q):                 # the Hurwitz zeta function; s is not differentiated
    return None, -g * s * sp.zeta(s + 1.0, q)


@adjoint(sp.rgamma)
def rgamma(g, ans, x):                  # 1 / gamma(x)
    return -g * ans * sp.digamma(x)


@adjoint(sp.multigammaln)
def multigammaln(g, ans, a, d):         # sum over j < d of gammaln(a - j / 2), plus a constant
    return g * np.sum(sp.digamma(np.expand_dims(a, -1) - 0.5 * np.arange(d)), axis=-1), None


@adjoint(sp.beta)
def beta(g, ans, a, b):
    return g * ans * (sp.digamma(a) - sp.digamma(a + b)), g * ans * (sp.digamma(b) - sp.digamma(a + b))


@adjoint(sp.betaln)
def betaln(g, ans, a, b):
    return g * (sp.digamma(a) - sp.digamma(a + b)), g * (sp.digamma(b) - sp.digamma(a + b))


@adjoint(sp.gammainc)
def gammainc(g, ans, a, x):             # regularized lower incomplete gamma: only x has a closed form
    return None, g * np.exp(-x + (a - 1) * np.log(x) - sp.gammaln(a))


@adjoint(sp.gammaincc)
def gammaincc(g, ans, a, x):
    return None, -g * np.exp(-x + (a - 1) * np.log(x) - sp.gammaln(a))


@adjoint(sp.betainc)
def betainc(g, ans, a, b, x):           # regularized incomplete beta: only x has a closed form
    # betaln(a, b) in x's float type: a NumPy float64 number would make a float32 x's adjoint float64
    log_beta = np.asarray(sp.betaln(a, b), dtype=np.result_type(x, np.float32))
    return None, None, g * np.exp((a - 1) * np.log(x) + (b - 1) * np.log1p(-x) - log_beta)


# ---- error functions and the normal distribution


@adjoint(sp.erf)
def erf(g, ans, x):
    return g * (2 / _SQRT_PI) * np.exp(-x * x)


@adjoint(sp.erfc)
def erfc(g, ans, x):
    return -g * (2 / _SQRT_PI) * np.exp(-x * x)


@adjoint(sp.erfinv)
def erfinv(g, ans, x):
    return g * (_SQRT_PI / 2) * np.exp(ans * ans)


@adjoint(sp.erfcinv)
def erfcinv(g, ans, x):
    return -g * (_SQRT_PI / 2) * np.exp(ans * ans)


@adjoint(sp.ndtr)
def ndtr(g, ans, x):
    return g * np.exp(-0.5 * x * x) / _SQRT_2PI


@adjoint(sp.log_ndtr)
def log_ndtr(g, ans, x):
    return g * np.exp(-0.5 * x * x - ans) / _SQRT_2PI


@adjoint(sp.ndtri)
def ndtri(g, ans, x):
    return g * _SQRT_2PI * np.exp(0.5 * ans * ans)


# ---- x log y


@adjoint(sp.xlogy)
def xlogy(g, ans, x, y):
    return g * np.log(y), g * x / y


@adjoint(sp.xlog1py)
def xlog1py(g, ans, x, y):
    return g * np.log1p(y), g * x / (1 + y)


# ---- Box-Cox transforms: (x**l - 1) / l, log(x) at l = 0; boxcox1p(x, l) = boxcox(1 + x, l)


def _boxcox_lmbda(log_x, lmbda):
    """d/dl of (exp(l L) - 1) / l at L = log(x): (u exp(u) - expm1(u)) / l**2 with u = l L, and where u is small
    (cancellation) its series L**2 (1/2 + u/3 + u**2/8 + u**3/30 + u**4/144); L**2 / 2 at l = 0."""
    u = lmbda * log_x
    small = np.abs(u) < 1e-3
    safe = np.where(small, 1.0, lmbda)
    exact = (u * np.exp(u) - np.expm1(u)) / (safe * safe)
    series = log_x * log_x * (0.5 + u * (1.0 / 3.0 + u * (0.125 + u * (1.0 / 30.0 + u / 144.0))))
    return np.where(small, series, exact)


template(_boxcox_lmbda)        # (inlined into the rules: second order differentiates it)


@adjoint(sp.boxcox)
def boxcox(g, ans, x, lmbda):
    return g * x ** (lmbda - 1.0), g * _boxcox_lmbda(np.log(x), lmbda)


@adjoint(sp.boxcox1p)
def boxcox1p(g, ans, x, lmbda):
    return g * (1.0 + x) ** (lmbda - 1.0), g * _boxcox_lmbda(np.log1p(x), lmbda)


# ---- entropies and robust losses (elementwise: DLMF-free closed forms)


@adjoint(sp.entr)
def entr(g, ans, x):                    # -x log x
    return -g * (np.log(x) + 1.0)


@adjoint(sp.rel_entr)
def rel_entr(g, ans, x, y):             # x log(x / y)
    return g * (np.log(x / y) + 1.0), -g * x / y


@adjoint(sp.kl_div)
def kl_div(g, ans, x, y):               # x log(x / y) - x + y
    return g * np.log(x / y), g * (1.0 - x / y)


@adjoint(sp.huber)
def huber(g, ans, delta, r):            # r**2 / 2 where |r| <= delta, else delta (|r| - delta / 2)
    inside = np.abs(r) <= delta
    return g * np.where(inside, 0.0, np.abs(r) - delta), g * np.where(inside, r, delta * np.sign(r))


@adjoint(sp.pseudo_huber)
def pseudo_huber(g, ans, delta, r):     # delta**2 (sqrt(1 + (r / delta)**2) - 1)
    root = np.sqrt(1.0 + (r / delta) ** 2)
    return g * (2.0 * delta * (root - 1.0) - r * r / (delta * root)), g * r / root


# ---- Bessel functions (the order v is not differentiated)


@adjoint(sp.i0)
def i0(g, ans, x):
    return g * sp.i1(x)


@adjoint(sp.i1)
def i1(g, ans, x):
    return g * 0.5 * (sp.i0(x) + sp.iv(2.0, x))


@adjoint(sp.iv)
def iv(g, ans, v, x):
    return None, g * 0.5 * (sp.iv(v - 1.0, x) + sp.iv(v + 1.0, x))


@adjoint(sp.ive)
def ive(g, ans, v, x):                  # iv(v, x) * exp(-|x|)
    return None, g * (0.5 * (sp.ive(v - 1.0, x) + sp.ive(v + 1.0, x)) - np.sign(x) * ans)


@adjoint(sp.j0)
def j0(g, ans, x):
    return -g * sp.j1(x)


@adjoint(sp.j1)
def j1(g, ans, x):
    return g * 0.5 * (sp.j0(x) - sp.jv(2.0, x))


@adjoint(sp.jv)
def jv(g, ans, v, x):
    return None, g * 0.5 * (sp.jv(v - 1.0, x) - sp.jv(v + 1.0, x))


@adjoint(sp.y0)
def y0(g, ans, x):
    return -g * sp.y1(x)


@adjoint(sp.y1)
def y1(g, ans, x):
    return g * 0.5 * (sp.y0(x) - sp.yv(2.0, x))


@adjoint(sp.yn)
def yn(g, ans, n, x):
    return None, g * 0.5 * (sp.yv(n - 1.0, x) - sp.yv(n + 1.0, x))


@adjoint(sp.yv)
def yv(g, ans, v, x):
    return None, g * 0.5 * (sp.yv(v - 1.0, x) - sp.yv(v + 1.0, x))


elementwise(sp.polygamma, sp.multigammaln, sp.zeta)
nondifferentiable(sp.gammasgn)          # the sign of gamma: piecewise constant

# ---- reductions: logsumexp, softmax, log_softmax


@adjoint(sp.logsumexp)
def logsumexp(g, ans, a, axis=None, b=None, keepdims=False, return_sign=False):
    # log |sum(b * exp(a))|: d/da = sign * b * exp(a - ans), d/db = sign * exp(a - ans)
    value = ans[0] if return_sign else ans
    gv = g[0] if return_sign else g
    sign = ans[1] if return_sign else 1.0
    weight = np.exp(a - _broadcast_back(value, a, axis, keepdims)) * _broadcast_back(sign * gv, a, axis, keepdims)
    return weight * (1.0 if b is None else b), None, None if b is None else _unbroadcast(weight, b)


@tangent(sp.logsumexp)
def logsumexp_tangent(t, ans, a, axis=None, b=None, keepdims=False, return_sign=False):
    value = ans[0] if return_sign else ans
    sign = ans[1] if return_sign else 1.0
    weight = np.exp(a - _broadcast_back(value, a, axis, keepdims))
    da = sign * np.sum(weight * t * (1.0 if b is None else b), axis=axis, keepdims=keepdims)
    db = sign * np.sum(weight * t, axis=axis, keepdims=keepdims)
    return ((da, 0.0 * sign) if return_sign else da, None, None if b is None else
            ((db, 0.0 * sign) if return_sign else db))


@adjoint(sp.softmax)
def softmax(g, ans, x, axis=None):      # the Jacobian diag(s) - s s^T is symmetric: the tangent is the same
    return ans * (g - np.sum(g * ans, axis=axis, keepdims=True))


@tangent(sp.softmax)
def softmax_tangent(t, ans, x, axis=None):
    return ans * (t - np.sum(t * ans, axis=axis, keepdims=True))


@adjoint(sp.log_softmax)
def log_softmax(g, ans, x, axis=None):
    return g - np.exp(ans) * np.sum(g, axis=axis, keepdims=True)


@tangent(sp.log_softmax)
def log_softmax_tangent(t, ans, x, axis=None):
    return t - np.sum(np.exp(ans) * t, axis=axis, keepdims=True)





# ---- Wright's generalized Bessel function (SciPy >= 1.14: the Tweedie distribution's density)

if hasattr(sp, "log_wright_bessel"):
    @adjoint(sp.log_wright_bessel)
    def log_wright_bessel(g, ans, a, b, x):     # d/dx W(a, b, x) = W(a, a + b, x) (a > -1): only x has a closed form
        return None, None, g * np.exp(sp.log_wright_bessel(a, a + b, x) - ans)

    @adjoint(sp.wright_bessel)
    def wright_bessel(g, ans, a, b, x):
        return None, None, g * sp.wright_bessel(a, a + b, x)
