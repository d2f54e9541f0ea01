"""scipy.integrate.odeint (rules/integrate.py): the adjoint ODE in reverse mode, forward sensitivities in
forward mode, against central differences of odeint itself. The solver's tolerances are tight (1e-10), so
the differences and the derivatives agree to about 1e-6."""
import numpy as np
import pytest

import s2s
from s2s.testing.gradcheck import numerical_gradient

scipy_integrate = pytest.importorskip("scipy.integrate", reason="odeint's rule is registered when SciPy is installed")
odeint = scipy_integrate.odeint

MODES = ("reverse", "forward", "auto")

TIMES = np.array([0.0, 0.3, 0.8, 1.5])
WEIGHTS = np.array([[1.0, 0.5], [-0.7, 2.0], [0.3, 1.1], [1.4, -0.6]])


def oscillator(y, t, k, c):
    """A damped, driven oscillator: args k (an array of one stiffness per... one) and c (a float)."""
    return np.array([y[1], -k * y[0] - c * y[1] + np.sin(2.0 * t)])


def as_list(y, t, k):
    return [y[1], -k * np.sin(y[0])]            # a pendulum, returning a list as many users write it


def time_first(t, y, a):
    return -a * y * (1.0 + 0.1 * t)


def make_decay(rate):
    """A closure: func is made by a factory, over a constant."""
    def decay(y, t, scale):
        return -rate * scale * y + np.cos(t)
    return decay


DECAY = make_decay(0.8)


def loss_oscillator(y0, k, c):
    return np.sum(odeint(oscillator, y0, TIMES, args=(k, c), rtol=1e-10, atol=1e-10) * WEIGHTS)


def loss_times(ts, k):
    return np.sum(odeint(as_list, np.array([1.0, 0.0]), ts, args=(k,), rtol=1e-10, atol=1e-10) * WEIGHTS)


def loss_time_first(y0, a):
    return np.sum(odeint(time_first, y0, TIMES, args=(a,), tfirst=True, rtol=1e-10, atol=1e-10) ** 2)


def loss_closure(y0, scale):
    ys = odeint(DECAY, y0, TIMES, args=(scale,), rtol=1e-10, atol=1e-10)
    return np.sum(np.sin(ys)) + ys[-1, 0] * scale


def loss_no_args(y0):
    return np.sum(odeint(DECAY, y0, TIMES, (1.5,), rtol=1e-10, atol=1e-10)[1:] ** 3)


def _central(f, args, i, h=1e-5):
    """The gradient of f with respect to argument i by central differences."""
    x = np.asarray(args[i], dtype=float)
    out = np.zeros(np.shape(x))
    for k in np.ndindex(np.shape(x)):
        e = np.zeros(np.shape(x))
        e[k] = h
        step = (lambda d: x + d) if np.ndim(x) else (lambda d: float(x + d))
        plus = f(*[step(e) if j == i else a for j, a in enumerate(args)])
        minus = f(*[step(-e) if j == i else a for j, a in enumerate(args)])
        out[k] = (plus - minus) / (2 * h)
    return out


CASES = [(loss_oscillator, (np.array([1.0, -0.5]), 2.0, 0.3)),
         (loss_oscillator, (np.array([0.2, 0.9]), np.array(1.3), 0.05)),
         (loss_times, (TIMES + 0.1, 1.7)),
         (loss_time_first, (0.7, 0.5)),
         (loss_closure, (np.array([0.4, -1.2, 0.8]), 1.1)),
         (loss_no_args, (np.array([0.5, 1.0]),))]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("f, args", CASES, ids=[f"{f.__name__}{k}" for k, (f, _) in enumerate(CASES)])
def test_odeint_gradient_against_central_differences(f, args, mode):
    wrt = tuple(range(len(args)))
    gradients = s2s.grad(f, wrt=wrt, mode=mode)(*args)
    for i, g in zip(wrt, gradients):
        expected = _central(f, args, i)
        assert np.shape(g) == np.shape(args[i]), f"argument {i}"
        assert np.asarray(g) == pytest.approx(expected, rel=1e-5, abs=1e-6), f"argument {i}"


def test_both_modes_agree_on_each_argument_alone():
    args = (np.array([1.0, -0.5]), 2.0, 0.3)
    for i in range(3):
        reverse = s2s.grad(loss_oscillator, wrt=i)(*args)
        forward = s2s.grad(loss_oscillator, wrt=i, mode="forward")(*args)
        assert np.asarray(forward) == pytest.approx(np.asarray(reverse), rel=1e-6, abs=1e-8)


def test_exponential_decay_against_its_closed_form():
    """y' = -a y: y(t) = y0 exp(-a t), so d/dy0 sum y(t_i) = sum exp(-a t_i), d/da = -sum t_i y0 exp(-a t_i)."""
    def decay(y, t, a):
        return -a * y

    def total(y0, a):
        return np.sum(odeint(decay, y0, TIMES, args=(a,), rtol=1e-11, atol=1e-12))
    dy0, da = s2s.grad(total, wrt=(0, 1))(np.array([2.0]), 0.6)
    assert dy0 == pytest.approx([np.sum(np.exp(-0.6 * TIMES))], rel=1e-7)
    assert da == pytest.approx(-np.sum(TIMES * 2.0 * np.exp(-0.6 * TIMES)), rel=1e-7)


def test_jvp_of_the_trajectory():
    y0, k, c = np.array([1.0, -0.5]), 2.0, 0.3
    dy0 = np.array([0.3, -1.0])

    def trajectory(y0, k):
        return odeint(oscillator, y0, TIMES, args=(k, c), rtol=1e-10, atol=1e-10)
    _, tangent = s2s.jvp(trajectory, (y0, k), (dy0, 0.5))
    h = 1e-6
    expected = (trajectory(y0 + h * dy0, k + 0.5 * h) - trajectory(y0 - h * dy0, k - 0.5 * h)) / (2 * h)
    assert tangent == pytest.approx(expected, rel=1e-5, abs=1e-7)


def _hessian_by_differences(f, args, h=1e-4):
    """The Hessian of f (all arguments, flattened together) by central differences of s2s's reverse gradient."""
    sizes = [np.size(a) for a in args]
    gradient = s2s.grad(f, wrt=tuple(range(len(args))), mode="reverse")

    def flat_gradient(x):
        parts, start = [], 0
        for a, n in zip(args, sizes):
            parts.append(np.reshape(x[start:start + n], np.shape(a)) if np.ndim(a) else float(x[start]))
            start += n
        return np.concatenate([np.ravel(g) for g in gradient(*parts)])
    x = np.concatenate([np.ravel(a) for a in args])
    columns = [(flat_gradient(x + h * e) - flat_gradient(x - h * e)) / (2 * h) for e in np.eye(np.size(x))]
    return np.array(columns).T


def _flat_hessian(blocks, args):
    sizes = [np.size(a) for a in args]
    return np.block([[np.reshape(blocks[i][j], (sizes[i], sizes[j])) for j in range(len(args))]
                     for i in range(len(args))])


# each case is 2.4 to 4.5 s of CPU (a Hessian column is a solve of the adjoint ODE with its sensitivities, and the
# differences take two gradients per coordinate): time_first in the default run, the other three with -m slow
@pytest.mark.parametrize("f, args", [pytest.param(*CASES[0], marks=pytest.mark.slow, id="oscillator"),
                                     pytest.param(*CASES[2], marks=pytest.mark.slow, id="times"),
                                     pytest.param(*CASES[3], id="time_first"),
                                     pytest.param(*CASES[4], marks=pytest.mark.slow, id="closure")])
def test_hessian_forward_over_reverse_against_differences_of_the_gradient(f, args):
    """Second order: the adjoint sweep's tangent (each adjoint ODE with its forward sensitivities)."""
    blocks = s2s.hessian(f, wrt=tuple(range(len(args))))(*args)
    expected = _hessian_by_differences(f, args)
    assert _flat_hessian(blocks, args) == pytest.approx(expected, rel=1e-4, abs=1e-5)


@pytest.mark.parametrize("f, args, i, j", [(loss_oscillator, CASES[0][1], 1, 1), (loss_oscillator, CASES[0][1], 1, 2),
                                        (loss_time_first, CASES[3][1], 0, 0), (loss_time_first, CASES[3][1], 1, 0),
                                        (loss_closure, CASES[4][1], 1, 1)])
@pytest.mark.parametrize("inner_mode", ["forward", "reverse", "auto"])
def test_second_derivative_of_a_gradient(f, args, i, j, inner_mode):
    """d/dx_j of the gradient in x_i (a float): forward over the gradient's code, which is forward mode (forward
    over forward: the sensitivity ODE's own sensitivities) or reverse mode (the adjoint sweep's tangent)."""
    inner = s2s.grad(f, wrt=i, mode=inner_mode)
    second = s2s.grad(inner, wrt=j)(*args)
    h = 1e-4
    plus = inner(*[a + h if k == j else a for k, a in enumerate(args)])
    minus = inner(*[a - h if k == j else a for k, a in enumerate(args)])
    assert second == pytest.approx((plus - minus) / (2 * h), rel=1e-5, abs=1e-7)


def test_third_order_is_refused_when_the_derivative_is_made():
    args = (np.array([1.0, -0.5]), 2.0, 0.3)
    third = s2s.grad(s2s.grad(s2s.grad(loss_oscillator, wrt=1), wrt=1), wrt=1)
    with pytest.raises(s2s.NoDerivativeRule, match="beyond second order"):
        third(*args)


def test_full_output_is_refused_with_its_place():
    def with_info(y0):
        return np.sum(odeint(DECAY, y0, TIMES, args=(1.0,), full_output=1)[0])
    with pytest.raises(s2s.S2SError, match="without full_output") as info:
        s2s.grad(with_info)(np.array([1.0]))
    assert "test_odeint.py" in str(info.value)


def test_a_nested_function_closing_over_an_active_value_gets_it_through_args():
    """The variables the nested def reads become its trailing parameters, given through odeint's args=
    (s2s/frontend/desugar/odeint_closures.py): the gradient flows through them as through any args."""
    def f(y0, k):
        def rhs(y, t):
            return -k * y
        return np.sum(odeint(rhs, y0, TIMES))
    expected = -np.sum(TIMES * np.exp(-0.5 * TIMES))          # y = exp(-k t)
    for mode in ("reverse", "forward", "auto"):
        assert s2s.grad(f, wrt=1, mode=mode)(np.array([1.0]), 0.5) == pytest.approx(expected, rel=1e-5)


MODES = ["reverse", "forward", "auto"]


TS = np.linspace(0.0, 1.0, 5)


DECAY_RATE = 0.5


def ode_constant_rhs(y0):
    return np.sum(odeint(lambda y, t: -DECAY_RATE * y, y0, TS))


def ode_rate_through_args(y0, k):
    return np.sum(odeint(lambda y, t, kk: -kk * y, y0, TS, args=(k,)) ** 2)


def ode_rate_through_closure(k):
    return np.sum(odeint(lambda y, t: -k * y, np.array([1.0]), TS))


@pytest.mark.parametrize("mode", MODES)
def test_odeint_with_a_lambda_that_reads_no_variable(mode):
    """Outside round 2: crashes that became results or located refusals."""
    y0 = np.array([1.0, 2.0])
    expected = np.sum(np.exp(-DECAY_RATE * TS))              # d/dy0_i of sum_t y0_i exp(-DECAY_RATE t)
    assert ode_constant_rhs(y0) == pytest.approx(3 * expected, rel=1e-6)
    np.testing.assert_allclose(s2s.grad(ode_constant_rhs, mode=mode)(y0), [expected, expected], rtol=1e-5)
    got = s2s.grad(ode_rate_through_args, wrt=1, mode=mode)(np.array([1.0]), 0.7)
    assert got == pytest.approx(numerical_gradient(ode_rate_through_args, (np.array([1.0]), 0.7), 1, 1e-6),
                                rel=1e-4)


def ode_nested_rhs(y0, k):
    def rhs(y, t):
        return -k * y + np.sin(t) * y0[0]
    return np.sum(odeint(rhs, y0, TS, rtol=1e-10, atol=1e-10))


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("f", [ode_rate_through_closure, ode_nested_rhs])
def test_odeint_rhs_reading_the_functions_variables_gets_them_through_args(f, mode):
    """Outside round 2: crashes that became results or located refusals."""
    args = (0.7,) if f is ode_rate_through_closure else (np.array([1.0, 2.0]), 0.7)
    if f is ode_rate_through_closure:        # sum_t exp(-k t): its derivative -sum_t t exp(-k t)
        assert s2s.grad(f, mode=mode)(0.7) == pytest.approx(-np.sum(TS * np.exp(-0.7 * TS)), rel=1e-5)
    for i in range(len(args)):
        got = s2s.grad(f, wrt=i, mode=mode)(*args)
        np.testing.assert_allclose(got, numerical_gradient(f, args, i, 1e-6), rtol=1e-4, atol=1e-7)
