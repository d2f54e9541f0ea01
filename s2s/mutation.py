"""Objects a method call may have changed: refused where the function reads them afterwards.

`a = Acc(); a.add(x * 2); sum(a.vals)`: a method of an object known only when the code runs is called as Python
calls it, and differentiated through s2s's vjp/jvp of the bound method (s2s/desugar/derivatives.py). What the
method writes into the object (`self.vals.append(v)`) is not followed: an attribute read afterwards would be a
constant, and the derivative through it silently zero. So a read of an attribute of an object that was given, in
a method call, a value with a derivative is refused, at the read.
"""
from __future__ import annotations


from .errors import UnsupportedSyntax
from .ir import Const, Function, Op, Value, walk


def refuse_hidden_changes(fn: Function, wrt: list[int]) -> Function:
    ops = [s for s in walk(fn.body) if isinstance(s, Op)]           # in the order the code runs them
    calls = [k for k, s in enumerate(ops) if getattr(s.prim, "_s2s_effect", False) and len(s.args) > 2
             and isinstance(s.args[0], Value)]
    if not calls:
        return fn
    from .activity import varied_values
    varied = varied_values(fn, wrt)

    def differentiated(op: Op) -> bool:
        return any(isinstance(a, Value) and id(a) in varied for a in op.args[2:])

    changed: dict[int, Op] = {}
    for k, op in enumerate(ops):
        obj = op.args[0] if op.args and isinstance(op.args[0], Value) else None
        if obj is None:
            continue
        effect = getattr(op.prim, "_s2s_effect", False)
        if effect and differentiated(op):
            changed.setdefault(id(obj), op)
        elif id(obj) in changed and (op.prim is getattr or effect):
            # what the object holds now (an attribute, or a method given no differentiated value): a constant
            call = changed[id(obj)]
            method = call.args[1].value if isinstance(call.args[1], Const) else "a method"
            what = f"reads {op.args[1].value!r} of" if op.prim is getattr and isinstance(op.args[1], Const) else \
                "calls a method of"
            where = f" (line {call.loc.line})" if call.loc is not None else ""
            raise UnsupportedSyntax(
                f"{what} an object that `.{method}(...)`{where} was given a differentiated value: s2s does not "
                f"follow what a method writes into its object", op.loc,
                hint="return the value from the method and use that, or keep the list (or array) in the function")
    return fn
