"""Numerics that follow NumPy's IEEE behaviour, threads, and the cache."""
import gc
import math
import threading
import warnings
import weakref

import numpy as np
import pytest

import s2s
import s2s.api
import s2s.driver.pipeline


# ---------------------------------------------------------------- numerics

def where_sqrt(x):
    return np.sum(np.where(x > 0, np.sqrt(x), 0.0))


def where_xlogx(x):
    return np.sum(np.where(x > 0, x * np.log(x), 0.0))


def relu_sqrt(x):
    return np.sum(np.sqrt(np.maximum(x, 0.0) + 1.0) * np.abs(x))


def test_where_does_not_turn_the_branch_not_taken_into_nan():
    x = np.array([-2.0, -0.5, 0.0, 4.0])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)     # the primal itself takes sqrt(-2)
        g = s2s.grad(where_sqrt)(x)
        h = s2s.grad(where_xlogx)(x)
    assert np.all(np.isfinite(g)) and g == pytest.approx([0.0, 0.0, 0.0, 0.25])
    assert np.all(np.isfinite(h)) and h == pytest.approx([0.0, 0.0, 0.0, math.log(4.0) + 1])


def test_maximum_and_abs_stay_finite():
    x = np.array([-1.0, 0.5, 2.0])
    g = s2s.grad(relu_sqrt)(x)
    assert np.all(np.isfinite(g))
    s2s.check_grad(relu_sqrt, x)


def test_log_at_zero_gives_inf_and_a_warning_like_numpy():
    def f(x):
        return np.sum(np.log(x))

    with pytest.warns(RuntimeWarning):
        g = s2s.grad(f)(np.array([0.0, 1.0]))
    assert g[0] == np.inf and g[1] == 1.0


def test_nan_in_the_primal_gives_nan_in_the_gradient():
    def f(x):
        return np.sum(np.sqrt(x) * 2.0)

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        g = s2s.grad(f)(np.array([-1.0, 4.0]))
    assert np.isnan(g[0]) and g[1] == pytest.approx(0.5)


def test_float32_in_float32_out():
    def f(x, W):
        return np.sum(np.tanh(W @ x) ** 2) + np.mean(x)

    x, W = np.ones(3, dtype=np.float32), np.full((2, 3), 0.1, dtype=np.float32)
    gx, gW = s2s.grad(f, wrt=(0, 1))(x, W)
    assert gx.dtype == np.float32 and gW.dtype == np.float32


# ---------------------------------------------------------------- threads and the cache

def test_eight_threads_first_call_transform_once(make_fn, monkeypatch):
    f = make_fn("def f(x):\n    return x * x * x\n")
    calls = []
    original = s2s.driver.pipeline.generate

    def counting(*args):
        calls.append(1)
        return original(*args)
    monkeypatch.setattr(s2s.driver.pipeline, "generate", counting)
    monkeypatch.setenv("S2S_CHECK", "0")       # the checking mode would make a value-returning variant too
    gradient = s2s.grad(f)
    barrier = threading.Barrier(8)
    results = [None] * 8

    def work(k):
        barrier.wait()
        results[k] = gradient(float(k))
    threads = [threading.Thread(target=work, args=(k,)) for k in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert results == [3.0 * k * k for k in range(8)]
    assert len(calls) == 1


def test_the_cache_keeps_no_function_alive(make_fn):
    f = make_fn("def f(x):\n    return np.sum(x * x)\n")
    g = s2s.grad(f)
    g(np.ones(3))
    s2s.grad(f, wrt=0, mode="forward")(np.ones(2))
    alive = weakref.ref(f)
    del f, g
    gc.collect()
    assert alive() is None


def test_redefining_a_function_is_picked_up(make_fn):
    source = "def f(x):\n    return x * {}\n"
    namespace = {}
    first = make_fn(source.format(2.0), namespace=namespace)
    assert s2s.grad(first)(1.0) == 2.0
    second = make_fn(source.format(5.0), namespace=namespace)       # as a notebook cell run again
    assert s2s.grad(second)(1.0) == 5.0
