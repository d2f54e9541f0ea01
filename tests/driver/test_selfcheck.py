"""The checking mode (check=True, S2S_CHECK=1): it checks a derivative once, on the
first checked call, catches a wrong reading, and leaves random draws as Python draws them."""
import numpy as np
import pytest

import s2s
from s2s.driver.selfcheck import ReadingMismatch


def test_check_true_compares_a_derivative_an_unchecked_call_made_first(monkeypatch):
    """Outside round 1 (the first outside tester's programs, written in their own style)."""
    import s2s.driver.pipeline as api
    seen = []
    original = api._verify_reading

    def spy(*args, **kwargs):
        seen.append(1)
        return original(*args, **kwargs)
    monkeypatch.setattr(api, "_verify_reading", spy)
    monkeypatch.delenv("S2S_CHECK", raising=False)

    def f(x):
        return np.sum(x ** 3)
    x = np.array([1.0, 2.0])
    s2s.value_and_grad(f, check=False)(x)
    assert not seen
    s2s.value_and_grad(f, check=True)(x)
    s2s.value_and_grad(f, check=True)(x)
    assert len(seen) == 1


def test_checking_mode_catches_a_wrong_reading(monkeypatch):
    """Issue 12 (classes of silently wrong gradients), the checking mode."""
    import s2s.driver.pipeline

    def wrong(x):
        return x * 3.0

    def right(x):
        return x * 2.0
    original = s2s.driver.pipeline.primal_ir
    monkeypatch.setattr(s2s.driver.pipeline, "primal_ir", lambda fn: original(wrong if fn is right else fn))
    with pytest.raises(ReadingMismatch, match="right differs from Python's: the result is 2.0 in Python, 3.0"):
        s2s.grad(right, check=True)(1.0)
    assert s2s.grad(right, check=False)(1.0) == 3.0       # unchecked, the wrong reading goes through


def draws_global(x):
    return x * np.random.randn()


_rng = np.random.RandomState(0)


def draws_own(x):
    return x * _rng.randn()


def test_checking_mode_and_random_draws():
    """Issue 12 (classes of silently wrong gradients), the checking mode."""
    np.random.seed(1)
    g = s2s.grad(draws_global, check=True)(2.0)
    np.random.seed(1)
    assert g == np.random.randn()
    assert isinstance(s2s.grad(draws_own, check=True)(2.0), float)
