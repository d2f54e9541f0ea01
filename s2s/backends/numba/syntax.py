"""Numba's syntax, as the emitter's target (`emit_module(..., target=SYNTAX)`): what the emitter writes from
the IR, for the Numba target, where Python's spelling is not what Numba compiles in nopython mode. Nothing here
reads emitted text: each hook is given the IR (or the emitter's own expressions) and answers with text or a
refusal located at the user's line.

- `count_down`: `reversed(range(a, b))` is written `range(b - 1, a - 1, -1)`, and `reversed(range(a, b, s))` of a
  constant step s as the range that counts back from its last item (Numba has no `reversed` over a range); a
  step known only when the code runs is refused;
- `out_by_position`: a NumPy ufunc's output array `np.tanh(t, out=t)` is passed by position, `np.tanh(t, t)`;
- `one_assignment_per_line`: parallel assignments of independent values, `h_stack, x_stack = [], []`, are
  written one per line (a swap stays one line), so that each stack and adjoint is made on a line of its own;
- `rows_over_arguments`: `for x in xs:` over an argument is written `for x_i in range(len(xs)): x = xs[x_i]`
  (Numba types the rows an iteration yields as non-contiguous, which makes `W @ x` take a slow path);
- `helper`: the run-time helpers the derivative calls, as Numba-typable texts (helpers.py, typed_helpers.py),
  `np.zeros_like(x)` as `_zeros_like(x)` (of a number, np.zeros_like is a 0-d array in Numba); a helper Numba
  cannot type is refused, naming it and the line;
- `refuse_dict`: a dict the derivative builds is refused;
- `check`: the IR read before emission: a value that starts as None and is saved on a stack (the value an early
  `return` in a loop gives) is refused, at the loop.
"""
from __future__ import annotations

from typing import Any

from s2s import runtime
from s2s.backends.numba.dispatchers import NumbaUnsupported, refuse
from s2s.backends.numba.helpers import HINTS, NUMBA_HELPERS, WHY
from s2s.emit import source_text as st
from s2s.ir import syntax
from s2s.ir.core import Const, For, Function, If, Op, Value, While, stmt_blocks

_MINUS, _PLUS, _TIMES = (f" {s} " for s in "-+*")
_ADD = syntax.PRECEDENCE["+"]
_MUL = syntax.PRECEDENCE["*"]

Bound = Any          # an int (a constant bound or step) or an st.Expr


def _expr(bound: Bound) -> st.Expr:
    if isinstance(bound, int):
        return st.constant(bound) if bound >= 0 else st.unary("-", st.UNARY, st.constant(-bound))
    return bound


def _shifted(bound: Bound, by: int) -> st.Expr:
    """bound + by (by is 1 or -1): a constant folded."""
    if isinstance(bound, int):
        return _expr(bound + by)
    return st.binary(_PLUS if by > 0 else _MINUS, _ADD, bound, st.constant(abs(by)))


def count_down(start: Bound, stop: Bound, step: Bound, loc: Any = None) -> st.Expr:
    """`reversed(range(start, stop, step))` as a range that counts down; step an int, or an expression (refused)."""
    if not isinstance(step, int) or step == 0:
        whole = st.call(st.name("reversed"), [st.call(st.name("range"), [_expr(b) for b in (start, stop, step)])])
        raise refuse(f"`{whole[0]}` (the step of the range is not a constant)", loc,
                     hint="write the loop with a constant step (range(n - 2, -1, -1)), "
                          "or differentiate with backend='python' (the default)")
    if step == 1:
        return st.call(st.name("range"), [_shifted(stop, -1), _shifted(start, -1), _expr(-1)])
    if step == -1:          # start, start - 1, ..., stop + 1 reversed
        return st.call(st.name("range"), [_shifted(stop, 1), _shifted(start, 1)])
    length = st.call(st.name("len"), [st.call(st.name("range"), [_expr(start), _expr(stop), _expr(step)])])
    last = st.binary(_PLUS, _ADD, _expr(start),
                     st.binary(_TIMES, _MUL, st.binary(_MINUS, _ADD, length, st.constant(1)), _expr(step)))
    return st.call(st.name("range"), [last, st.binary(_MINUS, _ADD, _expr(start), _expr(step)), _expr(-step)])


class NumbaSyntax:
    """The hooks s2s/emit/python.py calls when it writes for Numba."""

    name = "numba"
    out_by_position = True
    one_assignment_per_line = True
    rows_over_arguments = True
    zeros_like = "_zeros_like"

    def count_down(self, start: Bound, stop: Bound, step: Bound, loc: Any) -> st.Expr:
        return count_down(start, stop, step, loc)

    def helper(self, name: str, call: str, loc: Any) -> str:
        """The text of the helper the derivative calls (`call`, at the user's place loc), or its refusal."""
        text = NUMBA_HELPERS.get(name)
        if text is None:
            why = WHY.get(name, f"s2s's run-time helper {name}")
            raise refuse(f"{why} (`{call}`)", loc, hint=HINTS.get(name, ""))
        return text.rstrip("\n")

    def refuse_dict(self, text: str, loc: Any) -> NumbaUnsupported:
        return refuse(f"`{text}`", loc)

    def check(self, fn: Function) -> None:
        none_on_a_stack(fn)


def none_on_a_stack(fn: Function) -> None:
    """A value that starts as None (a loop's or a branch's, the value an early `return` in a loop gives) saved on a
    stack is refused: Numba types the stack as numbers and fails when it runs, on the None."""
    parent: dict[int, int] = {}
    nones: dict[int, Any] = {}          # a group of values one variable holds -> the place a None enters it

    def find(v: Value) -> int:
        k = id(v)
        while parent.get(k, k) != k:
            k = parent[k]
        return k

    def join(a: Value, b: Any) -> None:
        if type(b) is Value:
            ra, rb = find(a), find(b)
            if ra != rb:
                parent[rb] = ra
                if rb in nones:
                    nones.setdefault(ra, nones.pop(rb))

    def none_enters(v: Value, atoms: tuple, loc: Any) -> None:
        if any(isinstance(a, Const) and a.value is None for a in atoms):
            nones.setdefault(find(v), loc)

    pushes: list[Op] = []

    def block(b: Any) -> None:
        for s in b.stmts:
            if type(s) is Op:
                if s.prim is runtime.push and len(s.args) == 2:
                    pushes.append(s)
                continue
            for inner in stmt_blocks(s):
                block(inner)
            if isinstance(s, (For, While)):
                for c, i, r, o in zip(s.carried, s.inits, s.body.results, s.outs):
                    join(c, i), join(c, r), join(c, o)
                    none_enters(c, (i, r), s.loc)
            elif isinstance(s, If):
                for o, t, e in zip(s.outs, s.then.results, s.orelse.results):
                    join(o, t), join(o, e)
                    none_enters(o, (t, e), s.loc)

    block(fn.body)
    for push in pushes:
        value = push.args[1]
        loc = nones.get(find(value)) if type(value) is Value else None
        if loc is not None:
            raise refuse("a `return` inside a loop (the derivative saves the value returned, None until the loop "
                         "returns, and Numba stores no None among numbers)", loc,
                         hint="break out of the loop and return after it, or use the default backend "
                              "(backend='python')")


SYNTAX = NumbaSyntax()
