"""s2s.export of functions that read SciPy (scipy.stats distributions, scipy.special
ufuncs): the import is written once and the exported code runs without s2s."""
import numpy as np
import pytest

import s2s


def central_difference(f, x, *rest, eps=1e-6):
    return (f(x + eps, *rest) - f(x - eps, *rest)) / (2 * eps)


def stats_loglik(mu, x):
    import scipy.stats as st
    return np.sum(st.norm.logpdf(x, mu, 1.5)) + np.sum(st.t.logpdf(x, 3.0, mu))


def test_export_of_a_function_reading_scipy_stats_distributions():
    """Outside round 3, F14: refused ("logpdf, a method that a module cannot import"), and without a location."""
    pytest.importorskip("scipy", reason="scipy.stats is SciPy's")
    x = np.array([0.1, 0.5, -0.2])
    text = s2s.export(stats_loglik, 0.3, x, mode="reverse", with_value=True)
    assert "import scipy.stats\n" in text and text.count("import scipy.stats\n") == 1
    scope = {}
    exec(compile(text, "<exported>", "exec"), scope)
    value, gradient = scope["stats_loglik_value_and_grad"](0.3, x)
    assert value == pytest.approx(stats_loglik(0.3, x), rel=1e-12)
    assert gradient == pytest.approx(central_difference(stats_loglik, 0.3, x), rel=1e-7)


def log_expit_sum(x):
    from scipy.special import expit, gammaln
    return np.sum(np.log(expit(x))) + np.sum(gammaln(x + 2.0))


def test_export_of_scipy_special_functions():
    """Outside round 4, G14: export refused expit and psi ("a ufunc that a module cannot import"): a ufunc knows no
    module."""
    pytest.importorskip("scipy", reason="scipy.special is SciPy's")
    from scipy.special import expit, psi
    x = np.array([0.3, -0.2])
    text = s2s.export(log_expit_sum, x, mode="reverse")
    assert "from scipy.special import" in text
    scope = {}
    exec(compile(text, "<exported>", "exec"), scope)
    assert np.allclose(scope["log_expit_sum_grad"](x), 1 - expit(x) + psi(x + 2.0), rtol=1e-12)
