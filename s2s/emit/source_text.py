"""Python source text spelled exactly as astor 0.8 spells the same syntax tree, written directly.

The emitter builds text, not a tree: building an `ast` node costs more than the text it prints (a function of
3,000 lines holds some 150,000 nodes), so expressions are pairs `(text, precedence)` made bottom-up, and a parent
wraps a child in parentheses exactly where astor's printer would (its `Delimit`: when the child's precedence is
below the one the parent asks for). The numbers are astor's (`astor.op_util`); constructs that never take
parentheses carry `ATOM`.

Statements are `Stmt`s (a line, or a header with its body). `render` writes them with their indentation, the
comments that quote the user's line above the code each one comes from, and the user's place of every line (for
tracebacks). Two things astor does that are not reproduced here are handed to astor itself, on that statement
only: a line longer than 79 columns (astor wraps it), and a string constant it may write in triple quotes (one
with a line break, or at the start of a statement). The text is parsed back into a tree and printed by astor at
the same indentation, so the result is astor's by construction (`tests/emit/test_source_text.py` checks that every
emitted module is a fixed point of astor's printer).
"""
from __future__ import annotations

import ast
import math
import os
import re
from typing import Any, Callable

ATOM = 100          # never parenthesized (names, calls, attributes, subscripts, lists, dicts, strings)
HIGHEST = 63        # what astor asks of a child no parent set a precedence for: the callee, an attribute's object
ASSIGN, AUG_ASSIGN, EXPR, TEST, RETURN, SUBSCRIPT, TUPLE, COMMA, ONE_ARG = 3, 5, 5, 9, 11, 13, 19, 21, 25
IF_EXP, OR, AND, NOT, COMPARE, UNARY, POW, POW_RHS, NUMBER = 27, 31, 33, 35, 37, 53, 55, 51, 61
MAX_LINE = 79       # astor's source_repr.split_lines

Expr = tuple        # (text, precedence)

# what may not reach a `#` comment as it is: the characters Python's tokenizer or str.splitlines (linecache,
# editors) reads as a line break, and the other control characters (a null byte fails compile()), tab aside
_UNSAFE_IN_COMMENT = re.compile("[\x00-\x08\x0a-\x1f\x7f-\x9f\u2028\u2029]")


def comment_text(text: str) -> str:
    """text as it may stand in a comment of generated code: each character that would end the comment line (a
    file name with a line break would make what follows it code), or break it for linecache, as its escape."""
    if text.isprintable():          # (the common case)
        return text
    return _UNSAFE_IN_COMMENT.sub(lambda m: m.group().encode("unicode_escape").decode("ascii"), text)


def wrap(e: Expr, pp: int) -> str:
    """e's text where its parent asks for precedence pp."""
    return e[0] if e[1] >= pp else f"({e[0]})"


def name(text: str) -> Expr:
    return (text, ATOM)


def binary(symbol: str, p: int, left: Expr, right: Expr) -> Expr:
    """symbol with its spaces (' + '); p its precedence (Add 47, Mult 49, Pow 55, ...)."""
    if p == POW:
        return (f"{left[0] if left[1] > POW else '(' + left[0] + ')'}{symbol}"
                f"{right[0] if right[1] >= POW_RHS else '(' + right[0] + ')'}", p)
    return (f"{left[0] if left[1] >= p else '(' + left[0] + ')'}{symbol}"
            f"{right[0] if right[1] > p else '(' + right[0] + ')'}", p)


def unary(symbol: str, p: int, operand: Expr) -> Expr:
    """`-x`, `~x`, `not x` (symbol 'not ')."""
    return (symbol + (operand[0] if operand[1] >= p else f"({operand[0]})"), p)


def compare(symbol: str, left: Expr, right: Expr) -> Expr:
    return (f"{wrap(left, COMPARE + 1)} {symbol} {wrap(right, COMPARE + 1)}", COMPARE)


def bool_op(symbol: str, values: list[Expr]) -> Expr:
    p = AND if symbol == "and" else OR
    return (f" {symbol} ".join(wrap(v, p + 1) for v in values), p)


def if_exp(test: Expr, body: Expr, orelse: Expr) -> Expr:
    return (f"{wrap(body, IF_EXP + 1)} if {wrap(test, IF_EXP + 1)} else {wrap(orelse, IF_EXP)}", IF_EXP)


def call(func: Expr, args: list[Expr], keywords: dict[str, Expr] | None = None) -> Expr:
    pp = COMMA if len(args) + (len(keywords) if keywords else 0) > 1 else ONE_ARG
    parts = [a[0] if a[1] >= pp else f"({a[0]})" for a in args]
    if keywords:
        parts += [f"{k}={wrap(v, COMMA)}" for k, v in keywords.items()]
    callee = func[0] if func[1] >= HIGHEST else f"({func[0]})"
    return (f"{callee}({', '.join(parts)})", ATOM)


def attribute(value: Expr, attr: str) -> Expr:
    return (f"{value[0] if value[1] >= HIGHEST else '(' + value[0] + ')'}.{attr}", ATOM)


def subscript(value: Expr, index: Expr) -> Expr:
    return (f"{value[0] if value[1] >= HIGHEST else '(' + value[0] + ')'}[{wrap(index, SUBSCRIPT)}]", ATOM)


def slice_(lower: Expr | None, upper: Expr | None, step: Expr | None) -> Expr:
    text = (wrap(lower, SUBSCRIPT) if lower is not None else "") + ":" + \
        (wrap(upper, SUBSCRIPT) if upper is not None else "")
    if step is not None:
        text += ":" + wrap(step, SUBSCRIPT)
    return (text, ATOM)


def tuple_(elts: list[Expr]) -> Expr:
    if not elts:
        return ("()", ATOM)
    if len(elts) == 1:
        return (wrap(elts[0], COMMA) + ",", TUPLE)
    return (", ".join([e[0] if e[1] >= COMMA else f"({e[0]})" for e in elts]), TUPLE)


def list_(elts: list[Expr]) -> Expr:
    return ("[" + ", ".join([wrap(e, COMMA) for e in elts]) + "]", ATOM)


def dict_(keys: list[Expr], values: list[Expr]) -> Expr:
    return ("{" + ", ".join(f"{wrap(k, HIGHEST)}: {wrap(v, COMMA)}" for k, v in zip(keys, values)) + "}", ATOM)


def _part(x: Any, suffix: str) -> str:
    try:
        if math.isinf(x):
            return ("-1e1000" if x < 0 else "1e1000") + suffix
        if math.isnan(x):
            return f"(1e1000{suffix}-1e1000{suffix})"
    except OverflowError:
        pass
    return repr(x) + suffix


def constant(value: Any) -> Expr:
    """A Constant node's text: numbers (bool included) as astor's `_handle_numeric_constant`, others by repr."""
    if value is None:
        return ("None", ATOM)
    if value is Ellipsis:
        return ("...", ATOM)
    if isinstance(value, (str, bytes)):
        return (repr(value), ATOM)
    if isinstance(value, complex):
        real, imag = _part(value.real, ""), _part(value.imag, "j")
        if value.real == 0:
            return (imag, NUMBER)
        if value.imag == 0:
            return (f"({real}+0j)", NUMBER)
        return (f"({real}{'' if imag.startswith('-') else '+'}{imag})", NUMBER)
    if type(value) is float and not math.isfinite(value):
        return (_part(value, ""), NUMBER)
    return (repr(value), NUMBER)


def astor_spells_own_way(value: Any) -> bool:
    """A constant astor may print as a triple-quoted string (one with a line break)."""
    return isinstance(value, str) and ("\n" in value or "\r" in value)


# ---------------------------------------------------------------- statements

class Stmt:
    """A statement: `text` is the whole line of a simple one; for a compound one, its header without the
    keyword for `if` (kind "if": written `if text:` or `elif text:`), the whole header otherwise ("for", "while").
    `init` is ("list", target) for `target = []`, ("zeros", target, arg) for `target = np.zeros_like(arg)` and
    ("empty", target, value) for `target = np.empty((...))`
    (nesting.merge_initializations puts runs of them on one line). `odd`: printed by astor (see the module)."""

    __slots__ = ("text", "kind", "body", "orelse", "loc", "init", "odd")

    def __init__(self, text: str, kind: str | None = None, body: list | None = None, orelse: list | None = None,
                 init: tuple | None = None, odd: bool = False):
        self.text = text
        self.kind = kind
        self.body = body
        self.orelse = orelse
        self.loc: Any = None
        self.init = init
        self.odd = odd


_ZEROS = "np.zeros_like("
_EMPTY = "np.empty(("


def assign(targets: list[str], value: Expr) -> Stmt:
    """`a = value`, or `a, b = value`."""
    if len(targets) == 1:
        return assign_one(targets[0], value)
    return Stmt(f"{', '.join(targets)} = {value[0]}")


def assign_one(target: str, value: Expr) -> Stmt:
    """`a = value` (an Assign's value is asked for precedence 3: only a bare yield would need parentheses)."""
    text = value[0]
    init = None
    if text[0] in "[n":
        if text == "[]":
            init = ("list", target)
        elif text.startswith(_ZEROS) and text[len(_ZEROS):-1].isidentifier() and text[-1] == ")":
            init = ("zeros", target, text[len(_ZEROS):-1])
        elif text.startswith(_EMPTY):
            init = ("empty", target, text)
    return Stmt(f"{target} = {text}", None, None, None, init)


class _Renderer:
    """The lines of a function body: code, comments quoting the user's lines, and each line's place."""

    def __init__(self) -> None:
        self.lines: list[str] = []
        self.places: list[Any] = []
        self.current: list[Any] = [None]        # the place of the code at each depth of indentation
        self.basenames: dict[str, str] = {}

    def place(self, depth: int) -> Any:
        current = self.current
        k = min(depth, len(current) - 1)
        while k >= 0 and current[k] is None:
            k -= 1
        return current[k] if k >= 0 else None

    def comment(self, loc: Any) -> str:
        """`# file.py:12  the line`, quoting the user's line."""
        base = self.basenames.get(loc.file)
        if base is None:
            base = self.basenames[loc.file] = comment_text(os.path.basename(loc.file))
        text = comment_text(loc.text.strip())
        return f"# {base}:{loc.line}" + (f"  {text}" if text else "")

    def emit(self, line: str, depth: int, odd: bool, source: Callable[[], tuple[str, str]]) -> None:
        """One line of code; astor's own lines where astor would write it differently."""
        if not odd and len(line) <= MAX_LINE:
            self.lines.append(line)
            self.places.append(self.place(depth))
            return
        for text in _by_astor(*source(), depth):
            self.lines.append(text)
            self.places.append(self.place((len(text) - len(text.lstrip())) // 4))

    def block(self, stmts: list[Stmt], depth: int, last: Any) -> None:
        indent = "    " * depth
        lines, places, current = self.lines, self.places, self.current
        for s in stmts:
            loc = s.loc
            if loc is not None:
                if last is None or loc.line != last.line or loc.file != last.file:
                    lines.append(indent + self.comment(loc))
                    places.append(None)
                if len(current) > depth:
                    del current[depth:]
                else:
                    current.extend([None] * (depth - len(current)))
                current.append(loc)
                last = loc
            kind = s.kind
            if kind is None:
                line = indent + s.text
                if not s.odd and len(line) <= MAX_LINE and s.text[0] not in "'\"":     # the common case, inline
                    lines.append(line)
                    k = depth if depth < len(current) else len(current) - 1
                    while k >= 0 and current[k] is None:
                        k -= 1
                    places.append(current[k] if k >= 0 else None)
                else:
                    self.emit(line, depth, True, lambda s=s: ("", s.text))
                continue
            if kind == "if":
                self.emit(f"{indent}if {s.text}:", depth, s.odd, lambda s=s: ("if", s.text))
                self.block(s.body, depth + 1, last)
                orelse = s.orelse
                while len(orelse) == 1 and orelse[0].kind == "if" and orelse[0].loc is None:
                    inner = orelse[0]
                    self.emit(f"{indent}elif {inner.text}:", depth, inner.odd,
                              lambda s=inner: ("elif", s.text))
                    self.block(inner.body, depth + 1, last)
                    orelse = inner.orelse
                if orelse:
                    self.emit(f"{indent}else:", depth, False, lambda: ("", ""))
                    self.block(orelse, depth + 1, last)
                continue
            self.emit(indent + s.text, depth, s.odd, lambda s=s: (":", s.text))
            self.block(s.body, depth + 1, last)


def render(signature: str, body: list[Stmt], odd: bool = False) -> tuple[list[str], list[Any]]:
    """The function's lines (its `def` line first, unindented) and the user's place of each."""
    renderer = _Renderer()
    renderer.emit(signature, 0, odd, lambda: (":", signature))
    renderer.block(body, 1, None)
    return renderer.lines, renderer.places


def _by_astor(kind: str, text: str, depth: int) -> list[str]:
    """astor's lines for one statement (kind ""), one header (":", the whole header; "if"/"elif", the test),
    written at the given depth: the text is parsed back and printed by astor."""
    import astor  # only for the rare line astor wraps or spells its own way
    if kind == "":
        node: ast.AST = ast.parse(text).body[0]
        skip_head, skip_tail = 0, 0
    elif kind == ":":
        node = ast.parse(text + "\n    pass").body[0]
        skip_head, skip_tail = 0, 1
    elif kind == "if":
        node = ast.parse(f"if {text}:\n    pass").body[0]
        skip_head, skip_tail = 0, 1
    else:       # elif: after an `if` of its own
        node = ast.parse(f"if 0:\n    pass\nelif {text}:\n    pass").body[0]
        skip_head, skip_tail = 2, 1
    generator = astor.code_gen.SourceGenerator(" " * 4)
    generator.indentation = depth
    generator.visit(node)
    result = generator.result
    if depth:
        del result[0]           # the line break before the statement: its line starts at its indentation
    elif result and set(result[0]) == {"\n"}:
        result[0] = ""          # as astor.to_source does for a module's first line
    result.append("\n")         # as astor.to_source does: the last line is written when a line break follows
    lines = astor.source_repr.pretty_source(result).rstrip().split("\n")
    return lines[skip_head:len(lines) - skip_tail]
