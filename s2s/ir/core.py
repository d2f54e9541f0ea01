"""The s2s intermediate representation: structured SSA.

A `Function` has parameters and a body `Block`. A block is a list of statements
and the atoms it yields (`results`). A statement is one of

- `Op`: one primitive applied to atoms, defining its `outs` once;
- `If`: two blocks; `outs` are the phi values that merge what each branch yields;
- `While`: loop-carried values (`carried`, the header phis) start from `inits`,
  the `test` block yields the condition, the `body` block yields the next carried
  values, and `outs` hold their values when the test fails;
- `For`: the same for `range(start, stop, step)` with an `index` value, run
  backwards when `reverse` is set (that is how reverse mode spells a loop in reverse).

Atoms are `Value`s (defined exactly once) or `Const`s. A primitive is the Python
object it stands for (`operator.mul`, `math.sin`, `numpy.sum`) or one of the
runtime helpers of `s2s.runtime`; rules are found by that object.
The printer gives the Wengert-list text form; `verify` checks the invariants.
"""
from __future__ import annotations

import builtins
import contextlib
import math
import operator
import os
import threading
from dataclasses import dataclass, field
from typing import Any, Callable, Iterator, Union

import numpy

from s2s.errors import InvalidIR


@dataclass(frozen=True)
class Loc:
    """A place in the user's source: file, 1-based line, 0-based column, and the line's text."""

    file: str
    line: int
    col: int
    text: str = ""

    def __str__(self) -> str:
        return f"{self.file}:{self.line}:{self.col}"


@dataclass(eq=False)
class Value:
    """An SSA value. `name` is unique within its function; `hint` is the user's name for it."""

    name: str
    hint: str = ""

    def __post_init__(self) -> None:
        kept = _KEPT.values
        if kept is not None:
            kept.append(self)

    def __repr__(self) -> str:
        return self.name


class _Kept(threading.local):
    values: list | None = None


# While a derivative is made (values_kept), every value made stays alive until it is done: the passes key their
# tables by id(), and a value one of them drops must not hand its id to a new one, which would read as the old
# one (its shape, its alias: an order-dependent wrong derivative)
_KEPT = _Kept()


@contextlib.contextmanager
def values_kept() -> Iterator[None]:
    if _KEPT.values is not None:        # nested: the outermost keeps them
        yield
        return
    _KEPT.values = []
    try:
        yield
    finally:
        _KEPT.values = None


@dataclass(frozen=True)
class Const:
    value: Any

    def __repr__(self) -> str:
        return repr(self.value)


class _Undefined:
    """The value of a phi on a path that never defines it (read only on the matching path)."""

    def __repr__(self) -> str:
        return "undefined"


UNDEFINED = _Undefined()

Atom = Union[Value, Const]

IN_ARRAY = Const("$in-array")       # in a scalar check: fine too if the value after it is an array (Function)


def check_fails(kinds: dict, values: tuple) -> bool:
    """Whether a scalar check (Function.scalar_checks) fails given the values' kinds (by id)."""
    value, *others = values
    if kinds.get(id(value)) == "scalar":
        return False
    if others and others[0] is IN_ARRAY:
        return kinds.get(id(others[1])) != "array"
    return not others or any(kinds.get(id(o)) != "scalar" for o in others)


@dataclass(eq=False)
class Op:
    prim: Any
    args: list[Atom]
    outs: list[Value]
    kwargs: dict[str, Atom] = field(default_factory=dict)
    loc: Loc | None = None
    # set by transforms: the arguments and the result have one shape (an adjoint accumulation)
    same_shape: bool = False
    # set by the optimizer: the result may be written into args[in_place], which nothing reads afterwards
    in_place: int | None = None
    # set by lowering: `x.name(...)` read as NumPy's function of that name (s2s/passes/object_methods.py makes it
    # Python's method call again where x is an object of another type)
    method: str | None = None


@dataclass(eq=False)
class Block:
    stmts: list["Stmt"] = field(default_factory=list)
    results: list[Atom] = field(default_factory=list)


@dataclass(eq=False)
class If:
    cond: Atom
    then: Block
    orelse: Block
    outs: list[Value]
    loc: Loc | None = None


@dataclass(eq=False)
class While:
    inits: list[Atom]
    carried: list[Value]
    test: Block
    body: Block
    outs: list[Value]
    loc: Loc | None = None


@dataclass(eq=False)
class For:
    start: Atom
    stop: Atom
    step: Atom
    index: Value
    inits: list[Atom]
    carried: list[Value]
    body: Block
    outs: list[Value]
    reverse: bool = False
    loc: Loc | None = None


Stmt = Union[Op, If, While, For]


@dataclass(eq=False)
class Function:
    name: str
    params: list[Value]
    body: Block
    loc: Loc | None = None
    returns_tuple: bool = False   # whether the results are returned as a tuple
    # values that must turn out to be scalars once argument kinds are known: ((value, other names' values...),
    # place, message): the value, or else every other one; ((value, IN_ARRAY, container), place, message): the
    # value, or else the container an array (`c[k] += v`: s2s/ir/lower.py item_in_place). check_fails says which
    scalar_checks: list = field(default_factory=list)
    # the functions it names by a bare name, as found when lowered: (owner function, name, object)
    dependencies: list = field(default_factory=list)
    # the parameters its result may share memory with (`return a[1:]`): what an inlined call's result is a view of
    result_shares: tuple = ()
    # the parameters it writes into (`F[i] = ...`), whose last values follow the result in body.results
    param_writes: tuple = ()
    # where it (or what it inlines) first writes into an array or list one of its parameters holds, or None
    writes_arguments: Any = None


# ---------------------------------------------------------------- traversal

def stmt_blocks(stmt: Stmt) -> list[Block]:
    kind = type(stmt)
    if kind is Op:
        return []
    if kind is If or isinstance(stmt, If):
        return [stmt.then, stmt.orelse]
    if kind is While or isinstance(stmt, While):
        return [stmt.test, stmt.body]
    if kind is For or isinstance(stmt, For):
        return [stmt.body]
    return []


def stmt_inputs(stmt: Stmt) -> list[Atom]:
    """The atoms a statement reads directly (not those its nested blocks read)."""
    if type(stmt) is Op or isinstance(stmt, Op):
        return [*stmt.args, *stmt.kwargs.values()] if stmt.kwargs else list(stmt.args)
    if isinstance(stmt, If):
        return [stmt.cond]
    if isinstance(stmt, While):
        return list(stmt.inits)
    return [stmt.start, stmt.stop, stmt.step, *stmt.inits]


def stmt_defs(stmt: Stmt) -> list[Value]:
    """The values a statement defines in its own scope and in its blocks' headers."""
    if isinstance(stmt, Op):
        return list(stmt.outs)
    if isinstance(stmt, If):
        return list(stmt.outs)
    if isinstance(stmt, While):
        return list(stmt.carried) + list(stmt.outs)
    return [stmt.index, *stmt.carried, *stmt.outs]


def walk(block: Block) -> Iterator[Stmt]:
    """Every statement of a block and of the blocks nested in it, in program order."""
    for stmt in block.stmts:
        yield stmt
        if type(stmt) is not Op:
            for inner in stmt_blocks(stmt):
                yield from walk(inner)


def uses_in(block: Block) -> Iterator[Atom]:
    """Every atom read anywhere in a block, its results included."""
    for stmt in block.stmts:
        if type(stmt) is Op:
            yield from stmt.args
            if stmt.kwargs:
                yield from stmt.kwargs.values()
            continue
        yield from stmt_inputs(stmt)
        for inner in stmt_blocks(stmt):
            yield from uses_in(inner)
    yield from block.results


def free_values(block: Block) -> list[Value]:
    """Values read in a block but defined outside it, in first-use order."""
    defined: set[int] = set()
    for stmt in walk(block):
        defined.update(id(v) for v in stmt_defs(stmt))
    seen: dict[int, Value] = {}
    for atom in uses_in(block):
        if isinstance(atom, Value) and id(atom) not in defined and id(atom) not in seen:
            seen[id(atom)] = atom
    return list(seen.values())


# ---------------------------------------------------------------- printing

_OPERATOR_NAMES = {getattr(operator, n): n for n in dir(operator) if not n.startswith("_")}


def prim_name(prim: Any) -> str:
    """How a primitive is spelled in the IR text: `mul`, `math.sin`, `numpy.sum`."""
    if _is_operator(prim):
        return _OPERATOR_NAMES[prim]
    name = getattr(prim, "__name__", None) or type(prim).__name__
    if getattr(builtins, name, None) is prim:
        return name
    if getattr(math, name, None) is prim:
        return f"math.{name}"
    if getattr(numpy, name, None) is prim:
        return f"numpy.{name}"
    if getattr(numpy.linalg, name, None) is prim:
        return f"numpy.linalg.{name}"
    module = getattr(prim, "__module__", None)
    return f"{module}.{name}" if module else name


def _is_operator(prim: Any) -> bool:
    try:
        return prim in _OPERATOR_NAMES
    except TypeError:
        return False


def _call_text(prim: Any, args: list[Atom], kwargs: dict[str, Atom]) -> str:
    parts = [repr(a) for a in args] + [f"{k}={v!r}" for k, v in kwargs.items()]
    return f"{prim_name(prim)}({', '.join(parts)})"


def _lhs(values: list[Value]) -> str:
    return ", ".join(v.name for v in values) if values else "_"


def _print_block(block: Block, indent: str, lines: list[str], keyword: str = "yield") -> None:
    for stmt in block.stmts:
        _print_stmt(stmt, indent, lines)
    if block.results or keyword == "return":
        lines.append(f"{indent}{keyword} {', '.join(repr(a) for a in block.results)}".rstrip())


def _carry_text(carried: list[Value], inits: list[Atom]) -> str:
    return ", ".join(f"{c.name} = {i!r}" for c, i in zip(carried, inits))


def _print_stmt(stmt: Stmt, indent: str, lines: list[str]) -> None:
    inner = indent + "    "
    where = ""
    if isinstance(stmt, Op):
        call = _call_text(stmt.prim, stmt.args, stmt.kwargs)
        lines.append(f"{indent}{_lhs(stmt.outs)} = {call}" if stmt.outs else f"{indent}{call}")
    elif isinstance(stmt, If):
        lines.append(f"{indent}{_lhs(stmt.outs)} = if {stmt.cond!r}:{where}")
        _print_block(stmt.then, inner, lines)
        lines.append(f"{indent}else:")
        _print_block(stmt.orelse, inner, lines)
    elif isinstance(stmt, While):
        lines.append(f"{indent}{_lhs(stmt.outs)} = while ({_carry_text(stmt.carried, stmt.inits)}):{where}")
        lines.append(f"{inner}test:")
        _print_block(stmt.test, inner + "    ", lines)
        lines.append(f"{inner}body:")
        _print_block(stmt.body, inner + "    ", lines)
    else:
        rng = f"range({stmt.start!r}, {stmt.stop!r}, {stmt.step!r})"
        if stmt.reverse:
            rng = f"reversed({rng})"
        lines.append(f"{indent}{_lhs(stmt.outs)} = for {stmt.index.name} in {rng} "
                     f"({_carry_text(stmt.carried, stmt.inits)}):{where}")
        _print_block(stmt.body, inner, lines)


def format_function(fn: Function) -> str:
    """The text form: a Wengert list, one definition per line, nested for regions."""
    lines = [f"def {fn.name}({', '.join(p.name for p in fn.params)}):"]
    _print_block(fn.body, "    ", lines, keyword="return")
    return "\n".join(lines) + "\n"


# ---------------------------------------------------------------- verifier

def verify(fn: Function) -> Function:
    """Check single assignment, definition before use, scoping and arity. Returns fn."""
    # the values (a Value hashes by identity) defined so far, and those visible where the check is: a block's own
    # values leave it when the block is done (a copy per block would make the check quadratic in a function of
    # many branches)
    defined: set[Value] = set()
    visible: set[Value] = set()

    def define(v: Value, where: str) -> None:
        if not isinstance(v, Value):
            raise InvalidIR(f"{where}: defines {v!r}, which is not a Value")
        if v in defined:
            raise InvalidIR(f"{where}: {v.name} is defined twice")
        defined.add(v)

    def use(atom: Atom, where: str) -> None:
        if isinstance(atom, Const):
            return
        if not isinstance(atom, Value):
            raise InvalidIR(f"{where}: reads {atom!r}, which is neither a Value nor a Const")
        if atom not in visible:
            raise InvalidIR(f"{where}: {atom.name} is read before it is defined, or out of its scope")

    def check_block(block: Block, extra: list[Value], n_results: int | None, where: str) -> None:
        added = [v for v in extra if v not in visible]
        visible.update(added)
        try:
            check_statements(block, n_results, where, added)
        finally:
            visible.difference_update(added)

    def check_statements(block: Block, n_results: int | None, where: str, added: list[Value]) -> None:
        for stmt in block.stmts:
            if type(stmt) is Op:        # the common case at once: constants and visible values read, new defined
                for atom in stmt.args:
                    if type(atom) is not Const and (type(atom) is not Value or atom not in visible):
                        break
                else:
                    plain = True
                    if stmt.kwargs:
                        for atom in stmt.kwargs.values():
                            if type(atom) is not Const and (type(atom) is not Value or atom not in visible):
                                plain = False
                                break
                    outs = stmt.outs
                    if plain:
                        if len(outs) == 1:
                            out = outs[0]
                            plain = type(out) is Value and out not in defined
                        else:
                            for k, out in enumerate(outs):
                                if type(out) is not Value or out in defined or (k and any(
                                        o is out for o in outs[:k])):
                                    plain = False
                                    break
                    if plain:
                        defined.update(outs)
                        visible.update(outs)
                        added.extend(outs)
                        continue
            what = f"{where}: {type(stmt).__name__}"
            for atom in stmt_inputs(stmt):
                use(atom, what)
            if isinstance(stmt, Op):
                if not all(isinstance(a, (Value, Const)) for a in stmt.args):
                    raise InvalidIR(f"{what}: bad argument list {stmt.args!r}")
            elif isinstance(stmt, If):
                check_block(stmt.then, [], len(stmt.outs), what + " then")
                check_block(stmt.orelse, [], len(stmt.outs), what + " else")
            elif isinstance(stmt, While):
                if len(stmt.inits) != len(stmt.carried) or len(stmt.outs) != len(stmt.carried):
                    raise InvalidIR(f"{what}: inits, carried and outs differ in length")
                for c in stmt.carried:
                    define(c, what)
                check_block(stmt.test, stmt.carried, 1, what + " test")
                check_block(stmt.body, stmt.carried, len(stmt.carried), what + " body")
            elif isinstance(stmt, For):
                if len(stmt.inits) != len(stmt.carried) or len(stmt.outs) != len(stmt.carried):
                    raise InvalidIR(f"{what}: inits, carried and outs differ in length")
                define(stmt.index, what)
                for c in stmt.carried:
                    define(c, what)
                check_block(stmt.body, [stmt.index, *stmt.carried], len(stmt.carried), what + " body")
            for out in stmt.outs:
                define(out, what)
                if out not in visible:
                    visible.add(out)
                    added.append(out)
        for atom in block.results:
            use(atom, where + " results")
        if n_results is not None and len(block.results) != n_results:
            raise InvalidIR(f"{where}: yields {len(block.results)} values, expected {n_results}")

    for p in fn.params:
        define(p, f"{fn.name} parameters")
        visible.add(p)
    check_statements(fn.body, None, fn.name, [])
    del define, use, check_block, check_statements      # (closures that call each other: a cycle, freed now)
    return fn


# ---------------------------------------------------------------- copying and substitution

def substitute(block: Block, mapping: dict[int, Atom]) -> None:
    """Replace, in place, every read of a value in mapping (nested blocks included)."""
    def sub(atom: Atom) -> Atom:
        return mapping.get(id(atom), atom) if isinstance(atom, Value) else atom

    for stmt in block.stmts:
        if isinstance(stmt, Op):
            stmt.args = [sub(a) for a in stmt.args]
            stmt.kwargs = {k: sub(a) for k, a in stmt.kwargs.items()}
        elif isinstance(stmt, If):
            stmt.cond = sub(stmt.cond)
        elif isinstance(stmt, While):
            stmt.inits = [sub(a) for a in stmt.inits]
        else:
            stmt.start, stmt.stop, stmt.step = sub(stmt.start), sub(stmt.stop), sub(stmt.step)
            stmt.inits = [sub(a) for a in stmt.inits]
        for inner in stmt_blocks(stmt):
            substitute(inner, mapping)
    block.results = [sub(a) for a in block.results]


def clone_block(block: Block, mapping: dict[int, Atom], fresh: "Callable[[Value], Value]",
                loc: Loc | None = None) -> Block:
    """A deep copy with a new Value for every definition; reads go through mapping.

    mapping is extended with old -> new for every definition. loc, when given,
    replaces the location of every copied statement (used when inlining rules).
    """
    def sub(atom: Atom) -> Atom:
        return mapping.get(id(atom), atom) if isinstance(atom, Value) else atom

    def new(values: list[Value]) -> list[Value]:
        out = []
        for v in values:
            mapping[id(v)] = copy = fresh(v)
            out.append(copy)
        return out

    stmts: list[Stmt] = []
    for stmt in block.stmts:
        where = loc if loc is not None else stmt.loc
        if isinstance(stmt, Op):
            args = [sub(a) for a in stmt.args]
            kwargs = {k: sub(a) for k, a in stmt.kwargs.items()}
            stmts.append(Op(stmt.prim, args, new(stmt.outs), kwargs, where, stmt.same_shape, method=stmt.method))
        elif isinstance(stmt, If):
            cond = sub(stmt.cond)
            then = clone_block(stmt.then, mapping, fresh, loc)
            orelse = clone_block(stmt.orelse, mapping, fresh, loc)
            stmts.append(If(cond, then, orelse, new(stmt.outs), where))
        elif isinstance(stmt, While):
            inits = [sub(a) for a in stmt.inits]
            carried = new(stmt.carried)
            test = clone_block(stmt.test, mapping, fresh, loc)
            body = clone_block(stmt.body, mapping, fresh, loc)
            stmts.append(While(inits, carried, test, body, new(stmt.outs), where))
        else:
            bounds = [sub(stmt.start), sub(stmt.stop), sub(stmt.step)]
            inits = [sub(a) for a in stmt.inits]
            index = new([stmt.index])[0]
            carried = new(stmt.carried)
            body = clone_block(stmt.body, mapping, fresh, loc)
            stmts.append(For(*bounds, index, inits, carried, body, new(stmt.outs), stmt.reverse, where))
    return Block(stmts, [sub(a) for a in block.results])


def clone_function(fn: Function, fresh: "Callable[[Value], Value]") -> Function:
    mapping: dict[int, Atom] = {}
    params = []
    for p in fn.params:
        mapping[id(p)] = copy = fresh(p)
        params.append(copy)
    body = clone_block(fn.body, mapping, fresh)
    checks = [(tuple(mapping.get(id(v), v) for v in values), loc, message)
              for values, loc, message in fn.scalar_checks]
    return Function(fn.name, params, body, fn.loc, fn.returns_tuple, checks, list(fn.dependencies))


def value_names(fn: Function) -> set[str]:
    names = {p.name for p in fn.params}
    for stmt in walk(fn.body):
        names.update(v.name for v in stmt_defs(stmt))
    return names


def verify_every_pass() -> bool:
    """The verifier runs after every pass when S2S_VERIFY=1 (the test suite sets it); otherwise once, at the end.
    Read when a derivative is made, so that setting it after s2s is imported (a conftest) counts."""
    return os.environ.get("S2S_VERIFY") == "1"


def checked(fn: Function) -> Function:
    return verify(fn) if verify_every_pass() else fn
