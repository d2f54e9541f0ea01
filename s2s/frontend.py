"""Front end: a Python function object to its checked gast tree.

`parse_function(fn)` reads the source with `inspect`, dedents and parses it with
gast, strips the decorators, and runs the fence: every construct outside the
supported set is refused here, before any transform, with `file:line:col`.
The result also knows the function's namespace (globals, closure cells,
builtins), so that lowering can resolve each free name to the object it names.
"""
from __future__ import annotations

import builtins
import inspect
import textwrap
import types
from dataclasses import dataclass, field
from typing import Any

import gast

from .errors import SourceUnavailable, UnsupportedSyntax
from .ir import Loc


@dataclass
class ParsedFunction:
    fn: Any
    node: gast.FunctionDef
    filename: str
    line_offset: int          # add to a gast line number to get the file's line
    col_offset: int           # the indentation removed by dedent
    lines: list[str]          # the file's lines, for error messages
    closure: dict[str, Any] = field(default_factory=dict)   # name -> cell

    @property
    def globals(self) -> dict[str, Any]:
        return self.fn.__globals__

    def loc(self, node: Any) -> Loc:
        line = getattr(node, "lineno", None)
        if line is None:
            return Loc(self.filename, self.line_offset + self.node.lineno, self.col_offset)
        line += self.line_offset
        text = self.lines[line - 1] if 0 < line <= len(self.lines) else ""
        return Loc(self.filename, line, getattr(node, "col_offset", 0) + self.col_offset, text)

    def resolve(self, name: str) -> tuple[bool, Any]:
        """(found, object) for a free name, looked up as Python would at this moment."""
        if name in self.closure:
            try:
                return True, self.closure[name].cell_contents
            except ValueError:       # an empty cell: the enclosing function has not bound it yet
                return False, None
        if name in self.globals:
            return True, self.globals[name]
        if hasattr(builtins, name):
            return True, getattr(builtins, name)
        return False, None


def parse_function(fn: Any) -> ParsedFunction:
    if not isinstance(fn, types.FunctionType):
        what = getattr(fn, "__name__", type(fn).__name__)
        raise SourceUnavailable(
            f"cannot read the source of {what!r}: s2s differentiates Python functions written in Python",
            hint="for a builtin or C function, register a rule with s2s.adjoint")
    filename = fn.__code__.co_filename
    try:
        source_lines, first_line = inspect.getsourcelines(fn)
    except (OSError, TypeError) as exc:
        raise SourceUnavailable(
            f"cannot read the source of {fn.__qualname__!r} ({exc})",
            Loc(filename, fn.__code__.co_firstlineno, 0),
            hint="define the function in a file (or a notebook cell), not at an interactive prompt") from None
    if fn.__name__ == "<lambda>":
        raise UnsupportedSyntax(
            "lambda functions are not differentiated: their source cannot be located exactly",
            Loc(filename, first_line, 0, source_lines[0]), hint="write the function with def")
    source = "".join(source_lines)
    dedented = textwrap.dedent(source)
    first = source_lines[0]
    col_offset = len(first) - len(first.lstrip()) if dedented != source else 0
    try:
        module = gast.parse(dedented)
    except SyntaxError as exc:
        raise SourceUnavailable(f"cannot parse the source of {fn.__qualname__!r}: {exc.msg}",
                                Loc(filename, first_line, 0)) from None
    node = module.body[0]
    if not isinstance(node, gast.FunctionDef):
        kind = "async functions" if isinstance(node, gast.AsyncFunctionDef) else type(node).__name__
        raise UnsupportedSyntax(f"s2s does not support {kind}", Loc(filename, first_line, 0, first),
                                hint="differentiate the synchronous computation it runs")
    node.decorator_list = []
    try:
        all_lines = inspect.getsourcelines(inspect.getmodule(fn))[0] if inspect.getmodule(fn) else []
    except (OSError, TypeError):
        all_lines = []
    if len(all_lines) < first_line - 1 + len(source_lines):
        all_lines = [""] * (first_line - 1) + source_lines
    closure = dict(zip(fn.__code__.co_freevars, fn.__closure__ or ()))
    parsed = ParsedFunction(fn, node, filename, first_line - 1, col_offset, all_lines, closure)
    fence(parsed)
    return parsed


# ---------------------------------------------------------------- the fence

_REFUSED = {
    gast.Yield: ("generators (`yield`)", "return a list or an array instead"),
    gast.YieldFrom: ("generators (`yield from`)", "return a list or an array instead"),
    gast.Await: ("`await`", "differentiate the synchronous computation"),
    gast.AsyncFunctionDef: ("async functions", "differentiate the synchronous computation"),
    gast.AsyncFor: ("`async for`", "differentiate the synchronous computation"),
    gast.AsyncWith: ("`async with`", "differentiate the synchronous computation"),
    gast.Try: ("`try`/`except`/`finally`", "move the error handling outside the differentiated function"),
    gast.With: ("`with` blocks", "move the context manager outside the differentiated function"),
    gast.Global: ("`global` declarations", "return the value instead of writing a global"),
    gast.Nonlocal: ("`nonlocal` declarations", "return the value instead of writing an enclosing variable"),
    gast.Delete: ("`del`", "leave the variable unused instead"),
    gast.ClassDef: ("class definitions inside the function", "define the class at module level"),
    gast.Lambda: ("`lambda` inside the function", "define a function with def"),
    gast.FunctionDef: ("function definitions inside the function", "define the helper at module level"),
    gast.Import: ("`import` inside the function", "import at module level"),
    gast.ImportFrom: ("`import` inside the function", "import at module level"),
    gast.Match: ("`match` statements", "use if/elif/else"),
    gast.NamedExpr: ("the walrus operator `:=`", "assign in a statement of its own"),
    gast.Starred: ("star-arguments (`*args`)", "pass the arguments one by one"),
    gast.ListComp: ("list comprehensions", "write a for loop that appends"),
    gast.SetComp: ("set comprehensions", "write a for loop"),
    gast.DictComp: ("dict comprehensions", "write a for loop"),
    gast.GeneratorExp: ("generator expressions", "write a for loop"),
    gast.Set: ("set displays", "use a tuple or a list"),
    gast.JoinedStr: ("f-strings", "format strings outside the differentiated function"),
    gast.Raise: ("`raise`", "check the inputs before calling the differentiated function"),
}
if hasattr(gast, "TryStar"):
    _REFUSED[gast.TryStar] = _REFUSED[gast.Try]


def fence(parsed: ParsedFunction) -> None:
    """Refuse every construct outside the supported set, with its place."""
    fn_node = parsed.node
    args = fn_node.args
    if args.vararg is not None or args.kwarg is not None:
        raise UnsupportedSyntax("s2s does not support star-arguments (`*args`, `**kwargs`) in the signature",
                                parsed.loc(fn_node), hint="name each argument")
    for node in gast.walk(fn_node):
        if node is fn_node:
            continue
        refused = _REFUSED.get(type(node))
        if refused is not None:
            what, hint = refused
            raise UnsupportedSyntax(f"s2s does not support {what}", parsed.loc(node), hint=hint)
        if isinstance(node, gast.Call):
            callee = node.func
            if isinstance(callee, gast.Name) and callee.id in ("eval", "exec"):
                raise UnsupportedSyntax(f"s2s does not support `{callee.id}`: the code it runs cannot be read",
                                        parsed.loc(node), hint="write the code out directly")
            if any(k.arg is None for k in node.keywords):
                raise UnsupportedSyntax("s2s does not support `**kwargs` in a call", parsed.loc(node),
                                        hint="pass keyword arguments one by one")
