"""Every registered derivative rule, checked against central differences.

To test a new rule, add one line to DOMAINS: the function and the points to
check it at (one tuple of arguments per point, domain edges included). A rule
without a line here fails `test_every_rule_has_a_domain`.
"""
import builtins
import math
import operator

import numpy as np
import pytest

import s2s
from s2s.ir import prim_name
from s2s.registry import registered_adjoints

DOMAINS = {
    # Python operators and builtins
    operator.add: [(1.5, -2.0), (-0.3, 0.7)],
    operator.sub: [(1.5, -2.0), (-0.3, 0.7)],
    operator.mul: [(1.5, -2.0), (-0.3, 0.7)],
    operator.truediv: [(1.5, -2.0), (-0.3, 0.7), (2.0, 1e-3)],
    operator.pow: [(1.5, 2.5), (0.3, -1.5), (2.0, 3.0)],
    builtins.pow: [(1.5, 2.5), (0.7, 0.5)],
    operator.mod: [(4.3, 1.5), (-4.3, 1.5)],
    operator.neg: [(1.5,), (-0.3,)],
    operator.pos: [(1.5,), (-0.3,)],
    builtins.abs: [(1.5,), (-0.3,)],
    operator.abs: [(1.5,), (-0.3,)],
    builtins.float: [(1.5,), (-0.3,)],
    # math
    math.sin: [(0.3,), (-2.1,), (5.0,)],
    math.cos: [(0.3,), (-2.1,), (5.0,)],
    math.tan: [(0.3,), (-1.2,), (1.5,)],
    math.asin: [(0.3,), (-0.99,), (0.99,)],
    math.acos: [(0.3,), (-0.99,), (0.99,)],
    math.atan: [(0.3,), (-20.0,), (4.0,)],
    math.atan2: [(0.5, 1.2), (-0.5, -2.0), (3.0, -0.1)],
    math.sinh: [(0.3,), (-2.1,)],
    math.cosh: [(0.3,), (-2.1,)],
    math.tanh: [(0.3,), (-2.1,), (4.0,)],
    math.exp: [(0.3,), (-5.0,), (3.0,)],
    math.expm1: [(0.3,), (-5.0,), (1e-8,)],
    math.log: [(0.3,), (1e-3,), (50.0,), (8.0, 2.0), (0.5, 10.0)],
    math.log1p: [(0.3,), (-0.9,), (1e-8,)],
    math.log2: [(0.3,), (1e-3,), (50.0,)],
    math.log10: [(0.3,), (1e-3,), (50.0,)],
    math.sqrt: [(0.3,), (1e-3,), (50.0,)],
    math.pow: [(1.5, 2.5), (0.3, -1.5)],
    math.hypot: [(0.5, 1.2), (-3.0, 4.0)],
    math.erf: [(0.3,), (-2.1,), (0.0,)],
    math.fabs: [(1.5,), (-0.3,)],
    # an entry can give the expression to test, when the call alone is not differentiable in every argument
    operator.getitem: ("x[1] * x[2] + x[1:3][1] * x[0] + x[::2][1]", [(np.array([0.5, -1.2, 2.0, 3.0]),)]),
}

_SYNTAX = {
    operator.add: "{0} + {1}", operator.sub: "{0} - {1}", operator.mul: "{0} * {1}",
    operator.truediv: "{0} / {1}", operator.pow: "{0} ** {1}", operator.mod: "{0} % {1}",
    operator.neg: "-{0}", operator.pos: "+{0}", operator.abs: "operator.abs({0})",
}

NAMES = ["x", "y", "z"]


def _function_for(prim, arity, make_fn):
    args = NAMES[:arity]
    if isinstance(DOMAINS[prim], tuple):
        return make_fn(f"def f({', '.join(args)}):\n    return {DOMAINS[prim][0]}\n")
    call = _SYNTAX.get(prim, prim_name(prim) + "({})").format(*args) if prim in _SYNTAX else \
        f"{prim_name(prim)}({', '.join(args)})"
    return make_fn(f"def f({', '.join(args)}):\n    return {call}\n")


CASES = [(prim, point) for prim, entry in DOMAINS.items()
         for point in (entry[1] if isinstance(entry, tuple) else entry)]


@pytest.mark.parametrize("prim, point", CASES, ids=[f"{prim_name(p)}{pt}" for p, pt in CASES])
def test_rule_against_central_differences(prim, point, make_fn):
    f = _function_for(prim, len(point), make_fn)
    s2s.check_grad(f, *point, wrt=tuple(range(len(point))), rtol=1e-5, atol=1e-7)
    for i in range(len(point)):          # each argument alone: the others are constants
        s2s.check_grad(f, *point, wrt=i, rtol=1e-5, atol=1e-7)


def test_every_rule_has_a_domain():
    missing = [prim_name(p) for p in registered_adjoints() if p not in DOMAINS]
    assert not missing, f"rules without a line in DOMAINS: {missing}"
