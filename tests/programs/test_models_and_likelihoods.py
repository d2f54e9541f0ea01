"""Five programs written the way other people write them, checked at the end of the session (issue 12's lesson:
test in the style of other people's code): a model class with forward(), a loss as a lambda, a comprehension over
layers, a SciPy log-likelihood, an element loop writing out[i]. Against central differences, both modes, and the
Hessian against differences of the gradient."""
import math

import numpy as np
import pytest

import s2s

try:
    import scipy.stats
except ImportError:         # scipy is optional: its test is skipped, with the reason
    scipy = None

rng = np.random.RandomState(0)


class Dense:
    def __init__(self, n_in, n_out):
        self.W = rng.randn(n_in, n_out) * 0.3
        self.b = np.zeros(n_out)

    def forward(self, x):
        return np.tanh(x @ self.W + self.b)


class Model:
    def __init__(self):
        self.layers = [Dense(3, 4), Dense(4, 2)]

    def forward(self, x):
        for layer in self.layers:
            x = layer.forward(x)
        return x

    def loss(self, x, y):
        return np.mean((self.forward(x) - y) ** 2)


MODEL = Model()
X, Y = rng.randn(5, 3), rng.randn(5, 2)
DATA = rng.randn(20) * 1.3 + 0.4


def model_loss(x):
    return MODEL.loss(x, Y)


least_squares = lambda w: np.sum((X @ w - Y[:, 0]) ** 2) / len(X)       # noqa: E731


def over_layers(scale):
    hs = [np.sum(layer.forward(X * scale) ** 2) for layer in MODEL.layers[:1]]
    return sum(hs) + sum(np.sum(layer.W) * scale for layer in MODEL.layers)


def negative_loglik(mu, log_sigma):
    return -np.sum(scipy.stats.norm.logpdf(DATA, mu, np.exp(log_sigma)))


def recurrence(x, a):
    out = np.zeros_like(x)
    out[0] = x[0]
    for i in range(1, len(x)):
        out[i] = a * out[i - 1] + math.sin(x[i])
    return np.sum(out ** 2)


def numeric(f, args, i, eps=1e-6):
    args = list(args)
    x = args[i]
    if np.ndim(x):
        g = np.zeros_like(x)
        for k in np.ndindex(x.shape):
            up, down = x.copy(), x.copy()
            up[k] += eps
            down[k] -= eps
            args[i] = up
            hi = f(*args)
            args[i] = down
            g[k] = (hi - f(*args)) / (2 * eps)
        return g
    args[i] = x + eps
    hi = f(*args)
    args[i] = x - eps
    return (hi - f(*args)) / (2 * eps)


CASES = [(model_loss, (rng.randn(5, 3),)), (least_squares, (rng.randn(3),)), (over_layers, (0.7,)),
         (recurrence, (rng.randn(6), 0.6))]


@pytest.mark.parametrize("f, args", CASES, ids=["model_forward", "lambda_loss", "over_layers", "recurrence"])
@pytest.mark.parametrize("mode", ["reverse", "forward", "auto"])
def test_against_central_differences(f, args, mode):
    for i in range(len(args)):
        got = s2s.grad(f, wrt=i, mode=mode, check=True)(*args)
        np.testing.assert_allclose(got, numeric(f, args, i), rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize("mode", ["reverse", "forward", "auto"])
def test_scipy_log_likelihood(mode):
    if scipy is None:
        pytest.skip("scipy is an optional dependency (its rules)")
    for i in range(2):
        got = s2s.grad(negative_loglik, wrt=i, mode=mode, check=True)(0.2, 0.1)
        assert got == pytest.approx(numeric(negative_loglik, (0.2, 0.1), i), rel=1e-5)


@pytest.mark.parametrize("f, args, i", [(recurrence, (rng.randn(6), 0.6), 1), (over_layers, (0.7,), 0)])
def test_second_order(f, args, i):
    gradient = s2s.grad(f, wrt=i)
    a, eps = list(args), 1e-5
    a[i] = args[i] + eps
    hi = gradient(*a)
    a[i] = args[i] - eps
    assert s2s.hessian(f, wrt=i)(*args) == pytest.approx((hi - gradient(*a)) / (2 * eps), rel=1e-4)
