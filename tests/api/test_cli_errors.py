"""One line, not a traceback, where the user made the mistake (issue 27, item 16).

`s2s FILE:f --args 1,2,3` with the wrong number of arguments, a target file that fails to import, `s2s rules |
head` (the reader closes the pipe), and `s2s.grad(f)(None)` each raised a raw exception; each is one clear line
now, and the command exits with 1.
"""
import io
import os
import subprocess
import sys

import numpy as np
import pytest

import s2s
from s2s import cli


def _errors(capsys):
    captured = capsys.readouterr()
    assert "Traceback" not in captured.err + captured.out
    lines = captured.err.splitlines()
    assert len(lines) == 1 and lines[0].startswith("s2s: error: "), captured.err
    return lines[0]


@pytest.fixture
def two_arguments(tmp_path):
    path = tmp_path / "two.py"
    path.write_text("def f(x, y):\n    return x * y\n")
    return path


@pytest.mark.parametrize("given", ["1.0, 2.0, 3.0", "1.0"])
def test_example_arguments_of_the_wrong_number(two_arguments, capsys, given):
    assert cli.main([f"{two_arguments}:f", "--args", given]) == 1
    line = _errors(capsys)
    count = given.count(",") + 1
    assert f"{two_arguments}:1:0: {count} example argument" in line and "f(x, y)" in line


def test_example_arguments_of_the_wrong_number_for_export(two_arguments, tmp_path, capsys):
    assert cli.main(["export", f"{two_arguments}:f", "--args", "1.0, 2.0, 3.0", "-o", str(tmp_path / "o.py")]) == 1
    assert "3 example arguments for f(x, y)" in _errors(capsys)
    assert not (tmp_path / "o.py").exists()


def test_the_api_says_the_same_for_source():
    def f(x, y):
        return x * y
    with pytest.raises(s2s.BadArgument, match=r"3 example arguments for .*f\(x, y\): too many"):
        s2s.source(f, 1.0, 2.0, 3.0)


def test_an_import_error_in_the_target_file(tmp_path, capsys):
    path = tmp_path / "needs_a_module.py"
    path.write_text("import math\nimport not_a_module_s2s_test\n\n\ndef f(x):\n    return x\n")
    assert cli.main([f"{path}:f"]) == 1
    line = _errors(capsys)
    assert f"{path}:2: importing it raised ModuleNotFoundError: No module named 'not_a_module_s2s_test'" in line


def test_an_exception_raised_by_the_target_file_names_its_line(tmp_path, capsys):
    path = tmp_path / "raises.py"
    path.write_text("def helper():\n    raise ValueError('no data')\n\n\ndef f(x):\n    return x\n\n\nhelper()\n")
    assert cli.main(["graph", f"{path}:f"]) == 1
    assert f"{path}:2: importing it raised ValueError: no data" in _errors(capsys)


def test_the_target_file_exiting_when_imported(tmp_path, capsys):
    path = tmp_path / "exits.py"
    path.write_text("import sys\n\n\ndef f(x):\n    return x\n\n\nsys.exit(3)\n")
    assert cli.main([f"{path}:f"]) == 1
    assert "importing it raised SystemExit: 3" in _errors(capsys)


class _ClosedPipe(io.StringIO):
    """A stdout whose reader went away after the first write (`s2s rules | head -1`)."""

    def __init__(self):
        super().__init__()
        self.writes = 0

    def write(self, text):
        self.writes += 1
        if self.writes > 1:
            raise BrokenPipeError(32, "Broken pipe")
        return super().write(text)

    def fileno(self):
        raise io.UnsupportedOperation("fileno")


def test_rules_into_a_closed_pipe(monkeypatch, capsys):
    closed = _ClosedPipe()
    monkeypatch.setattr(sys, "stdout", closed)
    assert cli.main(["rules"]) == 1
    monkeypatch.undo()
    assert closed.writes == 2
    assert "broken pipe" in _errors(capsys)


@pytest.mark.slow
def test_rules_into_a_pipe_closed_before_it_is_read():
    """The real thing, in a subprocess: the read end is closed before the command writes anything."""
    read, write = os.pipe()
    process = subprocess.Popen([sys.executable, "-m", "s2s", "rules"], stdout=write, stderr=subprocess.PIPE,
                               text=True)
    os.close(write)
    os.close(read)
    _, err = process.communicate(timeout=120)
    assert process.returncode == 1
    assert err.splitlines() == ["s2s: error: the output was closed before it was all written (broken pipe)"]


@pytest.mark.parametrize("mode", ["auto", "reverse", "forward"])
def test_none_as_the_differentiated_argument(mode):
    def f(x):
        return x * x
    with pytest.raises(s2s.BadArgument, match="'x' (of .*f is differentiated but is None|is a NoneType)"):
        s2s.grad(f, mode=mode)(None)
    with pytest.raises(s2s.BadArgument):            # as a str is
        s2s.grad(f, mode=mode)("a")
    assert s2s.grad(f, mode=mode)(3.0) == pytest.approx(6.0)


def test_none_as_the_differentiated_argument_of_the_other_transformations():
    def f(x, y):
        return np.sum(x * y)
    with pytest.raises(s2s.BadArgument, match="is None"):
        s2s.grad(f, wrt=(0, 1))(np.ones(2), None)
    with pytest.raises(s2s.BadArgument, match="is None"):
        s2s.hvp(f)(None, np.ones(2), 1.0)


def test_none_inside_a_container_is_still_a_leaf_without_gradient():
    def f(p, x):
        return np.sum(p["w"] * x)
    g = s2s.grad(f)({"w": np.ones(2), "unused": None}, np.arange(2.0))
    assert np.allclose(g["w"], [0.0, 1.0]) and g["unused"] == 0.0
