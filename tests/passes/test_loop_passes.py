"""Loop-level reverse mode and expressions (issue 29, items 1 and 2).

- one stack where two held the same values shifted by an iteration (s2s/passes/shifted_stacks.py): the value a
  loop carries, pushed at the start of each iteration, and its update, pushed at the end;
- a sum of outer products or of matrix products accumulated across a reverse loop as one contraction after it,
  the step's values stacked as rows (s2s/passes/contractions.py);
- a number is never written in place, so a scalar loop body reads one statement per user statement and
  derivative (Horner's forward mode).

The generated code is compared with golden files (S2S_UPDATE_GOLDEN=1 rewrites them); every gradient is
checked against central differences, in reverse mode, in the default mode="auto", forward mode where it
applies, and to second order.
"""
from __future__ import annotations

import math
import os
from pathlib import Path

import numpy as np
import pytest

import s2s

GOLDEN = Path(__file__).resolve().parents[1] / "golden"
RNG = np.random.default_rng(29)


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


def matches_golden(name: str, text: str) -> None:
    path = GOLDEN / f"{name}.py.txt"
    if os.environ.get("S2S_UPDATE_GOLDEN") == "1":
        path.write_text(text)
    assert path.exists(), f"no golden file {path.name}: run with S2S_UPDATE_GOLDEN=1 to create it"
    assert text == path.read_text(), f"generated code for {name} changed; review the diff, then rerun with " \
                                      f"S2S_UPDATE_GOLDEN=1"


def check_gradient(f, args, wrt, mode="reverse", rtol=1e-6, atol=1e-8):
    got = s2s.grad(f, wrt=wrt, mode=mode)(*args)
    got = got if isinstance(wrt, tuple) else (got,)
    for g, i in zip(got, wrt if isinstance(wrt, tuple) else (wrt,)):
        np.testing.assert_allclose(g, central(f, args, i), rtol=rtol, atol=atol)
    return got


# ---------------------------------------------------------------- programs

def rnn(Wh, Wx, b, xs, h0):
    h = h0
    for x in xs:
        h = np.tanh(Wh @ h + Wx @ x + b)
    return np.sum(h * h)


def batched_rnn(Wh, Wx, b, X, h0):
    """Sequences in a batch: the weights' adjoints are sums of matrix products, `dWh += h.T @ dz`."""
    h = h0
    for t in range(X.shape[0]):
        h = np.tanh(h @ Wh + X[t] @ Wx + b)
    return np.sum(h ** 2)


def read_after(W, xs, h0):
    """W is read after the loop too: its adjoint enters the loop as something other than zeros."""
    h = h0
    for t in range(1, len(xs)):
        h = np.tanh(W @ h + xs[t])
    return np.sum(W @ h) + np.sum(h)


def while_rnn(W, h0, steps):
    h = h0
    t = 0
    while t < steps:
        h = np.tanh(W @ h + 0.1)
        t += 1
    return np.sum(h * h)


def horner(x, coefficients):
    y = 0.0
    for c in coefficients:
        y = y * x + c
    return y


def rnn_args(steps=6, hidden=3, inputs=2):
    return (RNG.normal(size=(hidden, hidden)) * 0.5, RNG.normal(size=(hidden, inputs)) * 0.5,
            RNG.normal(size=hidden) * 0.1, RNG.normal(size=(steps, inputs)), RNG.normal(size=hidden))


# ---------------------------------------------------------------- one stack, one contraction

def test_the_rnn_saves_h_once_and_contracts_the_weights_adjoints_after_the_loop():
    args = rnn_args()
    text = s2s.source(rnn, *args, wrt=(0, 1, 2), mode="reverse")
    matches_golden("loop_rnn", text)
    # h saved once, as rows the forward loop writes and the reverse reads: the rows the contraction needs
    assert ".append(" not in text and "h_rows[i] = h\n" in text and "h = h_rows[i]\n" in text
    assert "np.outer" not in text and text.count("np.empty(") == 2
    assert "dWh = dv4_rows.T @ h_rows" in text and "dWx = dv4_rows.T @ xs" in text      # the inputs as they are
    assert "db = np.sum(dv4_rows, axis=0)" in text
    for mode in ("reverse", "auto"):
        check_gradient(rnn, args, (0, 1, 2), mode)
    check_gradient(rnn, args, 4, "forward")            # forward mode: no reverse loop to rewrite


def test_sums_of_matrix_products_become_one_tensordot():
    args = (RNG.normal(size=(3, 3)) * 0.5, RNG.normal(size=(2, 3)) * 0.5, RNG.normal(size=3) * 0.1,
            RNG.normal(size=(5, 4, 2)), RNG.normal(size=(4, 3)))
    text = s2s.source(batched_rnn, *args, wrt=(0, 1, 2), mode="reverse")
    matches_golden("loop_batched_rnn", text)
    assert "np.tensordot(" in text and "X_rows" not in text       # X[t] read from X itself: nothing saved
    check_gradient(batched_rnn, args, (0, 1, 2, 4))
    check_gradient(batched_rnn, args, (0, 1), "auto")


def test_an_adjoint_that_enters_the_loop_nonzero_is_added_to_the_contraction():
    args = (RNG.normal(size=(3, 3)) * 0.5, RNG.normal(size=(6, 3)), RNG.normal(size=3))
    text = s2s.source(read_after, *args, wrt=(0, 2), mode="reverse")
    matches_golden("loop_read_after", text)
    assert "dW = dW + dv4_rows.T @ h_rows" in text                  # the adjoint from the read after the loop
    assert "n = max(len(xs) - 1, 0)" in text and "row = t - 1" in text      # range(1, len(xs)): rows from 0
    check_gradient(read_after, args, (0, 2))
    empty = (args[0], np.zeros((1, 3)), args[2])                     # range(1, 1): no iteration
    check_gradient(read_after, empty, (0, 2))


def test_no_iteration_gives_the_zero_adjoints_of_the_right_shape():
    args = rnn_args(steps=0)
    dWh, dWx, db = s2s.grad(rnn, wrt=(0, 1, 2))(*args)
    assert dWh.shape == (3, 3) and dWx.shape == (3, 2) and db.shape == (3,)
    assert not dWh.any() and not dWx.any() and not db.any()


def test_a_while_loop_shares_its_stack_and_counts_its_trips_on_the_one_left():
    args = (RNG.normal(size=(3, 3)) * 0.5, RNG.normal(size=3), 5)
    text = s2s.source(while_rnn, *args, wrt=(0, 1), mode="reverse")
    matches_golden("loop_while_rnn", text)
    assert text.count(".append(") == 1 and "np.outer" not in text
    check_gradient(while_rnn, args, (0, 1))
    check_gradient(while_rnn, (*args[:2], 0), (0, 1))


def test_second_order_through_the_rewritten_loops():
    """Forward over reverse: the Hessian-vector product's reverse loop accumulates outer products of tangents
    too; every one is contracted, and the product matches differences of the gradient."""
    args = rnn_args(steps=4)
    gradient = s2s.grad(rnn, wrt=1)
    v = RNG.normal(size=args[1].shape)
    eps = 1e-6
    up = gradient(args[0], args[1] + eps * v, *args[2:])
    down = gradient(args[0], args[1] - eps * v, *args[2:])
    product = s2s.hvp(rnn, wrt=1)(*args, v)
    np.testing.assert_allclose(product, (up - down) / (2 * eps), rtol=1e-5, atol=1e-8)


def test_an_adjoint_the_loop_reads_is_not_contracted():
    def reads_its_adjoint(W, xs, h0):
        h = h0
        total = 0.0
        for x in xs:
            h = np.tanh(W @ h + x)
            total = total + np.sum(W * W) * np.sum(h)
        return total
    args = (RNG.normal(size=(3, 3)) * 0.5, RNG.normal(size=(4, 3)), RNG.normal(size=3))
    check_gradient(reads_its_adjoint, args, (0, 2))


def test_without_shapes_nothing_is_contracted():
    args = rnn_args()
    text = s2s.source(rnn, *args, wrt=(0, 1, 2), mode="reverse",
                      optimize=("simplify", "hoist", "cse", "dce", "shapes", "stacks", "contract", "sink"))
    body = text.split("def rnn_grad(")[1]
    assert "_rows" not in body and "_matmul_left(" in body           # no shapes: no contraction
    assert text.count("h_stack.append(") == 1 and "h_stack_1" not in text     # the one stack of h still
    got = s2s.grad(rnn, wrt=(0, 1, 2), optimize=("stacks", "contract"))(*args)
    for g, i in zip(got, (0, 1, 2)):
        np.testing.assert_allclose(g, central(rnn, args, i), rtol=1e-6, atol=1e-8)


# ---------------------------------------------------------------- expressions, not statements

def test_horners_forward_mode_body_is_one_statement_per_user_statement_and_derivative():
    coefficients = [float(c) for c in RNG.normal(size=5)]
    text = s2s.source(horner, 0.9, coefficients, wrt=0)
    matches_golden("horner_forward", text)
    body = text.split("\n    for c in coefficients:\n")[1].split("    return")[0]
    code = [line.strip() for line in body.splitlines() if line.strip() and not line.strip().startswith("#")]
    assert code == ["y_dot = y_dot * x + y", "y = y * x + c"]
    assert s2s.grad(horner)(0.9, coefficients) == pytest.approx(central(horner, (0.9, coefficients), 0), rel=1e-7)
    assert s2s.grad(horner, mode="reverse")(0.9, coefficients) == pytest.approx(
        central(horner, (0.9, coefficients), 0), rel=1e-7)


def test_a_scalar_update_keeps_its_line_comment():
    def euler(k, y0, h, steps):
        y = y0
        for _ in range(steps):
            y = y + h * (-k * y)
        return y
    text = s2s.source(euler, 0.5, 1.0, 0.01, 10, wrt=0)
    assert "+=" not in text and "*=" not in text
    loop = text.split("\n    for _ in range(steps):\n")[1]
    assert loop.splitlines()[0].strip().startswith("# test_loop_passes.py:") and "y = y + h * (-k * y)" in loop
    assert s2s.grad(euler)(0.5, 1.0, 0.01, 10) == pytest.approx(
        central(lambda k: euler(k, 1.0, 0.01, 10), (0.5,), 0), rel=1e-7)
    assert math.isfinite(s2s.grad(euler, mode="reverse")(0.5, 1.0, 0.01, 10))


# ---------------------------------------------------------------- accumulation in place

def attention_like(W, xs):
    total = 0.0
    for x in xs:
        y = np.tanh(W @ x)
        total = total + np.sum(y * W)
    return total


def test_a_big_adjoint_summed_over_a_loop_is_added_into_in_place():
    """dW starts as zeros made for it and each iteration hands it on alone: `dW += ...` (s2s/passes/
    accumulate_in_place.py), no new 100x100 array per iteration; a small one stays an expression."""
    W, xs = RNG.normal(size=(100, 100)) * 0.1, RNG.normal(size=(3, 100))
    text = s2s.source(attention_like, W, xs, wrt=0)
    loop = text.split("for i in reversed(")[1]
    assert loop.count("dW += ") == 2 and "dW = dW +" not in loop
    got = s2s.grad(attention_like)(W, xs)
    for k in [(3, 4), (0, 99), (57, 12)]:
        E = np.zeros_like(W)
        E[k] = 1e-6
        assert got[k] == pytest.approx((attention_like(W + E, xs) - attention_like(W - E, xs)) / 2e-6, rel=1e-6)
    small = s2s.source(attention_like, W[:5, :5], xs[:, :5], wrt=0)
    assert "dW += " not in small
