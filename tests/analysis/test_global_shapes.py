"""Arrays read from module globals and closures are specialized on like arguments (the fourth tester's G9).

Their shapes and dtypes decide the helpers as an argument's do (no `_scatter`, `_written`, `_shaped_like`...), and
the derivative checks them on entry: a global rebound to another shape, dtype or a list, or reshaped in place, is
never served by a derivative made for the old shape (s2s/analysis/global_shapes.py). Gradients against central
differences in both modes; work is counted (derivatives made, helpers and stacks in the code), never timed.
"""
import math

import numpy as np
import pytest

import s2s
import s2s.driver.pipeline
from conftest import central

MODES = ["reverse", "forward", "auto"]
GENERIC = ("_scatter(", "_written(", "_overwritten(", "_shaped_like(", "_unbroadcast(", "setitem(",
           "_broadcast_back(", "_matmul_left(", "_matmul_right(", "_expand(", "_add(")


def generic_helpers(source):
    return sorted(h for h in GENERIC if h in source)


@pytest.fixture
def generations(monkeypatch):
    """The derivatives made (each a transform), counted."""
    calls = []
    original = s2s.driver.pipeline.generate

    def counting(fn, options, kinds, *rest):
        calls.append(fn.__name__)
        return original(fn, options, kinds, *rest)
    monkeypatch.setattr(s2s.driver.pipeline, "generate", counting)
    monkeypatch.setattr(s2s.driver.pipeline, "_CACHE", type(s2s.driver.pipeline._CACHE)())
    monkeypatch.setenv("S2S_CHECK", "0")       # the checking mode makes a second, value-returning variant
    return calls


# ---------------------------------------------------------------- the stencil of G9

N = 7
U = np.random.default_rng(0).random((N, N))


def heat_global(k):
    u = U.copy()
    new = u.copy()
    for i in range(1, u.shape[0] - 1):
        for j in range(1, u.shape[1] - 1):
            new[i, j] = u[i, j] + k * (u[i + 1, j] + u[i - 1, j] + u[i, j + 1] + u[i, j - 1] - 4 * u[i, j])
    return new.sum() + new[2, 3] ** 2


def heat_argument(k, U):
    u = U.copy()
    new = u.copy()
    for i in range(1, u.shape[0] - 1):
        for j in range(1, u.shape[1] - 1):
            new[i, j] = u[i, j] + k * (u[i + 1, j] + u[i - 1, j] + u[i, j + 1] + u[i, j - 1] - 4 * u[i, j])
    return new.sum() + new[2, 3] ** 2


def make_heat(n):
    """The same stencil in a closure: U and n read from the enclosing function."""
    V = np.random.default_rng(1).random((n, n))

    def heat_closure(k):
        u = V.copy()
        new = u.copy()
        for i in range(1, n - 1):
            for j in range(1, n - 1):
                new[i, j] = u[i, j] + k * (u[i + 1, j] + u[i - 1, j] + u[i, j + 1] + u[i, j - 1] - 4 * u[i, j])
        return new.sum() + new[2, 3] ** 2

    def rebind(value):
        nonlocal V
        V = value
    return heat_closure, rebind


@pytest.mark.parametrize("mode", MODES)
def test_stencil_over_a_global_array(mode):
    assert s2s.grad(heat_global, mode=mode)(0.1) == pytest.approx(central(heat_global, 0.1), rel=1e-6)


@pytest.mark.parametrize("mode", MODES)
def test_stencil_over_a_closure_array(mode):
    f, _ = make_heat(6)
    assert s2s.grad(f, mode=mode)(0.1) == pytest.approx(central(f, 0.1), rel=1e-6)


@pytest.mark.parametrize("mode", MODES)
def test_the_global_stencil_is_the_argument_stencil(mode):
    """The code for U a global is the code for U an argument: no generic helper, as many stacks."""
    by_global = s2s.source(heat_global, 0.1, mode=mode)
    by_argument = s2s.source(heat_argument, 0.1, U, mode=mode)
    by_closure = s2s.source(make_heat(6)[0], 0.1, mode=mode)
    assert generic_helpers(by_global) == generic_helpers(by_closure) == generic_helpers(by_argument) == []
    assert by_global.count(".append(") == by_argument.count(".append(") <= 2     # per iteration: 1 and 1/n
    assert by_closure.count(".append(") <= by_argument.count(".append(")
    assert "_global_array(U, (7, 7), np.float64, 'U')" in by_global
    assert "_global_array(V, (6, 6), np.float64, 'V')" in by_closure


# ---------------------------------------------------------------- straight-line code: attention

rng = np.random.default_rng(2)
Q = rng.standard_normal((4, 3))
K = rng.standard_normal((4, 3))
VALUES = rng.standard_normal((4, 2))
MASK = np.tril(np.ones((4, 4), bool))
W0 = rng.standard_normal((3, 3)) * 0.5


def attention(Wq):
    q = Q @ Wq
    s = q @ K.T / math.sqrt(q.shape[-1])
    s = np.where(MASK, s, -1e9)
    s = s - s.max(axis=-1, keepdims=True)
    a = np.exp(s)
    a = a / a.sum(axis=-1, keepdims=True)
    out = a @ VALUES
    return np.sum(out ** 2)


@pytest.mark.parametrize("mode", MODES)
def test_attention_with_global_q_k_v(mode):
    g = s2s.grad(attention, mode=mode)(W0)
    assert g == pytest.approx(central(attention, W0), rel=1e-5, abs=1e-8)
    assert generic_helpers(s2s.source(attention, W0, mode=mode)) == []


def test_attention_second_order():
    v = np.linspace(-1.0, 1.0, 9).reshape(3, 3)
    grad = s2s.grad(attention, mode="reverse")
    expected = (grad(W0 + 1e-5 * v) - grad(W0 - 1e-5 * v)) / 2e-5
    assert s2s.hvp(attention)(W0, v) == pytest.approx(expected, rel=1e-5, abs=1e-7)


# ---------------------------------------------------------------- a global that changes

def scaled(k):
    A = np.asarray(G)
    return np.sum(np.sin(A * k)) + np.sum(A * k) ** 2


def summed(k):
    return np.sum(G * k) ** 2 + np.sum(np.sin(G * k))


G = np.array([0.5, -1.0, 2.0])


@pytest.mark.parametrize("mode", MODES)
def test_a_global_rebound_to_another_shape_dtype_or_a_list(mode, generations):
    global G
    g = s2s.grad(scaled, mode=mode)
    for value, made in [(np.array([0.5, -1.0, 2.0]), 1), (np.array([[0.5, 1.0], [0.3, -0.2]]), 2),
                        (np.array([0.5, -1.0, 2.0], np.float32), 3), ([0.5, 1.0], 4),
                        (np.array([0.5, -1.0, 2.0]), 5)]:
        G = value
        single = getattr(value, "dtype", None) == np.float32        # float32 arithmetic: a longer step
        expected = central(scaled, 0.3, 1e-3 if single else 1e-6)
        assert g(0.3) == pytest.approx(expected, rel=1e-3 if single else 1e-6)
        assert len(generations) == made, value
        assert g(0.3) == pytest.approx(expected, rel=1e-3 if single else 1e-6)
        assert len(generations) == made             # the second call: a cache hit
    G = np.array([0.5, -1.0, 2.0])


@pytest.mark.parametrize("mode", MODES)
def test_a_global_rebound_to_a_float_and_back(mode):
    """One call each: an array, a float, an array again (the float's derivative once served the array, silently
    giving an array as the gradient)."""
    global G
    g = s2s.grad(summed, mode=mode)
    try:
        for value in [np.array([0.5, -1.0, 2.0]), 2.0, np.array([0.5, -1.0, 2.0]), 0.5,
                      np.array([0.5, -1.0, 2.0])]:
            G = value
            found = g(0.3)
            assert np.shape(found) == ()
            assert found == pytest.approx(central(summed, 0.3), rel=1e-6)
    finally:
        G = np.array([0.5, -1.0, 2.0])


@pytest.mark.parametrize("mode", MODES)
def test_a_global_of_the_same_shape_changed_in_place_or_rebound(mode, generations):
    global U
    saved = U
    g = s2s.grad(heat_global, mode=mode)
    try:
        assert g(0.1) == pytest.approx(central(heat_global, 0.1), rel=1e-6)
        U = U * 2.0                     # rebound, same shape and dtype
        assert g(0.1) == pytest.approx(central(heat_global, 0.1), rel=1e-6)
        U[3, 3] = 5.0                   # written in place
        assert g(0.1) == pytest.approx(central(heat_global, 0.1), rel=1e-6)
        assert len(generations) == 1
    finally:
        U = saved


@pytest.mark.parametrize("mode", MODES)
def test_a_global_reshaped_in_place_is_never_served_by_the_old_derivative(mode, generations):
    global U
    saved = U
    U = np.random.default_rng(3).random((6, 6))
    g = s2s.grad(heat_global, mode=mode)
    try:
        assert g(0.1) == pytest.approx(central(heat_global, 0.1), rel=1e-6)
        U.shape = (4, 9)                # the same object, another shape
        assert g(0.1) == pytest.approx(central(heat_global, 0.1), rel=1e-6)
        assert len(generations) == 2
        U.resize((5, 5), refcheck=False)
        assert g(0.1) == pytest.approx(central(heat_global, 0.1), rel=1e-6)
        assert len(generations) == 3
        U.resize((6, 6), refcheck=False)        # back to a shape it was made for: that derivative again
        assert g(0.1) == pytest.approx(central(heat_global, 0.1), rel=1e-6)
        assert len(generations) == 3
    finally:
        U = saved


@pytest.mark.parametrize("mode", MODES)
def test_a_closure_array_rebound(mode, generations):
    f, rebind = make_heat(6)
    g = s2s.grad(f, mode=mode)
    assert g(0.1) == pytest.approx(central(f, 0.1), rel=1e-6)
    rebind(np.random.default_rng(4).random((6, 6)))            # same shape: the same derivative
    assert g(0.1) == pytest.approx(central(f, 0.1), rel=1e-6)
    assert len(generations) == 1
    rebind(np.random.default_rng(5).random((8, 8)))            # another shape: made anew
    assert g(0.1) == pytest.approx(central(f, 0.1), rel=1e-6)
    rebind(np.random.default_rng(6).random((6, 6)).astype(np.float32))
    assert g(0.1) == pytest.approx(central(f, 0.1, 1e-2), rel=1e-3)          # quadratic in k: exact
    assert len(generations) == 3


def test_the_check_raises_global_changed_when_called_directly():
    """The generated function itself refuses a global of another shape (the dispatcher makes it anew)."""
    global G
    G = np.array([0.5, -1.0, 2.0])
    _, function = s2s.driver.pipeline.compiled(scaled, s2s.driver.pipeline.Options((0,), mode="reverse"), (0.3,), check=False)
    try:
        G = np.zeros(4)
        with pytest.raises(s2s.analysis.global_shapes.GlobalChanged, match="'G'"):
            function(0.3)
    finally:
        G = np.array([0.5, -1.0, 2.0])


def test_an_exported_derivative_checks_its_globals():
    text = s2s.export(attention, W0, mode="reverse")
    assert "the global Q is not a float64 array of shape (4, 3)" in text
    assert generic_helpers(text) == []


def test_without_specialization_no_check():
    """optimize=False: the generic code, which serves any shape, reads the globals live."""
    text = s2s.source(heat_global, 0.1, mode="reverse", optimize=False)
    assert "_global_array" not in text
    g = s2s.grad(heat_global, mode="reverse", optimize=False)
    assert g(0.1) == pytest.approx(central(heat_global, 0.1), rel=1e-6)


W = np.array([0.5, -1.0, 2.0, 0.7])


_rng = np.random.default_rng(0)


FROZEN = [(_rng.standard_normal((3, 4)), _rng.standard_normal(4)), (_rng.standard_normal((4, 2)), _rng.standard_normal(2))]


class Rows:
    reads = 0

    def __init__(self, X):
        self.X = X

    def __len__(self):
        return len(self.X)

    def __getitem__(self, i):
        Rows.reads += 1
        return self.X[i]


ROWS = Rows(_rng.standard_normal((500, 3)))


def saliency(x):
    h = x
    for W, b in FROZEN:
        h = np.tanh(h @ W + b)
    return np.sum(h) + np.sum(np.tanh(ROWS[0] @ x[:, None] * 0.1))


@pytest.mark.parametrize("mode", MODES)
def test_a_ragged_global_list_and_a_dataset_object_are_read_as_the_code_reads_them(mode):
    """Outside round 5, K26: a module-level container the function reads may be ragged (a frozen list of (W, b) layers)
    or an object read item by item (a dataset): s2s looks at what it holds without making an array of it (a ValueError)
    and without reading every item through __getitem__."""
    x = np.array([0.3, -0.2, 0.8])
    Rows.reads = 0
    got = s2s.grad(saliency, mode=mode)(x)
    np.testing.assert_allclose(got, central(saliency, x), rtol=1e-6, atol=1e-9)
    assert Rows.reads < 50              # the function's own reads (each sweep, the checking mode), not 500
