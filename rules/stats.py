"""Rules for scipy.stats distributions (registered when SciPy is installed).

A rule is keyed by the bound method of SciPy's distribution object (`scipy.stats.norm.logpdf` is the
method `logpdf` of the instance `scipy.stats.norm`; two lookups of it are equal and hash alike), and
receives the arguments as SciPy takes them: `norm.logpdf(x, loc=0, scale=1)`, `t.logpdf(x, df, loc,
scale)`, `gamma.logpdf(x, a, loc, scale)`. A shape parameter without a closed-form derivative (df of
t.cdf, the shapes of beta.cdf and gamma.cdf, the counts of poisson) gets no adjoint: differentiating
with respect to it is refused when the derivative is made.
"""
import numpy as np
import scipy.special as sp
import scipy.stats as st

from s2s.rules.registry import adjoint, elementwise, tangent, template

_LOG_SQRT_2PI = 0.9189385332046727

# ---- normal: z = (x - loc) / scale


@adjoint(st.norm.logpdf)
def norm_logpdf(g, ans, x, loc=0.0, scale=1.0):
    z = (x - loc) / scale
    return -g * z / scale, g * z / scale, g * (z * z - 1.0) / scale


@adjoint(st.norm.pdf)
def norm_pdf(g, ans, x, loc=0.0, scale=1.0):
    z = (x - loc) / scale
    return -g * ans * z / scale, g * ans * z / scale, g * ans * (z * z - 1.0) / scale


@adjoint(st.norm.cdf)
def norm_cdf(g, ans, x, loc=0.0, scale=1.0):
    z = (x - loc) / scale
    density = np.exp(-0.5 * z * z - _LOG_SQRT_2PI) / scale
    return g * density, -g * density, -g * density * z


@adjoint(st.norm.logcdf)
def norm_logcdf(g, ans, x, loc=0.0, scale=1.0):
    z = (x - loc) / scale
    ratio = np.exp(-0.5 * z * z - _LOG_SQRT_2PI - ans) / scale
    return g * ratio, -g * ratio, -g * ratio * z


@adjoint(st.norm.sf)
def norm_sf(g, ans, x, loc=0.0, scale=1.0):
    z = (x - loc) / scale
    density = np.exp(-0.5 * z * z - _LOG_SQRT_2PI) / scale
    return -g * density, g * density, g * density * z


@adjoint(st.norm.logsf)
def norm_logsf(g, ans, x, loc=0.0, scale=1.0):
    z = (x - loc) / scale
    ratio = np.exp(-0.5 * z * z - _LOG_SQRT_2PI - ans) / scale
    return -g * ratio, g * ratio, g * ratio * z


# ---- Student's t


def _t_logpdf_partials(x, df, loc, scale):
    """d logpdf / d(x, df, scale) for Student's t."""
    z = (x - loc) / scale
    q = df + z * z
    dx = -(df + 1.0) * z / (q * scale)
    ddf = 0.5 * (sp.digamma(0.5 * (df + 1.0)) - sp.digamma(0.5 * df) - 1.0 / df - np.log1p(z * z / df)
                 + (df + 1.0) * z * z / (df * q))
    dscale = ((df + 1.0) * z * z / q - 1.0) / scale
    return dx, ddf, dscale


@adjoint(st.t.logpdf)
def t_logpdf(g, ans, x, df, loc=0.0, scale=1.0):
    dx, ddf, dscale = _t_logpdf_partials(x, df, loc, scale)
    return g * dx, g * ddf, -g * dx, g * dscale


@adjoint(st.t.pdf)
def t_pdf(g, ans, x, df, loc=0.0, scale=1.0):
    dx, ddf, dscale = _t_logpdf_partials(x, df, loc, scale)
    return g * ans * dx, g * ans * ddf, -g * ans * dx, g * ans * dscale


@adjoint(st.t.cdf)
def t_cdf(g, ans, x, df, loc=0.0, scale=1.0):   # df: no closed form
    density = st.t.pdf(x, df, loc, scale)
    return g * density, None, -g * density, -g * density * (x - loc) / scale


@adjoint(st.t.logcdf)
def t_logcdf(g, ans, x, df, loc=0.0, scale=1.0):
    ratio = np.exp(st.t.logpdf(x, df, loc, scale) - ans)
    return g * ratio, None, -g * ratio, -g * ratio * (x - loc) / scale


# ---- beta, gamma, chi2: y = (x - loc) / scale


def _beta_partials(x, a, b, loc, scale):
    y = (x - loc) / scale
    dy = (a - 1.0) / y - (b - 1.0) / (1.0 - y)
    da = np.log(y) - sp.digamma(a) + sp.digamma(a + b)
    db = np.log1p(-y) - sp.digamma(b) + sp.digamma(a + b)
    return dy / scale, da, db, -(dy * y + 1.0) / scale


@adjoint(st.beta.logpdf)
def beta_logpdf(g, ans, x, a, b, loc=0.0, scale=1.0):
    dx, da, db, dscale = _beta_partials(x, a, b, loc, scale)
    return g * dx, g * da, g * db, -g * dx, g * dscale


@adjoint(st.beta.pdf)
def beta_pdf(g, ans, x, a, b, loc=0.0, scale=1.0):
    dx, da, db, dscale = _beta_partials(x, a, b, loc, scale)
    return g * ans * dx, g * ans * da, g * ans * db, -g * ans * dx, g * ans * dscale


@adjoint(st.beta.cdf)
def beta_cdf(g, ans, x, a, b, loc=0.0, scale=1.0):   # a, b: no closed form
    density = st.beta.pdf(x, a, b, loc, scale)
    return g * density, None, None, -g * density, -g * density * (x - loc) / scale


def _gamma_partials(x, a, loc, scale):
    y = (x - loc) / scale
    return ((a - 1.0) / y - 1.0) / scale, np.log(y) - sp.digamma(a), (y - a) / scale


@adjoint(st.gamma.logpdf)
def gamma_logpdf(g, ans, x, a, loc=0.0, scale=1.0):
    dx, da, dscale = _gamma_partials(x, a, loc, scale)
    return g * dx, g * da, -g * dx, g * dscale


@adjoint(st.gamma.pdf)
def gamma_pdf(g, ans, x, a, loc=0.0, scale=1.0):
    dx, da, dscale = _gamma_partials(x, a, loc, scale)
    return g * ans * dx, g * ans * da, -g * ans * dx, g * ans * dscale


@adjoint(st.gamma.cdf)
def gamma_cdf(g, ans, x, a, loc=0.0, scale=1.0):     # a: no closed form
    density = st.gamma.pdf(x, a, loc, scale)
    return g * density, None, -g * density, -g * density * (x - loc) / scale


def _chi2_partials(x, df, loc, scale):
    y = (x - loc) / scale
    k = 0.5 * df
    return ((k - 1.0) / y - 0.5) / scale, 0.5 * (np.log(y) - 0.6931471805599453 - sp.digamma(k)), (0.5 * y - k) / scale


@adjoint(st.chi2.logpdf)
def chi2_logpdf(g, ans, x, df, loc=0.0, scale=1.0):
    dx, ddf, dscale = _chi2_partials(x, df, loc, scale)
    return g * dx, g * ddf, -g * dx, g * dscale


@adjoint(st.chi2.pdf)
def chi2_pdf(g, ans, x, df, loc=0.0, scale=1.0):
    dx, ddf, dscale = _chi2_partials(x, df, loc, scale)
    return g * ans * dx, g * ans * ddf, -g * ans * dx, g * ans * dscale


@adjoint(st.chi2.cdf)
def chi2_cdf(g, ans, x, df, loc=0.0, scale=1.0):     # df: no closed form
    density = st.chi2.pdf(x, df, loc, scale)
    return g * density, None, -g * density, -g * density * (x - loc) / scale


# ---- exponential: y = (x - loc) / scale, density exp(-y) / scale on y >= 0 (0 outside: a constant there)


def _expon_partials(x, loc, scale):         # d logpdf / d(x, scale) inside the support (0 outside)
    y = (x - loc) / scale
    inside = y >= 0
    return np.where(inside, -1.0 / scale, 0.0), np.where(inside, (y - 1.0) / scale, 0.0)


@adjoint(st.expon.logpdf)
def expon_logpdf(g, ans, x, loc=0.0, scale=1.0):
    dx, dscale = _expon_partials(x, loc, scale)
    return g * dx, -g * dx, g * dscale


@adjoint(st.expon.pdf)
def expon_pdf(g, ans, x, loc=0.0, scale=1.0):
    dx, dscale = _expon_partials(x, loc, scale)
    return g * ans * dx, -g * ans * dx, g * ans * dscale


@adjoint(st.expon.cdf)
def expon_cdf(g, ans, x, loc=0.0, scale=1.0):       # 1 - exp(-y): its derivative in x is the density
    density = st.expon.pdf(x, loc, scale)
    return g * density, -g * density, -g * density * (x - loc) / scale


@adjoint(st.expon.sf)
def expon_sf(g, ans, x, loc=0.0, scale=1.0):
    density = st.expon.pdf(x, loc, scale)
    return -g * density, g * density, g * density * (x - loc) / scale


# ---- Poisson (the counts k are not differentiated)


@adjoint(st.poisson.logpmf)
def poisson_logpmf(g, ans, k, mu, loc=0):
    return None, g * (k / mu - 1.0), None


@adjoint(st.poisson.pmf)
def poisson_pmf(g, ans, k, mu, loc=0):
    return None, g * ans * (k / mu - 1.0), None


@adjoint(st.poisson.cdf)
def poisson_cdf(g, ans, k, mu, loc=0):      # gammaincc(floor(k) + 1, mu): d/dmu = -pmf(floor(k), mu)
    return None, -g * st.poisson.pmf(np.floor(k - loc), mu), None


elementwise(st.norm.logpdf, st.norm.pdf, st.norm.cdf, st.norm.logcdf, st.norm.sf, st.norm.logsf,
            st.t.logpdf, st.t.pdf, st.t.cdf, st.t.logcdf, st.beta.logpdf, st.beta.pdf, st.beta.cdf,
            st.gamma.logpdf, st.gamma.pdf, st.gamma.cdf, st.chi2.logpdf, st.chi2.pdf, st.chi2.cdf,
            st.poisson.logpmf, st.poisson.pmf, st.poisson.cdf, st.expon.logpdf, st.expon.pdf, st.expon.cdf,
            st.expon.sf)

# ---- Dirichlet: x has the categories on its first axis (K, or K by N), alpha is (K,)


@adjoint(st.dirichlet.logpdf)
def dirichlet_logpdf(g, ans, x, alpha):
    ga = g * np.ones_like(ans)
    scale = np.expand_dims(ga, 0) if np.ndim(x) == 2 else ga
    alpha_x = np.expand_dims(alpha, -1) if np.ndim(x) == 2 else alpha
    dx = scale * (alpha_x - 1.0) / x
    dalpha = np.sum(scale * (np.log(x) - sp.digamma(alpha_x) + sp.digamma(np.sum(alpha))), axis=-1) \
        if np.ndim(x) == 2 else ga * (np.log(x) - sp.digamma(alpha) + sp.digamma(np.sum(alpha)))
    return dx, dalpha


@adjoint(st.dirichlet.pdf)
def dirichlet_pdf(g, ans, x, alpha):
    ga = g * ans
    scale = np.expand_dims(ga, 0) if np.ndim(x) == 2 else ga
    alpha_x = np.expand_dims(alpha, -1) if np.ndim(x) == 2 else alpha
    dx = scale * (alpha_x - 1.0) / x
    dalpha = np.sum(scale * (np.log(x) - sp.digamma(alpha_x) + sp.digamma(np.sum(alpha))), axis=-1) \
        if np.ndim(x) == 2 else ga * (np.log(x) - sp.digamma(alpha) + sp.digamma(np.sum(alpha)))
    return dx, dalpha


# ---- multivariate normal: x is (k,) or (N, k); SciPy reads cov's lower triangle only (scipy.linalg.eigh(cov,
# lower=True) in its _PSD), as the symmetric matrix _mvn_read gives: the upper triangle's adjoint is zero, and each
# entry below the diagonal stands for itself and its mirror (_mvn_onto_lower)


def _mvn_read(cov):
    """The symmetric matrix SciPy reads from cov: its lower triangle, mirrored."""
    return np.tril(cov) + np.swapaxes(np.tril(cov, -1), -1, -2)


def _mvn_onto_lower(s):
    """The adjoint of cov from s, the (symmetric) adjoint of _mvn_read(cov)."""
    return np.tril(s + np.swapaxes(s, -1, -2)) - s * np.eye(np.shape(s)[-1])


def _mvn_partials(g, x, mean, cov):
    """g times d logpdf / d(x, mean, cov), with g of logpdf's shape (a number, or N of them)."""
    precision = np.linalg.inv(_mvn_read(cov))
    r = x - mean
    pr = r @ precision                               # (k,) or (N, k)
    gx = -np.expand_dims(g, -1) * pr if np.ndim(x) == 2 else -g * pr
    outer = np.einsum("n,ni,nj->ij", g, pr, pr) if np.ndim(x) == 2 else g * (np.expand_dims(pr, -1) * np.expand_dims(pr, -2))
    gcov = _mvn_onto_lower(0.5 * (outer - np.sum(g) * precision))
    return gx, gcov


@adjoint(st.multivariate_normal.logpdf)
def mvn_logpdf(g, ans, x, mean=None, cov=1, allow_singular=False):
    gx, gcov = _mvn_partials(g * np.ones_like(ans), x, mean, cov)
    return gx, _unbroadcast(-gx, mean), gcov


@adjoint(st.multivariate_normal.pdf)
def mvn_pdf(g, ans, x, mean=None, cov=1, allow_singular=False):
    gx, gcov = _mvn_partials(g * ans, x, mean, cov)
    return gx, _unbroadcast(-gx, mean), gcov


@adjoint(st.multivariate_normal.entropy)
def mvn_entropy(g, ans, mean=None, cov=1):   # 0.5 log det(2 pi e cov): the mean does not enter
    return 0.0 * mean, _mvn_onto_lower(0.5 * g * np.linalg.inv(_mvn_read(cov)))


# ---- forward mode for the functions that are not elementwise: the adjoint rule contracted with t


def _dirichlet_tangents(t, x, alpha):
    """The tangents of dirichlet.logpdf along t, for x and for alpha."""
    alpha_x = np.expand_dims(alpha, -1) if np.ndim(x) == 2 else alpha
    partial = np.log(x) - sp.digamma(alpha_x) + sp.digamma(np.sum(alpha))
    lead = np.expand_dims(t, -1) if np.ndim(x) == 2 else t
    return np.sum(t * (alpha_x - 1.0) / x, axis=0), np.sum(lead * partial, axis=0)


@tangent(st.dirichlet.logpdf)
def dirichlet_logpdf_tangent(t, ans, x, alpha):
    return _dirichlet_tangents(t, x, alpha)


@tangent(st.dirichlet.pdf)
def dirichlet_pdf_tangent(t, ans, x, alpha):
    tx, talpha = _dirichlet_tangents(t, x, alpha)
    return ans * tx, ans * talpha


def _mvn_tangents(t, x, mean, cov):
    """The tangents of multivariate_normal.logpdf along t, for x, mean and cov."""
    precision = np.linalg.inv(_mvn_read(cov))
    pr = (x - mean) @ precision
    tx = -np.sum(pr * t, axis=-1)
    ts = _mvn_read(t) if np.shape(t) == np.shape(cov) else t     # (the tangent of cov as SciPy reads it)
    tcov = 0.5 * (np.sum((pr @ ts) * pr, axis=-1) - np.trace(precision @ ts))
    return tx, -tx, tcov


@tangent(st.multivariate_normal.logpdf)
def mvn_logpdf_tangent(t, ans, x, mean=None, cov=1, allow_singular=False):
    return _mvn_tangents(t, x, mean, cov)


@tangent(st.multivariate_normal.pdf)
def mvn_pdf_tangent(t, ans, x, mean=None, cov=1, allow_singular=False):
    tx, tmean, tcov = _mvn_tangents(t, x, mean, cov)
    return ans * tx, ans * tmean, ans * tcov


@tangent(st.multivariate_normal.entropy)
def mvn_entropy_tangent(t, ans, mean=None, cov=1):
    return 0.0 * ans, 0.5 * np.trace(np.linalg.solve(_mvn_read(cov), _mvn_read(t)))


from s2s.runtime import _unbroadcast  # noqa: E402

# shared parts of the formulas above, inlined into the rules that call them (second order differentiates them)
for _part in (_t_logpdf_partials, _beta_partials, _gamma_partials, _chi2_partials, _expon_partials, _mvn_partials,
              _dirichlet_tangents, _mvn_tangents,
              _mvn_read, _mvn_onto_lower):
    template(_part)
