"""Linear-algebra rules on inputs NumPy reads only part of (issue 27, item 2).

`np.linalg.eigvalsh(A, UPLO="L")` reads A's lower triangle alone: on a matrix that is not exactly symmetric, the
exact gradient is zero on the other triangle, and each entry of the triangle read stands for itself and its mirror.
s2s returned a symmetric gradient (reverse, forward and second order). The same holds for eigh, cholesky (the
lower triangle, the upper one with upper=True), svd and pinv with hermitian=True, scipy's cho_factor, cho_solve and
solve_triangular (one triangle of c or a, without its diagonal when unit_diagonal), solve_banded (the bands of ab,
not its unused corners).

Every linear-algebra rule has rows here (`test_every_linear_algebra_rule_has_a_row`), each on an input that is not
symmetric, triangular or positive beyond what NumPy needs; each is checked in reverse, forward and the default mode
against central differences of NumPy itself (which see exactly what NumPy reads), and to second order.
"""
import numpy as np
import pytest

import s2s
from s2s.ir.core import prim_name
from s2s.rules.registry import find_adjoint, registered_adjoints

scipy = pytest.importorskip("scipy")
import scipy.linalg  # noqa: E402

_rng = np.random.default_rng(2702)


def M(*shape):
    """A general matrix (or stack of them): not symmetric, not triangular."""
    return _rng.uniform(-1.0, 1.0, size=shape) + 0.5


def SPD_LOWER(n=3):
    """A matrix whose lower triangle is that of a positive definite matrix; its strict upper triangle is anything."""
    b = _rng.uniform(-1.0, 1.0, size=(n, n))
    spd = b @ b.T + n * np.eye(n)
    return np.tril(spd) + np.triu(_rng.uniform(-3.0, 3.0, size=(n, n)), 1)


def SPD_UPPER(n=3):
    return SPD_LOWER(n).T.copy()


def DOMINANT(n=3):
    """Well conditioned in every triangle (a triangular solve reads one): a diagonal away from zero."""
    return M(n, n) + 3.0 * np.eye(n)


def BANDED():
    """scipy's banded storage of a (1, 1)-banded 4x4 matrix, its two unused corners not zero."""
    ab = M(3, 4)
    ab[1] += 3.0
    return ab


ROWS = {
    np.linalg.eigvalsh: [("np.linalg.eigvalsh(x)", (M(3, 3),)), ("np.linalg.eigvalsh(x, UPLO='U')", (M(3, 3),)),
                         ("np.linalg.eigvalsh(x, 'L')", (M(2, 3, 3),))],
    np.linalg.eigh: [("w, v = np.linalg.eigh(x)\nw ** 3 + np.abs(v[0]) * w", (M(3, 3),)),
                     ("w, v = np.linalg.eigh(x, UPLO='U')\nw ** 3 + v[:, 0] * np.sign(v[0, 0])", (M(3, 3),))],
    np.linalg.cholesky: [("np.linalg.cholesky(x)", (SPD_LOWER(),)),
                         ("np.linalg.cholesky(x, upper=True)", (SPD_UPPER(),)),
                         ("np.linalg.cholesky(x)", (np.stack([SPD_LOWER(), SPD_LOWER()]),))],
    np.linalg.svd: [("np.linalg.svd(x, hermitian=True)[1]", (M(3, 3),)),
                    ("u, s, vt = np.linalg.svd(x, hermitian=True)\ns * np.abs(u[0]) + np.abs(vt[:, 1])", (M(3, 3),)),
                    ("np.linalg.svd(x, compute_uv=False)", (M(3, 2),))],
    np.linalg.pinv: [("np.linalg.pinv(x, hermitian=True)", (M(3, 3),)), ("np.linalg.pinv(x)", (M(3, 2),))],
    np.linalg.norm: [("np.linalg.norm(x, 2)", (M(3, 3),)), ("np.linalg.norm(x, 'nuc')", (M(2, 3),))],
    np.linalg.slogdet: [("np.linalg.slogdet(x)[1]", (M(3, 3),))],
    np.linalg.det: [("np.linalg.det(x)", (M(3, 3),))],
    np.linalg.inv: [("np.linalg.inv(x)", (M(3, 3),))],
    np.linalg.solve: [("np.linalg.solve(x, y)", (M(3, 3), M(3, 2)))],
    np.linalg.qr: [("q, r = np.linalg.qr(x)\nq * np.sign(r[0, 0]) + r[0, 1]", (M(3, 3),))],
    np.linalg.matrix_power: [("np.linalg.matrix_power(x, 3)", (M(3, 3),))],
    np.linalg.lstsq: [("np.linalg.lstsq(x, y)[0]", (M(4, 3), M(4)))],
    np.linalg.eig: [("np.real(np.linalg.eigvals(x @ x.T + x))", (M(3, 3),))],
    np.linalg.eigvals: [("np.real(np.linalg.eigvals(x)) ** 2", (M(3, 3) + 2.0 * np.eye(3),))],
    scipy.linalg.solve_triangular: [
        ("scipy.linalg.solve_triangular(x, y)", (DOMINANT(), M(3, 2))),
        ("scipy.linalg.solve_triangular(x, y, lower=True)", (DOMINANT(), M(3))),
        ("scipy.linalg.solve_triangular(x, y, trans=1, lower=True, unit_diagonal=True)", (DOMINANT(), M(3))),
        ("scipy.linalg.solve_triangular(x, y, trans='T', unit_diagonal=True)", (DOMINANT(), M(3, 2)))],
    scipy.linalg.cho_factor: [("scipy.linalg.cho_factor(x)[0]", (SPD_UPPER(),)),
                              ("scipy.linalg.cho_factor(x, lower=True)[0]", (SPD_LOWER(),))],
    scipy.linalg.cho_solve: [("scipy.linalg.cho_solve((x, False), y)", (DOMINANT(), M(3))),
                             ("scipy.linalg.cho_solve((x, True), y)", (DOMINANT(), M(3, 2)))],
    scipy.linalg.solve_banded: [("scipy.linalg.solve_banded((1, 1), x, y)", (BANDED(), M(4)))],
    scipy.linalg.expm: [("scipy.linalg.expm(x)", (M(3, 3),))],
    scipy.linalg.sqrtm: [("scipy.linalg.sqrtm(x @ x.T + np.eye(3))", (M(3, 3),))],
    scipy.linalg.solve_sylvester: [("scipy.linalg.solve_sylvester(x, x.T + 3.0 * np.eye(3), y)", (M(3, 3), M(3, 3)))],
}
# products read every entry of their operands (tests/rules/test_rules.py checks them)
PRODUCTS = {np.matmul, np.dot, np.inner, np.tensordot, np.outer, np.einsum, scipy.signal.convolve,
            scipy.signal.correlate}


def test_every_linear_algebra_rule_has_a_row():
    missing = [prim_name(p) for p in registered_adjoints(builtin_only=True)
               if find_adjoint(p).__module__.rsplit(".", 1)[-1] in ("linalg", "linear_algebra", "scipy_linalg")
               and p not in ROWS and p not in PRODUCTS and prim_name(p) != "matmul"]
    assert not missing, f"linear-algebra rules without a row: {missing}"


# the functions NumPy or SciPy reads only part of the input of: every row by default; the others' first row (all
# with -m slow)
PARTIAL = {np.linalg.eigvalsh, np.linalg.eigh, np.linalg.cholesky, np.linalg.svd, np.linalg.pinv,
           scipy.linalg.solve_triangular, scipy.linalg.cho_factor, scipy.linalg.cho_solve, scipy.linalg.solve_banded}
CASES = [pytest.param(prim, row, marks=() if prim in PARTIAL or k == 0 else (pytest.mark.slow,),
                      id=row[0].split("\n")[0] + f" {[np.shape(a) for a in row[1]]}")
         for prim, rows in ROWS.items() for k, row in enumerate(rows)]
SECOND = [pytest.param(prim, row, marks=() if prim in PARTIAL and k == 0 else (pytest.mark.slow,),
                       id=row[0].split("\n")[0] + f" {[np.shape(a) for a in row[1]]}")
          for prim, rows in ROWS.items() for k, row in enumerate(rows)]


def _function(expression, args, make_fn):
    *lines, last = expression.split("\n")
    names = ", ".join("xyz"[:len(args)])
    prelude = "".join(f"    {line}\n" for line in lines)
    probe = make_fn(f"def probe({names}):\n{prelude}    return {last}\n", namespace={"scipy": scipy})
    weights = _rng.uniform(0.5, 1.5, size=np.shape(probe(*args)))
    return make_fn(f"def f({names}):\n{prelude}    return np.sum(({last}) * WEIGHTS)\n",
                   namespace={"WEIGHTS": weights, "scipy": scipy})


def _central(f, args, i, eps=1e-6):
    x = np.asarray(args[i], dtype=float)
    out = np.zeros_like(x)
    for k in np.ndindex(x.shape):
        e = np.zeros_like(x)
        e[k] = eps
        plus = f(*[x + e if j == i else a for j, a in enumerate(args)])
        minus = f(*[x - e if j == i else a for j, a in enumerate(args)])
        out[k] = (plus - minus) / (2 * eps)
    return out


@pytest.mark.parametrize("prim, row", CASES)
def test_gradient_on_what_numpy_reads(prim, row, make_fn):
    expression, args = row
    f = _function(expression, args, make_fn)
    wrt = tuple(range(len(args)))
    expected = [_central(f, args, i) for i in wrt]
    for mode in ("reverse", "forward", "auto"):
        gradient = s2s.grad(f, wrt=wrt, mode=mode)(*args)
        for i, (g, e) in enumerate(zip(gradient, expected)):
            assert np.asarray(g) == pytest.approx(e, rel=1e-5, abs=1e-6), f"argument {i}, {mode} mode"


@pytest.mark.parametrize("prim, row", SECOND)
def test_second_order_on_what_numpy_reads(prim, row, make_fn):
    """The Hessian along a random direction (forward over reverse) against differences of the gradient."""
    expression, args = row
    f = _function(expression, args, make_fn)
    x = args[0]
    v = _rng.uniform(-1.0, 1.0, size=np.shape(x))
    product = s2s.hvp(f, wrt=0)(*args, v)
    gradient = s2s.grad(f, wrt=0, mode="reverse")
    h = 1e-5
    expected = (gradient(x + h * v, *args[1:]) - gradient(x - h * v, *args[1:])) / (2 * h)
    assert np.asarray(product) == pytest.approx(expected, rel=1e-4, abs=1e-6)


def test_eigvalsh_lower_gradient_is_zero_above_the_diagonal(make_fn):
    """The issue's case in closed form: d(sum of eigenvalues cubed)/dA = 3 V diag(w^2) V^T on the symmetric matrix
    read, so the entries below the diagonal get twice its value, the diagonal once, the entries above none."""
    a = M(3, 3)
    f = make_fn("def f(a):\n    return np.sum(np.linalg.eigvalsh(a, UPLO='L') ** 3)\n")
    w, v = np.linalg.eigh(a)
    s = 3.0 * (v * w ** 2) @ v.T
    expected = np.tril(2.0 * s, -1) + np.diag(np.diag(s))
    for mode in ("reverse", "forward", "auto"):
        assert s2s.grad(f, mode=mode)(a) == pytest.approx(expected, rel=1e-10, abs=1e-12), mode
