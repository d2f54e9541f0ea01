"""Complex numbers, autograd's convention: the gradient of a real f(z) is df/dx - i df/dy (a holomorphic f: f'(z)).

Each function is checked in reverse mode, forward mode and second order (forward over reverse) against central
differences taken on the real and imaginary parts separately (tests/rules/complex_checks.py), and against autograd
where it is installed. The fence: what s2s does not model exactly for complex values is refused.
"""
import numpy as np
import pytest

import s2s
from complex_checks import check, define, numerical_gradient

rng = np.random.default_rng(0)
Z = rng.standard_normal(5) + 1j * rng.standard_normal(5)
X = rng.standard_normal(5)
M = rng.standard_normal((3, 3)) + 1j * rng.standard_normal((3, 3))

# real-valued functions of complex arguments, holomorphic functions with complex output, complex intermediates
# between real arguments and a real output: (source, arguments)
CASES = {
    "abs_squared": ("def f(z):\n    return np.sum(np.abs(z) ** 2)\n", [Z]),
    "abs_builtin": ("def f(z):\n    return abs(z * z + 1.0)\n", [complex(0.3, -1.2)]),
    "real_of_holomorphic": ("def f(z):\n    return np.real(np.sum(np.sin(z) * z + np.exp(z) / (z + 3.0)))\n", [Z]),
    "imag": ("def f(z):\n    return np.sum(np.imag(z * z) + np.imag(np.log(z)))\n", [Z]),
    "real_attribute": ("def f(z):\n    return np.sum(z.real * z.imag)\n", [Z]),
    "conj": ("def f(z):\n    return np.real(np.sum(np.conj(z) * np.tanh(z)))\n", [Z]),
    "conjugate_method": ("def f(z):\n    return np.real(np.sum(z.conjugate() * z * z))\n", [Z]),
    "angle": ("def f(z):\n    return np.sum(np.angle(z) * np.abs(z))\n", [Z]),
    "angle_degrees": ("def f(z):\n    return np.sum(np.angle(z, deg=True) ** 2)\n", [Z]),
    "power_sqrt": ("def f(z):\n    return np.sum(np.abs(np.sqrt(z) ** 3 + z ** 2.5))\n", [Z]),
    "matmul": ("def f(m, z):\n    y = m @ z[:3]\n    return np.real(np.sum(np.conj(y) * y))\n", None),
    "vdot": ("def f(m, z):\n    y = m @ z[:3]\n    return np.real(np.vdot(y, y) + np.vdot(m, m * z[3]))\n", None),
    "holomorphic_scalar": ("def f(z):\n    return z * z * np.exp(z)\n", [complex(0.4, 0.7)]),
    "holomorphic_sum": ("def f(z):\n    return np.sum(np.cos(z) * z ** 3)\n", [Z]),
    "real_to_complex_to_real": ("def f(x):\n    w = x * (1.0 + 2.0j) + np.exp(1j * x)\n"
                                "    return np.sum(np.abs(w) ** 2) + np.real(np.prod(w))\n", [X]),
    "real_input_mixed": ("def f(x, z):\n    return np.sum(np.abs(x * z + 1j) + np.real(x / z))\n", [X, Z]),
    "complex_constant_global": ("def f(x):\n    return np.sum(np.abs(PHASES * x) ** 3)\n", [X]),
    "astype_complex": ("def f(x):\n    z = x.astype(np.complex128) * 1j + x\n    return np.sum(np.abs(z * z))\n",
                       [X]),
    "loop_accumulates": ("def f(z):\n    s = 0.0\n    for k in range(len(z)):\n        s = s + z[k] * z[k]\n"
                         "    return np.abs(s)\n", [Z]),
    "complex_builtin": ("def f(a, b):\n    z = complex(a, b)\n    return abs(np.exp(z) * z)\n", [0.3, -0.7]),
    "branch": ("def f(x, z):\n    y = x if np.sum(x) > 10.0 else z * x\n    return np.sum(np.abs(y) ** 2)\n", [X, Z]),
}
NAMESPACE = {"PHASES": np.exp(1j * np.arange(5.0))}


def _args(name):
    source, args = CASES[name]
    return define(source, NAMESPACE), args if args is not None else [M, Z]


@pytest.mark.parametrize("name", sorted(CASES))
def test_against_central_differences(name):
    f, args = _args(name)
    for i in range(len(args)):
        check(f, args, i)


def test_real_argument_gets_real_gradient_through_fft():
    # the brief's example: the adjoint of a real input is real, though the cotangent reaching it is complex
    f = define("def f(x):\n    return np.real(np.sum(np.fft.fft(x) * np.conj(np.fft.fft(x))))\n")
    g = check(f, [X])
    assert g.dtype == np.float64
    np.testing.assert_allclose(g, 2 * len(X) * X, rtol=1e-10)          # Parseval: f = n |x|^2


def test_holomorphic_gradient_is_the_complex_derivative():
    f = define("def f(z):\n    return np.sin(z) * z\n")
    z = complex(0.3, 0.8)
    assert np.isclose(s2s.grad(f)(z), np.cos(z) * z + np.sin(z))


def test_gradient_descent_on_the_conjugate_decreases():
    f = define("def f(z):\n    return np.sum(np.abs(z - (1.0 + 2.0j)) ** 2)\n")
    z = Z.copy()
    for _ in range(50):
        z = z - 0.1 * np.conj(s2s.grad(f)(z))
    np.testing.assert_allclose(z, 1.0 + 2.0j, atol=1e-4)


@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
def test_dtype_stays(dtype):
    f = define("def f(z):\n    return np.sum(np.abs(np.exp(z) * z) ** 2)\n")
    z = Z.astype(dtype)
    g = s2s.grad(f)(z)
    assert g.dtype == dtype
    np.testing.assert_allclose(g, numerical_gradient(f, [Z]), rtol=1e-3 if dtype == np.complex64 else 1e-6)
    x = X.astype(np.float32)
    h = define("def h(x):\n    return np.sum(np.abs(np.exp(1j * x) + x) ** 2)\n")
    assert s2s.grad(h)(x).dtype == np.float32


def test_jvp_of_real_input_through_complex_ops_is_real():
    f = define("def f(x):\n    return np.sum(np.abs(np.exp(1j * x) * (x + 2.0j)))\n")
    value, tangent = s2s.jvp(f, (X,), (np.ones_like(X),))
    assert isinstance(tangent, float) or not np.iscomplexobj(tangent)


def test_hessian_of_real_function_through_complex_intermediates():
    f = define("def f(x):\n    w = np.exp(1j * x) * x\n    return np.sum(np.abs(w) ** 2 + np.real(w * w))\n")
    x = X[:3]
    h = s2s.hessian(f)(x)
    gradient = s2s.grad(f)
    eps = 1e-5
    reference = np.array([(gradient(x + eps * e) - gradient(x - eps * e)) / (2 * eps) for e in np.eye(3)])
    np.testing.assert_allclose(h, reference, rtol=1e-5, atol=1e-6)
    assert h.dtype == np.float64


# ---- the real rules s2s keeps for complex arguments (holomorphic, or linear): checked with complex points

Z34 = rng.standard_normal((3, 4)) + 1j * rng.standard_normal((3, 4))
RULES_ON_COMPLEX = {
 "prod": "def f(z):\n    return np.abs(np.prod(z, axis=1)).sum()\n",
 "prod0": "def f(z):\n    return np.real(np.prod(z * z))\n",
 "cumprod": "def f(z):\n    return np.sum(np.abs(np.cumprod(z, axis=1)))\n",
 "cumsum": "def f(z):\n    return np.sum(np.abs(np.cumsum(z, axis=0)) ** 2)\n",
 "mean": "def f(z):\n    return np.abs(np.mean(z))\n",
 "roll": "def f(z):\n    return np.sum(np.abs(np.roll(z, 1) * z))\n",
 "take": "def f(z):\n    return np.sum(np.abs(np.take(z, [0, 2, 2]) * 2))\n",
 "tril": "def f(z):\n    return np.sum(np.abs(np.tril(z) + np.triu(z, 1) * 1j) ** 2)\n",
 "rot90": "def f(z):\n    return np.sum(np.abs(np.rot90(z) @ z) ** 2)\n",
 "einsum": "def f(z):\n    return np.sum(np.abs(np.einsum('ij,kj->ik', z, z)) ** 2)\n",
 "tensordot": "def f(z):\n    return np.sum(np.abs(np.tensordot(z, z, axes=([1], [1]))))\n",
 "inner_outer_kron": "def f(z):\n    return np.sum(np.abs(np.inner(z, z))) + np.sum(np.abs(np.outer(z[0], z[1]))) + np.sum(np.abs(np.kron(z[0], z[1])))\n",
 "inv_solve_det": "def f(z):\n    a = z[:, :3]\n    return np.abs(np.linalg.det(a)) + np.sum(np.abs(np.linalg.inv(a))) + np.sum(np.abs(np.linalg.solve(a, z)))\n",
 "diag_trace": "def f(z):\n    return np.abs(np.trace(z[:, :3])) + np.sum(np.abs(np.diag(z[:, :3]))) + np.sum(np.abs(np.diagonal(z)))\n",
 "where": "def f(z):\n    return np.sum(np.abs(np.where(np.real(z) > 0, z * z, np.exp(z))))\n",
 "index_write": "def f(z):\n    y = z * 1.0\n    y[0, 1] = z[1, 2] * 2j\n    return np.sum(np.abs(y) ** 2)\n",
 "concat_stack": "def f(z):\n    return np.sum(np.abs(np.concatenate([z, z * 1j]) @ np.stack([z[0], z[1]], 1)))\n",
 "power_arr": "def f(z):\n    return np.sum(np.abs(z ** z))\n",
 "trig": "def f(z):\n    return np.sum(np.abs(np.tan(z) + np.arcsinh(z) + np.arctan(z) + np.log10(z) + np.sqrt(z) + np.reciprocal(z) + np.square(z)))\n",
}


# functions of |z| with rules of their own for complex arguments (rules/complex_numbers.py)
RULES_ON_COMPLEX.update({
    "norm": "def f(z):\n    return np.linalg.norm(z * z)\n",
    "norm_axis": "def f(z):\n    return np.sum(np.linalg.norm(z, axis=1) ** 3)\n",
    "norm_vector_2": "def f(z):\n    return np.linalg.norm(z[0], 2) ** 2\n",
    "norm_fro_keepdims": "def f(z):\n    return np.sum(np.linalg.norm(z, 'fro', (0, 1), True) * 2.0)\n",
    "var": "def f(z):\n    return np.var(z * z)\n",
    "var_axis_ddof": "def f(z):\n    return np.sum(np.var(z, axis=0, ddof=1) ** 2)\n",
    "std": "def f(z):\n    return np.std(z)\n",
    "std_axis_keepdims": "def f(z):\n    return np.sum(np.std(z, axis=1, keepdims=True) * np.arange(3.0).reshape(3, 1))\n",
})


@pytest.mark.parametrize("name", sorted(RULES_ON_COMPLEX))
def test_real_rules_that_hold_for_complex_arguments(name):
    check(define(RULES_ON_COMPLEX[name]), [Z34], rtol=1e-4, atol=1e-5)


# ---- the fence: what s2s does not model exactly for complex values is refused


@pytest.mark.parametrize("source", [
    "def f(z):\n    return np.sum(np.abs(np.maximum(z, 0.5)))\n",
    "def f(z):\n    return np.sum(np.abs(np.sort(z)))\n",
    "def f(z):\n    return np.real(np.max(z))\n",
    "def f(z):\n    return np.sum(np.abs(np.clip(z, 0.0, 1.0)))\n",
    "def f(z):\n    return np.sum(np.abs(np.sign(z) * z))\n",
])
def test_real_only_rules_refuse_complex_arguments(source):
    f = define(source)
    with pytest.raises(s2s.S2SError, match="real arguments only|no derivative rule|does not differentiate"):
        s2s.grad(f)(Z)
    with pytest.raises(s2s.S2SError, match="real arguments only|no .*rule|does not differentiate"):
        s2s.jvp(f, (Z,), (Z,))


def test_real_only_rule_refused_when_only_the_values_decide():
    # eigenvalues of a real matrix are real or complex depending on its values: checked when the code runs
    f = define("def f(a):\n    w = np.linalg.eigvals(a)\n    return np.sum(np.abs(np.maximum(w, 0.0)))\n")
    rotation = np.array([[0.0, -1.0], [1.0, 0.0]])       # eigenvalues +-i
    with pytest.raises(s2s.RefusedWhenRun, match="complex values when the code ran"):
        s2s.grad(f)(rotation)


def test_real_only_rule_still_works_on_real_values_that_might_have_been_complex():
    f = define("def f(a):\n    w, v = np.linalg.eig(a)\n    return np.sum(np.maximum(w, 0.0) ** 2)\n")
    a = np.array([[2.0, 1.0], [0.5, 3.0]])              # real eigenvalues
    np.testing.assert_allclose(s2s.grad(f)(a), numerical_gradient(f, [a]), rtol=1e-5, atol=1e-7)


# ---- against autograd itself


@pytest.mark.parametrize("name", ["abs_squared", "real_of_holomorphic", "imag", "conj", "angle", "matmul",
                                  "real_to_complex_to_real", "holomorphic_sum", "loop_accumulates"])
def test_against_autograd(name):
    autograd = pytest.importorskip("autograd", reason="autograd is not installed")
    import autograd.numpy as anp
    source, _ = CASES[name]
    f, args = _args(name)
    reference = define(source.replace("np.", "anp."), {"anp": anp, "np": np})
    for i in range(len(args)):
        # autograd's grad takes real outputs only; holomorphic_grad is f'(z), what s2s.grad gives
        ag = autograd.holomorphic_grad if np.iscomplexobj(f(*args)) else autograd.grad
        np.testing.assert_allclose(s2s.grad(f, wrt=i)(*args), ag(reference, i)(*args), rtol=1e-10, atol=1e-12)


# ---- numpy.linalg.eig: general matrices, complex eigen-decomposition (rules/linalg.py)

EIG_LOSS = ("def f(a):\n    w, v = np.linalg.eig(a)\n"
            "    return np.real(np.sum(w * w)) + np.sum(np.abs(v) ** 2 * np.cos(np.arange(9.0)).reshape(3, 3))\n")
A_REAL = np.array([[1.0, 2.0, 0.5], [0.3, -1.0, 1.5], [0.7, 0.2, 2.5]])        # real eigenvalues
A_ROTATING = np.array([[0.5, -2.0, 0.1], [1.5, 0.3, 0.4], [0.2, 0.1, -1.0]])   # a complex pair


@pytest.mark.parametrize("a", [A_REAL, A_ROTATING, M], ids=["real", "real-complex-pair", "complex"])
def test_eig(a):
    # the phase of each eigenvector is LAPACK's choice: the loss reads |v| only (as autograd's tests)
    f = define(EIG_LOSS)
    g = check(f, [a], rtol=1e-4, atol=1e-5)
    assert g.dtype == a.dtype


def test_eigvals():
    f = define("def f(a):\n    return np.sum(np.abs(np.linalg.eigvals(a)) ** 3)\n")
    for a in (A_REAL, A_ROTATING, M):
        check(f, [a], rtol=1e-4, atol=1e-5)


def test_eig_against_autograd():
    autograd = pytest.importorskip("autograd", reason="autograd is not installed")
    import autograd.numpy as anp
    reference = define(EIG_LOSS.replace("np.", "anp."), {"anp": anp})
    f = define(EIG_LOSS)
    for a in (A_REAL, A_ROTATING, M):
        np.testing.assert_allclose(s2s.grad(f)(a), autograd.grad(reference)(a), rtol=1e-7, atol=1e-9)


def test_eig_repeated_eigenvalues_give_non_finite_vector_adjoints():
    # documented in the rule: the eigenvectors are not unique there (autograd and JAX: inf/NaN too)
    a = np.diag([2.0, 2.0, 1.0])
    vectors = define("def f(a):\n    w, v = np.linalg.eig(a)\n    return np.sum(np.abs(v) ** 2 * np.arange(9.0).reshape(3, 3))\n")
    with np.errstate(divide="ignore", invalid="ignore"):
        assert not np.all(np.isfinite(s2s.grad(vectors)(a)))
    values = define("def f(a):\n    w, v = np.linalg.eig(a)\n    return np.real(np.sum(w * w))\n")
    np.testing.assert_allclose(s2s.grad(values)(a), 2 * a.T, atol=1e-12)


def test_forward_mode_gradient_of_a_complex_argument_is_refused():
    # a gradient by forward sweeps along real unit directions would miss df/dy
    f = define("def f(z):\n    return np.sum(np.abs(z) ** 2)\n")
    with pytest.raises(s2s.BadArgument, match="real arguments"):
        s2s.grad(f, mode="forward")(Z)
    np.testing.assert_allclose(s2s.grad(f)(complex(1.0, 2.0)), 2 - 4j)      # auto: reverse mode for complex


def test_jacobian_of_complex_values_is_refused():
    f = define("def f(z):\n    return np.exp(z)\n")
    with pytest.raises(s2s.BadArgument, match="complex"):
        s2s.jacobian(f)(Z)


class _Model:
    def __init__(self):
        self.phases = np.exp(1j * np.arange(5.0))
        self.scale = 2.0

    def loss(self, x):
        return np.sum(np.abs(self.phases * x * self.scale) ** 3)


MODEL = _Model()


def test_complex_attributes_of_objects_are_seen():
    # the method's self is known when the derivative is made: its complex attribute makes x * phases complex
    gradient = s2s.grad(MODEL.loss)(X)
    assert gradient.dtype == np.float64
    np.testing.assert_allclose(gradient, numerical_gradient(MODEL.loss, [X]), rtol=1e-6)
    f = define("def f(x):\n    return np.sum(np.abs(MODEL.phases * x) ** 3)\n", {"MODEL": MODEL})
    np.testing.assert_allclose(s2s.grad(f)(X), numerical_gradient(f, [X]), rtol=1e-6)


def test_norms_other_than_the_euclidean_are_refused_for_complex_values():
    f = define("def f(z):\n    return np.linalg.norm(z, 1)\n")
    with pytest.raises(s2s.RefusedWhenRun, match="ord=1 of complex values"):
        s2s.grad(f)(Z)


def test_real_of_a_real_array_is_never_written_in_place():
    # np.real(x) of a real x is x itself: the in-place pass must not write `y *= 3.0` into the caller's array
    f = define("def f(x):\n    y = np.real(x) * 3.0\n    return np.sum(y * x)\n")
    x = np.array([1.0, 2.0])
    np.testing.assert_allclose(s2s.grad(f)(x), 6 * x)
    _, tangent = s2s.jvp(f, (x,), (np.ones(2),))
    assert tangent == pytest.approx(18.0)
    np.testing.assert_array_equal(x, [1.0, 2.0])
