"""Constructs of library code as shipped (issue 25): what scikit-learn's and SciPy's functions do, written here in
their style. Each is checked against central differences or a closed form in reverse, forward and auto mode."""
import functools

import numpy as np
import pytest

import s2s

MODES = ("reverse", "forward", "auto")


def central(f, x, eps=1e-6):
    g = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        e = np.zeros_like(x)
        e[i] = eps
        g[i] = (f(x + e) - f(x - e)) / (2 * eps)
    return g


class Sparse:
    """Stands for a sparse matrix: the code reads its `.data`, an array an object holds."""

    def __init__(self):
        self.data = np.array([0.5, 2.0, 0.01])


SPARSE = Sparse()
EPSILON = 0.05


def divergence(W, X, mask_first=True):
    # sklearn's _beta_divergence: a branch on the kind of input, a boolean mask (a copy, not a view), a write into it
    import scipy.sparse as sp
    if sp.issparse(X):
        WH_data = SPARSE.data
        X_data = X.data
    else:
        WH = W @ W.T
        WH_data = WH.ravel()
        X_data = X.ravel()
    if mask_first:                   # (a flag: the array written into may be what an object holds, or a mask's copy)
        indices = X_data > EPSILON
        WH_data = WH_data[indices]
        X_data = X_data[indices]
    WH_data[WH_data < EPSILON] = EPSILON
    if sp.issparse(X):
        total = 0.0
    else:
        total = np.sum(WH ** 2)          # WH is bound on this path only, as the first branch decided
    return np.sum(X_data * np.log(X_data / WH_data)) + total


@pytest.mark.parametrize("mode", MODES)
def test_a_mask_selects_a_copy_and_a_variable_bound_on_one_path_is_read_on_it(mode):
    W = np.array([[0.5, 1.2], [0.8, -0.3], [1.1, 0.4]])
    X = np.array([[0.7, 0.04, 0.9], [0.3, 1.5, 0.2], [0.6, 0.8, 0.03]])
    got = s2s.grad(divergence, mode=mode, check=True)(W, X)
    assert np.allclose(got, central(lambda w: divergence(w, X), W), atol=1e-5)


def bound_on_one_path(x, limit):
    if np.sum(x) > 0:
        y = x * 2.0
    if np.sum(x) > limit:                   # another condition: Python finds y unbound when it holds alone
        return np.sum(y ** 2)
    return np.sum(x)


@pytest.mark.parametrize("mode", MODES)
def test_a_variable_bound_on_one_path_is_unbound_on_the_other_as_in_python(mode):
    x = np.array([1.0, 2.0])
    assert np.allclose(s2s.grad(bound_on_one_path, mode=mode, check=True)(x, 0.5), 8 * x)
    assert np.allclose(s2s.grad(bound_on_one_path, mode=mode, check=True)(-x, 0.5), np.ones(2))
    with pytest.raises(UnboundLocalError, match="'y'"):        # where Python raises it
        s2s.grad(bound_on_one_path, mode=mode, check=False)(-x, -5.0)
    h = s2s.hessian(bound_on_one_path)
    assert np.allclose(h(x, 0.5), 8 * np.eye(2)) and np.allclose(h(-x, 0.5), np.zeros((2, 2)))


def sparse_aware(x):
    import scipy.sparse as sp
    if sp.issparse(x):                     # decided by the argument's kind: an array is not sparse
        x = x.data                         # (an attribute of a differentiated value: never read)
    return np.sum(np.sin(x) * x)


@pytest.mark.parametrize("mode", MODES)
def test_a_type_test_the_arguments_kinds_decide_is_folded(mode):
    x = np.array([0.3, -1.2, 2.0])
    assert np.allclose(s2s.grad(sparse_aware, mode=mode, check=True)(x), np.cos(x) * x + np.sin(x))


def flatten_rest(x):
    b_ = np.moveaxis(x, 0, -1)
    return np.sum(b_.reshape(b_.shape[0], *b_.shape[1:]) ** 2)       # the shape as one tuple


@pytest.mark.parametrize("mode", MODES)
def test_reshape_with_star_arguments_of_a_length_known_when_it_runs(mode):
    x = np.arange(6.0).reshape(2, 3) / 4
    assert np.allclose(s2s.grad(flatten_rest, mode=mode)(x), 2 * x)


@functools.lru_cache(8)
def is_numpy(xp):
    return xp.__name__ == "numpy"


def as_array(a, xp=None):
    if xp is None:
        xp = np
    if is_numpy(xp):                      # memoized, of a module known now: decided when the code is read
        return np.asarray(a)
    try:                                   # (refused if read: never read)
        return xp.asarray(a)
    except TypeError:
        return a


def promoted(x):
    return np.sum(as_array(x, xp=np) ** 3)


@pytest.mark.parametrize("mode", MODES)
def test_a_module_argument_and_a_memoized_predicate_decide_a_branch(mode):
    x = np.array([0.5, -1.0, 2.0])
    assert np.allclose(s2s.grad(promoted, mode=mode, check=True)(x), 3 * x ** 2)


def iterable_or_list(x):
    y = np.asarray(x) if isinstance(x, list) or np.iterable(x) else x     # np.iterable is called as it is
    return np.sum(y ** 2)


@pytest.mark.parametrize("mode", MODES)
def test_a_condition_with_a_library_function_called_as_it_is(mode):
    # lowering's fallback for np.iterable (which s2s cannot read) once lost the condition: `if <undefined>`
    x = np.array([0.5, -1.0])
    assert np.allclose(s2s.grad(iterable_or_list, mode=mode, check=True)(x), 2 * x)


class Family:
    def __init__(self, power):
        self.power = power

    def loglike(self, mu):
        p = self.power                    # bound once from a value known now: the branches below are decided
        if p == 1:
            return np.sum(np.log(mu))
        elif p == 2:
            return np.sum(mu ** 2)
        try:                              # never read for p in (1, 2)
            return np.sum(mu ** p)
        except ValueError:
            return 0.0


@pytest.mark.parametrize("mode", MODES)
def test_a_local_bound_once_from_a_known_attribute_decides_branches(mode):
    mu = np.array([0.5, 1.5])
    assert np.allclose(s2s.grad(Family(1).loglike, mode=mode, check=True)(mu), 1 / mu)
    assert np.allclose(s2s.grad(Family(2).loglike, mode=mode, check=True)(mu), 2 * mu)
    assert float(np.sum(s2s.hessian(Family(1).loglike)(mu))) == pytest.approx(float(np.sum(-1 / mu ** 2)))


def test_an_array_namespace_is_read_as_numpy():
    sklearn = pytest.importorskip("sklearn", reason="scikit-learn's get_namespace (the corpus extra installs it)")
    from sklearn.utils._array_api import get_namespace

    def total(X):
        xp, _ = get_namespace(X)
        return xp.sum(xp.log(xp.stack([X, 2.0 * X]) ** 2)) + xp.pi
    X = np.array([[0.5, 1.5], [2.0, 0.25]])
    for mode in MODES:
        assert np.allclose(s2s.grad(total, mode=mode, check=True)(X), 4.0 / X), sklearn.__version__
