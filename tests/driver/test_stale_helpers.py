"""A derivative follows the functions it read when they change (issue 27, item 6).

`def f(x): return hmod.helper(x) ** 2`: after `hmod.helper = ...` or `importlib.reload(hmod)`, both the existing
derivative and a fresh `s2s.grad(f)` returned the old helper's gradient (36 instead of 196); likewise after
`f.__defaults__ = (10.0,)` (4 instead of 20) and after a helper's `__code__` was replaced, as IPython's autoreload
does (6 instead of 27). A derivative is guarded on the identity of every function it inlined, however it was
reached: a module's attribute, a global, an object's method, and each function's code and defaults.
"""
import importlib
import sys
import textwrap

import numpy as np
import pytest

import s2s

MODES = ("reverse", "forward", "auto")


@pytest.fixture
def helper_module(tmp_path, monkeypatch):
    """A module `stale_hmod` on disk, whose text a test rewrites before reloading it."""
    path = tmp_path / "stale_hmod.py"

    def write(body):
        path.write_text(textwrap.dedent(body))
        importlib.invalidate_caches()
    write("def helper(x):\n    return x * 3.0\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    sys.modules.pop("stale_hmod", None)
    module = importlib.import_module("stale_hmod")
    yield module, write
    sys.modules.pop("stale_hmod", None)


@pytest.mark.parametrize("mode", MODES)
def test_module_attribute_monkeypatched_and_reloaded(helper_module, make_fn, mode):
    hmod, write = helper_module
    f = make_fn("def f(x):\n    return hmod.helper(x) ** 2\n", namespace={"hmod": hmod})
    gradient = s2s.grad(f, mode=mode)
    assert gradient(2.0) == pytest.approx(36.0)            # d/dx (3x)^2 = 18x
    original = hmod.helper
    hmod.helper = lambda x: x * 7.0                       # monkeypatched: d/dx (7x)^2 = 98x
    assert gradient(2.0) == pytest.approx(196.0)
    assert s2s.grad(f, mode=mode)(2.0) == pytest.approx(196.0)
    hmod.helper = original
    assert gradient(2.0) == pytest.approx(36.0)
    write("def helper(x):\n    return x * 5.0\n")         # the module edited and reloaded: (5x)^2
    importlib.reload(hmod)
    assert gradient(2.0) == pytest.approx(100.0)
    assert s2s.grad(f, mode=mode)(2.0) == pytest.approx(100.0)
    assert s2s.value_and_grad(f, mode=mode)(2.0) == pytest.approx((100.0, 100.0))


def test_reload_seen_by_jvp_hvp_and_a_second_derivative(helper_module, make_fn):
    hmod, write = helper_module
    f = make_fn("def f(x):\n    return hmod.helper(x) ** 3\n", namespace={"hmod": hmod})
    second = s2s.grad(s2s.grad(f))
    assert second(1.0) == pytest.approx(6 * 27.0)          # (3x)^3 = 27 x^3: 162 x
    assert s2s.jvp(f, (1.0,), (1.0,))[1] == pytest.approx(81.0)
    write("def helper(x):\n    return x * 2.0\n")
    importlib.reload(hmod)
    assert second(1.0) == pytest.approx(6 * 8.0)
    assert s2s.jvp(f, (1.0,), (1.0,))[1] == pytest.approx(24.0)
    assert s2s.hvp(f)(1.0, 1.0) == pytest.approx(48.0)


@pytest.mark.parametrize("mode", MODES)
def test_defaults_of_the_function_and_of_a_helper(make_fn, mode):
    f = make_fn("def f(x, c=2.0):\n    return c * x ** 2\n")
    gradient = s2s.grad(f, mode=mode)
    assert gradient(1.0) == pytest.approx(4.0)
    f.__defaults__ = (10.0,)
    assert gradient(1.0) == pytest.approx(20.0)
    assert s2s.grad(f, mode=mode)(1.0) == pytest.approx(20.0)
    assert gradient(1.0, 3.0) == pytest.approx(6.0)          # given, the default does not matter
    helper = make_fn("def helper(x, c=2.0):\n    return c * x ** 2\n")
    g = make_fn("def g(x):\n    return helper(x) + x\n", namespace={"helper": helper})
    gradient = s2s.grad(g, mode=mode)
    assert gradient(1.0) == pytest.approx(5.0)
    helper.__defaults__ = (10.0,)                            # folded into the derivative: made anew
    assert gradient(1.0) == pytest.approx(21.0)


@pytest.mark.parametrize("mode", MODES)
def test_keyword_defaults(make_fn, mode):
    f = make_fn("def f(x, *, c=2.0):\n    return c * x ** 2\n")
    gradient = s2s.grad(f, mode=mode)
    assert gradient(1.0) == pytest.approx(4.0)
    f.__kwdefaults__ = {"c": 10.0}
    assert gradient(1.0) == pytest.approx(20.0)
    helper = make_fn("def helper(x, *, c=2.0):\n    return c * x ** 2\n")
    g = make_fn("def g(x):\n    return helper(x)\n", namespace={"helper": helper})
    gradient = s2s.grad(g, mode=mode)
    assert gradient(1.0) == pytest.approx(4.0)
    helper.__kwdefaults__ = {"c": 10.0}
    assert gradient(1.0) == pytest.approx(20.0)


@pytest.mark.parametrize("mode", MODES)
def test_code_replaced_as_autoreload_does(make_fn, mode):
    h = make_fn("def h(x):\n    return x ** 2\n")
    f = make_fn("def f(x):\n    return h(x)\n", namespace={"h": h})
    gradient = s2s.grad(f, mode=mode)
    assert gradient(3.0) == pytest.approx(6.0)
    h.__code__ = make_fn("def h(x):\n    return x ** 3\n").__code__
    assert gradient(3.0) == pytest.approx(27.0)
    assert s2s.grad(f, mode=mode)(3.0) == pytest.approx(27.0)
    # the function's own code
    f.__code__ = make_fn("def f(x):\n    return 2.0 * h(x)\n", namespace={"h": h}).__code__
    assert gradient(3.0) == pytest.approx(54.0)


def test_a_class_attribute_helper(make_fn):
    class Physics:
        @staticmethod
        def energy(x):
            return x ** 2
    f = make_fn("def f(x):\n    return np.sum(Physics.energy(x))\n", namespace={"Physics": Physics})
    gradient = s2s.grad(f)
    x = np.array([1.0, 2.0])
    assert gradient(x) == pytest.approx([2.0, 4.0])
    Physics.energy = staticmethod(lambda x: x ** 3)
    assert gradient(x) == pytest.approx([3.0, 12.0])


def test_a_class_attribute_rebound_in_code_run_by_exec():
    """A class defined by exec without __name__ says its module is builtins; its attribute, resolved when the
    derivative is made (the callee specialized on its literal defaults), is still watched (the fuzzer's stale
    family, seeds 4, 11, 16, 22 after the merges of this round)."""
    source = ("import numpy as np\n"
              "def helper_a(x, c=-1.19, *, k=1.0):\n    return (np.sin(x) * c) * k\n"
              "def helper_b(x, c=-1.19, *, k=1.0):\n    return (np.tanh(c * x) + x) * k\n"
              "class Ops:\n    helper = staticmethod(helper_a)\n"
              "def f(x, v):\n    return Ops.helper(x) * np.sum(v) + np.sum(Ops.helper(v))\n")
    import linecache
    filename = "<stale-exec-class>"
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    scope: dict = {}
    exec(compile(source, filename, "exec"), scope)
    f = scope["f"]
    x, v = -0.867, np.array([0.886, 0.023, 0.952])
    for mode in ("reverse", "forward", "auto"):
        scope["Ops"].helper = staticmethod(scope["helper_a"])
        g = s2s.value_and_grad(f, mode=mode)
        assert g(x, v)[0] == pytest.approx(f(x, v))
        scope["Ops"].helper = staticmethod(scope["helper_b"])
        value, grad = g(x, v)
        assert value == pytest.approx(f(x, v))
        eps = 1e-6
        assert grad == pytest.approx((f(x + eps, v) - f(x - eps, v)) / (2 * eps), rel=1e-6)


@pytest.mark.parametrize("mode", MODES)
def test_a_function_a_module_gives_through_its_getattr(helper_module, make_fn, mode):
    # array_api_compat's namespaces give NumPy's names through a module-level __getattr__ (PEP 562): the function
    # is read, and the derivative is made anew when the module later binds the name itself
    hmod, write = helper_module
    write("def _cube(x):\n    return x ** 3\n\n\ndef __getattr__(name):\n    return _cube\n")
    importlib.reload(hmod)
    f = make_fn("def f(x):\n    return hmod.power3(x) * 2.0\n", namespace={"hmod": hmod})
    gradient = s2s.grad(f, mode=mode)
    assert gradient(2.0) == pytest.approx(24.0)             # d/dx 2x^3 = 6x^2
    hmod.power3 = lambda x: x ** 2                          # now an attribute of its own: d/dx 2x^2 = 4x
    assert gradient(2.0) == pytest.approx(8.0)
