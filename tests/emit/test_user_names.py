"""A generated name never takes a name the code reads from the user's globals, closures or builtins, and the
user's names never hide the generated module's own: a global named like a tangent (`x_dot`), an adjoint (`dx`),
a seed (`dy`), a stack, a temporary, a helper, a bound function or the derivative itself is the user's value;
a parameter of the user's named like a global an inlined helper reads is renamed, not read in its place; and a
user's module that shadows a builtin (`from numpy import max`, a `range` of its own) does not change the
generated code's own `range`, `len` or `max`."""
import math

import numpy as np
import pytest
import scipy.special

import s2s
from conftest import assert_gradient, central, function_from_source

MODES = ("reverse", "forward", "auto")

x_dot = 5.0                 # the tangent forward mode makes for a parameter x


def times_x_dot(x):
    return x * x_dot


dx = 3.0                    # the adjoint reverse mode makes for x
x_bar = 1.5
dy = 4.0                    # the seed of y, the adjoint of a local y


def times_adjoint_names(x):
    y = np.sin(x) * x
    return y * dy + x * x * dx + x_bar * y


y_stack = 2.0               # the stack reverse mode keeps for y across iterations
t_stack = 0.5
n_iter = 0.25               # the trip count of a while loop's reverse sweep
t1 = 1.25                   # temporaries


def looped_with_stack_names(x):
    y = x
    i = 0
    while i < 3:
        y = np.sin(y) * y_stack + t_stack * y * y + n_iter * t1
        i += 1
    return y


_unbroadcast = 2.0          # a helper of the generated code's
np_scale = 3.0


def summed_with_helper_names(x):
    return np.sum(x * _unbroadcast * np.ones(3)) + np_scale * np.sum(x ** 2)


a = 2.0


def scaled_by_global_a(y):
    return y * a


def square_through_helper(a):             # the inlined helper reads the global a, not this parameter
    return scaled_by_global_a(a) * a


expit = 2.0                 # the name of a function the derivative calls (bound in the generated module)


def logistic_times_expit(x):
    return scipy.special.expit(x) * expit


times_global_grad_grad = 3.0     # named like the derivative itself
times_global_grad_jvp = 0.5


def times_global_grad(x):
    return x * x * times_global_grad_grad + x * times_global_grad_jvp


@pytest.mark.parametrize("mode", MODES)
def test_a_global_named_like_the_tangent(mode):
    """Found by the tester (W1): forward mode read the tangent `x_dot` in place of the global x_dot (1.0, not 5.0)."""
    assert s2s.grad(times_x_dot, mode=mode)(0.7) == pytest.approx(5.0, rel=1e-12)


def test_a_global_named_like_the_tangent_in_jvp_and_second_order():
    assert s2s.jvp(times_x_dot, (0.7,), (1.0,)) == pytest.approx((3.5, 5.0), rel=1e-12)
    x = np.array([1.0, 2.0])
    summed = function_from_source("""
        def summed(x):
            return np.sum(x ** 2 * x_dot)
    """, namespace={"x_dot": 5.0})
    np.testing.assert_allclose(s2s.hessian(summed)(x), 10.0 * np.eye(2), rtol=1e-12)
    np.testing.assert_allclose(s2s.hvp(summed)(x, np.array([1.0, 0.0])), [10.0, 0.0], rtol=1e-12)


@pytest.mark.parametrize("f, x", [(times_adjoint_names, 0.7), (looped_with_stack_names, 0.4),
                                  (square_through_helper, 0.7), (logistic_times_expit, 0.3),
                                  (times_global_grad, 0.7)])
def test_globals_named_like_generated_names(f, x):
    assert_gradient(f, x)


def test_the_expected_values_by_hand():
    # closed forms (the helper's parameter read in place of the global a gave 2 * 0.7 ** 2, not 2 * a * 0.7)
    assert s2s.grad(square_through_helper)(0.7) == pytest.approx(2 * a * 0.7, rel=1e-12)
    assert s2s.grad(logistic_times_expit, mode="reverse")(0.3) == pytest.approx(
        2.0 * scipy.special.expit(0.3) * (1 - scipy.special.expit(0.3)), rel=1e-12)
    assert s2s.grad(times_global_grad, mode="reverse")(0.7) == pytest.approx(2 * 0.7 * 3.0 + 0.5, rel=1e-12)


@pytest.mark.parametrize("mode", MODES)
def test_a_global_named_like_a_helper_on_arrays(mode):
    x = np.array([0.3, -0.2, 0.5])
    np.testing.assert_allclose(s2s.grad(summed_with_helper_names, mode=mode)(x), 2.0 + 6.0 * x, rtol=1e-12)


def test_the_vjp_seed_is_not_the_users_global():
    out, pullback = s2s.vjp(times_adjoint_names, 0.7)
    expected = central(times_adjoint_names, 0.7)
    assert pullback(1.0)[0] == pytest.approx(expected, rel=1e-6)
    assert pullback(2.0)[0] == pytest.approx(2.0 * expected, rel=1e-6)


def test_the_generated_parameter_is_renamed_not_the_global():
    text = str(s2s.source(times_x_dot, 0.7, mode="forward"))
    assert "def times_x_dot_jvp(x, x_dot_1):" in text and "x_dot_1 * x_dot" in text


@pytest.mark.parametrize("mode", MODES)
def test_a_module_that_shadows_builtins(mode):
    """`from numpy import max, min, abs, sum` and a `range` of the module's own: the generated code's loops and
    calls are Python's builtins still (the reverse sweep's `for _ in range(n_iter)` ran the user's range)."""
    f = function_from_source("""
        from numpy import max, min, abs, round, sum
        c = 1.5

        def f(x):
            y = x
            i = 0
            while i < 3:
                y = np.sin(y) * c
                i += 1
            return builtins.abs(y * y) + builtins.max(y, 0.1) + builtins.min(x, 5.0) + len((x, y))
    """, namespace={"range": lambda n: [0, 1], "reversed": lambda s: s[:1], "len": lambda s: 0.0,
                    "builtins": __import__("builtins")})
    assert s2s.grad(f, mode=mode)(0.7) == pytest.approx(central(f, 0.7), rel=1e-6)


@pytest.mark.parametrize("mode", MODES)
def test_a_function_in_a_namespace_of_its_own(mode):
    """A global read through its owner (named like the derivative) when the function's module is not importable:
    its globals, read by name when the code runs."""
    scope = {"np": np, "__name__": "not_a_module"}
    exec("def g(x):\n    return x * x * g_grad + x * g_jvp\n", scope)
    scope["g_grad"], scope["g_jvp"] = 3.0, 0.5
    import linecache
    linecache.cache["<g>"] = (1, None, ["def g(x):\n", "    return x * x * g_grad + x * g_jvp\n"], "<g>")
    scope["g"].__code__ = scope["g"].__code__.replace(co_filename="<g>")
    g = s2s.grad(scope["g"], mode=mode)
    assert g(0.7) == pytest.approx(2 * 0.7 * 3.0 + 0.5, rel=1e-12)
    scope["g_grad"] = 1.0                        # read live
    assert g(0.7) == pytest.approx(2 * 0.7 + 0.5, rel=1e-12)


def test_a_closure_named_like_generated_names():
    def make(k):
        x_dot, dx = k, 2.0 * k

        def f(x):
            return x * x_dot + x * x * dx
        return f
    for mode in MODES:
        assert s2s.grad(make(3.0), mode=mode)(0.5) == pytest.approx(3.0 + 2 * 0.5 * 6.0, rel=1e-12)
        assert s2s.grad(make(1.0), mode=mode)(0.5) == pytest.approx(1.0 + 2 * 0.5 * 2.0, rel=1e-12)


def test_math_and_numpy_names_of_the_users():
    # (a parameter named like a builtin the generated code calls)
    def clip(x, min, max):
        return np.minimum(np.maximum(x, min), max) * 2.0 + min * max + math.fabs(x)
    for mode in MODES:
        got = s2s.grad(clip, wrt=(0, 1, 2), mode=mode)(0.7, 0.1, 2.0)
        np.testing.assert_allclose(got, (3.0, 2.0, 0.1), rtol=1e-12)


@pytest.mark.parametrize("mode", MODES)
def test_globals_named_like_the_modules_the_code_imports(mode):
    """`math = 2.0` and `np = 3.0` in the user's module, `sin` imported by name: the derivative's `math.cos` is
    the module, the user's math and np their numbers."""
    f = function_from_source("""
        def f(x):
            return sin(x) * math + x * np
    """, namespace={"sin": math.sin, "math": 2.0, "np": 3.0})
    assert s2s.grad(f, mode=mode)(0.7) == pytest.approx(2.0 * math.cos(0.7) + 3.0, rel=1e-12)
