"""Rules for Python's operators and numeric builtins (on floats and on arrays alike), and for the NumPy
functions that are the same operations (np.add is +).

Unbroadcasting is not done here: the transform sums an adjoint back to its
argument's shape wherever broadcasting could have happened.
"""
import builtins
import math
import operator
from typing import Any

import numpy as np

from s2s import runtime
from s2s.errors import UnsupportedSyntax
from s2s.rules.registry import adjoint, elementwise, linear, nondifferentiable, result_kind_from, several_results, \
    tangent
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


@adjoint(builtins.divmod)
def divmod_adjoint(g, ans, x, y):       # (x // y, x % y): the quotient is piecewise constant
    return _unbroadcast(g[1], x, ans[1]), _unbroadcast(-g[1] * ans[0], y, ans[1])


@tangent(builtins.divmod)
def divmod_tangent(t, ans, x, y):
    return (0.0 * ans[0], t + 0.0 * ans[1]), (0.0 * ans[0], -t * ans[0])


def _divmod_results(args, kwargs):
    return ("tuple", ("array", "array"))


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


@adjoint(np.float32)
def to_lower_precision(g, ans, x):      # a rounding: its adjoint goes back in x's precision
    return np.asarray(g).astype(np.result_type(x))


@tangent(np.float32)
def to_lower_precision_tangent(t, ans, x):
    return np.asarray(t).astype(np.result_type(ans)),


elementwise(operator.add, operator.sub, operator.mul, operator.truediv, operator.pow, builtins.pow,
             operator.mod, operator.neg, operator.pos, builtins.abs, operator.abs, builtins.float, np.float64)
elementwise(np.float32)
several_results(builtins.divmod, kind=_divmod_results)


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


def _numeric_sum(kinds: list) -> None:
    """The rules above are a numeric sum's: `sum(items, start)` with a tuple or list start concatenates (one written
    in the call is the loop of `+`: s2s/frontend/desugar/reductions.py); refused where its start is one held by a
    variable (the kinds of activity analysis)."""
    def sequence(kind: Any) -> bool:
        return isinstance(kind, tuple) and kind[0] in ("tuple", "list", "list*")
    if len(kinds) > 1 and sequence(kinds[1]):
        raise UnsupportedSyntax("`sum(items, start)` with a tuple or list start concatenates the items; s2s reads that "
                                "only when the start is written in the call", None,
                                hint="write it there (`sum(pairs, [])`), or write the loop: acc = start; for item in "
                                     "items: acc = acc + item")
    return None


elementwise(builtins.max, builtins.min)
result_kind_from(builtins.sum, kind=_numeric_sum)


# ---- no derivative: integer- or boolean-valued, or piecewise constant

nondifferentiable(
    operator.floordiv, operator.lt, operator.le, operator.gt, operator.ge, operator.eq, operator.ne,
    operator.not_, operator.truth, operator.is_, operator.is_not, operator.contains,
    operator.and_, operator.or_, operator.xor, operator.invert, operator.lshift, operator.rshift,
    builtins.round, builtins.int, builtins.bool, builtins.len, builtins.range, builtins.isinstance,
    builtins.print, builtins.type, builtins.id, builtins.str, builtins.slice,
)


# ---- batching (s2s.vmap): the arithmetic operators are elementwise (no rule: their arguments broadcast along the
# batch axis, lined up); the builtins that take numbers only become NumPy's functions; indexing keeps every
# example's rows first (rules/batching.py)

from s2s.rules.batching import _batched_index, _every, _leading, _lined_up, _selected_ndim  # noqa: E402
from s2s.rules.registry import batching  # noqa: E402


@batching(builtins.float, np.float64)
def float_batched(axes, x):
    return np.asarray(x, dtype=np.float64), axes[0]


@batching(builtins.int)
def int_batched(axes, x):               # toward zero, as int() truncates
    return np.asarray(np.trunc(x), dtype=np.int64), axes[0]


@batching(builtins.bool, operator.truth)
def bool_batched(axes, x):
    return np.asarray(x, dtype=bool), axes[0]


@batching(operator.not_)
def not_batched(axes, x):
    return np.logical_not(x), axes[0]


@batching(operator.is_)
def is_batched(axes, x, y):             # the same object: one answer for the batch
    return x is y, None


@batching(operator.is_not)
def is_not_batched(axes, x, y):
    return x is not y, None


@batching(builtins.max)
def max_batched(axes, x, y):            # of two numbers (an example's): NumPy's elementwise maximum
    return np.maximum(x, y), 0


@batching(builtins.min)
def min_batched(axes, x, y):
    return np.minimum(x, y), 0


@batching(builtins.round)
def round_batched(axes, x, ndigits=None):
    if ndigits is None:                 # an int, half to even as round() rounds
        return np.asarray(np.round(x), dtype=np.int64), 0
    return np.round(x, ndigits), 0


@batching(builtins.len)
def len_batched(axes, x):               # an example's length: the same for the whole batch
    return np.shape(x)[1], None


@batching(operator.getitem)
def getitem_batched(axes, x, index, batch_size=None):
    if axes[1] is None:                 # one index for every example: after the batch axis
        return x[_leading(index)], 0
    if axes[0] is None:                 # one array, each example's index: NumPy's own indexing
        if isinstance(axes[1], tuple) and axes[1][0] is None:
            return NotImplemented
        return x[index], 0
    return x[_batched_index(index, axes[1], batch_size)], 0


@batching(runtime.setitem)
def setitem_batched(axes, x, index, value, batch_size=None):
    x = _every(x, axes[0], batch_size)
    if axes[1] is None:
        where = _leading(index)
    else:
        where = _batched_index(index, axes[1], batch_size)
    return runtime.setitem(x, where, _lined_up(value, axes[2], _selected_ndim(x, index, (0, axes[1])))), 0


@batching(_scatter)
def scatter_batched(axes, x, index, g, batch_size=None):
    x = _every(x, axes[0], batch_size)
    if axes[1] is None:
        where = _leading(index)
    else:
        where = _batched_index(index, axes[1], batch_size)
    return _scatter(x, where, _lined_up(g, axes[2], _selected_ndim(x, index, (0, axes[1])))), 0


# ---------------------------------------------------------------- facts (rules/record.py) of the operators and builtins

from s2s.rules.registry import declare  # noqa: E402

# numbers whatever they are given; numbers of numbers (the operators are, by registry.describe); not indexing
declare(builtins.len, builtins.float, builtins.int, builtins.round, builtins.bool, scalar="always")
declare(builtins.abs, builtins.min, builtins.max, builtins.pow, builtins.sum, scalar="of_scalars")
declare(operator.getitem, operator.contains, scalar=None)
declare(operator.getitem, view=True)         # a slice of an array is a view of it
declare(operator.truediv, floats=True)
# what decides a result's dtype (s2s/analysis/dtypes.py)
declare(operator.getitem, dtype_rule="same")
declare(builtins.len, builtins.int, builtins.round, math.floor, math.ceil, math.trunc, operator.floordiv,
        dtype_rule="integer")
declare(builtins.list, builtins.dict, container=True)
# the shape and dtype of the result, from the arguments' (s2s/analysis/shapes.py's rules, by name)
declare(operator.add, operator.sub, operator.mul, operator.truediv, operator.floordiv, operator.mod, operator.pow,
        operator.neg, operator.pos, operator.lt, operator.le, operator.gt, operator.ge, operator.eq, operator.ne,
        builtins.abs, shape_rule="arithmetic")
declare(builtins.len, shape_rule="length")
declare(builtins.float, builtins.int, shape_rule="to_number")
# integers the shapes decide (s2s/analysis/sizes.py): len of an array of known shape, arithmetic on such integers
declare(builtins.len, size_rule="length")
declare(operator.add, operator.sub, operator.mul, operator.floordiv, operator.neg, operator.mod, size_rule="integer")
# an adjoint is zero where a side loses; a local derivative infinite at finite arguments
declare(builtins.abs, operator.abs, builtins.max, builtins.min, masking=True)
declare(operator.pow, builtins.pow, singular="power")
declare(operator.truediv, singular="quotient")
# new memory (an ndarray of arrays), which keeps no reference to what it read
declare(operator.add, operator.sub, operator.mul, operator.truediv, operator.neg, operator.pow, fresh=True,
        copies_reads=True)
declare(operator.matmul, copies_reads=True)
declare(builtins.len, metadata=True)
# written in place into either argument (commutative) or the first; `c - t` as np.subtract(c, t, out=t)
declare(operator.add, operator.mul, commutative=True)
declare(operator.sub, ufunc=np.subtract, commutative=False)
declare(operator.truediv, ufunc=np.divide, commutative=False)
declare(operator.add, algebra="add")
# cannot raise whatever their inputs (safe to hoist before a loop that may run zero times)
declare(operator.add, operator.sub, operator.mul, operator.neg, operator.pos, never_raises=True)
# floats of floats; numbers of numbers computed on constants when the derivative is made
declare(operator.add, operator.sub, operator.mul, operator.pow, operator.mod, operator.floordiv, operator.neg,
        operator.pos, operator.matmul, keeps_floats=True)
declare(builtins.abs, builtins.min, builtins.max, builtins.float, builtins.int, builtins.pow, builtins.len, fold=True)
# complex arguments: the real rules hold (holomorphic, or linear and structural); real results whatever they get
declare(operator.add, operator.sub, operator.mul, operator.truediv, operator.neg, operator.pos, operator.pow,
        builtins.pow, operator.getitem, operator.matmul, builtins.complex, holomorphic=True)
declare(builtins.abs, operator.abs, builtins.len, builtins.float, builtins.int, builtins.round, operator.lt,
        operator.le, operator.gt, operator.ge, operator.eq, operator.ne, complex_result="real")
declare(builtins.complex, complex_result="complex")
