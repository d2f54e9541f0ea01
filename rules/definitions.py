"""Library functions defined by Python code over functions that have rules.

A call of one of these is inlined as a user's function is, so forward mode, reverse mode and every higher
order follow from the definition's own operations; the generated code shows the definition's lines. Each
definition gives NumPy's (or math's) value, which the checking mode compares on the derivative's first call.
"""
import math
import statistics

import numpy as np

from s2s.rules.registry import defined_as


@defined_as(np.ptp)
def ptp(a, axis=None, out=None, keepdims=False):
    return np.max(a, axis=axis, keepdims=keepdims) - np.min(a, axis=axis, keepdims=keepdims)


@defined_as(np.average)
def average(a, axis=None, weights=None, returned=False, keepdims=False):
    if weights is None:
        mean = np.mean(a, axis=axis, keepdims=keepdims)
        total = np.sum(np.ones_like(a * 1.0), axis=axis, keepdims=keepdims)
    else:
        if np.ndim(weights) == 1 and np.ndim(a) > 1:     # weights along the one axis given, as NumPy reads them
            weights = np.reshape(weights, (-1,) + (1,) * int(np.ndim(a) - 1 - np.mod(axis, np.ndim(a))))
        total = np.sum(weights * np.ones_like(a), axis=axis, keepdims=keepdims)
        mean = np.sum(a * weights, axis=axis, keepdims=keepdims) / total
    if returned:                        # (the average, the sum of the weights shaped like it)
        return mean, total * np.ones_like(mean)
    return mean


@defined_as(np.nansum)
def nansum(a, axis=None, dtype=None, out=None, keepdims=False):
    return np.sum(np.where(np.isnan(a), 0.0, a), axis=axis, keepdims=keepdims)


@defined_as(np.nanmean)
def nanmean(a, axis=None, dtype=None, out=None, keepdims=False):
    present = ~np.isnan(a)
    return np.sum(np.where(present, a, 0.0), axis=axis, keepdims=keepdims) / np.sum(present, axis=axis,
                                                                                   keepdims=keepdims)


@defined_as(np.nanmax)
def nanmax(a, axis=None, out=None, keepdims=False):
    return np.max(np.where(np.isnan(a), -np.inf, a), axis=axis, keepdims=keepdims)


@defined_as(np.nanmin)
def nanmin(a, axis=None, out=None, keepdims=False):
    return np.min(np.where(np.isnan(a), np.inf, a), axis=axis, keepdims=keepdims)


@defined_as(np.polyval)
def polyval(p, x):                      # Horner's rule, as NumPy evaluates it
    y = np.zeros_like(x * 1.0)
    for k in range(len(p)):
        y = y * x + p[k]
    return y


@defined_as(np.vander)
def vander(x, N=None, increasing=False):
    n = len(x) if N is None else N
    powers = np.arange(n) if increasing else np.arange(n - 1, -1, -1)
    return np.reshape(x, (-1, 1)) ** powers


@defined_as(np.cov)
def cov(m, y=None, rowvar=True, bias=False, ddof=None, fweights=None, aweights=None):
    X = np.atleast_2d(m)
    if not rowvar and np.shape(X)[0] != 1:
        X = np.transpose(X)
    if y is not None:                   # NumPy's stacking of the second set of variables
        Y = np.atleast_2d(y)
        if not rowvar and np.shape(Y)[0] != 1:
            Y = np.transpose(Y)
        X = np.concatenate((X, Y), axis=0)
    n = np.shape(X)[1]
    dof = (0 if bias else 1) if ddof is None else ddof
    if fweights is None and aweights is None:
        centered = X - np.mean(X, axis=1, keepdims=True)
        return np.squeeze(centered @ np.transpose(centered) / (n - dof))
    if fweights is None:                # weights: as NumPy computes with them
        w = aweights * 1.0
    elif aweights is None:
        w = fweights * 1.0
    else:
        w = fweights * aweights
    total = np.sum(w)
    centered = X - np.sum(X * w, axis=1, keepdims=True) / total
    if dof == 0:
        scale = total
    elif aweights is None:
        scale = total - dof
    else:
        scale = total - dof * np.sum(w * aweights) / total
    return np.squeeze((centered * w) @ np.transpose(centered) / scale)


@defined_as(np.corrcoef)
def corrcoef(x, y=None, rowvar=True):
    c = cov(x, y, rowvar)
    if np.ndim(c) == 0:
        return c / c
    stddev = np.sqrt(np.diagonal(c))
    return np.clip(c / np.reshape(stddev, (-1, 1)) / np.reshape(stddev, (1, -1)), -1.0, 1.0)


@defined_as(np.interp)
def interp(x, xp, fp, left=None, right=None, period=None):
    x = np.astype(np.asarray(x), np.float64)    # NumPy computes (and returns) interp in float64, or complex128
    xp = np.astype(np.asarray(xp), np.float64)
    fp = np.astype(np.asarray(fp), np.result_type(np.asarray(fp), np.float64))
    if period is not None:              # x and xp modulo the period, xp sorted, a point added at each end
        period = abs(period)
        x = x % period
        order = np.argsort(xp % period)
        xp = np.take(xp % period, order)
        fp = np.take(fp, order)
        xp = np.concatenate((xp[-1:] - period, xp, xp[0:1] + period))
        fp = np.concatenate((fp[-1:], fp, fp[0:1]))
    n = len(xp)
    i = np.clip(np.searchsorted(xp, x, side="right") - 1, 0, n - 2)
    x0 = np.take(xp, i)
    y0 = np.take(fp, i)
    slope = (np.take(fp, i + 1) - y0) / (np.take(xp, i + 1) - x0)
    inside = y0 + slope * (x - x0)
    below = fp[0] if left is None else left
    above = fp[n - 1] if right is None else right
    return np.where(x < xp[0], below, np.where(x > xp[n - 1], above, inside))


@defined_as(np.fft.hfft)
def hfft(a, n=None, axis=-1, norm=None, out=None):      # the signal of a Hermitian spectrum, as NumPy writes it
    swapped = "forward" if norm is None or norm == "backward" else "backward" if norm == "forward" else norm
    return np.fft.irfft(np.conj(a), n, axis, swapped)


@defined_as(np.fft.ihfft)
def ihfft(a, n=None, axis=-1, norm=None, out=None):
    swapped = "forward" if norm is None or norm == "backward" else "backward" if norm == "forward" else norm
    return np.conj(np.fft.rfft(a, n, axis, swapped))


@defined_as(np.correlate)
def correlate(a, v, mode="valid"):
    return np.convolve(a, np.flip(v), mode)


@defined_as(np.compress)
def compress(condition, a, axis=None, out=None):
    kept = np.nonzero(condition)[0]
    if axis is None:
        return np.take(np.ravel(a), kept)
    return np.take(a, kept, axis=axis)


@defined_as(math.radians)
def radians(x):
    return x * (math.pi / 180.0)


@defined_as(math.degrees)
def degrees(x):
    return x * (180.0 / math.pi)


@defined_as(math.hypot)                 # with more than two coordinates (two: the rule in math_functions.py)
def hypot(coordinates):
    total = 0.0
    for c in coordinates:
        total = total + c * c
    return math.sqrt(total)


hypot.packed = True                     # given the call's arguments as one tuple (s2s/ir/lower.py)


@defined_as(math.dist)
def dist(p, q):
    total = 0.0
    for a, b in zip(p, q):
        total = total + (a - b) * (a - b)
    return math.sqrt(total)


@defined_as(math.fsum)
def fsum(items):
    total = 0.0
    for item in items:
        total = total + item
    return total


@defined_as(math.prod)
def prod(items, *, start=1):
    total = start
    for item in items:
        total = total * item
    return total


# ---- the statistics module on numbers (its values up to rounding: it sums exactly, with fractions)


@defined_as(statistics.mean)
def statistics_mean(data):
    items = list(data)
    if len(items) < 1:
        raise statistics.StatisticsError("mean requires at least one data point")
    total = 0.0
    for item in items:
        total = total + item
    return total / len(items)


@defined_as(statistics.fmean)
def statistics_fmean(data, weights=None):
    items = list(data)
    if len(items) < 1:
        raise statistics.StatisticsError("fmean requires at least one data point")
    total = 0.0
    if weights is None:
        for item in items:
            total = total + item
        return total / len(items)
    weight = 0.0
    for item, w in zip(items, list(weights)):
        total = total + item * w
        weight = weight + w
    return total / weight


def _squared_deviations(items, centre):
    total = 0.0
    for item in items:
        total = total + (item - centre) * (item - centre)
    return total


@defined_as(statistics.variance)
def statistics_variance(data, xbar=None):
    items = list(data)
    if len(items) < 2:
        raise statistics.StatisticsError("variance requires at least two data points")
    centre = statistics_mean(items) if xbar is None else xbar
    return _squared_deviations(items, centre) / (len(items) - 1)


@defined_as(statistics.pvariance)
def statistics_pvariance(data, mu=None):
    items = list(data)
    if len(items) < 1:
        raise statistics.StatisticsError("pvariance requires at least one data point")
    centre = statistics_mean(items) if mu is None else mu
    return _squared_deviations(items, centre) / len(items)


@defined_as(statistics.stdev)
def statistics_stdev(data, xbar=None):
    return math.sqrt(statistics_variance(data, xbar))


@defined_as(statistics.pstdev)
def statistics_pstdev(data, mu=None):
    return math.sqrt(statistics_pvariance(data, mu))


_squared_deviations.__module__ = "s2s_rule_definitions"      # (a helper of the definitions, inlined as they are)


@defined_as(np.trapezoid)
def trapezoid(y, x=None, dx=1.0, axis=-1):     # as NumPy computes it: spacing times the mean of neighbours, summed
    n = np.shape(y)[axis]
    if x is None:
        d = dx
    elif np.ndim(x) == 1:               # the spacing along axis
        k = axis % np.ndim(y)
        d = np.reshape(np.diff(x), (1,) * k + (n - 1,) + (1,) * (np.ndim(y) - 1 - k))
    else:
        d = np.diff(x, axis=axis)
    return np.sum(d * (np.take(y, np.arange(1, n), axis=axis) + np.take(y, np.arange(0, n - 1), axis=axis)) / 2.0,
                  axis=axis)


@defined_as(np.linalg.multi_dot)
def multi_dot(arrays, *, out=None):     # left to right (NumPy picks the cheapest order: equal up to rounding)
    result = arrays[0]
    for k in range(1, len(arrays)):
        result = np.dot(result, arrays[k])
    return result


@defined_as(np.logspace)
def logspace(start, stop, num=50, endpoint=True, base=10.0, dtype=None, axis=0):
    if axis != 0:           # the samples along axis: linspace's axis 0 moved there, as NumPy does
        return np.moveaxis(np.power(base, np.linspace(start, stop, num, endpoint)), 0, axis)
    if dtype is not None:
        return np.astype(np.power(base, np.linspace(start, stop, num, endpoint)), dtype)
    return np.power(base, np.linspace(start, stop, num, endpoint))


@defined_as(np.polynomial.polynomial.polyval)
def polynomial_polyval(x, c, tensor=True):      # Horner's rule from the highest coefficient, as NumPy writes it
    if tensor and np.ndim(x) > 0 and np.ndim(c) > 1:
        c = np.reshape(c, np.shape(c) + (1,) * np.ndim(x))
    c0 = c[-1] + x * 0
    for i in range(2, len(c) + 1):
        c0 = c[-i] + c0 * x
    return c0
