"""What s2s keeps is freed and bounded (issue 27, item 13).

Closures, and functions reading a global number, were never freed once differentiated (the cache, a
WeakKeyDictionary, held the function through its own IR: 3,000 closures kept 80 MB); the cache of
specializations had no bound (10,000 batch sizes kept 48 MB and 10,000 linecache entries). What s2s makes of a
function is kept on the function now (s2s/kept.py), the cache keeps the `s2s.cache_size()` derivatives used last
(S2S_CACHE_SIZE), a generated source leaves linecache with its code, and `s2s.clear_cache()` forgets them all.
"""
import gc
import linecache
import pickle
import tracemalloc
import weakref

import numpy as np
import pytest

import s2s
from s2s.driver import pipeline
from s2s.kept import ATTRIBUTE, FunctionTable

SCALE = 3.0


def _make_closure(a):
    def helper(x):
        return a * x

    def f(x):
        return helper(x) * x + SCALE * np.sin(x)       # a closure variable, a helper closure, a global number
    return f


def _expected(a, x):
    return 2 * a * x + SCALE * np.cos(x)


@pytest.fixture
def size():
    """cache_size, put back after the test."""
    before = s2s.cache_size()
    yield s2s.cache_size
    s2s.cache_size(before)


def _generated_sources(of=""):
    return [name for name in linecache.cache if name.startswith("<s2s-") and of in name]


def _freed(reference):
    gc.collect()
    return reference() is None


@pytest.mark.parametrize("make", [
    lambda f: s2s.grad(f)(0.5),
    lambda f: s2s.grad(f, mode="reverse")(0.5),
    lambda f: s2s.grad(f, mode="forward")(0.5),
    lambda f: s2s.value_and_grad(f)(0.5),
    lambda f: s2s.hvp(f)(0.5, 1.0),
    lambda f: s2s.jvp(f, (0.5,), (1.0,)),
    lambda f: s2s.grad(s2s.grad(f))(0.5),
    lambda f: s2s.source(f, 0.5),
], ids=["auto", "reverse", "forward", "value_and_grad", "hvp", "jvp", "second", "source"])
def test_a_closure_is_freed_with_its_derivative(make):
    f = _make_closure(2.0)
    make(f)
    reference = weakref.ref(f)
    del f
    assert _freed(reference)


def test_the_closure_gives_its_own_numbers_until_it_is_dropped():
    fs = [_make_closure(a) for a in (1.0, 2.0, 3.0)]
    for a, f in zip((1.0, 2.0, 3.0), fs):
        for mode in ("auto", "reverse", "forward"):
            assert s2s.grad(f, mode=mode)(0.5) == pytest.approx(_expected(a, 0.5))
    references = [weakref.ref(f) for f in fs]
    del f, fs
    assert all(_freed(r) for r in references)


def test_a_function_reading_a_global_number_is_freed(make_fn):
    f = make_fn("def f(x):\n    return K * x * x\n", namespace={"K": 4.0})
    assert s2s.grad(f)(1.5) == pytest.approx(12.0)
    reference = weakref.ref(f)
    del f
    assert _freed(reference)


def test_a_lambda_is_freed():
    g = lambda x: SCALE * x ** 3
    assert s2s.grad(g)(1.0) == pytest.approx(9.0)
    reference = weakref.ref(g)
    del g
    assert _freed(reference)


def test_dropping_closures_frees_what_was_made_of_them():
    for a in range(10):                 # (warm: rules, tables)
        s2s.grad(_make_closure(float(a)), check=False)(0.5)
    gc.collect()
    before = len(gc.get_objects())
    for a in range(40):
        f = _make_closure(float(a))
        assert s2s.grad(f, check=False)(0.5) == pytest.approx(_expected(a, 0.5))
    del f
    gc.collect()
    grown = len(gc.get_objects()) - before
    assert grown < 40 * 5               # (each kept thousands: its IR, its derivative)


def test_the_cache_keeps_the_derivatives_used_last(size):
    size(6)

    def f(x):
        return np.sum(x * x)
    g = s2s.grad(f)
    for n in range(1, 21):
        assert np.allclose(g(np.arange(float(n))), 2 * np.arange(float(n)))
    gc.collect()
    assert len(pipeline._CACHE[f]) <= 6
    assert len(pipeline._ORDER) <= 6
    assert len(_generated_sources("test_the_cache_keeps_the_derivatives_used_last")) <= 6
    assert np.allclose(g(np.arange(1.0)), 0.0)            # made again, right
    assert np.allclose(g(np.arange(20.0)), 2 * np.arange(20.0))


def test_a_derivative_in_use_is_found_again_after_others_left(size):
    size(3)

    def f(x):
        return np.sum(np.sin(x))
    g = s2s.grad(f, mode="reverse")
    hot = np.linspace(0.0, 1.0, 4)
    for n in range(5, 15):
        assert np.allclose(g(hot), np.cos(hot))      # the fast path, emptied when one leaves, finds it again
        assert np.allclose(g(np.ones(n)), np.cos(np.ones(n)))
    assert len(pipeline._CACHE[f]) <= 3


def test_cache_size_is_validated_and_returns_the_previous_size(size):
    previous = size()
    assert size(7) == previous
    assert size() == 7
    for bad in (0, -1, 1.5, True, "8"):
        with pytest.raises(s2s.BadArgument, match="cache_size takes a positive number"):
            size(bad)
    assert size() == 7


def test_the_size_from_the_environment(monkeypatch):
    monkeypatch.setenv("S2S_CACHE_SIZE", "40")
    assert pipeline._size_from_environment() == 40
    monkeypatch.setenv("S2S_CACHE_SIZE", "many")
    with pytest.warns(UserWarning, match="S2S_CACHE_SIZE='many' is not a positive integer"):
        assert pipeline._size_from_environment() == pipeline.DEFAULT_CACHE_SIZE
    monkeypatch.delenv("S2S_CACHE_SIZE")
    assert pipeline._size_from_environment() == 512 == pipeline.DEFAULT_CACHE_SIZE


def test_clear_cache_forgets_every_derivative_and_its_source():
    def f(x):
        return np.sum(np.exp(x))
    g = s2s.grad(f)
    x = np.array([0.0, 1.0])
    assert np.allclose(g(x), np.exp(x))
    assert pipeline._CACHE.get(f)
    s2s.clear_cache()
    gc.collect()
    assert pipeline._CACHE.get(f) is None and not pipeline._ORDER
    assert _generated_sources("test_clear_cache_forgets_every_derivative_and_its_source") == []
    assert np.allclose(g(x), np.exp(x))          # made again when called


def test_what_is_kept_is_flat_over_many_shapes(size):
    size(10)

    def f(x):
        return np.sum(x * x)
    g = s2s.grad(f, check=False)
    for n in range(1, 40):
        g(np.ones(n))
    gc.collect()
    before = len(gc.get_objects())
    for n in range(40, 240):
        assert np.allclose(g(np.ones(n)), 2.0)
    gc.collect()
    grown = len(gc.get_objects()) - before
    assert grown < 200 * 10
    assert len(_generated_sources("test_what_is_kept_is_flat_over_many_shapes")) <= 10


@pytest.mark.slow
def test_memory_is_flat_over_ten_thousand_shapes(size):
    size(16)

    def f(x):
        return np.sum(x * x)
    g = s2s.grad(f, check=False)
    for n in range(1, 5_000):
        g(np.ones(n))
    gc.collect()
    tracemalloc.start()
    try:
        held = []
        for n in range(5_000, 10_001):
            if n % 1_000 == 0:
                gc.collect()
                held.append(tracemalloc.get_traced_memory()[0])
            g(np.ones(n))
    finally:
        tracemalloc.stop()
    # 4.8 MB more every 1,000 shapes before; now what varies is the memo of shapes s2s/analysis/shapes.py keeps
    # (4,096 entries at most, then emptied)
    assert max(held) - min(held) < 3_000_000, held
    assert len(_generated_sources("test_memory_is_flat_over_ten_thousand_shapes")) <= 16


# ---------------------------------------------------------------- the table kept on the function

def test_the_kept_slot_pickles_as_nothing_s2s_needs():
    f = _make_closure(1.0)
    s2s.grad(f)(0.5)
    slot = f.__dict__[ATTRIBUTE]
    assert pickle.loads(pickle.dumps(slot)) == {}


def test_a_wrapper_that_copied_the_dict_does_not_read_the_functions_tables():
    import functools
    f = _make_closure(2.0)
    assert s2s.grad(f)(1.0) == pytest.approx(_expected(2.0, 1.0))

    @functools.wraps(f)
    def wrapper(x):
        return f(x) + x
    assert ATTRIBUTE in wrapper.__dict__            # copied by functools.wraps
    assert s2s.grad(wrapper)(1.0) == pytest.approx(_expected(2.0, 1.0) + 1.0)
    assert s2s.grad(f)(1.0) == pytest.approx(_expected(2.0, 1.0))


def test_a_function_table_acts_as_a_mapping():
    table = FunctionTable()

    def f():
        pass
    assert table.get(f) is None and f not in table
    assert table.setdefault(f, [1]) == [1] and table[f] == [1] and f in table
    table[f] = [f]                   # a value naming its key: still freed with it
    assert table.pop(f) == [f] and f not in table
    table[f] = [f]
    assert len(table) == 1
    other = FunctionTable()
    other[f] = 2
    table.clear()
    assert f not in table and other[f] == 2
    with pytest.raises(KeyError):
        table[f]
    reference = weakref.ref(f)
    del f
    assert _freed(reference)
    partial = np.sin                 # not a plain function: kept weakly elsewhere, or not at all
    table[len] = 1
    assert table.get(len) == 1 and table.get(partial) is None


class _Model:
    def __init__(self, scale):
        self.scale = scale

    def energy(self, x):
        return self.scale * np.sum(x ** 2)


def test_an_object_whose_method_was_differentiated_is_freed(monkeypatch):
    """s2s keeps the wrappers of the 64 methods and callable objects used last (so that s2s.grad(model.loss) made
    again finds its derivatives); an object leaves with its wrapper, or with clear_cache."""
    models = [_Model(float(k)) for k in range(3)]
    for k, model in enumerate(models):
        assert np.allclose(s2s.grad(model.energy)(np.ones(2)), 2.0 * k)
    references = [weakref.ref(m) for m in models]
    del model, models
    s2s.clear_cache()
    assert all(_freed(r) for r in references)
    from s2s.driver import callables
    monkeypatch.setattr(callables, "_KEPT_WRAPPERS", 3)
    model = _Model(2.0)
    s2s.grad(model.energy)(np.ones(2))
    reference = weakref.ref(model)
    del model
    for k in range(4):              # other objects' methods push its wrapper out
        s2s.grad(_Model(float(k)).energy, check=False)(np.ones(2))
    assert _freed(reference)
