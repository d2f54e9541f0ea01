"""A rule's copy made from a plan: straight-line rules (most of them) inlined without walking their template.

`inline.inline_rule` copies a rule's template statement by statement through a mapping. For a template without
branches or loops, `copy_rule` makes the same statements (the same primitives, fresh names asked of the namer in
the same order, the same locations) from a plan made once per rule, in which each argument is a parameter's
position, an earlier statement's result or a constant. A call with keyword arguments, a rule with control flow
and a call that does not fit the rule go through inline_rule (which also says what is wrong).
"""
from __future__ import annotations

import inspect
from typing import Any, Callable

from s2s.ir.core import Atom, Const, Function, Loc, Op, Stmt, Value
from s2s.ir.naming import Namer
from s2s.transforms.rule_inline import inline_rule, rule_ir, rule_results

# rule -> (the parameters' defaults, the steps, the results), or None when the rule has no plan
_PLANS: dict[Callable, Any] = {}


def _make_plan(fn: Function, signature: inspect.Signature) -> Any:
    """A reference is k >= 0 (the k-th parameter), ~j (the j-th value the copy defines) or a Const."""
    if len(fn.params) != len(signature.parameters) or any(s.__class__ is not Op for s in fn.body.stmts):
        return None
    where: dict[int, int] = {id(p): k for k, p in enumerate(fn.params)}

    def ref(atom: Atom) -> Any:
        return atom if atom.__class__ is Const else where[id(atom)]

    steps, count = [], 0
    try:
        for s in fn.body.stmts:
            steps.append((s.prim, [ref(a) for a in s.args], {k: ref(a) for k, a in s.kwargs.items()},
                          len(s.outs), s.same_shape, s.loc))
            for o in s.outs:
                where[id(o)] = ~count
                count += 1
        results = [ref(a) for a in fn.body.results]
    except KeyError:              # a value from elsewhere: copied the general way
        return None
    if len(results) != 1:
        return None
    return [p.default for p in signature.parameters.values()], steps, results[0]


def copy_rule(rule: Callable, args: list[Atom], kwargs: dict[str, Atom], namer: Namer,
              loc: Loc | None, prim: Any = None) -> tuple[list[Stmt], list[Atom | None]]:
    """What inline_rule(rule, args, kwargs, namer, loc, prim) gives."""
    plan = _PLANS.get(rule, False)
    if plan is False:
        plan = _PLANS[rule] = _make_plan(*rule_ir(rule))
    if plan is None or kwargs or len(args) > len(plan[0]):
        return inline_rule(rule, args, kwargs, namer, loc, prim)
    defaults, steps, result_ref = plan
    bound = list(args)
    for default in defaults[len(args):]:
        if default is inspect.Parameter.empty:
            return inline_rule(rule, args, kwargs, namer, loc, prim)       # it refuses the missing argument
        bound.append(Const(default))
    made: list[Value] = []
    stmts: list[Stmt] = []
    for prim, arg_refs, kwarg_refs, outs, same_shape, own_loc in steps:
        call = [r if r.__class__ is Const else bound[r] if r >= 0 else made[~r] for r in arg_refs]
        keywords = {k: r if r.__class__ is Const else bound[r] if r >= 0 else made[~r]
                    for k, r in kwarg_refs.items()} if kwarg_refs else {}
        new = [namer.value("") for _ in range(outs)]
        made.extend(new)
        stmts.append(Op(prim, call, new, keywords, loc if loc is not None else own_loc, same_shape))
    r = result_ref
    result = r if r.__class__ is Const else bound[r] if r >= 0 else made[~r]
    return rule_results(stmts, result)          # as inline_rule: one atom per item of the tuple the rule returns
