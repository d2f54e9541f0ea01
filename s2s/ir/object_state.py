"""Python's side effects on objects, performed once in the forward sweep and read back with their derivatives.

Lowering (s2s/ir/lower.py) asks this module about every attribute or item written or read on an object. It accepts
writes into the objects a derivative knows when it is made — `self` of a method, an object or class named by the
code, and the dicts, lists and objects they hold (read without running any code: `inspect.getattr_static`) — and
guarantees, for the IR it helps build:

- every write (`self.nfev += 1`, `self.X = X`, `self.d[k] = v`, `self.X.append(X)`, `self.d["Z"].append(Z)`) is an
  effect operation (`store_attribute`, `store_item`, `held_append`, `held_extend`), performed where Python performs
  it, with the primal value: the object afterwards holds what one call of the function leaves in it;
- a later read of a location written in the same call is the value written (forwarded, as a local variable is),
  so it carries the derivative: through branches (the value is merged; where a branch did not write it, read back
  at its end when the location holds something now, else no longer forwarded), loops (carried: lowering lowers a loop again carrying what its body writes) and inlined calls (a callee is
  lowered with its caller's state);
- a location is keyed by the object's identity, not the path that reached it (`self.a` and `self.b` naming one
  dict are one dict); every object a key relied on is guarded like a folded attribute (desugar/known_values.py);
- a value read from an object after a write s2s does not forward (an append, a key known only when it runs, an
  array written in place, a method run as Python runs it) is checked: the write leaves a `state_lost` mark on the
  value written, the read a `state_check` mark naming it (by a token: the value need not be in scope there), and
  mutation.py refuses, where the read is, if that value carries a derivative; so does an operation given a whole
  object (`sum(self.d.values())`) whose forwarded values it would see only as primal values;
- the locations written are listed (`Function.effects`): s2s/driver/effects.py saves them before a call of a
  derivative and puts them back between the sweeps of one public call, so each call performs them once.

Refused: writes into objects the derivative cannot name when it is made (made by a call, passed as an argument),
into a dict or list the call itself made (build it whole before storing it), through a property or a
`__setattr__` of the object's class, and `+=` on an array attribute (NumPy writes it in place).
"""
from __future__ import annotations

import inspect
import itertools
import operator
import types
from typing import Any

import gast
import numpy as np

from s2s import runtime
from s2s.analysis.global_shapes import Held, abstract_held
from s2s.frontend.desugar import helpers
from s2s.frontend.desugar.instances import method_of, specialized_method
from s2s.frontend.policy import is_user_class, library_owned
from s2s.frontend.tree import MISSING, AttributeOf, ItemOf
from s2s.ir.core import UNDEFINED, Atom, Const, Op, Value, stmt_blocks

PREFIX = "$state:"
_LITERAL_KEYS = (str, int, bool, type(None), bytes)


def _literal_key(key: Any) -> bool:
    if type(key) is tuple:
        return all(_literal_key(k) for k in key)
    return type(key) in _LITERAL_KEYS


def holder(obj: Any) -> bool:
    """An object whose attributes or items a derivative may write (an object, a class of the user's or a
    library's, a dict, a list, an array): not a module, function, number or string."""
    if isinstance(obj, (types.ModuleType, types.FunctionType, types.BuiltinFunctionType, types.MethodType,
                        tuple, str, bytes, int, float, complex, bool, type(None), np.generic)):
        return False
    if isinstance(obj, type):
        return not library_owned(obj)
    return True


def _shown(node: Any) -> str:
    """`self.exog`, `self.parameters['W']`: a read as the code spells it (in a message)."""
    if isinstance(node, gast.Name):
        return node.id
    if isinstance(node, gast.Attribute):
        return f"{_shown(node.value)}.{node.attr}"
    if isinstance(node, gast.Subscript) and isinstance(node.slice, gast.Constant):
        return f"{_shown(node.value)}[{node.slice.value!r}]"
    return "..."


def unheld(fn: Any, effects: list, fresh: Any) -> None:
    """A read of an array an object holds (`free_name` with a Held owner) of a location the function writes: read
    where it is (`getattr(live(obj), name)`), never on entry nor where it is used."""
    written = {(id(obj), name) for kind, obj, name in effects if kind != "whole"}
    whole = {id(obj) for kind, obj, name in effects if kind == "whole"}
    if not written and not whole:
        return

    def block(b: Any) -> None:
        stmts = []
        for stmt in b.stmts:
            if isinstance(stmt, Op) and stmt.prim is runtime.free_name and isinstance(stmt.args[1].value, Held):
                held, name = stmt.args[1].value, stmt.args[0].value
                if (id(held.holder), name) in written or id(held.holder) in whole:
                    base = fresh()
                    stmts.append(Op(helpers.live, [Const(held.holder)], [base], loc=stmt.loc))
                    stmt.prim = operator.getitem if held.item else getattr
                    stmt.args = [base, Const(name)]
            stmts.append(stmt)
            for inner in stmt_blocks(stmt):
                block(inner)
        b.stmts = stmts
    block(fn.body)


def key_of(location: tuple) -> str:
    """The environment key of a location ((ident, "attr" or "item", name or key))."""
    return PREFIX + repr(location)


_TOKENS = itertools.count(1)


class ObjectState:
    """The objects' state while one function is lowered (one per Lowerer)."""

    def __init__(self, lowerer: Any, initial: "ObjectState | None" = None):
        self.low = lowerer
        self.objects: dict[int, Any] = {}           # id -> object, for the ("obj", id) idents
        self.classes: dict[tuple, type] = {}        # ("new", id) ident -> its class: the objects this call makes
        self.escaped: set[tuple] = set()            # those of them given to an operation
        self.sizes: dict[tuple, int] = {}           # a list or tuple of them this call made -> its length
        self.idents: dict[int, tuple] = {}          # id(value) -> ident of the object it is
        self.aliases: dict[int, set] = {}           # id(phi) -> the idents of the objects it may be
        self.parents: dict[tuple, tuple] = {}       # ident -> (parent ident, kind, name, object): how it was found
        self.named: dict[tuple, tuple] = {}         # ident -> (function, global name, object): found by that name
        self.by_name: set[int] = set()              # the values that are a global's object, read by its name
        self.locations: dict[str, tuple] = {}       # env key -> location
        # ident -> {token: location}: the writes into it (or, through that location, into what it holds) that are
        # no longer forwarded; location None: anywhere in it
        self.poison: dict[tuple, dict] = {}
        self.touched: set[tuple] = set()            # locations this call changed (not resolved statically again)
        self.checked: set[tuple] = set()            # (id(use), token or id(value)) checks already placed
        self.effects: list[tuple] = []              # (kind, object, name or key): the writes, for the driver
        self.opaque = False                         # a method run as Python runs it may have changed anything
        self.relied: set[tuple] = set()
        self.loop_uses: list[list] = []             # per loop being lowered: (ident, place) of its body's uses
        if initial is not None:                     # a callee lowered inside its caller's state
            self.absorb_fields(initial, {})

    # ------------------------------------------------------------ identities

    def active(self) -> bool:
        """Whether a callee must be lowered inside this state (it forwards, checks or refuses something)."""
        return bool(self.poison or self.touched or self.opaque or self.env_states(self.low.env))

    def ident_of(self, atom: Atom) -> tuple | None:
        if isinstance(atom, Const):
            return self.object_ident(atom.value) if holder(atom.value) else None
        if isinstance(atom, Value):
            return self.idents.get(id(atom))
        return None

    def class_of(self, atom: Atom) -> type | None:
        """The class of an object this call made (a "new" object), which atom is."""
        ident = self.idents.get(id(atom)) if isinstance(atom, Value) else None
        return self.classes.get(ident) if ident is not None else None

    def method_of_new(self, args: list) -> tuple | None:
        """`method_call_n(obj, "name", ...)` on an object this call made, of a class known now (`self.inner(h)`,
        the layer an __init__ stored): (the class's function, its arguments), which lowering inlines."""
        cls = self.class_of(args[0])
        if cls is None or not isinstance(args[1], Const) or not isinstance(args[1].value, str):
            return None
        attr = "__call__" if args[1].value == helpers.CALL_OF_A_VALUE else args[1].value
        found = method_of(cls, attr)
        if found is None:           # `self.a(x)`: the object its attribute holds, called
            held = self.low.env.get(key_of((self.idents[id(args[0])], "attr", attr)))
            if attr == "__call__" or self.class_of(held) is None:
                return None
            return self.method_of_new([held, Const("__call__"), *args[2:]])
        how, fn = found
        return (fn, list(args[2:])) if how == "static" else (specialized_method(fn, cls), [args[0], *args[2:]])

    def object_ident(self, obj: Any) -> tuple:
        self.objects[id(obj)] = obj
        return ("obj", id(obj))

    def known_parameter(self, param: Value, obj: Any) -> None:
        """A parameter every caller passes the same object for (a method's `self`)."""
        if holder(obj):
            self.idents[id(param)] = self.object_ident(obj)

    def made(self, op: Op) -> None:
        """An operation lowering emitted: the objects its result is (`live(obj)`, a dict or list display)."""
        if not op.outs:
            return
        if op.prim is helpers.live and isinstance(op.args[0], Const) and holder(op.args[0].value):
            self.idents[id(op.outs[0])] = self.object_ident(op.args[0].value)
        elif op.prim is runtime.free_name and isinstance(op.args[1], Const) \
                and isinstance(op.args[1].value, types.FunctionType):
            self._global_object(op)
        elif op.prim is helpers.new_object and isinstance(op.args[0], Const):
            # `Layer(W)` opened (s2s/frontend/desugar/instances.py): an object of this call, filled by its __init__
            ident = self.idents[id(op.outs[0])] = ("new", id(op.outs[0]))
            self.classes[ident] = op.args[0].value
        elif op.prim in (runtime.make_dict, runtime.make_list):
            self.idents[id(op.outs[0])] = ("value", id(op.outs[0]))
        if op.prim in (runtime.make_list, runtime.make_tuple) and any(self.class_of(a) for a in op.args):
            # `[Layer(W1), Layer(W2)]`: its items, forwarded to `self.layers[0]` and to a loop over it (unrolled)
            ident = self.idents[id(op.outs[0])] = ("value", id(op.outs[0]))
            self.sizes[ident] = len(op.args)
            for k, item in enumerate(op.args):
                self._stored(ident, "item", k, item)

    def _global_object(self, op: Op) -> None:
        """`OPT` read by name, an object of the user's class (or a list or dict of them): the object the name names now, as a method's `self`
        is, so that `OPT.last` read after `OPT.obj(x)` wrote `self.last` is the value written, with its derivative
        (read when the derivative ran, it was a constant: a wrong gradient, found by an outside tester). Where the
        derivative relies on the object (`rely`), it depends on the name naming it (rebound, it is made anew:
        s2s/driver/dispatch.py)."""
        name, fn = op.args[0].value, op.args[1].value
        found, obj = self.low.parsed.resolve(name)
        if not found or not holder(obj) or isinstance(obj, (type, np.ndarray)) \
                or not (type(obj) in (list, dict) or is_user_class(type(obj))):
            return
        ident = self.idents[id(op.outs[0])] = self.object_ident(obj)
        self.by_name.add(id(op.outs[0]))
        self.named.setdefault(ident, (fn, name, obj))       # (guarded where relied on)

    def made_before(self, env: dict) -> set:
        """The objects this call made that env's values (a loop's entry) are or hold: those made before the loop."""
        return {self.idents[id(v)] for v in env.values()
                if isinstance(v, Value) and self.idents.get(id(v), ("",))[0] == "new"}

    def items_of(self, atom: Any) -> list | None:
        """The objects a list or tuple this call made of objects it made holds (`[Layer(W1), Layer(W2)]`)."""
        ident = self.idents.get(id(atom)) if isinstance(atom, Value) else None
        if ident is None or ident not in self.sizes:
            return None
        items = [self.low.env.get(key_of((ident, "item", k))) for k in range(self.sizes[ident])]
        return items if all(self.class_of(item) is not None for item in items) else None

    @staticmethod
    def env_states(env: dict) -> dict:
        return {k: v for k, v in env.items() if k.startswith(PREFIX)}

    def _place(self, node: Any) -> str:
        loc = self.low.parsed.loc(node)
        return f"{loc.file.rsplit('/', 1)[-1]}:{loc.line}" + (f"  {loc.text.strip()}" if loc.text else "")

    # ------------------------------------------------------------ reads

    def read(self, base: Atom, kind: str, name: Any, node: Any, hint: str) -> Atom:
        """base.name (kind "attr") or base[name] (kind "item", a literal key): the value written in this call
        when there is one, else read when the derivative runs."""
        low = self.low
        ident = self.ident_of(base)
        if ident is None:
            return low.op(getattr if kind == "attr" else operator.getitem, [base, Const(name)], node, hint)
        location = (ident, kind, name)
        key = key_of(location)
        held = low.env.get(key)
        if isinstance(held, (Value, Const)):
            self.rely(ident)
            return held
        if kind == "attr" and ident[0] == "new":
            self._plain_attribute(ident, name, node, "reading")
        # (read through a global's name: as it was before the name was known to name the object, when it runs)
        held = self._held_array(ident, kind, name, node) if id(base) not in self.by_name else None
        if held is not None:            # an array the object holds: specialized on like a global array
            self.rely(ident)
            out = low.op(runtime.free_name, [Const(name), Const(held)], node, hint, checked=False)
        else:
            out = low.op(getattr if kind == "attr" else operator.getitem, [base, Const(name)], node, hint,
                         checked=False)
        self.locations[key] = location
        if ident[0] == "obj" and not self.opaque and location not in self.touched \
                and (ident, "item", None) not in self.touched:
            self._resolve(out, ident, kind, name)
        # written there (or anywhere in it) and not forwarded: checked here, before the read; what was written
        # inside the object read (an append to self.X) is checked where that object is used or read from
        self._check(ident, node, forwarded=False, location=location, inside=id(out) not in self.idents)
        return out

    def _plain_attribute(self, ident: tuple, name: Any, node: Any, doing: str) -> None:
        """Refuse reading or writing, on an object this call made, an attribute its class makes a descriptor
        (`functools.cached_property`, a library's descriptor): what the read finds is the descriptor's code, which
        s2s does not follow (a property of the user's functions is its getter's or setter's call by now:
        desugar/instance_properties.py). Read as a plain attribute its value was a constant: a wrong gradient."""
        cls = self.classes.get(ident)
        if cls is None or not isinstance(name, str):
            return
        found = inspect.getattr_static(cls, name, MISSING)
        if found is MISSING or isinstance(found, (types.FunctionType, staticmethod, classmethod)) \
                or not hasattr(type(found), "__get__") and not hasattr(type(found), "__set__"):
            return
        raise self.low.error(f"{doing} `{name}` of an object of {cls.__name__} built here runs its class's "
                             f"{type(found).__name__}, which s2s does not follow", node,
                             hint=f"make `{name}` a plain @property of {cls.__name__}, or a method")

    def _held_array(self, ident: tuple, kind: str, name: Any, node: Any) -> Held | None:
        """The owner of a `free_name` read of an array of numbers, or of a number, an object known now holds as a
        plain instance attribute (`self.exog`, `self.df_resid`) or under a string key of its dict
        (`self.parameters["W"]`), not changed earlier in this call: the derivative is specialized on the array's
        shape and dtype, or the number's class, checked on entry, as a global array's
        (s2s/analysis/global_shapes.py). A location the call writes is read where it is (`unheld`)."""
        if ident[0] != "obj" or self.opaque or (ident, kind, name) in self.touched \
                or (ident, "item", None) in self.touched:
            return None
        obj = self.objects.get(ident[1])
        if kind == "attr":
            if isinstance(obj, (type, types.ModuleType)) or not isinstance(name, str) \
                    or name not in getattr(obj, "__dict__", {}):
                return None
            if hasattr(type(inspect.getattr_static(type(obj), name, None)), "__set__"):
                return None                 # a property or slot of its class decides what the read finds
            value = obj.__dict__[name]
        elif isinstance(obj, dict) and type(obj) is dict and isinstance(name, str) and name.isidentifier():
            value = obj.get(name)
        else:
            return None
        if abstract_held(value) is None:
            return None
        return Held(obj, kind == "item", _shown(node))

    def _resolve(self, out: Value, ident: tuple, kind: str, name: Any) -> None:
        """The object a read finds now (a dict, list or object the attribute holds): its identity, guarded when
        the derivative relies on it (rely)."""
        obj = self.objects.get(ident[1])
        if obj is None:
            return
        if kind == "attr":
            try:
                found = inspect.getattr_static(obj, name, MISSING)
            except Exception:           # noqa: BLE001
                return
            if not isinstance(found, (dict, list)) and hasattr(type(found), "__get__"):
                return                  # a method, property or other descriptor: not data
            if isinstance(obj, types.ModuleType):
                return
        elif isinstance(obj, dict) and _literal_key(name):
            found = obj.get(name, MISSING)
        elif type(obj) is list and type(name) is int and -len(obj) <= name < len(obj):
            found = obj[name]           # (`NET[0].out`: the layer the list holds now, guarded where relied on)
        else:
            return
        if found is MISSING or not holder(found) or isinstance(found, type):
            return
        child = self.object_ident(found)
        self.idents[id(out)] = child
        self.parents.setdefault(child, (ident, kind, name, found))

    def rely(self, ident: tuple | None) -> None:
        """The derivative relies on ident naming the object it names now: each step that found it is guarded
        (a dependency, checked on entry as a folded attribute is: desugar/known_values.py)."""
        while ident is not None:
            step = self.parents.get(ident)
            # (relied on before the step that found it was known, `self` of a method called first: not yet guarded)
            if (ident, id(step)) in self.relied:
                return
            self.relied.add((ident, id(step)))
            if step is None:
                named = self.named.get(ident)
                if named is not None:   # the object a global names (`_global_object`): the name still names it
                    self.low.dependencies.append(named)
                return
            parent, kind, name, obj = step
            if parent[0] != "obj" or obj is None:       # (an object this call made holds it: nothing to guard)
                return
            holder_obj = self.objects.get(parent[1])
            if kind == "attr":
                key = ("held", id(holder_obj), name)
                if key not in self.low.parsed.attributes:
                    self.low.parsed.attributes[key] = (AttributeOf(holder_obj), name, obj)
            else:
                self.low.dependencies.append((ItemOf(holder_obj), name, obj))
            ident = parent

    def fill(self, location: tuple, node: Any, carried: bool) -> Atom | None:
        """What a location holds now, read where lowering stands (the end of a branch that did not write it, or
        before a loop that carries it); None (a branch) or UNDEFINED (a loop) when it holds nothing now."""
        ident, kind, name = location
        obj = self.objects.get(ident[1]) if ident[0] == "obj" else None
        present = obj is not None and (
            kind == "attr" and name in getattr(obj, "__dict__", {}) or
            kind == "item" and isinstance(obj, dict) and name in obj)
        if not present:
            return Const(UNDEFINED) if carried else None
        base = self.low.op(helpers.live, [Const(obj)], node, "", checked=False)
        return self.low.op(getattr if kind == "attr" else operator.getitem, [base, Const(name)], node,
                           str(name) if str(name).isidentifier() else "", checked=False)

    # ------------------------------------------------------------ uses of an object

    def merge(self, out: Value, inputs: list) -> None:
        """A phi (a branch's or a loop's) of values that may be objects: it may be each of them."""
        found = set()
        for atom in inputs:
            if isinstance(atom, Value):
                found |= self.aliases.get(id(atom), set())
                ident = self.idents.get(id(atom))
                if ident is not None:
                    found.add(ident)
        if found:
            self.aliases[id(out)] = found

    def used(self, atoms: list, node: Any, prim: Any = None) -> None:
        """An operation reads these atoms: an object (or container) into which this call wrote, whether the write
        is forwarded or not, is checked (the operation sees only the primal values)."""
        if not (self.idents or self.aliases):
            return
        if prim in (runtime.make_list, runtime.make_tuple) and any(self.class_of(a) for a in atoms):
            return                  # a list of the objects this call made: followed (made)
        for atom in atoms:
            if isinstance(atom, Value):
                idents = set(self.aliases.get(id(atom), ()))
                ident = self.idents.get(id(atom))
                if ident is not None:
                    idents.add(ident)
                for found in idents:
                    self._check(found, node, forwarded=True)
                    if found[0] in ("new", "value"):
                        self.escaped.add(found)        # given to an operation: it may keep or change it

    def _check(self, ident: tuple, node: Any, forwarded: bool, location: tuple | None = None,
               inside: bool = True) -> None:
        """A use of ident's object (location None) or a read of one location of it: a mark naming the writes into
        it s2s did not forward (for a read: those that may have hit that location; inside: and those into what
        it holds, when the value read will not be followed further), and the values it forwards (forwarded)."""
        for uses in self.loop_uses:
            uses.append((ident, node, location if not inside else (location, "inside")))
        tokens = tuple(sorted(t for t, via in self.poison.get(ident, {}).items()
                              if location is None or via is None or inside and via == location))
        values = self.whole_reads(ident) if forwarded else []
        key = (ident, tokens, tuple(map(id, values)), self._place(node))
        if not tokens and not values or key in self.checked:
            return
        self.checked.add(key)
        self.low.op(runtime.state_check, [Const(tokens), Const(self._place(node)), *values], node, n_outs=0,
                    checked=False)

    def whole_reads(self, ident: tuple) -> list:
        """The forwarded values inside ident's object (and what it holds): what a read of the whole object when
        the derivative runs sees only as primal values."""
        found = []
        env = self.low.env
        for key, location in self.locations.items():
            held = env.get(key)
            if isinstance(held, Value) and (location[0] == ident or ident in self._ancestors(location[0])):
                found.append(held)
        return found

    def _ancestors(self, ident: tuple) -> list:
        out, seen = [], set()
        step = self.parents.get(ident)
        while step is not None and step[0] not in seen:
            seen.add(step[0])
            out.append(step[0])
            step = self.parents.get(step[0])
        return out

    def lost(self, location_or_ident: Any, value: Atom, node: Any) -> None:
        """value, written into an object (at a location, or anywhere in it: an ident), is no longer forwarded: a
        mark where it is (in scope), and its token on the object and what holds it, which later reads check."""
        if not isinstance(value, Value):
            return
        if isinstance(location_or_ident[0], tuple):
            ident, via = location_or_ident[0], location_or_ident
        else:
            ident, via = location_or_ident, None
        token = next(_TOKENS)
        self.low.op(runtime.state_lost, [value, Const(token), Const(self._place(node))], node, n_outs=0,
                    checked=False)
        self.poison.setdefault(ident, {})[token] = via
        seen = {ident}
        step = self.parents.get(ident)
        while step is not None and step[0] not in seen:        # what holds it: through the location that holds it
            seen.add(step[0])
            self.poison.setdefault(step[0], {})[token] = (step[0], step[1], step[2])
            step = self.parents.get(step[0])

    def drop(self, predicate: Any, node: Any) -> None:
        """Forget the forwarded values of the locations predicate(location) selects (the object changed in a way
        s2s does not follow): later reads are read when the derivative runs, and checked."""
        env = self.low.env
        for key in [k for k in env if k.startswith(PREFIX)]:
            location = self.locations.get(key)
            if location is None or not predicate(location):
                continue
            held = env.pop(key)
            self.touched.add(location)
            self.lost(location, held, node)

    # ------------------------------------------------------------ writes

    def _target(self, base: Atom, node: Any, what: str) -> tuple:
        ident = self.ident_of(base)
        if ident is None and isinstance(base, Value) and self.aliases.get(id(base)):
            raise self.low.error(f"s2s performs {what} of one object the derivative can name; here the object "
                                 f"depends on a branch or a loop", node,
                                 hint="write into the object in each branch, by its name (`self.a.x = ...`)")
        if ident is None:
            raise self.low.error(
                f"s2s does not support {what} of an object known only when the code runs (an argument, or one a call "
                f"made): it performs writes into the objects it knows when the derivative is made (`self`, an object "
                f"or class the code names, and the dicts, lists and objects they hold)", node,
                hint="store the value in an attribute of `self` (or of an object the function names), or return it")
        if ident[0] == "new" and not what.endswith("attribute"):
            raise self.low.error(
                f"s2s follows the attributes assigned into an object this call made (`self.W = W`), not {what} of it",
                node, hint="assign the attribute a whole new value (`self.xs = self.xs + [x]`), or return the value")
        if ident[0] == "value":
            raise self.low.error(
                f"s2s does not follow {what} of a dict or list this call made and stored in an object", node,
                hint="build it whole before storing it (`self.cache = {'a': a, 'b': b}`)")
        if self.opaque and not self.private(ident):
            raise self.low.error(
                f"s2s does not support {what} after a method that s2s runs as Python runs it (of an object known only "
                f"when the code runs): it cannot tell which object that method changed", node,
                hint="call that method outside the differentiated function, or before nothing else is stored")
        self.rely(ident)
        return ident

    def store_attribute(self, base: Atom, name: str, value: Atom, node: Any) -> None:
        ident = self._target(base, node, "assignment into an attribute")
        if ident[0] == "new":       # an object this call made: written, and the value forwarded to its reads
            self._plain_attribute(ident, name, node, "writing")
            self.low.op(runtime.store_attribute, [base, Const(name), value], node, n_outs=0, checked=False)
            self._stored(ident, "attr", name, value)
            return
        obj = self.objects[ident[1]]
        cls = obj if isinstance(obj, type) else type(obj)
        meta = type(obj)
        default = type.__setattr__ if isinstance(obj, type) else object.__setattr__
        if getattr(meta, "__setattr__", default) is not default:
            raise self.low.error(f"{meta.__name__} defines __setattr__: s2s does not write attributes through it",
                                 node, hint="return the value instead of storing it")
        found = inspect.getattr_static(cls, name, MISSING) if not isinstance(obj, type) else MISSING
        if isinstance(found, property) or hasattr(type(found), "__set__") and not isinstance(
                found, types.MemberDescriptorType):
            raise self.low.error(f"`{name}` is a property (or another descriptor) of {cls.__name__}: writing it runs "
                                 f"its setter, which s2s does not read", node,
                                 hint="write the attribute the setter writes, or return the value")
        self.low.op(runtime.store_attribute, [base, Const(name), value], node, n_outs=0, checked=False)
        self._stored(ident, "attr", name, value)
        self.effects.append(("attr", obj, name))

    def store_item(self, base: Atom, key: Atom, value: Atom, node: Any) -> None:
        ident = self._target(base, node, "assignment into an item")
        obj = self.objects[ident[1]]
        if not isinstance(obj, (dict, list, np.ndarray)):
            raise self.low.error(f"s2s writes items of the dicts, lists and arrays an object holds, not of a "
                                 f"{type(obj).__name__}", node, hint="return the value instead of storing it")
        self.low.op(runtime.store_item, [base, key, value], node, n_outs=0, checked=False)
        literal = isinstance(key, Const) and _literal_key(key.value) and (
            isinstance(obj, dict) or isinstance(obj, list) and type(key.value) is int and key.value >= 0)
        if literal:
            self._stored(ident, "item", key.value, value)
            self.effects.append(("item", obj, key.value))
            return
        # a key known only when it runs, or an array written in place: every item may have changed
        self.drop(lambda location: location[0] == ident, node)
        self.touched.add((ident, "item", None))
        self.lost(ident, value, node)
        self.effects.append(("whole", obj, None))

    def append(self, base: Atom, method: str, value: Atom, node: Any) -> None:
        ident = self._target(base, node, f"`.{method}(...)` into a list")
        obj = self.objects[ident[1]]
        if not isinstance(obj, list):
            raise self.low.error(f"s2s follows `.{method}(...)` into a list an object holds, not into a "
                                 f"{type(obj).__name__}", node, hint="return the value instead of storing it")
        prim = runtime.held_append if method == "append" else runtime.held_extend
        self.low.op(prim, [base, value], node, n_outs=0, checked=False)
        self.drop(lambda location: location[0] == ident, node)
        self.touched.add((ident, "item", None))
        self.lost(ident, value, node)
        self.effects.append(("whole", obj, None))

    @staticmethod
    def hint(location: tuple) -> str:
        """What a value a location holds is called in generated code (`nfev` for self.nfev)."""
        name = location[2]
        return name if isinstance(name, str) and name.isidentifier() else "held"

    def _stored(self, ident: tuple, kind: str, name: Any, value: Atom) -> None:
        location = (ident, kind, name)
        key = key_of(location)
        self.locations[key] = location
        low = self.low
        low.hints[key] = self.hint(location)
        self.touched.add(location)
        low.env[key] = value
        child = self.idents.get(id(value)) if isinstance(value, Value) else None
        if child is not None and child[0] in ("new", "value") and child != ident:
            self.parents[child] = (ident, kind, name, None)     # what it holds is read with it (whole_reads)
        if isinstance(value, Value):
            low.held |= low.bases_of(value) | low.contents_of(value)      # a local write into it would change it

    # ------------------------------------------------------------ methods run as Python runs them

    def opaque_call(self, node: Any) -> None:
        """A method s2s runs as Python runs it (of an object known only when the code runs): it may change any
        object, so nothing is forwarded past it and no identity is read again."""
        if self.idents or self.locations:
            self.drop(lambda location: not self.private(location[0]), node)
            self.opaque = True

    def private(self, ident: tuple) -> bool:
        """An object this call made and never gave to an operation (nor did what holds it): no method run as Python
        runs it can have changed it."""
        seen = set()
        while ident is not None and ident not in seen:
            if ident[0] == "obj" or ident in self.escaped:
                return False
            seen.add(ident)
            step = self.parents.get(ident)
            ident = step[0] if step is not None else None
        return True

    # ------------------------------------------------------------ loops, callees, retries

    def loop_started(self) -> int:
        self.loop_uses.append([])
        return len(self.loop_uses)

    def loop_ended(self, poison_before: dict, body_stmts: list, node: Any) -> None:
        """A loop body lowered: a use in it of an object its body writes into without forwarding (an append) sees,
        in the next iteration, what this one wrote: checked like a later read."""
        uses = self.loop_uses.pop()
        if self.loop_uses:
            self.loop_uses[-1].extend(uses)
        for ident, use_node, location in uses:
            before = poison_before.get(ident, {})
            inside = isinstance(location, tuple) and len(location) == 2 and location[1] == "inside"
            location = location[0] if inside else location
            new = {t for t, via in self.poison.get(ident, {}).items()
                   if t not in before and (location is None or via is None or inside and via == location)}
            if new:
                mark = Op(runtime.state_check, [Const(tuple(sorted(new))), Const(self._place(use_node))], [],
                          loc=self.low.parsed.loc(use_node))
                body_stmts.append(mark)

    def snapshot(self) -> tuple:
        return (dict(self.objects), dict(self.classes), set(self.escaped), dict(self.idents), {k: set(v) for k, v in self.aliases.items()},
                dict(self.parents), dict(self.locations), {k: dict(v) for k, v in self.poison.items()},
                set(self.touched), set(self.checked), list(self.effects), self.opaque, set(self.relied),
                [list(u) for u in self.loop_uses])

    def restore(self, saved: tuple) -> None:
        (self.objects, self.classes, self.escaped, self.idents, self.aliases, self.parents, self.locations, self.poison, self.touched,
         self.checked, self.effects, self.opaque, self.relied, self.loop_uses) = saved

    def absorb_fields(self, other: "ObjectState", mapping: dict) -> None:
        """other's facts (a callee's, its values renamed by mapping; or the caller's, for a callee lowered inside
        its state)."""
        def renamed(i: int) -> int:
            found = mapping.get(i)
            return id(found) if found is not None else i
        self.objects.update(other.objects)
        self.classes.update(other.classes)
        self.escaped |= other.escaped
        self.sizes.update(other.sizes)
        self.idents.update((renamed(i), ident) for i, ident in other.idents.items())
        self.aliases.update((renamed(i), set(a)) for i, a in other.aliases.items())
        self.parents.update(other.parents)
        self.named.update(other.named)
        self.locations.update(other.locations)
        for ident, tokens in other.poison.items():
            self.poison.setdefault(ident, {}).update(tokens)
        self.touched |= other.touched
        self.opaque = self.opaque or other.opaque
        self.relied |= other.relied

    def absorb(self, callee: Any, mapping: dict) -> None:
        """A callee inlined (its body copied with mapping): its writes, what it forwards and forgot, are the
        caller's now."""
        summary = getattr(callee, "object_state", None)
        if summary is None:
            return
        other, final = summary
        self.absorb_fields(other, {k: v for k, v in mapping.items() if isinstance(v, Value)})
        held = {(kind, id(obj), repr(name)) for kind, obj, name in self.effects}
        self.effects.extend(e for e in other.effects if (e[0], id(e[1]), repr(e[2])) not in held)
        env = self.low.env
        for key in [k for k in env if k.startswith(PREFIX)]:
            del env[key]
        for key, atom in final.items():
            atom = mapping.get(id(atom), atom) if isinstance(atom, Value) else atom
            env[key] = atom
            if isinstance(atom, Value):
                self.low.held |= self.low.bases_of(atom) | self.low.contents_of(atom)

    def summary(self) -> tuple:
        """What the lowered function keeps of this state (Function.object_state): the facts, and the forwarded
        values at its end."""
        final = self.env_states(self.low.env)
        self.low = None            # (the lowerer is done)
        return self, final
