"""s2s.testing.check_grads: what it accepts, what it catches, and the table it reports."""
import math

import numpy as np
import pytest

import s2s
from s2s.rules import registry
from s2s.testing import rulecheck
from s2s import testing
from s2s.testing import GradCheckError, check_grads, sample_points


@pytest.fixture(autouse=True)
def _registry_restored():
    """Rules these tests register (some of them deliberately wrong) are removed afterwards."""
    registry._ensure_loaded()
    tables = [registry._ADJOINTS, registry._TANGENTS, registry._BROADCASTING, registry._LINEAR,
              registry._NONDIFFERENTIABLE, rulecheck._SAMPLE_POINTS]
    saved = [dict(t) for t in tables]
    yield
    for table, copy in zip(tables, saved):
        table.clear()
        table.update(copy)


def seed(x1, x2):
    return math.log(x1) + x1 * x2 - math.sin(x2)


def layer(W, x):
    return np.sum(np.tanh(W @ x) ** 2)


def params_loss(p, x):
    return np.sum(np.tanh(p["W"] @ x + p["b"]) ** 2) + p["scale"][0] * p["scale"][1]


def vector_output(W, x):
    return np.tanh(W @ x)


def with_count(x, n):
    return x ** n


_rng = np.random.default_rng(19)
W, X = _rng.standard_normal((3, 2)), _rng.standard_normal(2)


def test_correct_derivatives_pass_in_both_modes_and_second_order():
    check_grads(seed, (2.0, 5.0))
    check_grads(layer, (W, X), order=2)
    check_grads(seed, (2.0, 5.0), wrt="x2", modes=("reverse",))
    check_grads(with_count, (1.5, 3))             # the integer argument is not differentiated


def test_containers_vector_outputs_and_float32():
    check_grads(params_loss, ({"W": W, "b": np.ones(3), "scale": (1.5, -0.5)}, X))
    check_grads(vector_output, (W, X), order=1)   # a vjp with a random cotangent, and jvps
    check_grads(layer, (W.astype(np.float32), X.astype(np.float32)))


def test_float32_gets_looser_tolerances():
    assert testing.tolerance_for((W.astype(np.float32), 1.0)) == testing.checks.TOLERANCES["float32"]
    assert testing.tolerance_for((W, 1.0, {"a": X})) == testing.checks.TOLERANCES["float64"]
    # float64's tolerance is too tight for central differences of float32 arithmetic
    with pytest.raises(GradCheckError):
        check_grads(layer, (W.astype(np.float32), X.astype(np.float32)), rtol=1e-7, atol=1e-9, eps=1e-6)


def fresh_cube(make_fn):
    """A new function cube (to register a rule for) and cube_sum calling it: derivatives are cached per
    function, so each test that registers its own rule needs its own functions."""
    def cube(x):
        return x * x * x
    return cube, make_fn("def cube_sum(x):\n    return np.sum(cube(x))\n", namespace={"cube": cube})


def test_a_wrong_adjoint_is_reported_as_a_table_of_the_worst_coordinates(make_fn):
    cube, cube_sum = fresh_cube(make_fn)

    @s2s.adjoint(cube)
    def cube_adjoint(g, ans, x):
        return g * 3.0 * x * x + g * (x > 1.0)          # wrong where x > 1, by 1
    s2s.elementwise(cube)
    x = np.array([0.5, 1.5, -0.3, 2.5, 3.0, 4.0, 5.0, 6.0, 7.0])
    with pytest.raises(GradCheckError) as info:
        check_grads(cube_sum, (x,), order=1)
    message = str(info.value)
    lines = message.splitlines()
    assert lines[0] == ("check_grads(cube_sum): the reverse-mode gradient against central differences: "
                        "7 of 9 coordinates differ (rtol=1e-05, atol=1e-06)")
    assert lines[1].split() == ["argument", "index", "s2s", "reference", "rel.", "error"]
    worst = lines[2].split()        # the worst excess over the tolerance: smallest |reference| where all are off by 1
    assert worst[:3] == ["x", "(1,)", "7.75"] and float(worst[3]) == pytest.approx(6.75, rel=1e-6)
    assert len(lines) == 2 + 5 + 1 and lines[-1].strip() == "... and 2 more"
    assert [(r.index, round(r.value - r.reference, 6)) for r in info.value.rows][:2] == [((1,), 1.0), ((3,), 1.0)]


def test_a_wrong_tangent_is_caught_by_forward_mode_and_by_comparing_the_modes(make_fn):
    cube, cube_sum = fresh_cube(make_fn)

    @s2s.adjoint(cube)
    def cube_adjoint(g, ans, x):
        return g * 3.0 * x * x

    @s2s.tangent(cube)
    def cube_tangent(t, ans, x):
        return (t * 3.0 * x,)                        # missing a factor x
    with pytest.raises(GradCheckError, match=r"the forward-mode derivative against central differences"):
        check_grads(cube_sum, (np.array([0.5, 2.0]),), order=1)
    check_grads(cube_sum, (np.array([0.5, 2.0]),), order=1, modes=("reverse",))


def test_a_wrong_second_derivative_is_caught(make_fn):
    cube, cube_sum = fresh_cube(make_fn)

    @s2s.adjoint(cube)
    def cube_adjoint(g, ans, x):
        return g * 3.0 * s2s.stop_gradient(x) ** 2    # right value, but no second derivative
    s2s.elementwise(cube)
    check_grads(cube_sum, (np.array([0.5, 2.0]),), order=1)
    with pytest.raises(GradCheckError, match=r"Hessian-vector product .* against central differences") as info:
        check_grads(cube_sum, (np.array([0.5, 2.0]),), order=2)
    assert all(r.value == 0.0 for r in info.value.rows)       # 6x v, computed as 0


def test_arguments_it_refuses():
    with pytest.raises(ValueError, match="order=2 needs a scalar-valued function"):
        check_grads(vector_output, (W, X), order=2)
    with pytest.raises(ValueError, match="modes are"):
        check_grads(seed, (2.0, 5.0), modes=("sideways",))
    with pytest.raises(ValueError, match="no argument is a float"):
        check_grads(with_count, (2, 3))


def test_sample_points_declare_rule_cases(make_fn):
    cube, _ = fresh_cube(make_fn)

    @sample_points((0.5,), (np.array([1.0, -2.0]),))
    @s2s.adjoint(cube)
    def cube_adjoint(g, ans, x):
        return g * 3.0 * x * x
    s2s.elementwise(cube)
    cases = [c for c in testing.rule_cases() if c.prim is cube]
    assert [c.id.rsplit(".", 1)[-1] for c in cases] == ["cube[0]", "cube[1]"]
    assert cases[0].modes == ("reverse", "forward")
    for case in cases:
        case.check(order=2)
    f, point = cases[1].function()
    assert f(*point) == pytest.approx(np.sum(cube(point[0]) * rulecheck._function_for(cube, cases[1].point)[0]
                                             .__globals__["WEIGHTS"]))
    with pytest.raises(ValueError, match="is not a registered rule"):
        sample_points((1.0,))(lambda g, ans, x: g)
    with pytest.raises(ValueError, match="expected a tuple of arguments"):
        sample_points(cube, [1.0])


def test_rule_table_lists_rules_with_their_modes():
    rows = {name: (module, modes) for name, module, modes in testing.rule_table()}
    assert rows["math.sin"] == ("s2s.rules.math_functions", "reverse, forward")
    assert rows["numpy.sin"][1] == "reverse, forward"
    assert any(modes == "nondifferentiable" for _, modes in rows.values())


def test_the_rules_domains_table_serves_as_sample_points():
    """tests/rules/test_rules.py's DOMAINS rows have the format sample_points takes (multi-line cases included)."""
    import operator
    import test_rules
    picked = [np.sum, np.linalg.solve, s2s.runtime.list_append, operator.getitem, np.clip]
    for prim in picked:
        sample_points(prim, *test_rules.DOMAINS[prim])
    cases = [c for c in testing.rule_cases(builtin=True) if c.prim in picked]
    assert len(cases) == sum(len(test_rules.DOMAINS[p]) for p in picked)
    for case in cases:
        case.check(order=2)
