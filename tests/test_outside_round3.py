"""Findings of the third outside tester (programs in other people's style), each against central differences."""
import numpy as np
import pytest

import s2s


def central(f, x, *rest, eps=1e-6):
    return (f(x + eps, *rest) - f(x - eps, *rest)) / (2 * eps)


DT = 0.01


def damped(x0):
    x = x0
    for _ in range(3):
        x += DT             # x0 a float: `+=` makes a new number, never writes into x0
    return x * x


@pytest.mark.parametrize("mode", ["auto", "reverse", "forward"])
def test_augmented_assignment_of_a_global_number_in_a_loop(mode):
    # the outside tester's F1: the global's kind was unknown, so x might have been an array x0 also names
    assert s2s.grad(damped, mode=mode)(0.3) == pytest.approx(central(damped, 0.3), rel=1e-7)


def test_a_global_that_stops_being_a_number_makes_the_derivative_anew(monkeypatch):
    gradient = s2s.grad(damped, mode="reverse")
    assert gradient(0.3) == pytest.approx(2 * 0.33)
    monkeypatch.setitem(globals(), "DT", 0.02)
    assert gradient(0.3) == pytest.approx(2 * 0.36)
    monkeypatch.setitem(globals(), "DT", np.array([0.01, 0.02]))       # x becomes an array: made anew, and
    with pytest.raises(s2s.NonScalarOutput, match="array of shape"):     # its output is an array
        gradient(0.3)


def one_element_output(x):
    return np.array([np.sum(x ** 2)])


def scalar_to_one_element(x):
    return np.array([x ** 3])


@pytest.mark.parametrize("mode", ["reverse", "forward"])
def test_an_output_of_one_element_is_a_scalar_output_in_both_modes(mode):
    # the outside tester's F10: forward mode crashed setting an array element with a sequence
    x = np.array([0.7, -1.3, 2.1])
    assert np.allclose(s2s.grad(one_element_output, mode=mode)(x), 2 * x, rtol=1e-12)
    assert float(s2s.grad(scalar_to_one_element, mode=mode)(0.5)) == pytest.approx(3 * 0.25)


CFG = {"scale": 2.0, "shift": 0.5}


def config_get(x):
    return CFG.get("scale", 1.0) * x ** 2 + CFG.get("missing", 3.0) * x


def config_items(x):
    t = sum(v * x for v in CFG.values())
    for k, v in CFG.items():
        t = t + v * x ** 2
    for k in CFG.keys():
        t = t + CFG[k] * x ** 3
    return t


@pytest.mark.parametrize("mode", ["reverse", "forward"])
@pytest.mark.parametrize("f", [config_get, config_items], ids=lambda f: f.__name__)
def test_methods_of_a_global_configuration_dict(f, mode, monkeypatch):
    # F5: `.get()`, `.values()`, `.items()` on a module-level dict were refused ("call the NumPy function")
    assert s2s.grad(f, mode=mode)(1.5) == pytest.approx(central(f, 1.5), rel=1e-7)
    monkeypatch.setitem(CFG, "scale", 4.0)          # read when the derivative runs
    assert s2s.grad(f, mode=mode)(1.5) == pytest.approx(central(f, 1.5), rel=1e-7)


def local_function_list(x):
    fs = [np.sin, np.cos]
    t = 0.0
    for g in fs:
        t = t + g(x)
    more = (np.exp, lambda v: v ** 3)
    for h in more:
        t = t + h(x)
    return t


def local_function_list_changed(x):
    fs = [np.sin, np.cos]
    fs.append(np.tan)           # no longer the list it was made: not named statically
    t = 0.0
    for g in fs:
        t = t + g(x)
    return t


@pytest.mark.parametrize("mode", ["reverse", "forward"])
def test_functions_held_in_a_local_list(mode):
    # F6: `fs = [np.sin, np.cos]; for g in fs:` was refused, while a global list or a tuple display worked
    assert s2s.grad(local_function_list, mode=mode)(1.4) == pytest.approx(central(local_function_list, 1.4),
                                                                          rel=1e-7)
    with pytest.raises(s2s.S2SError, match=r"test_outside_round3\.py:\d+:\d+: .*name statically"):
        s2s.grad(local_function_list_changed, mode=mode)(1.4)


SPD = np.array([[4.0, 1.0, 0.5], [1.0, 3.0, 0.2], [0.5, 0.2, 2.0]])


def cholesky_entries(A):
    L = np.linalg.cholesky(A)
    return L[1, 0] + 2 * L[2, 1] + L[2, 2]


def cholesky_upper(A):
    U = np.linalg.cholesky(A, upper=True)
    return U[0, 1] + 2 * U[1, 2] + U[2, 2] ** 2


def cho_solved(A):
    import scipy.linalg as la
    return np.sum(la.cho_solve(la.cho_factor(A), np.array([1.0, -2.0, 0.5])) ** 2)


def symmetric_central(f, A, eps=1e-6):
    """The derivative along symmetric perturbations, as a symmetric matrix (the convention of the rules)."""
    g = np.zeros_like(A)
    for i in range(A.shape[0]):
        for j in range(i + 1):
            E = np.zeros_like(A)
            E[i, j] = E[j, i] = eps
            d = (f(A + E) - f(A - E)) / (2 * eps)
            g[i, j] = g[j, i] = d if i == j else d / 2
    return g


@pytest.mark.parametrize("f", [cholesky_entries, cholesky_upper, cho_solved], ids=lambda f: f.__name__)
def test_cholesky_tangents_are_symmetrized_as_its_adjoints(f):
    # F13: forward mode (and jvp, jacobian) had not symmetrized the tangent; reverse mode had
    if f is cho_solved:
        pytest.importorskip("scipy", reason="cho_factor and cho_solve are SciPy's")
    expected = symmetric_central(f, SPD)
    for mode in ("reverse", "forward"):
        assert np.allclose(s2s.grad(f, mode=mode)(SPD), expected, rtol=1e-6, atol=1e-8), mode
    E01 = np.zeros((3, 3))
    E01[0, 1] = 1.0
    assert s2s.jvp(f, (SPD,), (E01,))[1] == pytest.approx(expected[0, 1], rel=1e-6, abs=1e-9)


def quadratic(w):
    return np.sum(w * w)


def regularized(w, lam=0.1):
    return np.sum(np.sin(w)) + lam * w @ w


D_QUADRATIC = s2s.grad(quadratic)
D_REGULARIZED = s2s.grad(regularized)


def two_steps(lr):
    w = np.array([0.1, 0.2])
    w = w - lr * D_QUADRATIC(w)
    w = w - lr * D_QUADRATIC(w)
    return quadratic(w)


def steps_in_a_loop(lr):
    w = np.array([0.1, 0.2])
    for _ in range(3):
        w = w - lr * D_REGULARIZED(w, 0.1)
    return regularized(w)


def steps_with_the_default(lr):
    w = np.array([0.1, 0.2])
    for _ in range(3):
        w = w - lr * D_REGULARIZED(w)
    return regularized(w)


def gradient_dot(w):
    return D_REGULARIZED(w, 0.3) @ np.array([1.0, 0.5, -0.5])


@pytest.mark.parametrize("mode", ["reverse", "forward"])
@pytest.mark.parametrize("f", [two_steps, steps_in_a_loop, steps_with_the_default], ids=lambda f: f.__name__)
def test_gradient_steps_inside_a_differentiated_function(f, mode):
    # F16: reverse mode met s2s's own helpers without rules; forward mode evaluated a tangent for every argument
    assert s2s.grad(f, mode=mode)(0.3) == pytest.approx(central(f, 0.3), rel=1e-6)


@pytest.mark.parametrize("mode", ["reverse", "forward"])
def test_a_jax_style_hessian_vector_product(mode):
    w = np.array([0.2, -0.3, 0.1])
    v = np.array([1.0, 0.5, -0.5])
    expected = s2s.hvp(regularized)(w, 0.3, v)
    assert np.allclose(s2s.grad(gradient_dot, mode=mode)(w), expected, rtol=1e-10)


def complex_loop(w):
    z = 0.3 + 0.1j
    for _ in range(6):
        z = z * z * w + 0.1j
    return abs(z)


def phasor(a):
    z = 0.0 + 0.0j
    for k in range(3):
        z = z + a * np.exp(1j * k)
    return abs(z) ** 2


@pytest.mark.parametrize("f", [complex_loop, phasor], ids=lambda f: f.__name__)
def test_checkpointed_loops_carrying_complex_values(f):
    # F18: the checkpointed step's copies of the body had lost which values may be complex
    for snapshots in (2, 5):
        g = s2s.grad(f, mode="reverse", checkpoint=snapshots)(0.8)
        assert isinstance(g, float) or np.isrealobj(g)
        assert g == pytest.approx(central(f, 0.8), rel=1e-6)


def keyword_only(x, *, scale=2.0, shift):
    return scale * x ** 2 + np.sin(shift * x)


@pytest.mark.parametrize("mode", ["auto", "reverse", "forward"])
def test_wrt_a_keyword_only_argument(mode):
    # F17: wrt='shift' was "names no argument of f('x',)"
    d_shift = s2s.grad(keyword_only, wrt="shift", mode=mode)(0.5, shift=0.3)
    assert d_shift == pytest.approx(0.5 * np.cos(0.15), rel=1e-12)
    dx, dscale = s2s.grad(keyword_only, wrt=("x", "scale"), mode=mode)(0.5, scale=1.5, shift=0.3)
    assert (dx, dscale) == pytest.approx((3 * 0.5 + 0.3 * np.cos(0.15), 0.25), rel=1e-12)
    with pytest.raises(s2s.BadArgument, match="keyword-only argument: wrt='name'"):
        s2s.grad(keyword_only, wrt=1, mode=mode)


def stats_loglik(mu, x):
    import scipy.stats as st
    return np.sum(st.norm.logpdf(x, mu, 1.5)) + np.sum(st.t.logpdf(x, 3.0, mu))


def test_export_of_a_function_reading_scipy_stats_distributions():
    # F14: refused ("logpdf, a method that a module cannot import"), and without a location
    pytest.importorskip("scipy", reason="scipy.stats is SciPy's")
    x = np.array([0.1, 0.5, -0.2])
    text = s2s.export(stats_loglik, 0.3, x, mode="reverse", with_value=True)
    assert "import scipy.stats\n" in text and text.count("import scipy.stats\n") == 1
    scope = {}
    exec(compile(text, "<exported>", "exec"), scope)
    value, gradient = scope["stats_loglik_value_and_grad"](0.3, x)
    assert value == pytest.approx(stats_loglik(0.3, x), rel=1e-12)
    assert gradient == pytest.approx(central(stats_loglik, 0.3, x), rel=1e-7)


class Quartic:
    def e(self, x):
        return x ** 2

    def tot(self, x):
        return self.e(x) * 2


@pytest.mark.parametrize("mode", ["reverse", "forward"])
def test_a_method_replaced_after_the_derivative_was_made(mode, monkeypatch):
    # F8: the derivative of q.tot kept the old q.e after `q.e = lambda ...` (silently)
    q = Quartic()
    gradient = s2s.grad(q.tot, mode=mode)
    assert gradient(0.7) == pytest.approx(4 * 0.7)
    q.e = lambda x: x ** 4                              # on the object
    assert gradient(0.7) == pytest.approx(8 * 0.7 ** 3)
    del q.e
    assert gradient(0.7) == pytest.approx(4 * 0.7)
    monkeypatch.setattr(Quartic, "e", lambda self, x: x ** 3)      # on the class
    assert gradient(0.7) == pytest.approx(6 * 0.7 ** 2)
    q.unrelated = 1.0                                   # another attribute: the same derivative, still right
    assert gradient(0.7) == pytest.approx(6 * 0.7 ** 2)


def _inner(x):
    return x ** 2


def uses_inner(x):
    return _inner(x) * 3.0


def test_forward_mode_and_jvp_see_a_helper_rebound(monkeypatch):
    # found with F8: grad(mode="forward"), jvp and hvp call the pipeline directly, and did not ask whether a
    # function the code names was rebound (a notebook cell run again)
    forward = s2s.grad(uses_inner, mode="forward")
    assert forward(0.5) == pytest.approx(3.0)
    assert s2s.jvp(uses_inner, (0.5,), (1.0,))[1] == pytest.approx(3.0)
    monkeypatch.setitem(globals(), "_inner", lambda x: x ** 3)
    assert forward(0.5) == pytest.approx(9 * 0.25)
    assert s2s.jvp(uses_inner, (0.5,), (1.0,))[1] == pytest.approx(9 * 0.25)
    assert s2s.hvp(uses_inner)(0.5, 1.0) == pytest.approx(18 * 0.5)


class Stepper:
    dt = 0.01

    def run(self, x0):
        x = x0
        for _ in range(3):
            x += self.dt * x            # self.dt's kind is not known: x0 a float is enough
        return x


def scaled_by_config(x0):
    x = x0
    for _ in range(3):
        x *= 1.0 + CFG["scale"]
    return x


def written_into_argument_array(v0):
    v = v0
    for _ in range(3):
        v += DT                 # v0 an array: `+=` would change the caller's array
    return np.sum(v ** 2)


@pytest.mark.parametrize("mode", ["reverse", "forward"])
def test_augmented_assignment_of_a_float_argument_in_a_loop(mode):
    # F1's variants: refused as "may be the same array as x0" although x0 is a number
    stepper = Stepper()
    assert s2s.grad(stepper.run, mode=mode)(0.3) == pytest.approx(1.01 ** 3, rel=1e-12)
    assert s2s.grad(scaled_by_config, mode=mode)(0.3) == pytest.approx((1.0 + CFG["scale"]) ** 3, rel=1e-12)
    with pytest.raises(s2s.UnsupportedSyntax, match="'v' may be the same array as 'v0'"):
        s2s.grad(written_into_argument_array, mode=mode)(np.array([0.3, 0.4]))
