"""Values known when the derivative is made: the branches and lookups they decide, folded before anything reads them.

A derivative is specialized on what is not differentiated and is immutable or guarded: numbers, strings, None,
booleans and tuples of them, read from

- the function's parameters that every caller passes the same value for (`Facts.known`: a literal given at the
  call, `self.predict(params, which="linear")`, a default the call leaves, or an argument of the differentiated
  function that the derivative is specialized on: s2s/driver/pipeline.py keys its cache on it);
- attributes of an object known now (`self.is_initialized`, `self.loglike_method`), read without calling
  anything (`inspect.getattr_static`: a property or `__getattr__` is never run, and a value behind one is not
  folded), and never one this function writes (`self.nfev += 1` is an effect, not a constant);
- globals, closure variables and module constants.

`if`/`elif` whose test these decide, `a if c else b`, and `and`/`or` whose first operand decides are replaced
by the code that runs, as the first rewrite of the stage: what stands only in a branch that cannot run is never
read (no refusal, no rule looked up). So are `hasattr`, `getattr(obj, name, default)`, `isinstance`,
`type(x) is T`, `callable`, `len` of a known container and `dict.get` with a default on a known dict, where the
result is known. Every attribute, global or closure value a fold relied on is recorded in
`ParsedFunction.attributes` (a dependency, as a method read from an object is): the derivative checks it on
entry (s2s/driver/dispatch.py) and a changed value makes the derivative anew. So is each look-up on the way to it,
as the code makes it (`CFG.model.opts.sq`: the global CFG, then `.model`, `.opts`, each the same object; an item of
a dict or list likewise): a holder replaced anywhere on the way is seen, not only a value changed at the end. A
look-up that cannot be watched (a property, `__getattr__`) is not folded through. Where a fold asks only of a
type (`isinstance(W, np.ndarray)`, `W is None`), the type is watched, not the object (an array rebound at each
step is read when the code runs). Dependencies are recorded only when a fold relies on the value (`rely`). What was folded is listed in
`ParsedFunction.folds`, which the generated header shows ("specialized on self.is_initialized == True").
"""
from __future__ import annotations

import builtins
import functools
import inspect
import threading
import operator
import types
from typing import Any

import gast

from s2s.frontend import parsing
from s2s.frontend.desugar.context import Context, constant, located, map_statements
from s2s.frontend.policy import library_owned
from s2s.frontend.tree import MISSING, AttributeOf, ItemOf, TypeOf

_LITERAL_TYPES = (type(None), bool, int, float, str, bytes, complex)
_UNKNOWN = (False, None)
_COMPARE = {gast.Eq: operator.eq, gast.NotEq: operator.ne, gast.Lt: operator.lt, gast.LtE: operator.le,
            gast.Gt: operator.gt, gast.GtE: operator.ge, gast.Is: operator.is_, gast.IsNot: operator.is_not,
            gast.In: lambda a, b: a in b, gast.NotIn: lambda a, b: a not in b}


def is_literal_value(value: Any) -> bool:
    """A value a derivative may be specialized on: a number, string, None, boolean, or a tuple of them."""
    if type(value) is tuple:
        return all(is_literal_value(v) for v in value)
    return type(value) in _LITERAL_TYPES


def shown(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def applies(ctx: Context) -> bool:
    return not ctx.kinds.isdisjoint((gast.If, gast.IfExp, gast.BoolOp, gast.Call, gast.While)) or any(
        is_literal_value(v) for v in ctx.parsed.facts.known.values())


def rewrite(ctx: Context) -> None:
    folder = _folder(ctx)
    _substitute_parameters(ctx)
    ctx.node.body = map_statements(ctx.node.body, folder.statement)
    if folder.rebinding_folded():       # `if xp is None: xp = ...` folded away: xp is the caller's xp throughout
        ctx.refresh_assigned()
        ctx.node.body = map_statements(ctx.node.body, folder.statement)
    for stmt in ctx.node.body:
        folder.visit(stmt)
    ctx.node.body = _truncated(ctx.node.body)


def known_literal(ctx: Context, node: Any, modules: bool = False) -> tuple[bool, Any]:
    """(True, value) when an argument node is a literal value known now (and guarded): what a call passes to the
    callee's specialization (desugar/objects.py). modules: an array namespace too (`_asarray(x, xp=xp)` with xp
    SciPy's NumPy namespace: `if is_numpy(xp):` in the callee is decided)."""
    folder = _folder(ctx)
    found, value = folder.value(node)
    if found and (is_literal_value(value) or modules and isinstance(value, types.ModuleType)):
        folder.rely()
        return True, value
    if modules and isinstance(node, gast.Constant) and isinstance(node.value, types.ModuleType):
        return True, node.value
    return _UNKNOWN


def _folder(ctx: Context) -> "_Folder":
    folder = getattr(ctx, "_known_folder", None)
    if folder is None:
        folder = ctx._known_folder = _Folder(ctx)         # type: ignore[attr-defined]
    return folder


def _substitute_parameters(ctx: Context) -> None:
    """A parameter known as a literal (`scale=None` given or left by every caller) is that literal wherever it is
    read before the function first rebinds it (`scale = float_like(scale, ...)` reads None): in the statements of
    the body, in order, up to the first that binds it (the whole statement: a loop may bind it later)."""
    known = {k: v for k, v in ctx.parsed.facts.known.items() if is_literal_value(v)}
    if not known:
        return
    live = set(known)

    class Substitute(gast.NodeTransformer):
        def visit_Name(self, node: gast.Name) -> Any:
            if node.id in live and isinstance(node.ctx, gast.Load):
                return constant(known[node.id], node)
            return node

        def visit_FunctionDef(self, node: Any) -> Any:
            return node             # a nested function reads the variable when it is called

        def visit_Lambda(self, node: Any) -> Any:
            return node
    for i, stmt in enumerate(ctx.node.body):
        bound = {n.id for n in parsing.walk(stmt) if isinstance(n, gast.Name)
                 and isinstance(n.ctx, (gast.Store, gast.Del))}
        if isinstance(stmt, (gast.Assign, gast.AnnAssign)) and stmt.value is not None:
            stmt.value = Substitute().visit(stmt.value)      # evaluated before its targets are bound
        live -= bound
        if not live:
            return
        ctx.node.body[i] = Substitute().visit(stmt)


class _Folder(gast.NodeTransformer):
    def __init__(self, ctx: Context):
        self.ctx = ctx
        nodes = parsing.walk(ctx.node)          # one walk for the attributes written and the names bound
        self.written = _written_attributes(ctx, nodes) | WRITTEN
        self.singles, self.statement_of, self.first_binding, self.tests = _top_level_bindings(ctx, nodes)
        # the dependencies of the value last asked for (`value`), recorded when a fold relies on it (`rely`): a test
        # not decided leaves none (an object rebound at every step, `if STATE.t > x:`, is then never watched)
        self._pending: list = []
        self._relied: list = []

    def _before_binding(self, node: gast.Name) -> bool:
        """A read of a parameter in a top-level statement before any that rebinds it, or in the test of the first
        (`if xp is None: xp = ...`): the caller's value."""
        first = self.first_binding.get(node.id)
        at = self.statement_of.get(id(node), -1)
        return first is not None and at >= 0 and (at < first or at == first and id(node) in self.tests)

    def visit(self, node: Any) -> Any:
        """NodeTransformer.visit, without looking the method up by name at every node (a fold never removes a
        node: each visit returns the node that takes its place)."""
        fold = _FOLDS.get(type(node))
        return fold(self, node) if fold is not None else self.generic_visit(node)

    def generic_visit(self, node: Any) -> Any:
        """NodeTransformer.generic_visit over the fields that may hold a node (parsing.child_fields)."""
        AST = gast.AST
        for field in parsing.child_fields(type(node)):
            value = getattr(node, field, None)
            if type(value) is list:
                for i, item in enumerate(value):
                    if isinstance(item, AST):
                        new = self.visit(item)
                        if new is not item:
                            value[i] = new
            elif isinstance(value, AST):
                new = self.visit(value)
                if new is not value:
                    setattr(node, field, new)
        return node

    def rebinding_folded(self) -> bool:
        """Whether a known parameter was bound only in statements the folds removed."""
        known = self.ctx.parsed.facts.known
        if not any(self.ctx.assigned(k) for k in known):
            return False            # (no walk: nothing known is rebound anywhere)
        stored = {n.id for n in parsing.walk(self.ctx.node) if isinstance(n, gast.Name)
                  and isinstance(n.ctx, (gast.Store, gast.Del))}
        return any(self.ctx.assigned(k) and k not in stored for k in known)

    # ------------------------------------------------------------ statements

    def statement(self, stmt: Any) -> list | None:
        if isinstance(stmt, gast.If):
            found, test = self.value(stmt.test)
            if found and not _decided(test):
                found = False
            if found:
                self.rely()
                taken = stmt.body if _truth(test) else stmt.orelse
                return list(taken) or [located(gast.Pass(), stmt)]
        if isinstance(stmt, gast.While):
            found, test = self.value(stmt.test)
            if found and _decided(test) and not _truth(test):
                self.rely()
                return list(stmt.orelse) or [located(gast.Pass(), stmt)]
        return None

    # ------------------------------------------------------------ expressions

    def visit_IfExp(self, node: gast.IfExp) -> Any:
        found, test = self.value(node.test)
        if found and _decided(test):
            self.rely()
            return self.visit(node.body if _truth(test) else node.orelse)
        return self.generic_visit(node)

    def visit_BoolOp(self, node: gast.BoolOp) -> Any:
        # `a and b`: known a decides when it is false (then a) or leaves b; `or` the other way
        values = list(node.values)
        while len(values) > 1:
            found, first = self.value(values[0])
            if not found or not is_literal_value(first):
                break
            self.rely()
            decides = (not _truth(first)) if isinstance(node.op, gast.And) else _truth(first)
            if decides:
                return located(constant(first, values[0]), node)
            values.pop(0)
        if len(values) == 1:
            return self.visit(values[0])
        node.values = values
        return self.generic_visit(node)

    def visit_Call(self, node: gast.Call) -> Any:
        self.generic_visit(node)
        if any(isinstance(a, gast.Starred) for a in node.args) or any(k.arg is None for k in node.keywords):
            return node
        found, callee = self.ctx.static(node.func)
        if found and callee in (builtins.hasattr, builtins.getattr, builtins.isinstance, builtins.callable,
                                builtins.len, builtins.type) or _is_dict_get(self.ctx, node):
            known, result = self.value(node)
            if known and (is_literal_value(result) or callee is builtins.type or callee is builtins.getattr
                          and not isinstance(result, (list, dict, set))):
                self.rely()
                return located(constant(result, node), node)
        return node

    # ------------------------------------------------------------ what an expression is known to be

    def value(self, node: Any) -> tuple[bool, Any]:
        """(True, value) when node's value is known now (and guarded), else (False, None). What it was read from
        is recorded as dependencies when a fold relies on the value (`rely`)."""
        self._pending = []
        try:
            return self._value(node)
        except Exception:           # noqa: BLE001 - an operation Python would raise on: not folded
            return _UNKNOWN
        finally:
            self._relied, self._pending = self._pending, []

    def rely(self) -> None:
        """The value last asked for decides what the derivative is: each look-up it was read through, a dependency."""
        for entry in self._relied:
            self._record(*entry)
        self._relied = []

    def _value(self, node: Any, typed: bool = False) -> tuple[bool, Any]:
        """typed: only the type of node's value is relied on (`isinstance`, `is None`), not which object it is."""
        ctx = self.ctx
        if isinstance(node, gast.Constant):
            return True, node.value
        if isinstance(node, gast.Name):
            return self._name(node, typed)
        if isinstance(node, gast.Attribute):
            return self._attribute(node, typed)
        if isinstance(node, gast.Tuple):
            items = [self._value(e) for e in node.elts]
            if all(f for f, _ in items):
                return True, tuple(v for _, v in items)
            return _UNKNOWN
        if isinstance(node, gast.UnaryOp):
            found, operand = self._value(node.operand)
            if not found:
                return _UNKNOWN
            if isinstance(node.op, gast.Not):
                return True, not _truth(operand)
            if is_literal_value(operand) and isinstance(node.op, gast.USub):
                return True, -operand
            return _UNKNOWN
        if isinstance(node, gast.BoolOp):
            result = None
            for i, v in enumerate(node.values):
                found, result = self._value(v)
                if not found or not is_literal_value(result):
                    return _UNKNOWN
                if (not _truth(result)) if isinstance(node.op, gast.And) else _truth(result):
                    return True, result
            return True, result
        if isinstance(node, gast.Compare):
            single = len(node.ops) == 1 and isinstance(node.ops[0], (gast.Is, gast.IsNot))
            found, left = self._value(node.left, single and _singleton(node.comparators[0]))
            if not found:
                return _UNKNOWN
            for op, right_node in zip(node.ops, node.comparators):
                found, right = self._value(right_node, single and _singleton(node.left))
                if not found or type(op) not in _COMPARE:
                    return _UNKNOWN
                if not isinstance(op, (gast.Is, gast.IsNot)) and not (
                        is_literal_value(left) and is_literal_value(right) or isinstance(left, type)
                        and isinstance(right, type)):
                    return _UNKNOWN          # == on objects may run their __eq__: not folded
                if isinstance(op, (gast.Is, gast.IsNot)) and not (
                        left is None or right is None or type(left) is bool or type(right) is bool
                        or isinstance(left, type) or isinstance(right, type) or not is_literal_value(left)
                        and not is_literal_value(right)):
                    return _UNKNOWN          # `is` between equal numbers or strings: not decided by the value
                if not _COMPARE[type(op)](left, right):
                    return True, False
                left = right
            return True, True
        if isinstance(node, gast.Call):
            return self._call(node)
        return _UNKNOWN

    def _name(self, node: gast.Name, typed: bool = False) -> tuple[bool, Any]:
        ctx = self.ctx
        known = ctx.parsed.facts.known
        if node.id in known and (not ctx.assigned(node.id) or self._before_binding(node)):
            return True, known[node.id]
        if node.id in ctx.local_names():
            single = self.singles.get(node.id)
            if single is not None and self.statement_of.get(id(node), -1) > single[0] and node.id not in known:
                found, value = self._value(single[1])      # `p = self.var_power`, assigned once, read after
                if found and is_literal_value(value):
                    return True, value
            return _UNKNOWN
        found, value = ctx.parsed.resolve(node.id)
        if not found:
            return _UNKNOWN
        if getattr(builtins, node.id, MISSING) is not value:
            # a global or closure variable: the same value (a literal, an object) or, typed, of the same type
            if typed and not is_literal_value(value):
                self._depend(TypeOf(ctx.parsed.fn), node.id, type(value), None)
            elif not isinstance(value, types.ModuleType) or not _library(value):
                self._depend(ctx.parsed.fn, node.id, value, node.id if is_literal_value(value) else None)
        return True, value

    def _object(self, node: Any) -> tuple[bool, Any]:
        """(True, object) for the object an expression names now (`self`, `CFG.model`, `LAYERS[0]`), each look-up on
        the way a dependency (the same object): what is read from it is read from what the code reaches when it
        runs. (False, None) when a look-up cannot be watched (a property, `__getattr__`, a list's item by a name)."""
        ctx = self.ctx
        if isinstance(node, gast.Constant):
            return True, node.value
        if isinstance(node, gast.Name):
            known = ctx.parsed.facts.known
            if node.id in known and (not ctx.assigned(node.id) or self._before_binding(node)):
                return True, known[node.id]         # (its caller's to guard: the call's arguments)
            if node.id in ctx.local_names():
                found, value = self._name(node)
                if found:
                    return True, value
                found, value = ctx.static(node)     # `model = self.model`, bound once
                if not found:
                    return _UNKNOWN
                source = ctx._local_source(node.id)
                if source is None or isinstance(source, (gast.List, gast.Tuple)):
                    return _UNKNOWN
                again, same = self._object(source)
                return (True, value) if again and same is value else _UNKNOWN
            return self._name(node)
        if isinstance(node, gast.Attribute):
            found, base = self._object(node.value)
            if not found or is_literal_value(base):
                return _UNKNOWN
            value = _static_attribute(base, node.attr)
            if value is MISSING or value is _DYNAMIC or (id(base), node.attr) in self.written:
                return _UNKNOWN
            if not (isinstance(base, (types.ModuleType, type)) and _library(base)):
                self._depend(AttributeOf(base), node.attr, inspect.getattr_static(base, node.attr, MISSING), None)
            return True, value
        if isinstance(node, gast.Subscript):
            found, base = self._object(node.value)
            known, key = self._value(node.slice)
            if not (found and known and is_literal_value(key)):
                return _UNKNOWN
            if type(base) is tuple:
                return True, base[key]
            if type(base) is dict and key in base:
                self._depend(ItemOf(base), key, base[key], None)
                return True, base[key]
            if type(base) is list and type(key) is int and -len(base) <= key < len(base):
                self._depend(ItemOf(base), key % len(base), base[key], None)
                return True, base[key]
        return _UNKNOWN

    def _attribute(self, node: gast.Attribute, typed: bool = False) -> tuple[bool, Any]:
        found, base = self._object(node.value)
        if not found or is_literal_value(base):
            return _UNKNOWN
        value = _static_attribute(base, node.attr)
        if value is MISSING or value is _DYNAMIC:
            return _UNKNOWN
        if isinstance(base, (types.ModuleType, type)) and not is_literal_value(value):
            if not _library(base):                  # a function, class or module named by its module
                self._depend(AttributeOf(base), node.attr, inspect.getattr_static(base, node.attr, MISSING), None)
            return True, value
        if (id(base), node.attr) in self.written:
            return _UNKNOWN                         # `self.nfev += 1`: an effect, not a constant
        if typed and not is_literal_value(value):
            own = getattr(base, "__dict__", None)
            if type(own) is dict and own.get(node.attr, MISSING) is value:     # (what `isinstance` asks of it)
                self._depend(TypeOf(AttributeOf(base)), node.attr, type(value), None)
                return True, value
        if not is_literal_value(value) and not isinstance(value, type):
            return _UNKNOWN                         # data read when the derivative runs (an array, a list)
        self._depend(AttributeOf(base), node.attr, inspect.getattr_static(base, node.attr, MISSING),
                     f"{_path(node.value)}.{node.attr}", value)
        return True, value

    def _call(self, node: gast.Call) -> tuple[bool, Any]:
        ctx = self.ctx
        if node.keywords and not _is_dict_get(ctx, node):
            return _UNKNOWN
        found, callee = ctx.static(node.func)
        if _is_dict_get(ctx, node):
            found, table = self._object(node.func.value)
            key_found, key = self._value(node.args[0])
            if not (found and isinstance(table, dict) and key_found and is_literal_value(key)):
                return _UNKNOWN
            default = (True, None) if len(node.args) == 1 else self._value(node.args[1])
            if not default[0] or key in table and not is_literal_value(table[key]):
                return _UNKNOWN
            value = table.get(key, default[1])
            self._depend(ItemOf(table), key, table.get(key, MISSING),       # (a global dict changed later)
                         f"{_path(node.func.value)}.get({key!r})", value)
            return True, value
        if not found:
            return _UNKNOWN
        args = []
        typed = callee in (builtins.isinstance, builtins.type, builtins.callable)    # (of the first argument)
        for k, a in enumerate(node.args):
            known, v = self._value(a, typed and k == 0)
            if not known:
                known, v = self._object(a)       # an object whose attributes are asked about (`hasattr(self, ...)`)
                if known and is_literal_value(v):
                    known = False
            if not known:
                return _UNKNOWN
            args.append(v)
        if callee is builtins.hasattr and len(args) == 2 and isinstance(args[1], str):
            value = _static_attribute(args[0], args[1])
            if value is _DYNAMIC or (id(args[0]), args[1]) in self.written:
                return _UNKNOWN
            self._presence(node.args[0], args[0], args[1], value)
            return True, value is not MISSING
        if callee is builtins.getattr and len(args) in (2, 3) and isinstance(args[1], str):
            value = _static_attribute(args[0], args[1])
            if value is _DYNAMIC or value is MISSING and len(args) == 2:
                return _UNKNOWN
            if value is not MISSING and not (is_literal_value(value) or isinstance(value, type)):
                return _UNKNOWN
            if (id(args[0]), args[1]) in self.written:
                return _UNKNOWN
            self._presence(node.args[0], args[0], args[1], value)
            return True, args[2] if value is MISSING else value
        if callee is builtins.isinstance and len(args) == 2:
            if _known_type(args[0]) and (isinstance(args[1], type) or type(args[1]) is tuple):
                return True, isinstance(args[0], args[1])
            return _UNKNOWN
        if callee is builtins.type and len(args) == 1 and _known_type(args[0]):
            return True, type(args[0])
        if callee is builtins.callable and len(args) == 1:
            return True, callable(args[0])
        if callee is builtins.len and len(args) == 1 and type(args[0]) in (tuple, str):
            return True, len(args[0])
        if isinstance(callee, functools._lru_cache_wrapper) and all(
                is_literal_value(a) or isinstance(a, (types.ModuleType, type)) for a in args):
            # memoized by its library (`is_numpy_namespace(xp)`): pure, and what it gives for these is known now
            try:
                result = callee(*args)
            except Exception:       # noqa: BLE001
                return _UNKNOWN
            if is_literal_value(result):
                return True, result
        return _UNKNOWN

    # ------------------------------------------------------------ guards

    def _presence(self, node: Any, holder: Any, name: str, value: Any) -> None:
        if isinstance(holder, types.ModuleType) or is_literal_value(holder):
            return
        self._depend(AttributeOf(holder), name, inspect.getattr_static(holder, name, MISSING),
                     f"hasattr({_path(node)}, {name!r})", value is not MISSING)

    def _depend(self, owner: Any, name: str, held: Any, text: str | None, value: Any = MISSING) -> None:
        """A dependency of the value being read (recorded when a fold relies on it); text: how the header shows
        the fold (None: a look-up on the way to it)."""
        self._pending.append((owner, name, held, text, value))

    def _record(self, owner: Any, name: str, held: Any, text: str | None, value: Any = MISSING) -> None:
        parsed = self.ctx.parsed
        holder = getattr(owner, "holder", owner)
        if isinstance(owner, AttributeOf) and (isinstance(holder, types.ModuleType) and _library(holder)
                                               or isinstance(holder, type) and _library(holder)):
            pass                        # a library's module or class: its data never changes (np.pi)
        elif isinstance(owner, TypeOf):
            key = ("known type", id(getattr(owner.owner, "holder", owner.owner)), name)
            if key not in parsed.attributes:
                parsed.attributes[key] = (owner, name, held)
        else:
            key = ("known", id(holder), name)
            if key not in parsed.attributes:
                parsed.attributes[key] = (owner, name, held)
        if text is None:
            return
        shown_value = held if value is MISSING else value
        fold = f"{text} == {shown(shown_value)}" if not text.startswith("hasattr") else \
            f"{text} is {shown_value}"
        if fold not in parsed.folds:
            parsed.folds.append(fold)


_FOLDS = {gast.IfExp: _Folder.visit_IfExp, gast.BoolOp: _Folder.visit_BoolOp, gast.Call: _Folder.visit_Call}
_DYNAMIC = object()

# (id(object), name) of each attribute a function s2s lowered writes, found after lowering (driver/primal.py): a
# fold that relied on one (the value before a method f calls wrote it) is made again without it
WRITTEN: set = set()


def _static_attribute(obj: Any, name: str) -> Any:
    """obj.name read without running any code of obj's (no property, no __getattr__): the value, MISSING when
    it has none, or _DYNAMIC when only running code could tell (a property, a __getattr__, a slot)."""
    try:
        value = inspect.getattr_static(obj, name, MISSING)
        if value is MISSING and type(obj) is threading.local:     # (its attributes are this thread's: not seen)
            value = obj.__dict__.get(name, MISSING)
    except Exception:           # noqa: BLE001
        return _DYNAMIC
    if value is MISSING:
        cls = obj if isinstance(obj, type) else type(obj)
        if not isinstance(obj, types.ModuleType) and any(
                "__getattr__" in vars(c) for c in cls.__mro__ if c is not object):
            return _DYNAMIC
        return MISSING
    if isinstance(value, (staticmethod, classmethod)):
        return getattr(obj, name)
    if isinstance(value, types.FunctionType):
        return value if isinstance(obj, (type, types.ModuleType)) else getattr(obj, name)
    if hasattr(type(value), "__get__") and not isinstance(value, (types.BuiltinFunctionType, type)):
        return _DYNAMIC          # a property or another descriptor: reading it runs code
    return value


def _library(holder: Any) -> bool:
    return library_owned(holder)


def _known_type(value: Any) -> bool:
    """A value whose type is fixed by what was read (a literal, a class, a module, an object known now): any
    value _value or ctx.static gives (an array read when the derivative runs is never one of them)."""
    return True


def _singleton(node: Any) -> bool:
    """`None`, `True`, `False` written: `x is None` asks only of x's type."""
    return isinstance(node, gast.Constant) and (node.value is None or type(node.value) is bool)


def _decided(value: Any) -> bool:
    try:
        _truth(value)
        return True
    except TypeError:
        return False


def _truth(value: Any) -> bool:
    """bool(value) for a value whose truth runs no code of its own; TypeError (not folded) otherwise."""
    if is_literal_value(value) or isinstance(value, (type, types.ModuleType, types.FunctionType,
                                                     types.MethodType, types.BuiltinFunctionType)):
        return bool(value)
    raise TypeError("the truth of this object is decided by its own code")


def _is_dict_get(ctx: Context, node: gast.Call) -> bool:
    return isinstance(node.func, gast.Attribute) and node.func.attr == "get" and not node.keywords \
        and 1 <= len(node.args) <= 2


def _path(node: Any) -> str:
    if isinstance(node, gast.Name):
        return node.id
    if isinstance(node, gast.Attribute):
        return f"{_path(node.value)}.{node.attr}"
    return "..."


def _written_attributes(ctx: Context, nodes: list) -> set:
    """(id(object), name) of each attribute this function writes (`self.n = ...`, `self.nfev += 1`): never folded.
    Not a write only in the body of `if not hasattr(obj, "n"):` (a lazy initialization): folded, the test keeps it
    out of the path when the attribute is there (and the fold is watched). nodes: the tree's (parsing.walk)."""
    out = set()
    lazy: set = set()           # id(a write's node) in such a body, of that attribute
    for node in nodes:
        test = node.test if isinstance(node, gast.If) else None
        if isinstance(test, gast.UnaryOp) and isinstance(test.op, gast.Not) and isinstance(test.operand, gast.Call) \
                and len(test.operand.args) == 2 and isinstance(test.operand.args[1], gast.Constant) \
                and ctx.names(test.operand.func, builtins.hasattr):
            found, holder = ctx.static(test.operand.args[0])
            for stmt in node.body:
                for sub in parsing.walk(stmt):
                    if isinstance(sub, gast.Attribute) and isinstance(sub.ctx, gast.Store) and found and \
                            sub.attr == test.operand.args[1].value and ctx.static(sub.value) == (True, holder):
                        lazy.add(id(sub))
    for node in nodes:
        kind = type(node)
        targets = node.targets if kind is gast.Assign else [node.target] if kind is gast.AugAssign \
            or kind is gast.AnnAssign else ()
        for t in targets:
            if type(t) is gast.Name:
                continue            # (the common case: no attribute under it)
            for sub in parsing.walk(t):
                if isinstance(sub, gast.Attribute) and isinstance(sub.ctx, gast.Store) and id(sub) not in lazy:
                    found, base = ctx.static(sub.value)
                    if found:
                        out.add((id(base), sub.attr))
    return out


def _top_level_bindings(ctx: Context, nodes: list) -> tuple[dict, dict, dict, set]:
    """(singles, statement_of, first, tests), from nodes (the tree's, parsing.walk) and one walk of each top-level
    statement:
    - singles: the local variables the function binds once, by a statement of its body's top level
      (`p = self.var_power`): name -> (that statement's position, the value);
    - statement_of: for every name read, the position of the top-level statement it is read in (a read after the
      binding finds that value);
    - first: for each name the body binds, the position of the first top-level statement that does;
    - tests: id() of the names read in the tests of top-level `if`/`while` statements."""
    stores: dict[str, int] = {}
    Name = gast.Name
    for n in nodes:
        if type(n) is Name and isinstance(n.ctx, (gast.Store, gast.Del, gast.Param)):
            stores[n.id] = stores.get(n.id, 0) + 1
    singles, statement_of = {}, {}
    first: dict[str, int] = {}
    tests: set[int] = set()
    Load, Bound = gast.Load, (gast.Store, gast.Del)
    for i, stmt in enumerate(ctx.node.body):
        if isinstance(stmt, gast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], gast.Name) \
                and stores.get(stmt.targets[0].id) == 1:
            singles[stmt.targets[0].id] = (i, stmt.value)
        for n in parsing.walk(stmt):
            if type(n) is Name:
                if isinstance(n.ctx, Load):
                    statement_of[id(n)] = i
                elif isinstance(n.ctx, Bound):
                    first.setdefault(n.id, i)
        if isinstance(stmt, (gast.If, gast.While)):
            tests.update(id(n) for n in parsing.walk(stmt.test) if isinstance(n, gast.Name))
    return singles, statement_of, first, tests


def _truncated(stmts: list) -> list:
    """Every block up to its first `return` or `raise` (what follows one in the same block never runs: a fold
    can leave `return None` of `if value is None: return None` before the rest of a function)."""
    out = []
    for s in stmts:
        for field in ("body", "orelse", "finalbody"):
            inner = getattr(s, field, None)
            if isinstance(inner, list) and inner and isinstance(inner[0], gast.stmt):
                setattr(s, field, _truncated(inner))
        if isinstance(s, gast.Try):
            for handler in s.handlers:
                handler.body = _truncated(handler.body)
        out.append(s)
        if isinstance(s, (gast.Return, gast.Raise)):
            break
    return out
