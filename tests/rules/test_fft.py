"""numpy.fft: the 12 transforms with their n / s, axis / axes and norm arguments, real and complex arguments.

A real loss of each transform's result is checked in reverse mode, forward mode and second order against
central differences on the real and imaginary parts (tests/rules/complex_checks.py), and against autograd where it is
installed. The default run takes a spread of the cases; `-m slow` runs the whole grid.
"""

import numpy as np
import pytest

import s2s
from complex_checks import check, define
from conftest import agrees

rng = np.random.default_rng(1)
X2 = rng.standard_normal((4, 6))
Z2 = X2 + 1j * rng.standard_normal((4, 6))
X3 = rng.standard_normal((3, 4, 5))
Z3 = X3 + 1j * rng.standard_normal((3, 4, 5))

# a real loss of a complex result (not linear: second order has work to do), and of a real one (irfft*)
COMPLEX_LOSS = ("    return np.sum(np.abs(y) ** 2 * np.cos(np.arange(y.size).reshape(y.shape)))"
                " + np.real(np.sum(y * (1 + 0.5j)))\n")
REAL_LOSS = "    return np.sum(np.sin(y) * np.cos(np.arange(y.size).reshape(y.shape)))\n"


def _grid():
    cases = []
    for norm in (None, "ortho", "forward"):
        for fn in ("fft", "ifft"):
            for kw in ({}, {"n": 4}, {"n": 9}, {"axis": 0}):
                cases += [(fn, a, dict(kw, norm=norm)) for a in ("X2", "Z2")]
        for fn in ("fft2", "ifft2", "fftn", "ifftn"):
            for kw in ({}, {"s": (3, 8)}, {"axes": (0, 2)}):
                cases += [(fn, a, dict(kw, norm=norm)) for a in ("X3", "Z3")]
        for kw in ({}, {"n": 5}, {"n": 8}, {"axis": 0}):
            cases.append(("rfft", "X2", dict(kw, norm=norm)))
        for fn in ("rfft2", "rfftn"):
            for kw in ({}, {"s": (3, 7)}, {"axes": (0, 2)}, {"s": (4, 6)}):
                cases.append((fn, "X3", dict(kw, norm=norm)))
        for kw in ({}, {"n": 7}, {"n": 12}, {"axis": 0}):
            cases += [("irfft", a, dict(kw, norm=norm)) for a in ("Z2", "X2")]
        for fn in ("irfft2", "irfftn"):
            for kw in ({}, {"s": (3, 7)}, {"axes": (0, 2)}, {"s": (4, 8)}):
                cases.append((fn, "Z3", dict(kw, norm=norm)))
    # NumPy 2 deprecates s without axes for the n-dimensional transforms: name the axes there
    return [(fn, a, dict(kw, axes=(1, 2)) if fn.endswith("n") and "s" in kw and "axes" not in kw else kw)
            for fn, a, kw in cases]


GRID = _grid()
ARRAYS = {"X2": X2, "Z2": Z2, "X3": X3, "Z3": Z3}
# every transform with every keyword at least once, both parities of n, both real and complex inputs
DEFAULT = [c for k, c in enumerate(GRID) if k % 7 == 0 or c[0] in ("rfft", "irfft2") and c[2]["norm"] == "ortho"]


def _function(fn, kw, module="np"):
    call = f"{module}.fft.{fn}(x, " + ", ".join(f"{k}={v!r}" for k, v in kw.items()) + ")"
    loss = REAL_LOSS if fn.startswith("irfft") else COMPLEX_LOSS
    return define(f"def f(x):\n    y = {call}\n" + loss.replace("np.", f"{module}."),
                  {module: __import__("autograd.numpy", fromlist=["numpy"]) if module == "anp" else np})


def _id(case):
    fn, a, kw = case
    return f"{fn}-{a}-" + "-".join(f"{k}={v}" for k, v in kw.items())


@pytest.mark.parametrize("case", DEFAULT, ids=[_id(c) for c in DEFAULT])
def test_transform(case):
    fn, a, kw = case
    check(_function(fn, kw), [ARRAYS[a]])


@pytest.mark.slow
@pytest.mark.parametrize("case", GRID, ids=[_id(c) for c in GRID])
def test_transform_grid(case):
    fn, a, kw = case
    check(_function(fn, kw), [ARRAYS[a]])


def test_real_argument_real_gradient_and_dtypes():
    f = define("def f(x):\n    y = np.fft.rfft(x)\n    return np.sum(np.abs(y) ** 2)\n")
    for dtype in (np.float32, np.float64):
        x = X2[0].astype(dtype)
        g = s2s.grad(f)(x)
        assert g.dtype == dtype
    for dtype in (np.complex64, np.complex128):
        h = define("def h(z):\n    return np.sum(np.abs(np.fft.fft2(z)) ** 2)\n")
        z = Z2.astype(dtype)
        g = s2s.grad(h)(z)
        assert g.dtype == dtype
        np.testing.assert_allclose(g, 2 * Z2.size * np.conj(Z2), rtol=1e-4 if dtype == np.complex64 else 1e-10)


def test_shifts_of_complex_values():
    f = define("def f(z):\n    return np.sum(np.abs(np.fft.fftshift(np.fft.fft(z)) * np.arange(6.0)) ** 2)\n")
    check(f, [Z2[0]])


def test_spectral_loss_hessian():
    # a real loss of real inputs through complex intermediates: the Hessian of a low-pass energy
    f = define("def f(x):\n    y = np.fft.rfft(x * x)\n    return np.sum(np.abs(y[:3]) ** 2)\n")
    x = X2[0]
    h = s2s.hessian(f)(x)
    gradient = s2s.grad(f)
    eps = 1e-5
    reference = np.array([(gradient(x + eps * e) - gradient(x - eps * e)) / (2 * eps) for e in np.eye(x.size)])
    np.testing.assert_allclose(h, reference, rtol=1e-5, atol=1e-5)
    assert h.dtype == np.float64


def test_repeated_axes_are_refused():
    f = define("def f(x):\n    return np.sum(np.abs(np.fft.fftn(x, axes=(0, 0))) ** 2)\n")
    with pytest.raises(NotImplementedError, match="axis given twice"):
        s2s.grad(f)(Z2)


# autograd: rfft and irfft only at even lengths, and norm="forward" postdates it; its rfft gradient is wrong where
# n or s pads the argument (rfft(x, n=8) of 6 numbers: central differences agree with s2s, not with autograd 1.9)
AUTOGRAD = [c for c in GRID if c[2]["norm"] != "forward" and c[2].get("n") not in (5, 7, 9)
            and c[2].get("s") not in ((3, 7),) and not (c[0] == "irfft" and c[1] == "X2")
            and not (c[0].startswith("rfft") and ("n" in c[2] or "s" in c[2] or c[1] == "X3"))][::3]


@pytest.mark.parametrize("case", AUTOGRAD, ids=[_id(c) for c in AUTOGRAD])
def test_against_autograd(case):
    autograd = pytest.importorskip("autograd", reason="autograd is not installed")
    fn, a, kw = case
    x = ARRAYS[a]
    np.testing.assert_allclose(s2s.grad(_function(fn, kw))(x), autograd.grad(_function(fn, kw, "anp"))(x),
                               rtol=1e-9, atol=1e-10)


MODES = ["reverse", "forward", "auto"]


def hermitian_signal(x):
    return np.sum(np.fft.hfft(x) ** 2) + np.sum(np.fft.hfft(x, 5, norm="ortho") * np.arange(5.0))


def hermitian_spectrum(x):
    return np.sum(np.abs(np.fft.ihfft(x)) ** 2) + np.sum(np.real(np.fft.ihfft(x, norm="forward")) ** 3)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("f, x", [(hermitian_signal, np.array([1.0, 2.0, -0.5])),
                                  (hermitian_spectrum, np.array([1.0, 2.0, 3.0, -4.0, 0.5]))])
def test_hfft_and_ihfft(f, x, mode):
    """Outside round 2, reasonable code that was refused."""
    assert s2s.value_and_grad(f)(x)[0] == pytest.approx(f(x))
    agrees(f, (x,), mode=mode, rtol=1e-5)
