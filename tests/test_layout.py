"""The shape of the code (issue 30): no import cycles, lazy imports included."""
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_the_import_graph_has_no_cycles():
    done = subprocess.run([sys.executable, str(ROOT / "scripts" / "import_cycles.py")], capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "no import cycles" in done.stdout


def test_the_cycle_finder_finds_a_cycle():
    """The script's own check: two modules that import each other (one lazily) are a cycle."""
    sys.path.insert(0, str(ROOT / "scripts"))
    try:
        import import_cycles
    finally:
        sys.path.pop(0)
    graph = {"s2s.a": {"s2s.b"}, "s2s.b": {"s2s.c"}, "s2s.c": {"s2s.a"}, "s2s.d": {"s2s.a"}}
    assert import_cycles.cycles(graph) == [["s2s.a", "s2s.b", "s2s.c"]]
    assert import_cycles.cycles({"s2s.a": {"s2s.a"}}) == [["s2s.a"]]
