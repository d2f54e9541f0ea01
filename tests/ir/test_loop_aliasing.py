"""Aliasing one loop iteration makes and a later one writes through (issue 27, the program fuzzer's names:317).

`result = x` at the end of one iteration and `x += ...` at the start of the next change both names in Python; the
lowering took each carried variable to start every iteration sharing only what it shared before the loop, so the
write was lost through the other name: a wrong value and gradient in every mode, caught only by check=True. Now
lowering learns what an iteration hands on shared (s2s/ir/loop_sharing.py) and refuses such a write, naming the
loop; a write the other name can no longer see (it is bound anew before it is read: s2s/ir/liveness.py) is
differentiated. Accepted programs are checked against Python's value and central differences in every mode."""
import numpy as np
import pytest

import s2s
from s2s.testing import check_grads
from conftest import agrees

MODES = ["auto", "reverse", "forward"]
X = np.array([0.3, -0.7, 1.1, 0.4])


# ---------------------------------------------------------------- refused: an earlier iteration made the alias

def running_rebound(x):
    result = x * 0.5
    x = x * 1.0
    for u in range(2):
        x += result / (1.5 + x ** 2)        # from the second iteration on, x is result: both change
        x = result.copy()
        x[2] = 0.3 * x[1]
        result = x
    return np.sum(x + result * x)


def alias_in_a_branch(x):
    a = x * 1.0
    b = x * 2.0
    for i in range(4):
        a += 0.1 * b
        if i % 2 == 0:
            b = a
        else:
            b = b * 1.5
    return np.sum(a * b)


def best_so_far(x):                         # the classic: best = cur, then cur updated in place
    cur = x * 1.0
    best = x * 2.0
    k = 0
    while k < 3:
        cur += 0.1 * np.sin(cur)
        if np.sum(cur) < np.sum(best):
            best = cur
        k += 1
    return np.sum(best ** 2) + np.sum(cur)


def trajectory(x):                          # every item of traj is the one array y
    traj = []
    y = x * 1.0
    for i in range(3):
        y += 0.1 * np.cos(y)
        traj.append(y)
    return np.sum(np.stack(traj) ** 2)


def alias_made_in_an_inner_loop(x):
    a = x * 1.0
    b = x * 0.5
    c = x * 0.0
    for i in range(2):
        a += 0.3 * np.sin(b)
        c = c + b                           # b is a from the second iteration on: it sees the write
        for j in range(2):
            b = a
    return np.sum(a * b * c)


def rebound_to_an_outer_array(x):
    base = x * 2.0
    y = x * 1.0
    for i in range(3):
        y += 0.1 * base                     # from the second iteration on, this doubles base
        y = base
    return np.sum(y) + np.sum(base * x)


def row_written_while_a_view_is_read(x):
    y = x * 1.0
    v = y[:2] * 1.0
    for i in range(3):
        y[0] += 0.5 * np.sum(v)
        w = v * 2.0                         # v, a view of y from the second iteration on, read after the write
        v = y[:2]
    return np.sum(w * x[:2]) + np.sum(y)


@pytest.mark.parametrize("f, phrase", [
    (running_rebound, "'x' may be the same array as 'result' (an earlier iteration of the loop at"),
    (alias_in_a_branch, "'a' may be the same array as 'b' (an earlier iteration of the loop at"),
    (best_so_far, "'cur' may be the same array as 'best' (an earlier iteration of the loop at"),
    (trajectory, "'y' may be the same array as 'traj' (an earlier iteration of the loop at"),
    (alias_made_in_an_inner_loop, "'a' may be the same array as 'b' (an earlier iteration of the loop at"),
    (rebound_to_an_outer_array, "'y' may be the same array as 'base'"),
    (row_written_while_a_view_is_read, "'y' may share memory with 'v' (a view, an alias or an item of it) (an "
                                       "earlier iteration of the loop at"),
])
@pytest.mark.parametrize("mode", MODES)
def test_a_write_through_an_alias_an_earlier_iteration_made_is_refused(f, phrase, mode):
    with pytest.raises(s2s.UnsupportedSyntax, match=phrase.replace("(", r"\(").replace(")", r"\)")) as info:
        s2s.value_and_grad(f, mode=mode)(X.copy())
    assert "test_loop_aliasing.py:" in str(info.value) and "hint:" in str(info.value)


def test_the_fuzzers_program_is_refused_not_wrong():
    """names:317 as the fuzzer wrote it: 1.616 in Python, 1.372 in the derivative before, in every mode."""
    def f(x, x_dot):
        dw1 = x * 0.5
        result = x_dot * x
        if np.sum(x_dot) > -1.43:
            pass
        else:
            if np.sum(dw1) > 0.18:
                x = ((x) - (result))
                x_dot = result.copy()
                x_dot[0] = np.full(3, -0.8)[0]
                dt1 = 0
                while dt1 < 2:
                    dt1 += 1
                    x = ((dw1) + (np.full(3, -0.05)))
            x_dot, dw1 = dw1, x_dot
        for y_dot in range(1):
            x_dot = x.copy()
            for u_dot in range(2):
                x += ((result) / (1.5 + (x) ** 2))
                x = result.copy()
                x[2] = ((np.full(3, -1.3)) + (dw1))[0]
                result = x
                if np.sum(x_dot) > 0.46:
                    x_dot = ((dw1) / (1.5 + (dw1) ** 2))
                    x = ((result) / (1.5 + (x_dot) ** 2))
                    x_dot = (np.sin((x)))
        return np.sum(1.45 * dw1 + -0.68 * x + -0.32 * x_dot + -0.38 * result)

    args = (np.array([-0.364, -0.45, -0.7]), np.array([-0.094, 0.945, 0.181]))
    for mode in MODES:
        with pytest.raises(s2s.UnsupportedSyntax, match="'x' may be the same array as 'result'"):
            s2s.value_and_grad(f, mode=mode, check=False)(*[a.copy() for a in args])


# ---------------------------------------------------------------- differentiated: copies, or an alias never read

def running_copied(x):
    result = x * 0.5
    x = x * 1.0
    for u in range(2):
        x += result / (1.5 + x ** 2)
        x = result.copy()
        x[2] = 0.3 * x[1]
        result = x.copy()
    return np.sum(x + result * x)


def trajectory_copied(x):
    traj = []
    y = x * 1.0
    for i in range(3):
        y += 0.1 * np.cos(y)
        traj.append(y.copy())
    return np.sum(np.stack(traj) ** 2)


def best_copied(x):
    cur = x * 1.0
    best = x * 2.0
    k = 0
    while k < 3:
        cur += 0.1 * np.sin(cur)
        if np.sum(cur) < np.sum(best):
            best = cur.copy()
        k += 1
    return np.sum(best ** 2) + np.sum(cur)


def renamed_at_the_end_of_each_iteration(x):
    a = x * 1.0
    b = x * 3.0
    for i in range(3):
        a[0] = a[0] * 0.5 + b[1]            # b is a from the second iteration on, but never read after this
        b = a
    return np.sum(a * b * x)


def renamed_in_a_while_loop(x):
    a = x * 1.0
    b = x * 3.0
    k = 0
    while k < 3:
        b[1] = b[1] * a[0]
        a = b
        k += 1
    return np.sum(a * x) + np.sum(b)


def view_rebound_after_the_write(x):
    y = x * 1.0
    v = y[:2] * 1.0
    for i in range(3):
        y[0] += 0.5 * np.sum(v)             # v views y from the second iteration on: read before the write only
        v = y[:2]
    return np.sum(v * x[:2]) + np.sum(y)


def rebound_by_an_inner_loop_that_runs(x):
    a = x * 1.0
    b = x * 0.5
    for i in range(2):
        a += 0.3 * np.sin(b)                # b is a from the second iteration on, read before the write only:
        for j in range(2):                  # the inner loop (which runs) binds it anew before any other read
            b = a
    return np.sum(a * b)


def numbers_aliased(x):                     # numbers: `a += b` makes a new number, b keeps its own
    a = np.sum(x) * 1.0
    b = np.sum(x) * 2.0
    for i in range(3):
        a += b
        b = a
    return a * b


ACCEPTED = [running_copied, trajectory_copied, best_copied, renamed_at_the_end_of_each_iteration,
            renamed_in_a_while_loop, view_rebound_after_the_write, rebound_by_an_inner_loop_that_runs, numbers_aliased]


@pytest.mark.parametrize("f", ACCEPTED)
@pytest.mark.parametrize("mode", MODES)
def test_copies_and_aliases_never_read_again_are_differentiated(f, mode):
    value, _ = s2s.value_and_grad(f, mode=mode)(X.copy())
    assert value == pytest.approx(f(X.copy()), rel=1e-12)
    agrees(f, (X.copy(),), mode=mode, rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize("f", [renamed_at_the_end_of_each_iteration, view_rebound_after_the_write,
                               rebound_by_an_inner_loop_that_runs])
def test_an_alias_never_read_again_to_second_order(f):
    check_grads(f, (X.copy(),), order=2)


# ---------------------------------------------------------------- liveness: what "never read again" means

def read_after_the_loop(x):
    a = x * 1.0
    b = x * 3.0
    for i in range(3):
        a[0] = a[0] * 0.5 + 1.0             # b is a from the second iteration on, and the last one is read
        b = a
        c = b * 1.0
    return np.sum(c * x) + np.sum(b)


def read_in_a_branch_before_rebinding(x):
    a = x * 1.0
    b = x * 3.0
    s = 0.0
    for i in range(3):
        a[0] = a[0] * 0.5 + 1.0
        if i == 1:
            s = s + np.sum(b * x)           # reads b, which is a (written just before) on this path
        b = a
    return np.sum(a * x) + s


def read_in_the_next_iteration_before_rebinding(x):
    a = x * 1.0
    b = x * 3.0
    s = 0.0
    for i in range(3):
        a[1] = a[1] * 0.5 + 1.0
        s = s + np.sum(b * x)               # b is a from the second iteration on: it sees the write
        b = a
    return s


@pytest.mark.parametrize("f", [read_in_a_branch_before_rebinding, read_in_the_next_iteration_before_rebinding])
@pytest.mark.parametrize("mode", MODES)
def test_an_alias_read_on_some_path_before_it_is_bound_again_is_refused(f, mode):
    with pytest.raises(s2s.UnsupportedSyntax, match="'a' may share memory with 'b'"):
        s2s.value_and_grad(f, mode=mode)(X.copy())


@pytest.mark.parametrize("mode", MODES)
def test_an_alias_read_after_it_is_bound_again_is_differentiated(mode):
    f = read_after_the_loop
    value, _ = s2s.value_and_grad(f, mode=mode)(X.copy())
    assert value == pytest.approx(f(X.copy()), rel=1e-12)
    agrees(f, (X.copy(),), mode=mode, rtol=1e-5, atol=1e-7)


def test_an_argument_written_through_another_name_is_refused_even_if_that_name_is_never_read():
    """The caller sees its array: liveness inside the function does not make the write invisible."""
    def f(v0):
        v = v0
        v[0] = v[0] * 2.0
        return np.sum(v ** 2)
    with pytest.raises(s2s.UnsupportedSyntax, match="'v' is the same object as 'v0'"):
        s2s.grad(f)(np.array([0.3, 0.4]))


def inner_loop_that_may_not_run(x):
    a = x * 1.0
    b = x * 0.5
    for i in range(3):
        a += 0.3 * np.sin(b)                # the last iteration's inner loop runs no iteration: b stays a, and
        for j in range(2 - i):              # sees this write after the loop
            b = a
    return np.sum(a * b)


def test_an_inner_loop_that_may_run_no_iteration_does_not_bind_the_alias_anew():
    for mode in MODES:
        with pytest.raises(s2s.UnsupportedSyntax, match="'a' may be the same array as 'b'"):
            s2s.value_and_grad(inner_loop_that_may_not_run, mode=mode)(X.copy())


class Smoother:
    """An object whose attribute holds the running array from one iteration to the next."""

    def __init__(self):
        self.last = np.zeros(4)

    def written_in_place(self, x):
        y = x * 1.0
        s = 0.0
        for i in range(3):
            y[0] = y[0] * 2.0 + x[1]        # from the second iteration on, self.last is y: it sees this write
            s = s + np.sum(self.last * x)
            self.last = y
        return s

    def updated_in_place(self, x):
        y = x * 1.0
        s = 0.0
        for i in range(3):
            y += 0.5 * x
            s = s + np.sum(self.last * x)
            self.last = y
        return s

    def copied(self, x):
        y = x * 1.0
        s = 0.0
        for i in range(3):
            y += 0.5 * x
            s = s + np.sum(self.last * x)
            self.last = y.copy()
        return s

    def rebound_to_the_attribute(self, x):
        y = x * 1.0
        for i in range(3):
            y[0] = y[0] + x[1]              # from the second iteration on, y is self.last: the write changes it
            y = self.last
        return np.sum(self.last * x) + np.sum(y)

    def rebound_to_the_attribute_then_updated(self, x):
        y = x * 1.0
        for i in range(3):
            y += x
            y = self.last
        return np.sum(self.last * x) + np.sum(y)


@pytest.mark.parametrize("method, phrase", [("written_in_place", "'y' is held by an object"),
                                            ("updated_in_place", "'y' may be an array an object holds"),
                                            ("rebound_to_the_attribute", "'y' is held by an object"),
                                            ("rebound_to_the_attribute_then_updated",
                                             "'y' may be an array an object holds")])
@pytest.mark.parametrize("mode", MODES)
def test_an_attribute_an_earlier_iteration_left_holding_the_array_is_refused(method, phrase, mode):
    """Wrong before (2.38 in Python, 3.10 in the derivative for written_in_place), even with check=False."""
    with pytest.raises(s2s.UnsupportedSyntax, match=phrase + r" \(read from an attribute\) \(an earlier iteration"):
        s2s.value_and_grad(getattr(Smoother(), method), mode=mode)(X.copy())


@pytest.mark.parametrize("mode", MODES)
def test_an_attribute_given_a_copy_in_a_loop_is_differentiated(mode):
    f = Smoother().copied
    value, grad = s2s.value_and_grad(f, mode=mode)(X.copy())
    assert value == pytest.approx(Smoother().copied(X.copy()), rel=1e-12)
    # y is 1.5 x, 2 x, 2.5 x; s = 0 + (1.5 x) . x + (2 x) . x (the attribute starts at zeros): gradient 7 x
    np.testing.assert_allclose(grad, 7.0 * X, rtol=1e-12)


# ---------------------------------------------------------------- loops over literal ranges: what they run

def inner_loop_of_one_iteration(x):
    a = x * 0.5
    b = x * 1.0
    s = 0.0
    for k in range(2):
        for j in range(1):                  # one iteration: none follows the one that made b a
            a += 0.5 * np.sin(a)
            s = s + np.sum(b * x)
            b = a
        b = b * 2.0
    return s + np.sum(a * b)


def inner_loop_of_two_iterations(x):
    a = x * 0.5
    b = x * 1.0
    s = 0.0
    for k in range(2):
        for j in range(2):                  # the second iteration's write changes b, read after it
            a += 0.5 * np.sin(a)
            s = s + np.sum(b * x)
            b = a
        b = b * 2.0
    return s + np.sum(a * b)


def inner_loop_that_never_runs(x):
    a = x * 0.5
    b = x * 1.0
    s = 0.0
    for k in range(3):
        a += 0.5 * np.sin(a)
        s = s + np.sum(b * x)               # b is never a: the loop that would bind it runs no iteration
        for j in range(0):
            b = a
    return s + np.sum(a)


@pytest.mark.parametrize("f", [inner_loop_of_one_iteration, inner_loop_that_never_runs])
@pytest.mark.parametrize("mode", MODES)
def test_a_literal_range_of_one_or_no_iteration_hands_nothing_on(f, mode):
    """The fuzzer's names:687 in short: refused while a `range(0)` loop was taken to run and a `range(1)` loop to
    run again."""
    value, _ = s2s.value_and_grad(f, mode=mode)(X.copy())
    assert value == pytest.approx(f(X.copy()), rel=1e-12)
    agrees(f, (X.copy(),), mode=mode, rtol=1e-5, atol=1e-7)


def test_a_literal_range_of_two_iterations_hands_the_alias_on():
    for mode in MODES:
        with pytest.raises(s2s.UnsupportedSyntax, match="'a' may be the same array as 'b'"):
            s2s.value_and_grad(inner_loop_of_two_iterations, mode=mode)(X.copy())
