"""try / except / else / finally: a branch Python decides while the body runs (s2s/ir/lower_try.py).

Cases in the style they come from: an optimization benchmark's `except ZeroDivisionError: return np.nan`, a mixed
model's `inv` falling back to `pinv` on `LinAlgError`, a memoized likelihood's `memo[(t, k)]` with `except KeyError`.
Every derivative is checked against central differences in reverse, forward and the default mode="auto", and to
second order (s2s.testing.check_grads: forward over reverse, and grad(grad(f)) along a float)."""
import math
import traceback

import numpy as np
import pytest

import s2s
from conftest import code
from s2s.testing import check_grads


def central(f, x, eps=1e-6):
    return (f(x + eps) - f(x - eps)) / (2 * eps)


def modes(f, *args, wrt=0):
    """The gradient in the three modes (they must agree)."""
    return [s2s.grad(f, wrt=wrt, mode=m)(*args) for m in ("reverse", "forward", "auto")]


# ---------------------------------------------------------------- the library cases

def benchmark(x):
    try:
        return np.sum(x ** 6 * (2 + np.sin(1 / x)))
    except ZeroDivisionError:
        return np.nan


@pytest.mark.parametrize("x", [0.5, -1.3, 2.0])
def test_zero_division_handler_body_completes(x):
    check_grads(benchmark, (x,))
    for g in modes(benchmark, x):
        assert g == pytest.approx(central(benchmark, x), rel=1e-6)


def test_zero_division_handler_runs_with_python_floats():
    value, gradient = s2s.value_and_grad(benchmark)(0.0)
    assert math.isnan(value) and math.isnan(benchmark(0.0))
    for g in modes(benchmark, 0.0):
        assert g == 0.0                 # np.nan is a constant: the handler's path has no derivative
    # a NumPy float divides by zero without raising (inf, and a warning): the body completes, as in Python
    with np.errstate(all="ignore"):
        assert math.isnan(s2s.grad(benchmark, mode="reverse")(np.float64(0.0)))


def mixed_loglike(params, cov_re, resid):
    scale = params[0]
    cov = cov_re * scale
    try:
        cov_inv = np.linalg.inv(cov)
    except np.linalg.LinAlgError:
        cov_inv = np.linalg.pinv(cov)
    r = resid * params[1:]
    return -0.5 * r @ cov_inv @ r - 0.5 * scale


REGULAR = np.array([[2.0, 0.3], [0.3, 1.0]])
SINGULAR = np.array([[2.0, 0.0], [0.0, 0.0]])      # exactly singular for every scale: inv raises
RESID = np.array([0.4, -1.1])


@pytest.mark.parametrize("cov_re", [REGULAR, SINGULAR], ids=["regular", "singular"])
def test_linalg_error_falls_back_to_pinv(cov_re):
    params = np.array([1.5, 0.3, -0.7])
    check_grads(mixed_loglike, (params, cov_re, RESID), wrt=0)
    inverse = np.linalg.inv if cov_re is REGULAR else np.linalg.pinv
    expected = -0.5 * (RESID * params[1:]) @ inverse(cov_re * 1.5) @ (RESID * params[1:]) - 0.75
    assert mixed_loglike(params, cov_re, RESID) == pytest.approx(expected)
    for g in (s2s.grad(mixed_loglike)(params, cov_re, RESID),
              s2s.grad(mixed_loglike, mode="forward")(params, cov_re, RESID)):
        eps = 1e-6
        numeric = [(mixed_loglike(params + eps * e, cov_re, RESID) - mixed_loglike(params - eps * e, cov_re, RESID))
                   / (2 * eps) for e in np.eye(3)]
        np.testing.assert_allclose(g, numeric, rtol=1e-6, atol=1e-8)


def memo_term(t, k, w, memo):
    try:
        return memo[(t, k)]
    except KeyError:
        pass
    return w * t + k * w ** 2


def test_memo_key_error():
    for memo, expected in (({}, 3 + 2 * 2 * 2.0), ({(3, 2): 5.0}, 0.0), ({(1, 1): 5.0}, 3 + 2 * 2 * 2.0)):
        for g in modes(memo_term, 3, 2, 2.0, memo, wrt=2):
            assert g == pytest.approx(expected)
    assert s2s.grad(s2s.grad(memo_term, wrt=2), wrt=2)(3, 2, 2.0, {}) == pytest.approx(4.0)


# ---------------------------------------------------------------- else, finally, exits

def clause_order(x):
    scale = 1.0
    try:
        y = math.log(x)
        if y > 0.5:
            return y * x            # finally runs before the value is returned; it does not change it
    except ValueError:
        y = -x
    else:
        y = y + 1.0                 # only when the body completed
    finally:
        scale = scale * x           # on every path
    return y * 2 * scale


@pytest.mark.parametrize("x", [2.0, 1.2, -1.0])
def test_else_and_finally(x):
    check_grads(clause_order, (x,))
    for g in modes(clause_order, x):
        assert g == pytest.approx(central(clause_order, x), rel=1e-6)


def loop_with_try(x, n):
    total = 0.0
    for i in range(n):
        try:
            if i == 2:
                continue
            y = math.sqrt(x - i)
        except ValueError:
            y = 0.0
            break
        else:
            y = y * 2
        finally:
            total = total + x
        total = total + y * x
    return total


@pytest.mark.parametrize("x", [5.5, 2.5, 0.5])
def test_try_in_a_loop_with_break_continue_and_finally(x):
    check_grads(loop_with_try, (x, 6), wrt=0)
    for g in modes(loop_with_try, x, 6):
        assert g == pytest.approx(central(lambda v: loop_with_try(v, 6), x), rel=1e-6)


def nested(x, y):
    try:
        try:
            r = math.log(x) * y
        except ValueError:
            r = math.sqrt(y) * x      # may raise too: the outer handler takes it
    except ValueError:
        r = x * y * 3.0
    return r


@pytest.mark.parametrize("x, y", [(2.0, 3.0), (-2.0, 3.0), (-2.0, -3.0)])
def test_nested_try(x, y):
    check_grads(nested, (x, y))


def two_handlers(x, table):
    try:
        value = table[int(x)] * x
    except (KeyError, IndexError):
        value = x ** 2
    except TypeError as error:
        value = len(str(error)) * x
    return value


def test_several_handlers_and_a_tuple_of_exceptions():
    for table, expected in (([2.0, 3.0], 2.0), ([], 2.0 * 0.5), ({0: 4.0}, 4.0), (None, 0.0)):
        for g in modes(two_handlers, 0.5, table):
            assert g == pytest.approx(expected if table is not None else len(
                "'NoneType' object is not subscriptable"))


# ---------------------------------------------------------------- raise stays a raise

def reraise(x):
    try:
        y = math.log(x)
    except ValueError:
        raise
    return y * x


def handler_raises(a):
    try:
        chol = np.linalg.cholesky(a + a.T)
    except np.linalg.LinAlgError:
        raise ValueError("the covariance is not positive definite") from None
    return np.sum(np.log(np.diag(chol)))


def escapes(x):
    try:
        return 1.0 / x
    except KeyError:
        return 0.0


def test_raise_in_a_handler_and_an_escaping_exception_keep_the_users_line():
    assert s2s.grad(reraise)(2.0) == pytest.approx(math.log(2.0) + 1.0)
    for mode in ("reverse", "forward", "auto"):
        with pytest.raises(ValueError, match="math domain error") as info:
            s2s.grad(reraise, mode=mode)(-1.0)
        frames = traceback.extract_tb(info.value.__traceback__)
        assert any(f.filename == __file__ and "y = math.log(x)" in (f.line or "") for f in frames)
    a = np.array([[2.0, 0.5], [0.5, 1.0]])
    check_grads(handler_raises, (a,), order=1)
    with pytest.raises(ValueError, match="not positive definite"):
        s2s.grad(handler_raises)(-a)
    with pytest.raises(ZeroDivisionError) as info:
        s2s.grad(escapes)(0.0)
    assert any(f.filename == __file__ and "return 1.0 / x" in (f.line or "")
               for f in traceback.extract_tb(info.value.__traceback__))


def finally_then_raise(x, log):
    try:
        y = math.log(x)
    except KeyError:
        y = 0.0
    finally:
        log = log + 1.0
    return y * log


def test_finally_runs_before_an_escaping_exception():
    assert s2s.grad(finally_then_raise)(2.0, 1.0) == pytest.approx(2.0 / 2.0)
    with pytest.raises(ValueError):
        s2s.grad(finally_then_raise)(-2.0, 1.0)


# ---------------------------------------------------------------- refusals

def reads_partial_state(x):
    try:
        a = x * 2
        b = math.log(x)
    except ValueError:
        b = a                   # a holds what the body assigned before the exception
    return b


def reads_partial_state_after(x):
    total = 0.0
    try:
        total = total + x
        b = math.log(x)
    except ValueError:
        b = 0.0
    return b + total            # after the handler, total may hold the body's value


def last_statement_only(x):
    b = 1.0
    try:
        b = math.log(x)         # assigned only if it completes: the handler's path reads the 1.0 before
    except ValueError:
        pass
    return b * x


def test_a_handler_reading_the_bodys_partial_state_is_refused_with_place_and_rewrite():
    for fn, text in ((reads_partial_state, "b = a"), (reads_partial_state_after, "return b + total")):
        with pytest.raises(s2s.S2SError) as info:
            s2s.grad(fn)(1.0)
        message = str(info.value)
        assert "test_try.py:" in message and text in message
        assert "before the statement that may raise" in message and "assign" in message.split("hint:")[1]
    for x in (2.0, -2.0):
        for g in modes(last_statement_only, x):
            assert g == pytest.approx(math.log(x) + 1.0 if x > 0 else 1.0)


class Counter:
    calls = 0


def writes_an_attribute(x, counter):
    try:
        counter.calls = counter.calls + 1
        y = math.log(x)
    except ValueError:
        y = 0.0
    return y


def draws_in_the_body(x, rng):
    try:
        y = x * rng.normal()
    except ValueError:
        y = x
    return y


def draws_from_numpy(x):
    try:
        y = x * np.random.normal()
    except ValueError:
        y = x
    return y


def appends_in_the_body(x):
    items = [x]
    try:
        items.append(x * 2)
        y = math.log(x)
    except ValueError:
        y = 1.0
        items = [x, x]
    items.append(y)
    return sum(items)


def test_a_body_run_twice_would_repeat_an_effect_so_it_is_refused():
    with pytest.raises(s2s.S2SError, match="writes into an object"):
        s2s.grad(writes_an_attribute)(1.0, Counter())
    with pytest.raises(s2s.S2SError, match="would do that twice"):
        s2s.grad(draws_in_the_body)(1.0, np.random.default_rng(0))
    with pytest.raises(s2s.S2SError, match="draws random numbers"):
        s2s.grad(draws_from_numpy)(1.0)
    # a list the body appends to is given as a copy to the body as written: appended once
    for x in (2.0, -2.0):
        for g in modes(appends_in_the_body, x):
            assert g == pytest.approx(central(appends_in_the_body, x), rel=1e-6)


def test_the_derivative_reads_as_a_branch():
    text = s2s.source(benchmark, 0.5, mode="reverse")
    assert "failure = try_body(benchmark_try_body, (ZeroDivisionError,), x)" in text
    assert "completed = try_completed(failure)" in text and "if completed:" in text
    assert "try:" not in code(text)           # derivative code never catches an exception itself


def euler_with_a_guard(x, n):
    y = x
    for _ in range(n):
        try:
            y = y + math.sqrt(y) * 0.1
        except ValueError:
            y = -y
    return y


def test_a_try_in_a_checkpointed_loop_runs_again_as_it_is():
    for x in (1.3, -0.4):
        plain = s2s.grad(euler_with_a_guard, mode="reverse")(x, 20)
        assert s2s.grad(euler_with_a_guard, checkpoint=3)(x, 20) == pytest.approx(plain, rel=1e-14)
        assert plain == pytest.approx(central(lambda v: euler_with_a_guard(v, 20), x), rel=1e-6)


def draws_in_else(x):
    try:
        y = math.log(x)
    except ValueError:
        y = 0.0
    else:
        y = y + 0.0 * np.random.normal()       # `else` runs once: not the body run as written
    return y * x


def test_else_is_not_run_twice_so_it_may_draw():
    np.random.seed(0)
    assert s2s.grad(draws_in_else)(2.0) == pytest.approx(math.log(2.0) + 1.0)
