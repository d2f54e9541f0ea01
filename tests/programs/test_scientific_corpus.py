"""A corpus of programs written the way scientific and ML code is written (issue 13): models as classes
with `forward` methods and parameters on `self`, losses as lambdas, comprehensions over layers, SciPy
log-likelihoods, RandomState draws, star-arguments, predict loops reading the loop's last value.

Each case is differentiated unchanged, in reverse mode, in the default mode="auto", in forward mode where it
applies, and to second order for about a third of them, against central differences.
"""
from __future__ import annotations

import functools
import math

import numpy as np
import pytest

import s2s

stats = pytest.importorskip("scipy.stats", reason="the corpus has SciPy log-likelihoods")

# ---------------------------------------------------------------- models

class Linear:
    def __init__(self, n_in, n_out, seed):
        rs = np.random.RandomState(seed)
        self.W = rs.randn(n_in, n_out) * 0.4
        self.b = rs.randn(n_out) * 0.1

    def __call__(self, x):
        return x @ self.W + self.b


class MLP:
    def __init__(self, sizes, activation=np.tanh):
        self.layers = [Linear(a, b, seed) for seed, (a, b) in enumerate(zip(sizes[:-1], sizes[1:]))]
        self.activation = activation

    def forward(self, x):
        for layer in self.layers[:-1]:
            x = self.activation(layer(x))
        return self.layers[-1](x)

    def loss(self, x, y):
        return np.mean((self.forward(x) - y) ** 2)


class Residual:
    def __init__(self, n):
        self.inner = Linear(n, n, 7)

    def block(self, h):
        return h + np.tanh(self.inner(h))

    def forward(self, x):
        return self.block(self.block(x))


class GaussianProcess:
    def __init__(self, X, y):
        self.X, self.y = X, y

    def kernel(self, A, B, length, variance):
        d = A[:, None, :] - B[None, :, :]
        return variance * np.exp(-0.5 * np.sum(d ** 2, axis=-1) / length ** 2)

    def neg_log_marginal(self, log_length, log_variance, noise=0.1):
        K = self.kernel(self.X, self.X, np.exp(log_length), np.exp(log_variance))
        K = K + noise * np.eye(len(self.y))
        alpha = np.linalg.solve(K, self.y)
        return 0.5 * self.y @ alpha + 0.5 * np.linalg.slogdet(K)[1]


class Polynomial:
    def __init__(self, *coefficients):
        self.coefficients = coefficients

    def __call__(self, x):
        return sum(c * x ** k for k, c in enumerate(self.coefficients))


class Scaled:
    scale = 2.5

    @classmethod
    def create(cls, v):
        return cls.scale * v

    @staticmethod
    def square(v):
        return v * v


X_DATA = np.random.RandomState(3).randn(6, 3)
Y_DATA = np.random.RandomState(4).randn(6, 2)
MODEL = MLP([3, 4, 2])
RS = np.random.RandomState(11)
OBS = np.array([0.3, -1.2, 0.8, 2.1])


def clamp_result(f):
    @functools.wraps(f)
    def wrapper(x):
        return 2.0 * f(x)
    return wrapper


@clamp_result
def doubled(x):
    return x ** 3


# ---------------------------------------------------------------- the programs

def mlp_loss_bound(x):
    return MODEL.loss(x, Y_DATA[0])


def mlp_layers_comprehension(x):
    hs = [np.tanh(layer(x)) for layer in MODEL.layers[:1]]
    return np.sum(hs[0] ** 2)


def predict_reads_last(x):
    params = [(layer.W, layer.b) for layer in MODEL.layers]
    h = x
    for W, b in params:
        out = h @ W + b
        h = np.tanh(out)
    return np.sum(out ** 2) + np.sum(W)


def loop_variable_after_loop(x):
    for i in range(4):
        y = x * (i + 1.0)
    return y * i


def sum_generator(x):
    return sum(w * x ** k for k, w in enumerate([0.5, -1.0, 2.0]))


def nested_comprehension(x):
    grid = [[x * a + b for a in (1.0, 2.0)] for b in (0.5, -0.5)]
    return sum(sum(row) for row in grid) + max(sum(row) for row in grid)


def comprehension_with_condition(x):
    return np.sum(np.stack([x * k for k in range(5) if k % 2 == 1]))


def closure_helper(x, a):
    def g(y):
        return a * np.sin(y)
    return g(x) * g(2.0 * x)


def lambda_in_function(x, a):
    sq = lambda v: (v - a) ** 2  # noqa: E731
    return sq(x) + sq(2.0 * x)


def map_with_lambda(x):
    return sum(map(lambda v: v * v, [x, 2.0 * x, 3.0]))


def map_with_partial_style(x):
    def scaled(c, v):
        return c * v ** 2
    return sum(map(functools.partial(scaled, 3.0), [x, x + 1.0]))


def star_args_helper(x, y):
    def combine(*terms):
        return terms[0] * terms[1] + terms[-1]
    pair = (x, y)
    return combine(*pair) + combine(x, y, x * y)


def kwargs_passed_through(x, y):
    def inner(a, b, scale=1.0):
        return scale * a * b
    def outer(a, **options):
        return inner(a, **options)
    return outer(x, b=y, scale=3.0)


def keyword_only(x, y):
    def f(a, *, weight=1.0):
        return weight * a ** 2
    return f(x, weight=y) + f(y)


def keyword_active(x, y):
    def g(u, v):
        return u * v ** 2
    return g(v=x, u=y) + np.sum(np.concatenate([np.ones(2) * x, np.ones(1) * y], axis=0))


def dict_of_params(x, y):
    params = dict(w=x, b=y)
    total = 0.0
    for name, value in params.items():
        total = total + value ** 2
    return total + params.get("w", 0.0) * params.get("missing", 1.0) + sum(params.values())


def list_extend_insert(x, y):
    xs = [x]
    xs.extend([y, x * y])
    total = 0.0
    for v in xs:
        total = total + v
    return total * len(xs)


def assert_raise_print(x):
    assert x > 0, f"x must be positive, got {x:.3f}"
    if x > 1e6:
        raise ValueError(f"too large: {x}")
    with np.errstate(divide="ignore"):
        y = np.log(x)
    return y * x


def isinstance_branch(x, scale=None):
    if scale is None:
        scale = 2.0
    if isinstance(x, np.ndarray):
        return np.sum(x) * scale
    return x * scale


def scipy_norm_loglike(mu, log_sigma):
    return np.sum(stats.norm.logpdf(OBS, mu, np.exp(log_sigma)))


def scipy_frozen(mu):
    return np.sum(stats.norm(mu, 1.5).logpdf(OBS))


def random_state_draws(x):
    rs = np.random.RandomState(0)              # a generator held in a variable: its draws are constants
    noise = rs.randn(3)
    eps = np.random.RandomState(1).rand()
    shift = RANDOM.normal(size=3)              # a generator reseeded by the test before each call
    return np.sum((x - noise) ** 2) + eps * np.sum(x) + np.sum(shift * 0.0 + 1.0) * x[0]


def residual_network(x):
    return np.sum(RESIDUAL.forward(x) ** 2)


def gp_marginal(log_length):
    gp = GP
    return gp.neg_log_marginal(log_length, 0.2)


def polynomial_object(x):
    p = POLY
    return p(x) + POLY(2.0 * x)


def classmethod_staticmethod(x):
    return Scaled.create(x) + Scaled.square(x)


def decorated_helper(x):
    return doubled(x) + x


def rnn(x):
    cell = CELL
    h = np.zeros(2)
    for t in range(3):
        h = np.tanh(cell(np.concatenate([h, [x * t]])))
    return np.sum(h)


def lstm_like(xs):
    h, c = np.zeros(2), np.zeros(2)
    for x in xs:
        gates = [np.tanh(layer(np.concatenate([h, [x]]))) for layer in GATES]
        f, i, o = [1.0 / (1.0 + np.exp(-g)) for g in gates[:3]]
        c = f * c + i * gates[3]
        h = o * np.tanh(c)
    return np.sum(h)


def mixture_loglike(mu):
    weights = [0.3, 0.7]
    sigmas = [1.0, 2.0]
    total = 0.0
    for x in OBS:
        total = total + np.log(sum(w * stats.norm.pdf(x, m, s) for w, m, s in zip(weights, [mu, -mu], sigmas)))
    return total


def heat_step(u, k):
    def step(v):
        inner = [v[i - 1] - 2.0 * v[i] + v[i + 1] for i in range(1, len(v) - 1)]
        return np.concatenate([v[:1], v[1:-1] + k * np.array(inner), v[-1:]])
    for _ in range(2):
        u = step(u)
    return np.sum(u ** 2)


def variational_elbo(mu, log_s):
    eps = np.array([-0.5, 0.1, 0.9])
    z = mu + np.exp(log_s) * eps
    log_p = np.sum(stats.norm.logpdf(z, 0.0, 1.0))
    entropy = log_s + 0.5 * np.log(2 * np.pi * np.e)
    return log_p / len(eps) + entropy


def fstring_logging(x):
    message = f"step loss={x:.4f} {x!r}"
    print(message)
    return x ** 2


def tuple_star_unpack(x):
    first, *rest = (x, 2.0 * x, 3.0 * x)
    return first * rest[0] + rest[-1]


def min_max_generators(x, y):
    vals = (x, y, x * y)
    return max(v * v for v in vals) + max([abs(v) for v in vals])


def len_of_anything(x):
    layers = MODEL.layers
    n = len(layers) + len("abc") + len({"a": 1})
    return x * n


def index_count_constants(x):
    names = ("a", "b", "c", "b")
    return x * names.index("c") + x ** 2 * names.count("b")


def any_all(x):
    small = not any(v > 1e9 for v in (x,))
    ok = all(v > -10.0 for v in (x, 2.0 * x)) and small
    return x * 3.0 if ok else x


def self_forward_in_loop(x):
    total = 0.0
    for scale in (0.5, 1.5):
        total = total + np.sum(MODEL.forward(scale * x))
    return total


def model_built_inside(x):
    return np.sum(Residual(3).forward(x) ** 2)     # an object made here: its methods run through s2s's vjp


def model_as_argument(model, x):
    return np.sum(model.forward(x) ** 2)


GP = GaussianProcess(np.random.RandomState(5).randn(5, 2), np.random.RandomState(6).randn(5))
POLY = Polynomial(1.0, -2.0, 0.5)
CELL = Linear(3, 2, 9)
RESIDUAL = Residual(3)
RANDOM = np.random.default_rng(0)


class SquaredError:
    def __init__(self, target):
        self.target = target

    def __call__(self, prediction):
        return np.sum((prediction - self.target) ** 2)
GATES = [Linear(3, 2, 20 + k) for k in range(4)]


def square_loss(w, x, y):
    return np.mean((x @ w - y) ** 2)


# the differentiated callables that are not plain functions
loss_lambda = lambda w: np.mean((X_DATA @ w - Y_DATA[:, 0]) ** 2)  # noqa: E731
partial_loss = functools.partial(square_loss, x=X_DATA, y=Y_DATA[:, 1])
bound_loss = functools.partial(MODEL.loss, y=Y_DATA[1])

V3 = np.array([0.3, -0.4, 0.5])
CASES = [
    # (callable, args, wrt, forward mode applies, second order)
    (mlp_loss_bound, (V3,), 0, True, True),
    (mlp_layers_comprehension, (V3,), 0, True, False),
    (predict_reads_last, (V3,), 0, True, False),
    (loop_variable_after_loop, (1.3,), 0, True, True),
    (sum_generator, (0.7,), 0, True, True),
    (nested_comprehension, (0.7,), 0, True, False),
    (comprehension_with_condition, (V3,), 0, True, False),
    (closure_helper, (0.4, 1.7), (0, 1), True, False),
    (lambda_in_function, (0.4, 1.7), (0, 1), True, True),
    (map_with_lambda, (0.9,), 0, True, True),
    (map_with_partial_style, (0.9,), 0, True, False),
    (star_args_helper, (0.6, -1.1), (0, 1), True, True),
    (kwargs_passed_through, (0.6, -1.1), (0, 1), True, False),
    (keyword_only, (0.6, -1.1), (0, 1), True, True),
    (keyword_active, (0.6, -1.1), (0, 1), True, False),
    (dict_of_params, (0.6, -1.1), (0, 1), True, False),
    (list_extend_insert, (0.6, -1.1), (0, 1), True, False),
    (assert_raise_print, (1.7,), 0, True, True),
    (isinstance_branch, (1.7,), 0, True, True),
    (scipy_norm_loglike, (0.2, 0.3), (0, 1), False, False),
    (scipy_frozen, (0.2,), 0, False, False),
    (random_state_draws, (V3,), 0, True, False),
    (residual_network, (V3,), 0, True, True),
    (gp_marginal, (0.1,), 0, True, False),
    (polynomial_object, (0.8,), 0, True, True),
    (classmethod_staticmethod, (0.8,), 0, True, True),
    (decorated_helper, (0.8,), 0, True, True),
    (rnn, (0.8,), 0, True, False),
    (lstm_like, (np.array([0.5, -0.3]),), 0, True, False),
    (mixture_loglike, (0.4,), 0, False, False),
    (heat_step, (np.array([0.0, 1.0, 0.5, 0.0]), 0.2), (0, 1), True, False),
    (variational_elbo, (0.2, -0.3), (0, 1), False, False),
    (fstring_logging, (0.8,), 0, True, True),
    (tuple_star_unpack, (0.8,), 0, True, True),
    (min_max_generators, (0.8, -1.3), (0, 1), True, False),
    (len_of_anything, (0.8,), 0, True, False),
    (index_count_constants, (0.8,), 0, True, True),
    (any_all, (0.8,), 0, True, False),
    (self_forward_in_loop, (V3,), 0, True, False),
    (model_built_inside, (V3,), 0, True, False),
    (model_as_argument, (MODEL, V3), 1, True, False),
    (MODEL.loss, (V3, Y_DATA[2]), 0, True, True),
    (loss_lambda, (np.array([0.1, 0.2, -0.3]),), 0, True, True),
    (partial_loss, (np.array([0.1, 0.2, -0.3]),), 0, True, False),
    (bound_loss, (V3,), 0, True, False),
    (SquaredError(V3 * 2.0), (V3,), 0, True, True),
    (GP.neg_log_marginal, (0.1, 0.2), (0, 1), True, False),
    (POLY, (0.8,), 0, True, True),
    (Scaled.create, (0.8,), 0, True, True),
    (np.tanh, (0.3,), 0, True, True),
    (math.exp, (0.3,), 0, True, True),
]


def _name(case) -> str:
    fn = case[0]
    return getattr(fn, "__name__", None) or getattr(getattr(fn, "func", None), "__name__", type(fn).__name__)


def _scalar_output(fn, args):
    out = fn(*args)
    return out if np.ndim(out) == 0 else np.sum(out)


def central_differences(fn, args, index, h=1e-6):
    x = args[index]
    f = lambda v: float(np.sum(fn(*args[:index], v, *args[index + 1:])))  # noqa: E731
    if np.ndim(x) == 0:
        return (f(x + h) - f(x - h)) / (2 * h)
    g = np.zeros_like(x)
    for k in np.ndindex(x.shape):
        e = np.zeros_like(x)
        e[k] = h
        g[k] = (f(x + e) - f(x - e)) / (2 * h)
    return g


def _wrts(wrt):
    return wrt if isinstance(wrt, tuple) else (wrt,)


def _check(got, fn, args, wrt, rtol=1e-5, atol=1e-6):
    got = got if isinstance(wrt, tuple) else (got,)
    for g, i in zip(got, _wrts(wrt)):
        np.testing.assert_allclose(g, central_differences(fn, args, i), rtol=rtol, atol=atol)


@pytest.mark.parametrize("case", CASES, ids=[_name(c) for c in CASES])
def test_reverse_mode_against_central_differences(case):
    fn, args, wrt, _, _ = case
    _check(s2s.grad(fn, wrt=wrt, mode="reverse")(*args), fn, args, wrt)


@pytest.mark.parametrize("case", CASES, ids=[_name(c) for c in CASES])
def test_the_default_mode_against_central_differences(case):
    """mode="auto": forward mode seeded with 1.0 along one float argument, reverse mode otherwise."""
    fn, args, wrt, _, _ = case
    _check(s2s.grad(fn, wrt=wrt)(*args), fn, args, wrt)


FORWARD = [c for c in CASES if c[3]]


@pytest.mark.parametrize("case", FORWARD, ids=[_name(c) for c in FORWARD])
def test_forward_mode_against_central_differences(case):
    fn, args, wrt, _, _ = case
    _check(s2s.grad(fn, wrt=wrt, mode="forward")(*args), fn, args, wrt)


SECOND = [c for c in CASES if c[4]]


@pytest.mark.parametrize("case", SECOND, ids=[_name(c) for c in SECOND])
def test_second_order_against_central_differences_of_the_gradient(case):
    fn, args, wrt, _, _ = case
    index = _wrts(wrt)[0]
    hessian = s2s.hessian(fn, wrt=index)(*args)
    gradient = s2s.grad(fn, wrt=index)
    expected = central_differences(gradient, args, index, h=1e-5)
    if np.ndim(args[index]) == 0:
        np.testing.assert_allclose(hessian, expected, rtol=1e-4, atol=1e-5)
    else:        # central differences of the summed gradient: the Hessian's column sums
        np.testing.assert_allclose(np.sum(hessian, axis=tuple(range(np.ndim(args[index])))), expected,
                                   rtol=1e-4, atol=1e-5)


def test_the_corpus_is_large_enough():
    assert len(CASES) >= 40 and len(SECOND) * 3 >= len(CASES)
