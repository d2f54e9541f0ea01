"""A function given as an argument of the differentiated function, called by its parameter's name:

    def f(x, g):                    (g: a function every call of this derivative is given, np.sin or a lambda)
        return g(x) ** 2    ->      return <the function>(x) ** 2

The derivative is specialized on which function the argument is (s2s/driver/pipeline.py: `known_arguments`
keys its cache on it, as on a string or a flag), so the call is read as a call of that function: a user's
function or lambda inlined, a function with a rule by its rule. Also where the parameter is passed on as an
argument (`h(x, g)`, `map(g, xs)`). A parameter the function rebinds is left as it is.
"""
from __future__ import annotations

import types
from typing import Any

import gast
import numpy as np

from s2s.frontend.desugar.context import Context, constant


def _functions(ctx: Context) -> dict:
    return {k: v for k, v in ctx.parsed.facts.known.items()
            if isinstance(v, (types.FunctionType, types.BuiltinFunctionType, np.ufunc)) and not ctx.assigned(k)}


def applies(ctx: Context) -> bool:
    functions = _functions(ctx)
    return bool(functions) and any(
        isinstance(a, gast.Name) and a.id in functions for call in ctx.calls for a in [call.func, *call.args])


def rewrite(ctx: Context) -> None:
    functions = _functions(ctx)
    if not functions:
        return
    for sub in gast.walk(ctx.node):
        if isinstance(sub, gast.Call):
            if isinstance(sub.func, gast.Name) and sub.func.id in functions:
                sub.func = constant(functions[sub.func.id], sub.func)
            sub.args = [constant(functions[a.id], a) if isinstance(a, gast.Name) and a.id in functions else a
                        for a in sub.args]
