"""The same derivative code on Dask arrays: lazy, one graph, computed on a cluster of two worker processes.

Skipped, with the reason, when dask or distributed is not installed (`pip install -e '.[dask]'`).
"""
import os
import sys
import warnings

import numpy as np
import pytest

da = pytest.importorskip("dask.array", reason="dask is not installed: pip install -e '.[dask]'")
distributed = pytest.importorskip("distributed", reason="dask.distributed is not installed: pip install -e '.[dask]'")
import dask  # noqa: E402

import s2s  # noqa: E402
from s2s.errors import S2SError  # noqa: E402
from s2s.driver.foreign import ForeignArrayError  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "examples"))
import logistic_regression  # noqa: E402
import mlp  # noqa: E402


@pytest.fixture(scope="module")
def client():
    """A LocalCluster of two worker processes, one thread each, for the whole module."""
    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None)
    client = distributed.Client(cluster)
    yield client
    client.close()
    cluster.close()


def _logistic_data(n=3000, features=5, dtype=np.float64):
    X, y = logistic_regression.make_data(n=n, features=features, seed=3)
    X = (X - X.mean(axis=0)) / X.std(axis=0)
    rng = np.random.default_rng(4)
    return X.astype(dtype), y.astype(dtype), rng.normal(size=features).astype(dtype), 0.3


def _sigmoid(z):
    return 1.0 / (1.0 + np.exp(-z))


def test_logistic_gradient_on_two_worker_processes(client):
    X, y, w, b = _logistic_data()
    Xd, yd = da.from_array(X, chunks=(500, 5)), da.from_array(y, chunks=500)
    dw, db = s2s.grad(logistic_regression.loss, wrt=("w", "b"))(w, b, Xd, yd)       # w NumPy, X Dask
    assert isinstance(dw, da.Array) and isinstance(db, da.Array)                  # lazy: graphs, not values
    assert dw.shape == (5,) and db.shape == ()
    dw, db = dask.compute(dw, db)                                                 # on the cluster
    assert len(client.scheduler_info()["workers"]) == 2
    residual = _sigmoid(X @ w + b) - y                                            # the closed form
    np.testing.assert_allclose(dw, X.T @ residual / len(y), rtol=1e-12, atol=1e-14)
    assert float(db) == pytest.approx(residual.mean(), rel=1e-12, abs=1e-14)
    expected = s2s.grad(logistic_regression.loss, wrt=("w", "b"))(w, b, X, y)     # NumPy's run of the same code
    np.testing.assert_allclose(dw, expected[0], rtol=1e-12)
    assert isinstance(expected[1], float)                 # with NumPy data a float parameter's gradient is a float


def test_value_and_grad_is_lazy_and_all_dask_arguments_work(client):
    X, y, w, b = _logistic_data()
    Xd, yd, wd = da.from_array(X, chunks=(700, 5)), da.from_array(y, chunks=700), da.from_array(w)
    value, (dw, db) = s2s.value_and_grad(logistic_regression.loss, wrt=("w", "b"))(wd, b, Xd, yd)
    assert all(isinstance(v, da.Array) for v in (value, dw, db))
    value, dw, db = dask.compute(value, dw, db)
    z = X @ w + b
    assert float(value) == pytest.approx(np.mean(np.logaddexp(0.0, z) - y * z), rel=1e-12)
    np.testing.assert_allclose(dw, X.T @ (_sigmoid(z) - y) / len(y), rtol=1e-12, atol=1e-14)


def test_mlp_gradient_on_two_worker_processes(client):
    X, Y = mlp.make_task(n=512, seed=5)
    params = mlp.init(hidden=16, seed=6)
    wrt = (0, 1, 2, 3)
    expected = s2s.grad(mlp.mse, wrt=wrt)(*params, X, Y)
    s2s.check_grad(mlp.mse, *params, X[:32], Y[:32], wrt=wrt, rtol=1e-5, atol=1e-8)   # NumPy's, against differences
    Xd, Yd = da.from_array(X, chunks=(128, 2)), da.from_array(Y, chunks=(128, 2))
    got = s2s.grad(mlp.mse, wrt=wrt)(*params, Xd, Yd)
    assert all(isinstance(g, da.Array) for g in got)
    assert [g.shape for g in got] == [p.shape for p in params]
    for g, e in zip(dask.compute(*got), expected):
        np.testing.assert_allclose(g, e, rtol=1e-10, atol=1e-13)


class _Reads:
    """Counts the chunks of X read (sync scheduler, one process)."""

    def __init__(self):
        self.count = 0

    def __call__(self, block):
        self.count += block.size > 0        # not the empty block Dask calls it on to learn the result's type
        return block


def test_one_graph_computes_each_chunk_once_and_nothing_before():
    X, y, w, b = _logistic_data(n=2000)
    reads = _Reads()
    Xd = da.from_array(X, chunks=(250, 5)).map_blocks(reads, dtype=X.dtype)
    yd = da.from_array(y, chunks=250)
    value, grads = s2s.value_and_grad(logistic_regression.loss, wrt=("w", "b"))(w, b, Xd, yd)
    assert reads.count == 0                              # building the derivative computed nothing
    computed = dask.compute(value, *grads, scheduler="sync")
    assert reads.count == Xd.numblocks[0]                # X @ w and X.T @ dz share each chunk: read once
    z = X @ w + b
    assert float(computed[0]) == pytest.approx(np.mean(np.logaddexp(0.0, z) - y * z), rel=1e-12)


def test_float32_data_and_parameters_stay_float32():
    X, y, w, b = _logistic_data(dtype=np.float32)
    dw, db = s2s.grad(logistic_regression.loss, wrt=("w", "b"))(w, np.float32(b), da.from_array(X, chunks=(1000, 5)),
                                                                da.from_array(y, chunks=1000))
    assert dw.dtype == np.float32
    dw = dw.compute(scheduler="sync")
    np.testing.assert_allclose(dw, X.T @ (_sigmoid(X @ w + b) - y) / len(y), rtol=2e-4, atol=1e-6)


def _det_loss(A, x):
    return np.linalg.det(A) * np.sum(x)


def _branchy_loss(w, X):
    z = X @ w
    if np.sum(z) > 0:
        return np.sum(z * z)
    return np.sum(z)


def test_what_dask_cannot_do_lazily_is_a_clear_error_not_a_computation():
    A = da.from_array(np.eye(3) + 0.1, chunks=3)
    x = np.ones(3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)         # Dask's own "not implemented" warning
        with pytest.raises(ForeignArrayError, match=r"numpy\.linalg\.det is not implemented by Dask") as info:
            s2s.grad(_det_loss, wrt=(0, 1))(A, x)
    assert isinstance(info.value, S2SError) and isinstance(info.value, TypeError)
    X = da.from_array(np.ones((6, 2)), chunks=3)
    with pytest.raises(ForeignArrayError, match=r"a truth value \(if, while, and, or\)"):
        s2s.grad(_branchy_loss)(np.ones(2), X)
    # with NumPy arrays the same derivatives run
    assert s2s.grad(_branchy_loss)(np.ones(2), np.ones((6, 2))) == pytest.approx(np.full(2, 4.0 * 6))


def test_only_the_thread_running_derivative_code_is_refused():
    """While derivative code runs on Dask arrays, a computation asked for by another thread goes on."""
    import threading
    from s2s.driver import foreign
    other = da.ones(10, chunks=5).sum()
    results = []

    def derivative_like(x):
        thread = threading.Thread(target=lambda: results.append(float(other.compute())))
        thread.start()
        thread.join()
        return float(x.sum())               # this thread: refused
    with pytest.raises(ForeignArrayError, match=r"float\(\)"):
        foreign.call(derivative_like, (da.ones(4, chunks=2),))
    assert results == [10.0]
    assert float(da.ones(4, chunks=2).sum()) == 4.0      # and after the call, computing works again


def test_the_example_trains_out_of_core_with_a_small_size(capsys):
    import dask_logistic_regression
    history = dask_logistic_regression.main(["--rows", "40000", "--chunk-rows", "10000", "--epochs", "3"])
    losses, accuracies = [h[0] for h in history], [h[1] for h in history]
    assert losses[0] == pytest.approx(np.log(2.0), rel=1e-12)          # w = 0, b = 0: log 2
    assert losses[0] > losses[1] > losses[2]
    assert accuracies[-1] > accuracies[0] + 0.2
    out = capsys.readouterr().out
    assert out.count("epoch ") == 3 and "peak memory (RSS) of this process" in out


@pytest.mark.slow
def test_every_rule_runs_lazily_on_dask_or_is_refused_clearly(request):
    """examples/dask_rules_survey.py over the rules' table: no silent conversion, no gradient unlike NumPy's."""
    selected = request.config.getoption("markexpr", "") or ""
    if os.environ.get("S2S_SLOW") != "1" and not ("slow" in selected and "not slow" not in selected):
        pytest.skip("slow (a minute or more): run with -m slow or S2S_SLOW=1")
    import dask_rules_survey
    outcomes = dask_rules_survey.survey()
    assert not outcomes["WRONG"], outcomes["WRONG"]
    assert len(outcomes["lazy"]) >= 50
