"""The optimizing passes: each keeps the numbers, each is verified, and each does its job."""
import math

import numpy as np
import pytest

import s2s
from conftest import code
from s2s.activity import kind_of
from s2s.api import Options, derivative_ir
from s2s.ir import verify
from s2s.optimize import PASSES
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
    for mode in ("reverse", "forward"):
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


def test_dead_temporaries_are_written_in_place():
    def f(w, X):
        return np.mean(np.logaddexp(0.0, X @ w))

    source = code(s2s.source(f, np.zeros(3), np.zeros((4, 3))))
    assert "*= 0.5" in source
    w, X = np.array([0.1, -0.2, 0.3]), np.arange(12.0).reshape(4, 3) / 10
    s2s.check_grad(f, w, X)


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
