"""mode="auto", the default of grad / value_and_grad / source / export / the CLI: forward mode (seeded with 1.0,
no stack) when the derivative is with respect to one float argument, reverse mode otherwise; and the dispatcher
that finds the generated code for a call's arguments."""
import math

import numpy as np
import pytest

import s2s
import s2s.api
from conftest import code


def horner(x, coefficients):
    y = 0.0
    for c in coefficients:
        y = y * x + c
    return y


def fixed_point(a):
    x = 1.0
    i = 0
    while i < 40:
        x = x - 0.5 * (x * x - a) / x
        i += 1
    return x


def seed(x1, x2):
    return math.log(x1) + x1 * x2 - math.sin(x2)


def scaled_sum(s, X):
    return np.sum(np.tanh(s * X))


def with_aux(x, y):
    z = x * x * y
    return math.sin(z), {"z": z}


def mixed(x, y):
    return x ** 3 * y ** 2 + math.exp(x * y)


def weighted(x, items):
    total = 0.0
    for c in items:
        total = total + np.sum(c) * x * x
    return total


def cube(x):
    return x ** 3


@s2s.adjoint(cube)                   # a rule for reverse mode only: forward mode has no tangent for cube
def cube_adjoint(g, ans, x):
    return g * 3.0 * x * x


def uses_cube(x):
    return cube(x) + math.sin(x)


def central(f, args, i, h=1e-6):
    """The central difference of f along argument i (a float)."""
    up, down = list(args), list(args)
    up[i] += h
    down[i] -= h
    return (f(*up) - f(*down)) / (2 * h)


COEFFICIENTS = [0.3, -1.2, 2.0, 0.7, -0.1]


def header(text):
    return [line for line in text.splitlines() if line.startswith("#")][:3]


# ---------------------------------------------------------------- which mode, and the header's line

@pytest.mark.parametrize("fn, args, wrt, mode, why", [
    (horner, (0.9, COEFFICIENTS), 0, "forward", "the derivative is with respect to one float (x): no stack"),
    (fixed_point, (2.0,), 0, "forward", "the derivative is with respect to one float (a): no stack"),
    (seed, (2.0, 5.0), (1,), "forward", "the derivative is with respect to one float (x2): no stack"),
    (seed, (2.0, 5.0), (0, 1), "reverse", "the derivative is with respect to 2 arguments (x1, x2)"),
    (scaled_sum, (0.5, np.ones((2, 3))), 1, "reverse", "the differentiated argument (X) is an array"),
    (scaled_sum, (0.5, np.ones((2, 3))), 0, "forward", "the derivative is with respect to one float (s): no stack"),
])
def test_auto_picks_forward_mode_along_one_float_and_says_why(fn, args, wrt, mode, why):
    text = s2s.source(fn, *args, wrt=wrt)
    lines = header(text)
    assert lines[0].endswith(f"{mode} mode.")
    assert lines[2] == f'# mode="auto" chose {mode} mode: {why}.'
    if mode == "forward":
        assert "_stack" not in text and "append" not in code(text) and "reversed" not in text
    chosen = s2s.api.resolve_mode(s2s.api.Options(s2s.api._resolve_wrt(fn, wrt)[0], mode="auto"),
                                  [s2s.api.kind_of(a) for a in args])[0].mode
    assert chosen == ("tangent" if mode == "forward" else "reverse")


def test_forward_choice_keeps_the_gradients_signature():
    text = code(s2s.source(horner, 0.9, COEFFICIENTS))
    assert "def horner_grad(x, coefficients):" in text      # no tangent parameter: x_dot is the constant 1.0
    assert "x_dot" not in text


def test_checkpoint_keeps_reverse_mode():
    text = s2s.source(fixed_point, 2.0, checkpoint=5)
    assert header(text)[2] == '# mode="auto" chose reverse mode: checkpoint= is for reverse mode.'
    g = s2s.grad(fixed_point, checkpoint=5)(2.0)
    assert g == pytest.approx(central(fixed_point, (2.0,), 0), rel=1e-6)


def remainder_plus_one(x):
    return math.remainder(x, 0.3) + 1.0        # (no rule; math.gamma was the example until it had one)


def vector_output(s, X):
    return X * s


def test_what_forward_mode_cannot_do_falls_back_to_reverse_mode():
    text = s2s.source(uses_cube, 0.8)       # cube's result is not known to be a number: reverse mode checks it
    assert header(text)[0].endswith("reverse mode.")
    assert header(text)[2] == '# mode="auto" chose reverse mode: the output is not known to be a number.'
    assert s2s.grad(uses_cube)(0.8) == pytest.approx(3 * 0.8 ** 2 + math.cos(0.8), rel=1e-12)
    assert s2s.value_and_grad(uses_cube)(0.8)[0] == pytest.approx(uses_cube(0.8))
    with pytest.raises(s2s.NoDerivativeRule, match="no tangent rule"):
        s2s.grad(uses_cube, mode="forward")(0.8)
    with pytest.raises(s2s.NoDerivativeRule, match="no derivative rule for math.remainder"):   # reverse's refusal
        s2s.grad(remainder_plus_one)(0.8)
    with pytest.raises(TypeError, match="scalar output"):             # never a Jacobian column as a gradient
        s2s.grad(vector_output)(0.5, np.ones(3))


def test_a_forced_mode_has_no_auto_line():
    for mode in ("reverse", "forward"):
        text = s2s.source(horner, 0.9, COEFFICIENTS, mode=mode)
        assert 'mode="auto"' not in text and header(text)[0].endswith(f"{mode} mode.")
    assert "_stack" in s2s.source(horner, 0.9, COEFFICIENTS, mode="reverse")


def test_export_and_the_command_line_say_which_mode(tmp_path):
    exported = s2s.export(fixed_point, 2.0)
    assert '# mode="auto" chose forward mode: the derivative is with respect to one float (a): no stack.' \
        in exported
    scope: dict = {}
    exec(compile(exported, "<exported>", "exec"), scope)
    assert scope["fixed_point_grad"](2.0) == pytest.approx(central(fixed_point, (2.0,), 0), rel=1e-6)
    from s2s.cli import main
    target = tmp_path / "model.py"
    target.write_text("import math\n\ndef f(x):\n    return math.sin(x) * x\n")
    out = tmp_path / "f_grad.py"
    assert main(["export", f"{target}:f", "-o", str(out)]) == 0
    assert 'mode="auto" chose forward mode' in out.read_text()


# ---------------------------------------------------------------- values in each choice

@pytest.mark.parametrize("mode", ["auto", "reverse", "forward"])
def test_one_float_gradients_against_central_differences(mode):
    assert s2s.grad(horner, mode=mode)(0.9, COEFFICIENTS) == \
        pytest.approx(central(horner, (0.9, COEFFICIENTS), 0), rel=1e-7)
    assert s2s.grad(fixed_point, mode=mode)(2.0) == pytest.approx(1 / (2 * math.sqrt(2.0)), rel=1e-9)
    assert s2s.grad(seed, wrt=1, mode=mode)(2.0, 5.0) == pytest.approx(2.0 - math.cos(5.0), rel=1e-12)
    X = np.linspace(-0.3, 1.0, 6).reshape(2, 3)
    assert s2s.grad(scaled_sum, mode=mode)(0.5, X) == pytest.approx(central(scaled_sum, (0.5, X), 0), rel=1e-7)
    assert s2s.grad(scaled_sum, mode=mode)(0.5, X) == pytest.approx(np.sum(X * (1 - np.tanh(0.5 * X) ** 2)))


def broadcast_sum(x, z):
    return np.sum(z + x)


def broadcast_square(x, z):
    t = z + x
    return np.sum(t) * np.sum(t)


def broadcast_cubed(x, z):
    return np.sum(z - x) ** 3 + np.mean(np.broadcast_to(x, z.shape))


@pytest.mark.parametrize("mode", ["auto", "reverse", "forward"])
def test_a_float_broadcast_against_an_array(mode):
    """Issue 27, item 0: the default mode's seeded forward mode folded its seed 1.0 without the broadcast shape,
    so `np.sum(z + x)` gave 1.0 instead of z.size (and `np.sum(t) * np.sum(t)` 24 instead of 144)."""
    z = np.ones((2, 3))
    assert s2s.grad(broadcast_sum, mode=mode)(1.0, z) == pytest.approx(6.0, rel=1e-12)
    assert s2s.grad(broadcast_square, mode=mode)(1.0, z) == pytest.approx(144.0, rel=1e-12)
    z = np.linspace(-1.0, 1.0, 6).reshape(2, 3)
    s = np.sum(z - 0.3)
    assert s2s.grad(broadcast_cubed, mode=mode)(0.3, z) == pytest.approx(-18 * s ** 2 + 1.0, rel=1e-12)
    assert s2s.grad(broadcast_cubed, mode=mode)(0.3, z) == pytest.approx(central(broadcast_cubed, (0.3, z), 0),
                                                                        rel=1e-6)


def test_a_float_broadcast_against_an_array_to_second_order():
    z = np.linspace(-1.0, 1.0, 6).reshape(2, 3)
    s = np.sum(z - 0.3)
    assert s2s.grad(s2s.grad(broadcast_cubed))(0.3, z) == pytest.approx(216 * s, rel=1e-10)
    assert s2s.hessian(broadcast_cubed)(0.3, z) == pytest.approx(216 * s, rel=1e-10)
    assert s2s.grad(s2s.grad(broadcast_square))(1.0, np.ones((2, 3))) == pytest.approx(72.0, rel=1e-12)


def test_reverse_choices_against_closed_forms():
    g1, g2 = s2s.grad(seed, wrt=(0, 1))(2.0, 5.0)
    assert (g1, g2) == pytest.approx((1 / 2.0 + 5.0, 2.0 - math.cos(5.0)), rel=1e-12)
    X = np.linspace(-1, 1, 6).reshape(2, 3)
    assert s2s.grad(scaled_sum, wrt=1)(0.5, X) == pytest.approx(0.5 * (1 - np.tanh(0.5 * X) ** 2), rel=1e-12)


def test_tuple_of_one_value_and_grad_and_aux_through_forward_mode():
    value, (g,) = s2s.value_and_grad(seed, wrt=(0,))(2.0, 5.0)
    assert value == pytest.approx(seed(2.0, 5.0)) and g == pytest.approx(1 / 2.0 + 5.0)
    g, aux = s2s.grad(with_aux, has_aux=True)(0.7, 1.3)
    made = [text for key, (text, _) in s2s.api._CACHE[with_aux].items() if key[1].has_aux]
    assert made and all("forward mode" in header(text)[0] for text in made)
    z = 0.7 * 0.7 * 1.3
    assert g == pytest.approx(math.cos(z) * 2 * 0.7 * 1.3, rel=1e-12) and aux == {"z": pytest.approx(z)}
    (value, aux), g = s2s.value_and_grad(with_aux, wrt=(1,), has_aux=True)(0.7, 1.3)
    assert value == pytest.approx(math.sin(z)) and g == (pytest.approx(math.cos(z) * 0.7 * 0.7, rel=1e-12),)
    assert aux["z"] == pytest.approx(z)


def test_second_order_through_auto():
    x, y = 0.6, 1.1
    dxx = s2s.grad(s2s.grad(mixed))(x, y)                   # forward over forward, both along x
    assert dxx == pytest.approx(6 * x * y ** 2 + y * y * math.exp(x * y), rel=1e-10)
    dxy = s2s.grad(s2s.grad(mixed, wrt=0), wrt=1)(x, y)
    assert dxy == pytest.approx(6 * x ** 2 * y + math.exp(x * y) * (1 + x * y), rel=1e-10)
    forced = s2s.grad(s2s.grad(mixed, mode="reverse"), mode="reverse")(x, y)
    assert forced == pytest.approx(dxx, rel=1e-12)
    assert s2s.hessian(mixed)(x, y) == pytest.approx(dxx, rel=1e-10)
    assert s2s.hvp(mixed)(x, y, 2.0) == pytest.approx(2.0 * dxx, rel=1e-10)
    assert s2s.grad(s2s.grad(fixed_point))(2.0) == pytest.approx(-0.25 * 2.0 ** -1.5, rel=1e-8)


def test_derivative_of_a_gradient_along_an_array_is_still_refused():
    with pytest.raises(s2s.S2SError, match="along one scalar argument"):
        s2s.grad(s2s.grad(scaled_sum), wrt=1)(0.5, np.ones(3))


def test_dask_arguments_beside_the_float():
    da = pytest.importorskip("dask.array", reason="dask is not installed")
    X = np.linspace(-0.3, 1.0, 12).reshape(3, 4)
    g = s2s.grad(scaled_sum)(0.5, da.from_array(X, chunks=2))
    assert float(np.asarray(g.compute() if hasattr(g, "compute") else g)) == \
        pytest.approx(central(scaled_sum, (0.5, X), 0), rel=1e-7)


def test_numba_backend_through_auto():
    pytest.importorskip("numba", reason="numba is not installed")
    assert s2s.grad(fixed_point, backend="numba")(2.0) == pytest.approx(1 / (2 * math.sqrt(2.0)), rel=1e-9)
    assert s2s.grad(seed, wrt=(0, 1), backend="numba")(2.0, 5.0) == \
        pytest.approx((1 / 2.0 + 5.0, 2.0 - math.cos(5.0)), rel=1e-12)


def test_unknown_mode_is_refused():
    with pytest.raises(s2s.BadArgument, match="mode='sideways'"):
        s2s.grad(seed, mode="sideways")


# ---------------------------------------------------------------- the dispatcher

def test_dispatcher_keys_on_what_the_code_depends_on():
    g = s2s.grad(horner)
    assert g(0.9, COEFFICIENTS) == pytest.approx(central(horner, (0.9, COEFFICIENTS), 0), rel=1e-7)
    assert g(0.9, COEFFICIENTS[:2]) == pytest.approx(COEFFICIENTS[0])          # another length: same code
    w = s2s.grad(weighted)
    assert w(0.5, [1.0, 2.0]) == pytest.approx(3.0)
    assert w(0.5, [np.array([1.0, 2.0]), np.array([3.0, 4.0])]) == pytest.approx(10.0)   # a list of arrays
    assert w(0.5, [1.0, 2.0, 4.0]) == pytest.approx(7.0)        # back to numbers after the arrays
    assert w(0.5, [1.0, np.array([2.0, 4.0])]) == pytest.approx(7.0)
    h = s2s.grad(scaled_sum, wrt=1)
    for shape in [(2, 3), (4,), (2, 3), (4,)]:
        X = np.linspace(-1, 1, int(np.prod(shape))).reshape(shape)
        assert h(0.5, X) == pytest.approx(0.5 * (1 - np.tanh(0.5 * X) ** 2), rel=1e-12)
    X32 = np.linspace(-1, 1, 4).astype(np.float32)
    assert h(0.5, X32).dtype == np.float32
    with pytest.raises(s2s.BadArgument, match="differentiated but is int"):
        s2s.grad(seed)(2, 5.0)                        # an int where a float is differentiated: refused...
    assert s2s.grad(seed)(2.0, 5) == pytest.approx(1 / 2.0 + 5)      # ...an int elsewhere is a constant


def _squares_horner(cs, x):
    acc = 0.0
    for c in cs:
        acc = acc * x + c * c
    return acc


@pytest.mark.parametrize("order", [[[1, 2.0, 3.0], [1.0, 2.0, 3.0]], [[1.0, 2.0, 3.0], [1, 2.0, 3.0]]])
def test_an_int_in_a_differentiated_list_of_numbers_does_not_depend_on_the_calls_before(order):
    # the list's one derivative serves lists of floats and of ints alike: the first call with an int item used to
    # be refused, while the same list after a list of floats went through the cached path
    g = s2s.grad(_squares_horner, wrt=(0, 1))
    for cs in order:
        dcs, dx = g(cs, 0.5)
        floats = [float(c) for c in cs]
        for i in range(3):
            assert dcs[i] == pytest.approx(
                central(lambda c: _squares_horner(floats[:i] + [c] + floats[i + 1:], 0.5), (floats[i],), 0),
                rel=1e-7)
        assert dx == pytest.approx(central(lambda x: _squares_horner(floats, x), (0.5,), 0), rel=1e-7)


def test_dispatcher_takes_keywords_and_defaults():
    def f(x, y=2.0, *, z=3.0):
        return x * y * z
    assert s2s.grad(f)(1.5) == pytest.approx(6.0)
    assert s2s.grad(f)(1.5, z=4.0) == pytest.approx(8.0)
    assert s2s.grad(seed)(x2=5.0, x1=2.0) == pytest.approx(1 / 2.0 + 5.0)
    assert s2s.grad(seed, wrt="x2")(2.0, x2=5.0) == pytest.approx(2.0 - math.cos(5.0))
    with pytest.raises(TypeError):
        s2s.grad(seed)(2.0)


def test_dispatcher_follows_a_rebound_helper(make_fn):
    namespace = {"math": math}
    helper = make_fn("def helper(x):\n    return x * x\n", namespace=namespace)
    namespace["helper"] = helper
    f = make_fn("def f(x):\n    return helper(x) + 1.0\n", namespace=namespace)
    f.__globals__["helper"] = helper
    g = s2s.grad(f)
    assert g(3.0) == pytest.approx(6.0)
    assert g(3.0) == pytest.approx(6.0)
    f.__globals__["helper"] = make_fn("def helper(x):\n    return x * x * x\n")
    assert g(3.0) == pytest.approx(27.0)
    assert g(3.0) == pytest.approx(27.0)


def test_an_error_in_generated_code_names_the_users_line_on_the_fast_path():
    g = s2s.grad(seed)
    g(2.0, 5.0)
    with pytest.raises(ZeroDivisionError) as info:
        g(0.0, 5.0)
    assert "s2s: raised in the derivative of" in "\n".join(getattr(info.value, "__notes__", [])) + \
        str(info.value.args)
