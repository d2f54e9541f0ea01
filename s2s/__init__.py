"""s2s: source-to-source automatic differentiation for Python.

    import s2s
    df = s2s.grad(f)          # reads f's source, emits the derivative as Python source
    print(s2s.source(f))      # the generated code: readable, and runnable with NumPy alone
"""
from .api import __version__, grad, ir, source, value_and_grad
from .check import check_grad
from .errors import (BadArgument, InvalidIR, NoDerivativeRule, NonScalarOutput, S2SError, SourceUnavailable,
                     UnsupportedSyntax)
from .registry import adjoint, broadcasting, nondifferentiable, tangent

__all__ = [
    "__version__", "grad", "value_and_grad", "source", "ir", "check_grad", "adjoint", "tangent",
    "nondifferentiable", "broadcasting", "S2SError", "SourceUnavailable", "UnsupportedSyntax", "NoDerivativeRule",
    "NonScalarOutput", "BadArgument", "InvalidIR",
]
