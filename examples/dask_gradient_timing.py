"""The logistic-regression gradient at a size that fits in memory: NumPy against Dask with 1 and 2 workers.

The same s2s derivative runs on NumPy arrays and on Dask arrays persisted on a LocalCluster of worker
processes (one thread each); each time is the best of --repeat runs of the gradient (for Dask: building
the graph, scheduling it and computing it).
Run: python examples/dask_gradient_timing.py [--rows 4000000] [--features 20] [--chunk-rows 500000]
"""
from __future__ import annotations

import argparse
import time

import dask
import dask.array as da
import numpy as np

import s2s
from dask_logistic_regression import loss


def best_of(repeat, run):
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        run()
        times.append(time.perf_counter() - start)
    return min(times)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=4_000_000)
    parser.add_argument("--features", type=int, default=20)
    parser.add_argument("--chunk-rows", type=int, default=500_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--workers", type=int, nargs="*", default=[1, 2])
    args = parser.parse_args(argv)
    from distributed import Client, LocalCluster, wait

    rng = np.random.default_rng(0)
    X = rng.standard_normal((args.rows, args.features))
    y = (X @ rng.normal(size=args.features) + rng.logistic(size=args.rows) > 0).astype(np.float64)
    w, b = rng.normal(size=args.features) * 0.1, 0.0
    gradient = s2s.grad(loss, wrt=("w", "b"))
    expected = gradient(w, b, X, y)
    print(f"{args.rows:,} rows x {args.features} features ({X.nbytes / 1e6:.0f} MB), "
          f"chunks of {args.chunk_rows:,} rows; best of {args.repeat}")
    numpy_time = best_of(args.repeat, lambda: gradient(w, b, X, y))
    print(f"NumPy                       {numpy_time * 1000:8.0f} ms")
    results = {"numpy": numpy_time}
    for workers in args.workers:
        with LocalCluster(n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=None) as cluster, \
                Client(cluster) as client:
            Xd = client.persist(da.from_array(X, chunks=(args.chunk_rows, args.features)))
            yd = client.persist(da.from_array(y, chunks=args.chunk_rows))
            wait([Xd, yd])
            got = dask.compute(*gradient(w, b, Xd, yd))
            np.testing.assert_allclose(got[0], expected[0], rtol=1e-10)
            seconds = best_of(args.repeat, lambda: dask.compute(*gradient(w, b, Xd, yd)))
            results[workers] = seconds
            print(f"Dask, {workers} worker process{'es' if workers > 1 else ''}     {seconds * 1000:8.0f} ms")
    return results


if __name__ == "__main__":
    main()
