"""Tuples, lists and dicts of arrays passed to helpers, with broadcasting, in reverse mode (issue 27, items 8, 9).

- The builtin `sum` of a list of arrays that broadcast (`sum([W, b])`, b a row of W) gave each item the adjoint of
  the sum, shaped like the sum: a wrong gradient, or, accumulated in place into an item's own adjoint, `ValueError:
  non-broadcastable output operand with shape (3,) doesn't match the broadcast shape (2,3)`. Each item's adjoint is
  summed back to its shape (runtime._spread).
- The gradient of an array argument that no read reached through a container (`t = (W, b); u = t[:1]`) came back
  as the number 0.0: an item's adjoint is now lazy, filled to the argument's shape.
- np.append of Python lists in forward mode, and sorted() of a dict argument (its keys) in reverse mode, crashed.

Found with a generator of programs whose helpers take (W, b) tuples and lists of arrays (tests/programs/fuzz_programs.py's
`containers_of_arrays` family); before the fixes, 78 of 300 such programs gave wrong gradients and 12 crashed.
"""
import numpy as np
import pytest

import s2s

_rng = np.random.default_rng(8)
W = _rng.normal(size=(2, 3))
B = _rng.normal(size=3)
C = _rng.normal(size=(2, 1))
ARGS = (W, B, C)


def _central(f, args, i, eps=1e-6):
    x = args[i]
    out = np.zeros_like(x)
    for k in np.ndindex(np.shape(x)):
        e = np.zeros_like(x)
        e[k] = eps
        out[k] = (f(*[x + e if j == i else a for j, a in enumerate(args)])
                  - f(*[x - e if j == i else a for j, a in enumerate(args)])) / (2 * eps)
    return out


PROGRAMS = [
    "def f(W, b, c):\n    return np.sum(sum([W, b, c]) ** 2)\n",
    "def f(W, b, c):\n    return np.sum(sum((b, W), c) ** 2)\n",
    "def f(W, b, c):\n    t = [b, W]\n    return np.sum(sum(t) ** 2) + np.sum(b * b)\n",
    # the shape of the crash: a helper summing a list, its result's adjoint accumulated into b's in place
    """
def combine(ps):
    return sum(ps) * ps[0]

def f(W, b, c):
    h = combine([b, W, c])
    return np.sum(h ** 2) + np.sum(np.tanh(b) * W)
""",
    """
def layer(p, x):
    w, bias = p
    return np.tanh(x * w + bias)

def f(W, b, c):
    h = W
    for p in [(b, c), (W, b)]:
        h = layer(p, h) + sum([h, b])
    return np.sum(h)
""",
    "def f(W, b, c):\n    t = (W, b)\n    u = t[:1]\n    return np.sum(u[0] ** 2)\n",
    "def f(W, b, c):\n    d = {'w': W, 'b': b, 'c': c}\n    parts = [d['w'], d['c']][:1]\n    return np.sum(parts[0] * W)\n",
]


@pytest.mark.parametrize("source", PROGRAMS)
def test_reverse_mode_with_containers_of_arrays(source, make_fn):
    f = make_fn(source, name="f")
    wrt = (0, 1, 2)
    expected = [_central(f, ARGS, i) for i in wrt]
    for mode in ("reverse", "auto"):
        gradient = s2s.grad(f, wrt=wrt, mode=mode)(*ARGS)
        for g, e, a in zip(gradient, expected, ARGS):
            assert type(g) is np.ndarray and g.shape == a.shape, mode
            assert g == pytest.approx(e, rel=1e-6, abs=1e-8), mode
    for i in wrt:           # forward mode, one argument at a time (it takes arrays)
        assert s2s.grad(f, wrt=i, mode="forward")(*ARGS) == pytest.approx(expected[i], rel=1e-6, abs=1e-8)


@pytest.mark.parametrize("mode", ["reverse", "forward", "auto"])
def test_np_append_of_python_lists(mode, make_fn):
    f = make_fn("def f(x):\n    y = np.append([1.0, 2.0], [x, 3.0 * x])\n    return np.sum(y ** 2)\n")
    g = make_fn("def g(x):\n    y = np.append([x, 2.0], [[x], [3.0 * x]])\n    return np.sum(y ** 2)\n")
    assert s2s.grad(f, mode=mode)(1.5) == pytest.approx(20 * 1.5)        # x^2 + 9 x^2
    assert s2s.grad(g, mode=mode)(1.5) == pytest.approx(22 * 1.5)        # x^2 + x^2 + 9 x^2


@pytest.mark.parametrize("loop", ["for k in sorted(d):\n        s = s + np.sum(d[k] * x) * len(k)",
                                  "for k in d:\n        s = s + np.sum(d[k] * x) * len(k)",
                                  "for k, v in sorted(d.items()):\n        s = s + np.sum(v * x) * len(k)"])
def test_iterating_a_dict_argument_in_reverse_mode(loop, make_fn):
    f = make_fn(f"def f(d, x):\n    s = 0.0\n    {loop}\n    return s\n")
    d = {"bb": np.array([1.0, 2.0]), "a": np.array([3.0, -1.0])}
    grads = s2s.grad(f, wrt=(0, 1), mode="reverse")(d, 1.5)
    assert grads[0]["bb"] == pytest.approx([3.0, 3.0]) and grads[0]["a"] == pytest.approx([1.5, 1.5])
    assert grads[1] == pytest.approx(2 * 3.0 + 1 * 2.0)
    assert s2s.grad(f, wrt=1, mode="auto")(d, 1.5) == pytest.approx(8.0)
