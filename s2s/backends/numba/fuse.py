"""Consecutive elementwise lines over 1-D arrays of one shape, as one loop.

Numba compiles each NumPy array expression on its own (it fuses them only with parallel=True), so
`t1 = t1 + t2; t1 = t1 + b; h = np.tanh(t1)` allocates three arrays and walks them three times. A run of
two or more such lines, on consecutive lines of one block, becomes

    h_new = np.empty(t1.shape, np.float64)
    for k in range(t1.shape[0]):
        t1_k = t1[k] + t2[k]
        t1_k = t1_k + b[k]
        h_new[k] = np.tanh(t1_k)
    h = h_new

where only the values read after the run get an array (the others stay numbers inside the loop), and an adjoint
no other name shares (owned_arrays) accumulates in place: `db = db + dv` becomes `db[k] += dv_k`.
When the run reads more than one array, the loop runs only if they all have the same shape, and the original
lines run otherwise (NumPy broadcasts; the loop would not). Which names are 1-D float arrays and which are
numbers comes from Numba's typing of a first compilation (typed.py); `/` and `**` are written as np.divide
and np.power, which give inf and nan on numbers as on arrays where Python's operators would raise.
"""
from __future__ import annotations

import ast

from s2s.backends.numba.lines import Source, accumulated, accumulation, blocks, dead_at, indent, name_of
from s2s.backends.numba.typed import DTYPES, Types, array_of, number

ELEMENTWISE = {"tanh", "exp", "log", "sin", "cos", "tan", "sqrt", "abs", "absolute", "negative", "sinh", "cosh",
               "arctan", "arcsin", "arccos", "arcsinh", "log1p", "expm1", "square", "maximum", "minimum", "sign"}
_OPERATORS = (ast.Add, ast.Sub, ast.Mult, ast.Div, ast.Pow)
_FLOATS = ("float64", "float32")


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


class _Run:
    """A run of elementwise lines being gathered: what it defines, reads from outside, and accumulates."""

    def __init__(self) -> None:
        self.stmts: list[ast.Assign] = []
        self.defined: list[str] = []            # names given a value inside the run, in order
        self.outside: list[str] = []            # arrays read from before the run
        self.accumulated: list[str] = []        # owned adjoints added into

    def arrays(self) -> list[str]:
        return self.outside + [n for n in self.accumulated if n not in self.outside]


def _elementwise(node: ast.expr, run: _Run, types: Types, reads: list[str]) -> bool:
    """Whether node is built of numbers, 1-D float arrays and elementwise operations (reads: its arrays)."""
    if isinstance(node, ast.Constant):
        return type(node.value) in (int, float)
    if isinstance(node, ast.Name):
        if node.id in run.defined:
            return True
        kind = array_of(types, node.id)
        if kind is not None and kind[0] in _FLOATS and kind[1] == 1:
            reads.append(node.id)
            return True
        return number(types, node.id)
    if isinstance(node, ast.BinOp):
        return isinstance(node.op, _OPERATORS) and _elementwise(node.left, run, types, reads) and \
            _elementwise(node.right, run, types, reads)
    if isinstance(node, ast.UnaryOp):
        return isinstance(node.op, (ast.USub, ast.UAdd)) and _elementwise(node.operand, run, types, reads)
    if isinstance(node, ast.Call):
        func = node.func
        return isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id == "np" \
            and func.attr in ELEMENTWISE and not node.keywords and all(
                _elementwise(a, run, types, reads) for a in node.args)
    return False


def _joins(stmt: ast.stmt, run: _Run, types: Types, owned: set[str], original: list[str], source: Source) -> bool:
    """Whether stmt extends the run (and if so, records it)."""
    if not (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name)
            and stmt.lineno == stmt.end_lineno and source.lines[stmt.lineno - 1] == original[stmt.lineno - 1]):
        return False
    if run.stmts and stmt.lineno != run.stmts[-1].end_lineno + 1:
        return False
    target = stmt.targets[0].id
    kind = array_of(types, target)
    if kind is None or kind[0] not in _FLOATS or kind[1] != 1:
        return False
    reads: list[str] = []
    added = accumulation(stmt, target) if target in owned else None
    if added is not None:
        if not _elementwise(ast.Name(id=added, ctx=ast.Load()), run, types, reads) or target in run.defined:
            return False
        if target not in run.accumulated:
            run.accumulated.append(target)
    else:
        if target in run.accumulated or not _elementwise(stmt.value, run, types, reads):
            return False
        if not reads and not any(isinstance(n, ast.Name) and n.id in run.defined for n in ast.walk(stmt.value)):
            return False                         # numbers only: not an array line
        run.defined.append(target)
    for name in reads:
        if name not in run.outside:
            run.outside.append(name)
    run.stmts.append(stmt)
    return True


class _Scalars(ast.NodeTransformer):
    """An elementwise expression at element k: arrays indexed, the run's values as numbers."""

    def __init__(self, scalar: dict[str, str], index: str):
        self.scalar, self.index, self.reading = scalar, index, set()

    def visit_Name(self, node: ast.Name) -> ast.expr:
        if node.id in self.scalar:
            return ast.Name(id=self.scalar[node.id], ctx=ast.Load())
        if node.id in self.reading:
            return ast.Subscript(value=node, slice=ast.Name(id=self.index, ctx=ast.Load()), ctx=ast.Load())
        return node

    def visit_BinOp(self, node: ast.BinOp) -> ast.expr:
        self.generic_visit(node)
        if isinstance(node.op, ast.Div) or isinstance(node.op, ast.Pow) and not (
                isinstance(node.right, ast.Constant) and type(node.right.value) is int and node.right.value >= 0):
            name = "divide" if isinstance(node.op, ast.Div) else "power"
            return ast.Call(func=ast.Attribute(value=ast.Name(id="np", ctx=ast.Load()), attr=name, ctx=ast.Load()),
                            args=[node.left, node.right], keywords=[])
        return node


def _fresh(name: str, taken: set[str]) -> str:
    found, n = name, 1
    while found in taken:
        found, n = f"{name}_{n}", n + 1
    taken.add(found)
    return found


def _write(run: _Run, block: list[ast.stmt], loop: ast.stmt | None, fn: ast.FunctionDef, types: Types,
           taken: set[str], index: str, scalars: dict[str, str], source: Source) -> None:
    """The run as one loop (guarded by a shape check when it reads several arrays)."""
    first, last = run.stmts[0], run.stmts[-1]
    end = block.index(last)
    pad = indent(source.lines[first.lineno - 1])
    arrays = run.arrays()
    ref = arrays[0]
    guarded = len(arrays) > 1
    inner = pad + "    " if guarded else pad
    scalar: dict[str, str] = {}
    live = {name: None for name in run.defined if not dead_at(fn, block, loop, end, name)}
    head, body, tail = [], [], []
    for name in live:
        array = _fresh(f"{name}_new", taken) if name in arrays else name
        live[name] = array
        head.append(f"{inner}{array} = np.empty({ref}.shape, {DTYPES[array_of(types, name)[0]]})")
        if array != name:
            tail.append(f"{inner}{name} = {array}")
    head.append(f"{inner}for {index} in range({ref}.shape[0]):")
    last_definition = {stmt.targets[0].id: stmt for stmt in run.stmts if stmt.targets[0].id in run.defined}
    for stmt in run.stmts:
        target = stmt.targets[0].id
        rewrite = _Scalars(dict(scalar), index)
        rewrite.reading = set(arrays)
        if target in run.accumulated and target not in run.defined:
            added = rewrite.visit(ast.Name(id=accumulation(stmt, target), ctx=ast.Load()))
            body.append(f"{inner}    {target}[{index}] += {ast.unparse(added)}")
            continue
        value = ast.unparse(rewrite.visit(ast.parse(ast.unparse(stmt.value), mode="eval").body))
        if target not in scalar:             # the same number's name in every run: they are local to its loop
            if target not in scalars:
                scalars[target] = _fresh(f"{target}_{index}", taken)
            scalar[target] = scalars[target]
        body.append(f"{inner}    {scalar[target]} = {value}")
        if last_definition[target] is stmt and live.get(target):
            body.append(f"{inner}    {live[target]}[{index}] = {scalar[target]}")
    lines = head + body + tail
    if guarded:
        check = " and ".join(f"{a}.shape == {ref}.shape" for a in arrays[1:])
        lines = [f"{pad}if {check}:  # no operand broadcasts: the {len(run.stmts)} lines below as one loop"] + \
            lines + [f"{pad}else:"]
        for stmt in run.stmts:
            source.replace(stmt.lineno, "    " + source.lines[stmt.lineno - 1])
        source.replace(first.lineno, "\n".join(lines + [source.lines[first.lineno - 1]]))
    else:
        lines[-len(body) - len(tail) - 1] += "  # one loop for: " + "; ".join(
            source.lines[s.lineno - 1].strip() for s in run.stmts)
        source.replace(first.lineno, "\n".join(lines))
        for stmt in run.stmts[1:]:
            source.drop(stmt.lineno)


def fuse(fn: ast.FunctionDef, text: str, source: Source, types: Types) -> None:
    """Every run of two or more elementwise lines over 1-D float arrays in fn, as one loop."""
    owned = owned_arrays(fn)
    taken = {n.id for n in ast.walk(fn) if isinstance(n, ast.Name)} | {a.arg for a in fn.args.args}
    original = text.split("\n")
    index = _fresh("k", taken)
    scalars: dict[str, str] = {}
    for block, loop in blocks(fn):
        k = 0
        while k < len(block):
            run = _Run()
            j = k
            while j < len(block) and _joins(block[j], run, types, owned, original, source):
                j += 1
            if len(run.stmts) >= 2 and run.arrays():
                _write(run, block, loop, fn, types, taken, index, scalars, source)
            k = max(j, k + 1)
