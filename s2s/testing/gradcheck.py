"""Numerical gradient checking, as the seed describes: central differences per
coordinate, and a random-direction test δᵀ∇f ≈ (f(x+εδ) − f(x−εδ)) / 2ε."""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from s2s.driver.selfcheck import modes_compared_by_caller


def _as_array(value: Any) -> np.ndarray:
    return np.array(value, dtype=np.float64)


def _with(args: tuple, i: int, value: Any) -> tuple:
    return args[:i] + (value,) + args[i + 1:]


def _like(original: Any, array: np.ndarray) -> Any:
    if isinstance(original, np.ndarray):
        return array.astype(original.dtype)
    return float(array)


def numerical_gradient(f: Callable, args: tuple, i: int, eps: float) -> np.ndarray:
    """Central differences (f(x + εe_k) − f(x − εe_k)) / 2ε for each coordinate k of argument i."""
    x = _as_array(args[i])
    result = np.zeros_like(x)
    for k in np.ndindex(x.shape):
        plus, minus = x.copy(), x.copy()
        plus[k] += eps
        minus[k] -= eps
        f_plus = float(f(*_with(args, i, _like(args[i], plus))))
        f_minus = float(f(*_with(args, i, _like(args[i], minus))))
        result[k] = (f_plus - f_minus) / (2 * eps)
    return result


def _leaves(value: Any, path: str = "") -> list[tuple[str, Any]]:
    """The numbers and arrays inside a value, with where they sit: [("['W1']", array), ...]."""
    if isinstance(value, dict):
        return [leaf for k, v in value.items() for leaf in _leaves(v, f"{path}[{k!r}]")]
    if isinstance(value, (tuple, list)):
        return [leaf for k, v in enumerate(value) for leaf in _leaves(v, f"{path}[{k}]")]
    return [(path, value)]


def _replace(value: Any, path: str, new: Any) -> Any:
    """value with the leaf at path replaced by new (containers copied, never changed in place)."""
    if not path:
        return new
    if isinstance(value, dict):
        for k, v in value.items():
            if path.startswith(f"[{k!r}]"):
                return {**value, k: _replace(v, path[len(f"[{k!r}]"):], new)}
    for k, v in enumerate(value):
        if path.startswith(f"[{k}]"):
            items = list(value)
            items[k] = _replace(v, path[len(f"[{k}]"):], new)
            if isinstance(value, tuple):        # a namedtuple stays one
                return type(value)(*items) if hasattr(type(value), "_fields") else tuple(items)
            return items
    raise KeyError(path)


@modes_compared_by_caller
def check_grad(f: Callable, *args: Any, wrt: Any = 0, rtol: float = 1e-5, atol: float = 1e-6,
               eps: float = 1e-6, seed: int = 0) -> Any:
    """Compare s2s.grad(f, wrt) at args with central differences; return the gradient.

    Arguments may be floats, arrays, or tuples, lists and dicts of them (each number is checked).
    Raises AssertionError naming the argument and coordinate of the worst mismatch.
    """
    from s2s.api import _param_names, _resolve_wrt, grad

    indices, several = _resolve_wrt(f, wrt)
    gradient = grad(f, wrt)(*args)
    grads = gradient if several else (gradient,)
    names = _param_names(f)             # (f may be a derivative s2s made: the parameters of its function)
    for i, g in zip(indices, grads):
        leaves, gradient_leaves = _leaves(args[i]), _leaves(g)
        if [p for p, _ in leaves] != [p for p, _ in gradient_leaves]:
            raise AssertionError(f"gradient for {names[i]!r} has another structure than the argument")
        for (path, leaf), (_, g_leaf) in zip(leaves, gradient_leaves):
            def leaf_f(*leaf_args: Any, _path: str = path, _i: int = i) -> Any:
                return f(*(leaf_args[:_i] + (_replace(args[_i], _path, leaf_args[_i]),) + leaf_args[_i + 1:]))
            leaf_args = args[:i] + (leaf,) + args[i + 1:]
            _check_one(leaf_f, leaf_args, i, g_leaf, f"{names[i]!r}{path}", f.__qualname__, rtol, atol, eps, seed)


def _check_one(f: Callable, args: tuple, i: int, g: Any, name: str, qualname: str, rtol: float, atol: float,
               eps: float, seed: int) -> None:
    """Check the gradient g of f for argument i (a float or an array) per coordinate and along a direction."""
    g_array = _as_array(g)
    x_shape = np.shape(args[i])
    if g_array.shape != x_shape:
        raise AssertionError(f"gradient for {name} has shape {g_array.shape}, the argument {x_shape}")
    expected = numerical_gradient(f, args, i, eps)
    error = np.abs(g_array - expected) - (atol + rtol * np.abs(expected))
    if np.any(error > 0) or np.any(np.isnan(g_array) != np.isnan(expected)):
        k = np.unravel_index(int(np.nanargmax(error)) if np.any(error > 0) else 0, x_shape) if x_shape else ()
        raise AssertionError(f"gradient of {qualname} for {name}{list(k) if k else ''}: s2s gives "
                             f"{g_array[k]!r}, central differences give {expected[k]!r}")
    rng = np.random.default_rng(seed)
    direction = rng.standard_normal(x_shape)
    direction /= max(np.linalg.norm(direction), 1e-12)
    x = _as_array(args[i])
    f_plus = float(f(*_with(args, i, _like(args[i], x + eps * direction))))
    f_minus = float(f(*_with(args, i, _like(args[i], x - eps * direction))))
    along = (f_plus - f_minus) / (2 * eps)
    predicted = float(np.sum(g_array * direction))
    if abs(predicted - along) > atol + rtol * abs(along) * 10 + 10 * rtol * np.linalg.norm(g_array):
        raise AssertionError(f"directional derivative of {qualname} for {name}: s2s gives "
                             f"{predicted!r}, central differences give {along!r}")
