"""Library Python is user code (issue 25, item 4): a function of an installed package without a rule is read like
the user's own; the no-op conversions have rules; a function chosen by a run-time branch is the choice of calls."""
import numpy as np
import pytest
import scipy.special as sp

import s2s

MODES = ("reverse", "forward", "auto")


def test_numpy_polynomial_series_are_read():
    from numpy.polynomial import chebyshev
    c = np.array([0.5, -1.0, 0.75, 0.3])

    def f(x):
        return np.sum(chebyshev.chebval(x, c))
    x = np.array([0.2, -0.4, 0.9])
    for mode in MODES:
        assert np.allclose(s2s.grad(f, mode=mode)(x), chebyshev.chebval(x, chebyshev.chebder(c)))
    H = s2s.hessian(f)(x)
    assert np.allclose(np.diag(H), chebyshev.chebval(x, chebyshev.chebder(c, 2)))


def test_scipy_test_functions_are_read():
    from scipy.optimize import _tstutils as t
    for mode in MODES:
        assert s2s.grad(t.aps01_f, mode=mode)(2.0) == pytest.approx(t.aps01_fp(2.0))
    assert float(s2s.hessian(t.aps01_f)(2.0)) == pytest.approx(t.aps01_fpp(2.0))


def test_a_library_function_that_cannot_be_read_says_why():
    # (scipy.optimize.rosen was the example until it became readable: see test_scipy_rosen_is_read)
    from scipy.stats import gmean
    with pytest.raises(s2s.S2SError, match="could not be read"):
        s2s.grad(lambda x: gmean(x))(np.array([0.3, 0.7, 1.1]))


def test_scipy_rosen_is_read():
    # xp_promote's *args rebound from a comprehension, its array namespace given as an argument (`is_numpy(xp)`, a
    # memoized function of it, decides its branches), a dtype= computed from the differentiated array
    from scipy.optimize import rosen, rosen_der, rosen_hess
    x = np.array([0.3, -0.7, 1.1, 0.9])
    for mode in MODES:
        assert np.allclose(s2s.grad(rosen, mode=mode, check=True)(x), rosen_der(x))
    assert np.allclose(s2s.hessian(rosen)(x), rosen_hess(x))


@pytest.mark.parametrize("conversion", [np.require, np.asanyarray, np.ascontiguousarray, np.asfortranarray,
                                        np.asarray_chkfinite])
def test_no_op_conversions(conversion):
    def f(x):
        return np.sum(conversion(x) ** 3)
    x = np.array([[0.5, -1.0], [2.0, 0.25]])
    for mode in MODES:
        assert np.allclose(s2s.grad(f, mode=mode)(x), 3 * x ** 2)


def test_array_with_ndmin_and_loggamma():
    def f(x):
        return np.sum(np.array(x, ndmin=2) * sp.loggamma(x))
    x = np.array([1.5, 2.5, 0.7])
    want = sp.loggamma(x) + x * sp.digamma(x)
    for mode in MODES:
        assert np.allclose(s2s.grad(f, mode=mode)(x), want)


def test_a_function_chosen_by_a_branch_then_called():
    def f(x):
        if np.any(np.iscomplex(x)):
            gamma_ln = sp.loggamma
        else:
            gamma_ln = sp.gammaln
        return np.sum(gamma_ln(x + 1.0))
    x = np.array([0.5, 1.5])
    for mode in MODES:
        assert np.allclose(s2s.grad(f, mode=mode)(x), sp.digamma(x + 1.0))
    assert np.allclose(np.diag(s2s.hessian(f)(x)), sp.polygamma(1, x + 1.0))


def test_a_statsmodels_likelihood_against_its_own_score():
    sm = pytest.importorskip("statsmodels.api")
    rng = np.random.default_rng(1)
    X = np.column_stack([np.ones(30), rng.normal(size=(30, 2))])
    y = (rng.random(30) < 0.5).astype(float)
    model = sm.Probit(y, X)           # norm._cdf, read from SciPy's Python
    p = np.array([0.1, -0.2, 0.3])
    for mode in MODES:
        assert np.allclose(s2s.grad(model.loglike, mode=mode)(p), model.score(p))


def _target_install(root, name, installed):
    """A package laid out as `pip install --target root` leaves it (with its `.dist-info` records when installed)."""
    package = root / name
    package.mkdir()
    (package / "__init__.py").write_text(
        "import numpy as np\n\n\n"
        "def n_columns(X):\n"
        "    return (shape := np.shape(X)) and shape[-1]      # a walrus: s2s cannot read this function\n\n\n"
        "def scaled(x, X):\n"
        "    return x / n_columns(X)\n")
    if installed:
        (root / f"{name}-1.0.dist-info").mkdir()


@pytest.mark.parametrize("installed", [True, False])
def test_a_package_installed_with_target_on_the_path_is_a_library(tmp_path, monkeypatch, installed):
    # a library's function s2s cannot read is called as it is when nothing differentiated reaches it; a package
    # installed into a directory on PYTHONPATH (`pip install --target`) is a library as one in site-packages is,
    # a folder of the user's own modules without installers' records is not
    import importlib
    name = f"targetlib_{int(installed)}"
    _target_install(tmp_path, name, installed)
    monkeypatch.syspath_prepend(str(tmp_path))
    lib = importlib.import_module(name)
    X = np.ones((2, 4))

    def f(x):
        return np.sin(lib.scaled(x, X))
    if installed:
        for mode in MODES:
            assert s2s.grad(f, mode=mode)(0.6) == pytest.approx(np.cos(0.15) / 4, rel=1e-12)
        assert s2s.hessian(f)(0.6) == pytest.approx(-np.sin(0.15) / 16, rel=1e-12)
    else:
        with pytest.raises(s2s.UnsupportedSyntax, match="walrus") as info:
            s2s.grad(f)(0.6)
        assert f"{name}/__init__.py:5:" in str(info.value)
