"""A list's or dict's adjoint summed item by item in a loop is added into in place when the container is the
adjoint's own (s2s/passes/accumulate_items.py): the derivative reads `dxs = _scatter_into(dxs, xs, i, dv)`
instead of a list of zeros and a new sum per iteration (issue 29 item 4: list programs' gradients cost 20-60x
their function). Gradients against central differences, in every mode, with and without the passes."""
import numpy as np
import pytest

import s2s
from conftest import assert_gradient, numeric


def running_sum_of_a_list(x, y):
    xs = [x]
    xs.extend([y, x * y])
    total = 0.0
    for v in xs:
        total = total + v
    return total * len(xs)


def neighbours(x, y):
    xs = [x, y, x * y, np.sin(x)]
    total = 0.0
    for i in range(1, len(xs)):
        total = total + xs[i] * xs[i - 1]          # two items read per iteration: two sums in a row
    return total + xs[0] * xs[-1]


def list_of_arrays(W, x):
    layers = [W, 2.0 * W, W * W]
    h = x
    for k in range(len(layers)):
        h = np.tanh(layers[k] @ h)
    return np.sum(h * h)


def dict_items_in_a_loop(a, b):
    params = {"w": a, "b": b, "c": a * b}
    total = 0.0
    for name in ("w", "b", "c", "w"):
        total = total + params[name] ** 2
    return total


def largest(x, y):
    vals = (x, y, x * y)
    return max(v * v for v in vals) + max([abs(v) for v in vals])


@pytest.mark.parametrize("f, args", [
    (running_sum_of_a_list, (0.7, -1.3)),
    (neighbours, (0.4, 1.1)),
    (dict_items_in_a_loop, (0.9, -0.6)),
    (largest, (0.8, -1.7)),
], ids=lambda v: getattr(v, "__name__", ""))
def test_gradients_of_list_and_dict_loops(f, args):
    for i in range(len(args)):
        assert_gradient(f, *args, wrt=i)


def test_a_list_of_arrays():
    rng = np.random.default_rng(1)
    W, x = 0.4 * rng.normal(size=(3, 3)), rng.normal(size=3)
    for mode in ("auto", "reverse", "forward"):
        got = s2s.grad(list_of_arrays, wrt=0, mode=mode)(W, x)
        np.testing.assert_allclose(got, numeric(list_of_arrays, (W, x), 0), rtol=1e-5, atol=1e-7)


def running_sum_of_a_list_argument(xs, y):
    total = 0.0
    for v in xs:                    # a list of numbers, any length: a loop
        total = total + v * y
    return total * len(xs)


def test_the_loop_adds_into_the_adjoint_of_its_own():
    # (a list the function builds has a known length: its loop is unrolled, s2s/passes/known_sizes.py)
    source = s2s.source(running_sum_of_a_list, wrt=(0, 1))
    code = "\n".join(line for line in source.splitlines() if not line.strip().startswith("#"))
    assert "for " not in code.split("_grad(")[1] and "_add(" not in code.split("_grad(")[1]
    args = ([0.7, -1.3, 0.2], 0.5)
    source = s2s.source(running_sum_of_a_list_argument, *args, wrt=(0, 1))
    assert "dxs = _scatter_into(dxs, xs, i, " in source     # (the name of the item's adjoint aside)
    assert "_add(dxs, _scatter(" not in source
    assert "_scatter_into" not in s2s.source(running_sum_of_a_list_argument, *args, wrt=(0, 1), optimize=False)
    got = s2s.grad(running_sum_of_a_list_argument, wrt=(0, 1))(*args)
    assert got[0] == pytest.approx([0.5 * 3] * 3) and got[1] == pytest.approx(3 * (0.7 - 1.3 + 0.2))


@pytest.mark.parametrize("inner", ["auto", "reverse", "forward"])
@pytest.mark.parametrize("outer", ["auto", "reverse", "forward"])
@pytest.mark.parametrize("f, args", [(running_sum_of_a_list, (0.7, -1.3)), (neighbours, (0.4, 1.1)),
                                     (largest, (0.8, -1.7)), (dict_items_in_a_loop, (0.9, -0.6))],
                         ids=lambda v: getattr(v, "__name__", ""))
def test_a_gradient_with_an_in_place_sum_differentiated_again(f, args, inner, outer):
    """The derivative's code, with `_scatter_into`, differentiated once more (grad of grad): its rules read it as
    the sum it stands for."""
    g = s2s.grad(f, wrt=0, mode=inner)
    second = s2s.grad(g, wrt=0, mode=outer)(*args)
    eps = 1e-5
    expected = (g(args[0] + eps, *args[1:]) - g(args[0] - eps, *args[1:])) / (2 * eps)
    np.testing.assert_allclose(second, expected, rtol=1e-5, atol=1e-7)


def test_second_order_reads_no_in_place_sum():
    hvp = s2s.hvp(running_sum_of_a_list, wrt=0)
    eps = 1e-5
    g = s2s.grad(running_sum_of_a_list, wrt=0)
    expected = (g(0.7 + eps, -1.3) - g(0.7 - eps, -1.3)) / (2 * eps)
    np.testing.assert_allclose(hvp(0.7, -1.3, 1.0), expected, rtol=1e-5)
