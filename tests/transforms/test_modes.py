"""Forward mode against reverse mode on every function of the other suites, and jvp / vjp / jacobian."""
import math
import sys
from pathlib import Path

import numpy as np
import pytest

import s2s
from conftest import code
import test_control_flow as cf
import test_straight_line as sl

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "examples"))
import euler_ode  # noqa: E402
import logistic_regression  # noqa: E402
import mlp  # noqa: E402
import newton_sqrt  # noqa: E402

rng = np.random.default_rng(7)
X_rows = rng.normal(size=(4, 2))

CORPUS = [
    (sl.seed, (2.0, 5.0), (0, 1)),
    (sl.two_args, (1.3, 2.4), (0, 1)),
    *[(fn, (1.7,), 0) for fn, _ in sl.CLOSED_FORMS],
    (cf.piecewise, (-2.0,), 0), (cf.piecewise, (0.5,), 0), (cf.piecewise, (2.0,), 0),
    (cf.conditional_expression, (0.4,), 0), (cf.conditional_expression, (-1.5,), 0),
    (cf.boolean_operators, (1.0, 1.0), (0, 1)), (cf.boolean_operators, (-6.0, 3.0), (0, 1)),
    (cf.chained, (0.4,), 0), (cf.chained, (1.5,), 0), (cf.branch_with_pass, (3.0,), 0),
    (cf.power_loop, (1.3, 0), 0), (cf.power_loop, (1.3, 7), 0),
    (cf.range_forms, (0.7, 2, 9, -3), 0), (cf.reversed_range, (0.9, 6), 0),
    (cf.while_accumulate, (1.5, 4), 0), (cf.sum_loop, (1.5, 4), 0),
    (cf.while_depends_on_x, (3.3,), 0), (cf.long_loop, (0.5, 300), 0),
    (cf.over_list, (0.8,), 0), (cf.over_rows, (0.7, X_rows), (0, 1)),
    (cf.over_enumerate_and_zip, (1.1, np.array([1.0, 2.0, 3.0]), np.array([0.5, -1.0])), (0, 1, 2)),
    (cf.nested_break_continue, (1.2,), 0), (cf.early_return, (1.1,), 0), (cf.early_return, (0.1,), 0),
    (cf.return_in_while, (1.0,), 0), (cf.return_in_branch, (4.0,), 0), (cf.return_in_branch, (-3.0,), 0),
    (cf.while_with_break, (1.3,), 0), (cf.power_and_branch, (1.3, 6), 0),
    (newton_sqrt.newton_sqrt, (2.0,), 0), (euler_ode.euler, (0.7, 2.0, 0.01, 50), (0, 1)),
    (logistic_regression.loss, (rng.normal(size=3), 0.1, rng.normal(size=(6, 3)), np.array([0, 1, 1, 0, 1, 0.0])),
     (0, 1)),
    (mlp.mse, (*mlp.init(hidden=4), *mlp.make_task(n=5)), (0, 1, 2, 3)),
]


def _flat(g):
    if isinstance(g, tuple):
        return np.concatenate([np.ravel(np.asarray(v, dtype=float)) for v in g])
    return np.ravel(np.asarray(g, dtype=float))


@pytest.mark.parametrize("fn, args, wrt", CORPUS, ids=[f"{c[0].__name__}{i}" for i, c in enumerate(CORPUS)])
def test_forward_mode_gradient_equals_reverse_mode(fn, args, wrt):
    reverse = s2s.grad(fn, wrt=wrt, mode="reverse")(*args)
    forward = s2s.grad(fn, wrt=wrt, mode="forward")(*args)
    assert _flat(forward) == pytest.approx(_flat(reverse), rel=1e-10, abs=1e-12)
    auto = s2s.grad(fn, wrt=wrt)(*args)           # mode="auto": forward mode seeded with 1.0 along one float
    assert _flat(auto) == pytest.approx(_flat(reverse), rel=1e-10, abs=1e-12)


@pytest.mark.parametrize("fn, args, wrt", CORPUS[:12], ids=[c[0].__name__ for c in CORPUS[:12]])
def test_optimized_and_raw_transforms_agree(fn, args, wrt):
    for mode in ("auto", "reverse", "forward"):
        raw = s2s.grad(fn, wrt=wrt, mode=mode, optimize=False)(*args)
        assert _flat(raw) == pytest.approx(_flat(s2s.grad(fn, wrt=wrt, mode=mode)(*args)), rel=1e-12)


def test_jvp_returns_value_and_directional_derivative():
    value, tangent = s2s.jvp(sl.seed, (2.0, 5.0), (0.3, -0.7))
    d1, d2 = s2s.grad(sl.seed, wrt=(0, 1))(2.0, 5.0)
    assert value == pytest.approx(sl.seed(2.0, 5.0))
    assert tangent == pytest.approx(0.3 * d1 - 0.7 * d2)
    value, tangent = s2s.jvp(sl.seed, (2.0, 5.0), (None, 1.0))
    assert tangent == pytest.approx(d2)


def test_forward_source_has_no_stack_and_no_reverse_pass():
    source = code(s2s.source(cf.power_loop, 1.3, 4, mode="forward"))
    assert "def power_loop_jvp(x, n, x_dot):" in source
    assert "append" not in source and "reversed" not in source
    assert sum(line.strip().startswith("for ") for line in source.splitlines()) == 1


def vector_function(x, a):
    return np.tanh(x * a) * np.sum(x)


@pytest.mark.parametrize("n, m", [(2, 5), (6, 3)])
def test_jacobian_forward_and_reverse_choices_agree_with_finite_differences(n, m):
    def f(x, A):
        return np.tanh(A @ x) * np.sum(x * x)

    x, A = rng.normal(size=n), rng.normal(size=(m, n))
    J = s2s.jacobian(f)(x, A)
    assert J.shape == (m, n)
    eps = 1e-6
    numeric = np.stack([(f(x + eps * e, A) - f(x - eps * e, A)) / (2 * eps) for e in np.eye(n)], axis=1)
    assert J == pytest.approx(numeric, rel=1e-6, abs=1e-8)


def test_vjp_of_a_vector_function():
    x, a = rng.normal(size=4), 1.7
    value, pullback = s2s.vjp(vector_function, x, a)
    cotangent = rng.normal(size=4)
    dx, da = pullback(cotangent)
    J = s2s.jacobian(vector_function)(x, a)
    assert value == pytest.approx(vector_function(x, a))
    assert dx == pytest.approx(cotangent @ J)
    eps = 1e-6
    numeric_da = (vector_function(x, a + eps) - vector_function(x, a - eps)) / (2 * eps)
    assert da == pytest.approx(cotangent @ numeric_da, rel=1e-6)


def with_default(x, c=5.0):
    return x * x * c + c


def test_defaults_in_every_mode():
    """The defaults of the user's signature stay with its parameters, not with tangent parameters."""
    x = 3.0
    assert s2s.grad(with_default)(x) == 30.0
    assert s2s.grad(with_default, mode="reverse")(x) == 30.0
    assert s2s.grad(with_default, mode="forward")(x) == 30.0
    assert s2s.jvp(with_default, (x,), (1.0,)) == (50.0, 30.0)
    assert s2s.hessian(with_default)(x) == 10.0 and s2s.hvp(with_default)(x, 1.0) == 10.0
    assert s2s.grad(s2s.grad(with_default))(x) == 10.0
    value, pullback = s2s.vjp(with_default, x)
    assert pullback(1.0)[0] == 30.0
    assert "def with_default_jvp(x, c, x_dot):" in s2s.source(with_default, mode="forward")


def test_forward_mode_with_lists_and_infinities():
    """Independent review: a case found silently wrong once, now right or refused."""
    def appended(x):
        xs = []
        for i in range(3):
            xs.append(x * i)
        return sum(xs, 5.0)

    def masked_sqrt(x):
        return np.sum(np.sqrt(np.maximum(x, 0.0)))

    assert s2s.grad(appended, mode="forward")(1.5) == 3.0
    with np.errstate(divide="ignore", invalid="ignore"):
        assert s2s.grad(masked_sqrt, mode="forward")(np.array([0.0, 4.0]))[1] == 0.25
    with pytest.raises(s2s.NonScalarOutput):
        s2s.grad(tuple_output, mode="forward")(1.0)
    assert s2s.grad(s2s.grad(appended, mode="forward"))(1.5) == 0.0


def tuple_output(x):
    return x, x * x
