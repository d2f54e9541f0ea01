"""numpy.matrix is refused where it enters, as an argument or a global: its operators are not an ndarray's (`M * w`
is the matrix product, `M[0]` a row of shape (1, n)), so a derivative written for ndarrays would be wrong for it.
Found by an outside tester: a global matrix `M @ w` raised ValueError in the generated code (`_matmul_right`)."""
import numpy as np
import pytest

import s2s

M = np.matrix([[1.0, 2.0, 0.0], [0.0, 1.0, 3.0], [1.0, 0.0, 1.0]])


def global_matrix(w):
    return float(np.sum(np.asarray(M @ w) ** 2))


def with_argument(w, A):
    return np.sum(A * w)


W = np.array([0.1, 0.2, 0.3])


@pytest.mark.parametrize("mode", ["auto", "reverse", "forward"])
def test_a_global_matrix_is_refused_where_it_is_read(mode):
    with pytest.raises(s2s.S2SError, match="numpy.matrix") as raised:
        s2s.grad(global_matrix, mode=mode)(W)
    assert "test_numpy_matrix.py:13" in str(raised.value)


@pytest.mark.parametrize("mode", ["auto", "reverse", "forward"])
def test_a_matrix_argument_is_refused(mode):
    with pytest.raises(s2s.S2SError, match="numpy.matrix"):
        s2s.grad(with_argument, mode=mode)(W, M)
    with pytest.raises(s2s.S2SError, match="numpy.matrix"):
        s2s.grad(with_argument, wrt=1, mode=mode)(W, M)
    A = np.asarray(M)                                   # the ndarray it suggests: differentiated as before
    np.testing.assert_allclose(s2s.grad(with_argument, mode=mode)(W, A), A.sum(axis=0))
