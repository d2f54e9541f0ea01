"""Shapes and dtypes of IR values, from the shapes of the arguments a derivative is specialized for.

`abstract_of(x)` is what an argument tells: an `Abstract(shape, dtype)` for a NumPy array or number (dtype a
Python type for a Python number, which NumPy treats as weak), None for anything else (containers, another
library's arrays). `infer(op, get)` applies the table of shape rules below to one operation, given a function
that returns the abstract value of an atom (None when unknown); an operation it has no rule for, or whose
inputs are unknown, gives None. Nothing here changes the IR: s2s/passes/specialize.py reads these facts.
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from s2s.ir import syntax
from s2s import runtime
from s2s.analysis import complex_values
from s2s.analysis.values import _NUMBERS, _PYTHON, Abstract, Items, abstract_of, join, shape_key  # noqa: F401
from s2s.ir.core import Atom, Const, Op
from s2s.rules import registry

def _numpy_scalar_or_array(shape: tuple, dtype: np.dtype) -> Abstract:
    return Abstract(tuple(shape), np.dtype(dtype))


def _elementwise(prim: Any, inputs: list[Abstract]) -> Abstract | None:
    """The result of an elementwise prim on inputs, remembered (it depends on the shapes and dtypes alone)."""
    try:
        key = (prim, tuple([a.key for a in inputs]))
        return _ELEMENTWISE[key]
    except KeyError:
        if len(_ELEMENTWISE) > 4096:
            _ELEMENTWISE.clear()
        found = _ELEMENTWISE[key] = _elementwise_of(prim, inputs)
        return found
    except TypeError:               # an unhashable primitive
        return _elementwise_of(prim, inputs)


_ELEMENTWISE: dict[Any, Abstract | None] = {}


def _elementwise_of(prim: Any, inputs: list[Abstract]) -> Abstract | None:
    return _result_of(lambda: prim(*(a.proto() for a in inputs)), inputs)


def _result_of(call: Callable[[], Any], given: list[Abstract]) -> Abstract | None:
    """What call() (NumPy's function on stand-ins of the given abstract values) says of the result: its shape is
    the given values' broadcast, its dtype the stand-in result's (a Python number of Python numbers stays one)."""
    try:
        shape = np.broadcast_shapes(*(a.shape for a in given))
        with np.errstate(all="ignore"):
            result = call()
    except Exception:               # noqa: BLE001 - no rule is no shape
        return None
    if isinstance(result, tuple):
        return None
    if all(a.python for a in given) and type(result) in _PYTHON:
        return Abstract((), type(result))
    return _numpy_scalar_or_array(shape, np.asarray(result).dtype)


def _elementwise_with_none(op: Op, inputs: list) -> Abstract | None:
    """An elementwise function given None for some arguments (`np.clip(x, None, hi)`): NumPy's result on the
    others' shapes and dtypes, None passed as it is."""
    given = [a for atom, a in zip(op.args, inputs) if not (type(atom) is Const and atom.value is None)]
    if not given or not all(type(a) is Abstract for a in given):
        return None
    return _result_of(lambda: op.prim(*(None if type(atom) is Const and atom.value is None else a.proto()
                                        for atom, a in zip(op.args, inputs))), given)


def _axes(axis: Any, ndim: int) -> tuple | None:
    if axis is None:
        return tuple(range(ndim))
    items = (axis,) if isinstance(axis, int) else tuple(axis) if isinstance(axis, tuple) else None
    if items is None or not all(isinstance(a, int) and -ndim <= a < ndim for a in items):
        return None
    return tuple(sorted(a % ndim for a in items))


def _reduction(op: Op, x: Abstract) -> Abstract | None:
    axis = op.args[1] if len(op.args) > 1 else op.kwargs.get("axis", Const(None))
    keepdims = op.kwargs.get("keepdims", Const(False))
    if len(op.args) > 2 or set(op.kwargs) - {"axis", "keepdims"} or not isinstance(axis, Const) \
            or not isinstance(keepdims, Const):
        return None
    axes = _axes(axis.value, x.ndim)
    if axes is None:
        return None
    try:
        dtype = op.prim(np.ones((1,) * x.ndim, x.dtype if not x.python else np.asarray(x.proto()).dtype),
                        axis=axis.value, keepdims=keepdims.value).dtype
    except Exception:               # noqa: BLE001
        return None
    shape = tuple(1 if i in axes else n for i, n in enumerate(x.shape)) if keepdims.value else \
        tuple(n for i, n in enumerate(x.shape) if i not in axes)
    return Abstract(shape, dtype)


def matmul_shape(a: tuple, b: tuple) -> tuple | None:
    if not a or not b:
        return None
    a2 = a if len(a) > 1 else (1,) + a
    b2 = b if len(b) > 1 else b + (1,)
    if a2[-1] != b2[-2]:
        return None
    try:
        batch = np.broadcast_shapes(a2[:-2], b2[:-2])
    except ValueError:
        return None
    return tuple(batch) + ((a2[-2],) if len(a) > 1 else ()) + ((b2[-1],) if len(b) > 1 else ())


def _matmul(a: Abstract, b: Abstract) -> Abstract | None:
    if a.python or b.python:
        return None
    shape = matmul_shape(a.shape, b.shape)
    return None if shape is None else Abstract(shape, np.result_type(a.dtype, b.dtype))


def _stand_in(x: Abstract) -> np.ndarray:
    """An array of x's shape and dtype that takes no memory (every element is the same one)."""
    return np.lib.stride_tricks.as_strided(np.zeros(1, x.dtype), x.shape, (0,) * x.ndim)


def _index(x: Abstract, index: Atom, get: Callable[[Atom], Abstract | None],
           full: Callable[[Atom], Any] | None = None) -> Abstract | None:
    if x.python:
        return None
    if isinstance(index, Const):
        items = index.value if isinstance(index.value, tuple) else (index.value,)
        if not all(i is None or i is Ellipsis or type(i) in (int, slice) for i in items):
            return None
        stand_in = _stand_in(x)
        try:
            return Abstract(tuple(np.shape(stand_in[index.value])), x.dtype)
        except IndexError:
            return None
    i = get(index)
    if i is not None and i.shape == () and (i.dtype is int or (not i.python and i.dtype.kind in "iu")) and x.ndim:
        return Abstract(x.shape[1:], x.dtype)
    items = full(index) if full is not None else None      # `A[i, j]`: a tuple of integers made when it runs
    if isinstance(items, Items) and items.kind == "tuple" and len(items.items) <= x.ndim and all(
            isinstance(a, Abstract) and a.shape == () and (a.dtype is int or (not a.python and a.dtype.kind in "iu"))
            for a in items.items):
        return Abstract(x.shape[len(items.items):], x.dtype)
    return None


def _helper(op: Op, inputs: list[Abstract | None]) -> Abstract | None:
    prim = op.prim
    known = all(a is not None for a in inputs)
    if prim in (runtime._expand, runtime._matmul_left, runtime._dot_left) and known:
        like = inputs[1]
        if prim is runtime._expand:
            return Abstract(like.shape, np.asarray(inputs[0].proto()).dtype)
        return None if like.python else Abstract(like.shape, np.result_type(inputs[0].proto(), inputs[2].proto()))
    if prim in (runtime._matmul_right, runtime._dot_right) and known:
        return None if inputs[2].python else \
            Abstract(inputs[2].shape, np.result_type(inputs[0].proto(), inputs[1].proto()))
    if prim is runtime._unbroadcast and known:
        g, x = inputs[0], inputs[1]
        if len(inputs) == 3 and x.shape == inputs[2].shape or g.shape == x.shape:
            return g
        if x.shape == ():
            total = np.sum(g.proto()).dtype if not g.python else np.dtype(g.dtype)
            return Abstract((), type(np.ones((), total).item())) if x.python else Abstract((), total)
        if len(inputs) == 3:
            g = Abstract(inputs[2].shape, g.dtype)
        if g.ndim < x.ndim:
            return None
        kept = g.shape[g.ndim - x.ndim:]
        return Abstract(tuple(1 if n == 1 else k for n, k in zip(x.shape, kept)), np.asarray(g.proto()).dtype)
    if prim is runtime._masked and known and len(inputs) == 2:      # np.where(g == 0, 0.0, contribution)
        c, g = inputs
        if c.shape == () and g.shape == () and (c.python or g.python):
            return None             # a number, or 0.0: the helper's own choice
        return _elementwise(np.where, [Abstract(g.shape, np.dtype(bool)), _NUMBERS[float], c])
    if prim is runtime._fill and known:
        g, x = inputs
        return g if g.shape == x.shape else Abstract(x.shape, np.result_type(g.proto(), x.proto(), np.float32))
    if prim is runtime.setitem and inputs[0] is not None and not inputs[0].python:
        return inputs[0]
    if prim is runtime._reduced_size:
        return Abstract((), int)
    if prim is runtime._broadcast_back and inputs[1] is not None and not inputs[1].python:
        x = inputs[1]
        axis, keepdims = (op.args + [Const(None), Const(False)])[2:4]
        if not (isinstance(axis, Const) and isinstance(keepdims, Const)):
            return None
        axes = _axes(axis.value, x.ndim)
        return None if axes is None else \
            Abstract(tuple(1 if i in axes else n for i, n in enumerate(x.shape)), np.result_type(x.dtype, np.float32))
    if prim is runtime._shaped_like and known:
        try:
            shape = np.broadcast_shapes(*(a.shape for a in inputs))
        except ValueError:
            return None
        return Abstract(tuple(shape), np.result_type(*(a.proto() for a in inputs)))
    if prim is runtime._scatter and inputs[0] is not None and not inputs[0].python:
        x, g = inputs[0], inputs[2]
        if g is None:               # a float adjoint of unknown kind: a float64 array stays float64
            return Abstract(x.shape, x.dtype) if x.dtype == np.float64 else None
        return Abstract(x.shape, np.result_type(x.dtype, g.proto(), np.float32))
    if prim in (runtime.zeros_like, runtime.stop_gradient) and known:
        return inputs[0] if prim is runtime.stop_gradient else Abstract(inputs[0].shape, np.asarray(
            inputs[0].proto()).dtype)
    if prim is runtime._seed and known:
        return Abstract(inputs[0].shape, np.ones_like(inputs[0].proto()).dtype)
    return None


_PLAIN: dict[Any, int] = {}


def _plain(prim: Any) -> int:
    """1 for the arithmetic operators, 2 for the math module's functions (elementwise on Python numbers), 0 else:
    their records' shape_rule, "arithmetic" or "of_numbers"."""
    try:
        return _PLAIN[prim]
    except KeyError:
        rule = registry.record(prim).shape_rule
        found = _PLAIN[prim] = 1 if rule == "arithmetic" else 2 if rule == "of_numbers" else 0
        return found
    except TypeError:
        return 0


def _as_array(op: Op, x: Abstract) -> Abstract | None:
    """`np.array(c, ndmin=1, copy=True)`: x's shape with leading ones up to ndmin (NumPy's stand-in says so), its
    dtype (a Python number's, as NumPy converts it). Only the keywords that keep the values: ndmin, copy, order."""
    given = {}
    for name, a in op.kwargs.items():
        if name not in ("ndmin", "copy", "order") or type(a) is not Const:
            return None
        given[name] = a.value
    try:
        made = op.prim(np.zeros(x.shape, np.asarray(x.proto()).dtype), **given)
    except (TypeError, ValueError):
        return None
    return Abstract(made.shape, made.dtype) if type(made) is np.ndarray else None


def _stand_ins(items: Items) -> list | None:
    """A list of zeros shaped like the items of a tuple or list (nested ones: lists), or None if one is unknown."""
    if items.kind not in ("tuple", "list"):
        return None
    found = []
    for a in items.items:
        if type(a) is Abstract:
            found.append(np.zeros(a.shape, np.asarray(a.proto()).dtype))
        elif type(a) is Items and _stand_ins(a) is not None:
            found.append(_stand_ins(a))
        else:
            return None
    return found


def _joined(op: Op, items: Items) -> Abstract | None:
    """`np.concatenate([a, b, c], axis=0)` (np.stack, ...) of arrays of known shapes: NumPy's result on stand-ins."""
    stand_in = _stand_ins(items)
    if stand_in is None or not items.items or \
            not all(type(a) is Const and name in ("axis", "dtype") for name, a in op.kwargs.items()):
        return None
    try:
        made = op.prim(stand_in,
                       **{name: a.value for name, a in op.kwargs.items()})
    except (TypeError, ValueError):
        return None
    return Abstract(made.shape, made.dtype) if type(made) is np.ndarray else None


def _split(op: Op, g: Abstract, items: Items) -> Items | None:
    """`_unconcatenate(g, [a, b, c], axis)`, the adjoints of a concatenation's pieces: the helper's result on
    stand-ins (views of g: g's dtype)."""
    axis = op.args[2] if len(op.args) == 3 else Const(0)
    if g.python or items.kind not in ("tuple", "list") or type(axis) is not Const or \
            not all(type(a) is Abstract for a in items.items):
        return None
    try:
        pieces = op.prim(np.zeros(g.shape, g.dtype), [np.zeros(a.shape, np.asarray(a.proto()).dtype)
                                                        for a in items.items], axis.value)
    except (TypeError, ValueError, IndexError):
        return None
    return Items("list", tuple(range(len(pieces))), tuple(Abstract(p.shape, p.dtype) for p in pieces))


def infer(op: Op, full: Callable[[Atom], Abstract | Items | None]) -> Abstract | Items | None:
    """The abstract value of op's (single) result, or None."""
    if len(op.outs) != 1:
        return None
    prim = op.prim
    inputs = [full(a) for a in op.args]
    if not op.kwargs:       # arithmetic, and math functions of numbers: straight to _elementwise (as below)
        plain = _plain(prim)
        if plain and all(type(a) is Abstract for a in inputs) and (plain == 1 or all(a.python for a in inputs)):
            return _elementwise(prim, inputs)
    if prim in (runtime.make_tuple, runtime.make_list) and not op.kwargs:
        return Items("tuple" if prim is runtime.make_tuple else "list", tuple(range(len(inputs))), tuple(inputs))
    if prim is syntax.SUBSCRIPT and isinstance(inputs[0], Items) and isinstance(op.args[1], Const) \
            and not op.kwargs:
        key = op.args[1].value
        if type(key) is int and inputs[0].kind != "dict" and -len(inputs[0].keys) <= key < 0:
            key += len(inputs[0].keys)
        if type(key) is slice and inputs[0].kind != "dict":     # `gates[:3]`: the items sliced
            keys = range(len(inputs[0].keys))[key]
            return Items(inputs[0].kind, tuple(range(len(keys))), tuple(inputs[0].items[k] for k in keys))
        return inputs[0].item(key) if type(key) in (int, str) else None

    def get(atom: Atom) -> Abstract | None:
        found = full(atom)
        return found if isinstance(found, Abstract) else None
    if registry.record(prim).shape_rule == "join" and len(inputs) == 1 and type(inputs[0]) is Items:
        return _joined(op, inputs[0])
    if prim is runtime.list_append and len(inputs) == 2 and type(inputs[0]) is Items and inputs[0].kind == "list" \
            and not op.kwargs:
        n = len(inputs[0].keys)         # a list built item by item (an unrolled comprehension)
        return Items("list", tuple(range(n + 1)), inputs[0].items + (inputs[1],))
    if registry.record(prim).shape_rule == "as_array" and len(inputs) == 1 and type(inputs[0]) is Items:
        return _joined(op, inputs[0])   # `np.array([a, b])` of numbers or arrays of known shapes
    if prim is runtime._unconcatenate and len(inputs) >= 2 and type(inputs[0]) is Abstract and \
            type(inputs[1]) is Items and not op.kwargs:
        return _split(op, inputs[0], inputs[1])
    if prim is runtime._item and len(inputs) == 2 and type(inputs[0]) is Items and inputs[0].kind != "dict" \
            and type(op.args[1]) is Const and type(op.args[1].value) is int and not op.kwargs:
        key = op.args[1].value          # an item of a list of adjoints (_unconcatenate's)
        return inputs[0].item(key) if 0 <= key < len(inputs[0].keys) else None
    inputs = [a if isinstance(a, Abstract) else None for a in inputs]
    fft = complex_values.shape_of(op, inputs)        # the FFTs and their rules' helpers
    if fft is not None:
        return fft
    rule = registry.record(prim).shape_rule       # (rules/record.py; the rules are below)
    if rule in ("size", "length") and len(op.args) == 1 and not op.kwargs:
        return Abstract((), int) if inputs[0] is not None and (rule == "size" or inputs[0].ndim) else None
    if rule == "to_number" and len(inputs) == 1 and inputs[0] is not None and inputs[0].shape == ():
        return Abstract((), prim)
    if prim is getattr and len(op.args) == 2 and isinstance(op.args[1], Const) and op.args[1].value == "T":
        x = inputs[0]
        return None if x is None or x.python else Abstract(x.shape[::-1], x.dtype)
    if rule == "broadcast_to" and len(op.args) == 2 and isinstance(op.args[1], Const) and inputs[0] is not None:
        return Abstract(tuple(op.args[1].value), np.asarray(inputs[0].proto()).dtype)
    if rule == "expand_dims" and len(op.args) == 2 and isinstance(op.args[1], Const) and inputs[0] is not None:
        x = inputs[0]
        return None if x.python else Abstract(np.expand_dims(_stand_in(x), op.args[1].value).shape, x.dtype)
    if rule == "like" and len(inputs) == 1 and inputs[0] is not None \
            and not op.kwargs:
        return Abstract(inputs[0].shape, np.asarray(inputs[0].proto()).dtype)
    if prim is syntax.SUBSCRIPT and inputs[0] is not None and not op.kwargs:
        return _index(inputs[0], op.args[1], get, full)
    if rule == "as_array" and len(inputs) == 1 and inputs[0] is not None and not op.kwargs:
        return inputs[0] if not inputs[0].python else Abstract((), np.asarray(inputs[0].proto()).dtype)
    if rule == "as_array" and len(inputs) == 1 and inputs[0] is not None:
        return _as_array(op, inputs[0])
    if rule == "cast" and len(op.args) == 2 and inputs[0] is not None and type(op.args[1]) is Const \
            and set(op.kwargs) <= {"copy"} and not inputs[0].python:
        try:                        # `np.astype(x, np.float64)`: x's shape, that dtype
            return Abstract(inputs[0].shape, np.dtype(op.args[1].value))
        except TypeError:
            return None
    if rule == "where" and len(inputs) == 3 and None not in inputs and not op.kwargs:
        return _elementwise(prim, inputs)
    if rule == "copy" and len(inputs) == 1 and inputs[0] is not None and not op.kwargs:
        return inputs[0] if not inputs[0].python else Abstract((), np.asarray(inputs[0].proto()).dtype)
    if prim in runtime.EMITTED_HELPERS or prim in (runtime.zeros_like, runtime._seed):
        return _helper(op, inputs)
    if not op.kwargs and any(type(a) is Const and a.value is None for a in op.args) and registry.is_elementwise(prim):
        return _elementwise_with_none(op, inputs)       # `np.clip(x, None, hi)`: a bound left out
    if any(a is None for a in inputs) or any(get(a) is None for a in op.kwargs.values()
                                              if not isinstance(a, Const)):
        return None
    if rule == "reduction" and inputs:
        return _reduction(op, inputs[0])
    if op.kwargs:
        return None
    if prim is syntax.BINARY["@"] and len(inputs) == 2:
        return _matmul(*inputs)
    if rule == "dot" and len(inputs) == 2:
        if inputs[0].ndim == 0 or inputs[1].ndim == 0:
            return _elementwise(syntax.BINARY["*"], inputs)
        return _matmul(*inputs) if max(inputs[0].ndim, inputs[1].ndim) <= 2 else None
    if rule == "transpose" and len(inputs) == 1 and not inputs[0].python:
        return Abstract(inputs[0].shape[::-1], inputs[0].dtype)
    if rule == "arithmetic" or registry.is_elementwise(prim):
        return _elementwise(prim, inputs)
    if rule == "of_numbers" and all(a.python for a in inputs):
        return _elementwise(prim, inputs)
    return None


__all__ = ["Abstract", "AnyShape", "Items", "abstract_of", "infer", "join", "matmul_shape",
           "shape_key"]


class AnyShape(np.ndarray):
    """An example array that stands for arrays of every shape (the CLI's --arrays without --args): a derivative
    made for it keeps the helpers that decide at run time."""
