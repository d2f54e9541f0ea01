import itertools
import json
import linecache
import os
import math
import operator
import subprocess
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


# A Python process the suite starts once and runs command lines in (`python -m s2s ...`, `python example.py ...`),
# each with its own sys.argv, working directory, stdout, stderr and exit status: starting Python and importing
# NumPy and s2s for each of them was most of the time of the command-line tests. What needs a process of its own
# (the installed console script, `python -I`, an environment of its own, a command that registers rules) still
# starts one. S2S_TEST_FRESH_PROCESSES=1 runs every command line in a fresh process instead.
_WORKER = r"""
import contextlib, io, json, os, runpy, sys, traceback
channel = os.fdopen(int(sys.argv[1]), "w")
for line in sys.stdin:
    argv, cwd = json.loads(line)
    out, err, code = io.StringIO(), io.StringIO(), 0
    here, path, modules = os.getcwd(), list(sys.path), set(sys.modules)
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            os.chdir(cwd)
            if argv[0] == "-m":
                sys.argv = [argv[1], *argv[2:]]
                sys.path.insert(0, cwd)
                runpy.run_module(argv[1], run_name="__main__", alter_sys=True)
            else:
                sys.argv = list(argv)
                sys.path.insert(0, os.path.dirname(os.path.abspath(argv[0])))
                runpy.run_path(argv[0], run_name="__main__")
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else 0 if exc.code is None else 1
            if not isinstance(exc.code, (int, type(None))):
                print(exc.code, file=sys.stderr)
        except BaseException:
            traceback.print_exc()
            code = 1
        finally:
            os.chdir(here)
            sys.path[:] = path
    for name in set(sys.modules) - modules:      # the user's modules the command imported: afresh next time
        file = getattr(sys.modules[name], "__file__", None) or ""
        if file and not file.startswith((sys.prefix, sys.base_prefix)) and not name.startswith("s2s"):
            del sys.modules[name]
    channel.write(json.dumps([code, out.getvalue(), err.getvalue()]) + "\n")
    channel.flush()
"""


class PythonWorker:
    """run(*argv, cwd=...): `python *argv` in the suite's worker process, as a subprocess.CompletedProcess."""

    def __init__(self):
        self.process = None

    def run(self, *argv, cwd=None):
        argv = [str(a) for a in argv]
        cwd = str(cwd or os.getcwd())
        if os.environ.get("S2S_TEST_FRESH_PROCESSES"):
            return subprocess.run([sys.executable, *argv], capture_output=True, text=True, cwd=cwd)
        if self.process is None or self.process.poll() is not None:
            read, write = os.pipe()
            self.process = subprocess.Popen([sys.executable, "-c", _WORKER, str(write)], stdin=subprocess.PIPE,
                                            stdout=subprocess.DEVNULL, pass_fds=(write,), text=True)
            os.close(write)
            self.responses = os.fdopen(read)
        self.process.stdin.write(json.dumps([argv, cwd]) + "\n")
        self.process.stdin.flush()
        line = self.responses.readline()
        if not line:
            raise RuntimeError(f"the worker process died running {argv}")
        code, out, err = json.loads(line)
        return subprocess.CompletedProcess([sys.executable, *argv], code, out, err)

    def close(self):
        if self.process is not None and self.process.poll() is None:
            self.process.stdin.close()
            self.process.wait(timeout=60)
            self.responses.close()


PYTHON = PythonWorker()         # PYTHON.run("-m", "s2s", "file.py:f", cwd=...): the session's shared process


def pytest_sessionfinish(session, exitstatus):
    PYTHON.close()


def pytest_addoption(parser):
    parser.addoption("--fuzz-examples", type=int, default=int(os.environ.get("S2S_FUZZ_EXAMPLES", "50")),
                     help="how many random programs tests/programs/test_fuzz.py checks (default 50, or "
                          "S2S_FUZZ_EXAMPLES; its slow tests check at least 2,000)")


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
