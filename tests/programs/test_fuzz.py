"""A fuzzer of programs: random small functions with branches, loops, break/continue, helper functions
and NumPy broadcasting; reverse mode, forward mode and central differences must agree on each.

The default run checks 50 examples, `pytest -m slow` at least 2,000 (SLOW_EXAMPLES);
`pytest tests/programs/test_fuzz.py --fuzz-examples=5000` (or the environment variable S2S_FUZZ_EXAMPLES) runs more.
Every program it ever failed on is kept in REGRESSIONS below and checked on every run.
"""
from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

import s2s
from conftest import function_from_source

SCALAR_UNARY = ["math.sin({})", "math.cos({})", "math.tanh({})", "math.log(1.0 + {0} * {0})",
                "math.sqrt(1.0 + {0} * {0})", "math.exp(-{0} * {0})", "({}) ** 2", "math.atan({})"]
ARRAY_UNARY = ["np.sin({})", "np.cos({})", "np.tanh({})", "np.log(1.0 + {0} * {0})", "np.sqrt(1.0 + {0} * {0})",
               "np.exp(-{0} * {0})", "({}) ** 2", "np.maximum({}, 0.3)", "np.abs({})"]
BINARY = ["{} + {}", "{} - {}", "{} * {}", "{} / (1.5 + {} ** 2)"]


@st.composite
def expressions(draw, names: list[str], arrays: bool, depth: int = 2, calls: bool = True) -> str:
    if depth == 0 or draw(st.integers(0, 3)) == 0:
        if draw(st.booleans()):
            return draw(st.sampled_from(names))
        return repr(round(draw(st.floats(-2.0, 2.0, allow_nan=False)), 2))
    kind = draw(st.integers(0, 3))
    if kind == 0:
        form = draw(st.sampled_from(ARRAY_UNARY if arrays else SCALAR_UNARY))
        return "(" + form.format("(" + draw(expressions(names, arrays, depth - 1, calls)) + ")") + ")"
    if kind == 1 and calls and draw(st.booleans()):
        return f"helper({draw(expressions(names, arrays, depth - 1))}, {draw(expressions(names, arrays, depth - 1))})"
    form = draw(st.sampled_from(BINARY))
    left = draw(expressions(names, arrays, depth - 1, calls))
    right = draw(expressions(names, arrays, depth - 1, calls))
    return "(" + form.format(f"({left})", f"({right})") + ")"


@st.composite
def conditions(draw, names: list[str], arrays: bool) -> str:
    value = draw(st.sampled_from(names))
    threshold = round(draw(st.floats(-1.5, 1.5)), 2)
    operator = draw(st.sampled_from([">", "<"]))
    return f"np.sum({value}) {operator} {threshold}" if arrays else f"{value} {operator} {threshold}"


@st.composite
def blocks(draw, names: list[str], arrays: bool, depth: int, in_loop: bool, indent: str) -> list[str]:
    lines: list[str] = []
    for _ in range(draw(st.integers(1, 3))):
        kind = draw(st.integers(0, 5 if depth > 0 else 1))
        target = draw(st.sampled_from(names))
        if kind <= 1:
            lines.append(f"{indent}{target} = {draw(expressions(names, arrays))}")
        elif kind == 2:
            lines.append(f"{indent}if {draw(conditions(names, arrays))}:")
            lines += draw(blocks(names, arrays, depth - 1, in_loop, indent + "    "))
            if draw(st.booleans()):
                lines.append(f"{indent}elif {draw(conditions(names, arrays))}:")
                lines += draw(blocks(names, arrays, depth - 1, in_loop, indent + "    "))
            lines.append(f"{indent}else:")
            lines += draw(blocks(names, arrays, depth - 1, in_loop, indent + "    "))
        elif kind == 3:
            counter = f"k{depth}"
            lines.append(f"{indent}for {counter} in range({draw(st.integers(0, 4))}):")
            lines += draw(blocks(names, arrays, depth - 1, True, indent + "    "))
        elif kind == 4:
            counter = f"n{depth}"
            lines.append(f"{indent}{counter} = 0")
            lines.append(f"{indent}while {counter} < {draw(st.integers(0, 4))}:")
            lines.append(f"{indent}    {counter} += 1")
            lines += draw(blocks(names, arrays, depth - 1, True, indent + "    "))
        elif in_loop:
            lines.append(f"{indent}if {draw(conditions(names, arrays))}:")
            lines.append(f"{indent}    {draw(st.sampled_from(['break', 'continue']))}")
    return lines or [f"{indent}pass"]


@st.composite
def programs(draw) -> tuple[str, bool | str]:
    """arrays: False (two floats), True (two arrays) or "mixed" (a float x and an array y: the float
    broadcasts, which mode="auto"'s seeded forward mode along x must expand; issue 27, item 0)."""
    arrays = draw(st.sampled_from([False, True, "mixed"]))
    helper_body = draw(expressions(["a", "b"], arrays, 1, calls=False))
    names = ["x", "y", "z"]
    lines = ["def helper(a, b):", f"    return {helper_body}", "", "", "def f(x, y):", "    z = x * 0.5"]
    lines += draw(blocks(names, arrays, 2, False, "    "))
    result = draw(expressions(names, arrays))
    lines.append(f"    return np.sum({result})" if arrays else f"    return {result}")
    return "\n".join(lines) + "\n", arrays


def _arguments(arrays: bool | str, seed: int) -> tuple:
    rng = np.random.default_rng(seed)
    if arrays == "mixed":
        return float(rng.uniform(-1.0, 1.0)), rng.uniform(-1.0, 1.0, size=3)
    if arrays:
        return rng.uniform(-1.0, 1.0, size=(2, 3)), rng.uniform(-1.0, 1.0, size=3)
    return float(rng.uniform(-1.0, 1.0)), float(rng.uniform(-1.0, 1.0))


def _central(f, args, i, eps):
    x = np.array(args[i], dtype=float)
    out = np.zeros_like(x)
    for k in np.ndindex(x.shape):
        plus, minus = x.copy(), x.copy()
        plus[k] += eps
        minus[k] -= eps
        wrap = (lambda v: v) if isinstance(args[i], np.ndarray) else float
        a = args[:i] + (wrap(plus),) + args[i + 1:]
        b = args[:i] + (wrap(minus),) + args[i + 1:]
        out[k] = (f(*a) - f(*b)) / (2 * eps)
    return out


def check_program(source: str, arrays: bool, seed: int = 0, usable=assume) -> bool:
    """Check one program; usable(condition) rejects inputs where no derivative can be checked."""
    f = function_from_source(source, "f")
    args = _arguments(arrays, seed)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        value = f(*args)
        usable(np.isfinite(value) and abs(value) < 1e6)
        reverse = s2s.grad(f, wrt=(0, 1), mode="reverse")(*args)
        forward = s2s.grad(f, wrt=(0, 1), mode="forward")(*args)
        # the default mode, the path every user takes: along one float it is the seeded forward mode
        auto = [s2s.grad(f, wrt=i)(*args) for i in (0, 1)]
        for i in (0, 1):
            coarse, fine = _central(f, args, i, 1e-4), _central(f, args, i, 1e-6)
            # a branch that flips near the point makes the differences disagree: no derivative there
            usable(np.allclose(coarse, fine, rtol=1e-3, atol=1e-5))
            assert np.allclose(reverse[i], forward[i], rtol=1e-9, atol=1e-12), (source, reverse, forward)
            assert np.allclose(reverse[i], auto[i], rtol=1e-9, atol=1e-12), (source, reverse, auto)
            assert np.shape(auto[i]) == np.shape(args[i])
            assert np.allclose(reverse[i], fine, rtol=1e-4, atol=1e-6), (source, reverse, fine)
            assert np.shape(reverse[i]) == np.shape(args[i])
    return True


def fuzz_examples(config) -> int:
    return int(config.getoption("--fuzz-examples"))


@pytest.fixture
def examples(request) -> int:
    return fuzz_examples(request.config)


SLOW_EXAMPLES = 2000        # what the slow tests check at least (the default run checked 200 before it took 50)


def test_random_programs(examples):
    _random_programs(examples)


@pytest.mark.slow
def test_random_programs_by_the_thousand(examples):
    _random_programs(max(examples, SLOW_EXAMPLES))


def _random_programs(examples):
    checked = []

    @settings(max_examples=examples, deadline=None, derandomize=True,
              suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
    @given(programs(), st.integers(0, 1000))
    def run(program, seed):
        source, arrays = program
        checked.append(check_program(source, arrays, seed))
    run()
    assert len(checked) >= examples // 2, f"only {len(checked)} programs could be checked"


def _must_hold(condition: bool) -> None:
    assert condition, "this regression program no longer has a checkable derivative at its point"


# Programs the fuzzer failed on once; each stays a test.
REGRESSIONS: list[tuple[str, bool, int]] = [
    # a loop that changes a variable's shape (an array becomes a float): its adjoint took the float's shape
    ("def helper(a, b):\n    return 0.0\n\n\ndef f(x, y):\n    z = x * 0.5\n    for k2 in range(1):\n"
     "        x = 0.0\n    return np.sum(x)\n", True, 0),
    # a loop inside one branch only: the break and continue flags were unbound in the other branch
    ("def helper(a, b):\n    return 0.0\n\n\ndef f(x, y):\n    z = x * 0.5\n    if x > 0.0:\n        x = 0.0\n"
     "    else:\n        for k1 in range(0):\n            x = 0.0\n    return x * y\n", False, 0),
    # an adjoint spread lazily over an elementwise result is a read-only view: never written in place
    ("def helper(a, b):\n    return 0.0\n\n\ndef f(x, y):\n    z = x * 0.5\n    return np.sum((x * 0.3) * y)\n",
     True, 0),
]


@pytest.mark.parametrize("source, arrays, seed", REGRESSIONS or [pytest.param(None, None, None, marks=pytest.mark.skip(
    reason="the fuzzer has found no failure to keep yet"))])
def test_regression(source, arrays, seed):
    check_program(source, arrays, seed, usable=_must_hold)


# ---------------------------------------------------------------- programs as users write them (issue 12)
# tests/programs/fuzz_programs.py generates them: containers (concatenation, repetition, slicing, lists of tuples,
# containers as arguments and helper results, np.sum of lists), containers of arrays (layers, RNN steps),
# element loops over arrays (stencils, recurrences, swaps, row updates, views), helpers (shared local names,
# functools.wraps, calls of s2s derivatives) and names that look like generated ones. Each program is checked
# in reverse and forward mode, with and without the optimizing passes, with the checking mode on: its value
# against f's and its derivative against central differences. A refusal (an S2SError at the user's line) is
# fine; a wrong value or derivative, a crash, or an error located inside s2s is not.

import fuzz_programs as fp  # noqa: E402  (tests/ is on the path, as for conftest)


@pytest.mark.parametrize("category", fp.CATEGORIES)
def test_user_style_programs(category, examples):
    """examples // 4 programs in all (each is compiled in five modes), split over the categories, two at least in
    each: 14 by default, about 500 with the slow tests, 2,500 with --fuzz-examples=10000 (or S2S_FUZZ_EXAMPLES).
    Batches of thousands with the counts per category and mode: `python tests/programs/fuzz_programs.py -n 1700 -j 2`."""
    _user_style_programs(category, examples)


@pytest.mark.slow
@pytest.mark.parametrize("category", fp.CATEGORIES)
def test_user_style_programs_by_the_hundred(category, examples):
    _user_style_programs(category, max(examples, SLOW_EXAMPLES))


def _user_style_programs(category, examples):
    count = max(2, examples // (4 * len(fp.CATEGORIES)))
    checked, failures = 0, []
    for seed in range(count):
        program = fp.generate(category, seed)
        outcomes = fp.run_program(program)
        if outcomes is None:          # no derivative at the point (a kink nearby, not finite)
            continue
        checked += 1
        for mode, outcome in outcomes.items():
            if outcome.status not in ("ok", "refused"):
                failures.append(f"{program.describe()}# {mode}: {outcome.status}: {outcome.detail[:400]}")
    assert checked >= count // 2, f"only {checked} of {count} programs could be checked"
    assert not failures, f"{len(failures)} failures; the first:\n" + "\n".join(failures[:3])


def test_generators_make_valid_programs():
    """The generators' programs run in Python and return a float (so that a refusal or a failure is s2s's,
    not the fuzzer's); a few may raise (an index out of a list whose length depends on a branch)."""
    for category in fp.CATEGORIES:
        ran = 0
        for seed in range(20):
            program = fp.generate(category, seed)
            compile(program.source, "<fuzz>", "exec")
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                try:
                    value = fp.define(program.source)(*program.args)
                except Exception:        # s2s.grad(helper) at the module level may refuse, too
                    continue
            assert isinstance(value, (float, np.floating)), (program.source, value)
            ran += 1
        assert ran >= 16, f"only {ran} of 20 {category} programs run in Python"


# Each failure class the fuzzer found, reduced (the ids are those of /work/notes/fuzz_findings.md): the
# program, its arguments, the arguments differentiated, the modes it failed in, the outcomes accepted now
# (a located refusal is as good as a right answer, except where issue 12 asks for the construct to work),
# and None when fixed or the reason it still fails (a strict xfail, so that a fix shows as XPASS).
R, F = ("reverse", "reverse-noopt"), ("forward", "forward-noopt")
OK, OK_OR_REFUSED = ("ok",), ("ok", "refused")
_CLAMPED = ("def clamped(fn):\n    @functools.wraps(fn)\n    def wrapper(*args):\n        return max(fn(*args), -0.5)\n"
            "    return wrapper\n\n\n")
_SCALED = ("def scaled(fn):\n    @functools.wraps(fn)\n    def wrapper(*args):\n        return 2.0 * fn(*args)\n"
           "    return wrapper\n\n\n")
_SHIFTED = ("def shifted(fn):\n    @functools.wraps(fn)\n    def wrapper(p):\n        return fn(p + 0.25) + p\n"
            "    return wrapper\n\n\n")
USER_REGRESSIONS: list[tuple[str, str, tuple, tuple, tuple, tuple, str | None]] = [
    ("F1-zero-gradient-of-list-of-tuples", "def f(t0, ps1):\n    return 0.77 * t0[0]\n",
     ((-0.482,), [(-0.19, 0.568), (-0.393, -0.047)]), (0, 1), R, OK, None),
    ("F1-gradient-of-layers", "def f(params, x):\n    h = x\n    for W, b in params:\n        h = np.tanh(W @ h + b)\n"
     "    return np.sum(h)\n",
     ([(np.array([[0.5, -0.3]]), np.array([0.1])), (np.array([[0.7]]), np.array([-0.2]))], np.array([0.3, -0.6])),
     (0, 1), R + F, OK, None),
    ("F2-wraps-decorator-on-f", _CLAMPED + "@clamped\ndef f(x, y):\n    z = x * 0.5\n    return z / (1.5 + y ** 2) + x\n",
     (-1.152, 0.93), (0, 1), R + F, OK_OR_REFUSED, None),
    ("F2-wraps-decorator-on-helper", _SCALED + "@scaled\ndef h0(q):\n    return q * q\n\n\ndef f(x, y):\n    return h0(x) + y\n",
     (-1.152, 0.93), (0, 1), R + F, OK_OR_REFUSED, None),
    ("F2-wraps-decorator-without-star-arguments",
     _SHIFTED + "@shifted\ndef h0(q):\n    return q * q\n\n\ndef f(x, y):\n    return h0(x) * y\n",
     (-1.152, 0.93), (0, 1), R + F, OK_OR_REFUSED, None),
    ("F3-helper-calls-a-derivative", "def h0(x):\n    q = 0.63 / (1.5 + x ** 2)\n    return 0.85 * q\n\n\n"
     "dh0 = s2s.grad(h0)\n\n\ndef f(x, y):\n    return math.tanh(dh0(x)) + x * y\n",
     (-1.152, 0.93), (0, 1), R + F, OK, None),
    ("F3-derivative-of-a-helper-using-math",
     "def h0(x):\n    return math.sin(x)\n\n\ndh0 = s2s.grad(h0)\n\n\ndef f(x, y):\n    return dh0(x) * y\n",
     (-1.152, 0.93), (0, 1), R + F, OK, None),
    ("F4-mean-of-a-list-written-into",
     "def f(xs0):\n    acc = 0.5\n    xs0[0] = math.cos(acc)\n    xs0[-1] += acc\n    acc = np.mean(xs0)\n"
     "    xs2 = 2 * xs0 + xs0\n    for i1 in range(len(xs2)):\n        acc = acc + xs2[i1] * acc * acc\n"
     "    return np.min(xs2[::2]) + xs2[2]\n", ([0.442],), (0,), R + F, OK_OR_REFUSED, None),
    ("F5-max-of-a-tuple-concatenation", "def f(x):\n    return np.max((x, 0.5) + (0.5,))\n", (-0.218,), (0,),
     R + F, OK_OR_REFUSED, None),
    ("F6-adjoints-of-a-repeated-tuple",
     "def f(xs0, xs1):\n    acc = 0.5\n    t0 = ((acc, acc, xs1[0]) + (acc, acc, acc)) * 3\n    xs1[1] *= np.min(xs0)\n"
     "    xs0[0] = np.max(xs1)\n    for e1, e2 in zip(3 * (acc,) * 1, xs1):\n        acc = acc + t0[-16]\n"
     "    t3 = t0 * 3\n    return t0[-2] * acc + ([acc] + xs1)[-3] + 0.44 * t0[7] + -0.77 * t3[29]\n",
     ([-0.399], [-0.45, 0.949]), (0, 1), R + F, OK_OR_REFUSED, None),
    ("F7-argument-named-like-a-tangent", "def f(k_dot, k):\n    return np.sum(np.sin(k_dot)) + k_dot[0] * k\n",
     (np.array([0.9, 0.16, -0.49]), 0.04), (0, 1), R + F + ("hvp",), OK, None),
    ("F8-container-argument-rebound-in-a-branch", "def f(b):\n    if b[0] > -5.0:\n        b = (0.5,)\n    return b[0]\n",
     ([-0.169],), (0,), R + F, OK_OR_REFUSED, None),
    ("F9-loop-variable-rebinding-a-name-in-a-nested-loop",
     "def f(x, y):\n    for k in range(2):\n        for y in (y, 1.0):\n            x = x * y\n    return x - y\n",
     (-0.453, 0.291), (0, 1), R + F, OK_OR_REFUSED, None),
    ("F11-swap-through-slice-views",
     "def f(u, k):\n    y = u * 1.0\n    y[:2], y[2:4] = y[2:4], y[:2]\n    u = u + y * np.arange(len(y))\n"
     "    return np.mean(u ** 2) * k\n",
     (np.array([-0.259, -0.249, -0.614, -0.912]), -0.02), (0, 1), R + F, OK_OR_REFUSED, None),
    ("F11-swap-through-row-views",
     "def f(u, k):\n    B = np.outer(u[:2], u) + 1.0\n    B[0], B[1] = B[1], B[0]\n"
     "    return np.sum(B * np.arange(B.size).reshape(B.shape)) * k\n",
     (np.array([-0.259, -0.249, -0.614, -0.912]), -0.02), (0, 1), R + F, OK_OR_REFUSED, None),
    ("F12-jvp-of-layers-of-different-shapes",
     "def f(params, x, ws):\n    return np.sum(ws[0] * ws[1]) + np.sum(params[1][0]) * x[0]\n",
     ([(np.array([[0.5], [-0.3]]), np.array([0.1, 0.2])), (np.array([[0.7, 0.1]]), np.array([-0.2]))],
      np.array([0.3]), (np.array([0.4, -0.5]), np.array([0.6, 0.2]))), (0, 1, 2), R + F, OK, None),
    ("F13-slice-of-layers-leaving-no-item",
     "def f(params, x):\n    h = x\n    for W, b in params[:-1]:\n        h = np.tanh(W @ h + b)\n"
     "    W, b = params[-1]\n    return np.sum(W @ h + b)\n",
     ([(np.array([[-0.346, 0.975], [-0.363, 0.577]]), np.array([0.74, -0.218]))], np.array([-0.124, -0.255])),
     (0, 1), R + F, OK, None),
    ("F15-reverse-of-a-local-list", "def f(xs, z):\n    ys = xs + []\n    ys.reverse()\n    return z * ys[0]\n",
     ([0.59, 0.885, 0.48], 2.0), (0, 1), R + F, OK_OR_REFUSED, None),
    ("F16-argument-reversed-in-place", "def f(xs, z):\n    xs.reverse()\n    return z * xs[0]\n",
     ([0.59, 0.885, 0.48], 2.0), (0, 1), R + F, OK_OR_REFUSED, None),
    ("F17-extend-by-a-repetition", "def f(xs0):\n    xs0.extend(xs0 * 2)\n    return (xs0 * 2)[-3] + xs0[1]\n",
     ([-0.737],), (0,), R + F, OK_OR_REFUSED, None),
    ("F18-slice-assignment-of-a-whole-list",
     "def f(xs, z):\n    xs[:] = [z, z * 2.0]\n    return xs[0] + xs[1] * 3.0\n",
     ([0.978, -0.714, 0.029], 0.5), (0, 1), R + F, OK_OR_REFUSED, None),
    ("F18-slice-assignment-that-grows-a-list",
     "def f(xs):\n    out = [xs[0], xs[1], xs[0] * 2.0]\n    out[1:2] = [out[1], out[1]]\n    return out[3] * 2.0 + out[2]\n",
     ([0.3, -0.6],), (0,), R + F, OK_OR_REFUSED, None),
    ("F19-max-of-a-list-a-branch-may-extend",
     "def f(xs0):\n    if xs0[0] > 5.0:\n        xs0.extend([1.0])\n    return np.max(xs0) + xs0[2]\n",
     ([0.496, -0.996, 0.375, 0.271],), (0,), R + F, OK_OR_REFUSED, None),
    ("F20-variables-named-like-temporaries-in-forward-mode",
     "def f(y_dot, tmp):\n    a = tmp * tmp\n    t1 = 0.0\n    t2 = np.zeros(len(y_dot))\n"
     "    for dt1 in range(len(y_dot)):\n        t1 = t1 * a * 0.5 + y_dot[dt1]\n        t2[dt1] = t1\n"
     "    y_dot = t2\n    return np.sum(np.sin(y_dot)) + y_dot[0]\n",
     (np.array([-0.742, 0.617, 0.18, -0.79, 0.425, 0.438]), -0.64), (0, 1), R + F, OK, None),
    ("F21-derivative-of-one-argument-called-in-a-loop",
     "def h0(b):\n    a = 1.44 / (1.5 + b ** 2)\n    return math.log(1.0 + a * a)\n\n\ndh0 = s2s.grad(h0)\n\n\n"
     "def f(x, y):\n    z = x * 0.5\n    y = dh0(z)\n    for k in (0.32, 0.4):\n        x = dh0(math.log(1.0 + y * y) + k)\n"
     "    return math.sqrt(1.0 + (z - y) * (z - x))\n",
     (-1.4445, 0.297), (0, 1), R + F, OK, None),
    # issue 27: `.copy()` of a list was np.copy, so `xs2 + xs2` was an elementwise sum in the derivative (containers
    # seed 1560, caught only by the checking mode)
    ("F22-a-list-copy-concatenated",
     "def f(t0, t1, ps2):\n    acc = 0.5\n    xs1 = (3 * [acc, -0.74, acc]) + [acc, t0[-1], t0[-1]]\n"
     "    xs2 = xs1.copy()\n    xs2[0] = ps2[0][0]\n    return np.prod((xs2 + xs2)) + 1.35 * t1[1] + acc\n",
     ((0.374, 0.454), (-0.358, -0.29), [(0.514, 0.753)]), (0, 1, 2), ("auto",) + R + F, OK, None),
]


def _regression_params():
    for name, source, args, diff, modes, accepted, reason in USER_REGRESSIONS:
        marks = [pytest.mark.xfail(strict=True, reason=reason)] if reason else []
        yield pytest.param(source, args, diff, modes, accepted, id=name, marks=marks)


@pytest.mark.parametrize("source, args, diff, modes, accepted", list(_regression_params()))
def test_user_regression(source, args, diff, modes, accepted):
    program = fp.Program(source, args, diff, "regression")
    outcomes = fp.run_program(program, modes)
    assert outcomes is not None, "this regression program no longer has a checkable derivative at its point"
    bad = [f"{mode}: {o.status}: {o.detail[:300]}" for mode, o in outcomes.items() if o.status not in accepted]
    assert not bad, bad


def test_unrolled_loops_over_tuples_keep_the_values_they_map_alive():
    """F21 (session 3): s2s/passes/unroll.py keyed its map from a dropped loop's results to their unrolled values by id()
    while nothing held the dropped loop, so a value made later could reuse an id and be replaced (InvalidIR in
    optimized modes). The fuzzer's program, as it found it; the same in a fresh process:
    `python tests/programs/fuzz_programs.py -n 1 --start 70062 --category helpers`."""
    program = fp.generate("helpers", 70062)
    outcomes = fp.run_program(program)
    assert outcomes is not None
    bad = [f"{mode}: {o.status}: {o.detail[:300]}" for mode, o in outcomes.items() if o.status not in ("ok", "refused")]
    assert not bad, bad
