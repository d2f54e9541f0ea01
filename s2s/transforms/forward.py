"""Forward mode: a Function to one that computes the tangent of each value next to it, in one sweep.

`forward_function(fn, seeds, ...)`: seeds map parameter positions to their tangents, either
`PARAMETER` (the result takes a new parameter `x_dot`: a jvp) or a constant (1.0: the derivative
along a scalar argument, which keeps the signature, so the result can be differentiated again).
The result returns `(value, tangent)` or the tangent alone. No stack, no reverse pass: branches
carry their tangents through their phis, loops carry them with the loop variables.

Tangent of one primitive, by the first of:
- a tangent rule (`registry.tangent`): one contribution per argument;
- a function declared linear in that argument: the function applied to the tangent;
- an elementwise function: its adjoint rule applied to the tangent instead of an adjoint;
and the contributions of several varying arguments are summed. Stacks (in the code of a
gradient) get a tangent stack, pushed and popped in step.
"""
from __future__ import annotations

import operator
from typing import Any

import numpy as np

from s2s import runtime
from s2s.analysis import complex_values
from s2s.analysis.activity import active_values, const_kind, value_kinds
from s2s.analysis.values import NUMERIC
from s2s.errors import S2SError
from s2s.ir.calls import Callee
from s2s.ir.core import (
    Atom,
    Block,
    Const,
    For,
    Function,
    If,
    Loc,
    Op,
    Stmt,
    Value,
    While,
    clone_function,
    prim_name,
    value_names,
)
from s2s.ir.naming import Namer, tangent_hint
from s2s.rules import registry
from s2s.transforms import recursion
from s2s.transforms.common import (UNDIFFERENTIATED_KEYWORDS, inner_object, keyword_position, missing_rule,
                                   rule_dead_code, singular)
from s2s.transforms.rule_copies import copy_rule
from s2s.transforms.rule_inline import with_keywords

PARAMETER = "parameter"
# operations whose tangent is themselves applied to the tangents, but for the arguments listed (keys, indices)
_STRUCTURAL = {runtime.make_tuple: (), runtime.make_list: (), runtime.make_dict: (0,), runtime.list_append: (),
               runtime.setitem: (1,)}


# keyword arguments whose value a linear function puts into its result (np.sum's initial, np.diff's prepend):
# in the tangent of another argument they are zero
_VALUE_KEYWORDS = ("initial", "prepend", "append")


class _Forward:
    def __init__(self, fn: Function, active: set[int], kinds: dict[int, Any]):
        self.active = active
        self.kinds = kinds
        self.namer = Namer()
        self.namer.used.update(value_names(fn))         # not given out again
        self.tan: dict[int, Atom] = {}
        self.lazy: set[int] = set()        # tangents that may be smaller than their value (they broadcast)
        self.masked: set[int] = set()      # tangents exactly zero on a branch not taken (see reverse mode)
        self.complex = complex_values.analyze(fn, active)      # which values may be complex (complex_values.py)

    def fresh(self, hint: str) -> Value:
        return self.namer.value(hint)

    def tangent(self, atom: Atom) -> Atom | None:
        return self.tan.get(id(atom)) if isinstance(atom, Value) else None

    def kind(self, atom: Atom) -> Any:
        return const_kind(atom.value) if isinstance(atom, Const) else self.kinds.get(id(atom))

    def is_scalar(self, atom: Atom) -> bool:
        return self.kind(atom) == "scalar"

    def zero(self, v: Atom, out: list[Stmt], loc: Loc | None = None) -> Atom:
        if self.is_scalar(v):
            return Const(0.0)
        z = self.fresh(tangent_hint(v) if isinstance(v, Value) else "")
        numeric = self.kind(v) in NUMERIC
        out.append(Op(runtime.zeros_like if numeric else runtime._zeros_like_tree, [v], [z], loc=loc))
        return z

    def full(self, t: Atom, like: Atom, out: list[Stmt], loc: Loc | None) -> Atom:
        if id(t) not in self.lazy:
            return t
        expanded = self.fresh(t.hint if isinstance(t, Value) else tangent_hint(like) if isinstance(like, Value) else "")
        out.append(Op(runtime._expand, [t, like], [expanded], loc=loc))
        return expanded

    def tangent_or_zero(self, atom: Atom, out: list[Stmt], loc: Loc | None) -> Atom:
        t = self.tangent(atom)
        return self.full(t, atom, out, loc) if t is not None else self.zero(atom, out, loc)

    # ---------------------------------------------------------------- statements

    def block(self, block: Block) -> list[Stmt]:
        out: list[Stmt] = []
        for stmt in block.stmts:
            if isinstance(stmt, Op):
                out.append(stmt)
                self.op(stmt, out)
            elif isinstance(stmt, If):
                out.append(self.branch(stmt))
            else:
                out.extend(self.loop(stmt))
        return out

    def op(self, op: Op, out: list[Stmt]) -> None:
        prim = op.prim
        if prim is runtime.stack_new and id(op.outs[0]) in self.active:
            self.tan[id(op.outs[0])] = stack = self.fresh(op.outs[0].hint.replace("_stack", "_dot_stack"))
            out.append(Op(runtime.stack_new, [], [stack], loc=op.loc))
            return
        if prim is runtime.push:
            stack, value = op.args
            if self.tangent(stack) is not None:
                out.append(Op(runtime.push, [self.tangent(stack), self.tangent_or_zero(value, out, op.loc)], [],
                              loc=op.loc))
            return
        if prim is runtime.pop:
            if self.tangent(op.args[0]) is not None:
                self.tan[id(op.outs[0])] = popped = self.fresh(tangent_hint(op.outs[0]))
                out.append(Op(runtime.pop, [self.tangent(op.args[0])], [popped], loc=op.loc))
            return
        if prim.__class__ is Callee:      # a recursive function's call: its jvp (recursion.py)
            recursion.forward_call(self, op, out, forward_function, PARAMETER)
            return
        if len(op.outs) != 1 or id(op.outs[0]) not in self.active:
            return
        varying = [i for i, a in enumerate(op.args) if self.tangent(a) is not None]
        keywords: dict[int, str] = {}          # a keyword argument is the rule's parameter of that name
        for name, atom in op.kwargs.items():
            if self.tangent(atom) is not None and name not in UNDIFFERENTIATED_KEYWORDS:
                rule = registry.find_tangent(prim) or (registry.find_adjoint(prim) if registry.is_elementwise(prim)
                                                       else None)
                k = keyword_position(rule, name)
                if k is None or k < len(op.args):
                    raise missing_rule(prim, op.loc, f"tangent (for the keyword argument {name}=)")
                keywords[k] = name
                varying.append(k)
        if not varying:
            return
        ans = op.outs[0]
        if prim in _STRUCTURAL:
            # containers and writes are linear in their items together: the same operation on the tangents
            kept = _STRUCTURAL[prim]
            items = [a if k in kept else self.tangent_or_zero(a, out, op.loc) for k, a in enumerate(op.args)]
            self.tan[id(ans)] = packed = self.fresh(tangent_hint(ans))
            out.append(Op(prim, items, [packed], loc=op.loc))
            return
        elementwise = registry.is_elementwise(prim)
        total: Atom | None = None
        all_lazy = True
        for i in varying:
            arg = op.kwargs[keywords[i]] if i in keywords else op.args[i]
            t = self.tangent(arg)
            if not elementwise:
                t = self.full(t, arg, out, op.loc)
            contribution = self.contribution(op, i, t, out)
            if contribution is None:
                continue
            if elementwise and isinstance(t, Value) and (id(t) in self.masked or singular(op) and not
                                                         self.is_scalar(ans)):
                masked = self.fresh(tangent_hint(ans))
                out.append(Op(runtime._masked, [contribution, t], [masked], loc=op.loc))
                contribution = masked
            if isinstance(contribution, Value) and (registry.record(prim).masking or (elementwise and id(t) in self.masked)):
                self.masked.add(id(contribution))
            lazy = elementwise and not self.is_scalar(ans)
            all_lazy &= lazy
            if total is None:
                total = contribution
            else:            # the tangents of a container add up entry by entry
                summed = self.fresh(tangent_hint(ans))
                add = operator.add if self.is_scalar(ans) or self.kinds.get(id(ans)) in NUMERIC else runtime._add
                out.append(Op(add, [total, contribution], [summed], loc=op.loc))
                total = summed
        if total is None:
            return
        if isinstance(total, Value) and not total.hint:
            total.hint = tangent_hint(ans)
            total.name = self.fresh(total.hint).name
        if all_lazy:
            if isinstance(total, Const):    # a constant tangent (the seed 1.0) broadcast to ans: its own object,
                total = Const(total.value)  # marked, so that a reduction or the output expands it
            self.lazy.add(id(total))
        self.tan[id(ans)] = total

    def contribution(self, op: Op, i: int, t: Atom, out: list[Stmt]) -> Atom | None:
        """The output's tangent when argument i has tangent t and the others none."""
        prim, ans = op.prim, op.outs[0]
        rule = registry.find_tangent(prim)
        argnums = registry.linear_argnums(prim)
        if self.complex.any_complex and self.complex.touches_complex(op):     # complex values: complex_values.py
            guard = complex_values.fence(op, self.complex)
            rule = complex_values.tangent_rule(prim) or rule
            if guard:
                checked = self.contribution_of(op, i, t, out, rule, argnums)
                return complex_values.guarded(checked, guard, prim, self, out, op.loc)
        return self.contribution_of(op, i, t, out, rule, argnums)

    def contribution_of(self, op: Op, i: int, t: Atom, out: list[Stmt], rule: Any, argnums: Any) -> Atom | None:
        prim, ans = op.prim, op.outs[0]
        if rule is None and argnums is not None:
            if i not in argnums:          # read for its shape only
                if i >= len(op.args) and any(keyword_position(registry.find_adjoint(prim), n) == i
                                             for n in _VALUE_KEYWORDS if n in op.kwargs):
                    raise missing_rule(prim, op.loc, "tangent (for its keyword argument)")
                return None
            result = self.fresh("")
            args, kwargs = list(op.args), dict(op.kwargs)
            for name in _VALUE_KEYWORDS:    # values the result holds as they are: no tangent of their own
                if name in kwargs:
                    zero = self.fresh("")
                    out.append(Op(np.zeros_like, [kwargs[name]], [zero], {}, op.loc))
                    kwargs[name] = zero
            if i < len(args):
                args[i] = t
            else:                   # a keyword argument, at its parameter's place
                name = next(n for n in kwargs if keyword_position(registry.find_adjoint(prim), n) == i)
                kwargs[name] = t
            out.append(Op(registry.linear_applied(prim), args, [result], kwargs, op.loc))
            return result
        if rule is None and registry.is_elementwise(prim):
            rule = registry.find_adjoint(prim)
        if rule is None:
            raise missing_rule(prim, op.loc, "tangent")
        rule = with_keywords(rule, op.kwargs)         # the variant for np.sum's where= and the like
        stmts, results = copy_rule(rule, [t, ans, *op.args], op.kwargs, self.namer, op.loc, prim)
        if i >= len(results):
            raise missing_rule(prim, op.loc, f"tangent (for argument {i + 1})")
        if results[i] is None:          # as in reverse mode: a differentiated argument the rule does not differentiate
            refusal = inner_object(prim, op.args, i, op.loc)
            if refusal is not None:
                raise refusal
            raise S2SError(f"{prim_name(prim)} is differentiated with respect to its argument {i + 1}, which its "
                           f"rule does not differentiate", op.loc,
                           hint="stop_gradient(...) it if that is meant, or register a rule that differentiates it")
        block = Block(stmts, [results[i]])
        rule_dead_code(rule, [i], block)
        out.extend(block.stmts)
        return results[i]

    def branch(self, stmt: If) -> If:
        then_stmts = self.block(stmt.then)
        else_stmts = self.block(stmt.orelse)
        outs = list(stmt.outs)
        then_results, else_results = list(stmt.then.results), list(stmt.orelse.results)
        for j, o in enumerate(stmt.outs):
            a, b = stmt.then.results[j], stmt.orelse.results[j]
            if id(o) not in self.active or (self.tangent(a) is None and self.tangent(b) is None):
                continue
            then_results.append(self.tangent_or_zero(a, then_stmts, stmt.loc))
            else_results.append(self.tangent_or_zero(b, else_stmts, stmt.loc))
            outs.append(self.fresh(tangent_hint(o)))
            self.tan[id(o)] = outs[-1]
        return If(stmt.cond, Block(then_stmts, then_results), Block(else_stmts, else_results), outs, stmt.loc)

    def loop(self, stmt: While | For) -> list[Stmt]:
        before: list[Stmt] = []
        carried = [j for j, c in enumerate(stmt.carried) if id(c) in self.active]
        tangents = []
        for j in carried:
            tangents.append(self.tangent_or_zero(stmt.inits[j], before, stmt.loc))
            self.tan[id(stmt.carried[j])] = c_dot = self.fresh(tangent_hint(stmt.carried[j]))
            stmt.carried.append(c_dot)
        stmt.inits.extend(tangents)
        body = self.block(stmt.body)
        results = list(stmt.body.results)
        for j in carried:
            results.append(self.tangent_or_zero(stmt.body.results[j], body, stmt.loc))
        stmt.body = Block(body, results)
        for j in carried:
            self.tan[id(stmt.outs[j])] = o_dot = self.fresh(tangent_hint(stmt.outs[j]))
            stmt.outs.append(o_dot)
        return before + [stmt]


def forward_function(fn: Function, seeds: dict[int, Any], param_kinds: list, with_value: bool,
                     suffix: str = "jvp", several: bool = False, typed: Any = None) -> Function:
    """several: the tangent in a tuple of one (a gradient with wrt a tuple). A function that returns
    (output, aux) (has_aux) gives `(tangent, aux)`, or `((output, aux), tangent)` with the value. typed: a NumPy
    number type the tangent is converted to (a gradient along a float16 number seeded with 1.0 has its type)."""
    namer = Namer()
    fn = clone_function(fn, lambda v: namer.value(v.hint))       # loops get tangents: work on a copy
    fwd = _Forward(fn, active_values(fn, list(seeds)), value_kinds(fn, param_kinds))
    params = list(fn.params)
    for i, seed in seeds.items():
        p = fn.params[i]
        if seed == PARAMETER:
            fwd.tan[id(p)] = t = fwd.fresh(tangent_hint(p))
            params.append(t)
        else:
            fwd.tan[id(p)] = seed
    stmts = fwd.block(fn.body)
    output = fn.body.results[0]
    tail: list[Stmt] = []
    tangent = fwd.tangent(output)
    if tangent is None:
        tangent = fwd.zero(output, tail, fn.loc)
    elif id(tangent) in fwd.lazy:
        filled = fwd.fresh(tangent.hint)
        tail.append(Op(runtime._fill, [tangent, output], [filled], loc=fn.loc))
        tangent = filled
    if typed is not None:
        converted = fwd.fresh(tangent.hint if isinstance(tangent, Value) else "t")
        tail.append(Op(typed, [tangent], [converted], loc=fn.loc))
        tangent = converted
    if several:
        wrapped = fwd.fresh("grads")
        tail.append(Op(runtime.make_tuple, [tangent], [wrapped]))
        tangent = wrapped
    aux = fn.body.results[1:]
    if with_value:
        value: Atom = output
        if aux:
            value = fwd.fresh("value_and_aux")
            tail.append(Op(runtime.make_tuple, [output, *aux], [value]))
        result = fwd.fresh("value_and_tangent")
        tail.append(Op(runtime.make_tuple, [value, tangent], [result]))
    elif aux:
        result = fwd.fresh("grad_and_aux")
        tail.append(Op(runtime.make_tuple, [tangent, *aux], [result]))
    else:
        result = tangent
    return Function(f"{fn.name}_{suffix}", params, Block(stmts + tail, [result]), fn.loc)

