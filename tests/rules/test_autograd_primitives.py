"""Functions made with autograd's `@primitive` take their `defvjp` rule in reverse mode and their `defjvp` rule in
forward mode from autograd's registry (rules/autograd_primitives.py), inlined, so that second order differentiates
the rules' own code; without a `defjvp` rule, forward mode transposes the `defvjp` rule (reverse mode over its
code). Cases in the style of a survival package (a safe exponential, the log of the upper incomplete
gamma function) and of autograd's examples (logsumexp), checked against autograd's own gradients and central
differences."""
import functools

import numpy as np
import pytest

import s2s
from conftest import central, code
from s2s.testing import check_grads

autograd = pytest.importorskip("autograd", reason="autograd is not installed (an optional dependency)")
from autograd.extend import defjvp, defvjp, defvjp_argnums, primitive  # noqa: E402
from autograd.numpy.numpy_vjps import unbroadcast_f  # noqa: E402
from scipy.special import gammaincc, gammaln  # noqa: E402

MAX = 50.0


@primitive
def safe_exp(x):
    return np.exp(np.clip(x, -np.inf, MAX))


defvjp(safe_exp, lambda ans, x: lambda g: g * ans * (x < MAX))
defjvp(safe_exp, lambda g, ans, x: g * ans * (x < MAX))


def hazard(log_lambda, t):
    return np.sum(safe_exp(log_lambda) * t ** 1.5)


@pytest.mark.parametrize("log_lambda", [0.3, np.array([0.2, -1.0, 0.7])], ids=["float", "array"])
def test_safe_exponential_both_rules(log_lambda):
    t = np.array([0.5, 1.0, 2.0]) if np.ndim(log_lambda) else 1.7
    check_grads(hazard, (log_lambda, t), wrt=0)
    expected = autograd.grad(hazard)(log_lambda, t)
    for mode in ("reverse", "forward", "auto"):
        np.testing.assert_allclose(s2s.grad(hazard, mode=mode)(log_lambda, t), expected, rtol=1e-12)
    if np.ndim(log_lambda) == 0:
        second = autograd.grad(autograd.grad(hazard))(log_lambda, t)
        assert s2s.grad(s2s.grad(hazard))(log_lambda, t) == pytest.approx(second, rel=1e-12)


def test_the_rule_is_inlined_as_code():
    text = code(s2s.source(hazard, 0.3, 1.7, mode="reverse"))
    assert "safe_exp(log_lambda)" in text            # the primitive is called as it is
    assert "dlog_lambda *= log_lambda < MAX" in text      # its defvjp rule's own code, inlined


@primitive
def gammainccln(a, x):
    return np.log(gammaincc(a, x))


defvjp(gammainccln, None,
       lambda ans, a, x: unbroadcast_f(x, lambda g: -g * np.exp(-x + (a - 1) * np.log(x) - gammaln(a) - ans)))


def survival(x, a):
    return -np.sum(gammainccln(a, x))


def test_incomplete_gamma_log_with_its_vjp_only():
    x = np.array([0.5, 1.2, 2.0])
    np.testing.assert_allclose(s2s.grad(survival)(x, 2.5), autograd.grad(survival)(x, 2.5), rtol=1e-12)
    np.testing.assert_allclose(s2s.grad(survival, mode="reverse")(x, 2.5), autograd.grad(survival)(x, 2.5))
    # defvjp's None: autograd returns 0.0, which the differences do not support; s2s refuses, naming the argument
    assert autograd.grad(survival, 1)(x, 2.5) == 0.0
    with pytest.raises(s2s.S2SError, match="does not differentiate"):
        s2s.grad(survival, wrt=1)(x, 2.5)
    # forward mode (and forward over reverse, the Hessian) transposes the vjp rule: reverse mode over its code
    check_grads(survival, (x, 2.5), wrt=0)
    np.testing.assert_allclose(s2s.grad(survival, mode="forward")(x, 2.5), autograd.grad(survival)(x, 2.5),
                               rtol=1e-12)
    # d2/dx2 of -log Q(a, x) is diagonal: the derivative of the vjp's own closed form
    H = s2s.hessian(survival)(x, 2.5)
    np.testing.assert_allclose(H - np.diag(np.diag(H)), 0.0, atol=1e-14)
    np.testing.assert_allclose(np.diag(H), autograd.elementwise_grad(autograd.grad(survival))(x, 2.5), rtol=1e-10)
    text = code(s2s.source(survival, x, 2.5, mode="reverse"))
    assert "_unbroadcast(" in text and "gammaln(a)" in text          # unbroadcast_f(x, lambda g: ...): as s2s's
    forward = code(s2s.source(survival, x, 2.5, mode="forward"))
    assert "transposed_tangent(gammainccln_vjp_1_paired" in forward       # named after the rule it transposes


@primitive
def gammainccln2(a, x):
    return np.log(gammaincc(a, x))


def _gammainccln_dx(g, ans, a, x):
    return -g * np.exp(-x + (a - 1) * np.log(x) - gammaln(a) - ans)


defvjp(gammainccln2, None, lambda ans, a, x: unbroadcast_f(x, lambda g: _gammainccln_dx(g, ans, a, x)))
defjvp(gammainccln2, None, _gammainccln_dx)


def survival2(x, a):
    return -np.sum(gammainccln2(a, x) * x)


def test_incomplete_gamma_log_with_both_rules_to_second_order():
    x = np.array([0.5, 1.2, 2.0])
    check_grads(survival2, (x, 2.5), wrt=0)
    np.testing.assert_allclose(s2s.hessian(survival2)(x, 2.5), autograd.hessian(survival2)(x, 2.5), rtol=1e-10)
    for mode in ("reverse", "forward", "auto"):
        np.testing.assert_allclose(s2s.grad(survival2, mode=mode)(x, 2.5), autograd.grad(survival2)(x, 2.5),
                                   rtol=1e-12)


@primitive
def logsumexp(x):
    m = np.max(x)
    return m + np.log(np.sum(np.exp(x - m)))


def logsumexp_vjp(ans, x):
    x_shape = x.shape
    return lambda g: np.full(x_shape, g) * np.exp(x - np.full(x_shape, ans))


defvjp(logsumexp, logsumexp_vjp)


def crf_loss(w, x):
    return logsumexp(w * x) - np.dot(w, x)


def test_logsumexp_with_its_vjp_only():
    w, x = np.array([0.1, -0.4, 0.7]), np.array([1.0, 2.0, -0.5])
    check_grads(crf_loss, (w, x), wrt=0)
    for mode in ("reverse", "forward", "auto"):
        np.testing.assert_allclose(s2s.grad(crf_loss, mode=mode)(w, x), autograd.grad(crf_loss)(w, x),
                                   rtol=1e-12)
    # the Hessian of logsumexp(w * x) in w: x_i x_j (diag(p) - p p^T), p the softmax of w * x
    p = np.exp(w * x - np.log(np.sum(np.exp(w * x))))
    np.testing.assert_allclose(s2s.hessian(crf_loss)(w, x), np.outer(x, x) * (np.diag(p) - np.outer(p, p)),
                               rtol=1e-10, atol=1e-14)


@primitive
def logsumexp2(x):
    m = np.max(x)
    return m + np.log(np.sum(np.exp(x - m)))


def logsumexp2_vjp(ans, x):
    def vjp(g):
        return g * np.exp(x - ans)
    return vjp


defvjp(logsumexp2, logsumexp2_vjp)
defjvp(logsumexp2, lambda g, ans, x: np.sum(g * np.exp(x - ans)))


def softmax_loss(w, x):
    return logsumexp2(w * x) ** 2


def test_logsumexp_with_both_rules_to_second_order():
    w, x = np.array([0.1, -0.4, 0.7]), np.array([1.0, 2.0, -0.5])
    check_grads(softmax_loss, (w, x), wrt=0)
    np.testing.assert_allclose(s2s.hessian(softmax_loss)(w, x), autograd.hessian(softmax_loss)(w, x), rtol=1e-10)


@primitive
def scale(x, k):
    return x * k


defvjp(scale, lambda ans, x, k: lambda g: g * k, lambda ans, x, k: lambda g: g * x)
defjvp(scale, "same", lambda g, ans, x, k: g * x)


def quadratic(x, k):
    return scale(x, k) ** 2


def test_linear_jvp_same_and_two_arguments():
    check_grads(quadratic, (1.5, 2.0))
    for mode in ("reverse", "forward", "auto"):
        expected = [float(g) for g in autograd.grad(quadratic, (0, 1))(1.5, 2.0)]    # (autograd: 0-d arrays)
        assert list(s2s.grad(quadratic, wrt=(0, 1), mode=mode)(1.5, 2.0)) == pytest.approx(expected)


@primitive
def cube(x):
    return x ** 3


defvjp_argnums(cube, lambda argnums, ans, args, kwargs: lambda g: (g * 3 * args[0] ** 2,))


def test_rules_set_with_defvjp_argnums_are_called_as_they_are():
    f = lambda x: cube(x) * 2.0        # noqa: E731
    assert s2s.grad(f, mode="reverse")(1.5) == pytest.approx(autograd.grad(f)(1.5)) == pytest.approx(13.5)


@primitive
def wrong_arity(x):
    return x * 2


defvjp(wrong_arity, lambda ans, x, y: lambda g: g * 2)


@primitive
def wrong_inner(x):
    return x * 2


defvjp(wrong_inner, lambda ans, x: lambda g, h: g * 2)


def uses_wrong_arity(x):
    return wrong_arity(x) * x


def uses_wrong_inner(x):
    return wrong_inner(x) * x


def test_a_rule_with_the_wrong_arity_is_one_clear_error_at_the_call():
    with pytest.raises(s2s.S2SError) as info:
        s2s.grad(uses_wrong_arity)(1.0)
    message = str(info.value)
    assert message.count("test_autograd_primitives.py:") == 2       # the call, and the rule's definition
    assert "takes (ans, x, y)" in message and "return wrong_arity(x) * x" in message
    with pytest.raises(s2s.S2SError, match="returns a function of 2 arguments") as info:
        s2s.grad(uses_wrong_inner)(1.0)
    assert "return wrong_inner(x) * x" in str(info.value)


def _times(k, g):
    return g * k


@primitive
def triple(x):
    return 3.0 * x


defvjp(triple, lambda ans, x: functools.partial(_times, 3.0))      # a function made elsewhere: not read
defjvp(triple, lambda g, ans, x: 3.0 * g)


def uses_triple(x):
    return triple(x) ** 2


def test_a_vjp_s2s_cannot_read_is_called_as_autograd_calls_it():
    for mode in ("reverse", "forward", "auto"):
        assert s2s.grad(uses_triple, mode=mode)(1.5) == pytest.approx(18 * 1.5)
    with pytest.raises(s2s.NoDerivativeRule, match="calls as it is"):
        s2s.hessian(uses_triple)(np.array([1.5]))


# A survival package's fitter as it is written for autograd (autograd.numpy): a safe exponential with a defvjp rule only (forward
# mode transposes it), and the upper incomplete gamma function made a primitive of SciPy's ufunc with rules in both
# arguments, the one in `a` a five-point difference that moves the argument to the front with *args (its own rules,
# not SciPy's: s2s has no derivative of gammaincc in a).
import autograd.numpy as anp  # noqa: E402
from autograd.scipy.special import gammaln as agammaln  # noqa: E402
from scipy.special import gammaincc as _scipy_gammaincc  # noqa: E402

LOG_MAX = 50.0


def _exp_vjp(ans, x):
    return lambda g: g * ans


@primitive
def clipped_exp(x):
    return anp.exp(anp.clip(x, -anp.inf, LOG_MAX))


defvjp(clipped_exp, _exp_vjp)


def difference_in(f, argnum=0):
    moved = lambda x, *args: f(*args[:argnum], x, *args[argnum:])     # noqa: E731

    def vjp(_, *args):
        x = args[argnum]
        args = args[:argnum] + args[argnum + 1:]
        delta = anp.maximum(x * 1e-4, 1e-7)
        return unbroadcast_f(x, lambda g: g * (-moved(x + 2 * delta, *args) + 8 * moved(x + delta, *args)
                                              - 8 * moved(x - delta, *args) + moved(x - 2 * delta, *args))
                             / (12 * delta))
    return vjp


upper_gamma = primitive(_scipy_gammaincc)
defvjp(upper_gamma, difference_in(upper_gamma),
       lambda ans, a, x: unbroadcast_f(x, lambda g: -g * anp.exp(-x + anp.log(x) * (a - 1) - agammaln(a))))


class GammaHazardFitter:
    def _cumulative_hazard(self, params, times):
        log_scale, log_shape = params
        scale, shape = clipped_exp(log_scale), clipped_exp(log_shape)
        return -anp.log(upper_gamma(shape, times / scale))

    def total_hazard(self, params, times):
        return anp.sum(self._cumulative_hazard(params, times) * anp.linspace(0.5, 1.5, len(times)))


FITTER = GammaHazardFitter()
TIMES = np.array([0.4, 1.0, 2.5, 4.0])


def test_a_fitter_with_a_vjp_only_exponential_and_a_ufunc_primitive_in_every_mode():
    params = np.array([0.3, 0.6])
    expected = autograd.grad(FITTER.total_hazard)(params, TIMES)
    for mode in ("reverse", "forward", "auto"):
        np.testing.assert_allclose(s2s.grad(FITTER.total_hazard, mode=mode)(params, TIMES), expected, rtol=1e-10)
    # the rule in a is a difference quotient: against central differences of the function, as accurate as it is
    np.testing.assert_allclose(expected, central(lambda p: FITTER.total_hazard(p, TIMES), params), rtol=1e-6)
    H = s2s.hessian(FITTER.total_hazard)(params, TIMES)
    np.testing.assert_allclose(H, autograd.hessian(FITTER.total_hazard)(params, TIMES), rtol=1e-8)
    gradient = s2s.grad(FITTER.total_hazard)
    for i, j in np.ndindex(2, 2):          # each entry against central differences of the gradient
        entry = central(lambda u: gradient(np.where(np.arange(2) == j, u, params), TIMES)[i], params[j])
        assert H[i, j] == pytest.approx(entry, rel=1e-5)


def test_a_vjp_only_primitive_along_one_float():
    f = lambda t: clipped_exp(t) * t ** 2          # noqa: E731   (mode="auto": forward mode, along one float)
    for mode in ("reverse", "forward", "auto"):
        assert s2s.grad(f, mode=mode)(0.7) == pytest.approx(np.exp(0.7) * (0.49 + 1.4), rel=1e-12)
    assert s2s.grad(s2s.grad(f))(0.7) == pytest.approx(np.exp(0.7) * (0.49 + 2.8 + 2.0), rel=1e-12)


def test_a_vjp_rule_transposed_is_refused_for_complex_values():
    f = lambda z: np.real(clipped_exp(z * (1 + 0.5j)))      # noqa: E731
    with pytest.raises(s2s.S2SError, match="transposes an autograd vjp rule .* for real values only"):
        s2s.grad(f, mode="forward")(0.3)


@primitive
def triple_vjp_only(x):
    return 3.0 * x


defvjp(triple_vjp_only, lambda ans, x: functools.partial(_times, 3.0))      # a vjp s2s does not read


def test_forward_mode_without_a_jvp_and_a_vjp_s2s_cannot_transpose_is_refused():
    f = lambda x: triple_vjp_only(x) ** 2        # noqa: E731
    assert s2s.grad(f, mode="reverse")(1.5) == pytest.approx(18 * 1.5)
    assert s2s.grad(f)(np.array([1.5]))[0] == pytest.approx(18 * 1.5)      # auto (an array): reverse mode
    with pytest.raises(s2s.NoDerivativeRule, match="no defjvp rule"):
        s2s.grad(f, mode="forward")(1.5)
    assert s2s.grad(f, mode="auto")(1.5) == pytest.approx(18 * 1.5)     # auto along a float: reverse mode, said
    assert 'mode="auto" chose reverse mode' in s2s.source(f, 1.5)
