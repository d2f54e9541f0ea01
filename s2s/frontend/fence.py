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
    """Refuse every construct the desugaring left outside the supported set, with its place."""
    fn_node = parsed.node
    args = fn_node.args
    if args.vararg is not None or args.kwarg is not None:
        raise UnsupportedSyntax("s2s does not support star-arguments (`*args`, `**kwargs`) in the signature of "
                                "the function it differentiates", parsed.loc(fn_node),
                                hint="differentiate a lambda that passes them: s2s.grad(lambda a, b: f(a, b))")
    stored: dict[str, None] = {}
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
            _fence_finally(parsed, node)
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
                raise UnsupportedSyntax("s2s does not support `**kwargs` in a call whose keywords are not known "
                                        "when the derivative is made", parsed.loc(node),
                                        hint="pass keyword arguments one by one")
    parsed.stored = (fn_node, stored)


def _fence_finally(parsed: ParsedFunction, node: gast.Try) -> None:
    """`return`, `break` or `continue` in a `finally` block (which would swallow an exception): refused."""
    stack = list(node.finalbody)
    while stack:
        sub = stack.pop()
        if isinstance(sub, (gast.Return, gast.Break, gast.Continue)):
            raise UnsupportedSyntax(f"s2s does not support `{type(sub).__name__.lower()}` in a `finally` block (it "
                                    f"would discard an exception the `try` raised)", parsed.loc(sub),
                                    hint="leave the `finally` block by its end, and return after the `try`")
        if isinstance(sub, (gast.FunctionDef, gast.Lambda, gast.For, gast.While)) and not isinstance(
                sub, gast.Return):
            if isinstance(sub, (gast.For, gast.While)):      # (a loop's own break and continue are its own)
                stack.extend(n for n in gast.walk(sub) if isinstance(n, gast.Return))
            continue
        stack.extend(gast.iter_child_nodes(sub))
