"""A derivative called with the wrong arguments raises Python's TypeError naming the user's function (it named
`derivative()`, s2s's dispatcher, or said only "missing a required argument" in forward mode)."""
import pytest

import s2s


def loss(x, y):
    return x * y + x


@pytest.mark.parametrize("mode", ["auto", "reverse", "forward"])
def test_the_type_error_names_the_function(mode):
    assert s2s.grad(loss, mode=mode)(2.0, 3.0) == pytest.approx(4.0)
    with pytest.raises(TypeError, match=r"^loss\(\) missing .*'y'"):
        s2s.grad(loss, mode=mode)(1.0)
    with pytest.raises(TypeError, match=r"^loss\(\) (takes 2 positional arguments but 3 were given|too many)"):
        s2s.grad(loss, mode=mode)(1.0, 2.0, 3.0)
    with pytest.raises(TypeError, match=r"^loss\(\) got an unexpected keyword argument 'z'"):
        s2s.value_and_grad(loss, mode=mode)(1.0, 2.0, z=2.0)
