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
                     help="how many random programs tests/test_fuzz.py checks (default 200, or S2S_FUZZ_EXAMPLES)")


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
