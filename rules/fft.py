"""Rules for numpy.fft: the transforms (complex results, autograd's convention: s2s/analysis/complex_values.py) and the
shifts, which permute elements (linear, each the other's inverse).

Every transform is linear, so its tangent is the transform of the tangent. Adjoints (as autograd/numpy/fft.py):
- fft, ifft, fft2, ifft2, fftn, ifftn: the DFT matrix is symmetric, so the adjoint is the same transform (same
  norm) of g, cut or padded back to the argument's shape where `n` or `s` padded or cut it;
- rfft, rfft2, rfftn of a real x keep the first n // 2 + 1 bins of the last axis: the adjoint is the full
  transform of g padded with zeros there, whose real part the transform keeps (the adjoint of a real value);
- irfft, irfft2, irfftn read each bin but the first (and the last, for an even length) twice, through
  its conjugate: the adjoint is the conjugate of the half transform of g, doubled there (autograd's rfft
  factors), scaled as the norm scales irfft, then the inverse transform of the other axes.
Unlike autograd, odd lengths are differentiated too (the doubling above is written for both parities).
Axes given twice are refused (as autograd), when the derivative runs.
"""
import numpy as np

from s2s.rules.registry import adjoint, helper, linear, nondifferentiable


def _fit(y, like):
    """y cut, or padded with zeros, to like's shape (the adjoint of the cutting or padding that n or s does)."""
    shape = np.shape(like)
    if np.shape(y) == shape:
        return y
    y = y[tuple(slice(0, n) for n in shape)]
    return np.pad(y, [(0, n - m) for n, m in zip(shape, np.shape(y))])


def _fft_axes(a, s, axes):
    """The axes an n-dimensional transform runs over, non-negative (NumPy's defaults for s and axes)."""
    ndim = np.ndim(a)
    if axes is None:
        axes = range(ndim) if s is None else range(ndim - len(s), ndim)
    axes = [int(k) % ndim for k in axes]
    if len(set(axes)) != len(axes):
        raise NotImplementedError("the derivative of an FFT over an axis given twice")
    return axes


def _fft_lengths(a, s, axes):
    """The lengths of the full transform along axes: s, or a's own."""
    return [np.shape(a)[k] for k in axes] if s is None else list(s)


def _irfftn_adjoint(g, h, axes, norm):
    """The adjoint of h in irfftn(h, s, axes, norm), g being the real adjoint of its result."""
    last = axes[-1]
    n = np.shape(g)[last]
    half = np.conj(np.fft.rfft(g, axis=last))       # sum_j g_j exp(+2 pi i j k / n), k <= n // 2
    twice = np.full(n // 2 + 1, 2.0)
    twice[0] = 1.0
    if n % 2 == 0:
        twice[-1] = 1.0
    scale = 1.0 / n if norm is None or norm == "backward" else 1.0 / np.sqrt(n) if norm == "ortho" else 1.0
    factor = (twice * scale).astype(np.result_type(g, np.float32))
    shape = [1] * np.ndim(g)
    shape[last] = n // 2 + 1
    adjoint = half * np.reshape(factor, shape)
    if len(axes) > 1:
        adjoint = np.fft.ifftn(adjoint, axes=axes[:-1], norm=norm)
    return _fit(adjoint, h)


helper(_fit)
helper(_fft_axes)
helper(_fft_lengths)
helper(_irfftn_adjoint)
linear(_fit, _irfftn_adjoint)
nondifferentiable(_fft_axes, _fft_lengths)


@adjoint(_fit)
def fit(g, ans, y, like):
    return _fit(g, y), None


# ---- complex transforms


@adjoint(np.fft.fft)
def fft(g, ans, a, n=None, axis=-1, norm=None, out=None):
    return _fit(np.fft.fft(g, None, axis, norm), a)


@adjoint(np.fft.ifft)
def ifft(g, ans, a, n=None, axis=-1, norm=None, out=None):
    return _fit(np.fft.ifft(g, None, axis, norm), a)


@adjoint(np.fft.fft2)
def fft2(g, ans, a, s=None, axes=(-2, -1), norm=None, out=None):
    return _fit(np.fft.fftn(g, None, _fft_axes(a, s, axes), norm), a)


@adjoint(np.fft.fftn)
def fftn(g, ans, a, s=None, axes=None, norm=None, out=None):
    return _fit(np.fft.fftn(g, None, _fft_axes(a, s, axes), norm), a)


@adjoint(np.fft.ifft2)
def ifft2(g, ans, a, s=None, axes=(-2, -1), norm=None, out=None):
    return _fit(np.fft.ifftn(g, None, _fft_axes(a, s, axes), norm), a)


@adjoint(np.fft.ifftn)
def ifftn(g, ans, a, s=None, axes=None, norm=None, out=None):
    return _fit(np.fft.ifftn(g, None, _fft_axes(a, s, axes), norm), a)


# ---- real transforms


@adjoint(np.fft.rfft)
def rfft(g, ans, a, n=None, axis=-1, norm=None, out=None):
    return _fit(np.fft.fft(g, _fft_lengths(a, None if n is None else [n], [axis])[0], axis, norm), a)


@adjoint(np.fft.rfft2)
def rfft2(g, ans, a, s=None, axes=(-2, -1), norm=None, out=None):
    return _fit(np.fft.fftn(g, _fft_lengths(a, s, _fft_axes(a, s, axes)), _fft_axes(a, s, axes), norm), a)


@adjoint(np.fft.rfftn)
def rfftn(g, ans, a, s=None, axes=None, norm=None, out=None):
    return _fit(np.fft.fftn(g, _fft_lengths(a, s, _fft_axes(a, s, axes)), _fft_axes(a, s, axes), norm), a)


@adjoint(np.fft.irfft)
def irfft(g, ans, a, n=None, axis=-1, norm=None, out=None):
    return _irfftn_adjoint(g, a, _fft_axes(a, None, [axis]), norm)


@adjoint(np.fft.irfft2)
def irfft2(g, ans, a, s=None, axes=(-2, -1), norm=None, out=None):
    return _irfftn_adjoint(g, a, _fft_axes(a, s, axes), norm)


@adjoint(np.fft.irfftn)
def irfftn(g, ans, a, s=None, axes=None, norm=None, out=None):
    return _irfftn_adjoint(g, a, _fft_axes(a, s, axes), norm)


linear(np.fft.fft, np.fft.ifft, np.fft.fft2, np.fft.ifft2, np.fft.fftn, np.fft.ifftn, np.fft.rfft, np.fft.rfft2,
       np.fft.rfftn, np.fft.irfft, np.fft.irfft2, np.fft.irfftn)

# ---- shifts


@adjoint(np.fft.fftshift)
def fftshift(g, ans, x, axes=None):
    return np.fft.ifftshift(g, axes)


@adjoint(np.fft.ifftshift)
def ifftshift(g, ans, x, axes=None):
    return np.fft.fftshift(g, axes)


linear(np.fft.fftshift, np.fft.ifftshift)


# ---------------------------------------------------------------- facts (rules/record.py)

from s2s.rules.registry import declare  # noqa: E402

declare(np.fft.fft, np.fft.ifft, np.fft.fft2, np.fft.ifft2, np.fft.fftn, np.fft.ifftn, np.fft.rfft, np.fft.irfft,
        np.fft.rfft2, np.fft.irfft2, np.fft.rfftn, np.fft.irfftn, np.fft.fftshift, np.fft.ifftshift, holomorphic=True)
declare(np.fft.fft, np.fft.ifft, np.fft.fft2, np.fft.ifft2, np.fft.fftn, np.fft.ifftn, np.fft.rfft, np.fft.rfft2,
        np.fft.rfftn, complex_result="complex")
declare(np.fft.irfft, np.fft.irfft2, np.fft.irfftn, complex_result="real", complex_inside=True)
# the result's shape (s2s/analysis/complex_values.py's shape_of): (kind, how the axes are given)
for _kind, _prims in (("c", (np.fft.fft, np.fft.ifft, np.fft.fft2, np.fft.ifft2, np.fft.fftn, np.fft.ifftn)),
                      ("r", (np.fft.rfft, np.fft.rfft2, np.fft.rfftn)), ("i", (np.fft.irfft, np.fft.irfft2, np.fft.irfftn))):
    for _prim in _prims:
        declare(_prim, fft=(_kind, 1 if _prim.__name__.endswith("fft") else 2 if _prim.__name__.endswith("2") else None))
declare(_fit, shape_rule="fit")
declare(_irfftn_adjoint, shape_rule="irfftn_adjoint")
