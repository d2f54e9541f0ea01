"""The function a call runs, found through holders when the derivative is made (desugar/context.py `static`), is
watched through every look-up that reached it (driver/dispatch.py): a function (or callable object) read from an
object of any class (a `types.SimpleNamespace` too), a list's or tuple's item, a dict's item by a key read from a
global or an attribute, and the global or closure variable holding the container. Replacing any of them makes the
derivative anew, in every mode and through every way of making it (grad, value_and_grad, vjp, jvp); a cached
derivative called again after the change gives the new function's value and gradient.

Found by an outside tester (breaker2 F3, F5, F6): each of these kept the old function's value and gradient with no
error, even with S2S_CHECK=1 (a cache hit is not checked again)."""
import types

import numpy as np
import pytest

import s2s
from conftest import central

MODES = ("auto", "reverse", "forward")
X = 0.3


def _made(f):
    """Derivatives of f made (and called once) now, before what the test changes."""
    made = {}
    for mode in MODES:
        made["grad", mode] = s2s.grad(f, mode=mode)
        made["value_and_grad", mode] = s2s.value_and_grad(f, mode=mode)
    for d in made.values():
        d(X)
    return made


def _assert_follows(made, f):
    """Each derivative, and a vjp and jvp made now, against f as Python runs it and central differences."""
    expected = central(f, X)
    for (kind, mode), d in made.items():
        if kind == "grad":
            assert d(X) == pytest.approx(expected, rel=1e-6, abs=1e-9), (kind, mode)
        else:
            value, gradient = d(X)
            assert value == pytest.approx(f(X), rel=1e-12), (kind, mode)
            assert gradient == pytest.approx(expected, rel=1e-6, abs=1e-9), (kind, mode)
    value, vjp_fn = s2s.vjp(f, X)
    assert value == pytest.approx(f(X), rel=1e-12)
    (adjoint,) = vjp_fn(1.0)
    assert adjoint == pytest.approx(expected, rel=1e-6, abs=1e-9)
    value, tangent = s2s.jvp(f, (X,), (1.0,))
    assert value == pytest.approx(f(X), rel=1e-12)
    assert tangent == pytest.approx(expected, rel=1e-6, abs=1e-9)


def _follows(f, *changes):
    """f's derivatives right before and after each change in turn (each a function of no arguments)."""
    made = _made(f)
    _assert_follows(made, f)
    for change in changes:
        change()
        _assert_follows(made, f)


# ---------------------------------------------------------------- F3: a SimpleNamespace's attribute

CFG = types.SimpleNamespace(fn=np.sin)


def through_namespace(x):
    return CFG.fn(3.0 * x)


def test_a_function_in_a_namespace_replaced():
    """F3: `CFG.fn = np.cos` on a SimpleNamespace kept sin's value and derivative (1.86483; right -2.34998)."""
    CFG.fn = np.sin
    try:
        _follows(through_namespace, lambda: setattr(CFG, "fn", np.cos), lambda: setattr(CFG, "fn", np.tanh))
    finally:
        CFG.fn = np.sin


def test_a_namespace_rebound():
    global CFG
    saved = CFG
    try:
        _follows(through_namespace, lambda: globals().__setitem__("CFG", types.SimpleNamespace(fn=np.cos)))
    finally:
        CFG = saved


class Square:
    def __call__(self, z):
        return z * z


class Cube:
    def __call__(self, z):
        return z * z * z


NS3 = types.SimpleNamespace(act=Square())


def through_callable_object(x):
    return NS3.act(x)


def test_a_callable_object_in_a_namespace_replaced():
    """F5: `NS3.act = Cube()` kept Square's derivative (0.6; right 0.27)."""
    NS3.act = Square()
    try:
        _follows(through_callable_object, lambda: setattr(NS3, "act", Cube()))
    finally:
        NS3.act = Square()


def test_the_call_method_of_a_callable_objects_class_replaced():
    NS3.act = Square()
    saved = Square.__call__
    try:
        _follows(through_callable_object, lambda: setattr(Square, "__call__", Cube.__call__))
    finally:
        Square.__call__ = saved


# ---------------------------------------------------------------- F5: a list's item, a key read from a namespace

FNS = [np.sin]


def through_list_item(x):
    return FNS[0](2 * x)


def test_a_function_in_a_global_list_replaced():
    """F5: `FNS[0] = np.cos` kept sin's (1.650671; right -1.129285)."""
    FNS[:] = [np.sin]
    try:
        _follows(through_list_item, lambda: FNS.__setitem__(0, np.cos), lambda: FNS.insert(0, np.tanh))
    finally:
        FNS[:] = [np.sin]


NS = types.SimpleNamespace(kind="sin", table={"sin": np.sin, "cos": np.cos})


def through_namespace_key(x):
    return NS.table[NS.kind](2 * x)


def test_a_key_read_from_a_namespace_changed():
    """F5: `NS.kind = "cos"` and `NS.table["cos"] = np.tanh` kept sin's."""
    NS.kind, NS.table = "sin", {"sin": np.sin, "cos": np.cos}
    try:
        _follows(through_namespace_key, lambda: setattr(NS, "kind", "cos"),
                 lambda: NS.table.__setitem__("cos", np.tanh),
                 lambda: setattr(NS, "table", {"sin": np.sin, "cos": np.sinh}))
    finally:
        NS.kind, NS.table = "sin", {"sin": np.sin, "cos": np.cos}


# ---------------------------------------------------------------- F6: a global or closure variable rebound

TF = (np.sin,)


def through_tuple_item(x):
    return TF[0](2 * x)


def test_a_global_tuple_of_functions_rebound():
    """F6: `TF = (np.cos,)` kept sin's (1.650671; right -1.129285)."""
    global TF
    saved = TF
    try:
        _follows(through_tuple_item, lambda: globals().__setitem__("TF", (np.cos,)))
    finally:
        TF = saved


KEY = "a"
LOSS = {"a": np.sin, "b": np.cos}


def through_global_key(x):
    return LOSS[KEY](2 * x)


def test_a_global_key_rebound():
    """F6: `KEY = "b"` kept LOSS["a"] (1.650671; right -1.129285)."""
    global KEY
    saved = KEY
    try:
        _follows(through_global_key, lambda: globals().__setitem__("KEY", "b"))
    finally:
        KEY = saved


def test_a_closure_cell_rebound():
    """F6 (closure_tuple_cell_rebound): `nonlocal acts; acts = (np.cos,)` kept sin's."""
    acts = (np.sin,)

    def f(x):
        return acts[0](2 * x)

    def rebind(new):
        nonlocal acts
        acts = new
    _follows(f, lambda: rebind((np.cos,)), lambda: rebind((np.tanh,)))


# ---------------------------------------------------------------- a look-up that cannot be watched is read live

class Chooser:
    def __init__(self):
        self.kind = "sin"

    @property
    def act(self):
        return np.sin if self.kind == "sin" else np.cos


CHOOSER = Chooser()


def through_property(x):
    return CHOOSER.act(2 * x)


def test_a_function_behind_a_property_is_read_when_it_runs():
    """A property's value only running it tells: not folded (it was, and kept sin's after `kind = "cos"`)."""
    CHOOSER.kind = "sin"
    try:
        _follows(through_property, lambda: setattr(CHOOSER, "kind", "cos"))
    finally:
        CHOOSER.kind = "sin"


def test_an_unchanged_holder_keeps_the_derivative(monkeypatch):
    """The watch is on identity: a cached derivative whose holders are unchanged is not made again, and one
    whose holder changed is made again once."""
    from s2s.driver import dispatch
    CFG.fn = np.sin
    try:
        g = s2s.grad(through_namespace, check=False)
        g(X)
        made = []
        real = dispatch.compiled
        monkeypatch.setattr(dispatch, "compiled", lambda *a, **k: made.append(1) or real(*a, **k))
        for _ in range(3):
            assert g(X) == pytest.approx(3.0 * np.cos(3.0 * X), rel=1e-12)
        assert made == []
        CFG.fn = np.cos
        for _ in range(3):
            assert g(X) == pytest.approx(-3.0 * np.sin(3.0 * X), rel=1e-12)
        assert made == [1]
    finally:
        CFG.fn = np.sin
