"""Checkpointed loops (`s2s.grad(f, checkpoint=...)`): the revolve schedule, and gradients against the plain
gradient and central differences, through for and while loops with branches and loops inside."""
import math
import tracemalloc
from functools import lru_cache

import numpy as np
import pytest

import s2s
from s2s.transforms.checkpoint import _resume, _revolve

# ---------------------------------------------------------------- the schedule


def run_schedule(indices, snapshots):
    """Drive _revolve with states that name their index; return (reversed indices, advance steps, most kept)."""
    schedule = _revolve(indices, snapshots, indices[0] if len(indices) else None)
    reversed_order, advanced, most = [], 0, 0
    task = _resume(schedule, None)
    while task is not None:
        i, j, state = task
        assert state == i                           # each task starts from the state at its index
        most = max(most, len(schedule.gi_frame.f_locals["kept"]))
        if j is None:
            reversed_order.append(i)
            task = _resume(schedule, None)
        else:
            advanced += len(range(i, j, indices.step))
            task = _resume(schedule, j)
    return reversed_order, advanced, most


@lru_cache(maxsize=None)
def fewest_advances(steps: int, snapshots: int) -> float:
    """The least forward steps to reverse `steps` steps from a kept start with `snapshots` snapshots (by search)."""
    if steps == 1:
        return 0
    if snapshots == 0:
        return math.inf
    return min(k + fewest_advances(steps - k, snapshots - 1) + fewest_advances(k, snapshots)
               for k in range(1, steps))


@pytest.mark.parametrize("steps", [1, 2, 3, 7, 20, 56, 57])
@pytest.mark.parametrize("snapshots", [1, 2, 3, 5])
def test_schedule_reverses_every_step_once_with_the_fewest_advances(steps, snapshots):
    order, advanced, most = run_schedule(range(steps), snapshots)
    assert order == list(reversed(range(steps)))
    assert most <= snapshots
    assert advanced == fewest_advances(steps, snapshots)


@pytest.mark.parametrize("steps, snapshots", [(1000, 10), (5000, 40), (20_000, 100)])
def test_schedule_matches_griewanks_count(steps, snapshots):
    """t * steps - C(s + t, t - 1) forward steps, t the least with C(s + t, s) >= steps."""
    t = next(t for t in range(1, 100) if math.comb(snapshots + t, snapshots) >= steps)
    order, advanced, most = run_schedule(range(steps), snapshots)
    assert order == list(reversed(range(steps))) and most <= snapshots
    assert advanced == t * steps - math.comb(snapshots + t, t - 1)


def test_schedule_over_any_range_and_a_budget():
    order, _, _ = run_schedule(range(3, 40, 4), 2)
    assert order == list(reversed(range(3, 40, 4)))
    order, _, _ = run_schedule(range(30, -3, -3), 3)
    assert order == list(reversed(range(30, -3, -3)))
    assert run_schedule(range(0), 3) == ([], 0, 0)
    # a budget: states of 8 kB, 100 kB of them
    schedule = _revolve(range(1000), "100kB", (np.zeros(1000),))
    next(schedule)
    assert schedule.gi_frame.f_locals["snapshots"] == 12


# ---------------------------------------------------------------- gradients


def euler(A, y0, h, steps):
    y = y0
    for _ in range(steps):
        y = y + h * (np.tanh(A @ y) - 0.1 * y)
    return np.sum(y * y)


def rnn(W, U, X, v):
    h = np.zeros(W.shape[0])
    loss = 0.0
    for t in range(X.shape[0]):
        h = np.tanh(W @ h + U @ X[t])
        loss = loss + np.dot(v, h) ** 2
    return loss


def branchy(W, x0, h, n):
    x = x0
    for t in range(n):
        if t % 3 == 0:
            x = x + h * np.tanh(W @ x)
        else:
            x = x - h * np.sin(x) * x
        acc = 0.0
        k = 0
        while k < 3:
            acc = acc + x[k] * x[k]
            k = k + 1
        for j in range(2):
            if acc > 1.0:
                x = x * (1.0 - 0.01 * acc)
    return np.sum(x * x)


def relax(c, x0):
    x = x0
    delta = 1.0
    while delta > 1e-12:
        x_new = x + 0.05 * (math.cos(c * x) - x)
        delta = abs(x_new - x)
        x = x_new
    return x * x


def strided(c, y0, n):
    y = y0
    s = 0.0
    for i in range(3, n, 2):
        y = y * math.cos(c * i) + 0.1
        s = s + y * c
    return s + y


def backwards(c, y0, n):
    y = y0
    for i in reversed(range(n)):
        y = math.sin(y + c * i)
    return y


def two_loops(a, b, n):
    x = a
    for _ in range(n):
        x = math.sin(x) * b + 0.5
    y = x
    for _ in range(n):
        y = y * a - 0.01 * y * y
    return x * y


def in_branch(a, n):
    s = a
    if a > 0:
        for i in range(n):
            s = math.sin(s) + a * 0.5
    else:
        s = s * 2
    return s * s


def with_break(a, n):
    x = a
    for i in range(n):
        x = x * 1.1 + math.cos(x)
        if x > 5.0:
            break
    return x


def over_list(a, xs):
    s = a
    for x in xs:
        s = s * x + math.sin(s)
    return s


def dict_state(W, n):
    p = {"w": W, "b": 0.5}
    for i in range(n):
        p = {"w": p["w"] * 0.9 + p["b"], "b": np.sum(p["w"]) * 0.1}
    return np.sum(p["w"]) + p["b"]


def zero_trips(a, n):
    x = a
    for _ in range(n):
        x = x * a
    return x + a


RNG = np.random.default_rng(0)
CASES = [
    (euler, (RNG.normal(size=(8, 8)) / 3, RNG.normal(size=8), 0.01, 70), (0, 1)),
    (rnn, (RNG.normal(size=(6, 6)) / 3, RNG.normal(size=(6, 3)) / 2, RNG.normal(size=(60, 3)), RNG.normal(size=6)),
     (0, 1)),
    (branchy, (RNG.normal(size=(5, 5)) / 2, RNG.normal(size=5), 0.05, 23), (0, 1)),
    (relax, (0.8, 3.0), (0, 1)),
    (strided, (0.3, 0.7, 30), (0, 1)),
    (backwards, (0.3, 0.2, 17), (0, 1)),
    (two_loops, (0.9, 0.7, 25), (0, 1)),
    (zero_trips, (0.9, 0), (0,)),
    (in_branch, (0.7, 9), (0,)),
    (in_branch, (-0.7, 9), (0,)),
    (with_break, (0.5, 40), (0,)),
    (over_list, (0.3, [1.1, 0.9, 1.2, 0.7, 1.01]), (0,)),
    (dict_state, (np.arange(3.0), 7), (0,)),
]


def flat(gradient):
    return np.concatenate([np.ravel(g) for g in (gradient if isinstance(gradient, tuple) else (gradient,))])


def central_differences(f, args, wrt, eps=1e-6):
    out = []
    for i in wrt:
        x = np.array(args[i], dtype=float)
        g = np.zeros_like(x)
        for k in np.ndindex(x.shape):
            plus, minus = x.copy(), x.copy()
            plus[k] += eps
            minus[k] -= eps
            lift = (lambda v: v) if np.ndim(args[i]) else float
            up = f(*args[:i], lift(plus), *args[i + 1:])
            down = f(*args[:i], lift(minus), *args[i + 1:])
            g[k] = (up - down) / (2 * eps)
        out.append(g)
    return np.concatenate([np.ravel(g) for g in out])


IDS = [f"{f.__name__}-{k}" for k, (f, _, _) in enumerate(CASES)]


@pytest.mark.parametrize("f, args, wrt", CASES, ids=IDS)
@pytest.mark.parametrize("checkpoint", [1, 3, "2kB"])
def test_checkpointed_gradient_equals_the_plain_one(f, args, wrt, checkpoint):
    plain = flat(s2s.grad(f, wrt=wrt)(*args))
    checked = flat(s2s.grad(f, wrt=wrt, checkpoint=checkpoint)(*args))
    np.testing.assert_allclose(checked, plain, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("f, args, wrt", CASES, ids=IDS)
def test_checkpointed_gradient_against_central_differences(f, args, wrt):
    checked = flat(s2s.grad(f, wrt=wrt, checkpoint=4)(*args))
    np.testing.assert_allclose(checked, central_differences(f, args, wrt), rtol=1e-5, atol=1e-6)


def test_value_and_grad_keeps_the_value():
    A, y0 = CASES[0][1][:2]
    value, (dA, dy0) = s2s.value_and_grad(euler, wrt=(0, 1), checkpoint=5)(A, y0, 0.01, 50)
    assert value == pytest.approx(euler(A, y0, 0.01, 50), rel=1e-14)
    plain = s2s.grad(euler, wrt=(0, 1))(A, y0, 0.01, 50)
    np.testing.assert_allclose(dA, plain[0], rtol=1e-12)
    np.testing.assert_allclose(dy0, plain[1], rtol=1e-12)


def test_generated_code_saves_nothing_per_iteration_and_shows_the_schedule():
    A, y0 = CASES[0][1][:2]
    source = s2s.source(euler, A, y0, 0.01, 10, wrt=(0, 1), checkpoint=40)
    assert "_revolve(indices, 40, state)" in source
    assert "_stack" not in source                  # no per-iteration stack: the loop is recomputed instead
    nested = s2s.source(branchy, *CASES[2][1], wrt=(0, 1), checkpoint=40)
    assert "_stack" in nested and nested.count("_revolve(") == 2      # the definition and the one call


def test_memory_stays_bounded():
    A, y0 = CASES[0][1][:2]
    plain, checked = s2s.grad(euler, wrt=(0, 1)), s2s.grad(euler, wrt=(0, 1), checkpoint=10)
    peaks = []
    for g in (plain, checked):
        g(A, y0, 1e-3, 10)
        tracemalloc.start()
        g(A, y0, 1e-3, 2000)
        peaks.append(tracemalloc.get_traced_memory()[1])
        tracemalloc.stop()
    assert peaks[1] < 0.05 * peaks[0]


# ---------------------------------------------------------------- refusals


@pytest.mark.parametrize("bad", [0, -3, True, 2.5, "lots", "12 parsecs"])
def test_bad_checkpoint_values_are_refused(bad):
    with pytest.raises(s2s.BadArgument, match="checkpoint"):
        s2s.grad(euler, checkpoint=bad)


def test_checkpoint_is_for_reverse_mode():
    with pytest.raises(s2s.BadArgument, match="checkpoint is for reverse mode"):
        s2s.grad(zero_trips, mode="forward", checkpoint=3)


def test_checkpoint_does_not_combine_with_numba():
    pytest.importorskip("numba", reason="backend='numba' needs numba")
    with pytest.raises(s2s.BadArgument, match="Python generator"):
        s2s.grad(zero_trips, checkpoint=3, backend="numba")


def test_a_checkpointed_gradient_is_not_differentiated_again():
    with pytest.raises(s2s.S2SError, match="checkpointed gradient"):
        s2s.grad(s2s.grad(zero_trips, checkpoint=3))(0.9, 3)


# ---------------------------------------------------------------- large


@pytest.mark.slow
def test_long_euler_in_two_percent_of_the_memory():
    A, y0 = CASES[0][1][:2]
    plain, checked = s2s.grad(euler, wrt=(0, 1)), s2s.grad(euler, wrt=(0, 1), checkpoint=100)
    results, peaks = [], []
    for g in (plain, checked):
        g(A, y0, 1e-5, 10)
        tracemalloc.start()
        results.append(flat(g(A, y0, 1e-5, 20_000)))
        peaks.append(tracemalloc.get_traced_memory()[1])
        tracemalloc.stop()
    np.testing.assert_allclose(results[1], results[0], rtol=1e-12)
    assert peaks[1] <= 0.02 * peaks[0]


def central_difference(f, x, *rest, eps=1e-6):
    return (f(x + eps, *rest) - f(x - eps, *rest)) / (2 * eps)


def complex_loop(w):
    z = 0.3 + 0.1j
    for _ in range(6):
        z = z * z * w + 0.1j
    return abs(z)


def phasor(a):
    z = 0.0 + 0.0j
    for k in range(3):
        z = z + a * np.exp(1j * k)
    return abs(z) ** 2


@pytest.mark.parametrize("f", [complex_loop, phasor], ids=lambda f: f.__name__)
def test_checkpointed_loops_carrying_complex_values(f):
    """Outside round 3, F18: the checkpointed step's copies of the body had lost which values may be complex."""
    for snapshots in (2, 5):
        g = s2s.grad(f, mode="reverse", checkpoint=snapshots)(0.8)
        assert isinstance(g, float) or np.isrealobj(g)
        assert g == pytest.approx(central_difference(f, 0.8), rel=1e-6)


def draws_in_a_loop(mu):
    r = np.random.default_rng(1)
    s = 0.0
    for _ in range(4):
        s = s + mu * r.normal()
    return s * s


def test_a_checkpointed_loop_that_draws_is_refused():
    """Outside round 4, G11's program under checkpoint=."""
    with pytest.raises(s2s.UnsupportedSyntax, match=r"test_checkpoint\.py:\d+:\d+: checkpoint= runs the loop"):
        s2s.grad(draws_in_a_loop, mode="reverse", checkpoint=2)(0.3)


def two_sums(x, y):
    s = 0.0
    for i in range(3):
        s = s + x * x
    t = 0.0
    for i in range(3):
        t = t + np.exp(y)
    return s + t


@pytest.mark.parametrize("snapshots", [2, 3, 5])
def test_checkpointed_loops_with_the_same_range_and_start(snapshots):
    """Outside round 4, G10: the two loops' schedules were merged as one common subexpression; the first loop's adjoint
    was lost."""
    gradient = s2s.grad(two_sums, wrt=(0, 1), mode="reverse", checkpoint=snapshots)(0.3, 0.5)
    assert gradient == pytest.approx((1.8, 3 * np.exp(0.5)), rel=1e-12)
