"""What a cached call of a derivative specialized on values known when it was made costs: its guards (each entry,
and all of them), and the whole overhead of `s2s.grad(model.loglike)(params)` over the generated function, for a
binary-choice likelihood (statsmodels' Logit, whose gradient checks 13 entries on every call: a folded
`hasattr(self, 'offset')`, the methods it reads from the model and its class, a callee's defaults).

    python benchmarks/guards.py            (statsmodels installed: pip install -e '.[corpus]')

Run it on a quiet machine (`uptime`'s load under 1.5): the numbers are absolute times.
"""
from __future__ import annotations

import os
import statistics
import sys
import timeit
import warnings

import numpy as np

import s2s


def best(f, number: int = 20000, repeat: int = 9) -> float:
    return min(timeit.repeat(f, number=number, repeat=repeat)) / number


def main() -> int:
    warnings.simplefilter("ignore")
    import statsmodels.api as sm
    rng = np.random.default_rng(25)
    n = 40
    X = np.column_stack([np.ones(n), rng.normal(size=(n, 2))])
    y = (rng.random(n) < 1 / (1 + np.exp(-X @ np.array([0.2, 0.5, -0.4])))).astype(float)
    model = sm.Logit(y, X)
    params = np.array([0.1, 0.3, -0.2])
    gradient = s2s.grad(model.loglike, check=False)
    assert np.allclose(gradient(params), model.score(params))
    scope = gradient.__globals__
    watch, guards = scope["_s2s_watch"], scope["_s2s_check"][0]
    router = scope["_s2s_table"][(np.ndarray,)]
    generated = router.__globals__["routes"][(params.shape,)][0]
    assert np.array_equal(generated(params), gradient(params))
    empty = best(lambda: None)
    t_guards = best(guards) - empty
    calls, direct = [], []
    for _ in range(5):
        calls.append(best(lambda: gradient(params), 5000, 5))
        direct.append(best(lambda: generated(params), 5000, 5))
    call, alone = statistics.median(calls), statistics.median(direct)
    function = best(lambda: model.loglike(params), 5000, 5)
    print(f"load average {os.getloadavg()[0]:.2f}")
    print(f"guards: {len(watch)} entries, {t_guards * 1e9:.0f} ns in all, {t_guards * 1e9 / len(watch):.1f} ns each")
    print(f"cached call of the gradient {call * 1e6:.2f} us, the generated function alone {alone * 1e6:.2f} us: "
          f"overhead {(call - alone) * 1e6:.2f} us (guards included)")
    print(f"Logit.loglike itself {function * 1e6:.2f} us: the gradient costs {call / function:.2f}x the function")
    return 0


if __name__ == "__main__":
    sys.exit(main())
