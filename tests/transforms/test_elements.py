"""Loops over array elements (issue 15, item 2): `x[i]` reads and `out[i] = v` writes, in reverse mode, forward
mode and second order (forward over reverse), against central differences (s2s.check_grads); and the shape of
the generated code, so that O(1) work per element cannot silently become O(n) again: no `_scatter`,
`_written` or `_overwritten` in an element loop's gradient, no copy of an array per iteration."""
import math
import re

import numpy as np
import pytest

import s2s
from s2s.testing import check_grads
from conftest import agrees, assert_gradient, central, numeric

rng = np.random.default_rng(7)


def running_sum(x):
    acc = 0.0
    out = np.zeros_like(x)
    for i in range(len(x)):
        acc = acc + x[i] * x[i]
        out[i] = acc
    return np.sum(out)


def stencil(u):
    total = 0.0
    for i in range(1, len(u) - 1):
        d = u[i - 1] - 2.0 * u[i] + u[i + 1]
        total = total + d * d
    return total


def matvec(A, x):
    total = 0.0
    for i in range(A.shape[0]):
        s = 0.0
        for j in range(A.shape[1]):
            s = s + A[i, j] * x[j]
        total = total + s * s
    return total


def recurrence(x, a):
    out = np.zeros_like(x)
    out[0] = math.sin(x[0])
    for i in range(1, len(x)):
        out[i] = a * out[i - 1] + math.sin(x[i])
    return np.sum(out * out)


def swap(y, i, j):
    y = y.copy()
    t = y[i]
    y[i] = y[j]
    y[j] = t
    return np.sum(y * np.arange(len(y)) ** 2)


def reverse_by_swaps(y):
    y = y.copy()
    n = len(y)
    for i in range(n // 2):
        t = y[i]
        y[i] = y[n - 1 - i]
        y[n - 1 - i] = t
    return np.sum(y * np.sin(np.arange(n)))


def gauss_seidel(u, f):
    u = u.copy()
    n = len(u)
    for sweep in range(3):
        for i in range(1, n - 1):
            u[i] = 0.5 * (u[i - 1] + u[i + 1] + f[i])
    return np.sum(u * u)


def matrix_writes(A):
    B = np.zeros_like(A)
    for i in range(A.shape[0]):
        for j in range(A.shape[1]):
            B[i, j] = A[i, j] * A[j, i] + math.cos(A[i, j])
    return np.sum(B * B)


def branch_writes(x):
    out = np.zeros_like(x)
    for i in range(len(x)):
        if x[i] > 0:
            out[i] = x[i] * x[i]
        else:
            out[i] = math.sin(x[i])
    return np.sum(out * np.arange(1, len(x) + 1))


def nested_rows(A, c):
    out = A.copy()
    for k in range(2):
        for i in range(1, A.shape[0]):
            for j in range(A.shape[1]):
                out[i, j] = out[i, j] + c * out[i - 1, j] * out[i - 1, j]
    return np.sum(out)


def argument_copy(x):
    y = x.copy()
    for i in range(1, len(y)):
        y[i] = y[i] * y[i - 1] + x[i]
    return np.sum(y) + y[0] * y[-1]


def slice_reads(x):
    total = 0.0
    for i in range(len(x) - 2):
        w = x[i:i + 3]
        total = total + np.sum(w * w) * x[i]
    return total


def row_writes(A):
    B = np.zeros_like(A)
    for i in range(A.shape[0]):
        B[i] = np.sin(A[i]) * (i + 1)
        B[i, 0] = A[i, 1] * A[i, 2]
    return np.sum(B * B)


CASES = {
    "running_sum": (running_sum, (rng.normal(size=7),)),
    "stencil": (stencil, (rng.normal(size=9),)),
    "matvec": (matvec, (rng.normal(size=(4, 3)), rng.normal(size=3))),
    "recurrence": (recurrence, (rng.normal(size=6), 0.7)),
    "swap": (swap, (rng.normal(size=6), 1, 4)),
    "reverse_by_swaps": (reverse_by_swaps, (rng.normal(size=7),)),
    "gauss_seidel": (gauss_seidel, (rng.normal(size=7), rng.normal(size=7))),
    "matrix_writes": (matrix_writes, (rng.normal(size=(3, 3)),)),
    "branch_writes": (branch_writes, (rng.normal(size=8),)),
    "nested_rows": (nested_rows, (rng.normal(size=(4, 3)) * 0.5, 0.3)),
    "argument_copy": (argument_copy, (rng.normal(size=6) * 0.8,)),
    "slice_reads": (slice_reads, (rng.normal(size=7),)),
    "row_writes": (row_writes, (rng.normal(size=(3, 4)),)),
}
WRT = {"swap": (0,)}


@pytest.mark.parametrize("name", sorted(CASES))
def test_against_central_differences_all_modes(name):
    f, args = CASES[name]
    check_grads(f, args, order=2, wrt=WRT.get(name))
    for i in [k for k, a in enumerate(args) if isinstance(a, float)]:
        s2s.check_grad(f, *args, wrt=i)     # mode="auto" along one float: forward mode seeded with 1.0


@pytest.mark.parametrize("name", ["running_sum", "recurrence", "gauss_seidel", "matrix_writes", "branch_writes"])
def test_same_gradient_without_shape_specialization(name):
    """The unspecialized derivative (no shapes: every write goes to a copy) agrees with the in-place one."""
    f, args = CASES[name]
    wrt = tuple(k for k, a in enumerate(args) if isinstance(a, (float, np.ndarray)))
    plain = s2s.grad(f, wrt=wrt, optimize=False)(*args)
    fast = s2s.grad(f, wrt=wrt)(*args)
    for a, b in zip(plain if len(wrt) > 1 else (plain,), fast if len(wrt) > 1 else (fast,)):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-14)


def test_running_sum_closed_form():
    x = rng.normal(size=50)
    n = len(x)
    np.testing.assert_allclose(s2s.grad(running_sum)(x), 2.0 * (n - np.arange(n)) * x, rtol=1e-12)


def test_gauss_seidel_in_nested_loops_is_accepted_and_right():
    u, f = rng.normal(size=12), rng.normal(size=12)
    du, df = s2s.grad(gauss_seidel, wrt=(0, 1))(u, f)
    eps = 1e-6
    for k in (0, 3, 11):
        e = np.zeros(12)
        e[k] = eps
        assert du[k] == pytest.approx((gauss_seidel(u + e, f) - gauss_seidel(u - e, f)) / (2 * eps), rel=1e-6)
        assert df[k] == pytest.approx((gauss_seidel(u, f + e) - gauss_seidel(u, f - e)) / (2 * eps), rel=1e-6,
                                      abs=1e-9)


def _body_of(source: str, name: str) -> str:
    start = source.index(f"def {name}(")
    return source[start:]


@pytest.mark.parametrize("name, args", [("running_sum", (rng.normal(size=50),)),
                                        ("stencil", (rng.normal(size=50),)),
                                        ("matvec", (rng.normal(size=(5, 5)), rng.normal(size=5))),
                                        ("recurrence", (rng.normal(size=50), 0.5)),
                                        ("gauss_seidel", (rng.normal(size=50), rng.normal(size=50))),
                                        ("slice_reads", (rng.normal(size=50),)),
                                        ("matrix_writes", (rng.normal(size=(6, 6)),))])
def test_reverse_code_has_no_full_size_work_per_element(name, args):
    """The generated gradient writes adjoints element by element in place: no `_scatter`, `_written`,
    `_overwritten`, and no `setitem(...)` (a copy of the whole array) call anywhere in it."""
    f = CASES[name][0]
    wrt = tuple(k for k, a in enumerate(args) if isinstance(a, (float, np.ndarray)))
    source = s2s.source(f, *args, wrt=wrt)
    body = _body_of(source, f"{f.__name__}_grad")
    for helper in ("_scatter", "_written", "_overwritten", "setitem("):
        assert helper not in body, f"{helper} in the gradient of {name}:\n{body}"
    assert re.search(r"\n\s+d\w+\[[^\]]+\] = ", body), body       # an adjoint written element by element


def test_running_sum_reverse_code_in_place():
    source = s2s.source(running_sum, rng.normal(size=50))
    body = _body_of(source, "running_sum_grad")
    assert "_written" not in body and "_overwritten" not in body and "_scatter" not in body
    assert re.search(r"dout\[i\] = 0\.0", body), body          # what was overwritten gets no adjoint, in place
    assert re.search(r"dx\[i\] = ", body), body


def test_forward_mode_writes_tangents_in_place():
    source = s2s.source(recurrence, rng.normal(size=20), 0.5, wrt=1, mode="forward")
    assert "setitem(" not in source and "_scatter" not in source, source


def test_advanced_index_still_adds_repeats():
    def gather(x, idx):
        total = 0.0
        for k in range(3):
            total = total + np.sum(x[idx] ** 2) * (k + 1)
        return total
    x, idx = rng.normal(size=5), np.array([0, 2, 2, 4])
    expected = 6.0 * np.bincount(idx, weights=2 * x[idx], minlength=5)
    np.testing.assert_allclose(s2s.grad(gather)(x, idx), expected, rtol=1e-12)


def test_a_row_read_before_the_write_is_not_overwritten():
    """`A[i - 1]` is a row (a view) the reverse sweep reads: the write into A must go to a copy, not into it."""
    def rows(A):
        A = A.copy()
        total = 0.0
        for i in range(1, A.shape[0]):
            total = total + np.sum(np.sin(A[i - 1]))
            A[i - 1, 0] = 2.0 * A[i, 0] * A[i - 1, 1]
        return total + np.sum(A * A)
    check_grads(rows, (rng.normal(size=(4, 3)),), order=2)


def test_a_row_kept_while_its_array_is_written_is_refused():
    def rows(A):
        A = A.copy()
        total = 0.0
        for i in range(1, A.shape[0]):
            r = A[i - 1]
            A[i - 1, 0] = 2.0 * A[i, 0]
            total = total + np.sum(r * r)
        return total
    with pytest.raises(s2s.S2SError, match="slice or row"):
        s2s.grad(rows)(rng.normal(size=(4, 3)))


def test_an_element_read_kept_after_the_write():
    def kept(x):
        y = x.copy()
        total = 0.0
        for i in range(len(y) - 1):
            a = y[i]
            y[i] = y[i + 1] * 3.0
            total = total + a * y[i] + a * a
        return total
    check_grads(kept, (rng.normal(size=6),), order=2)


def jacobi(u, k):
    for t in range(3):
        v = np.copy(u)
        for i in range(1, len(u) - 1):
            v[i] = 0.5 * (u[i - 1] + u[i + 1]) + k * u[i]
        u = v
    return np.sum(u * u)


def test_jacobi_with_a_new_copy_each_sweep_is_accepted():
    """`v = np.copy(u)` in each sweep, then `v[i] = ...`, then `u = v`: the writes go into the new copy."""
    check_grads(jacobi, (rng.normal(size=7), 0.3), order=2)


def test_a_write_into_an_object_the_loop_may_swap_is_refused():
    def swapped(x, u):
        v = x.copy()
        for t in range(3):
            v[0] = v[0] * 2.0
            v = u                       # from the next iteration on, v[0] = ... would write into u
        return np.sum(v)
    with pytest.raises(s2s.S2SError, match="may also become another object"):
        s2s.grad(swapped)(rng.normal(size=3), rng.normal(size=3))


def test_a_write_through_a_view_of_a_carried_array_is_refused():
    def through_view(x, u):
        v = x.copy()
        for t in range(3):
            w = v[0:2]
            v = u
            w[0] = w[0] * 2.0           # writes into what v was: from the second iteration on, into u
        return np.sum(v) + np.sum(u)
    with pytest.raises(s2s.S2SError):
        s2s.grad(through_view)(rng.normal(size=3), rng.normal(size=3))


def whole_array_read(x):
    out = 1.0 * x
    total = 0.0
    for i in range(len(x)):
        total = total + np.sum(out * out) * x[i]
        out[i] = math.sin(out[i]) + total * 0.1
    return total + np.sum(out)


def test_a_whole_array_read_before_a_write_saves_one_element():
    """The reverse sweep reads all of `out` (the adjoint of `out * out`) while the loop writes out[i]: the
    forward sweep saves the overwritten element, and the reverse sweep writes it back, in place."""
    x = rng.normal(size=7)
    check_grads(whole_array_read, (x,), order=2)
    body = _body_of(s2s.source(whole_array_read, rng.normal(size=40)), "whole_array_read_grad")
    assert "setitem(" not in body and "_scatter" not in body, body
    assert re.search(r"\n\s+out\[i\] = out_\d+\n", body), body          # the element written back
    pushed = re.findall(r"(\w+_stack\w*)\.append\((\w+)\)", body)
    assert all(v != "out" for _, v in pushed), body                     # never the whole array


def scaled_window(u, k):
    y = u * 1.0
    for t in range(1):
        y[1:3] *= k                     # a view of y is read, then y is written: the view must not see it
    return np.sum(y * y) * k


def test_a_slice_read_and_written_in_a_loop_all_modes():
    check_grads(scaled_window, (rng.normal(size=5), 0.4), order=2)
    value, tangent = s2s.jvp(scaled_window, (np.arange(5.0), 0.5), (np.ones(5), 1.0))
    eps = 1e-6
    up, down = scaled_window(np.arange(5.0) + eps, 0.5 + eps), scaled_window(np.arange(5.0) - eps, 0.5 - eps)
    expected = (up - down) / (2 * eps)
    assert tangent == pytest.approx(expected, rel=1e-6)


def rows_read_whole(A):
    B = A * 1.0
    total = 0.0
    for i in range(B.shape[0]):
        total = total + np.sum(np.sin(B)) * (i + 1)
        B[i] = B[i] * 0.5 + total * 0.1         # a row written while the reverse sweep reads all of B
        B[i, 0] = B[i, 1] * B[i, 0]
    return total + np.sum(B * B)


def test_rows_written_while_the_whole_array_is_read_all_modes():
    check_grads(rows_read_whole, (rng.normal(size=(3, 4)),), order=2)


MODES = ["reverse", "forward", "auto"]


def gauss_seidel_with_an_accumulator(b, A):
    x = np.zeros(3)
    for sweep in range(4):
        for i in range(3):
            s = b[i]
            for j in range(3):
                if j != i:
                    s -= A[i, j] * x[j]
            x[i] = s / A[i, i]
    return np.sum(x * x)


MATRIX = np.array([[4.0, 1.0, 0.5], [1.0, 3.0, 0.2], [0.5, 0.2, 2.0]])


@pytest.mark.parametrize("mode", MODES)
def test_gauss_seidel_with_a_scalar_accumulator(mode):
    """Outside round 1 (the first outside tester's programs, written in their own style)."""
    b = np.array([1.0, 2.0, -0.5])
    agrees(gauss_seidel_with_an_accumulator, (b, MATRIX), 0, mode=mode)
    agrees(gauss_seidel_with_an_accumulator, (b, MATRIX), 1, mode=mode)


def test_gauss_seidel_with_a_scalar_accumulator_second_order():
    """Outside round 1 (the first outside tester's programs, written in their own style)."""
    b = np.array([1.0, 2.0, -0.5])
    h = s2s.hessian(lambda v: gauss_seidel_with_an_accumulator(v, MATRIX))(b)
    g = s2s.grad(lambda v: gauss_seidel_with_an_accumulator(v, MATRIX))
    rows = [(g(b + e * 1e-5) - g(b - e * 1e-5)) / 2e-5 for e in np.eye(3)]
    np.testing.assert_allclose(h, np.array(rows), rtol=1e-5, atol=1e-7)


def cholesky_sum(A):
    n = A.shape[0]
    L = np.zeros((n, n))
    for i in range(n):
        for j in range(i + 1):
            s = A[i, j]
            for k in range(j):
                s -= L[i, k] * L[j, k]
            if i == j:
                L[i, j] = np.sqrt(s)
            else:
                L[i, j] = s / L[j, j]
    return np.sum(L * np.arange(1.0, n * n + 1.0).reshape(n, n))


@pytest.mark.parametrize("mode", MODES)
def test_cholesky_with_a_two_dimensional_running_sum(mode):
    """Outside round 2, reasonable code that was refused."""
    A = np.array([[4.0, 2.0, 0.6], [2.0, 3.0, 0.4], [0.6, 0.4, 2.0]])
    assert cholesky_sum(A) == pytest.approx(np.sum(np.linalg.cholesky(A) * np.arange(1.0, 10.0).reshape(3, 3)))
    agrees(cholesky_sum, (A,), mode=mode, rtol=1e-5)


def gauss_seidel_with_edges(b, k):
    u = np.zeros_like(b)
    n = b.shape[0]
    for sweep in range(3):
        for i in range(n):
            left = u[i - 1] if i > 0 else 0.0
            if i < n - 1:
                right = u[i + 1]
            else:
                right = 0.0
            u[i] = (b[i] + left + right) / (2.0 + k)
    return np.sum(u ** 2)


def rows_gauss_seidel(B, k):
    U = np.zeros_like(B)
    for i in range(B.shape[0]):
        above = U[i - 1] if i > 0 else 0.0
        U[i] = (B[i] + above) / (2.0 + k)
    return np.sum(U ** 2)


@pytest.mark.parametrize("mode", MODES)
def test_a_conditional_element_read_before_a_write(mode):
    """Outside round 5, K13/H5: an element read under a condition (`left = u[i - 1] if i > 0 else 0.0`) is a number read
    from u, as a plain `left = u[i - 1]` is: a Gauss-Seidel sweep is differentiated (a row of a 2-D array: refused when
    run)."""
    b = np.array([0.3, -0.4, 1.1, 0.7, 0.2])
    db, dk = s2s.grad(gauss_seidel_with_edges, wrt=(0, 1), mode=mode)(b, 0.5)
    np.testing.assert_allclose(db, central(lambda v: gauss_seidel_with_edges(v, 0.5), b), rtol=1e-6, atol=1e-9)
    assert dk == pytest.approx(central(lambda k: gauss_seidel_with_edges(b, k), 0.5), rel=1e-6)
    with pytest.raises(s2s.RefusedWhenRun, match="above"):
        s2s.grad(rows_gauss_seidel, wrt=1, mode=mode)(np.ones((3, 2)), 0.5)


def stencil_from_the_old_array(u, k):
    for t in range(2):
        v = u.copy()
        for i in range(1, 3):
            v[i] = u[i] + k * u[i - 1]
        u = v
    return np.sum(u * u)


def heat(u, k):
    for t in range(5):
        v = u.copy()
        for i in range(1, len(u) - 1):
            v[i] = u[i] + k * (u[i - 1] - 2.0 * u[i] + u[i + 1])
        u = v
    return np.sum(u * u)


def test_stencil_reads_the_old_array():
    """Issue 12 (classes of silently wrong gradients), 7 and 8. names of values alive at once."""
    u = np.array([0.3, -0.7, 1.1, 0.4])
    for opt in (True, False):
        value, (du, dk) = s2s.value_and_grad(stencil_from_the_old_array, wrt=(0, 1), optimize=opt)(u, 0.5)
        assert value == pytest.approx(stencil_from_the_old_array(u, 0.5))
        np.testing.assert_allclose(du, numeric(stencil_from_the_old_array, (u, 0.5), 0), rtol=1e-6)
        assert dk == pytest.approx(numeric(stencil_from_the_old_array, (u, 0.5), 1), rel=1e-6)
    assert s2s.grad(stencil_from_the_old_array)(u, 0.5)[1] == pytest.approx(0.15)


def test_heat_equation():
    """Issue 12 (classes of silently wrong gradients), 7 and 8. names of values alive at once."""
    u = np.sin(np.linspace(0, np.pi, 200))
    dk = s2s.grad(heat, wrt=1)(u, 0.2)
    assert dk == pytest.approx(numeric(heat, (u, 0.2), 1), rel=1e-5)


def lower_triangle_sums(u, k):
    w = np.zeros(len(u))
    for i in range(len(u)):
        for j in range(i + 1):
            w[i] += u[j] * k
    u = w
    return np.sum(u * np.arange(len(u)))


def gauss_seidel_sweeps(u, f):
    u = u * 1.0
    for t in range(3):
        for i in range(1, len(u) - 1):
            u[i] = 0.5 * (u[i - 1] + u[i + 1] + f[i])
    return np.sum(u * u)


def swap_then_sweep(u, v):
    for t in range(2):
        u, v = v, u
    u = u * 1.0
    for i in range(1, len(u)):
        u[i] = 0.4 * u[i - 1] + u[i]
    return np.sum(u)


def swap_through_temporary(y):
    y = y.copy()
    t = y[0]
    y[0] = y[2]
    y[2] = t
    return np.sum(y * np.arange(4.0))


@pytest.mark.parametrize("f, args", [
    (lower_triangle_sums, (np.array([0.3, -1.0, 2.0]), 0.5)), (gauss_seidel_sweeps, (np.linspace(0, 1, 5), np.ones(5))),
    (swap_then_sweep, (np.array([1.0, 2.0, 3.0]), np.array([-1.0, 0.5, 2.0]))),
    (swap_through_temporary, (np.array([1.0, 2.0, 3.0, 4.0]),)),
])
def test_element_loops_and_swaps(f, args):
    """Issue 12 (classes of silently wrong gradients), element code that is correct is not refused."""
    for wrt in range(len(args)):
        assert_gradient(f, *args, wrt=wrt)
