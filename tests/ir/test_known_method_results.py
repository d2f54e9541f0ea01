"""A method of a constant of an immutable type (a tuple of strings, a string, a number) with constant arguments is
computed when the derivative is made: its result is known, and so is its kind, so mode="auto" chooses forward mode
for one float and the derivative has no shape helpers (issue 29 item 4: `names.index("c")` made the cached
gradient of a 0.4 us function cost 31 us, in reverse mode with helpers everywhere)."""
import numpy as np
import pytest

import s2s
from conftest import assert_gradient


def index_and_count(x):
    names = ("a", "b", "c", "b")
    return x * names.index("c") + x ** 2 * names.count("b")


def string_methods(x):
    label = "Gamma-Shape"
    scale = 3.0 if label.lower().startswith("gamma") else 1.0
    return scale * x * len(label.split("-"))


def a_missing_item(x):
    names = ("a", "b")
    return x * names.index("z")


def test_index_and_count_are_known_and_auto_is_forward_mode():
    assert_gradient(index_and_count, 0.8)
    assert s2s.grad(index_and_count)(0.8) == pytest.approx(2.0 + 2 * 2 * 0.8)
    source = s2s.source(index_and_count)
    assert 'chose forward mode' in source
    assert "method_call" not in source and "_unbroadcast" not in source      # computed when it was made


def test_string_methods_fold_and_a_list_result_runs():
    assert_gradient(string_methods, 1.3)
    assert s2s.grad(string_methods)(1.3) == pytest.approx(6.0)


@pytest.mark.parametrize("mode", ["auto", "reverse", "forward"])
def test_a_method_that_raises_raises_when_the_derivative_runs(mode):
    with pytest.raises(ValueError, match="not in tuple"):
        s2s.grad(a_missing_item, mode=mode)(0.5)
