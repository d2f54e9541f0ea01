"""Objects of the user's plain classes whose class is known when the derivative is made: built in the function
(`l1 = Layer(W)`), or passed as an argument the derivative is specialized on by class (s2s/driver/pipeline.py).

- `rewrite` opens a construction of a plain class (`Layer(W)`: no `__new__`, `__setattr__`, `__getattr__`,
  `__slots__` or metaclass of its own) into the object made empty, then filled by its `__init__` called as the
  user's function it is:

      l1 = new_object(Layer)
      Layer.__init__(l1, W)

  so that lowering performs `self.W = W` as a write into an object this call made, forwarded to the reads of
  `self.W` in its methods, which carry the derivative (s2s/ir/object_state.py: the "new" objects). The
  construction is hoisted before the statement it is in (Assign, Expr, Return), innermost first; one in a
  branch of an expression (`a if c else Layer(w)`, `and`/`or`, a lambda, a `while` test) is left as it is.
- `method_call` reads `obj.name(...)` and `obj(...)` on a value of a known class as that class's function, called
  with obj first (`Layer.__call__(l1, x)`), specialized with its first parameter's class known (methods calling
  methods), never NumPy's function of the same name (`model.mean(x)` is not numpy.mean(model, x)). The class of
  a value is known for a parameter the function is specialized on by class (Facts.classes: `self` of such a
  method, an argument), and for a variable every assignment of which is an opened construction of that one class
  (or another such variable). A variable the function gives away (`Feeder(weights)`, `f(layer)`, `return layer`)
  is not opened: its object is made and its methods run as Python makes and runs them, as before. The derivative
  depends on each class attribute it read (a method replaced on the class makes it anew: dispatch.py).
"""
from __future__ import annotations

import ast
import dataclasses
import inspect
import linecache
import textwrap
import types
import weakref
from typing import Any

import gast
import numpy as np

from s2s import trees
from s2s.frontend import parsing
from s2s.frontend.desugar import helpers
from s2s.frontend.desugar.context import Context, constant, located, map_statements, name
from s2s.frontend.desugar.specialization import specialize
from s2s.frontend.policy import is_user_class, is_user_function
from s2s.rules import nested

_OBJECT_SLOTS = ("__setattr__", "__getattribute__", "__delattr__")


def openable(cls: Any) -> bool:
    """A plain class of the user's whose construction s2s follows (`plain`, or a plain dataclass: `dataclass_init`),
    none of whose functions changes a container an attribute holds."""
    return (plain(cls) or dataclass_init(cls) is not None) and not _changes_what_it_holds(cls)


_DATACLASS_INITS: "weakref.WeakKeyDictionary[type, Any]" = weakref.WeakKeyDictionary()
_GENERATED = {"__init__", "__repr__", "__eq__", "__lt__", "__le__", "__gt__", "__ge__", "__hash__"}


def dataclass_init(cls: Any) -> Any:
    """For a dataclass of the user's built as Python builds a plain class's objects (not frozen, no slots, no
    `__new__`, `__setattr__` or metaclass of its own, `__init__` the one dataclasses wrote, no InitVar), a
    function that does what that `__init__` does, with source s2s reads: each field's parameter (its default,
    `default_factory` called when it is not given, keyword-only fields as such) stored on the object in the order
    of the fields, then `self.__post_init__()` if the class has one. None for any other class."""
    if not isinstance(cls, type):
        return None
    return _per_class(_DATACLASS_INITS, cls, _dataclass_init)


def _dataclass_init(cls: type) -> Any:
    if type(cls) is not type or not is_user_class(cls) or not dataclasses.is_dataclass(cls) \
            or trees.registered(cls) is not None or cls.__dataclass_params__.frozen:
        return None
    if any(base is not object and (not is_user_class(base) or "__slots__" in vars(base)) for base in cls.__mro__):
        return None
    if cls.__new__ is not object.__new__ or any(getattr(cls, n) is not getattr(object, n) for n in _OBJECT_SLOTS) \
            or inspect.getattr_static(cls, "__getattr__", None) is not None:
        return None
    init = inspect.getattr_static(cls, "__init__", None)
    if not (isinstance(init, types.FunctionType) and _generated(init)):
        return None
    post_init = inspect.getattr_static(cls, "__post_init__", None)
    if post_init is not None and not (isinstance(post_init, types.FunctionType) and is_user_function(post_init)):
        return None
    fields = list(getattr(cls, "__dataclass_fields__").values())
    if any(f._field_type is not dataclasses._FIELD for f in fields if f._field_type is not dataclasses._FIELD_CLASSVAR):
        return None                                 # (an InitVar: a parameter that is not stored)
    fields = [f for f in fields if f._field_type is dataclasses._FIELD]
    if any(not f.name.isidentifier() or f.name.startswith("_s2s") for f in fields):
        return None
    params, star, body, defaults = ["self"], False, [], {}
    missing = "_s2s_missing"
    for f in fields:
        has_default = f.default is not dataclasses.MISSING
        has_factory = f.default_factory is not dataclasses.MISSING
        if not f.init:
            if has_factory:
                defaults[f"_s2s_f{len(defaults)}"] = f.default_factory
                body.append(f"self.{f.name} = _s2s_f{len(defaults) - 1}()")
            elif has_default:
                defaults[f"_s2s_d{len(defaults)}"] = f.default
                body.append(f"self.{f.name} = _s2s_d{len(defaults) - 1}")
            continue
        if f.kw_only and not star:
            params.append("*")
            star = True
        if has_factory:
            defaults[f"_s2s_f{len(defaults)}"] = f.default_factory
            params.append(f"{f.name}={missing}")
            body.append(f"self.{f.name} = _s2s_f{len(defaults) - 1}() if {f.name} is {missing} else {f.name}")
            continue
        if has_default:
            defaults[f"_s2s_d{len(defaults)}"] = f.default
            params.append(f"{f.name}=_s2s_d{len(defaults) - 1}")
        else:
            params.append(f.name)
        body.append(f"self.{f.name} = {f.name}")
    if post_init is not None:
        body.append("self.__post_init__()")
    filename = f"<s2s: the __init__ of dataclass {cls.__module__}.{cls.__qualname__}>"
    text = f"def __init__({', '.join(params)}):\n" + "".join(f"    {line}\n" for line in body or ["pass"])
    linecache.cache[filename] = (len(text), None, text.splitlines(keepends=True), filename)
    namespace: dict = dict(init.__globals__)
    namespace.update(defaults)
    namespace[missing] = _MISSING
    exec(compile(text, filename, "exec"), namespace)
    made = namespace["__init__"]
    made.__qualname__ = f"{cls.__qualname__}.__init__"
    made.__module__ = init.__module__
    return made


class _Missing:
    def __repr__(self) -> str:
        return "<a dataclass field not given>"


_MISSING = _Missing()


def _generated(fn: types.FunctionType) -> bool:
    """Whether fn is a method dataclasses wrote (its code compiled from a string, or its wrapper of `__repr__`,
    named as one of its methods)."""
    return fn.__name__ in _GENERATED and fn.__code__.co_filename in ("<string>", dataclasses.__file__)


def plain(cls: Any) -> bool:
    """A plain class of the user's: `__init__` (if any) the user's function, nothing of its own deciding how an
    attribute is written or read, no slots, no metaclass (an argument of such a class is known by its class).
    Asked for every argument of every call of a derivative: remembered per class."""
    return _per_class(_PLAIN, cls, _plain)


def _per_class(table: Any, cls: Any, compute: Any) -> Any:
    """compute(cls), remembered in table (a class that cannot be weakly referred to: computed each time)."""
    try:
        return table[cls]
    except (KeyError, TypeError):
        pass
    found = compute(cls)
    try:
        table[cls] = found
    except TypeError:
        pass
    return found


_PLAIN: "weakref.WeakKeyDictionary[type, bool]" = weakref.WeakKeyDictionary()


def _plain(cls: Any) -> bool:
    if not isinstance(cls, type) or type(cls) is not type or not is_user_class(cls):
        return False
    if dataclasses.is_dataclass(cls) or trees.registered(cls) is not None:
        return False
    if any(base is not object and (not is_user_class(base) or "__slots__" in vars(base)) for base in cls.__mro__):
        return False
    if cls.__new__ is not object.__new__ or any(getattr(cls, n) is not getattr(object, n) for n in _OBJECT_SLOTS):
        return False
    if inspect.getattr_static(cls, "__getattr__", None) is not None:
        return False
    init = inspect.getattr_static(cls, "__init__", None)
    return init is object.__init__ or isinstance(init, types.FunctionType) and is_user_function(init)


_MUTATORS = {"append", "extend", "insert", "pop", "remove", "clear", "update", "setdefault", "add", "discard",
             "popitem", "sort", "reverse"}
_CHANGES: "weakref.WeakKeyDictionary[type, bool]" = weakref.WeakKeyDictionary()


def _changes_what_it_holds(cls: type) -> bool:
    """Whether a function of the class changes a container an attribute holds (`self.vals.append(v)`,
    `self.d[k] = v`), or stores an attribute named as one of the class's functions (`self.mean = f`, which Python
    then calls instead of the class's `mean`), or calls setattr: such an object stays one Python makes and runs
    (lowering does not follow those writes into an object this call made)."""
    found = _CHANGES.get(cls)
    if found is None:
        found = False
        functions = {name for base in cls.__mro__[:-1] for name, v in vars(base).items() if callable(v)
                     or isinstance(v, (staticmethod, classmethod))}
        for base in cls.__mro__[:-1]:
            for fn in vars(base).values():
                fn = getattr(fn, "__func__", fn)
                if isinstance(fn, types.FunctionType) and dataclasses.is_dataclass(base) and _generated(fn):
                    continue                # (dataclasses' own: the __init__ is dataclass_init's, they store no more)
                if isinstance(fn, types.FunctionType) and (_mutates_held(fn) or _stores_over(fn, functions)):
                    found = True
        _CHANGES[cls] = found
    return found


def _mutates_held(fn: types.FunctionType) -> bool:
    try:
        tree = ast.parse(textwrap.dedent(inspect.getsource(fn)))
    except (OSError, TypeError, SyntaxError):
        return True
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in _MUTATORS \
                and isinstance(node.func.value, (ast.Attribute, ast.Subscript)):
            return True
        targets = node.targets if isinstance(node, ast.Assign) else [node.target] \
            if isinstance(node, (ast.AugAssign, ast.AnnAssign)) else []
        if any(isinstance(t, ast.Subscript) and isinstance(t.value, (ast.Attribute, ast.Subscript)) for t in targets):
            return True
        if isinstance(node, ast.AugAssign) and isinstance(node.target, ast.Attribute):
            return True     # `self.W += g` (in place on an array)
    return False


def _stores_over(fn: types.FunctionType, functions: set) -> bool:
    """Whether fn stores an attribute named as one of these functions, or calls setattr."""
    try:
        tree = ast.parse(textwrap.dedent(inspect.getsource(fn)))
    except (OSError, TypeError, SyntaxError):
        return True
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store) and node.attr in functions:
            return True
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "setattr":
            return True
    return False


def method_of(cls: type, attr: str) -> Any:
    """The function cls gives for `obj.attr(...)`: ("method", f) called with obj first, ("static", f), or None
    (an attribute of the instance, a classmethod, a property, a library's method)."""
    found = inspect.getattr_static(cls, attr, None)
    if isinstance(found, staticmethod):
        fn = found.__func__
        return ("static", fn) if is_user_function(fn) else None
    if isinstance(found, types.FunctionType) and is_user_function(found):
        return ("method", found)
    return None


def specialized_method(fn: types.FunctionType, cls: type, shadowed: frozenset = frozenset()) -> types.FunctionType:
    """fn read with its first parameter (`self`) an object of cls (holding attributes of its own for the names
    shadowed, which Python calls instead of the class's functions)."""
    first = next(iter(inspect.signature(fn, follow_wrapped=False).parameters), None)
    return specialize(fn, classes={first: cls}, shadowed={first: shadowed}) if first is not None else fn


# ---------------------------------------------------------------- the class of a receiver

def receiver_class(ctx: Context, node: Any) -> type | None:
    """The class of the object node evaluates to, when known now (a plain class's)."""
    if not isinstance(node, gast.Name):
        return None
    classes = ctx.parsed.facts.classes
    if node.id in classes and not ctx.assigned(node.id):
        return classes[node.id]
    table = getattr(ctx, "_instance_classes", None)
    if table is None or table[0] is not ctx.node:
        table = (ctx.node, _classes_of_locals(ctx))
        ctx._instance_classes = table        # type: ignore[attr-defined]
    return table[1].get(node.id)


def _classes_of_locals(ctx: Context) -> dict:
    """name -> class, for the variables every binding of which is an object of that one class made here."""
    stores: dict[str, list] = {}
    values: dict[int, Any] = {}
    nodes = parsing.walk(ctx.node)
    for stmt in nodes:
        if type(stmt) is gast.Assign and len(stmt.targets) == 1 and isinstance(stmt.targets[0], gast.Name):
            values[id(stmt.targets[0])] = stmt.value
    params = set(ctx.parsed.facts.classes)
    for n in nodes:
        if type(n) is gast.Name and isinstance(n.ctx, (gast.Store, gast.Param, gast.Del)):
            stores.setdefault(n.id, []).append(values.get(id(n)))
    found: dict[str, type] = {}

    def of(value: Any) -> type | None:
        if isinstance(value, gast.Call):
            known, fn = ctx.static(value.func)
            if known and fn is helpers.new_object and len(value.args) == 1:
                return ctx.static(value.args[0])[1]
        return None         # (a construction left as it is: its object is Python's, its methods run as they are)
    changed = True
    while changed:
        changed = False
        for id_, assigned in stores.items():
            if id_ in found or id_ in params:
                continue
            classes = {of(v) if not isinstance(v, gast.Name) else found.get(v.id) for v in assigned}
            if len(classes) == 1 and None not in classes:
                found[id_] = classes.pop()
                changed = True
    return found


def method_call(ctx: Context, node: gast.Call) -> gast.Call | None:
    """`obj.name(args)` / `obj(args)` on a value of a known class: the class's function, called with obj first."""
    func = node.func
    if isinstance(func, gast.Attribute):
        receiver, attr = func.value, func.attr
    elif isinstance(func, gast.Name):
        receiver, attr = func, "__call__"
    else:
        return None
    cls = receiver_class(ctx, receiver)
    if cls is None:
        return None
    if receiver.id in ctx.parsed.facts.classes and not _misread(attr):
        return None             # an argument's method, not named like NumPy's: run as the bound method it is
    # `model.mean = f` on the argument: its own attribute, which Python calls (a call `model(x)` is its class's)
    shadowed = attr != "__call__" and attr in ctx.parsed.facts.shadowed.get(receiver.id, ())
    found = None if shadowed else method_of(cls, attr)
    if found is None:
        if attr == "__call__":
            raise ctx.error(f"an object of {cls.__name__} is called here, and its class defines no __call__", node)
        if not shadowed and inspect.getattr_static(cls, attr, None) is not None:
            return None                     # a classmethod, a property, a library's method: as before
        # an attribute of the object (`self.inner(h)`, a layer it holds): called as Python calls it, never NumPy's
        # function of that name (lowering inlines it when the object is one this call made)
        plain = node.keywords or any(isinstance(a, gast.Starred) for a in node.args)
        helper = helpers.call_method if plain else nested.method_call(len(node.args))
        return located(gast.Call(func=constant(helper, func), args=[receiver, constant(attr, func)] + node.args,
                                 keywords=node.keywords), node)
    how, fn = found
    ctx._depend_on_attribute(cls, attr)     # (replaced on the class: the derivative is made again)
    if how == "static":
        return located(gast.Call(func=constant(fn, func), args=node.args, keywords=node.keywords), node)
    callee = constant(specialized_method(fn, cls, ctx.parsed.facts.shadowed.get(receiver.id, frozenset())), func)
    return located(gast.Call(func=callee, args=[gast.Name(id=receiver.id, ctx=gast.Load(), annotation=None,
                                                               type_comment=None)] + node.args,
                             keywords=node.keywords), node)


_CONTAINER_METHODS = {"append", "copy", "items", "keys", "values", "get", "extend", "insert", "astype", "item",
                      "reverse", "sort", "pop", "remove", "clear", "update", "setdefault", "popitem", "add", "discard",
                      "fill", "put", "resize", "partition"}


def _misread(attr: str) -> bool:
    """A method name lowering would read as NumPy's function or a container's method on a value of unknown type."""
    return attr in _CONTAINER_METHODS or callable(getattr(np, {"flatten": "ravel"}.get(attr, attr), None))


# ---------------------------------------------------------------- constructions opened

def applies(ctx: Context) -> bool:
    return any(openable(ctx.callee(call)[1]) for call in ctx.calls if isinstance(call.func, gast.Name))


_HOISTED = (gast.Assign, gast.Expr, gast.Return, gast.AugAssign, gast.AnnAssign)
_CONDITIONAL = (gast.IfExp, gast.BoolOp, gast.Lambda, gast.ListComp, gast.SetComp, gast.DictComp,
                gast.GeneratorExp)


def rewrite(ctx: Context) -> None:
    ctx.node.body = map_statements(ctx.node.body, lambda stmt: _open(ctx, stmt))


def _constructions(ctx: Context, node: Any, out: list, kept: bool = True) -> None:
    """The openable constructions in node, innermost and leftmost first (Python's order of evaluation), outside
    the parts of an expression Python may not evaluate; kept: node's value is kept where s2s follows it (the
    statement's value, an item of a list or tuple display, the object a method is called on), not given to a
    call that may keep it (`Feeder(Weights())`, `copy.copy(Layer(W))`)."""
    if isinstance(node, _CONDITIONAL):
        return
    for field, child in gast.iter_fields(node):
        children = child if isinstance(child, list) else [child]
        for item in children:
            if isinstance(item, gast.AST):
                followed = isinstance(node, (gast.List, gast.Tuple)) and kept or \
                    isinstance(node, gast.Call) and field == "func" or \
                    isinstance(node, gast.Call) and getattr(node, "_s2s_operator", False) or \
                    isinstance(node, gast.Attribute) and isinstance(item, gast.Call) and _called_method(node)
                _constructions(ctx, item, out, followed)
    if kept and isinstance(node, gast.Call) and isinstance(node.func, gast.Name) \
            and openable(ctx.static(node.func)[1]) \
            and not any(isinstance(a, gast.Starred) for a in node.args) and all(k.arg for k in node.keywords):
        out.append(node)


def _called_method(attribute: gast.Attribute) -> bool:
    return getattr(attribute, "_s2s_called", False)


def _mark_called(node: Any) -> None:
    for sub in gast.walk(node):
        if isinstance(sub, gast.Call) and isinstance(sub.func, gast.Attribute):
            sub.func._s2s_called = True


def _escapes(ctx: Context, id_: str) -> bool:
    """Whether the function uses the variable id_ otherwise than s2s follows an object it made: reading its
    attributes, calling it or its methods, looping over it, storing it in an attribute or a list display."""
    allowed: set = set()
    for node in gast.walk(ctx.node):
        if isinstance(node, gast.Attribute) and isinstance(node.value, gast.Name):
            allowed.add(id(node.value))
        elif isinstance(node, gast.Call) and isinstance(node.func, gast.Name):
            allowed.add(id(node.func))
        elif isinstance(node, gast.Call) and getattr(node, "_s2s_operator", False):
            allowed.update(id(a) for a in node.args if isinstance(a, gast.Name))    # `u + v`: u.__add__(v)
        elif isinstance(node, gast.For) and isinstance(node.iter, gast.Name):
            allowed.add(id(node.iter))
        elif isinstance(node, (gast.List, gast.Tuple)) and isinstance(node.ctx, gast.Load):
            allowed.update(id(e) for e in node.elts if isinstance(e, gast.Name))
        elif isinstance(node, gast.Assign) and isinstance(node.value, gast.Name) \
                and all(isinstance(t, gast.Attribute) for t in node.targets):
            allowed.add(id(node.value))
    return any(isinstance(n, gast.Name) and n.id == id_ and isinstance(n.ctx, gast.Load) and id(n) not in allowed
               for n in gast.walk(ctx.node))


def _open(ctx: Context, stmt: Any) -> list | None:
    if not isinstance(stmt, _HOISTED):
        return None
    found: list = []
    _mark_called(stmt)
    _constructions(ctx, stmt.value if stmt.value is not None else stmt, found)
    target = stmt.targets[0] if isinstance(stmt, gast.Assign) and len(stmt.targets) == 1 else None
    if isinstance(target, gast.Name) and found and stmt.value is found[-1] and _escapes(ctx, target.id):
        found.pop()             # `weights = Weights(); Feeder(weights)`: given away, made as Python makes it
    if not found:
        return None
    out: list = []
    replaced: dict[int, str] = {}
    direct = isinstance(target, gast.Name) and stmt.value is found[-1] and not any(
        isinstance(n, gast.Name) and n.id == target.id for n in gast.walk(stmt.value))
    for call in found:
        cls = ctx.static(call.func)[1]
        obj = target.id if direct and call is stmt.value else ctx.fresh(cls.__name__.lower())
        make = gast.Call(func=constant(helpers.new_object, call), args=[constant(cls, call)], keywords=[])
        out.append(located(gast.Assign(targets=[name(obj, call, store=True)], value=make, type_comment=None), call))
        init = dataclass_init(cls) or inspect.getattr_static(cls, "__init__")
        ctx._depend_on_attribute(cls, "__init__")
        if init is object.__init__:
            if call.args or call.keywords:
                raise ctx.error(f"{cls.__name__}() takes no arguments", call)
        else:
            fn = specialized_method(init, cls)
            args = [_renamed(a, replaced) for a in call.args]
            keywords = [gast.keyword(arg=k.arg, value=_renamed(k.value, replaced)) for k in call.keywords]
            init_call = gast.Call(func=constant(fn, call), args=[name(obj, call)] + args, keywords=keywords)
            out.append(located(gast.Expr(value=init_call), call))
        replaced[id(call)] = obj
    if not direct:
        out.append(_renamed(stmt, replaced))
    return out


def _renamed(node: Any, replaced: dict) -> Any:
    """node with each construction already hoisted replaced by the variable that holds its object."""
    class Rename(gast.NodeTransformer):
        def visit_Call(self, sub: gast.Call) -> Any:
            if id(sub) in replaced:
                return gast.copy_location(gast.Name(id=replaced[id(sub)], ctx=gast.Load(), annotation=None,
                                                    type_comment=None), sub)
            self.generic_visit(sub)
            return sub
    return Rename().visit(node)
