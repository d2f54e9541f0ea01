"""Calls that write into an array they are given (issue 27, item 5).

A function without a source s2s reads or a rule that writes into an array it is given (a Cython smoother
`_smooth(params, data, yhat, xhat)` filling yhat, `operator.setitem(y, slice(None), x)`) was kept as a constant:
the gradient was silently zero, check=True included. Writers whose semantics are known are followed as the
assignments they are (operator.setitem and __setitem__, the in-place operators of `operator`, np.copyto, np.place,
np.put: s2s/frontend/desugar/writers.py); any other call given a differentiated value while an argument may be an
array is refused when the derivative is made (s2s/driver/mutation.py: refuse_opaque_writers).
"""
import logging
import random
import operator

import numpy as np
import pytest

import s2s

scipy_signal = pytest.importorskip("scipy.signal")
from scipy.signal import _sosfilt  # noqa: E402  (a Cython function that filters in place)

MODES = ("reverse", "forward", "auto")
X = np.array([0.5, -1.5, 2.0])


def _central(f, x, eps=1e-6):
    g = np.zeros_like(x)
    for k in np.ndindex(x.shape):
        e = np.zeros_like(x)
        e[k] = eps
        g[k] = (f(x + e) - f(x - e)) / (2 * eps)
    return g


FOLLOWED = [
    "y = np.zeros(3)\n    operator.setitem(y, slice(None), x)\n    return np.sum(y ** 2 * W)",       # the issue's
    "y = np.zeros(3)\n    operator.__setitem__(y, 1, x[0] * x[2])\n    return np.sum(np.sin(y) + y * x)",
    "y = x * 2.0\n    operator.iadd(y, x ** 2)\n    return np.sum(y * W)",
    "y = x * 2.0\n    z = operator.imul(y, x)\n    return np.sum(z * W) + np.sum(y)",
    "y = np.ones(3)\n    operator.itruediv(y, 1.0 + x ** 2)\n    return np.sum(y * W)",
    "y = np.zeros(3)\n    np.copyto(y, np.exp(x))\n    return np.sum(y * W)",
    "y = x * 1.0\n    np.copyto(y, x ** 3, where=x > 0)\n    return np.sum(y * W)",
    "y = np.zeros(3)\n    np.place(y, x > 0, x[x > 0] ** 2)\n    return np.sum(y * W)",
    "y = np.zeros((2, 3))\n    np.put(y, [4, 0, 2], x)\n    return np.sum(y ** 2) + y[1, 1] * W[0]",
]


@pytest.mark.parametrize("body", FOLLOWED)
def test_known_writers_are_followed(body, make_fn):
    f = make_fn(f"def f(x):\n    {body}\n", namespace={"W": np.array([1.0, 2.0, -0.5]), "operator": operator})
    expected = _central(f, X)
    for mode in MODES:
        gradient = s2s.grad(f, mode=mode, check=True)(X)
        assert gradient == pytest.approx(expected, rel=1e-6, abs=1e-8), mode
    v = np.array([0.3, -0.2, 1.0])
    reverse = s2s.grad(f, mode="reverse")
    h = 1e-5
    assert s2s.hvp(f)(X, v) == pytest.approx((reverse(X + h * v) - reverse(X - h * v)) / (2 * h), rel=1e-5, abs=1e-7)


def test_an_in_place_operator_on_a_number_is_refused_when_it_runs(make_fn):
    """On a number Python's operator.iadd returns a new number and leaves y as it was: not `y += v`."""
    f = make_fn("def f(x):\n    y = x * 2.0\n    operator.iadd(y, x)\n    return y\n", namespace={"operator": operator})
    with pytest.raises(s2s.S2SError, match="operator.iadd"):
        s2s.grad(f)(1.5)


SOS = np.array([[1.0, 0.5, 0.0, 1.0, -0.3, 0.0]])

REFUSED = [
    # a compiled (Cython) filter writing into its second argument, given the differentiated signal
    ("y = np.array([x * 1.0])\n    zi = np.zeros((1, 1, 2))\n    _sosfilt._sosfilt(SOS, y, zi)\n    return np.sum(y ** 2)",
     "_sosfilt"),
    # the shape: the differentiated parameters in, an output array filled (it is zeros before the call)
    ("yhat = np.zeros((1, 3))\n    zi = np.zeros((1, 1, 2))\n    _sosfilt._sosfilt(SOS * x[0], yhat, zi)\n"
     "    return np.sum(yhat ** 2) + x[1]", "_sosfilt"),
    ("y = x * 1.0\n    np.random.shuffle(y)\n    return np.sum(y * W)", "shuffle"),
    ("y = np.zeros(3)\n    list(map(operator.setitem, [y], [slice(None)], [x]))\n    return np.sum(y ** 2)", "setitem"),
]


@pytest.mark.parametrize("body, name", REFUSED, ids=[r[1] + str(k) for k, r in enumerate(REFUSED)])
def test_unknown_writers_are_refused_when_the_derivative_is_made(body, name, make_fn):
    f = make_fn(f"def f(x):\n    {body}\n", namespace={"W": np.array([1.0, 2.0, -0.5]), "operator": operator,
                                                       "_sosfilt": _sosfilt, "SOS": SOS})
    for mode in MODES:
        with pytest.raises(s2s.NoDerivativeRule, match=f"{name}.*may write into an array") as info:
            s2s.grad(f, mode=mode)(X)
        assert "<test-source" in str(info.value)


def test_readers_of_a_differentiated_value_are_kept(make_fn, capsys):
    """print, logging, np.testing: they read what they are given and write nothing."""
    log = logging.getLogger("s2s-test-opaque")
    f = make_fn("def f(x):\n    y = np.sin(x)\n    print(y)\n    log.debug('%s', y)\n"
                "    np.testing.assert_array_less(y, 2.0)\n    return np.sum(y * y)\n", namespace={"log": log})
    for mode in MODES:
        assert s2s.grad(f, mode=mode)(X) == pytest.approx(2 * np.sin(X) * np.cos(X))
    assert "[" in capsys.readouterr().out


def _library_function(text, name):
    """A function of an installed library (scipy's module name) whose source s2s cannot read: called as it is."""
    namespace = {"np": np}
    exec(text, namespace)
    made = namespace[name]
    made.__module__ = "scipy._s2s_test_helpers"
    return made


_fills = _library_function("def fills(y, x):\n    y[:] = x * 2.0\n", "fills")
_dtype_of = _library_function("def dtype_of(*args):\n    return np.result_type(*args)\n", "dtype_of")


def _writes_through_a_library(x):
    y = np.zeros(3)
    _fills(y, x)
    return np.sum(y * x)


def _reads_through_a_library(x):
    dtype = _dtype_of(x, 1.0)
    return np.sum(np.sin(np.asarray(x, dtype=dtype)))


@pytest.mark.parametrize("mode", ["reverse", "forward", "auto"])
def test_a_library_function_that_writes_is_refused_when_it_runs(mode):
    """A library's Python function s2s cannot read is called as Python calls it; given an array that carries a
    derivative, it is refused when it writes into one (here y, which then depends on x), never a constant."""
    with pytest.raises(ValueError, match="wrote into an array, list or dict"):
        s2s.grad(_writes_through_a_library, mode=mode)(np.array([0.5, 1.0, 2.0]))


@pytest.mark.parametrize("mode", ["reverse", "forward", "auto"])
def test_a_library_function_that_only_reads_is_called_as_it_is(mode):
    x = np.array([0.5, 1.0, 2.0])
    np.testing.assert_allclose(s2s.grad(_reads_through_a_library, mode=mode)(x), np.cos(x))


def _shuffled_first(a, b):
    random.seed(1)
    xs = [a, b * 2.0]
    random.shuffle(xs)          # (Python's random module: a library's Python s2s calls as it is)
    return np.sum(xs[0] * 3.0)


class _Bag:
    def __init__(self, a, b):
        self.items = [a, b * 2.0]

    def first(self):
        return self.items[0]


def _shuffled_bag(a, b):
    random.seed(1)
    bag = _Bag(a, b)
    random.shuffle(bag.items)
    return np.sum(bag.first() * 3.0)


@pytest.mark.parametrize("f", [_shuffled_first, _shuffled_bag], ids=["list", "object's list"])
@pytest.mark.parametrize("mode", ["reverse", "forward", "auto"])
def test_a_library_function_that_reorders_a_list_it_is_given_is_refused_when_it_runs(f, mode):
    """`random.shuffle(xs)` on a list of differentiated arrays (a plain list, or one an object built inside holds):
    the gradient took the list for unchanged, silently ((3, 3), (0, 0) where Python's is (0, 0), (6, 6)); it is
    refused when the call changes which items the list holds."""
    with pytest.raises(ValueError, match="wrote into an array, list or dict"):
        s2s.grad(f, wrt=(0, 1), mode=mode)(np.array([1.0, 2.0]), np.array([3.0, 4.0]))
