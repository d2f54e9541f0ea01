"""Checks of derivatives with complex numbers (tests/rules/test_complex.py, tests/rules/test_fft.py).

The convention (autograd's): the gradient of a real f(z), z = x + iy, is df/dx - i df/dy; of a complex-valued f,
the gradient of its real part (for a holomorphic f: f'(z)). The references are central differences taken on the
real and imaginary parts separately.
"""
import linecache
import itertools

import numpy as np

import s2s

_counter = itertools.count()


def define(source: str, namespace: dict | None = None):
    """A function from source text that inspect can read back."""
    filename = f"<complex-case-{next(_counter)}>"
    linecache.cache[filename] = (len(source), None, source.splitlines(keepends=True), filename)
    scope = {"np": np}
    scope.update(namespace or {})
    exec(compile(source, filename, "exec"), scope)
    return scope[source.split("def ", 1)[1].split("(", 1)[0].strip()]


def _moved(args, i, k, step):
    moved = list(args)
    x = np.array(args[i], copy=True)
    x.reshape(-1)[k] += step
    moved[i] = x if isinstance(args[i], np.ndarray) else x[()].item()
    return moved


def numerical_gradient(f, args, i=0, eps=1e-6):
    """d Re f / dx - i d Re f / dy for each element of argument i (dx only for a real argument)."""
    x = np.asarray(args[i])
    out = np.zeros(x.size, dtype=complex if np.iscomplexobj(x) else float)
    for k in range(x.size):
        steps = (eps, 1j * eps) if np.iscomplexobj(x) else (eps,)
        for step, factor in zip(steps, (1, -1j)):
            hi = np.real(f(*_moved(args, i, k, step)))
            lo = np.real(f(*_moved(args, i, k, -step)))
            out[k] += factor * (hi - lo) / (2 * eps)
    return out.reshape(x.shape) if isinstance(args[i], np.ndarray) else out[0]


def numerical_jvp(f, args, i, v, eps=1e-6):
    hi, lo = list(args), list(args)
    hi[i], lo[i] = args[i] + eps * v, args[i] - eps * v
    return (np.asarray(f(*hi)) - np.asarray(f(*lo))) / (2 * eps)


def direction(x, seed=1):
    rng = np.random.default_rng(seed)
    v = rng.standard_normal(np.shape(x))
    if np.iscomplexobj(x):
        v = v + 1j * rng.standard_normal(np.shape(x))
    return v if isinstance(x, np.ndarray) else v[()].item()


def check(f, args, i=0, second=True, rtol=1e-5, atol=1e-6):
    """Reverse mode, mode="auto", forward mode and (second=True) forward over reverse against central differences;
    the gradient keeps its argument's dtype. Returns the gradient."""
    gradient = s2s.grad(f, wrt=i, mode="reverse")
    g = gradient(*args)
    np.testing.assert_allclose(g, numerical_gradient(f, args, i), rtol=rtol, atol=atol, err_msg="reverse mode")
    auto = s2s.grad(f, wrt=i)(*args)        # the default: forward mode seeded with 1.0 along one real float
    np.testing.assert_allclose(auto, numerical_gradient(f, args, i), rtol=rtol, atol=atol, err_msg="mode='auto'")
    if isinstance(args[i], np.ndarray):
        assert g.dtype == args[i].dtype, (g.dtype, args[i].dtype)
    else:
        assert np.iscomplexobj(g) == isinstance(args[i], complex), (type(g), type(args[i]))
    v = direction(args[i])
    tangents = [None] * len(args)
    tangents[i] = v
    _, t = s2s.jvp(f, tuple(args), tuple(tangents))
    np.testing.assert_allclose(t, numerical_jvp(f, args, i, v), rtol=rtol, atol=atol, err_msg="forward mode")
    if second:
        h = s2s.hvp(f, wrt=i)(*args, v)
        eps = 1e-5
        hi, lo = list(args), list(args)
        hi[i], lo[i] = args[i] + eps * v, args[i] - eps * v
        np.testing.assert_allclose(h, (gradient(*hi) - gradient(*lo)) / (2 * eps), rtol=1e-4, atol=1e-5,
                                   err_msg="second order (forward over reverse)")
    return g
