"""Dicts and lists as programs use them: methods of a module-level configuration dict,
containers made by comprehensions and then written into, loops over a dict's keys."""
import numpy as np
import pytest

import s2s
from conftest import central


def central_difference(f, x, *rest, eps=1e-6):
    return (f(x + eps, *rest) - f(x - eps, *rest)) / (2 * eps)


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


@pytest.mark.parametrize("mode", ["reverse", "forward", "auto"])
@pytest.mark.parametrize("f", [config_get, config_items], ids=lambda f: f.__name__)
def test_methods_of_a_global_configuration_dict(f, mode, monkeypatch):
    """Outside round 3, F5: `.get()`, `.values()`, `.items()` on a module-level dict were refused ("call the NumPy
    function")."""
    assert s2s.grad(f, mode=mode)(1.5) == pytest.approx(central_difference(f, 1.5), rel=1e-7)
    monkeypatch.setitem(CFG, "scale", 4.0)          # read when the derivative runs
    assert s2s.grad(f, mode=mode)(1.5) == pytest.approx(central_difference(f, 1.5), rel=1e-7)


def adam_like(w0):
    params = {"w": w0, "b": 0.1}
    m = {k: np.zeros_like(v) for k, v in params.items()}
    for k in params:
        m[k] = 0.9 * m[k] + 0.1 * params[k]
        params[k] = params[k] - 0.5 * m[k]
    return np.sum(params["w"] ** 2) + params["b"] ** 2


def written_comprehension(w0):
    m = {k: 0.0 for k in ("a", "b")}
    ms = [0.0 for _ in range(2)]
    m["a"] = m["a"] + np.sum(w0)
    ms[1] = ms[1] + w0[0]
    return m["a"] ** 2 + ms[1] * m["a"]


@pytest.mark.parametrize("mode", ["reverse", "forward", "auto"])
@pytest.mark.parametrize("f", [adam_like, written_comprehension], ids=lambda f: f.__name__)
def test_items_written_into_a_container_a_comprehension_made(f, mode):
    """Outside round 4, G1: refused as "'m' is the same object as 'table'" (the comprehension's own name), and then the
    keys unpacked from d.items() were taken for values with a derivative."""
    w0 = np.array([0.5, -0.3, 0.2])
    expected = [(f(w0 + e) - f(w0 - e)) / 2e-6 for e in np.eye(3) * 1e-6]
    assert np.allclose(s2s.grad(f, mode=mode)(w0), expected, rtol=1e-6, atol=1e-9)
    assert "_assert_inexact" not in s2s.source(f, w0, mode=mode)       # lists and dicts keep floats


def over_dict_keys(x):
    d = {"a": x, "b": 2.0 * x}
    s = 0.0
    for k in d:
        s = s + d[k] * d[k]
    return s


def test_loops_over_dict_keys():
    """Issue 12 (classes of silently wrong gradients), keyword arguments, loops over dicts."""
    assert s2s.grad(over_dict_keys)(1.5) == pytest.approx(15.0)
    assert s2s.grad(over_dict_keys, mode="forward")(1.5) == pytest.approx(15.0)


def reversed_in_place(x):
    ys = [x[0], x[1] * 2.0, x[2]]
    ys.reverse()
    return ys[0] * 3.0 + ys[2] + ys[1] * ys[0]


def reversed_through_another_name(x):
    ys = [x[0], x[1] * 2.0, x[2]]
    zs = ys
    ys.reverse()            # zs is reversed too: refused, as before
    return zs[0]


@pytest.mark.parametrize("mode", ["auto", "reverse", "forward"])
def test_list_reverse_on_a_list_the_function_made(mode):
    """Tester: `ys.reverse()` was refused; on a list only one name holds it is `ys = ys[::-1]`."""
    x = np.array([0.5, -1.0, 2.0])
    got = s2s.grad(reversed_in_place, mode=mode)(x)
    np.testing.assert_allclose(got, [1.0, 2 * x[2], 3.0 + 2 * x[1]], rtol=1e-12)
    np.testing.assert_allclose(got, central(reversed_in_place, x), rtol=1e-6)
    np.testing.assert_allclose(s2s.hessian(reversed_in_place)(x), [[0, 0, 0], [0, 0, 2], [0, 2, 0]], atol=1e-9)
    with pytest.raises(s2s.S2SError, match=r"test_containers\.py:\d+:\d+: .*\.reverse\(\)"):
        s2s.grad(reversed_through_another_name, mode=mode)(x)
