"""Print the cycles of s2s's import graph: every import counts, at the top of a module or inside a function
(a lazy import is still an arrow), except those under `if TYPE_CHECKING:`.

    python scripts/import_cycles.py          # prints each cycle's modules and arrows; exit status 1 if any

An arrow goes from a module to each s2s module it imports (`from s2s.analysis import activity` to
s2s.analysis.activity; `from s2s.analysis.shapes import Abstract` to s2s.analysis.shapes; `import s2s` to the
package's face, s2s/__init__.py). A cycle is a strongly connected set of two or more modules, or a module
importing itself. tests/test_layout.py runs this and expects none.
"""
from __future__ import annotations

import ast
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SOURCES = {"s2s": ROOT / "s2s", "s2s.rules": ROOT / "rules"}


def modules() -> dict[str, Path]:
    """Every module of the package, by dotted name."""
    found: dict[str, Path] = {}
    for prefix, folder in SOURCES.items():
        for path in sorted(folder.rglob("*.py")):
            parts = list(path.relative_to(folder).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts = parts[:-1]
            found[".".join([prefix, *parts])] = path
    return found


def _type_checking_lines(tree: ast.AST) -> set[int]:
    lines: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            for child in node.body:
                lines.update(range(child.lineno, (child.end_lineno or child.lineno) + 1))
    return lines


def arrows(name: str, path: Path, known: dict[str, Path]) -> set[str]:
    tree = ast.parse(path.read_text())
    skipped = _type_checking_lines(tree)
    package = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
    out: set[str] = set()
    for node in ast.walk(tree):
        if getattr(node, "lineno", None) in skipped:
            continue
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name == "s2s" or alias.name.startswith("s2s."):
                    out.add(alias.name if alias.name in known else "s2s")
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[:len(base) - (node.level - 1)]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            if not (target == "s2s" or target.startswith("s2s.")):
                continue
            for alias in node.names:
                sub = f"{target}.{alias.name}"
                out.add(sub if sub in known else target)
    out.discard(name) if name not in out else None
    return {m for m in out if m in known}


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Tarjan's strongly connected components of two or more modules (or one importing itself)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    counter = [0]

    def visit(v: str) -> None:
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1 or v in graph[v]:
                found.append(sorted(component))

    sys.setrecursionlimit(10000)
    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def import_graph() -> dict[str, set[str]]:
    known = modules()
    return {name: arrows(name, path, known) for name, path in known.items()}


def main() -> int:
    graph = import_graph()
    found = cycles(graph)
    for k, component in enumerate(found, 1):
        members = set(component)
        print(f"cycle {k}: {len(component)} modules")
        for m in component:
            inside = sorted(graph[m] & members)
            print(f"  {m} -> {', '.join(inside)}")
    if not found:
        print(f"no import cycles among {len(graph)} modules (lazy imports included)")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
