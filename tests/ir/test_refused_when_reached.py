"""A construct s2s refuses, on a side of an `if` decided when the code runs, is refused only if that side runs
(s2s/ir/lower.py's `branch`): library code as shipped has branches for inputs the caller never gives (scikit-learn's
sparse matrices, its parameter validation's rare constraints). The side raises the refusal, with its place, when
the derivative takes it; the other paths are differentiated exactly. Written in the style of scikit-learn's
helpers; checked against closed forms and central differences in every mode."""
import functools
import inspect

import numpy as np
import pytest
import scipy.sparse as sp

import s2s
from conftest import central

MODES = ("reverse", "forward", "auto")


def _align_api_if_sparse(X):
    if not sp.issparse(X):
        return X
    if sp.isspmatrix(X):            # an spmatrix becomes the sparray of its format: a function named when it runs
        return getattr(sp, X.format + "_array")(X)
    return X


def frobenius(W, H, V):
    WH = _align_api_if_sparse(W @ H)
    return 0.5 * np.sum((V - WH) ** 2)


def test_a_branch_for_sparse_inputs_is_not_refused_for_dense_ones():
    rng = np.random.default_rng(3)
    W, H, V = rng.uniform(0.5, 2.0, (4, 2)), rng.uniform(0.5, 2.0, (2, 3)), rng.uniform(0.5, 2.0, (4, 3))
    expected = (W @ H - V) @ H.T            # the closed form
    for mode in MODES:
        np.testing.assert_allclose(s2s.grad(frobenius, mode=mode)(W, H, V), expected, rtol=1e-12)
    np.testing.assert_allclose(central(lambda w: frobenius(w, H, V), W), expected, rtol=1e-6)
    H2 = s2s.hessian(frobenius)(W, H, V)           # d2/dW2: the identity over rows times H H^T
    np.testing.assert_allclose(H2, np.einsum("ik,jl->ijkl", np.eye(4), H @ H.T), atol=1e-12)


def piecewise(x):
    if x > 10.0:
        kind = "sinh" if x > 20.0 else "cosh"
        return getattr(np, kind)(x)             # named only when it runs: refused if this side runs
    return np.sin(x) * x


def test_the_refused_side_raises_its_refusal_when_it_runs():
    for mode in MODES:
        assert s2s.grad(piecewise, mode=mode)(0.5) == pytest.approx(np.cos(0.5) * 0.5 + np.sin(0.5), rel=1e-12)
    assert s2s.grad(s2s.grad(piecewise))(0.5) == pytest.approx(2 * np.cos(0.5) - 0.5 * np.sin(0.5), rel=1e-12)
    for mode in MODES:
        with pytest.raises(s2s.UnsupportedSyntax, match="can name statically") as info:
            s2s.grad(piecewise, mode=mode)(12.0)
        assert "test_refused_when_reached.py:" in str(info.value) and "getattr(np, kind)(x)" in str(info.value)


# a decorator that validates its function's parameters before calling it, as scikit-learn's validate_params does
def validate_params(constraints):
    def decorator(func):
        @functools.wraps(func)
        def wrapper(*args, **kwargs):
            signature = inspect.signature(func)
            params = signature.bind(*args, **kwargs)
            params.apply_defaults()
            to_ignore = [p.name for p in signature.parameters.values()
                         if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]
            checked = {k: v for k, v in params.arguments.items() if k not in to_ignore}
            for name, value in checked.items():
                if name in constraints and not isinstance(value, constraints[name]):
                    raise TypeError(f"The {name!r} parameter of {func.__qualname__} must be {constraints[name]}")
            return func(*args, **kwargs)
        return wrapper
    return decorator


@validate_params({"emp_cov": np.ndarray, "precision": np.ndarray})
def log_likelihood(emp_cov, precision):
    p = precision.shape[0]
    sign, logdet = np.linalg.slogdet(precision)
    return (-np.sum(emp_cov * precision) + logdet - p * np.log(2 * np.pi)) / 2.0


def test_a_validating_wrapper_reads_its_arguments_and_differentiates_its_function():
    rng = np.random.default_rng(7)
    A = rng.normal(size=(3, 3))
    emp_cov = A @ A.T / 3 + np.eye(3)
    precision = np.linalg.inv(emp_cov) + 0.05 * np.eye(3)
    expected = (np.linalg.inv(precision).T - emp_cov) / 2.0        # the closed form
    for mode in MODES:
        np.testing.assert_allclose(s2s.grad(log_likelihood, wrt=1, mode=mode)(emp_cov, precision), expected,
                                   rtol=1e-10)
    np.testing.assert_allclose(central(lambda P: log_likelihood(emp_cov, P), precision), expected, rtol=1e-6)
    with pytest.raises(TypeError, match="must be"):          # the validation runs, as in Python
        s2s.grad(log_likelihood, wrt=1)(emp_cov.tolist(), precision)


def shuffled(w, rng):
    v = w * 2.0
    rng.shuffle(v)          # writes into v, which carries a derivative: s2s would not follow it
    return np.sum(v * np.arange(3.0))


def test_a_method_that_writes_into_a_differentiated_array_is_refused_when_it_does():
    with pytest.raises(s2s.UnsupportedSyntax, match="wrote into an array it was given") as info:
        s2s.grad(shuffled)(np.array([1.0, 2.0, 3.0]), np.random.default_rng(0))
    assert "rng.shuffle(v)" in str(info.value) and "rng.permutation(v)" in str(info.value)


# scikit-learn's validate_params calls the function in a `try` body; the helpers it reaches call methods of values
# known only when the code runs (check_array formats the array into a message) on paths the arguments at hand do
# not take
def _check_finite(w, kind):
    if kind > 1.5:
        raise ValueError("Complex data not supported\n{}\n".format(w))
    if kind > 0.5:
        note = "checked {}".format(w)           # a method of a string given an array: made as written, and again
        w = w * (len(note) > 0)
    return w


def validated_loss(w, kind):
    try:
        v = _check_finite(w, kind)
        loss = np.sum(v ** 2)
    except TypeError as e:
        raise ValueError(str(e))
    return loss


def test_a_method_call_on_a_path_the_try_body_does_not_take_is_not_refused():
    w = np.array([0.5, -1.5, 2.0])
    for mode in MODES:
        np.testing.assert_allclose(s2s.grad(validated_loss, mode=mode)(w, 0.0), 2 * w, rtol=1e-12)
    np.testing.assert_allclose(central(lambda v: validated_loss(v, 0.0), w), 2 * w, rtol=1e-6)
    np.testing.assert_allclose(s2s.hessian(validated_loss)(w, 0.0), 2 * np.eye(3), atol=1e-12)
    for mode in MODES:
        with pytest.raises(ValueError, match="Complex data not supported"):        # raised as in Python
            s2s.grad(validated_loss, mode=mode)(w, 2.0)
        # the path that calls it: the body as written made the call, the derivative's body would make it again
        with pytest.raises(s2s.UnsupportedSyntax, match="would do that twice") as info:
            s2s.grad(validated_loss, mode=mode)(w, 1.0)
        assert "test_refused_when_reached.py:" in str(info.value) and '"checked {}".format(w)' in str(info.value)


def check_consistent_length(*lengths):
    if len(set(lengths)) > 1:
        raise ValueError("Found input variables with inconsistent numbers of samples: %r" % [int(n) for n in lengths])


def mean_error(y_true, y_pred, n_true, n_pred):
    check_consistent_length(n_true, n_pred)
    if n_true > 1e6:
        y_pred = y_pred - ((1.0, 2.0) - n_true)      # Python raises TypeError: refused if this side runs
    return np.mean((y_true - y_pred) ** 2)


def test_an_operation_a_pass_refuses_on_a_side_that_does_not_run():
    y, p = np.array([1.0, 2.0]), np.array([1.5, 1.0])
    for mode in MODES:
        np.testing.assert_allclose(s2s.grad(mean_error, wrt=1, mode=mode)(y, p, 2.0, 2.0), p - y, rtol=1e-12)
    with pytest.raises(ValueError, match=r"inconsistent numbers of samples: \[2, 3\]"):     # the message, formatted
        s2s.grad(mean_error, wrt=1)(y, p, 2.0, 3.0)
    for mode in MODES:
        with pytest.raises(s2s.UnsupportedSyntax, match="on a tuple or list") as info:
            s2s.grad(mean_error, wrt=1, mode=mode)(y, p, 2e6, 2e6)
        assert "y_pred - ((1.0, 2.0) - n_true)" in str(info.value)
