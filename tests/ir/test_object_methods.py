"""`obj.std()` on an argument that is not a NumPy array is the object's own method (s2s/ir/object_methods.py):
lowering reads `x.std()` as `np.std(x)`, which is exact only for arrays and numbers (a pandas Series divides by
n - 1; a class's `mean()` is its own)."""
import numpy as np
import pytest

import s2s
from s2s.errors import S2SError

MODES = ("auto", "reverse", "forward")


class Sample:
    """Array-like (NumPy converts it), with a std of its own: the sample standard deviation (n - 1)."""
    __slots__ = ("v",)

    def __init__(self, v):
        self.v = np.asarray(v, dtype=float)

    def __array__(self, dtype=None, copy=None):
        return self.v

    def std(self):
        return float(np.std(self.v, ddof=1))

    def scaled(self, k):
        return float(np.sum(self.v)) * k


class Summary:
    def __init__(self, v):
        self.v = v

    def mean(self):
        return 10.0


def _std_of(s):
    return s.std()


def through_a_helper(x, s):
    return x * _std_of(s)


def directly(x, s):
    return x * x * s.std()


def method_with_an_argument(x, s):
    return s.scaled(x) * x


@pytest.mark.parametrize("mode", MODES)
def test_an_array_like_object_gets_its_own_method(mode):
    s = Sample([1.0, 2.0, 4.0])
    right = np.std([1.0, 2.0, 4.0], ddof=1)
    assert np.isclose(s2s.grad(through_a_helper, mode=mode)(0.7, s), right)
    assert np.isclose(s2s.grad(directly, mode=mode)(0.7, s), 2 * 0.7 * right)
    assert np.isclose(s2s.grad(method_with_an_argument, mode=mode)(0.7, s), 2 * 0.7 * 7.0)


@pytest.mark.parametrize("mode", MODES)
def test_a_plain_class_method_named_like_numpy(mode):
    def f(x, o):
        return x * o.mean()
    assert np.isclose(s2s.grad(f, mode=mode)(0.7, Summary(np.ones(3))), 10.0)


@pytest.mark.parametrize("mode", MODES)
def test_an_array_still_reads_numpys_function(mode):
    x = np.array([0.3, 1.2, 2.0])
    g = s2s.grad(lambda x: x.std() * x.sum(), mode=mode)(x)
    h = 1e-6
    numeric = [((x + h * e).std() * (x + h * e).sum() - (x - h * e).std() * (x - h * e).sum()) / (2 * h)
               for e in np.eye(3)]
    assert np.allclose(g, numeric, rtol=1e-6)


def test_keywords_on_an_object_are_refused_at_the_place():
    def f(x, s):
        return x * s.std(ddof=0)
    with pytest.raises(S2SError, match=r"keyword arguments on an object") as info:
        s2s.grad(f)(0.7, Sample([1.0, 2.0]))
    assert "test_object_methods.py" in str(info.value)


def test_a_pandas_series_std_divides_by_n_minus_one():
    pd = pytest.importorskip("pandas", reason="pandas is not a dependency; the case is its Series.std")
    s = pd.Series([1.0, 2.0, 4.0])
    for mode in MODES:
        assert np.isclose(s2s.grad(through_a_helper, mode=mode)(0.7, s), s.std())
