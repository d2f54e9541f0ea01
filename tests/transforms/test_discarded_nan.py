"""No NaN from a value the function discards (issue 27, item 8b).

`np.sum(np.tril(np.sqrt(d ** 2) - 1.0, -1))` with d zero on the diagonal: tril drops the diagonal, the function is
smooth there, central differences and forward mode are finite, and reverse mode gave NaN (0 * inf in sqrt's
adjoint; autograd and JAX give NaN too). An adjoint or tangent exactly zero contributes zero, whatever the local
derivative: at each function whose derivative can be infinite at a finite argument (sqrt, the logarithms, a power
below 1, a quotient, arcsin...), runtime._masked tests the contribution for non-finite values (a finite one is
kept as it is).
"""
import numpy as np
import pytest

import s2s

MODES = ("reverse", "forward", "auto")


def _central(f, x, eps=1e-6):
    g = np.zeros_like(x)
    for k in np.ndindex(x.shape):
        e = np.zeros_like(x)
        e[k] = eps
        g[k] = (f(x + e) - f(x - e)) / (2 * eps)
    return g


X = np.array([0.3, -1.2, 2.0, 0.7])

CASES = [
    "d = x[:, None] - x[None, :]\n    return np.sum(np.tril(np.sqrt(d ** 2) - 1.0, -1))",       # the issue's
    "d = x[:, None] - x[None, :]\n    return np.sum(np.triu(np.sqrt(d * d), 1) * W)",
    "d = x[:, None] - x[None, :]\n    return np.sum(np.where(np.eye(4) > 0, 0.0, np.abs(d) ** 0.5))",
    "d = x[:, None] - x[None, :]\n    return np.sum((np.log(np.abs(d) + np.eye(4)) * (1.0 - np.eye(4))) ** 2)",
    "d = x[:, None] - x[None, :]\n    r = np.sqrt(d ** 2 + 0.0)\n    return np.sum(r[np.triu_indices(4, 1)])",
    "d = x[:, None] - x[None, :]\n    return np.sum(np.tril(x[None, :] / d, -1))",
    "d = (x[:, None] - x[None, :]) / 4.0\n    return np.sum(np.tril(np.arcsin(1.0 - d * d), -1))",
    "y = np.concatenate([x, [0.0]])\n    return np.sum(np.sqrt(y)[:-1] * 0.0) + np.sum(np.cbrt(y ** 2)[:2])",
]


@pytest.mark.parametrize("body", CASES)
def test_a_discarded_singular_value_gives_no_nan(body, make_fn):
    f = make_fn(f"def f(x):\n    {body}\n", namespace={"W": np.arange(16.0).reshape(4, 4)})
    x = np.abs(X) if "cbrt" in body else X
    expected = _central(f, x)
    assert np.all(np.isfinite(expected))
    for mode in MODES:
        with np.errstate(divide="ignore", invalid="ignore"):
            gradient = s2s.grad(f, mode=mode)(x)
        assert np.all(np.isfinite(gradient)), mode
        assert gradient == pytest.approx(expected, rel=1e-5, abs=1e-6), mode


def test_second_order_of_the_issue_example(make_fn):
    f = make_fn("def f(x):\n    d = x[:, None] - x[None, :]\n    return np.sum(np.tril(np.sqrt(d ** 2 + 1.0) * d, -1))\n")
    v = np.array([0.5, -1.0, 0.25, 2.0])
    gradient = s2s.grad(f, mode="reverse")
    h = 1e-5
    expected = (gradient(X + h * v) - gradient(X - h * v)) / (2 * h)
    assert s2s.hvp(f)(X, v) == pytest.approx(expected, rel=1e-5, abs=1e-7)


def test_a_used_infinite_derivative_stays_infinite(make_fn):
    """Only a zero adjoint is masked: where the value is used, sqrt at 0 still has an infinite derivative."""
    f = make_fn("def f(x):\n    return np.sum(np.sqrt(x))\n")
    with np.errstate(divide="ignore"):
        for mode in MODES:
            gradient = s2s.grad(f, mode=mode)(np.array([0.0, 4.0]))
            assert gradient[0] == np.inf and gradient[1] == pytest.approx(0.25), mode


def test_a_constant_exponent_or_denominator_is_not_masked(make_fn):
    """x ** 2 and x / 2.0 have finite derivatives: their code is left as it was (no test at run time). (sqrt's
    adjoint is not the seed, a nonzero constant under which the shape pass drops the mask: it is masked.)"""
    f = make_fn("def f(x):\n    return np.sum((x ** 2) / 2.0 + np.sqrt(x * x + 1.0) ** 3)\n")
    source = str(s2s.source(f, X, mode="reverse"))
    body = source.split("def f_grad")[1]
    assert body.count("_masked(") == 1             # sqrt's alone
    assert s2s.grad(f)(X) == pytest.approx(X + 3 * X * np.sqrt(X * X + 1.0))


def where_sqrt(x):
    return np.sum(np.where(x > 0, np.sqrt(x), 0.0))


def where_power(x):
    return np.sum(np.where(x > 0, 3.0 * x ** 0.5, 0.0) + np.where(x < 1.0, np.arcsin(np.minimum(x, 1.0)), 0.0))


@pytest.mark.parametrize("f", [where_sqrt, where_power])
def test_the_branch_not_taken_raises_no_warning_where_the_function_raises_none(f):
    """Tester's C2: `np.where(x > 0, np.sqrt(x), 0.0)` at x = [0, 4] ran without a warning, and its derivative warned
    (0 / 0 in reverse mode, 1 / 0 in forward mode), or raised FloatingPointError under np.seterr(all="raise"): the
    contribution runtime._masked discards is computed under np.errstate (s2s/emit/python.py's quiet)."""
    import warnings
    x = np.array([0.0, 4.0, 0.25, 1.0])
    exact = np.array([0.0, 0.25, 1.0, 0.5]) if f is where_sqrt else np.array([1.0, 0.75, 3.0 + 1 / np.sqrt(0.9375),
                                                                              1.5])
    with np.errstate(all="ignore"):             # (x - eps < 0: the differences take sqrt of a negative number)
        expected = _central(f, x + 1e-4 * (x == 0), eps=1e-7)      # (the derivative from the right at 0 and 1)
        expected[3] = (f(x + 1e-7 * (x == 1)) - f(x)) / 1e-7 if f is where_power else expected[3]
    expected[0] = exact[0]                      # (at 0 the derivative from the right is infinite or 1: exact's)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        f(x)                                        # the function itself: no warning
        for mode in MODES:
            gradient = s2s.grad(f, mode=mode)(x)
            assert gradient == pytest.approx(expected, rel=1e-5, abs=1e-5), mode
            assert gradient == pytest.approx(exact, rel=1e-12), mode
        v = np.array([0.0, -0.5, 2.0, 0.0])        # (0 along the coordinates at a kink)
        second = s2s.hvp(f)(x, v)
        h = 1e-5
        g = s2s.grad(f, mode="reverse")
        assert np.all(np.isfinite(second))
        assert second == pytest.approx((g(x + h * v) - g(x - h * v)) / (2 * h), rel=1e-5, abs=1e-6)
    with np.errstate(all="raise"):
        for mode in MODES:
            assert np.all(np.isfinite(s2s.grad(f, mode=mode)(x))), mode
