"""autograd's own rules for the functions made with `autograd.extend.primitive`, taken from autograd's registries.

A call of such a function is one operation: s2s does not read the primitive's body, as autograd does not trace
it. Its rules are made when s2s first lowers a call of it (`prepare`), from what `defvjp` and `defjvp` registered
(autograd.core's `primitive_vjps` and `primitive_jvps`, keyed by the primitive):

- reverse mode: the `defvjp` rule of each argument, `vjpmaker(ans, *args) -> (g -> adjoint)`, uncurried into
  `vjp(g, ans, *args)` (s2s/frontend/uncurry.py) and inlined like s2s's own rules, so that the adjoint's code is
  differentiated again (second order); None (autograd's silent zero) gives no adjoint: differentiating
  with respect to that argument is refused, naming it (the derivative is not zero);
- forward mode: the `defjvp` rule of each argument, `jvp(g, ans, *args)`, inlined; `"same"` (the primitive is
  linear in that argument) is the primitive applied to the tangent; None refused as in reverse mode;
- `unbroadcast_f(x, lambda g: ...)` (autograd's wrapper that sums the adjoint to x's shape) is read as s2s's own
  `_unbroadcast(..., x)`;
- a rule s2s cannot read (a vjp maker that returns a function made elsewhere, rules set with `defvjp_argnums`) is
  called as autograd calls it, when the derivative runs: first order only (a second derivative through it is
  refused, naming it);
- a primitive with a `defvjp` rule and no `defjvp` rule: forward mode transposes the vjp rule, which is linear in
  the gradient g (autograd's contract): the tangent J t is the gradient in g of the pairing `sum(vjp(g) * t)`,
  computed by s2s's reverse mode over the vjp rule's own code (`transposed_tangent`, when the derivative runs: one
  sweep, exact, not a difference quotient); a vjp rule s2s does not read, or a complex value, is refused;
- a primitive with a `defjvp` rule only: reverse mode is refused, naming the missing rule;
- a rule that does not take the call's arguments (autograd calls `vjpmaker(ans, *args, **kwargs)`) is refused
  when the derivative is made, at the call, naming the rule and its place.

autograd's own functions (`autograd.numpy`, `autograd.scipy`) are not taken here: s2s reads them as NumPy's and
SciPy's. `autograd.misc.fixed_points.fixed_point` has s2s's rules (rules/fixed_points.py). autograd is never
imported by this module: its registries are read from the loaded module.
"""
from __future__ import annotations

import inspect
import sys
from typing import Any

import numpy as np

from s2s import runtime
from s2s.errors import NoDerivativeRule, S2SError
from s2s.frontend.policy import is_user_function
from s2s.frontend.uncurry import inner_arity, uncurried
from s2s.rules import registry
from s2s.rules.nested import _rule

_PREPARED: dict[int, Any] = {}


def is_primitive(obj: Any) -> bool:
    return getattr(obj, "_is_autograd_primitive", False) is True and callable(obj)


def prepare(prim: Any, n_args: int, keywords: list[str], loc: Any) -> None:
    """Check that autograd's rules of prim take this call's arguments, and register s2s's rules for it, once."""
    core = sys.modules.get("autograd.core")
    raw = getattr(prim, "fun", None)
    if core is None or raw is None:
        return
    if (getattr(raw, "__module__", None) or "").startswith("autograd."):
        if getattr(raw, "__qualname__", "") == "fixed_point" and raw.__module__ == "autograd.misc.fixed_points":
            from s2s.rules import fixed_points
            fixed_points.register_autograd(prim)
        return                       # autograd.numpy and the like: read as NumPy (not by these rules)
    name = getattr(raw, "__name__", "primitive")
    vjps = _rules(core.primitive_vjps.get(prim), "vjps_dict")
    jvps = _rules(core.primitive_jvps.get(prim), "jvps_dict")
    for kind, table in (("defvjp", vjps), ("defjvp", jvps)):
        if isinstance(table, dict):
            for argnum, rule in table.items():
                _check_arity(kind, name, argnum, rule, n_args, keywords, loc, core, prim)
    made = _PREPARED.get(id(prim))
    if made is not None and made[0] is prim:
        return
    params = _parameters(raw, name, loc)
    if vjps is not None:
        registry.adjoint(prim)(_adjoint_rule(prim, name, params, vjps, core))
    if jvps is not None:
        registry.tangent(prim)(_tangent_rule(prim, name, params, jvps, core))
    elif _transposable(prim, name, vjps, core):      # forward mode: the vjp rules' code, transposed
        registry.tangent(prim)(_transposed_rule(prim, name, params, vjps, core))
        jvps = "transposed"
    if vjps is None or jvps is None:
        have, missing, mode = ("defvjp", "defjvp", "forward") if jvps is None else ("defjvp", "defvjp", "reverse")
        registry.refused(prim, reason=f"{name} (an autograd primitive) in {mode} mode: autograd has a {have} rule "
                                      f"for it and no {missing} rule (give it one with autograd.extend.{missing})")
    _PREPARED[id(prim)] = (prim,)


def _rules(entry: Any, table: str) -> Any:
    """The rules by argument of what autograd registered: a dict (defvjp, defjvp), the registered function itself
    (defvjp_argnums and the like: called as it is), or None."""
    if entry is None:
        return None
    code = getattr(entry, "__code__", None)
    if code is not None and table in code.co_freevars:
        return dict(entry.__closure__[code.co_freevars.index(table)].cell_contents)
    return entry


def _place(fn: Any) -> str:
    code = getattr(fn, "__code__", None)
    return f" ({code.co_filename}:{code.co_firstlineno})" if code is not None else ""


def _check_arity(kind: str, name: str, argnum: int, rule: Any, n_args: int, keywords: list[str], loc: Any,
                 core: Any, prim: Any) -> None:
    if _translated(rule, core, prim, argnum) is not None:
        return
    lead = ["ans"] if kind == "defvjp" else ["g", "ans"]
    try:
        signature = inspect.signature(rule)
    except (TypeError, ValueError):
        return
    rule_name = getattr(rule, "__qualname__", "the rule")
    try:
        signature.bind(*lead, *range(n_args), **{k: None for k in keywords})
    except TypeError:
        raise S2SError(f"autograd's {kind} rule for argument {argnum} of {name}, {rule_name}{_place(rule)}, takes "
                       f"{signature}; autograd calls it with {', '.join(lead)} and this call's {n_args} argument"
                       f"{'s' if n_args != 1 else ''}{' and keywords ' + ', '.join(keywords) if keywords else ''}", loc,
                       hint=f"give the rule the parameters ({', '.join(lead)}, then the primitive's arguments)") \
            from None
    if kind == "defvjp":
        arity = inner_arity(rule, _wrappers())
        if arity is not None and arity != 1:
            raise S2SError(f"autograd's defvjp rule for argument {argnum} of {name}, {rule_name}{_place(rule)}, "
                           f"returns a function of {arity} arguments; autograd calls it with the output's gradient "
                           f"alone", loc, hint="return `lambda g: ...`, a function of the gradient g")


def _translated(rule: Any, core: Any, prim: Any, argnum: int) -> str | None:
    """'zero' or 'same' when rule is what autograd made of None or "same", else None."""
    code = getattr(rule, "__code__", None)
    if code is None:
        return None
    if code is core.translate_vjp(None, prim, argnum).__code__ or code is core.translate_jvp(None, prim,
                                                                                               argnum).__code__:
        return "zero"
    if code is core.translate_jvp("same", prim, argnum).__code__:
        return "same"
    return None


def _parameters(raw: Any, name: str, loc: Any) -> list[inspect.Parameter]:
    try:
        params = list(inspect.signature(raw).parameters.values())
    except (TypeError, ValueError):
        raise S2SError(f"s2s cannot read the signature of the autograd primitive {name}", loc) from None
    if isinstance(raw, np.ufunc):       # `primitive(scipy.special.gammaincc)`: its inputs, not out=, where=...
        params = params[:raw.nin]
    if any(p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD) for p in params):
        raise S2SError(f"s2s takes autograd's rules for a primitive with a fixed signature; {name} takes "
                       f"star-arguments", loc, hint=f"give {name} named parameters")
    return params


def _signature(params: list[inspect.Parameter], values: dict) -> tuple[str, list[str]]:
    """The rule's parameters after its first two (the primitive's, with their defaults), and the names."""
    parts, names = [], []
    for k, p in enumerate(params):
        names.append(p.name)
        if p.default is p.empty:
            parts.append(p.name)
        else:
            values[f"_default{k}"] = p.default
            parts.append(f"{p.name}=_default{k}")
    return ", ".join(parts), names


def _passed(rule: Any, names: list[str], params: list[inspect.Parameter], lead: int) -> str:
    """The primitive's parameters as rule takes them after its `lead` first ones (positionally, as many as it has
    room for; keyword-only ones by name)."""
    try:
        own = list(inspect.signature(rule).parameters.values())[lead:]
    except (TypeError, ValueError):
        own = []
    room = len(names) if any(p.kind is p.VAR_POSITIONAL for p in own) else \
        sum(1 for p in own if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD))
    positional = [n for n, p in zip(names, params) if p.kind is not p.KEYWORD_ONLY][:room]
    keyword = [f"{n}={n}" for n, p in zip(names, params) if p.kind is p.KEYWORD_ONLY
               and any(q.name == n or q.kind is q.VAR_KEYWORD for q in own)]
    return ", ".join(positional + keyword)


def _wrappers() -> dict:
    """autograd's functions that wrap a vjp's lambda, with what each stands for in s2s's own code."""
    vjps = sys.modules.get("autograd.numpy.numpy_vjps")
    wrap = getattr(vjps, "unbroadcast_f", None)
    return {wrap: runtime._unbroadcast} if wrap is not None else {}


def call_vjp(maker: Any, g: Any, ans: Any, *args: Any) -> Any:
    """An autograd vjp maker s2s does not read, called as autograd calls it."""
    return maker(ans, *args)(g)


def call_argnums_vjp(registered: Any, argnum: int, g: Any, ans: Any, *args: Any) -> Any:
    """A rule registered with defvjp_argnums (or defvjp_argnum), for one argument."""
    return list(registered((argnum,), ans, args, {})(g))[0]


def call_jvp(jvp: Any, t: Any, ans: Any, *args: Any) -> Any:
    return jvp(t, ans, *args)


def call_argnums_jvp(registered: Any, argnum: int, t: Any, ans: Any, *args: Any) -> Any:
    return registered((argnum,), (t,), ans, args, {})


registry.refused(call_vjp, call_argnums_vjp, call_jvp, call_argnums_jvp,
                 reason="a second derivative through an autograd rule s2s calls as it is (a defvjp rule that does not "
                        "return `lambda g: ...` or a function it defines, or rules set with defvjp_argnums or "
                        "defjvp_argnums)")


def transposed_tangent(pairing: Any, t: Any, ans: Any, *args: Any) -> Any:
    """The tangent J t of a primitive's output from its vjp rule, vjp(g) = J^T g (linear in g): the gradient in g of
    `pairing(g, t, ans, *args) = sum(vjp(g, ans, *args) * t)`, by s2s's reverse mode over the rule's code (made when
    it first runs, once per rule), at g = 0 (any g: it is linear)."""
    if np.iscomplexobj(t) or np.iscomplexobj(ans):
        raise NoDerivativeRule(f"s2s transposes an autograd vjp rule ({pairing.__name__}) into forward mode for real "
                               f"values only; this one is complex",
                               hint="give the primitive a defjvp rule (autograd.extend.defjvp)")
    transpose = _TRANSPOSES.get(pairing)
    if transpose is None:
        transpose = _TRANSPOSES[pairing] = registry.transformation("grad")(pairing, wrt=0, mode="reverse")
    return transpose(np.zeros_like(ans) if np.ndim(ans) else 0.0, t, ans, *args)


_TRANSPOSES: dict = {}


registry.refused(transposed_tangent, reason="a second derivative through an autograd primitive's vjp rule transposed "
                                           "into forward mode (give the primitive a defjvp rule)")


def _transposable(prim: Any, name: str, vjps: Any, core: Any) -> bool:
    """Whether every vjp rule of prim is code s2s reads (or autograd's zero), so that forward mode can transpose it."""
    if not isinstance(vjps, dict) or not vjps:
        return False
    for k, maker in vjps.items():
        if maker is None or _translated(maker, core, prim, k) == "zero":
            continue
        if not _lowers(maker) or uncurried(maker, inner_first=True, name=f"{name}_vjp_{k}",
                                           wrappers=_wrappers()) is None:
            return False
    return True


def _transposed_rule(prim: Any, name: str, params: list[inspect.Parameter], vjps: dict, core: Any) -> Any:
    values: dict = {"_transposed": transposed_tangent}
    signature, names = _signature(params, values)
    every = ", ".join(names)
    results = []
    for k, arg in enumerate(names):
        maker = vjps.get(k)
        if maker is None or _translated(maker, core, prim, k) == "zero":
            results.append("None")
            continue
        pairing = _rule(f"def rule(g, t, ans, {every}):\n"
                        f"    return _sum(_vjp(g, ans, {_passed(maker, names, params, 1)}) * t)\n",
                        {"_sum": np.sum, "_vjp": uncurried(maker, inner_first=True, name=f"{name}_vjp_{k}",
                                                           wrappers=_wrappers())},
                        prim, f"vjp {k} paired with a tangent")
        pairing.__name__ = pairing.__qualname__ = f"{name}_vjp_{k}_paired"
        values[f"_pairing{k}"] = pairing
        results.append(f"_transposed(_pairing{k}, t, ans, {every})")
    text = f"def rule(t, ans, {signature}):\n    return {', '.join(results)}{',' if len(results) == 1 else ''}\n"
    return _rule(text, values, prim, "tangent")


def _adjoint_rule(prim: Any, name: str, params: list[inspect.Parameter], vjps: Any, core: Any) -> Any:
    values: dict = {"_zeros": runtime.zeros_like}
    signature, names = _signature(params, values)
    every = ", ".join(names)
    results = []
    for k, arg in enumerate(names):
        maker = vjps.get(k) if isinstance(vjps, dict) else None
        if not isinstance(vjps, dict):
            values["_registered"] = vjps
            values["_call_argnums"] = call_argnums_vjp
            results.append(f"_call_argnums(_registered, {k}, g, ans, {every})")
        elif maker is None:
            results.append("None")
        elif _translated(maker, core, prim, k) == "zero":
            results.append("None")      # autograd's zero: refused when that argument is differentiated
        else:
            inlined = uncurried(maker, inner_first=True, name=f"{name}_vjp_{k}", wrappers=_wrappers())
            if inlined is not None and _lowers(maker):
                values[f"_vjp{k}"] = inlined
                results.append(f"_vjp{k}(g, ans, {_passed(maker, names, params, 1)})")
            else:
                values[f"_maker{k}"] = maker
                values["_call_vjp"] = call_vjp
                results.append(f"_call_vjp(_maker{k}, g, ans, {_passed(maker, names, params, 1)})")
    text = f"def rule(g, ans, {signature}):\n    return {', '.join(results)}{',' if len(results) == 1 else ''}\n"
    return _rule(text, values, prim, "adjoint")


def _tangent_rule(prim: Any, name: str, params: list[inspect.Parameter], jvps: Any, core: Any) -> Any:
    values: dict = {"_zeros": runtime.zeros_like, "_prim": prim}
    signature, names = _signature(params, values)
    every = ", ".join(names)
    results = []
    for k, arg in enumerate(names):
        jvp = jvps.get(k) if isinstance(jvps, dict) else None
        if not isinstance(jvps, dict):
            values["_registered"] = jvps
            values["_call_argnums"] = call_argnums_jvp
            results.append(f"_call_argnums(_registered, {k}, t, ans, {every})")
        elif jvp is None:
            results.append("None")
        elif _translated(jvp, core, prim, k) == "zero":
            results.append("None")      # (as in reverse mode)
        elif _translated(jvp, core, prim, k) == "same":
            results.append(f"_prim({', '.join('t' if j == k else n for j, n in enumerate(names))})")
        else:
            values[f"_jvp{k}"] = jvp
            if _lowers(jvp):
                results.append(f"_jvp{k}(t, ans, {_passed(jvp, names, params, 2)})")
            else:
                values["_call_jvp"] = call_jvp
                results.append(f"_call_jvp(_jvp{k}, t, ans, {_passed(jvp, names, params, 2)})")
    text = f"def rule(t, ans, {signature}):\n    return {', '.join(results)}{',' if len(results) == 1 else ''}\n"
    return _rule(text, values, prim, "tangent")


def _lowers(fn: Any) -> bool:
    """Whether s2s reads fn as code it inlines (a Python function of the user's, or of a library outside s2s's
    list of those with rules); else it is called as it is."""
    return is_user_function(fn)
