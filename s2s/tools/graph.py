"""The computational graph of a function and of its derivative, drawn from the SSA IR as Graphviz DOT.

    g = s2s.tools.graph(f, 2.0, 5.0)       # example arguments say which are arrays (default: floats)
    print(g)                         # DOT text
    g.render("f.svg")                # .dot, or .svg/.png through Graphviz; in Jupyter g shows itself

Accepts what `s2s.ir.core` accepts and guarantees a `Graph` whose DOT text has one node
per SSA value, labelled with its Wengert line (`v1 = log(x1)`), one per parameter
(the inputs, on the left) and one per result; edges follow data from definition
to use; loops and branches are clusters (`for`, `while` with its test and body,
`if` with then and else), and a loop's carried values take the body's results
back along dashed edges. The function is drawn in black, its derivative beside it
in red, to its right, as the seed draws the reverse sweep.
"""
from __future__ import annotations

import itertools
import os
import shutil
import subprocess
from typing import Any, Callable

from s2s.errors import S2SError
from s2s.ir.core import Block, Const, For, Function, If, Op, Value, While, prim_name


class GraphvizUnavailable(S2SError):
    """Rendering to an image needs Graphviz's `dot` program."""


def _short(prim: Any) -> str:
    name = prim_name(prim)
    if name.startswith("math."):
        return name[len("math."):]
    if name.startswith("numpy."):
        return "np." + name[len("numpy."):]
    if name.startswith("s2s.runtime."):
        return name[len("s2s.runtime."):]
    return name


def _quote(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def _atom(atom: Any) -> str:
    if isinstance(atom, Const) and isinstance(atom.value, float):
        return f"{atom.value:g}" if "e" not in f"{atom.value:g}" else repr(atom.value)
    text = repr(atom)
    return text if len(text) <= 24 else text[:21] + "..."


class _Drawer:
    """Writes one function as a cluster of DOT statements."""

    def __init__(self, prefix: str, color: str, counter: "itertools.count[int]"):
        self.prefix, self.color, self.counter = prefix, color, counter
        self.node_of: dict[int, str] = {}
        self.lines: list[str] = []
        self.edges: list[str] = []

    def node(self, label: str, indent: str, **attrs: str) -> str:
        name = f"{self.prefix}{next(self.counter)}"
        extra = "".join(f", {k}={v}" for k, v in attrs.items())
        self.lines.append(f"{indent}{name} [label={_quote(label)}{extra}];")
        return name

    def edge(self, source: Any, target: str, **attrs: str) -> None:
        if isinstance(source, Value) and id(source) in self.node_of:
            extra = "".join(f", {k}={v}" for k, v in attrs.items())
            self.edges.append(f"  {self.node_of[id(source)]} -> {target} [color={self.color}{extra}];")

    def function(self, fn: Function, title: str) -> list[str]:
        self.lines.append(f"  subgraph cluster_{self.prefix} {{")
        self.lines.append(f"    label={_quote(title)}; color={self.color}; fontcolor={self.color};")
        inputs = []
        for p in fn.params:
            self.node_of[id(p)] = name = self.node(p.name, "    ", shape="ellipse")
            inputs.append(name)
        if inputs:
            self.lines.append(f"    {{ rank=source; {'; '.join(inputs)}; }}")
        self.block(fn.body, "    ")
        outputs = []
        for k, result in enumerate(fn.body.results):
            label = fn.name if len(fn.body.results) == 1 else f"{fn.name}[{k}]"
            if isinstance(result, Const):
                label += f" = {_atom(result)}"
            name = self.node(label, "    ", shape="doubleoctagon")
            self.edge(result, name)
            outputs.append(name)
        if outputs:
            self.lines.append(f"    {{ rank=sink; {'; '.join(outputs)}; }}")
        self.lines.append("  }")
        self.inputs, self.outputs = inputs, outputs
        return self.lines + self.edges

    def block(self, block: Block, indent: str) -> None:
        for stmt in block.stmts:
            if isinstance(stmt, Op):
                self.op(stmt, indent)
            elif isinstance(stmt, If):
                self.branch(stmt, indent)
            elif isinstance(stmt, (While, For)):
                self.loop(stmt, indent)
            else:                           # a statement kind this drawing does not know yet: shown, not lost
                self.node(type(stmt).__name__, indent, shape="note")

    def op(self, op: Op, indent: str) -> None:
        args = [_atom(a) for a in op.args] + [f"{k}={_atom(v)}" for k, v in op.kwargs.items()]
        lhs = ", ".join(v.name for v in op.outs) or "_"
        name = self.node(f"{lhs} = {_short(op.prim)}({', '.join(args)})", indent, shape="box")
        for atom in [*op.args, *op.kwargs.values()]:
            self.edge(atom, name)
        for v in op.outs:
            self.node_of[id(v)] = name

    def cluster(self, label: str, indent: str) -> str:
        self.lines.append(f"{indent}subgraph cluster_{self.prefix}{next(self.counter)} {{")
        self.lines.append(f"{indent}  label={_quote(label)}; style=rounded; color={self.color};")
        return indent + "  "

    def merge(self, outs: list[Value], sources: list[list[Any]], word: str, indent: str) -> None:
        """Nodes for values that merge several definitions (a branch's phis, a loop's results)."""
        for k, out in enumerate(outs):
            parts = ", ".join(_atom(s[k]) for s in sources)
            self.node_of[id(out)] = name = self.node(f"{out.name} = {word}({parts})", indent, shape="box",
                                                     style="rounded")
            for s in sources:
                self.edge(s[k], name)

    def branch(self, stmt: If, indent: str) -> None:
        inner = self.cluster(f"if {_atom(stmt.cond)}", indent)
        for label, block in (("then", stmt.then), ("else", stmt.orelse)):
            self.block_cluster(label, block, inner)
        self.lines.append(f"{indent}}}")
        self.merge(stmt.outs, [stmt.then.results, stmt.orelse.results], "phi", indent)
        for out in stmt.outs:
            self.edge(stmt.cond, self.node_of[id(out)], style="dotted")

    def block_cluster(self, label: str, block: Block, indent: str) -> None:
        inner = self.cluster(label, indent)
        self.block(block, inner)
        if not block.stmts:
            self.node("(nothing)", inner, shape="plaintext")
        self.lines.append(f"{indent}}}")

    def loop(self, stmt: While | For, indent: str) -> None:
        if isinstance(stmt, For):
            bounds = f"range({_atom(stmt.start)}, {_atom(stmt.stop)}, {_atom(stmt.step)})"
            title = f"for {stmt.index.name} in {'reversed(' + bounds + ')' if stmt.reverse else bounds}"
        else:
            title = "while"
        inner = self.cluster(title, indent)
        heads = []
        for carried, init in zip(stmt.carried, stmt.inits):
            label = f"{carried.name} = carried({_atom(init)}, {_atom(stmt.body.results[len(heads)])})"
            self.node_of[id(carried)] = name = self.node(label, inner, shape="box", style="rounded")
            self.edge(init, name)
            heads.append(name)
        if isinstance(stmt, For):
            self.node_of[id(stmt.index)] = index = self.node(stmt.index.name, inner, shape="ellipse")
            for bound in (stmt.start, stmt.stop, stmt.step):
                self.edge(bound, index)
        else:
            self.block_cluster("test", stmt.test, inner)
        self.block_cluster("body", stmt.body, inner)
        self.lines.append(f"{indent}}}")
        for head, result in zip(heads, stmt.body.results):
            self.edge(result, head, style="dashed", constraint="false")
        self.merge(stmt.outs, [stmt.carried], "exit", indent)
        if isinstance(stmt, While) and stmt.test.results:
            for out in stmt.outs:          # the test decides when the loop exits
                self.edge(stmt.test.results[0], self.node_of[id(out)], style="dotted")


class Graph:
    """A computational graph as DOT text (`.source`, or str(graph)); `render(path)` writes .dot, .svg, .png.

    In Jupyter it displays itself as SVG when Graphviz is installed, as DOT text otherwise."""

    def __init__(self, source: str, name: str):
        self.source, self.name = source, name

    def __str__(self) -> str:
        return self.source

    def __repr__(self) -> str:
        return self.source

    def pipe(self, format: str) -> bytes:
        """The graph rendered by Graphviz (the graphviz package when installed, else the `dot` program)."""
        try:
            import graphviz
        except ImportError:
            graphviz = None
        if graphviz is not None:
            try:
                return graphviz.Source(self.source).pipe(format=format)
            except graphviz.ExecutableNotFound:
                pass
        dot = shutil.which("dot")
        if dot is None:
            raise GraphvizUnavailable(f"rendering the graph of {self.name} as {format} needs Graphviz's `dot` "
                                      f"program", hint="install Graphviz (apt-get install graphviz, brew install "
                                      "graphviz), or write the DOT text: render('graph.dot')")
        return subprocess.run([dot, f"-T{format}"], input=self.source.encode(), capture_output=True,
                              check=True).stdout

    def render(self, path: str) -> str:
        """Write the graph to path: DOT text for .dot/.gv, an image for any other extension Graphviz knows."""
        extension = os.path.splitext(path)[1].lstrip(".").lower()
        if extension in ("dot", "gv", ""):
            with open(path, "w") as handle:
                handle.write(self.source)
        else:
            data = self.pipe(extension)
            with open(path, "wb") as handle:
                handle.write(data)
        return path

    def _repr_svg_(self) -> str | None:
        try:
            return self.pipe("svg").decode()
        except (GraphvizUnavailable, OSError, subprocess.CalledProcessError):
            return None            # Jupyter then shows the DOT text


def draw(functions: list[tuple[Function, str]], name: str) -> Graph:
    """One DOT digraph with a cluster per function (the first in black, the others in red)."""
    counter = itertools.count(1)
    lines = [f"digraph {_quote(name)} {{", "  rankdir=LR;", '  node [fontname="Courier", fontsize=11];',
             '  graph [fontname="Helvetica", fontsize=12];']
    previous: _Drawer | None = None
    for k, (fn, title) in enumerate(functions):
        drawer = _Drawer("f" if k == 0 else f"d{k}_", "black" if k == 0 else "red3", counter)
        lines += drawer.function(fn, title)
        if previous is not None and previous.outputs and drawer.inputs:   # the derivative to the right
            lines += [f"  {previous.outputs[0]} -> {name} [style=invis];" for name in drawer.inputs]
        previous = drawer
    lines.append("}")
    return Graph("\n".join(lines) + "\n", name)


def graph(fn: Callable, *args: Any, wrt: Any = 0, mode: str = "reverse", derivative: bool = True,
          optimize: bool = True) -> Graph:
    """The computational graph of fn (from its SSA IR) and, unless derivative=False, of its derivative
    (mode "reverse", "forward", "hvp" or "vjp", with respect to wrt), side by side.

    Example arguments say which arguments are arrays (default: floats), as for `s2s.source`."""
    from s2s.analysis.values import kind_of
    from s2s.api import _example_args, _options_for, _underlying, derivative_ir, function_ir

    fn = _underlying(fn)
    kinds = [kind_of(a) for a in _example_args(fn, args)]
    primal = function_ir(fn, kinds)
    functions = [(primal, f"{primal.name}({', '.join(p.name for p in primal.params)})")]
    if derivative:
        options = _options_for(fn, wrt, mode, False, optimize)
        derived = derivative_ir(fn, options, kinds)
        functions.append((derived, f"{derived.name}({', '.join(p.name for p in derived.params)}), {mode} mode"))
    return draw(functions, getattr(fn, "__qualname__", primal.name))
