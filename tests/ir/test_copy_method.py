"""`x.copy()` copies x as its own type (the fuzzer's containers seed 1560, issue 27).

Lowering read every `.copy()` as np.copy: a list's copy became an array, so `xs2 + xs2` after `xs2 = xs.copy()` was
an elementwise sum in the derivative and a concatenation in Python (caught only by the checking mode; without it,
a wrong gradient). A list's copy is a list, a dict's a dict, an array's an array.
"""
import numpy as np
import pytest

import s2s

MODES = ("reverse", "forward", "auto")


def _central(f, args, i, h=1e-6):
    plus = f(*[a + h if j == i else a for j, a in enumerate(args)])
    minus = f(*[a - h if j == i else a for j, a in enumerate(args)])
    return (plus - minus) / (2 * h)


CASES = [
    # the fuzzer's program, reduced
    """
def f(a, b):
    xs = [a, -0.74] + [b]
    xs2 = xs.copy()
    xs2[0] = b
    return np.prod(xs2 + xs2)
""",
    """
def f(a, b):
    xs1 = (3 * [a, -0.74, a]) + [a, b, b]
    xs2 = xs1.copy()
    xs2[0] = b * b
    return np.prod((xs2 + xs2)) + 1.35 * b + a
""",
    """
def f(a, b):
    d = {'x': a, 'y': b}
    e = d.copy()
    e['x'] = b * 2.0
    return d['x'] * e['x'] + e['y']
""",
    """
def f(a, b):
    x = np.array([a, b, a * b])
    y = x.copy()
    y[0] = 3.0
    return np.sum(x * y) + np.sum(y + y)
""",
]


@pytest.mark.parametrize("source", CASES)
def test_copy_keeps_the_type(source, make_fn):
    f = make_fn(source)
    args = (0.5, -0.3)
    for mode in MODES:
        value, gradient = s2s.value_and_grad(f, wrt=(0, 1), mode=mode, check=True)(*args)
        assert value == pytest.approx(f(*args), rel=1e-12)
        for i, g in enumerate(gradient):
            assert g == pytest.approx(_central(f, args, i), rel=1e-6, abs=1e-9), (mode, i)
