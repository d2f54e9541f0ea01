"""`iter(xs)` read by `next(it)`, `next(it, default)` and `for v in it` (s2s/frontend/desugar/iterators.py). An
outside tester's report: `next(it)` on an iterator over a list of differentiated values was refused ("no
derivative rule for next")."""
import numpy as np
import pytest

import s2s
from conftest import assert_gradient
from s2s.testing import check_grads


def three_reads(a, b):
    it = iter([a, b * a])
    u = next(it)
    v = next(it)
    w = next(it, 3.0)           # exhausted: the default
    return u * v * w + np.sin(u)


def default_not_taken(a, b):
    it = iter((a, b))
    u = next(it, 0.5)
    return u * u * b


def first_then_the_rest(x):
    it = iter(x)                # an array's rows: its items
    first = next(it)
    total = 0.0
    for v in it:
        total = total + (v - first) ** 2
    return total


def in_a_loop(x):
    it = iter([x, 2.0 * x, x * x])
    acc = 1.0
    for _ in range(3):
        acc = acc * next(it) + 1.0
    return acc


def from_a_comprehension(a, b):
    it = iter([a, b, a * b])
    pair = [next(it) for _ in range(2)]
    return pair[0] * np.exp(pair[1]) + next(it)


def first_item(x):
    return next(iter(x)) ** 3 + next(iter([]), x[1]) * 2.0


X = np.array([0.4, -1.2, 0.9])


@pytest.mark.parametrize("f, args, wrt", [
    (three_reads, (0.7, 1.3), 0),
    (three_reads, (0.7, 1.3), 1),
    (default_not_taken, (0.7, 1.3), 0),
    (first_then_the_rest, (X,), 0),
    (in_a_loop, (0.8,), 0),
    (from_a_comprehension, (0.3, 0.6), 1),
    (first_item, (X,), 0),
], ids=lambda v: getattr(v, "__name__", str(v)))
def test_gradients(f, args, wrt):
    assert_gradient(f, *args, wrt=wrt)
    check_grads(f, args, order=2, modes=("forward", "reverse"), wrt=wrt)


def test_closed_form():
    # default_not_taken = a^2 b
    assert s2s.grad(default_not_taken)(0.7, 1.3) == pytest.approx(2 * 0.7 * 1.3)
    assert s2s.grad(default_not_taken, wrt=1, mode="forward")(0.7, 1.3) == pytest.approx(0.49)


def test_exhausted_raises_stop_iteration_as_python_does():
    def one_too_many(a):
        it = iter([a])
        return next(it) * next(it)

    with pytest.raises(StopIteration):
        one_too_many(0.5)
    with pytest.raises(StopIteration):
        s2s.grad(one_too_many)(0.5)


def test_a_next_evaluated_only_sometimes_is_refused():
    def conditional(a, b):
        it = iter([a, b])
        u = next(it)
        return u if u > 0 else next(it)

    with pytest.raises(s2s.S2SError, match=r"test_iterators.py:\d+:\d+: .*next\(it\).*evaluated once") as info:
        s2s.grad(conditional)(0.5, 1.0)
    assert "assign it first" in str(info.value)
