"""The fence: every construct the desugaring left outside the supported set is refused, before any transform,
with `file:line:col` and a hint."""
from __future__ import annotations

import gast

from s2s.errors import UnsupportedSyntax
from s2s.frontend import parsing
from s2s.frontend.tree import ParsedFunction

_REFUSED = {
    gast.Yield: ("generators (`yield`)", "return a list or an array instead"),
    gast.YieldFrom: ("generators (`yield from`)", "return a list or an array instead"),
    gast.Await: ("`await`", "differentiate the synchronous computation"),
    gast.AsyncFunctionDef: ("async functions", "differentiate the synchronous computation"),
    gast.AsyncFor: ("`async for`", "differentiate the synchronous computation"),
    gast.AsyncWith: ("`async with`", "differentiate the synchronous computation"),
    gast.With: ("this `with` block", "move the context manager outside the differentiated function"),
    gast.Global: ("`global` declarations", "return the value instead of writing a global"),
    gast.Nonlocal: ("`nonlocal` declarations", "return the value instead of writing an enclosing variable"),
    gast.Delete: ("`del`", "leave the variable unused instead"),
    gast.ClassDef: ("class definitions inside the function", "define the class at module level"),
    gast.Lambda: ("this use of a `lambda` inside the function (only lambdas that are called, assigned to a "
                  "name, given to map, or that read no variable of the function are)",
                  "define a function with def and call it; to give it to a library function, pass the variables "
                  "it reads as arguments (`odeint(lambda y, t, k: -k * y, y0, ts, args=(k,))`)"),
    gast.FunctionDef: ("this nested function (only nested functions that are called, or that read no variable of "
                       "the function, are)", "define the helper at module level, taking the values it reads as "
                       "arguments (odeint's `args=`)"),
    gast.Import: ("`import` inside the function", "import at module level"),
    gast.ImportFrom: ("`import` inside the function", "import at module level"),
    gast.Match: ("`match` statements", "use if/elif/else"),
    gast.NamedExpr: ("the walrus operator `:=`", "assign in a statement of its own"),
    gast.Starred: ("star-arguments (`*args`) whose length is not known when the derivative is made",
                   "pass the arguments one by one, or a tuple displayed in the function"),
    gast.ListComp: ("this list comprehension (inside a condition or a short-circuit operand)",
                    "write a for loop that appends"),
    gast.SetComp: ("set comprehensions", "use a list comprehension"),
    gast.DictComp: ("dict comprehensions", "write a for loop that fills a dict with constant keys"),
    gast.GeneratorExp: ("this generator expression (inside a condition or a short-circuit operand)",
                        "write a for loop"),
    gast.Set: ("set displays", "use a tuple or a list"),
    gast.JoinedStr: ("f-strings here", "format strings outside the differentiated function"),
    gast.Raise: ("a bare `raise`", "raise an exception object"),
}
if hasattr(gast, "TryStar"):
    _REFUSED[gast.TryStar] = ("`try`/`except*` (exception groups)", "catch the exception group with `except` "
                              "outside the differentiated function")


def fence(parsed: ParsedFunction) -> None:
    """Refuse every construct the desugaring left outside the supported set, with its place. One that stands on a
    side of an `if` (or in an operand that `and`, `or` or a conditional expression may skip) is refused only if that
    side runs, as lowering's refusals are (lower.py's `branch`): the innermost side holding it (a statement, an
    operand) is marked (`REFUSAL`), and lowering raises the refusal there."""
    fn_node = parsed.node
    args = fn_node.args
    if args.vararg is not None or args.kwarg is not None:
        raise UnsupportedSyntax("s2s does not support star-arguments (`*args`, `**kwargs`) in the signature of "
                                "the function it differentiates", parsed.loc(fn_node),
                                hint="differentiate a lambda that passes them: s2s.grad(lambda a, b: f(a, b))")
    stored: dict[str, None] = {}
    refusals: list[tuple[gast.AST, str, str]] = []      # (construct, message, hint), in the walk's order
    Name, Store, Subscript, AugAssign, Call, Attribute = gast.Name, gast.Store, gast.Subscript, gast.AugAssign, \
        gast.Call, gast.Attribute
    for node in parsing.walk(fn_node):
        kind = type(node)       # the names the body rebinds, as lower._stored_names finds them (one walk for both)
        if kind is Name:
            if type(node.ctx) is Store:
                stored[node.id] = None
            continue
        if kind is Subscript:
            if type(node.ctx) is Store and type(node.value) is Name:
                stored[node.value.id] = None
        elif kind is AugAssign:
            if type(node.target) is Subscript and type(node.target.value) is Name:
                stored[node.target.value.id] = None
        elif kind is Call and type(node.func) is Attribute and node.func.attr == "append" \
                and type(node.func.value) is Name:
            stored[node.func.value.id] = None
        if node is fn_node:
            continue
        if kind is gast.Try:
            refusals.extend(_fence_finally(node))
        refused = _REFUSED.get(kind)
        if refused is not None:
            what, hint = refused
            refusals.append((node, f"s2s does not support {what}", hint))
        elif kind is Call:
            callee = node.func
            if isinstance(callee, gast.Name) and callee.id in ("eval", "exec"):
                refusals.append((node, f"s2s does not support `{callee.id}`: the code it runs cannot be read",
                                 "write the code out directly"))
            elif any(k.arg is None for k in node.keywords):
                refusals.append((node, "s2s does not support `**kwargs` in a call whose keywords are not known when "
                                 "the derivative is made", "pass keyword arguments one by one"))
    if refusals:
        _defer(parsed, refusals, stored)
    parsed.stored = (fn_node, stored)


# what changes the whole function wherever it stands (a generator, a name's scope): never deferred to a branch
_WHOLE_FUNCTION = (gast.Yield, gast.YieldFrom, gast.Await, gast.Global, gast.Nonlocal)
# the attribute of a statement or operand that lowering refuses when it lowers it: (message, loc, hint)
REFUSAL = "s2s_refusal"


def _defer(parsed: ParsedFunction, refusals: list, stored: dict) -> None:
    """Mark the innermost side that holds each refused construct (a statement of an `if`'s side, an operand of `and`
    or `or` after the first, an arm of `a if c else b`); raise the first refusal that stands on no side (it runs
    whenever the function does) or concerns the whole function. A marked statement's names stay the function's
    locals, as in Python (a `del y`, a `def g` on a side)."""
    owner: dict[int, gast.AST] = {}     # id(node) -> the innermost side holding it (outer sides are walked first)
    for node in parsing.walk(parsed.node):
        kind = type(node)
        if kind is gast.If:             # a statement of a side
            sides = node.body + node.orelse
        elif kind is gast.BoolOp:       # an operand that short-circuiting may skip
            sides = node.values[1:]
        elif kind is gast.IfExp:        # an arm of a conditional expression
            sides = [node.body, node.orelse]
        else:
            continue
        for side in sides:
            for sub in parsing.walk(side):
                owner[id(sub)] = side
    for node, message, hint in refusals:
        stmt = owner.get(id(node))
        if stmt is None or isinstance(node, _WHOLE_FUNCTION):
            raise UnsupportedSyntax(message, parsed.loc(node), hint=hint)
    for node, message, hint in refusals:
        stmt = owner[id(node)]
        if REFUSAL not in stmt.__dict__:             # (the first refused construct of the statement is named)
            setattr(stmt, REFUSAL, (message, parsed.loc(node), hint))
            for name in _bound_names(stmt):
                stored[name] = None


def _bound_names(stmt: gast.stmt) -> list[str]:
    """The names a statement binds that the fence's walk does not count: `del` targets, definitions, imports."""
    names = []
    for sub in parsing.walk(stmt):
        if type(sub) is gast.Name and type(sub.ctx) is gast.Del:
            names.append(sub.id)
        elif isinstance(sub, (gast.FunctionDef, gast.AsyncFunctionDef, gast.ClassDef)):
            names.append(sub.name)
        elif isinstance(sub, (gast.Import, gast.ImportFrom)):
            names.extend((a.asname or a.name).split(".")[0] for a in sub.names)
    return names


def _fence_finally(node: gast.Try) -> list[tuple[gast.AST, str, str]]:
    """`return`, `break` or `continue` in a `finally` block (which would swallow an exception): refused."""
    stack = list(node.finalbody)
    while stack:
        sub = stack.pop()
        if isinstance(sub, (gast.Return, gast.Break, gast.Continue)):
            return [(sub, f"s2s does not support `{type(sub).__name__.lower()}` in a `finally` block (it would "
                     f"discard an exception the `try` raised)",
                     "leave the `finally` block by its end, and return after the `try`")]
        if isinstance(sub, (gast.FunctionDef, gast.Lambda, gast.For, gast.While)) and not isinstance(
                sub, gast.Return):
            if isinstance(sub, (gast.For, gast.While)):      # (a loop's own break and continue are its own)
                stack.extend(n for n in gast.walk(sub) if isinstance(n, gast.Return))
            continue
        stack.extend(gast.iter_child_nodes(sub))
    return []
