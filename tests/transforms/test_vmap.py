"""s2s.vmap: functions of one example batched as NumPy source (issue 28).

Every result is compared with a Python loop over the examples (the function itself, run once per example), and
derivatives with central differences; the generated code is read for what it promises (no loop over the batch,
masked branches, values that do not depend on the batch computed once)."""
import math
import os
import sys
import warnings

import numpy as np
import pytest

import s2s
from s2s.errors import BadArgument, S2SError

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "benchmarks"))
sys.path.insert(0, HERE)

import vmap_bench  # noqa: E402
from conftest import PYTHON  # noqa: E402

rng = np.random.default_rng(2028)


def loop(f, args, in_axes=0, out_axes=0):
    """f over the batch, one example at a time, stacked along out_axes (leaves of tuples and dicts too)."""
    axes = in_axes if isinstance(in_axes, (tuple, list)) else (in_axes,) * len(args)
    n = next(np.shape(a)[ax] for a, ax in zip(args, axes) if ax is not None and not isinstance(ax, (tuple, dict)))
    rows = [f(*[np.take(a, i, axis=ax) if isinstance(ax, int) else a for a, ax in zip(args, axes)])
            for i in range(n)]
    return stack(rows, out_axes)


def stack(rows, out_axes=0):
    first = rows[0]
    if isinstance(first, dict):
        return {k: stack([r[k] for r in rows], out_axes) for k in first}
    if isinstance(first, (tuple, list)):
        return type(first)(stack([r[k] for r in rows], out_axes) for k in range(len(first)))
    return np.stack([np.asarray(r) for r in rows], axis=out_axes)


def assert_close(got, expected, rtol=1e-10, atol=1e-12):
    if isinstance(expected, dict):
        assert set(got) == set(expected)
        for k in expected:
            assert_close(got[k], expected[k], rtol, atol)
        return
    if isinstance(expected, (tuple, list)):
        assert len(got) == len(expected)
        for a, b in zip(got, expected):
            assert_close(a, b, rtol, atol)
        return
    assert np.shape(got) == np.shape(expected)
    np.testing.assert_allclose(got, expected, rtol=rtol, atol=atol)


def body(text):
    """The batched function's own code (after the helpers copied above it)."""
    return text.split("\ndef ")[-1]


def central(f, x, eps=1e-6):
    """The gradient of a scalar f at array x by central differences."""
    x = np.asarray(x, dtype=float)
    g = np.zeros_like(x)
    for k in np.ndindex(x.shape):
        e = np.zeros_like(x)
        e[k] = eps
        g[k] = (f(x + e) - f(x - e)) / (2 * eps)
    return g


# ---------------------------------------------------------------- functions of one example

def mlp_loss(params, x, y):
    W1, b1, W2, b2 = params
    h = np.tanh(x @ W1 + b1)
    logits = h @ W2 + b2
    m = np.max(logits)
    return m + np.log(np.sum(np.exp(logits - m))) - logits[y]


def log_branch(x):
    if x > 0:
        return np.log(x)
    return x * 2.0


def sqrt_branch(x):
    if x > 0:
        y = np.sqrt(x)
    else:
        y = -x * x
    return y * 3.0


def halvings(x):
    """A while loop with a trip count of its own per example."""
    n = 0
    while x > 1.0:
        x = x / 2.0
        n = n + 1
    return x + n


def newton_sqrt(a):
    x = a
    while abs(x * x - a) > 1e-12 * a:
        x = 0.5 * (x + a / x)
    return x


def power_sum(x, k):
    """A for loop whose bounds differ between examples."""
    total = 0.0
    for i in range(k):
        total = total + x ** i
    return total


def piecewise(x):
    if x < -1.0:
        return -x
    elif x < 1.0:
        return x * x + 1.0
    return np.log(x) + 2.0


def euler(k, y0, h, steps):
    y = y0
    for _ in range(steps):
        y = y + h * (-k * y)
    return y


def make_params():
    return (rng.normal(size=(6, 5)) / 2, rng.normal(size=5) / 5, rng.normal(size=(5, 3)) / 2, rng.normal(size=3) / 5)


# ---------------------------------------------------------------- the basics

def test_elementwise_and_python_numbers():
    def f(x, y):
        return math.sin(x) * y + max(x, 0.5) + abs(y) ** 1.5
    X, Y = rng.normal(size=7), rng.normal(size=7)
    assert_close(s2s.vmap(f)(X, Y), loop(f, (X, Y)))


def test_the_mlp_and_its_unbatched_parameters():
    params, X, y = make_params(), rng.normal(size=(9, 6)), rng.integers(0, 3, size=9)
    batched = s2s.vmap(mlp_loss, in_axes=(None, 0, 0))
    assert_close(batched(params, X, y), loop(mlp_loss, (params, X, y), (None, 0, 0)))
    text = body(s2s.source(batched, params, X, y))
    assert "for " not in text
    assert "x @ W1" in text and "np.max(logits, axis=1)" in text and "logits[t" in text or "np.arange(9), y]" in text


def test_values_that_do_not_depend_on_the_batch_are_computed_once():
    def f(w, x):
        scale = np.sum(w ** 2)              # the same for every example
        return np.tanh(x @ w) * scale
    w, X = rng.normal(size=4), rng.normal(size=(6, 4))
    batched = s2s.vmap(f, in_axes=(None, 0))
    assert_close(batched(w, X), loop(f, (w, X), (None, 0)))
    text = body(s2s.source(batched, w, X))
    assert "np.sum(w ** 2)" in text         # no axis: one number, not one per example


def test_in_axes_out_axes_and_trees():
    def f(p, x):
        return {"a": p["w"] * x, "b": (np.sum(x), p["c"] * 2.0)}
    p = {"w": rng.normal(size=(4, 3)), "c": 2.0}
    X = rng.normal(size=(3, 4))                        # the batch along axis 1
    batched = s2s.vmap(f, in_axes=({"w": 0, "c": None}, 1), out_axes={"a": 1, "b": (0, None)})
    out = batched(p, X)
    rows = [f({"w": p["w"][i], "c": 2.0}, X[:, i]) for i in range(4)]
    assert_close(out["a"], np.stack([r["a"] for r in rows], axis=1))
    assert_close(out["b"][0], np.stack([r["b"][0] for r in rows]))
    assert out["b"][1] == 4.0                          # out_axes=None: the same for every example
    negative = s2s.vmap(lambda x: x * 2.0, in_axes=-1, out_axes=-1)(X)
    assert_close(negative, X * 2.0)


def test_a_tuple_output_and_an_unbatched_output_repeated():
    def f(x, c):
        return x * 2.0, c + 1.0
    X = rng.normal(size=(5, 2))
    a, b = s2s.vmap(f, in_axes=(0, None))(X, 3.0)
    assert_close(a, X * 2.0)
    assert_close(b, np.full(5, 4.0))                   # out_axes=0 on a value the same for every example


def test_keyword_arguments_and_decorator():
    @s2s.vmap
    def f(x, scale=2.0):
        return x * scale
    X = rng.normal(size=4)
    assert_close(f(X), X * 2.0)
    assert_close(f(X, scale=3.0), X * 3.0)


def test_a_function_without_a_batching_rule_is_a_loop_said_in_the_header():
    def f(x):
        return np.sort(x)[0] + np.median(x)
    X = rng.normal(size=(5, 4))
    batched = s2s.vmap(f)
    assert_close(batched(X), loop(f, (X,)))
    text = s2s.source(batched, X)
    assert "# Batched by a loop over the batch" in text and "numpy.sort" in text


# ---------------------------------------------------------------- control flow

def test_an_if_on_each_example_gives_no_nan_and_no_warning():
    X = np.array([1.5, -2.0, 0.3, -0.1, 0.0, 4.0])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert_close(s2s.vmap(log_branch)(X), loop(log_branch, (X,)))
        dX = s2s.grad(lambda x: np.sum(s2s.vmap(log_branch)(x)))(X)
        per_example = s2s.vmap(s2s.grad(log_branch))(X)
    expected = np.where(X > 0, 1.0 / np.where(X > 0, X, 1.0), 2.0)
    assert_close(dX, expected)
    assert_close(per_example, expected)
    text = body(s2s.source(s2s.vmap(log_branch), X))
    assert "np.where(" in text and "for " not in text


def test_a_branch_no_example_takes_does_not_run():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert_close(s2s.vmap(log_branch)(-np.arange(1.0, 5.0)), -2 * np.arange(1.0, 5.0))
        assert_close(s2s.vmap(log_branch)(np.arange(1.0, 5.0)), np.log(np.arange(1.0, 5.0)))


def test_a_square_root_branch_has_a_finite_adjoint_at_zero():
    X = np.array([0.0, 2.0, -1.0, 0.25])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        g = s2s.grad(lambda x: np.sum(s2s.vmap(sqrt_branch)(x)))(X[1:])
        h = s2s.vmap(sqrt_branch)(X)
    assert_close(h, loop(sqrt_branch, (X,)))
    assert_close(g, [1.5 / np.sqrt(2.0), 6.0, 1.5 / 0.5])


def test_elif_chain():
    X = np.array([-3.0, -0.5, 0.5, 3.0, 1.5])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert_close(s2s.vmap(piecewise)(X), loop(piecewise, (X,)))
        assert_close(s2s.vmap(s2s.grad(piecewise))(X), [-1.0, -1.0, 1.0, 1 / 3.0, 1 / 1.5])


def test_a_while_loop_with_a_trip_count_per_example():
    X = np.array([0.5, 3.0, 100.0, 1e6])
    assert_close(s2s.vmap(halvings)(X), loop(halvings, (X,)))
    text = body(s2s.source(s2s.vmap(halvings), X))
    assert "np.nonzero(active)" in text and "while np.any(active)" in text
    A = np.array([2.0, 9.0, 1e4])
    assert_close(s2s.vmap(newton_sqrt)(A), np.sqrt(A))


def test_a_for_loop_whose_bounds_differ_between_examples():
    X, K = np.array([0.5, 2.0, -1.0]), np.array([3, 0, 5])
    assert_close(s2s.vmap(power_sum)(X, K), loop(power_sum, (X, K)))


def test_a_loop_with_the_same_trip_count_stays_a_loop():
    K = np.array([0.5, 1.0, 2.0])
    batched = s2s.vmap(euler, in_axes=(0, None, None, None))
    assert_close(batched(K, 1.0, 0.01, 20), loop(euler, (K, 1.0, 0.01, 20), (0, None, None, None)))
    assert "for _ in range(steps)" in body(s2s.source(batched, K, 1.0, 0.01, 20))


# ---------------------------------------------------------------- composition

def test_per_example_gradients():
    params, X, y = make_params(), rng.normal(size=(7, 6)), rng.integers(0, 3, size=7)
    per_example = s2s.vmap(s2s.grad(mlp_loss), in_axes=(None, 0, 0))(params, X, y)
    expected = [s2s.grad(mlp_loss)(params, X[i], y[i]) for i in range(7)]
    for k in range(4):
        assert_close(per_example[k], np.stack([e[k] for e in expected]))
    # against central differences, one example and one parameter
    W1 = params[0]
    numeric = central(lambda w: mlp_loss((w, *params[1:]), X[3], y[3]), W1)
    assert_close(per_example[0][3], numeric, rtol=1e-5, atol=1e-7)


def test_the_composition_matrix_on_scalar_functions():
    def f(x):
        return math.sin(x) * x + x ** 3
    X = np.array([0.3, -1.2, 2.0])

    def fprime(x):
        return math.cos(x) * x + math.sin(x) + 3 * x ** 2

    def fsecond(x):
        return -math.sin(x) * x + 2 * math.cos(x) + 6 * x
    assert_close(s2s.vmap(s2s.grad(f))(X), [fprime(x) for x in X])                        # vmap(grad)
    assert_close(s2s.grad(lambda x: np.sum(s2s.vmap(f)(x)))(X), [fprime(x) for x in X])   # grad(vmap)
    assert_close(s2s.jacobian(s2s.vmap(f))(X), np.diag([fprime(x) for x in X]))           # jacobian(vmap)
    assert_close(s2s.vmap(s2s.grad(s2s.grad(f)))(X), [fsecond(x) for x in X], rtol=1e-8)  # vmap(grad(grad))
    assert_close(s2s.vmap(s2s.vmap(lambda x, y: x * y, in_axes=(0, None)), in_axes=(None, 0))(X, X[:2]),
                 np.outer(X[:2], X))                                                       # vmap(vmap)


def test_the_composition_matrix_on_array_functions():
    def f(x):
        return np.sum(np.sin(x) * x) + np.prod(x[:2])
    X = rng.normal(size=(4, 3))
    V = rng.normal(size=(4, 3))
    grads = s2s.vmap(s2s.grad(f))(X)
    assert_close(grads, np.stack([central(f, x) for x in X]), rtol=1e-6, atol=1e-8)       # vmap(grad)

    def total(x):
        return np.sum(s2s.vmap(f)(x))
    assert_close(s2s.grad(total)(X), central(total, X), rtol=1e-6, atol=1e-8)              # grad(vmap)
    hv = s2s.vmap(s2s.hvp(f))(X, V)                                                        # vmap(hvp)
    assert_close(hv, np.stack([s2s.hessian(f)(x) @ v for x, v in zip(X, V)]), rtol=1e-8)

    def g(x):
        return np.tanh(x) * x[0]
    J = s2s.jacobian(s2s.vmap(g))(X)                                                       # jacobian(vmap)
    assert J.shape == (4, 3, 4, 3)
    for i in range(4):
        assert_close(J[i, :, i, :], s2s.jacobian(g)(X[i]))
        assert np.all(J[i, :, (i + 1) % 4, :] == 0)
    nested = s2s.vmap(s2s.vmap(lambda x: np.sum(x ** 2)))(rng.normal(size=(2, 3, 4)))      # vmap(vmap)
    assert nested.shape == (2, 3)


def test_grad_of_a_function_that_calls_grad_and_vmap_inside():
    def inner(w, x):
        return np.sum(np.tanh(x * w))

    def outer(w, X):
        per = s2s.vmap(inner, in_axes=(None, 0))(w, X)
        slope = s2s.grad(inner)(w, X[0])
        return np.sum(per ** 2) + np.sum(slope)
    w, X = rng.normal(size=3), rng.normal(size=(4, 3))
    assert_close(s2s.grad(outer)(w, X), central(lambda v: outer(v, X), w), rtol=1e-6, atol=1e-8)


def test_two_lambdas_on_one_line():
    X = rng.normal(size=5)
    a, b = s2s.vmap(lambda x: x ** 2)(X), s2s.vmap(lambda y: np.sin(y) * 3.0)(X)
    assert_close(a, X ** 2)
    assert_close(b, np.sin(X) * 3.0)
    g = s2s.grad(lambda x: np.sum(s2s.vmap(lambda y: y ** 3)(x)))(X)
    assert_close(g, 3 * X ** 2)


# ---------------------------------------------------------------- random draws

def test_random_draws_are_independent_per_example():
    def f(x):
        return x + np.random.normal(0.0, 1.0, size=2)
    out = s2s.vmap(f)(np.zeros((500, 2)))
    assert len(np.unique(out)) == 1000
    assert abs(out.mean()) < 0.2 and abs(out.std() - 1.0) < 0.15


# ---------------------------------------------------------------- bad input

@pytest.mark.parametrize("call, message", [
    (lambda: s2s.vmap(lambda x: x, in_axes=(0, 0))(np.ones(3)), "in_axes has 2 entries"),
    (lambda: s2s.vmap(lambda x, y: x * y)(np.ones(3), 2.0), "batches y, which is the number 2.0"),
    (lambda: s2s.vmap(lambda x, y: x * y)(np.ones(3), np.ones(4)), "the batch sizes differ: x has 3"),
    (lambda: s2s.vmap(lambda x: np.sum(x), out_axes=1)(np.ones((3, 2))), "out_axes=1 is out of range"),
    (lambda: s2s.vmap(lambda x: x, in_axes=2)(np.ones((3, 2))), "in_axes=2 for x is out of range"),
    (lambda: s2s.vmap(lambda x: x, in_axes=None)(np.ones(3)), "batches no argument"),
    (lambda: s2s.vmap(lambda p: p["a"], in_axes=({"b": 0},))({"a": np.ones(3)}), "has the keys ['b']"),
    (lambda: s2s.vmap(lambda x: x * 2, out_axes=None)(np.ones(3)), "out_axes is None, but the output differs"),
    (lambda: s2s.vmap(lambda x: (x, x), out_axes=(0, 0, 0))(np.ones(3)), "out_axes has 3 entries"),
    (lambda: s2s.vmap(lambda x: x, in_axes={"x": 0})(np.ones(3)), "in_axes is a dict"),
])
def test_bad_axes_give_one_clear_error(call, message):
    with pytest.raises(BadArgument) as info:
        call()
    assert message in str(info.value)


# ---------------------------------------------------------------- shipped code

def test_source_export_and_the_command_line(tmp_path):
    params, X, y = make_params(), rng.normal(size=(4, 6)), rng.integers(0, 3, size=4)
    batched = s2s.vmap(s2s.grad(mlp_loss), in_axes=(None, 0, 0))
    text = s2s.export(batched, params, X, y)
    assert "import numpy as np" in text and "s2s" not in text.split("# A standalone module")[1].split("\n", 1)[1]
    assert text == s2s.export(batched, params, X, y)
    namespace: dict = {}
    exec(compile(text, "exported", "exec"), namespace)
    got = namespace["mlp_loss_grad_vmap"](params, X, y)
    for a, b in zip(got, batched(params, X, y)):
        assert_close(a, b)
    module = tmp_path / "model.py"
    module.write_text("import numpy as np\n\ndef f(w, x):\n    return np.tanh(x @ w)\n\n"
                      "W = np.ones((3, 2))\nX = np.ones((5, 3))\n")
    done = PYTHON.run("-m", "s2s", f"{module}:f", "--vmap", "(None, 0)", "--args", "W, X", cwd=ROOT)
    assert done.returncode == 0, done.stderr
    assert "def f_vmap(w, x):" in done.stdout and "np.tanh(x @ w)" in done.stdout


# ---------------------------------------------------------------- the benchmark workloads: no loop over the batch

@pytest.mark.parametrize("name", ["per-example", "mlp", "logistic", "branch"])
def test_the_benchmark_workloads_have_no_loop_over_the_batch(name):
    params, X, Y = vmap_bench.make_mlp(8, np.random.default_rng(0))
    cases = {"per-example": (s2s.vmap(s2s.grad(vmap_bench.loss), in_axes=(None, 0, 0)), (params, X, Y)),
             "mlp": (s2s.vmap(vmap_bench.mlp_forward, in_axes=(None, 0)), (params, X)),
             "logistic": (s2s.vmap(vmap_bench.log_likelihood, in_axes=(None, None, 0, 0)),
                          (np.ones(64) / 8, 0.1, X, np.ones(8))),
             "branch": (s2s.vmap(vmap_bench.branchy, in_axes=(0, None)), (X, np.ones(64)))}
    batched, args = cases[name]
    text = s2s.source(batched, *args)
    code = body(text)
    assert "for " not in code and "while " not in code
    assert "Batched by a loop" not in text


# ---------------------------------------------------------------- random programs of what users write

def _fuzz_case(category, seed):
    """s2s.vmap of a random program (tests/programs/fuzz_programs.py) and of its gradient, against a loop over a batch of
    three examples (its float arguments perturbed; the others the same for every example)."""
    import copy

    import fuzz_programs as fp
    program = fp.generate(category, seed)
    f = fp.define(program.source)
    local = np.random.default_rng(seed)

    def batch(a):
        if isinstance(a, float) and not isinstance(a, bool):
            return a + 0.05 * local.normal(size=3)
        if isinstance(a, np.ndarray) and a.dtype.kind == "f":
            return a + 0.05 * local.normal(size=(3,) + a.shape)
        return None
    batched = [batch(a) for a in program.args]
    if all(b is None for b in batched):
        return
    in_axes = tuple(0 if b is not None else None for b in batched)
    args = tuple(b if b is not None else a for a, b in zip(program.args, batched))
    wrt = program.diff if len(program.diff) > 1 else program.diff[0]
    try:
        functions = (f, s2s.grad(f, wrt=wrt))
    except S2SError:                # refused when the gradient is made (`xs.reverse()`): f alone is batched
        functions = (f,)
    for g in functions:
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                rows = [g(*copy.deepcopy([b[i] if b is not None else a for a, b in zip(program.args, batched)]))
                        for i in range(3)]
        except Exception:           # noqa: BLE001 - what s2s.grad refuses, or what fails in Python, is not batched
            continue
        try:
            got = s2s.vmap(g, in_axes=in_axes)(*copy.deepcopy(args))
        except S2SError:
            continue                # refused (as the front end refuses it for a gradient too)
        except ValueError as exc:   # refused when it runs (a swap of rows, which NumPy's views make no swap)
            if str(exc).startswith("s2s:"):
                continue
            raise
        assert_close(got, stack(rows), rtol=1e-7, atol=1e-9)


@pytest.mark.parametrize("category", ["arrays", "carried", "containers", "elements", "helpers", "broadcast"])
@pytest.mark.parametrize("seed", [3])
def test_random_programs_against_a_loop(category, seed):
    _fuzz_case(category, seed)


@pytest.mark.slow
@pytest.mark.parametrize("category", ["arrays", "carried", "containers", "elements", "helpers", "broadcast", "names"])
@pytest.mark.parametrize("seed", list(range(100)))
def test_many_random_programs_against_a_loop(category, seed):
    _fuzz_case(category, seed)


def test_a_batched_function_follows_a_helper_rebound_between_calls(make_fn):
    """The fast path's guard (the names the function reads) is compiled once, when the path is filled, and checked
    at every call: a helper rebound after the first calls makes the batched function anew (it compiled the guard at
    every call, 100 us a call, before)."""
    f = make_fn("""
        def f(x, w):
            return helper(x) @ w
        def helper(v):
            return np.tanh(v)
    """, name="f")
    batched = s2s.vmap(f, in_axes=(0, None))
    X, w = np.arange(6.0).reshape(3, 2) / 4, np.array([0.5, -1.0])
    for _ in range(3):
        np.testing.assert_allclose(batched(X, w), np.tanh(X) @ w)
    f.__globals__["helper"] = lambda v: v * v
    np.testing.assert_allclose(batched(X, w), (X * X) @ w)
    np.testing.assert_allclose(batched(X, w), (X * X) @ w)
