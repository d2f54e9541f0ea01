"""The front end's cost (issue 15, item 7): reading, parsing, desugaring and lowering a function do work linear in
its size, and the shortcuts that make them fast give what the slow paths gave.

- s2s/frontend/parsing.py's direct ast-to-gast converter builds gast.parse's tree, node for node, field for field, with
  the same locations; its index of a file's definitions gives inspect.getsourcelines' lines.
- a desugaring rewrite whose construct does not occur is not run (with S2S_VERIFY=1, as in this suite, every
  skipped rewrite also runs on a copy and must leave it unchanged: s2s/frontend/desugar/__init__.py).
- the nodes the front end walks grow as the function does (no count of time: the machines are shared).
"""
from __future__ import annotations

import ast
import cProfile
import importlib
import inspect
import linecache
import math
import pathlib
import pkgutil
import pstats
import types

import gast
import pytest

import s2s
from s2s import api
from s2s.frontend import parsing

ROOT = pathlib.Path(s2s.__file__).resolve().parent


def _same(a, b, path="tree"):
    assert type(a) is type(b), (path, type(a), type(b))
    if isinstance(a, list):
        assert len(a) == len(b), path
        for k, (x, y) in enumerate(zip(a, b)):
            _same(x, y, f"{path}[{k}]")
    elif isinstance(a, ast.AST):
        assert list(vars(a)) == list(vars(b)), (path, list(vars(a)), list(vars(b)))
        for key in vars(a):
            _same(getattr(a, key), getattr(b, key), f"{path}.{key}")
    else:
        assert a is b or a == b or (a != a and b != b), (path, a, b)


def _sources() -> list[pathlib.Path]:
    files = sorted(ROOT.rglob("*.py")) + sorted((ROOT.parent / "tests").rglob("*.py"))
    return [f for f in files if f.is_file()]


_SYNTAX = "\n".join([       # the rarer syntax, each form once
    "@d(1)\nasync def f(a, /, b: int = 2, *c, d, e=3, **g) -> None:\n"
    "    try:\n        pass\n    except (E, F) as h:\n        raise\n    except E:\n        pass\n"
    "    async with m as n:\n        yield [i async for i in j if i]\n",
    "class K(B, metaclass=M):\n    x: int = 1\n    def m(self): return {**a, 'b': f'{x!r:>{w}}'}, {1, 2}\n",
    "match p:\n    case [1, *rest] if rest: pass\n    case {'k': v, **kw}: pass\n    case Point(x=0) | None: pass\n",
    "global q\nlambda *a, k=1, **b: (yield)\nx = a[1:2, ::3, ...] @ b; del x\nimport a.b as c\n"
    "from .. import d as e\nwhile (w := 1): break\nelse: continue\n",
])


def test_the_direct_converter_builds_gasts_tree_node_for_node():
    """The rarer syntax above, and the front end's own modules (s2s/frontend: every common construct). Every file
    of s2s and of the tests: test_the_direct_converter_on_every_file (-m slow)."""
    files = sorted((ROOT / "frontend").rglob("*.py"))
    assert len(files) > 20
    for source in [f.read_text() for f in files] + [_SYNTAX]:
        _same(gast.parse(source), parsing.parse(source))


@pytest.mark.slow
def test_the_direct_converter_on_every_file():
    """A large suite (18 s in the default run before it moved here): every file of s2s and of the tests."""
    files = _sources()
    assert len(files) > 40
    for source in [f.read_text() for f in files] + [_SYNTAX]:
        _same(gast.parse(source), parsing.parse(source))


def _functions():
    """Every function of s2s's modules and of their classes (decorated ones by their code object's function)."""
    seen = set()
    for info in pkgutil.walk_packages([str(ROOT)], "s2s."):
        if "numba" in info.name or info.name.endswith("__main__"):
            continue
        try:
            module = importlib.import_module(info.name)
        except Exception:
            continue
        holders = [module] + [c for c in vars(module).values()
                              if isinstance(c, type) and c.__module__ == module.__name__]
        for holder in holders:
            for value in vars(holder).values():
                fn = getattr(value, "__func__", value)
                fn = getattr(fn, "fget", fn)
                while hasattr(fn, "__wrapped__") and not isinstance(fn, types.FunctionType):
                    fn = fn.__wrapped__
                if isinstance(fn, types.FunctionType) and fn.__module__ == module.__name__ \
                        and fn.__name__ != "<lambda>" and id(fn.__code__) not in seen \
                        and fn.__code__.co_filename.endswith(".py"):
                    seen.add(id(fn.__code__))
                    yield fn


def test_the_definition_index_reads_the_lines_inspect_reads():
    checked = 0
    for fn in _functions():
        code = fn.__code__
        found = parsing.definition(code.co_filename, code.co_firstlineno, code.co_name, fn.__globals__)
        lines, first = inspect.getsourcelines(code)
        assert found is not None, fn.__qualname__
        assert first == code.co_firstlineno and found[0] == lines, fn.__qualname__
        checked += 1
    assert checked > 500


def test_a_definition_the_file_no_longer_holds_is_left_to_inspect(tmp_path):
    path = tmp_path / "edited_module.py"
    path.write_text("def f(x):\n    return x * 2.0\n")
    spec = importlib.util.spec_from_file_location("edited_module", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert parsing.definition(str(path), 1, "f", vars(module))[0] == ["def f(x):\n", "    return x * 2.0\n"]
    path.write_text("def g(x):\n    return x * 3.0\n")       # f's lines now hold another function
    linecache.checkcache(str(path))
    assert parsing.definition(str(path), 1, "f", vars(module)) is None
    with pytest.raises(s2s.SourceUnavailable, match="changed since"):
        s2s.grad(module.f)(1.0)


# ---------------------------------------------------------------- work counted

def _model(text: str, tag: str):
    filename = f"<frontend-cost-{tag}>"
    linecache.cache[filename] = (len(text), None, text.splitlines(True), filename)
    scope = {"math": math}
    exec(compile(text, filename, "exec"), scope)
    return scope["model"]


def chain(lines: int) -> str:
    return "def model(c, y):\n    a0 = c * y\n" + "".join(
        f"    a{i} = math.sin(a{i - 1}) * c + y * a{i - 1}\n" for i in range(1, lines - 2)) + \
        f"    return a{lines - 3}\n"


def loops(blocks: int) -> str:
    """A function of many small loops, each over a value the one before computed."""
    return "def model(c, y):\n    a0 = c * y\n" + "".join(
        f"    a{i} = a{i - 1}\n    for k in range(2):\n        a{i} = math.sin(a{i}) * c + y\n"
        for i in range(1, blocks)) + f"    return a{blocks - 1} + k\n"


def aliases(lines: int) -> str:
    """A module named by a new local variable at every other line (`m3 = math`, then `m3.sin(...)`): each call's
    callee is looked up through a variable assigned once (desugar/context.py's _static_local)."""
    return "def model(c, y):\n    a0 = c * y\n" + "".join(
        f"    m{i} = math\n    a{i} = m{i}.sin(a{i - 1}) * c + y\n" for i in range(1, lines // 2 - 1)) + \
        f"    return a{lines // 2 - 2}\n"


def _walked(text: str, tag: str) -> int:
    """Nodes the front end walks (and rewrites it runs) to lower the function: those parsing.walk lists, and those
    gast.walk yields (a walk of the whole tree for each variable looked up was one, and made lowering quadratic)."""
    counted = [0]
    walk, gast_walk = parsing.walk, gast.walk

    def counting(root):
        found = walk(root)
        counted[0] += len(found)
        return found

    def counting_gast(root):
        for node in gast_walk(root):
            counted[0] += 1
            yield node
    parsing.walk, gast.walk = counting, counting_gast
    try:
        api.lowered(_model(text, tag))
    finally:
        parsing.walk, gast.walk = walk, gast_walk
    return counted[0]


@pytest.mark.parametrize("make", [chain, loops, aliases], ids=["straight line", "many loops", "aliases"])
def test_the_nodes_the_front_end_walks_grow_as_the_function(make):
    few, many = _walked(make(60), f"{make.__name__}-60"), _walked(make(240), f"{make.__name__}-240")
    assert few > 0 and many / few < 4.6, (few, many)


def imported(x, xs):
    import math as m
    return m.sin(x)


def raising(x, xs):
    if x < 0:
        raise ValueError(f"{x} < 0")
    return x


def nested(x, xs):
    def g(v):
        return v * x
    return g(1.0) + sum(map(g, xs))


def generator(x, xs):
    return max(v * x for v in xs)


def loop_else(x, xs):
    for v in xs:
        x = x + v
    else:
        x = x * 2.0
    return x


def _ran(profile) -> set:
    # (known_values' construct is any call, branch or loop that a known value may decide, properties' any
    # attribute read: they run on nearly every function, and are left out of the sets compared)
    return {pathlib.Path(key[0]).stem for key in pstats.Stats(profile).stats
            if key[2] == "rewrite" and "desugar" in key[0]} - {"context", "known_values", "properties"}


def test_only_the_rewrites_whose_construct_occurs_run(monkeypatch):
    monkeypatch.delenv("S2S_VERIFY")          # (which runs the skipped ones too, on a copy)
    model = _model(chain(40), "rewrites")
    profile = cProfile.Profile()
    profile.enable()
    api.lowered(model)
    profile.disable()
    ran = _ran(profile)
    assert ran == {"objects"}, ran           # math.sin(...) calls: resolved as calls through objects, nothing else
    expected = {imported: {"imports", "objects"}, raising: {"statements", "objects", "function_choice"},
                nested: {"closures", "comprehensions", "objects", "signature"}, generator: {"comprehensions", "reductions",
                                                                             "objects"},
                loop_else: {"loop_else", "objects"}}
    for fn, rewrites in expected.items():
        profile = cProfile.Profile()
        profile.enable()
        api.lowered(fn)
        profile.disable()
        assert _ran(profile) == rewrites, (fn.__name__, _ran(profile))
        eps = 1e-6
        numeric = (fn(0.5 + eps, [0.1, 0.2]) - fn(0.5 - eps, [0.1, 0.2])) / (2 * eps)
        assert s2s.grad(fn)(0.5, [0.1, 0.2]) == pytest.approx(numeric, rel=1e-5)
