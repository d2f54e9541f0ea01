"""An arithmetic operator on an object of the user's class, as the call of the method Python calls:

    S @ x       ->  S.__matmul__(x)         (S's class defines __matmul__)
    u + v       ->  u.__add__(v)
    2.0 * s     ->  s.__rmul__(2.0)         (a number on the left: Python falls back to the right's method)
    acc += v    ->  acc = acc.__iadd__(v)   (or acc.__add__(v) without __iadd__)
    -s          ->  s.__neg__()

Accepts a `BinOp`, an `AugAssign` to a name and a `UnaryOp` one of whose operands is known, when the derivative is
made, to be an object of a class of the user's whose classes are all the user's (a global `S = Scale(2.0)`, an
attribute of an object known now, an argument the derivative is specialized on by class, a variable every
assignment of which constructs one such class). Guarantees the call is the method Python calls (the objects
rewrite then follows it as any method of a known object); where that cannot be decided when the derivative is
made (a method that may return NotImplemented, an unknown left operand before an object with only the reflected
method, a subclass's reflected method Python would try first), the operator is refused at its place.
"""
from __future__ import annotations

import ast
import inspect
import textwrap
import types
from typing import Any

import gast

from s2s.frontend import parsing
from s2s.frontend.desugar.context import Context, located, map_statements, name
from s2s.frontend.policy import is_user_class, is_user_function

_BINARY = {gast.Add: "add", gast.Sub: "sub", gast.Mult: "mul", gast.MatMult: "matmul", gast.Div: "truediv",
           gast.FloorDiv: "floordiv", gast.Mod: "mod", gast.Pow: "pow"}
_SYMBOL = {gast.Add: "+", gast.Sub: "-", gast.Mult: "*", gast.MatMult: "@", gast.Div: "/", gast.FloorDiv: "//",
           gast.Mod: "%", gast.Pow: "**"}
_UNARY = {gast.USub: "__neg__", gast.UAdd: "__pos__"}


def applies(ctx: Context) -> bool:
    if not ctx.kinds & {gast.BinOp, gast.AugAssign, gast.UnaryOp}:
        return False
    names: dict[str, bool] = {}         # (a name's class is the same wherever it is read: asked once a name)
    # one walk for the operands and, if asked for, the constructions and the bindings (the tree does not change
    # while applies runs: ctx.walked holds its nodes until then)
    ctx.walked = parsing.walk(ctx.node)
    try:
        for n in _operands(ctx.node, ctx.walked):
            if isinstance(n, gast.Name):
                if n.id not in names:
                    names[n.id] = _class_of(ctx, n) is not None
                if names[n.id]:
                    return True
            elif _class_of(ctx, n) is not None:
                return True
        return False
    finally:
        ctx.walked = None


def _operands(root: Any, nodes: list | None = None) -> list:
    out = []
    for node in parsing.walk(root) if nodes is None else nodes:
        if isinstance(node, gast.BinOp) and type(node.op) in _BINARY:
            out += [node.left, node.right]
        elif isinstance(node, gast.AugAssign) and type(node.op) in _BINARY:
            out += [node.target, node.value]
        elif isinstance(node, gast.UnaryOp) and type(node.op) in _UNARY:
            out.append(node.operand)
    return out


def rewrite(ctx: Context) -> None:
    ctx.node.body = map_statements(ctx.node.body, lambda stmt: _augmented(ctx, stmt))

    class Operators(gast.NodeTransformer):
        def visit_BinOp(self, node: gast.BinOp) -> Any:
            self.generic_visit(node)
            return _binary(ctx, node) or node

        def visit_UnaryOp(self, node: gast.UnaryOp) -> Any:
            self.generic_visit(node)
            return _unary(ctx, node) or node

        def visit_FunctionDef(self, node: Any) -> Any:
            return node if node is not ctx.node else self.generic_visit(node)

        visit_Lambda = visit_FunctionDef        # (a nested function's operators are its own, read when lifted)
    Operators().visit(ctx.node)


# ---------------------------------------------------------------- the class of an operand

def _class_of(ctx: Context, node: Any) -> type | None:
    """The class of the object node evaluates to, when known now and a class of the user's made of the user's
    classes alone (not a subclass of float or of NumPy's array, whose operators are the library's)."""
    if isinstance(node, gast.Name):
        classes = ctx.parsed.facts.classes
        if node.id in classes and not ctx.assigned(node.id):
            return _users(classes[node.id])
        made = _constructed(ctx, node.id)
        if made is not None:
            return made
    if not isinstance(node, (gast.Name, gast.Attribute)):
        return None
    found, obj = ctx.static(node)
    if not found or isinstance(obj, (type, types.ModuleType, types.FunctionType, types.MethodType,
                                     types.BuiltinFunctionType)):
        return None
    return _users(type(obj))


def _users(cls: Any) -> type | None:
    if not isinstance(cls, type) or type(cls) is not type:
        return None
    return cls if all(base is object or is_user_class(base) for base in cls.__mro__) else None


def _constructed(ctx: Context, id_: str) -> type | None:
    """The class every assignment of the local variable id_ constructs (`u = Vec(x)`), if one."""
    table = getattr(ctx, "_constructed_classes", None)
    if table is None or table[0] is not ctx.node:
        table = (ctx.node, _constructions(ctx, ctx.walked))
        ctx._constructed_classes = table        # type: ignore[attr-defined]
    return table[1].get(id_)


def _constructions(ctx: Context, nodes: list | None = None) -> dict:
    """nodes: the tree's (parsing.walk), if walked already."""
    values: dict[int, Any] = {}
    names = []
    for n in parsing.walk(ctx.node) if nodes is None else nodes:     # (one walk; parsing's, faster than gast.walk)
        if type(n) is gast.Assign and len(n.targets) == 1 and type(n.targets[0]) is gast.Name:
            values[id(n.targets[0])] = n.value
        elif type(n) is gast.Name and isinstance(n.ctx, (gast.Store, gast.Param, gast.Del)):
            names.append(n)
    stores: dict[str, list] = {}
    for n in names:
        stores.setdefault(n.id, []).append(values.get(id(n)))
    found: dict[str, type] = {}
    callees: dict[str, type | None] = {}        # (what a name calls, looked up once a name)

    def of(value: Any) -> type | None:
        if isinstance(value, gast.Call) and isinstance(value.func, gast.Name):
            if value.func.id not in callees:
                known, made = ctx.static(value.func)
                callees[value.func.id] = _users(made) if known else None
            return callees[value.func.id]
        if isinstance(value, gast.Name):
            return found.get(value.id)
        if isinstance(value, gast.BinOp) and type(value.op) in _BINARY:     # `d = u - v`: what u.__sub__ returns
            kind = _BINARY[type(value.op)]
            left, right = of(value.left), of(value.right)
            method = _method(left, f"__{kind}__") or _method(right, f"__r{kind}__")
            return _returned_class(method) if method is not None else None
        return None
    changed = True
    while changed:
        changed = False
        for id_, assigned in stores.items():
            if id_ in found:
                continue
            classes = {of(value) for value in assigned}
            if len(classes) == 1 and None not in classes:
                found[id_] = classes.pop()
                changed = True
    of = None       # type: ignore[assignment]  # (the recursive closure's cycle broken: the tree goes by reference counting)
    return found


def _returned_class(fn: Any) -> type | None:
    """The user's class every `return` of fn constructs (`return Vec(self.x + other.x)`), if one."""
    try:
        tree = ast.parse(textwrap.dedent(inspect.getsource(fn)))
    except (OSError, TypeError, SyntaxError):
        return None
    classes = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Return):
            value = node.value
            made = fn.__globals__.get(value.func.id) if isinstance(value, ast.Call) and isinstance(
                value.func, ast.Name) else None
            classes.add(_users(made))
    return classes.pop() if len(classes) == 1 else None


# ---------------------------------------------------------------- the method Python calls

def _method(cls: type | None, attr: str) -> Any:
    """The user's function cls gives for `attr` (None: none, or an attribute that is not a plain function)."""
    if cls is None:
        return None
    found = inspect.getattr_static(cls, attr, None)
    return found if isinstance(found, types.FunctionType) and is_user_function(found) else None


def _may_decline(fn: Any) -> bool:
    """Whether the method may return NotImplemented (Python then tries the other operand's method)."""
    return "NotImplemented" in fn.__code__.co_names


def _refused(ctx: Context, node: Any, why: str, hint: str) -> Exception:
    return ctx.error(f"the operator `{_SYMBOL.get(type(node.op), '-')}` on an object of the user's class: {why}",
                     node, hint=hint)


def _call(ctx: Context, receiver: Any, attr: str, args: list, like: Any) -> gast.Call:
    method = located(gast.Attribute(value=receiver, attr=attr, ctx=gast.Load()), like)
    call = located(gast.Call(func=method, args=args, keywords=[]), like)
    call._s2s_operator = True      # its operands are followed as the object's own (instances._escapes)
    return call


def _binary(ctx: Context, node: gast.BinOp, inplace: bool = False) -> Any:
    kind = _BINARY.get(type(node.op))
    if kind is None:
        return None
    left, right = _class_of(ctx, node.left), _class_of(ctx, node.right)
    if left is None and right is None:
        return None
    forward, reflected = f"__{kind}__", f"__r{kind}__"
    if inplace:
        method = _method(left, f"__i{kind}__")
        if method is not None:
            if _may_decline(method):
                raise _refused(ctx, node, f"{left.__name__}.__i{kind}__ may return NotImplemented, and which method "
                                          f"Python then calls is known only when the code runs",
                               f"call the method you mean: x = x.__{kind}__(y)")
            return _call(ctx, node.left, f"__i{kind}__", [node.right], node)
    mine, theirs = _method(left, forward), _method(right, reflected)
    if right is not None and left is not None and right is not left and issubclass(right, left) and theirs is not None:
        raise _refused(ctx, node, f"Python tries {right.__name__}.{reflected} first (a subclass of "
                                  f"{left.__name__}), then may fall back", f"call the method you mean: "
                                                                           f"b.{reflected}(a) or a.{forward}(b)")
    if mine is not None:
        if _may_decline(mine):
            raise _refused(ctx, node, f"{left.__name__}.{forward} may return NotImplemented, and which method Python "
                                      f"then calls is known only when the code runs",
                           f"call the method you mean: a.{forward}(b)")
        return _call(ctx, node.left, forward, [node.right], node)
    if theirs is not None:
        if left is not None or _a_number(node.left):
            if _may_decline(theirs):
                raise _refused(ctx, node, f"{right.__name__}.{reflected} may return NotImplemented",
                               f"call the method you mean: b.{reflected}(a)")
            return _call(ctx, node.right, reflected, [node.left], node)
        raise _refused(ctx, node, f"the left operand is known only when the code runs, and Python calls "
                                  f"{right.__name__}.{reflected} only if the left operand's own operator gives "
                                  f"NotImplemented (a NumPy array applies the operator to each element instead)",
                       f"write `{_spelled(node.right)}.{reflected}(...)`, or put the object on the left")
    if left is not None and _method(left, reflected) is None and (right is not None or _a_number(node.right)):
        raise _refused(ctx, node, f"{(right or left).__name__} defines no {forward} or {reflected}",
                       f"define {forward} on {left.__name__}")
    return None


def _a_number(node: Any) -> bool:
    return isinstance(node, gast.Constant) and isinstance(node.value, (int, float)) and not isinstance(node.value, bool)


def _spelled(node: Any) -> str:
    return node.id if isinstance(node, gast.Name) else "obj"


def _unary(ctx: Context, node: gast.UnaryOp) -> Any:
    attr = _UNARY.get(type(node.op))
    if attr is None:
        return None
    cls = _class_of(ctx, node.operand)
    if cls is None:
        return None
    if _method(cls, attr) is None:
        raise ctx.error(f"`{'-' if attr == '__neg__' else '+'}` on an object of {cls.__name__}, which defines no "
                        f"{attr}", node, hint=f"define {attr} on {cls.__name__}")
    return _call(ctx, node.operand, attr, [], node)


def _augmented(ctx: Context, stmt: Any) -> list | None:
    """`acc += v` on an object: `acc = acc.__iadd__(v)` (or `acc.__add__(v)`), as Python rebinds the name."""
    if not (isinstance(stmt, gast.AugAssign) and isinstance(stmt.target, gast.Name) and type(stmt.op) in _BINARY):
        return None
    read = name(stmt.target.id, stmt.target)
    operation = located(gast.BinOp(left=read, op=stmt.op, right=stmt.value), stmt)
    value = _binary(ctx, operation, inplace=True)
    if value is None:
        return None
    return [located(gast.Assign(targets=[name(stmt.target.id, stmt.target, store=True)], value=value,
                                type_comment=None), stmt)]

