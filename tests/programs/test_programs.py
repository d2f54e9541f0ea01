"""Real programs: calls into the user's functions, closures and globals, containers, several outputs,
writes into arrays, and rules the user registers."""
import math

import numpy as np
import pytest

import s2s
from conftest import code
import user_module
from user_module import layer, scaled_square

rng = np.random.default_rng(11)


# ---------------------------------------------------------------- calls

def helper(a, b=3.0):
    return a * b + math.sin(a)


def calls(x, y):
    first = helper(x)
    second = helper(b=y, a=x * y)
    return first + second + scaled_square(y, factor=0.5)


def test_calls_with_keywords_and_defaults():
    x, y = 0.7, -1.2
    expected_dx = 3.0 + math.cos(x) + y * (y + math.cos(x * y))
    expected_dy = x * (y + math.cos(x * y)) + x * y + y
    dx, dy = s2s.grad(calls, wrt=(0, 1))(x, y)
    assert (dx, dy) == pytest.approx((expected_dx, expected_dy))
    s2s.check_grad(calls, x, y, wrt=(0, 1))


def network(W1, b1, W2, X):
    hidden = layer(X, W1, b1)
    return np.sum(layer(hidden, W2, 0.0, activation=np.sin))


def test_functions_imported_from_another_module_and_passed_as_arguments():
    W1, b1, W2, X = rng.normal(size=(3, 4)), rng.normal(size=4), rng.normal(size=(4, 2)), rng.normal(size=(5, 3))
    s2s.check_grad(network, W1, b1, W2, X, wrt=(0, 1, 2))


def test_globals_of_other_modules_are_read_at_call_time():
    W1, b1, W2, X = rng.normal(size=(3, 4)), rng.normal(size=4), rng.normal(size=(4, 2)), rng.normal(size=(5, 3))
    g = s2s.grad(network)
    before = g(W1, b1, W2, X)
    user_module.SCALE = 3.0
    try:
        after = g(W1, b1, W2, X)
        s2s.check_grad(network, W1, b1, W2, X)
    finally:
        user_module.SCALE = 2.0
    assert not np.allclose(before, after)
    assert "user_module.SCALE" in code(s2s.source(network, W1, b1, W2, X))


def make_model(k):
    def inner(t, power=2.0):
        return k * t ** power

    def model(x):
        return inner(x) + inner(power=3.0, t=x)
    return model


def test_nested_functions_and_closures():
    model = make_model(1.5)
    x = 2.0
    assert s2s.grad(model)(x) == pytest.approx(1.5 * (2 * x + 3 * x * x))


def countdown(x, n):
    if n == 0:
        return x
    return countdown(x * 2.0, n - 1)


def test_recursion_is_differentiated():
    # (recursion was refused until issue 26: tests/transforms/test_recursion.py has the cases)
    for n in (0, 3):
        for mode in ("reverse", "forward", "auto"):
            assert s2s.grad(countdown, mode=mode)(1.5, n) == pytest.approx(2.0 ** n)


def test_nondifferentiable_calls_pass_through(capsys):
    def f(x, v):
        n = len(v)
        k = int(x)
        if isinstance(x, float) and v.shape[0] == n:
            print("evaluating")
        total = 0.0
        for i in range(n):
            total = total + v[i] * x * float(k)
        return total + (x > 0.5)

    v = np.array([1.0, 2.0, 3.0])
    assert s2s.grad(f)(2.3, v) == pytest.approx(6.0 * 2)
    assert "evaluating" in capsys.readouterr().out


def test_stop_gradient_blocks_a_path():
    def f(x):
        return x * s2s.stop_gradient(x * x)

    assert s2s.grad(f)(3.0) == 9.0
    assert "stop_gradient(" in code(s2s.source(f))


# ---------------------------------------------------------------- containers

def tuples_and_lists(x, y):
    pair = (x * y, x + y)
    a, b = pair
    items = [a, b, pair[0]]
    return items[0] * items[1] + items[2]


def test_tuples_and_lists_built_unpacked_and_indexed():
    x, y = 0.5, 1.5
    dx, dy = s2s.grad(tuples_and_lists, wrt=(0, 1))(x, y)
    assert dx == pytest.approx(y * (x + y) + x * y + y)
    s2s.check_grad(tuples_and_lists, x, y, wrt=(0, 1))


def appended(x, n):
    values = []
    for i in range(n):
        values.append(x ** (i + 1))
    return sum(values) + np.sum(np.stack(values) * 2.0)


def test_append_in_a_loop_then_sum_and_stack():
    x, n = 1.3, 4
    expected = 3 * sum((i + 1) * x ** i for i in range(n))
    assert s2s.grad(appended)(x, n) == pytest.approx(expected)
    assert "values.append(" in code(s2s.source(appended, x, n))


def dicts(x):
    d = {"a": x, "b": 2.0 * x}
    d["c"] = d["a"] * d["b"]
    d["a"] = 1.0
    return d["a"] + d["c"]


def test_dicts_with_constant_keys():
    assert s2s.grad(dicts)(1.5) == pytest.approx(4 * 1.5)


def loss_of_params(params, X, y):
    hidden = np.tanh(X @ params["W1"] + params["b1"])
    prediction = hidden @ params["W2"] + params["b2"]
    return np.mean((prediction - y) ** 2)


def test_gradient_of_a_dict_has_the_dict_structure():
    params = {"W1": rng.normal(size=(3, 4)), "b1": np.zeros(4), "W2": rng.normal(size=(4, 1)), "b2": 0.0}
    X, y = rng.normal(size=(6, 3)), rng.normal(size=(6, 1))
    g = s2s.grad(loss_of_params)(params, X, y)
    assert set(g) == set(params)
    assert all(np.shape(g[k]) == np.shape(params[k]) for k in params)
    assert isinstance(g["b2"], float)
    s2s.check_grad(loss_of_params, params, X, y)


def test_jvp_with_a_dict_of_tangents_agrees_with_reverse_mode():
    params = {"W1": rng.normal(size=(3, 4)), "b1": np.zeros(4), "W2": rng.normal(size=(4, 1)), "b2": 0.0}
    X, y = rng.normal(size=(6, 3)), rng.normal(size=(6, 1))
    direction = {"W1": rng.normal(size=(3, 4)), "b1": rng.normal(size=4), "W2": rng.normal(size=(4, 1)), "b2": 0.5}
    _, tangent = s2s.jvp(loss_of_params, (params, X, y), (direction, None, None))
    g = s2s.grad(loss_of_params)(params, X, y)
    assert tangent == pytest.approx(sum(np.sum(g[k] * direction[k]) for k in params))


def test_gradients_of_tuples_and_lists_keep_their_structure():
    def f(pair, items):
        return pair[0] * pair[1] + np.sum(items[0] * items[1])

    pair, items = (1.5, -2.0), [rng.normal(size=3), rng.normal(size=3)]
    dpair, ditems = s2s.grad(f, wrt=(0, 1))(pair, items)
    assert isinstance(dpair, tuple) and dpair == pytest.approx((-2.0, 1.5))
    assert isinstance(ditems, list) and ditems[0] == pytest.approx(items[1])
    s2s.check_grad(f, pair, items, wrt=(0, 1))


def test_unused_entries_of_a_dict_get_zero_gradients():
    def f(params):
        return params["used"] * 2.0

    g = s2s.grad(f)({"used": 1.0, "unused": np.ones(3)})
    assert g["used"] == 2.0 and np.all(g["unused"] == 0.0) and g["unused"].shape == (3,)


# ---------------------------------------------------------------- several outputs

def two_outputs(x, y):
    return x * y, np.sin(x) + y


def test_vjp_of_a_tuple_output():
    value, pullback = s2s.vjp(two_outputs, 0.5, 2.0)
    assert value == (1.0, math.sin(0.5) + 2.0)
    dx, dy = pullback((1.0, 0.0))
    assert (dx, dy) == pytest.approx((2.0, 0.5))
    dx, dy = pullback((0.0, 1.0))
    assert (dx, dy) == pytest.approx((math.cos(0.5), 1.0))


def test_has_aux():
    def f(x):
        y = x * x
        return 3.0 * y, {"y": y, "steps": 2}

    gradient, aux = s2s.grad(f, has_aux=True)(2.0)
    assert gradient == 12.0 and aux == {"y": 4.0, "steps": 2}
    (value, aux), gradient = s2s.value_and_grad(f, has_aux=True)(2.0)
    assert value == 12.0 and gradient == 12.0


# ---------------------------------------------------------------- writes into arrays

def test_writes_into_local_arrays():
    def f(x, y):
        a = np.zeros(4)
        a[0] = x
        a[1:3] = y * x
        a[3] += x * x
        saved = a * 1.0
        a[0] = a[0] * y
        return np.sum(a * saved)

    s2s.check_grad(f, 1.5, -0.5, wrt=(0, 1))
    x, y = 1.5, -0.5
    expected_dx = 2 * x * y + 2 * 2 * y * y * x + 4 * x ** 3
    assert s2s.grad(f)(x, y) == pytest.approx(expected_dx)
    assert "a[0] = x" in code(s2s.source(f, mode="reverse"))           # written in place: nothing else reads the old array


def test_augmented_writes_into_columns():
    def f(W, c):
        M = W * 1.0
        M[:, 1] *= c
        M[0] += 2.0 * c
        return np.sum(M * M)

    s2s.check_grad(f, rng.normal(size=(3, 2)), 0.7, wrt=(0, 1))


def test_writing_into_an_argument_leaves_the_callers_array_alone():
    def f(x):
        x[0] = x[0] * 3.0
        return np.sum(x * x)

    x = np.array([1.0, 2.0])
    g = s2s.grad(f)(x)
    assert np.all(x == [1.0, 2.0])
    assert g == pytest.approx([18.0, 4.0])


def test_writes_through_aliases_and_views_are_refused():
    def alias(x):
        a = np.zeros(3)
        b = a
        b[0] = x
        return np.sum(a)

    def view(x):
        a = np.zeros((2, 2))
        row = a[0]
        row[0] = x
        return np.sum(a)

    with pytest.raises(s2s.UnsupportedSyntax, match="same object as 'a'"):
        s2s.grad(alias)
    with pytest.raises(s2s.UnsupportedSyntax, match="view"):
        s2s.grad(view)


# ---------------------------------------------------------------- rules the user registers

def opaque_softplus(x):
    """Stands for a function s2s cannot look into (a C extension)."""
    return np.log1p(np.exp(x))


@s2s.adjoint(opaque_softplus)
def _softplus_adjoint(g, ans, x):
    return g * (1.0 - np.exp(-ans))


@s2s.tangent(opaque_softplus)
def _softplus_tangent(t, ans, x):
    return (t * (1.0 - np.exp(-ans)),)


def uses_softplus(x):
    return np.sum(opaque_softplus(x * 2.0))


def test_custom_rule_is_used_and_called_visibly():
    x = rng.normal(size=3)
    s2s.check_grad(uses_softplus, x)
    assert s2s.grad(uses_softplus, mode="forward")(x) == pytest.approx(s2s.grad(uses_softplus)(x))
    source = code(s2s.source(uses_softplus, x))
    assert "opaque_softplus(" in source and "from test_programs import opaque_softplus" in source


def digamma(x):
    result = 0.0
    while x < 6.0:
        result = result - 1.0 / x
        x = x + 1.0
    return result + math.log(x) - 1.0 / (2 * x) - 1.0 / (12 * x * x) + 1.0 / (120 * x ** 4)


def test_rule_for_a_c_function():
    from s2s.rules import registry
    builtin = registry.find_adjoint(math.gamma)         # (s2s's own, with SciPy: rules/special.py; put back after)
    s2s.adjoint(math.gamma)(lambda_free_gamma_rule)
    try:
        def f(x):
            return math.gamma(x) * x
        x = 2.5
        assert s2s.grad(f)(x) == pytest.approx(math.gamma(x) * (1 + x * digamma(x)), rel=1e-9)
    finally:
        if builtin is None:
            registry._ADJOINTS.pop(math.gamma, None)
        else:
            registry._ADJOINTS[math.gamma] = builtin


def lambda_free_gamma_rule(g, ans, x):
    return g * ans * digamma(x)


def test_missing_rule_suggests_the_custom_rule_api():
    def f(x):
        return math.remainder(x, 0.3)       # (math.lgamma was the example until it had a rule)

    with pytest.raises(s2s.NoDerivativeRule, match=r"math.remainder.*\n.*s2s.adjoint"):
        s2s.grad(f)(2.0)
