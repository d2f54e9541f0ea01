"""The examples run and print what they promise."""
import subprocess
import sys
from pathlib import Path

import pytest

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"


def run_example(name, *args):
    result = subprocess.run([sys.executable, str(EXAMPLES / name), *args], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    return result.stdout


def test_quickstart():
    out = run_example("quickstart.py")
    assert "f(2, 5)  = 11.652071" in out
    assert "gradient = (5.500000, 1.716338)" in out
    assert "def f_grad(x1, x2):" in out
