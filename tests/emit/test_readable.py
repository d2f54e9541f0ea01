"""Derivatives you can read, debug and ship: line comments, exception notes, export, golden files."""
import inspect
import math
import os
import subprocess
import sys
import traceback
from pathlib import Path

import numpy as np
import pytest

import golden_cases as cases
import s2s
from conftest import PYTHON
import test_control_flow as cf
import test_programs as programs

ROOT = Path(__file__).resolve().parents[2]
GOLDEN = Path(__file__).resolve().parents[1] / "golden"
sys.path.insert(0, str(ROOT / "examples"))
import euler_ode  # noqa: E402
import logistic_regression  # noqa: E402
import mlp  # noqa: E402
import newton_optimize  # noqa: E402
import newton_sqrt  # noqa: E402
import params_mlp  # noqa: E402
import quickstart  # noqa: E402


# ---------------------------------------------------------------- comments

def test_each_group_is_under_a_comment_quoting_the_users_line():
    text = s2s.source(quickstart.f, wrt=(0, 1))
    assert "    # quickstart.py:11  return math.log(x1) + x1 * x2 - math.sin(x2)" in text


def test_forward_and_reverse_sweeps_of_a_loop_are_commented():
    text = s2s.source(cases.power_and_branch, 1.3, 4, mode="reverse")
    forward, reverse = text.split("dy, dx = ")
    for part in (forward.splitlines(), reverse.splitlines()):
        assert any("golden_cases.py:" in line and "y = y * x" in line for line in part)
    forward_mode = s2s.source(cf.power_loop, 1.3, 4, mode="forward")
    assert "# test_control_flow.py:" in forward_mode and "y = y * x" in forward_mode


def test_every_operation_keeps_its_location_through_the_passes():
    from s2s.analysis.values import kind_of
    from s2s.api import Options, derivative_ir
    from s2s.ir.core import Op, walk
    for mode in ("reverse", "forward", "auto"):
        fn = derivative_ir(cf.nested_break_continue, Options((0,), mode=mode), [kind_of(1.2)])
        ops = [s for s in walk(fn.body) if isinstance(s, Op) and s.prim.__module__ != "s2s.runtime"]
        assert ops and all(op.loc is not None and op.loc.file.endswith("test_control_flow.py") for op in ops)


# ---------------------------------------------------------------- exceptions

def logarithm(x):
    y = x * 2.0
    return math.log(y) + y


def square_root(x):
    return math.sqrt(x) * 3.0


def _note(exc: BaseException) -> str:
    return "\n".join(getattr(exc, "__notes__", [])) + " ".join(map(str, exc.args))


def test_an_error_in_the_reverse_sweep_names_the_users_line():
    with pytest.raises(ZeroDivisionError) as info:
        s2s.grad(logarithm, mode="reverse")(0.0)
    note = _note(info.value)
    assert "test_readable.py:" in note and "return math.log(y) + y" in note
    trace = "".join(traceback.format_exception(info.value))
    assert "dy = 1.0 / y" in trace or "dy = 1.0 + 1.0 / y" in trace     # the generated line is shown too


def test_an_error_in_the_forward_sweep_names_the_users_line():
    with pytest.raises(ZeroDivisionError) as info:
        s2s.jvp(square_root, (0.0,), (1.0,))
    assert "return math.sqrt(x) * 3.0" in _note(info.value)


def test_pdb_and_inspect_see_the_generated_source():
    s2s.grad(logarithm)(1.0)
    compiled = next(iter(s2s.api._CACHE[logarithm].values()))[1]
    assert inspect.getsource(compiled).startswith("def logarithm_grad(x):")


# ---------------------------------------------------------------- export

BLOCKER = "raise ImportError('s2s must not be imported by exported code')\n"


def _run_blocked(tmp_path: Path, module: str, call: str) -> str:
    (tmp_path / "s2s.py").write_text(BLOCKER)
    probe = subprocess.run([sys.executable, "-E", "-c", "import s2s"], capture_output=True, text=True, cwd=tmp_path)
    assert probe.returncode != 0 and "must not be imported" in probe.stderr      # the blocker works
    script = tmp_path / "run_exported.py"
    script.write_text(f"import numpy as np\nfrom {module} import *\nprint(repr({call}))\n")
    # the script's folder comes first on sys.path: its s2s.py blocks the installed s2s
    result = subprocess.run([sys.executable, "-E", str(script)], capture_output=True, text=True, cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    return result.stdout


def test_exported_module_runs_without_s2s_and_agrees(tmp_path):
    X, y = logistic_regression.make_data(n=50)
    w = np.linspace(-0.1, 0.1, X.shape[1])
    text = s2s.export(logistic_regression.loss, w, 0.2, X, y, wrt=("w", "b"))
    assert "import s2s" not in text and "from s2s" not in text
    assert text.startswith("# Exported by s2s ") and "sha256" in text
    (tmp_path / "loss_grad.py").write_text(text)
    np.save(tmp_path / "X.npy", X)
    np.save(tmp_path / "y.npy", y)
    out = _run_blocked(tmp_path, "loss_grad",
                       f"[g.tolist() if hasattr(g, 'tolist') else g for g in loss_grad(np.array({w.tolist()}), 0.2, "
                       f"np.load('X.npy'), np.load('y.npy'))]")
    dw, db = s2s.grad(logistic_regression.loss, wrt=("w", "b"))(w, 0.2, X, y)
    exported = eval(out)
    assert np.allclose(exported[0], dw) and np.isclose(exported[1], db)


def test_export_is_deterministic_and_includes_called_functions(tmp_path):
    params = params_mlp.init()
    X, Y = params_mlp.make_task(n=4)      # the shapes the exported module is run with
    first = s2s.export(params_mlp.loss, params, X, Y)
    second = s2s.export(params_mlp.loss, params, X, Y)
    assert first == second
    assert "np.tanh" in first           # the layers (separate functions) are in it
    (tmp_path / "mlp_grad.py").write_text(first)
    out = _run_blocked(tmp_path, "mlp_grad",
                       "sorted(loss_grad({'W1': np.ones((2, 32)), 'b1': np.zeros(32), 'W2': np.ones((32, 1)), "
                       "'b2': np.zeros(1)}, np.ones((4, 2)), np.zeros((4, 1))))")
    assert eval(out) == ["W1", "W2", "b1", "b2"]


def test_export_command(tmp_path):
    target = tmp_path / "out.py"
    command = ["-m", "s2s", "export", f"{ROOT / 'examples' / 'newton_sqrt.py'}:newton_sqrt", "-o", str(target)]
    result = PYTHON.run(*command)
    assert result.returncode == 0, result.stderr
    first = target.read_bytes()
    PYTHON.run(*command).check_returncode()
    assert target.read_bytes() == first
    out = _run_blocked(tmp_path, "out", "newton_sqrt_grad(2.0)")
    assert float(out) == pytest.approx(1 / (2 * math.sqrt(2.0)))


def test_export_refuses_closure_variables():
    model = programs.make_model(1.5)
    with pytest.raises(s2s.S2SError, match="cannot export"):
        s2s.export(model)


# ---------------------------------------------------------------- golden files

GOLDEN_CASES = {
    "quickstart": (quickstart.f, (2.0, 5.0), (0, 1), "reverse"),
    "newton_sqrt": (newton_sqrt.newton_sqrt, (2.0,), 0, "reverse"),
    "euler_ode": (euler_ode.euler, (0.7, 2.0, 0.01, 10), 0, "reverse"),
    "logistic_regression": (logistic_regression.loss, (np.full(3, 0.1), 0.2, np.linspace(-1.0, 1.0, 12).reshape(4, 3),
                                                       np.array([0.0, 1.0, 1.0, 0.0])), (0, 1),
                            "reverse"),
    "mlp": (mlp.mse, (*mlp.init(hidden=3), *mlp.make_task(n=4)), (0, 1, 2, 3), "reverse"),
    "params_mlp": (params_mlp.loss, (params_mlp.init(), *params_mlp.make_task(n=4)), 0, "reverse"),
    "newton_optimize_hvp": (newton_optimize.rosenbrock, (np.zeros(2),), 0, "hvp"),
    "straight_line": (cases.straight_line, (1.3, 2.4), (0, 1), "reverse"),
    "branch": (cases.branch, (0.5,), 0, "reverse"),
    "while_loop": (cases.while_loop, (3.3,), 0, "reverse"),
    "nested_loops_with_break": (cases.nested_loops_with_break, (1.2,), 0, "reverse"),
    "numpy_broadcasting": (cases.broadcasting, (np.zeros((2, 3)), np.zeros(2), np.zeros(3)), (0, 1), "reverse"),
    "helper_call": (cases.helper_call, (0.7, -1.2), (0, 1), "reverse"),
    "rnn": (cases.rnn, (np.eye(3) * 0.3, np.ones((3, 2)) * 0.2, np.full(3, 0.1), np.linspace(-1.0, 1.0, 10).reshape(5, 2),
                        np.full(3, 0.5)), (0, 1, 2), "reverse"),
    "forward_mode": (cases.power_and_branch, (1.3, 4), 0, "forward"),
}


@pytest.mark.parametrize("name", GOLDEN_CASES)
def test_generated_source_matches_its_golden_file(name):
    """Set S2S_UPDATE_GOLDEN=1 to rewrite the golden files after a deliberate change to generated code."""
    fn, args, wrt, mode = GOLDEN_CASES[name]
    text = s2s.source(fn, *args, wrt=wrt, mode=mode)
    path = GOLDEN / f"{name}.py.txt"
    if os.environ.get("S2S_UPDATE_GOLDEN") == "1":
        path.write_text(text)
    assert path.exists(), f"no golden file {path.name}: run with S2S_UPDATE_GOLDEN=1 to create it"
    assert text == path.read_text(), f"generated code for {name} changed; review the diff, then rerun with " \
                                      f"S2S_UPDATE_GOLDEN=1"


# ---------------------------------------------------------------- as lean as a person writes it

def mlp_by_hand(W1, b1, W2, b2, X, Y):
    hidden = np.tanh(X @ W1 + b1)
    prediction = hidden @ W2 + b2
    d = 2 * (prediction - Y) / Y.size
    db2 = d.sum(axis=0)
    dW2 = hidden.T @ d
    dt = (d @ W2.T) * (1 - hidden ** 2)
    db1 = dt.sum(axis=0)
    dW1 = X.T @ dt
    return dW1, db1, dW2, db2


def logistic_by_hand(w, b, X, y):
    z = X @ w + b
    r = (1.0 / (1.0 + np.exp(-z)) - y) / len(y)
    dw = X.T @ r
    db = float(np.sum(r))
    return dw, db


rnn = cases.rnn


def rnn_by_hand(Wh, Wx, b, xs, h0):
    hs = [h0]
    for x in xs:
        hs.append(np.tanh(Wh @ hs[-1] + Wx @ x + b))
    dWh, dWx, db = np.zeros_like(Wh), np.zeros_like(Wx), np.zeros_like(b)
    dh = 2.0 * hs[-1]
    for t in range(len(xs) - 1, -1, -1):
        da = dh * (1.0 - hs[t + 1] ** 2)
        dWh += np.outer(da, hs[t])
        dWx += np.outer(da, xs[t])
        db += da
        dh = Wh.T @ da
    return dWh, dWx, db


def _lines(source: str, name: str) -> int:
    """The lines of code of the function name in source: its body's statements as written, without the
    `def` line, comments, docstrings and blank lines."""
    import ast
    tree = next(n for n in ast.walk(ast.parse(source)) if isinstance(n, ast.FunctionDef) and n.name == name)
    lines = source.splitlines()[tree.body[0].lineno - 1:tree.body[-1].end_lineno]
    return sum(1 for line in lines if line.strip() and not line.strip().startswith("#"))


LEAN_CASES = {
    "mlp": (mlp.mse, (*mlp.init(hidden=3), *mlp.make_task(n=4)), (0, 1, 2, 3), mlp_by_hand),
    "logistic": (logistic_regression.loss, (np.full(3, 0.1), 0.2, np.ones((4, 3)), np.ones(4)), (0, 1),
                 logistic_by_hand),
    "rnn": (rnn, (np.eye(3) * 0.3, np.ones((3, 2)) * 0.2, np.full(3, 0.1), np.ones((5, 2)), np.full(3, 0.5)),
            (0, 1, 2), rnn_by_hand),
}


@pytest.mark.parametrize("name", LEAN_CASES)
def test_generated_gradient_is_as_lean_as_the_hand_written_one(name):
    fn, args, wrt, by_hand = LEAN_CASES[name]
    generated = s2s.source(fn, *args, wrt=wrt)
    expected = by_hand(*args)
    got = s2s.grad(fn, wrt=wrt)(*args)
    for g, e in zip(got, expected):
        assert np.allclose(g, e, rtol=1e-12, atol=1e-14)
    body = generated.split(f"def {fn.__name__}_grad(", 1)[1]
    for helper in ("_unbroadcast", "_broadcast_back", "_reduced_size", "_expand", "_fill", "_matmul_",
                   "_shaped_like"):
        assert helper not in body, helper
    for helper in ("_zeros_like_tree", "_scatter", "_add(", "_item", "_fill_tree", "_shaped_like"):
        assert helper not in generated, helper
    mine = _lines(generated, f"{fn.__name__}_grad")
    theirs = _lines(inspect.getsource(by_hand), by_hand.__name__)
    print(f"{name}: generated {mine} lines, by hand {theirs}")
    assert mine <= 1.5 * theirs, (mine, theirs, generated)


@pytest.mark.parametrize("name", ["mlp", "logistic_regression", "rnn"])
def test_golden_gradients_are_within_one_and_a_half_times_the_hand_written_lines(name):
    """The golden files themselves (what `s2s --args` shows), line for line against the gradient by hand."""
    by_hand = {"mlp": mlp_by_hand, "logistic_regression": logistic_by_hand, "rnn": rnn_by_hand}[name]
    fn, args, wrt, mode = GOLDEN_CASES[name]
    text = (GOLDEN / f"{name}.py.txt").read_text()
    assert "def _" not in text                  # no helper copied in
    mine = _lines(text, f"{fn.__name__}_grad")
    theirs = _lines(inspect.getsource(by_hand), by_hand.__name__)
    assert mine <= 1.5 * theirs, (mine, theirs)
    expected = by_hand(*args)
    got = s2s.grad(fn, wrt=wrt)(*args)
    for g, e in zip(got, expected):
        assert np.allclose(g, e, rtol=1e-12, atol=1e-14)
