"""The map between Python's syntax and the IR's primitives: `a + b` is operator.add, `-x` operator.neg, `a < b`
operator.lt, `k in d` operator.contains, `x[i]` operator.getitem, `x.a` getattr.

The lowering reads it one way (s2s/ir/lower.py: syntax to primitives), the emitter the other (s2s/emit/python.py:
primitives to syntax), and a pass that writes an operator asks for it here (`UNARY["-"]`). With the lowering,
this is the one place under s2s/ that names library functions; everything else reads their records
(rules/record.py).
"""
from __future__ import annotations

import operator

import numpy as np

# the binary operators: symbol -> primitive, and astor's precedence of each
BINARY = {"+": operator.add, "-": operator.sub, "*": operator.mul, "/": operator.truediv, "//": operator.floordiv,
          "%": operator.mod, "**": operator.pow, "@": operator.matmul, "&": operator.and_, "|": operator.or_,
          "^": operator.xor, "<<": operator.lshift, ">>": operator.rshift}
PRECEDENCE = {"+": 47, "-": 47, "*": 49, "/": 49, "//": 49, "%": 49, "**": 55, "@": 49, "&": 43, "|": 39, "^": 41,
              "<<": 45, ">>": 45}
UNARY = {"-": operator.neg, "+": operator.pos, "not": operator.not_, "~": operator.invert}
UNARY_PRECEDENCE = {"-": 53, "+": 53, "not": 35, "~": 53}
COMPARE = {"<": operator.lt, "<=": operator.le, ">": operator.gt, ">=": operator.ge, "==": operator.eq,
           "!=": operator.ne, "is": operator.is_, "is not": operator.is_not}
CONTAINS = operator.contains        # `k in d` is contains(d, k); `not in` its negation
SUBSCRIPT = operator.getitem        # `x[i]`
ATTRIBUTE = getattr                 # `x.a`
# NumPy's ufuncs that are an operator (np.add is +): written as the operator where the emitter can
SAME_AS = {np.add: operator.add, np.subtract: operator.sub, np.multiply: operator.mul, np.divide: operator.truediv}
