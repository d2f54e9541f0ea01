"""Every batching rule (s2s.vmap), checked against a Python loop over the batch, in the rule table's style: one row
per primitive (a function that calls it, its arguments, in_axes). A primitive with a batching rule and no row here
fails `test_every_batching_rule_has_a_row`. Each row runs every example through the function itself and stacks the
results: the batched code must give the same numbers (random draws: the same shape and distribution)."""
import builtins
import math
import operator

import numpy as np
import pytest

import s2s
import s2s.runtime
from s2s.frontend.desugar.helpers import call_method
from s2s.rules import registry
from s2s.rules.batching import _batch_lift, _batch_repeat

_rng = np.random.default_rng(20280028)


def A(*shape):
    """Values of any sign, away from zero."""
    return _rng.uniform(0.2, 2.0, size=shape) * _rng.choice([-1.0, 1.0], size=shape)


def P(*shape):
    return _rng.uniform(0.3, 2.0, size=shape)


def U(*shape):
    return _rng.uniform(-0.8, 0.8, size=shape)


def I(high, *shape):
    return _rng.integers(0, high, size=shape)


def SPD(n, k):
    """n symmetric positive definite k x k matrices."""
    m = _rng.normal(size=(n, k, k))
    return m @ np.swapaxes(m, 1, 2) + k * np.eye(k)


N = 5       # examples per batch


# primitive -> rows of (function of one example, batched arguments, in_axes)
ROWS = {
    # Python's builtins and operators on an example's numbers
    builtins.float: [(lambda x: float(x) * 2, (I(9, N),), 0)],
    np.float64: [(lambda x: np.float64(x) + 1, (I(9, N),), 0)],
    builtins.int: [(lambda x: int(x) + 1, (A(N) * 3,), 0)],
    builtins.bool: [(lambda x: bool(x) * 1.0, (I(2, N),), 0)],
    operator.truth: [(lambda x: 1.0 if x else 0.0, (I(2, N),), 0)],
    operator.not_: [(lambda x: (not x) * 1.0, (I(2, N) == 1,), 0)],
    operator.is_: [(lambda x, y: x * 2 if y is None else x, (A(N), None), (0, None))],
    operator.is_not: [(lambda x, y: x * 2 if y is not None else x, (A(N), None), (0, None))],
    builtins.max: [(lambda x, y: max(x, y), (A(N), A(N)), 0), (lambda x: max(x, 0.5), (A(N),), 0)],
    builtins.min: [(lambda x, y: min(x, y), (A(N), A(N)), 0)],
    builtins.round: [(lambda x: round(x) + 0.0, (A(N) * 3,), 0), (lambda x: round(x, 1), (A(N),), 0)],
    builtins.len: [(lambda x: len(x) * x[0], (A(N, 3),), 0)],
    operator.getitem: [
        (lambda x: x[1] * x[-1], (A(N, 4),), 0),
        (lambda x: x[1:3].sum() + x[0, 1], (A(N, 4, 3),), 0),
        (lambda x, i: x[i], (A(N, 4), I(4, N)), 0),
        (lambda x, i: x[i], (A(4, 3), I(4, N)), (None, 0)),
        (lambda x, i, j: x[i, j], (A(N, 4, 3), I(4, N), I(3, N)), 0),
        (lambda x, i: x[i, :], (A(N, 4, 3), I(4, N)), 0),
        (lambda x, i: x[:, i], (A(N, 4, 3), I(3, N)), 0),
    ],
    s2s.runtime.setitem: [
        (lambda x, v: _written(x, 1, v), (A(N, 4), A(N)), 0),
        (lambda x, v: _written(x, 1, v), (A(4), A(N)), (None, 0)),
        (lambda x, i, v: _written(x, i, v), (A(N, 4), I(4, N), A(N)), 0),
        (lambda x, v: _written(x, slice(1, 3), v), (A(N, 4, 2), A(N, 2)), 0),
    ],
    # math: NumPy's ufunc of the same name
    math.sin: [(lambda x: math.sin(x), (A(N),), 0)],
    math.cos: [(lambda x: math.cos(x), (A(N),), 0)],
    math.tan: [(lambda x: math.tan(x), (U(N),), 0)],
    math.asin: [(lambda x: math.asin(x), (U(N),), 0)],
    math.acos: [(lambda x: math.acos(x), (U(N),), 0)],
    math.atan: [(lambda x: math.atan(x), (A(N),), 0)],
    math.atan2: [(lambda y, x: math.atan2(y, x), (A(N), A(N)), 0)],
    math.sinh: [(lambda x: math.sinh(x), (A(N),), 0)],
    math.cosh: [(lambda x: math.cosh(x), (A(N),), 0)],
    math.tanh: [(lambda x: math.tanh(x), (A(N),), 0)],
    math.exp: [(lambda x: math.exp(x), (A(N),), 0)],
    math.expm1: [(lambda x: math.expm1(x), (A(N),), 0)],
    math.log: [(lambda x: math.log(x), (P(N),), 0), (lambda x: math.log(x, 2.0), (P(N),), 0)],
    math.log1p: [(lambda x: math.log1p(x), (P(N),), 0)],
    math.log2: [(lambda x: math.log2(x), (P(N),), 0)],
    math.log10: [(lambda x: math.log10(x), (P(N),), 0)],
    math.sqrt: [(lambda x: math.sqrt(x), (P(N),), 0)],
    math.exp2: [(lambda x: math.exp2(x), (A(N),), 0)],
    math.cbrt: [(lambda x: math.cbrt(x), (A(N),), 0)],
    math.pow: [(lambda x, y: math.pow(x, y), (P(N), A(N)), 0)],
    math.hypot: [(lambda x, y: math.hypot(x, y), (A(N), A(N)), 0)],
    math.fabs: [(lambda x: math.fabs(x), (A(N),), 0)],
    math.copysign: [(lambda x, y: math.copysign(x, y), (A(N), A(N)), 0)],
    math.fmod: [(lambda x, y: math.fmod(x, y), (A(N) * 4, P(N)), 0)],
    math.floor: [(lambda x: math.floor(x) + 0.5, (A(N) * 3,), 0)],
    math.ceil: [(lambda x: math.ceil(x) + 0.5, (A(N) * 3,), 0)],
    math.trunc: [(lambda x: math.trunc(x) + 0.5, (A(N) * 3,), 0)],
    math.isnan: [(lambda x: math.isnan(x) * 1.0, (A(N),), 0)],
    math.isinf: [(lambda x: math.isinf(x) * 1.0, (A(N),), 0)],
    math.isfinite: [(lambda x: math.isfinite(x) * 1.0, (A(N),), 0)],
    # NumPy: selection, reductions (their axes past the batch axis), shapes
    np.where: [(lambda c, x, y: np.where(c, x, y), (I(2, N, 3) == 1, A(N, 3), A(N)), 0),
               (lambda c, x: np.where(c > 0, x, 0.0), (A(N), A(N, 3)), 0)],
    np.clip: [(lambda x, lo: np.clip(x, lo, 1.0), (A(N, 3), U(N)), 0)],
    np.sum: [(lambda x: np.sum(x), (A(N, 3, 2),), 0), (lambda x: np.sum(x, axis=0), (A(N, 3, 2),), 0),
             (lambda x: np.sum(x, axis=-1, keepdims=True), (A(N, 3, 2),), 0),
             (lambda x: np.sum(x, axis=(0, 1)), (A(N, 3, 2, 2),), 0)],
    np.mean: [(lambda x: np.mean(x), (A(N, 3),), 0), (lambda x: np.mean(x, axis=1), (A(N, 3, 4),), 0)],
    np.prod: [(lambda x: np.prod(x, axis=0), (A(N, 3, 2),), 0)],
    np.max: [(lambda x: np.max(x), (A(N, 3, 2),), 0), (lambda x: np.max(x, axis=1), (A(N, 3, 2),), 0)],
    np.amax: [(lambda x: np.amax(x, axis=-1), (A(N, 3, 2),), 0)],
    np.min: [(lambda x: np.min(x), (A(N, 4),), 0)],
    np.amin: [(lambda x: np.amin(x, 0), (A(N, 4, 2),), 0)],
    np.any: [(lambda x: np.any(x > 1.0) * 1.0, (A(N, 4),), 0)],
    np.all: [(lambda x: np.all(x > -1.0, axis=0) * 1.0, (A(N, 4, 2),), 0)],
    np.var: [(lambda x: np.var(x, axis=0, ddof=1), (A(N, 4, 2),), 0)],
    np.std: [(lambda x: np.std(x), (A(N, 4, 2),), 0)],
    np.argmax: [(lambda x: np.argmax(x) + 0.0, (A(N, 3, 2),), 0), (lambda x: np.argmax(x, axis=1) + 0.0, (A(N, 3, 2),), 0)],
    np.argmin: [(lambda x: np.argmin(x) + 0.0, (A(N, 3, 2),), 0)],
    np.cumsum: [(lambda x: np.cumsum(x), (A(N, 3, 2),), 0), (lambda x: np.cumsum(x, axis=1), (A(N, 3, 2),), 0)],
    np.cumprod: [(lambda x: np.cumprod(x, axis=0), (A(N, 3, 2),), 0)],
    np.trace: [(lambda x: np.trace(x), (A(N, 3, 3),), 0)],
    np.reshape: [(lambda x: np.reshape(x, (3, 2)), (A(N, 6),), 0), (lambda x: np.reshape(x, -1), (A(N, 2, 3),), 0),
                 (lambda x: x.reshape(2, 3)[1], (A(N, 6),), 0)],
    np.ravel: [(lambda x: np.ravel(x), (A(N, 2, 3),), 0)],
    np.expand_dims: [(lambda x: np.expand_dims(x, 0), (A(N, 3),), 0), (lambda x: np.expand_dims(x, -1), (A(N, 3),), 0)],
    np.squeeze: [(lambda x: np.squeeze(x), (A(N, 1, 3),), 0), (lambda x: np.squeeze(x, 0), (A(N, 1, 3),), 0)],
    np.atleast_1d: [(lambda x: np.atleast_1d(x), (A(N),), 0)],
    np.atleast_2d: [(lambda x: np.atleast_2d(x), (A(N, 3),), 0)],
    np.transpose: [(lambda x: np.transpose(x), (A(N, 2, 3),), 0), (lambda x: x.T, (A(N, 2, 3),), 0),
                   (lambda x: np.transpose(x, (1, 2, 0)), (A(N, 2, 3, 4),), 0)],
    np.swapaxes: [(lambda x: np.swapaxes(x, 0, -1), (A(N, 2, 3, 4),), 0)],
    np.moveaxis: [(lambda x: np.moveaxis(x, 0, 2), (A(N, 2, 3, 4),), 0)],
    np.broadcast_to: [(lambda x: np.broadcast_to(x, (2, 3)), (A(N, 3),), 0)],
    np.flip: [(lambda x: np.flip(x), (A(N, 2, 3),), 0), (lambda x: np.flip(x, 1), (A(N, 2, 3),), 0)],
    np.concatenate: [(lambda x, y: np.concatenate([x, y]), (A(N, 3), A(N, 2)), 0),
                     (lambda x, y: np.concatenate([x, y]), (A(N, 3), A(2)), (0, None)),
                     (lambda x, y: np.concatenate((x, y), axis=1), (A(N, 2, 3), A(N, 2, 1)), 0)],
    np.stack: [(lambda x, y: np.stack([x, y]), (A(N, 3), A(3)), (0, None)),
               (lambda x, y: np.stack([x, y], axis=-1), (A(N, 3), A(N, 3)), 0)],
    np.hstack: [(lambda x, y: np.hstack([x, y]), (A(N, 3), A(N, 2)), 0)],
    np.vstack: [(lambda x, y: np.vstack([x, y]), (A(N, 3), A(N, 3)), 0)],
    np.tile: [(lambda x: np.tile(x, 2), (A(N, 3),), 0), (lambda x: np.tile(x, (2, 1)), (A(N, 3),), 0)],
    np.repeat: [(lambda x: np.repeat(x, 2), (A(N, 3),), 0), (lambda x: np.repeat(x, 2, axis=1), (A(N, 2, 3),), 0)],
    np.array: [(lambda x, y: np.array([x, y]), (A(N), A(N)), 0), (lambda x: np.array(x) * 2, (A(N, 3),), 0)],
    np.asarray: [(lambda x, y: np.asarray([x, y, 1.0]), (A(N), A(N)), 0)],
    np.copy: [(lambda x: np.copy(x), (A(N, 3),), 0)],
    np.astype: [(lambda x: x.astype(np.float32), (A(N, 3),), 0)],
    np.zeros_like: [(lambda x: np.zeros_like(x) + x, (A(N, 3),), 0)],
    np.ones_like: [(lambda x: np.ones_like(x) * x, (A(N, 3),), 0)],
    np.full_like: [(lambda x, v: np.full_like(x, v), (A(N, 3), A(N)), 0)],
    np.diag: [(lambda x: np.diag(x), (A(N, 3, 3),), 0), (lambda x: np.diag(x), (A(N, 3),), 0)],
    # products and linear algebra: products over the batch
    np.matmul: [(lambda a, b: np.matmul(a, b), (A(N, 2, 3), A(N, 3, 4)), 0)],
    operator.matmul: [
        (lambda a, b: a @ b, (A(N, 3), A(N, 3)), 0),
        (lambda a, b: a @ b, (A(N, 3), A(N, 3, 2)), 0),
        (lambda a, b: a @ b, (A(N, 2, 3), A(N, 3)), 0),
        (lambda a, b: a @ b, (A(N, 2, 3), A(N, 4, 3, 2)), 0),
        (lambda a, b: a @ b, (A(2, 3), A(N, 3)), (None, 0)),
        (lambda a, b: a @ b, (A(3), A(N, 3)), (None, 0)),
        (lambda a, b: a @ b, (A(2, 3), A(N, 3, 4)), (None, 0)),
        (lambda a, b: a @ b, (A(N, 3), A(3, 2)), (0, None)),
        (lambda a, b: a @ b, (A(N, 2, 3), A(3)), (0, None)),
        (lambda a, b: a @ b, (A(N, 3), A(4, 3, 2)), (0, None)),
    ],
    np.dot: [(lambda a, b: np.dot(a, b), (A(N, 3), A(N, 3)), 0), (lambda a, b: np.dot(a, b), (A(2, 3), A(N, 3)), (None, 0)),
             (lambda a, b: np.dot(a, b), (A(N, 2, 3), A(N, 3, 4)), 0), (lambda a, b: np.dot(a, b), (A(N), A(N, 3)), 0),
             (lambda a, b: np.dot(a, b), (A(3), A(N, 3, 2)), (None, 0))],
    np.outer: [(lambda a, b: np.outer(a, b), (A(N, 3), A(N, 2)), 0), (lambda a, b: np.outer(a, b), (A(3), A(N, 2)), (None, 0)),
               (lambda a, b: np.outer(a, b), (A(N, 2, 2), A(N, 2)), 0)],
    np.inner: [(lambda a, b: np.inner(a, b), (A(N, 3), A(N, 3)), 0), (lambda a, b: np.inner(a, b), (A(3), A(N, 3)), (None, 0)),
               (lambda a, b: np.inner(a, b), (A(N, 2, 3), A(N, 4, 3)), 0)],
    np.einsum: [(lambda a, b: np.einsum("ij,j->i", a, b), (A(N, 2, 3), A(N, 3)), 0),
                (lambda a, b: np.einsum("ij,jk", a, b), (A(2, 3), A(N, 3, 4)), (None, 0)),
                (lambda a: np.einsum("...i->...", a), (A(N, 2, 3),), 0),
                (lambda a, b: np.einsum(a, [0, 1], b, [1]), (A(N, 2, 3), A(N, 3)), 0)],
    np.linalg.inv: [(lambda a: np.linalg.inv(a), (SPD(N, 3),), 0)],
    np.linalg.det: [(lambda a: np.linalg.det(a), (SPD(N, 3),), 0)],
    np.linalg.solve: [(lambda a, b: np.linalg.solve(a, b), (SPD(N, 3), A(N, 3)), 0),
                      (lambda a, b: np.linalg.solve(a, b), (SPD(1, 3)[0], A(N, 3)), (None, 0)),
                      (lambda a, b: np.linalg.solve(a, b), (SPD(N, 3), A(3)), (0, None)),
                      (lambda a, b: np.linalg.solve(a, b), (SPD(N, 3), A(N, 3, 2)), 0)],
    # the helpers derivative code calls (a per-example gradient)
    s2s.runtime._seed: [(lambda x: _seeded(x), (A(N),), 0)],
    s2s.runtime.zeros_like: [(lambda x: s2s.runtime.zeros_like(x) + x, (A(N, 3),), 0)],
    s2s.runtime.stop_gradient: [(lambda x: s2s.stop_gradient(x) * 2, (A(N, 3),), 0)],
    s2s.runtime._masked: [(lambda c, g: s2s.runtime._masked(c, g), (A(N, 3), I(2, N) * 1.0), 0)],
    s2s.runtime._reduced_size: [(lambda x: s2s.runtime._reduced_size(x, 1) * x[0, 0], (A(N, 2, 3),), 0)],
    s2s.runtime._broadcast_back: [(lambda g, x: s2s.runtime._broadcast_back(g, x, 1, False), (A(N, 2), A(N, 2, 3)), 0),
                                  (lambda g, x: s2s.runtime._broadcast_back(g, x), (A(N), A(N, 2, 3)), 0)],
    s2s.runtime._unbroadcast: [(lambda g, x: s2s.runtime._unbroadcast(g, x), (A(N, 2, 3), A(3)), (0, None)),
                               (lambda g, x: s2s.runtime._unbroadcast(g, x), (A(N, 2, 3), A(N, 1, 3)), 0)],
    s2s.runtime._fill: [(lambda g, x: s2s.runtime._fill(g, x), (A(N), A(2, 3)), (0, None)),
                        (lambda g, x: s2s.runtime._fill(g, x), (A(N, 2, 3), A(2, 3)), (0, None))],
    s2s.runtime._fill_tree: [(lambda g, x: s2s.runtime._fill_tree(g, x), (A(N, 2, 3), A(2, 3)), (0, None))],
    s2s.runtime._expand: [(lambda g, x: s2s.runtime._expand(g, x), (A(N), A(N, 2, 3)), 0)],
    s2s.runtime._scatter: [(lambda x, i, g: s2s.runtime._scatter(x, i, g), (A(N, 4), I(4, N), A(N)), 0),
                           (lambda x, g: s2s.runtime._scatter(x, 1, g), (A(4, 2), A(N, 2)), (None, 0)),
                           (lambda x, i, g: s2s.runtime._scatter(x, i, g), (A(4), I(4, N), A(N)), (None, 0, 0))],
    s2s.runtime._matmul_left: [(lambda g, a, b: s2s.runtime._matmul_left(g, a, b), (A(N, 2), A(N, 3), A(N, 3, 2)), 0),
                               (lambda g, a, b: s2s.runtime._matmul_left(g, a, b), (A(N, 4, 2), A(4, 3), A(3, 2)),
                                (0, None, None)),
                               (lambda g, a, b: s2s.runtime._matmul_left(g, a, b), (A(N, 4), A(N, 4, 3), A(3)),
                                (0, 0, None))],
    s2s.runtime._matmul_right: [(lambda g, a, b: s2s.runtime._matmul_right(g, a, b), (A(N, 2), A(N, 3), A(N, 3, 2)), 0),
                                (lambda g, a, b: s2s.runtime._matmul_right(g, a, b), (A(N, 4, 2), A(4, 3), A(3, 2)),
                                 (0, None, None)),
                                (lambda g, a, b: s2s.runtime._matmul_right(g, a, b), (A(N, 4), A(N, 4, 3), A(3)),
                                 (0, 0, None))],
    _batch_lift: [(lambda x: _batch_lift(x, 2), (A(N, 3, 2),), 0)],
    _batch_repeat: [(lambda x: _batch_repeat(x, 2), (A(N, 3),), 0)],
}


def _written(x, i, v):
    x = x.copy()
    x[i] = v
    return x


def _seeded(x):
    return s2s.runtime._seed(x) * x


# random draws: the batch has one draw per example, from the same distribution
DRAWS = {
    np.random.randn: lambda x: np.random.randn(3) + x,
    np.random.rand: lambda x: np.random.rand(3) + x,
    np.random.normal: lambda x: np.random.normal(0.0, 1.0, size=3) + x,
    np.random.uniform: lambda x: np.random.uniform(size=3) + x,
    np.random.standard_normal: lambda x: np.random.standard_normal(3) + x,
    np.random.random: lambda x: np.random.random(3) + x,
    np.random.random_sample: lambda x: np.random.random_sample(3) + x,
}


def _loop(f, args, in_axes):
    axes = in_axes if isinstance(in_axes, tuple) else (in_axes,) * len(args)
    n = next(np.shape(a)[ax] for a, ax in zip(args, axes) if ax is not None)
    rows = [f(*[np.take(a, i, axis=ax) if ax is not None else a for a, ax in zip(args, axes)]) for i in range(n)]
    return np.stack([np.asarray(r) for r in rows])


CASES = [pytest.param(f, args, in_axes, id=f"{s2s.ir.__module__ and prim_name}-{k}")
         for prim_name, rows in ((getattr(p, "__name__", str(p)), rows) for p, rows in ROWS.items())
         for k, (f, args, in_axes) in enumerate(rows)]


@pytest.mark.parametrize("f, args, in_axes", CASES)
def test_batching_rule_against_a_loop(f, args, in_axes):
    expected = _loop(f, args, in_axes)
    got = s2s.vmap(f, in_axes=in_axes)(*args)
    assert np.shape(got) == expected.shape
    np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-12)


def _rule_used(prim, f, args, in_axes):
    """Whether the batched code of the row calls no loop over the batch (the rule was applied)."""
    text = s2s.source(s2s.vmap(f, in_axes=in_axes), *args)
    return "Batched by a loop over the batch" not in text


@pytest.mark.parametrize("prim", [p for p in DRAWS], ids=lambda p: p.__name__)
def test_random_draws_are_independent_per_example(prim):
    f = DRAWS[prim]
    x = np.zeros((400, 3))
    out = s2s.vmap(f)(x)
    assert out.shape == (400, 3)
    assert len(np.unique(out[:, 0])) == 400                 # every example draws its own numbers
    text = s2s.source(s2s.vmap(f), x)
    assert "for " not in text.split("def ")[-1]             # one draw for the batch, not a loop
    ref = np.stack([f(np.zeros(3)) for _ in range(400)])    # the same distribution: mean and spread
    assert abs(out.mean() - ref.mean()) < 0.15 and abs(out.std() - ref.std()) < 0.15


def test_generator_draws_are_independent_per_example():
    def f(x, rng):
        return x + rng.normal(size=3) + rng.uniform(0.0, 2.0) + rng.standard_normal(2).sum()
    out = s2s.vmap(f, in_axes=(0, None))(np.zeros((300, 3)), np.random.default_rng(1))
    assert out.shape == (300, 3) and len(np.unique(out[:, 0])) == 300
    assert abs(out.mean() - 1.0) < 0.25
    text = s2s.source(s2s.vmap(f, in_axes=(0, None)), np.zeros((300, 3)), np.random.default_rng(1))
    assert "size=(300, 3)" in text and "for " not in text.split("def ")[-1]


def test_every_batching_rule_has_a_row():
    draws = registry.record(call_method).batch        # (a method call's: rng.normal(...), below)
    ruled = [rec.prim for rec in registry.records() if rec.batch is not None
             and rec.batch.__module__.startswith("s2s.rules.") and rec.batch is not draws]
    missing = [getattr(p, "__name__", repr(p)) for p in ruled
               if p not in ROWS and p not in DRAWS and p is not call_method]
    assert not missing, f"batching rules without a row in ROWS: {missing}"


@pytest.mark.parametrize("prim", [p for p in ROWS if p not in (np.diag, np.einsum)], ids=lambda p: getattr(p, "__name__", str(p)))
def test_the_rule_applies_without_a_loop(prim):
    """The first row of each primitive is batched by its rule, not by a loop over the batch."""
    f, args, in_axes = ROWS[prim][0]
    assert _rule_used(prim, f, args, in_axes)
