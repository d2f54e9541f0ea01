"""import statements inside the differentiated function: absolute imports and aliases
are followed, a relative import is refused."""
import numpy as np
import pytest

import s2s
from conftest import agrees


MODES = ["reverse", "forward", "auto"]


def imports_inside(mu, sigma):
    import math
    import numpy.linalg as la
    from numpy import tanh as th
    return math.sin(mu) * sigma + la.norm(np.array([mu, sigma])) + th(mu * sigma)


@pytest.mark.parametrize("mode", MODES)
def test_imports_inside_the_function(mode):
    """Outside round 1 (the first outside tester's programs, written in their own style)."""
    for i in range(2):
        agrees(imports_inside, (0.3, 1.2), i, mode=mode)


def test_a_relative_import_inside_the_function_is_refused():
    """Outside round 1 (the first outside tester's programs, written in their own style)."""
    def f(x):
        from . import nothing    # noqa: F401
        return x
    with pytest.raises(s2s.S2SError, match="import"):
        s2s.grad(f)(1.0)
