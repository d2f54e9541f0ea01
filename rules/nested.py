"""Rules made when the derivative is: for a derivative s2s made, called inside a function being differentiated (`dloglike = s2s.grad(loglike)`,
then `dloglike(r, p(r))`): a call of it is an operation whose rules are the derivative's own derivatives,
made by s2s from the derivative's IR when they first run (s2s.vjp and s2s.jvp of it: reverse and forward
mode over the gradient's generated code). So Newton's method on a gradient differentiates as written.
"""
from __future__ import annotations

import linecache
import types
import weakref
from typing import Any

import gast

from s2s.errors import UnsupportedSyntax
from s2s.frontend.tree import Facts, Synthetic, register_synthetic
from s2s.rules import registry


def adjoint_of_derivative(derivative: Any, g: Any, *args: Any) -> tuple:
    """The adjoints of a call of a gradient, d = grad(f, wrt=k): the gradient is symmetric's row, so the adjoint
    of argument j is d/de grad_j f(args + e g at k), forward mode over the gradient of every float argument (as
    s2s.hvp computes a Hessian-vector product) rather than reverse mode over the gradient's code."""
    grad, jvp = registry.transformation("grad"), registry.transformation("jvp")
    fn, options = derivative.__s2s__
    if hasattr(fn, "__s2s__"):            # a derivative of a derivative: reverse mode over its code
        return registry.transformation("vjp")(derivative, *args)[1](g)
    wrt = _differentiable(args)
    key = (wrt, options.optimize)
    full = _FULL_GRADIENTS.setdefault(derivative, {}).get(key)
    if full is None:
        full = _FULL_GRADIENTS[derivative][key] = grad(fn, wrt=wrt, mode="reverse", optimize=options.optimize)
    tangents: list = [None] * len(args)
    tangents[options.wrt[0]] = g
    directional = jvp(full, args, tangents)[1]
    if len(wrt) == 1 and not isinstance(directional, (tuple, list)):
        directional = (directional,)        # the tangent of a gradient of one argument: one number or array
    adjoints = dict(zip(wrt, directional))
    return tuple(adjoints.get(i) for i in range(len(args)))


_FULL_GRADIENTS: "weakref.WeakKeyDictionary[Any, dict]" = weakref.WeakKeyDictionary()


def tangent_of_derivative(derivative: Any, t: Any, index: int, *args: Any) -> Any:
    tangents = [None] * len(args)
    tangents[index] = t
    return registry.transformation("jvp")(derivative, args, tangents)[1]


def prepare(derivative: Any, loc: Any) -> None:
    """Register the rules of a call of derivative, once."""
    if registry.find_adjoint(derivative) is not None:
        return
    fn, options = derivative.__s2s__
    if hasattr(options, "batched_ir"):          # a function s2s.vmap made: its vjp and jvp, when they first run
        _prepare_batched(derivative, fn)
        return
    if options.several and options.mode in ("reverse", "auto") and not (options.with_value or options.has_aux):
        name = getattr(fn, "__name__", "f")
        firsts = ", ".join(f"d{k} = s2s.grad({name}, wrt={k})" for k in options.wrt[:2])
        raise UnsupportedSyntax(
            f"s2s differentiates through a call of a gradient with respect to one argument; this one "
            f"({derivative.__qualname__}) is with respect to several (wrt={options.wrt}) and returns a tuple", loc,
            hint=f"make one gradient per argument at module level ({firsts}) and call each")
    if options.mode not in ("reverse", "auto") or options.with_value or options.has_aux or options.several:
        raise UnsupportedSyntax(
            f"s2s differentiates through a call of a gradient it made (s2s.grad(f)), not of this derivative "
            f"({derivative.__qualname__})", loc, hint="call s2s.grad(f) inside, and differentiate that")
    root = fn
    while hasattr(root, "__s2s__"):
        root = root.__s2s__[0]
    n = root.__code__.co_argcount
    params = ", ".join(f"a{i}" for i in range(n))
    defaults = root.__defaults__ or ()         # `dloss(w)` with lam left to its default
    first = n - len(defaults)
    signature = ", ".join(f"a{i}" if i < first else f"a{i}=_default{i}" for i in range(n))
    adjoint_text = (f"def rule(g, ans, {signature}):\n    adjoints = _adjoint(_derivative, g, {params})\n"
                    f"    return {', '.join(f'adjoints[{i}]' for i in range(n))}{',' if n == 1 else ''}\n")
    tangent_text = (f"def rule(t, ans, {signature}):\n    return " +
                    ", ".join(f"_tangent(_derivative, t, {i}, {params})" for i in range(n)) +
                    ("," if n == 1 else "") + "\n")
    values = {"_adjoint": adjoint_of_derivative, "_tangent": tangent_of_derivative, "_derivative": derivative,
              **{f"_default{first + i}": d for i, d in enumerate(defaults)}}
    registry.adjoint(derivative)(_rule(adjoint_text, values, derivative, "adjoint"))
    registry.tangent(derivative)(_rule(tangent_text, values, derivative, "tangent"))


def adjoint_of_batched(batched: Any, g: Any, *args: Any) -> tuple:
    """The adjoints of a call of a function s2s.vmap made: s2s.vjp of it (reverse mode over its batched code)."""
    wrt = _differentiable(args)
    adjoints = list(registry.transformation("vjp")(batched, *args, wrt=wrt)[1](g)) if wrt else []
    return tuple(adjoints.pop(0) if i in wrt else None for i in range(len(args)))


def _prepare_batched(batched: Any, fn: Any) -> None:
    root = fn
    while hasattr(root, "__s2s__"):
        root = root.__s2s__[0]
    n = root.__code__.co_argcount
    params = ", ".join(f"a{i}" for i in range(n))
    adjoint_text = (f"def rule(g, ans, {params}):\n    adjoints = _adjoint(_derivative, g, {params})\n"
                    f"    return {', '.join(f'adjoints[{i}]' for i in range(n))}{',' if n == 1 else ''}\n")
    tangent_text = (f"def rule(t, ans, {params}):\n    return " +
                    ", ".join(f"_tangent(_derivative, t, {i}, {params})" for i in range(n)) +
                    ("," if n == 1 else "") + "\n")
    values = {"_adjoint": adjoint_of_batched, "_tangent": tangent_of_derivative, "_derivative": batched}
    registry.adjoint(batched)(_rule(adjoint_text, values, batched, "adjoint"))
    registry.tangent(batched)(_rule(tangent_text, values, batched, "tangent"))


registry.refused(adjoint_of_batched, reason="a second derivative through a batched function called inside")


# pure (a call whose result is not used is dead code: a tangent rule's contributions of the arguments without a
# tangent), and not differentiated again (a third derivative through a gradient called inside)
registry.refused(adjoint_of_derivative, tangent_of_derivative,
                 reason="a third derivative through a gradient called inside the function")


def _rule(text: str, values: dict, derivative: Any, kind: str) -> types.FunctionType:
    filename = f"<s2s: {kind} rule of {derivative.__qualname__}>"
    linecache.cache[filename] = (len(text), None, text.splitlines(keepends=True), filename)
    namespace: dict = {"__name__": "s2s.made_rules", **values}      # made, not one of rules/: outside the rule table
    exec(compile(text, filename, "exec"), namespace)
    rule = namespace["rule"]
    node = gast.parse(text).body[0]

    class Constants(gast.NodeTransformer):
        def visit_Name(self, sub: gast.Name) -> Any:
            if sub.id in values and isinstance(sub.ctx, gast.Load):
                return gast.copy_location(gast.Constant(value=values[sub.id], kind=None), sub)
            return sub
    register_synthetic(rule, Synthetic(Constants().visit(node), filename, Facts()))
    return rule


# ---------------------------------------------------------------- methods of objects known only at run time

def _differentiable(args: tuple) -> tuple[int, ...]:
    from s2s.analysis.values import non_float_leaf
    return tuple(i for i, a in enumerate(args) if non_float_leaf(a) is None)


def adjoint_of_method(obj: Any, name: str, g: Any, *args: Any) -> tuple:
    """The adjoints of a method call's arguments: s2s's vjp of the bound method, made when it first runs."""
    wrt = _differentiable(args)
    adjoints = list(registry.transformation("vjp")(getattr(obj, name), *args, wrt=wrt)[1](g)) if wrt else []
    return tuple(adjoints.pop(0) if i in wrt else None for i in range(len(args)))


def tangent_of_method(obj: Any, name: str, t: Any, index: int, *args: Any) -> Any:
    tangents = [None] * len(args)
    tangents[index] = t
    return registry.transformation("jvp")(getattr(obj, name), args, tangents)[1]


# pure (s2s/driver/mutation.py checks that a method given a differentiated value writes nothing): the tangent of an
# argument without one is dead code, never a jvp run with another argument's tangent
registry.refused(adjoint_of_method, tangent_of_method,
                 reason="a second derivative through a method of an object known only when the code runs")

_METHOD_CALLS: dict[int, Any] = {}


def method_call(arity: int) -> Any:
    """`obj.name(a0, ..., a{arity-1})` for an object whose type is known only when the code runs: Python's call,
    with rules that differentiate the bound method itself (s2s.vjp / s2s.jvp of it) when it first runs."""
    made = _METHOD_CALLS.get(arity)
    if made is not None:
        return made
    from s2s.frontend.desugar.helpers import call_method

    def call(obj: Any, name: str, *args: Any) -> Any:
        return call_method(obj, name, *args)
    call.__name__ = call.__qualname__ = f"method_call_{arity}"
    call._s2s_effect = True             # type: ignore[attr-defined]  # `rng.normal()`: a draw, never merged or dropped
    params = ", ".join(f"a{i}" for i in range(arity))
    comma = ", " if arity else ""
    adjoint_text = (f"def rule(g, ans, obj, name{comma}{params}):\n"
                    f"    adjoints = _adjoint(obj, name, g{comma}{params})\n"
                    f"    return None, None{comma}{', '.join(f'adjoints[{i}]' for i in range(arity))}\n")
    tangent_text = (f"def rule(t, ans, obj, name{comma}{params}):\n    return None, None{comma}" +
                    ", ".join(f"_tangent(obj, name, t, {i}{comma}{params})" for i in range(arity)) + "\n")
    values = {"_adjoint": adjoint_of_method, "_tangent": tangent_of_method}
    registry.adjoint(call)(_rule(adjoint_text, values, call, "adjoint"))
    registry.tangent(call)(_rule(tangent_text, values, call, "tangent"))
    draws = registry.record(call_method).batch          # s2s.vmap: rng.normal(0.0, 1.0) draws per example
    if draws is not None:
        registry.batching(call)(draws)
    _METHOD_CALLS[arity] = call
    return call
