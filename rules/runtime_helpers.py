"""Rules for the helpers that derivative code calls, so that a derivative can be differentiated again.

Forward mode over the code of a gradient (a Hessian-vector product, a second derivative) meets
these helpers; they are linear in the adjoint they spread, sum or move.
"""
from s2s import runtime
from s2s.registry import linear, nondifferentiable, tangent
from s2s.runtime import _einsum_adjoint

linear(runtime._unbroadcast, runtime._expand, runtime._fill, runtime._broadcast_back, runtime._cumsum_adjoint,
       runtime._unconcatenate, runtime._unstack_joined, runtime._untile, runtime._unrepeat, runtime._diag_adjoint)
linear(runtime._scatter, argnums=(2,))
linear(runtime._spread, runtime._overwritten, runtime._item, runtime._masked, runtime._fill_tree)
linear(runtime._written, argnums=(0,))


@tangent(runtime._add)
def add_tangent(t, ans, a, b):
    return t, t
linear(runtime._matmul_left, runtime._dot_left, argnums=(0, 2))
linear(runtime._matmul_right, runtime._dot_right, argnums=(0, 1))


@tangent(runtime._einsum_adjoint)
def einsum_adjoint(t, ans, subscripts, g, a, b, k):
    # linear in g and in the operand other than k; operand k gives only its shape
    return (None, _einsum_adjoint(subscripts, t, a, b, k),
            _einsum_adjoint(subscripts, g, t, b, k) if k == 1 else None,
            _einsum_adjoint(subscripts, g, a, t, k) if k == 0 else None)


nondifferentiable(runtime._seed, runtime._shaped_like, runtime._reduced_size, runtime._axes, runtime.zeros_like,
                  runtime._zeros_like_tree,
                  runtime.stack_new, runtime._unsupported, runtime.free_name, runtime.stop_gradient)
