"""A function passed as an argument of the differentiated function (`def f(x, g): return g(x) ** 2`, grad along
x): the derivative is specialized on which function it is (s2s/driver/pipeline.py: known_arguments) and the call
read as that function's (s2s/frontend/desugar/function_arguments.py). An outside tester's report: it was refused
("s2s only differentiates calls to functions it can name statically")."""
import numpy as np
import pytest

import s2s
from conftest import assert_gradient
from s2s.testing import check_grads


def squared_through(x, g):
    return g(x) ** 2


def user_function(z):
    return np.sin(z) * z


def passed_on(x, g):
    return squared_through(x * 2.0, g) + sum(map(g, [x, x * x]))


def over_an_array(w, activation, X):
    return np.sum(activation(X @ w) ** 2)


X = np.array([[0.3, -0.5], [0.8, 0.1], [-0.2, 0.7]])


@pytest.mark.parametrize("f, args", [
    (squared_through, (1.3, user_function)),
    (squared_through, (1.3, lambda z: z * z * 3.0)),
    (squared_through, (0.4, np.tanh)),
    (squared_through, (0.4, np.exp)),
    (passed_on, (0.6, user_function)),
    (over_an_array, (np.array([0.5, -1.0]), np.tanh, X)),
    (over_an_array, (np.array([0.5, -1.0]), lambda t: np.log1p(np.exp(t)), X)),
], ids=["user function", "lambda", "tanh", "exp", "passed on", "array tanh", "array softplus lambda"])
def test_gradients(f, args):
    assert_gradient(f, *args, wrt=0)
    check_grads(f, args, order=2, modes=("forward", "reverse"), wrt=0)


def test_another_function_makes_another_derivative():
    """The cache keys on the function: calls alternating between two give each one's gradient, in every mode."""
    for mode in ("auto", "reverse", "forward"):
        d = s2s.grad(squared_through, mode=mode)
        for _ in range(2):
            assert d(0.7, np.sin) == pytest.approx(2 * np.sin(0.7) * np.cos(0.7))
            assert d(0.7, lambda z: 3.0 * z) == pytest.approx(18 * 0.7)
            assert d(0.7, user_function) == pytest.approx(
                2 * user_function(0.7) * (np.cos(0.7) * 0.7 + np.sin(0.7)))


def test_the_function_argument_itself_is_refused_as_before():
    with pytest.raises(s2s.S2SError):
        s2s.grad(squared_through, wrt=1)(0.7, np.sin)
