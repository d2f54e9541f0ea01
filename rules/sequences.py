"""Rules for tuples and lists joined with `+` and repeated with `*` (see s2s/sequences.py).

A list's adjoint is a list of its items' adjoints (0.0 for none): the adjoint of a concatenation is split
by position, that of a repetition is the sum of its copies' adjoints.
"""
from s2s import runtime
from s2s.registry import adjoint, linear, tangent
from s2s.runtime import _head, _joined, _sum_copies, _tail, _zeros_like_tree


@adjoint(runtime.concat)
def concat_adjoint(g, ans, a, b):
    return _head(g, a), _tail(g, a)


@adjoint(runtime.repeat)
def repeat_adjoint(g, ans, items, count):
    return _sum_copies(g, items, count), None


@tangent(runtime.concat)
def concat_tangent(t, ans, a, b):
    return _joined(t, _zeros_like_tree(b)), _joined(_zeros_like_tree(a), t)


linear(runtime.repeat)
linear(runtime._head, runtime._tail, runtime._sum_copies, runtime._joined)
