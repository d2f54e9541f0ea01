"""Ordinary Python that s2s refused or crashed on (the fourth outside tester's G5, G7, G8, G15; the third's F4):
dicts of loss functions, a local functools.partial, argmin with a payload, max/min with key=, an L-BFGS two-loop
recursion over history lists (a window kept by slicing or by xs.pop(0)), a transpose of a list-of-lists matrix with
zip(*M). Each gradient against central differences in reverse and forward mode (and hvp where it applies)."""
import functools
import itertools
import math

import numpy as np
import pytest

import s2s
from conftest import central

MODES = ["reverse", "forward"]


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


# ---- G5: a dict of loss functions, looked up by a key known only when the function runs, or looped over

LOSSES = {
    "mse": lambda r: np.mean(r ** 2),
    "huber": lambda r: np.mean(np.sqrt(1.0 + r ** 2) - 1.0),
    "cauchy": lambda r: np.mean(np.log1p(r ** 2)),
}


def robust_loss(r, loss="huber"):
    return LOSSES[loss](r) + 0.1 * np.sum(r ** 2)


def total_loss(r):
    t = 0.0
    for name, fn in LOSSES.items():
        weight = 2.0 if name == "mse" else 1.0
        t = t + weight * fn(r)
    return t


def sum_of_values(r):
    return sum(fn(r) for fn in LOSSES.values())


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("loss", ["huber", "mse", "cauchy"])
def test_a_loss_picked_from_a_dict_by_a_string_argument(mode, loss):
    check(robust_loss, R, mode, loss)


@pytest.mark.parametrize("mode", MODES)
def test_a_loss_picked_by_its_default_key(mode):
    got = s2s.grad(robust_loss, mode=mode)(R)
    np.testing.assert_allclose(got, central(robust_loss, R), rtol=1e-6, atol=1e-8)


def test_a_key_missing_from_the_dict_raises_keyerror_as_python_does():
    with pytest.raises(KeyError):
        s2s.grad(robust_loss)(R, "l1")


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("f", [total_loss, sum_of_values], ids=["items", "values"])
def test_every_loss_of_a_dict(mode, f):
    check(f, R, mode)


ACTS = {"relu": lambda z: np.maximum(z, 0.0), "tanh": np.tanh}
W3 = np.array([[0.6, 0.1, -0.2], [0.1, 0.5, 0.1], [0.3, -0.1, 0.7]])


def stacked_layers(x, kinds=("tanh", "relu", "tanh")):
    h = x
    for k in kinds:                                    # the key a loop variable over a tuple of strings (K8)
        h = ACTS[k](W3 @ h)
    return np.sum(h ** 2)


@pytest.mark.parametrize("mode", MODES)
def test_layers_picked_from_a_dict_in_a_loop(mode):
    check(stacked_layers, R[:3] + 0.4, mode)


def test_losses_over_a_dict_second_order():
    check_hvp(total_loss, R)
    check_hvp(robust_loss, R)


def test_a_changed_dict_makes_the_derivative_anew():
    table = {"a": lambda r: np.sum(r ** 2)}

    def loss(r, key="a"):
        return table[key](r)
    grad = s2s.grad(loss)
    np.testing.assert_allclose(grad(R), 2 * R)
    table["b"] = lambda r: np.sum(r ** 3)            # a key added: the chain of keys is made again
    np.testing.assert_allclose(grad(R, "b"), 3 * R ** 2)
    table["a"] = lambda r: np.sum(np.sin(r))          # an item replaced
    np.testing.assert_allclose(grad(R), np.cos(R))

    def every(r):
        t = 0.0
        for fn in table.values():
            t = t + fn(r)
        return t
    grad = s2s.grad(every)
    np.testing.assert_allclose(grad(R), np.cos(R) + 3 * R ** 2)
    del table["b"]
    np.testing.assert_allclose(grad(R), np.cos(R))


# ---- G5: a functools.partial made inside the function

def act(z, kind="tanh"):
    return np.tanh(z) if kind == "tanh" else np.logaddexp(0.0, z)


def mlp_with_partial(w):
    f = functools.partial(act, kind="softplus")
    h = f(w * 2.0)
    return np.sum(h) + np.sum(f(h, kind="tanh"))      # a keyword given at the call wins, as in Python


def scaled_power(w):
    power_of = functools.partial(np.power, w)          # bound to an active value when made
    t = 0.0
    for k in range(1, 4):
        t = t + np.sum(power_of(float(k))) / k
    return t


def partial_of_lambda(w):
    s = w[0]
    weighted = functools.partial(lambda a, b: a * b * s, 2.0)
    return np.sum(weighted(w))


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("f", [mlp_with_partial, scaled_power, partial_of_lambda])
def test_a_local_partial(mode, f):
    check(f, R, mode)


def test_a_local_partial_second_order():
    check_hvp(mlp_with_partial, R)


# ---- G15: argmin with a payload, max/min with key=

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
    check(f, R, mode)


def test_a_tie_keeps_the_first_item_as_python_does():
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
    # max(d) read d[0], d[1] (the values) where Python compares the keys: a silently wrong gradient before
    check(best_bin, R, mode)
    assert best_bin(R) == pytest.approx(R[3] * 2 + R[0] * 5.0 * 2.0)


def test_an_empty_sequence_raises_valueerror_as_python_does():
    def empty(v):
        return max((a for a in v if a > 5.0), key=abs) * v[0]
    with pytest.raises(ValueError, match="empty"):
        s2s.grad(empty)(R)


def test_argmin_with_payload_second_order():
    check_hvp(nearest_center, R)


# ---- G7: an L-BFGS two-loop recursion over history lists

H = np.array([[3.0, 0.5, 0.1], [0.5, 2.0, 0.3], [0.1, 0.3, 1.0]])
B = np.array([1.0, -0.5, 0.2])


def quad(x):
    return 0.5 * x @ H @ x - B @ x


def quad_grad(x):
    return H @ x - B


def two_loop(g, S, Y):
    q = g
    alphas = []
    for s, y in zip(reversed(S), reversed(Y)):
        a = (s @ q) / (y @ s)
        alphas.append(a)
        q = q - a * y
    r = q * ((S[-1] @ Y[-1]) / (Y[-1] @ Y[-1]) if S else 0.1)
    for (s, y), a in zip(zip(S, Y), reversed(alphas)):
        r = r + s * (a - (y @ r) / (y @ s))
    return r


def lbfgs_window(x0, m=2):
    x, S, Y = x0, [], []
    g = quad_grad(x)
    for k in range(4):
        x_new = x - two_loop(g, S, Y)
        g_new = quad_grad(x_new)
        S = (S + [x_new - x])[-m:]                 # the last m steps, kept by slicing
        Y = (Y + [g_new - g])[-m:]
        x, g = x_new, g_new
    return quad(x) + 0.01 * x0 @ x0


def lbfgs_history(x0):
    x, S, Y = x0, [], []
    g = quad_grad(x)
    for k in range(3):
        x_new = x - two_loop(g, S, Y)
        g_new = quad_grad(x_new)
        S.append(x_new - x)                          # the whole history, never trimmed
        Y.append(g_new - g)
        x, g = x_new, g_new
    return quad(x) + 0.01 * x0 @ x0


X0 = np.array([0.4, -0.2, 0.7])


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("f", [lbfgs_window, lbfgs_history])
def test_lbfgs_two_loop_recursion(mode, f):
    check(f, X0, mode, rtol=1e-5, atol=1e-8)


# ---- zip(*M): the transpose of a list-of-lists matrix; zip in other forms

def transpose_quadratic(x):
    M = [[x[0], x[1], x[2]], [x[3], x[0] * x[1], 1.0]]
    T = [list(col) for col in zip(*M)]                 # 3 rows of 2
    return sum(row[0] * row[1] for row in T) + T[2][0] ** 2


def column_sums(x):
    M = [[x[0], 2.0 * x[1]], [x[2] ** 2, x[3]], [x[0] * x[3], 1.0]]
    return sum(sum(col) ** 2 for col in zip(*M))


def weighted_pairs(x):
    w = [3.0, 1.0, 2.0, 0.5]
    t = 0.0
    for pair in zip(w, x):                             # one name for the pair
        t = t + pair[0] * pair[1] ** 2
    order = sorted(zip(w, x))                          # sorted by weight
    return t + sum(k * a for k, (_, a) in enumerate(order))


def total_variation(x):
    return sum(abs(b - a) for a, b in itertools.pairwise(x)) + sum(list(x)) * x[0]


def rows_of_a_matrix(x):
    rows = list(x.reshape(2, 2))                       # the rows of an array
    first, second = tuple(rows)
    return first @ second + np.sum(rows[0] ** 2)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("f", [transpose_quadratic, column_sums, weighted_pairs, rows_of_a_matrix, total_variation])
def test_zip_and_list_forms(mode, f):
    check(f, R, mode)


def test_transpose_and_lbfgs_second_order():
    check_hvp(column_sums, R)
    check_hvp(lbfgs_window, X0)


# ---- a dropout mask drawn with np.random.rand(*h.shape) (K9): the same draw, as random_sample(h.shape)

def dropout_layer(w):
    np.random.seed(3)
    h = np.tanh(np.outer(w, w[:2]))
    keep = np.random.rand(*h.shape) > 0.5
    noise = np.random.randn(*h.shape[:1])
    return np.sum(h * keep) + noise @ w


@pytest.mark.parametrize("mode", MODES)
def test_a_mask_drawn_with_star_shape(mode):
    check(dropout_layer, R, mode)


# ---- G8 and F4 stay fixed: reversed() of a list of floats, `import math as np` inside the function

COEFFS = [1.0, -2.0, 0.5, 0.25]


def horner(x):
    acc = 0.0
    for c in reversed(COEFFS):
        acc = acc * x + c
    return acc


def shadowed_numpy(x):
    import math as np
    return np.sin(x) * x


@pytest.mark.parametrize("mode", MODES)
def test_reversed_list_and_shadowed_import(mode):
    assert s2s.grad(horner, mode=mode)(0.7) == pytest.approx(-2.0 + 0.7 + 0.75 * 0.49, rel=1e-12)
    assert s2s.grad(shadowed_numpy, mode=mode)(0.7) == pytest.approx(math.cos(0.7) * 0.7 + math.sin(0.7),
                                                                      rel=1e-12)


# ---- xs.pop(i) as a statement: the list without that item; a pop whose value is used is refused with a rewrite

def lbfgs_pop(x0, m=2):
    x, S, Y = x0, [], []
    g = quad_grad(x)
    for k in range(4):
        x_new = x - two_loop(g, S, Y)
        g_new = quad_grad(x_new)
        S.append(x_new - x)
        Y.append(g_new - g)
        if len(S) > m:                  # the oldest pair dropped
            S.pop(0)
            Y.pop(0)
        x, g = x_new, g_new
    return quad(x) + 0.01 * x0 @ x0


def stack_pop(x):
    stack = [x, 2.0 * x, x * x]
    stack.pop()
    return np.sum(stack[-1] * stack[0])


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("f", [lbfgs_pop, stack_pop])
def test_list_pop_as_a_statement(mode, f):
    check(f, X0, mode, rtol=1e-5, atol=1e-8)
    np.testing.assert_allclose(s2s.grad(lbfgs_pop, mode=mode)(X0), s2s.grad(lbfgs_window, mode=mode)(X0),
                               rtol=1e-12)


def pop_value(x):
    S = [x, 2.0 * x, 3.0 * x]
    first = S.pop(0)                    # an item read and the list without it
    acc = np.sum(first * S[0])
    acc = acc + np.sum(S.pop())
    S.append(first * 0.5)
    acc = acc * np.sum(S.pop(0))
    return acc * np.sum(S[0])


def drain(x):
    stack = [x[0], x[1] * x[2], x[3]]
    t = 0.0
    while stack:
        t = t * 2.0 + stack.pop()
    return t


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("f", [pop_value, drain])
def test_a_pop_whose_value_is_used(mode, f):
    check(f, R, mode)


def pop_read_twice(x):
    S = [x, 2.0 * x, 3.0 * x]
    return np.sum(S[1] * S.pop(0))      # S read again in the statement: Python's order matters


def pop_alias(x):
    S = [x, 2.0 * x, 3.0 * x]
    T = S
    S.pop(0)
    return np.sum(T[0])


def appended_through_a_list_of_lists(x):
    S = [x, 2.0 * x]
    rows = [S]
    T = rows[0]                          # S itself, read from another list
    S.append(3.0 * x)
    return np.sum(T[-1])


def test_a_pop_whose_order_matters_or_seen_through_another_name_is_refused():
    with pytest.raises(s2s.UnsupportedSyntax, match="'S' may share memory with"):
        s2s.grad(appended_through_a_list_of_lists)(R)
    with pytest.raises(s2s.UnsupportedSyntax) as info:
        s2s.grad(pop_read_twice)(R)
    message = str(info.value)
    assert "test_refused_round5.py:" in message and ".pop()" in message and "y = xs[0]; xs.pop(0)" in message
    with pytest.raises(s2s.UnsupportedSyntax, match="'S' is the same object as 'T'"):
        s2s.grad(pop_alias)(R)


# ---- gradients made inside the differentiated function (K15, K10); an object made inside and called (K3)

XS = np.ones((4, 3)) * np.arange(3.0)
YS = np.arange(4.0)


def fit_loss(w, X, y):
    return np.mean((X @ w - y) ** 2)


def one_step_lookahead(w):
    g = s2s.grad(fit_loss)(w, XS, YS)                  # made inline, the JAX way
    return fit_loss(w - 0.1 * g, XS, YS)


def inline_gradient_of_a_closure(w):
    c = w[0]
    return np.sum(s2s.grad(lambda u: np.sum(u ** 2) * c)(w))


@pytest.mark.parametrize("mode", MODES)
def test_a_gradient_made_inline(mode):
    check(one_step_lookahead, R[:3], mode)
    with pytest.raises(s2s.UnsupportedSyntax, match="module level") as info:
        s2s.grad(inline_gradient_of_a_closure, mode=mode)(R[:3])
    assert "test_refused_round5.py:" in str(info.value)


def two_layer(W, v, x):
    return np.sum(np.tanh(x @ W) @ v)


D_BOTH = s2s.grad(two_layer, wrt=(0, 1))


def maml_step(W):
    gW, gv = D_BOTH(W, np.ones(2), np.ones((2, 3)))
    return two_layer(W - 0.1 * gW, np.ones(2), np.ones((2, 3)))


def test_a_gradient_with_respect_to_several_arguments_says_to_make_one_per_argument():
    with pytest.raises(s2s.UnsupportedSyntax) as info:
        s2s.grad(maml_step)(np.ones((3, 2)))
    message = str(info.value)
    assert "test_refused_round5.py:" in message and "s2s.grad(two_layer, wrt=0)" in message


class Scale:
    def __init__(self, k):
        self.k = k

    def __call__(self, x):
        return x * self.k


def scaled(x):
    s = Scale(3.0)                                     # made inside, holding no differentiated value
    return np.sum(s(x) ** 2)


def scaled_by_x(x):
    s = Scale(x[0])
    return np.sum(s(x) ** 2)


@pytest.mark.parametrize("mode", MODES)
def test_an_object_made_inside_and_called(mode):
    check(scaled, R, mode)
    with pytest.raises(s2s.S2SError, match="made inside the function|building a Scale"):
        s2s.grad(scaled_by_x, mode=mode)(R)
