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


# ---------------------------------------------------------------- the Numba backend reads no emitted text (issue 30)

_PARSERS = {"ast", "gast", "astor", "libcst", "tokenize"}
_OWN_TEXTS = {("sequences.py", "entry"),              # the wrapper it writes, converting lists at each call
              ("typed_helpers.py", "typed_helpers")}  # its own helpers' texts, made into Numba overloads once


def text_readers(source: str, filename: str) -> list[str]:
    """Where a module imports a parser of Python text or calls compile/exec/eval (other than on a text it writes
    itself, _OWN_TEXTS): each as `file:line what`."""
    import ast
    found = []
    tree = ast.parse(source)
    enclosing = {}
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            for inner in ast.walk(node):
                enclosing.setdefault(id(inner), node.name)
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [f"{filename}:{node.lineno} import {a.name}" for a in node.names
                      if a.name.split(".")[0] in _PARSERS]
        elif isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] in _PARSERS:
            found.append(f"{filename}:{node.lineno} from {node.module} import ...")
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and \
                node.func.id in ("compile", "exec", "eval") and (filename, enclosing.get(id(node))) not in _OWN_TEXTS:
            found.append(f"{filename}:{node.lineno} {node.func.id}(...)")
    return found


def test_the_numba_backend_parses_no_emitted_text():
    """The emitter writes Numba's syntax from the IR (s2s/backends/numba/syntax.py) and the Numba target's passes
    work on the IR (s2s/passes/stack_rows.py, fuse_elementwise.py): no module of the back end reads the emitted
    module back with a parser, nor compiles text other than its own."""
    backend = ROOT / "s2s" / "backends" / "numba"
    found = [hit for path in sorted(backend.glob("*.py")) for hit in text_readers(path.read_text(), path.name)]
    assert found == []
    # the check itself finds what it looks for
    assert text_readers("import ast\n\ndef f(text):\n    return ast.parse(text)\n", "x.py") == ["x.py:1 import ast"]
    assert text_readers("def f(text):\n    exec(compile(text, 'x', 'exec'))\n", "x.py") == \
        ["x.py:2 exec(...)", "x.py:2 compile(...)"]
