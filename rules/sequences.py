"""Rules for tuples and lists joined with `+` and repeated with `*` (see s2s/passes/sequences.py).

A list's adjoint is a list of its items' adjoints (0.0 for none): the adjoint of a concatenation is split
by position, that of a repetition is the sum of its copies' adjoints.
"""
import builtins

import numpy as np

from s2s import runtime
from s2s.frontend.desugar.helpers import list_insert, list_pop
from s2s.rules.helpers import _inserted_item, _listed_tangent, _placed, _uninserted, _unlisted, _unpopped
from s2s.rules.registry import adjoint, linear, nondifferentiable, several_results, tangent
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


# ---- list(xs), tuple(xs) of a tuple, a list or an array: the same items (an array's rows)

@adjoint(builtins.list, builtins.tuple)
def listed(g, ans, items):
    return _unlisted(g, items)


@tangent(builtins.list, builtins.tuple)
def listed_tangent(t, ans, items):
    return _listed_tangent(t, items, ans)


# ---- x.copy() where the kind of x is not a list or an array (a dict): the same items

@adjoint(runtime.copy_method)
def copy_method(g, ans, x):
    return g


linear(runtime.copy_method)


# ---- xs.pop(i) as a statement (s2s/ir/lower.py): the list without item i, whose adjoint gets none

@adjoint(list_pop)
def list_pop_adjoint(g, ans, items, index=-1):
    return _unpopped(g, items, index), None


linear(list_pop)
several_results(list_pop, kind=lambda args, kwargs: ("list", None))


# ---- xs.insert(i, v) (desugar/containers.py: `xs = list_insert(xs, i, v)`): v's adjoint is its place's

@adjoint(list_insert)
def list_insert_adjoint(g, ans, items, index, item):
    return _uninserted(g, items, index), None, _inserted_item(g, items, index)


@tangent(list_insert)
def list_insert_tangent(t, ans, items, index, item):
    return list_insert(t, index, 0.0), None, _placed(t, items, index)


# ---- np.r_[...] and np.c_[...]: their items reshaped, then concatenated (s2s/passes/sequences.py)

@adjoint(runtime._r_item, runtime._c_item)
def reshaped_item(g, ans, x):
    return np.reshape(g, np.shape(x))


linear(runtime._r_item, runtime._c_item)
linear(runtime._head, runtime._tail, runtime._sum_copies, runtime._joined)


# ---- a number read on the right of a swap `a[i], a[j] = a[j], a[i]` (s2s/ir/lower.py): the identity


@adjoint(runtime._element_read)
def element_read(g, ans, x):
    return g


linear(runtime._element_read)


# ---- `x.item()` (s2s/ir/lower.py): the one number of x, its adjoint in x's shape


@adjoint(runtime.item)
def item(g, ans, x):
    return np.reshape(g, np.shape(x))


linear(runtime.item)


nondifferentiable(runtime._assert_element, runtime._assert_number, runtime._assert_inexact, runtime._real_output, runtime.dict_key)      # a check that a value read from an array is a number


# ---------------------------------------------------------------- facts (rules/record.py)

from s2s.rules.registry import declare  # noqa: E402

declare(np.r_, index_builder="rows")            # np.r_[a, b]: a concatenation of at least 1-D items
declare(np.c_, index_builder="columns")         # np.c_[a, b]: along the last axis, a 1-D item as a column
