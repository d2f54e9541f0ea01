"""Logistic regression on 50 million rows x 20 features (8 GB as one float64 array), out of core with Dask.

The data are generated chunk by chunk (dask.array.random) and never held whole: each epoch is one pass over
them in which Dask computes, chunk by chunk, the loss, the accuracy and the gradient that s2s derived from
the plain NumPy loss below -- the same derivative code that runs on NumPy arrays, building one Dask graph.
The labels come from a hidden weight vector, so the loss falls and the accuracy rises as training goes.

Run: python examples/dask_logistic_regression.py                      (50M x 20, 5 epochs, threads)
     python examples/dask_logistic_regression.py --workers 2          (a LocalCluster of 2 worker processes)
     python examples/dask_logistic_regression.py --rows 200000 --chunk-rows 50000 --epochs 3   (seconds)
At the end it prints the peak memory (RSS) of this process and of each worker, to set against the data's size.
"""
from __future__ import annotations

import argparse
import resource
import time

import dask
import dask.array as da
import numpy as np

import s2s


def loss(w, b, X, y):
    z = X @ w + b
    return np.mean(np.logaddexp(0.0, z) - y * z)


def make_data(rows, features, chunk_rows, seed=0):
    """X (rows x features, standard normal) and labels y drawn from a hidden logistic model, both lazy."""
    rng = da.random.default_rng(seed)
    X = rng.standard_normal((rows, features), chunks=(chunk_rows, features))
    hidden = np.random.default_rng(seed + 1).normal(size=features) / np.sqrt(features) * 5.0
    noise = rng.logistic(size=rows, chunks=chunk_rows)
    y = (X @ hidden + noise > 0).astype(np.float64)
    return X, y


def peak_rss_mb():
    """The peak resident memory of the calling process, in MB (Linux reports kilobytes)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def with_progress_bar(*collections):
    """dask.compute with Dask's progress bar (Dask's threads, in this process)."""
    from dask.diagnostics import ProgressBar
    with ProgressBar():
        return dask.compute(*collections)


def on_cluster(client):
    """dask.compute on a dask.distributed cluster, with distributed's progress bar."""
    from distributed import progress

    def compute(*collections):
        futures = client.compute(list(collections))
        progress(futures)
        print()
        return tuple(client.gather(futures))
    return compute


def train(X, y, epochs, rate, compute):
    w, b = np.zeros(X.shape[1]), 0.0                 # NumPy parameters, Dask data
    value_and_grad = s2s.value_and_grad(loss, wrt=("w", "b"))
    history = []
    for epoch in range(1, epochs + 1):
        value, (dw, db) = value_and_grad(w, b, X, y)     # lazy: a Dask graph, nothing computed yet
        accuracy = np.mean((X @ w + b > 0) == (y > 0.5))
        start = time.perf_counter()
        value, accuracy, dw, db = compute(value, accuracy, dw, db)    # one pass over the data
        seconds = time.perf_counter() - start
        history.append((float(value), float(accuracy)))
        print(f"epoch {epoch}  loss {float(value):.4f}  accuracy {float(accuracy):.4f}  ({seconds:.1f} s)", flush=True)
        w, b = w - rate * dw, b - rate * float(db)
    return w, b, history


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=50_000_000)
    parser.add_argument("--features", type=int, default=20)
    parser.add_argument("--chunk-rows", type=int, default=500_000)
    parser.add_argument("--epochs", type=int, default=5)
    parser.add_argument("--rate", type=float, default=2.0)
    parser.add_argument("--workers", type=int, default=0,
                        help="worker processes of a dask.distributed LocalCluster (0: Dask's threads, in this process)")
    args = parser.parse_args(argv)
    X, y = make_data(args.rows, args.features, args.chunk_rows)
    print(f"{args.rows:,} rows x {args.features} features: {X.nbytes / 1e9:.2f} GB as one float64 array, "
          f"in {X.numblocks[0]} chunks of {args.chunk_rows:,} rows ({args.chunk_rows * args.features * 8 / 1e6:.0f} MB)")
    client = cluster = None
    compute = with_progress_bar
    if args.workers:
        from distributed import Client, LocalCluster
        cluster = LocalCluster(n_workers=args.workers, threads_per_worker=1, processes=True, dashboard_address=None)
        client = Client(cluster)
        compute = on_cluster(client)
    try:
        start = time.perf_counter()
        w, b, history = train(X, y, args.epochs, args.rate, compute)
        print(f"loss {history[0][0]:.4f} -> {history[-1][0]:.4f}, accuracy {history[0][1]:.4f} -> "
              f"{history[-1][1]:.4f} in {time.perf_counter() - start:.0f} s")
        print(f"peak memory (RSS) of this process: {peak_rss_mb():.0f} MB")
        if client is not None:
            peaks = client.run(peak_rss_mb)
            print("peak memory (RSS) of the workers: " + ", ".join(f"{v:.0f} MB" for v in peaks.values()))
    finally:
        if client is not None:
            client.close()
            cluster.close()
    return history


if __name__ == "__main__":
    main()
