"""Every rule that takes axis-like keywords, over their combinations (issue 27, item 1).

np.cross's reverse rule ignored axisa/axisb/axisc/axis (44 of 54 combinations wrong; forward mode was right). The
class is a rule that reads some keywords and not others, so the table below has one row per registered function
whose rule (or definition) takes axis, axes, axisa/axisb/axisc, axis1/axis2, source/destination or keepdims, found
from the registry (`test_every_axis_rule_has_a_row` fails for a new one without a row). Each row gives the call,
its arguments, and the values each keyword takes; every combination NumPy accepts is a case.

The default run checks, per row, the combinations that move the most axes (the last few NumPy accepts) in reverse,
forward and the default mode, and one to second order; `-m slow` checks every combination in the three modes.
Each case is a weighted sum of the call's result, against central differences along a random direction, and the
three modes' gradients against each other.
"""
import inspect
import itertools

import numpy as np
import pytest

import s2s
from s2s.ir.core import prim_name
from s2s.rules import registry

scipy = pytest.importorskip("scipy")
import scipy.special  # noqa: E402

AXIS_KEYWORDS = ("axis", "axes", "axisa", "axisb", "axisc", "axis1", "axis2", "keepdims", "source", "destination")

_rng = np.random.default_rng(27)


def R(*shape):
    """Values of any sign, away from zero and without ties (sorts, extremes and medians pick distinct elements)."""
    n = int(np.prod(shape))
    values = (0.3 + 0.9 * np.arange(n) / max(n, 1)) * np.where(np.arange(n) % 3 == 1, -1.0, 1.0)
    return _rng.permutation(values).reshape(shape)


def P(*shape):
    return _rng.uniform(0.5, 2.0, size=shape)


def _ints(nd):
    return list(range(-nd, nd))


def _axis(nd, tuples=True):
    values = [None, *_ints(nd)]
    if tuples and nd >= 2:
        values += [(0, 1), (-1, 0)] + ([(0, 2), (2, 1, 0)] if nd >= 3 else [])
    return values


def _pairs(nd):
    return [(a, b) for a in _ints(nd) for b in _ints(nd) if a % nd != b % nd]


BOOL = [False, True]
X3 = (2, 3, 4)

# prim -> (the call, with {kw} for the keywords; x, y, z the arguments), the arguments, {keyword: values}
ROWS = {
    np.sum: ("np.sum(x{kw})", (R(*X3),), {"axis": _axis(3), "keepdims": BOOL}),
    np.mean: ("np.mean(x{kw})", (R(*X3),), {"axis": _axis(3), "keepdims": BOOL}),
    np.prod: ("np.prod(x{kw})", (R(*X3),), {"axis": _axis(3), "keepdims": BOOL}),
    np.max: ("np.max(x{kw})", (R(*X3),), {"axis": _axis(3), "keepdims": BOOL}),
    np.amax: ("np.amax(x{kw})", (R(*X3),), {"axis": _axis(3), "keepdims": BOOL}),
    np.min: ("np.min(x{kw})", (R(*X3),), {"axis": _axis(3), "keepdims": BOOL}),
    np.amin: ("np.amin(x{kw})", (R(*X3),), {"axis": _axis(3), "keepdims": BOOL}),
    np.var: ("np.var(x, ddof=1{kw})", (R(*X3),), {"axis": _axis(3), "keepdims": BOOL}),
    np.std: ("np.std(x{kw})", (R(*X3),), {"axis": _axis(3), "keepdims": BOOL}),
    np.ptp: ("np.ptp(x{kw})", (R(*X3),), {"axis": _axis(3), "keepdims": BOOL}),
    np.average: ("np.average(x{kw})", (R(*X3),), {"axis": _axis(3), "keepdims": BOOL}),
    np.nansum: ("np.nansum(x{kw})", (R(*X3),), {"axis": _axis(3), "keepdims": BOOL}),
    np.nanmean: ("np.nanmean(x{kw})", (R(*X3),), {"axis": _axis(3), "keepdims": BOOL}),
    np.nanmax: ("np.nanmax(x{kw})", (R(*X3),), {"axis": _axis(3), "keepdims": BOOL}),
    np.nanmin: ("np.nanmin(x{kw})", (R(*X3),), {"axis": _axis(3), "keepdims": BOOL}),
    np.median: ("np.median(x{kw})", (R(*X3),), {"axis": _axis(3), "keepdims": BOOL}),
    np.nanmedian: ("np.nanmedian(x{kw})", (R(*X3),), {"axis": _axis(3), "keepdims": BOOL}),
    np.quantile: ("np.quantile(x, 0.3{kw})", (R(*X3),), {"axis": _axis(3), "keepdims": BOOL}),
    np.nanquantile: ("np.nanquantile(x, 0.3{kw})", (R(*X3),), {"axis": _axis(3), "keepdims": BOOL}),
    np.percentile: ("np.percentile(x, [20.0, 70.0]{kw})", (R(*X3),), {"axis": _axis(3), "keepdims": BOOL}),
    np.nanpercentile: ("np.nanpercentile(x, 70.0{kw})", (R(*X3),), {"axis": _axis(3), "keepdims": BOOL}),
    np.linalg.norm: ("np.linalg.norm(x{kw})", (R(*X3),), {"axis": _axis(3), "keepdims": BOOL}),
    scipy.special.logsumexp: ("scipy.special.logsumexp(x{kw})", (R(*X3),), {"axis": _axis(3), "keepdims": BOOL}),
    np.add.reduce: ("np.add.reduce(x{kw})", (R(*X3),), {"axis": _axis(3), "keepdims": BOOL}),
    np.multiply.reduce: ("np.multiply.reduce(x{kw})", (R(*X3),), {"axis": _axis(3), "keepdims": BOOL}),
    np.maximum.reduce: ("np.maximum.reduce(x{kw})", (R(*X3),), {"axis": _axis(3), "keepdims": BOOL}),
    np.minimum.reduce: ("np.minimum.reduce(x{kw})", (R(*X3),), {"axis": _axis(3), "keepdims": BOOL}),
    np.logaddexp.reduce: ("np.logaddexp.reduce(x{kw})", (R(*X3),), {"axis": _axis(3), "keepdims": BOOL}),
    np.logaddexp2.reduce: ("np.logaddexp2.reduce(x{kw})", (R(*X3),), {"axis": _axis(3), "keepdims": BOOL}),
    np.add.accumulate: ("np.add.accumulate(x{kw})", (R(*X3),), {"axis": _ints(3)}),
    np.multiply.accumulate: ("np.multiply.accumulate(x{kw})", (R(*X3),), {"axis": _ints(3)}),
    np.maximum.accumulate: ("np.maximum.accumulate(x{kw})", (R(*X3),), {"axis": _ints(3)}),
    np.minimum.accumulate: ("np.minimum.accumulate(x{kw})", (R(*X3),), {"axis": _ints(3)}),
    np.logaddexp.accumulate: ("np.logaddexp.accumulate(x{kw})", (R(*X3),), {"axis": _ints(3)}),
    np.cumsum: ("np.cumsum(x{kw})", (R(*X3),), {"axis": _axis(3, tuples=False)}),
    np.cumprod: ("np.cumprod(x{kw})", (R(*X3),), {"axis": _axis(3, tuples=False)}),
    np.trace: ("np.trace(x, 1{kw})", (R(3, 3, 4),), {"axis1": _ints(3), "axis2": _ints(3)}),
    np.diagonal: ("np.diagonal(x, -1{kw})", (R(3, 3, 4),), {"axis1": _ints(3), "axis2": _ints(3)}),
    np.swapaxes: ("np.swapaxes(x{kw})", (R(*X3),), {"axis1": _ints(3), "axis2": _ints(3)}),
    np.transpose: ("np.transpose(x{kw})", (R(*X3),), {"axes": [None, *itertools.permutations(range(3)),
                                                               (-1, 0, 1)]}),
    np.moveaxis: ("np.moveaxis(x{kw})", (R(*X3),), {"source": [*_ints(3), (0, 1), (2, 0)],
                                                     "destination": [*_ints(3), (1, 2), (-1, 0)]}),
    np.rollaxis: ("np.rollaxis(x, {kw})", (R(*X3),), {"axis": _ints(3), "start": list(range(-3, 4))}),
    np.expand_dims: ("np.expand_dims(x{kw})", (R(2, 3),), {"axis": [*_ints(3), (0, 2), (-1, 1)]}),
    np.squeeze: ("np.squeeze(x{kw})", (R(2, 1, 3, 1),), {"axis": [None, 1, 3, -1, -3, (1, 3)]}),
    np.flip: ("np.flip(x{kw})", (R(*X3),), {"axis": _axis(3)}),
    np.rot90: ("np.rot90(x, 3{kw})", (R(*X3),), {"axes": _pairs(3)}),
    np.roll: ("np.roll(x, 2{kw})", (R(*X3),), {"axis": [None, *_ints(3)]}),
    np.sort: ("np.sort(x{kw})", (R(*X3),), {"axis": [None, *_ints(3)]}),
    np.partition: ("np.partition(x, 1{kw})", (R(*X3),), {"axis": [None, *_ints(3)]}),
    np.take: ("np.take(x, np.array([2, 0, 1, 1]){kw})", (R(*X3),), {"axis": [None, *_ints(3)]}),
    np.take_along_axis: ("np.take_along_axis(x, np.argsort(x{kw}){kw})", (R(*X3),), {"axis": _ints(3)}),
    np.split: ("np.split(x, 2{kw})[1]", (R(4, 2, 6),), {"axis": [0, 2, -1, -3]}),
    np.array_split: ("np.array_split(x, 3{kw})[2]", (R(*X3),), {"axis": _ints(3)}),
    np.append: ("np.append(x, y{kw})", (R(*X3), R(*X3)), {"axis": [None, *_ints(3)]}),
    np.concatenate: ("np.concatenate([x, y, x]{kw})", (R(*X3), R(*X3)), {"axis": [None, *_ints(3)]}),
    np.stack: ("np.stack([x, y]{kw})", (R(*X3), R(*X3)), {"axis": list(range(-4, 4))}),
    np.repeat: ("np.repeat(x, 2{kw})", (R(*X3),), {"axis": [None, *_ints(3)]}),
    np.diff: ("np.diff(x, 2{kw})", (R(3, 4, 5),), {"axis": _ints(3)}),
    np.gradient: ("np.gradient(x, 0.5{kw})", (R(3, 4, 5),), {"axis": _ints(3)}),
    np.delete: ("np.delete(x, 1{kw})", (R(*X3),), {"axis": [None, *_ints(3)]}),
    np.insert: ("np.insert(x, 1, y[0, 0, 0]{kw})", (R(*X3), R(*X3)), {"axis": [None, *_ints(3)]}),
    np.compress: ("np.compress(np.array([True, False, True]), x{kw})", (R(3, 3, 3),), {"axis": [None, *_ints(3)]}),
    np.trapezoid: ("np.trapezoid(x, dx=0.3{kw})", (R(*X3),), {"axis": _ints(3)}),
    np.tensordot: ("np.tensordot(x, y{kw})", (R(2, 3, 4), R(3, 4, 2)),
                   {"axes": [0, 1, 2, ([1, 2], [0, 1]), ([0], [2]), ([2, 1], [1, 0]), ([1], [0])]}),
    np.cross: ("np.cross(x, y{kw})", (R(3, 3), R(3, 3)),
               {"axisa": [-1, 0, 1], "axisb": [-1, 0, 1], "axisc": [-1, 0, 1], "axis": [None, 0, 1, -1]}),
    np.fft.fft: ("np.real(np.fft.fft(x{kw})) + np.imag(np.fft.fft(x{kw}))", (R(*X3),), {"axis": _ints(3)}),
    np.fft.ifft: ("np.real(np.fft.ifft(x{kw})) - np.imag(np.fft.ifft(x{kw}))", (R(*X3),), {"axis": _ints(3)}),
    np.fft.rfft: ("np.imag(np.fft.rfft(x{kw}))", (R(*X3),), {"axis": _ints(3)}),
    np.fft.irfft: ("np.fft.irfft(x{kw})", (R(*X3),), {"axis": _ints(3)}),
    np.fft.hfft: ("np.fft.hfft(x{kw})", (R(*X3),), {"axis": _ints(3)}),
    np.fft.ihfft: ("np.imag(np.fft.ihfft(x{kw}))", (R(*X3),), {"axis": _ints(3)}),
    np.fft.fft2: ("np.real(np.fft.fft2(x{kw}))", (R(*X3),), {"axes": _pairs(3)}),
    np.fft.ifft2: ("np.imag(np.fft.ifft2(x{kw}))", (R(*X3),), {"axes": _pairs(3)}),
    np.fft.fftn: ("np.real(np.fft.fftn(x{kw}))", (R(*X3),), {"axes": [None, *_pairs(3)[:3], (0,), (2, 0, 1)]}),
    np.fft.ifftn: ("np.imag(np.fft.ifftn(x{kw}))", (R(*X3),), {"axes": [None, *_pairs(3)[:3], (1,), (2, 0, 1)]}),
    np.fft.rfft2: ("np.real(np.fft.rfft2(x{kw}))", (R(*X3),), {"axes": _pairs(3)}),
    np.fft.rfftn: ("np.imag(np.fft.rfftn(x{kw}))", (R(*X3),), {"axes": [None, *_pairs(3)[:3], (1,), (2, 0, 1)]}),
    np.fft.irfft2: ("np.fft.irfft2(x{kw})", (R(*X3),), {"axes": _pairs(3)}),
    np.fft.irfftn: ("np.fft.irfftn(x{kw})", (R(*X3),), {"axes": [None, *_pairs(3)[:3], (0,), (2, 0, 1)]}),
    np.fft.fftshift: ("np.fft.fftshift(x{kw})", (R(*X3),), {"axes": _axis(3)}),
    np.fft.ifftshift: ("np.fft.ifftshift(x{kw})", (R(*X3),), {"axes": _axis(3)}),
    scipy.special.softmax: ("scipy.special.softmax(x{kw})", (R(*X3),), {"axis": _axis(3)}),
    scipy.special.log_softmax: ("scipy.special.log_softmax(x{kw})", (R(*X3),), {"axis": _axis(3)}),
    np.nanvar: ("np.nanvar(x, ddof=1{kw})", (R(*X3),), {"axis": _axis(3), "keepdims": BOOL}),     # (last: the rows above keep their points)
}
# rules whose axis-like parameter is not an axis (sum's start=, linspace's start=): no row needed
NOT_AXES = {"start"}


def _axis_rules():
    """The functions with a registered rule or definition taking an axis-like keyword (s2s's own rules/)."""
    registry._ensure_loaded()
    found = []
    for prim in registry.registered_adjoints(builtin_only=True):
        found.append((prim, registry.find_adjoint(prim)))
    found += [(prim, fn) for prim, fn in registry._DEFINITIONS.items() if not isinstance(prim, tuple)]
    out = []
    for prim, rule in found:
        try:
            names = inspect.signature(rule).parameters
        except (TypeError, ValueError):
            continue
        if any(n in AXIS_KEYWORDS for n in names) and prim is not np.logspace:     # (logspace: the axis of the
            out.append(prim)                                                     # samples, of constants)
    return out


def test_every_axis_rule_has_a_row():
    missing = [prim_name(p) for p in _axis_rules() if p not in ROWS]
    assert not missing, f"rules with axis keywords without a row in ROWS: {missing}"


def _spelled(value):
    return repr(value)


def _combinations(prim):
    """Every combination of the row's keyword values that NumPy accepts, as the keyword text of the call."""
    call, args, keywords = ROWS[prim]
    names = list(keywords)
    out = []
    for values in itertools.product(*(keywords[n] for n in names)):
        if prim is np.cross and values[3] is not None and values[:3] != (-1, -1, -1):
            continue            # axis= overrides the three others: given alone
        if prim is np.rollaxis:
            text = f"{values[0]}, {values[1]}"
        else:
            text = "".join(f", {n}={_spelled(v)}" for n, v in zip(names, values))
        source = call.format(kw=text)
        try:
            value = eval(source, {"np": np, "scipy": scipy}, dict(zip("xyz", args)))
        except Exception:
            continue
        if np.size(value) == 0 or not np.all(np.isfinite(value)):
            continue
        out.append(text)
    return out


def _function(prim, text, make_fn):
    call, args, _ = ROWS[prim]
    names = ", ".join("xyz"[:len(args)])
    expression = call.format(kw=text)
    probe = eval(expression, {"np": np, "scipy": scipy}, dict(zip("xyz", args)))
    weights = _rng.uniform(0.5, 1.5, size=np.shape(probe))
    f = make_fn(f"def f({names}):\n    return np.sum(({expression}) * WEIGHTS)\n",
                namespace={"WEIGHTS": weights, "scipy": scipy})
    return f, args


def _directional(f, args, direction, h=1e-6):
    plus = f(*[a + h * d for a, d in zip(args, direction)])
    minus = f(*[a - h * d for a, d in zip(args, direction)])
    return (plus - minus) / (2 * h)


def _check(prim, text, make_fn, modes=("reverse", "forward", "auto")):
    f, args = _function(prim, text, make_fn)
    wrt = tuple(range(len(args)))
    direction = [_rng.uniform(-1.0, 1.0, size=np.shape(a)) for a in args]
    expected = _directional(f, args, direction)
    gradients = {}
    for mode in modes:
        gradient = s2s.grad(f, wrt=wrt, mode=mode)(*args)
        for g, a in zip(gradient, args):
            assert type(g) is np.ndarray and g.shape == a.shape, f"{prim_name(prim)}({text}) in {mode} mode"
        along = sum(float(np.sum(g * d)) for g, d in zip(gradient, direction))
        assert along == pytest.approx(expected, rel=1e-5, abs=1e-6), f"{prim_name(prim)}({text}) in {mode} mode"
        gradients[mode] = gradient
    first = gradients[modes[0]]
    for mode in modes[1:]:
        for g, h in zip(gradients[mode], first):
            assert g == pytest.approx(h, rel=1e-8, abs=1e-10), f"{prim_name(prim)}({text}): {mode} vs {modes[0]}"


def _sampled(prim, count=2):
    """The combinations that move the most axes: the last ones NumPy accepts (negative axes, tuples, keepdims)."""
    combos = _combinations(prim)
    return combos[-count:]


PRIMS = list(ROWS)


@pytest.mark.parametrize("prim", PRIMS, ids=[prim_name(p) for p in PRIMS])
def test_axis_keywords_sampled(prim, make_fn):
    combos = _sampled(prim)
    assert combos, f"no combination of {prim_name(prim)}'s keywords runs in NumPy: the row is wrong"
    for text in combos:
        _check(prim, text, make_fn)


@pytest.mark.parametrize("prim", PRIMS, ids=[prim_name(p) for p in PRIMS])
def test_axis_keywords_second_order(prim, make_fn):
    """Forward over reverse along a random direction, against central differences of the gradient."""
    text = _sampled(prim, 1)[0]
    f, args = _function(prim, text, make_fn)
    x = args[0]
    v = _rng.uniform(-1.0, 1.0, size=np.shape(x))
    product = s2s.hvp(f, wrt=0)(*args, v)
    if product is None:
        product = np.zeros(np.shape(x))
    gradient = s2s.grad(f, wrt=0, mode="reverse")
    h = 1e-5
    expected = (gradient(x + h * v, *args[1:]) - gradient(x - h * v, *args[1:])) / (2 * h)
    assert np.asarray(product) == pytest.approx(expected, rel=1e-4, abs=1e-6), f"{prim_name(prim)}({text})"


@pytest.mark.slow
@pytest.mark.parametrize("prim", PRIMS, ids=[prim_name(p) for p in PRIMS])
def test_axis_keywords_every_combination(prim, make_fn):
    for text in _combinations(prim):
        _check(prim, text, make_fn)


def test_cross_issue_example_every_mode(make_fn):
    """The issue's example: error 2.7 in reverse mode before the fix."""
    a, b = R(3, 3), R(3, 3)
    g = _rng.normal(size=(3, 3))
    f = make_fn("def f(a, b):\n    return np.sum(np.cross(a, b, axisa=0, axisb=-1, axisc=-1) * G)\n",
                namespace={"G": g})
    for mode in ("reverse", "forward", "auto"):
        da, db = s2s.grad(f, wrt=(0, 1), mode=mode)(a, b)
        # d/da of sum(cross(a[:, j], b[j, :]) . G[j]) = b[j] x G[j] for column j of a
        expected_a = np.stack([np.cross(b[j], g[j]) for j in range(3)], axis=1)
        expected_b = np.stack([np.cross(g[j], a[:, j]) for j in range(3)], axis=0)
        assert da == pytest.approx(expected_a, rel=1e-12) and db == pytest.approx(expected_b, rel=1e-12), mode


def test_cross_of_2_vectors_and_mixed(make_fn):
    """Two 2-vectors give a number (axisc unused); a 2-vector with a 3-vector is read as (x, y, 0)."""
    for shapes, kw in [(((2, 4), (4, 2)), "axisa=0"), (((3, 2), (3,)), ""), (((2,), (3, 3)), "axisb=0, axisc=0")]:
        args = tuple(R(*s) for s in shapes)
        f, _ = _function_from(f"np.cross(x, y{', ' + kw if kw else ''})", args, make_fn)
        direction = [_rng.uniform(-1.0, 1.0, size=np.shape(a)) for a in args]
        expected = _directional(f, args, direction)
        for mode in ("reverse", "forward", "auto"):
            gradient = s2s.grad(f, wrt=(0, 1), mode=mode)(*args)
            along = sum(float(np.sum(g * d)) for g, d in zip(gradient, direction))
            assert along == pytest.approx(expected, rel=1e-6), (shapes, kw, mode)


def _function_from(expression, args, make_fn):
    probe = eval(expression, {"np": np}, dict(zip("xyz", args)))
    weights = _rng.uniform(0.5, 1.5, size=np.shape(probe))
    names = ", ".join("xyz"[:len(args)])
    return make_fn(f"def f({names}):\n    return np.sum(({expression}) * WEIGHTS)\n",
                   namespace={"WEIGHTS": weights}), args


@pytest.mark.parametrize("body", [
    "np.sum(np.trace(y[:, :3, :3], axis1=0, axis2=2) * [-0.52, 0.55, -0.13])",     # the fuzzer's axes seed 6
    "np.sum(np.trace(y) * [1.0, -2.0, 0.5, 3.0])",
    "np.sum(np.linalg.det(y[:, :3, :3]) * [1.5, -0.5])",
    "np.sum(np.sum(y, keepdims=True) * [[[1.0, 2.0]]])",
    "np.sum(np.max(y, keepdims=True) * [[[1.0], [2.0]]])",
])
def test_reductions_that_leave_an_array_times_a_list(body, make_fn):
    """np.trace and np.linalg.det of a 3-D array, and a reduction with keepdims=True, give arrays: taken for
    numbers, `t * [..]` was read as a list repeated t times (forward mode gave 0.0, reverse mode refused)."""
    f = make_fn(f"def f(y):\n    return {body}\n")
    y = R(2, 3, 4) if "det" not in body else R(2, 3, 3) + 2.0 * np.eye(3)
    v = _rng.uniform(-1.0, 1.0, size=y.shape)
    expected = _directional(f, (y,), [v])
    for mode in ("reverse", "forward", "auto"):
        gradient = s2s.grad(f, mode=mode)(y)
        assert float(np.sum(gradient * v)) == pytest.approx(expected, rel=1e-6), mode
