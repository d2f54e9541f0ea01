"""Rules for numpy.fft on real arrays: the shifts, which permute elements (linear, each the other's inverse).

The transforms themselves (fft, rfft, ...) have complex results and are left out with complex numbers.
"""
import numpy as np

from s2s.registry import adjoint, linear


@adjoint(np.fft.fftshift)
def fftshift(g, ans, x, axes=None):
    return np.fft.ifftshift(g, axes)


@adjoint(np.fft.ifftshift)
def ifftshift(g, ans, x, axes=None):
    return np.fft.fftshift(g, axes)


linear(np.fft.fftshift, np.fft.ifftshift)
