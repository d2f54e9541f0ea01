"""A derivative follows what its function reads when it runs: helpers and globals rebound, attributes of
the user's modules and classes changed, methods replaced on the object or its class, a global that stops being a
number or turns complex."""
import math

import numpy as np
import pytest

import config_module
import s2s


def _rebound_helper(x):
    return x * x


def _uses_rebound_helper(x):
    return _rebound_helper(x) * 2.0


def test_every_derivative_of_a_function_sees_a_helper_rebound():
    """Outside round 1 (the first outside tester's programs, written in their own style)."""
    g1 = s2s.grad(_uses_rebound_helper, mode="reverse")
    g2 = s2s.value_and_grad(_uses_rebound_helper, mode="reverse")
    assert g1(3.0) == pytest.approx(12.0) and g2(3.0) == (pytest.approx(18.0), pytest.approx(12.0))
    original = globals()["_rebound_helper"]
    globals()["_rebound_helper"] = lambda x: x * x * x
    try:
        assert g1(3.0) == pytest.approx(54.0)
        assert g2(3.0) == (pytest.approx(54.0), pytest.approx(54.0))
    finally:
        globals()["_rebound_helper"] = original


SCALE = 2.0


def _scaled_power(x):
    return np.sum(np.abs(SCALE * x) ** 2)


def test_a_global_that_turns_complex_makes_the_derivative_anew():
    """Outside round 1 (the first outside tester's programs, written in their own style)."""
    global SCALE
    x = np.array([1.0, 3.0])
    a, b = s2s.grad(_scaled_power), s2s.value_and_grad(_scaled_power)
    np.testing.assert_allclose(a(x), 8 * x)
    np.testing.assert_allclose(b(x)[1], 8 * x)
    SCALE = 2.0j
    try:
        for got in (a(x), b(x)[1]):
            assert not np.iscomplexobj(got)
            np.testing.assert_allclose(got, 8 * x)
        SCALE = 3.0
        np.testing.assert_allclose(a(x), 18 * x)
    finally:
        SCALE = 2.0


DT = 0.01


def damped(x0):
    x = x0
    for _ in range(3):
        x += DT             # x0 a float: `+=` makes a new number, never writes into x0
    return x * x


def test_a_global_that_stops_being_a_number_makes_the_derivative_anew(monkeypatch):
    """Outside round 3, F1's program (the global DT) with the global changed between calls."""
    gradient = s2s.grad(damped, mode="reverse")
    assert gradient(0.3) == pytest.approx(2 * 0.33)
    monkeypatch.setitem(globals(), "DT", 0.02)
    assert gradient(0.3) == pytest.approx(2 * 0.36)
    monkeypatch.setitem(globals(), "DT", np.array([0.01, 0.02]))       # x becomes an array: made anew, and
    with pytest.raises(s2s.NonScalarOutput, match="array of shape"):     # its output is an array
        gradient(0.3)


class Quartic:
    def e(self, x):
        return x ** 2

    def tot(self, x):
        return self.e(x) * 2


@pytest.mark.parametrize("mode", ["reverse", "forward", "auto"])
def test_a_method_replaced_after_the_derivative_was_made(mode, monkeypatch):
    """Outside round 3, F8: the derivative of q.tot kept the old q.e after `q.e = lambda ...` (silently)."""
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
    """Outside round 3, found with F8: grad(mode="forward"), jvp and hvp call the pipeline directly, and did not ask
    whether a function the code names was rebound (a notebook cell run again)."""
    forward = s2s.grad(uses_inner, mode="forward")
    assert forward(0.5) == pytest.approx(3.0)
    assert s2s.jvp(uses_inner, (0.5,), (1.0,))[1] == pytest.approx(3.0)
    monkeypatch.setitem(globals(), "_inner", lambda x: x ** 3)
    assert forward(0.5) == pytest.approx(9 * 0.25)
    assert s2s.jvp(uses_inner, (0.5,), (1.0,))[1] == pytest.approx(9 * 0.25)
    assert s2s.hvp(uses_inner)(0.5, 1.0) == pytest.approx(18 * 0.5)


def module_attribute(x):
    return config_module.scale * x * x + config_module.Config.scale * x


def test_attributes_of_the_users_modules_and_classes_are_read_at_call_time():
    """Independent review: a case found silently wrong once, now right or refused."""
    g = s2s.grad(module_attribute)
    assert g(1.5) == pytest.approx(2 * 2.0 * 1.5 + 3.0)
    config_module.scale, config_module.Config.scale = 10.0, 1.0
    try:
        assert g(1.5) == pytest.approx(2 * 10.0 * 1.5 + 1.0)
    finally:
        config_module.scale, config_module.Config.scale = 2.0, 3.0


def helper_one(x):
    return x * x


ACTIVATION = np.tanh


def uses_helper(x):
    return 2.0 * helper_one(x) + np.sum(ACTIVATION(np.array([x])))


def test_functions_named_by_globals_are_followed_when_rebound():
    """Independent review: a case found silently wrong once, now right or refused."""
    global helper_one, ACTIVATION
    g = s2s.grad(uses_helper)
    x = 1.5
    first = g(x)
    assert first == pytest.approx(4 * x + (1 - math.tanh(x) ** 2))
    saved = helper_one, ACTIVATION

    def cube(x):
        return x * x * x
    helper_one, ACTIVATION = cube, np.sin
    try:
        assert g(x) == pytest.approx(2 * 3 * x * x + math.cos(x))
        assert s2s.grad(uses_helper)(x) == pytest.approx(2 * 3 * x * x + math.cos(x))
    finally:
        helper_one, ACTIVATION = saved
    assert g(x) == pytest.approx(first)
