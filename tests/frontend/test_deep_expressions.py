"""Expressions nested as deep as Python compiles them (issue 27, item 11).

A 500-term product `x*x*...*x` raised a raw RecursionError in the front end's parser (and the CLI printed about
1,000 frames). Python compiles such a product up to about 3 x its recursion limit terms; s2s makes its
derivatives with the room they need (s2s/frontend/depth.py) and, beyond it, refuses with one S2SError at the
expression.
"""
import importlib.util
import math
import sys

import pytest

import s2s
from s2s import cli
from s2s.frontend import depth


def _module(tmp_path, name, body):
    path = tmp_path / f"{name}.py"
    path.write_text("import numpy as np\n\n\ndef f(x):\n    return " + body + "\n")
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.f, path


def _product(n):
    return "*".join(["x"] * n)


@pytest.mark.parametrize("mode", ["auto", "reverse", "forward"])
def test_a_500_term_product(tmp_path, mode):
    f, _ = _module(tmp_path, f"product500_{mode}", _product(500))
    x, limit = 1.001, sys.getrecursionlimit()
    assert s2s.grad(f, mode=mode)(x) == pytest.approx(500 * x ** 499, rel=1e-12)
    assert sys.getrecursionlimit() == limit and depth._inside == 0       # the limit is put back


@pytest.mark.slow
def test_a_500_term_sum_of_products_in_reverse_and_forward(tmp_path):
    f, _ = _module(tmp_path, "sum_of_products", " + ".join(["x * np.sin(x)"] * 500))
    x = 0.3
    expected = 500 * (math.sin(x) + x * math.cos(x))
    for mode in ("reverse", "forward"):
        assert s2s.grad(f, mode=mode)(x) == pytest.approx(expected, rel=1e-12)


@pytest.mark.slow
@pytest.mark.parametrize("mode", ["auto", "reverse", "forward"])
def test_a_2000_term_product(tmp_path, mode):
    f, _ = _module(tmp_path, f"product2000_{mode}", _product(2000))
    x = 1.0001
    assert s2s.grad(f, mode=mode)(x) == pytest.approx(2000 * x ** 1999, rel=1e-11)


def test_the_cli_prints_the_derivative_of_a_500_term_product(tmp_path, capsys):
    _, path = _module(tmp_path, "cli_product", _product(500))
    assert cli.main([f"{path}:f", "--mode", "reverse"]) == 0
    out = capsys.readouterr().out
    assert "def f_grad(x):" in out and "Traceback" not in out


@pytest.fixture
def recursion_limit():
    before = sys.getrecursionlimit()
    yield sys.setrecursionlimit
    sys.setrecursionlimit(before)


def test_deeper_than_s2s_reads_is_one_error_at_the_expression(tmp_path, recursion_limit):
    recursion_limit(4000)           # Python now compiles a 10,000-term product; s2s reads about 4,000 levels
    f, path = _module(tmp_path, "too_deep", _product(10_000))
    with pytest.raises(s2s.S2SError) as info:
        s2s.grad(f)(1.0)
    message = info.value.one_line()
    assert "nested 10000 deep" in message and f"{path}:5:11" in message
    assert sys.getrecursionlimit() == 4000


def test_deeper_than_s2s_reads_is_one_line_from_the_cli(tmp_path, recursion_limit, capsys):
    recursion_limit(4000)
    _, path = _module(tmp_path, "too_deep_cli", _product(10_000))
    assert cli.main([f"{path}:f"]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("s2s: error: ") and "nested 10000 deep" in err


def test_a_file_python_cannot_compile_is_one_line_from_the_cli(tmp_path, capsys):
    path = tmp_path / "uncompilable.py"
    path.write_text("def f(x):\n    return " + _product(20_000) + "\n")
    assert cli.main([f"{path}:f"]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "cannot compile" in err and "Traceback" not in err
