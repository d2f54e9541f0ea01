"""scikit-learn functions decorated by validate_params (`return func(*args, **kwargs)` in the wrapper): an outside
tester's report. The wrapper is read (its star call of a known length), but what it calls is not modelled yet:
`rbf_kernel` exponentiates in place through `_modify_in_place_if_numpy(xp, xp.exp, K, out=K)` and
`mean_squared_error` validates its inputs in a `try` whose body calls `xp.result_type(*dtypes)` as Python calls
it. Both are refused when the derivative is made, in every mode, with an s2s.S2SError that names the place and the
fix (a rule of one's own) -- never a crash in generated code or a wrong number."""
import numpy as np
import pytest

import s2s

sklearn = pytest.importorskip("sklearn")
from sklearn.metrics import mean_squared_error  # noqa: E402
from sklearn.metrics.pairwise import rbf_kernel  # noqa: E402


def kernel_sum(X, Y):
    return np.sum(rbf_kernel(X, Y, gamma=0.5))


def mse(a, b):
    return mean_squared_error(a, b)


@pytest.mark.slow           # (reading scikit-learn's validation code takes a minute or more before the refusal)
@pytest.mark.parametrize("mode", ["auto", "reverse", "forward"])
@pytest.mark.parametrize("f, args", [
    (kernel_sum, (np.array([[0.1, 0.4], [0.7, 0.2]]), np.array([[0.3, 0.9]]))),
    (mse, (np.array([1.0, 2.0, 3.0]), np.array([1.5, 2.5, 2.0]))),
], ids=lambda v: getattr(v, "__name__", str(v)))
def test_refused_with_the_place_and_a_fix(f, args, mode):
    with pytest.raises(s2s.S2SError, match=r"\.py:\d+:\d+: .*no (derivative|tangent) rule for sklearn") as info:
        s2s.grad(f, mode=mode)(*args)
    assert "@s2s.adjoint(sklearn" in str(info.value) or "@s2s.tangent(sklearn" in str(info.value)
