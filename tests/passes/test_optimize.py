"""The optimizing passes: each keeps the numbers, each is verified, and each does its job."""
import math

import numpy as np
import pytest

import s2s
from conftest import code, central
from s2s.analysis.values import kind_of
from s2s.api import Options, derivative_ir
from s2s.ir.core import verify
from s2s.passes.optimize import PASSES
from test_modes import CORPUS, _flat


@pytest.mark.parametrize("fn, args, wrt", CORPUS, ids=[f"{c[0].__name__}{i}" for i, c in enumerate(CORPUS)])
def test_every_pass_alone_keeps_the_numbers(fn, args, wrt):
    expected = _flat(s2s.grad(fn, wrt=wrt, optimize=False)(*args))
    for name in PASSES:
        got = _flat(s2s.grad(fn, wrt=wrt, optimize=(name,))(*args))
        assert got == pytest.approx(expected, rel=1e-12, abs=1e-14), name
    assert _flat(s2s.grad(fn, wrt=wrt)(*args)) == pytest.approx(expected, rel=1e-12, abs=1e-14)


@pytest.mark.parametrize("fn, args, wrt", CORPUS[:20], ids=[f"{c[0].__name__}{i}" for i, c in enumerate(CORPUS[:20])])
def test_the_ir_verifies_after_every_pass(fn, args, wrt):
    wrt = wrt if isinstance(wrt, tuple) else (wrt,)
    kinds = [kind_of(a) for a in args]
    for mode in ("reverse", "forward", "auto"):
        for name in PASSES:           # derivative_ir verifies after each pass; check the result once more
            verify(derivative_ir(fn, Options(wrt, mode=mode, optimize=(name,)), kinds))


def folded(x):
    return math.log(x) * x ** 2 + x * 1.0 + 0.0 * 3.0


def test_constant_folding_and_algebraic_simplification():
    raw = code(s2s.source(folded, optimize=False))
    optimized = code(s2s.source(folded))
    assert "math.log(2.718281828459045)" in raw and "math.log(2.718281828459045)" not in optimized
    assert "** 1" not in optimized and "* 1.0" not in optimized


def repeated(x):
    return x ** 3 + math.sin(x) * x ** 2


def test_common_subexpressions_are_computed_once():
    optimized = code(s2s.source(repeated, optimize=("simplify", "cse", "dce")))
    unoptimized = code(s2s.source(repeated, optimize=("simplify", "dce")))
    assert optimized.count("x ** 2") < unoptimized.count("x ** 2")
    assert optimized.count("math.sin(x)") == 1


def test_dead_code_and_the_primal_output_are_not_computed():
    def f(x):
        unused = math.exp(x) * 100.0
        y = math.sin(x)
        return y * y + 3.0

    body = code(s2s.source(f)).split("def f_grad")[1]
    assert "exp" not in body and "+ 3.0" not in body


def _rk4(k, y0, h=0.1, n=20):
    y = y0
    for i in range(n):
        k1 = -k * y
        k2 = -k * (y + h / 2 * k1)
        k3 = -k * (y + h / 2 * k2)
        k4 = -k * (y + h * k3)
        y = y + h / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
    return y


def test_loop_invariants_are_computed_once_and_not_saved_every_iteration():
    # -k, h / 2 and h / 6 read only values from before the loop and cannot raise: computed once, before it
    body = code(s2s.source(_rk4, 0.5, 1.0, wrt=(0, 1), mode="reverse")).split("for _ in range(n)")
    assert body[0].count("h / 2") == 1 and body[0].count("h / 6") == 1 and "h / " not in body[1]
    assert body[1].count(".append(") == 4       # y and the three values the adjoints of -k * (...) read: not h / 2
    h = 1e-6
    expected = [(_rk4(0.5 + h, 1.0) - _rk4(0.5 - h, 1.0)) / (2 * h), (_rk4(0.5, 1.0 + h) - _rk4(0.5, 1.0 - h)) / (2 * h)]
    for mode in ("reverse", "forward", "auto"):
        assert s2s.grad(_rk4, wrt=(0, 1), mode=mode)(0.5, 1.0) == pytest.approx(expected, rel=1e-7)
    assert s2s.grad(_rk4, wrt=(0, 1), mode="reverse")(0.5, 1.0, 0.1, 0) == (0.0, 1.0)      # a loop that never runs


_A = np.array([[1.0, 0.5], [-0.3, 2.0], [0.2, 0.1]])
_B = np.array([0.3, -1.0, 0.5])


def _descent(lr, w0):
    w = w0
    for _ in range(4):
        r = _A @ w - _B
        w = w - lr * (_A.T @ r)
    r = _A @ w - _B
    return 0.5 * r @ r


def test_a_global_read_in_a_loop_is_read_once_and_not_saved_every_iteration():
    body = code(s2s.source(_descent, 0.1, np.array([0.5, -0.5]), wrt=(0, 1)))
    assert "_A_stack" not in body and "_B_stack" not in body
    w0 = np.array([0.5, -0.5])
    for mode in ("reverse", "forward", "auto"):
        dlr, dw = s2s.grad(_descent, wrt=(0, 1), mode=mode)(0.1, w0)
        assert dlr == pytest.approx((_descent(0.1 + 1e-6, w0) - _descent(0.1 - 1e-6, w0)) / 2e-6, rel=1e-6)
        for i in range(2):
            e = np.eye(2)[i] * 1e-6
            assert dw[i] == pytest.approx((_descent(0.1, w0 + e) - _descent(0.1, w0 - e)) / 2e-6, rel=1e-6)


def test_dead_temporaries_are_written_in_place():
    def f(w, X):
        return np.mean(np.logaddexp(0.0, X @ w))

    source = code(s2s.source(f, np.zeros(3), np.zeros((10_000, 3))))
    assert "*= 0.5" in source and "out=" in source      # large arrays: written into, no new array each time
    small = code(s2s.source(f, np.zeros(3), np.zeros((4, 3))))
    assert "*=" not in small and "np.tanh(-0.5 * (X @ w))" in small      # small ones: nested expressions
    w, X = np.array([0.1, -0.2, 0.3]), np.arange(12.0).reshape(4, 3) / 10
    s2s.check_grad(f, w, X)
    X = np.random.default_rng(0).normal(size=(10_000, 3))
    assert np.allclose(s2s.grad(f)(w, X), s2s.grad(f, optimize=False)(w, X), rtol=1e-12)


def test_values_needed_only_for_their_shape_are_not_computed():
    def f(w, X):
        return np.mean(np.logaddexp(0.0, X @ w))

    source = code(s2s.source(f, np.zeros(3), np.zeros((4, 3))))
    assert "logaddexp" not in source.split("def f_grad")[1]


def test_raw_transform_keeps_what_the_optimizer_removes():
    def f(x):
        unused = math.exp(x)
        return x * x

    assert "math.exp" in code(s2s.source(f, optimize=False))
    assert "math.exp" not in code(s2s.source(f))


def test_unknown_pass_names_are_refused():
    with pytest.raises(s2s.BadArgument, match="no optimizing pass named 'dse'"):
        s2s.grad(folded, optimize=("dse",))


# ---------------------------------------------------------------- shape-aware emission (s2s/passes/specialize.py)

UNSPECIALIZED = tuple(p for p in PASSES if p != "specialize")


def broadcast_loss(W, b, x, c):
    return np.mean(np.tanh(W @ x + b[:, None]) ** 2 * c) + np.sum(np.sum(W, axis=1) * b) + np.sum(x.T @ x)


def vector_dot(a, b, s):
    return np.dot(a, b) * s + np.sum((a @ np.outer(a, b)) * b) + s * s


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_specialized_derivative_agrees_with_the_helpers_in_value_dtype_and_type(dtype):
    rng = np.random.default_rng(3)
    cases = [(broadcast_loss, (rng.normal(size=(3, 4)), rng.normal(size=3), rng.normal(size=(4, 5)), 0.7),
              (0, 1, 2, 3)),
             (vector_dot, (rng.normal(size=4), rng.normal(size=4), 1.3), (0, 1, 2))]
    for fn, args, wrt in cases:
        args = tuple(a.astype(dtype) if isinstance(a, np.ndarray) else a for a in args)
        plain = s2s.grad(fn, wrt=wrt, optimize=UNSPECIALIZED)(*args)
        shaped = s2s.grad(fn, wrt=wrt)(*args)
        for i, p, s_ in zip(wrt, plain, shaped):
            assert type(p) is type(s_) and np.shape(p) == np.shape(s_)
            if isinstance(args[i], np.ndarray):        # a float32 argument gets a float32 gradient
                assert s_.dtype == args[i].dtype
            assert np.allclose(p, s_, rtol=1e-5 if dtype is np.float32 else 1e-12)
        for i in wrt:       # and both against central differences
            x = args[i]
            eps = 1e-3 if dtype is np.float32 else 1e-6
            for k in np.ndindex(np.shape(x)):
                up = [a.astype(np.float64) if isinstance(a, np.ndarray) else a for a in args]
                down = [a.copy() if isinstance(a, np.ndarray) else a for a in up]
                if np.ndim(x):
                    up[i][k] += eps
                    down[i][k] -= eps
                else:
                    up[i], down[i] = x + eps, x - eps
                numeric = (fn(*up) - fn(*down)) / (2 * eps)
                got = shaped[wrt.index(i)][k] if np.ndim(x) else shaped[wrt.index(i)]
                assert got == pytest.approx(numeric, rel=1e-2 if dtype is np.float32 else 1e-5, abs=1e-4)


def test_shapes_decide_the_helpers_away():
    rng = np.random.default_rng(0)
    args = (rng.normal(size=(3, 4)), rng.normal(size=3), rng.normal(size=(4, 5)), 0.7)
    text = s2s.source(broadcast_loss, *args, wrt=(0, 1, 2, 3))
    body = text.split("def broadcast_loss_grad")[1]
    for helper in ("_unbroadcast(", "_reduced_size(", "_broadcast_back(", "_matmul_left(", "_matmul_right(",
                   "_expand(", "_fill("):
        assert helper not in body, helper
    assert "np.sum(" in body and ".T @" in body
    kept = s2s.source(broadcast_loss, *args, wrt=(0, 1, 2, 3), optimize=UNSPECIALIZED)
    assert "_unbroadcast(" in kept.split("def broadcast_loss_grad")[1]


def test_a_new_shape_makes_a_new_derivative_and_both_are_right():
    def grad_of(n):
        rng = np.random.default_rng(n)
        args = (rng.normal(size=(3, 4)), rng.normal(size=3), rng.normal(size=(4, n)), 0.5)
        return args, s2s.grad(broadcast_loss, wrt=(0, 2))
    (a2, g), (a7, _) = grad_of(2), grad_of(7)
    for args in (a2, a7, a2):
        expected = s2s.grad(broadcast_loss, wrt=(0, 2), optimize=UNSPECIALIZED)(*args)
        got = g(*args)
        assert got[1].shape == args[2].shape
        assert np.allclose(got[0], expected[0]) and np.allclose(got[1], expected[1])


def test_an_exported_shape_specialized_module_checks_shapes_on_entry():
    rng = np.random.default_rng(1)
    args = (rng.normal(size=(3, 4)), rng.normal(size=3), rng.normal(size=(4, 5)), 0.7)
    namespace: dict = {}
    exec(compile(s2s.export(broadcast_loss, *args, wrt=(0, 1)), "exported", "exec"), namespace)
    got = namespace["broadcast_loss_grad"](*args)
    expected = s2s.grad(broadcast_loss, wrt=(0, 1))(*args)
    assert np.allclose(got[0], expected[0]) and np.allclose(got[1], expected[1])
    with pytest.raises(ValueError, match=r"argument 'x' has the shape \(4, 6\).*exported for the shape \(4, 5\)"):
        namespace["broadcast_loss_grad"](args[0], args[1], rng.normal(size=(4, 6)), 0.7)


def test_loops_keep_helpers_where_a_shape_changes_and_stay_right():
    def growing(x, n):
        acc = np.zeros(1)
        for i in range(n):
            acc = acc + x[i] * x           # acc is (1,) then (3,): its shape is not one thing in the loop
        return np.sum(acc)
    x = np.array([0.3, -1.2, 2.0])
    plain = s2s.grad(growing, optimize=UNSPECIALIZED)(x, 3)
    assert np.allclose(s2s.grad(growing)(x, 3), plain)
    assert np.allclose(plain, 2 * np.sum(x))     # the gradient of (x[0] + x[1] + x[2]) ** 2


def element_loops(x, A):
    total = np.sum(x * x)              # x's adjoint gets a contribution outside the loop too
    for i in range(1, len(x) - 1):
        d = x[i - 1] - 2.0 * x[i] + x[i + 1]
        total = total + d * d
    for i in range(A.shape[0]):
        s = 0.0
        for j in range(A.shape[1]):
            s = s + A[i, j] * x[j]
        total = total + s * s
    return total


def element_loops_by_hand(x, A):
    d = x[:-2] - 2.0 * x[1:-1] + x[2:]
    dx = 2.0 * x
    dx[:-2] += 2.0 * d
    dx[1:-1] -= 4.0 * d
    dx[2:] += 2.0 * d
    y = A @ x
    return dx + 2.0 * (A.T @ y), 2.0 * np.outer(y, x)


def test_element_loops_accumulate_in_place_and_stay_right():
    rng = np.random.default_rng(5)
    x, A = rng.normal(size=7), rng.normal(size=(3, 7))
    expected = element_loops_by_hand(x, A)
    for optimize in (True, UNSPECIALIZED):
        got = s2s.grad(element_loops, wrt=(0, 1), optimize=optimize)(x, A)
        assert np.allclose(got[0], expected[0], rtol=1e-12) and np.allclose(got[1], expected[1], rtol=1e-12)
    text = s2s.source(element_loops, x, A, wrt=(0, 1)).split("def element_loops_grad")[1]
    assert "_scatter(x," not in text and "dx[i] = " in text     # dx[i] += g: no full-size array per read
    x32 = x.astype(np.float32)                # float32 adjoints stay float32 when written in place
    got = s2s.grad(element_loops, wrt=0)(x32, A.astype(np.float32))
    assert got.dtype == np.float32 and np.allclose(got, expected[0], rtol=1e-3)


# ---------------------------------------------------------------- dead code in one scan

def _dead_code_by_rescanning(block, roots):
    """The definition eliminate_dead_code implements: mark from the roots and the effects, rescanning the whole
    block until nothing changes (a loop reads its carried values and test back), then sweep. (Values and
    statements are kept by themselves, as _sweep reads them.)"""
    from s2s.ir.core import For, If, Op, Value, While, stmt_blocks
    from s2s.passes.optimize import _sweep, is_pure
    live = {a for a in roots if isinstance(a, Value)}
    live_stmts = set()

    def mark(atoms):
        new = {a for a in atoms if isinstance(a, Value)} - live
        live.update(new)
        return bool(new)

    def scan(b):
        changed = False
        for stmt in reversed(b.stmts):
            if isinstance(stmt, Op):
                if any(o in live for o in stmt.outs) or not is_pure(stmt.prim):
                    changed |= stmt not in live_stmts
                    live_stmts.add(stmt)
                    changed |= mark(list(stmt.args) + list(stmt.kwargs.values()))
                continue
            if isinstance(stmt, If):
                for o, a, b_ in zip(stmt.outs, stmt.then.results, stmt.orelse.results):
                    if o in live:
                        changed |= mark([a, b_])
            else:
                for c, o, r, i in zip(stmt.carried, stmt.outs, stmt.body.results, stmt.inits):
                    if o in live or c in live:
                        changed |= mark([c, r, i])
            for inner in stmt_blocks(stmt):
                changed |= scan(inner)
            if any(o in live for o in stmt.outs) or any(s in live_stmts for inner in stmt_blocks(stmt)
                                                            for s in inner.stmts):
                changed |= stmt not in live_stmts
                live_stmts.add(stmt)
            if stmt in live_stmts:
                changed |= mark([stmt.cond] if isinstance(stmt, If) else list(stmt.test.results)
                                if isinstance(stmt, While) else [stmt.start, stmt.stop, stmt.step])
        return changed

    while scan(block):
        pass
    _sweep(block, live, live_stmts)


def carried_late(x, n):
    a, b, c = x, 1.0, 0.0
    for i in range(n):
        t = 0.0
        k = 0
        while k < 3 and b < 100.0:          # b, read only by the test, carried through both loops
            t = t + math.sin(a) * c
            c = c + b
            b = b * 1.5
            k = k + 1
        a = a + t * 0.1
    return a


@pytest.mark.parametrize("fn, args, wrt", CORPUS + [(carried_late, (0.4, 3), 0)],
                         ids=[f"{c[0].__name__}{i}" for i, c in enumerate(CORPUS)] + ["carried_late"])
def test_dead_code_in_one_scan_is_the_fixpoint_of_rescanning(fn, args, wrt):
    """One backward scan, each loop rescanned alone until it settles, finds what rescanning everything does."""
    import s2s.passes.optimize as optimize
    from s2s.ir.core import clone_function, format_function
    wrt = wrt if isinstance(wrt, tuple) else (wrt,)
    kinds = [kind_of(a) for a in args]
    for mode in ("reverse", "forward", "auto"):
        raw = derivative_ir(fn, Options(wrt, mode=mode, optimize=()), kinds)
        once, rescanned = (clone_function(raw, lambda v: type(v)(v.name, v.hint)) for _ in range(2))
        optimize.eliminate_dead_code(once)
        _dead_code_by_rescanning(rescanned.body, list(rescanned.body.results))
        assert format_function(once) == format_function(rescanned)
        assert len(format_function(once)) <= len(format_function(raw))


MODES = ["reverse", "forward", "auto"]


def int_array_times_one(x):
    w = np.arange(3) * 1.0
    w[0] = x
    v = np.arange(3) / 1
    v[1] = x
    return np.sum(w * w) + np.sum(v * v)


def smoothing_weighted_by_position(u, k):
    u = u.copy()
    for t in range(2):
        for i in range(1, u.size - 1):
            u[i] = 0.5 * (u[i - 1] + u[i + 1])
    return np.sum(u * np.arange(len(u)))


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("check", [False, True])
def test_an_identity_with_a_float_keeps_an_integer_array_a_float_array(mode, check):
    """Outside round 5, found while fixing H8: `x * 1.0` is x only for a float x (`np.arange(3) * 1.0` is a float
    array), also when the 1.0 is an adjoint the shapes made a number (the gradient was an int array, its writes
    truncated)."""
    assert s2s.grad(int_array_times_one, mode=mode, check=check)(0.7) == pytest.approx(4 * 0.7)
    u = np.array([-0.293, 0.173, 0.612, -0.586, 0.542, 0.178])
    got = s2s.grad(smoothing_weighted_by_position, mode=mode, check=check)(u, 0.3)
    assert got.dtype == np.float64
    np.testing.assert_allclose(got, central(lambda v: smoothing_weighted_by_position(v, 0.3), u), rtol=1e-6)


def horner_carried(x, coefficients):
    y = 0.0
    for c in coefficients:
        y = y * x + c
    return y


def int_start_carried(x):
    s = np.arange(3)
    for i in range(2):
        s = s * 1.0
        s[i] = x * (i + 1)
    return np.sum(s * s)


def test_an_identity_with_a_float_on_a_loop_carried_value():
    """Outside round 5: a helper's write into an array or list the caller holds, in a loop that does not carry the
    caller's variable (a closure appending to the enclosing function's list): refused, never lost; outside a loop,
    followed."""
    # y starts as 0.0 and every iteration leaves a float: `1.0 * y` is y (Horner's tangent); s starts as an
    # integer array: `s * 1.0` stays, or s[i] = x would truncate
    source = code(s2s.source(horner_carried, 0.9, [0.5, -1.0, 2.0]))
    assert "1.0 *" not in source
    assert s2s.grad(horner_carried)(0.9, [0.5, -1.0, 2.0]) == pytest.approx(2 * 0.5 * 0.9 - 1.0)
    for mode in MODES:
        assert s2s.grad(int_start_carried, mode=mode, check=False)(0.7) == pytest.approx(2 * 0.7 + 8 * 0.7)


def swapped(u, v):
    for t in range(2):
        u, v = v, u             # each carried value's update is the other: needed once the other is
    u = u * 1.0
    for i in range(1, len(u)):
        u[i] = 0.4 * u[i - 1] + u[i]
    return np.sum(u)


def test_a_loop_whose_carried_values_swap_keeps_the_adjoint_the_other_one_needs():
    """The dead-code pass (on the dataflow engine) counts the carried values needed before a loop's body as it
    marks them: the one needed by the other's update is needed too, and its adjoint loop is kept (the verifier
    said du.6 was read before it was defined)."""
    from conftest import assert_gradient
    assert_gradient(swapped, np.array([1.0, 2.0, 3.0]), np.array([-1.0, 0.5, 2.0]), wrt=1)
