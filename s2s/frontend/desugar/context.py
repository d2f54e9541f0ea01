"""What the rewrites share: fresh names, constants placed in the tree, static look-ups, statement walking."""
from __future__ import annotations

import builtins
import inspect
import types
from typing import TYPE_CHECKING, Any, Callable

import gast
import numpy as np

from s2s.errors import UnsupportedSyntax
from s2s.frontend import parsing
from s2s.frontend.getters import effectful_property
from s2s.frontend.policy import is_user_class, library_owned
from s2s.frontend.tree import AttributeOf, ItemOf

if TYPE_CHECKING:
    from s2s.frontend.tree import ParsedFunction
_LITERALS = (str, bytes, int, float, complex, bool, type(None), type(...))
# statements replaced by map_statements (every rewrite's way of adding or removing statements), counted: an index of
# the tree made before the count last changed is made again (Context.bindings)
_REPLACED = [0]
_BODIES = ("body", "orelse", "finalbody")


class Context:
    walked: list | None = None      # parsing.walk(node), while the tree is known unchanged since (an applies())

    def __init__(self, parsed: "ParsedFunction"):
        self.parsed = parsed
        nodes = self.scan()
        names = [n for n in nodes if type(n) is gast.Name]       # one walk for the three
        self.used = {n.id for n in names}
        self.used |= {a.id for a in _all_params(parsed.node.args)}
        self._resolving: set[str] = set()
        # the names the function binds, found once (walking the tree at every look-up made desugaring
        # quadratic in the function's size); a fresh name a rewrite makes is added as it is made
        self._params = {a.id for a in _all_params(parsed.node.args)}
        self._stored = {n.id for n in names if isinstance(n.ctx, (gast.Store, gast.Del))}
        self._assigned = {n.id for n in names if isinstance(n.ctx, gast.Store)}
        self._local_names = self._params | self._stored
        self._locals: dict[str, tuple[bool, Any]] = {}
        # a list a comprehension made -> the sequence it iterated over, one item each (comprehensions.py)
        self.same_length: dict[str, Any] = {}

    @property
    def node(self) -> gast.FunctionDef:
        return self.parsed.node

    def scan(self) -> list:
        """Walk the tree once and record what occurs in it (`kinds`: the node types; `calls`; `attributes`: the
        attribute names read), so that a rewrite whose construct does not occur is not run at all (each rewrite
        walks the whole function: nine walks of a large straight-line function for nothing)."""
        root = self.parsed.node
        nodes = [root]
        for field in parsing.child_fields(type(root)):
            value = getattr(root, field, None) if field != "body" else None
            for v in value if isinstance(value, list) else [value]:
                if isinstance(v, gast.AST):
                    nodes.extend(parsing.walk(v))
        body_nodes, self.ordered_calls = _ordered(root.body)
        nodes.extend(body_nodes)
        self.fresh_scan = True      # ordered_calls is the tree's until a rewrite runs (desugar says so)
        self.kinds = {type(n) for n in nodes}
        self.calls = [n for n in nodes if type(n) is gast.Call]
        self.attributes = {n.attr for n in nodes if type(n) is gast.Attribute}
        self.nested_functions = sum(1 for n in nodes if type(n) is gast.FunctionDef) > 1
        self.loops = [n for n in nodes if type(n) is gast.For or type(n) is gast.While]
        self._callees: dict[int, tuple] = {}    # id(call) -> (call, static(call.func)), for the calls scanned
        self._bindings = None                    # the index _static_local reads: made again after a change
        return nodes

    def close(self) -> None:
        """Desugaring is done: drop what refers back to the context (known_values' folder: a cycle that would keep
        the tree alive until the cyclic collector runs) and the indexes of the tree."""
        self.__dict__.pop("_known_folder", None)
        self._callees, self._bindings = {}, None

    def any_call(self, test: Callable[[gast.Call], bool]) -> bool:
        """Whether test holds for a call of the tree (as scanned)."""
        return any(test(call) for call in self.calls)

    def callee(self, call: gast.Call) -> tuple[bool, Any]:
        """static(call.func) for a call of the tree as scanned, found once per scan (the rewrites' `applies` ask
        it of every call, each for its own functions)."""
        held = self._callees.get(id(call))
        if held is None or held[0] is not call:
            held = self._callees[id(call)] = (call, self.static(call.func))
        return held[1]

    def calls_one_of(self, call: gast.Call, *objects: Any) -> bool:
        """Whether a call of the tree as scanned statically names one of objects (by identity)."""
        found, value = self.callee(call)
        return found and any(value is obj for obj in objects)

    def calls_to(self, *objects: Any) -> bool:
        """Whether a call of the tree (as scanned) statically names one of objects (by identity)."""
        return any(self.calls_one_of(call, *objects) for call in self.calls)

    def error(self, message: str, node: Any, hint: str = "") -> UnsupportedSyntax:
        return UnsupportedSyntax(message, self.parsed.loc(node), hint=hint)

    def fresh(self, base: str) -> str:
        """A variable name used nowhere in the function, derived from base (it shows in generated code)."""
        for k in range(10000):
            name = base if k == 0 else f"{base}_{k}"
            if name not in self.used:
                self.used.add(name)
                self._stored.add(name)
                self._assigned.add(name)
                self._local_names.add(name)
                self._bindings = None       # (a name made now may be bound before it is looked up)
                return name
        raise AssertionError("no fresh name")

    def local_names(self) -> set[str]:
        """The parameters and the names the function binds (kept up to date, not a copy: do not change it)."""
        return self._local_names

    def refresh_assigned(self) -> None:
        """The names the body rebinds, found again (a rewrite removed statements that bound some)."""
        stored = {n.id for n in gast.walk(self.node) if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Store)}
        self._assigned &= stored
        self._locals.clear()
        self._bindings = None

    def assigned(self, name: str) -> bool:
        """Whether the body rebinds name (then what a caller passed for it is not what it holds)."""
        return name in self._assigned

    # ------------------------------------------------------------ static values

    def _depend_on_name(self, name: str, value: Any) -> None:
        """A global or free name whose object a rewrite may use in place of the name (a call of a specialization
        of the function it names: objects.py): a dependency of the function, as lowering's reads of names are,
        so that rebinding the name makes the derivative anew (s2s/driver/dispatch.py)."""
        owner = self.parsed.fn
        if not isinstance(owner, types.FunctionType):
            return
        if name in owner.__code__.co_freevars or name in owner.__globals__:
            self.parsed.attributes.setdefault(("name", id(owner), name), (owner, name, value))

    def static(self, node: Any) -> tuple[bool, Any]:
        """(True, object) when the object an expression evaluates to is known now: a free name, a constant
        placed by a rewrite, a parameter every caller passes the same object for, an attribute of those. A
        function or object reached through attributes and items (`CFG.fn`, `FNS[0]`, `LOSS[KEY]`, `acts[0]` of a
        closure's tuple) is known only with every look-up on the way recorded as a dependency (depend_on_chain):
        the derivative a rewrite makes naming it is made anew when any of them changes; one that cannot be watched
        (a property) leaves it unknown, read when the code runs."""
        if isinstance(node, gast.Constant):
            return True, node.value
        if isinstance(node, gast.Name):
            known = self.parsed.facts.known
            if node.id in known and not self.assigned(node.id):
                return True, known[node.id]
            if node.id in self._params or node.id in self._stored:
                if node.id not in self._locals:
                    self._locals[node.id] = self._static_local(node.id)
                return self._locals[node.id]
            found, value = self.parsed.resolve(node.id)
            if found and callable(value) and not isinstance(value, types.ModuleType):
                self._depend_on_name(node.id, value)        # (data is read when the derivative runs)
            return found, value
        if isinstance(node, gast.Subscript):
            found, base = self.static(node.value)
            index = self._static_index(node.slice)
            if found and isinstance(base, (list, tuple)) and index is not None:
                try:
                    value = base[index]
                except Exception:
                    return False, None
                if _behaves(value) and not self.depend_on_chain(node):
                    return False, None          # `FNS[0](x)`: the list's item, the global holding it, watched
                return True, value
            if found and isinstance(base, dict):      # a function from a dict of functions, by a known key
                known, key = self.static(node.slice)
                if known and isinstance(key, (str, int)) and callable(base.get(key)):
                    # the item, the dict as the code reaches it and the key's own look-ups (`self.fns[self.kind]`,
                    # `LOSS[KEY]`: a key rebound chooses another function)
                    if not self.depend_on_chain(node):
                        return False, None
                    return True, base[key]
        if isinstance(node, gast.Call) and len(node.args) == 1 and not node.keywords \
                and isinstance(node.args[0], gast.Constant) and isinstance(node.args[0].value, str) \
                and self.static(node.func) == (True, builtins.__import__):
            try:                        # `__import__("cmath")`: the module, as an `import` in the function reads it
                return True, builtins.__import__(node.args[0].value)
            except ImportError:
                return False, None
        if isinstance(node, gast.Attribute):
            found, base = self.static(node.value)
            if found and not isinstance(base, _LITERALS):
                if _runs_effects(base, node.attr):
                    return False, None      # a property that writes: run when the derivative runs (properties.py)
                try:
                    value = getattr(base, node.attr)
                except Exception:
                    return False, None
                if _behaves(value) and (_user_namespace(base) or not isinstance(base, _READ_LIVE)):
                    # a function or object read from an object (of any class: a SimpleNamespace, a library's
                    # object too) or from the user's module or class (`hmod.helper`, `Ops.helper`): the attribute
                    # and each look-up on the way watched (`CFG.act`, `self.layer`), or not known now. (A method of
                    # data, `U.copy`, is read when the code runs: lowering's, not named by value.)
                    if not self.depend_on_chain(node):
                        return False, None
                return True, value
        return False, None


    def depend_on_chain(self, node: Any) -> bool:
        """Record, as dependencies, each look-up by which the code reaches the object node names when the derivative
        is made (`self.layer`, `CFG.model.opts`, `LAYERS[0]`): the global or closure variable (by identity), each
        attribute (`holder.name` the same object) and item, so that a replaced holder anywhere on the way makes the
        derivative anew, not only a changed value at its end. A parameter known the same for every caller (`self`)
        is its caller's to guard. False when a look-up cannot be watched (a property, `__getattr__`, a slot)."""
        if isinstance(node, gast.Constant):
            return True
        if isinstance(node, gast.Name):
            known = self.parsed.facts.known
            if node.id in known and not self.assigned(node.id):
                return True
            if node.id in self._params or node.id in self._stored:
                source = self._local_source(node.id)
                if source is None or node.id in self._resolving:
                    return False
                self._resolving.add(node.id)
                try:
                    if isinstance(source, (gast.List, gast.Tuple)):
                        return all(self.depend_on_chain(e) for e in source.elts)
                    return self.depend_on_chain(source)
                finally:
                    self._resolving.discard(node.id)
            found, value = self.parsed.resolve(node.id)
            if found:
                self.depend_on_name(node.id, value)
            return found
        if isinstance(node, gast.Attribute):
            found, base = self.static(node.value)
            if not found or not self.depend_on_chain(node.value):
                return False
            if isinstance(base, _LITERALS) or library_owned(base) and isinstance(base, (type, types.ModuleType)) \
                    and not _user_namespace(base):
                return True             # (a library's module or class: np.pi, never rebound)
            try:
                held = inspect.getattr_static(base, node.attr)
            except Exception:       # noqa: BLE001 - not readable without running its code
                return False
            if not _watchable(base, node.attr, held):
                return False            # a property or another descriptor: what it gives is not watched
            self._depend_on_attribute(base, node.attr)
            return True
        if isinstance(node, gast.Subscript):
            found, base = self.static(node.value)
            if not found or not self.depend_on_chain(node.value):
                return False
            if isinstance(base, tuple):
                return True
            key = self._static_index(node.slice) if isinstance(base, list) else None
            if isinstance(base, list) and isinstance(key, int) and -len(base) <= key < len(base):
                key %= len(base)
            elif isinstance(base, dict):
                known, key = self.static(node.slice)
                if not known or not isinstance(key, (str, int)) or key not in base or \
                        not self.depend_on_chain(node.slice):
                    return False
            else:
                return False
            dependency = (id(base), key)
            if dependency not in self.parsed.attributes:
                self.parsed.attributes[dependency] = (ItemOf(base), key, base[key])
            return True
        return False

    def depend_on_name(self, name: str, value: Any) -> None:
        """A global, closure variable or builtin the code reads by name: the same object when the derivative runs."""
        owner = self.parsed.fn
        if isinstance(owner, types.FunctionType):
            self.parsed.attributes.setdefault(("name", id(owner), name), (owner, name, value))

    def _depend_on_attribute(self, holder: Any, name: str) -> None:
        """Remember `holder.name` (a method of an object known now): replaced later, it makes the derivative anew."""
        key = (id(holder), name)
        if key not in self.parsed.attributes:
            self.parsed.attributes[key] = (AttributeOf(holder), name, inspect.getattr_static(holder, name, None))

    def names(self, node: Any, obj: Any) -> bool:
        """Whether node statically names obj (by identity)."""
        found, value = self.static(node)
        return found and value is obj

    def bindings(self) -> "Bindings":
        """Where each name is bound, loaded and iterated over, and the value of each single-target assignment: one
        walk of the tree, made again after the tree is scanned again (a rewrite ran), a statement is replaced
        (map_statements) or a fresh name is made; an assignment's value is read as it is now (walking the tree for
        each variable looked up made desugaring quadratic in the function's size). `walked`, when set, is
        parsing.walk(self.node) of the tree as it is (an applies() that walked it already)."""
        if self._bindings is None or self._bindings.made != _REPLACED[0]:
            nodes = self.walked if self.walked is not None else parsing.walk(self.node)
            self._bindings = Bindings(nodes, _REPLACED[0])
        return self._bindings

    def _static_local(self, id_: str) -> tuple[bool, Any]:
        """A local variable assigned once, from an expression naming an object (not data): `gp = GP`."""
        if id_ in self._resolving or id_ in {a.id for a in _all_params(self.node.args)}:
            return False, None
        value = self._local_source(id_)
        if value is None:
            return False, None
        if isinstance(value, (gast.List, gast.Tuple)):
            return self._static_functions(id_, value)
        self._resolving.add(id_)
        try:
            found, obj = self.static(value)
        finally:
            self._resolving.discard(id_)
        if found and (is_user_object(obj) or isinstance(obj, types.ModuleType)):
            return True, obj
        return False, None

    def _local_source(self, id_: str) -> Any:
        """The expression a local variable is bound to by its one assignment (`gp = GP`), or None."""
        if id_ in {a.id for a in _all_params(self.node.args)}:
            return None
        index = self.bindings()
        assigns = index.stores.get(id_, ())
        return index.value(assigns[0]) if len(assigns) == 1 else None

    def _static_functions(self, id_: str, value: gast.expr) -> tuple[bool, Any]:
        """`fs = [np.sin, np.cos]` assigned once and only iterated (`for g in fs:`): the functions, as a tuple."""
        index = self.bindings()
        if not value.elts or index.loads.get(id_, 0) != index.iterated.get(id_, 0):
            return False, None
        self._resolving.add(id_)
        try:
            known = [self.static(e) for e in value.elts]
        finally:
            self._resolving.discard(id_)
        if all(found and callable(obj) and not isinstance(obj, type) for found, obj in known):
            return True, tuple(obj for _, obj in known)
        return False, None

    @staticmethod
    def _static_index(node: Any) -> Any:
        def integer(p: Any) -> Any:
            if isinstance(p, gast.Constant) and isinstance(p.value, int) and not isinstance(p.value, bool):
                return p.value
            if isinstance(p, gast.UnaryOp) and isinstance(p.op, gast.USub):
                inner = integer(p.operand)
                return -inner if inner is not None else None
            return None
        if isinstance(node, gast.Slice):
            parts = [None if p is None else integer(p) for p in (node.lower, node.upper, node.step)]
            given = [p for p in (node.lower, node.upper, node.step) if p is not None]
            return slice(*parts) if all(integer(p) is not None for p in given) else None
        return integer(node)


class Bindings:
    """One walk's index of a function's tree: `stores` name -> the Name nodes that bind it (stored, or a
    parameter), in gast.walk's order; `assigns` id(target) -> the single-target assignment to it; `loads` and
    `iterated` name -> how many times it is read, and iterated over by a `for` (`for g in fs:`). made: the count of
    statements replaced when it was made (_REPLACED)."""

    def __init__(self, nodes: list, made: int = 0):
        self.made = made
        self.stores: dict[str, list] = {}
        self.assigns: dict[int, Any] = {}
        self.loads: dict[str, int] = {}
        self.iterated: dict[str, int] = {}
        Name, Assign, For = gast.Name, gast.Assign, gast.For
        for n in nodes:
            kind = type(n)
            if kind is Name:
                if isinstance(n.ctx, (gast.Store, gast.Param)):
                    self.stores.setdefault(n.id, []).append(n)
                elif isinstance(n.ctx, gast.Load):
                    self.loads[n.id] = self.loads.get(n.id, 0) + 1
            elif kind is Assign:
                if len(n.targets) == 1:
                    self.assigns.setdefault(id(n.targets[0]), n)
            elif kind is For and isinstance(n.iter, Name):
                self.iterated[n.iter.id] = self.iterated.get(n.iter.id, 0) + 1

    def value(self, target: Any) -> Any:
        """The value assigned to target (a Name the index holds) by a single-target assignment, as it is now (a
        rewrite may have replaced it since), or None."""
        assign = self.assigns.get(id(target))
        return assign.value if assign is not None and len(assign.targets) == 1 and assign.targets[0] is target \
            else None


def _runs_effects(base: Any, name: str) -> bool:
    """Whether reading base.name runs a property getter that writes into an object (never run by s2s itself)."""
    if isinstance(base, (type, types.ModuleType)):
        return False
    return effectful_property(base, name) is not None


def constant(value: Any, like: Any) -> gast.Constant:
    """A node holding value, at like's place."""
    node = gast.Constant(value=value, kind=None)
    return gast.copy_location(node, like)


def listed(ctx: Context, items: Any) -> Any:
    """items, to be read by index as the items iterating over it gives: a display, a comprehension or a range as it
    is, anything else as list(items) (a dict's items are its keys, an array's its rows)."""
    import builtins
    if isinstance(items, (gast.List, gast.Tuple, gast.ListComp, gast.GeneratorExp)) or (
            isinstance(items, gast.Call) and ctx.names(items.func, builtins.range)):
        return items
    return located(gast.Call(func=constant(builtins.list, items), args=[items], keywords=[]), items)


def name(id_: str, like: Any, store: bool = False) -> gast.Name:
    node = gast.Name(id=id_, ctx=gast.Store() if store else gast.Load(), annotation=None, type_comment=None)
    return gast.copy_location(node, like)


def located(node: Any, like: Any) -> Any:
    """node with like's place on every part of it that has none."""
    for sub in gast.walk(node):
        if hasattr(sub, "lineno") or isinstance(sub, (gast.expr, gast.stmt)):
            if getattr(sub, "lineno", None) is None:
                gast.copy_location(sub, like)
    return node


def is_literal(value: Any) -> bool:
    return isinstance(value, _LITERALS)


def _all_params(args: gast.arguments) -> list:
    params = list(args.posonlyargs) + list(args.args) + list(args.kwonlyargs)
    params += [a for a in (args.vararg, args.kwarg) if a is not None]
    return params


def _user_namespace(obj: Any) -> bool:
    """A module or class of the user's (not a library's), whose functions a rewrite may name by value."""
    if isinstance(obj, type):       # (a class made by exec without __name__ says it is of module builtins)
        return is_user_class(obj) or obj.__module__ == "builtins" and getattr(builtins, obj.__name__, None) is not obj
    if isinstance(obj, types.ModuleType):
        return not library_owned(obj)
    return False


# what a method is read from when the code runs (lowering maps it to NumPy's function, objects._data_or_namespace),
# and a library's module or class, whose functions never change
_READ_LIVE = (type, types.ModuleType, np.ndarray, np.generic, list, tuple, dict, set)
_METHODS = (types.FunctionType, staticmethod, classmethod, types.BuiltinFunctionType, type, types.MethodDescriptorType,
            types.WrapperDescriptorType, types.ClassMethodDescriptorType)


def _watchable(base: Any, name: str, held: Any) -> bool:
    """Whether what `base.name` gives is decided by what holds it (watched by identity: dispatch._attribute_watch):
    an object's own attribute (no descriptor runs), or a method its class defines (a function, a builtin's or a
    compiled library's method: binding it runs no code of the user's). Not a property or another descriptor
    (`functools.cached_property`, a slot), whose value only running code tells."""
    own = getattr(base, "__dict__", None)
    if type(own) is dict and own.get(name, _ABSENT) is held:
        return True
    kind = type(held)
    if not hasattr(kind, "__get__") or isinstance(held, _METHODS):
        return True
    return not (hasattr(kind, "__set__") or hasattr(kind, "__delete__")) and \
        kind.__name__ in ("cython_function_or_method", "fused_cython_function")


_ABSENT = object()


def _behaves(value: Any) -> bool:
    """A value whose identity decides the code a rewrite makes (a function or callable object, or an object of the
    user's class): found through a look-up, each link of it is watched (Context.depend_on_chain). Data is read
    when the code runs."""
    return callable(value) or is_user_object(value)


def is_user_object(obj: Any) -> bool:
    """An instance of a class the user wrote (not a library's): its methods are inlined."""
    if isinstance(obj, (types.ModuleType, type, types.FunctionType, types.BuiltinFunctionType,
                        types.MethodType)) or is_literal(obj):
        return False
    return is_user_class(type(obj))


# ---------------------------------------------------------------- walking statements

def calls_in_order(body: list) -> list[tuple]:
    """(call, owner, key) for each call under the statements of body, in the order a NodeTransformer whose
    visit_Call visits its children first reaches them (inner calls first, left to right): `owner[key]` (a list
    and an index) or `owner.key` (a node and a field) holds the call, where a rewrite puts its replacement.
    One walk without a visitor: the reverse of a preorder that takes the children right to left."""
    return _ordered(body)[1]


def _ordered(body: list) -> tuple[list, list]:
    """(the nodes under body's statements, calls_in_order(body)) in one walk."""
    nodes: list = []
    found: list = []
    stack: list = list(body)          # nodes, and (call, owner, key) for the calls
    fields_of = parsing.child_fields
    AST = gast.AST
    Call = gast.Call
    while stack:
        node = stack.pop()
        if type(node) is tuple:
            found.append(node)
            node = node[0]
        nodes.append(node)
        for field in fields_of(type(node)):
            value = getattr(node, field, None)
            if type(value) is list:
                for i, v in enumerate(value):
                    if isinstance(v, AST):
                        stack.append((v, value, i) if type(v) is Call else v)
            elif isinstance(value, AST):
                stack.append((value, node, field) if type(value) is Call else value)
    found.reverse()
    return nodes, found


def replace(owner: Any, key: Any, node: Any) -> None:
    if type(key) is int:
        owner[key] = node
    else:
        setattr(owner, key, node)


def map_statements(body: list, rewrite: Callable[[Any], list | None]) -> list:
    """body with rewrite(stmt) applied to every statement, nested ones included (inner bodies first).
    rewrite returns the statements that replace stmt, or None to keep it."""
    out: list = []
    for stmt in body:
        for field in _BODIES:
            inner = getattr(stmt, field, None)
            if isinstance(inner, list) and inner and isinstance(inner[0], gast.stmt):
                setattr(stmt, field, map_statements(inner, rewrite))
        if isinstance(stmt, gast.Try):
            for handler in stmt.handlers:
                handler.body = map_statements(handler.body, rewrite)
        replaced = rewrite(stmt)
        if replaced is None:
            out.append(stmt)
        else:
            out.extend(replaced)
            _REPLACED[0] += 1
    return out


def own_expressions(stmt: Any) -> list[tuple[Any, str]]:
    """(owner, field) of the expressions a statement evaluates once, before its inner bodies run:
    where an expression may be replaced by a variable computed just before the statement."""
    if isinstance(stmt, gast.While):
        return []                          # the test is evaluated again at each iteration
    if isinstance(stmt, gast.For):
        return [(stmt, "iter")]
    if isinstance(stmt, gast.If):
        return [(stmt, "test")]
    if isinstance(stmt, (gast.FunctionDef, gast.ClassDef, gast.Try)):
        return []
    if isinstance(stmt, gast.With):
        return [(item, "context_expr") for item in stmt.items]
    fields = []
    for field, value in gast.iter_fields(stmt):
        if field in _BODIES or field == "targets" or field == "target":
            continue
        if isinstance(value, gast.expr):
            fields.append((stmt, field))
    if isinstance(stmt, (gast.Assign, gast.AugAssign, gast.AnnAssign)):
        targets = stmt.targets if isinstance(stmt, gast.Assign) else [stmt.target]
        for t in targets:                     # the index of x[i] = ... is evaluated too
            for sub in gast.walk(t):
                if isinstance(sub, gast.Subscript):
                    fields.append((sub, "slice"))
    return fields


def hoisting(body: list, visit: Callable[[Any, list], Any]) -> list:
    """Rewrite expressions that must become statements (a comprehension becomes a loop): visit(expr, pre)
    returns the replacement of expr and appends to pre the statements computing it, which are placed
    just before the statement. Expressions evaluated conditionally or repeatedly are not visited."""
    def rewrite(stmt: Any) -> list | None:
        pre: list = []
        for owner, field in own_expressions(stmt):
            setattr(owner, field, _visit_eager(getattr(owner, field), pre, visit))
        if not pre:
            return None
        return hoisting(pre, visit) + [stmt]
    return map_statements(body, rewrite)


def _visit_eager(node: Any, pre: list, visit: Callable[[Any, list], Any]) -> Any:
    """Children first, in evaluation order, skipping the operands Python may not evaluate."""
    if isinstance(node, (gast.Lambda, gast.ListComp, gast.GeneratorExp, gast.SetComp, gast.DictComp)):
        return visit(node, pre)
    if isinstance(node, gast.IfExp):
        node.test = _visit_eager(node.test, pre, visit)
        return visit(node, pre)
    if isinstance(node, gast.BoolOp):
        node.values[0] = _visit_eager(node.values[0], pre, visit)
        return visit(node, pre)
    for field, value in gast.iter_fields(node):
        if isinstance(value, gast.AST):
            setattr(node, field, _visit_eager(value, pre, visit))
        elif isinstance(value, list):
            setattr(node, field, [_visit_eager(v, pre, visit) if isinstance(v, gast.AST) else v for v in value])
    return visit(node, pre)
