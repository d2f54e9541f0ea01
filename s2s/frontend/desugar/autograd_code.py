"""Code written for autograd, read as the NumPy and SciPy code it is:

    import autograd.numpy as np            np.log(x)        ->  numpy.log(x)
    import autograd.scipy.stats as st      st.norm.logsf(x) ->  scipy.stats.norm.logsf(x)
    from autograd.builtins import tuple    tuple(...)       ->  builtins.tuple(...)
    from autograd import grad, elementwise_grad, value_and_grad: s2s's own derivatives made when the derivative is
    (as s2s.grad called inside a differentiated function is: inline_gradients.py)

Each function of autograd.numpy and autograd.scipy wraps the NumPy or SciPy function it is named after (autograd's
`primitive` keeps it as `.fun`); autograd.numpy's few Python helpers have NumPy's functions of the same name. A
primitive the user (or a library) defined with `@primitive` and its own `defvjp` rule is not read this way: its
rule is autograd's, which rules/autograd_primitives.py takes (issue 26).

s2s never imports autograd itself: only a function whose globals or closures name autograd's objects (autograd is
then in sys.modules) is rewritten.
"""
from __future__ import annotations

import builtins
import sys
import types
from typing import Any

import gast
import numpy as np

from s2s.frontend.desugar.context import Context, constant
from s2s.rules import registry


def applies(ctx: Context) -> bool:
    """autograd is imported, and the function's globals or closure name one of its modules or functions."""
    if "autograd" not in sys.modules or ctx.kinds.isdisjoint((gast.Name, gast.Attribute)):
        return False
    named = list(ctx.parsed.globals.values()) + [c.cell_contents for c in ctx.parsed.closure.values()
                                                if _filled(c)]
    return any(_of_autograd(v) for v in named)


def _filled(cell: Any) -> bool:
    try:
        cell.cell_contents
    except ValueError:
        return False
    return True


def _of_autograd(value: Any) -> bool:
    name = value.__name__ if isinstance(value, types.ModuleType) else getattr(value, "__module__", None)
    return isinstance(name, str) and name.split(".")[0] == "autograd"


def rewrite(ctx: Context) -> None:
    class Replace(gast.NodeTransformer):
        def visit_Attribute(self, node: gast.Attribute) -> Any:
            if isinstance(node.ctx, gast.Load):
                found, value = ctx.static(node)
                if found:
                    mapped = numpy_counterpart(value)
                    if mapped is not None:
                        return gast.copy_location(constant(mapped, node), node)
            return self.generic_visit(node)

        def visit_Name(self, node: gast.Name) -> Any:
            if isinstance(node.ctx, gast.Load) and node.id not in ctx.local_names():
                found, value = ctx.static(node)
                if found:
                    mapped = numpy_counterpart(value)
                    if mapped is not None:
                        return gast.copy_location(constant(mapped, node), node)
            return node
    for stmt in ctx.node.body:
        Replace().visit(stmt)


def numpy_counterpart(value: Any) -> Any:
    """The NumPy, SciPy, builtin or s2s object an autograd object stands for; None when it is not autograd's (or
    is a primitive autograd does not own)."""
    module = getattr(value, "__module__", None) or ""
    if isinstance(value, types.ModuleType):
        name = value.__name__
        if name == "autograd.numpy" or name.startswith("autograd.numpy."):
            return _module(name.replace("autograd.numpy", "numpy", 1))
        if name == "autograd.scipy" or name.startswith("autograd.scipy."):
            return _module(name.replace("autograd.scipy", "scipy", 1))
        return None
    if not module.startswith("autograd"):
        return None
    wrapped = getattr(value, "fun", None)
    if wrapped is not None and module == "autograd.tracer":
        # a primitive: autograd's own wrap NumPy's and SciPy's functions; a user's @primitive wraps theirs
        owner = getattr(wrapped, "__self__", None)
        where = getattr(wrapped, "__module__", None) or type(owner).__module__ if owner is not None else \
            getattr(wrapped, "__module__", None) or ""
        if (isinstance(wrapped, np.ufunc) or (where or "").split(".")[0] in ("numpy", "scipy")) \
                and _autograd_owned(value, wrapped):
            return wrapped
        return None
    if module.startswith("autograd.builtins"):
        return getattr(builtins, getattr(value, "__name__", ""), None)
    if module.startswith("autograd.numpy"):
        return getattr(np, getattr(value, "__name__", ""), None)
    if module in ("autograd.differential_operators", "autograd.wrap_util", "autograd"):
        return _derivative(value)
    return None


def _autograd_owned(value: Any, wrapped: Any) -> bool:
    """Whether the primitive value is one of autograd's own (autograd.numpy's, autograd.scipy's), not one a library
    made of a SciPy function with rules of its own (`gammaincc = primitive(scipy.special.gammaincc)` and a defvjp
    in each argument: its rules are autograd's registry's, rules/autograd_primitives.py)."""
    name = getattr(wrapped, "__name__", None)
    if not isinstance(name, str):
        return False
    known = _OWNED.get(id(value))
    if known is not None and known[0] is value:
        return known[1]
    owned = any(getattr(module, name, None) is value for key, module in list(sys.modules.items())
                if key.startswith("autograd.") and module is not None)
    _OWNED[id(value)] = (value, owned)
    return owned


_OWNED: dict[int, tuple] = {}       # id(primitive) -> (primitive, whether autograd's own)


def _module(name: str) -> Any:
    try:
        __import__(name)
        return sys.modules[name]
    except ImportError:
        return None


def _derivative(value: Any) -> Any:
    from autograd import differential_operators as ops
    table = {getattr(ops, "grad", None): grad, getattr(ops, "value_and_grad", None): value_and_grad,
             getattr(ops, "elementwise_grad", None): elementwise_grad}
    return table.get(value)


def grad(fun: Any, argnum: int = 0) -> Any:
    """autograd.grad(fun, argnum): s2s.grad(fun, wrt=argnum), made when the derivative is (inline_gradients.py)."""
    return registry.transformation("grad")(fun, wrt=argnum)


def value_and_grad(fun: Any, argnum: int = 0) -> Any:
    """autograd.value_and_grad(fun, argnum): s2s.value_and_grad(fun, wrt=argnum)."""
    return registry.transformation("value_and_grad")(fun, wrt=argnum)


def elementwise_grad(fun: Any, argnum: int = 0) -> Any:
    """autograd.elementwise_grad(fun, argnum): the gradient of sum(fun(...)) in argument argnum (for a function
    applied elementwise, each element's own derivative)."""
    import inspect
    try:
        arity = len([p for p in inspect.signature(fun).parameters.values()
                     if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)])
    except (TypeError, ValueError):
        arity = argnum + 1
    summed = _SUMMED[arity](fun)
    return registry.transformation("grad")(summed, wrt=argnum)


def _summed1(fun: Any) -> Any:
    def summed(a):
        return np.sum(fun(a))
    return summed


def _summed2(fun: Any) -> Any:
    def summed(a, b):
        return np.sum(fun(a, b))
    return summed


def _summed3(fun: Any) -> Any:
    def summed(a, b, c):
        return np.sum(fun(a, b, c))
    return summed


def _summed4(fun: Any) -> Any:
    def summed(a, b, c, d):
        return np.sum(fun(a, b, c, d))
    return summed


_SUMMED = {1: _summed1, 2: _summed2, 3: _summed3, 4: _summed4}
grad.__s2s_maker__ = value_and_grad.__s2s_maker__ = elementwise_grad.__s2s_maker__ = True  # type: ignore
