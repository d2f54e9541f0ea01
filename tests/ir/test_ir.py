"""The IR's text form and its verifier."""
import math
import operator

import pytest

import s2s
from s2s.api import Options, derivative_ir, primal_ir
from s2s.errors import InvalidIR
from s2s.ir.core import Block, Const, Function, Op, Value, verify


def seed(x1, x2):
    return math.log(x1) + x1 * x2 - math.sin(x2)


def test_text_form_is_the_seed_wengert_list():
    assert s2s.ir(seed) == (
        "def seed(x1, x2):\n"
        "    v1 = math.log(x1)\n"
        "    v2 = mul(x1, x2)\n"
        "    v3 = add(v1, v2)\n"
        "    v4 = math.sin(x2)\n"
        "    v5 = sub(v3, v4)\n"
        "    return v5\n")


def loop(x, n):
    y = x
    for i in range(n):
        if y > 2.0:
            y = y * 0.5
        else:
            y = y * x
    return y


def test_text_form_shows_regions_and_phis():
    assert s2s.ir(loop) == (
        "def loop(x, n):\n"
        "    y.4 = for i in range(0, n, 1) (y = x):\n"
        "        v1 = gt(y, 2.0)\n"
        "        y.3 = if v1:\n"
        "            y.1 = mul(y, 0.5)\n"
        "            yield y.1\n"
        "        else:\n"
        "            y.2 = mul(y, x)\n"
        "            yield y.2\n"
        "        yield y.3\n"
        "    return y.4\n")


def test_derivative_ir_is_verified_after_every_pass():
    for optimize in (False, True):
        fn = derivative_ir(loop, Options((0,), optimize=optimize), ["scalar", "scalar"])
        verify(fn)
        assert "stack_new" in s2s.ir(loop, 1.0, 3, wrt=0, optimize=optimize)


def test_verifier_rejects_double_definition():
    x = Value("x")
    y = Value("y")
    fn = Function("f", [x], Block([Op(operator.neg, [x], [y]), Op(operator.neg, [x], [y])], [y]))
    with pytest.raises(InvalidIR, match="defined twice"):
        verify(fn)


def test_verifier_rejects_use_before_definition():
    x, y, z = Value("x"), Value("y"), Value("z")
    fn = Function("f", [x], Block([Op(operator.neg, [z], [y]), Op(operator.neg, [x], [z])], [y]))
    with pytest.raises(InvalidIR, match="before it is defined"):
        verify(fn)


def test_verifier_rejects_wrong_yield_count():
    from s2s.ir.core import If
    x, y = Value("x"), Value("y")
    branch = If(Const(True), Block([], [x]), Block([], []), [y])
    fn = Function("f", [x], Block([branch], [y]))
    with pytest.raises(InvalidIR, match="yields 0 values"):
        verify(fn)


def test_verifier_rejects_values_out_of_scope():
    from s2s.ir.core import If
    x, inner, out = Value("x"), Value("inner"), Value("out")
    branch = If(Const(True), Block([Op(operator.neg, [x], [inner])], [x]), Block([], [x]), [out])
    fn = Function("f", [x], Block([branch], [inner]))
    with pytest.raises(InvalidIR, match="out of its scope"):
        verify(fn)


def test_primal_ir_is_single_assignment():
    fn = primal_ir(loop)
    verify(fn)


def test_the_suite_verifies_the_ir_after_every_pass():
    import s2s.api
    assert s2s.api.verify_every_pass()


def test_values_made_while_a_derivative_is_made_stay_alive_until_it_is_done():
    # the passes key their tables by id(): a value one drops must not hand its id to a new one
    import gc
    from s2s.ir.core import Value, values_kept
    with values_kept():
        ids = {id(Value(f"v{i}")) for i in range(1000)}      # each dropped at once
        gc.collect()
        assert len(ids) == 1000                             # no id was reused
    outside = {id(Value(f"w{i}")) for i in range(1000)}
    assert len(outside) < 1000                              # (outside, CPython reuses them at once)
