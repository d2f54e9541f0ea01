"""JAX's other names (issue 28, item 3): s2s.jacfwd, s2s.jacrev (argnums, has_aux), s2s.linearize, s2s.vjp running
the function once, checked against central differences and against each other."""
import numpy as np
import pytest

import s2s

rng = np.random.default_rng(3)


def numeric_jacobian(f, x, eps=1e-6):
    x = np.asarray(x, dtype=float)
    out = np.asarray(f(x))
    J = np.zeros(out.shape + x.shape)
    for k in np.ndindex(x.shape):
        e = np.zeros_like(x)
        e[k] = eps
        J[(...,) + k] = (np.asarray(f(x + e)) - np.asarray(f(x - e))) / (2 * eps)
    return J


def layer(x, w):
    y = x
    for _ in range(3):
        y = np.tanh(y * w + 0.1)
    return y * 2.0


def with_aux(x, w):
    y = layer(x, w)
    return y, {"norm": np.sum(y ** 2)}


def scalar_and_vector(x, w):
    return np.sum(x * w), x[:2] * w[1]


X, W = rng.normal(size=3), rng.normal(size=3)


@pytest.mark.parametrize("maker", [s2s.jacfwd, s2s.jacrev])
def test_jacobians_against_central_differences(maker):
    np.testing.assert_allclose(maker(layer)(X, W), numeric_jacobian(lambda x: layer(x, W), X), rtol=1e-6, atol=1e-9)
    jx, jw = maker(layer, argnums=(0, 1))(X, W)
    np.testing.assert_allclose(jw, numeric_jacobian(lambda w: layer(X, w), W), rtol=1e-6, atol=1e-9)
    np.testing.assert_allclose(jx, numeric_jacobian(lambda x: layer(x, W), X), rtol=1e-6, atol=1e-9)


@pytest.mark.parametrize("maker", [s2s.jacfwd, s2s.jacrev])
def test_has_aux_and_names(maker):
    (jx, jw), aux = maker(with_aux, argnums=("x", "w"), has_aux=True)(X, W)
    assert aux["norm"] == pytest.approx(np.sum(layer(X, W) ** 2))
    np.testing.assert_allclose(jx, s2s.jacobian(layer)(X, W), rtol=1e-12)


@pytest.mark.parametrize("maker", [s2s.jacfwd, s2s.jacrev])
def test_a_tuple_of_outputs_gives_one_jacobian_each(maker):
    a, b = maker(scalar_and_vector, argnums=1)(X, W)
    np.testing.assert_allclose(a, X)
    np.testing.assert_allclose(b, [[0.0, X[0], 0.0], [0.0, X[1], 0.0]])


def test_forward_and_reverse_agree_on_a_wide_and_a_tall_jacobian():
    def wide(x):
        return np.array([np.sum(x ** 2), np.prod(x[:3])])

    def tall(x):
        return np.outer(x, x).ravel()
    x = rng.normal(size=5)
    np.testing.assert_allclose(s2s.jacfwd(wide)(x), s2s.jacrev(wide)(x), rtol=1e-12)
    np.testing.assert_allclose(s2s.jacfwd(tall)(x[:2]), s2s.jacrev(tall)(x[:2]), rtol=1e-12)


def test_linearize_gives_the_value_and_a_jvp_that_reuses_the_forward_sweep():
    def f(x, w):
        return np.sin(x) * w + np.sum(x ** 2)
    out, jvp_fn = s2s.linearize(f, X, W)
    np.testing.assert_allclose(out, f(X, W))
    tx, tw = rng.normal(size=3), rng.normal(size=3)
    expected = s2s.jvp(f, (X, W), (tx, tw))[1]
    np.testing.assert_allclose(jvp_fn(tx, tw), expected, rtol=1e-12)
    np.testing.assert_allclose(jvp_fn(tx, None), s2s.jvp(f, (X, W), (tx, None))[1], rtol=1e-12)
    assert np.allclose(jvp_fn(2 * tx, 2 * tw), 2 * expected)          # linear


def test_linearize_through_a_loop():
    out, jvp_fn = s2s.linearize(layer, X, W)
    np.testing.assert_allclose(out, layer(X, W))
    t = rng.normal(size=3)
    np.testing.assert_allclose(jvp_fn(t, np.zeros(3)), numeric_jacobian(lambda x: layer(x, W), X) @ t, rtol=1e-6)


def test_vjp_runs_the_function_once(monkeypatch):
    from s2s.driver import pipeline
    calls = []
    original = pipeline.call

    def counted(function, args):
        calls.append(function.__name__)
        return original(function, args)
    monkeypatch.setattr(pipeline, "call", counted)
    monkeypatch.setattr(s2s.api, "call", counted)
    monkeypatch.setenv("S2S_CHECK", "0")
    out, pullback = s2s.vjp(layer, X, W, check=False)
    g1 = pullback(np.ones(3))
    g2 = pullback(np.ones(3))              # twice: the saved forward sweep is read, not used up
    assert [c.endswith("_forward") for c in calls] == [True, False, False]
    J = numeric_jacobian(lambda x: layer(x, W), X)
    np.testing.assert_allclose(g1[0], np.ones(3) @ J, rtol=1e-6)
    np.testing.assert_allclose(g2[0], g1[0])
    np.testing.assert_allclose(out, layer(X, W))


def test_vjp_has_aux():
    out, pullback, aux = s2s.vjp(with_aux, X, W, has_aux=True)
    np.testing.assert_allclose(out, layer(X, W))
    assert aux["norm"] == pytest.approx(np.sum(out ** 2))
    np.testing.assert_allclose(pullback(np.ones(3))[1], np.ones(3) @ s2s.jacobian(layer, wrt=1)(X, W), rtol=1e-12)
