"""The Numba target: a derivative's emitted module, rewritten into the subset Numba compiles in nopython mode.

The emitter (emit.py) stays the one source of truth; this module transforms its output, line by line so
that the comments quoting the user's code survive and every line still maps to the user's place:

- `reversed(range(a, b))` becomes `range(b - 1, a - 1, -1)` (Numba has no `reversed` over a range);
- s2s's run-time helpers that Numba cannot type are replaced by Numba-typable versions (`_seed`,
  `_scatter`) or refused, naming the helper and the user's line;
- an adjoint accumulated from a one-element scatter, `du_1 = _scatter(u, i, g)` then `du = du + du_1`,
  becomes `du[i] += g` when `du` is a fresh array no other name shares (its only stores are zeros and
  accumulations): an element loop's gradient then costs O(1) per element, not O(n);
- stacks stay lists: Numba types an empty list from its first `append`.

The derivative is then compiled with `numba.njit` (with the options of the user's `@njit` dispatcher,
when the user's function is one) for the argument types it is called with, at once: whatever Numba
cannot type is refused when the derivative is made, as an S2SError naming the generated line and the
user's line it comes from, never at the first call inside Numba's own error text.
"""
from __future__ import annotations

import ast
import re
import types
from typing import Any, Callable, Sequence

import numpy as np

from .errors import S2SError

INSTALL_HINT = "install Numba: pip install 's2s[numba]' (or pip install numba)"


class NumbaUnsupported(S2SError):
    """A construct the Numba target cannot express (or Numba cannot type), found when the derivative is made."""


# ---------------------------------------------------------------- Numba itself and its dispatchers

def numba_module() -> Any:
    """numba, or a clear error saying what to install."""
    try:
        import numba
    except ImportError:
        raise S2SError("backend='numba' needs Numba, which is not installed", hint=INSTALL_HINT) from None
    return numba


def is_dispatcher(obj: Any) -> bool:
    """Whether obj is a Numba-compiled function (`@numba.njit`), without importing Numba."""
    return (type(obj).__module__ or "").startswith("numba.") and isinstance(getattr(obj, "py_func", None),
                                                                           types.FunctionType)


def plain_function(obj: Any) -> Any:
    """The Python function behind a Numba dispatcher (`g.py_func`); anything else unchanged."""
    return obj.py_func if is_dispatcher(obj) else obj


_KEPT_OPTIONS = ("fastmath", "error_model", "boundscheck", "nogil", "cache", "inline")


def dispatcher_options(obj: Any) -> tuple:
    """The options of an `@njit` dispatcher the derivative is compiled with, hashable (parallel=False)."""
    found = getattr(obj, "targetoptions", {}) or {}
    items = []
    for key in _KEPT_OPTIONS:
        if key in found:
            value = found[key]
            if isinstance(value, (set, frozenset, list)):
                value = frozenset(value)
            elif isinstance(value, dict):
                value = tuple(sorted(value.items()))
            items.append((key, value))
    return tuple(items)


def resolve_backend(obj: Any, backend: str | None) -> tuple[str, tuple]:
    """(backend, Numba options): a dispatcher's derivative is compiled with Numba unless told otherwise."""
    if backend is None:
        backend = "numba" if is_dispatcher(obj) else "python"
    if backend not in ("python", "numba"):
        raise S2SError(f"backend={backend!r}: the backends are 'python' and 'numba'")
    if backend == "numba":
        numba_module()
    return backend, dispatcher_options(obj) if is_dispatcher(obj) else ()


# ---------------------------------------------------------------- helpers Numba can type

NUMBA_HELPERS = {
    "_seed": '''def _seed(y):
    """The adjoint 1 of a scalar output (Numba target: the output is a number)."""
    return 1.0
''',
    "_scatter": '''def _scatter(x, index, g):
    """The adjoint of x[index]: zeros but g at index (Numba target: x is an array)."""
    out = np.zeros_like(x)
    out[index] += g
    return out
''',
}

NUMBA_HELPERS["_add_outer"] = '''def _add_outer(d, a, b):
    """d += np.outer(a, b), without the temporary outer product (Numba target)."""
    a, b = a.ravel(), b.ravel()
    for i in range(a.shape[0]):
        for j in range(b.shape[0]):
            d[i, j] += a[i] * b[j]
'''

# helpers whose Python text is their meaning, compiled by Numba as an overload that picks by type
NUMBA_HELPERS["_zeros_like"] = '''def _zeros_like(x):
    """Zeros shaped like x: 0.0 for a number (np.zeros_like would give a 0-d array)."""
    return np.zeros_like(x) if isinstance(x, np.ndarray) else 0.0
'''

NUMBA_HELPERS["_masked"] = '''def _masked(contribution, g):
    """contribution where the adjoint g is nonzero, exactly zero where g is zero (0 * inf stays 0)."""
    return contribution if g != 0 else 0.0
'''

_OVERLOADED: dict[str, Any] = {}


def _overloaded_helpers(numba: Any) -> dict[str, Any]:
    """The helpers that choose by type, as functions Numba compiles through @overload (made once)."""
    if _OVERLOADED:
        return _OVERLOADED
    import numpy as np
    from numba.core import types as nbtypes
    from numba.extending import overload

    def _zeros_like(x):        # no annotations: Numba compares the overload's signature with this one
        return np.zeros_like(x) if isinstance(x, np.ndarray) else 0.0

    @overload(_zeros_like)
    def _zeros_like_typed(x):
        if isinstance(x, nbtypes.Array):
            return lambda x: np.zeros_like(x)
        if isinstance(x, (nbtypes.Float, nbtypes.Integer, nbtypes.Boolean)):
            return lambda x: 0.0
        return None

    def _masked(contribution, g):
        return contribution if g != 0 else 0.0

    @overload(_masked)
    def _masked_typed(contribution, g):
        if isinstance(contribution, nbtypes.Array) or isinstance(g, nbtypes.Array):
            return lambda contribution, g: np.where(g == 0, 0.0, contribution)
        return lambda contribution, g: contribution if g != 0 else 0.0

    _OVERLOADED["_zeros_like"] = _zeros_like
    _OVERLOADED["_masked"] = _masked
    return _OVERLOADED


_WHY = {
    "_unbroadcast": "an adjoint whose shape is not known when the derivative is made",
    "_expand": "an adjoint whose shape is not known when the derivative is made",
    "_shaped_like": "a value whose shape is not known when the derivative is made",
    "_broadcast_back": "the adjoint of a reduction whose shape is not known when the derivative is made",
    "_add": "adding adjoints of containers (tuples, lists or dicts)",
    "_foreign": "arrays of other libraries",
}


# ---------------------------------------------------------------- the transformation

class _Source:
    """The emitted module as lines that can be replaced or dropped, each remembering its original number."""

    def __init__(self, text: str):
        self.lines: list[str | None] = text.split("\n")

    def replace(self, lineno: int, text: str) -> None:
        self.lines[lineno - 1] = text

    def drop(self, lineno: int) -> None:
        self.lines[lineno - 1] = None


def _indent(line: str) -> str:
    return line[:len(line) - len(line.lstrip())]


def _place(line_map: dict, lineno: int) -> Any:
    return line_map.get(lineno)


def _refuse(message: str, line_map: dict, lineno: int, hint: str = "") -> NumbaUnsupported:
    return NumbaUnsupported(f"the Numba backend cannot express {message}", _place(line_map, lineno), hint=hint)


def _reversed_range(node: ast.Call, text: str, line_map: dict) -> str:
    """`reversed(range(...))` as a range that counts down."""
    inner = node.args[0] if len(node.args) == 1 and not node.keywords else None
    if not (isinstance(inner, ast.Call) and isinstance(inner.func, ast.Name) and inner.func.id == "range"
            and 1 <= len(inner.args) <= 2 and not inner.keywords):
        raise _refuse(f"`{ast.get_source_segment(text, node)}` (reversed over something else than a range "
                      f"with step 1)", line_map, node.lineno)
    parts = [ast.get_source_segment(text, a) for a in inner.args]
    start, stop = ("0", parts[0]) if len(parts) == 1 else parts
    return f"range({_minus_one(stop)}, {_minus_one(start)}, -1)"


def _minus_one(expression: str) -> str:
    if re.fullmatch(r"-?\d+", expression):
        return str(int(expression) - 1)
    return f"{expression} - 1" if expression.isidentifier() else f"({expression}) - 1"


def _calls(tree: ast.AST) -> list[ast.Call]:
    return [n for n in ast.walk(tree) if isinstance(n, ast.Call)]


def _name_of(node: ast.AST) -> str | None:
    return node.id if isinstance(node, ast.Name) else None


def _accumulation(stmt: ast.stmt, target: str) -> str | None:
    """The name added to target by `target = target + X`, `target = X + target` or `target += X`."""
    if isinstance(stmt, ast.AugAssign) and _name_of(stmt.target) == target and isinstance(stmt.op, ast.Add):
        return _name_of(stmt.value)
    if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and _name_of(stmt.targets[0]) == target \
            and isinstance(stmt.value, ast.BinOp) and isinstance(stmt.value.op, ast.Add):
        left, right = _name_of(stmt.value.left), _name_of(stmt.value.right)
        if left == target:
            return right
        if right == target:
            return left
    return None


def _owned_arrays(fn: ast.FunctionDef) -> set[str]:
    """Names whose every store is a fresh array (`np.zeros_like(...)`, `np.zeros(...)`) or an accumulation
    into themselves, and whose every read is such an accumulation or a return: no other name shares them,
    so adding into them in place is what Python's `d = d + x` computes."""
    stores: dict[str, list[ast.stmt]] = {}
    for stmt in ast.walk(fn):
        if isinstance(stmt, ast.Assign):
            for target in stmt.targets:
                for name in ast.walk(target):
                    if isinstance(name, ast.Name):
                        stores.setdefault(name.id, []).append(stmt)
        elif isinstance(stmt, (ast.AugAssign, ast.For)):
            for name in ast.walk(stmt.target):
                if isinstance(name, ast.Name):
                    stores.setdefault(name.id, []).append(stmt)
    owned = set()
    for name, found in stores.items():
        fresh = False
        for stmt in found:
            if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and _name_of(stmt.targets[0]) == name \
                    and isinstance(stmt.value, ast.Call) and ast.unparse(stmt.value.func) in (
                        "np.zeros_like", "np.zeros"):
                fresh = True
            elif _accumulation(stmt, name) is None:
                break
        else:
            if fresh:
                owned.add(name)
    reads: dict[str, int] = {}
    allowed: dict[str, int] = {}
    for stmt in ast.walk(fn):
        if isinstance(stmt, ast.Name) and isinstance(stmt.ctx, ast.Load):
            reads[stmt.id] = reads.get(stmt.id, 0) + 1
        if isinstance(stmt, ast.stmt):
            for name in owned:
                if isinstance(stmt, ast.Assign) and _accumulation(stmt, name) is not None:
                    allowed[name] = allowed.get(name, 0) + 1
        if isinstance(stmt, ast.Return) and stmt.value is not None:
            for name in ast.walk(stmt.value):
                if isinstance(name, ast.Name) and name.id in owned:
                    allowed[name.id] = allowed.get(name.id, 0) + 1
    return {name for name in owned if reads.get(name, 0) == allowed.get(name, 0)}


def _scatters_in_place(fn: ast.FunctionDef, text: str, source: _Source) -> None:
    """`x_1 = _scatter(u, i, g) ... du = du + x_1` as `du[i] += g`, written where the scatter was."""
    owned = _owned_arrays(fn)
    blocks = [(n.body, n if isinstance(n, (ast.For, ast.While)) else None) for n in ast.walk(fn) if isinstance(
        getattr(n, "body", None), list)] + [(n.orelse, None) for n in ast.walk(fn)
                                            if isinstance(getattr(n, "orelse", None), list)]
    for block, loop in blocks:
        for k, stmt in enumerate(block):
            if not (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name)
                    and isinstance(stmt.value, ast.Call) and not stmt.value.keywords
                    and (_name_of(stmt.value.func) == "_scatter" and len(stmt.value.args) == 3
                         or ast.unparse(stmt.value.func) == "np.outer" and len(stmt.value.args) == 2)
                    and stmt.lineno == stmt.end_lineno):
                continue
            temp = stmt.targets[0].id
            for j, later in enumerate(block[k + 1:], start=k + 1):
                target = next((name for name in owned if _accumulation(later, name) == temp), None)
                if target is None and any(isinstance(n, ast.Name) and n.id == temp for n in ast.walk(later)):
                    break          # the temporary read or rebound on the way: left as it is
                if target is not None:
                    if later.lineno != later.end_lineno or not (
                            _dead_after(block, j, temp) or _never_read_again(fn, later, temp)
                            or loop is not None and _dead_after(block, j, temp, True) and not any(
                                isinstance(n, ast.Name) and n.id == temp and n.lineno > loop.end_lineno
                                for n in ast.walk(fn))):
                        break
                    operands = [ast.get_source_segment(text, a) for a in stmt.value.args]
                    line = source.lines[stmt.lineno - 1]
                    if len(operands) == 3:
                        source.replace(stmt.lineno, f"{_indent(line)}{target}[{operands[1]}] += {operands[2]}")
                    else:
                        source.replace(stmt.lineno, f"{_indent(line)}_add_outer({target}, {operands[0]}, "
                                                    f"{operands[1]})  # {target} += np.outer(...)")
                    source.drop(later.lineno)
                    break
                stored = {n.id for n in ast.walk(later) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
                if not isinstance(later, (ast.Assign, ast.AugAssign)) or stored & owned and not any(
                        _accumulation(later, name) for name in owned):
                    break          # control flow, or the array reassigned: the addition cannot move up


def _stack_of(stmt: ast.stmt, method: str) -> str | None:
    """The stack of `x = s.pop()` (method "pop") or `s.append(x)` (method "append")."""
    call = stmt.value if isinstance(stmt, (ast.Assign, ast.Expr)) else None
    if isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute) and call.func.attr == method \
            and isinstance(call.func.value, ast.Name):
        if method == "pop" and not (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1
                                    and isinstance(stmt.targets[0], ast.Name)):
            return None
        return call.func.value.id
    return None


def _dead_after(block: list[ast.stmt], k: int, name: str, loop: bool = False) -> bool:
    """Whether the value block[k] stores in name is overwritten, in this block, before anything reads it
    (loop: the block is a loop's body, whose next iteration starts again at its top)."""
    for stmt in block[k + 1:] + (block[:k] if loop else []):
        if isinstance(stmt, (ast.If, ast.For, ast.While, ast.Return)):
            return False
        if any(isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Load) for n in ast.walk(stmt)):
            return False
        if isinstance(stmt, ast.Assign) and any(_name_of(t) == name for t in stmt.targets):
            return True
    return False


def _never_read_again(fn: ast.FunctionDef, stmt: ast.stmt, name: str) -> bool:
    """Whether nothing reads name after stmt: no read on a later line, nor in the loop around stmt (whose
    next iteration would read it)."""
    start = stmt.lineno
    for top in fn.body:
        if isinstance(top, (ast.For, ast.While)) and top.lineno <= stmt.lineno <= top.end_lineno:
            start = top.lineno
    return not any(isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Load)
                   and n.lineno >= start for n in ast.walk(fn))


def _drop_dead_stacks(fn: ast.FunctionDef, source: _Source) -> None:
    """A stack whose every pop is overwritten unread: its creation, pushes and pops go (the forward
    sweep saved values the reverse sweep ended up not reading)."""
    pops: dict[str, list[bool]] = {}
    uses: dict[str, int] = {}
    lines: dict[str, list[int]] = {}
    for node in ast.walk(fn):
        if isinstance(node, ast.Name):
            uses[node.id] = uses.get(node.id, 0) + 1
    blocks = [n.body for n in ast.walk(fn) if isinstance(getattr(n, "body", None), list)] + \
        [n.orelse for n in ast.walk(fn) if isinstance(getattr(n, "orelse", None), list)]
    counted: dict[str, int] = {}
    for block in blocks:
        for k, stmt in enumerate(block):
            popped = _stack_of(stmt, "pop")
            if popped is not None:
                target = stmt.targets[0].id
                pops.setdefault(popped, []).append(_dead_after(block, k, target)
                                                   or _never_read_again(fn, stmt, target))
            stack = popped or _stack_of(stmt, "append")
            if stack is None and isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and \
                    isinstance(stmt.value, ast.List) and not stmt.value.elts:
                stack = _name_of(stmt.targets[0])
            if stack is not None and stmt.lineno == stmt.end_lineno:
                counted[stack] = counted.get(stack, 0) + 1
                lines.setdefault(stack, []).append(stmt.lineno)
    for stack, dead in pops.items():
        if all(dead) and counted.get(stack) == uses.get(stack):     # no other use (a len(): the trip count)
            for lineno in lines[stack]:
                source.drop(lineno)


def _trip_count(loop: ast.For, text: str) -> str | None:
    """The number of iterations of `for v in range(a[, b])` or `for v in xs`, as an expression evaluated
    before the loop; None for other loops."""
    it = loop.iter
    if isinstance(it, ast.Name):
        return f"len({it.id})"
    if isinstance(it, ast.Call) and _name_of(it.func) == "range" and len(it.args) == 1 and not it.keywords \
            and isinstance(it.args[0], ast.Call) and _name_of(it.args[0].func) == "len":
        return ast.get_source_segment(text, it.args[0])
    if isinstance(it, ast.Call) and _name_of(it.func) == "range" and not it.keywords and 1 <= len(it.args) <= 2 \
            and all(isinstance(a, (ast.Name, ast.Constant)) for a in it.args):
        parts = [ast.get_source_segment(text, a) for a in it.args]
        return parts[0] if len(parts) == 1 else f"{parts[1]} - {parts[0]}"
    return None


_DTYPES = {"float64": "np.float64", "float32": "np.float32", "int64": "np.int64", "int32": "np.int32",
           "bool": "np.bool_", "uint64": "np.uint64"}


def _preallocate(fn: ast.FunctionDef, text: str, source: _Source, element_types: dict[str, str]) -> None:
    """Stacks of numbers pushed once per iteration of a loop whose trip count is known before it runs become
    arrays allocated before that loop, with a counter: `x_stack[x_top] = x; x_top += 1` and
    `x_top -= 1; x = x_stack[x_top]` (Numba's lists grow by reallocation)."""
    taken = {n.id for n in ast.walk(fn) if isinstance(n, ast.Name)}
    for top in fn.body:
        if not isinstance(top, ast.For) or top.orelse:
            continue
        trip = _trip_count(top, text)
        if trip is None:
            continue
        pushed = [s for s in top.body if _stack_of(s, "append")]
        counts: dict[str, int] = {}
        for stmt in pushed:
            counts[_stack_of(stmt, "append")] = counts.get(_stack_of(stmt, "append"), 0) + 1
        for stack, count in counts.items():
            dtype = _DTYPES.get(element_types.get(stack, ""))
            counter = f"{stack}_top"
            if count != 1 or dtype is None or counter in taken:
                continue
            creations = [s for s in fn.body[:fn.body.index(top)] if isinstance(s, ast.Assign)
                         and len(s.targets) == 1 and _name_of(s.targets[0]) == stack
                         and isinstance(s.value, ast.List) and not s.value.elts]
            pops = [s for s in ast.walk(fn) if isinstance(s, ast.stmt) and _stack_of(s, "pop") == stack
                    and s.lineno > top.end_lineno]
            lens = [c for c in _calls(fn) if _name_of(c.func) == "len" and len(c.args) == 1
                    and _name_of(c.args[0]) == stack]
            uses = sum(1 for n in ast.walk(fn) if isinstance(n, ast.Name) and n.id == stack)
            if len(creations) != 1 or uses != 2 + len(pops) + len(lens) or any(
                    source.lines[s.lineno - 1] is None for s in pops):
                continue
            push = next(s for s in pushed if _stack_of(s, "append") == stack)
            value = ast.get_source_segment(text, push.value.args[0])
            loop_line = source.lines[top.lineno - 1]
            indent = _indent(loop_line)
            source.drop(creations[0].lineno)
            source.replace(top.lineno, f"{indent}{stack} = np.empty(max(int({trip}), 0), {dtype})\n"
                                       f"{indent}{counter} = 0\n{loop_line}")
            line = source.lines[push.lineno - 1]
            source.replace(push.lineno, f"{_indent(line)}{stack}[{counter}] = {value}\n"
                                        f"{_indent(line)}{counter} += 1")
            for pop in pops:
                line = source.lines[pop.lineno - 1]
                source.replace(pop.lineno, f"{_indent(line)}{counter} -= 1\n"
                                           f"{_indent(line)}{pop.targets[0].id} = {stack}[{counter}]")
            for call in lens:
                line = source.lines[call.lineno - 1]
                source.replace(call.lineno, line.replace(f"len({stack})", counter))


def _loops_over_rows(fn: ast.FunctionDef, text: str, source: _Source) -> None:
    """`for x in xs:` over an argument as `for x_i in range(len(xs)): x = xs[x_i]`: Numba types the rows an
    iteration yields as non-contiguous ('A' layout), which makes `W @ x` take a slow path; xs[i] of a
    C-contiguous array is contiguous."""
    params = {a.arg for a in fn.args.args}
    taken = {n.id for n in ast.walk(fn) if isinstance(n, ast.Name)}
    for loop in [n for n in ast.walk(fn) if isinstance(n, ast.For)]:
        target, it = _name_of(loop.target), _name_of(loop.iter)
        index = f"{target}_i"
        if target is None or it not in params or index in taken or loop.body[0].lineno == loop.lineno:
            continue
        line = source.lines[loop.lineno - 1]
        if line is None or line.strip() != f"for {target} in {it}:":
            continue
        inner = _indent(source.lines[loop.body[0].lineno - 1] or line + "    ")
        source.replace(loop.lineno, f"{_indent(line)}for {index} in range(len({it})):\n{inner}{target} = {it}[{index}]")


def to_numba(source: str, name: str, line_map: dict, element_types: dict[str, str] | None = None
             ) -> tuple[str, dict]:
    """The emitted module `source` (defining `name`) rewritten for Numba; its new line map. element_types:
    the stacks' element types (Numba's names) when a first compilation found them: those of numbers pushed
    in a loop of known trip count become preallocated arrays."""
    tree = ast.parse(source)
    defs = {node.name: node for node in tree.body if isinstance(node, ast.FunctionDef)}
    main = defs.pop(name)
    edits = _Source(source)
    helpers = []
    for call in _calls(main):
        callee = _name_of(call.func)
        if callee in defs and callee not in helpers:
            if callee not in NUMBA_HELPERS:
                why = _WHY.get(callee, f"s2s's run-time helper {callee}")
                raise _refuse(f"{why} (`{ast.get_source_segment(source, call)}`)", line_map, call.lineno,
                              hint="pass example arguments of the shapes it will be called with, or use the "
                                   "Python backend")
            helpers.append(callee)
        if callee == "reversed":
            line = edits.lines[call.lineno - 1]
            segment = ast.get_source_segment(source, call)
            if call.lineno != call.end_lineno or line.count(segment) != 1:
                raise _refuse(f"`{segment}` over several lines", line_map, call.lineno)
            edits.replace(call.lineno, line.replace(segment, _reversed_range(call, source, line_map)))
    _scatters_in_place(main, source, edits)
    _loops_over_rows(main, source, edits)
    _drop_dead_stacks(main, edits)
    if element_types:
        _preallocate(main, source, edits, element_types)
    for call in _calls(main):                      # np.zeros_like of a number is a 0-d array in Numba
        if ast.unparse(call.func) == "np.zeros_like" and len(call.args) == 1 and not call.keywords:
            line = edits.lines[call.lineno - 1]
            if line is not None and line.count("np.zeros_like(") == 1 and "_zeros_like" not in line:
                edits.replace(call.lineno, line.replace("np.zeros_like(", "_zeros_like("))
                helpers.append("_zeros_like")
    for node in ast.walk(main):
        if isinstance(node, (ast.Dict, ast.DictComp, ast.Lambda, ast.GeneratorExp, ast.Try, ast.Raise)):
            raise _refuse(f"`{ast.get_source_segment(source, node)}`", line_map, node.lineno)
    helpers.append("_add_outer")
    used = {h for h in helpers if h not in defs}      # added by this transform
    for call in _calls(main):
        if _name_of(call.func) in NUMBA_HELPERS and _name_of(call.func) in defs:
            used.add(_name_of(call.func))
    used = {h for h in used if any(line and f"{h}(" in line for line in edits.lines[main.lineno:])}
    first_def = min([d.lineno - len(d.decorator_list) for d in defs.values()] + [main.lineno])
    out: list[str] = []
    new_map: dict[int, Any] = {}
    for k in range(first_def - 1):
        out.append(edits.lines[k])
    for helper in sorted(used):
        out.extend(NUMBA_HELPERS[helper].rstrip("\n").split("\n"))
        out.extend(["", ""])
    for k in range(main.lineno - 1, len(edits.lines)):
        line = edits.lines[k]
        if line is None:
            continue
        for piece in line.split("\n"):         # a replaced line may have become several
            out.append(piece)
            if k + 1 in line_map:
                new_map[len(out)] = line_map[k + 1]
    if element_types and any(line and "np.empty(max(" in line for line in out) and \
            not re.search(r"^import numpy as np$", source, re.M):
        at = next((k for k, line in enumerate(out) if line and line.startswith(("import ", "from "))), None)
        added = ["import numpy as np"] if at is not None else ["import numpy as np", ""]
        at = at if at is not None else next(k for k, line in enumerate(out) if line and line.startswith("def ")) - 1
        out[at:at] = added
        new_map = {k + (len(added) if k > at else 0): v for k, v in new_map.items()}
    text = "\n".join(out)
    text = re.sub(r"\n{4,}", "\n\n\n", text)
    if text.count("\n") != "\n".join(out).count("\n"):       # blank lines folded: recount the map
        return to_numba_recount(text, out, new_map)
    return text, new_map


def to_numba_recount(text: str, out: list[str], new_map: dict) -> tuple[str, dict]:
    """The line map after runs of blank lines were folded."""
    mapping, position, blanks = {}, 0, 0
    for k, line in enumerate(out, start=1):
        if line.strip() == "":
            blanks += 1
            if blanks > 2:
                continue
        else:
            blanks = 0
        position += 1
        if k in new_map:
            mapping[position] = new_map[k]
    return text, mapping


# ---------------------------------------------------------------- compiling

def _namespace(bindings: dict, user_fn: Any, reads_user_names: bool) -> dict:
    """The globals Numba compiles against: the module's names, then (a snapshot of) the user's."""
    namespace: dict = {}
    if reads_user_names and user_fn is not None:
        namespace.update(user_fn.__globals__)
        code, cells = user_fn.__code__, user_fn.__closure__ or ()
        for var, cell in zip(code.co_freevars, cells):
            try:
                namespace[var] = cell.cell_contents
            except ValueError:
                pass
    namespace.update(bindings)
    return namespace


def compile_numba(source: str, name: str, user_fn: Any, bindings: dict, label: str, reads_user_names: bool,
                  line_map: dict, options: tuple, args: Sequence[Any] | None) -> Callable:
    """The module exec'd and its function compiled by numba.njit; with args, compiled for their types now,
    so that what Numba cannot type is refused here, at the user's line."""
    numba = numba_module()
    from .compile import compile_function
    python = compile_function(source, name, user_fn, {}, label, False)
    namespace = python.__globals__
    extra = _namespace(bindings, user_fn, reads_user_names)
    for key, value in extra.items():
        namespace.setdefault(key, value)
    overloaded = _overloaded_helpers(numba)
    for helper in NUMBA_HELPERS:
        if helper in overloaded and helper in namespace:
            namespace[helper] = overloaded[helper]
        elif helper in namespace and isinstance(namespace[helper], types.FunctionType):
            namespace[helper] = numba.njit(namespace[helper])
    for key, value in list(namespace.items()):          # the user's other @njit functions stay compiled
        if key != name and is_dispatcher(value):
            namespace[key] = value
    jitted = numba.njit(**dict(options))(python)
    if args is not None:
        try:
            signature = tuple(numba.typeof(a) for a in args)
        except ValueError as exc:
            raise NumbaUnsupported(f"the Numba backend cannot pass an argument to Numba: {exc}",
                                   hint="call it with floats and NumPy arrays") from None
        try:
            jitted.compile(signature)
        except numba.core.errors.NumbaError as exc:
            raise _translated(exc, source, line_map) from None
    jitted.__s2s_python__ = python                      # type: ignore[attr-defined]
    return jitted


def _translated(exc: Exception, source: str, line_map: dict) -> NumbaUnsupported:
    """Numba's typing error as an S2SError at the user's line (Numba's first line kept as the reason)."""
    text = str(exc)
    lines = source.split("\n")
    found = [int(n) for n in re.findall(r'File "<s2s-[^"]*", line (\d+)', text)]
    lineno = next((n for n in reversed(found) if n in line_map), found[-1] if found else None)
    plain = re.sub(r"\x1b\[[0-9;]*m", "", text)
    reason = next((line.strip() for line in plain.splitlines() if line.strip()
                   and not line.strip().startswith(("Failed in", "During:", "File ", "- ", "Resolution failure",
                                                    "There are", ">>>"))), type(exc).__name__)
    generated = lines[lineno - 1].strip() if lineno and lineno <= len(lines) else "the derivative"
    return NumbaUnsupported(f"the Numba backend cannot compile `{generated}` (Numba: {reason[:300]})",
                            line_map.get(lineno) if lineno else None,
                            hint="write this line with floats and NumPy arrays Numba supports, or use the "
                                 "Python backend")


def _stack_element_types(jitted: Any) -> dict[str, str]:
    """The element type of every list the compiled function made, by variable name, from Numba's typing."""
    found: dict[str, str] = {}
    for compiled in jitted.overloads.values():
        typemap = getattr(getattr(compiled, "type_annotation", None), "typemap", {}) or {}
        for var, typ in typemap.items():
            dtype = getattr(typ, "dtype", None)
            if "list" in type(typ).__name__.lower() and dtype is not None:
                found[str(var).split(".")[0]] = str(dtype)
    return found


def build(emitted: Any, name: str, root: Any, options: tuple, args: Sequence[Any] | None) -> tuple[str, Callable]:
    """(source, compiled function) of an emitted derivative on the Numba target. With args it is compiled
    twice: the first compilation types the stacks, the second preallocates those it can as arrays."""
    text, line_map = to_numba(emitted.source, name, emitted.line_map)
    label = getattr(root, "__qualname__", name)
    jitted = compile_numba(text, name, root, emitted.bindings, label, emitted.reads_user_names, line_map,
                           options, args)
    if args is not None:
        element_types = _stack_element_types(jitted)
        if element_types:
            better, better_map = to_numba(emitted.source, name, emitted.line_map, element_types)
            if better != text:
                text, line_map = better, better_map
                jitted = compile_numba(text, name, root, emitted.bindings, label, emitted.reads_user_names,
                                       line_map, options, args)
    jitted.__s2s_lines__ = line_map                     # type: ignore[attr-defined]
    return text, jitted


def call_key(args: Sequence[Any]) -> tuple | None:
    """What a Numba derivative is specialized on, read cheaply at each call: types, and arrays' shapes and
    dtypes; None (no fast path) for anything else."""
    key = []
    for a in args:
        kind = type(a)
        if kind is float or kind is int:
            key.append(kind)
        elif kind is np.ndarray:
            key.append((a.shape, a.dtype.char))
        elif kind in _NUMPY_SCALARS:
            key.append(kind)
        else:
            return None
    return tuple(key)


_NUMPY_SCALARS = frozenset({np.float64, np.float32, np.int64, np.int32, bool})


_STANDALONE_OVERLOADS = {
    "_masked": '''@numba.extending.overload(_masked)
def _masked_typed(contribution, g):
    if isinstance(contribution, numba.types.Array) or isinstance(g, numba.types.Array):
        return lambda contribution, g: np.where(g == 0, 0.0, contribution)
    return lambda contribution, g: contribution if g != 0 else 0.0
''',
    "_zeros_like": '''@numba.extending.overload(_zeros_like)
def _zeros_like_typed(x):
    if isinstance(x, numba.types.Array):
        return lambda x: np.zeros_like(x)
    return lambda x: 0.0
''',
}


def standalone(emitted: Any, name: str, root: Any, options: tuple, args: Sequence[Any]) -> str:
    """The exported module for Numba: the rewritten derivative (stacks typed on args), `@numba.njit` on it
    and on its helpers, and the overload that lets Numba type `_zeros_like`."""
    numba = numba_module()
    text, line_map = to_numba(emitted.source, name, emitted.line_map)
    try:
        element_types = _stack_element_types(compile_numba(text, name, root, emitted.bindings, name,
                                                           emitted.reads_user_names, line_map, options, args))
    except NumbaUnsupported:
        raise
    text = to_numba(emitted.source, name, emitted.line_map, element_types)[0]
    text = text.replace("# A standalone module: it needs NumPy, not s2s.",
                        f"# A standalone module: it needs NumPy and Numba (written for {numba.__version__}), not s2s.")
    settings = ", ".join(f"{k}={v!r}" for k, v in options)
    lines = text.split("\n")
    out: list[str] = []
    imported = False
    for line in lines:
        if line.startswith("def ") and not imported:
            out[-2:-2] = ["import numba", "import numba.extending"] if not any(
                l == "import numba" for l in out) else []
            imported = True
        if line.startswith(f"def {name}("):
            out.append(f"@numba.njit({settings})")
        elif line.startswith(tuple(f"def {helper}(" for helper in _STANDALONE_OVERLOADS)):
            pass
        elif line.startswith("def _"):
            out.append("@numba.njit")
        out.append(line)
    text = "\n".join(out)
    wanted = [block for helper, block in _STANDALONE_OVERLOADS.items() if f"def {helper}(" in text]
    if wanted:
        head, sep, rest = text.partition(f"\n\n\n@numba.njit({settings})\ndef {name}(")
        text = head + "".join("\n\n\n" + block.rstrip("\n") for block in wanted) + sep + rest
    return text


def call_args(args: Sequence[Any] | None, mode: str, wrt: Sequence[int]) -> tuple | None:
    """Example arguments for the derivative's whole signature: a jvp and an hvp also take a tangent per
    differentiated argument (typed like it); a vjp's cotangent is not known, so it compiles at its first call."""
    if args is None or mode == "vjp":
        return None
    if mode in ("forward", "hvp"):
        return (*args, *(args[i] for i in wrt))
    return tuple(args)
