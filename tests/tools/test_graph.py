"""s2s.graph and `s2s graph`: the computational graph of a function and its derivative, as DOT text."""
import os
import re
import shutil
import sys

import pytest

import s2s
from s2s.cli import load_function, main
from s2s.tools.graph import Graph, GraphvizUnavailable
from conftest import PYTHON

EXAMPLES = os.path.join(os.path.dirname(__file__), "..", "..", "examples")
HAVE_DOT = shutil.which("dot") is not None
NEEDS_DOT = pytest.mark.skipif(not HAVE_DOT, reason="Graphviz's `dot` program is not installed "
                                                    "(apt-get install graphviz)")


def parse(dot: str) -> dict:
    """The DOT text as {cluster name: {"label", "nodes": {id: label}, "parent"}} and a list of edges."""
    clusters = {None: {"label": None, "nodes": {}, "parent": None, "attrs": ""}}
    stack = [None]
    edges = []
    for line in dot.splitlines():
        line = line.strip()
        if m := re.match(r"subgraph (cluster_\w+) \{", line):
            clusters[m[1]] = {"label": None, "nodes": {}, "parent": stack[-1], "attrs": ""}
            stack.append(m[1])
        elif line == "}":
            stack.pop()
        elif m := re.match(r'label="(.*?)"; (.*)', line):
            clusters[stack[-1]]["label"], clusters[stack[-1]]["attrs"] = m[1], m[2]
        elif m := re.match(r"(\w+) -> (\w+) \[(.*)\];", line):
            edges.append((m[1], m[2], m[3]))
        elif m := re.match(r'(\w+) \[label="(.*?)"(.*)\];', line):
            clusters[stack[-1]]["nodes"][m[1]] = m[2]
    assert stack == [] or stack == [None], "unbalanced braces"
    return {"clusters": clusters, "edges": edges}


def nodes_in(parsed: dict, top: str) -> dict:
    """The nodes of a cluster and of the clusters nested in it."""
    names = {top}
    for _ in range(10):
        names |= {c for c, info in parsed["clusters"].items() if info["parent"] in names}
    return {n: label for c in names for n, label in parsed["clusters"][c]["nodes"].items()}


def expression(node: str, labels: dict, edges: list) -> str:
    """The expression a node computes, read off the graph: its operation applied to its inputs' expressions."""
    inputs = [a for a, b, attrs in edges if b == node and "invis" not in attrs]
    label = labels[node]
    if not inputs:
        return label
    op = label.split(" = ", 1)[1].split("(", 1)[0] if " = " in label else "out"
    # the inputs in the order the label names them
    names = re.findall(r"[\w.]+", label.split("(", 1)[1]) if "(" in label else []
    def position(a):
        name = labels[a].split(" = ", 1)[0]
        return names.index(name) if name in names else 0
    return f"{op}({', '.join(expression(a, labels, edges) for a in sorted(inputs, key=position))})"


def seed_function():
    return load_function(os.path.join(EXAMPLES, "quickstart.py") + ":f")


def test_the_seed_example_is_drawn_as_the_seed_draws_it():
    # The seed's drawing of f(x1, x2) = ln(x1) + x1*x2 - sin(x2): inputs v-1 = x1 and v0 = x2 on the left,
    # v1 = ln v-1, v2 = v-1 * v0, v3 = sin v0, v4 = v1 + v2, v5 = v4 - v3, then the output f = v5.
    seed = {"v-1": "x1", "v0": "x2", "v1": ("log", "v-1"), "v2": ("mul", "v-1", "v0"), "v3": ("sin", "v0"),
            "v4": ("add", "v1", "v2"), "v5": ("sub", "v4", "v3")}

    def seed_expression(name):
        entry = seed[name]
        return entry if isinstance(entry, str) else f"{entry[0]}({', '.join(map(seed_expression, entry[1:]))})"

    dot = s2s.graph(seed_function(), 2.0, 5.0, wrt=(0, 1)).source
    parsed = parse(dot)
    assert "rankdir=LR;" in dot                                   # left to right, as drawn in the seed
    primal = nodes_in(parsed, "cluster_f")
    assert parsed["clusters"]["cluster_f"]["label"] == "f(x1, x2)"
    assert sorted(primal.values()) == sorted(["x1", "x2", "v1 = log(x1)", "v2 = mul(x1, x2)", "v3 = add(v1, v2)",
                                               "v4 = sin(x2)", "v5 = sub(v3, v4)", "f"])
    inner_edges = [e for e in parsed["edges"] if e[0] in primal and e[1] in primal]
    assert len(inner_edges) == 9                                  # one per arrow of the seed's drawing
    output = next(n for n, label in primal.items() if label == "f")
    assert expression(output, primal, inner_edges) == f"out({seed_expression('v5')})"
    inputs = [n for n, label in primal.items() if label in ("x1", "x2")]
    assert re.search(r"\{ rank=source; " + "; ".join(inputs) + "; \\}", dot)


def test_the_derivative_is_drawn_beside_it_in_red():
    parsed = parse(s2s.graph(seed_function(), 2.0, 5.0, wrt=(0, 1)).source)
    derivative = parsed["clusters"]["cluster_d1_"]
    assert derivative["label"] == "f_grad(x1, x2), reverse mode" and "color=red3" in derivative["attrs"]
    labels = nodes_in(parsed, "cluster_d1_")
    assert "v8 = cos(x2)" in labels.values() or any(re.fullmatch(r"\w+ = cos\(x2\)", v) for v in labels.values())
    assert any(label.startswith("dx1") for label in labels.values())
    assert all("red3" in attrs for a, b, attrs in parsed["edges"] if b in labels and a in labels)
    # invisible edges from the function's output to the derivative's inputs put it to the right
    out = next(n for n, label in nodes_in(parsed, "cluster_f").items() if label == "f")
    assert {b for a, b, attrs in parsed["edges"] if a == out and "invis" in attrs} == \
        {n for n, label in labels.items() if label in ("x1", "x2")}
    alone = parse(s2s.graph(seed_function(), derivative=False).source)
    assert list(alone["clusters"]) == [None, "cluster_f"]


def test_loops_and_branches_are_clusters(make_fn):
    newton = load_function(os.path.join(EXAMPLES, "newton_sqrt.py") + ":newton_sqrt")
    parsed = parse(s2s.graph(newton, 2.0).source)
    labels = {info["label"] for info in parsed["clusters"].values()}
    assert {"while", "test", "body"} <= labels                      # the function's loop
    assert any(str(label).startswith("for _ in range(") for label in labels)   # the reverse sweep's loop
    carried = [(n, label) for n, label in nodes_in(parsed, "cluster_f").items() if " = carried(" in label]
    assert len(carried) == 1 and re.fullmatch(r"x = carried\(a, x\.\d+\)", carried[0][1])
    assert any(b == carried[0][0] and "dashed" in attrs for a, b, attrs in parsed["edges"])   # the back edge

    branchy = make_fn("""
def f(x, y):
    if x > y:
        z = x * y
    else:
        z = math.sin(x)
    return z + y
""")
    parsed = parse(s2s.graph(branchy, 1.0, 2.0, wrt=0).source)
    primal_clusters = {c: info for c, info in parsed["clusters"].items() if c and info["parent"] == "cluster_f"}
    (cluster, info), = primal_clusters.items()
    assert re.fullmatch(r"if v\d+", info["label"])
    assert sorted(i["label"] for i in parsed["clusters"].values() if i["parent"] == cluster) == ["else", "then"]
    phi = [label for label in nodes_in(parsed, "cluster_f").values() if "= phi(" in label]
    assert len(phi) == 1 and re.fullmatch(r"z[.\d]* = phi\(z[.\d]*, z[.\d]*\)", phi[0])


def test_derivative_modes_and_loops_in_reverse():
    euler = load_function(os.path.join(EXAMPLES, "euler_ode.py") + ":euler")
    dot = s2s.graph(euler, 0.5, 1.0, 0.1, 10, wrt=0).source
    parsed = parse(dot)
    loops = [info["label"] for info in parsed["clusters"].values() if str(info["label"]).startswith("for ")]
    assert len(loops) >= 3                     # the function's loop, the forward and the reverse sweep
    forward = parse(s2s.graph(seed_function(), wrt=0, mode="forward").source)
    assert forward["clusters"]["cluster_d1_"]["label"].endswith("forward mode")
    assert "x1_dot" in nodes_in(forward, "cluster_d1_").values()


@NEEDS_DOT
def test_rendered_through_graphviz(tmp_path):
    g = s2s.graph(seed_function())
    svg = g._repr_svg_()
    assert svg.lstrip().startswith("<?xml") and "v1 = log(x1)" in svg and "</svg>" in svg
    g.render(str(tmp_path / "f.png"))
    assert (tmp_path / "f.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_without_graphviz_the_dot_text_is_what_it_shows(monkeypatch, tmp_path):
    monkeypatch.setitem(sys.modules, "graphviz", None)          # the package is missing
    monkeypatch.setattr(shutil, "which", lambda name: None)     # and so is the dot program
    g = s2s.graph(seed_function())
    assert isinstance(g, Graph) and g._repr_svg_() is None and repr(g) == str(g) == g.source
    with pytest.raises(GraphvizUnavailable, match="needs Graphviz's `dot` program"):
        g.render(str(tmp_path / "f.svg"))
    g.render(str(tmp_path / "f.dot"))
    assert (tmp_path / "f.dot").read_text() == g.source


def test_cli_prints_and_writes_the_graph(tmp_path, capsys):
    target = os.path.join(EXAMPLES, "quickstart.py") + ":f"
    assert main(["graph", target]) == 0
    out = capsys.readouterr().out
    assert out.startswith('digraph "f" {') and '[label="v1 = log(x1)"' in out
    assert main(["graph", target, "--no-derivative", "-o", str(tmp_path / "f.dot")]) == 0
    assert "cluster_d1_" not in (tmp_path / "f.dot").read_text()
    assert main(["graph", "nowhere.py:f"]) == 1
    assert "nowhere.py: no such file" in capsys.readouterr().err


@NEEDS_DOT
def test_cli_writes_svg(tmp_path):
    out = tmp_path / "graph.svg"
    result = PYTHON.run("-m", "s2s", "graph", os.path.join(EXAMPLES, "quickstart.py") + ":f", "-o", str(out))
    assert result.returncode == 0, result.stderr
    assert "<svg" in out.read_text() and "dx1" in out.read_text()
