"""The `s2s` command: print the derivative of a function in a file as Python source.

    s2s graph path/to/file.py:func [-o graph.svg|graph.png|graph.dot] [--wrt x] [--mode forward]

    s2s rules [--markdown] [--import mypkg.rules]

    s2s export path/to/file.py:func [--wrt x,y] [--mode forward] [--order 2] [--arrays W,b] -o out.py

    s2s path/to/file.py:func [--wrt x,y] [--mode forward] [--order 2] [--ir] [--arrays W,b] [--with-value]
        [--no-optimize]
"""
from __future__ import annotations

import argparse
import importlib.util
import os
import sys
import types
from typing import Any

import numpy as np

from s2s.analysis.shapes import AnyShape
from s2s.api import __version__, batched, export, ir, root_function, source, vmap
from s2s.errors import S2SError


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="s2s",
        description="Print the derivative of a Python function as Python source. The printed code is exactly "
                    "what s2s runs, and it runs with only NumPy installed. `s2s export --help` for writing "
                    "it to a standalone module.")
    parser.add_argument("target", metavar="FILE.py:FUNCTION", help="the file and the function in it to differentiate")
    parser.add_argument("--wrt", default=None,
                        help="comma-separated argument names (or positions) to differentiate with respect to; "
                             "default: every argument")
    parser.add_argument("--ir", action="store_true",
                        help="print the SSA IR instead: the function's, then its derivative's")
    parser.add_argument("--arrays", default="",
                        help="comma-separated names of the arguments that are NumPy arrays (the others are taken "
                             "as floats); the generated code differs only where broadcasting can happen")
    parser.add_argument("--args", default=None, metavar="EXPRESSION",
                        help="example arguments, a Python expression evaluated in the file's namespace, such as "
                             "\"init(), X, Y\": needed for containers (a dict of parameters)")
    parser.add_argument("--mode", default="auto", choices=["auto", "reverse", "forward"],
                        help="auto (the default): the gradient, in forward mode along one float argument and in "
                             "reverse mode otherwise (the header says which and why); reverse: the gradient (one "
                             "reverse sweep); forward: the directional derivative, "
                             "with a tangent parameter x_dot per differentiated argument (one forward sweep)")
    parser.add_argument("--order", type=int, default=1, choices=[1, 2],
                        help="2: the second derivative, forward over reverse (a Hessian-vector product "
                             "with a tangent parameter per argument)")
    parser.add_argument("--with-value", action="store_true",
                        help="generate value_and_grad: return the function's value and its gradient")
    parser.add_argument("--no-optimize", action="store_true",
                        help="show the raw transform, before the optimizing passes")
    parser.add_argument("--backend", default=None, choices=["python", "numba"],
                        help="numba: the code Numba compiles (the default for an @njit function)")
    parser.add_argument("--vmap", default=None, metavar="IN_AXES",
                        help="print the function batched by s2s.vmap instead, with these in_axes (a Python "
                             "expression: 0, \"(None, 0, 0)\"); give the batch's arguments with --args")
    parser.add_argument("--out-axes", default="0", metavar="OUT_AXES", help="with --vmap: s2s.vmap's out_axes")
    parser.add_argument("--version", action="version", version=f"s2s {__version__}")
    return parser


def _fail(message: str) -> int:
    print(f"s2s: error: {message}", file=sys.stderr)
    return 1


def load_function(target: str) -> Any:
    """Import FILE.py and return its FUNCTION; raises LookupError with a one-line reason."""
    path, sep, name = target.rpartition(":")
    if not sep or not path or not name:
        raise LookupError(f"{target}: expected FILE.py:FUNCTION")
    if not os.path.isfile(path):
        raise LookupError(f"{path}: no such file")
    directory = os.path.dirname(os.path.abspath(path))
    if directory not in sys.path:
        sys.path.insert(0, directory)
    module_name = "_s2s_target_" + os.path.splitext(os.path.basename(path))[0]
    spec = importlib.util.spec_from_file_location(module_name, path)
    if spec is None or spec.loader is None:
        raise LookupError(f"{path}: cannot be imported as a Python module")
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module
    try:
        spec.loader.exec_module(module)
    except SyntaxError as exc:
        raise LookupError(f"{path}:{exc.lineno}: syntax error: {exc.msg}") from None
    except RecursionError as exc:       # Python's compiler: an expression nested deeper than it compiles
        raise LookupError(f"{path}: Python cannot compile it: {exc}") from None
    except (Exception, SystemExit) as exc:      # an import error, or the file's own code failing when imported
        raise LookupError(f"{path}:{_failing_line(exc, path)}: importing it raised {type(exc).__name__}: "
                          f"{str(exc).splitlines()[0] if str(exc) else ''}".rstrip(": ")) from None
    fn = getattr(module, name, None)
    if fn is None:
        raise LookupError(f"{path}:1: no function named {name!r}")
    if isinstance(fn, (types.ModuleType, type)) or not callable(fn):
        what = "a module" if isinstance(fn, types.ModuleType) else "a class" if isinstance(fn, type) else \
            f"a constant ({type(fn).__name__})"
        raise LookupError(f"{path}:1: {name!r} is {what}, not a function")
    # a derivative made with @s2s.grad stands for its function; any other decorator's wrapper is read as itself; a
    # function s2s.vmap made is shown batched
    if hasattr(fn, "__s2s__") and not batched(fn):
        return fn.__wrapped__
    return fn


def _failing_line(exc: BaseException, path: str) -> int:
    """The line of the target file an exception raised while importing it was raised at (its last frame there)."""
    line, tb, target = 1, exc.__traceback__, os.path.abspath(path)
    while tb is not None:
        if os.path.abspath(tb.tb_frame.f_code.co_filename) == target:
            line = tb.tb_lineno
        tb = tb.tb_next
    return line


def _export_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="s2s export",
        description="Write the derivative of a function as a standalone module: it imports NumPy, not s2s. "
                    "Exporting twice gives the same bytes.")
    parser.add_argument("target", metavar="FILE.py:FUNCTION", help="the file and the function in it to differentiate")
    parser.add_argument("--wrt", default=None, help="comma-separated argument names or positions; default: all")
    parser.add_argument("--mode", default="auto", choices=["auto", "reverse", "forward"],
                        help="auto: the gradient, forward mode along one float, else reverse; reverse: the "
                             "gradient; forward: the directional derivative (jvp)")
    parser.add_argument("--order", type=int, default=1, choices=[1, 2], help="2: the second derivative (hvp)")
    parser.add_argument("--arrays", default="", help="comma-separated names of the arguments that are NumPy arrays")
    parser.add_argument("--args", default=None, metavar="EXPRESSION",
                        help="example arguments, a Python expression evaluated in the file's namespace (\"init(), X\")")
    parser.add_argument("--backend", default=None, choices=["python", "numba"],
                        help="numba: a module compiled by numba.njit (the default for an @njit function)")
    parser.add_argument("--vmap", default=None, metavar="IN_AXES",
                        help="export the function batched by s2s.vmap instead, with these in_axes (and --args)")
    parser.add_argument("--out-axes", default="0", metavar="OUT_AXES", help="with --vmap: s2s.vmap's out_axes")
    parser.add_argument("-o", "--output", required=True, help="the module to write")
    return parser


def _batched(fn: Any, args: Any) -> Any:
    """fn batched by s2s.vmap as --vmap and --out-axes say (fn itself without --vmap)."""
    if args.vmap is None:
        return fn
    try:
        in_axes, out_axes = eval(args.vmap, {}), eval(args.out_axes, {})
    except Exception as exc:
        raise LookupError(f"--vmap {args.vmap!r} / --out-axes {args.out_axes!r}: {type(exc).__name__}: {exc}") \
            from None
    return vmap(fn, in_axes=in_axes, out_axes=out_axes)


def _wrt_and_example(fn: Any, wrt_text: str | None, arrays_text: str, args_text: str | None = None
                     ) -> tuple[Any, tuple]:
    fn = root_function(fn)
    names = list(fn.__code__.co_varnames[:fn.__code__.co_argcount])
    wrt: Any = tuple(range(len(names))) if len(names) > 1 else 0
    if wrt_text:
        items = [int(w) if w.strip().lstrip("-").isdigit() else w.strip() for w in wrt_text.split(",")]
        wrt = tuple(items) if len(items) > 1 else items[0]
    if args_text is not None:
        try:
            example = eval(f"({args_text},)", dict(fn.__globals__))
        except Exception as exc:
            raise LookupError(f"--args {args_text!r}: {type(exc).__name__}: {exc}") from None
        return wrt, tuple(example)
    arrays = {a.strip() for a in arrays_text.split(",") if a.strip()}
    unknown = arrays - set(names)
    if unknown:
        raise LookupError(f"--arrays names {', '.join(sorted(unknown))}, which {fn.__name__} does not take")
    return wrt, tuple(np.zeros(1).view(AnyShape) if n in arrays else 1.0 for n in names)   # shapes unknown


def export_main(argv: list[str]) -> int:
    args = _export_parser().parse_args(argv)
    try:
        fn = load_function(args.target)
        wrt, example = _wrt_and_example(fn, args.wrt, args.arrays, args.args)
    except LookupError as exc:
        return _fail(str(exc))
    try:
        fn = _batched(fn, args)
    except LookupError as exc:
        return _fail(str(exc))
    try:
        text = export(fn, *example, wrt=wrt, mode=args.mode, order=args.order,
                      source_path=args.target.rpartition(":")[0], backend=args.backend)
    except S2SError as exc:
        return _fail(exc.one_line())
    with open(args.output, "w") as handle:
        handle.write(text)
    print(f"wrote {args.output}")
    return 0


def _graph_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="s2s graph",
        description="Draw the computational graph of a function and of its derivative, from the SSA IR: one node "
                    "per value labelled with its Wengert line (v1 = log(x1)), loops and branches as clusters. "
                    "Prints DOT text, or writes -o FILE (.dot, or .svg/.png through Graphviz).")
    parser.add_argument("target", metavar="FILE.py:FUNCTION", help="the file and the function in it to draw")
    parser.add_argument("-o", "--output", default=None,
                        help="graph.dot, graph.svg or graph.png; default: DOT text on stdout")
    parser.add_argument("--wrt", default=None, help="comma-separated argument names or positions; default: all")
    parser.add_argument("--mode", default="reverse", choices=["reverse", "forward", "hvp", "vjp"],
                        help="which derivative to draw beside the function")
    parser.add_argument("--arrays", default="", help="comma-separated names of the arguments that are NumPy arrays")
    parser.add_argument("--args", default=None, metavar="EXPRESSION",
                        help="example arguments, a Python expression evaluated in the file's namespace")
    parser.add_argument("--no-derivative", action="store_true", help="draw the function alone")
    return parser


def graph_main(argv: list[str]) -> int:
    from s2s.tools.graph import graph
    args = _graph_parser().parse_args(argv)
    try:
        fn = load_function(args.target)
        wrt, example = _wrt_and_example(fn, args.wrt, args.arrays, args.args)
    except LookupError as exc:
        return _fail(str(exc))
    try:
        drawing = graph(fn, *example, wrt=wrt, mode=args.mode, derivative=not args.no_derivative)
        if args.output is None:
            print(drawing.source, end="")
            return 0
        drawing.render(args.output)
    except S2SError as exc:
        return _fail(exc.one_line())
    print(f"wrote {args.output}")
    return 0


def rules_main(argv: list[str]) -> int:
    from s2s.testing.rulecheck import rule_table
    parser = argparse.ArgumentParser(
        prog="s2s rules", description="List every registered derivative rule: the function, the module of its "
                                      "rule, and the modes it supports (reverse, forward), one per line.")
    parser.add_argument("--markdown", action="store_true", help="a Markdown table (as in the README)")
    parser.add_argument("--import", dest="modules", action="append", default=[], metavar="MODULE",
                        help="import MODULE first (it registers rules); may be repeated")
    args = parser.parse_args(argv)
    for module in args.modules:
        try:
            importlib.import_module(module)
        except ImportError as exc:
            return _fail(f"--import {module}: {exc}")
    rows = rule_table()
    if args.markdown:
        print(markdown_rule_table(rows), end="")
        return 0
    width = max(len(r[0]) for r in rows)
    module_width = max(len(r[1]) for r in rows)
    for name, module, modes in rows:
        print(f"{name.ljust(width)}  {module.ljust(module_width)}  {modes}")
    return 0


def markdown_rule_table(rows: list[tuple[str, str, str]]) -> str:
    """The README's rule catalogue: a row per rule module listing its functions (both modes unless marked)."""
    groups: dict[str, list[str]] = {}
    marks = {"reverse": " (reverse only)", "forward": " (forward only)"}
    for name, module, modes in rows:
        if module == "(declared)":
            group = "declared nondifferentiable" if modes == "nondifferentiable" else "declared linear"
            groups.setdefault(group, []).append(f"`{name}`")
        else:
            groups.setdefault(f"`{module}`", []).append(f"`{name}`{marks.get(modes, '')}")
    lines = ["| rules | functions (reverse and forward mode unless marked) |", "| --- | --- |"]
    lines += [f"| {group} | {', '.join(names)} |" for group, names in groups.items()]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    try:
        return _main(argv)
    except BrokenPipeError:         # `s2s rules | head`: the reader stopped reading
        try:                        # (the interpreter's last flush of stdout would raise again)
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        except (OSError, ValueError):
            pass
        return _fail("the output was closed before it was all written (broken pipe)")


def _main(argv: list[str]) -> int:
    if argv[:1] == ["export"]:
        return export_main(argv[1:])
    if argv[:1] == ["graph"]:
        return graph_main(argv[1:])
    if argv[:1] == ["rules"]:
        return rules_main(argv[1:])
    args = _parser().parse_args(argv)
    try:
        fn = load_function(args.target)
    except LookupError as exc:
        return _fail(str(exc))
    try:
        wrt, example = _wrt_and_example(fn, args.wrt, args.arrays, args.args)
    except LookupError as exc:
        return _fail(str(exc))
    try:
        fn = _batched(fn, args)
    except LookupError as exc:
        return _fail(str(exc))
    try:
        if batched(fn):             # s2s.vmap's batched code, for the example batch
            print(source(fn, *example), end="")
            return 0
        if args.ir:
            print(ir(fn))
            mode = "hvp" if args.order == 2 else args.mode
            print(ir(fn, *example, wrt=wrt, mode=mode, with_value=args.with_value, optimize=not args.no_optimize),
                  end="")
        else:
            print(source(fn, *example, wrt=wrt, mode=args.mode, order=args.order, with_value=args.with_value,
                         optimize=not args.no_optimize, backend=args.backend), end="")
    except S2SError as exc:
        return _fail(exc.one_line())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
