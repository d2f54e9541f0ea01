"""The cache, and properties of the generated code: it stands alone, it is registered for tracebacks."""
import inspect
import math
import subprocess
import sys
import traceback

import pytest

import s2s
from conftest import code
import s2s.api
import s2s.driver.pipeline


def poly(x):
    return x * x * x - 2.0 * x


@pytest.fixture
def generations(monkeypatch):
    calls = []
    original = s2s.driver.pipeline.generate

    def counting(fn, options, kinds, *shapes):
        calls.append(fn.__name__)
        return original(fn, options, kinds, *shapes)
    monkeypatch.setattr(s2s.driver.pipeline, "generate", counting)
    monkeypatch.setattr(s2s.driver.pipeline, "_CACHE", type(s2s.driver.pipeline._CACHE)())
    monkeypatch.setenv("S2S_CHECK", "0")       # the checking mode compiles a second, value-returning variant
    return calls


def test_cache_hit_costs_no_transform(generations, monkeypatch):
    g = s2s.grad(poly)
    assert g(2.0) == 10.0
    assert generations == ["poly"]

    def fail(*args):
        raise AssertionError("parsed again")
    monkeypatch.setattr(s2s.driver.pipeline, "parse_function", fail)
    monkeypatch.setattr(s2s.driver.pipeline, "primal_ir", fail)
    assert g(3.0) == 25.0
    assert generations == ["poly"]


def test_second_wrapper_shares_the_compiled_code(generations):
    s2s.grad(poly)(2.0)
    s2s.grad(poly)(2.0)
    assert generations == ["poly"]


def test_options_and_argument_kinds_compile_separately(generations):
    s2s.grad(poly)(2.0)
    s2s.value_and_grad(poly)(2.0)
    s2s.grad(poly, optimize=False)(2.0)
    assert generations == ["poly"] * 3


def test_redefined_function_compiles_anew(make_fn, generations):
    first = make_fn("def f(x):\n    return x * x\n")
    second = make_fn("def f(x):\n    return x * x * x\n")
    assert s2s.grad(first)(2.0) == 4.0
    assert s2s.grad(second)(2.0) == 12.0
    assert generations == ["f", "f"]


def test_generated_source_is_registered_for_tracebacks_and_inspect():
    def f(x):
        return math.log(x)

    g = s2s.grad(f, mode="reverse")
    g(1.0)
    compiled = next(iter(s2s.api._CACHE[f].values()))[1]
    assert inspect.getsource(compiled).startswith("def f_grad(x):")
    with pytest.raises(ZeroDivisionError) as info:
        g(0.0)
    text = "".join(traceback.format_exception(info.value))
    assert "dx = 1.0 / x" in text


def test_printed_source_runs_without_s2s(tmp_path):
    def f(x1, x2):
        return math.log(x1) + x1 * x2 - math.sin(x2)

    text = s2s.source(f, wrt=(0, 1))
    script = tmp_path / "standalone.py"
    script.write_text(text + "\nprint(repr(f_grad(2.0, 5.0)))\n")
    blocker = tmp_path / "s2s.py"
    blocker.write_text("raise ImportError('s2s must not be imported by generated code')\n")
    result = subprocess.run([sys.executable, "-I", str(script)], capture_output=True, text=True, cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert eval(result.stdout) == s2s.grad(f, wrt=(0, 1))(2.0, 5.0)


def test_source_names_come_from_the_user():
    def f(weight, bias):
        return weight * bias + math.sin(weight)

    text = code(s2s.source(f, wrt=(0, 1)))
    assert "def f_grad(weight, bias):" in text
    assert "dweight = " in text
    assert "return dweight, weight" in text          # d(weight * bias)/dbias is weight itself


def test_gradient_only_does_not_compute_the_output():
    def f(x):
        y = math.exp(x)
        return y + 3.0 * x

    body = code(s2s.source(f, mode="reverse")).split("def f_grad")[1]
    assert "math.exp(x)" in body and "y + " not in body and "3.0 * x" not in body


def test_optimize_false_shows_the_raw_transform_with_the_same_numbers():
    def f(x):
        return x ** 2 * math.sin(x)

    raw = code(s2s.source(f, optimize=False, mode="reverse"))
    optimized = code(s2s.source(f, mode="reverse"))
    assert len(raw.splitlines()) > len(optimized.splitlines())
    assert s2s.grad(f, optimize=False)(0.7) == pytest.approx(s2s.grad(f)(0.7), rel=1e-15)
