"""Code generation: an IR Function to the source of a Python module.

`emit_module(fn, ...)` returns `Emitted(source, bindings)`: the module text
(imports, the helpers it uses, the function) and the objects its names must be
bound to when it is not importable by name (the user's own functions, odd
constants). The module needs nothing from s2s at run time.

Python names come from the user's (s2s/emit/names.py): an SSA value takes its
variable's name, and values linked by a phi (the versions of one loop variable)
share one name whenever their lifetimes allow, so the forward sweep reads like
the user's code; otherwise a copy is written. Temporaries are `t1`, `t2`.

The text is written directly, spelled as astor spells the same tree
(s2s/emit/source_text.py); astor itself is called only for the rare line it would
wrap or spell its own way.

`emit_module(..., target=...)` writes for another target whose syntax differs
(s2s/backends/numba/syntax.py: Numba's nopython mode): the emitter asks the
target's hooks, from the IR, and the Python module it writes without one is
unchanged.
"""
from __future__ import annotations

import builtins
import collections
import inspect
import keyword
import math
import operator
import os
import sys
import textwrap
import types
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from s2s import runtime
from s2s.analysis import global_shapes
from s2s.emit import source_text as st
from s2s.emit.names import python_names as _python_names
from s2s.emit.nesting import merge_initializations, nested
from s2s.errors import S2SError
from s2s.ir.calls import Callee, callees_in
from s2s.ir import syntax
from s2s.ir.core import UNDEFINED, Atom, Block, Const, For, Function, If, Op, Stmt, Value, While, stmt_blocks, walk
from s2s.rules import registry

# the primitives Python's syntax writes (s2s/ir/syntax.py, the lowering's map read backwards)
_BINARY = {     # prim -> (symbol with its spaces, astor's precedence)
    **{prim: (f" {symbol} ", syntax.PRECEDENCE[symbol]) for symbol, prim in syntax.BINARY.items()},
    runtime.concat: (" + ", 47), runtime.repeat: (" * ", 49),
}
_UNARY = {prim: (symbol + " " if symbol.isalpha() else symbol, syntax.UNARY_PRECEDENCE[symbol])
          for symbol, prim in syntax.UNARY.items()}
_COMPARE = {prim: symbol for symbol, prim in syntax.COMPARE.items()}
_IDENTITY = (syntax.COMPARE["is"], syntax.COMPARE["is not"])
_OPERATOR_OF = syntax.SAME_AS
_MODULES = (("math", math, "math"), ("np", np, "numpy"), ("np.linalg", np.linalg, "numpy"), ("np.fft", np.fft, "numpy"))
_NP_ZEROS_LIKE = ("np.zeros_like", st.ATOM)
_MODULE_ALIASES = frozenset(alias.split(".")[0] for alias, _, _ in _MODULES)     # np, math: imported by the module
_TRUE = st.constant(True)
_OBJECT_WRITES = {runtime.store_attribute, runtime.store_item, runtime.held_append, runtime.held_extend,
                  runtime.state_lost, runtime.state_check}
_SPECIAL = {syntax.CONTAINS, syntax.SUBSCRIPT, syntax.ATTRIBUTE, runtime.make_tuple, runtime.make_dict, runtime.make_list,
            runtime.stack_new, runtime.pop, runtime.push, runtime.zeros_like, runtime.free_name}




def to_source(signature: str, body: list[st.Stmt], odd: bool = False) -> tuple[list[str], list[Any]]:
    """The function's lines and the user's place of each (the printing step, measured as one)."""
    return st.render(signature, body, odd)


# ---------------------------------------------------------------- the emitter

@dataclass
class Emitted:
    source: str
    bindings: dict[str, Any] = field(default_factory=dict)
    reads_user_names: bool = False      # reads a global or closure variable of the user's by bare name
    line_map: dict[int, Any] = field(default_factory=dict)     # line of the module -> the user's Loc
    user_names: frozenset = frozenset()     # the user's names it reads by bare name (all else: its own, builtins)


class _Emitter:
    def __init__(self, fn: Function, root: Any = None, shared: "_Emitter | None" = None, target: Any = None):
        self.fn = fn
        # another target's syntax (s2s/backends/numba/syntax.py): its hooks say what it spells otherwise
        self.target = target if shared is None else shared.target
        self.loc: Any = None            # (with a target) the user's place of the statement being written
        self.target_helpers: dict[str, str] = {}        # (with a target) the helpers' texts, by name
        self.root = root            # the user's function whose namespace the module's bare names read
        self.imports: dict[str, str] = {}         # alias -> module
        self.helpers: dict[str, Any] = {}
        self.visiting: set[str] = set()
        self.reads_user_names = False
        self.odd = False                # a constant astor spells its own way was written (source_text.py)
        self.swapped = False            # self.atom replaced while a loop's test is written as one expression
        self.references: dict[int, st.Expr] = {}     # id of an object -> how the module names it
        self.plain_calls: dict[int, st.Expr] = {}    # id of a primitive written `f(args)` -> f
        self.skipped: set[int] = set()                      # ops written as part of another statement
        self.bindings: dict[str, Any] = {}
        self.callee_names: dict[int, str] = {}      # the functions of the module it calls (recursion: companions.py)
        if shared is not None:          # another function of the same module: one set of imports and names
            self.imports, self.helpers, self.bindings = shared.imports, shared.helpers, shared.bindings
            self.target_helpers = shared.target_helpers
            self.references, self.callee_names = shared.references, shared.callee_names
        self.inlined: dict[int, Op] = {}
        self._taken: set[str] | None = None     # names bound objects may not take (_taken_names)
        # a variable one branch binds is read under another condition (runtime._bound checks it): the branches
        # that do not bind it assign the sentinel (copies)
        self.unbound_used = any(type(s) is Op and s.prim is runtime._bound for s in walk(fn.body))
        reserved = {"np", "math", "range", "reversed", "len", "float", "slice", "min", "max", "abs"}
        reserved |= {h.__name__ for h in runtime.EMITTED_HELPERS}
        own = set(reserved)
        self.uses = self._survey(reserved)
        self._find_inlined()
        if root is not None:
            reserved |= set(root.__code__.co_freevars)
        self.free_names = reserved - own        # the user's globals and closure variables the code reads
        self.global_locals = self._global_locals(reserved)
        self.lengths = {id(op.outs[0]): op for op in self.lens if len(op.outs) == 1}    # n = len(xs)
        self.items = {id(s): item for s in self.fors for item in [self.sequence_item(s)] if item is not None}
        self.reserved = reserved        # names no generated name takes: the user's free names read, the module's
        self.user_names: set[str] = set()       # the user's globals and closure variables read by bare name
        self.names = _python_names(fn, self.inlined, reserved, self.items)
        self.named = {k: (v, st.ATOM) for k, v in self.names.items()}      # a value's name as an expression

    def _survey(self, reserved: set[str]) -> "collections.Counter[int]":
        """One pass over the function: how often each value is read, the operations the emitter looks at
        again (tuples, `len` calls: self.tuples, self.lens) and the `for` loops (self.fors), in program
        order; global reads are inlined and their names join `reserved`."""
        free_name, make_tuple = runtime.free_name, runtime.make_tuple
        tuples: list[Op] = []
        lens: list[Op] = []
        fors: list[For] = []
        self.tuples, self.lens, self.fors = tuples, lens, fors

        read: list[int] = []            # ids of what is read (constants too: never looked up)

        def block(b: Block) -> None:
            extend = read.extend
            for s in b.stmts:
                if s.__class__ is Op:
                    extend(map(id, s.args))
                    if s.kwargs:
                        extend(map(id, s.kwargs.values()))
                    prim = s.prim
                    if prim is free_name:
                        reserved.add(s.args[0].value)
                        if len(s.outs) == 1:
                            self.inlined[id(s.outs[0])] = s         # a global read: written where it is read
                    elif prim is make_tuple:
                        if len(s.outs) == 1:
                            tuples.append(s)
                    elif prim is len:
                        lens.append(s)
                    continue
                if isinstance(s, If):
                    read.append(id(s.cond))
                elif isinstance(s, While):
                    extend(map(id, s.inits))
                else:
                    fors.append(s)
                    extend(map(id, [s.start, s.stop, s.step, *s.inits]))
                for inner in stmt_blocks(s):
                    block(inner)
            extend(map(id, b.results))
        block(self.fn.body)
        del block           # (a closure that calls itself: a cycle holding the emitter, freed now)
        return collections.Counter(read)

    def _find_inlined(self) -> None:
        """Values written as expressions where they are read: global reads, the returned tuple."""
        returned = {id(a) for a in self.fn.body.results}      # (global reads: found by _survey)
        inlined: list[Op] = []
        for stmt in self.tuples:
            out = stmt.outs[0]
            if id(out) in returned and self.uses.get(id(out), 0) == 1:
                self.inlined[id(out)] = stmt
                inlined.append(stmt)
        tuples = {id(s.outs[0]): s for s in self.tuples} if inlined else {}
        top: set[int] | None = None
        for stmt in inlined:        # (defined in the function's body: it returns them)
            for a in stmt.args:     # a tuple nested in the returned tuple
                inner = tuples.get(id(a))
                if inner is None or self.uses.get(id(a), 0) != 1:
                    continue
                if top is None:
                    top = {id(s) for s in self.fn.body.stmts}
                if id(inner) in top:
                    self.inlined[id(a)] = inner
        self.inlined.update(nested(self.fn, self.uses, self.inlined, self.fors, self.lens))   # t = X @ W; h = t + b

    # ------------------------------------------------------------ atoms and calls

    def atom(self, atom: Atom) -> st.Expr:
        found = self.named.get(id(atom))
        if found is not None:
            return found
        if isinstance(atom, Const):
            return self.constant(atom.value)
        return self.expression(self.inlined[id(atom)])

    def constant(self, value: Any) -> st.Expr:
        if value is None or isinstance(value, (bool, str, bytes)) or value is Ellipsis:
            if st.astor_spells_own_way(value):
                self.odd = True
            return st.constant(value)
        if type(value) in (int, float):
            if isinstance(value, float) and not math.isfinite(value):
                return st.call(st.name("float"), [st.constant(repr(value))])
            if value < 0:
                return st.unary("-", st.UNARY, st.constant(-value))
            return st.constant(value)
        if type(value) is complex and value.real == 0 and math.isfinite(value.imag):     # 1j, -2j
            return st.constant(value) if math.copysign(1.0, value.imag) > 0 else \
                st.unary("-", st.UNARY, st.constant(complex(0.0, -value.imag)))
        if isinstance(value, tuple):
            return st.tuple_([self.constant(v) for v in value])
        if isinstance(value, slice):
            return st.call(st.name("slice"), [self.constant(value.start), self.constant(value.stop),
                                              self.constant(value.step)])
        if value is UNDEFINED:          # a variable's value on a path that does not bind it (copies, _bound)
            return self.reference_named(UNDEFINED, "_unbound")
        return self.reference(value)

    def index(self, atom: Atom) -> st.Expr:
        """An index inside brackets, where slices are written `a:b:c`."""
        if isinstance(atom, Const) and isinstance(atom.value, slice):
            value = atom.value
            return st.slice_(self.slice_part(value.start), self.slice_part(value.stop), self.slice_part(value.step))
        if isinstance(atom, Const) and isinstance(atom.value, tuple):
            return st.tuple_([self.index(Const(v)) for v in atom.value])
        made = self.inlined.get(id(atom)) if isinstance(atom, Value) else None
        if made is not None and made.prim is slice and not made.kwargs and 1 <= len(made.args) <= 3:
            parts = [None if isinstance(a, Const) and a.value is None else self.atom(a) for a in made.args]
            start, stop, step = ([None] + parts + [None])[:3] if len(parts) == 1 else (parts + [None])[:3]
            return st.slice_(start, stop, step)          # `x[slice(1, n, None)]` nested: `x[1:n]`
        return self.atom(atom)

    def slice_part(self, value: Any) -> st.Expr | None:
        return None if value is None else self.constant(value)

    def reference(self, obj: Any) -> st.Expr:
        """How the module names an object: `math.sin`, `np.sum`, `abs`, or a bound name (once per object:
        the imports and bindings it adds are made the first time)."""
        found = self.references.get(id(obj))
        if found is None:
            found = self.references[id(obj)] = self._reference(obj)
        return found

    def _reference(self, obj: Any) -> st.Expr:
        if isinstance(obj, Callee):         # a function of the module (or the user's recursive function)
            return st.name(self.callee_names[id(obj)]) if obj.generated else self.reference(obj.python)
        name = getattr(obj, "__name__", None)
        if isinstance(name, str):
            if getattr(builtins, name, None) is obj and name not in self._taken_names():
                return st.name(name)        # (a local or a user's name read by the code: bound under another)
            for alias, module, top in _MODULES:
                if getattr(module, name, None) is obj:
                    self.imports[alias.split(".")[0]] = top
                    return st.name(f"{alias}.{name}")
            if obj is np:
                self.imports["np"] = "numpy"
                return st.name("np")
            if obj is math:
                self.imports["math"] = "math"
                return st.name("math")
        return self.reference_named(obj, name if isinstance(name, str) and name.isidentifier() else "_const")

    def _global_locals(self, reserved: set[str]) -> dict[tuple[int, str], str]:
        """The local each global array the code is specialized on is read into once, on entry (`U_`)."""
        found = {}
        for name, owner, _ in getattr(self.fn, "global_checks", ()):
            local = f"{name}_"
            while local in reserved:
                local += "_"
            reserved.add(local)
            found[global_shapes.owner_key(owner), name] = local
        if found:
            reserved.update(("_global_array", "_global_number"))
        return found

    def global_checks(self, standalone: bool) -> list[st.Stmt]:
        """On entry: each global array the code is specialized on, read into its local and checked (its class,
        shape and dtype), and each number an object holds (its class): s2s/analysis/global_shapes.py."""
        stmts = []
        for name, owner, abstract in getattr(self.fn, "global_checks", ()):
            local = self.global_locals[global_shapes.owner_key(owner), name]
            read = self.free_name_read(name, owner)[0]
            shown = getattr(owner, "shown", name)           # `self.exog`, an array an object holds
            number = global_shapes.number_class(owner, name, abstract)
            if number is None or number not in (float, int):
                self.imports["np"] = "numpy"
            if standalone:
                stmts.append(st.Stmt(f"{local} = {read}"))
                test, failed = global_shapes.exported_check(local, shown, abstract, number)
                stmts.append(st.Stmt(test, "if", [st.Stmt(failed)], []))
            else:
                stmts.append(st.Stmt(f"{local} = " + global_shapes.read_text(
                    read, shown, abstract, lambda obj, base: self.reference_named(obj, base)[0], number)))
        return stmts

    def free_name(self, name: str, owner: Any) -> st.Expr:
        """A global or closure variable of owner: the local it was read into on entry when the code is specialized
        on its shape (global_checks), else read live (free_name_read)."""
        local = self.global_locals.get((global_shapes.owner_key(owner), name)) if self.global_locals else None
        return st.name(local) if local is not None else self.free_name_read(name, owner)

    def free_name_read(self, name: str, owner: Any) -> st.Expr:
        """A global or closure variable of owner, read live: a bare name in the root function's own
        namespace, else through the owner's module or closure cell."""
        if isinstance(owner, global_shapes.Held):      # an array an object holds: `self.exog`, `params["W"]`
            holder = self.reference_named(owner.holder, "_const")
            return st.subscript(holder, (repr(name), st.ATOM)) if owner.item else st.attribute(holder, name)
        code = getattr(owner, "__code__", None)
        # a bare name the module itself defines (`_expand = 2.0` in the user's module: not the helper of that name;
        # a global `f_grad` read by f, whose derivative is `f_grad`) is read through the owner instead
        shadowed = self._module_name(name)
        if code is not None and name in code.co_freevars:
            if owner is self.root and not shadowed:
                self.reads_user_names = True
                self.user_names.add(name)
                return st.name(name)
            cell = owner.__closure__[code.co_freevars.index(name)]
            return st.attribute(self.reference_named(cell, f"{name}_cell"), "cell_contents")
        if not shadowed and (self.root is None or getattr(owner, "__globals__", None) is self.root.__globals__):
            self.reads_user_names = True
            self.user_names.add(name)
            return st.name(name)
        module = sys.modules.get(getattr(owner, "__module__", None) or "")
        if module is None or getattr(module, "__dict__", None) is not getattr(owner, "__globals__", None):
            # (a function exec'd in a namespace of its own: its globals, read by subscript)
            return st.subscript(self.reference_named(owner.__globals__, "_globals"), (repr(name), st.ATOM))
        return st.attribute(self.reference_named(module, owner.__module__.rsplit(".", 1)[-1]), name)

    def _module_name(self, name: str) -> bool:
        """Whether name is one the generated module defines or relies on at its top level: a helper, an import,
        the generated function's own name or a companion's."""
        return name in _helper_names() or name in _MODULE_ALIASES or name == self.fn.name or \
            name in self.callee_names.values() or name in self.imports

    def reference_named(self, obj: Any, base: str) -> st.Expr:
        if not base.isidentifier() or keyword.iskeyword(base):     # (a module named after a file `my-model.py`)
            base = "_" + "".join(c if c.isalnum() or c == "_" else "_" for c in base)
            base = base if base.isidentifier() and not keyword.iskeyword(base) else "_const"
        base = f"{base}_" if base in _helper_names() else base
        taken = self._taken_names()
        for k in range(1000):
            candidate = base if k == 0 else f"{base}_{k}"
            if candidate not in taken and self.bindings.get(candidate, obj) is obj:
                self.bindings[candidate] = obj
                return st.name(candidate)
        raise AssertionError("too many bound objects")

    def _taken_names(self) -> set[str]:
        """The names a bound object may not take: the generated function's own (a derivative named like the
        function it calls, `lambda__grad` inside `lambda__grad`, would call itself) and its locals'."""
        if self._taken is None:     # (and the user's names the code reads: a binding would hide the user's value)
            self._taken = {self.fn.name, *self.names.values(), *self.free_names}
        return self._taken

    def expression(self, op: Op) -> st.Expr:
        prim, args = op.prim, op.args
        if prim is runtime.free_name:
            return self.free_name(args[0].value, args[1].value)
        atom = self.atom
        if self.swapped:
            values = [atom(a) for a in args]
        elif len(args) == 2:
            named = self.named
            left = named.get(id(args[0])) or atom(args[0])
            right = named.get(id(args[1])) or atom(args[1])
            binary = _BINARY.get(prim)
            if binary is not None:       # st.binary, inline: most operations are binary ones
                symbol, p = binary
                if p == st.POW:
                    return st.binary(symbol, p, left, right)
                return (f"{left[0] if left[1] >= p else '(' + left[0] + ')'}{symbol}"
                        f"{right[0] if right[1] > p else '(' + right[0] + ')'}", p)
            values = [left, right]
        elif len(args) == 1 and not op.kwargs:
            value = self.named.get(id(args[0])) or atom(args[0])
            callee = self.plain_calls.get(id(prim))
            if callee is not None:      # st.call, inline: `math.sin(x)`
                return (f"{callee[0]}({value[0] if value[1] >= st.ONE_ARG else '(' + value[0] + ')'})", st.ATOM)
            values = [value]
        else:
            named = self.named
            values = [named.get(id(a)) or atom(a) for a in args]
        binary = _BINARY.get(prim)
        if binary is not None and len(values) == 2:
            return st.binary(binary[0], binary[1], values[0], values[1])
        keywords = {k: atom(a) for k, a in op.kwargs.items()} if op.kwargs else None
        if self.target is not None:
            found = self.target_expression(op, values, keywords)
            if found is not None:
                return found
        callee = self.plain_calls.get(id(prim))
        if callee is not None:
            return st.call(callee, values, keywords)
        unary = _UNARY.get(prim)
        if unary is not None and len(values) == 1:
            return st.unary(unary[0], unary[1], values[0])
        if prim in _IDENTITY and all(isinstance(a, Const) for a in args):
            return st.constant(prim(args[0].value, args[1].value))      # `-0.5 is not None` is a warning
        if prim in _COMPARE and len(values) == 2:
            return st.compare(_COMPARE[prim], values[0], values[1])
        if prim is syntax.CONTAINS:
            return st.compare("in", values[1], values[0])
        if prim is syntax.SUBSCRIPT:
            return st.subscript(values[0], self.index(args[1]))
        if prim is getattr and isinstance(args[1], Const) and isinstance(args[1].value, str) and \
                args[1].value.isidentifier() and not keyword.iskeyword(args[1].value):
            return st.attribute(values[0], args[1].value)       # (else `getattr(p, 'a b')`, as written)
        if prim is runtime.make_tuple:
            return st.tuple_(values)
        if prim is runtime.make_dict:
            return st.dict_([self.constant(k) for k in args[0].value], values[1:])
        if prim is runtime.make_list or prim is runtime.stack_new:
            return st.list_(values)
        if prim is runtime.pop:
            return st.call(st.attribute(values[0], "pop"), [])
        if prim is runtime.push:
            return st.call(st.attribute(values[0], "append"), [values[1]])
        if prim is runtime.zeros_like:
            self.imports["np"] = "numpy"
            return st.call(_NP_ZEROS_LIKE, values)
        if prim in runtime.EMITTED_HELPERS:
            self.use_helper(prim)
            return st.call(st.name(prim.__name__), values, keywords)
        callee = self.reference(prim)
        if not (prim in _BINARY or prim in _UNARY or prim in _COMPARE or prim in _SPECIAL) and not (
                self.target is not None and registry.record(prim).zeros == "like"):
            self.plain_calls[id(prim)] = callee
        return st.call(callee, values, keywords)

    def target_expression(self, op: Op, values: list[st.Expr], keywords: dict | None) -> st.Expr | None:
        """What the target spells its own way (s2s/backends/numba/syntax.py), or None."""
        prim = op.prim
        if prim is runtime.make_dict:
            raise self.target.refuse_dict(st.dict_([self.constant(k) for k in op.args[0].value], values[1:])[0],
                                          self.loc or op.loc)
        if registry.record(prim).zeros == "like" and len(values) == 1 and not keywords:     # np.zeros_like
            return self.target_call(self.target.zeros_like, values, None, op)
        if prim in runtime.EMITTED_HELPERS:
            return self.target_call(prim.__name__, values, keywords, op)
        if keywords and self.target.out_by_position and list(keywords) == ["out"] and isinstance(prim, np.ufunc) \
                and getattr(np, prim.__name__, None) is prim and len(values) == prim.nin:
            return st.call(self.reference(prim), values + [keywords["out"]])
        return None

    def target_call(self, helper: str, values: list[st.Expr], keywords: dict | None, op: Op) -> st.Expr:
        """A call of the target's version of a helper, whose text the module gets once."""
        call = st.call(st.name(helper), values, keywords)
        if helper not in self.target_helpers:
            self.target_helpers[helper] = self.target.helper(helper, call[0], self.loc or op.loc)
            self.imports["np"] = "numpy"
        return call

    def use_helper(self, helper: Any) -> None:
        """Copy a helper into the module, with the helpers it calls, each once."""
        if helper.__name__ in self.helpers or helper.__name__ in self.visiting:
            return
        self.visiting.add(helper.__name__)          # a helper may call itself
        self.imports["np"] = "numpy"
        for name in sorted(_names_read(helper.__code__)):      # sorted: the same module every run
            other = getattr(runtime, name, None)
            if other in runtime.EMITTED_HELPERS:
                self.use_helper(other)
        self.helpers[helper.__name__] = helper

    # ------------------------------------------------------------ statements

    def name_of(self, v: Value) -> str:
        return self.names[id(v)]

    def copies(self, targets: list[Value], sources: list[Atom], unbound: bool = False) -> list[st.Stmt]:
        """Parallel copies target_i = source_i, skipping those that already share a name. unbound (a branch's
        copies): a value the branch does not define is the sentinel runtime._bound checks (read on another path, a
        reverse sweep's zeros_like of it is computed and never used); a loop's is left unassigned."""
        pairs = [(self.name_of(t), s) for t, s in zip(targets, sources)
                 if not (isinstance(s, Value) and id(s) not in self.inlined and self.name_of(t) == self.names[id(s)])
                 and not (isinstance(s, Const) and s.value is UNDEFINED and not (unbound and self.unbound_used))]
        if not pairs:
            return []
        if len(pairs) == 1:
            return [st.assign([pairs[0][0]], self.atom(pairs[0][1]))]
        if self.target is not None and self.target.one_assignment_per_line and \
                not {t for t, _ in pairs} & set().union(*(self.names_read(s) for _, s in pairs)):
            return [st.assign([t], self.atom(s)) for t, s in pairs]
        return [st.assign([t for t, _ in pairs], st.tuple_([self.atom(s) for _, s in pairs]))]

    def names_read(self, atom: Atom) -> set[str]:
        """The names the expression written for atom reads."""
        if type(atom) is not Value:
            return set()
        name = self.names.get(id(atom))
        if name is not None:
            return {name}
        made = self.inlined.get(id(atom))
        return set().union(*(self.names_read(a) for a in [*made.args, *made.kwargs.values()])) if made else set()

    def block(self, block: Block) -> list[st.Stmt]:
        out: list[st.Stmt] = []
        inlined, skipped, names, assign, assign_one = self.inlined, self.skipped, self.names, st.assign, st.assign_one
        target = self.target
        for stmt in block.stmts:
            if target is not None:
                self.loc = stmt.loc
            if stmt.__class__ is Op:
                outs = stmt.outs
                if outs and id(outs[0]) in inlined or skipped and id(stmt) in skipped:
                    continue
                if stmt.in_place is not None:
                    emitted = self.in_place(stmt)
                elif not outs and stmt.prim in _OBJECT_WRITES:
                    emitted = self.object_write(stmt)
                    if emitted is None:
                        continue
                elif not outs:
                    emitted = st.Stmt(self.expression(stmt)[0])
                elif len(outs) == 1:
                    emitted = assign_one(names[id(outs[0])], self.expression(stmt))
                    if stmt.prim is runtime._masked or stmt.prim is runtime._masked_tangent \
                            or id(outs[0]) in self.discarded():
                        emitted = self.quiet(emitted, stmt)
                else:
                    emitted = assign([names[id(o)] for o in outs], self.expression(stmt))
                emitted.loc = stmt.loc
                out.append(emitted)
                continue
            emitted_list = self.stmt(stmt)
            if stmt.loc is not None:
                for node in emitted_list:
                    node.loc = stmt.loc
            out.extend(emitted_list)
        return out

    def discarded(self) -> set[int]:
        """The values computed only for the contributions runtime._masked (or _masked_tangent) is given, read there
        or inside the expression written in its call (`t5 = t4 / t2`, given to one mask and read in another's
        contribution): quieted as the contribution written inside the call is."""
        found = getattr(self, "_discarded", None)
        if found is not None:
            return found
        found = self._discarded = set()
        masks = (runtime._masked, runtime._masked_tangent)
        inside: set[int] = set()        # the operations written inside a mask's contribution
        users: dict[int, list] = {}
        for s in walk(self.fn.body):
            if s.__class__ is not Op:
                continue
            for k, a in enumerate(list(s.args) + list(s.kwargs.values())):
                if a.__class__ is Value:
                    users.setdefault(id(a), []).append((s, k))
            if s.prim in masks and s.args[0].__class__ is Value:
                pending = [s.args[0]]
                while pending:
                    v = pending.pop()
                    op = self.inlined.get(id(v))
                    if op is not None and id(v) not in inside:
                        inside.add(id(v))
                        pending.extend(a for a in op.args if a.__class__ is Value)
        if not users or not any(s.__class__ is Op and s.prim in masks for s in walk(self.fn.body)):
            return found
        for v, read in users.items():
            if v not in self.inlined and len(read) == self.uses.get(v, 0) and all(
                    (op.prim in masks and k == 0) or (len(op.outs) == 1 and id(op.outs[0]) in inside)
                    for op, k in read):
                found.add(v)
        return found

    def quiet(self, emitted: st.Stmt, stmt: Op) -> st.Stmt:
        """`dx = _masked(contribution, g)` under `np.errstate(divide="ignore", invalid="ignore")`: where g is zero
        the contribution (g / (2 * sqrt(x)) at x = 0) is discarded, and computing it must not warn (nor raise under
        np.seterr(all="raise")) where the function itself does not. Only a contribution written inside the call is
        quieted; another target (Numba, which never warns) writes the statement as it is."""
        if self.target is not None:
            return emitted
        masked = stmt.prim is runtime._masked or stmt.prim is runtime._masked_tangent
        contribution = stmt.args[0] if masked else stmt.outs[0]
        if masked and not (isinstance(contribution, Value) and id(contribution) in self.inlined):
            return emitted
        errstate = self.reference(np.errstate)[0]
        emitted.loc = stmt.loc
        return st.Stmt(f"with {errstate}(divide='ignore', invalid='ignore'):", "with", [emitted])     # (astor's quotes)

    def object_write(self, stmt: Op) -> st.Stmt | None:
        """A side effect on an object, as Python spells it: `self.nfev = nfev`, `d[k] = v`, `self.X.append(X)`
        (s2s/ir/object_state.py); the marks it leaves for the checks, nothing."""
        prim, args = stmt.prim, stmt.args
        if prim is runtime.store_attribute:
            target = st.attribute(self.atom(args[0]), args[1].value)
            return st.Stmt(f"{target[0]} = {self.atom(args[2])[0]}")
        if prim is runtime.store_item:
            target = st.subscript(self.atom(args[0]), self.index(args[1]))
            return st.Stmt(f"{target[0]} = {self.atom(args[2])[0]}")
        if prim in (runtime.held_append, runtime.held_extend):
            method = st.attribute(self.atom(args[0]), "append" if prim is runtime.held_append else "extend")
            return st.Stmt(st.call(method, [self.atom(args[1])])[0])
        return None

    def in_place(self, stmt: Op) -> st.Stmt:
        """`x[i] = v`, `xs.append(v)`, `x += v`."""
        if stmt.prim is runtime.setitem:
            container, index, value = stmt.args
            target = st.subscript(self.atom(container), self.index(index))
            return st.Stmt(f"{target[0]} = {self.atom(value)[0]}")
        if stmt.prim is runtime.list_append:
            append = st.attribute(self.atom(stmt.args[0]), "append")
            return st.Stmt(st.call(append, [self.atom(stmt.args[1])])[0])
        target = self.atom(stmt.args[stmt.in_place])
        symbol = _BINARY[_OPERATOR_OF.get(stmt.prim, stmt.prim)][0]
        return st.Stmt(f"{target[0]}{symbol[:-1]}= {self.atom(stmt.args[1 - stmt.in_place])[0]}")

    def stmt(self, stmt: Stmt) -> list[st.Stmt]:
        """A branch or a loop (operations are written by block)."""
        if id(stmt) in self.skipped:
            return []
        if isinstance(stmt, If):
            then = self.block(stmt.then) + self.copies(stmt.outs, stmt.then.results, unbound=True)
            orelse = self.block(stmt.orelse) + self.copies(stmt.outs, stmt.orelse.results, unbound=True)
            test = self.atom(stmt.cond)
            if not then and not orelse:
                return []
            if not then:
                test, then, orelse = st.unary("not ", st.NOT, test), orelse, []
            return [st.Stmt(st.wrap(test, st.TEST), "if", then, orelse)]
        return self.loop(stmt) + self.copies(stmt.outs, stmt.carried)

    def loop(self, stmt: While | For) -> list[st.Stmt]:
        before = self.copies(stmt.carried, stmt.inits)
        item = self.items.get(id(stmt))
        if item is not None:       # `for c in seq:` when the index serves only to read seq[index]
            self.skipped.add(id(item))
        body = self.block(stmt.body) + self.copies(stmt.carried, stmt.body.results)
        if item is not None:
            element, sequence = self.name_of(item.outs[0]), st.wrap(self.atom(item.args[0]), st.HIGHEST)
            index = f"{element}_i"
            if self.target is not None and self.target.rows_over_arguments and \
                    any(item.args[0] is p for p in self.fn.params) and index not in self.names.values():
                row = st.Stmt(f"{element} = {sequence}[{index}]")
                row.loc = stmt.loc
                header = f"for {index} in range(len({sequence})):"
                return before + [st.Stmt(header, "for", [row] + body)]
            header = f"for {element} in {sequence}:"
            return before + [st.Stmt(header, "for", body or [st.Stmt("pass")])]
        if isinstance(stmt, While):
            test = self.test_expression(stmt.test)
            if test is None:
                body = self.block(stmt.test) + [st.Stmt(
                    st.wrap(st.unary("not ", st.NOT, self.atom(stmt.test.results[0])), st.TEST), "if",
                    [st.Stmt("break")], [])] + body
                test = _TRUE
            return before + [st.Stmt(f"while {st.wrap(test, st.TEST)}:", "while", body or [st.Stmt("pass")])]
        bounds = [stmt.start, stmt.stop, stmt.step]
        if isinstance(stmt.step, Const) and stmt.step.value == 1:
            bounds = bounds[:2]
            if isinstance(stmt.start, Const) and stmt.start.value == 0:
                bounds = bounds[1:]
        if stmt.reverse and self.target is not None:        # the target's way of counting down
            start, stop, step = (b.value if isinstance(b, Const) and type(b.value) is int else self.atom(b)
                                 for b in (stmt.start, stmt.stop, stmt.step))
            iterator = self.target.count_down(start, stop, step, stmt.loc)
        else:
            iterator = st.call(st.name("range"), [self.atom(b) for b in bounds])
        if stmt.reverse and self.target is None:
            iterator = st.call(st.name("reversed"), [iterator])
        index = self.name_of(stmt.index) if self.uses.get(id(stmt.index)) else "_"
        return before + [st.Stmt(f"for {index} in {iterator[0]}:", "for", body or [st.Stmt("pass")])]

    def sequence_item(self, stmt: For) -> Op | None:
        """The op `item = seq[index]` of a loop over range(len(seq)) whose index has no other use."""
        if stmt.reverse or not (isinstance(stmt.start, Const) and stmt.start.value == 0
                                and isinstance(stmt.step, Const) and stmt.step.value == 1):
            return None
        length = self.lengths.get(id(stmt.stop))
        if length is None or length.prim is not len or self.uses.get(id(stmt.index)) != 1:
            return None
        for op in stmt.body.stmts:          # reading an item of a sequence the loop never changes
            if (isinstance(op, Op) and op.prim is syntax.SUBSCRIPT and op.args[1] is stmt.index
                    and op.args[0] is length.args[0] and id(op.outs[0]) not in self.inlined):
                return op
        return None

    def test_expression(self, test: Block) -> st.Expr | None:
        """The loop test as one expression, when its statements are pure and each value is read once."""
        local: dict[int, st.Expr] = {}
        named = self.atom

        def atom(a: Atom) -> st.Expr:
            if isinstance(a, Value) and id(a) in local:
                return local.pop(id(a))
            return named(a)

        def build(block: Block) -> st.Expr | None:
            for s in block.stmts:
                if isinstance(s, Op):
                    if len(s.outs) != 1 or self.uses.get(id(s.outs[0]), 0) != 1 or s.prim in (
                            runtime.push, runtime.pop, print):
                        return None
                    local[id(s.outs[0])] = self._expression_with(s, atom)
                elif isinstance(s, If) and len(s.outs) == 1 and self.uses.get(id(s.outs[0]), 0) == 1:
                    cond = atom(s.cond)
                    then = build(s.then)
                    orelse = build(s.orelse)
                    if then is None or orelse is None:
                        return None
                    local[id(s.outs[0])] = _conditional(cond, then, orelse, s)
                else:
                    return None
            return atom(block.results[0]) if len(block.results) == 1 else None

        return build(test)

    def _expression_with(self, op: Op, atom: Any) -> st.Expr:
        original, swapped = self.atom, self.swapped
        self.atom, self.swapped = atom, True          # type: ignore[method-assign]
        try:
            return self.expression(op)
        finally:
            self.atom, self.swapped = original, swapped  # type: ignore[method-assign]

    def function(self, name: str, defaults: tuple = (), standalone: bool = False) -> tuple[str, list[str], list]:
        """(signature, lines, the user's place of each line) of the function."""
        body = self.block(self.fn.body)
        if self.target is None or not self.target.one_assignment_per_line:
            body = merge_initializations(body)         # a, b = [], []: one line
        results = self.fn.body.results
        value = self.atom(results[0]) if len(results) == 1 else st.tuple_([self.atom(r) for r in results])
        body.append(st.Stmt(f"return {st.wrap(value, st.RETURN)}"))
        if self.odd:            # a constant astor spells its own way: every statement through astor
            _all_odd(body)
        body[:0] = self.global_checks(standalone)
        params = [self.name_of(p) for p in self.fn.params]
        default_texts = [st.wrap(self.constant(d), st.COMMA) for d in defaults]
        padded = [None] * (len(params) - len(default_texts)) + default_texts
        signature = f"def {name}(" + ", ".join(
            p if d is None else f"{p}={d}" for p, d in zip(params, padded)) + "):"
        lines, places = to_source(signature, body, self.odd)
        return lines[0], lines, places

    def module(self, defaults: tuple = (), header: str = "", standalone: bool = False) -> Emitted:
        callees = callees_in(self.fn)       # the functions a recursion's derivative calls (transforms/recursion.py)
        taken = {self.fn.name}
        for callee in callees:
            name = callee.name
            while name in taken or name in _helper_names() or name in self.reserved:
                name += "_"
            taken.add(name)
            self.callee_names[id(callee)] = name
        functions = []
        for callee in callees:
            sub = _Emitter(callee.function(), self.root, shared=self)
            functions.append(sub.function(self.callee_names[id(callee)]))
            self.reads_user_names |= sub.reads_user_names
            self.user_names |= sub.user_names
        signature, lines, places = self.function(self.fn.name, defaults, standalone)
        function_source = "\n".join(lines)
        imports = [f"import {module} as {alias}" if alias != module else f"import {module}"
                   for alias, module in sorted(self.imports.items())]
        bound = [part for name, obj in sorted(self.bindings.items(), key=lambda item: item[0])
                 if (line := _import_line(name, obj)) for part in line.split("\n")]
        imports += [*dict.fromkeys(p for p in bound if p.startswith(("import ", "from "))),   # each once,
                    *(p for p in bound if not p.startswith(("import ", "from ")))]          # then the names bound
        top = "\n\n".join(part for part in (header, "\n".join(imports)) if part)
        definitions = [_helper_source(helper) for helper in self.helpers.values()]
        definitions += [self.target_helpers[name] for name in sorted(self.target_helpers)]
        definitions.extend("\n".join(function[1]).rstrip() for function in functions)
        definitions.append(function_source.rstrip())
        text = "\n\n\n".join(([top] if top else []) + definitions) + "\n"
        line_map: dict[int, Any] = {}
        for sig, _, where in [*functions, (signature, lines, places)]:
            first = text.count("\n", 0, text.index(sig + "\n")) + sig.count("\n") + 2
            line_map.update((first + k, loc) for k, loc in enumerate(where[1:]) if loc is not None)
        return Emitted(text, dict(self.bindings), self.reads_user_names, line_map, frozenset(self.user_names))

    def standalone(self, emitted: Emitted) -> Emitted:
        """The module with imports for the user's globals it reads, refusing what cannot be imported."""
        for name, obj in self.bindings.items():
            if _import_line(name, obj).startswith("#"):
                raise S2SError(f"cannot export {self.fn.name}: it reads {name}, a {type(obj).__name__} that a "
                               f"module cannot import", self.fn.loc,
                               hint="make it a module-level global of your module")
        names = sorted({s.args[0].value for s in walk(self.fn.body) if isinstance(s, Op)
                        and s.prim is runtime.free_name and s.args[1].value is self.root})
        if not names:
            return emitted
        module = getattr(self.root, "__module__", None)
        if module is None or module == "__main__" or module.startswith("_s2s_target_"):
            module = os.path.splitext(os.path.basename(self.root.__code__.co_filename))[0]
        if not _dotted(module):
            raise S2SError(f"cannot export {self.fn.name}: it reads {', '.join(names)} from its module, and "
                           f"{module!r} is not a name an import can give", self.fn.loc,
                           hint="rename the file to a Python module name (letters, digits and _)")
        if any(name in self.root.__code__.co_freevars for name in names):
            raise S2SError(f"cannot export {self.fn.name}: it reads a closure variable of "
                           f"{self.root.__qualname__}", hint="make it a module-level global of your module")
        line = f"from {module} import {', '.join(names)}"
        head, sep, rest = emitted.source.partition("\n\n\n")
        return Emitted(f"{head}\n{line}{sep}{rest}", emitted.bindings, False, emitted.line_map)


def _all_odd(stmts: list[st.Stmt]) -> None:
    for s in stmts:
        s.odd = True
        for inner in (s.body, s.orelse):
            if inner:
                _all_odd(inner)


def _conditional(cond: st.Expr, then: st.Expr, orelse: st.Expr, stmt: If) -> st.Expr:
    then_const = stmt.then.results[0]
    else_res = stmt.orelse.results[0]
    if isinstance(then_const, Const) and then_const.value is False:
        return st.bool_op("and", [st.unary("not ", st.NOT, cond), orelse])
    if else_res is stmt.cond:
        return st.bool_op("and", [cond, then])
    if then_const is stmt.cond:
        return st.bool_op("or", [cond, orelse])
    return st.if_exp(cond, then, orelse)


def _names_read(code: types.CodeType) -> set[str]:
    """The global names a function's code reads, its comprehensions included."""
    names = set(code.co_names)
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            names |= _names_read(const)
    return names


def _import_line(name: str, obj: Any) -> str:
    """How a printed module gets an object the generated code names: an import, or a note that it is
    bound when s2s runs the code (a closure cell, a default value)."""
    if isinstance(obj, types.ModuleType):
        if not _dotted(obj.__name__):
            return st.comment_text(f"# {name}: bound by s2s when it runs this code (the module {obj.__name__})")
        return f"import {obj.__name__} as {name}" if obj.__name__ != name else f"import {name}"
    module_name = getattr(obj, "__module__", None)
    qualname = getattr(obj, "__qualname__", None)
    module = sys.modules.get(module_name) if isinstance(module_name, str) and _dotted(module_name) else None
    if module is not None and isinstance(qualname, str) and _dotted(qualname) and "." not in qualname \
            and getattr(module, qualname, None) is obj and module_name != "__main__":
        return f"from {module_name} import {qualname}" + (f" as {name}" if name != qualname else "")
    if isinstance(obj, np.ufunc):       # a ufunc knows no module: NumPy's, or SciPy's special functions
        for home in ("numpy", "scipy.special"):
            module = sys.modules.get(home)
            if module is not None and getattr(module, obj.__name__, None) is obj:
                return f"from {home} import {obj.__name__}" + (f" as {name}" if name != obj.__name__ else "")
    owner = getattr(obj, "__self__", None)          # a method of a library's object: `scipy.stats.norm.logpdf`
    if owner is not None and not isinstance(owner, types.ModuleType) and getattr(obj, "__name__", None):
        path = _public_path(owner)
        if path is not None and _dotted(obj.__name__) and getattr(owner, obj.__name__, None) == obj:
            return f"import {path[0]}\n{name} = {'.'.join(path)}.{obj.__name__}"
    return st.comment_text(f"# {name}: bound by s2s when it runs this code ({type(obj).__name__})")


def _dotted(text: str) -> bool:
    """Whether text is a name, or names joined by dots, that an import line may hold as it is."""
    return isinstance(text, str) and all(part.isidentifier() and not keyword.iskeyword(part)
                                         for part in text.split("."))


def _public_path(obj: Any) -> tuple[str, str] | None:
    """(module, name) under which a module-level object of a library is importable, its shortest public module
    first (`scipy.stats`, `norm` rather than `scipy.stats._continuous_distns`)."""
    module_name = type(obj).__module__
    if not module_name or module_name in ("builtins", "__main__"):
        return None
    parts = module_name.split(".")
    for k in range(1, len(parts) + 1):
        module = sys.modules.get(".".join(parts[:k]))
        if module is None or any(p.startswith("_") for p in parts[1:k]):
            continue
        found = next((n for n, v in vars(module).items() if v is obj and not n.startswith("_") and _dotted(n)),
                     None)
        if found is not None:
            return module.__name__, found
    return None


def emit_module(fn: Function, defaults: tuple = (), header: str = "", root: Any = None,
                standalone: bool = False, target: Any = None) -> Emitted:
    """The module text; standalone: every name it reads is imported (or the export is refused). target: another
    target's syntax (s2s/backends/numba/syntax.py's SYNTAX), whose check reads the IR first."""
    if target is not None:
        target.check(fn)
    emitter = _Emitter(fn, root, target=target)
    emitted = emitter.module(defaults, header, standalone)
    if standalone:
        return emitter.standalone(emitted)
    return emitted


_HELPER_SOURCES: dict = {}      # helper -> (its code, its source as copied into a module)


def _helper_source(helper: Any) -> str:
    """A helper's definition as a generated module copies it: read once per helper (and code), since
    inspect.getsource tokenizes the helper's file at each call."""
    code = getattr(helper, "__code__", None)
    cached = _HELPER_SOURCES.get(helper)
    if cached is None or cached[0] is not code:
        cached = _HELPER_SOURCES[helper] = (code, textwrap.dedent(inspect.getsource(helper)).rstrip())
    return cached[1]


_HELPER_NAMES: list = [0, set()]      # how many helpers were registered when the names were taken, the names


def _helper_names() -> set[str]:
    """The names of the helpers a generated module may define (runtime's, and rules' registered later)."""
    if _HELPER_NAMES[0] != len(runtime.EMITTED_HELPERS):
        _HELPER_NAMES[:] = [len(runtime.EMITTED_HELPERS),
                            {getattr(f, "__name__", "") for f in runtime.EMITTED_HELPERS}]
    return _HELPER_NAMES[1]
