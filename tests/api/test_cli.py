"""The s2s command, run as a user runs it: `python -m s2s ...` in another process (the suite's shared one), and the
installed console script in a process of its own."""
import os
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import PYTHON

ROOT = Path(__file__).resolve().parents[2]
QUICKSTART = ROOT / "examples" / "quickstart.py"


def run(*args, cwd=ROOT):
    return PYTHON.run("-m", "s2s", *args, cwd=cwd)


def test_prints_runnable_derivative_source(tmp_path):
    result = run(f"{QUICKSTART}:f")
    assert result.returncode == 0, result.stderr
    assert "def f_grad(x1, x2):" in result.stdout
    namespace = {}
    exec(result.stdout, namespace)
    d1, d2 = namespace["f_grad"](2.0, 5.0)
    assert d1 == pytest.approx(5.5) and d2 == pytest.approx(1.716338, abs=1e-6)


def test_wrt_selects_arguments():
    result = run(f"{QUICKSTART}:f", "--wrt", "x2")
    assert result.returncode == 0, result.stderr
    namespace = {}
    exec(result.stdout, namespace)
    assert namespace["f_grad"](2.0, 5.0) == pytest.approx(1.716338, abs=1e-6)


def test_ir_flag_prints_the_wengert_list():
    result = run(f"{QUICKSTART}:f", "--ir")
    assert result.returncode == 0, result.stderr
    assert "v2 = mul(x1, x2)" in result.stdout
    assert "def f_grad(x1, x2):" in result.stdout


def test_with_value_and_no_optimize():
    result = run(f"{QUICKSTART}:f", "--with-value", "--no-optimize")
    assert result.returncode == 0, result.stderr
    namespace = {}
    exec(result.stdout, namespace)
    value, (d1, d2) = namespace["f_value_and_grad"](2.0, 5.0)
    assert value == pytest.approx(11.652071, abs=1e-6)


def test_unsupported_code_exits_1_with_file_and_line(tmp_path):
    bad = tmp_path / "bad.py"
    bad.write_text("def f(x):\n    match x:\n        case 1.0:\n            return x\n    return x\n")
    result = run(f"{bad}:f")
    assert result.returncode == 1
    assert result.stderr.strip().count("\n") == 0
    assert f"{bad}:2:4: s2s does not support `match`" in result.stderr


def test_missing_function_and_file():
    result = run(f"{QUICKSTART}:nope")
    assert result.returncode == 1 and "no function named 'nope'" in result.stderr
    result = run("missing.py:f")
    assert result.returncode == 1 and "missing.py: no such file" in result.stderr


def test_help_explains_every_flag():
    result = run("--help")
    assert result.returncode == 0
    for flag in ("--wrt", "--ir", "--arrays", "--with-value", "--no-optimize", "--mode", "--order"):
        assert flag in result.stdout


def test_console_script_is_installed():
    result = subprocess.run(["s2s", f"{QUICKSTART}:f"], capture_output=True, text=True,
                            env={**os.environ, "PATH": os.path.dirname(sys.executable) + os.pathsep +
                                 os.environ.get("PATH", "")})
    assert result.returncode == 0, result.stderr
    assert "def f_grad" in result.stdout


def test_arrays_flag_generates_array_code():
    example = ROOT / "examples" / "logistic_regression.py"
    result = run(f"{example}:loss", "--wrt", "w,b", "--arrays", "w,X,y")
    assert result.returncode == 0, result.stderr
    assert "def loss_grad(w, b, X, y):" in result.stdout and "_matmul_right" in result.stdout
    result = run(f"{example}:loss", "--arrays", "q")
    assert result.returncode == 1 and "--arrays names q" in result.stderr


def test_forward_mode_and_second_order():
    result = run(f"{QUICKSTART}:f", "--mode", "forward")
    assert result.returncode == 0, result.stderr
    namespace = {}
    exec(result.stdout, namespace)
    assert namespace["f_jvp"](2.0, 5.0, 1.0, 0.0) == pytest.approx(5.5)
    result = run(f"{QUICKSTART}:f", "--order", "2")
    assert result.returncode == 0, result.stderr
    namespace = {}
    exec(result.stdout, namespace)
    h11, h21 = namespace["f_grad_jvp"](2.0, 5.0, 1.0, 0.0)      # the first column of the Hessian
    assert h11 == pytest.approx(-1 / 4) and h21 == pytest.approx(1.0)


def test_example_arguments_for_containers(tmp_path):
    example = ROOT / "examples" / "params_mlp.py"
    result = run(f"{example}:loss", "--wrt", "params", "--args", "init(), *make_task(n=4)")
    assert result.returncode == 0, result.stderr
    assert "# For arguments params: {'W1': array" in result.stdout and "dparams = {'W1': dW1" in result.stdout and "_fill_tree" not in result.stdout
    result = run(f"{example}:loss", "--args", "undefined_name")
    assert result.returncode == 1 and "--args 'undefined_name': NameError" in result.stderr
