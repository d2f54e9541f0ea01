"""Star arguments in calls: `np.random.rand(*h.shape)` draws what
`np.random.random_sample(h.shape)` draws."""
import numpy as np
import pytest

import s2s
from conftest import central


MODES = ["reverse", "forward", "auto"]


def check(f, x, mode, *rest, rtol=1e-6, atol=1e-8):
    got = s2s.grad(f, mode=mode)(x, *rest)
    np.testing.assert_allclose(got, central(lambda z: f(z, *rest), x), rtol=rtol, atol=atol)


R = np.array([0.3, -1.2, 0.8, 0.05])


def dropout_layer(w):
    np.random.seed(3)
    h = np.tanh(np.outer(w, w[:2]))
    keep = np.random.rand(*h.shape) > 0.5
    noise = np.random.randn(*h.shape[:1])
    return np.sum(h * keep) + noise @ w


@pytest.mark.parametrize("mode", MODES)
def test_a_mask_drawn_with_star_shape(mode):
    """Outside round 5 (ordinary Python that was refused or crashed), a dropout mask drawn with np.random.rand(*h.shape)
    (K9): the same draw, as random_sample(h.shape)."""
    check(dropout_layer, R, mode)
