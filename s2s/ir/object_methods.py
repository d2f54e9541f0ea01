"""A method called on an argument that is an object of another library: Python's method, not NumPy's function.

Lowering reads `x.std()` as `np.std(x)` (an array's methods are its NumPy functions; the op keeps the method's name
in `Op.method`). That is exact when x is a NumPy array or number, but not for an object of another type: a pandas
Series' `s.std()` divides by n - 1 where `np.std(s)` divides by n, and a class's own `mean()` is not `np.mean`.
`python_methods(fn, param_kinds)` accepts a primal IR before the transform and its parameters' kinds, and
guarantees that such a call on a parameter whose kind is "other" (an object that is not a number, an array or a
container: the derivative is made for its type) is the method call Python makes (`method_call`, run as Python runs
it; differentiated through the bound method if what it reads is). With keyword arguments it is refused at its place.
"""
from __future__ import annotations

from s2s.errors import UnsupportedSyntax
from s2s.ir.core import Const, Function, Op, walk
from s2s.rules.nested import method_call


def python_methods(fn: Function, param_kinds: list) -> Function:
    objects = {id(p) for p, kind in zip(fn.params, param_kinds) if kind == "other"}
    if not objects:
        return fn
    for op in walk(fn.body):
        if isinstance(op, Op) and op.method is not None and op.args and id(op.args[0]) in objects:
            if op.kwargs:
                raise UnsupportedSyntax(
                    f"s2s reads `.{op.method}(...)` with keyword arguments on an object that is not a NumPy array "
                    f"only as NumPy's {op.method}, which may not be what the object's own method computes", op.loc,
                    hint=f"convert it first (`np.asarray(x).{op.method}(...)`), or pass the arguments by position")
            op.prim = method_call(len(op.args) - 1)
            op.args = [op.args[0], Const(op.method), *op.args[1:]]
            op.method = None
    return fn
