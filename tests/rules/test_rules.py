"""Every registered derivative rule, checked against central differences.

To test a new rule, add one line to DOMAINS: the function and the points to
check it at (one tuple of arguments per point, domain edges included). A rule
without a line here fails `test_every_rule_has_a_domain`.
"""
import builtins
import cmath
import math
import operator
import statistics

import numpy as np
import pytest

import s2s
import s2s.frontend.desugar.helpers
import s2s.rules.batching
import s2s.runtime

try:                                    # SciPy's rules are registered (and tested) when SciPy is installed
    import scipy
    import scipy.integrate
    import scipy.linalg
    import scipy.signal
    import scipy.special
    import scipy.stats
except ImportError:
    scipy = None
from s2s.ir.core import prim_name
from s2s.rules.registry import registered_adjoints

_rng = np.random.default_rng(20261129)


def A(*shape):
    """A random array of any sign, well away from zero (kinks and ties sit at zero)."""
    values = _rng.uniform(0.2, 2.0, size=shape) * _rng.choice([-1.0, 1.0], size=shape)
    return values


def P(*shape):
    """A random positive array."""
    return _rng.uniform(0.3, 2.0, size=shape)


def S(*shape):
    """A fixed array of any sign, well away from zero, drawn from no generator: rows added to DOMAINS later use it,
    so that the rows after them keep their points."""
    k = np.arange(int(np.prod(shape)))
    return ((0.2 + (0.61 * k + 0.37) % 1.8) * np.where(k % 3 == 1, -1.0, 1.0)).reshape(shape)


def U(*shape):
    """A random array inside (-0.8, 0.8)."""
    return _rng.uniform(-0.8, 0.8, size=shape)


# every method of numpy.quantile: each is a weighted pick of one or two order statistics (rules/helpers.py)
QUANTILE_METHODS = ("inverted_cdf", "averaged_inverted_cdf", "closest_observation", "interpolated_inverted_cdf",
                    "hazen", "weibull", "linear", "median_unbiased", "normal_unbiased", "lower", "higher",
                    "midpoint", "nearest")
NANS = np.array([[0.0, np.nan, 0.0], [0.0, 0.0, np.nan]])        # the nan-ignoring reductions skip these


def decay(y, t, k):
    """The right-hand side given to scipy.integrate.odeint (rules/integrate.py)."""
    return -k * y + np.sin(t) * y[::-1]


def newton_sqrt(a, x):
    """The map whose fixed point s2s.fixed_point finds (rules/fixed_points.py): Newton's step for sqrt(a)."""
    return 0.5 * (x + a / x)


DOMAINS = {
    # s2s.fixed_point: the implicit function theorem (its iteration converges in float32 too)
    s2s.fixed_point: [("s2s.fixed_point(newton_sqrt, x, 1.0, 1e-6)", (2.0,)),
                      ("s2s.fixed_point(newton_sqrt, x, np.ones(3), 1e-6)", (P(3) + 0.5,))],
    # Python operators and builtins
    operator.add: [(1.5, -2.0), (-0.3, 0.7)],
    operator.sub: [(1.5, -2.0), (-0.3, 0.7)],
    operator.mul: [(1.5, -2.0), (-0.3, 0.7)],
    operator.truediv: [(1.5, -2.0), (-0.3, 0.7), (2.0, 1e-3)],
    operator.pow: [(1.5, 2.5), (0.3, -1.5), (2.0, 3.0)],
    builtins.pow: [(1.5, 2.5), (0.7, 0.5)],
    operator.mod: [(4.3, 1.5), (-4.3, 1.5)],
    builtins.divmod: [("divmod(x, y)[1]", (4.3, 1.5)), ("divmod(x, y)[1] * divmod(x, y)[0]", (-4.3, 1.5)),
                      ("q, r = divmod(x, y)\nr * r + q", (4.3, -1.7)),
                      ("divmod(x, y)[1]", (np.array([4.3, -2.2, 0.7]), 1.5)),
                      ("divmod(x, y)[1]", (0.8, np.array([0.3, -0.5, 1.5])))],
    operator.neg: [(1.5,), (-0.3,)],
    operator.pos: [(1.5,), (-0.3,)],
    builtins.abs: [(1.5,), (-0.3,)],
    operator.abs: [(1.5,), (-0.3,)],
    builtins.float: [(1.5,), (-0.3,)],
    np.float64: [(1.5,), (-0.3,)],
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
    math.hypot: [(0.5, 1.2), (-3.0, 4.0), ("math.hypot(x, y, z)", (0.5, -1.2, 2.0)),
                 ("math.hypot(x, 2.0 * x, y, 0.5)", (-0.7, 1.3))],
    math.dist: [("math.dist((x, y), (1.0, -2.0))", (0.5, 1.2)), ("math.dist([x, 2.0, y], [z, -1.0, 0.3])",
                                                                   (0.5, -1.2, 2.0))],
    statistics.mean: [("statistics.mean([x, y, 2.0 * x])", (0.5, -1.2)), ("statistics.mean(x)", (A(4),))],
    statistics.fmean: [("statistics.fmean((x, y))", (0.5, -1.2)), ("statistics.fmean([x, y], [y, 2.0])", (0.5, 1.2))],
    statistics.variance: [("statistics.variance([x, y, 0.3])", (0.5, -1.2)),
                          ("statistics.variance([x, y, 0.3], y)", (0.5, -1.2))],
    statistics.pvariance: [("statistics.pvariance([x, y, 0.3])", (0.5, -1.2)),
                           ("statistics.pvariance([x, 0.3], y)", (0.5, -1.2))],
    statistics.stdev: [("statistics.stdev([x, y, 0.3])", (0.5, -1.2)), ("statistics.stdev(x)", (A(4),))],
    statistics.pstdev: [("statistics.pstdev([x, y, 0.3])", (0.5, -1.2)), ("statistics.pstdev([x, 0.3], y)", (0.5, -1.2))],
    cmath.exp: [("cmath.exp(x).real", (0.7,)), ("abs(cmath.exp(1j * x + y))", (0.3, -0.4))],
    cmath.sqrt: [("cmath.sqrt(x).real", (0.7,)), ("cmath.sqrt(x).imag", (-0.7,)),
                 ("abs(cmath.sqrt(x + 1j * y)) + cmath.sqrt(x + 1j * y).imag", (0.4, 1.3))],
    cmath.log: [("cmath.log(x).real", (0.7,)), ("cmath.log(x + 1j * y).imag", (-0.5, 1.2))],
    math.exp2: [(0.3,), (-5.0,), (3.0,)],
    math.cbrt: [(0.3,), (-2.1,), (50.0,)],
    math.gamma: [(0.7,), (3.5,), (-0.5,)],
    math.lgamma: [(0.7,), (3.5,), (-0.5,), (-2.5,)],
    math.erf: [(0.3,), (-2.1,), (0.0,)],
    math.erfc: [(0.3,), (-2.1,), (0.0,)],
    math.fabs: [(1.5,), (-0.3,)],
    math.fmod: [(4.3, 1.5), (-4.3, 1.5), (0.7, -2.1)],
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
    np.power: [(P(2, 3), A(3)), (P(3), 2.0), ("np.power(0.0 * x, y + 2.0)", (A(3), P(3)))],
    np.negative: [(A(2, 3),)], np.positive: [(A(2, 3),)], np.square: [(A(2, 3),)],
    np.reciprocal: [(P(2, 3),)], np.absolute: [(A(2, 3),)], np.fabs: [(A(3),)],
    np.maximum: [(A(2, 3), A(3)), (A(3), 0.1)], np.fmax: [(A(2, 3), A(3))],
    np.minimum: [(A(2, 3), A(3)), (A(3), 0.1)], np.fmin: [(A(2, 3), A(3))],
    np.clip: [("np.clip(x, -0.5, 0.5)", (A(2, 3),)), ("np.clip(x, y, None)", (A(2, 3), A(3))),
              ("x.clip(min=-0.5, max=y)", (S(2, 3), (0.4 * S(3)))), ("np.clip(x, max=0.5)", (S(4),))],
    np.where: [("np.where(x > 0, x * y, y)", (A(2, 3), A(3)))],
    np.exp: [(A(2, 3),)], np.exp2: [(A(3),)], np.expm1: [(A(3),)], np.log: [(P(2, 3),)], np.log2: [(P(3),)],
    np.log10: [(P(3),)], np.log1p: [(P(3),)], np.logaddexp: [(A(2, 3), A(3)), (0.0, A(4))],
    np.sqrt: [(P(2, 3),)], np.cbrt: [(P(3),)], np.hypot: [(A(2, 3), A(3))],
    np.copysign: [(S(2, 3), S(3)), (S(3), -0.5)],
    np.sin: [(A(2, 3),)], np.cos: [(A(2, 3),)], np.tan: [(U(3),)], np.arcsin: [(U(3),)], np.arccos: [(U(3),)],
    np.arctan: [(A(3),)], np.arctan2: [(A(2, 3), A(3))], np.sinh: [(A(3),)], np.cosh: [(A(3),)],
    np.tanh: [(A(2, 3),)], np.arcsinh: [(A(3),)], np.arccosh: [(P(3) + 1.0,)], np.arctanh: [(U(3),)],
    # reductions
    np.sum: [(A(2, 3),), ("np.sum(x, axis=0)", (A(2, 3),)), ("np.sum(x, axis=(0, 2), keepdims=True)", (A(2, 3, 2),)),
             ("x.sum(-1)", (A(2, 3),)), ("np.sum(x ** 2, axis=0, where=y > 0)", (S(2, 3), S(3)))],
    np.mean: [(A(2, 3),), ("np.mean(x, axis=1)", (A(2, 3),)), ("x.mean(axis=0, keepdims=True)", (A(4, 3),)),
              ("np.mean(x ** 3, axis=1, where=y > 0)", (S(2, 3), np.array([1.0, -1.0, 1.0])))],
    np.prod: [(P(2, 3),), ("np.prod(x, axis=1)", (A(2, 3),)), ("np.prod(x * np.array([0.0, 1.0, 1.0]))", (A(3),)),
              ("np.prod(x, axis=(0, 2), keepdims=True)", (A(2, 3, 2),))],
    np.max: [(A(2, 3),), ("np.max(x, axis=0)", (A(3, 4),)), ("x.max(axis=1, keepdims=True)", (A(2, 3),)),
             ("np.max(x, axis=1, where=x < 1.5, initial=-3.0)", (S(3, 4),)), ("np.max(x, initial=y)", ((0.4 * S(3)), 0.9)),
             ("np.max(x * y, where=y > 0, initial=-5.0, keepdims=True, axis=0)", (S(2, 3), np.array([1.0, -1.0, 1.0])))],
    np.amax: [(A(2, 3),)], np.amin: [(A(2, 3),)],
    np.min: [(A(2, 3),), ("np.min(x, axis=1)", (A(3, 4),)), ("np.min(x ** 2, where=x > 0, initial=10.0)", (S(5),))],
    np.var: [(A(2, 3),), ("np.var(x, axis=0, ddof=1)", (A(4, 3),))],
    np.nanvar: [(S(2, 3),), ("np.nanvar(x + NANS, axis=1, ddof=1, keepdims=True)", (S(2, 3),))],
    np.std: [(A(2, 3),), ("np.std(x, axis=1, keepdims=True)", (A(2, 5),)), ("np.std(x, axis=0)", (A(1, 3),)),
             ("np.std(x * y)", (1.5, A(3)))],
    np.cumsum: [(A(5),), ("np.cumsum(x, axis=1)", (A(2, 3),)), ("np.cumsum(x)", (A(2, 3),))],
    np.trace: [(A(3, 3),), ("np.trace(x, 1)", (A(3, 4),)), ("np.trace(x)", (A(3, 3, 2),)),
               ("np.trace(x, -1, axis1=1, axis2=2)", (A(2, 3, 3),))],
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
    np.asanyarray: [(A(3),)], np.ascontiguousarray: [(A(2, 3),)], np.asfortranarray: [(A(2, 3),)],
    np.asarray_chkfinite: [(A(3),)], np.require: [("np.require(x, dtype=np.float64, requirements='C')", (A(3),))],
    np.full: [("np.full((2, 3), x)", (1.5,))],
    np.linspace: [("np.linspace(x, y, 5)", (0.5, 2.0)), ("np.linspace(0.0, x, 4, False)", (1.5,))],
    np.arange: [("np.arange(x, x + 3.0) ** 2", (0.7,)), ("np.arange(x, 4.0, y)", (0.5, 0.75))], np.full_like: [("np.full_like(y, x)", (1.5, A(3)))],
    # products and numpy.linalg
    np.matmul: [(A(2, 3), A(3, 4)), (A(3), A(3, 4)), (A(2, 3), A(3)), (A(3), A(3)), (A(5, 2, 3), A(3, 4))],
    operator.matmul: [(A(2, 3), A(3, 4)), (A(4, 2, 3), A(4, 3, 2))],
    np.dot: [(A(2, 3), A(3, 4)), (A(3), A(3)), (A(2, 3), A(3)), (1.5, A(3)), (A(3), A(3, 2)), (A(2, 3, 4), A(4)),
             (A(2, 3, 4), A(5, 4, 2)), (A(3), A(2, 3, 2)), (A(2, 3), 0.5)],
    np.inner: [(A(3), A(3)), (A(2, 3), A(4, 3)), (1.5, A(2, 3)), (A(2, 3), 0.5), (A(2, 2, 3), A(3))],
    np.outer: [(A(3), A(2))],
    np.add.outer: [("np.add.outer(x, y)", (S(3), S(2, 2)))],
    np.subtract.outer: [("np.subtract.outer(x, y)", (S(2, 3), S(2)))],
    np.multiply.outer: [("np.multiply.outer(x, y)", (S(3), S(2, 2))), ("np.multiply.outer(x, y)", (1.5, S(2)))],
    np.heaviside: [(S(2, 3), S(3)), ("np.heaviside(x - x, y)", (S(3), S(3)))],
    np.delete: [("np.delete(x, [0, 2])", (S(4),)), ("np.delete(x, 1, axis=1)", (S(2, 3),))],
    np.insert: [("np.insert(x, 1, y)", (S(3), 0.7)), ("np.insert(x, [0, 2], y, axis=1)", (S(2, 2), S(2))),
                ("np.insert(x, 2, y)", (S(2, 2), S(3)))],
    np.einsum: [("np.einsum('ij,jk->ik', x, y)", (A(2, 3), A(3, 4))), ("np.einsum('ij,ij->', x, y)", (A(2, 3), A(2, 3))),
                ("np.einsum('i,j', x, y)", (A(2), A(3))), ("np.einsum('ij->j', x)", (A(2, 3),)),
                ("np.einsum('ijk,k->ij', x, y)", (A(2, 3, 4), A(4))),
                ("np.einsum(x, [0, 1], [1, 0])", (A(2, 3),)), ("np.einsum(x, [0, 1], y, [1, 2])", (A(2, 3), A(3, 2))),
                ("np.einsum(x, [Ellipsis, 1], y, [1], [Ellipsis])", (A(2, 3), A(3))),
                ("np.einsum('...ij,...jk->...ik', x, y)", (A(2, 2, 3), A(3, 2))), ("np.einsum('ii->i', x)", (A(3, 3),)),
                ("np.einsum('ii', x)", (A(3, 3),)), ("np.einsum('ij,jk,kl->il', x, y, z)", (A(2, 3), A(3, 2), A(2, 2))),
                ("np.einsum('i,i', x, x)", (A(3),)), ("np.einsum('ij', x)", (A(2, 3),))],
    np.linalg.inv: [(A(3, 3) + 3 * np.eye(3),)],
    np.linalg.solve: [(A(3, 3) + 3 * np.eye(3), A(3)), (A(3, 3) + 3 * np.eye(3), A(3, 2))],
    np.linalg.det: [(A(3, 3) + 3 * np.eye(3),), (A(2, 3, 3) + 3 * np.eye(3),), (A(1, 1) + 2.0,),
                    (np.array([[1.0, 2.0], [2.0, 4.0]]),), (np.array([[1.0, 2.0, 3.0], [2.0, 4.0, 6.0], [1.0, 0.0, 1.0]]),)],
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
    np.linalg.norm: [(A(4),), (A(2, 3),), ("np.linalg.norm(x, axis=1)", (A(2, 3),)), ("np.linalg.norm(x, 'fro')", (A(2, 3),)),
                     ("np.linalg.norm(x, 1)", (A(4),)), ("np.linalg.norm(x, np.inf)", (A(4),)),
                     ("np.linalg.norm(x, -np.inf)", (A(4),)), ("np.linalg.norm(x, 3)", (A(4),)),
                     ("np.linalg.norm(x, 0.5, axis=1, keepdims=True)", (A(2, 3),)),
                     ("np.linalg.norm(x, -1.5, axis=0)", (A(2, 3),)),
                     ("np.linalg.norm(x, 1)", (A(3, 3),)), ("np.linalg.norm(x, -1)", (A(3, 3),)),
                     ("np.linalg.norm(x, np.inf)", (A(2, 3),)), ("np.linalg.norm(x, -np.inf)", (A(3, 2),)),
                     ("np.linalg.norm(x, 'nuc')", (A(3, 2),)), ("np.linalg.norm(x, 2)", (A(2, 3),)),
                     ("np.linalg.norm(x, -2)", (A(3, 3),)), ("np.linalg.norm(x, 'nuc', axis=(1, 2))", (A(2, 3, 2),)),
                     ("np.linalg.norm(x, 1, axis=(2, 0), keepdims=True)", (A(3, 2, 4),)),
                     ("np.linalg.norm(x, axis=(0, 2))", (A(2, 3, 2),)), ("np.linalg.norm(x)", (A(1),))],
    np.tensordot: [("np.tensordot(x, y)", (A(2, 3), A(2, 3))), ("np.tensordot(x, y, 1)", (A(2, 3), A(3, 4))),
                   ("np.tensordot(x, y, axes=([2, 0], [0, 1]))", (A(2, 3, 4), A(4, 2, 3))),
                   ("np.tensordot(x, y, 0)", (A(2), A(3))), ("np.tensordot(x, y, axes=(1, 0))", (A(2, 3), A(3)))],
    # decompositions (symmetric inputs where numpy reads one triangle)
    np.linalg.cholesky: [("np.linalg.cholesky(x @ x.T + np.eye(3))", (A(3, 3),)),
                         ("np.linalg.cholesky(x @ np.swapaxes(x, -1, -2) + np.eye(2))", (A(3, 2, 2),)),
                         ("np.linalg.cholesky(x @ x.T + np.eye(2), upper=True)", (A(2, 2),)),
                         ("np.linalg.cholesky(x * x + 1.0)", (P(1, 1),))],
    np.linalg.eigh: [("w, v = np.linalg.eigh(x + x.T)\nnp.sum(w * np.arange(3.0)) + np.sum(v * v[0] * y)", (A(3, 3), A(3))),
                     ("np.linalg.eigh(x + np.swapaxes(x, -1, -2))[0]", (A(2, 3, 3),)),
                     ("w, v = np.linalg.eigh(x + x.T)\nv[:, 0] * np.sign(v[0, 0])", (A(3, 3),))],
    np.linalg.eigvalsh: [("np.linalg.eigvalsh(x + x.T)", (A(3, 3),)),
                         ("np.linalg.eigvalsh(x + np.swapaxes(x, -1, -2))", (A(2, 2, 2),))],
    np.linalg.svd: [("np.linalg.svd(x, compute_uv=False)", (A(3, 2),)), ("np.linalg.svd(x, compute_uv=False)", (A(2, 2, 3),)),
                    ("u, s, vt = np.linalg.svd(x, full_matrices=False)\ns + np.sum(np.abs(u), 0) + np.sum(np.abs(vt), 1)",
                     (A(4, 3),)),
                    ("u, s, vt = np.linalg.svd(x, full_matrices=False)\nnp.sum(u @ vt * y)", (A(2, 3), A(2, 3))),
                    ("u, s, vt = np.linalg.svd(x)\nnp.sum(np.abs(u)) + np.sum(s) + np.sum(np.abs(vt))", (A(3, 3),)),
                    # full_matrices=True of non-square matrices, through the first min(m, n) singular vectors
                    ("u, s, vt = np.linalg.svd(x)\nu[:, :2] * s @ vt", (A(4, 2),)),
                    ("u, s, vt = np.linalg.svd(x)\nnp.sum((u * s) @ vt[:2], 1) + np.abs(u[:, 1])", (A(2, 3),)),
                    ("u, s, vt = np.linalg.svd(x, True)\ns * np.sum(np.abs(u[..., :, :2]), -2)", (A(2, 3, 2),))],
    np.linalg.qr: [("q, r = np.linalg.qr(x)\nnp.sum(q * y) + np.sum(r)", (A(4, 3), A(4, 3))),
                   ("np.linalg.qr(x)[1]", (A(3, 3),)), ("np.linalg.qr(x)[0]", (A(2, 3, 2),)),
                   ("q, r = np.linalg.qr(x)\nnp.sum(q * y) + np.sum(r * r)", (A(2, 4), A(2, 2))),      # wide, as JAX
                   ("q, r = np.linalg.qr(x, mode='complete')\nnp.sum(q * y) + np.sum(r)", (A(3, 5), A(3, 3))),
                   ("q, r = np.linalg.qr(x, 'complete')\nnp.sum(q * y) + np.sum(r)", (A(3, 3), A(3, 3))),
                   ("np.linalg.qr(x, mode='r')", (A(4, 2),)), ("np.linalg.qr(x, mode='r')", (A(2, 2, 3),))],
    np.linalg.slogdet: [("np.linalg.slogdet(x)[1]", (A(3, 3) + 3 * np.eye(3),)),
                        ("np.linalg.slogdet(x)[1] * np.linalg.slogdet(x)[0]", (A(2, 2, 2) + 3 * np.eye(2),))],
    np.linalg.pinv: [(A(3, 2),), (A(2, 3),), (A(3, 3) + 3 * np.eye(3),)],
    np.linalg.matrix_power: [("np.linalg.matrix_power(x, 3)", (A(3, 3),)), ("np.linalg.matrix_power(x, 0)", (A(2, 2),)),
                             ("np.linalg.matrix_power(x, -2)", (A(3, 3) + 3 * np.eye(3),)),
                             ("np.linalg.matrix_power(x, 2)", (A(2, 3, 3),))],
    np.linalg.lstsq: [("np.linalg.lstsq(x, y, rcond=None)[0]", (A(4, 2), A(4))),
                      ("np.linalg.lstsq(x, y)[0]", (A(4, 3), A(4, 2))),
                      ("np.linalg.lstsq(x, y)[1]", (A(4, 2), A(4, 3))), ("np.linalg.lstsq(x, y)[0]", (A(3, 3) + 3 * np.eye(3), A(3)))],
    # tuples and lists joined and repeated, np.r_ and np.c_, swaps (s2s/passes/sequences.py, rules/sequences.py)
    s2s.runtime.concat: [("t = (x,) + (y * x, y)\nt[0] * t[1] + t[2]", (1.5, -0.5)),
                         ("xs = [x] + [x * y]\nnp.stack(xs)", (A(2), 0.7))],
    s2s.runtime.repeat: [("xs = [x, y] * 2\nxs[0] * xs[3] + xs[2]", (1.5, -0.5))],
    s2s.runtime.copy_method: [("d = {'a': x, 'b': y * x}\ne = d.copy()\ne['a'] = y\nd['a'] * e['b'] + e['a']", (1.5, -0.5)),
                              ("xs = [x, y]\nys = xs.copy()\nys[0] = y * y\nxs[0] * ys[0] + ys[1]", (1.5, -0.5))],
    builtins.list: [("ys = list((x, x * y, y))\nys[0] * ys[1] + ys[2]", (1.5, -0.5)),
                    ("rows = list(x)\nrows[0] * rows[1] + rows[1]", (A(2, 3),))],
    builtins.tuple: [("t = tuple([x, x * y])\nt[0] * t[1]", (1.5, -0.5)), ("t = tuple(x)\nt[0] + 2.0 * t[1]", (A(2),))],
    s2s.frontend.desugar.helpers.list_pop: [("ys = [x, x * y, y]\nys.pop(0)\nys[0] * ys[1]", (1.5, -0.5)),
                                   ("ys = [x, x * y, y]\nys.pop()\nys[0] * ys[-1]", (1.5, -0.5))],
    s2s.frontend.desugar.helpers.list_insert: [("ys = [x, y]\nys.insert(1, x * y)\nys[0] * ys[1] + ys[2]", (1.5, -0.5)),
                                      ("ys = [x]\nys.insert(-1, y * y)\nys[0] * ys[1]", (1.5, -0.5))],
    s2s.runtime._r_item: [("np.r_[x, y, 2.0]", (A(2), A(3)))], s2s.runtime._c_item: [("np.c_[x, y]", (A(2), A(2, 2)))],
    s2s.runtime._element_read: [("a = x * 1.0\na[0], a[1] = a[1], a[0]\na * np.arange(3.0)", (A(3),))],
    # (what s2s/passes/accumulate_items.py writes into a derivative: a gradient differentiated again meets it)
    s2s.runtime._scatter_into: [("v = s2s.runtime._scatter_into([x * 0.5, x * y], [x, y], 1, y * y)\nv[0] * v[1]",
                                 (1.5, -0.5))],
    # more NumPy: ufuncs
    np.deg2rad: [(A(3),)], np.radians: [(A(2, 3),)], np.rad2deg: [(A(3),)], np.degrees: [(A(3),)],
    np.logaddexp2: [(A(2, 3), A(3)), (0.5, A(2))],
    np.remainder: [(A(3) * 3.0, P(3)), (4.3, A(2))], np.fmod: [(A(3) * 3.0, P(3))],
    np.sinc: [(A(3),), ("np.sinc(x * 0.0 + np.array([0.0, 0.5]))", (A(2),))],
    np.conjugate: [(A(3),)], np.real: [(A(3),)], np.real_if_close: [(A(3),)],
    np.imag: [("np.imag(x) + x", (A(3),))], np.angle: [("np.angle(x) + x", (A(3),))],
    np.nan_to_num: [(A(3),), ("np.nan_to_num(np.log(x))", (np.array([0.5, -1.0, 2.0]),))],
    # more NumPy: reductions and scans
    np.cumprod: [(A(4),), ("np.cumprod(x, axis=1)", (A(2, 3),)), ("np.cumprod(x)", (A(2, 2),)),
                 ("np.cumprod(x * np.array([1.0, 0.0, 1.0, 0.0]))", (A(4),)),        # exact at zeros
                 ("np.cumprod(x * np.array([[1.0, 0.0, 1.0]]), axis=1)", (A(2, 3),))],
    np.median: [(A(5),), (A(4),), ("np.median(x, axis=1)", (A(2, 3),)), ("np.median(x, axis=0, keepdims=True)", (A(4, 2),)),
                ("np.median(x)", (A(1),))],
    np.nanmedian: [("np.nanmedian(x + NANS)", (A(2, 3),)), ("np.nanmedian(x + NANS, axis=1, keepdims=True)", (A(2, 3),))],
    np.quantile: [("np.quantile(x, 0.3)", (A(6),)), ("np.quantile(x, 0.75, axis=0)", (A(5, 2),)),
                  ("np.quantile(x, np.array([0.1, 0.5, 0.8]), axis=1, keepdims=True)", (A(2, 5),))]
                 + [(f"np.quantile(x, 0.35, method='{m}')", (A(7),)) for m in QUANTILE_METHODS]
                 + [(f"np.quantile(x, [0.2, 0.9], axis=0, method='{m}')", (A(6, 2),)) for m in QUANTILE_METHODS],
    np.nanquantile: [("np.nanquantile(x + NANS, 0.4, axis=1)", (A(2, 3),)),
                     ("np.nanquantile(x + NANS, [0.3, 0.6], method='nearest')", (A(2, 3),))],
    np.percentile: [("np.percentile(x, 40.0, axis=1, keepdims=True)", (A(2, 4),)), ("np.percentile(x, 100)", (A(3),)),
                    ("np.percentile(x, [25.0, 60.0], method='midpoint')", (A(5),))],
    np.nanpercentile: [("np.nanpercentile(x + NANS, 70.0, axis=0, method='higher')", (A(2, 3),))],
    np.diff: [(A(4),), ("np.diff(x, 2, axis=0)", (A(4, 2),)), ("np.diff(x, axis=1)", (A(2, 1),))],
    # more NumPy: shape and order
    np.roll: [("np.roll(x, 1)", (A(4),)), ("np.roll(x, (1, -1), axis=(0, 1))", (A(2, 3),)), ("np.roll(x, 2)", (A(2, 2),))],
    np.rot90: [(A(2, 3),), ("np.rot90(x, 3, axes=(1, 2))", (A(2, 3, 2),))],
    np.fliplr: [(A(2, 3),)], np.flipud: [(A(2, 3),)],
    np.rollaxis: [("np.rollaxis(x, 2)", (A(2, 3, 4),)), ("np.rollaxis(x, 0, 3)", (A(2, 3, 4),))],
    np.atleast_3d: [(A(3),), (1.5,)],
    np.tril: [(A(3, 3),), ("np.tril(x, -1)", (A(2, 3, 3),))], np.triu: [(A(3, 4),), ("np.triu(x, 1)", (A(3, 3),))],
    np.diagonal: [(A(3, 3),), ("np.diagonal(x, 1, 1, 2)", (A(2, 3, 4),))],
    np.pad: [("np.pad(x, 2)", (A(3),)), ("np.pad(x, ((1, 0), (0, 2)), 'edge')", (A(2, 3),)),
             ("np.pad(x, 2, 'reflect')", (A(4),)), ("np.pad(x, 1, 'wrap')", (A(2, 3),))],
    np.sort: [(A(5),), ("np.sort(x, axis=0)", (A(3, 2),)), ("np.sort(x, axis=None)", (A(2, 3),))],
    np.partition: [("np.partition(x, 2)", (A(5),)), ("np.partition(x, 1, axis=0)", (A(3, 2),))],
    np.take: [("np.take(x, [2, 0, 2])", (A(2, 2),)), ("np.take(x, np.array([[1, 0], [1, 1]]), axis=1)", (A(2, 3),))],
    np.take_along_axis: [("np.take_along_axis(x, np.argsort(x, axis=1), axis=1)", (A(2, 3),)),
                         ("np.take_along_axis(x, np.array([[0, 0], [1, 0]]), 0)", (A(2, 2),))],
    np.split: [("a, b = np.split(x, 2)\na * b", (A(4),)), ("np.split(x, [1], axis=1)[1]", (A(2, 3),))],
    np.array_split: [("np.array_split(x, 2)[0] * 2.0 + np.sum(np.array_split(x, 2)[1])", (A(5),))],
    np.hsplit: [("a, b = np.hsplit(x, 2)\na * b", (A(3, 2),))], np.vsplit: [("np.vsplit(x, 2)[1]", (A(4, 2),))],
    np.dsplit: [("a, b = np.dsplit(x, 2)\na - b * b", (A(2, 1, 2),))],
    np.append: [("np.append(x, y)", (A(2, 2), A(3))), ("append(x, y)", (A(2, 2), A(3))),
                ("append(x, y, axis=0)", (A(2, 2), A(1, 2)))],         # append: np.append under another name
    np.column_stack: [("np.column_stack([x, y])", (A(3), A(3, 2)))],
    np.dstack: [("np.dstack([x, y])", (A(2, 3), A(2, 3, 2)))],
    np.kron: [(A(2, 2), A(3, 2)), (A(3), A(2)), (A(2, 2), A(2))],
    np.cross: [(A(3), A(3)), (A(4, 3), A(3))],
    np.select: [("np.select([x > 0, x < -1.0], [x * y, y], x)", (A(4), A(4)))],
    np.add.reduce: [("np.add.reduce(x)", (A(2, 3),)), ("np.add.reduce(x, axis=1, keepdims=True)", (A(2, 3),))],
    np.multiply.reduce: [("np.multiply.reduce(x, axis=1)", (A(2, 3),))],
    np.maximum.reduce: [("np.maximum.reduce(x)", (A(3, 2),))], np.minimum.reduce: [("np.minimum.reduce(x, 1)", (A(3, 2),))],
    np.logaddexp.reduce: [("np.logaddexp.reduce(x)", (A(4),)), ("np.logaddexp.reduce(x, axis=1)", (A(2, 3),))],
    np.add.accumulate: [("np.add.accumulate(x)", (A(3, 2),))],
    np.multiply.accumulate: [("np.multiply.accumulate(x, axis=1)", (A(2, 3),))],
    np.bincount: [("np.bincount(np.array([0, 2, 2, 1, 2]), x)", (A(5),)),
                  ("np.bincount(np.array([1, 1, 0]), weights=x, minlength=4)", (A(3),))],
    s2s.runtime.item: [("x[1:2].item() * x[0]", (A(3),)), ("(x * 2.0).item()", (A(1, 1),))],
    np.convolve: [(A(4), A(2)), ("np.convolve(x, y, 'same')", (A(5), A(3))), ("np.convolve(x, y, mode='valid')", (A(5), A(3)))],
    np.logaddexp2.reduce: [("np.logaddexp2.reduce(x)", (A(4),)), ("np.logaddexp2.reduce(x, axis=1, keepdims=True)", (A(2, 3),))],
    np.logaddexp.accumulate: [("np.logaddexp.accumulate(x)", (A(4),)), ("np.logaddexp.accumulate(x, axis=1)", (A(2, 3),))],
    np.maximum.accumulate: [("np.maximum.accumulate(x)", (A(5),)), ("np.maximum.accumulate(x, axis=1)", (A(2, 4),))],
    np.minimum.accumulate: [("np.minimum.accumulate(x, 0)", (A(4, 2),))],
    np.gradient: [(A(5),), ("np.gradient(x, axis=1, edge_order=2)", (A(2, 4),)), ("np.gradient(x, axis=0)", (A(3, 2),)),
                  ("np.gradient(x, 0.5)", (A(5),)), ("np.gradient(x, 0.3, axis=0, edge_order=2)", (A(4, 2),)),
                  ("np.gradient(x, np.array([0.0, 0.4, 1.0, 1.3, 2.2]), edge_order=2)", (A(5),)),
                  ("np.gradient(x, np.array([0.0, 0.5, 0.7, 1.5]), axis=1)", (A(2, 4),))],
    builtins.sorted: [("ys = sorted([x, y, x * y])\nys[0] + 2.0 * ys[1] + 3.0 * ys[2]", (1.5, -0.5)),
                      ("ys = sorted([x, y, 0.3], reverse=True)\nys[0] * ys[2]", (1.5, -0.5))],
    np.fft.fftshift: [(A(5),), ("np.fft.fftshift(x, axes=1)", (A(2, 3),))], np.fft.ifftshift: [(A(2, 3),)],
    # the helpers of batched code (s2s.vmap: rules/batching.py), differentiated in grad(vmap(f))
    s2s.rules.batching._batch_lift: [("from s2s.rules.batching import _batch_lift\n_batch_lift(x, 2)", (A(3, 2),))],
    s2s.rules.batching._batch_repeat: [("from s2s.rules.batching import _batch_repeat\n_batch_repeat(x, 2)", (A(3),))],
    s2s.rules.batching._unbroadcast_rows: [("from s2s.rules.batching import _unbroadcast_rows\n"
                                            "_unbroadcast_rows(x, (1, 4))", (A(2, 3, 4),))],
    # an adjoint's sum to its argument's shape, differentiated in reverse mode (an autograd vjp rule transposed)
    s2s.runtime._unbroadcast: [("from s2s.runtime import _unbroadcast\n_unbroadcast(x, np.zeros((2, 1, 3)))",
                                (A(4, 2, 5, 3),)),
                               ("from s2s.runtime import _unbroadcast\n_unbroadcast(x * y, 0.0)", (A(2, 3), 1.5)),
                               ("from s2s.runtime import _unbroadcast\n"
                                "_unbroadcast(x, np.zeros((2, 1)), np.zeros((2, 3)))", (A(3),))],
}

if scipy is not None:
    sp, st = scipy.special, scipy.stats
    DOMAINS.update({
        sp.expit: [(A(2, 3),), (0.3,)], sp.logit: [(U(3) * 0.5 + 0.5,)],
        sp.gamma: [(P(3) + 0.5,), (-0.5,)], sp.gammaln: [(P(3),), (A(3) * 3.0 + 7.0,)],
        sp.loggamma: [(P(3),)],
        sp.log_wright_bessel: [("scipy.special.log_wright_bessel(0.5, 1.5, x)", (P(3),))],
        sp.wright_bessel: [("scipy.special.wright_bessel(0.5, 1.5, x)", (P(3),))],
        sp.psi: [(P(3),)], sp.polygamma: [("scipy.special.polygamma(1, x)", (P(3),)),
                                          ("scipy.special.polygamma(2, x)", (P(2),))],
        sp.rgamma: [(P(3),)], sp.multigammaln: [("scipy.special.multigammaln(x, 3)", (P(2) + 2.0,)),
                                                 ("scipy.special.multigammaln(x, 1)", (2.5,))],
        sp.beta: [(P(3), P(3))], sp.betaln: [(P(3), P(3))],
        sp.gammainc: [("scipy.special.gammainc(2.5, x)", (P(3),))],
        sp.gammaincc: [("scipy.special.gammaincc(1.5, x)", (P(3),))],
        sp.betainc: [("scipy.special.betainc(2.0, 3.0, x)", (U(3) * 0.5 + 0.5,))],
        sp.erf: [(A(3),)], sp.erfc: [(A(3),)], sp.erfinv: [(U(3),)], sp.erfcinv: [(U(3) + 1.0,)],
        sp.log_expit: [(A(3),), (np.array([-30.0, 25.0]),)],
        sp.ndtr: [(A(3),)], sp.log_ndtr: [(A(3),), (np.array([-10.0, 8.0]),)], sp.ndtri: [(U(3) * 0.5 + 0.5,)],
        sp.xlogy: [(A(3), P(3)), (0.0, P(2))], sp.xlog1py: [(A(3), P(3))],
        sp.boxcox: [(P(3) + 0.2, np.array([0.5, -1.3, 2.0])), (P(3) + 0.2, 0.0), (1.7, 1e-5), (0.4, -2e-4)],
        sp.boxcox1p: [(P(3), np.array([0.5, -1.3, 2.0])), (A(3) * 0.3, 0.0), (0.7, 3e-6)],
        sp.entr: [(P(3),)], sp.rel_entr: [(P(3), P(3))], sp.kl_div: [(P(3), P(3))],
        sp.huber: [(1.2, A(3) * 2.0), (P(3), np.array([0.3, -2.5, 4.0]))],
        sp.pseudo_huber: [(1.2, A(3) * 2.0), (P(3), A(3))],
        sp.i0: [(A(3),)], sp.i1: [(A(3),), (0.0,)], sp.iv: [("scipy.special.iv(1.5, x)", (P(3),))],
        sp.ive: [("scipy.special.ive(2, x)", (A(3),))], sp.j0: [(A(3),)], sp.j1: [(A(3),)],
        sp.jv: [("scipy.special.jv(2.5, x)", (P(3),))], sp.y0: [(P(3),)], sp.y1: [(P(3),)],
        sp.yn: [("scipy.special.yn(2, x)", (P(3) + 0.5,))], sp.yv: [("scipy.special.yv(1.5, x)", (P(3) + 0.5,))],
        sp.zeta: [("scipy.special.zeta(3.0, x)", (P(3),))],
        sp.logsumexp: [(A(2, 3),), ("scipy.special.logsumexp(x, axis=1)", (A(2, 3),)),
                       ("scipy.special.logsumexp(x, axis=0, keepdims=True)", (A(3, 2),)),
                       ("scipy.special.logsumexp(x, 1, y)", (A(2, 3), P(3))),
                       ("scipy.special.logsumexp(x, None, y, False, True)[0]", (A(3), P(3))),
                       ("scipy.special.logsumexp(x, axis=-1)", (A(2, 1),)), ("scipy.special.logsumexp(x)", (1.5,))],
        sp.softmax: [(A(4),), ("scipy.special.softmax(x, axis=1)", (A(2, 3),)),
                     ("scipy.special.softmax(x, axis=0)", (A(1, 3),))],
        sp.log_softmax: [(A(4),), ("scipy.special.log_softmax(x, axis=0)", (A(2, 3),))],
        # scipy.stats, called on the distribution objects
        st.norm.logpdf: [("scipy.stats.norm.logpdf(x, y, z)", (A(3), A(3), P(3))), ("scipy.stats.norm.logpdf(x)", (A(2, 2),))],
        st.norm.pdf: [("scipy.stats.norm.pdf(x, y, z)", (A(3), 0.3, 1.5))],
        st.norm.cdf: [("scipy.stats.norm.cdf(x, y, z)", (A(3), A(3), P(3)))],
        st.norm.logcdf: [("scipy.stats.norm.logcdf(x, y, z)", (A(3), 0.2, P(3)))],
        st.norm.sf: [("scipy.stats.norm.sf(x, y, z)", (A(3), 0.2, 1.3))],
        st.norm.logsf: [("scipy.stats.norm.logsf(x, y, z)", (A(3), A(3), P(3)))],
        st.t.logpdf: [("scipy.stats.t.logpdf(x, y, z, 1.5)", (A(3), P(3) + 1.0, 0.3)),
                      ("scipy.stats.t.logpdf(x, 4.0, 0.0, y)", (A(3), P(3)))],
        st.t.pdf: [("scipy.stats.t.pdf(x, y)", (A(3), P(3) + 1.0))],
        st.t.cdf: [("scipy.stats.t.cdf(x, 3.0, y, z)", (A(3), 0.2, P(3)))],
        st.t.logcdf: [("scipy.stats.t.logcdf(x, 5.0, y)", (A(3), 0.1))],
        st.beta.logpdf: [("scipy.stats.beta.logpdf(x, y, z)", (U(3) * 0.4 + 0.5, P(3) + 1.0, P(3) + 1.0)),
                         ("scipy.stats.beta.logpdf(x, 2.0, 3.0, y, z)", (P(3), -0.5, 3.0))],
        st.beta.pdf: [("scipy.stats.beta.pdf(x, y, z)", (U(3) * 0.4 + 0.5, P(3) + 1.0, 2.5))],
        st.beta.cdf: [("scipy.stats.beta.cdf(x, 2.0, 3.0)", (U(3) * 0.4 + 0.5,))],
        st.gamma.logpdf: [("scipy.stats.gamma.logpdf(x, y, 0.0, z)", (P(3), P(3) + 1.0, P(3)))],
        st.gamma.pdf: [("scipy.stats.gamma.pdf(x, y)", (P(3), P(3) + 1.0))],
        st.gamma.cdf: [("scipy.stats.gamma.cdf(x, 2.0, y, z)", (P(3) + 1.0, 0.2, 1.5))],
        st.chi2.logpdf: [("scipy.stats.chi2.logpdf(x, y, 0.0, z)", (P(3), P(3) + 2.0, P(3)))],
        st.chi2.pdf: [("scipy.stats.chi2.pdf(x, y)", (P(3), 3.5))], st.chi2.cdf: [("scipy.stats.chi2.cdf(x, 3.0)", (P(3),))],
        st.expon.logpdf: [("scipy.stats.expon.logpdf(x, scale=y)", (P(3), 1.5)),
                          ("scipy.stats.expon.logpdf(x, y, z)", (S(3) + 2.5, -0.5, P(3)))],
        st.expon.pdf: [("scipy.stats.expon.pdf(x, loc=y, scale=z)", (P(3) + 1.0, 0.2, 1.5))],
        st.expon.cdf: [("scipy.stats.expon.cdf(x, y, scale=z)", (P(3) + 1.0, 0.2, 1.5))],
        st.expon.sf: [("scipy.stats.expon.sf(x, scale=y)", (P(3), 0.7))],
        st.poisson.logpmf: [("scipy.stats.poisson.logpmf(np.array([0, 2, 5]), x)", (P(3),))],
        st.poisson.pmf: [("scipy.stats.poisson.pmf(3, x)", (P(2) + 1.0,))],
        st.poisson.cdf: [("scipy.stats.poisson.cdf(np.array([1.0, 4.0]), x)", (P(2) + 1.0,))],
        st.dirichlet.logpdf: [("scipy.stats.dirichlet.logpdf(scipy.special.softmax(x), y)", (A(3), P(3) + 0.5)),
                              ("scipy.stats.dirichlet.logpdf(scipy.special.softmax(x, axis=0), y)", (A(3, 2), P(3)))],
        st.dirichlet.pdf: [("scipy.stats.dirichlet.pdf(scipy.special.softmax(x), y)", (A(3), P(3) + 0.5))],
        st.multivariate_normal.logpdf: [("scipy.stats.multivariate_normal.logpdf(x, y, z @ z.T + np.eye(2))",
                                         (A(2), A(2), A(2, 2))),
                                        ("scipy.stats.multivariate_normal.logpdf(x, y, z @ z.T + np.eye(2))",
                                         (A(3, 2), A(2), A(2, 2)))],
        st.multivariate_normal.pdf: [("scipy.stats.multivariate_normal.pdf(x, y, z @ z.T + np.eye(2))",
                                      (A(2), A(2), A(2, 2)))],
        # scipy.linalg and scipy.signal
        scipy.linalg.solve_triangular: [("scipy.linalg.solve_triangular(x, y)", (A(3, 3) + 3 * np.eye(3), A(3))),
                                        ("scipy.linalg.solve_triangular(x, y, 1, True)", (A(3, 3) + 3 * np.eye(3), A(3, 2))),
                                        ("scipy.linalg.solve_triangular(x, y, lower=True, unit_diagonal=True)",
                                         (A(3, 3), A(3)))],
        scipy.linalg.cho_factor: [("scipy.linalg.cho_factor(x @ x.T + np.eye(3))[0]", (A(3, 3),)),
                                  ("scipy.linalg.cho_factor(x @ x.T + np.eye(2), True)[0]", (A(2, 2),))],
        scipy.linalg.cho_solve: [("scipy.linalg.cho_solve(scipy.linalg.cho_factor(x @ x.T + np.eye(3)), y)",
                                  (A(3, 3), A(3))),
                                 ("scipy.linalg.cho_solve((np.tril(x) + 3 * np.eye(3), True), y)", (A(3, 3), A(3, 2)))],
        scipy.linalg.solve_banded: [("scipy.linalg.solve_banded((1, 2), x, y)", (A(4, 5) + np.array([[0], [0], [4.0], [0]]), A(5))),
                                    ("scipy.linalg.solve_banded((0, 1), x, y)", (A(2, 3) + np.array([[0], [3.0]]), A(3, 2)))],
        scipy.linalg.expm: [(A(3, 3) * 0.5,), (A(1, 1),)],
        scipy.linalg.sqrtm: [("scipy.linalg.sqrtm(x @ x.T + np.eye(3))", (A(3, 3),))],
        scipy.linalg.solve_sylvester: [(A(3, 3) + 3 * np.eye(3), A(2, 2) + 3 * np.eye(2), A(3, 2))],
        scipy.signal.convolve: [(A(4), A(2)), ("scipy.signal.convolve(x, y, 'valid')", (A(3, 4), A(2, 2))),
                                ("scipy.signal.convolve(x, y, 'same')", (A(5), A(4)))],
        scipy.signal.correlate: [(A(4), A(3)), ("scipy.signal.correlate(x, y, 'same')", (A(3, 3), A(2, 2)))],
        # scipy.integrate: the adjoint ODE and forward sensitivities (more in tests/rules/test_odeint.py)
        scipy.integrate.odeint: [("scipy.integrate.odeint(decay, x, np.array([0.0, 0.5, 1.2]), args=(y,), rtol=1e-10, "
                                  "atol=1e-10)", (A(2), 0.7))],
        st.multivariate_normal.entropy: [("scipy.stats.multivariate_normal.entropy(y, x @ x.T + np.eye(3))", (A(3, 3), A(3)))],
    })

_SYNTAX = {
    operator.add: "{0} + {1}", operator.sub: "{0} - {1}", operator.mul: "{0} * {1}",
    operator.truediv: "{0} / {1}", operator.pow: "{0} ** {1}", operator.mod: "{0} % {1}",
    operator.neg: "-{0}", operator.pos: "+{0}", operator.abs: "operator.abs({0})", operator.matmul: "{0} @ {1}",
}

NAMES = ["x", "y", "z"]


def _spelled(prim):
    """How a test calls prim: scipy.special's ufuncs by their module, others as the IR names them."""
    name = getattr(prim, "__name__", "")
    if scipy is not None and getattr(scipy.special, name, None) is prim:
        return f"scipy.special.{name}"
    return prim_name(prim)


def _function_for(prim, case, make_fn, dtype=np.float64):
    """A scalar function of the case's arguments: the call (or the expression), weighted and summed."""
    if isinstance(case[0], str) and case[0] in _FRONT_END:
        pytest.xfail("the front end refuses `np.append` (\"variable 'np' may be used before it is assigned\")")
    expression, point = case if isinstance(case[0], str) else (None, case)
    args = NAMES[:len(point)]
    if expression is None:
        expression = _SYNTAX[prim].format(*args) if prim in _SYNTAX else f"{_spelled(prim)}({', '.join(args)})"
    *statements, expression = expression.split("\n")
    prelude = "".join(f"    {line}\n" for line in statements)
    probe = make_fn(f"def probe({', '.join(args)}):\n{prelude}    return {expression}\n",
                    namespace={"scipy": scipy, "append": np.append, "NANS": NANS, "decay": decay,
                               "newton_sqrt": newton_sqrt, "s2s": s2s, "cmath": cmath, "statistics": statistics})
    weights = np.asarray(_rng.uniform(0.5, 1.5, size=np.shape(probe(*point))), dtype=dtype)
    body = f"np.sum(({expression}) * WEIGHTS)" if weights.ndim else f"({expression}) * WEIGHTS"
    return make_fn(f"def f({', '.join(args)}):\n{prelude}    return {body}\n",
                   namespace={"WEIGHTS": float(weights) if not weights.ndim else weights, "scipy": scipy, "NANS": NANS,
                              "decay": decay, "newton_sqrt": newton_sqrt, "s2s": s2s,
                              "append": np.append, "cmath": cmath, "statistics": statistics}), point


CASES = [(prim, case) for prim, cases in DOMAINS.items() for case in cases]
# against central differences: in the default run each function's first case and every case written as an
# expression (its other call forms and keywords); the other points of a plain call (more points of its domain, its
# edges) with -m slow
FIRST_ORDER = [pytest.param(prim, case, marks=() if k == 0 or isinstance(case[0], str) else (pytest.mark.slow,))
               for prim, cases in DOMAINS.items() for k, case in enumerate(cases)]
# second order and float32: the first case of each function in the default run, every case with -m slow
SAMPLED = [pytest.param(prim, case, marks=() if k == 0 else (pytest.mark.slow,), id=None)
           for prim, cases in DOMAINS.items() for k, case in enumerate(cases)]


def _case_id(prim, case):
    if isinstance(case[0], str):
        return case[0]
    return prim_name(prim) + "(" + ", ".join(f"{np.shape(a)}" if np.ndim(a) else repr(a) for a in case) + ")"


@pytest.mark.parametrize("prim, case", FIRST_ORDER, ids=[_case_id(p, c) for p, c in CASES])
def test_rule_against_central_differences(prim, case, make_fn):
    """Each function in every mode, each argument alone and together. A representative subset of the table in the
    default run (every function, every call form and keyword once in each mode: FIRST_ORDER), every case with
    -m slow."""
    f, point = _function_for(prim, case, make_fn)
    s2s.check_grad(f, *point, wrt=tuple(range(len(point))), rtol=1e-5, atol=1e-7)
    for i in range(len(point) if len(point) > 1 else 0):     # each argument alone: the others are constants
        s2s.check_grad(f, *point, wrt=i, rtol=1e-5, atol=1e-7)
    wrt = tuple(range(len(point)))
    auto = s2s.grad(f, wrt=wrt)(*point)     # mode="auto" (check_grad's): along one float, forward mode seeded with 1.0
    one_float = len(point) == 1 and np.ndim(point[0]) == 0
    reverse = s2s.grad(f, wrt=wrt, mode="reverse")(*point) if one_float else auto      # else auto is reverse mode
    forward = s2s.grad(f, wrt=wrt, mode="forward")(*point)      # the same rule in forward mode
    # (odeint's two modes solve different ODEs, the adjoint's and the sensitivities', each to rtol=1e-10)
    rel = 1e-7 if "odeint" in _case_id(prim, case) else 1e-9
    for r, fw, a in zip(reverse, forward, auto):
        assert np.asarray(fw) == pytest.approx(np.asarray(r), rel=rel, abs=1e-12)
        assert np.asarray(a) == pytest.approx(np.asarray(r), rel=rel, abs=1e-12)


# rules checked with complex points by their own tests (tests/rules/test_complex.py, tests/rules/test_fft.py)
_COMPLEX_RULE_MODULES = ("s2s.rules.fft", "s2s.rules.complex_numbers")
_COMPLEX_FUNCTIONS = {np.linalg.eig, np.linalg.eigvals, np.vdot} | {getattr(np.fft, n) for n in (
    "fft", "ifft", "fft2", "ifft2", "fftn", "ifftn", "rfft", "irfft", "rfft2", "irfft2", "rfftn", "irfftn")}


# rules of a rounding, which central differences with the table's step cannot follow: checked by their own tests
_ROUNDING = {np.float32: "tests/rules/test_builtins.py"}


def test_every_rule_has_a_domain():
    from s2s.rules.registry import find_adjoint
    missing = [prim_name(p) for p in registered_adjoints(builtin_only=True) if p not in DOMAINS
               and p not in _COMPLEX_FUNCTIONS and find_adjoint(p).__module__ not in _COMPLEX_RULE_MODULES
               and p not in _ROUNDING]
    assert not missing, f"rules without a line in DOMAINS: {missing}"


def _direction(x):
    return _rng.uniform(-1.0, 1.0, size=np.shape(x)) if np.ndim(x) else float(_rng.uniform(-1.0, 1.0))


def _shifted(point, i, step):
    return tuple(a + step if j == i else a for j, a in enumerate(point))


# refused in second order when the derivative is made, with the reason (each named in the README)
_NO_SECOND_ORDER: dict = {}


@pytest.mark.parametrize("prim, case", SAMPLED, ids=[_case_id(p, c) for p, c in CASES])
def test_rule_second_order(prim, case, make_fn):
    """Forward over reverse (the Hessian along a random direction) against central differences of the gradient."""
    f, point = _function_for(prim, case, make_fn)
    if prim in _NO_SECOND_ORDER:
        with pytest.raises(s2s.NoDerivativeRule, match=_NO_SECOND_ORDER[prim]):
            s2s.hvp(f, wrt=0)(*point, _direction(point[0]))
        return
    for i in range(len(point)):
        v = _direction(point[i])
        product = s2s.hvp(f, wrt=i)(*point, v)
        if product is None:                 # a zero Hessian (hvp gives None there for now)
            product = np.zeros(np.shape(point[i]))
        smallest = np.min(np.abs(point[i])) if np.size(point[i]) else 1.0
        h = 1e-5 * min(1.0, max(smallest, 1e-3))       # a step below the scale of the point
        gradient = s2s.grad(f, wrt=i)
        expected = (np.asarray(gradient(*_shifted(point, i, h * v))) - np.asarray(gradient(*_shifted(point, i, -h * v)))) / (2 * h)
        assert np.asarray(product) == pytest.approx(expected, rel=1e-4, abs=1e-6), f"argument {i}"


# float32 lost outside the rules (reported to the owner of the file named)
_FRONT_END = {"np.append(x, y)"}      # s2s/desugar reads np.append as list.append

_FLOAT32_ELSEWHERE = {
    "np.clip(x, y, None)": "s2s/runtime.py: _shaped_like takes the dtype of None as float64",
    "np.r_[x, y, 2.0]": "rules/sequences.py: the adjoint of np.r_ comes back float64",
    "scipy.stats.dirichlet.pdf(scipy.special.softmax(x), y)": "SciPy refuses a float32 point (its sum is 1 - 6e-8)",
    "scipy.stats.dirichlet.logpdf(scipy.special.softmax(x), y)": "SciPy refuses a float32 point (its sum is 1 - 6e-8)",
    "scipy.stats.dirichlet.logpdf(scipy.special.softmax(x, axis=0), y)": "SciPy refuses a float32 point",
}


def _float32(a):
    return a.astype(np.float32) if isinstance(a, np.ndarray) and a.dtype == np.float64 else a


@pytest.mark.parametrize("prim, case", SAMPLED, ids=[_case_id(p, c) for p, c in CASES])
def test_rule_keeps_float32(prim, case, make_fn):
    """Every rule gives a float32 adjoint for a float32 array argument, in both modes."""
    if isinstance(case[0], str) and case[0] in _FLOAT32_ELSEWHERE:
        pytest.xfail(_FLOAT32_ELSEWHERE[case[0]])
    f, point = _function_for(prim, case, make_fn, np.float32)
    point = tuple(_float32(a) for a in point)
    arrays = tuple(i for i, a in enumerate(point) if isinstance(a, np.ndarray) and a.dtype == np.float32)
    if not arrays:
        pytest.skip("no float64 array argument to turn into float32")
    if np.asarray(f(*point)).dtype != np.float32:
        pytest.skip("the expression itself promotes float32 to float64 (a float64 constant)")
    for mode in ("reverse", "forward", "auto"):
        gradients = s2s.grad(f, wrt=arrays, mode=mode)(*point)
        for i, g in zip(arrays, gradients):
            assert np.asarray(g).dtype == np.float32, f"argument {i} in {mode} mode"


# ---- issue 14's lists, name by name: each is in DOMAINS (so checked in both modes, to second order, in float32)
ISSUE_14_NUMPY = (
    "angle append array_split atleast_1d atleast_2d atleast_3d column_stack cross diagonal diff dsplit fliplr flipud "
    "gradient hsplit imag kron nan_to_num pad partition real real_if_close roll rollaxis rot90 select sinc sort split "
    "tensordot tril triu vsplit take take_along_axis cumprod median percentile quantile nanquantile conjugate deg2rad "
    "degrees logaddexp2 rad2deg radians remainder mod prod dot einsum trace inner fft.fftshift fft.ifftshift "
    "linalg.cholesky linalg.eigh linalg.eigvalsh linalg.svd linalg.pinv linalg.slogdet linalg.qr linalg.lstsq "
    "linalg.matrix_power linalg.norm linalg.det log2 log10 logaddexp.reduce add.reduce multiply.reduce maximum.reduce "
    "minimum.reduce add.accumulate multiply.accumulate logaddexp2.reduce logaddexp.accumulate maximum.accumulate "
    "minimum.accumulate").split()
ISSUE_14_SCIPY = (
    "special.beta special.betainc special.betaln special.erf special.erfc special.erfinv special.erfcinv "
    "special.expit special.logit special.gamma special.gammaln special.rgamma special.digamma special.psi "
    "special.polygamma special.multigammaln special.gammainc special.gammaincc special.logsumexp special.softmax "
    "special.log_softmax special.xlogy special.xlog1py special.i0 special.i1 special.iv special.ive special.j0 "
    "special.j1 special.jv special.y0 special.y1 special.yn special.log_ndtr special.ndtr special.ndtri "
    "stats.norm.pdf stats.norm.logpdf stats.norm.cdf stats.norm.logcdf stats.norm.sf stats.norm.logsf stats.t.pdf "
    "stats.t.logpdf stats.t.cdf stats.t.logcdf stats.beta.pdf stats.beta.logpdf stats.beta.cdf stats.gamma.pdf "
    "stats.gamma.logpdf stats.gamma.cdf stats.chi2.pdf stats.chi2.logpdf stats.chi2.cdf stats.poisson.pmf "
    "stats.poisson.logpmf stats.poisson.cdf stats.dirichlet.pdf stats.dirichlet.logpdf stats.multivariate_normal.pdf "
    "stats.multivariate_normal.logpdf stats.multivariate_normal.entropy linalg.sqrtm linalg.solve_triangular "
    "linalg.cho_solve linalg.cho_factor linalg.solve_sylvester linalg.solve_banded linalg.expm signal.convolve "
    "integrate.odeint").split()
# the complex engineer's (tests/rules/test_complex.py, tests/rules/test_fft.py), and the ones that have no derivative
ISSUE_14_ELSEWHERE = {"fft.fft", "linalg.eig", "special.gammasgn"}


def _named(module, dotted):
    for part in dotted.split("."):
        module = getattr(module, part)
    return module


def test_every_function_of_issue_14_is_in_the_table():
    names = [("numpy", n, np) for n in ISSUE_14_NUMPY]
    if scipy is not None:
        names += [("scipy", n, scipy) for n in ISSUE_14_SCIPY]
    missing = [f"{root}.{n}" for root, n, module in names if _named(module, n) not in DOMAINS]
    assert not missing, f"functions of issue 14 without a line in DOMAINS: {missing}"
    from s2s.rules.registry import find_adjoint, find_tangent, is_elementwise, linear_argnums
    no_tangent = [f"{root}.{n}" for root, n, module in names
                  if find_tangent(_named(module, n)) is None and linear_argnums(_named(module, n)) is None
                  and not is_elementwise(_named(module, n))]
    assert not no_tangent, f"without a tangent rule (forward mode): {no_tangent}"
    assert all(find_adjoint(_named(module, n)) is not None for _, n, module in names)


@pytest.mark.parametrize("expression, args", [
    ("np.sum(np.dot(x, y))", (A(2, 3, 4), A(5, 4, 2))),
    ("np.sum(np.einsum('...ij,...j->...i', x, y))", (A(2, 3, 4), A(4))),
    ("np.einsum(x, [0, 1], y, [1, 2], z, [2, 0])", (A(2, 3), A(3, 2), A(2, 2))),
    ("sum(sorted([x, y, x * y]))", (1.5, -0.5)),
    ("np.sum(np.logaddexp.reduce(x, axis=1) + np.multiply.accumulate(x, axis=1)[:, -1])", (A(3, 2),))])
def test_partly_refused_cases_of_issue_14_work_in_every_mode(expression, args, make_fn):
    """The cases the issue lists as partly refused: reverse, forward and second order against differences."""
    f, point = _function_for(np.sum, (expression, args), make_fn)
    s2s.testing.check_grads(f, point, order=2, modes=("forward", "reverse"))


def test_the_readme_feature_table_counts_each_family_from_the_registry():
    """Each `(N in `rules/x.py`)` of README.md's feature table is the number of functions those files give rules to."""
    import os
    import re
    from s2s.testing import rule_table
    readme = open(os.path.join(os.path.dirname(__file__), "..", "..", "README.md"), encoding="utf-8").read()
    table = readme.split("## What is supported", 1)[1].split("\n## ", 1)[0]
    counts: dict = {}
    for name, module, modes in rule_table():
        if modes != "nondifferentiable" and not name.startswith("s2s."):      # s2s's own helpers are not listed
            counts[module] = counts.get(module, 0) + 1
    claims = re.findall(r"\((\d+) in ((?:`rules/\w+\.py`(?: and |, )?)+)", table)
    families = {m for _, files in claims for m in re.findall(r"`rules/(\w+)\.py`", files)}
    assert {"numpy_functions", "numpy_more", "linalg", "linear_algebra", "special", "stats", "scipy_linalg",
            "integrate"} <= families
    scipy_families = {"special", "stats", "scipy_linalg", "integrate"}
    for number, files in claims:
        modules = re.findall(r"`rules/(\w+)\.py`", files)
        if scipy is None and set(modules) & scipy_families:
            continue                            # registered only when SciPy is installed
        found = sum(counts.get(f"s2s.rules.{m}", 0) for m in modules)
        assert int(number) == found, f"README says {number} in {', '.join(modules)}; the registry has {found}"
