"""Lowering `try` / `except` / `else` / `finally`: a branch that Python decides while the body runs.

Accepts a `gast.Try` prepared by the desugaring (s2s/frontend/desugar/tries.py keeps its body as the user wrote
it). Guarantees that the IR reads, for every path Python can take through the statement, what Python computes:

    try:                                        failure = try_body(f_try_body, (ZeroDivisionError,), x)
        r = np.sum(x ** 6 * (2 + np.sin(1 / x)))    if failure is None:
    except ZeroDivisionError:           ->          r = np.sum(x ** 6 * (2 + np.sin(1 / x)))
        r = np.nan                              else:
                                                    r = np.nan

`try_body` runs the body as written (`f_try_body`, compiled from the user's lines, in the function's namespace,
given the values of the variables it reads) and says how it ended: None when it completed, else the exception it
raised. That decision is an ordinary branch condition: the forward sweep computes it, the reverse sweep reverses
the branch taken (an `If` on the recorded condition), forward mode carries tangents through it, and each path is
differentiated exactly. On the path where the body completed, the body is lowered again (differentiated), followed
by `else`; a handler path starts from the state before the `try`. `finally` is lowered after the branch,
whatever the path did (returned, broke, continued); on the path of an exception no handler takes, it runs before
the exception is raised again. A handler's `as` name holds the exception; an exception the handlers do not take
propagates from `try_body` itself, raised by the user's line.

Why this design, rather than an IR region that catches: a region would have to keep every pass from moving or
dropping an operation across its edge (an unused `1 / x` that raises is not dead code), keep the forward sweep's
stacks from holding what a body pushed before it raised, and keep forward mode's tangent code (which may raise
where the primal code does not: the tangent of `x ** 0.5` at 0) outside the catch. Running the body once more, as
written, needs none of that: the IR keeps its three regions, every pass and both transforms stay as they are, and
derivative code never catches an exception of its own. The cost is the body's primal computation once more in the
forward sweep; what that would make observable is refused when the derivative is made:

- a handler (or code after the `try`) reading what the body assigned before the exception: on a handler's path
  each variable the body may have assigned before raising is unbound, and a read of it is refused with its place
  and the rewrite (a variable the body's last statement alone assigns is not, when that statement changes it only
  if it completes, as Python runs it: `b = v`, `total += v`, `out[i] = v`); so is a handler's `break` or `continue`
  (or `return`, with a `finally`) that hands such a variable on;
- a body that writes into an object's attribute, draws random numbers or calls a method of an object known only
  when the code runs (it would happen twice). A list, dict or array the body writes into (`acc += v` included) is
  copied before the body runs as written (the derivative makes the write itself, on the path where the body completes).
"""
from __future__ import annotations

import ast
import random
import types
from typing import TYPE_CHECKING, Any

import gast
import numpy as np

from s2s import runtime
from s2s.errors import UnsupportedSyntax
from s2s.frontend.desugar import helpers
from s2s.frontend.desugar.tries import probe_body
from s2s.frontend.tree import clone_tree
from s2s.ir.core import Block, Const, Op, walk

if TYPE_CHECKING:
    from s2s.ir.lower import Lowerer


def lower_try(lw: "Lowerer", node: gast.Try) -> None:
    body = probe_body(node)
    if body is None:          # (every `try` is prepared by the desugaring)
        raise lw.error("s2s cannot read this `try` statement", node)
    _refuse_effects(lw, body)
    handler_types = [_exception_types(lw, h) for h in node.handlers]
    if node.finalbody or not node.handlers:
        catches: Any = Const((BaseException,))
    elif all(isinstance(t, Const) for t in handler_types):
        catches = Const(tuple(c for t in handler_types for c in _flat(t.value)))
    else:
        catches = lw.op(runtime.make_tuple, handler_types, node, "catches")
    names = _probe_inputs(lw, node, body)
    probe = _probe(lw, node, body, names)
    failure = lw.op(helpers.try_body, [Const(probe), catches, *[lw.env[n] for n in names]], node, "failure")
    completed = lw.op(helpers.try_completed, [failure], node, "completed")
    partial = _partial_names(lw, node, body)
    held = [name for name in partial if lw.bound(name)]      # (a value the handler's path may hand on)

    def fill_completed() -> None:
        for stmt in node.body:          # (what runs twice: the body, not `else`: Lowerer.stmt)
            lw.run_twice[id(stmt)] = node
        lw.block(node.body + node.orelse)

    def run_handler(handler: gast.ExceptHandler) -> None:
        for name, reason in partial.items():
            lw.unbind(name, reason)
        if handler.name is not None:
            lw.env[handler.name.id] = failure
        lw.block(handler.body)
        _refuse_handing_on(lw, node, handler, partial, held)
        if handler.name is not None and lw.bound(handler.name.id):
            lw.unbind(handler.name.id)          # Python deletes it at the handler's end

    def escape() -> None:              # no handler takes it: `finally`, then raised again
        for name, reason in partial.items():
            lw.unbind(name, reason)
        lw.block(clone_tree(node.finalbody))
        lw.op(helpers.raise_exception, [failure], node, n_outs=0)
        lw.raises()

    def chain(k: int) -> None:
        if k == len(node.handlers):
            escape()
            return
        handler = node.handlers[k]
        if k == len(node.handlers) - 1 and not node.finalbody:     # the only exception try_body lets through here
            run_handler(handler)
            return
        test = lw.op(isinstance, [failure, handler_types[k]], handler, "caught")
        lw.join_if(test, lambda: run_handler(handler), lambda: chain(k + 1), handler)

    lw.join_if(completed, fill_completed, lambda: chain(0), node)
    if node.finalbody and not lw.has_raised():
        lw.unguarded(lambda: lw.block(node.finalbody))


def _flat(types_: Any) -> tuple:
    return tuple(c for t in types_ for c in _flat(t)) if isinstance(types_, tuple) else (types_,)


def _exception_types(lw: "Lowerer", handler: gast.ExceptHandler) -> Any:
    """What an `except` clause catches: a class or a tuple of them, known now (a Const) or read when it runs."""
    if handler.type is None:
        return Const(BaseException)
    found, obj = lw.static(handler.type)
    if found:
        return Const(obj)
    if isinstance(handler.type, gast.Tuple):
        parts = [lw.static(e) for e in handler.type.elts]
        if all(found for found, _ in parts):
            return Const(tuple(obj for _, obj in parts))
    return lw.expr(handler.type)


# ---------------------------------------------------------------- the body as written

def _names_in(body: list) -> list[gast.Name]:
    """The names of body's statements in the order Python reads them (near enough: statement by statement)."""
    found = []
    for stmt in body:
        found.extend(n for n in gast.walk(stmt) if isinstance(n, gast.Name))
    return found


def _scoped_stores(body: list) -> set[str]:
    """The names body binds in the function's own scope (not a comprehension's or a nested function's)."""
    stored: set[str] = set()
    stack = list(body)
    while stack:
        node = stack.pop()
        if isinstance(node, (gast.Lambda, gast.ListComp, gast.SetComp, gast.DictComp, gast.GeneratorExp)):
            continue
        if isinstance(node, (gast.FunctionDef, gast.ClassDef)):
            stored.add(node.name)
            continue
        if isinstance(node, gast.Name) and isinstance(node.ctx, (gast.Store, gast.Del)):
            stored.add(node.id)
        stack.extend(gast.iter_child_nodes(node))
    return stored


def _probe_inputs(lw: "Lowerer", node: gast.Try, body: list) -> list[str]:
    """The variables of the function the body as written reads or binds that hold a value here: passed to it."""
    stored = _scoped_stores(body)
    own = getattr(node, "s2s_locals", frozenset())
    names: list[str] = []
    for n in _names_in(body):
        if n.id in names:
            continue
        if lw.bound(n.id):
            names.append(n.id)
        elif n.id not in stored and n.id in getattr(node, "s2s_defined", ()) and isinstance(n.ctx, gast.Load):
            raise lw.error(f"the `try` body uses {n.id!r}, a function (or class) defined inside the function: s2s "
                           f"runs the body as written to find how it ends, and the function it defines is not made "
                           f"there", n, hint=f"define {n.id!r} at module level (given what it reads as arguments), "
                                             f"or call it before the `try` and use its result in the body")
        elif n.id not in stored and n.id in own and isinstance(n.ctx, gast.Load):
            raise lw.error(f"the `try` body reads {n.id!r}, a variable of the function that holds no value here "
                           f"(or a function defined inside it): s2s runs the body as written to find how it ends, and "
                           f"cannot give it {n.id!r}", n,
                           hint=f"assign {n.id!r} before the `try`, or define the function at module level")
    return names


def _written(body: list, augmented: bool = True) -> set[str]:
    """The variables whose object the body writes into (`xs.append(v)`, `a[i] = v`, `d[k] += v`, and, augmented,
    `acc += v`, which writes an array or a list in place)."""
    found: set[str] = set()
    for sub in (n for stmt in body for n in gast.walk(stmt)):
        if isinstance(sub, gast.Subscript) and isinstance(sub.ctx, gast.Store) and isinstance(sub.value, gast.Name):
            found.add(sub.value.id)
        elif augmented and isinstance(sub, gast.AugAssign) and isinstance(sub.target, gast.Name):
            found.add(sub.target.id)
        elif isinstance(sub, gast.Call) and isinstance(sub.func, gast.Attribute) \
                and isinstance(sub.func.value, gast.Name) and sub.func.attr in _CONTAINER_WRITES:
            found.add(sub.func.value.id)
    return found


_CONTAINER_WRITES = {"append", "extend", "insert", "pop", "remove", "clear", "update", "setdefault", "add",
                     "discard", "sort", "reverse", "fill", "put", "popitem", "resize", "itemset"}


def _refuse_effects(lw: "Lowerer", body: list) -> None:
    """What running the body once more would do twice: a write into an object's attribute (or into what it holds)."""
    for sub in (n for stmt in body for n in gast.walk(stmt)):
        target = None
        if isinstance(sub, (gast.Attribute, gast.Subscript)) and isinstance(sub.ctx, gast.Store):
            base = sub
            while isinstance(base, (gast.Attribute, gast.Subscript)):
                if isinstance(base, gast.Attribute):
                    target = sub
                base = base.value
        elif isinstance(sub, gast.Call) and isinstance(sub.func, gast.Attribute) \
                and sub.func.attr in _CONTAINER_WRITES and isinstance(sub.func.value, gast.Attribute):
            target = sub
        if target is not None:
            raise lw.error("this `try` body writes into an object (an attribute, or what an attribute holds): s2s "
                           "runs a `try` body once more, as written, to find how it ends, which would make that write "
                           "twice", target,
                           hint="compute the value in the body and store it on the object after the `try`")


def refuse_when_run_twice(lw: "Lowerer", node: gast.Try, stmts: list) -> None:
    """What a statement of the body (its IR, stmts) does that would happen twice, once as written and once in the
    derivative. A call of a method of an object known only when the code runs is refused where it runs, when the
    derivative's body reaches it (the body as written took the same path and made it already): one on a path that
    does not run for the values at hand (the array-API branch of a library's helper, given NumPy arrays) is no
    refusal. A random draw, another call Python makes as written (star-arguments, a library function s2s does not
    read) and any other effect are refused when the derivative is made (a library function holding one is then
    called as it is: lower.py's expr_Call)."""
    for stmt in walk_list(stmts):
        if not isinstance(stmt, Op):
            continue
        owner = getattr(stmt.prim, "__self__", None)
        module = getattr(stmt.prim, "__module__", None) or ""
        draws = isinstance(owner, (np.random.Generator, np.random.RandomState, np.random.BitGenerator,
                                   random.Random)) or module.startswith("numpy.random") or module == "random"
        effect = getattr(stmt.prim, "_s2s_effect", False) and stmt.prim not in _NOT_TWICE
        if not (draws or effect) or getattr(stmt.prim, "_s2s_refused", False):      # (a `try` inside: refused)
            continue
        what = "draws random numbers" if draws else (
            "calls a function with star-arguments as Python calls it" if stmt.prim is helpers.star_call else
            "calls a library function s2s does not read, as Python calls it" if stmt.prim is runtime._reads_only else
            "calls a method of an object known only when the code runs")
        message = (f"this `try` body {what}: s2s runs a `try` body once more, as written, to find how it ends, which "
                   f"would do that twice")
        hint = "draw the numbers (or make the call) before the `try` and use the result in its body"
        loc = stmt.loc or lw.parsed.loc(node)
        if stmt.prim is helpers.call_method or getattr(stmt.prim, "__name__", "").startswith("method_call_"):
            stmt.prim = helpers.refused_when_run(message, loc, hint)
        else:
            raise UnsupportedSyntax(message, loc, hint=hint)


_NOT_TWICE = frozenset({helpers.try_body, runtime._bound})     # (an unbound read raises the same each time)


def walk_list(stmts: list) -> list:
    return list(walk(Block(stmts, [])))


def _exits_to_returns(stmts: list) -> None:
    """`break` and `continue` of a loop around the `try` end the body as written: `return` (not those of loops
    inside the body)."""
    for k, stmt in enumerate(stmts):
        if isinstance(stmt, (gast.Break, gast.Continue)):
            stmts[k] = gast.copy_location(gast.Return(value=None), stmt)
        elif isinstance(stmt, (gast.If, gast.With, gast.Try)):
            for field in ("body", "orelse", "finalbody"):
                _exits_to_returns(getattr(stmt, field, None) or [])
            for handler in getattr(stmt, "handlers", []):
                _exits_to_returns(handler.body)


def _probe(lw: "Lowerer", node: gast.Try, body: list, names: list[str]) -> types.FunctionType:
    """The body as written, a function of the variables it reads: compiled from the user's lines (a traceback
    through it shows them), in the function's namespace and closure."""
    parsed = lw.parsed
    tree = clone_tree(body)
    _exits_to_returns(tree)
    stmts = gast.gast_to_ast(gast.Module(body=tree, type_ignores=[])).body or [ast.Pass()]
    for sub in (n for stmt in stmts for n in ast.walk(stmt)):
        if getattr(sub, "lineno", None) is not None:        # the file's lines and columns
            sub.lineno += parsed.line_offset
            sub.col_offset += parsed.col_offset
            if getattr(sub, "end_lineno", None) is not None:
                sub.end_lineno += parsed.line_offset
            if getattr(sub, "end_col_offset", None) is not None:
                sub.end_col_offset += parsed.col_offset
    stored = _scoped_stores(body)
    cells = sorted({n.id for n in _names_in(body) if n.id in parsed.closure and n.id not in names
                    and n.id not in stored})
    name = own = parsed.node.name
    if any(n.id == name for n in _names_in(body)):      # a recursive call: of the function, not of this body
        own = f"{name}_try_body"
    template = "def __s2s_make__():\n" + "".join(f"    {c} = None\n" for c in cells) + \
        f"    def {own}({', '.join(names)}):\n        pass\n    return {own}\n"
    module = ast.parse(template)
    maker = module.body[0]
    inner = next(s for s in maker.body if isinstance(s, ast.FunctionDef))
    ast.increment_lineno(module, parsed.line_offset + node.lineno - 1)       # at the `try`'s line
    inner.body = stmts
    ast.fix_missing_locations(module)
    try:
        code = compile(module, parsed.filename, "exec")
    except (SyntaxError, ValueError, TypeError) as exc:
        raise lw.error(f"s2s cannot run this `try` body as written ({exc})", node) from None
    namespace: dict = {}
    exec(code, dict(parsed.globals), namespace)
    stub = namespace["__s2s_make__"]()
    closure = tuple(parsed.closure[n] for n in stub.__code__.co_freevars) or None
    probe = types.FunctionType(stub.__code__, parsed.globals, f"{name}_try_body", None, closure)
    probe.__qualname__ = f"{parsed.fn.__qualname__} (the try body at line {parsed.line_offset + node.lineno})"
    written = _written(body)
    probe.s2s_written = tuple(k for k, n in enumerate(names) if n in written)   # type: ignore[attr-defined]
    augmented = written - _written(body, augmented=False)   # (copied only when of a type written in place)
    probe.s2s_augmented = tuple(k for k, n in enumerate(names) if n in augmented)    # type: ignore[attr-defined]
    return probe


# ---------------------------------------------------------------- a handler's path

def _refuse_handing_on(lw: "Lowerer", node: gast.Try, handler: gast.ExceptHandler, partial: dict,
                       held: list[str]) -> None:
    """A handler that breaks or continues (or returns, with a `finally`) hands the variables on to the loop's next
    iteration, past the loop (or to the `finally`): one the body may have assigned before it raised, which held a
    value before the `try` and which the handler does not assign anew, would hand on a value s2s does not know
    (refused where the handler leaves)."""
    if not lw.may_exit(loop_only=not node.finalbody):
        return
    left = [name for name in held if not lw.bound(name)]
    if not left:
        return
    exits = [n for stmt in handler.body for n in gast.walk(stmt) if isinstance(n, (gast.Break, gast.Continue,
                                                                                   gast.Return))]
    name = left[0]
    message, hint = partial[name]
    how = "the loop's next iteration or past the loop" if not node.finalbody else "what follows (its `finally`)"
    raise lw.error(message.replace(" is read on a path where", " is handed on to " + how + " on a path where", 1),
                   exits[0] if exits else handler, hint=hint)

def _binds_on_completion(stmt: gast.stmt) -> bool:
    """Whether stmt changes its variables only when it completes, as Python runs it: an assignment to names
    (`b = v`, `a, b = v`), an augmented one to a name (`total += v`: when `v` or the operation raises, total holds
    what it held, in place or not) or a write of one item (`out[i] = v`, `out[i] += v`: NumPy's and a list's item
    writes check the index before they write)."""
    if isinstance(stmt, gast.AugAssign):
        if isinstance(stmt.value, gast.GeneratorExp):    # `xs += (f(t) for t in ts)` extends xs item by item
            return False
        targets = [stmt.target]
    elif isinstance(stmt, gast.AnnAssign):
        targets = [stmt.target] if stmt.value is not None else []
    elif isinstance(stmt, gast.Assign):
        targets = stmt.targets
    else:
        return False
    names = [n for t in targets for n in (t.elts if isinstance(t, (gast.Tuple, gast.List)) else [t])]
    names = [n.value if isinstance(n, gast.Starred) else n for n in names]
    if all(isinstance(n, gast.Name) for n in names):
        return bool(names)
    return len(names) == 1 and isinstance(names[0], gast.Subscript) and isinstance(names[0].value, gast.Name) \
        and not isinstance(names[0].slice, gast.Slice)


def _partial_names(lw: "Lowerer", node: gast.Try, body: list) -> dict[str, tuple[str, str]]:
    """The variables the body may have assigned before raising, with the refusal of a read of one on a handler's
    path: all it binds, but what only its last statement binds when it completes (_binds_on_completion)."""
    before = body[:-1] if body and _binds_on_completion(body[-1]) else body
    names = lw.stored_names(before)
    line = lw.parsed.loc(node).line
    reasons = {}
    for name in names:
        assigned = next((lw.parsed.loc(n).line for stmt in before for n in gast.walk(stmt)
                         if isinstance(n, gast.Name) and n.id == name), line)
        reasons[name] = (
            f"{name!r} is read on a path where the `try` at line {line} raised, and its body assigns {name!r} (line "
            f"{assigned}) before the statement that may raise: what {name!r} holds there depends on where the body "
            f"stopped, which s2s does not follow",
            f"assign {name!r} before the `try` (move its assignment out of the body), or assign it in the handler "
            f"before reading it")
    return reasons
