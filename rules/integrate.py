"""Rules for scipy.integrate.odeint (registered when SciPy is installed).

The user's `func` is differentiated by s2s itself when the derivative runs: s2s.vjp and s2s.jvp of
func (made once per kind of arguments, then taken from s2s's cache) give the products with its
Jacobians that the two ODEs below need.

Reverse mode is the adjoint method, as autograd does it (Froehlich, Loos and Hasenauer, "Scalable
inference of ordinary differential equation models of biochemical processes", 2017, sec. 2.4.2):
the state is augmented with the adjoints of y, of t and of the args, [y, a, a_t, a_args], and
solved backwards from each output time to the one before, with da/dt = -a df/dy,
da_t/dt = -a df/dt, da_args/dt = -a df/dargs; the adjoint of an output time is g_i . f(y_i, t_i).
Forward mode solves the forward sensitivities: [y, s] with ds/dt = df/dy s + df/dargs dargs.
Both ODEs are solved by odeint with the call's own tolerances (rtol, atol, mxstep, ...), so the
derivative is as accurate as the solution.

Second order is forward mode over either: the tangent of the adjoint sweep solves each adjoint ODE with
its forward sensitivities, and the tangent of the forward sensitivities solves the sensitivity ODE with
its own; both right-hand sides take func's second derivatives from s2s (its jvp of the gradient of
a . f). Reverse mode over these helpers, and third order, are refused when the derivative is made.
"""
import numpy as np
import scipy.integrate

from s2s.errors import UnsupportedSyntax
from s2s.rules import registry
from s2s.rules.registry import UNKNOWN, adjoint, refused, several_results, tangent

# the keyword arguments of odeint that set the solver, passed on to the ODEs of the derivatives
_SOLVER = ("rtol", "atol", "tcrit", "h0", "hmax", "hmin", "ixpr", "mxstep", "mxhnil", "mxordn", "mxords")


@adjoint(scipy.integrate.odeint)
def odeint(g, ans, func, y0, t, args=(), Dfun=None, col_deriv=0, full_output=0, ml=None, mu=None, rtol=None,
           atol=None, tcrit=None, h0=0.0, hmax=0.0, hmin=0.0, ixpr=0, mxstep=0, mxhnil=0, mxordn=12, mxords=5,
           printmessg=0, tfirst=False):
    adjoints = _odeint_adjoint(g, ans, func, y0, t, args, tfirst,
                               (rtol, atol, tcrit, h0, hmax, hmin, ixpr, mxstep, mxhnil, mxordn, mxords))
    return None, adjoints[0], adjoints[1], adjoints[2]


@tangent(scipy.integrate.odeint)
def odeint_tangent(t_, ans, func, y0, t, args=(), Dfun=None, col_deriv=0, full_output=0, ml=None, mu=None,
                   rtol=None, atol=None, tcrit=None, h0=0.0, hmax=0.0, hmin=0.0, ixpr=0, mxstep=0, mxhnil=0,
                   mxordn=12, mxords=5, printmessg=0, tfirst=False):
    solver = (rtol, atol, tcrit, h0, hmax, hmin, ixpr, mxstep, mxhnil, mxordn, mxords)
    return (None, _odeint_tangent(ans, func, y0, t, args, tfirst, solver, t_, None, None),
            _odeint_tangent(ans, func, y0, t, args, tfirst, solver, None, t_, None),
            _odeint_tangent(ans, func, y0, t, args, tfirst, solver, None, None, t_))


# ---- the helpers the rules call (plain Python, run by the derivative; not copied into it)


def _solver_options(solver):
    return {name: value for name, value in zip(_SOLVER, solver)}


def _call_args(func_args, y, t, tfirst):
    """func's arguments, and the positions of y and t among them."""
    return ((t, y) if tfirst else (y, t)) + tuple(func_args), (1, 0) if tfirst else (0, 1)


def _float_leaf(a):
    return isinstance(a, (float, np.floating)) or isinstance(a, np.ndarray) and a.dtype.kind == "f"


def _leaves(value):
    """The floats and float arrays of value, in order (inside tuples, lists and dicts: a neural ODE's parameters,
    a list of (W, b) pairs)."""
    if _float_leaf(value):
        return [value]
    if isinstance(value, (tuple, list)):
        return [leaf for v in value for leaf in _leaves(v)]
    if isinstance(value, dict):
        return [leaf for v in value.values() for leaf in _leaves(v)]
    return []


def _differentiable(func_args):
    """The positions (among func's own args) of the arguments holding floats (or float arrays, or tuples, lists
    and dicts of them): the others get no adjoint."""
    return tuple(k for k, a in enumerate(func_args) if _leaves(a))


def _size(likes):
    return sum(np.size(leaf) for like in likes for leaf in _leaves(like))


def _adjoint_leaves(adjoint, like):
    """The adjoint's entries for like's float leaves, in _leaves' order (a missing one, None or 0.0, as zeros)."""
    if _float_leaf(like):
        return [np.zeros(np.size(like)) if adjoint is None or np.ndim(adjoint) < np.ndim(like) and not np.any(
            adjoint) else np.ravel(np.asarray(adjoint, dtype=float)) + np.zeros(np.size(like))]
    if isinstance(like, (tuple, list)):
        items = adjoint if isinstance(adjoint, (tuple, list)) else [None] * len(like)
        return [leaf for a, v in zip(items, like) for leaf in _adjoint_leaves(a, v)]
    if isinstance(like, dict):
        items = adjoint if isinstance(adjoint, dict) else {}
        return [leaf for k, v in like.items() for leaf in _adjoint_leaves(items.get(k), v)]
    return []


def _flat_like(adjoints, likes):
    """The adjoints (or tangents) of likes as one float vector, in _leaves' order."""
    parts = [leaf for a, like in zip(adjoints, likes) for leaf in _adjoint_leaves(a, like)]
    return np.concatenate(parts) if parts else np.zeros(0)


def _rebuilt(like, take):
    """like's structure, each float leaf replaced by take(leaf), anything else by 0.0 (no adjoint)."""
    if _float_leaf(like):
        return take(like)
    if isinstance(like, (tuple, list)):
        items = [_rebuilt(v, take) for v in like]
        return type(like)(*items) if hasattr(type(like), "_fields") else type(like)(items)
    if isinstance(like, dict):
        return {k: _rebuilt(v, take) for k, v in like.items()}
    return 0.0


def _tangent_like(t, like):
    """A tangent of like with zeros of its leaves' shapes where t gives none (None or 0.0), as s2s.jvp takes it."""
    if _float_leaf(like):
        if t is None or np.ndim(t) < np.ndim(like) and not np.any(t):
            return np.zeros_like(like) if isinstance(like, np.ndarray) else 0.0
        return t
    if isinstance(like, (tuple, list)):
        items = t if isinstance(t, (tuple, list)) else [None] * len(like)
        made = [_tangent_like(a, v) for a, v in zip(items, like)]
        return type(like)(*made) if hasattr(type(like), "_fields") else type(like)(made)
    if isinstance(like, dict):
        items = t if isinstance(t, dict) else {}
        return {k: _tangent_like(items.get(k), v) for k, v in like.items()}
    return None


def _tree_dot(a, b, like):
    """The sum of the products of the leaves of a and b, two adjoints (or tangents) of like."""
    return float(np.dot(_flat_like([a], [like]), _flat_like([b], [like])))


def _flat(values):
    """The arrays and floats of values as one float vector."""
    parts = [np.ravel(np.asarray(v, dtype=float)) for v in values]
    return np.concatenate(parts) if parts else np.zeros(0)


def _unflat(vector, likes):
    """vector cut into pieces shaped like likes (a float for a float; a tuple, list or dict of them rebuilt)."""
    out, start = [], 0

    def take(like):
        nonlocal start
        n = np.size(like)
        piece = vector[start:start + n]
        start += n
        return float(piece[0]) if np.ndim(like) == 0 and not isinstance(like, np.ndarray) \
            else np.reshape(piece, np.shape(like))
    for like in likes:
        out.append(_rebuilt(like, take))
    return out


def _cotangent_like(a, value):
    """a (a flat vector) shaped like func's value: an array, a float, or a list or tuple of them."""
    if isinstance(value, (list, tuple)):
        return type(value)(_unflat(a, value))
    return np.reshape(a, np.shape(value)) if isinstance(value, np.ndarray) else float(np.reshape(a, ()))


def _odeint_adjoint(g, ys, func, y0, t, func_args, tfirst, solver):
    """The adjoints of y0, t and args of ys = odeint(func, y0, t, args): the adjoint ODE, backwards."""
    vjp = registry.transformation("vjp")
    ys, g, t = np.asarray(ys), np.reshape(np.asarray(g, dtype=float), np.shape(ys)), np.asarray(t, dtype=float)
    count, d = np.shape(ys)
    func_args = tuple(func_args)
    active = _differentiable(func_args)
    likes = [func_args[k] for k in active]

    def pullback(y, time, a):
        """f(y, t) and a's products with df/dy, df/dt, df/dargs (flat)."""
        call, (iy, it) = _call_args(func_args, y, time, tfirst)
        value, back = vjp(func, *call, wrt=(iy, it) + tuple(2 + k for k in active))
        adjoints = back(_cotangent_like(a, value))
        return (_flat([value]), np.ravel(adjoints[0]), float(np.sum(adjoints[1])), _flat_like(adjoints[2:], likes))

    def augmented(state, time):
        y, a = state[:d], state[d:2 * d]
        dy, a_y, a_t, a_args = pullback(y, time, -a)
        return np.concatenate([dy, a_y, [a_t], a_args])

    a_y = g[-1].copy()
    a_t0 = 0.0
    a_args = np.zeros(_size(likes))
    time_adjoints = []
    for i in range(count - 1, 0, -1):
        moved = float(np.dot(pullback(ys[i], t[i], np.zeros(d))[0], g[i]))       # moving output time i
        time_adjoints.append(moved)
        a_t0 = a_t0 - moved
        start = np.concatenate([ys[i], a_y, [a_t0], a_args])
        end = scipy.integrate.odeint(augmented, start, np.array([t[i], t[i - 1]]), **_solver_options(solver))[1]
        a_y, a_t0, a_args = end[d:2 * d] + g[i - 1], end[2 * d], end[2 * d + 1:]
    time_adjoints.append(a_t0)
    return _adjoints_like(a_y, time_adjoints, a_args, y0, t, func_args, active, likes)


def _odeint_tangent(ys, func, y0, t, func_args, tfirst, solver, dy0, dt, dargs):
    """The tangent of ys = odeint(func, y0, t, args) along dy0, dt or dargs (one of them given): forward
    sensitivities, s' = df/dy s + df/dargs dargs, from s(t0) = dy0 - f(y0, t0) dt0."""
    ys, t = np.asarray(ys), np.asarray(t, dtype=float)
    d = np.shape(ys)[1]
    func_args = tuple(func_args)
    arg_tangents = [None] * len(func_args) if dargs is None else \
        [None if k not in _differentiable(func_args) else _tangent_like(dargs[k], func_args[k])
         for k in range(len(func_args))]

    def tangent_of_f(y, time, s):
        return _f_and_tangent(func, func_args, tfirst, y, time, s, None, arg_tangents)

    start = np.zeros(d)
    if dy0 is not None:
        start = start + np.ravel(dy0)
    if dt is not None:
        dt = np.reshape(np.asarray(dt, dtype=float), np.shape(t))
        start = start - tangent_of_f(ys[0], t[0], np.zeros(d))[0] * dt[0]

    def augmented(state, time):
        value, directional = tangent_of_f(state[:d], time, state[d:])
        return np.concatenate([value, directional])

    sensitivities = scipy.integrate.odeint(augmented, np.concatenate([ys[0], start]), t,
                                           **_solver_options(solver))[:, d:]
    if dt is not None:              # moving output time i moves y_i along f(y_i, t_i)
        for i in range(len(t)):
            sensitivities[i] += tangent_of_f(ys[i], t[i], np.zeros(d))[0] * dt[i]
    return sensitivities


def _f_and_tangent(func, func_args, tfirst, y, time, dy, dtime, arg_tangents):
    """f(y, time) and its tangent along dy, dtime and the args' tangents (each None or a tangent), flat."""
    jvp = registry.transformation("jvp")
    call, (iy, it) = _call_args(func_args, y, time, tfirst)
    tangents = [None] * len(call)
    tangents[iy], tangents[it] = dy, (dtime if dtime is not None and dtime != 0 else None)
    for k, a in enumerate(arg_tangents):
        tangents[2 + k] = a
    if all(x is None for x in tangents):
        value = _flat([func(*call)])
        return value, np.zeros(np.size(value))
    value, directional = jvp(func, call, tangents)
    value = _flat([value])
    return value, np.zeros(np.size(value)) + _flat([directional])


def _odeint_tangent_tangent(ys, func, y0, t, func_args, tfirst, solver, dy0, dt, dargs, oys, ot, oargs):
    """The tangent of _odeint_tangent(ys, ..., dy0, dt, dargs) along oys, ot or oargs (the others None), for
    forward over forward: the sensitivity ODE [y, s] solved with its own sensitivities [y', s'], whose
    right-hand side needs func's second derivatives (s2s's jvp of the gradient of e_i . f, for each i)."""
    grad = registry.transformation("grad")
    jvp = registry.transformation("jvp")
    ys, t = np.asarray(ys), np.asarray(t, dtype=float)
    count, d = np.shape(ys)
    func_args = tuple(func_args)
    active = _differentiable(func_args)
    inner = [_tangent_like(dargs[k], func_args[k]) if dargs is not None and k in active else None
             for k in range(len(func_args))]
    outer = [_tangent_like(oargs[k], func_args[k]) if oargs is not None and k in active else None
             for k in range(len(func_args))]
    dt = np.zeros(count) if dt is None else np.reshape(np.asarray(dt, dtype=float), np.shape(t))
    oys = np.zeros(np.shape(ys)) if oys is None else np.reshape(np.asarray(oys, dtype=float), np.shape(ys))
    ot = np.zeros(count) if ot is None else np.reshape(np.asarray(ot, dtype=float), np.shape(t))
    phi_gradient = grad(_weighted(func, len(func_args), tfirst), wrt=(0,) + tuple(3 + k for k in active))
    nothing = [None] * len(func_args)

    def f_and(y, time, dy, dtime, args_tangents):
        return _f_and_tangent(func, func_args, tfirst, y, time, dy, dtime, args_tangents)

    def second(y, time, s, oy):
        """The second derivative of f along (s, inner args' tangents) and (oy, outer args' tangents)."""
        out = np.zeros(d)
        for i in range(d):
            _, h = jvp(phi_gradient, (y, time, np.eye(d)[i]) + func_args, [oy, None, None] + outer)
            out[i] = np.dot(np.ravel(h[0]), s) + sum(_tree_dot(h[1 + n], inner[k], func_args[k])
                                                      for n, k in enumerate(active) if inner[k] is not None)
        return out

    def augmented(state, time):
        y, s, oy, os = state[:d], state[d:2 * d], state[2 * d:3 * d], state[3 * d:]
        f, fs = f_and(y, time, s, None, inner)
        _, foy = f_and(y, time, oy, None, outer)
        _, fos = f_and(y, time, os, None, nothing)
        return np.concatenate([f, fs, foy, fos + second(y, time, s, oy)])

    f0, _ = f_and(ys[0], t[0], None, None, nothing)
    s0 = (np.zeros(d) if dy0 is None else np.ravel(dy0)) - f0 * dt[0]
    _, fs0 = f_and(ys[0], t[0], s0, None, inner)
    _, moved0 = f_and(ys[0], t[0], oys[0], ot[0], outer)
    start = np.concatenate([ys[0], s0, oys[0] - f0 * ot[0], -moved0 * dt[0] - fs0 * ot[0]])
    states = scipy.integrate.odeint(augmented, start, t, **_solver_options(solver))
    out = states[:, 3 * d:].copy()
    for i in range(count):              # output time i moves s_i along s', and y_i's term f(y_i, t_i) dt_i
        _, fs = f_and(states[i, :d], t[i], states[i, d:2 * d], None, inner)
        _, moved = f_and(ys[i], t[i], oys[i], ot[i], outer)
        out[i] += fs * ot[i] + moved * dt[i]
    return out


@tangent(_odeint_tangent)
def odeint_tangent_tangent(t_, ans, ys, func, y0, t, args, tfirst, solver, dy0, dt, dargs):
    # linear in dy0, dt and dargs; y0 gives only its shape (ys holds y0's value)
    return (_odeint_tangent_tangent(ys, func, y0, t, args, tfirst, solver, dy0, dt, dargs, t_, None, None), None,
            0.0 * ans, _odeint_tangent_tangent(ys, func, y0, t, args, tfirst, solver, dy0, dt, dargs, None, t_, None),
            _odeint_tangent_tangent(ys, func, y0, t, args, tfirst, solver, dy0, dt, dargs, None, None, t_), None,
            None, _odeint_tangent(ys, func, y0, t, args, tfirst, solver, t_, None, None),
            _odeint_tangent(ys, func, y0, t, args, tfirst, solver, None, t_, None),
            _odeint_tangent(ys, func, y0, t, args, tfirst, solver, None, None, t_))


def _adjoints_like(a_y, time_adjoints, a_args, y0, t, func_args, active, likes, missing=None):
    """The adjoints of y0, t and args as the rule returns them (missing for the args that get none)."""
    dargs = [missing] * len(func_args)
    for k, value in zip(active, _unflat(a_args, likes)):
        dargs[k] = value
    dy0 = np.reshape(a_y, np.shape(y0)) if isinstance(y0, np.ndarray) or np.ndim(y0) else \
        (float(a_y[0]) if np.size(a_y) == 1 else a_y)
    return dy0, np.reshape(np.array(time_adjoints[::-1]), np.shape(t)), tuple(dargs)


_PHI = {}


def _weighted(func, count, tfirst):
    """phi(y, t, a, x0, ...) = a . func(y, t, x0, ...) (flat), as source s2s reads: the gradient of phi is the
    products of a with func's Jacobians, and its jvp the second derivatives the adjoint ODE's tangent needs."""
    import linecache
    key = (func, count, tfirst)
    if key not in _PHI:
        xs = "".join(f", x{k}" for k in range(count))
        call = f"func(t, y{xs})" if tfirst else f"func(y, t{xs})"
        text = f"def phi(y, t, a{xs}):\n    return np.sum(a * np.ravel(np.array({call})))\n"
        filename = f"<s2s: a . f for the second derivative of odeint ({len(_PHI)})>"
        linecache.cache[filename] = (len(text), None, text.splitlines(keepends=True), filename)
        namespace = {"np": np, "func": func}
        exec(compile(text, filename, "exec"), namespace)
        _PHI[key] = namespace["phi"]
    return _PHI[key]


def _odeint_adjoint_tangent(adjoints, g, ys, func, y0, t, func_args, tfirst, solver, dg, dys, dt, dargs):
    """The tangent of _odeint_adjoint along dg, dys, dt or dargs (the others None), for second order: the
    backward sweep again, each adjoint ODE solved with its forward sensitivities (whose right-hand side needs
    func's second derivatives: s2s's jvp of the gradient of a . f)."""
    grad = registry.transformation("grad")
    jvp = registry.transformation("jvp")
    vjp = registry.transformation("vjp")
    ys, t = np.asarray(ys), np.asarray(t, dtype=float)
    g = np.reshape(np.asarray(g, dtype=float), np.shape(ys))
    count, d = np.shape(ys)
    func_args = tuple(func_args)
    active = _differentiable(func_args)
    likes = [func_args[k] for k in active]
    p = _size(likes)
    if dg is None and dys is None and dt is None and dargs is None:          # y0 gives only its shape
        return _adjoints_like(np.zeros(d), [0.0] * count, np.zeros(p), y0, t, func_args, active, likes, 0.0)
    dg = np.zeros(np.shape(ys)) if dg is None else np.reshape(np.asarray(dg, dtype=float), np.shape(ys))
    dys = np.zeros(np.shape(ys)) if dys is None else np.reshape(np.asarray(dys, dtype=float), np.shape(ys))
    dt = np.zeros(np.shape(t)) if dt is None else np.reshape(np.asarray(dt, dtype=float), np.shape(t))
    arg_tangents = [None] * len(func_args)
    if dargs is not None:
        for k in active:
            arg_tangents[k] = _tangent_like(dargs[k], func_args[k])
    phi_gradient = grad(_weighted(func, len(func_args), tfirst), wrt=(0, 1) + tuple(3 + k for k in active))

    def f_and_tangent(y, time, dy, dtime):
        return _f_and_tangent(func, func_args, tfirst, y, time, dy, dtime, arg_tangents)

    def augmented(state, time):
        y, a = state[:d], state[d:2 * d]
        dy, da = state[2 * d + 1 + p:3 * d + 1 + p], state[3 * d + 1 + p:4 * d + 1 + p]
        call, (iy, it) = _call_args(func_args, y, time, tfirst)
        value, back = vjp(func, *call, wrt=(iy, it) + tuple(2 + k for k in active))
        first = back(_cotangent_like(-a, value))
        through_da = back(_cotangent_like(-da, value))
        _, tangent_of_f = f_and_tangent(y, time, dy, 0.0)
        # the tangent of -a . df/d(y, t, args) along (dy, dargs): -(jvp of the gradient of a . f)
        phi_args = (y, time, a) + func_args
        phi_tangents = [dy, None, None] + arg_tangents
        _, second = jvp(phi_gradient, phi_args, phi_tangents)
        dynamics = np.concatenate([_flat([value]), np.ravel(first[0]), [np.sum(first[1])],
                                   _flat_like(first[2:], likes)])
        tangent = np.concatenate([tangent_of_f, np.ravel(through_da[0]) - np.ravel(second[0]),
                                  [np.sum(through_da[1]) - np.sum(second[1])],
                                  _flat_like(through_da[2:], likes) - _flat_like(second[2:], likes)])
        return np.concatenate([dynamics, tangent])

    def dynamics_only(state, time):
        return augmented(np.concatenate([state, np.zeros_like(state)]), time)[:np.size(state)]

    a_y, da_y = g[-1].copy(), dg[-1].copy()
    a_t0, da_t0 = 0.0, 0.0
    a_args, da_args = np.zeros(p), np.zeros(p)
    time_tangents = []
    for i in range(count - 1, 0, -1):
        value, tangent = f_and_tangent(ys[i], t[i], dys[i], dt[i])
        moved = float(np.dot(tangent, g[i]) + np.dot(value, dg[i]))
        time_tangents.append(moved)
        a_t0, da_t0 = a_t0 - float(np.dot(value, g[i])), da_t0 - moved
        start = np.concatenate([ys[i], a_y, [a_t0], a_args])
        dstart = np.concatenate([dys[i], da_y, [da_t0], da_args]) - dynamics_only(start, t[i]) * dt[i]
        both = scipy.integrate.odeint(augmented, np.concatenate([start, dstart]), np.array([t[i], t[i - 1]]),
                                      **_solver_options(solver))[1]
        end = both[:np.size(start)]
        dend = both[np.size(start):] + dynamics_only(end, t[i - 1]) * dt[i - 1]       # moving the end time
        a_y, a_t0, a_args = end[d:2 * d] + g[i - 1], end[2 * d], end[2 * d + 1:]
        da_y, da_t0, da_args = dend[d:2 * d] + dg[i - 1], dend[2 * d], dend[2 * d + 1:]
    time_tangents.append(da_t0)
    return _adjoints_like(da_y, time_tangents, da_args, y0, t, func_args, active, likes, 0.0)


@tangent(_odeint_adjoint)
def odeint_adjoint_tangent(t_, ans, g, ys, func, y0, t, args, tfirst, solver):
    # y0 gives only its shape: its contribution is the zero the helper gives when no tangent is set
    return (_odeint_adjoint_tangent(ans, g, ys, func, y0, t, args, tfirst, solver, t_, None, None, None),
            _odeint_adjoint_tangent(ans, g, ys, func, y0, t, args, tfirst, solver, None, t_, None, None), None,
            _odeint_adjoint_tangent(ans, g, ys, func, y0, t, args, tfirst, solver, None, None, None, None),
            _odeint_adjoint_tangent(ans, g, ys, func, y0, t, args, tfirst, solver, None, None, t_, None),
            _odeint_adjoint_tangent(ans, g, ys, func, y0, t, args, tfirst, solver, None, None, None, t_), None, None)


refused(_odeint_adjoint_tangent, _odeint_tangent_tangent,
        reason="the derivatives of scipy.integrate.odeint beyond second order")
refused(_odeint_adjoint, _odeint_tangent,
        reason="the derivatives of scipy.integrate.odeint in reverse mode (second order is forward mode over them)")


def _result_kind(args, kwargs):
    """One array; with full_output, refused (its second result, a dict of the solver's counters, has no
    derivative, and the first is seldom all that is read)."""
    full_output = kwargs.get("full_output", args[6] if len(args) > 6 else 0)
    if full_output is UNKNOWN or full_output:
        raise UnsupportedSyntax("s2s differentiates scipy.integrate.odeint without full_output",
                                hint="call odeint without full_output= where it is differentiated")
    return "array"


several_results(scipy.integrate.odeint, kind=_result_kind)
