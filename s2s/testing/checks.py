"""Gradient checking for test suites: `check_grads`, and sample points for derivative rules.

    from s2s.testing import check_grads
    check_grads(f, (x, W), order=2)          # reverse, forward and second order, each against
                                             # central differences and against each other

It accepts a function and its arguments (floats, float arrays, and tuples,
lists and dicts of them) and guarantees that it either returns None or raises
`GradCheckError` (an AssertionError) whose message is a table of the worst
coordinates: the argument, the index, s2s's value, the reference value, the
relative error. Tolerances and step sizes follow the arguments' dtype.

Rules get checked at sample points declared next to them:

    @s2s.testing.sample_points((0.5,), (3.0,))
    @s2s.adjoint(scipy.special.gammaln)
    def gammaln_adjoint(g, ans, x): ...

`rule_cases()` lists every registered rule with its points, ready to check
(the pytest plugin in s2s.testing.pytest_plugin parametrizes a test over them); that
side lives in s2s/testing/rulecheck.py.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Iterator, Sequence

import numpy as np

from s2s.driver.selfcheck import modes_compared_by_caller
from s2s.testing.gradcheck import _leaves

__all__ = ["check_grads", "GradCheckError", "Tolerance", "tolerance_for"]

MODES = ("forward", "reverse")


# ---------------------------------------------------------------- tolerances

@dataclass(frozen=True)
class Tolerance:
    """rtol and atol for a first-order check against central differences (step eps, relative to |x|);
    second order uses rtol2/atol2; s2s against s2s (two modes) uses `agree`."""

    rtol: float
    atol: float
    eps: float
    rtol2: float
    atol2: float
    agree: float


TOLERANCES = {
    "float64": Tolerance(rtol=1e-5, atol=1e-6, eps=1e-6, rtol2=1e-4, atol2=1e-5, agree=1e-8),
    "float32": Tolerance(rtol=2e-2, atol=2e-3, eps=1e-2, rtol2=5e-2, atol2=5e-3, agree=1e-4),
    "float16": Tolerance(rtol=1e-1, atol=1e-2, eps=5e-2, rtol2=2e-1, atol2=2e-2, agree=1e-2),
}


def tolerance_for(args: Sequence[Any]) -> Tolerance:
    """The tolerance of the least precise float among the arguments' leaves (Python floats count as float64)."""
    bits = [np.finfo(leaf.dtype).bits for _, leaf in _leaves(tuple(args))
            if isinstance(leaf, (np.ndarray, np.floating)) and np.issubdtype(leaf.dtype, np.floating)]
    least = min(bits, default=64)
    return TOLERANCES["float64" if least >= 64 else "float32" if least >= 32 else "float16"]


# ---------------------------------------------------------------- values as trees of leaves
# (`_leaves`, the numbers and arrays inside a value with where they sit, is check.py's)

def _rebuild(value: Any, leaves: Iterator[Any]) -> Any:
    """value's structure, with its leaves taken in order from leaves."""
    if isinstance(value, dict):
        return {k: _rebuild(v, leaves) for k, v in value.items()}
    if isinstance(value, (tuple, list)):
        items = [_rebuild(v, leaves) for v in value]
        return tuple(items) if isinstance(value, tuple) else items
    return next(leaves)


def _like(leaf: Any, array: np.ndarray) -> Any:
    """array (float64) as a value of leaf's type: a float for a float, an array of leaf's dtype for an array."""
    if isinstance(leaf, np.ndarray):
        return array.astype(leaf.dtype)
    if isinstance(leaf, np.floating):
        return type(leaf)(array)
    return float(array)


def _differentiable(value: Any) -> bool:
    leaves = _leaves(value)
    return bool(leaves) and all(
        (isinstance(v, np.ndarray) and np.issubdtype(v.dtype, np.floating))
        or (isinstance(v, (float, np.floating)) and not isinstance(v, bool)) for _, v in leaves)


# ---------------------------------------------------------------- the failure table

@dataclass
class Row:
    argument: str
    index: tuple
    value: float
    reference: float
    error: float          # |value - reference| / max(|value|, |reference|)
    excess: float         # |value - reference| - (atol + rtol |reference|): > 0 fails


class GradCheckError(AssertionError):
    """A derivative differs from its reference; `rows` holds the failing coordinates, worst first."""

    def __init__(self, title: str, rows: list[Row], shown: int = 5):
        self.title, self.rows = title, rows
        super().__init__(_table(title, rows, shown))


def _number(x: float) -> str:
    return f"{x:.6g}" if np.isfinite(x) else str(x)


def _table(title: str, rows: list[Row], shown: int) -> str:
    if not rows:
        return title
    header = ("argument", "index", "s2s", "reference", "rel. error")
    cells = [(r.argument, str(r.index) if r.index else "-", _number(r.value), _number(r.reference),
              f"{r.error:.2e}") for r in rows[:shown]]
    widths = [max(len(h), *(len(c[k]) for c in cells)) for k, h in enumerate(header)]
    lines = [title, "  " + "  ".join(h.ljust(w) for h, w in zip(header, widths)).rstrip()]
    lines += ["  " + "  ".join(c.ljust(w) for c, w in zip(cell, widths)).rstrip() for cell in cells]
    if len(rows) > shown:
        lines.append(f"  ... and {len(rows) - shown} more")
    return "\n".join(lines)


def _compare(title: str, names: list[str], values: list[Any], references: list[Any], rtol: float,
             atol: float) -> None:
    """Raise GradCheckError when any coordinate of values is farther than atol + rtol|reference| from references."""
    __tracebackhide__ = True
    rows, total = [], 0
    for name, value, reference in zip(names, values, references):
        a = np.asarray(value, dtype=np.float64)
        b = np.asarray(reference, dtype=np.float64)
        if a.shape != b.shape:
            raise GradCheckError(f"{title}: {name} has shape {a.shape}, the reference {b.shape}", [])
        total += b.size
        with np.errstate(invalid="ignore"):
            excess = np.abs(a - b) - (atol + rtol * np.abs(b))
            excess = np.where(np.isnan(a) != np.isnan(b), np.inf, np.where(np.isnan(a) & np.isnan(b), -1.0, excess))
            scale = np.maximum(np.maximum(np.abs(a), np.abs(b)), np.finfo(np.float64).tiny)
            error = np.where(np.isfinite(excess), np.abs(a - b) / scale, np.inf)
        for k in zip(*np.nonzero(excess > 0)) if a.ndim else ([()] if excess > 0 else []):
            rows.append(Row(name, tuple(int(i) for i in k), float(a[k]), float(b[k]), float(error[k]),
                            float(excess[k])))
    if rows:
        rows.sort(key=lambda r: -r.excess)
        raise GradCheckError(f"{title}: {len(rows)} of {total} coordinates differ (rtol={rtol:g}, atol={atol:g})",
                             rows)


# ---------------------------------------------------------------- central differences

def _evaluate(f: Callable, args: tuple, indices: tuple[int, ...], leaves: list[Any], cotangent: Any) -> float:
    """<cotangent, f(args with the wrt arguments' leaves replaced by leaves)>, in float64."""
    new = list(args)
    it = iter(leaves)
    for i in indices:
        new[i] = _rebuild(args[i], it)
    out = f(*new)
    return _contract(out, cotangent)


def _contract(out: Any, cotangent: Any) -> float:
    if cotangent is None:
        return float(np.asarray(out, dtype=np.float64))
    return float(sum(np.sum(np.asarray(o, dtype=np.float64) * np.asarray(c, dtype=np.float64))
                     for (_, o), (_, c) in zip(_leaves(out), _leaves(cotangent))))


def _numerical_gradient(f: Callable, args: tuple, indices: tuple[int, ...], cotangent: Any, eps: float
                        ) -> list[np.ndarray]:
    """Central differences per coordinate of every leaf of the wrt arguments (the step actually taken,
    after rounding to the leaf's dtype, is the denominator)."""
    leaves = [leaf for i in indices for _, leaf in _leaves(args[i])]
    result = []
    for j, leaf in enumerate(leaves):
        x = np.array(leaf, dtype=np.float64)
        gradient = np.zeros_like(x)
        for k in np.ndindex(x.shape):
            step = eps * max(1.0, abs(float(x[k])))
            plus, minus = x.copy(), x.copy()
            plus[k] += step
            minus[k] -= step
            plus_leaf, minus_leaf = _like(leaf, plus), _like(leaf, minus)
            taken = float(np.asarray(plus_leaf, dtype=np.float64)[k] - np.asarray(minus_leaf, dtype=np.float64)[k])
            up = _evaluate(f, args, indices, leaves[:j] + [plus_leaf] + leaves[j + 1:], cotangent)
            down = _evaluate(f, args, indices, leaves[:j] + [minus_leaf] + leaves[j + 1:], cotangent)
            gradient[k] = (up - down) / taken
        result.append(gradient)
    return result


# ---------------------------------------------------------------- s2s's derivatives

def _random_like(value: Any, rng: np.random.Generator) -> Any:
    """A random value of value's structure, shapes and dtypes (uniform in [-1, 1], away from zero)."""
    def one(leaf: Any) -> Any:
        sample = rng.uniform(0.5, 1.0, size=np.shape(leaf)) * rng.choice([-1.0, 1.0], size=np.shape(leaf))
        return _like(leaf, sample) if isinstance(leaf, (np.ndarray, np.floating)) else float(sample)
    return _rebuild(value, iter([one(leaf) for _, leaf in _leaves(value)]))


def _is_scalar(out: Any) -> bool:
    return isinstance(out, (float, int, np.floating)) or (isinstance(out, np.ndarray) and out.ndim == 0)


def _reverse(f: Callable, args: tuple, indices: tuple[int, ...], cotangent: Any) -> list[Any]:
    """s2s's reverse-mode derivative (the gradient, or the vjp with cotangent), as the wrt arguments' leaves."""
    from s2s.api import grad, vjp
    if cotangent is None:
        adjoints = grad(f, wrt=indices, mode="reverse")(*args)
    else:
        adjoints = vjp(f, *args, wrt=indices)[1](cotangent)
    result = []
    for i, adjoint in zip(indices, adjoints):
        expected, found = _leaves(args[i]), _leaves(adjoint)
        if [p for p, _ in expected] != [p for p, _ in found]:
            raise GradCheckError(f"the reverse-mode derivative for argument {i} has another structure than the "
                                 f"argument: {[p for p, _ in found]} for {[p for p, _ in expected]}", [])
        result += [np.zeros(np.shape(leaf)) if g is None else g for (_, leaf), (_, g) in zip(expected, found)]
    return result


def _forward(f: Callable, args: tuple, indices: tuple[int, ...], cotangent: Any) -> list[np.ndarray]:
    """s2s's forward-mode derivative, one jvp per coordinate, contracted with the cotangent."""
    from s2s.api import jvp
    leaves = [leaf for i in indices for _, leaf in _leaves(args[i])]
    zeros = [np.zeros_like(leaf) if isinstance(leaf, np.ndarray) else 0.0 * leaf for leaf in leaves]
    result = []
    for j, leaf in enumerate(leaves):
        column = np.zeros(np.shape(leaf))
        for k in np.ndindex(np.shape(leaf)):
            basis = np.zeros(np.shape(leaf))
            basis[k] = 1.0
            direction = zeros[:j] + [_like(leaf, basis)] + zeros[j + 1:]
            it = iter(direction)
            tangents = [_rebuild(args[i], it) if i in indices else None for i in range(len(args))]
            _, tangent_out = jvp(f, args, tangents)
            column[k] = _contract(tangent_out, cotangent)
        result.append(column)
    return result


# ---------------------------------------------------------------- check_grads

def _indices(f: Callable, args: tuple, wrt: Any) -> tuple[tuple[int, ...], list[str]]:
    from s2s.api import _param_names, _resolve_wrt, _underlying
    names = _param_names(_underlying(f))
    if wrt is None:
        indices = tuple(i for i, a in enumerate(args) if _differentiable(a))
        if not indices:
            raise ValueError("check_grads: no argument is a float, a float array or a container of them")
    else:
        indices = _resolve_wrt(_underlying(f), wrt)[0]
    labels = [f"{names[i] if i < len(names) else i}{path}" for i in indices for path, _ in _leaves(args[i])]
    return indices, labels


@modes_compared_by_caller
def check_grads(f: Callable, args: Sequence[Any], order: int = 2, modes: Sequence[str] = MODES, wrt: Any = None,
                *, rtol: float | None = None, atol: float | None = None, eps: float | None = None,
                seed: int = 0) -> None:
    """Check s2s's derivatives of f at args against central differences and against each other.

    args: the arguments, a tuple (floats, float arrays, and tuples, lists and dicts of them); wrt: the
    positions or names to differentiate (default: every float-valued argument). For each mode in
    modes ("reverse": the gradient, or a vjp with a random cotangent when f's output is an array;
    "forward": one jvp per coordinate), the derivative is compared with central differences
    coordinate by coordinate, and the two modes with each other. order=2 also checks the
    Hessian-vector product (forward over reverse) along a random direction against central
    differences of the reverse-mode gradient (and, for a float argument, grad(grad(f))); it needs a
    scalar-valued f. rtol, atol and eps default to values chosen by the arguments' dtype
    (`TOLERANCES`: float32 is looser). Raises GradCheckError with a table of the worst coordinates.
    """
    __tracebackhide__ = True
    if order not in (1, 2):
        raise ValueError(f"check_grads: order is 1 or 2, not {order!r}")
    unknown = set(modes) - set(MODES)
    if unknown or not modes:
        raise ValueError(f"check_grads: modes are {MODES}, not {tuple(modes)!r}")
    args = tuple(args)
    indices, labels = _indices(f, args, wrt)
    base = tolerance_for([args[i] for i in indices])
    tol = Tolerance(rtol if rtol is not None else base.rtol, atol if atol is not None else base.atol,
                    eps if eps is not None else base.eps, base.rtol2 if rtol is None else 10 * rtol,
                    base.atol2 if atol is None else 10 * atol, base.agree)
    rng = np.random.default_rng(seed)
    name = getattr(f, "__qualname__", repr(f))
    out = f(*args)
    cotangent = None if _is_scalar(out) else _random_like(out, rng)
    numerical = _numerical_gradient(f, args, indices, cotangent, tol.eps)
    what = "gradient" if cotangent is None else "vjp with a random cotangent"
    computed = {}
    for mode in sorted(modes, reverse=True):           # reverse first: it is the reference for forward
        title = f"check_grads({name}): the {mode}-mode {what if mode == 'reverse' else 'derivative'}"
        derivative = _reverse(f, args, indices, cotangent) if mode == "reverse" else \
            _forward(f, args, indices, cotangent)
        _compare(f"{title} against central differences", labels, derivative, numerical, tol.rtol, tol.atol)
        computed[mode] = derivative
    if len(computed) == 2:
        _compare(f"check_grads({name}): forward mode against reverse mode", labels, computed["forward"],
                 computed["reverse"], tol.agree, tol.agree)
    if order == 2:
        if cotangent is not None:
            raise ValueError(f"check_grads({name}): order=2 needs a scalar-valued function; pass order=1")
        _check_second_order(f, args, indices, labels, tol, rng, name)


def _check_second_order(f: Callable, args: tuple, indices: tuple[int, ...], labels: list[str], tol: Tolerance,
                        rng: np.random.Generator, name: str) -> None:
    """hvp (forward over reverse) along a random direction against central differences of the gradient."""
    __tracebackhide__ = True
    from s2s.api import grad, hvp
    position = 0
    for i in indices:
        n_leaves = len(_leaves(args[i]))
        names = labels[position:position + n_leaves]
        position += n_leaves
        v = _random_like(args[i], rng)
        product = hvp(f, wrt=i)(*args, v)
        leaves = [leaf for _, leaf in _leaves(args[i])]
        product_leaves = [np.zeros(np.shape(leaf)) if p is None else p
                          for (_, leaf), (_, p) in zip(_leaves(args[i]), _leaves(product) if product is not None
                                                       else [(None, None)] * n_leaves)]
        gradient = grad(f, wrt=i)
        scale = max([1.0] + [float(np.max(np.abs(leaf))) for leaf in leaves])
        h = tol.eps * scale
        shifted = []
        for sign in (1.0, -1.0):
            moved = [_like(leaf, np.asarray(leaf, dtype=np.float64) + sign * h * np.asarray(d, dtype=np.float64))
                     for leaf, (_, d) in zip(leaves, _leaves(v))]
            new = list(args)
            new[i] = _rebuild(args[i], iter(moved))
            shifted.append([np.asarray(g, dtype=np.float64) for _, g in _leaves(gradient(*new))])
        expected = [(up - down) / (2 * h) for up, down in zip(*shifted)]
        _compare(f"check_grads({name}): the Hessian-vector product (forward over reverse) against central "
                 f"differences of the gradient", names, product_leaves, expected, tol.rtol2, tol.atol2)
        if not isinstance(args[i], np.ndarray) and _leaves(args[i]) == [("", args[i])]:
            second = grad(grad(f, wrt=i), wrt=i)(*args)
            _compare(f"check_grads({name}): grad(grad(f)) against the Hessian-vector product", names,
                     [second * v], product_leaves, tol.agree, tol.agree)
