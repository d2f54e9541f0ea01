"""Rules for the `math` module (Python floats)."""
import math

import numpy as np

from s2s.rules.registry import adjoint, elementwise, nondifferentiable

# ---- trigonometric


@adjoint(math.sin)
def sin(g, ans, x):
    return g * math.cos(x)


@adjoint(math.cos)
def cos(g, ans, x):
    return -g * math.sin(x)


@adjoint(math.tan)
def tan(g, ans, x):
    return g * (1 + ans * ans)


@adjoint(math.asin)
def asin(g, ans, x):
    return g / math.sqrt(1 - x * x)


@adjoint(math.acos)
def acos(g, ans, x):
    return -g / math.sqrt(1 - x * x)


@adjoint(math.atan)
def atan(g, ans, x):
    return g / (1 + x * x)


@adjoint(math.atan2)
def atan2(g, ans, y, x):
    return g * x / (x * x + y * y), -g * y / (x * x + y * y)


# ---- hyperbolic


@adjoint(math.sinh)
def sinh(g, ans, x):
    return g * math.cosh(x)


@adjoint(math.cosh)
def cosh(g, ans, x):
    return g * math.sinh(x)


@adjoint(math.tanh)
def tanh(g, ans, x):
    return g * (1 - ans * ans)


# ---- exponential and logarithmic


@adjoint(math.exp)
def exp(g, ans, x):
    return g * ans


@adjoint(math.expm1)
def expm1(g, ans, x):
    return g * (ans + 1)


@adjoint(math.exp2)
def exp2(g, ans, x):
    return g * ans * 0.6931471805599453       # ln 2


@adjoint(math.cbrt)
def cbrt(g, ans, x):
    return g / (3 * ans * ans)


@adjoint(math.log)
def log(g, ans, x, base=math.e):
    return g / (x * math.log(base)), -g * ans / (base * math.log(base))


@adjoint(math.log1p)
def log1p(g, ans, x):
    return g / (1 + x)


@adjoint(math.log2)
def log2(g, ans, x):
    return g / (x * math.log(2))


@adjoint(math.log10)
def log10(g, ans, x):
    return g / (x * math.log(10))


# ---- powers and others


@adjoint(math.sqrt)
def sqrt(g, ans, x):
    return g / (2 * ans)


@adjoint(math.pow)
def power(g, ans, x, y):
    return g * y * x ** (y - (y != 0)), g * ans * np.log(x + (x == 0))      # 0 at x = 0, as JAX and autograd


@adjoint(math.hypot)
def hypot(g, ans, x, y):
    return g * x / ans, g * y / ans


@adjoint(math.erf)
def erf(g, ans, x):
    return g * (2 / math.sqrt(math.pi)) * math.exp(-x * x)


@adjoint(math.erfc)
def erfc(g, ans, x):
    return -g * (2 / math.sqrt(math.pi)) * math.exp(-x * x)


@adjoint(math.fabs)
def fabs(g, ans, x):
    return g * math.copysign(1.0, x) if x != 0 else 0.0 * g


elementwise(math.sin, math.cos, math.tan, math.asin, math.acos, math.atan, math.atan2, math.sinh, math.cosh,
            math.tanh, math.exp, math.expm1, math.exp2, math.cbrt, math.log, math.log1p, math.log2, math.log10,
            math.sqrt, math.pow,
            math.hypot, math.erf, math.erfc, math.fabs, math.copysign)

@adjoint(math.copysign)
def copysign(g, ans, x, y):
    return g * math.copysign(1.0, x) * math.copysign(1.0, y), 0.0 * g     # piecewise constant in y


nondifferentiable(math.floor, math.ceil, math.trunc, math.isnan, math.isinf, math.isfinite,
                  math.factorial, math.gcd, math.isclose)


@adjoint(math.fmod)
def fmod(g, ans, x, y):                 # x - y * trunc(x / y); the quotient is piecewise constant
    return g, -g * ((x - ans) / y)


elementwise(math.fmod)


# ---- batching (s2s.vmap): an example's number is one element of the batch's array, so each function is NumPy's
# ufunc of the same name (rules/batching.py)

from s2s.rules.registry import batching  # noqa: E402


@batching(math.sin)
def sin_batched(axes, x):
    return np.sin(x), axes[0]


@batching(math.cos)
def cos_batched(axes, x):
    return np.cos(x), axes[0]


@batching(math.tan)
def tan_batched(axes, x):
    return np.tan(x), axes[0]


@batching(math.asin)
def asin_batched(axes, x):
    return np.arcsin(x), axes[0]


@batching(math.acos)
def acos_batched(axes, x):
    return np.arccos(x), axes[0]


@batching(math.atan)
def atan_batched(axes, x):
    return np.arctan(x), axes[0]


@batching(math.atan2)
def atan2_batched(axes, y, x):
    return np.arctan2(y, x), 0


@batching(math.sinh)
def sinh_batched(axes, x):
    return np.sinh(x), axes[0]


@batching(math.cosh)
def cosh_batched(axes, x):
    return np.cosh(x), axes[0]


@batching(math.tanh)
def tanh_batched(axes, x):
    return np.tanh(x), axes[0]


@batching(math.exp)
def exp_batched(axes, x):
    return np.exp(x), axes[0]


@batching(math.expm1)
def expm1_batched(axes, x):
    return np.expm1(x), axes[0]


@batching(math.log)
def log_batched(axes, x, base=None):
    if base is None:
        return np.log(x), 0
    return np.log(x) / np.log(base), 0


@batching(math.log1p)
def log1p_batched(axes, x):
    return np.log1p(x), axes[0]


@batching(math.log2)
def log2_batched(axes, x):
    return np.log2(x), axes[0]


@batching(math.log10)
def log10_batched(axes, x):
    return np.log10(x), axes[0]


@batching(math.sqrt)
def sqrt_batched(axes, x):
    return np.sqrt(x), axes[0]


@batching(math.exp2)
def exp2_batched(axes, x):
    return np.exp2(x), axes[0]


@batching(math.cbrt)
def cbrt_batched(axes, x):
    return np.cbrt(x), axes[0]


@batching(math.pow)
def pow_batched(axes, x, y):
    return np.power(np.asarray(x, dtype=np.float64), y), 0      # a float, as math.pow gives: 2 ** -1 is 0.5


@batching(math.hypot)
def hypot_batched(axes, x, y):
    return np.hypot(x, y), 0


@batching(math.fabs)
def fabs_batched(axes, x):
    return np.fabs(x), axes[0]


@batching(math.copysign)
def copysign_batched(axes, x, y):
    return np.copysign(x, y), 0


@batching(math.fmod)
def fmod_batched(axes, x, y):
    return np.fmod(x, y), 0


@batching(math.floor)
def floor_batched(axes, x):
    return np.asarray(np.floor(x), dtype=np.int64), axes[0]         # an int, as math.floor gives


@batching(math.ceil)
def ceil_batched(axes, x):
    return np.asarray(np.ceil(x), dtype=np.int64), axes[0]


@batching(math.trunc)
def trunc_batched(axes, x):
    return np.asarray(np.trunc(x), dtype=np.int64), axes[0]


@batching(math.isnan)
def isnan_batched(axes, x):
    return np.isnan(x), axes[0]


@batching(math.isinf)
def isinf_batched(axes, x):
    return np.isinf(x), axes[0]


@batching(math.isfinite)
def isfinite_batched(axes, x):
    return np.isfinite(x), axes[0]


# ---------------------------------------------------------------- facts (rules/record.py)

from s2s.rules.registry import declare  # noqa: E402

# integers or booleans whatever they are given (a float for every other function of math: registry.describe)
declare(math.floor, math.ceil, math.trunc, math.factorial, math.gcd, math.isqrt, math.comb, math.perm, math.lcm,
        math.isnan, math.isinf, math.isfinite, math.isclose, int_result=True)
