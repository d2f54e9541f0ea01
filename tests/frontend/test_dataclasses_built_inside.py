"""A dataclass's object built inside the differentiated function, its fields read later
(s2s/frontend/desugar/instances.py: `dataclass_init`, the `__init__` dataclasses wrote as code s2s reads). An
outside tester's report: `p = P(x * 2, x + 1); p.w * p.b` was refused ("s2s does not differentiate reading an
attribute of this value")."""
import dataclasses
from dataclasses import dataclass, field

import numpy as np
import pytest

import s2s
from conftest import assert_gradient
from s2s.testing import check_grads


@dataclass
class Pair:
    w: float
    b: float


@dataclass
class Layer:
    W: np.ndarray
    scale: float = 2.0
    shift: float = field(default=0.5)
    history: list = field(default_factory=list)
    tag: str = field(default="layer", init=False)

    def __call__(self, x):
        return np.tanh(self.scale * (self.W @ x) + self.shift)


@dataclass
class Normal:
    mu: float
    sigma: float
    _: dataclasses.KW_ONLY
    weight: float = 1.0

    def __post_init__(self):
        self.var = self.sigma * self.sigma

    def logpdf(self, x):
        return self.weight * (-0.5 * (x - self.mu) ** 2 / self.var - 0.5 * np.log(2 * np.pi * self.var))


def pair_product(x):
    p = Pair(x * 2, x + 1)
    return p.w * p.b


def layer_output(x, W):
    layer = Layer(W * x, shift=x)
    return np.sum(layer(np.ones(2)) ** 2) + len(layer.history) + len(layer.tag)


def log_likelihood(mu, sigma, data):
    model = Normal(mu, sigma, weight=0.5)
    total = 0.0
    for d in data:
        total = total + model.logpdf(d)
    return total


def in_a_loop(x):
    acc = 0.0
    for k in range(3):
        p = Pair(x ** k, k * 1.0)
        acc = acc + p.w * p.b
    return acc


W = np.array([[0.3, -0.5], [0.8, 0.1]])
DATA = np.array([0.2, -0.4, 1.1])


@pytest.mark.parametrize("f, args, wrt", [
    (pair_product, (1.5,), 0),
    (layer_output, (0.7, W), 0),
    (layer_output, (0.7, W), 1),
    (log_likelihood, (0.3, 1.2, DATA), 0),
    (log_likelihood, (0.3, 1.2, DATA), 1),
    (in_a_loop, (0.9,), 0),
], ids=lambda v: getattr(v, "__name__", str(v)))
def test_gradients(f, args, wrt):
    assert_gradient(f, *args, wrt=wrt)
    check_grads(f, args, order=2, modes=("forward", "reverse"), wrt=wrt)


def test_closed_form():
    # pair_product = 2x (x + 1): 4x + 2
    assert s2s.grad(pair_product)(1.5) == pytest.approx(8.0)
    assert s2s.grad(pair_product, mode="reverse")(1.5) == pytest.approx(8.0)
    assert s2s.value_and_grad(log_likelihood)(0.3, 1.2, DATA)[0] == pytest.approx(log_likelihood(0.3, 1.2, DATA))


@dataclass(frozen=True)
class Frozen:
    w: float


def test_a_frozen_dataclass_is_still_refused_where_it_is_read():
    def frozen(x):
        p = Frozen(x * 2)
        return p.w * x

    with pytest.raises(s2s.S2SError, match=r"test_dataclasses_built_inside.py:\d+:\d+: .*attribute"):
        s2s.grad(frozen)(0.5)
