"""Floats written into integer arrays (s2s/analysis/dtypes.py), and complex outputs of real arguments in reverse mode.

A float written into an integer array is truncated, so it keeps no derivative: the second outside tester found
arrays made integer by np.arange, an int list, np.full with an int, np.zeros_like of an int array and a copy of
one, which s2s had taken for float arrays (a silently wrong gradient). Where the code does not decide the dtype, the
derivative checks it when it runs.
"""
import numpy as np
import pytest

import s2s
from conftest import agrees

X = 1.7


def central(f, x, *rest, eps=1e-6):
    return (f(x + eps, *rest) - f(x - eps, *rest)) / (2 * eps)


def arange_copy(v):
    a = np.arange(5).copy()
    a[0] = v
    return a.sum() * v


def zeros_like_int(v):
    z = np.zeros_like(np.arange(3))
    z[1] = v * 2.5
    return z.sum() + v


def full_int(v):
    z = np.full(3, 2)
    z[0] = v
    return z.sum() * v


def full_dtype_int(v):
    z = np.full(5, v, dtype=int)
    return z.sum() + v


def int_list(v):
    z = np.array([1, 2, 3])
    z[0] = v
    return z.sum() * v


def reshaped_int(v):
    z = np.arange(6).reshape(2, 3)
    z[1, 2] = v * 3.0
    return (z * v).sum()


def float_list(v):             # one float in the list: a float array, which keeps v's derivative
    z = np.array([1, 2, 3.0])
    z[0] = v
    return z.sum() * v


def int_in_loop(v):
    z = np.arange(4)
    acc = 0.0
    for i in range(4):
        z[i] = v * i
        acc = acc + z[i] * v
    return acc


def float_in_loop(v):
    z = np.zeros(4)
    acc = 0.0
    for i in range(4):
        z[i] = v * i
        acc = acc + z[i] * v
    return acc


CASES = [arange_copy, zeros_like_int, full_int, full_dtype_int, int_list, reshaped_int, float_list, int_in_loop,
         float_in_loop]


@pytest.mark.parametrize("mode", ["reverse", "forward", "auto"])
@pytest.mark.parametrize("f", CASES, ids=lambda f: f.__name__)
def test_writes_into_integer_arrays_keep_no_derivative(f, mode):
    assert s2s.grad(f, mode=mode)(X) == pytest.approx(central(f, X), rel=1e-6, abs=1e-6)


@pytest.mark.parametrize("f", [arange_copy, int_in_loop, float_in_loop], ids=lambda f: f.__name__)
def test_second_order_through_integer_arrays(f):
    second = s2s.grad(s2s.grad(f, mode="reverse"), mode="forward")(X)
    first = s2s.grad(f, mode="reverse")
    assert second == pytest.approx(central(first, X, eps=1e-5), rel=1e-5, abs=1e-6)


def written_into(v, out):
    out = out.copy()
    for i in range(len(out)):
        out[i] = out[i] * v
    return out.sum() * v


def test_an_argument_of_undecided_dtype_is_checked_when_it_runs():
    floats = np.arange(4.0)
    assert s2s.grad(written_into, mode="reverse")(X, floats) == pytest.approx(central(written_into, X, floats))
    with pytest.raises(s2s.RefusedWhenRun, match=r"test_dtypes\.py:\d+:\d+: 'out' holds int64 numbers") as info:
        s2s.grad(written_into, mode="reverse")(X, np.arange(4))
    assert "astype(float)" in str(info.value)


def test_the_check_stands_before_the_loop_and_only_where_undecided():
    unspecialized = s2s.source(written_into, wrt=0, mode="reverse")       # no arguments: the dtype is unknown
    lines = unspecialized.splitlines()
    check = next(i for i, line in enumerate(lines) if line.strip().startswith("_assert_inexact(out"))
    loop = next(i for i, line in enumerate(lines) if line.strip().startswith("for "))
    assert check < loop
    # specialized on a float array argument, and for arrays the code makes float: no check
    assert "_assert_inexact(" not in s2s.source(written_into, X, np.arange(4.0), wrt=0, mode="reverse")
    assert "_assert_inexact(" not in s2s.source(float_in_loop, X, mode="reverse")


def complex_of_real(x):
    return np.exp(1j * x) * x


def real_of_complex(x):
    z = np.exp(1j * x)
    return np.abs(z) ** 2 + z.real * x


def complex_constant_output(x):
    return x * (1 + 2j)


def test_a_complex_output_of_a_real_argument_is_refused_in_reverse_mode():
    for f in (complex_of_real, complex_constant_output):
        with pytest.raises(s2s.S2SError, match=r"test_dtypes\.py:\d+:\d+: .*complex number of real arguments") \
                as info:
            s2s.grad(f, mode="reverse")(0.9)
        assert 'mode="forward"' in str(info.value)


@pytest.mark.parametrize("mode", ["auto", "forward"])
def test_forward_mode_gives_the_complex_derivative_of_a_real_argument(mode):
    exact = np.exp(0.9j) * (1 + 0.9j)
    assert s2s.grad(complex_of_real, mode=mode)(0.9) == pytest.approx(exact, rel=1e-12)
    assert s2s.grad(complex_of_real, mode=mode)(0.9) == pytest.approx(central(complex_of_real, 0.9), rel=1e-7)


@pytest.mark.parametrize("mode", ["reverse", "forward", "auto"])
def test_a_real_output_through_complex_values_is_still_differentiated(mode):
    assert s2s.grad(real_of_complex, mode=mode)(0.9) == pytest.approx(central(real_of_complex, 0.9), rel=1e-7)


def sum_of_squares_over_dict(p):
    return sum(np.sum(v ** 2) for v in p.values())


def sum_of_squares_over_list(xs):
    total = 0.0
    for v in xs:
        total += np.sum(v * v)
    return total


def test_the_adjoint_of_a_reduction_of_a_python_float_stays_float64():
    # the outside tester's F2: NumPy 2's weak Python scalars had made np.result_type(x, np.float32) float32
    v = 0.1234567891
    assert s2s.grad(sum_of_squares_over_dict, mode="reverse")({"a": v})["a"] == pytest.approx(2 * v, rel=1e-15)
    assert s2s.grad(sum_of_squares_over_list, mode="reverse")([v, 0.3])[0] == pytest.approx(2 * v, rel=1e-15)


MODES = ["reverse", "forward", "auto"]


def casts(x):
    return np.sum(x.astype(int) * x) + np.sum(np.asarray(x, dtype=bool) * x) + np.sum(np.array(x, dtype=np.int64))


@pytest.mark.parametrize("mode", MODES)
def test_a_cast_to_integers_or_booleans_carries_no_derivative(mode):
    """Outside round 1 (the first outside tester's programs, written in their own style)."""
    x = np.array([0.3, 1.7, 2.5])
    got = s2s.grad(casts, mode=mode)(x)
    np.testing.assert_allclose(got, [0.0 + 1, 1.0 + 1, 2.0 + 1])


def into_an_integer_buffer(x):
    out = np.zeros(3, dtype=int)
    out[0] = x[0] * 10
    flags = np.zeros(2, dtype=bool)
    for k in range(2):
        flags[k] = x[k] > 0.5
    floats = np.zeros(3)
    floats[1] = x[1] * 10
    return np.sum(out * x) + np.sum(flags * x[:2]) + np.sum(floats * x)


@pytest.mark.parametrize("mode", MODES)
def test_a_float_written_into_an_integer_array_carries_no_derivative(mode):
    """Outside round 1 (the first outside tester's programs, written in their own style)."""
    x = np.array([0.31, 1.7, 2.2])
    got = agrees(into_an_integer_buffer, (x,), mode=mode)
    np.testing.assert_allclose(got, [3.0, 1.0 + 20 * 1.7, 0.0])


def test_a_float_written_into_an_integer_array_second_order():
    """Outside round 1 (the first outside tester's programs, written in their own style)."""
    h = s2s.hessian(into_an_integer_buffer)(np.array([0.31, 1.7, 2.2]))
    expected = np.zeros((3, 3))
    expected[1, 1] = 20.0
    np.testing.assert_allclose(h, expected)
