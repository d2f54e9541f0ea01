"""`c[k] += v` on an array held in a list, dict or tuple (the tester's W2).

Python runs `c[k] = c[k].__iadd__(v)`: on an array item that writes into the array in place, so every other name
and item holding it sees the write (`lst = [a] * 2`, `d = {"p": a, "q": a}`, `a` itself after `d = {"k": a}`).
Lowering read it as `c[k] = c[k] + v`, a new array in c alone: the value and the gradient were wrong in every mode
and only check=True noticed. Now such a write is refused when the derivative is made, naming the place, whenever
something else may hold the item (s2s/ir/lower.py item_in_place, a check on the kinds); an item nothing else holds,
a number item (rebinding, not in place) and `A[k] += v` on an array are differentiated as before. A chained write
into a dict's item (`d[k][1:] *= 2.0`, also in place) is refused (s2s/passes/sequences.py): it was dropped whole when
the dict was read no more."""
import numpy as np
import pytest

import s2s
from s2s.testing import check_grads
from conftest import agrees

MODES = ["auto", "reverse", "forward"]
X = np.array([0.5, 1.2, -0.7])


# ---------------------------------------------------------------- refused: another name or item holds the array

def listed_twice(x):
    lst = [x.copy()] * 2         # one array, listed twice
    lst[0] += 1.0                # lst[1] is the same array
    return np.sum(lst[1] * x)    # Python: sum((x + 1) x), gradient 2x + 1


def dict_item_and_its_name(x):
    a = x.copy()
    d = {"k": a}
    d["k"] += 1.0                # a changes too
    return np.sum(a * x)


def dict_holding_one_array_twice(x):
    a = x.copy()
    d = {"p": a, "q": a}
    d["p"] -= x                  # d["q"] is the same array: zeros now
    return np.sum((d["q"] + 1.0) * x)


def row_of_an_array_in_a_list(x):
    m = np.stack([x, x])
    lst = [m[0]]                 # a view of m's first row
    lst[0] += 1.0
    return np.sum(m * x)         # Python: gradient 4x + 1


def argument_in_a_list(x):
    lst = [x]
    lst[0] *= 2.0                # the caller's x
    return np.sum(lst[0] * x)


def appended_in_a_loop(x):
    z = x * 1.0
    items = []
    for i in range(2):
        items.append(z)          # the one array z, twice
    items[0] += 1.0
    return np.sum(items[1] * x)


def shallow_copy_of_a_dict(x):
    d = {"w": x * 1.0}
    e = d.copy()                 # e["w"] is d["w"]
    e["w"] += 1.0
    return np.sum(d["w"] * x)


def _pair(z):
    return [z, z]


def pair_from_a_helper(x):
    lst = _pair(x * 1.0)
    lst[0] += 1.0
    return np.sum(lst[1] * x)


def _bump(p):
    p["w"] += 1.0                # the caller's array, in place
    return 0.0


def helper_writes_its_callers_item(x):
    d = {"w": x * 1.0}
    w = d["w"]
    _bump(d)
    return np.sum(w * x)         # Python: w is d["w"], bumped


REFUSED = [
    (listed_twice, "lst[...] += ...", "'lst' may hold that array in another item too"),
    (dict_item_and_its_name, "d[...] += ...", "the item may be the same array as 'a'"),
    (dict_holding_one_array_twice, "d[...] -= ...", "'d' may hold that array in another item too"),
    (row_of_an_array_in_a_list, "lst[...] += ...", "the item may be the same array as 'm'"),
    (argument_in_a_list, "lst[...] *= ...", "the item may be the same array as 'x'"),
    (appended_in_a_loop, "items[...] += ...", "'items' may hold that array in another item too"),
    (shallow_copy_of_a_dict, "e[...] += ...", "the item may be the same array as 'd'"),
    (pair_from_a_helper, "lst[...] += ...", "'lst' may hold that array in another item too"),
    (helper_writes_its_callers_item, "p[...] += ...", "the item may be an array _bump's caller passed"),
]


@pytest.mark.parametrize("f, shown, why", REFUSED, ids=[f.__name__ for f, _, _ in REFUSED])
@pytest.mark.parametrize("mode", MODES)
def test_an_in_place_write_into_an_item_something_else_holds_is_refused(f, shown, why, mode):
    with pytest.raises(s2s.UnsupportedSyntax) as info:
        s2s.value_and_grad(f, mode=mode)(X.copy())
    message = str(info.value)
    assert f"`{shown}` on an array item of a list or dict writes into that array in place" in message
    assert why in message
    assert "test_container_item_writes.py:" in message and "hint:" in message


def test_the_refusal_names_the_line_of_the_write():
    with pytest.raises(s2s.UnsupportedSyntax) as info:
        s2s.grad(listed_twice)(X.copy())
    assert info.value.loc.line == listed_twice.__code__.co_firstlineno + 2


def chained_into_a_dict_item(x):
    a = x.copy()
    d = {"w": a}
    d["w"][1:] *= 2.0            # a changes too; d is read no more
    return np.sum(a * x)


def chained_into_a_dict_item_read_again(x):
    d = {"w": x.copy()}
    d["w"][1:] *= 2.0
    return np.sum(d["w"] * x)


@pytest.mark.parametrize("f", [chained_into_a_dict_item, chained_into_a_dict_item_read_again])
@pytest.mark.parametrize("mode", MODES)
def test_a_chained_write_into_a_dicts_item_is_refused(f, mode):
    with pytest.raises(s2s.UnsupportedSyntax, match=r"a chained write `d\[k\]\[j\] = v`") as info:
        s2s.value_and_grad(f, mode=mode)(X.copy())
    assert "test_container_item_writes.py:" in str(info.value) and "hint:" in str(info.value)


# ---------------------------------------------------------------- differentiated: nothing else holds the array

def own_copy_in_a_list(x):
    lst = [x.copy()]
    lst[0] += 1.0
    return np.sum(lst[0] * x)


def number_and_array_items(x):
    d = {"n": 1.0, "w": x * 2.0}
    d["n"] += 1                  # a number: rebinding
    d["w"] *= 3.0                # the dict's own array
    return np.sum(d["w"] * x) * d["n"]


def accumulators_made_in_a_comprehension(x):
    acc = [np.zeros(3) for _ in range(2)]
    acc[0] += x
    acc[1] += 2.0 * x * x
    return np.sum(acc[0] * acc[1])


def two_arrays_of_their_own(x):
    d = {"a": x * 1.0, "b": x * 2.0}
    d["a"] += d["b"]
    d["b"] *= x
    return np.sum(d["a"] * d["b"])


def the_other_name_is_read_no_more(x):
    a = x.copy()
    d = {"k": a}
    d["k"] += 1.0                # a is never read again: nothing sees the difference
    return np.sum(d["k"] * x)


def new_array_appended_in_each_iteration(x):
    lst = []
    for i in range(2):
        lst.append(x * float(i + 1))
    lst[0] += 1.0
    return np.sum(lst[1] * lst[0])


def rows_of_an_array(x):
    A = np.zeros((2, 3))
    y = x * 1.0
    A[0] = y                     # copies y into A
    A[1] += y                    # an array's row: A[1] = A[1] + y
    return np.sum(A * y)


ACCEPTED = [own_copy_in_a_list, number_and_array_items, accumulators_made_in_a_comprehension,
            two_arrays_of_their_own, the_other_name_is_read_no_more, new_array_appended_in_each_iteration,
            rows_of_an_array]


@pytest.mark.parametrize("f", ACCEPTED)
@pytest.mark.parametrize("mode", MODES)
def test_an_item_nothing_else_holds_is_differentiated(f, mode):
    value, _ = s2s.value_and_grad(f, mode=mode)(X.copy())
    assert value == pytest.approx(f(X.copy()), rel=1e-12)
    agrees(f, (X.copy(),), mode=mode, rtol=1e-5, atol=1e-7)


def test_closed_forms():
    x = X.copy()
    np.testing.assert_allclose(s2s.grad(own_copy_in_a_list)(x), 2 * x + 1, rtol=1e-12)
    np.testing.assert_allclose(s2s.grad(number_and_array_items, mode="forward")(x), 24 * x, rtol=1e-12)
    np.testing.assert_allclose(s2s.grad(rows_of_an_array, mode="reverse")(x), 4 * x, rtol=1e-12)


@pytest.mark.parametrize("f", [own_copy_in_a_list, number_and_array_items, two_arrays_of_their_own])
def test_to_second_order(f):
    check_grads(f, (X.copy(),), order=2)


def params_updated_in_place(p, x):
    p["w"] += x                  # the function's own argument's item, as `x += v` on an argument: in the IR only
    return np.sum(p["w"] ** 2)


@pytest.mark.parametrize("mode", ["auto", "reverse"])
def test_an_item_of_the_functions_own_argument_is_written_as_the_argument_is(mode):
    w, x = np.array([0.5, -1.0]), np.array([2.0, 0.25])
    grads = s2s.grad(params_updated_in_place, wrt=(0, 1), mode=mode)({"w": w.copy()}, x.copy())
    np.testing.assert_allclose(grads[0]["w"], 2 * (w + x), rtol=1e-12)
    np.testing.assert_allclose(grads[1], 2 * (w + x), rtol=1e-12)
