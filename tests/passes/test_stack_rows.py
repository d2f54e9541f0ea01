"""The Numba target's passes on the IR: stacks of a loop as the rows of an array (s2s/passes/stack_rows.py) and
consecutive elementwise operations as one loop (s2s/passes/fuse_elementwise.py). The IR the Numba backend emits,
run here as plain Python (no Numba needed), against central differences and the Python backend's gradient."""
from __future__ import annotations

import numpy as np
import pytest

import s2s
from s2s import runtime
from s2s.analysis.values import abstract_of, kind_of
from s2s.api import Options, derivative_ir
from s2s.driver.compile import compile_function
from s2s.emit.python import emit_module
from s2s.ir.core import Op, walk


def stencil(u, c):
    n = u.shape[0]
    total = 0.0
    for i in range(1, n - 1):
        v = u[i] + c * (u[i - 1] - 2.0 * u[i] + u[i + 1])
        total = total + v * v
    return total


def damped(a, xs, h0):
    h = h0
    for x in xs:
        h = np.tanh(a * h + x)
    return np.sum(h * h)


def gated(u):
    total = 0.0
    for i in range(u.shape[0]):
        if u[i] > 0:
            total = total + np.sin(u[i]) * u[i]
    return total


def numba_ir(fn, args, wrt):
    kinds = [kind_of(a) for a in args]
    options = Options(wrt, several=True, mode="reverse", backend="numba")
    return derivative_ir(fn, options, kinds, [abstract_of(a) for a in args])


def run(fn, args, wrt):
    ir = numba_ir(fn, args, wrt)
    emitted = emit_module(ir, (), "", fn)
    compiled = compile_function(emitted.source, ir.name, fn, emitted.bindings, fn.__qualname__,
                                emitted.reads_user_names)
    return ir, emitted.source, compiled(*args)


def central(fn, args, i, eps=1e-6):
    x = args[i]
    if np.ndim(x) == 0:
        return (fn(*args[:i], x + eps, *args[i + 1:]) - fn(*args[:i], x - eps, *args[i + 1:])) / (2 * eps)
    out = np.zeros_like(x)
    for k in np.ndindex(x.shape):
        up, down = x.copy(), x.copy()
        up[k] += eps
        down[k] -= eps
        out[k] = (fn(*args[:i], up, *args[i + 1:]) - fn(*args[:i], down, *args[i + 1:])) / (2 * eps)
    return out


RNG = np.random.default_rng(5)


@pytest.mark.parametrize("fn, args, wrt, rows", [
    (stencil, (RNG.normal(size=9), 0.3), (0, 1), ["t_rows = np.empty(max(", "v_rows = np.empty(max("]),
    (damped, (0.8, RNG.normal(size=(5, 3)), RNG.normal(size=3)), (0, 2), ["h_rows = np.empty((len(xs), 3), np.float64)",
                                                                               "for k in range(3):", "np.tanh(v_k)"]),
])
def test_a_loops_stacks_are_rows_written_forward_and_read_back_in_reverse(fn, args, wrt, rows):
    ir, source, found = run(fn, args, wrt)
    assert not any(type(s) is Op and s.prim in (runtime.stack_new, runtime.push, runtime.pop) for s in walk(ir.body))
    assert ".append(" not in source and ".pop()" not in source
    for line in rows:
        assert line in source
    expected = s2s.grad(fn, wrt)(*args)
    for k, i in enumerate(wrt):
        np.testing.assert_allclose(found[k], expected[k], rtol=1e-13, atol=1e-15)
        np.testing.assert_allclose(found[k], central(fn, args, i), rtol=1e-6, atol=1e-8)


def test_a_stack_pushed_under_a_condition_stays_a_list_and_the_python_backend_keeps_its_stacks():
    args = (np.array([0.5, -1.0, 2.0, 0.1]),)
    _, source, found = run(gated, args, (0,))
    assert ".append(" in source and ".pop()" in source           # pushed in some iterations only
    np.testing.assert_allclose(found[0], central(gated, args, 0), rtol=1e-6, atol=1e-8)
    python = s2s.source(stencil, RNG.normal(size=9), 0.3)
    assert "v_stack.append(v)" in python and "v_rows" not in python
