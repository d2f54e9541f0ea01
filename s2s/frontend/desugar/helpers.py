"""Functions the desugared code calls: they run as Python runs the construct, and carry no derivative."""
from __future__ import annotations

from typing import Any

import numpy as np

from s2s.errors import S2SError, UnsupportedSyntax
from s2s.rules import registry


def raise_exception(exc: Any, cause: Any = None) -> None:
    """`raise exc` (`from cause`): an exit of the forward sweep."""
    if cause is not None:
        raise exc from cause
    raise exc


_REFUSED_WHEN_RUN: dict = {}


def refused_when_run(message: str, loc: Any, hint: str) -> Any:
    """What stands in for an operation s2s refuses on a path that may not run (a side of a branch): a call that raises
    the refusal, with its place, when it runs. Its result would carry no derivative; it is never dropped."""
    from s2s.errors import RefusedWhenRun
    key = (message, loc, hint)
    made = _REFUSED_WHEN_RUN.get(key)
    if made is None:
        def refused(*args: Any, **kwargs: Any) -> None:
            raise RefusedWhenRun(message, loc, hint=hint)
        refused._s2s_effect = True             # type: ignore[attr-defined]  # never dropped: it raises
        refused._s2s_refused = True            # type: ignore[attr-defined]
        registry.nondifferentiable(refused)
        made = _REFUSED_WHEN_RUN[key] = refused
    return made


def assertion_failed(message: Any = None) -> None:
    """`assert test, message` when test is false."""
    if message is None:
        raise AssertionError
    raise AssertionError(message)


def format_string(template: str, *values: Any) -> str:
    """An f-string: `f"{x:.3f}"` is format_string("{:.3f}", x)."""
    return template.format(*values)


def enter(manager: Any) -> Any:
    """The entry of a `with` block."""
    return type(manager).__enter__(manager)


def exit_(manager: Any) -> None:
    """The normal exit of a `with` block."""
    type(manager).__exit__(manager, None, None, None)


_CONTAINER_READS = {"index", "count", "copy", "keys", "values", "items", "get", "tolist", "item", "conjugate"}


def call_method(obj: Any, name: str, *args: Any, **kwargs: Any) -> Any:
    """`obj.name(*args)` on an object whose type is known only when the code runs: its result is a constant.
    A method that may change a container s2s follows (a list, dict, set or array) is refused."""
    if isinstance(obj, (list, dict, set, bytearray, np.ndarray)) and name not in _CONTAINER_READS:
        raise UnsupportedSyntax(f"s2s does not support the method `.{name}()` of a {type(obj).__name__} inside a "
                                f"differentiated function: it may change the {type(obj).__name__} in place",
                                hint="build a new value instead")
    return getattr(obj, name)(*args, **kwargs)


call_method._s2s_effect = True      # type: ignore[attr-defined]  # `rng.normal()`: may change obj (optimize.is_pure)


def assert_array(value: Any, function: str) -> None:
    """Before `y += v`, read from `operator.iadd(y, v)` (writers.py): the call writes into an array (or extends
    a list), as `y += v` does; on a number or a tuple it returns a new value and leaves y as it was."""
    if not isinstance(value, (np.ndarray, list)) and not type(value).__module__.startswith(("dask", "cupy")):
        raise ValueError(f"s2s: operator.{function}(y, ...) on a {type(value).__name__} returns a new value and "
                         f"leaves y as it was; s2s reads the call as an in-place write into an array. Write "
                         f"y = operator.{function.removeprefix('i')}(y, ...) instead")


def assert_fillable(value: Any) -> None:
    """Before `y[...] = v`, read from `y.fill(v)` (fills.py): the method writes into an array; s2s reads no other
    type's `fill` as a write."""
    if not isinstance(value, np.ndarray) and not type(value).__module__.startswith(("dask", "cupy")):
        raise ValueError(f"s2s: `.fill(v)` of a {type(value).__name__}: s2s reads `y.fill(v)` as the write "
                         f"`y[...] = v` into a NumPy array, and y is not one")


assert_fillable._s2s_effect = True      # type: ignore[attr-defined]  # (it raises: never dropped)
registry.nondifferentiable(assert_fillable)


def next_position(items: Any, position: int) -> int:
    """`next(it)` read as `items[position]` (iterators.py): the position, or StopIteration where Python's `next`
    raises it (the iterator is exhausted)."""
    if position >= len(items):
        raise StopIteration
    return position


next_position._s2s_effect = True        # type: ignore[attr-defined]  # (it may raise: never dropped)
registry.nondifferentiable(next_position)


def star_call(function: Any, args: tuple, **kwargs: Any) -> Any:
    """`function(*args, **kwargs)`, a call whose star-arguments' length is known only when the code runs: Python's
    call, given no value that carries a derivative (its record refuses it otherwise)."""
    return function(*args, **kwargs)


star_call._s2s_effect = True        # type: ignore[attr-defined]  # (it may draw or write as Python runs it: kept)
registry.refused(star_call, reason="a call with star-arguments (`*args`) whose length is known only when the code "
                                   "runs, given a value that carries a derivative (s2s runs such a call as Python "
                                   "does only when no argument carries one); pass the arguments one by one, or a "
                                   "tuple displayed in the function")


def diagonal_index(a: Any) -> tuple:
    """The positions np.fill_diagonal(a, v) writes (wrap=False): a[i, i, ..., i] for i below the smallest side;
    NumPy's errors where it refuses a."""
    shape = np.shape(a)
    if len(shape) < 2:
        raise ValueError("array must be at least 2-d")
    if len(shape) > 2 and len(set(shape)) != 1:
        raise ValueError("All dimensions of input must be of equal length")
    return (np.arange(min(shape)),) * len(shape)


registry.nondifferentiable(diagonal_index)


# the method name of `f(x)` on a variable f that holds no function s2s can name: its class's __call__ where the
# variable's kind names the class (an argument object: s2s/passes/methods.py), refused otherwise
CALL_OF_A_VALUE = "__s2s_call__"


def keys_of(table: Any) -> list:
    """The keys of a dict, as a list: they carry no derivative (its values do)."""
    return list(table)


def list_pop(items: list, index: int = -1) -> list:
    """`items.pop(index)` as a statement: the list without that item (lowering binds the name to it; a list other
    names may see is refused there, as for append)."""
    if type(items) is not list:
        raise ValueError(f"s2s: .pop() on a {type(items).__name__}: s2s models it on a list only; bind the name to a "
                         f"new value instead (for a dict: d = {{k: v for k, v in d.items() if k != key}})")
    out = list(items)
    out.pop(index)
    return out


def size_of(shape: Any) -> Any:
    """The size= of a draw for the dimensions `*shape` (None for none: one number)."""
    return tuple(shape) or None


def sorted_positions(keys: list, reverse: bool = False) -> list:
    """The positions that sort keys, as sorted() orders them (stable, reverse= kept)."""
    return sorted(range(len(keys)), key=keys.__getitem__, reverse=reverse)


def zip_length(rows: Any) -> int:
    """How many tuples zip(*rows) gives: the length of the shortest row (none without rows)."""
    return min((len(row) for row in rows), default=0)


def list_insert(items: list, index: int, item: Any) -> list:
    """`items.insert(index, item)` as a new list (the desugared code assigns it back)."""
    out = list(items)
    out.insert(index, item)
    return out


def same_items(current: Any, expected: tuple) -> None:
    """A loop over a list of layers was unrolled when the derivative was made: refuse to run it on another."""
    if len(current) != len(expected) or any(a is not b for a, b in zip(current, expected)):
        raise S2SError("the list of objects this loop runs over (its layers) changed since the derivative was "
                       "made, which unrolled the loop over the old list", hint="make the derivative again")


def element_index(array: Any, first: Any, then: Any) -> tuple:
    """`array[first][then] = v` as `array[element_index(array, first, then)] = v`: the same element when array is
    a NumPy array and first an integer (or a tuple of them), array[first] then being a view of part of array."""
    firsts = first if isinstance(first, tuple) else (first,)
    if not isinstance(array, np.ndarray) or len(firsts) > np.ndim(array) or not all(
            isinstance(k, (int, np.integer)) and not isinstance(k, bool) for k in firsts):
        what = f"a {type(array).__name__}" if not isinstance(array, np.ndarray) else f"the index {first!r}"
        raise ValueError(f"s2s: a chained write `x[i][j] = v` into {what}: s2s models it only on a NumPy array "
                         f"with integer i (as x[i, j] = v); write `x[i, j] = v`, or for a list of lists build the "
                         f"rows anew")
    return firsts + (then if isinstance(then, tuple) else (then,))


def live(obj: Any) -> Any:
    """An object known when the derivative is made, read when it runs: its attributes (a model's weights)
    are read at each call, never folded into the derivative as constants."""
    return obj


# A library's function that gives the array namespace of its arguments (`xp, _ = get_namespace(X)`, then
# `xp.log(...)`, `xp.sum(...)`): lowering reads the namespace as NumPy (s2s/ir/lower.py), and this checks so when
# the derivative runs
# (SciPy's array_namespace is read as Python: it gives its NumPy namespace as a constant)
NAMESPACE_FUNCTIONS = {("sklearn.utils._array_api", "get_namespace"),
                       ("sklearn.utils._array_api", "get_namespace_and_device")}


def numpy_namespace(function: Any, *args: Any, **kwargs: Any) -> Any:
    """function(*args, **kwargs), an array namespace (or a tuple that starts with one): s2s read the code as
    NumPy's; refused when it runs if the namespace is another library's."""
    result = function(*args, **kwargs)
    space = result[0] if isinstance(result, tuple) else result
    name = getattr(space, "__name__", "")
    if not (space is np or name == "numpy" or name.endswith("array_api_compat.numpy")):
        raise ValueError(f"s2s: {getattr(function, '__qualname__', function)} gave the array namespace {name or space!r}; "
                         f"s2s reads such code with NumPy arrays (its namespace), and differentiates other "
                         f"libraries' arrays through NumPy's functions only")
    return result


# Declared without derivative (and so pure: dropped when unused): only what computes a value. The others are
# kept where they are, and refused by the transform if given an active value (call_method, list_insert).
registry.nondifferentiable(format_string, keys_of, element_index, zip_length, sorted_positions, size_of, live,
                           numpy_namespace)


def try_body(body: Any, catches: Any, *values: Any) -> Any:
    """How a `try` body ends when run as written (s2s/ir/lower_try.py): None when it completes, else the exception
    it raised, an instance of catches (any other propagates, from the user's line). The lists, dicts and arrays it
    writes into (`body.s2s_written`, by position) are given as copies: the derivative makes those writes itself."""
    written = getattr(body, "s2s_written", ())
    if written:
        augmented = getattr(body, "s2s_augmented", ())
        values = tuple(v if k in augmented and not _in_place(v) else _copied(v) if k in written else v
                       for k, v in enumerate(values))
    try:
        body(*values)
    except catches as exc:
        return exc
    return None


_IN_PLACE = ("__iadd__", "__isub__", "__imul__", "__imatmul__", "__itruediv__", "__ifloordiv__", "__imod__",
             "__ipow__", "__ilshift__", "__irshift__", "__iand__", "__ixor__", "__ior__")


def _in_place(value: Any) -> bool:
    """Whether an augmented assignment (`acc += v`) may write value in place: a type with an in-place operator (a
    number, a tuple, a Fraction have none: Python binds a new value)."""
    cls = type(value)
    return any(hasattr(cls, name) for name in _IN_PLACE)


def _copied(value: Any) -> Any:
    if isinstance(value, (list, dict, set, bytearray)):
        return type(value)(value) if type(value) in (list, dict, set, bytearray) else value.copy()
    if isinstance(value, np.ndarray):
        return value.copy()
    if isinstance(value, (tuple, str, bytes, int, float, complex, np.generic)) or value is None:
        return value
    raise ValueError(f"s2s: this `try` body writes into a {type(value).__name__}, which s2s cannot copy to run the "
                     f"body as written first (it would write twice); compute the value in the body and write it "
                     f"after the `try`")


def try_completed(failure: Any) -> bool:
    """Whether the `try` body completed (try_body gave None). Batched (s2s.vmap: try_body runs once per example,
    its failures one item each), example by example."""
    return failure is None


def each_completed(failures: Any) -> Any:
    """try_completed of each example's failure (the items of a batch, along its first axis)."""
    return np.array([f is None for f in failures], dtype=bool)


@registry.batching(try_completed)
def _try_completed_batched(axes, failure):
    return each_completed(failure), 0


registry.nondifferentiable(try_completed, each_completed)


try_body._s2s_effect = True     # type: ignore[attr-defined]  # never dropped: it raises what the body raises
try_body._s2s_again = True      # type: ignore[attr-defined]  # but run again as it is (checkpoint.py): no effect
registry.nondifferentiable(try_body)


def new_object(cls: type) -> Any:
    """`Layer(W)` in differentiated code, opened (s2s/frontend/desugar/instances.py): the object, before its
    `__init__` (called next, as a function the derivative inlines) fills it."""
    return object.__new__(cls)
