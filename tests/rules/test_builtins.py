"""Python's builtins on differentiated values: enumerate with start=."""
import numpy as np
import pytest

from conftest import agrees


MODES = ["reverse", "forward", "auto"]


def weighted(x):
    return sum(k * xi for k, xi in enumerate(x, start=1))


@pytest.mark.parametrize("mode", MODES)
def test_enumerate_start_keyword(mode):
    """Outside round 1 (the first outside tester's programs, written in their own style)."""
    np.testing.assert_allclose(agrees(weighted, (np.ones(3),), mode=mode), [1.0, 2.0, 3.0])
