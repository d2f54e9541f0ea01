"""max, min and sorted as Python runs them: of several arguments, with key=, of tuples (the payload
follows the item chosen), over a dict's keys; ties and empty sequences as Python has them."""
import numpy as np
import pytest

import s2s
from conftest import agrees, central


MODES = ["reverse", "forward", "auto"]


def by_magnitude(xs):
    ys = sorted(xs, key=abs)
    return ys[0] * 3.0 + ys[-1]


def test_sorted_with_a_key():
    """Outside round 1 (the first outside tester's programs, written in their own style)."""
    assert s2s.grad(by_magnitude)([0.3, -0.8, 1.2]) == [3.0, 0.0, 1.0]


def three_way(a, b, c):
    return max(a, b * 2.0, c) + min(a, b, c * c)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("point", [(1.0, 0.7, 0.5), (1.0, 0.3, 2.0), (0.2, 0.9, 0.1)])
def test_max_and_min_of_three(point, mode):
    """Outside round 1 (the first outside tester's programs, written in their own style)."""
    for i in range(3):
        agrees(three_way, point, i, mode=mode)


def sorted_pairs_by_key(v):
    items = sorted([(abs(a), a) for a in v], key=lambda t: t[0])
    return sum(a * k for k, (_, a) in enumerate(items))


def sorted_pairs(v):
    items = sorted([(abs(a), a) for a in v])
    return sum(a * k for k, (_, a) in enumerate(items))


def sorted_by_abs(v):
    return sum(k * a for k, a in enumerate(sorted(v, key=abs)))


@pytest.mark.parametrize("mode", ["reverse", "forward", "auto"])
@pytest.mark.parametrize("f", [sorted_pairs_by_key, sorted_pairs, sorted_by_abs], ids=lambda f: f.__name__)
def test_sorted_lists_of_tuples_and_arrays(f, mode):
    """Outside round 4, G2: sorting tuples without a key crashed in the order helper (a 2-D argsort); an array's
    gradient through sorted came back as a list."""
    v = np.array([0.7, -0.4, 1.3])
    gradient = s2s.grad(f, mode=mode)(v)
    assert isinstance(gradient, np.ndarray)
    assert np.allclose(gradient, [1.0, 0.0, 2.0])


def sorted_tuples(v):
    items = sorted([(abs(a), a) for a in v])
    return sum(a * k for k, (_, a) in enumerate(items))


def sorted_by_key(v):
    items = sorted([(abs(a), a) for a in v], key=lambda t: t[0])
    return sum(a * k for k, (_, a) in enumerate(items)) + sum(k * a for k, a in enumerate(sorted(v, key=abs)))


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("f", [sorted_tuples, sorted_by_key])
def test_sorted_lists_of_tuples(f, mode):
    """Outside round 4, G2: sorted() of a list of tuples without a key (a TypeError in the generated helper), and an
    array's adjoint through sorted() is an array (it was a list of numbers)."""
    v = np.array([0.7, -0.4, 1.3])
    gradient = s2s.grad(f, mode=mode, check=True)(v)
    assert isinstance(gradient, np.ndarray)
    np.testing.assert_allclose(gradient, central(f, v), rtol=1e-7)


def min_of_tuples(v):
    return min((a * a, a) for a in v)[1] * 3


def argmin_with_payload(v):
    keys = [a * a for a in v]
    i = int(np.argmin(keys))
    return [a for a in v][i] * 3 + keys[i]


@pytest.mark.parametrize("mode", MODES)
def test_min_of_tuples_follows_the_selected_payload(mode):
    """Outside round 4, G15: the builtin min / max of tuples (the argmin-with-payload idiom) crashed in the generated
    code with a TypeError: refused when the derivative is made, with the rewrite."""
    # min() of (key, payload) tuples compares them as Python does; the payload's gradient follows the item chosen
    v = np.array([0.7, -0.4, 1.3, 0.2])
    np.testing.assert_allclose(s2s.grad(min_of_tuples, mode=mode)(v), [0.0, 0.0, 0.0, 3.0], atol=0)
    np.testing.assert_allclose(s2s.grad(argmin_with_payload, mode=mode)(v), central(argmin_with_payload, v),
                               rtol=1e-7, atol=1e-9)


def check(f, x, mode, *rest, rtol=1e-6, atol=1e-8):
    got = s2s.grad(f, mode=mode)(x, *rest)
    np.testing.assert_allclose(got, central(lambda z: f(z, *rest), x), rtol=rtol, atol=atol)


def check_hvp(f, x, eps=1e-5):
    """s2s.hvp along a direction against central differences of s2s's gradient."""
    v = np.linspace(-1.0, 1.0, np.size(x))
    gradient = s2s.grad(f)
    expected = (np.asarray(gradient(x + eps * v)) - np.asarray(gradient(x - eps * v))) / (2 * eps)
    np.testing.assert_allclose(s2s.hvp(f)(x, v), expected, rtol=1e-4, atol=1e-6)


R = np.array([0.3, -1.2, 0.8, 0.05])


def nearest_center(x):
    centers = [x[0] * 2.0, x[1] - 1.0, x[2] + x[3]]
    d, c = min((abs(c - 0.1), c) for c in centers)     # tuples compared as Python compares them
    return c * c + d


def best_pair(v):
    pairs = []
    for a in v:
        pairs.append((a * a, a))
    best = max(pairs)                                   # a list of tuples built by appends
    return best[1] * 3.0 + best[0]


def max_by_key(v):
    pairs = [(a * a, a) for a in v]
    best = max(pairs, key=lambda p: p[0])
    return best[1] * 3.0


def argmin_by_index(v):
    i = min(range(len(v)), key=lambda j: (v[j] - 0.5) ** 2)      # the key reads the function's own variable
    return v[i] ** 2 + v[0]


def largest_magnitude(v):
    return max(v, key=abs) * 2.0 + min(v[0], v[1], key=abs) + max((a for a in v if a > 5.0), key=abs, default=0.0)


def rank_weighted(v):
    order = sorted(range(len(v)), key=lambda i: v[i] * v[i], reverse=True)     # the key reads v
    return sum(k * v[i] for k, i in enumerate(order)) + sorted(list(v), key=lambda a: -a)[0]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("f", [nearest_center, best_pair, max_by_key, argmin_by_index, largest_magnitude,
                               rank_weighted])
def test_extremum_with_a_payload(mode, f):
    """Outside round 5 (ordinary Python that was refused or crashed), G15: argmin with a payload, max/min with key=."""
    check(f, R, mode)


def test_a_tie_keeps_the_first_item_as_python_does():
    """Outside round 5 (ordinary Python that was refused or crashed), G15: argmin with a payload, max/min with key=."""
    def first_wins(x):
        pairs = [(1.0, x[0]), (1.0, x[1])]
        return max(pairs, key=lambda p: p[0])[1] + min(pairs)[1] * 2.0     # min compares the payloads too
    for mode in MODES:
        np.testing.assert_allclose(s2s.grad(first_wins, mode=mode)(np.array([0.2, 0.9])), [3.0, 0.0])
        np.testing.assert_allclose(s2s.grad(first_wins, mode=mode)(np.array([0.9, 0.2])), [1.0, 2.0])


def best_bin(x):
    scores = {0: x[0] * 5.0, 1: x[1] * 5.0, 2: x[2]}
    top = max(scores)                                          # a dict's items are its keys
    best = max(scores, key=lambda k: scores[k])
    return x[3] * top + scores[best] * 2.0


@pytest.mark.parametrize("mode", MODES)
def test_max_over_a_dict_goes_over_its_keys(mode):
    """Outside round 5 (ordinary Python that was refused or crashed), G15: argmin with a payload, max/min with key=."""
    # max(d) read d[0], d[1] (the values) where Python compares the keys: a silently wrong gradient before
    check(best_bin, R, mode)
    assert best_bin(R) == pytest.approx(R[3] * 2 + R[0] * 5.0 * 2.0)


def test_an_empty_sequence_raises_valueerror_as_python_does():
    """Outside round 5 (ordinary Python that was refused or crashed), G15: argmin with a payload, max/min with key=."""
    def empty(v):
        return max((a for a in v if a > 5.0), key=abs) * v[0]
    with pytest.raises(ValueError, match="empty"):
        s2s.grad(empty)(R)


def test_argmin_with_payload_second_order():
    """Outside round 5 (ordinary Python that was refused or crashed), G15: argmin with a payload, max/min with key=."""
    check_hvp(nearest_center, R)


# an outside tester's report: `sorted(xs, key=lambda t: t[1])` whose key reads a local variable (these worked
# already, checked here in every mode and to second order), and the same key written as a nested `def` passed by
# its name, which was refused ("s2s does not support this nested function")

def by_a_local_column(a, b, c):
    k = 1
    s = sorted([(a, b), (b, c), (c, a)], key=lambda t: t[k])
    return s[0][0] * 2.0 + s[1][0] * s[2][1]


def by_local_scores(x):
    scores = x * 2.0 - 1.0
    order = sorted(range(3), key=lambda i: scores[i])
    return x[order[0]] * 3.0 + x[order[2]] ** 2


def by_distance_to_an_active_local(a, b, c):
    shift = a * 0.5
    s = sorted([a, b, c], key=lambda t: abs(t - shift), reverse=True)
    return s[0] * 2.0 + s[1] * s[2]


def by_a_nested_def(xs, p):
    column = 1

    def distance(q):
        return (q[column] - p) ** 2

    s = sorted(xs, key=distance)
    return s[0][0] * 2.0 + s[-1][1] + max(xs, key=distance)[0] * min(xs, key=distance)[1]


@pytest.mark.parametrize("f, args, wrt", [
    (by_a_local_column, (1.5, 2.5, 0.3), 0),
    (by_a_local_column, (1.5, 2.5, 0.3), 2),
    (by_local_scores, (np.array([0.3, -0.7, 1.2]),), 0),
    (by_distance_to_an_active_local, (1.5, 2.5, 0.3), 0),
    (by_a_nested_def, (np.array([[0.3, 1.0], [0.1, 2.0], [0.7, 0.4]]), 0.9), 0),
    (by_a_nested_def, ([(0.3, 1.0), (0.1, 2.0), (0.7, 0.4)], 0.9), 1),
], ids=lambda v: getattr(v, "__name__", str(v)))
def test_sorted_by_a_key_reading_locals(f, args, wrt):
    from conftest import assert_gradient
    from s2s.testing import check_grads
    assert_gradient(f, *args, wrt=wrt)
    check_grads(f, args, order=2, modes=("forward", "reverse"), wrt=wrt)
