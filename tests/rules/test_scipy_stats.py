"""scipy.stats and scipy.special as people call them: a frozen distribution assigned to a name, keyword
arguments (loc=, scale=, b=), and a distribution without rules named by its public name."""
import numpy as np
import pytest

import s2s
from conftest import agrees, assert_gradient, numeric


MODES = ["reverse", "forward", "auto"]


try:
    import scipy.stats as st
except ImportError:          # the test below skips
    st = None


def frozen_nll(mu, sigma):
    d = st.norm(mu, sigma)
    return -np.sum(d.logpdf(np.array([0.5, 1.5, -0.2])))


@pytest.mark.parametrize("mode", MODES)
def test_a_frozen_distribution_assigned_to_a_name(mode):
    """Outside round 1 (the first outside tester's programs, written in their own style)."""
    pytest.importorskip("scipy", reason="scipy.stats is an optional dependency")
    for i in range(2):
        agrees(frozen_nll, (0.3, 1.2), i, mode=mode)


def cauchy_loglik(loc):
    import scipy.stats as st
    return -np.sum(st.cauchy.logpdf(np.array([0.1, 1.0]), loc, 1.0))


@pytest.mark.parametrize("mode", MODES)
def test_a_scipy_distribution_without_rules_is_named_by_its_public_name(mode):
    """Outside round 4, G6: messages that named s2s's internals or gave advice that cannot help."""
    pytest.importorskip("scipy.stats")
    with pytest.raises(s2s.NoDerivativeRule) as info:
        s2s.grad(cauchy_loglik, mode=mode)(0.3)
    message = str(info.value)
    assert "test_scipy_stats.py:" in message and "scipy.stats.cauchy.logpdf" in message
    assert "_distn_infrastructure" not in message and "norm" in message


try:
    import scipy.special
    import scipy.stats
except ImportError:             # scipy is optional: the tests that use it are skipped, with the reason
    scipy = None


def normal_loglik(x, mu, s):
    return np.sum(scipy.stats.norm.logpdf(x, loc=mu, scale=s))


def weighted_logsumexp(x, w):
    return scipy.special.logsumexp(x, b=w)


def test_keyword_arguments_carry_derivatives():
    """Issue 12 (classes of silently wrong gradients), keyword arguments, loops over dicts."""
    pytest.importorskip("scipy.special", reason="scipy is an optional dependency (its rules)")
    x = np.array([0.3, -1.0, 2.0])
    for wrt in (1, 2):
        assert_gradient(normal_loglik, x, 0.5, 1.5, wrt=wrt)
    w = np.array([0.5, 2.0, 1.0])
    np.testing.assert_allclose(s2s.grad(weighted_logsumexp, wrt=1)(x, w), numeric(weighted_logsumexp, (x, w), 1),
                               rtol=1e-6)
    np.testing.assert_allclose(s2s.grad(weighted_logsumexp, wrt=1, mode="forward")(x, w),
                               numeric(weighted_logsumexp, (x, w), 1), rtol=1e-6)


def _mvn_of_cov(cov):
    import scipy.stats as st
    return st.multivariate_normal.logpdf(np.array([0.3, -0.2, 0.5]), np.zeros(3), cov)


@pytest.mark.parametrize("mode", MODES)
def test_multivariate_normal_reads_the_lower_triangle_of_cov(mode):
    """SciPy reads cov's lower triangle (scipy.linalg.eigh(cov, lower=True)): on a cov that is not exactly
    symmetric the gradient is zero above the diagonal and each entry below stands for itself and its mirror
    (autograd's test case with a random cov; the rule read cov whole and gave a symmetric gradient)."""
    pytest.importorskip("scipy.stats")
    rng = np.random.default_rng(5)
    cov = np.eye(3) * 2.0 + 0.3 * rng.standard_normal((3, 3))       # not symmetric
    g = s2s.grad(_mvn_of_cov, mode=mode)(cov)
    expected = numeric(_mvn_of_cov, (cov,), 0)
    np.testing.assert_allclose(g, expected, rtol=1e-6, atol=1e-8)
    assert np.all(np.triu(g, 1) == 0.0)
