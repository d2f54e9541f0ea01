"""Lean derivatives: fixed-length containers unrolled (no container helpers), temporaries that do not outlive
their use (peak memory against the hand-written gradient), shape checks of exported code."""
import tracemalloc

import numpy as np
import pytest

import s2s
from s2s.testing import check_grads
from conftest import PYTHON

HELPERS = ("_zeros_like_tree", "_scatter", "_add(", "_item", "_fill_tree", "_unbroadcast", "_broadcast_back",
           "_reduced_size", "_expand", "_fill(", "_matmul_", "_shaped_like")


# ---------------------------------------------------------------- containers, written as people write them

def layers_loss(params, X, Y):
    """An MLP whose parameters are a list of (W, b) pairs."""
    h = X
    for W, b in params:
        h = np.tanh(h @ W + b)
    return np.mean((h - Y) ** 2)


class Model:
    """A model object whose method takes its layers' weights, a list, and loops over them."""

    def loss(self, layers, X):
        h = X
        for layer in layers:
            h = np.sin(h @ layer) * 0.7
        return np.sum(h * h)


class Stack:
    """A model holding its layers: `for layer in self.layers`, differentiated with respect to the input."""

    def __init__(self, layers):
        self.layers = layers

    def energy(self, X):
        h = X
        for layer in self.layers:
            h = np.tanh(h @ layer)
        return np.sum(h * h)


def pair_of_arrays(x, y):
    total = 0.0
    for a in (x, y):
        total = total + np.sum(a * a) * 0.5
    return total


def tuple_of_parameters(p, X):
    W, b = p
    return np.sum(np.tanh(X @ W + b) ** 2)


def dict_of_parameters(params, X):
    hidden = np.tanh(X @ params["W1"] + params["b1"])
    return np.mean((hidden @ params["W2"]) ** 2)


def _rng():
    return np.random.default_rng(3)


def _layers_args():
    rng = _rng()
    params = [(rng.normal(size=(3, 4)) * 0.5, rng.normal(size=4) * 0.1),
              (rng.normal(size=(4, 4)) * 0.5, rng.normal(size=4) * 0.1),
              (rng.normal(size=(4, 2)) * 0.5, rng.normal(size=2) * 0.1)]
    return params, rng.normal(size=(5, 3)), rng.normal(size=(5, 2))


def _model_args():
    rng = _rng()
    return [rng.normal(size=(3, 4)) * 0.5, rng.normal(size=(4, 2)) * 0.5], rng.normal(size=(5, 3))


CONTAINER_CASES = {
    "list of (W, b) pairs": (layers_loss, _layers_args, 0),
    "method over a list of layers": (Model().loss, _model_args, 0),
    "tuple literal iterated": (pair_of_arrays, lambda: (_rng().normal(size=3), _rng().normal(size=(2, 2))), (0, 1)),
    "tuple of parameters": (tuple_of_parameters,
                            lambda: ((_rng().normal(size=(3, 2)), _rng().normal(size=2)), _rng().normal(size=(4, 3))),
                            0),
    "dict of parameters": (dict_of_parameters,
                           lambda: ({"W1": _rng().normal(size=(3, 4)), "b1": _rng().normal(size=4),
                                     "W2": _rng().normal(size=(4, 2))}, _rng().normal(size=(5, 3))), 0),
}


@pytest.mark.parametrize("name", CONTAINER_CASES)
def test_fixed_length_containers_need_no_helpers(name):
    fn, make, wrt = CONTAINER_CASES[name]
    text = s2s.source(fn, *make(), wrt=wrt, mode="reverse")
    for helper in HELPERS:
        assert helper not in text, (helper, text)
    assert "def _" not in text and "_stack" not in text, text      # no helper copied in, no loop left


@pytest.mark.parametrize("name", CONTAINER_CASES)
def test_fixed_length_containers_against_central_differences(name):
    fn, make, wrt = CONTAINER_CASES[name]
    args = make()
    check_grads(fn, args, order=1, modes=("reverse", "forward"), wrt=wrt)


def test_a_loop_over_the_models_own_layers_needs_no_container_helpers():
    """self.layers is read when the derivative runs (its length is not known when it is made): the loop stays
    a loop, and nothing of the container is differentiated."""
    layers, X = _model_args()
    model = Stack(layers)
    text = s2s.source(model.energy, X, mode="reverse")
    for helper in ("_zeros_like_tree", "_scatter", "_add(", "_item", "_fill_tree"):
        assert helper not in text, helper
    check_grads(model.energy, (X,), order=1, modes=("reverse", "forward"))


def test_the_gradient_of_a_container_has_its_structure():
    params, X, Y = _layers_args()
    g = s2s.grad(layers_loss)(params, X, Y)
    assert type(g) is list and all(type(p) is tuple for p in g)
    assert [tuple(np.shape(a) for a in p) for p in g] == [tuple(np.shape(a) for a in p) for p in params]
    d = s2s.grad(dict_of_parameters)(*CONTAINER_CASES["dict of parameters"][1]())
    assert list(d) == ["W1", "b1", "W2"]


def test_another_structure_gets_its_own_derivative():
    """Specialized on the items' shapes: a list of other shapes (or length) is not given the first's code."""
    params, X, Y = _layers_args()
    gradient = s2s.grad(layers_loss)
    first = gradient(params, X, Y)
    rng = _rng()
    wider = [(rng.normal(size=(3, 6)), np.zeros(6)), (rng.normal(size=(6, 2)), np.zeros(2))]
    second = gradient(wider, X, Y)
    assert [p[0].shape for p in second] == [(3, 6), (6, 2)]
    assert [p[0].shape for p in first] == [(3, 4), (4, 4), (4, 2)]
    expected = s2s.grad(layers_loss, optimize=False)(wider, X, Y)
    for got, want in zip(second, expected):
        assert np.allclose(got[0], want[0], rtol=1e-12) and np.allclose(got[1], want[1], rtol=1e-12)


def test_a_partly_used_container_gets_zeros_where_nothing_flows():
    def first_only(p, X):
        return np.sum(X @ p[0])
    p = (np.ones((3, 2)), np.ones(5))
    text = s2s.source(first_only, p, np.ones((4, 3)), mode="reverse")
    assert "_fill_tree" not in text and "np.zeros_like" in text
    dW, db = s2s.grad(first_only)(p, np.ones((4, 3)))
    assert np.array_equal(dW, np.full((3, 2), 4.0)) and np.array_equal(db, np.zeros(5))


# ---------------------------------------------------------------- memory: temporaries that do not outlive their use

def logistic(w, b, X, y):
    z = X @ w + b
    return np.mean(np.logaddexp(0.0, z) - y * z)


def logistic_by_hand(w, b, X, y):
    z = X @ w + b
    r = (1.0 / (1.0 + np.exp(-z)) - y) / len(y)
    return X.T @ r, np.sum(r)


def mlp(W1, b1, W2, b2, X, Y):
    hidden = np.tanh(X @ W1 + b1)
    out = hidden @ W2 + b2
    return np.mean((out - Y) ** 2)


def mlp_by_hand(W1, b1, W2, b2, X, Y):
    hidden = np.tanh(X @ W1 + b1)
    out = hidden @ W2 + b2
    dout = 2.0 * (out - Y) / out.size
    dhidden = dout @ W2.T * (1.0 - hidden * hidden)
    return X.T @ dhidden, dhidden.sum(axis=0), hidden.T @ dout, dout.sum(axis=0)


def _peak(f, *args) -> int:
    """Bytes allocated at the peak of one call, beyond what was held before it (tracemalloc: deterministic)."""
    f(*args)                        # made and cached first: the transform's own memory is not counted
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        f(*args)
        return tracemalloc.get_traced_memory()[1] - before
    finally:
        tracemalloc.stop()


def test_logistic_gradient_at_100000_peaks_below_the_hand_written_one():
    rng = np.random.default_rng(0)
    n = 100_000
    X, y, w = rng.normal(size=(n, 10)), (rng.random(n) < 0.5).astype(float), rng.normal(size=10) * 0.1
    gradient = s2s.grad(logistic, wrt=(0, 1))
    dw, db = gradient(w, 0.3, X, y)
    hw, hb = logistic_by_hand(w, 0.3, X, y)
    assert np.allclose(dw, hw, rtol=1e-10) and np.isclose(db, hb, rtol=1e-10)
    assert type(dw) is np.ndarray and dw.dtype == np.float64
    ratio = _peak(gradient, w, 0.3, X, y) / _peak(logistic_by_hand, w, 0.3, X, y)
    assert ratio <= 0.8, ratio              # 2 arrays of n floats at the peak against the hand-written 3


def test_mlp_gradient_peaks_no_higher_than_the_hand_written_one():
    rng = np.random.default_rng(1)
    args = (rng.normal(size=(64, 128)) * 0.1, np.zeros(128), rng.normal(size=(128, 10)) * 0.1, np.zeros(10),
            rng.normal(size=(1024, 64)), rng.normal(size=(1024, 10)))
    gradient = s2s.grad(mlp, wrt=(0, 1, 2, 3))
    for got, want in zip(gradient(*args), mlp_by_hand(*args)):
        assert np.allclose(got, want, rtol=1e-10)
    assert _peak(gradient, *args) <= 1.0 * _peak(mlp_by_hand, *args)


def test_large_temporaries_are_reused_and_adjoints_keep_their_dtype():
    rng = np.random.default_rng(2)
    n = 50_000
    X, y, w = rng.normal(size=(n, 4)), (rng.random(n) < 0.5).astype(float), rng.normal(size=4) * 0.1
    text = s2s.source(logistic, w, 0.3, X, y, wrt=(0, 1)).split("def logistic_grad")[1]
    assert "out=" in text and "*=" in text      # np.tanh(z, out=z), z *= -0.5: no new array of n floats
    small = s2s.source(logistic, w, 0.3, X[:8], y[:8], wrt=(0, 1)).split("def logistic_grad")[1]
    assert "out=" not in small and "*=" not in small        # small arrays: nested expressions, as people write
    X32, y32, w32 = X.astype(np.float32), y.astype(np.float32), w.astype(np.float32)
    dw, db = s2s.grad(logistic, wrt=(0, 1))(w32, np.float32(0.3), X32, y32)
    assert dw.dtype == np.float32
    hw, hb = logistic_by_hand(w, 0.3, X, y)
    assert np.allclose(dw, hw, rtol=1e-3, atol=1e-5)


# ---------------------------------------------------------------- shapes from example arguments: CLI and export

def test_exported_specialized_module_checks_shapes_on_entry(tmp_path):
    X, y, w = np.ones((6, 3)), np.ones(6), np.zeros(3)
    text = s2s.export(logistic, w, 0.3, X, y, wrt=(0, 1))
    assert "_unbroadcast" not in text and "np.shape(X) != (6, 3)" in text
    namespace: dict = {}
    exec(compile(text, str(tmp_path / "exported.py"), "exec"), namespace)
    gradient = namespace["logistic_grad"]
    assert np.allclose(gradient(w, 0.3, X, y)[0], logistic_by_hand(w, 0.3, X, y)[0])
    with pytest.raises(ValueError, match=r"argument 'X' has the shape \(5, 3\).*exported for the shape \(6, 3\)"):
        gradient(w, 0.3, np.ones((5, 3)), np.ones(5))


def test_cli_source_is_specialized_on_args(tmp_path):
    module = tmp_path / "lean_cli_case.py"
    module.write_text("import numpy as np\n\n\ndef loss(w, X):\n    return np.sum(np.tanh(X @ w) ** 2)\n")
    result = PYTHON.run("-m", "s2s", f"{module}:loss", "--args", "np.ones(3), np.ones((4, 3))", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert "shape (4, 3)" in result.stdout and "X.T @" in result.stdout and "_matmul_right" not in result.stdout


def test_exported_module_checks_the_items_of_containers_too():
    params, X, Y = _layers_args()
    namespace: dict = {}
    exec(s2s.export(layers_loss, params, X, Y), namespace)
    gradient = namespace["layers_loss_grad"]
    for got, want in zip(gradient(params, X, Y), s2s.grad(layers_loss, optimize=False)(params, X, Y)):
        assert np.allclose(got[0], want[0], rtol=1e-12) and np.allclose(got[1], want[1], rtol=1e-12)
    with pytest.raises(ValueError, match="argument 'params' has the length 2; .* for the length 3"):
        gradient(params[:2], X, Y)
    with pytest.raises(ValueError, match=r"'params' at params\[2\]\[1\] has the shape \(3,\); .* \(2,\)"):
        gradient([params[0], params[1], (params[2][0], np.ones(3))], X, Y)


def test_a_list_of_numbers_is_not_specialized_on_its_length():
    def horner(x, coefficients):
        y = 0.0
        for c in coefficients:
            y = y * x + c
        return y
    gradient = s2s.grad(horner, wrt=0, mode="reverse")
    assert gradient(2.0, [1.0, 2.0, 3.0]) == pytest.approx(2 * 2.0 + 2.0)
    made = len(s2s.api._CACHE[horner])
    assert gradient(2.0, [1.0, 2.0, 3.0, 4.0]) == pytest.approx(3 * 4.0 + 2 * 2 * 2.0 + 3.0)
    assert len(s2s.api._CACHE[horner]) == made       # one derivative for both lengths: the loop stays a loop
