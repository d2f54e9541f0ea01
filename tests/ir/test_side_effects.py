"""Python's side effects on objects (issue 25, item 2): a write into an object (`self.nfev += 1`, `self.X.append(X)`,
`self.d[k] = v`) is performed exactly once per public call, in the forward sweep, with the primal value; a later
read of it in the same call carries the derivative; what cannot be exact is refused with its place."""
import numpy as np
import pytest

import s2s
from s2s.errors import S2SError

MODES = ("reverse", "forward", "auto")


def central(f, x, eps=1e-6):
    x = np.asarray(x, dtype=float)
    g = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        e = np.zeros_like(x)
        e[i] = eps
        g[i] = (f(x + e) - f(x - e)) / (2 * eps)
    return g


# ---------------------------------------------------------------- a counter, as optimization benchmarks keep one

class Rosenbrock:
    """The style of an optimization benchmark suite: a class per problem, counting its evaluations."""

    def __init__(self, a=1.0):
        self.a = a
        self.nfev = 0

    def fun(self, x):
        self.nfev += 1
        return np.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (self.a - x[:-1]) ** 2)


def rosen_grad(x):
    g = np.zeros_like(x)
    g[:-1] = -400 * x[:-1] * (x[1:] - x[:-1] ** 2) - 2 * (1 - x[:-1])
    g[1:] += 200 * (x[1:] - x[:-1] ** 2)
    return g


X = np.array([0.3, -0.7, 1.1, 0.9])

PUBLIC = {
    "grad": lambda f, mode: s2s.grad(f, mode=mode, check=True),
    "value_and_grad": lambda f, mode: (lambda x: s2s.value_and_grad(f, mode=mode, check=True)(x)[1]),
    "unchecked grad": lambda f, mode: s2s.grad(f, mode=mode, check=False),
    "jacobian": lambda f, mode: s2s.jacobian(f, check=True),
}


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("public", list(PUBLIC))
def test_a_counter_is_incremented_once_per_call(public, mode):
    problem = Rosenbrock()
    derivative = PUBLIC[public](problem.fun, mode)
    for calls in (1, 2, 3):
        assert np.allclose(derivative(X), rosen_grad(X))
        assert problem.nfev == calls


def test_the_hessian_and_forward_mode_on_an_array_count_one_call_each():
    problem = Rosenbrock()
    hessian = s2s.hessian(problem.fun, check=True)
    H = hessian(X)
    assert problem.nfev == 1                 # 4 sweeps (one per coordinate) and the check's runs: one call
    assert np.allclose(H, np.array([central(lambda y: rosen_grad(y)[i], X, 1e-5) for i in range(4)]), atol=1e-4)
    hessian(X)
    assert problem.nfev == 2
    problem.nfev = 0
    s2s.grad(problem.fun, mode="forward", check=False)(X)      # 4 forward sweeps
    assert problem.nfev == 1


def test_vjp_performs_the_call_once_and_its_pullback_leaves_nothing():
    problem = Rosenbrock()
    value, pullback = s2s.vjp(problem.fun, X)
    assert problem.nfev == 1
    assert np.allclose(pullback(1.0)[0], rosen_grad(X))
    assert np.allclose(pullback(2.0)[0], 2 * rosen_grad(X))
    assert problem.nfev == 1


# ---------------------------------------------------------------- a value written, then read back in the same call

class Cell:
    def __init__(self):
        self.w = 0.7
        self.h = np.zeros(3)
        self.steps = 0

    def step(self, x):
        self.h = np.tanh(self.h * self.w + x)
        self.steps += 1

    def run(self, xs):
        for t in range(xs.shape[0]):
            self.step(xs[t])
        return np.sum(self.h ** 2) * self.steps


def cell_run_from(h0, steps0):
    def f(xs):
        h, n = h0.copy(), steps0
        for t in range(xs.shape[0]):
            h = np.tanh(h * 0.7 + xs[t])
            n += 1
        return np.sum(h ** 2) * n
    return f


XS = np.array([[0.1, -0.2, 0.3], [0.4, 0.1, -0.5]])


@pytest.mark.parametrize("mode", MODES)
def test_state_written_in_a_loop_of_method_calls_carries_the_derivative(mode):
    cell = Cell()
    h0 = cell.h.copy()
    g = s2s.grad(cell.run, mode=mode, check=True)(XS)
    assert np.allclose(g, central(cell_run_from(h0, 0), XS), atol=1e-6)
    # the object holds what one call of cell.run leaves: the primal state
    expected = Cell()
    expected.run(XS)
    assert type(cell.h) is np.ndarray and np.allclose(cell.h, expected.h) and cell.steps == 2
    h1 = cell.h.copy()
    g = s2s.grad(cell.run, mode=mode, check=True)(XS)      # the next call starts where this one left
    assert np.allclose(g, central(cell_run_from(h1, 2), XS), atol=1e-6)
    assert cell.steps == 4


def test_state_written_in_a_loop_to_second_order():
    cell = Cell()
    h0 = cell.h.copy()
    H = s2s.hessian(cell.run, check=True)(XS)
    assert cell.steps == 2
    reference = cell_run_from(h0, 0)
    g = s2s.grad(reference)
    numeric = np.stack([central(lambda y: g(y)[i], XS, 1e-5) for i in np.ndindex(XS.shape)])
    assert np.allclose(H.reshape(6, 6), numeric.reshape(6, 6), atol=1e-5)


class Scaler:
    def __init__(self):
        self.scale = 1.5
        self.last = np.zeros(2)

    def f(self, x):
        if np.sum(x) > 0:
            self.last = x * self.scale        # one branch writes, the other leaves what the object held
        return np.sum(self.last ** 2) + np.sum(x)


@pytest.mark.parametrize("mode", MODES)
def test_a_write_in_one_branch_is_read_back_after_it(mode):
    for x in (np.array([0.5, 0.25]), np.array([-0.5, 0.25])):
        s = Scaler()
        s.last = np.array([0.3, 0.4])
        before = s.last.copy()
        g = s2s.grad(s.f, mode=mode, check=True)(x)
        want = 2 * 1.5 ** 2 * x + 1 if np.sum(x) > 0 else np.ones(2)
        assert np.allclose(g, want)
        assert np.allclose(s.last, x * 1.5 if np.sum(x) > 0 else before)


# ---------------------------------------------------------------- a layer's caches, as a NumPy network keeps them

class Dense:
    def __init__(self):
        self.W = np.array([[0.5, -0.3], [0.2, 0.8], [-0.6, 0.1]])
        self.X = []
        self.derived_variables = {"Z": [], "n_timesteps": 0}

    def forward(self, X):
        Z = X @ self.W
        self.X.append(X)
        self.derived_variables["Z"].append(Z)
        self.derived_variables["n_timesteps"] += 1
        return np.tanh(Z)


def dense_loss(layer):
    def loss(X):
        return np.sum(layer.forward(X) ** 2)
    return loss


@pytest.mark.parametrize("mode", MODES)
def test_a_layer_keeps_its_inputs_once_per_call(mode):
    layer = Dense()
    X = np.array([[0.1, 0.2, -0.3], [0.5, -0.4, 0.2]])
    g = s2s.grad(dense_loss(layer), mode=mode, check=True)(X)
    T = np.tanh(X @ layer.W)
    assert np.allclose(g, (2 * T * (1 - T ** 2)) @ layer.W.T)
    assert len(layer.X) == 1 and layer.X[0] is X           # the primal value itself, as Python appends it
    assert len(layer.derived_variables["Z"]) == 1 and np.allclose(layer.derived_variables["Z"][0], X @ layer.W)
    assert layer.derived_variables["n_timesteps"] == 1
    s2s.hessian(dense_loss(layer), check=True)(X)
    assert len(layer.X) == 2 and layer.derived_variables["n_timesteps"] == 2


# ---------------------------------------------------------------- a property with an effect

class Counted:
    def __init__(self):
        self.reads = 0
        self.scale = 3.0

    @property
    def factor(self):
        self.reads += 1
        return self.scale

    def f(self, x):
        return np.sum(x ** 2) * self.factor


@pytest.mark.parametrize("public", ["grad", "forward", "auto", "hessian", "jacobian"])
def test_a_property_with_an_effect_runs_as_often_as_in_python(public):
    make = {"grad": lambda f: s2s.grad(f, mode="reverse", check=True),
            "forward": lambda f: s2s.grad(f, mode="forward", check=True),
            "auto": lambda f: s2s.grad(f, check=True),
            "hessian": lambda f: s2s.hessian(f, check=True),
            "jacobian": lambda f: s2s.jacobian(f, check=True)}[public]
    c = Counted()
    derivative = make(c.f)
    x = np.array([1.0, 2.0])
    result = derivative(x)
    assert c.reads == 1
    derivative(x)
    assert c.reads == 2
    assert np.allclose(result, 6.0 * np.eye(2) if public == "hessian" else 6.0 * x)
    assert s2s.grad(c.f, mode="auto")(2.0) == pytest.approx(12.0) and c.reads == 3


# ---------------------------------------------------------------- what cannot be exact is refused, with its place

class Log:
    def __init__(self):
        self.values = []

    def f(self, x):
        self.values.append(x * 2.0)
        return self.values[-1] * x          # read back from the list: the value, not its derivative


class Buffered:
    def __init__(self):
        self.buf = np.zeros(2)

    def f(self, x):
        self.buf += x                       # NumPy writes into the array in place
        return np.sum(self.buf * x)


class WithSetter:
    def __init__(self):
        self._k = 1.0

    @property
    def k(self):
        return self._k

    @k.setter
    def k(self, value):
        self._k = value

    def f(self, x):
        self.k = x
        return x * x


def line_of(fn, text):
    import inspect
    lines, start = inspect.getsourcelines(fn)
    return start + next(i for i, line in enumerate(lines) if text in line)


@pytest.mark.parametrize("mode", MODES)
def test_a_differentiated_value_read_back_from_a_list_it_was_appended_to_is_refused(mode):
    with pytest.raises(S2SError) as info:
        s2s.grad(Log().f, mode=mode)(1.5)
    assert info.value.loc.line == line_of(Log.f, "return self.values[-1] * x")
    assert "self.values.append(x * 2.0)" in str(info.value) and "use the value from the variable" in info.value.hint
    # the same read of a value without derivative is what Python does
    log = Log()
    assert s2s.grad(lambda x: log.f(2.0) * x, mode=mode)(1.5) == pytest.approx(8.0)
    assert log.values == [4.0]


def test_augmented_assignment_into_an_array_attribute_is_refused_when_it_runs():
    with pytest.raises(S2SError) as info:
        s2s.grad(Buffered().f)(np.array([1.0, 2.0]))
    assert "in place" in str(info.value) and "self.buf = self.buf + ..." in str(info.value)


def test_a_write_through_a_property_setter_is_refused():
    with pytest.raises(S2SError) as info:
        s2s.grad(WithSetter().f)(1.5)
    assert "property" in str(info.value) and info.value.loc.line == line_of(WithSetter.f, "self.k = x")


class Box:
    pass


def made_in_the_function(x):
    box = Box()
    box.v = x
    return box.v * x


def written_into_an_argument(x, box):
    box.v = x
    return box.v * x


def test_a_write_into_an_object_known_only_when_it_runs_is_refused():
    # (an object made in the function is followed since issue 28: box.v forwarded, d(x * x) = 2x)
    for mode in ("reverse", "forward", "auto"):
        assert s2s.grad(made_in_the_function, mode=mode)(1.5) == pytest.approx(3.0)
    with pytest.raises(S2SError) as info:
        s2s.grad(written_into_an_argument)(1.5, Box())
    assert "assignment into an attribute of an object known only when the code runs" in str(info.value)


# ---------------------------------------------------------------- a value known now is never one the call writes

class Stepper:
    def __init__(self):
        self.count = 0
        self.done = False

    def advance(self):
        self.count += 1
        if self.count >= 2:
            self.done = True

    def f(self, x):
        self.advance()                    # writes self.done: the branch below reads it after, never folded before
        if self.done:
            return x * x
        return 3.0 * x * x


@pytest.mark.parametrize("mode", MODES)
def test_a_fold_never_relies_on_an_attribute_a_called_method_writes(mode):
    s = Stepper()
    g = s2s.grad(s.f, mode=mode, check=True)
    assert [g(1.5), g(1.5), g(1.5)] == [pytest.approx(9.0), pytest.approx(3.0), pytest.approx(3.0)]
    assert s.count == 3 and s.done


class Registry:
    calls = {"n": 0}             # a class attribute: one dict every instance shares

    def f(self, x):
        self.calls["n"] += 1
        return x * x * self.calls["n"]


@pytest.mark.parametrize("mode", MODES)
def test_a_dict_a_class_holds_is_written_once_per_call(mode):
    Registry.calls["n"] = 0
    g = s2s.grad(Registry().f, mode=mode, check=True)
    assert g(1.5) == pytest.approx(3.0) and Registry.calls["n"] == 1
    assert g(1.5) == pytest.approx(6.0) and Registry.calls["n"] == 2
    assert float(s2s.hessian(Registry().f)(1.5)) == pytest.approx(6.0) and Registry.calls["n"] == 3
