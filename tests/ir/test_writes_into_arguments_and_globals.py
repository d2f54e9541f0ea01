"""Writes into what the function was given or does not own: a helper filling or changing an array it is
given (followed as Python shows it, or refused), a helper changing its argument in place, writes into globals, and
appends into a list a loop does not carry."""
import numpy as np
import pytest

import s2s
from conftest import agrees, central


def normalize_(u):
    u /= np.linalg.norm(u)
    return u


def uses_normalized(x):
    y = x * 2.0
    z = normalize_(y)
    return np.sum(y) + np.sum(z)


def test_a_helper_dividing_its_argument_in_place_is_refused():
    """Outside round 1 (the first outside tester's programs, written in their own style)."""
    with pytest.raises(s2s.S2SError, match="changes its argument 'u' in place") as info:
        s2s.grad(uses_normalized)(np.array([3.0, 4.0]))
    assert "test_writes_into_arguments_and_globals.py" in str(info.value)


def scalar_step(x, dx):
    x += dx
    return x


def uses_scalar_step(a):
    return scalar_step(a, a * a) * 3.0


def test_a_helper_adding_to_a_number_argument_is_fine():
    """Outside round 1 (the first outside tester's programs, written in their own style)."""
    agrees(uses_scalar_step, (0.7,))


LOG = []


def logs_to_a_global(x):
    LOG.append(1)
    return np.sum(x ** 2)


def test_appending_to_a_global_list_is_refused_clearly():
    """Outside round 1 (the first outside tester's programs, written in their own style)."""
    with pytest.raises(s2s.S2SError, match=r"LOG\.append"):
        s2s.grad(logs_to_a_global)(np.ones(2))


MODES = ["reverse", "forward", "auto"]


RUNNING = np.zeros(3)


STATS = {"calls": 0}


def batch_norm_train(x, g):
    m = x.mean(axis=0)
    RUNNING[:] = 0.9 * RUNNING + 0.1 * m
    return np.sum(g * (x - m) ** 2)


def counted(x):
    STATS["calls"] += 1
    return x ** 2


@pytest.mark.parametrize("fn, args", [(batch_norm_train, (np.arange(12.0).reshape(4, 3), np.ones(3))),
                                      (counted, (3.0,))])
def test_a_write_into_a_global_is_refused_as_one(fn, args):
    """Outside round 5, K5/H12: a write into a global (running statistics, a call counter) is refused as what it is, not
    as a variable "used before it is assigned" (whose hint, a local assignment, would silently stop the update)."""
    with pytest.raises(s2s.S2SError, match=r"test_writes_into_arguments_and_globals.py:\d+:\d+: '(RUNNING|STATS)' is "
                                           r"a variable outside the function") as info:
        s2s.grad(fn, wrt=len(args) - 1)(*args)
    assert "has_aux" in info.value.hint


def compute_forces(x, k, F):
    for i in range(x.shape[0]):
        F[i] = -k * x[i] ** 3
    return F


def add_springs(x, k, F):
    for i in range(1, x.shape[0]):
        f = k * (x[i] - x[i - 1])
        F[i - 1] += f
        F[i] -= f


def fill_both(x, k, F):
    compute_forces(x, k, F)          # a helper passing its own parameter on
    add_springs(x, k, F)


def energy_filled(x, k):
    F = np.zeros_like(x)
    F = compute_forces(x, k, F)
    return np.sum(F * F)


def energy_added(x, k):
    F = np.zeros_like(x)
    fill_both(x, k, F)
    return np.sum(F * F) + np.sum(F * x)


def energy_alias_kept(x, k):
    F = np.zeros_like(x)
    G = F
    add_springs(x, k, F)
    return np.sum(G * G)


def energy_into_global(x, k):
    add_springs(x, k, RUNNING)
    return np.sum(x)


def shifted_write(x, k, F):
    F = F[1:]
    F[0] = k * x[0]


def energy_shifted(x, k):
    F = np.zeros_like(x)
    shifted_write(x, k, F)
    return np.sum(F * F)


@pytest.mark.parametrize("fn", [energy_filled, energy_added])
@pytest.mark.parametrize("mode", MODES)
def test_a_helper_filling_an_array_it_is_given(fn, mode):
    """Outside round 5, H4: a helper that fills an array it is given (Numba style: `compute_forces(x, k, F)`), returning
    it or not: the caller's variable follows the write, as Python shows it."""
    x = np.array([0.5, -0.3, 1.0, 0.2])
    dx, dk = s2s.grad(fn, wrt=(0, 1), mode=mode)(x, 1.5)
    np.testing.assert_allclose(dx, central(lambda v: fn(v, 1.5), x), rtol=1e-6, atol=1e-9)
    assert dk == pytest.approx(central(lambda k: fn(x, k), 1.5), rel=1e-6)


@pytest.mark.parametrize("fn, message", [(energy_alias_kept, "an array that 'F' and 'G' name"),
                                         (energy_into_global, "not a variable of the caller"),
                                         (energy_shifted, "writes into its argument 'F'")])
def test_a_helper_write_the_caller_would_not_see_as_one_array_is_refused(fn, message):
    """Outside round 5, H4: a helper that fills an array it is given (Numba style: `compute_forces(x, k, F)`), returning
    it or not: the caller's variable follows the write, as Python shows it."""
    with pytest.raises(s2s.S2SError, match=message):
        s2s.grad(fn, wrt=1)(np.array([0.5, -0.3, 1.0]), 1.5)


def closure_appends_in_a_loop(x):
    outs = []

    def step(h):
        outs.append(h * h)
        return np.sin(h)
    h = x
    for _ in range(3):
        h = step(h)
    return np.sum(np.stack(outs)) + np.sum(h)


def closure_appends_twice(x):
    outs = []

    def add(v):
        outs.append(v * v)
    add(x)
    add(2.0 * x)
    return sum(outs)


def test_a_helper_writing_into_what_a_loop_does_not_carry_is_refused():
    """Outside round 5: a helper's write into an array or list the caller holds, in a loop that does not carry the
    caller's variable (a closure appending to the enclosing function's list): refused, never lost; outside a loop,
    followed."""
    with pytest.raises(s2s.UnsupportedSyntax, match="in a loop that does not assign 'outs'"):
        s2s.grad(closure_appends_in_a_loop)(np.array([0.3, -0.2]))
    for mode in MODES:
        assert s2s.grad(closure_appends_twice, mode=mode)(0.7) == pytest.approx(10 * 0.7)


def scale_first(v):
    v[0] = v[0] * 10.0
    return v


def helper_writes_argument(x):
    y = x * 1.0
    scale_first(y)
    return np.sum(y * x)


def test_a_helper_writing_into_an_array_it_is_given_is_seen_by_the_caller():
    """Independent review: a case found silently wrong once, now right or refused."""
    # scale_first(y) writes y[0] * 10 into the caller's y, as Python shows it (outside tester H4)
    x = np.array([1.0, 2.0])
    expected = np.array([2 * 10.0 * x[0], 2 * x[1]])           # sum(y * x) with y = [10 x0, x1]
    for mode in ("reverse", "forward", "auto"):
        np.testing.assert_allclose(s2s.grad(helper_writes_argument, mode=mode)(x), expected, rtol=1e-12)
