"""The corpus of issue 25: functions and methods of installed libraries, taken unchanged, differentiated by s2s.

THE RULE (written before the corpus was first run; the table is never trimmed afterwards):

- **scipy**: every function of `scipy.optimize._tstutils` (the root-finding test functions SciPy ships) listed in
  `_ORIGINAL_TESTS_DICTS` or `_APS_TESTS_DICTS` that comes with its derivative (`fprime`), each function once (its
  first entry's `args`), at the middle of its bracket, checked against `fprime`, and to second order against
  `fprime2` where given; and `scipy.optimize.rosen` against `rosen_der` / `rosen_hess`.
- **statsmodels**: the `loglike(params)` of every model class of `statsmodels.discrete.discrete_model` and
  `statsmodels.discrete.count_model` that `statsmodels.api` exports (Logit, Probit, Poisson, NegativeBinomial with
  each of its `loglike_method`s nb2/nb1/geometric, NegativeBinomialP, GeneralizedPoisson, MNLogit,
  ZeroInflatedPoisson, ZeroInflatedNegativeBinomialP, ZeroInflatedGeneralizedPoisson), and `GLM.loglike(params)`
  for every family of `statsmodels.api.families` (Gaussian, Binomial, Poisson, Gamma, InverseGaussian,
  NegativeBinomial, Tweedie), each checked against the model's own `score`, and to second order against its own
  `hessian`, on a small simulated data set.
- **scikit-learn**: the losses its estimators minimize that are written in Python and NumPy (the public metrics,
  which validate their inputs through check_array, are not in the rule): every function of
  `sklearn.neural_network._base.LOSS_FUNCTIONS`, in the prediction; `sklearn.linear_model._huber.
  _huber_loss_and_gradient` against the gradient it returns; `sklearn.covariance.log_likelihood` in the precision;
  `sklearn.decomposition._nmf._beta_divergence` for beta 2, 1, 0 and 0.5, in W; `_joint_log_likelihood` of
  GaussianNB, MultinomialNB and ComplementNB fitted on small data, in X (summed). Central differences.
- **lifelines**: for every parametric univariate fitter that lifelines exports and that needs no other fitter
  or knots (WeibullFitter, ExponentialFitter, LogNormalFitter, LogLogisticFitter, PiecewiseExponentialFitter
  with breakpoints [1, 3], GeneralizedGammaFitter), the methods `_cumulative_hazard(params, times)`,
  `_log_hazard(params, times)` and `_negative_log_likelihood_right_censoring(params, Ts, E, entry, weights)`,
  written for autograd, in params, against autograd's own gradient and (second order) hessian of the same method.
- **numpy-ml** (0.1.2, the last release: it imports `collections.Hashable`, removed in Python 3.10, so the corpus
  aliases it to `collections.abc.Hashable` before importing; its code is read unchanged): every activation class
  of `numpy_ml.neural_nets.activations` (`fn` against its `grad`, second order against `grad2`), the losses
  SquaredError and CrossEntropy (`loss(y, y_pred)` in y_pred, central differences), and every layer of
  `numpy_ml.neural_nets.layers` whose `forward(X)` takes one 2-D batch and has a `backward(dLdy)` giving dX
  (FullyConnected with each activation class, Softmax, BatchNorm1D, LayerNorm1D), `forward` in X against `backward`.
- **numpy**: the series evaluations of `numpy.polynomial` written in Python (polyval, chebval, legval, hermval,
  hermeval, lagval), in x and in the coefficients, against the series' own `*der`.

Each case is checked in reverse mode, forward mode and mode="auto" with check=True, and the cases marked
`second` to second order (s2s.hessian) — at least a third of them.

HUNT (issues 25/26, a later stop): about 30 functions people differentiate, tried as a new user would, each with
`s2s.grad` in mode="auto", reverse and forward against central differences, outside the rule above. The cases that
work are here (the `*_hunt_cases` and the lines marked "the hunt"), checked as the others are. No gradient was
wrong. What stayed refused, and why (none of it is mathematics s2s lacks, except the C functions):
- scipy.stats' generic methods of distributions without rules (`logistic.cdf`, `lognorm.logpdf`, `expon.logsf`,
  `cauchy.logpdf`, `weibull_min.logpdf`; statsmodels' `OrderedModel(distr="logit").loglike`, which calls
  `logistic.cdf`): rv_continuous's Python joins `(x,) + args` with args s2s cannot tell is a tuple, and writes
  with `np.place`; the distributions with rules (norm, t, gamma, beta, chi2, poisson, dirichlet, multivariate
  normal) work.
- scikit-learn's public metrics (`mean_squared_error`, `mean_absolute_error`, `r2_score`, `log_loss`,
  `mean_poisson_deviance`): they now pass the fence (a generator in a pandas-only `elif`), and validate_params'
  `try` body no longer refuses method calls on paths NumPy arrays do not take; it still refuses the star-argument
  call `xp.result_type(*floating_dtypes)` (sklearn/utils/_array_api.py), which running the body twice would make
  twice. With that allowed (tried), input validation through narwhals stops at `next(...)` of a generator a library
  function s2s cannot read returns, given the differentiated array. Reading them takes 20-60 s.
- scikit-learn's `_loss` classes (`HalfSquaredError()(y, raw)`, `HalfBinomialLoss`): Cython methods called with a
  differentiated keyword argument (`raw_prediction=`) and no rule; `sklearn.utils.extmath.softmax(X, copy=True)`:
  refused as writing into its argument (`X -= ...` after `check_array(X, copy=copy)`); the Gaussian process
  kernel `RBF(1.3)(X)`: SciPy's compiled `squareform` has no rule.
- `MixedLM.loglike(params, profile_fe=False)`: `MixedLMParams.from_packed` writes attributes of an object it
  makes (`pa.fe_params = ...`, refused as an object known only when the code runs), so s2s runs it as Python does,
  and then the `except LinAlgError:` handler's counter `self._cov_sing += 1` is refused (an attribute write after a
  method s2s runs as Python runs it).
- `statsmodels.robust.norms.TukeyBiweight().rho` to second order: a second derivative through a method of an object
  known only when the code runs (first order works, and is in the corpus).
"""
from __future__ import annotations

import collections
import collections.abc
import importlib
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

LIBRARIES = ("scipy", "statsmodels", "sklearn", "lifelines", "numpy_ml", "numpy")
PACKAGES = {"scipy": "scipy", "statsmodels": "statsmodels", "sklearn": "scikit-learn", "lifelines": "lifelines",
            "numpy_ml": "numpy-ml", "numpy": "numpy"}


@dataclass
class Case:
    library: str
    name: str
    f: Callable                    # what s2s differentiates (a library function or bound method, unchanged)
    args: tuple
    wrt: int = 0
    gradient: Any = None           # the library's own gradient at args (None: central differences)
    hessian: Any = None            # its own Hessian (None: central differences of the gradient), when second
    second: bool = False
    tol: float = 1e-6
    extra: dict = field(default_factory=dict)
    hand: Callable | None = None   # the library's own gradient function, taking args (benchmarks/real_programs.py)


def import_numpy_ml() -> Any:
    if not hasattr(collections, "Hashable"):
        collections.Hashable = collections.abc.Hashable      # numpy-ml 0.1.2 on Python >= 3.10
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return importlib.import_module("numpy_ml")


# ---------------------------------------------------------------- scipy

def scipy_cases() -> list[Case]:
    import scipy.optimize as so
    from scipy.optimize import _tstutils as t
    out, seen = [], set()
    for d in list(t._ORIGINAL_TESTS_DICTS) + list(t._APS_TESTS_DICTS):
        f = d["f"]
        if f in seen or d.get("fprime") is None:
            continue
        seen.add(f)
        a, b = d["bracket"] if "bracket" in d else (d["a"], d["b"])
        x = float(a + (b - a) * 0.5)
        args = tuple(d["args"])
        fpp = d.get("fprime2")
        out.append(Case("scipy", f.__name__, f, (x,) + args, 0, float(d["fprime"](x, *args)),
                        float(fpp(x, *args)) if fpp is not None else None, fpp is not None, hand=d["fprime"]))
    x = np.array([0.3, -0.7, 1.1, 0.9])
    out.append(Case("scipy", "rosen", so.rosen, (x,), 0, so.rosen_der(x), so.rosen_hess(x), True,
                    hand=so.rosen_der))
    return out + scipy_hunt_cases()


def scipy_hunt_cases() -> list[Case]:
    """The hunt (see HUNT in the module's docstring): scipy.stats through its public API, scipy.special combos."""
    import scipy.special as sp
    import scipy.stats as st
    x = np.array([0.3, 1.2, 2.1, 0.7, 1.6])
    p = np.array([0.1, 0.2, 0.3, 0.15, 0.25])
    rows = [
        ("stats.norm.logpdf(x, loc, scale)", lambda x: np.sum(st.norm.logpdf(x, 0.5, 1.3)), x, True),
        ("stats.norm.logcdf(x)", lambda x: np.sum(st.norm.logcdf(x)), x - 1.0, False),
        ("stats.t.logpdf(x, df)", lambda x: np.sum(st.t.logpdf(x, 4.0)), x, False),
        ("stats.gamma.logpdf(x, a, scale=)", lambda x: np.sum(st.gamma.logpdf(x, 2.5, scale=1.5)), x, True),
        ("stats.beta.logpdf(x, a, b)", lambda x: np.sum(st.beta.logpdf(x, 2.0, 3.0)), x / 3.0, False),
        ("stats.norm.logpdf (in loc)", lambda m: np.sum(st.norm.logpdf(np.array([0.3, 1.2, 2.1]), m, 1.3)), 0.4,
         False),
        ("stats.poisson.logpmf (in mu)", lambda mu: np.sum(st.poisson.logpmf(np.array([0, 2, 3]), mu)), 1.7, True),
        ("stats.multivariate_normal.logpdf (in x)",
         lambda x: st.multivariate_normal.logpdf(x, np.zeros(3), np.diag([1.0, 2.0, 3.0])), x[:3], False),
        ("special.logsumexp", lambda x: sp.logsumexp(x), x, True),
        ("special.log_softmax", lambda x: np.sum(sp.log_softmax(x) * np.arange(5.0)), x, False),
        ("special.softmax", lambda x: np.sum(sp.softmax(x) * np.arange(5.0)), x, False),
        ("special.gammaln (Dirichlet normalizer)", lambda a: np.sum(sp.gammaln(a)) - sp.gammaln(np.sum(a)),
         x + 0.5, True),
        ("special.betaln", lambda a: sp.betaln(a, 2.5), 1.3, False),
        ("special.log_ndtr", lambda x: np.sum(sp.log_ndtr(x)), x - 2.0, False),
        ("special.xlog1py(x, expit(x))", lambda x: np.sum(sp.xlog1py(x, sp.expit(x))), x, False),
        ("special.rel_entr (KL divergence)", lambda q: np.sum(sp.rel_entr(q, x / x.sum())), p, True),
        ("special.pseudo_huber", lambda r: np.sum(sp.pseudo_huber(1.5, r)), x - 1.0, False),
    ]
    return [Case("scipy", name, _named(f, name), (arg,), 0, second=second) for name, f, arg, second in rows]


def _named(f: Callable, name: str) -> Callable:
    f.__qualname__ = name
    return f


# ---------------------------------------------------------------- statsmodels

def statsmodels_cases() -> list[Case]:
    import warnings

    import statsmodels.api as sm
    warnings.simplefilter("ignore")
    rng = np.random.default_rng(25)
    n = 40
    X = np.column_stack([np.ones(n), rng.normal(size=(n, 2))])
    lin = X @ np.array([0.2, 0.5, -0.4])
    binary = (rng.random(n) < 1 / (1 + np.exp(-lin))).astype(float)
    counts = rng.poisson(np.exp(lin)).astype(float)
    positive = np.exp(lin) * rng.gamma(4.0, 0.25, size=n)
    zero_counts = np.where(rng.random(n) < 0.3, 0.0, counts)
    classes = rng.integers(0, 3, size=n).astype(float)
    p3 = np.array([0.1, 0.3, -0.2])
    models = [
        ("Logit", sm.Logit(binary, X), p3),
        ("Probit", sm.Probit(binary, X), p3),
        ("Poisson", sm.Poisson(counts, X), p3),
        ("NegativeBinomial(nb2)", sm.NegativeBinomial(counts, X, loglike_method="nb2"), np.append(p3, 0.5)),
        ("NegativeBinomial(nb1)", sm.NegativeBinomial(counts, X, loglike_method="nb1"), np.append(p3, 0.5)),
        ("NegativeBinomial(geometric)", sm.NegativeBinomial(counts, X, loglike_method="geometric"), p3),
        ("NegativeBinomialP", sm.NegativeBinomialP(counts, X), np.append(p3, 0.5)),
        ("GeneralizedPoisson", sm.GeneralizedPoisson(counts, X), np.append(p3, 0.1)),
        ("MNLogit", sm.MNLogit(classes, X), np.array([0.1, 0.3, -0.2, -0.1, 0.2, 0.4])),
        ("ZeroInflatedPoisson", sm.ZeroInflatedPoisson(zero_counts, X), np.append(0.1, p3)),
        ("ZeroInflatedNegativeBinomialP", sm.ZeroInflatedNegativeBinomialP(zero_counts, X), np.r_[0.1, p3, 0.5]),
        ("ZeroInflatedGeneralizedPoisson", sm.ZeroInflatedGeneralizedPoisson(zero_counts, X), np.r_[0.1, p3, 0.1]),
    ]
    families = [("Gaussian", sm.families.Gaussian(), lin + rng.normal(size=n), p3),
                ("Binomial", sm.families.Binomial(), binary, p3),
                ("Poisson", sm.families.Poisson(), counts, p3),
                ("Gamma", sm.families.Gamma(sm.families.links.Log()), positive, p3),
                ("InverseGaussian", sm.families.InverseGaussian(sm.families.links.Log()), positive, p3 * 0.3),
                ("NegativeBinomial", sm.families.NegativeBinomial(alpha=0.7), counts, p3),
                ("Tweedie", sm.families.Tweedie(var_power=1.5), positive, p3)]
    for name, family, y, p in families:
        models.append((f"GLM({name})", sm.GLM(y, X, family=family), p))
    out = []
    for k, (name, model, params) in enumerate(models):
        params = np.asarray(params, dtype=float)
        if name.startswith("MNLogit"):        # params of shape (k_exog, k_classes - 1), flattened by score
            params = params.reshape(3, 2)
            score = model.score(params).reshape(3, 2, order="F").reshape(params.shape) if False else None
            out.append(Case("statsmodels", name + ".loglike", model.loglike, (params,), 0,
                            _mnlogit_score(model, params), None, k % 2 == 0,
                            hand=lambda p, model=model: _mnlogit_score(model, p)))
            continue
        out.append(Case("statsmodels", name + ".loglike", model.loglike, (params,), 0, model.score(params),
                        model.hessian(params), k % 2 == 0, tol=1e-5, hand=model.score))
    return out + statsmodels_hunt_cases(X, lin, counts, rng)


def statsmodels_hunt_cases(X: np.ndarray, lin: np.ndarray, counts: np.ndarray, rng: Any) -> list[Case]:
    """The hunt (HUNT): models outside the rule above, and robust norms; checked against central differences."""
    import statsmodels.api as sm
    import statsmodels.robust.norms as norms
    from statsmodels.discrete.truncated_model import HurdleCountModel, TruncatedLFPoisson
    y = lin + rng.normal(size=len(lin))
    p3 = np.array([0.1, 0.3, -0.2])
    models = [("OLS", sm.OLS(y, X), p3, True),
              ("WLS", sm.WLS(y, X, weights=np.linspace(0.5, 1.5, len(y))), p3, False),
              ("TruncatedLFPoisson", TruncatedLFPoisson(np.where(counts > 0, counts, 1.0), X), p3, True),
              ("HurdleCountModel", HurdleCountModel(counts, X), np.r_[p3, p3], False)]
    out = [Case("statsmodels", f"{name}.loglike", model.loglike, (params,), 0, second=second, tol=1e-5)
           for name, model, params, second in models]
    z = np.array([-0.9, 0.2, 1.1, -2.5, 3.4])
    for norm, second in ((norms.HuberT(), False), (norms.TukeyBiweight(), False)):
        out.append(Case("statsmodels", f"robust.norms.{type(norm).__name__}.rho",
                        _named(lambda z, norm=norm: np.sum(norm.rho(z)), f"sum of {type(norm).__name__}.rho"),
                        (z,), 0, second=second))
    return out


def _mnlogit_score(model: Any, params: np.ndarray) -> np.ndarray:
    # MNLogit.score flattens the (k_exog, J-1) gradient in Fortran order
    return model.score(params).reshape(params.shape, order="F")


# ---------------------------------------------------------------- scikit-learn

def sklearn_cases() -> list[Case]:
    from sklearn.covariance import log_likelihood
    from sklearn.decomposition._nmf import _beta_divergence
    from sklearn.linear_model._huber import _huber_loss_and_gradient
    from sklearn.naive_bayes import ComplementNB, GaussianNB, MultinomialNB
    from sklearn.neural_network._base import LOSS_FUNCTIONS
    rng = np.random.default_rng(7)
    out = []
    y2 = (rng.random((6, 1)) < 0.5).astype(float)
    ymulti = np.eye(3)[rng.integers(0, 3, 6)]
    for name, loss in LOSS_FUNCTIONS.items():
        if name == "log_loss":
            y_true, y_pred = ymulti, rng.dirichlet(np.ones(3), 6)
        elif name == "binary_log_loss":
            y_true, y_pred = y2, rng.uniform(0.1, 0.9, (6, 1))
        else:
            y_true, y_pred = rng.uniform(0.5, 2.0, (6, 2)), rng.uniform(0.5, 2.0, (6, 2))
        out.append(Case("sklearn", f"neural_network.{loss.__name__}", loss, (y_true, y_pred), 1,
                        second=len(out) % 2 == 0))
    X = rng.normal(size=(12, 3))
    y = X @ np.array([1.0, -2.0, 0.5]) + rng.standard_t(2, 12)
    w = np.array([0.9, -1.8, 0.4, 0.1, 1.2])           # coefficients, intercept, sigma
    loss, grad = _huber_loss_and_gradient(w, X, y, 1.35, 1e-3, np.ones(12))
    out.append(Case("sklearn", "linear_model._huber_loss_and_gradient",
                    lambda w_: _huber_loss_and_gradient(w_, X, y, 1.35, 1e-3, np.ones(12))[0], (w,), 0, grad,
                    hand=lambda w_: _huber_loss_and_gradient(w_, X, y, 1.35, 1e-3, np.ones(12))[1]))
    A = rng.normal(size=(4, 4))
    emp_cov = A @ A.T / 4 + np.eye(4)
    precision = np.linalg.inv(emp_cov) + 0.05 * np.eye(4)
    out.append(Case("sklearn", "covariance.log_likelihood", log_likelihood, (emp_cov, precision), 1, second=True))
    V = rng.uniform(0.5, 2.0, (5, 4))
    W = rng.uniform(0.5, 2.0, (5, 2))
    H = rng.uniform(0.5, 2.0, (2, 4))
    for beta in (2, 1, 0, 0.5):
        out.append(Case("sklearn", f"decomposition._beta_divergence(beta={beta})", _beta_divergence,
                        (V, W, H, beta), 1, second=beta == 1))
    Xc = rng.integers(0, 5, size=(20, 3)).astype(float)
    yc = rng.integers(0, 2, size=20)
    for cls in (GaussianNB, MultinomialNB, ComplementNB):
        model = cls().fit(Xc, yc)
        out.append(Case("sklearn", f"{cls.__name__}._joint_log_likelihood",
                        _summed(model._joint_log_likelihood), (Xc[:4] + 0.5,), 0, second=cls is GaussianNB))
    return out


def _summed(method: Callable) -> Callable:
    weights = np.linspace(0.5, 1.5, 8).reshape(4, 2)

    def total(X):
        return np.sum(method(X) * weights)
    total.__qualname__ = f"sum of {method.__qualname__}"
    return total


# ---------------------------------------------------------------- lifelines

def lifelines_cases() -> list[Case]:
    import autograd
    import lifelines
    times = np.array([0.5, 1.2, 2.0, 3.5, 4.1, 6.0])
    E = np.array([True, False, True, True, False, True])
    entry = np.zeros(6)
    weights = np.ones(6)
    fitters = [("WeibullFitter", lifelines.WeibullFitter(), np.array([2.0, 1.3])),
               ("ExponentialFitter", lifelines.ExponentialFitter(), np.array([2.5])),
               ("LogNormalFitter", lifelines.LogNormalFitter(), np.array([0.8, 0.9])),
               ("LogLogisticFitter", lifelines.LogLogisticFitter(), np.array([2.0, 1.5])),
               ("PiecewiseExponentialFitter", lifelines.PiecewiseExponentialFitter([1.0, 3.0]),
                np.array([2.0, 3.0, 1.5])),
               ("GeneralizedGammaFitter", lifelines.GeneralizedGammaFitter(), np.array([0.9, -0.2, 0.7]))]
    out = []
    for name, fitter, params in fitters:
        for method, args in (("_cumulative_hazard", (times,)), ("_log_hazard", (times,)),
                             ("_negative_log_likelihood_right_censoring", ((times,), E, entry, weights))):
            bound = getattr(fitter, method)
            scalar = method.startswith("_negative")
            f = bound if scalar else _weighted(bound)
            gradient = autograd.grad(f)(params, *args)
            hessian = autograd.hessian(f)(params, *args)
            out.append(Case("lifelines", f"{name}.{method}", f, (params, *args), 0, gradient, hessian,
                            method == "_cumulative_hazard", tol=1e-6, hand=autograd.grad(f),
                            extra={"same_rules": True}))
    # the hunt (HUNT): a fitter that needs knots
    spline = lifelines.SplineFitter([0.5, 2.0, 6.0])
    f = _weighted(spline._cumulative_hazard)
    params = np.array([0.1, 0.2, 0.3])
    out.append(Case("lifelines", "SplineFitter._cumulative_hazard", f, (params, times), 0,
                    autograd.grad(f)(params, times), autograd.hessian(f)(params, times), True, hand=autograd.grad(f)))
    return out


def _weighted(method: Callable) -> Callable:
    def total(params, times):
        return np.sum(method(params, times) * np.linspace(0.5, 1.5, len(times)))
    total.__qualname__ = f"sum of {method.__qualname__}"
    return total


# ---------------------------------------------------------------- numpy-ml

def numpy_ml_cases() -> list[Case]:
    import_numpy_ml()
    import inspect

    from numpy_ml.neural_nets.activations import activations as A
    from numpy_ml.neural_nets.layers import layers as L
    from numpy_ml.neural_nets.losses import losses as LS
    rng = np.random.default_rng(3)
    z = rng.normal(size=(3, 4))
    weights = rng.normal(size=(3, 4))
    out = []
    classes = [c for n, c in vars(A).items() if inspect.isclass(c) and c.__module__ == A.__name__
               and not inspect.isabstract(c)]
    for cls in classes:
        act = cls()
        total = _weighted_output(act.fn, weights, f"sum of {cls.__name__}.fn")
        grad = act.grad(z) * weights
        hess = None
        second = hasattr(act, "grad2")
        out.append(Case("numpy_ml", f"activations.{cls.__name__}.fn", total, (z,), 0, grad, hess, second,
                        extra={"grad2": (act.grad2(z) * weights) if second else None},
                        hand=lambda z_, act=act: act.grad(z_) * weights))
    y = np.eye(4)[rng.integers(0, 4, 3)]
    out.append(Case("numpy_ml", "losses.SquaredError.loss", LS.SquaredError().loss, (y, z), 1, z - y, None, True))
    probs = np.exp(z) / np.exp(z).sum(axis=1, keepdims=True)
    out.append(Case("numpy_ml", "losses.CrossEntropy.loss", LS.CrossEntropy().loss, (y, probs), 1))
    X = rng.normal(size=(5, 3))
    dLdy = rng.normal(size=(5, 4))
    layers = [(f"FullyConnected({cls.__name__})", lambda cls=cls: L.FullyConnected(4, act_fn=cls()))
              for cls in classes]
    layers += [("Softmax", lambda: L.Softmax()), ("BatchNorm1D", lambda: L.BatchNorm1D()),
               ("LayerNorm1D", lambda: L.LayerNorm1D())]
    for name, make in layers:
        np.random.seed(0)
        layer = make()
        Y = layer.forward(X)
        dY = dLdy[:, :Y.shape[1]]
        dX = layer.backward(dY)

        total = _weighted_output(layer.forward, dY, f"sum of {name}.forward")
        out.append(Case("numpy_ml", f"layers.{name}.forward", total, (X,), 0, dX, None, name == "Softmax",
                        hand=lambda X_, layer=layer, dY=dY: (layer.forward(X_), layer.backward(dY))[1]))
    # the hunt (HUNT): the VAE loss in its reconstruction, a kernel in its points
    from numpy_ml.utils.kernels import RBFKernel
    ys = np.eye(3)[[0, 2, 1, 2]]
    mean, log_var = np.zeros((4, 2)) + 0.1, np.zeros((4, 2)) - 0.2
    out.append(Case("numpy_ml", "losses.VAELoss.loss (in y_pred)",
                    _named(lambda y_pred: LS.VAELoss.loss(ys, y_pred, mean, log_var), "VAELoss.loss"),
                    (np.full((4, 3), 0.3) + 0.1 * rng.random((4, 3)),), 0, second=True))
    kernel = RBFKernel(sigma=1.3)
    out.append(Case("numpy_ml", "utils.kernels.RBFKernel (in X)",
                    _named(lambda X_: np.sum(kernel(X_) * np.linspace(0.5, 1.5, 16).reshape(4, 4)), "RBFKernel"),
                    (rng.normal(size=(4, 2)),), 0))
    return out


def _weighted_output(method: Callable, weights: np.ndarray, name: str) -> Callable:
    def total(X):
        return np.sum(method(X) * weights)
    total.__qualname__ = name
    return total


# ---------------------------------------------------------------- numpy

def numpy_cases() -> list[Case]:
    from numpy.polynomial import chebyshev, hermite, hermite_e, laguerre, legendre, polynomial
    out = []
    c = np.array([0.5, -1.0, 0.75, 0.3])
    x = np.array([0.2, -0.4, 0.9])
    for module, val, der in ((polynomial, "polyval", "polyder"), (chebyshev, "chebval", "chebder"),
                             (legendre, "legval", "legder"), (hermite, "hermval", "hermder"),
                             (hermite_e, "hermeval", "hermeder"), (laguerre, "lagval", "lagder")):
        f = getattr(module, val)
        d = getattr(module, der)(c)
        out.append(Case("numpy", f"polynomial.{val} (in x)", _summed_series(f, 0, c), (x,), 0, f(x, d),
                        None, True, hand=lambda x_, f=f, d=d: f(x_, d)))
        basis = np.array([f(x, e).sum() for e in np.eye(len(c))])
        out.append(Case("numpy", f"polynomial.{val} (in c)", _summed_series(f, 1, x), (c,), 0, basis))
    return out


def _summed_series(f: Callable, position: int, other: np.ndarray) -> Callable:
    if position == 0:
        def total(x):
            return np.sum(f(x, other))
    else:
        def total(c):
            return np.sum(f(other, c))
    total.__qualname__ = f"sum of {f.__name__}"
    return total


BUILDERS = {"scipy": scipy_cases, "statsmodels": statsmodels_cases, "sklearn": sklearn_cases,
            "lifelines": lifelines_cases, "numpy_ml": numpy_ml_cases, "numpy": numpy_cases}
