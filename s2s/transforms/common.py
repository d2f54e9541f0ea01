"""What reverse and forward mode share: the refusal when no rule fits a primitive (`missing_rule`, `inner_object`),
the positions of a rule's keyword parameters, and the removal of what a rule's copy computes that the
differentiated arguments do not need."""
from __future__ import annotations

import inspect
from typing import Any


from s2s import runtime
from s2s.errors import NoDerivativeRule
from s2s.frontend.policy import unreadable
from s2s.ir.core import Block, Const, Loc, Op, prim_name, walk
from s2s.passes.optimize import eliminate_dead_code_in
from s2s.rules import registry


def inner_object(prim: Any, args: list, i: int, loc: Loc | None) -> NoDerivativeRule | None:
    """The refusal of obj.method(...) differentiated through obj: an object made inside the function from a
    differentiated value (s2s differentiates a method call with respect to its arguments only)."""
    if i != 0 or not getattr(prim, "__name__", "").startswith("method_call_"):
        return None
    method = args[1].value if len(args) > 1 and isinstance(args[1], Const) else "method"
    called, example = ("the object called here", "m(x, w)") if method == "__call__" else \
        (f"the object whose method .{method}() is called here", f"m.{method}(x, w)")
    return NoDerivativeRule(f"{called} holds a differentiated value: an "
                            f"object made inside the function from a differentiated value (m = Model(w)) is not "
                            f"differentiated through its fields", loc,
                            hint=f"build the object outside the function and pass it in, or pass the value to "
                                 f"the call as an argument ({example})")


def missing_rule(prim: Any, loc: Loc | None, what: str = "derivative") -> NoDerivativeRule:
    name = prim_name(prim)
    reason = registry.refusal(prim)          # a helper of derivative code declared not differentiable again
    if reason is not None:
        return NoDerivativeRule(f"s2s does not differentiate {reason}", loc)
    if prim is getattr:
        return NoDerivativeRule("s2s does not differentiate reading an attribute of this value (its type is known "
                                "only when the code runs)", loc,
                                hint="pass the object as an argument if it is a namedtuple (its fields are read by "
                                     "position), or keep its fields in variables")
    if isinstance(prim, type) and issubclass(prim, tuple) and hasattr(prim, "_fields"):
        return NoDerivativeRule(f"s2s does not differentiate building a namedtuple ({prim.__name__}(...)) inside "
                                f"the function", loc, hint="keep its fields in variables, or build a plain tuple")
    if isinstance(prim, type) and not prim.__module__.startswith(("numpy", "builtins", "scipy")):
        return NoDerivativeRule(f"s2s does not differentiate building a {prim.__name__} object from a differentiated "
                                f"value inside the function (its fields would carry the derivative)", loc,
                                hint=f"build the {prim.__name__} outside the function and pass it in, or pass the "
                                     f"value to its methods as an argument")
    if getattr(prim, "__module__", None) == "s2s.frontend.desugar.helpers":
        # a construct the desugaring wrote as a call of its helper (`with`, a list's method): named as the construct,
        # never as the helper, which no user registers a rule for
        doc = (prim.__doc__ or "").strip().splitlines()
        construct = doc[0].rstrip(".") if doc else prim.__name__
        return NoDerivativeRule(f"s2s does not differentiate this construct given a differentiated value here "
                                f"({construct[0].lower() + construct[1:]})", loc,
                                hint="compute it from values without a derivative, or write it with operations "
                                     "s2s differentiates (the README's table of what is refused)")
    if (getattr(prim, "__module__", None) or "").startswith("s2s.") and what == "tangent":
        # s2s's own functions met by forward mode: s2s.jvp or s2s.vjp called inside, a method of an object known
        # only when the code runs (its vjp), differentiated once more
        return NoDerivativeRule(f"s2s does not take a second derivative through {name} here (a derivative s2s makes "
                                f"when the code runs: s2s.jvp or s2s.vjp called inside the function, or a method of "
                                f"an object known only then)", loc,
                                hint="use s2s.hvp or s2s.hessian on the function itself, call a gradient made once at "
                                     "module level (dloss = s2s.grad(loss)), or pass the object's arrays as arguments")
    owner = getattr(prim, "__self__", None)
    if type(owner).__module__.startswith("scipy.stats") and getattr(owner, "name", None):
        # a method of a scipy.stats distribution: named by the distribution (the generic method is every one's)
        ruled = sorted({k.__self__.name for k in registry.registered_adjoints()
                        if type(getattr(k, "__self__", None)).__module__.startswith("scipy.stats")
                        and getattr(k.__self__, "name", None)})
        return NoDerivativeRule(f"no {what} rule for scipy.stats.{owner.name}.{prim.__name__}", loc,
                                hint=f"s2s has rules for the distributions {', '.join(ruled)}; write the density "
                                     f"with NumPy (its log-density formula), or register a rule with "
                                     f"@s2s.adjoint(scipy.stats.{owner.name}.{prim.__name__})")
    family = "rules/math_functions.py" if name.startswith("math.") else \
        "rules/numpy_functions.py" if name.startswith("numpy.") else "rules/"
    how = f"@s2s.adjoint({name}) (and @s2s.tangent for forward mode)" if what == "derivative" else \
        f"@s2s.tangent({name}), or declare it with s2s.linear or s2s.elementwise"
    if getattr(prim, "__module__", None) == "autograd.tracer" and hasattr(prim, "fun"):
        return NoDerivativeRule(f"no {what} rule for {name}: it is an autograd @primitive whose derivative is the "
                                f"rule given to autograd (defvjp), which s2s does not take yet", loc,
                                hint=f"register the same rule with {how}")
    unread = unreadable(prim)
    if unread is not None:       # a library's Python function s2s could not read: say why
        return NoDerivativeRule(f"no {what} rule for {name}, and its Python source could not be read: {unread}",
                                loc, hint=f"register one with {how}")
    return NoDerivativeRule(f"no {what} rule for {name}", loc,
                            hint=f"register one with {how}, or add it to {family}")


# elementwise functions whose local derivative is infinite (or NaN) at finite arguments: sqrt and the logarithms
# at 0, a power below 1 at 0 (and its exponent's derivative, log(0)), a quotient by 0, arcsin at 1... An adjoint
# (or tangent) exactly zero there, as where the value is discarded (`np.tril(np.sqrt(d ** 2), -1)` drops the
# diagonal, d zero on it), must contribute zero, not 0 * inf = NaN: each of their contributions to an array goes
# through runtime._masked, which tests for non-finite values only (scalar code raises ZeroDivisionError instead)
def singular(op: Any) -> bool:
    """Whether op is a call of a singular function (its record's `singular`) whose derivative can be infinite here: not `x ** 2` (a constant
    exponent of at least 1) nor `x / 2.0` (a constant denominator other than 0)."""
    singular = registry.record(op.prim).singular      # (rules/record.py)
    if singular is None:
        return False
    if singular == "power" and len(op.args) == 2 and isinstance(op.args[1], Const) and isinstance(
            op.args[1].value, (int, float)) and (op.args[1].value >= 1 or op.args[1].value == 0):
        return False
    if singular == "quotient" and len(op.args) == 2 and isinstance(op.args[1], Const) and isinstance(
            op.args[1].value, (int, float)) and op.args[1].value != 0:
        return False
    return True


# (rule, the arguments differentiated, the registry's sizes) -> (how many statements the rule's straight-line copy
# has, the positions of those dead-code elimination keeps): the statements a rule's results need depend on the rule
# alone (and on which functions are pure: the registry's), not on the values it is applied to
_KEPT: dict[tuple, tuple[int, tuple[int, ...], bool]] = {}


def rule_dead_code(rule: Any, needed: list[int], block: Block) -> bool:
    """Remove from a rule's copy what the differentiated arguments' adjoints (or the tangent) do not need: found
    once per rule and arguments, then kept by position. Whether what is left spreads an adjoint lazily
    (runtime._broadcast_back: the adjoint may be smaller than its value)."""
    key = (rule, tuple(needed), registry.sizes())
    known = _KEPT.get(key)
    if known is not None and known[0] == len(block.stmts):
        block.stmts = [block.stmts[k] for k in known[1]]
        return known[2]
    straight = all(s.__class__ is Op for s in block.stmts)
    position = {id(s): k for k, s in enumerate(block.stmts)}
    count = len(block.stmts)
    eliminate_dead_code_in(block, list(block.results))
    spreads = any(isinstance(s, Op) and s.prim is runtime._broadcast_back for s in walk(block))
    if straight:
        _KEPT[key] = (count, tuple(position[id(s)] for s in block.stmts), spreads)
    return spreads


# keyword arguments that carry no derivative whatever they are given (a dtype, computed from differentiated
# arrays by a library's promotion rules: `np.asanyarray(a, dtype=xp_result_type(a, b))`)
UNDIFFERENTIATED_KEYWORDS = frozenset({"dtype"})


def keyword_position(rule: Any, name: str) -> int | None:
    """The position among a rule's arguments (after g and ans) of its parameter `name`, if it has one."""
    if rule is None:
        return None
    rule = getattr(rule, "with_keywords", rule)    # its variant for more keywords takes the same ones first
    try:
        params = list(inspect.signature(rule).parameters.values())[2:]
    except (TypeError, ValueError):
        return None
    for k, p in enumerate(params):
        if p.name == name and p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY):
            return k
    return None
