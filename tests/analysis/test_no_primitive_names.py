"""No analysis, transform, pass or emitter under s2s/ names a specific primitive (issue 30, item 1).

What s2s knows about a NumPy, math or operator function is a field of its record (rules/record.py), declared
beside its rule in rules/*.py; s2s/analysis, s2s/transforms, s2s/passes and s2s/emit read `registry.record(prim)`
and never compare a primitive with a library function, keep a set or table of them, or test a module's name.
The lowering's map from Python syntax to primitives (s2s/ir/lower.py) is the one place that names them."""
import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent.parent
FOLDERS = ("s2s/analysis", "s2s/transforms", "s2s/passes", "s2s/emit")
LIBRARIES = {"np", "numpy", "math", "operator", "_operator", "cmath"}
# types, which a comparison may test a value's type against (`x.dtype.type in (np.float32, np.float16)`)
TYPES = {"ndarray", "generic", "dtype", "ufunc", "integer", "floating", "inexact", "complexfloating", "number",
         "bool_", "float16", "float32", "float64", "int8", "int16", "int32", "int64", "uint8", "complex64",
         "complex128", "complex_", "float_", "int_", "signedinteger", "unsignedinteger", "object_", "str_",
         "newaxis", "inf", "nan", "pi", "e"}
# modules (the emitter spells `np.linalg.solve` by finding its module) and NumPy's "no argument given" sentinel
NOT_FUNCTIONS = TYPES | {"linalg", "fft", "random", "emath", "ma", "polynomial", "_NoValue"}
# (file, enclosing function) pairs allowed to name a library object or a module, each with the reason
ALLOWED: dict = {
    # a function without a rule is refused; the library it comes from (a class of the user's, a scipy.stats
    # distribution's method, an autograd primitive, a derivative s2s makes when the code runs) only words the
    # refusal and its hint: no derivative depends on it
    ("s2s/transforms/common.py", "missing_rule"): "words the refusal of a function without a rule",
}


def _library_object(node: ast.AST, imported: set) -> str | None:
    """`np.sum`, `operator.add`, `np.linalg.solve`, or a name imported from one of those modules."""
    if isinstance(node, ast.Attribute):
        base = node
        while isinstance(base, ast.Attribute):
            base = base.value
        if isinstance(base, ast.Name) and base.id in LIBRARIES and node.attr not in NOT_FUNCTIONS:
            return ast.unparse(node)
    if isinstance(node, ast.Name) and node.id in imported:
        return node.id
    return None


def _module_name(node: ast.AST) -> bool:
    """`prim.__module__`, or `getattr(prim, "__module__", ...)`."""
    return isinstance(node, ast.Attribute) and node.attr == "__module__" or \
        isinstance(node, ast.Constant) and node.value == "__module__"


def _items(node: ast.AST) -> list:
    return list(node.elts) if isinstance(node, (ast.Tuple, ast.List, ast.Set)) else [node]


def violations(source: str, relative: str) -> list[str]:
    tree = ast.parse(source)
    imported = {a.asname or a.name for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)
                and n.module in LIBRARIES for a in n.names}
    functions = [n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]

    def where(node: ast.AST) -> str:
        inside = [f for f in functions if f.lineno <= node.lineno <= (f.end_lineno or f.lineno)]
        return min(inside, key=lambda f: (f.end_lineno or f.lineno) - f.lineno).name if inside else ""

    found = []

    def note(node: ast.AST, what: str) -> None:
        if (relative, where(node)) not in ALLOWED:
            found.append(f"{relative}:{node.lineno}: {what}")

    for node in ast.walk(tree):
        if isinstance(node, ast.Compare):
            for side in [node.left, *node.comparators]:
                for item in _items(side):
                    named = _library_object(item, imported)
                    if named is not None:
                        note(node, f"compares with {named}")
            if any(_module_name(n) for n in ast.walk(node)):
                note(node, "tests a module's name")
        elif isinstance(node, (ast.Set, ast.Dict, ast.Tuple, ast.List)) and not isinstance(
                getattr(node, "ctx", None), ast.Store):
            items = node.keys if isinstance(node, ast.Dict) else node.elts
            for item in items:
                if item is not None and (named := _library_object(item, imported)) is not None:
                    note(node, f"a table of primitives holds {named}")
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and \
                node.func.attr in ("startswith", "endswith") and \
                any(_module_name(n) for n in ast.walk(node.func.value)):
            note(node, "tests a module's name")
    return found


def _modules():
    for folder in FOLDERS:
        for path in sorted((ROOT / folder).rglob("*.py")):
            yield path, path.relative_to(ROOT).as_posix()


def test_no_analysis_transform_pass_or_emitter_names_a_primitive():
    found = sorted({v for path, relative in _modules() for v in violations(path.read_text(), relative)})
    assert not found, "\n".join(found)


def test_the_check_catches_what_it_is_about():
    """Each kind of naming is found (a comparison, a tuple, a set, an imported name, a module test); a type test
    and a call of a library function are not."""
    source = ("import numpy as np\nimport operator\nfrom math import sqrt\n"
              "def f(op, prim, x):\n"
              "    a = op.prim is np.sum\n"
              "    b = prim in (operator.add, np.linalg.solve)\n"
              "    c = {np.zeros, 1}\n"
              "    d = prim is sqrt\n"
              "    e = prim.__module__ == 's2s.rules.fft'\n"
              "    h = x.dtype.type in (np.float32, np.float64)\n"
              "    k = getattr(prim, '__module__', '').startswith('numpy')\n"
              "    m = np.sum(x) + sqrt(2.0)\n")
    found = violations(source, "sample.py")
    lines = sorted({int(v.split(":")[1]) for v in found})
    assert lines == [5, 6, 7, 8, 9, 11], found
