"""Reading a function's source: a Python function object to its gast tree, before desugaring.

`read_function(fn)` reads the source of fn's own code object (never the function a decorator's `__wrapped__`
points to), proves that the text read is the code that runs (the file may have been edited since the function
was defined), parses it with gast (a lambda is found by its code object's positions and read as a one-line
`def`) and strips the decorators. The result also knows the function's namespace (globals, closure cells,
builtins), so that lowering can resolve each free name to the object it names. A function s2s made itself is
read from the tree it was registered with (tree.py's `register_synthetic`).
"""
from __future__ import annotations

import dis
import inspect
import linecache
import textwrap
import types
from typing import Any

import gast

from s2s.errors import SourceUnavailable, UnsupportedSyntax
from s2s.frontend import parsing
from s2s.frontend.tree import ParsedFunction, clone_tree, synthetic_of
from s2s.ir.core import Loc


def read_function(fn: Any) -> ParsedFunction:
    """fn's tree, its place and namespace, before desugaring."""
    inner = getattr(fn, "__func__", None) or getattr(fn, "func", None)
    if not isinstance(fn, types.FunctionType) and isinstance(inner, types.FunctionType):
        # a bound method or partial whose source exists, but whose signature takes star-arguments: said as that
        code = inner.__code__
        shown = f"{inner.__qualname__}{inspect.signature(inner, follow_wrapped=False)}"
        raise UnsupportedSyntax(
            f"s2s differentiates a method or partial whose signature takes star-arguments (`{shown}`) only when "
            f"called inside a differentiated function: as the function differentiated, its derivative's "
            f"parameters would not be known", Loc(code.co_filename, code.co_firstlineno, 0),
            hint="differentiate a lambda that names the arguments: s2s.grad(lambda x: obj.method(x, a, b))")
    if not isinstance(fn, types.FunctionType):
        what = getattr(fn, "__qualname__", None) or getattr(fn, "__name__", None) or type(fn).__name__
        raise SourceUnavailable(
            f"cannot read the source of {what!r}: s2s differentiates Python functions written in Python",
            hint="a builtin or C function needs a rule (s2s.adjoint); a method, partial or callable object is "
                 "differentiated through s2s.grad(obj.method), s2s.grad(partial(...)), s2s.grad(obj)")
    if hasattr(fn, "__s2s__"):
        raise SourceUnavailable(f"{fn.__qualname__} is a derivative s2s made: its code is generated, not read",
                                hint="call it directly inside the function being differentiated")
    synthetic = synthetic_of(fn)
    if synthetic is None:
        parsed = _read_source(fn)
    elif synthetic.source_of is None:
        lines = linecache.getlines(synthetic.filename)
        parsed = ParsedFunction(fn, clone_tree(synthetic.node), synthetic.filename, synthetic.line_offset,
                                synthetic.col_offset, lines)
    else:
        parsed = read_function(synthetic.source_of)
    parsed.fn = fn
    parsed.closure = dict(zip(fn.__code__.co_freevars, fn.__closure__ or ()))
    if synthetic is not None:
        parsed.facts = synthetic.facts
    return parsed


def _read_source(fn: types.FunctionType) -> ParsedFunction:
    code = fn.__code__
    filename = code.co_filename
    if fn.__name__ == "<lambda>":
        return _read_lambda(fn)
    # the code object's own lines: inspect would follow a decorator's __wrapped__ to another function
    found = parsing.definition(filename, code.co_firstlineno, code.co_name, fn.__globals__)
    try:
        source_lines, first_line = (found[0], code.co_firstlineno) if found is not None else \
            inspect.getsourcelines(code)
    except (OSError, TypeError) as exc:
        if linecache.getlines(filename):        # the file is there, but no longer holds the function
            raise SourceUnavailable(
                f"the source file changed since {fn.__qualname__!r} was defined: {filename}:{code.co_firstlineno} "
                f"no longer holds it", Loc(filename, code.co_firstlineno, 0),
                hint="re-import the module (or re-run the cell) that defines it") from None
        raise SourceUnavailable(
            f"cannot read the source of {fn.__qualname__!r} ({exc})",
            Loc(filename, code.co_firstlineno, 0),
            hint="define the function in a file (or a notebook cell), not at an interactive prompt, "
                 "in `python -c` or in a string given to exec") from None
    source = "".join(source_lines)
    dedented = textwrap.dedent(source)
    first = source_lines[0]
    col_offset = len(first) - len(first.lstrip()) if dedented != source else 0
    line_offset = first_line - 1
    if found is not None and dedented == source:
        # not indented: the def as the file's parse holds it (in the file's lines, not parsed again)
        node, line_offset = parsing.to_gast(found[1]), 0
    else:
        try:
            module = parsing.parse(dedented)
        except SyntaxError as exc:
            raise SourceUnavailable(f"cannot parse the source of {fn.__qualname__!r}: {exc.msg}",
                                    Loc(filename, first_line, 0)) from None
        node = module.body[0]
    if not isinstance(node, gast.FunctionDef):
        kind = "async functions" if isinstance(node, gast.AsyncFunctionDef) else type(node).__name__
        raise UnsupportedSyntax(f"s2s does not support {kind}", Loc(filename, first_line, 0, first),
                                hint="differentiate the synchronous computation it runs")
    _check_unchanged(fn, source, Loc(filename, first_line, col_offset, first))
    node.decorator_list = []
    all_lines = _file_lines(fn, first_line, source_lines)
    return ParsedFunction(fn, node, filename, line_offset, col_offset, all_lines)


def _file_lines(fn: Any, first_line: int, source_lines: list[str]) -> list[str]:
    all_lines = linecache.getlines(fn.__code__.co_filename)
    if len(all_lines) < first_line - 1 + len(source_lines):
        all_lines = [""] * (first_line - 1) + source_lines
    return all_lines


def _read_lambda(fn: types.FunctionType) -> ParsedFunction:
    """The exact lambda of fn's code object, found by the columns Python 3.11 records, as a `def`."""
    code = fn.__code__
    filename = code.co_filename
    lines = linecache.getlines(filename)
    if not lines:
        linecache.checkcache(filename)
        lines = linecache.getlines(filename)
    where = Loc(filename, code.co_firstlineno, 0, lines[code.co_firstlineno - 1] if lines else "")
    if not lines:
        raise SourceUnavailable("cannot read the source of a lambda defined outside a file", where,
                                hint="define it in a file (or a notebook cell)")
    positions = [p for p in code.co_positions() if p[0] is not None and p[2] is not None]
    try:
        module = parsing.parse("".join(lines))
    except SyntaxError:
        raise SourceUnavailable("cannot parse the file that defines this lambda (it changed since the lambda "
                                "was defined?)", where, hint="re-run the code that defines it") from None
    found = []
    for node in parsing.walk(module):
        if isinstance(node, gast.Lambda) and _lambda_matches(node, code, positions):
            found.append(node)
    if len(found) != 1:
        raise SourceUnavailable(
            f"the source file changed since this lambda was defined: {filename}:{code.co_firstlineno} no longer "
            f"holds it" if not found else "two lambdas match this code object", where,
            hint="re-run the code that defines the lambda (re-import the module)")
    lam = found[0]
    body = gast.Return(value=lam.body)
    gast.copy_location(body, lam.body)
    node = gast.FunctionDef(name="lambda_", args=lam.args, body=[body], decorator_list=[], returns=None,
                            type_comment=None)
    gast.copy_location(node, lam)
    import ast
    _check_unchanged(fn, ast.unparse(gast.gast_to_ast(clone_tree(node))), where, "lambda_")
    return ParsedFunction(fn, node, filename, 0, 0, lines)


def _lambda_matches(node: gast.Lambda, code: types.CodeType, positions: list) -> bool:
    if node.lineno != code.co_firstlineno:
        return False
    names = [a.id for a in node.args.posonlyargs + node.args.args + node.args.kwonlyargs]
    if len(names) != code.co_argcount + code.co_kwonlyargcount or names != list(code.co_varnames[:len(names)]):
        return False        # (`lambda: s2s.grad(lambda x: ...)`: the outer lambda takes no x)
    body = node.body
    start = (body.lineno, body.col_offset)
    end = (body.end_lineno, body.end_col_offset)
    # every instruction of the lambda's body lies inside this lambda's body expression
    spans = [((p[0], p[2]), (p[1], p[3])) for p in positions if (p[1], p[3]) > (p[0], p[2])]
    return bool(spans) and all(start <= a and b <= end for a, b in spans)


# ---------------------------------------------------------------- the text read is the code that runs

def _check_unchanged(fn: types.FunctionType, text: str, where: Loc, name: str | None = None) -> None:
    """Compile the text read and compare it with fn's code: the file may have been edited after import."""
    import ast
    code = fn.__code__
    free = code.co_freevars
    rewritten = any(n.startswith("@py") for n in code.co_varnames + code.co_names)
    try:
        # the text as it is in the file (dedented, a multi-line string in it would lose its indentation too)
        parsed = "if 1:\n" + text if text[:1] in (" ", "\t") else text
        if not free and not rewritten and parsed is text:      # compiled from the text: no tree to convert back
            return _compare(fn, compile(text, code.co_filename, "exec", dont_inherit=True), where, name)
        tree = ast.parse(parsed)
        if tree.body and isinstance(tree.body[0], ast.If) and parsed is not text:
            tree.body = tree.body[0].body
        if free:      # compiled inside a function that binds its free variables, so they compile alike
            outer = ast.parse("def __s2s_outer__():\n" + "".join(f"    {n} = None\n" for n in free) +
                              "    return " + ", ".join(free) + "\n")
            outer.body[0].body[len(free):len(free)] = tree.body     # (a tree, not text indented: the text of
            tree = outer                                            # a multi-line string stays as it is)
        compiled = compile(_asserts_rewritten(tree, parsed, code), code.co_filename, "exec", dont_inherit=True)
    except SyntaxError:
        return                  # not compilable on its own (a `nonlocal` of a class body...): nothing to prove
    _compare(fn, compiled, where, name)


def _compare(fn: types.FunctionType, compiled: types.CodeType, where: Loc, name: str | None) -> None:
    code = fn.__code__
    candidates = list(_code_objects(compiled, name or code.co_name))
    if any(_same_code(code, c) for c in candidates):
        return                  # (no candidate: the text there defines another function; lines moved)
    raise SourceUnavailable(
        f"the source file changed since {fn.__qualname__!r} was defined: the text at {where.file}:{where.line} "
        f"is not the code that runs", where, hint="re-import the module (or re-run the cell) that defines it")


def _asserts_rewritten(tree: Any, text: str, code: types.CodeType) -> Any:
    """tree as pytest compiled it, when it rewrote the asserts of fn's module (its names start with @py)."""
    if not any(n.startswith("@py") for n in code.co_varnames + code.co_names):
        return tree
    try:
        from _pytest.assertion.rewrite import rewrite_asserts
        rewrite_asserts(tree, text.encode(), code.co_filename)
        return tree
    except Exception:
        return tree


def _code_objects(code: types.CodeType, name: str):
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            if const.co_name == name:
                yield const
            yield from _code_objects(const, name)


def _instructions(code: types.CodeType) -> list:
    """The instructions, without what depends on where the text sits (the compiler picks LOAD_METHOD or
    LOAD_ATTR by the call's columns, and pushes the NULL of a call `f(a)(b)` with a PUSH_NULL of its own or
    with the LOAD_GLOBAL that follows, which the comparison of argvals does not see)."""
    same = {"LOAD_METHOD": "LOAD_ATTR"}
    jumps = set(dis.hasjrel) | set(dis.hasjabs)
    return [(same.get(i.opname, i.opname),
             None if isinstance(i.argval, types.CodeType) or i.opcode in jumps else i.argval)
            for i in dis.get_instructions(code) if i.opname not in ("CACHE", "PRECALL", "EXTENDED_ARG", "PUSH_NULL")]


def _same_code(a: types.CodeType, b: types.CodeType) -> bool:
    if a.co_names != b.co_names or a.co_varnames != b.co_varnames:
        return False
    same_bytes = a.co_code == b.co_code and a.co_cellvars == b.co_cellvars and a.co_freevars == b.co_freevars
    if not same_bytes and _instructions(a) != _instructions(b):   # (disassembled only when the bytes differ)
        return False
    if len(a.co_consts) != len(b.co_consts):
        return False
    for k, (x, y) in enumerate(zip(a.co_consts, b.co_consts)):
        if isinstance(x, types.CodeType) and isinstance(y, types.CodeType):
            if not _same_code(x, y):
                return False
        elif k == 0 and isinstance(x, str) and isinstance(y, str):
            if inspect.cleandoc(x) != inspect.cleandoc(y):      # a docstring: the text read was re-indented
                return False
        elif type(x) is not type(y) or not _equal(x, y):
            return False
    return True


def _equal(x: Any, y: Any) -> bool:
    try:
        return bool(x == y) or (x != x and y != y)
    except Exception:
        return x is y


# ---------------------------------------------------------------- the fence
