import itertools
import linecache
import os
import math
import operator
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

# The suite's folders mirror s2s's stages (tests/frontend, tests/ir, ... tests/programs). Each is on the path, after
# everything else, so that a test module imports the suite's helpers by name wherever it sits (`from conftest
# import central`, `import fuzz_programs`, `import golden_cases`, `import test_rules` for its DOMAINS), as when they
# all sat in tests/; pytest's default import mode already asks every test file's name to be unique.
TESTS = Path(__file__).resolve().parent
for _folder in sorted({path.parent for path in TESTS.rglob("*.py")}):
    if str(_folder) not in sys.path:
        sys.path.append(str(_folder))

os.environ["S2S_VERIFY"] = "1"          # the IR verifier runs after every pass, in every test
os.environ.setdefault("S2S_CHECK", "1")  # the checking mode: every derivative's first call is checked against f

import s2s  # noqa: E402  (the helpers below)
from s2s.testing.gradcheck import numerical_gradient  # noqa: E402

_counter = itertools.count()


def function_from_source(source: str, name: str | None = None, namespace: dict | None = None):
    """Define a function from source text that inspect can read back (registered in linecache)."""
    source = textwrap.dedent(source)
    filename = f"<test-source-{next(_counter)}>"
    linecache.cache[filename] = (len(source), None, source.splitlines(keepends=True), filename)
    scope = {"math": math, "np": np, "numpy": np, "operator": operator}
    scope.update(namespace or {})
    exec(compile(source, filename, "exec"), scope)
    if name is None:
        name = source.split("def ", 1)[1].split("(", 1)[0].strip()
    return scope[name]


def code(source: str) -> str:
    """Generated source without its comments (they quote the user's lines)."""
    return "\n".join(line for line in source.splitlines() if not line.lstrip().startswith("#"))


@pytest.fixture
def make_fn():
    return function_from_source


def pytest_addoption(parser):
    parser.addoption("--fuzz-examples", type=int, default=int(os.environ.get("S2S_FUZZ_EXAMPLES", "200")),
                     help="how many random programs tests/programs/test_fuzz.py checks (default 200, or "
                          "S2S_FUZZ_EXAMPLES)")


def central(f, x, eps=1e-6):
    """The gradient of a scalar function of one array (or number) by central differences."""
    if np.ndim(x) == 0:
        return (f(x + eps) - f(x - eps)) / (2 * eps)
    x = np.asarray(x, dtype=float)
    g = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        e = np.zeros_like(x)
        e[i] = eps
        g[i] = (f(x + e) - f(x - e)) / (2 * eps)
    return g


def numeric(f, args, i, eps=1e-6):
    """Central differences of f along argument i (a float, an array, or a tuple/list of floats)."""
    args = list(args)
    x = args[i]
    if isinstance(x, (tuple, list)):
        out = []
        for k in range(len(x)):
            up, down = list(x), list(x)
            up[k] += eps
            down[k] -= eps
            args[i] = type(x)(up)
            hi = f(*args)
            args[i] = type(x)(down)
            lo = f(*args)
            out.append((hi - lo) / (2 * eps))
        return type(x)(out)
    if isinstance(x, np.ndarray):
        g = np.zeros_like(x)
        for k in np.ndindex(x.shape):
            up, down = x.copy(), x.copy()
            up[k] += eps
            down[k] -= eps
            args[i] = up
            hi = f(*args)
            args[i] = down
            lo = f(*args)
            g[k] = (hi - lo) / (2 * eps)
        return g
    args[i] = x + eps
    hi = f(*args)
    args[i] = x - eps
    lo = f(*args)
    return (hi - lo) / (2 * eps)


def assert_gradient(f, *args, wrt=0, modes=("reverse", "forward", "auto"), optimize=(True, False)):
    """s2s.grad of f along argument wrt against central differences, with and without the optimizing passes, in
    each mode (mode="auto", the default, is forward mode seeded with 1.0 along one float, reverse mode otherwise)."""
    expected = numeric(f, args, wrt)
    for opt in optimize:
        for mode in [m for m in ("auto", "reverse") if m in modes]:
            got = s2s.grad(f, wrt=wrt, optimize=opt, mode=mode)(*args)
            assert type(got) is type(expected) or isinstance(expected, float)
            np.testing.assert_allclose(np.asarray(got, dtype=float), np.asarray(expected, dtype=float),
                                       rtol=1e-5, atol=1e-6)
        if "forward" in modes and isinstance(args[wrt], (float, np.ndarray)):
            got = s2s.grad(f, wrt=wrt, optimize=opt, mode="forward")(*args)
            np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-6)


def agrees(f, args, i=0, mode="reverse", rtol=1e-6, atol=1e-8):
    """s2s.grad of f along argument i in this mode against s2s.testing's numerical gradient; the gradient."""
    got = s2s.grad(f, wrt=i, mode=mode)(*args)
    np.testing.assert_allclose(got, numerical_gradient(f, args, i, 1e-6), rtol=rtol, atol=atol)
    return got
