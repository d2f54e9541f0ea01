"""What a `try` handler's path sees of the variables its body assigns (s2s/ir/lower_try.py), found by an outside
tester (breaker2 F7): Python leaves a variable unchanged when the statement assigning it raised, so a body whose
last statement is `total += v`, `total *= v`, `out[i] = v` or `a, b = v` hands the handler the value from before
the statement, with its derivative; the body as written runs on copies of what it writes in place (`acc += v` on an
array or a list). A variable the body may have assigned before the statement that raised is refused where the
handler hands it on (break, continue), as it is where a handler reads it. Gradients against central differences in
the three modes."""
import math
from fractions import Fraction

import numpy as np
import pytest

import s2s
from s2s.testing import check_grads

MODES = ("auto", "reverse", "forward")


def central(f, x, eps=1e-6):
    return (f(x + eps) - f(x - eps)) / (2 * eps)


def stops_on_index_error(x):
    arr = [x, 2 * x]
    total = 0.0
    i = 0
    while True:
        try:
            total += arr[i] ** 2
        except IndexError:
            break
        i += 1
    return total


def sqrt_terms_for(x):
    total = x
    for i in range(4):
        try:
            total += math.sqrt(x - i)
        except ValueError:
            break
    return total


def sqrt_terms_while(x):
    total = 0.0
    i = 0
    while i < 6:
        try:
            total += math.sqrt(x - i)
        except ValueError:
            break
        i += 1
    return total


def product_for(x):
    total = x
    for i in range(4):
        try:
            total *= math.sqrt(x - i)
        except ValueError:
            break
    return total


def log_terms_continue(x):
    s = x
    for i in range(4):
        try:
            s -= math.log(x - i)
        except ValueError:
            continue
    return s


def log_terms_pass(x):
    s = x
    for i in range(4):
        try:
            s += math.sqrt(x - i)
        except ValueError:
            pass
    return s


def handler_reads_it(x):
    total = x
    try:
        total += math.sqrt(x - 3.0)
    except ValueError:
        total = total * 2
    return total


def array_accumulator(x):
    acc = np.zeros(2) + x
    for i in range(4):
        try:
            acc += math.sqrt(x - i)
        except ValueError:
            break
    return np.sum(acc)


def list_accumulator(x):
    acc = [x]
    for i in range(4):
        try:
            acc += [math.log(x - i)]
        except ValueError:
            break
    return sum(acc) * len(acc)


def item_write(x):
    out = np.zeros(4)
    i = 0
    while True:
        try:
            out[i] = math.sqrt(x - i)
        except (ValueError, IndexError):
            break
        i += 1
    return np.sum(out * out[0])


def tuple_assignment(x):
    a, b = x, 2 * x
    for i in range(4):
        try:
            a, b = b, a + math.log(x - i)
        except ValueError:
            break
    return a * b


CASES = [(stops_on_index_error, 0.7), (sqrt_terms_for, 2.5), (sqrt_terms_for, 4.5), (sqrt_terms_while, 2.5),
         (product_for, 2.5), (log_terms_continue, 2.5), (log_terms_pass, 2.5), (handler_reads_it, 2.5),
         (handler_reads_it, 3.5), (array_accumulator, 2.5), (list_accumulator, 2.5), (item_write, 2.5),
         (item_write, 5.5), (tuple_assignment, 2.5)]


@pytest.mark.parametrize("f, x", CASES, ids=[f"{f.__name__}-{x}" for f, x in CASES])
def test_the_handler_sees_the_value_before_the_statement_that_raised(f, x):
    """breaker2 F7: `total += arr[i] ** 2` in a `try` whose handler breaks had gradient 0 in every mode (the
    handler's path zeroed the tangent/adjoint of total), and `acc += v` on an array ran twice (a wrong value)."""
    expected = central(f, x)
    for mode in MODES:
        value, g = s2s.value_and_grad(f, mode=mode)(x)
        assert value == pytest.approx(f(x), rel=1e-12)
        assert g == pytest.approx(expected, rel=1e-6), mode


def test_second_order_through_the_handlers_path():
    """breaker2 F7, second order: forward over reverse and grad(grad(f))."""
    check_grads(sqrt_terms_for, (2.5,))
    check_grads(stops_on_index_error, (0.7,))


def test_an_array_written_in_place_by_the_body_is_written_once():
    """breaker2 F7 (r12): the body as written ran `acc += v` on the caller's array, then the derivative again."""
    def once(x):
        acc = np.zeros(2) + x
        try:
            acc += math.sqrt(x)
        except ValueError:
            pass
        return np.sum(acc)
    for x in (2.5, -2.5):
        for mode in MODES:
            value, g = s2s.value_and_grad(once, mode=mode)(x)
            assert value == pytest.approx(once(x)) and g == pytest.approx(central(once, x), rel=1e-6)


def assigned_before_then_break(x):
    arr = [x, 2 * x]
    total = 0.0
    i = 0
    while True:
        try:
            total = total + arr[i] ** 2
            i += 1
        except IndexError:
            break
    return total


def assigned_before_then_continue(x):
    s = x
    for i in range(4):
        try:
            s = s - math.log(x - i)
            s = s * 1.0
        except ValueError:
            continue
    return s


@pytest.mark.parametrize("f, line", [(assigned_before_then_break, "break"),
                                     (assigned_before_then_continue, "continue")])
def test_a_value_the_body_may_have_assigned_before_raising_is_not_handed_on(f, line):
    """breaker2 F7: a variable the body assigns before its last statement held, on a handler's path that breaks or
    continues, a value with no derivative (gradient 0); s2s cannot tell which statement raised: refused, located at
    the handler's `break` / `continue`."""
    for mode in MODES:
        with pytest.raises(s2s.S2SError) as info:
            s2s.grad(f, mode=mode)(2.5 if f is assigned_before_then_continue else 0.7)
        message = str(info.value)
        assert "test_try_handler_state.py:" in message and line in message
        assert "before the statement that may raise" in message and "handed on" in message


def fraction_count(x):
    c = Fraction(1, 3)
    for i in range(4):
        try:
            c += Fraction(1, 3 - i)
        except ZeroDivisionError:
            break
    return x * float(c)


def test_an_augmented_value_of_a_type_without_in_place_operators_is_not_copied():
    """breaker2 F7: the copy made so that `acc += v` is not made twice is of what `+=` writes in place (an array,
    a list); a Fraction (or a number, a tuple) is rebound, and was refused as a value s2s cannot copy."""
    for mode in MODES:
        value, g = s2s.value_and_grad(fraction_count, mode=mode)(2.5)
        assert value == pytest.approx(fraction_count(2.5)) and g == pytest.approx(central(fraction_count, 2.5))
