"""Calls through objects, resolved when the derivative is made.

- `self.forward(x)`, `model.loss(w)`, `layer(x)` (`__call__`), `Model.create(...)` on the user's objects:
  the method, specialized on its object (`Facts.known`: inside it `self` is that object), is called with
  the object as its first argument, and lowering inlines it. Array attributes (`self.W`) are still read
  when the derivative runs; methods and lists of layers are read when it is made.
- `functools.partial` objects: their function, with their arguments in front.
- methods of library objects (`rs.randn(3)`, `norm.logpdf(x, m, s)`) are called as the bound method they
  are: a rule is found for it (registry.find_adjoint(bound method)), or, given no active value, its result
  is a constant; `norm(m, s).logpdf(x)` (a frozen distribution) is `norm.logpdf(x, m, s)`.
- a method of an object whose type is known only at run time, that is not an array method, is
  `method_call_n(obj, "name", ...)`: run as Python runs it, and differentiated through s2s's own vjp/jvp of
  the bound method when the derivative first runs (nested.method_call); with keywords it is
  `call_method(obj, "name", ...)`, refused by the transform if given an active value.
- `for layer in self.layers:` over a list of objects known now is unrolled, one copy of the body per layer.
- `g(*args)` with args of a length known now is `g(args[0], args[1])`; a call of a user function with
  `*args`/`**kwargs` parameters calls its specialization to this call's arity; `dict(a=x)` is `{'a': x}`.
"""
from __future__ import annotations

import builtins
import copy
import functools
import inspect
import types
from typing import Any

import gast
import numpy as np

from s2s.frontend import parsing
from s2s.frontend.desugar import helpers, instances
from s2s.frontend.desugar.context import (
    Context,
    calls_in_order,
    constant,
    is_literal,
    is_user_object,
    located,
    map_statements,
    name,
    replace,
)
from s2s.frontend.desugar.known_values import is_literal_value, known_literal
from s2s.frontend.desugar.starred import star_arguments, starred_targets
from s2s.frontend.policy import is_user_class, is_user_function
from s2s.frontend.desugar.specialization import code_signature, specialize  # noqa: F401  (reached as objects.specialize)
from s2s.frontend.tree import Facts, clone_tree, synthetic_of
from s2s.rules import nested

# methods the lowering or the container rewrites handle (or refuse) on values whose type is known only at run
# time: the methods that change a list, dict, set or array in place are left to lowering, which refuses them
_HANDLED = {"append", "copy", "items", "keys", "values", "get", "extend", "insert", "astype", "item",
            "reverse", "sort", "pop", "remove", "clear", "update", "setdefault", "popitem", "add", "discard",
            "fill", "put", "resize", "partition", "itemset", "setfield", "byteswap", "setflags"}

_READS = {"items", "keys", "values"}       # of _HANDLED: reads of a mapping


def applies(ctx: Context) -> bool:
    return not ctx.kinds.isdisjoint((gast.Call, gast.For, gast.Starred))


def rewrite(ctx: Context) -> None:
    changed: list = []

    def noted(rewritten: list | None) -> list | None:
        if rewritten is not None:
            changed.append(True)
        return rewritten
    ctx.node.body = map_statements(ctx.node.body, lambda stmt: noted(starred_targets(ctx, stmt)))
    ctx.node.body = map_statements(ctx.node.body, lambda stmt: noted(_unroll(ctx, stmt)))
    # the calls, as transformer.visit(stmt) reaches them, without a visitor: found by the scan (Context.scan) when
    # nothing changed the tree since (map_statements rebuilds statement lists only, which hold no call)
    calls = ctx.ordered_calls if ctx.fresh_scan and not changed else calls_in_order(ctx.node.body)
    ctx.fresh_scan = False
    transformer = _Calls(ctx)
    for call, owner, key in calls:
        replace(owner, key, transformer.call(call))


# ---------------------------------------------------------------- unrolling loops over layers

def _unroll(ctx: Context, stmt: Any) -> list | None:
    if not isinstance(stmt, gast.For) or stmt.orelse:
        return None
    found, items, bind = _known_items(ctx, stmt)
    if not found:
        return None
    if any(isinstance(n, (gast.Break, gast.Continue)) for s in stmt.body for n in gast.walk(s)):
        raise ctx.error("s2s unrolls a loop over a list of objects (layers), and does not support `break` or "
                        "`continue` in it", stmt, hint="use a flag variable")
    sequence = stmt.iter.args[0] if isinstance(stmt.iter, gast.Call) and stmt.iter.args else stmt.iter
    guard = gast.Call(func=constant(helpers.same_items, stmt), args=[sequence, constant(tuple(items), stmt)],
                      keywords=[])
    out: list = [located(gast.Expr(value=guard), stmt)]     # read when it runs: refused if the list changed
    for k, item in enumerate(items):
        substitutions = bind(k, item)
        if any(isinstance(n, gast.Name) and n.id in substitutions and isinstance(n.ctx, gast.Store)
               for s in stmt.body for n in gast.walk(s)):
            raise ctx.error("the loop variable of a loop over layers is assigned in its body", stmt,
                            hint="use another name")
        for s in clone_tree(stmt.body):
            out.append(_substitute(s, substitutions))
    for target_name, value in (bind(len(items) - 1, items[-1]).items() if items else ()):
        out.append(located(gast.Assign(targets=[name(target_name, stmt, store=True)], value=value,
                                       type_comment=None), stmt))      # the loop variable after the loop
    return out


def _structural(value: Any) -> bool:
    """An object whose methods s2s inlines, or a function: not data."""
    return not is_literal(value) and not isinstance(value, (np.ndarray, np.generic, list, tuple, dict)) \
        and (is_user_object(value) or callable(value))


def _known_items(ctx: Context, stmt: gast.For) -> tuple[bool, list, Any]:
    it, target = stmt.iter, stmt.target
    if isinstance(it, gast.Call) and ctx.names(it.func, builtins.enumerate) and len(it.args) == 1 \
            and isinstance(target, gast.Tuple) and len(target.elts) == 2 \
            and all(isinstance(e, gast.Name) for e in target.elts):
        found, items = ctx.static(it.args[0])
        if found and isinstance(items, (list, tuple)) and items and all(map(_structural, items)):
            i, v = target.elts
            return True, list(items), lambda k, item: {i.id: constant(k, stmt), v.id: constant(item, stmt)}
        return False, [], None
    if not isinstance(target, gast.Name):
        return False, [], None
    found, items = ctx.static(it)
    if isinstance(it, (gast.Tuple, gast.List)) and it.elts:      # `for act in (np.sin, np.cos):`
        known = [ctx.static(e) for e in it.elts]
        found, items = all(f for f, _ in known), [obj for _, obj in known]
    if found and isinstance(items, (list, tuple)) and items and all(map(_structural, items)):
        return True, list(items), lambda k, item: {target.id: constant(item, stmt)}
    return False, [], None


def _substitute(node: Any, values: dict[str, gast.expr]) -> Any:
    class Substitute(gast.NodeTransformer):
        def visit_Name(self, sub: gast.Name) -> Any:
            if sub.id in values and isinstance(sub.ctx, gast.Load):
                return gast.copy_location(copy.copy(values[sub.id]), sub)
            return sub
    return Substitute().visit(node)


# ---------------------------------------------------------------- calls

class _Calls(gast.NodeTransformer):
    def __init__(self, ctx: Context):
        self.ctx = ctx

    def visit_Call(self, node: gast.Call) -> Any:
        self.generic_visit(node)
        return self.call(node)

    def call(self, node: gast.Call) -> Any:
        """node, its own inner calls rewritten already, rewritten."""
        ctx = self.ctx
        node = instances.method_call(ctx, node) or node     # `l1(x)`, `model.mean(x)`: the class's method
        node = _frozen_distribution(ctx, node)
        func = node.func
        found, obj = _super_method(ctx, func) or ctx.static(func)
        if found and not is_literal(obj) and not isinstance(obj, types.ModuleType):
            form = callable_form(ctx, obj, func)
            if form is not None:
                callee, prefix, keywords = form
                node.func, node.args = callee, prefix + node.args
                node.keywords = keywords + node.keywords
            elif isinstance(func, gast.Attribute) and not _data_or_namespace(ctx.static(func.value)[1]):
                node.func = constant(obj, func)      # a method of a library object: the bound method it is
            elif isinstance(func, gast.Subscript):   # `LOSSES["mse"](r)`: the function the dict holds
                node.func = constant(obj, func)
            elif isinstance(func, gast.Attribute) and isinstance(func.value, gast.Call) \
                    and isinstance(ctx.static(func.value)[1], types.ModuleType):
                node.func = constant(obj, func)     # `__import__("cmath").exp(x)`: cmath.exp, not a method
            if obj is dict and not node.args and all(k.arg for k in node.keywords):
                return located(gast.Dict(keys=[constant(k.arg, node) for k in node.keywords],
                                         values=[k.value for k in node.keywords]), node)
        elif not found and isinstance(func, gast.Name) and _made_from_a_class(ctx, func) and not node.keywords \
                and not any(isinstance(a, gast.Starred) for a in node.args):
            # `layer = Affine(W, b); layer(x)`: its __call__, as `layer.apply(x)` is its apply
            node = located(gast.Call(func=constant(nested.method_call(len(node.args)), func),
                                     args=[func, constant("__call__", func)] + node.args, keywords=[]), node)
        elif not found and isinstance(func, gast.Attribute) and (_made_from_a_class(ctx, func.value) or (
                func.attr not in _HANDLED
                and not callable(getattr(np, {"flatten": "ravel"}.get(func.attr, func.attr), None))) or (
                func.attr in _READS and not isinstance(func.value, gast.Name))):
            # (`sig.parameters.values()`: a mapping's read of an object known only when the code runs, not one of
            # the function's dicts, which the containers rewrite reads)
            # a method of an object known only when the code runs (`a = Acc(); a.add(v)`: not numpy.add)
            plain = node.keywords or any(isinstance(a, gast.Starred) for a in node.args)
            helper = helpers.call_method if plain else nested.method_call(len(node.args))
            node = located(gast.Call(func=constant(helper, func),
                                     args=[func.value, constant(func.attr, func)] + node.args,
                                     keywords=node.keywords), node)
        node = star_arguments(ctx, node)
        return _with_known_arguments(ctx, _specialize_call(ctx, node))


def _made_from_a_class(ctx: Context, node: Any) -> bool:
    """Whether node is a variable the function assigns an instance of a user's class to (`a = Acc()`): its
    methods are the class's, whatever their names (`a.add(v)`, `s.mean(x)` are not NumPy's)."""
    if not isinstance(node, gast.Name):
        return False
    made = getattr(ctx, "_instances", None)
    if made is None:            # one walk per function: the names assigned a user class's instance
        made = ctx._instances = set()
        for stmt in parsing.walk(ctx.node):
            if type(stmt) is gast.Assign and isinstance(stmt.value, gast.Call):
                found, cls = ctx.static(stmt.value.func)
                if found and isinstance(cls, type) and is_user_class(cls):
                    made.update(t.id for t in stmt.targets if isinstance(t, gast.Name))
    return node.id in made


def _super_method(ctx: Context, func: Any) -> tuple | None:
    """`super().forward` in a method of an object known now: the method the class's parent gives, bound to
    that object (Python finds the class in the method's `__class__` cell)."""
    if not (isinstance(func, gast.Attribute) and isinstance(func.value, gast.Call)
            and isinstance(func.value.func, gast.Name) and func.value.func.id == "super"
            and ctx.static(func.value.func) == (True, builtins.super)) or func.value.args or func.value.keywords:
        return None                           # super(Cls, self) names its class: read as any call is
    fn = ctx.parsed.fn
    code = getattr(fn, "__code__", None)
    params = list(inspect.signature(fn, follow_wrapped=False).parameters) if code is not None else []
    owner = ctx.parsed.facts.known.get(params[0]) if params else None
    if code is None or "__class__" not in code.co_freevars or owner is None:
        raise ctx.error("s2s reads `super().method(...)` only in a method of an object it knows when the "
                        "derivative is made", func.value, hint="call the parent's method by name: "
                        "Base.method(self, ...)")
    cls = fn.__closure__[code.co_freevars.index("__class__")].cell_contents
    return True, getattr(super(cls, owner), func.attr)


def _data_or_namespace(base: Any) -> bool:
    """A module or class (lowering names its functions), or data whose methods lowering maps to NumPy's
    functions and which must be read when the derivative runs (an array attribute may be rebound)."""
    return isinstance(base, (types.ModuleType, type, np.ndarray, np.generic, list, tuple, dict, set)) \
        or is_literal(base)


def _frozen_distribution(ctx: Context, node: gast.Call) -> gast.Call:
    """`norm(m, s).logpdf(x)` is `norm.logpdf(x, m, s)`, as SciPy's frozen distribution calls it."""
    func = node.func
    if isinstance(func, gast.Attribute) and isinstance(func.value, gast.Name):
        made = _frozen_once(ctx, func.value.id)        # `d = norm(m, s)` earlier, then `d.logpdf(x)`
        if made is not None:
            func = located(gast.Attribute(value=clone_tree(made), attr=func.attr, ctx=gast.Load()), func)
    if not (isinstance(func, gast.Attribute) and isinstance(func.value, gast.Call)):
        return node
    found, dist = ctx.static(func.value.func)
    if not found or not type(dist).__module__.startswith("scipy.stats"):
        return node
    try:
        from scipy.stats._distn_infrastructure import rv_generic
        from scipy.stats._multivariate import multi_rv_generic
    except ImportError:
        return node
    if not isinstance(dist, (rv_generic, multi_rv_generic)):
        return node
    method = located(gast.Attribute(value=func.value.func, attr=func.attr, ctx=gast.Load()), func)
    return located(gast.Call(func=method, args=node.args + func.value.args,
                             keywords=func.value.keywords + node.keywords), node)


def _frozen_once(ctx: Context, id_: str) -> Any:
    """The call `norm(m, s)` a variable is assigned once from, when the names it reads are each bound once (so
    that reading them where the variable is used reads the same values); None otherwise."""
    if id_ not in ctx.local_names():
        return None
    index = ctx.bindings()          # (one walk of the tree, not one per variable looked up)
    mine = index.stores.get(id_, [])
    value = index.value(mine[0]) if mine else None
    if len(mine) != 1 or not isinstance(value, gast.Call):
        return None
    found, dist = ctx.static(value.func)
    if not found or not type(dist).__module__.startswith("scipy.stats"):
        return None
    read = {n.id for n in gast.walk(value) if isinstance(n, gast.Name)}
    if any(len(index.stores.get(r, ())) > 1 for r in read):
        return None
    return value


def callable_form(ctx: Context, obj: Any, like: Any) -> tuple | None:
    """(callee node, leading arguments, keywords) calling obj as lowering inlines it; None: as it is."""
    if hasattr(obj, "__s2s__"):         # a derivative s2s made: an operation with rules of its own
        nested.prepare(obj, ctx.parsed.loc(like))
        return constant(obj, like), [], []
    if _has_rule(obj):                  # a rule registered for this bound method (or object) wins
        return constant(obj, like), [], []
    if isinstance(obj, types.MethodType):
        func, owner = obj.__func__, obj.__self__
        if _inlinable(func):
            first = next(iter(inspect.signature(func).parameters), None)
            known = {first: owner} if first is not None else {}
            reads_owner = isinstance(like, gast.Attribute) and isinstance(like.value, gast.Name) \
                and ctx.static(like.value)[1] is owner
            first_arg = name(like.value.id, like.value) if reads_owner else live(owner, like)  # self.f(x): self
            return constant(specialize(func, known=known), like), [first_arg], []
        return None
    if isinstance(obj, functools.partial):
        inner = callable_form(ctx, obj.func, like) or (constant(obj.func, like), [], [])
        callee, prefix, keywords = inner
        extra = [gast.keyword(arg=k, value=constant(v, like)) for k, v in obj.keywords.items()]
        return callee, prefix + [constant(a, like) for a in obj.args], keywords + extra
    if is_user_object(obj) and callable(obj) and not isinstance(obj, types.FunctionType):
        ctx._depend_on_attribute(type(obj), "__call__")     # (`Square.__call__ = ...`: Python calls the new one)
        return callable_form(ctx, obj.__call__, like)
    return None


def live(obj: Any, like: Any) -> gast.Call:
    """obj, read when the derivative runs (helpers.live): its attributes are never folded as constants."""
    return located(gast.Call(func=constant(helpers.live, like), args=[constant(obj, like)], keywords=[]), like)


def _has_rule(obj: Any) -> bool:
    from s2s.rules import registry
    try:
        return registry.find_adjoint(obj) is not None or registry.find_tangent(obj) is not None
    except TypeError:
        return False


def _inlinable(fn: Any) -> bool:
    return is_user_function(fn)


# ---------------------------------------------------------------- specializations

def _specialize_call(ctx: Context, node: gast.Call) -> gast.Call:
    """A call of a user function with `*args` or `**kwargs` parameters calls its specialization."""
    found, fn = ctx.static(node.func)
    if not found or not isinstance(fn, types.FunctionType) or not _inlinable(fn):
        return node
    code = fn.__code__
    if not code.co_flags & (inspect.CO_VARARGS | inspect.CO_VARKEYWORDS):
        return node
    made = synthetic_of(fn)
    if made is not None and (made.facts.arity or made.facts.kwnames):
        return node                           # already read for its call
    if any(isinstance(a, gast.Starred) for a in node.args) or any(k.arg is None for k in node.keywords):
        return node
    params = code_signature(fn).parameters
    positional = [p for p in params.values() if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    arity = {p.name: max(0, len(node.args) - len(positional)) for p in params.values()
             if p.kind is p.VAR_POSITIONAL}
    extra = tuple(k.arg for k in node.keywords if k.arg not in params)
    kwnames = {p.name: extra for p in params.values() if p.kind is p.VAR_KEYWORD}
    node.func = constant(specialize(fn, arity=arity, kwnames=kwnames), node.func)
    return node


def _with_known_arguments(ctx: Context, node: gast.Call) -> gast.Call:
    """A call of a user function given values known now (`self.predict(params, which="linear")`, a default it
    leaves, a parameter of the caller known the same way) calls its specialization to those values, in which
    the branches they decide are folded before anything reads them (known_values.py)."""
    found, fn = ctx.static(node.func)
    if not found or not isinstance(fn, types.FunctionType) or not _inlinable(fn):
        return node
    if any(isinstance(a, gast.Starred) for a in node.args) or any(k.arg is None for k in node.keywords):
        return node
    made = synthetic_of(fn)
    if made is not None and made.source_of is None:
        return node                     # a function s2s made from a tree (a lifted closure): read as it is
    base = made.source_of if made is not None else fn
    try:
        signature = inspect.signature(fn, follow_wrapped=False)
        bound = signature.bind_partial(*node.args, **{k.arg: k.value for k in node.keywords})
        own = inspect.signature(base, follow_wrapped=False).parameters
    except (TypeError, ValueError):
        return node
    facts = made.facts if made is not None else Facts()
    known = dict(facts.known)
    classes: dict = {}
    for name_, param in signature.parameters.items():
        original = own.get(name_)
        if original is None or original.kind in (original.VAR_POSITIONAL, original.VAR_KEYWORD) or name_ in known:
            continue
        if name_ in bound.arguments:
            found_value, value = known_literal(ctx, bound.arguments[name_], modules=True)
        else:
            found_value, value = param.default is not param.empty and is_literal_value(param.default), param.default
        if found_value:
            known[name_] = value
        elif name_ in bound.arguments and name_ not in facts.classes and original.kind is not original.KEYWORD_ONLY:
            cls = _class_of_argument(ctx, bound.arguments[name_])
            if cls is not None:     # `helper(x, S)`: inside, `s * x` is the class's operator (operators.py)
                classes[name_] = cls
    if len(known) == len(facts.known) and not classes:
        return node
    node.func = constant(specialize(base, known=known, arity=facts.arity, kwnames=facts.kwnames,
                                    classes={**facts.classes, **classes}), node.func)
    return node


def _class_of_argument(ctx: Context, node: Any) -> type | None:
    """The class of an argument known now to be an object of a plain class of the user's that defines an arithmetic
    operator (a global `S = Scale(2.0)`, a parameter known by its class): the callee is read knowing it."""
    if not isinstance(node, (gast.Name, gast.Attribute)):
        return None
    cls = instances.receiver_class(ctx, node) if isinstance(node, gast.Name) else None
    if cls is None:
        found, obj = ctx.static(node)
        cls = type(obj) if found and is_user_object(obj) else None
    if cls is None or not instances.plain(cls) or not any(
            inspect.getattr_static(cls, f"__{k}__", None) is not None for k in _OPERATORS):
        return None
    return cls


_OPERATORS = ("add", "sub", "mul", "matmul", "truediv", "pow", "neg", "radd", "rsub", "rmul", "rmatmul", "rtruediv")
