"""A function with `*args`/`**kwargs` that lowering names (`xp.zeros_like(x)`, its namespace known only when
lowering), read for the call's lengths and bound by its code's own signature though it carries another
(`__signature__`), and a parameter given a module (`xp=np`) read as that module (s2s/ir/lower.py). An outside
tester's report: scipy.optimize.rosen_der as shipped (array_api_compat's `get_xp` wrappers) was refused ("no
derivative rule for ...common._aliases.zeros_like ... star-arguments in the signature")."""
import inspect
from functools import wraps

import numpy as np
import pytest
import scipy.optimize as so

import s2s
from conftest import assert_gradient
from s2s.testing import check_grads


def get_xp(xp):
    """array_api_compat's decorator, as it writes it: the wrapper says it takes the function's parameters but xp."""
    def inner(f):
        @wraps(f)
        def wrapped_f(*args, **kwargs):
            return f(*args, xp=xp, **kwargs)
        sig = inspect.signature(f)
        wrapped_f.__signature__ = sig.replace(parameters=[p for n, p in sig.parameters.items() if n != "xp"])
        return wrapped_f
    return inner


def _scaled_like(x, /, xp, *, scale=2.0, **kwargs):
    return xp.zeros_like(x, **kwargs) + xp.sin(x) * scale


scaled_like = get_xp(np)(_scaled_like)


class Namespace:
    scaled_like = staticmethod(scaled_like)


NS = Namespace()


def by_name(x):
    return np.sum(scaled_like(x) ** 2) + np.sum(scaled_like(x, scale=0.5))


def through_a_namespace(x):
    return np.sum(NS.scaled_like(x, scale=x[0]) * x)


def rosen_gradient_norm(x):
    return np.sum(so.rosen_der(x) ** 2)


X = np.array([1.1, 0.7, 1.3, -0.4])


@pytest.mark.parametrize("f", [by_name, through_a_namespace, rosen_gradient_norm], ids=lambda f: f.__name__)
def test_gradients(f):
    assert_gradient(f, X)
    check_grads(f, (X,), order=2, modes=("forward", "reverse"))


@pytest.mark.parametrize("mode", ["auto", "reverse", "forward"])
def test_rosen_der_closed_form(mode):
    # d/dx |g(x)|^2 = 2 H(x) g(x), H = rosen_hess (symmetric)
    expected = 2 * so.rosen_hess(X) @ so.rosen_der(X)
    np.testing.assert_allclose(s2s.grad(rosen_gradient_norm, mode=mode)(X), expected, rtol=1e-10)
