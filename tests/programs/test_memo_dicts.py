"""A memo dict made inside the differentiated function (`cache = {}; if k in cache: ... cache[k] = v`): an outside
tester listed it among what s2s refuses; it works (dict items written and read at keys known when the code
runs), checked here against central differences in every mode and to second order so that it stays so."""
import math

import numpy as np
import pytest

from conftest import assert_gradient
from s2s.testing import check_grads


def memo_in(x):
    cache = {}
    total = 0.0
    for k in [1, 2, 1, 3]:
        if k in cache:
            v = cache[k]
        else:
            v = x ** k
            cache[k] = v
        total = total + v
    return total


def memo_not_in(x):
    cache = {}
    total = 0.0
    for k in [1, 2, 1, 3, 2]:
        if k not in cache:
            cache[k] = math.sin(x * k)
        total = total + cache[k]
    return total


def memo_get(x, ks):
    cache = {}
    total = 0.0
    for k in ks:
        v = cache.get(k)
        if v is None:
            v = np.exp(x * k)
            cache[k] = v
        total = total + v
    return total


def memo_recursive(x):
    cache = {}

    def fib(n):
        if n in cache:
            return cache[n]
        r = x if n < 2 else fib(n - 1) * 0.5 + fib(n - 2)
        cache[n] = r
        return r
    return fib(5)


def memo_tuple_keys(xs):
    cache = {}
    total = 0.0
    for i in range(len(xs)):
        key = (i % 2, 0)
        if key in cache:
            total = total + cache[key] * xs[i]
        else:
            cache[key] = xs[i] ** 2
    return total


@pytest.mark.parametrize("f, args", [
    (memo_in, (1.5,)),
    (memo_not_in, (0.5,)),
    (memo_get, (0.5, [1, 2, 1])),
    (memo_recursive, (0.7,)),
    (memo_tuple_keys, (np.array([0.3, 0.5, 0.9, 1.1]),)),
], ids=lambda v: getattr(v, "__name__", str(v)))
def test_gradients(f, args):
    assert_gradient(f, *args, wrt=0)
    check_grads(f, args, order=2, modes=("forward", "reverse"), wrt=0)


def test_closed_form():
    import s2s
    # memo_in = 2x + x^2 + x^3
    assert s2s.grad(memo_in)(1.5) == pytest.approx(2 + 2 * 1.5 + 3 * 1.5 ** 2)
