"""s2s: source-to-source automatic differentiation for Python.

    import s2s
    df = s2s.grad(f)          # reads f's source, emits the derivative as Python source
    print(s2s.source(f))      # the generated code: readable, and runnable with NumPy alone
"""
from s2s import testing
from s2s.api import (
    __version__,
    cache_size,
    clear_cache,
    export,
    grad,
    hessian,
    hvp,
    ir,
    jacfwd,
    jacobian,
    jacrev,
    jvp,
    linearize,
    source,
    value_and_grad,
    vjp,
    vmap,
)
from s2s.driver.selfcheck import ReadingMismatch
from s2s.errors import (
    BadArgument,
    InvalidIR,
    NoDerivativeRule,
    NonScalarOutput,
    RefusedWhenRun,
    S2SError,
    SourceUnavailable,
    UnsupportedSyntax,
)
from s2s.rules.fixed_points import fixed_point
from s2s.rules.registry import adjoint, elementwise, linear, nondifferentiable, tangent
from s2s.runtime import stop_gradient
from s2s.testing.gradcheck import check_grad
from s2s.trees import register_pytree_node, tree_flatten, tree_leaves, tree_map, tree_structure, tree_unflatten
from s2s.tools.graph import graph

__all__ = [
    "__version__", "export", "grad", "value_and_grad", "jvp", "vjp", "vmap", "jacfwd", "jacrev", "linearize",
    "tree_map", "tree_leaves", "tree_flatten", "tree_unflatten", "tree_structure", "register_pytree_node", "hvp", "hessian", "jacobian", "source", "ir", "check_grad", "adjoint", "tangent",
    "nondifferentiable", "elementwise", "linear", "stop_gradient", "S2SError", "SourceUnavailable", "UnsupportedSyntax",
    "NoDerivativeRule", "NonScalarOutput", "BadArgument", "InvalidIR", "RefusedWhenRun", "ReadingMismatch",
    "testing", "graph", "cache_size", "clear_cache", "fixed_point",
]
