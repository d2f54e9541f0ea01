"""np.einsum with many operands (issue 27, item 9).

The sublist form takes two arguments per operand and one for the output: three operands make seven arguments, one
more than the rule's six slots, so the output's sublist was read as `optimize=` and the adjoint's einsum failed
("operand has more dimensions than subscripts"). The rules take eleven (five operands in the sublist form with
their output, ten in the string form).
"""
import numpy as np
import pytest

import s2s

_rng = np.random.default_rng(9)


def _central(f, args, i, eps=1e-6):
    x = args[i]
    out = np.zeros_like(x)
    for k in np.ndindex(x.shape):
        e = np.zeros_like(x)
        e[k] = eps
        out[k] = (f(*[x + e if j == i else a for j, a in enumerate(args)])
                  - f(*[x - e if j == i else a for j, a in enumerate(args)])) / (2 * eps)
    return out


CASES = [
    # the issue's: three operands, an index repeated in the third (a diagonal), an explicit output
    ("np.einsum(x, (0, 1, 2), y, (3, 1, 0), z, (3, 3, 0), (3, 2, 0))", ((2, 3, 4), (5, 3, 2), (5, 5, 2))),
    ("np.einsum(x, [0, 1], y, [1, 2], z, [2, 3], w, [3, 0])", ((2, 3), (3, 2), (2, 2), (2, 2))),
    ("np.einsum(x, [0, 1], y, [1, 2], z, [2, 3], w, [3, 4], [0, 4])", ((2, 3), (3, 2), (2, 2), (2, 3))),
    ("np.einsum('ij,jk,kl,lm,mi->', x, y, z, w, v)", ((2, 3), (3, 2), (2, 2), (2, 3), (3, 2))),
    ("np.einsum(x, [Ellipsis, 0], y, [0, 1], z, [1], [Ellipsis])", ((4, 2, 3), (3, 2), (2,))),
]


@pytest.mark.parametrize("expression, shapes", CASES, ids=[c[0] for c in CASES])
def test_einsum_with_many_operands_in_every_mode(expression, shapes, make_fn):
    names = "xyzwv"[:len(shapes)]
    args = tuple(_rng.uniform(-1.0, 1.0, size=s) for s in shapes)
    weights = _rng.uniform(0.5, 1.5, size=np.shape(eval(expression, {"np": np}, dict(zip(names, args)))))
    f = make_fn(f"def f({', '.join(names)}):\n    return np.sum(({expression}) ** 2 * WEIGHTS)\n",
                namespace={"WEIGHTS": weights})
    wrt = tuple(range(len(args)))
    expected = [_central(f, args, i) for i in wrt]
    for mode in ("reverse", "forward", "auto"):
        gradient = s2s.grad(f, wrt=wrt, mode=mode)(*args)
        for i, (g, e) in enumerate(zip(gradient, expected)):
            assert g == pytest.approx(e, rel=1e-6, abs=1e-8), f"operand {i}, {mode} mode"
    v = _rng.uniform(-1.0, 1.0, size=shapes[0])
    gradient = s2s.grad(f, wrt=0, mode="reverse")
    h = 1e-5
    second = (gradient(args[0] + h * v, *args[1:]) - gradient(args[0] - h * v, *args[1:])) / (2 * h)
    assert s2s.hvp(f, wrt=0)(*args, v) == pytest.approx(second, rel=1e-5, abs=1e-7)
