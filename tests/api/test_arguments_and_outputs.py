"""What grad, jacobian, hessian, jvp and vjp accept: outputs (a number, an array of one element; None, text,
tuples and arrays refused with the fix), arguments (wrt= a keyword-only argument, namedtuples of parameters, not a
dataclass, lists refused in forward mode), and the errors for misuse."""
import collections
import dataclasses
import math
import typing

import numpy as np
import pytest

import s2s
from conftest import agrees


MODES = ["reverse", "forward", "auto"]


def doubled(x):
    return x * 2


@pytest.mark.parametrize("mode", MODES)
def test_grad_of_an_array_valued_function_is_non_scalar_output_in_both_modes(mode):
    """Outside round 2: crashes that became results or located refusals."""
    with pytest.raises(s2s.NonScalarOutput, match=r"shape \(3,\)") as info:
        s2s.grad(doubled, mode=mode)(np.ones(3))
    text = str(info.value)
    assert "test_arguments_and_outputs.py:" in text and "def doubled" in text and "s2s.jacobian" in text


Params = collections.namedtuple("Params", "w b")


class TypedParams(typing.NamedTuple):
    w: np.ndarray
    b: float


@dataclasses.dataclass(frozen=True)
class FrozenParams:
    w: np.ndarray
    b: float


def _layer(q, x):
    return np.tanh(q.w @ x + q.b)


def namedtuple_loss(p, x):
    return np.sum(p.w * x) + p.b ** 2 + _layer(p, x) + p[1]


def namedtuple_inside(w, x):
    p = Params(w, 0.5)
    return np.sum(p.w * x)


@pytest.mark.parametrize("kind", [Params, TypedParams])
def test_a_namedtuple_of_parameters_reads_its_fields_by_position(kind):
    """Outside round 2, reasonable code that was refused."""
    p, x = kind(np.array([1.0, 2.0]), 0.5), np.array([1.0, -0.5])
    got = s2s.grad(namedtuple_loss)(p, x)
    assert type(got) is kind
    dw, db = got
    slope = 1.0 - np.tanh(p.w @ x + p.b) ** 2
    np.testing.assert_allclose(dw, x + slope * x)
    assert db == pytest.approx(2 * p.b + slope + 1.0)
    s2s.check_grad(namedtuple_loss, p, x)
    np.testing.assert_allclose(agrees(namedtuple_loss, (p, x), 1), p.w + slope * p.w)
    tangent = s2s.jvp(namedtuple_loss, (p, x), (kind(np.array([1.0, 0.0]), 1.0), np.zeros(2)))[1]
    assert tangent == pytest.approx(dw[0] + db)


def dataclass_loss(p, x):
    return np.sum(p.w * x) + p.b ** 2 + _layer(p, x)


def test_a_dataclass_of_parameters_is_read_by_its_fields_and_indexing_it_is_refused():
    """Outside round 2, reasonable code that was refused. Since issue 28 (models as objects) a dataclass is
    differentiated as its fields, and its gradient is one of its class; indexing it (`p[1]`, which namedtuple_loss
    does) is what Python refuses, so s2s refuses it too."""
    p, x = FrozenParams(np.array([1.0, 2.0]), 0.5), np.array([1.0, -0.5])
    got = s2s.grad(dataclass_loss)(p, x)
    assert type(got) is FrozenParams
    slope = 1.0 - np.tanh(p.w @ x + p.b) ** 2
    np.testing.assert_allclose(got.w, x + slope * x)
    assert got.b == pytest.approx(2 * p.b + slope)
    with pytest.raises(s2s.UnsupportedSyntax, match="FrozenParams is indexed") as info:
        s2s.grad(namedtuple_loss)(FrozenParams(np.ones(2), 0.5), np.ones(2))
    text = str(info.value)
    assert "test_arguments_and_outputs.py:" in text and "typing.NamedTuple" in text and "p.w" in text


@pytest.mark.parametrize("mode", MODES)
def test_a_namedtuple_built_inside_is_refused_by_name(mode):
    """Outside round 2, reasonable code that was refused."""
    with pytest.raises(s2s.NoDerivativeRule, match="namedtuple|attribute") as info:
        s2s.grad(namedtuple_inside, mode=mode)(np.ones(2), np.ones(2))
    assert "test_arguments_and_outputs.py:" in str(info.value) and "getattr" not in str(info.value).split("\n")[0]


def one_element_output(x):
    return np.array([np.sum(x ** 2)])


def scalar_to_one_element(x):
    return np.array([x ** 3])


@pytest.mark.parametrize("mode", ["reverse", "forward", "auto"])
def test_an_output_of_one_element_is_a_scalar_output_in_both_modes(mode):
    """Outside round 3, F10: forward mode crashed setting an array element with a sequence."""
    x = np.array([0.7, -1.3, 2.1])
    assert np.allclose(s2s.grad(one_element_output, mode=mode)(x), 2 * x, rtol=1e-12)
    assert float(s2s.grad(scalar_to_one_element, mode=mode)(0.5)) == pytest.approx(3 * 0.25)


def keyword_only(x, *, scale=2.0, shift):
    return scale * x ** 2 + np.sin(shift * x)


@pytest.mark.parametrize("mode", ["auto", "reverse", "forward"])
def test_wrt_a_keyword_only_argument(mode):
    """Outside round 3, F17: wrt='shift' was "names no argument of f('x',)"."""
    d_shift = s2s.grad(keyword_only, wrt="shift", mode=mode)(0.5, shift=0.3)
    assert d_shift == pytest.approx(0.5 * np.cos(0.15), rel=1e-12)
    dx, dscale = s2s.grad(keyword_only, wrt=("x", "scale"), mode=mode)(0.5, scale=1.5, shift=0.3)
    assert (dx, dscale) == pytest.approx((3 * 0.5 + 0.3 * np.cos(0.15), 0.25), rel=1e-12)
    with pytest.raises(s2s.BadArgument, match="keyword-only argument: wrt='name'"):
        s2s.grad(keyword_only, wrt=1, mode=mode)


def list_argument(xs):
    return xs[0] * xs[1]


def test_forward_mode_refuses_a_container_argument_at_the_function():
    """Outside rounds 3 and 4: forward mode refuses a list argument at the function."""
    with pytest.raises(s2s.BadArgument,
                       match=r"test_arguments_and_outputs\.py:\d+:\d+: mode='forward' differentiates float"):
        s2s.grad(list_argument, mode="forward")([0.5, 2.0])


def no_return(x):
    y = np.sin(x)


def returns_a_string(x):
    return "abc"


@pytest.mark.parametrize("fn", [no_return, returns_a_string])
def test_a_jacobian_of_what_is_not_numbers_is_refused(fn):
    """Outside round 5, K24: a Jacobian or a vjp of a function whose output is not numbers (a forgotten return) is
    refused, as grad refuses it (the Jacobian was zeros)."""
    with pytest.raises(s2s.NonScalarOutput, match=r"test_arguments_and_outputs.py:\d+:\d+: .* not numbers"):
        s2s.jacobian(fn)(np.ones(3))
    with pytest.raises(s2s.NonScalarOutput, match="not numbers"):
        s2s.vjp(fn, np.ones(3))


def cat_tuples(x, y):
    t = (x,) + (y,)
    return t[0] * 2.0 + t[1] * 3.0


def forgot_return(x):
    y = x * 2.0


def returns_text(x):
    return "x"


def returns_pair(x, y):
    return x * y, x + y


def three_with_aux(x):
    return x * x, x, 3.0


def test_output_must_be_a_number():
    """Issue 12 (classes of silently wrong gradients), 4 and 6. what grad needs."""
    with pytest.raises(s2s.NonScalarOutput, match="(?s)forgot_return returned None.*forget a `return`"):
        s2s.value_and_grad(forgot_return)(1.0)
    with pytest.raises(s2s.NonScalarOutput, match="returned 'x'"):
        s2s.grad(returns_text)(1.0)
    with pytest.raises(s2s.NonScalarOutput, match="returns a tuple"):
        s2s.grad(returns_pair)(1.0, 2.0)


def test_tuple_valued_derivatives_are_not_differentiated_again():
    """Issue 12 (classes of silently wrong gradients), 4 and 6. what grad needs."""
    with pytest.raises(s2s.NonScalarOutput, match="derivative returns a tuple"):
        s2s.grad(s2s.grad(cat_tuples, wrt=(0, 1)))(1.0, 2.0)
    with pytest.raises(s2s.NonScalarOutput, match="must return a pair.*tuple of 3"):
        s2s.grad(three_with_aux, has_aux=True)(2.0)


def sine_times(x, y):
    return np.sin(x) * y


def pair(x, y):
    return x * y, x + y


def test_jacobian_and_hessian_of_several():
    """Issue 12 (classes of silently wrong gradients), crashes found."""
    x, y = np.array([0.3, -0.4]), np.array([1.5, 2.0])
    jx, jy = s2s.jacobian(sine_times, wrt=(0, 1))(x, y)
    np.testing.assert_allclose(jx, np.diag(np.cos(x) * y))
    np.testing.assert_allclose(jy, np.diag(np.sin(x)))
    assert s2s.jacobian(pair)(1.0, 2.0) == (2.0, 1.0)
    assert s2s.jacobian(pair, wrt=(0, 1))(1.0, 2.0) == ((2.0, 1.0), (1.0, 1.0))
    h = s2s.hessian(sine_times, wrt=(0, 1))(1.0, 2.0)
    assert h[0][0] == pytest.approx(-2.0 * math.sin(1.0)) and h[0][1] == pytest.approx(math.cos(1.0))
    assert h[1][0] == pytest.approx(math.cos(1.0)) and h[1][1] == 0.0


def test_clear_errors_for_misuse():
    """Issue 12 (classes of silently wrong gradients), crashes found."""
    with pytest.raises(s2s.BadArgument, match="direction v"):
        s2s.hvp(sine_times)(1.0, 2.0)
    _, pullback = s2s.vjp(sine_times, np.ones(2), np.ones(2))
    with pytest.raises(s2s.BadArgument, match="cotangent"):
        pullback(np.ones(3))
    assert s2s.grad(sine_times, argnums=1)(1.0, 2.0) == pytest.approx(math.sin(1.0))
    W, b = np.ones((2, 3)), np.ones(2)

    def affine(p, v):
        return np.sum(p[0] @ v + p[1])
    with pytest.raises(s2s.BadArgument, match="tangent of argument 0"):
        s2s.jvp(affine, ((W, b), np.ones(3)), ((W, np.ones(3)), None))


def affine_sum(p, v):
    W, b = p
    return np.sum(W @ v + b)


def test_jvp_with_containers_of_different_shapes():
    """Issue 12 (classes of silently wrong gradients), crashes found."""
    W, b, v = np.ones((2, 3)), np.ones(2), np.arange(3.0)
    value, tangent = s2s.jvp(affine_sum, ((W, b), v), ((np.ones((2, 3)), np.ones(2)), None))
    assert value == affine_sum((W, b), v) and tangent == pytest.approx(2 * 3.0 + 2)
