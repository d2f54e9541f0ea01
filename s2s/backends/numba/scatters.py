"""Adjoints accumulated in place: `x_1 = _scatter(u, i, g) ... du = du + x_1` becomes `du[i] += g` and
`dW = dW + np.outer(a, b)` a loop without the temporary, when `du` (`dW`) is a fresh array no other name shares.
An element loop's gradient then costs O(1) per element, not O(n)."""
from __future__ import annotations

import ast

from s2s.backends.numba.lines import Source, accumulated, accumulation, blocks, dead_at, indent, name_of


def _fresh_zeros(stmt: ast.stmt, name: str) -> bool:
    """Whether stmt gives name a fresh array of zeros: `d = np.zeros_like(x)`, or one of `d, e = np.zeros_like(x),
    np.zeros_like(y)`."""
    if not (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1):
        return False
    target, value = stmt.targets[0], stmt.value
    pairs = [(target, value)]
    if isinstance(target, ast.Tuple) and isinstance(value, ast.Tuple) and len(target.elts) == len(value.elts):
        pairs = list(zip(target.elts, value.elts))
    return any(name_of(t) == name and isinstance(v, ast.Call) and ast.unparse(v.func) in ("np.zeros_like", "np.zeros")
               for t, v in pairs)


def owned_arrays(fn: ast.FunctionDef) -> set[str]:
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
            if _fresh_zeros(stmt, name):
                fresh = True
            elif accumulated(stmt, name) is None:
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
                if isinstance(stmt, (ast.Assign, ast.AugAssign)) and accumulated(stmt, name) is not None:
                    allowed[name] = allowed.get(name, 0) + 1
        if isinstance(stmt, ast.Return) and stmt.value is not None:
            for name in ast.walk(stmt.value):
                if isinstance(name, ast.Name) and name.id in owned:
                    allowed[name.id] = allowed.get(name.id, 0) + 1
    return {name for name in owned if reads.get(name, 0) == allowed.get(name, 0)}


def _in_place(stmt: ast.stmt, target: str, text: str) -> str | None:
    """`du[i] += g` for `_scatter(u, i, g)`, `_add_outer(dW, a, b)` for `np.outer(a, b)`: the in-place form
    of adding stmt's value into target, or None for another value."""
    call = stmt.value if isinstance(stmt, ast.Assign) else None
    if not (isinstance(call, ast.Call) and not call.keywords and stmt.lineno == stmt.end_lineno):
        return None
    operands = [ast.get_source_segment(text, a) for a in call.args]
    if name_of(call.func) == "_scatter" and len(operands) == 3:
        return f"{target}[{operands[1]}] += {operands[2]}"
    if ast.unparse(call.func) == "np.outer" and len(operands) == 2:
        return f"_add_outer({target}, {operands[0]}, {operands[1]})  # {target} += np.outer(...)"
    return None


def scatters_in_place(fn: ast.FunctionDef, text: str, source: Source) -> None:
    """`x_1 = _scatter(u, i, g) ... du = du + x_1` as `du[i] += g`, written where the scatter was; and
    `du = du + _scatter(u, i, g)` in place where it is."""
    owned = owned_arrays(fn)
    for stmt in ast.walk(fn):
        for name in owned:
            added = accumulated(stmt, name) if isinstance(stmt, ast.Assign) else None
            if isinstance(added, ast.Call) and stmt.lineno == stmt.end_lineno:
                found = _in_place(ast.Assign(targets=[], value=added, lineno=stmt.lineno, end_lineno=stmt.lineno),
                                  name, text)
                if found is not None and source.lines[stmt.lineno - 1] is not None:
                    line = source.lines[stmt.lineno - 1]
                    source.replace(stmt.lineno, f"{indent(line)}{found}")
    for block, loop in blocks(fn):
        for k, stmt in enumerate(block):
            if not (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name)
                    and isinstance(stmt.value, ast.Call) and not stmt.value.keywords
                    and (name_of(stmt.value.func) == "_scatter" and len(stmt.value.args) == 3
                         or ast.unparse(stmt.value.func) == "np.outer" and len(stmt.value.args) == 2)
                    and stmt.lineno == stmt.end_lineno):
                continue
            temp = stmt.targets[0].id
            for j, later in enumerate(block[k + 1:], start=k + 1):
                target = next((name for name in owned if accumulation(later, name) == temp), None)
                if target is None and any(isinstance(n, ast.Name) and n.id == temp for n in ast.walk(later)):
                    break          # the temporary read or rebound on the way: left as it is
                if target is not None:
                    if later.lineno != later.end_lineno or not dead_at(fn, block, loop, j, temp):
                        break
                    line = source.lines[stmt.lineno - 1]
                    source.replace(stmt.lineno, f"{indent(line)}{_in_place(stmt, target, text)}")
                    source.drop(later.lineno)
                    break
                stored = {n.id for n in ast.walk(later) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
                if not isinstance(later, (ast.Assign, ast.AugAssign)) or stored & owned and not any(
                        accumulation(later, name) for name in owned):
                    break          # control flow, or the array reassigned: the addition cannot move up
