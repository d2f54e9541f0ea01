"""Objects a method call may have changed: refused where s2s would not follow the change.

`a = Acc(); a.add(x * 2); sum(a.vals)`: a method of an object known only when the code runs is called as Python
calls it, and differentiated through s2s's vjp/jvp of the bound method, made and run when its rule runs (s2s/desugar/
rules/nested.py): after the call, in reverse mode after the whole function. That reading is exact only for a method
that writes nothing: what a method writes into its object (`self.h = ...`, `self.vals.append(v)`) is not followed,
and a method run again by its rule would find the state its calls left. So

- a read of an object after a method call was given a value with a derivative is refused, at the read;
- a method call given a value with a derivative runs, at its first call for each class of object, a check that
  s2s's reading of the method writes into nothing (its object, a list or array it holds, a global) and draws no
  random number: refused at the call otherwise, naming the write and the call (`a = cell.step(x); b = cell.step(2 * x)`
  with `self.h = self.h * 0.5 + x` in `step` would otherwise differentiate both calls at the last state).

A call of a function without a rule or a source that s2s reads (a compiled smoother, `np.random.shuffle`), given a
differentiated value while an argument may be an array, is refused (`refuse_opaque_writers`): it may write into the
array, which is never taken for a constant. Library calls whose writes s2s knows are followed as assignments
(s2s/frontend/desugar/writers.py).
"""
from __future__ import annotations

import types
from typing import Any

import numpy as np

from s2s import runtime
from s2s.errors import NoDerivativeRule, RefusedWhenRun, S2SError, UnsupportedSyntax
from s2s.ir.core import Block, check_fails, Const, For, Function, If, Loc, Op, Stmt, Value, While, stmt_blocks, walk
from s2s.rules import registry

_HINT = ("pass the state explicitly and return the new one (`h = cell.step(h, x)` with `def step(self, h, x): "
         "return h * self.decay + x`), or keep the list (or array) in the function")


def refuse_hidden_changes(fn: Function, wrt: list[int]) -> Function:
    ops = [s for s in walk(fn.body) if isinstance(s, Op)]           # in the order the code runs them
    if any(op.prim is runtime.state_check or op.prim is runtime.state_lost for op in ops):
        _refuse_lost_writes(fn, wrt, ops)
        ops = [s for s in walk(fn.body) if isinstance(s, Op)]
    for op in ops:
        if op.prim in (setattr, delattr, object.__setattr__):
            raise UnsupportedSyntax(f"s2s does not follow {getattr(op.prim, '__name__', op.prim)}(...), which "
                                    f"changes an object", op.loc, hint=_HINT)
    calls = [k for k, s in enumerate(ops) if getattr(s.prim, "_s2s_effect", False) and len(s.args) > 1
             and isinstance(s.args[0], Value) and s.prim not in runtime.OBJECT_EFFECTS]
    if not calls:
        return fn
    _check_writes_into_results(fn.body, {id(o): op for op in ops for o in op.outs}, _carried_starts(fn.body))
    from s2s.analysis.activity import varied_values
    from s2s.rules import nested
    varied = varied_values(fn, wrt)
    method_calls = set(map(id, nested._METHOD_CALLS.values()))

    def differentiated(op: Op) -> bool:
        return any(isinstance(a, Value) and id(a) in varied for a in op.args[2:])

    changed: dict[int, Op] = {}
    checked: list[int] = []             # positions in ops of the calls given a differentiated value
    useful: set[int] | None = None

    def needed(op: Op) -> bool:
        """Whether the derivative needs op's result's own derivative (a result reaches the function's)."""
        nonlocal useful
        if useful is None:
            from s2s.analysis.activity import useful_values
            useful = useful_values(fn)
        return any(id(o) in useful for o in op.outs)
    for k, op in enumerate(ops):
        obj = op.args[0] if op.args and isinstance(op.args[0], Value) else None
        if obj is None:
            continue
        effect = getattr(op.prim, "_s2s_effect", False) and op.prim not in runtime.OBJECT_EFFECTS
        if effect and differentiated(op):
            changed.setdefault(id(obj), op)
            if id(op.prim) in method_calls and (needed(op) or any(
                    needed(later) for later in ops[k + 1:] if later.args and later.args[0] is obj)):
                op.prim = checked_method_call(len(op.args) - 2, op.loc)     # checked to write nothing when it
                checked.append(k)                                            # first runs
            elif id(op.prim) in method_calls:
                # neither its result nor a later use of its object needs a derivative (`sig.bind(*args)` read only
                # to validate them): no rule runs the method again; Python's one call, checked to write nothing
                # s2s reads it writing, and into no array it is given
                op.prim = reading_method_call(len(op.args) - 2, op.loc)
        elif id(obj) in changed and (op.prim is getattr or effect) and not needed(op):
            continue        # what the object holds now, read where no derivative is needed: what Python reads
        elif id(obj) in changed and (op.prim is getattr or effect):
            # what the object holds now (an attribute, or a method given no differentiated value): a constant
            call = changed[id(obj)]
            method = call.args[1].value if isinstance(call.args[1], Const) else "a method"
            what = f"reads {op.args[1].value!r} of" if op.prim is getattr and isinstance(op.args[1], Const) else \
                "calls a method of"
            where = f" (line {call.loc.line})" if call.loc is not None else ""
            raise UnsupportedSyntax(
                f"{what} an object that `.{method}(...)`{where} was given a differentiated value: s2s does not "
                f"follow what a method writes into its object", op.loc,
                hint="return the value from the method and use that, or keep the list (or array) in the function")
    if checked:
        _check_calls_after(fn.body, ops, checked, method_calls)
    return fn


def _refuse_lost_writes(fn: Function, wrt: list[int], ops: list[Op]) -> None:
    """The marks s2s/ir/object_state.py leaves: a read of an object (or an operation given a whole object) after a
    write into it that s2s does not forward (or forwards only to reads of its own key) sees the primal value only.
    Refused where the read is if the value written carries a derivative; the marks are then removed."""
    from s2s.analysis.activity import varied_values
    varied = varied_values(fn, wrt)
    lost = {}
    for op in ops:
        if op.prim is runtime.state_lost:
            lost.setdefault(op.args[1].value, []).append(op)
    for op in ops:
        if op.prim is not runtime.state_check:
            continue
        tokens, place = op.args[0].value, op.args[1].value
        for token in tokens:
            for mark in lost.get(token, ()):
                value = mark.args[0]
                if isinstance(value, Value) and id(value) in varied:
                    raise UnsupportedSyntax(
                        f"this reads an object after `{mark.args[2].value.split('  ', 1)[-1]}` "
                        f"({mark.args[2].value.split('  ', 1)[0]}) wrote into it a value that carries a derivative, "
                        f"in a way s2s does not follow (an append, a key or index known only when the code runs, "
                        f"a write into an array, a method run as Python runs it): the read would see its value, "
                        f"not its derivative", op.loc,
                        hint="use the value from the variable it was computed in (`y = ...; self.X.append(y)`, "
                             "then y), or store it under a key or attribute written in the code (`self.d['k'] = y`, "
                             "read back as `self.d['k']`)")
        for value in op.args[2:]:
            if isinstance(value, Value) and id(value) in varied:
                raise UnsupportedSyntax(
                    "this gives a whole object to an operation after this call stored in it a value that carries a "
                    "derivative: s2s forwards that value to reads of its attribute or key (`self.d['k']`), and the "
                    "operation would see its value, not its derivative", op.loc,
                    hint="read the attribute or key itself where the value is used, or use the variable it was "
                         "computed in")
    _strip_marks(fn.body)


def _strip_marks(block: Block) -> None:
    block.stmts = [s for s in block.stmts
                   if not (isinstance(s, Op) and (s.prim is runtime.state_check or s.prim is runtime.state_lost))]
    for stmt in block.stmts:
        for inner in stmt_blocks(stmt):
            _strip_marks(inner)


def _check_calls_after(body: Block, ops: list[Op], checked: list[int], method_calls: set[int]) -> None:
    """A method call on another object that may run after a call given a differentiated value (later in the code,
    or in a loop around one) is checked to write nothing definite: `a = stats.weighted(x); feeder.push(5.0)`, with
    feeder holding stats, would change what the derivative of `stats.weighted` reads when it runs again."""
    from s2s.frontend.desugar.helpers import call_method
    loops = _enclosing_loops(body)
    around = {loop for k in checked for loop in loops.get(id(ops[k]), ())}
    first = ops[checked[0]]
    for k, op in enumerate(ops):
        if k in checked or not (id(op.prim) in method_calls or op.prim is call_method) \
                or not isinstance(op.args[0], Value) or not (k > checked[0] or around & set(loops.get(id(op), ()))):
            continue
        op.prim = checked_method_call(len(op.args) - 2, op.loc, after=first.loc, plain=op.prim is call_method)


def _enclosing_loops(block: Block, outer: tuple = ()) -> dict[int, tuple]:
    """For each operation, the loops (by id) around it."""
    found: dict[int, tuple] = {}
    for stmt in block.stmts:
        if isinstance(stmt, Op):
            found[id(stmt)] = outer
            continue
        inner = outer + (id(stmt),) if isinstance(stmt, (For, While)) else outer
        for sub in stmt_blocks(stmt):
            found.update(_enclosing_loops(sub, inner))
    return found


# ---------------------------------------------------------------- a method given a differentiated value

_CHECKED_CALLS: dict[tuple, Any] = {}


def checked_method_call(arity: int, loc: Loc | None, after: Loc | None = None, plain: bool = False) -> Any:
    """nested.method_call(arity) for one call site, given a differentiated value (after None), or running
    after one that was (at after): before Python runs the method, `writes_nothing` checks it (once per class of
    object and arguments' kinds), naming this call if it writes. plain: helpers.call_method's form (keywords)."""
    key = (arity, loc, after, plain)
    made = _CHECKED_CALLS.get(key)
    if made is not None:
        return made
    from s2s.frontend.desugar.helpers import call_method
    from s2s.rules import nested

    def call(obj: Any, name: str, *args: Any, **kwargs: Any) -> Any:
        writes_nothing(obj, name, loc, args, after)
        return call_method(obj, name, *args, **kwargs)
    call.__name__ = call.__qualname__ = "call_method" if plain else f"method_call_{arity}"
    call._s2s_effect = True             # type: ignore[attr-defined]
    if not plain:
        method = nested.method_call(arity)
        registry.adjoint(call)(registry.find_adjoint(method))
        registry.tangent(call)(registry.find_tangent(method))
    _CHECKED_CALLS[key] = call
    return call


def reading_method_call(arity: int, loc: Loc | None) -> Any:
    """nested.method_call(arity) for one call site given a differentiated value whose result needs no derivative:
    Python's call, refused when it runs if it wrote into an array it was given (s2s would not follow it)."""
    key = (arity, loc, "reads")
    made = _CHECKED_CALLS.get(key)
    if made is not None:
        return made
    from s2s.frontend.desugar.helpers import call_method
    from s2s.rules import nested

    def call(obj: Any, name: str, *args: Any) -> Any:
        writes_nothing(obj, name, loc, args, lenient=True)
        given = [a for a in args if type(a) is np.ndarray]
        before = [a.copy() for a in given]
        result = call_method(obj, name, *args)
        for now, then in zip(given, before):
            if not np.array_equal(now, then, equal_nan=True):
                raise UnsupportedSyntax(f"`.{name}(...)` of {type(obj).__name__} wrote into an array it was given that "
                                        f"carries a derivative, which s2s does not follow", loc,
                                        hint="give it a new array and use what it returns (`v = rng.permutation(v)`"
                                             " rather than `rng.shuffle(v)`), or call it outside the function")
        return result
    call.__name__ = call.__qualname__ = f"method_call_{arity}"
    call._s2s_effect = True             # type: ignore[attr-defined]
    method = nested.method_call(arity)
    registry.adjoint(call)(registry.find_adjoint(method))
    registry.tangent(call)(registry.find_tangent(method))
    _CHECKED_CALLS[key] = call
    return call


_VERDICTS: dict[tuple, Any] = {}       # (class, method, its attributes' classes) -> None, or the refusal


def writes_nothing(obj: Any, name: str, loc: Loc | None, args: tuple = (), after: Loc | None = None,
                   lenient: bool = False) -> None:
    """Refuse `obj.name(...)` (at loc) if s2s's reading of the method writes into something (or, given a
    differentiated value, when after is None, if s2s does not read it or it draws a random number): the rule of a
    call given a differentiated value runs its method again, later, and would not see the writes. lenient: given
    a differentiated value, but no derivative needs the call's result or its object (reading_method_call): only
    what s2s reads it writing is refused."""
    from s2s.analysis.values import kind_of
    kinds = tuple(kind_of(a) for a in args)
    strict = after is None and not lenient
    method = getattr(type(obj), name, None)         # the class's function: a method replaced later is read anew
    try:
        key = (type(obj), name, method, kinds, strict, tuple((k, type(v)) for k, v in vars(obj).items()))
    except TypeError:                   # no __dict__ (slots, a library's object): its own class
        key = (type(obj), name, method, kinds, strict, None)
    if key not in _VERDICTS:
        _VERDICTS[key] = _verdict(obj, name, list(kinds), strict)
    found = _VERDICTS[key]
    if found is None:
        return
    what, where = found
    if where is not None:
        what += f" at {where}" + (f" (`{where.text.strip()}`)" if where.text else "")
    if after is None:
        raise UnsupportedSyntax(
            f"`.{name}(...)` of {type(obj).__name__} is given a differentiated value, but {what}: s2s differentiates "
            f"such a call by running the method again when the derivative runs, and does not follow what it changes",
            loc, hint=_HINT)
    raise UnsupportedSyntax(
        f"`.{name}(...)` of {type(obj).__name__} may run after a method call given a differentiated value (line "
        f"{after.line}), but {what}: the derivative of that call runs its method again when the derivative runs, "
        f"and would see what this one changed", loc, hint=_HINT)


_MARKS = runtime.OBJECT_EFFECTS
_CONTAINERS = (list, dict, set, bytearray, np.ndarray)
_READS = {"copy", "count", "index", "get", "keys", "values", "items", "__getitem__", "__len__", "__contains__",
          "__iter__", "__reversed__", "isdisjoint", "issubset", "issuperset", "union", "intersection",
          "difference", "symmetric_difference"}
_ARRAY_WRITES = {"fill", "sort", "partition", "put", "itemset", "resize", "setfield", "setflags", "byteswap"}


def _verdict(obj: Any, name: str, kinds: list, strict: bool) -> Any:
    """None if s2s's reading of obj.name writes nothing (strict: and s2s reads it, and it draws nothing and calls no
    method of an object known only when it runs), else (what it does, where)."""
    from s2s.driver.callables import as_function
    from s2s.driver.primal import lowered
    from s2s.driver.selfcheck import draws_random
    try:
        fn = lowered(as_function(getattr(obj, name)))
    except UnsupportedSyntax as exc:
        if "into an attribute" in str(exc).splitlines()[0]:   # `self.h = ...`, `self.n += ...`, `self.buf[:] = ...`
            return "the method writes into its object", exc.loc
        if exc.message.startswith("s2s does not follow `."):       # `self.vals.append(v)`
            return "the method changes a list, set or object it holds", exc.loc
        if "held by an object" in exc.message:
            return "the method writes into an array or list its object holds", exc.loc
        return (f"s2s does not read the method ({exc.message})", exc.loc) if strict else None
    except S2SError:                    # no source (a library's method): its rule says so if it runs
        return None
    if fn.writes_arguments:             # `items.append(x)` on a list it is given: a run-time call's vjp misses it
        return "the method writes into an argument it is given", fn.writes_arguments
    if fn.scalar_checks:                # `b = self.buf; b += x`: refused unless b is a number
        from s2s.analysis.activity import value_kinds
        found = value_kinds(fn, kinds)
        for values, where, message in fn.scalar_checks:
            if check_fails(found, values):
                return f"the method may write in place ({message})", where
    for op in walk(fn.body):
        if not isinstance(op, Op):
            continue
        if op.prim is runtime.store_attribute:          # `self.h = ...`, `self.n += ...`: performed, in its object
            return "the method writes into its object", op.loc
        if op.prim in (runtime.held_append, runtime.held_extend, runtime.store_item):    # `self.vals.append(v)`
            return "the method changes a list, set or object it holds", op.loc
        if op.prim in _MARKS:
            continue
        owner = getattr(op.prim, "__self__", None)
        method = getattr(op.prim, "__name__", "")
        if isinstance(owner, _CONTAINERS) and (method in _ARRAY_WRITES if isinstance(owner, np.ndarray)
                                               else method not in _READS):
            return f"the method changes a {type(owner).__name__} it holds (`.{method}(...)`)", op.loc
        if not strict:
            continue
        if draws_random([op.prim]):
            return "the method draws a random number", op.loc
        if getattr(op.prim, "_s2s_effect", False):
            return "the method calls a method of an object known only when it runs", op.loc
    return None


# ---------------------------------------------------------------- a write into what a method returned

def _carried_starts(block: Block) -> dict[int, list]:
    """For each loop-carried value and each If's result, the values it may start as or be."""
    starts: dict[int, list] = {}
    for stmt in walk(block):
        if isinstance(stmt, (For, While)):
            for carried, init, result in zip(stmt.carried, stmt.inits, stmt.body.results[-len(stmt.carried):]
                                             if stmt.carried else []):
                starts[id(carried)] = [init, result]
            for out, carried in zip(stmt.outs, stmt.carried):
                starts[id(out)] = [carried]
        elif isinstance(stmt, If):
            for k, out in enumerate(stmt.outs):
                starts[id(out)] = [b.results[k] for b in (stmt.then, stmt.orelse) if k < len(b.results)]
    return starts


def _returned_by_a_method(value: Any, defining: dict[int, Op], starts: dict[int, list]) -> Op | None:
    """The method call on an object known only when the code runs whose result value is (or was written from)."""
    seen: set[int] = set()
    todo = [value]
    while todo:
        v = todo.pop()
        if not isinstance(v, Value) or id(v) in seen:
            continue
        seen.add(id(v))
        op = defining.get(id(v))
        if op is None:
            todo.extend(starts.get(id(v), []))
        elif op.prim in (runtime.setitem, runtime.list_append):
            todo.append(op.args[0])
        elif getattr(op.prim, "_s2s_effect", False) and len(op.args) > 1 and isinstance(op.args[0], Value):
            return op
    return None


def _check_writes_into_results(block: Block, defining: dict[int, Op], starts: dict[int, list]) -> None:
    """Before a write into a value a method returned (`vals = s.get_values(); vals.append(x)`), a check when it
    runs that the value is not what the object holds (the method returned its own list): s2s does not follow the
    write into the object. A new list or array (`rng.normal(size=3)`) is written into as any other."""
    stmts: list[Stmt] = []
    for stmt in block.stmts:
        for inner in stmt_blocks(stmt):
            _check_writes_into_results(inner, defining, starts)
        if isinstance(stmt, Op) and stmt.prim in (runtime.setitem, runtime.list_append):
            call = _returned_by_a_method(stmt.args[0], defining, starts)
            if call is not None:
                method = call.args[1].value if isinstance(call.args[1], Const) else "?"
                stmts.append(Op(not_held, [stmt.args[0], call.args[0], Const(method), Const(stmt.loc)], [],
                                loc=stmt.loc))
        stmts.append(stmt)
    block.stmts = stmts


def not_held(value: Any, obj: Any, method: str, loc: Loc | None) -> None:
    """Refuse writing into value, which `obj.method(...)` returned, if obj holds it (as an attribute, or an item
    of a list, tuple or dict attribute)."""
    try:
        held = list(vars(obj).values())
    except TypeError:
        return
    for item in list(held):
        if isinstance(item, (list, tuple)):
            held.extend(item)
        elif isinstance(item, dict):
            held.extend(item.values())
    if any(item is value for item in held):
        raise RefusedWhenRun(
            f"this writes into a {type(value).__name__} that `.{method}()` returned, which its "
            f"{type(obj).__name__} object holds: s2s does not follow the write into the object", loc,
            hint="copy it first (`vals = list(s.get_values())`, `.copy()` for an array), or return a copy from the "
                 "method")


not_held._s2s_effect = True         # type: ignore[attr-defined]  # a check: never dropped
registry.nondifferentiable(not_held)


# ---------------------------------------------------------------- a call that may write into an array it is given

# functions that read their arguments and write none of them (beside those with a rule, a definition, or declared
# nondifferentiable, which the registry says compute a value from their arguments)
_READERS = {print, repr, str, format, isinstance, issubclass, type, id, hash, callable, hasattr, len, iter, sorted,
            bool, range, enumerate, zip, map, filter, any, all, divmod, input,
            getattr}      # (a property that writes: s2s/frontend/desugar/properties.py reads it as a call)
_READER_MODULES = ("numpy.testing", "logging", "warnings", "math", "time", "pprint")
# NumPy's functions that write into an argument without an out= (lowering refuses out= and copyto, place, put...)
_NUMPY_WRITERS = {"shuffle"}


def _writes_nothing(prim: Any) -> bool:
    """Whether a call of prim is known to write into none of its arguments."""
    try:
        if prim in _READERS:
            return True
    except TypeError:                   # an unhashable callable
        pass
    if (registry.find_adjoint(prim) is not None or registry.find_tangent(prim) is not None
            or registry.linear_argnums(prim) is not None or registry.is_nondifferentiable(prim)
            or registry.is_elementwise(prim) or registry.refusal(prim) is not None
            or registry.definition(prim) is not None or registry.find_complex_adjoint(prim) is not None):
        return True
    if getattr(prim, "_s2s_effect", False) or isinstance(prim, type):
        return True     # a method of an object (refuse_hidden_changes checks it), a class built (lowering's)
    module = getattr(prim, "__module__", None) or ""      # (a slot of a type, np.ndarray.__setitem__: none)
    if module.startswith("s2s") or module in _READER_MODULES or module.startswith(_READER_MODULES):
        return True                     # s2s's own helpers; logging and the like
    if module.startswith("numpy") and not module.startswith("numpy.random"):
        return getattr(prim, "__name__", "") not in _NUMPY_WRITERS
    return False


def refuse_opaque_writers(fn: Function, wrt: list[int], param_kinds: list) -> Function:
    """Refuse a call of a function without rule or source (a library's, a compiled one) given a differentiated
    value while an argument may be an array: it may write into that array (`_smooth(params, data, yhat, xhat)`
    filling yhat, `np.random.shuffle(x)`), which s2s would not follow, so the array is never taken for a
    constant. Its result, if used, needs a rule anyway; a call given only numbers writes into nothing. A Python
    function (a library's, which s2s could not read) is called through runtime._reads_only instead: as Python calls
    it, refused when it runs if it wrote into such an array."""
    known: dict[int, bool] = {}          # id(prim) -> _writes_nothing (prims outlive the function)
    candidates = []
    for op in walk(fn.body):
        if isinstance(op, Op):
            reads = known.get(id(op.prim))
            if reads is None:
                reads = known[id(op.prim)] = _writes_nothing(op.prim)
            if not reads:
                candidates.append(op)
    if not candidates:
        return fn
    from s2s.analysis.activity import useful_values, value_kinds, varied_values
    varied = varied_values(fn, wrt)
    useful = None
    kinds = None
    for op in candidates:
        given = list(op.args) + list(op.kwargs.values())
        if not any(isinstance(a, Value) and id(a) in varied for a in given):
            continue
        if useful is None:
            useful = useful_values(fn)
        if any(id(o) in useful for o in op.outs):
            continue            # its result has a derivative: the transform asks for its rule (missing_rule)
        if kinds is None:
            kinds = value_kinds(fn, param_kinds)
        arrays = [a for a in given if isinstance(a, Value) and kinds.get(id(a)) != "scalar"]
        if not arrays:
            continue
        if isinstance(getattr(op.prim, "__func__", op.prim), types.FunctionType):   # Python: run as it is, refused
            # when it runs if it writes
            op.args = [Const(op.prim), *op.args]
            op.prim = runtime._reads_only
            continue
        from s2s.ir.core import prim_name
        shown = prim_name(op.prim)
        raise NoDerivativeRule(
            f"{shown} is given a value with a derivative, has no derivative rule, and is not code s2s reads (a "
            f"library's or a compiled function): it may write into an array it is given ({arrays[0].name}), which "
            f"s2s would not follow (the gradient would take that array for a constant)", op.loc,
            hint=f"register a rule for {shown} with @s2s.adjoint (and @s2s.tangent), write the computation in "
                 f"Python or NumPy, or call it outside the differentiated function; if it writes nothing, "
                 f"s2s.stop_gradient(...) its arguments")
    return fn
