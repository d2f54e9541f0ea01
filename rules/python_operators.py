"""Rules for Python's operators and numeric builtins (on floats and on arrays alike), and for the NumPy
functions that are the same operations (np.add is +).

Unbroadcasting is not done here: the transform sums an adjoint back to its
argument's shape wherever broadcasting could have happened.
"""
import builtins
import operator

import numpy as np

from s2s import runtime
from s2s.rules.registry import adjoint, elementwise, linear, nondifferentiable, tangent
from s2s.runtime import _overwritten, _scatter, _spread, _unbroadcast, _written

# ---- arithmetic


@adjoint(operator.add, np.add)
def add(g, ans, x, y):
    return g, g


@adjoint(operator.sub, np.subtract)
def sub(g, ans, x, y):
    return g, -g


@adjoint(operator.mul, np.multiply)
def mul(g, ans, x, y):
    return g * y, g * x


@adjoint(operator.truediv, np.divide)
def truediv(g, ans, x, y):
    return g / y, -g * ans / y


@adjoint(operator.pow, builtins.pow, np.power)
def power(g, ans, x, y):
    # d/dy at x = 0 is 0 (for y > 0, where ans = 0), the convention of JAX and autograd: log(x) read as 0 there;
    # d/dx of x ** 0 is 0, also at x = 0, where y * x ** (y - 1) would be 0 * inf (polynomial features at 0)
    return g * y * x ** (y - (y != 0)), g * ans * np.log(x + (x == 0))


@adjoint(operator.mod)
def mod(g, ans, x, y):
    return g, -g * (x // y)


@adjoint(operator.neg, np.negative)
def neg(g, ans, x):
    return -g


@adjoint(operator.pos, np.positive)
def pos(g, ans, x):
    return g


@adjoint(builtins.abs, operator.abs)
def absolute(g, ans, x):
    return g * np.sign(x)


@adjoint(builtins.float, np.float64)
def to_float(g, ans, x):
    return g


elementwise(operator.add, operator.sub, operator.mul, operator.truediv, operator.pow, builtins.pow,
             operator.mod, operator.neg, operator.pos, builtins.abs, operator.abs, builtins.float, np.float64)


# ---- indexing


@adjoint(operator.getitem)
def getitem(g, ans, x, index):
    return _scatter(x, index, g), None


linear(operator.getitem)


# ---- containers: lists, dicts, and arrays written into


@adjoint(runtime.list_append)
def list_append(g, ans, items, value):
    return g[:-1], g[-1]


@adjoint(runtime.setitem)
def setitem(g, ans, container, index, value):
    return _overwritten(g, index), None, _written(g, index, value)


@adjoint(builtins.sum)
def builtin_sum(g, ans, items, start=0):
    return _spread(g, items), _unbroadcast(g, start)


@adjoint(builtins.max)
def builtin_max(g, ans, x, y):          # ties split the adjoint half and half, as np.maximum does
    return g * ((x > y) + 0.5 * (x == y)), g * ((x < y) + 0.5 * (x == y))


@adjoint(builtins.min)
def builtin_min(g, ans, x, y):
    return g * ((x < y) + 0.5 * (x == y)), g * ((x > y) + 0.5 * (x == y))


@tangent(builtins.sum)
def builtin_sum_tangent(t, ans, items, start=0):
    return sum(t), t                    # the start value is not part of the tangent


elementwise(builtins.max, builtins.min)


# ---- no derivative: integer- or boolean-valued, or piecewise constant

nondifferentiable(
    operator.floordiv, operator.lt, operator.le, operator.gt, operator.ge, operator.eq, operator.ne,
    operator.not_, operator.truth, operator.is_, operator.is_not, operator.contains,
    operator.and_, operator.or_, operator.xor, operator.invert, operator.lshift, operator.rshift,
    builtins.round, builtins.int, builtins.bool, builtins.len, builtins.range, builtins.isinstance,
    builtins.print, builtins.type, builtins.id, builtins.str, builtins.slice,
)
