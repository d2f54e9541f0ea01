"""The Numba backend (issue 16): derivatives compiled by numba.njit, and derivatives of @njit functions.

Every gradient is checked against central differences and against the Python backend; what the Numba
target cannot express is refused when the derivative is made, at the user's line.
"""
from __future__ import annotations

import math
import os
import re
import sys
import warnings

import numpy as np
import pytest

import s2s
from s2s.errors import S2SError

numba = pytest.importorskip("numba", reason="the Numba backend needs numba: pip install -e '.[numba]'")

from s2s.backends.numba import NumbaUnsupported  # noqa: E402


def central(f, args, i, eps=1e-6):
    """d f / d args[i] by central differences (every element for an array)."""
    x = args[i]
    if isinstance(x, np.ndarray):
        out = np.zeros_like(x)
        for k in np.ndindex(x.shape):
            up, down = x.copy(), x.copy()
            up[k] += eps
            down[k] -= eps
            out[k] = (f(*args[:i], up, *args[i + 1:]) - f(*args[:i], down, *args[i + 1:])) / (2 * eps)
        return out
    return (f(*args[:i], x + eps, *args[i + 1:]) - f(*args[:i], x - eps, *args[i + 1:])) / (2 * eps)


# ---------------------------------------------------------------- scalar and element loops

def while_loop(x):
    y = x
    i = 0
    while i < 50:
        y = y * 0.99 + math.sin(y) * 0.01
        i += 1
    return y


def horner(x, coefficients):
    y = 0.0
    for c in coefficients:
        y = y * x + c
    return y


def euler(k, y0, h, steps):
    y = y0
    for _ in range(steps):
        y = y + h * (-k * y)
    return y


def running_sum(x):
    s = 0.0
    acc = 0.0
    for i in range(x.shape[0]):
        s = s + x[i]
        acc = acc + s * s
    return acc


def stencil(u, c):
    n = u.shape[0]
    total = 0.0
    for i in range(1, n - 1):
        v = u[i] + c * (u[i - 1] - 2.0 * u[i] + u[i + 1])
        total = total + v * v
    return total


def seed(x1, x2):
    return math.log(x1) + x1 * x2 - math.sin(x2)


def logistic(w, b, X, y):
    z = X @ w + b
    return np.mean(np.logaddexp(0.0, z) - y * z)


def rnn(Wh, Wx, b, xs, h0):
    h = h0
    for x in xs:
        h = np.tanh(Wh @ h + Wx @ x + b)
    return np.sum(h * h)


RNG = np.random.default_rng(3)
CASES = [
    (seed, (2.0, 5.0), (0, 1)),
    (while_loop, (0.7,), 0),
    (horner, (0.9, RNG.normal(size=12)), (0, 1)),
    (euler, (0.5, 1.0, 0.01, 100), (0, 1, 2)),
    (running_sum, (RNG.normal(size=20),), 0),
    (stencil, (RNG.normal(size=15), 0.1), (0, 1)),
    (logistic, (RNG.normal(size=3), 0.1, RNG.normal(size=(8, 3)), (RNG.random(8) < 0.5).astype(float)), (0, 1)),
    pytest.param(rnn, (RNG.normal(size=(4, 4)) * 0.5, RNG.normal(size=(4, 3)) * 0.5, RNG.normal(size=4),
                       RNG.normal(size=(5, 3)), RNG.normal(size=4)), (0, 1, 2),
                 marks=pytest.mark.slow, id="rnn"),       # Numba compiles matmul and tanh for 13 s
]


@pytest.mark.parametrize("fn, args, wrt", CASES, ids=[getattr(c[0], "__name__", None) for c in CASES])
def test_gradient_matches_central_differences_and_python(fn, args, wrt):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")          # Numba's notes on non-contiguous matmul operands
        found = s2s.grad(fn, wrt, backend="numba")(*args)
    expected = s2s.grad(fn, wrt)(*args)
    several = isinstance(wrt, tuple)
    for k, i in enumerate(wrt if several else (wrt,)):
        got = found[k] if several else found
        np.testing.assert_allclose(got, expected[k] if several else expected, rtol=1e-12, atol=1e-14)
        np.testing.assert_allclose(got, central(fn, args, i), rtol=1e-6, atol=1e-8)


def test_the_derivative_is_compiled_by_numba():
    gradient = s2s.grad(stencil, backend="numba")
    args = (RNG.normal(size=15), 0.1)
    gradient(*args)
    options = gradient.__s2s__[1]
    function = s2s.api.compiled(stencil, options, args)[1]
    assert isinstance(function, numba.core.registry.CPUDispatcher)
    assert function.nopython_signatures          # compiled in nopython mode, for the arguments' types


def test_value_and_grad_jvp_and_hessian():
    value, gradient = s2s.value_and_grad(euler, backend="numba")(0.5, 1.0, 0.01, 100)
    assert value == pytest.approx(euler(0.5, 1.0, 0.01, 100), rel=1e-14)
    assert gradient == pytest.approx(central(euler, (0.5, 1.0, 0.01, 100), 0), rel=1e-6)
    primal, tangent = s2s.jvp(while_loop, (0.7,), (1.0,), backend="numba")
    assert primal == pytest.approx(while_loop(0.7), rel=1e-14)
    assert tangent == pytest.approx(central(while_loop, (0.7,), 0), rel=1e-6)
    second = s2s.hessian(while_loop, backend="numba")(0.7)
    first = s2s.grad(while_loop)
    assert second == pytest.approx(central(first, (0.7,), 0, eps=1e-5), rel=1e-5)


def test_element_loops_add_into_the_gradient_in_place_and_stacks_are_preallocated():
    text = s2s.source(stencil, RNG.normal(size=15), 0.1, backend="numba")
    assert "_scatter(" not in text and re.search(r"du\[i\] (\+)?= ", text)      # no array-sized temporary
    assert "np.empty(max(" in text and ".append(" not in text
    assert "reversed(" not in text and ", 0, -1):" in text        # range(1, n) backwards


def damped(a, xs, h0):
    h = h0
    for x in xs:
        h = np.tanh(a * h + x)
    return np.sum(h * h)


def test_elementwise_lines_are_fused_and_stacks_of_arrays_preallocated():
    args = (0.8, RNG.normal(size=(6, 4)), RNG.normal(size=4))
    text = s2s.source(damped, *args, wrt=(0, 2), backend="numba")
    # one stack of h: the h pushed before each step and the one after are the same values shifted by a step
    # (s2s/passes/shifted_stacks.py), which the reverse loop carries instead of saving twice
    # (its rows' shape is known when the derivative is made: s2s/passes/stack_rows.py allocates them at once)
    assert ".append(" not in text and text.count("h_rows = np.empty((len(xs), 4), np.float64)") == 1
    # the elementwise lines, one loop over the 4 elements: their shapes are known when the derivative is made, so
    # no operand broadcasts and no shape check is needed (s2s/passes/fuse_elementwise.py)
    assert text.count("\n        for k in range(4):\n") == 2 and "np.tanh(" in text and ".shape ==" not in text
    da, dh0 = s2s.grad(damped, (0, 2), backend="numba")(*args)
    expected = s2s.grad(damped, (0, 2))(*args)
    assert da == pytest.approx(expected[0], rel=1e-12)
    np.testing.assert_allclose(dh0, expected[1], rtol=1e-12, atol=1e-15)
    assert da == pytest.approx(central(damped, args, 0), rel=1e-6)
    np.testing.assert_allclose(dh0, central(damped, args, 2), rtol=1e-6, atol=1e-9)


def broadcast_lines(x, c):
    t1 = np.sin(x)
    t1 = t1 * c
    y = t1 + c / x
    return np.sum(y)


def test_fused_lines_run_as_written_when_an_operand_broadcasts():
    x = RNG.normal(size=5)
    for c, fused in ((RNG.normal(size=5), True), (np.array([0.3]), False)):    # the loop; the lines as written
        text = s2s.source(broadcast_lines, x, c, backend="numba")
        assert "for k in range(5):" in text and ("c_k = c[k]" in text) == fused      # c read element by element
        # or the lines reading it as written (cos(x), which does not read c, may still be a loop of its own)
        assert fused or "c / x" in text and ("c * np.cos(x)" in text or "c * v_1" in text)
        found = s2s.grad(broadcast_lines, backend="numba")(x, c)
        np.testing.assert_allclose(found, s2s.grad(broadcast_lines)(x, c), rtol=1e-13, atol=1e-15)
        np.testing.assert_allclose(found, central(broadcast_lines, (x, c), 0), rtol=1e-6, atol=1e-8)


# ---------------------------------------------------------------- element loops written for Numba (F15)
# Arrays made inside from the arguments' sizes (`np.zeros(n)`), written element by element: their shapes are
# known when the derivative is made (s2s/analysis/sizes.py), so it writes them in place and keeps no shape helper.

def spring_chain(x):
    n = len(x)
    forces = np.zeros(n)
    for i in range(n - 1):
        ext = x[i + 1] - x[i] - 1.0
        forces[i] += 3.0 * ext
        forces[i + 1] -= 3.0 * ext
    return np.dot(forces, forces)


def tridiag_solve(d):
    """Thomas algorithm written by hand."""
    n = len(d)
    a = -np.ones(n)
    b = 4.0 * np.ones(n) + d
    c = -np.ones(n)
    rhs = np.arange(1.0, n + 1)
    cp = np.zeros(n)
    dp = np.zeros(n)
    cp[0] = c[0] / b[0]
    dp[0] = rhs[0] / b[0]
    for i in range(1, n):
        m = b[i] - a[i] * cp[i - 1]
        cp[i] = c[i] / m
        dp[i] = (rhs[i] - a[i] * dp[i - 1]) / m
    x = np.zeros(n)
    x[-1] = dp[-1]
    for i in range(n - 2, -1, -1):
        x[i] = dp[i] - cp[i] * x[i + 1]
    return np.sum(x ** 2)


def temperature_time_loop(T_env, T0=90.0, k=0.05):
    temps = np.zeros(50)
    temps[0] = T0
    for t in range(1, 50):
        temps[t] = temps[t - 1] - k * (temps[t - 1] - T_env)
    return temps.sum()


def kinetics_abc(k1, k2):
    """A -> B -> C, explicit Euler with a list of concentrations."""
    conc = [1.0, 0.0, 0.0]
    h = 0.01
    for step in range(200):
        a, b, c = conc
        da = -k1 * a
        db = k1 * a - k2 * b
        dc = k2 * b
        conc = [a + h * da, b + h * db, c + h * dc]
    return conc[1]


def cholesky_by_hand(S):
    n = S.shape[0]
    L = np.zeros_like(S)
    for i in range(n):
        for j in range(i + 1):
            s = 0.0
            for k in range(j):
                s += L[i, k] * L[j, k]
            if i == j:
                L[i, j] = math.sqrt(S[i, i] - s)
            else:
                L[i, j] = (S[i, j] - s) / L[j, j]
    return np.sum(np.log(np.diag(L)))


def matvec_by_hand(A, x):
    n = A.shape[0]
    y = np.zeros(n)
    for i in range(n):
        for j in range(A.shape[1]):
            y[i] += A[i, j] * x[j]
    return y @ y


_M = RNG.normal(size=(4, 4))
ELEMENT_LOOPS = [
    (spring_chain, (np.array([0.0, 1.2, 2.1, 3.3, 4.0]),), 0),
    # (2.0 s of CPU, most of it Numba compiling the derivative: with -m slow; s2s.source of it below stays)
    pytest.param(tridiag_solve, (np.array([0.1, 0.2, -0.3, 0.4, 0.5]),), 0, marks=pytest.mark.slow,
                 id="tridiag_solve"),
    (temperature_time_loop, (20.0,), 0),
    pytest.param(kinetics_abc, (1.0, 0.5), (0, 1), marks=pytest.mark.slow, id="kinetics_abc"),
    pytest.param(cholesky_by_hand, (_M @ _M.T + 4 * np.eye(4),), 0, marks=pytest.mark.slow, id="cholesky_by_hand"),
    pytest.param(matvec_by_hand, (_M, RNG.normal(size=4)), (0, 1), marks=pytest.mark.slow, id="matvec_by_hand"),
]


@pytest.mark.parametrize("fn, args, wrt", ELEMENT_LOOPS, ids=[getattr(c[0], "__name__", None) for c in ELEMENT_LOOPS])
def test_element_loops_written_for_numba_compile_and_match_python_and_differences(fn, args, wrt):
    test_gradient_matches_central_differences_and_python(fn, args, wrt)


def test_arrays_made_from_the_arguments_sizes_are_written_in_place_without_shape_helpers():
    x = np.array([0.0, 1.2, 2.1, 3.3, 4.0])
    for backend in ("python", "numba"):
        text = s2s.source(spring_chain, x, backend=backend).split("def spring_chain_grad", 1)[1]
        assert "setitem(" not in text and "_unbroadcast(" not in text and "_dot_nd" not in text, backend
        assert "forces[i] = " in text and "dforces[i] = " in text         # O(1) writes, no copy of the array
    text = s2s.source(temperature_time_loop, 20.0, mode="reverse").split("def temperature_time_loop_grad", 1)[1]
    assert "setitem(" not in text and "_broadcast_back(" not in text and "dtemps[t] = 0.0" in text


def test_a_range_with_a_step_counts_back_and_an_array_written_twice_is_copied():
    from s2s.backends.numba.syntax import count_down
    from s2s.emit import source_text as st
    n_plus_1 = st.binary(" + ", 47, st.name("n"), st.constant(1))
    for text, bounds in (("reversed(range(t4, -1, -1))", (st.name("t4"), -1, -1)),
                         ("reversed(range(1, 9, 3))", (1, 9, 3)), ("reversed(range(n + 1, 2, -2))", (n_plus_1, 2, -2))):
        rewritten = count_down(*bounds)[0]          # written from the IR's bounds by the emitter (syntax.py)
        assert "reversed" not in rewritten
        for t4, n in ((5, 7), (-2, 0), (0, 1)):
            assert list(eval(rewritten)) == list(eval(text))
    source = s2s.source(tridiag_solve, np.ones(5), backend="numba")
    assert "range(0, t" in source and "def setitem(" in source      # cp and dp were one np.zeros(n): copied


def gauss_seidel(b):
    A = np.array([[4.0, 1.0, 0.0], [1.0, 3.0, 0.5], [0.0, 0.5, 2.0]])
    x = np.zeros(3)
    for sweep in range(60):
        for i in range(3):
            s = 0.0
            for j in range(3):
                if j != i:
                    s += A[i, j] * x[j]
            x[i] = (b[i] - s) / A[i, i]
    return x @ x


@pytest.mark.slow
def test_a_sum_a_loop_carries_as_a_number_is_summed_by_numba():
    b = np.array([1.0, 2.0, 3.0])
    text = s2s.source(gauss_seidel, b, backend="numba")
    assert "ds = _unbroadcast(-dv11, s)" in text          # s: 0.0, then a NumPy number: no shape fact
    test_gradient_matches_central_differences_and_python(gauss_seidel, (b,), 0)


def solve_energy(A, b):
    y = np.linalg.solve(A, b)             # no shape rule: the derivative keeps the helpers
    return y @ y + np.sum(y)


@pytest.mark.slow
def test_helpers_shapes_do_not_remove_are_chosen_by_numba_types():
    A, b = np.array([[4.0, 1.0, 0.5], [1.0, 5.0, 1.0], [0.5, 1.0, 3.0]]), np.array([1.0, 2.0, 3.0])
    text = s2s.source(solve_energy, A, b, wrt=(0, 1), backend="numba")
    assert "_matmul_left(" in text and "_matmul_right(" in text and "_broadcast_back(" in text
    test_gradient_matches_central_differences_and_python(solve_energy, (A, b), (0, 1))


def early_exit(v):
    total = 0.0
    for i in range(len(v)):
        if v[i] < -5:
            return total
        total += v[i] ** 2
    return total * 2


def test_a_return_inside_a_loop_is_refused_at_the_loop_with_a_rewrite():
    with pytest.raises(NumbaUnsupported) as info:
        s2s.grad(early_exit, backend="numba")(np.array([1.0, -2.0, 3.0]))
    message = str(info.value)
    assert "test_numba.py:" in message and "for i in range(len(v))" in message
    assert "a `return` inside a loop" in message and "break out of the loop" in message


# ---------------------------------------------------------------- differentiating @njit functions

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))), "examples"))
from numba_ode import adaptive_heun  # noqa: E402  (an @njit integrator whose while loop stops on a tolerance)


def test_njit_ode_integrator_with_adaptive_step_against_central_differences():
    args = (0.7, 1.5, 3.0, 1e-6)
    dk, dy0 = s2s.grad(adaptive_heun, (0, 1))(*args)       # an @njit function: compiled by Numba again
    assert dk == pytest.approx(central(adaptive_heun, args, 0), rel=1e-6)
    assert dy0 == pytest.approx(central(adaptive_heun, args, 1), rel=1e-6)
    python = s2s.grad(adaptive_heun, (0, 1), backend="python")(*args)
    assert (dk, dy0) == pytest.approx(python, rel=1e-12)


def test_njit_options_carry_over_and_njit_callees_are_inlined():
    gradient = s2s.grad(adaptive_heun, (0, 1))
    options = gradient.__s2s__[1]
    assert options.backend == "numba" and ("fastmath", True) in options.numba_options
    args = (0.7, 1.5, 3.0, 1e-6)
    gradient(*args)
    source, function = s2s.api.compiled(adaptive_heun.py_func, options, args)
    assert function.targetoptions.get("fastmath") is True
    code = [line for line in source.split("def adaptive_heun_grad", 1)[1].splitlines()
            if not line.strip().startswith("#")]
    assert not any("rhs(" in line for line in code)          # inlined, as user functions are


@pytest.mark.slow
def test_export_with_the_numba_backend_runs_without_s2s():
    args = (0.7, 1.5, 3.0, 1e-6)
    text = s2s.export(adaptive_heun, *args, wrt=(0, 1))
    assert "@numba.njit(fastmath=True" in text and "import s2s" not in text
    namespace: dict = {}
    exec(compile(text, "<exported>", "exec"), namespace)
    assert namespace["adaptive_heun_grad"](*args) == pytest.approx(s2s.grad(adaptive_heun, (0, 1))(*args),
                                                                   rel=1e-14)


# ---------------------------------------------------------------- refusals

def uses_einsum(x):
    y = x * 2.0
    return np.einsum("i,i->", y, y)


def test_what_numba_cannot_type_is_refused_when_made_at_the_users_line():
    gradient = s2s.grad(uses_einsum, backend="numba")
    with pytest.raises(NumbaUnsupported) as info:
        gradient(np.ones(3))
    message = str(info.value)
    assert "test_numba.py:" in message and "einsum" in message
    assert "Failed in nopython" not in message


def with_dict(params, x):
    return params["a"] * x + params["b"]


def test_arguments_numba_cannot_take_are_refused_clearly():
    with pytest.raises(NumbaUnsupported, match="cannot pass an argument to Numba"):
        s2s.grad(with_dict, 1, backend="numba")({"a": 2.0, "b": 3.0}, 1.5)


def test_unknown_backend_and_missing_numba(monkeypatch):
    with pytest.raises(S2SError, match="backends are 'python' and 'numba'"):
        s2s.grad(seed, backend="cython")
    monkeypatch.setitem(sys.modules, "numba", None)          # import numba now raises ImportError
    with pytest.raises(S2SError, match=r"pip install 's2s\[numba\]'"):
        s2s.grad(seed, backend="numba")


@pytest.mark.slow
def test_the_example_agrees_with_central_differences():
    import subprocess
    example = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))), "examples", "numba_ode.py")
    out = subprocess.run([sys.executable, example], capture_output=True, text=True, check=True).stdout
    for line in out.splitlines()[1:3]:
        ours, differences = float(line.split("=")[1].split()[0]), float(line.split("differences")[1])
        assert ours == pytest.approx(differences, rel=1e-6, abs=1e-8)


def sine_energy(x):
    return np.sum(np.sin(x) ** 2)


def test_forward_mode_with_the_numba_backend_runs_one_compiled_jvp_per_direction():
    """Outside round 2, messages."""
    pytest.importorskip("numba", reason="the Numba backend needs numba")
    x = np.array([0.3, -1.2, 2.0])
    got = s2s.grad(sine_energy, mode="forward", backend="numba")(x)
    np.testing.assert_allclose(got, 2 * np.sin(x) * np.cos(x), rtol=1e-13)      # d/dx sin^2 = sin 2x


def test_numba_refusals_name_the_python_backend():
    """Outside round 2, messages."""
    pytest.importorskip("numba")
    from s2s.backends.numba.dispatchers import refuse
    error = refuse("`{1: x}`", None)
    assert "backend='python'" in str(error) and error.hint


def numba_einsum(x):
    return np.sum(np.einsum("i,i->", x, x))


def numba_list(xs):
    return xs[0] * xs[1]


@pytest.mark.parametrize("f, arg, phrase", [(numba_einsum, np.ones(3), "write the contraction with @"),
                                            (numba_list, [1.0, 2.0], "separate float or array arguments")])
def test_numba_refusals_are_located_and_say_what_to_do(f, arg, phrase):
    """Outside round 2, reasonable code that was refused."""
    pytest.importorskip("numba")
    with pytest.raises(s2s.S2SError) as info:
        s2s.grad(f, backend="numba")(arg)
    text = str(info.value)
    assert "test_numba.py:" in text and phrase in text and "backend='python'" in text
