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
import s2s.runtime
from s2s.ir import prim_name
from s2s.registry import registered_adjoints

_rng = np.random.default_rng(20261129)


def A(*shape):
    """A random array of any sign, well away from zero (kinks and ties sit at zero)."""
    values = _rng.uniform(0.2, 2.0, size=shape) * _rng.choice([-1.0, 1.0], size=shape)
    return values


def P(*shape):
    """A random positive array."""
    return _rng.uniform(0.3, 2.0, size=shape)


def U(*shape):
    """A random array inside (-0.8, 0.8)."""
    return _rng.uniform(-0.8, 0.8, size=shape)


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
    math.copysign: [("math.copysign(x, -1.0) + math.copysign(2.0 * x, y)", (1.5, 0.7)), ("math.copysign(x, y)",
                                                                                       (-0.5, 2.0))],
    # an entry can give the expression to test, when the call alone is not differentiable in every argument
    operator.getitem: [("x[1] * x[2] + x[1:3][1] * x[0] + x[::2][1]", (np.array([0.5, -1.2, 2.0, 3.0]),)),
                       ("x[1, ::2] + x[:, 0] + x[..., 1] + np.sum(x[[0, 0, 1], [1, 1, 2]])", (A(2, 3),)),
                       ("x[x > 0] * 2.0 + x[:, None][0]", (A(4),))],
    # NumPy elementwise, broadcasting included
    np.add: [(A(2, 3), A(3)), (A(2, 1), A(1, 3)), (1.5, A(2, 3))],
    np.subtract: [(A(2, 3), A(3)), (A(2, 1), A(1, 3)), (A(2, 3), 0.5)],
    np.multiply: [(A(2, 3), A(3)), (A(2, 1), A(1, 3)), (1.5, A(2, 3))],
    np.divide: [(A(2, 3), P(3)), (P(2, 1), P(1, 3))],
    np.power: [(P(2, 3), A(3)), (P(3), 2.0)],
    np.negative: [(A(2, 3),)], np.positive: [(A(2, 3),)], np.square: [(A(2, 3),)],
    np.reciprocal: [(P(2, 3),)], np.absolute: [(A(2, 3),)], np.fabs: [(A(3),)],
    np.maximum: [(A(2, 3), A(3)), (A(3), 0.1)], np.fmax: [(A(2, 3), A(3))],
    np.minimum: [(A(2, 3), A(3)), (A(3), 0.1)], np.fmin: [(A(2, 3), A(3))],
    np.clip: [("np.clip(x, -0.5, 0.5)", (A(2, 3),)), ("np.clip(x, y, None)", (A(2, 3), A(3)))],
    np.where: [("np.where(x > 0, x * y, y)", (A(2, 3), A(3)))],
    np.exp: [(A(2, 3),)], np.exp2: [(A(3),)], np.expm1: [(A(3),)], np.log: [(P(2, 3),)], np.log2: [(P(3),)],
    np.log10: [(P(3),)], np.log1p: [(P(3),)], np.logaddexp: [(A(2, 3), A(3)), (0.0, A(4))],
    np.sqrt: [(P(2, 3),)], np.cbrt: [(P(3),)], np.hypot: [(A(2, 3), A(3))],
    np.sin: [(A(2, 3),)], np.cos: [(A(2, 3),)], np.tan: [(U(3),)], np.arcsin: [(U(3),)], np.arccos: [(U(3),)],
    np.arctan: [(A(3),)], np.arctan2: [(A(2, 3), A(3))], np.sinh: [(A(3),)], np.cosh: [(A(3),)],
    np.tanh: [(A(2, 3),)], np.arcsinh: [(A(3),)], np.arccosh: [(P(3) + 1.0,)], np.arctanh: [(U(3),)],
    # reductions
    np.sum: [(A(2, 3),), ("np.sum(x, axis=0)", (A(2, 3),)), ("np.sum(x, axis=(0, 2), keepdims=True)", (A(2, 3, 2),)),
             ("x.sum(-1)", (A(2, 3),))],
    np.mean: [(A(2, 3),), ("np.mean(x, axis=1)", (A(2, 3),)), ("x.mean(axis=0, keepdims=True)", (A(4, 3),))],
    np.prod: [(P(2, 3),), ("np.prod(x, axis=1)", (A(2, 3),)), ("np.prod(x * np.array([0.0, 1.0, 1.0]))", (A(3),)),
              ("np.prod(x, axis=(0, 2), keepdims=True)", (A(2, 3, 2),))],
    np.max: [(A(2, 3),), ("np.max(x, axis=0)", (A(3, 4),)), ("x.max(axis=1, keepdims=True)", (A(2, 3),))],
    np.amax: [(A(2, 3),)], np.amin: [(A(2, 3),)],
    np.min: [(A(2, 3),), ("np.min(x, axis=1)", (A(3, 4),))],
    np.var: [(A(2, 3),), ("np.var(x, axis=0, ddof=1)", (A(4, 3),))],
    np.std: [(A(2, 3),), ("np.std(x, axis=1, keepdims=True)", (A(2, 5),))],
    np.cumsum: [(A(5),), ("np.cumsum(x, axis=1)", (A(2, 3),)), ("np.cumsum(x)", (A(2, 3),))],
    np.trace: [(A(3, 3),), ("np.trace(x, 1)", (A(3, 4),))],
    # shape
    np.reshape: [("np.reshape(x, (3, 2))", (A(2, 3),)), ("x.reshape(6)", (A(2, 3),)), ("x.reshape(3, 2)", (A(6),))],
    np.ravel: [(A(2, 3),), ("x.flatten()", (A(2, 3),))],
    np.expand_dims: [("np.expand_dims(x, 1)", (A(3),))], np.squeeze: [("np.squeeze(x, axis=0)", (A(1, 3),))],
    np.atleast_1d: [(1.5,)], np.atleast_2d: [(A(3),)],
    np.transpose: [(A(2, 3),), ("np.transpose(x, (1, 2, 0))", (A(2, 3, 4),)), ("x.T", (A(2, 3),)),
                   ("x.transpose(2, 0, 1)", (A(2, 3, 4),))],
    np.swapaxes: [("np.swapaxes(x, 0, 2)", (A(2, 3, 4),))], np.moveaxis: [("np.moveaxis(x, 0, -1)", (A(2, 3, 4),))],
    np.broadcast_to: [("np.broadcast_to(x, (4, 2, 3))", (A(2, 1),))],
    np.flip: [(A(2, 3),), ("np.flip(x, 1)", (A(2, 3),))],
    np.concatenate: [("np.concatenate([x, y, x], axis=1)", (A(2, 3), A(2, 2)))],
    np.stack: [("np.stack([x, y], axis=1)", (A(3), A(3))), ("np.stack([x, y * x])", (1.5, 2.5))],
    np.hstack: [("np.hstack([x, y])", (A(3), A(2))), ("np.hstack([x, y])", (A(2, 3), A(2, 1)))],
    np.vstack: [("np.vstack([x, y])", (A(3), A(2, 3)))],
    np.tile: [("np.tile(x, (2, 3))", (A(2, 2),)), ("np.tile(x, 2)", (A(3),))],
    np.repeat: [("np.repeat(x, 3)", (A(2, 2),)), ("np.repeat(x, [1, 0, 2], axis=1)", (A(2, 3),))],
    np.diag: [(A(3),), ("np.diag(x, 1)", (A(3, 4),)), ("np.diag(x, -1)", (A(3, 3),))],
    # constructors and conversions
    np.array: [("np.array([x, x * y, 2.0])", (1.5, -0.5)), ("np.array(x)", (A(3),))],
    np.asarray: [(A(3),)], np.copy: [(A(3),)], np.astype: [("x.astype(np.float64)", (A(3),))],
    np.full: [("np.full((2, 3), x)", (1.5,))],
    np.linspace: [("np.linspace(x, y, 5)", (0.5, 2.0)), ("np.linspace(0.0, x, 4, False)", (1.5,))],
    np.arange: [("np.arange(x, x + 3.0) ** 2", (0.7,)), ("np.arange(x, 4.0, y)", (0.5, 0.75))], np.full_like: [("np.full_like(y, x)", (1.5, A(3)))],
    # products and numpy.linalg
    np.matmul: [(A(2, 3), A(3, 4)), (A(3), A(3, 4)), (A(2, 3), A(3)), (A(3), A(3)), (A(5, 2, 3), A(3, 4))],
    operator.matmul: [(A(2, 3), A(3, 4)), (A(4, 2, 3), A(4, 3, 2))],
    np.dot: [(A(2, 3), A(3, 4)), (A(3), A(3)), (A(2, 3), A(3)), (1.5, A(3))],
    np.inner: [(A(3), A(3)), (A(2, 3), A(4, 3))], np.outer: [(A(3), A(2))],
    np.einsum: [("np.einsum('ij,jk->ik', x, y)", (A(2, 3), A(3, 4))), ("np.einsum('ij,ij->', x, y)", (A(2, 3), A(2, 3))),
                ("np.einsum('i,j', x, y)", (A(2), A(3))), ("np.einsum('ij->j', x)", (A(2, 3),)),
                ("np.einsum('ijk,k->ij', x, y)", (A(2, 3, 4), A(4)))],
    np.linalg.inv: [(A(3, 3) + 3 * np.eye(3),)],
    np.linalg.solve: [(A(3, 3) + 3 * np.eye(3), A(3)), (A(3, 3) + 3 * np.eye(3), A(3, 2))],
    np.linalg.det: [(A(3, 3) + 3 * np.eye(3),)],
    # containers, and arrays written into (a case with several lines ends with the value to check)
    builtins.sum: [("sum([x, x * y, y])", (1.5, -0.5)), ("sum(x)", (A(3, 2),))],
    builtins.max: [(1.5, -0.5), (-1.5, 0.5), ("max(x, 0.0) * 2.0", (0.7,))],
    builtins.min: [(1.5, -0.5), (-1.5, 0.5)],
    s2s.runtime.list_append: [("ys = [x]\nfor k in range(3):\n    ys.append(ys[-1] * y)\nnp.stack(ys)",
                               (A(2), 1.3))],
    s2s.runtime.setitem: [("a = np.zeros(4)\na[0] = x\na[1:3] = y * x\na[3] += x * x\na[0] = a[0] * y\na",
                           (1.5, -0.5)),
                          ("d = {'p': x, 'q': y}\nd['q'] = d['p'] * d['q']\nd['p'] = 2.0\nd['p'] * d['q']",
                           (1.5, -0.5)),
                          ("a = np.array(x)\na[:, 0] *= y\na", (A(2, 3), 0.5)),
                          ("a = np.zeros(3)\na[np.array([1, 1, 2])] = x * y\na[np.array([0, 0])] += x[:2]\na",
                           (A(3), 0.5))],
    np.linalg.norm: [(A(4),), (A(2, 3),), ("np.linalg.norm(x, axis=1)", (A(2, 3),)), ("np.linalg.norm(x, 'fro')", (A(2, 3),))],
}

_SYNTAX = {
    operator.add: "{0} + {1}", operator.sub: "{0} - {1}", operator.mul: "{0} * {1}",
    operator.truediv: "{0} / {1}", operator.pow: "{0} ** {1}", operator.mod: "{0} % {1}",
    operator.neg: "-{0}", operator.pos: "+{0}", operator.abs: "operator.abs({0})", operator.matmul: "{0} @ {1}",
}

NAMES = ["x", "y", "z"]


def _function_for(prim, case, make_fn):
    """A scalar function of the case's arguments: the call (or the expression), weighted and summed."""
    expression, point = case if isinstance(case[0], str) else (None, case)
    args = NAMES[:len(point)]
    if expression is None:
        expression = _SYNTAX[prim].format(*args) if prim in _SYNTAX else f"{prim_name(prim)}({', '.join(args)})"
    *statements, expression = expression.split("\n")
    prelude = "".join(f"    {line}\n" for line in statements)
    probe = make_fn(f"def probe({', '.join(args)}):\n{prelude}    return {expression}\n")
    weights = np.asarray(_rng.uniform(0.5, 1.5, size=np.shape(probe(*point))))
    body = f"np.sum(({expression}) * WEIGHTS)" if weights.ndim else f"({expression}) * WEIGHTS"
    return make_fn(f"def f({', '.join(args)}):\n{prelude}    return {body}\n",
                   namespace={"WEIGHTS": float(weights) if not weights.ndim else weights}), point


CASES = [(prim, case) for prim, cases in DOMAINS.items() for case in cases]


def _case_id(prim, case):
    if isinstance(case[0], str):
        return case[0]
    return prim_name(prim) + "(" + ", ".join(f"{np.shape(a)}" if np.ndim(a) else repr(a) for a in case) + ")"


@pytest.mark.parametrize("prim, case", CASES, ids=[_case_id(p, c) for p, c in CASES])
def test_rule_against_central_differences(prim, case, make_fn):
    f, point = _function_for(prim, case, make_fn)
    s2s.check_grad(f, *point, wrt=tuple(range(len(point))), rtol=1e-5, atol=1e-7)
    for i in range(len(point)):          # each argument alone: the others are constants
        s2s.check_grad(f, *point, wrt=i, rtol=1e-5, atol=1e-7)
    wrt = tuple(range(len(point)))
    reverse = s2s.grad(f, wrt=wrt)(*point)
    forward = s2s.grad(f, wrt=wrt, mode="forward")(*point)      # the same rule in forward mode
    for r, fw in zip(reverse, forward):
        assert np.asarray(fw) == pytest.approx(np.asarray(r), rel=1e-9, abs=1e-12)


def test_every_rule_has_a_domain():
    missing = [prim_name(p) for p in registered_adjoints(builtin_only=True) if p not in DOMAINS]
    assert not missing, f"rules without a line in DOMAINS: {missing}"
