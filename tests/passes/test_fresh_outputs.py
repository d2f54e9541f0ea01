"""A derivative's outputs are never the caller's arrays (the tester's W4; s2s/passes/fresh_outputs.py).

The gradient of `np.sum(w * x)` along w is x: optimized, the derivative was `return x`, so `g = s2s.grad(loss)(w, x)`
then `g *= 0.1` (a learning rate, clipping) changed the caller's x, and a program using the gradient got a wrong
value. Likewise hvp gave back v, jvp its tangent (and for `t + 0.0` the primal t), vjp its cotangent, and the
value of value_and_grad or vjp could be an argument. Python, autograd and JAX all return new arrays. Now every
output that is an argument, a global or a view of one is copied at the return (`np.copy`, readable in the source),
and one computed from them by an operation that may return its argument is copied when it shares memory with them
(`_unshared`, a check when it runs); numbers are returned as they are."""
import numpy as np
import pytest

import s2s
from s2s.runtime import _leaves
from conftest import agrees

MODES = ["auto", "reverse", "forward"]
W = np.array([1.0, 2.0, -0.5])
X = np.array([3.0, 4.0, 0.25])


def _shares(out, *arrays):
    return any(np.shares_memory(a, b) for a in _leaves(out) for b in arrays)


def loss(w, x):
    return np.sum(w * x)


@pytest.mark.parametrize("mode", MODES)
def test_a_gradient_that_is_an_argument_is_a_copy(mode):
    w, x = W.copy(), X.copy()
    g = s2s.grad(loss, mode=mode)(w, x)
    assert g is not x and not _shares(g, w, x)
    np.testing.assert_array_equal(g, X)         # the closed form: d/dw sum(w x) = x
    g *= 0.1                                    # the caller scales its gradient in place
    np.testing.assert_array_equal(x, X)
    np.testing.assert_array_equal(w, W)
    agrees(loss, (W.copy(), X.copy()), mode=mode)


@pytest.mark.parametrize("mode", MODES)
def test_value_and_grad_and_several_gradients(mode):
    w, x = W.copy(), X.copy()
    value, g = s2s.value_and_grad(loss, mode=mode)(w, x)
    assert value == pytest.approx(np.sum(W * X)) and not _shares(g, w, x)
    gw, gx = s2s.grad(loss, wrt=(0, 1), mode="reverse" if mode == "forward" else mode)(w, x)
    assert not _shares((gw, gx), w, x)
    np.testing.assert_array_equal(gw, X)
    np.testing.assert_array_equal(gx, W)
    gw *= 2.0
    gx *= 2.0
    np.testing.assert_array_equal(x, X)
    np.testing.assert_array_equal(w, W)


def test_a_mean_whose_factor_simplifies_to_one():
    w, x = W.copy(), X.copy()
    f = lambda w, X: 3.0 * np.mean(w * X)       # noqa: E731 - the tester's program: 3/3 = 1, the gradient is X
    g = s2s.grad(f)(w, x)
    assert not _shares(g, x)
    np.testing.assert_allclose(g, X, rtol=1e-15)
    agrees(f, (W.copy(), X.copy()))


def test_a_dict_of_gradients():
    x = X.copy()
    grads = s2s.grad(lambda p, X: np.sum(p["w"] * X) + np.sum(p["b"] * X))({"w": W.copy(), "b": W.copy()}, x)
    assert not _shares(grads, x) and not np.shares_memory(grads["w"], grads["b"])
    np.testing.assert_array_equal(grads["w"], X)
    grads["w"] *= 0.0
    np.testing.assert_array_equal(grads["b"], X)
    np.testing.assert_array_equal(x, X)


def test_hvp_jvp_and_vjp():
    w, v = W.copy(), X.copy()
    h = s2s.hvp(lambda t: 0.5 * np.sum(t ** 2))(w, v)        # the Hessian is the identity: H v = v
    assert not _shares(h, w, v)
    np.testing.assert_array_equal(h, X)
    out, tangent = s2s.jvp(lambda t: t + 0.0, (w,), (v,))
    assert not _shares((out, tangent), w, v)
    np.testing.assert_array_equal(out, W)
    np.testing.assert_array_equal(tangent, X)
    out, pullback = s2s.vjp(lambda t: t * 1.0, w)
    ct = X.copy()
    g, = pullback(ct)
    assert not _shares((out, g), w, ct)
    np.testing.assert_array_equal(g, X)
    out *= 0.0
    g *= 0.0
    for a, b in ((w, W), (v, X), (ct, X)):
        np.testing.assert_array_equal(a, b)


def test_views_of_an_argument():
    A = np.arange(6.0).reshape(2, 3)
    B = np.ones((2, 3))
    out, tangent = s2s.jvp(lambda t: t.T, (A,), (B,))
    assert not _shares((out, tangent), A, B)
    np.testing.assert_array_equal(tangent, B.T)
    out, pullback = s2s.vjp(lambda t: t[1:], A)
    assert not _shares(out, A)
    np.testing.assert_array_equal(out, A[1:])
    np.testing.assert_array_equal(pullback(np.ones((1, 3)))[0], [[0.0, 0.0, 0.0], [1.0, 1.0, 1.0]])


def test_the_jacobian_and_the_hessian():
    w = W.copy()
    J = s2s.jacobian(lambda t: t + 0.0)(w)
    H = s2s.hessian(lambda t: 0.5 * np.sum(t ** 2))(w)
    assert not _shares((J, H), w)
    np.testing.assert_array_equal(J, np.eye(3))
    np.testing.assert_array_equal(H, np.eye(3))


@pytest.mark.parametrize("mode", MODES)
def test_a_float_gradient_stays_a_float(mode):
    g = s2s.grad(lambda a, b: a * b, mode=mode)(2.0, 3.0)
    assert type(g) is float and g == 3.0
    assert s2s.grad(s2s.grad(lambda a, b: a * a * b))(2.0, 3.0) == pytest.approx(6.0)


def test_the_copy_is_in_the_generated_source():
    source = s2s.source(loss, W, X, mode="reverse")
    assert "np.copy(x)" in source


def test_a_program_that_changes_its_gradient_in_place():
    """The tester's program: G += 1.0 changed the caller's X through the gradient (22.0, not 19.0)."""
    DG = s2s.grad(loss)

    def outer(w, X):
        G = DG(w, X)
        G += 1.0
        return np.sum(G * w) + np.sum(X * w)

    w, X2 = np.array([1.0, 2.0]), np.array([2.0, 3.0])
    assert outer(w, X2) == pytest.approx(2 * np.sum(np.array([2.0, 3.0]) * w) + np.sum(w))
    np.testing.assert_array_equal(X2, [2.0, 3.0])


def test_unshared_copies_only_what_shares_memory():
    from s2s.runtime import _copied, _unshared
    a, b = np.arange(4.0), np.ones(3)
    assert _unshared(b, a) is b                         # nothing shared: no copy
    view = _unshared(a[1:], a)
    assert not np.shares_memory(view, a) and list(view) == [1.0, 2.0, 3.0]
    got = _unshared({"p": a, "q": [b, 2.0]}, {"k": a})  # arguments that are containers: their arrays
    assert not np.shares_memory(got["p"], a) and got["q"][0] is b and got["q"][1] == 2.0
    assert _copied(2.5) == 2.5 and not np.shares_memory(_copied((a,))[0], a)


def test_unshared_finds_views_of_views_and_arrays_over_one_buffer():
    from s2s.runtime import _unshared
    a = np.arange(12.0)
    view = a.reshape(3, 4)[1:].T                        # a view of a view of a
    assert not np.shares_memory(_unshared(view, a), a)
    assert not np.shares_memory(_unshared(a, view), a)  # the argument is the view
    assert _unshared(view, np.arange(3.0)) is view
    buffer = bytearray(64)
    one, other = np.frombuffer(buffer, dtype=np.float64), np.frombuffer(buffer, dtype=np.float64)[2:]
    assert not np.shares_memory(_unshared(other, one), one)


def test_a_batched_gradient():
    w, rows = W.copy(), np.stack([X, 2.0 * X])
    G = s2s.vmap(s2s.grad(loss), in_axes=(None, 0))(w, rows)
    assert not _shares(G, w, rows)
    np.testing.assert_array_equal(G, np.stack([X, 2.0 * X]))
    G *= 0.0
    np.testing.assert_array_equal(rows, np.stack([X, 2.0 * X]))


G = np.array([1.0, 2.0, 4.0])


def test_a_derivative_of_numbers_alone_skips_the_analyses_and_one_reading_a_global_does_not(monkeypatch):
    """Nothing a derivative of numbers returns can share memory (no array argument, global or constant): its
    outputs are its own without the kinds and roots of every value (two walks of the dataflow engine, a tenth of
    a 5,000-line function's first call). A global array read makes them run."""
    import math
    from s2s.passes import fresh_outputs
    calls = []
    real = fresh_outputs.value_kinds
    monkeypatch.setattr(fresh_outputs, "value_kinds", lambda *a: calls.append(1) or real(*a))

    def numbers(x, y):
        return math.sin(x) * y + x * x

    gx, gy = s2s.grad(numbers, wrt=(0, 1))(0.3, 0.7)
    assert (gx, gy) == pytest.approx((math.cos(0.3) * 0.7 + 0.6, math.sin(0.3)))
    assert calls == []

    def reads_global(x):
        return np.sum(G) * x

    assert s2s.grad(reads_global)(0.5) == pytest.approx(7.0)
    assert calls
