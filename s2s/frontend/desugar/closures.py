"""Nested functions and lambdas: lifted into functions of their own, their free variables passed at each call.

    def f(x, a):                          def f(x, a):
        def g(y): return a * y      ->        return Constant(g')(a, x) + Constant(g')(a, 1.0)
        return g(x) + g(1.0)              with g'(a, y): return a * y

A call passes the variables' values at the time of the call, as a Python closure reads them; a nested function
that calls itself passes them on to itself (a recursion: s2s/ir/lower_recursion.py). `map(g, xs)`
becomes the list comprehension `[g(v) for v in xs]`. A nested function or lambda used other than by
calling it (returned, stored) is left for the fence to refuse, unless it reads no variable of f.
"""
from __future__ import annotations

import ast
import builtins
import functools
import types
from typing import Any

import gast

from s2s.frontend.desugar.context import Context, constant, is_literal, located, name
from s2s.frontend.tree import Facts, Synthetic, clone_tree, register_synthetic

_Lifted = tuple       # (the lifted function, the names of the free variables it takes first)


def applies(ctx: Context) -> bool:
    """A nested def or lambda, `map(g, xs)` or `functools.partial(g, a)(b)` occurs."""
    return ctx.nested_functions or gast.Lambda in ctx.kinds or ctx.any_call(
        lambda call: (len(call.args) >= 2 and not call.keywords and ctx.calls_one_of(call, builtins.map))
        or (isinstance(call.func, gast.Call) and bool(call.func.args) and ctx.calls_one_of(call.func, functools.partial)))


def rewrite(ctx: Context) -> None:
    _map_to_comprehension(ctx)
    _partial_calls(ctx)
    lifted: dict[str, _Lifted] = {}
    kept: set[str] = set()

    def visit_body(body: list) -> list:
        out = []
        for stmt in body:
            for field in ("body", "orelse"):
                inner = getattr(stmt, field, None)
                if isinstance(inner, list) and inner and isinstance(inner[0], gast.stmt) \
                        and not isinstance(stmt, gast.FunctionDef):
                    setattr(stmt, field, visit_body(inner))
            target, args, fbody, like = _definition(stmt)
            if target is not None and _liftable(ctx, target):
                fbody[:] = [_calls(ctx, lifted).visit(s) for s in fbody]     # calls of siblings lifted before
                made = _lift(ctx, target, args, fbody, like)
                if made is not None and (not made[1] or _only_called(ctx, target)):
                    lifted[target] = made
                    continue
                kept.add(target)
            out.append(stmt)
        return out

    ctx.node.body = visit_body(ctx.node.body)
    _rewrite_uses(ctx, lifted)


def _definition(stmt: Any) -> tuple:
    """(name, arguments, body statements, node) of `def g(...)` or `g = lambda ...: ...`."""
    if isinstance(stmt, gast.FunctionDef) and not stmt.decorator_list:
        return stmt.name, stmt.args, stmt.body, stmt
    if isinstance(stmt, gast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], gast.Name) \
            and isinstance(stmt.value, gast.Lambda):
        lam = stmt.value
        ret = located(gast.Return(value=lam.body), lam.body)
        return stmt.targets[0].id, lam.args, [ret], lam
    return None, None, None, None


def _liftable(ctx: Context, target: str) -> bool:
    """Bound once (used only by calls, or reading no variable of f: checked when lifted)."""
    stores = 0
    for node in gast.walk(ctx.node):
        if isinstance(node, gast.FunctionDef) and node.name == target and node is not ctx.node:
            stores += 1
        elif isinstance(node, gast.Name) and node.id == target and isinstance(node.ctx, gast.Store):
            stores += 1
    return stores == 1


def _only_called(ctx: Context, target: str) -> bool:
    called = {id(n.func) for n in gast.walk(ctx.node) if isinstance(n, gast.Call)}
    return all(id(n) in called for n in gast.walk(ctx.node)
               if isinstance(n, gast.Name) and n.id == target and isinstance(n.ctx, gast.Load))


def _free_locals(ctx: Context, args: gast.arguments, body: list) -> list[str]:
    own = {a.id for a in args.posonlyargs + args.args + args.kwonlyargs}
    own |= {a.id for a in (args.vararg, args.kwarg) if a is not None}
    for node in body:
        for sub in gast.walk(node):
            if isinstance(sub, gast.Name) and isinstance(sub.ctx, gast.Store):
                own.add(sub.id)
    outer = ctx.local_names()
    free: list[str] = []
    for node in body + list(args.defaults) + [d for d in args.kw_defaults if d is not None]:
        for sub in gast.walk(node):
            if isinstance(sub, gast.Name) and isinstance(sub.ctx, gast.Load) and sub.id in outer \
                    and sub.id not in own and sub.id not in free:
                free.append(sub.id)
    return free


def _lift(ctx: Context, target: str, args: gast.arguments, body: list, like: Any) -> _Lifted | None:
    if not all(isinstance(d, gast.Constant) for d in list(args.defaults) + [d for d in args.kw_defaults if d]):
        return None                         # defaults computed in f: left for the fence
    free = _free_locals(ctx, args, body)
    recursive = target in free or any(      # `def g(n): ... g(n - 1)`: calls itself (ir/lower_recursion.py)
        isinstance(n, gast.Name) and n.id == target and isinstance(n.ctx, gast.Load) for s in body for n in gast.walk(s))
    if recursive:
        free = [f for f in free if f != target]
        called = {id(n.func) for s in body for n in gast.walk(s) if isinstance(n, gast.Call)}
        if any(isinstance(n, gast.Name) and n.id == target and isinstance(n.ctx, gast.Load) and id(n) not in called
               for s in body for n in gast.walk(s)):
            raise ctx.error(f"recursive function {target!r} uses itself other than by calling itself", like,
                            hint="call it, or write the recursion as a loop that carries what each call passes on")
    parent = ctx.parsed
    params = [gast.Name(id=f, ctx=gast.Param(), annotation=None, type_comment=None) for f in free]
    new_args = clone_tree(args)
    new_args.posonlyargs = params + list(new_args.posonlyargs)
    new_body = clone_tree(body)
    if recursive and free:                  # its calls of itself pass the variables it reads first, as f's do
        for call in (n for s in new_body for n in gast.walk(s) if isinstance(n, gast.Call)):
            if isinstance(call.func, gast.Name) and call.func.id == target:
                call.args = [name(f, call.func) for f in free] + call.args
    node = gast.FunctionDef(name=target, args=new_args, body=new_body, decorator_list=[], returns=None,
                            type_comment=None)
    located(node, like)
    fn = _function_object(parent, node, target)
    facts = Facts(known={f: parent.facts.known[f] for f in free
                         if f in parent.facts.known and not ctx.assigned(f)})
    register_synthetic(fn, Synthetic(node, parent.filename, facts, line_offset=parent.line_offset,
                                     col_offset=parent.col_offset))
    return fn, free


def _function_object(parent: Any, node: gast.FunctionDef, target: str) -> types.FunctionType:
    """A real function with node's signature (its defaults too), in parent's namespace and closure cells:
    what inlining binds a call against, what free names are read through, and what runs when the function
    is passed as a value (odeint's func): node's own body, or a stub returning the free names if it
    cannot be compiled."""
    cells = parent.closure
    held: dict[str, Any] = {}
    try:
        source = _real_source(node, target, cells, held)
        compile(source, parent.filename, "exec")
    except (SyntaxError, ValueError, TypeError, AttributeError):
        held.clear()
        source = _stub_source(node, target, cells)
    namespace: dict = {}
    exec(compile(source, parent.filename, "exec"), dict(parent.globals), namespace)
    stub = namespace["__s2s_make__"]()
    own = types.CellType()                  # the function itself, for a body that calls it (recursion)
    closure = tuple(cells[n] if n in cells else types.CellType(held[n]) if n in held else own
                    for n in stub.__code__.co_freevars) or None
    fn = types.FunctionType(stub.__code__, parent.globals, target, stub.__defaults__, closure)
    own.cell_contents = fn
    fn.__kwdefaults__ = stub.__kwdefaults__
    fn.__qualname__ = f"{parent.fn.__qualname__}.<locals>.{target}"
    return fn


def _maker(used: list[str], inner: str) -> str:
    return "def __s2s_make__():\n" + "".join(f"    {n} = None\n" for n in used) + inner + \
        f"    return {inner.split('(')[0].split()[-1]}\n"


def _stub_source(node: gast.FunctionDef, target: str, cells: dict) -> str:
    used = sorted({n.id for n in gast.walk(node) if isinstance(n, gast.Name) and n.id in cells})
    stub_args = ast.unparse(gast.gast_to_ast(node.args)) if _has_args(node.args) else ""
    return _maker(used, f"    def {target}({stub_args}):\n        return ({', '.join(used)}{',' if used else ''})\n")


def _real_source(node: gast.FunctionDef, target: str, cells: dict, held: dict) -> str:
    """node as Python source, the objects its constants hold (a helper, a lifted function) read from cells."""
    class Held(gast.NodeTransformer):
        def visit_Constant(self, sub: gast.Constant) -> Any:
            if is_literal(sub.value):
                return sub
            key = f"__s2s_held_{len(held)}__"
            held[key] = sub.value
            return gast.copy_location(gast.Name(id=key, ctx=gast.Load(), annotation=None, type_comment=None), sub)

    real = Held().visit(clone_tree(node))
    real.name = target
    used = sorted({n.id for n in gast.walk(real) if isinstance(n, gast.Name) and n.id in cells}) + list(held)
    text = ast.unparse(ast.fix_missing_locations(gast.gast_to_ast(real)))
    return _maker(used, "".join("    " + line + "\n" for line in text.splitlines()))


def _has_args(args: gast.arguments) -> bool:
    return bool(args.posonlyargs or args.args or args.kwonlyargs or args.vararg or args.kwarg)


def _rewrite_uses(ctx: Context, lifted: dict[str, _Lifted]) -> None:
    ctx.node.body = [_calls(ctx, lifted).visit(stmt) for stmt in ctx.node.body]


def _calls(ctx: Context, lifted: dict[str, _Lifted]) -> gast.NodeTransformer:
    """Calls of lifted functions pass the free variables; lambdas called or read-only are lifted here."""
    class Calls(gast.NodeTransformer):
        def visit_Call(self, node: gast.Call) -> Any:
            self.generic_visit(node)
            func = node.func
            if isinstance(func, gast.Name) and func.id in lifted:
                fn, free = lifted[func.id]
                node.func = constant(fn, func)
                node.args = [name(f, func) for f in free] + node.args
            elif isinstance(func, gast.Lambda):
                made = _lift(ctx, "lambda_", func.args, [located(gast.Return(value=func.body), func.body)], func)
                if made is not None:
                    fn, free = made
                    node.func = constant(fn, func)
                    node.args = [name(f, func) for f in free] + node.args
            return node

        def visit_Lambda(self, node: gast.Lambda) -> Any:
            self.generic_visit(node)
            made = _lift(ctx, "lambda_", node.args, [located(gast.Return(value=node.body), node.body)], node)
            if made is not None and not made[1]:
                return constant(made[0], node)        # reads no variable of f: a plain function
            return node

        def visit_Name(self, node: gast.Name) -> Any:
            if node.id in lifted and isinstance(node.ctx, gast.Load) and not lifted[node.id][1]:
                return constant(lifted[node.id][0], node)
            return node

    return Calls()


def _map_to_comprehension(ctx: Context) -> None:
    class Maps(gast.NodeTransformer):
        def visit_Call(self, node: gast.Call) -> Any:
            self.generic_visit(node)
            if len(node.args) < 2 or node.keywords or not ctx.names(node.func, builtins.map):
                return node
            fn, *seqs = node.args
            items = [ctx.fresh("item") for _ in seqs]
            target = name(items[0], node, store=True) if len(seqs) == 1 else \
                located(gast.Tuple(elts=[name(i, node, store=True) for i in items], ctx=gast.Store()), node)
            it = seqs[0] if len(seqs) == 1 else located(gast.Call(func=constant(builtins.zip, node), args=seqs,
                                                                  keywords=[]), node)
            call = located(gast.Call(func=fn, args=[name(i, node) for i in items], keywords=[]), node)
            comp = gast.comprehension(target=target, iter=it, ifs=[], is_async=0)
            return located(gast.ListComp(elt=call, generators=[comp]), node)

    ctx.node.body = [Maps().visit(stmt) for stmt in ctx.node.body]


def _partial_calls(ctx: Context) -> None:
    """`functools.partial(g, a, k=v)(b)` is `g(a, b, k=v)`."""
    class Partials(gast.NodeTransformer):
        def visit_Call(self, node: gast.Call) -> Any:
            self.generic_visit(node)
            inner = node.func
            if isinstance(inner, gast.Call) and inner.args and ctx.names(inner.func, functools.partial) \
                    and not any(isinstance(a, gast.Starred) for a in inner.args):
                node.func = inner.args[0]
                node.args = inner.args[1:] + node.args
                node.keywords = inner.keywords + node.keywords
            return node

    ctx.node.body = [Partials().visit(stmt) for stmt in ctx.node.body]
