"""Reading a function's source: multi-line docstrings in functions and methods, a
lambda differentiated inside another lambda on the same line."""
import pytest

import s2s


class Documented:
    def loss(self, x):
        """A method's docstring
        on two lines, indented in its class."""
        return documented(x) * 2.0


def test_functions_and_methods_with_multi_line_docstrings_are_read():
    """Outside round 2, messages."""
    # the text s2s reads is re-indented before it is compared with the code that runs: the docstring is the same
    assert s2s.grad(documented)(3.0) == pytest.approx(6.0)
    assert s2s.grad(Documented().loss)(3.0) == pytest.approx(12.0)


def documented(x):
    """A docstring on
    two lines (the text s2s reads is re-indented: the docstring is the same)."""
    return x * x


def test_a_lambda_differentiated_inside_another_lambda_on_one_line():
    """Outside round 3, F11: "two lambdas match this code object": the outer lambda takes no parameter, so it cannot be
    the inner one."""
    run = lambda: s2s.grad(lambda x: x ** 5, mode="reverse")(1.3)      # noqa: E731
    assert run() == pytest.approx(5 * 1.3 ** 4, rel=1e-12)
