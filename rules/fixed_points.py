"""Fixed points differentiated by the implicit function theorem: `s2s.fixed_point` and autograd's `fixed_point`.

    x = s2s.fixed_point(f, a, x0, tol)      # iterates x = f(a, x) from x0 until two iterates are within tol

The iteration is not differentiated step by step (no stack, no unrolling): at the converged x* = f(a, x*),

- reverse mode: the adjoint v solves its own fixed-point iteration v = g + (df/dx)^T v (from v = g, as autograd
  does), and a's adjoint is (df/da)^T v;
- forward mode: the tangent w solves w = (df/da) t + (df/dx) w (from w = 0);

each with the same tolerance and distance. The products with f's Jacobians come from s2s's own derivatives of f
(s2s.vjp, s2s.jvp, made once per kind of arguments), so f is any function s2s differentiates, the memory is
constant in the number of iterations, and the derivative is as accurate as the iteration converged (a
contraction). Second order is forward mode over either: the tangent of the adjoint solves v's equation again with
the derivatives of (df/da)^T v and (df/dx)^T v (forward over reverse mode of the pairing <v, f(a, x)>), the
tangent of the tangent with f's second directional derivatives (forward over forward mode); a third order is
refused, naming it. x0 gets no derivative: x* does not depend on it.

`autograd.misc.fixed_points.fixed_point(f, a, x0, distance, tol)` (f curried: f(a)(x)) takes the same rules, with
f(a)(x) read as one function of (a, x) (s2s/frontend/uncurry.py), or called as it is when it is not of that form.
"""
from __future__ import annotations

import weakref
from typing import Any, Callable

import numpy as np

from s2s import runtime
from s2s.rules.registry import adjoint, refused, result_kind_from, tangent, transformation


def distance_max(x: Any, x_prev: Any) -> Any:
    """The largest absolute difference between two iterates."""
    return np.max(np.abs(np.asarray(x) - np.asarray(x_prev)))


def fixed_point(f: Callable, a: Any, x0: Any, tol: float, distance: Callable | None = None) -> Any:
    """The fixed point x = f(a, x), iterated from x0 until distance(x, previous x) <= tol (the largest absolute
    difference by default). Its derivatives with respect to a follow from the implicit function theorem, in
    constant memory: the iteration itself is never differentiated (rules/fixed_points.py)."""
    measure = distance if distance is not None else distance_max
    x, x_prev = f(a, x0), x0
    while measure(x, x_prev) > tol:
        x, x_prev = f(a, x), x
    return x


def _like_start(kinds: list) -> Any:
    """The kind of a fixed point: its start's (x0, the third argument)."""
    return kinds[2] if len(kinds) > 2 and kinds[2] in ("scalar", "array") else None


result_kind_from(fixed_point, kind=_like_start)


# ---------------------------------------------------------------- the iterations the rules run

def _iterate(step: Callable, start: Any, tol: float, distance: Callable | None) -> Any:
    measure = distance if distance is not None else distance_max
    x, x_prev = step(start), start
    while measure(x, x_prev) > tol:
        x, x_prev = step(x), x
    return x


def _add(u: Any, v: Any) -> Any:
    return v if u is None else u + v


_PAIRINGS: "weakref.WeakKeyDictionary[Any, tuple]" = weakref.WeakKeyDictionary()


def _pairing(f: Callable) -> tuple:
    """(h, its gradient in a, its gradient in x) for h(a, x, v) = <v, f(a, x)>: the products (df/da)^T v and
    (df/dx)^T v as gradients s2s makes (and differentiates again: forward over reverse)."""
    made = _PAIRINGS.get(f)
    if made is None:
        def h(a: Any, x: Any, v: Any) -> Any:
            return np.sum(v * f(a, x))
        grad = transformation("grad")
        made = _PAIRINGS[f] = (h, grad(h, wrt=0, mode="reverse"), grad(h, wrt=1, mode="reverse"))
    return made


def _forward(f: Callable) -> Any:
    return transformation("forward_derivative")(f, (0, 1))


def fixed_point_adjoint(f: Callable, a: Any, xs: Any, g: Any, tol: float, distance: Callable | None) -> Any:
    """a's adjoint (df/da)^T v, v = g + (df/dx)^T v at x* = xs."""
    _, grad_a, grad_x = _pairing(f)
    v = _iterate(lambda w: g + grad_x(a, xs, w), np.zeros_like(g) if isinstance(g, np.ndarray) else 0.0 * g,
                 tol, distance)
    return grad_a(a, xs, v)


def fixed_point_tangent(f: Callable, a: Any, xs: Any, t: Any, tol: float, distance: Callable | None) -> Any:
    """x*'s tangent w = (df/da) t + (df/dx) w along a's tangent t."""
    jvp = transformation("jvp")
    zero = np.zeros_like(xs) if isinstance(xs, np.ndarray) else 0.0 * xs
    return _iterate(lambda w: jvp(f, (a, xs), (t, w))[1], zero, tol, distance)


# ---------------------------------------------------------------- their tangents (second order)

def fixed_point_adjoint_tangent(f: Callable, a: Any, xs: Any, g: Any, tol: float, distance: Callable | None,
                                a_dot: Any, xs_dot: Any, g_dot: Any) -> Any:
    """The tangent of fixed_point_adjoint along (a_dot, xs_dot, g_dot): v's tangent solves
    v_dot = g_dot + D[(df/dx)^T v](a_dot, xs_dot) + (df/dx)^T v_dot, then a's adjoint moves by
    D[(df/da)^T v](a_dot, xs_dot, v_dot)."""
    jvp = transformation("jvp")
    _, grad_a, grad_x = _pairing(f)
    zero = np.zeros_like(g) if isinstance(g, np.ndarray) else 0.0 * g
    v = _iterate(lambda w: g + grad_x(a, xs, w), zero, tol, distance)
    moved = jvp(grad_x, (a, xs, v), (a_dot, xs_dot, None))[1] if a_dot is not None or xs_dot is not None else zero
    constant = _add(g_dot, moved) if g_dot is not None else moved
    v_dot = _iterate(lambda w: constant + grad_x(a, xs, w), zero, tol, distance)
    return jvp(grad_a, (a, xs, v), (a_dot, xs_dot, v_dot))[1]


def fixed_point_tangent_tangent(f: Callable, a: Any, xs: Any, t: Any, tol: float, distance: Callable | None,
                                a_dot: Any, xs_dot: Any, t_dot: Any) -> Any:
    """The tangent of fixed_point_tangent along (a_dot, xs_dot, t_dot): with w = fixed_point_tangent(...),
    w_dot = D[(df/da) t + (df/dx) w](a_dot, xs_dot) + (df/da) t_dot + (df/dx) w_dot."""
    jvp = transformation("jvp")
    zero = np.zeros_like(xs) if isinstance(xs, np.ndarray) else 0.0 * xs
    w = _iterate(lambda u: jvp(f, (a, xs), (t, u))[1], zero, tol, distance)
    moved = jvp(_forward(f), (a, xs, t, w), (a_dot, xs_dot, None, None))[1] \
        if a_dot is not None or xs_dot is not None else zero
    constant = moved
    return _iterate(lambda u: constant + jvp(f, (a, xs), (t_dot, u))[1], zero, tol, distance)


refused(fixed_point_adjoint_tangent, fixed_point_tangent_tangent,
        reason="a third derivative through a fixed point (s2s.fixed_point, autograd's fixed_point)")


# ---------------------------------------------------------------- the rules

@adjoint(fixed_point)
def fixed_point_rule(g, ans, f, a, x0, tol, distance=None):
    return None, fixed_point_adjoint(f, a, ans, g, tol, distance), runtime.zeros_like(x0), None, None


@tangent(fixed_point)
def fixed_point_tangent_rule(t, ans, f, a, x0, tol, distance=None):
    return None, fixed_point_tangent(f, a, ans, t, tol, distance), runtime.zeros_like(ans), None, None


@tangent(fixed_point_adjoint)
def fixed_point_adjoint_tangent_rule(t, ans, f, a, xs, g, tol, distance):
    return (None, fixed_point_adjoint_tangent(f, a, xs, g, tol, distance, t, None, None),
            fixed_point_adjoint_tangent(f, a, xs, g, tol, distance, None, t, None),
            fixed_point_adjoint_tangent(f, a, xs, g, tol, distance, None, None, t), None, None)


@tangent(fixed_point_tangent)
def fixed_point_tangent_tangent_rule(t_, ans, f, a, xs, t, tol, distance):
    return (None, fixed_point_tangent_tangent(f, a, xs, t, tol, distance, t_, None, None),
            fixed_point_tangent_tangent(f, a, xs, t, tol, distance, None, t_, None),
            fixed_point_tangent_tangent(f, a, xs, t, tol, distance, None, None, t_), None, None)


# ---------------------------------------------------------------- autograd's fixed_point

_AUTOGRAD: dict[int, Any] = {}


def uncurried_map(f: Callable) -> Callable:
    """autograd's f(a)(x) as a function of (a, x): read as one function when f returns a lambda or a function it
    defines (then differentiated as the user's code), else called as it is."""
    from s2s.frontend.uncurry import uncurried
    made = uncurried(f, inner_first=False)
    if made is not None:
        return made

    def call(a: Any, x: Any) -> Any:
        return f(a)(x)
    call.__qualname__ = f"{getattr(f, '__qualname__', 'f')}(a)(x)"
    return call


def autograd_adjoint(f: Callable, a: Any, xs: Any, g: Any, distance: Callable, tol: float) -> Any:
    return fixed_point_adjoint(uncurried_map(f), a, xs, g, tol, distance)


def autograd_tangent(f: Callable, a: Any, xs: Any, t: Any, distance: Callable, tol: float) -> Any:
    return fixed_point_tangent(uncurried_map(f), a, xs, t, tol, distance)


@tangent(autograd_adjoint)
def autograd_adjoint_tangent_rule(t, ans, f, a, xs, g, distance, tol):
    return (None, fixed_point_adjoint_tangent(uncurried_map(f), a, xs, g, tol, distance, t, None, None),
            fixed_point_adjoint_tangent(uncurried_map(f), a, xs, g, tol, distance, None, t, None),
            fixed_point_adjoint_tangent(uncurried_map(f), a, xs, g, tol, distance, None, None, t), None, None)


@tangent(autograd_tangent)
def autograd_tangent_tangent_rule(t_, ans, f, a, xs, t, distance, tol):
    return (None, fixed_point_tangent_tangent(uncurried_map(f), a, xs, t, tol, distance, t_, None, None),
            fixed_point_tangent_tangent(uncurried_map(f), a, xs, t, tol, distance, None, t_, None),
            fixed_point_tangent_tangent(uncurried_map(f), a, xs, t, tol, distance, None, None, t_), None, None)


def register_autograd(prim: Any) -> None:
    """s2s's rules for autograd's fixed_point(f, a, x0, distance, tol) (made when a call of it is first read)."""
    if id(prim) in _AUTOGRAD:
        return
    _AUTOGRAD[id(prim)] = prim

    result_kind_from(prim, kind=_like_start)

    @adjoint(prim)
    def autograd_fixed_point_rule(g, ans, f, a, x0, distance, tol):
        return None, autograd_adjoint(f, a, ans, g, distance, tol), runtime.zeros_like(x0), None, None

    @tangent(prim)
    def autograd_fixed_point_tangent_rule(t, ans, f, a, x0, distance, tol):
        return None, autograd_tangent(f, a, ans, t, distance, tol), runtime.zeros_like(ans), None, None

    # made when a call is read, as the rules of a derivative called inside are: not one of rules/' own
    autograd_fixed_point_rule.__module__ = autograd_fixed_point_tangent_rule.__module__ = "s2s.made_rules"
