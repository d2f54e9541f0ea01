"""The analyses as domains of the dataflow engine (s2s/analysis/dataflow.py): their facts, keyed by Value, on small
functions with loops and branches, and how many sweeps the engine needed to settle them."""
import numpy as np

from s2s.analysis import activity, dataflow
from s2s.driver.primal import lowered
from s2s.ir.core import For, If, Op, Value, walk
from s2s.transforms.batching import masked_inputs


def looped(x, n, flag):
    k = 0
    s = 0.0
    t = 1.0
    w = 2.0 * n
    for i in range(n):
        s = s + t          # varies only once t does: the loop's update reaches back
        t = t * x
        k = k + 1
    if flag > 0:
        y = s
    else:
        y = w
    return y + k


def named(facts):
    """The names of the values a domain has a fact of (x, s, s.1, ...), as the IR printer writes them."""
    return {v.name for v in facts if isinstance(v, Value)}


def counted(domain):
    """domain, and a list that solve's sweeps are counted in (its `sweep` hook runs once per sweep)."""
    runs = []
    original = domain.sweep
    domain.sweep = lambda fn: runs.append(1) or original(fn)
    return domain, runs


def test_varied_values_reach_a_loops_carried_value_through_its_update():
    fn = lowered(looped)
    domain, runs = counted(activity.Varied([0], set()))
    dataflow.solve(fn, domain)
    assert all(isinstance(v, Value) for v in domain.facts)        # keyed by the values, not their ids
    found = named(domain.facts)
    # t's update reads x; s's reads t, which varies only once the first sweep has left the loop: a second sweep
    assert {"x", "t", "t.1", "t.2", "s", "s.1", "s.2", "y"} <= found
    assert not found & {"n", "flag", "k", "k.1", "k.2", "w"}     # an integer count; what n and flag make
    assert len(runs) == 3          # marks s in the second sweep; the third finds nothing new
    assert activity.varied_values(fn, [0]) == {id(v) for v in domain.facts}


def test_useful_values_are_found_backwards_from_the_result():
    fn = lowered(looped)
    domain, runs = counted(activity.Useful())
    dataflow.solve(fn, domain)
    found = named(domain.facts)
    # the result reads y and k.2; y is s.2 or w (both kept); s's update reads t, whose own reads x: found once
    # the loop's body is walked again
    assert {"y", "s.2", "w", "n", "s", "s.1", "t", "t.1", "x", "k", "k.1", "k.2"} <= found
    assert not found & {"t.2", "flag", "v1"}       # the loop's last t is never read; the branch's test decides
    assert len(runs) >= 2
    active = activity.active_values(fn, [0])
    assert {v.name for v in walk_values(fn) if id(v) in active} == {
        "x", "t", "t.1", "s", "s.1", "s.2", "y", "v2"}


def walk_values(fn):
    found = list(fn.params)
    for stmt in walk(fn.body):
        found.extend(stmt.outs)
        if not isinstance(stmt, (Op, If)):
            found.extend(stmt.carried)
    return found


def widened(x, n):
    acc = 0.0
    for i in range(n):
        acc = acc + x          # an array added to a number: an array from the first iteration on
    if n > 1:
        pair = (acc, n)
    else:
        pair = (n, n)
    return pair


def test_kinds_widen_a_carried_number_an_array_is_added_to():
    fn = lowered(widened)
    domain, runs = counted(activity.Kinds(["array", "scalar"]))
    dataflow.solve(fn, domain)
    loop = next(s for s in walk(fn.body) if isinstance(s, For))
    branch = next(s for s in walk(fn.body) if isinstance(s, If))
    assert domain.facts[loop.carried[0]] == "array" and domain.facts[loop.outs[0]] == "array"
    assert domain.facts[loop.index] == "scalar"
    assert domain.facts[branch.outs[0]] == ("tuple", None)      # two tuples whose items differ: a tuple
    assert len(runs) == 2       # the first sweep assumed a number; the second starts from the widened kind
    assert activity.value_kinds(fn, ["array", "scalar"]) == {id(v): k for v, k in domain.facts.items()}
    assert activity.value_kinds(fn, ["scalar", "scalar"])[id(loop.carried[0])] == "scalar"


def test_floats_follow_what_makes_and_keeps_them():
    fn = lowered(looped)
    domain, runs = counted(activity.Floats([0]))
    dataflow.solve(fn, domain)
    found = named(domain.facts)
    assert {"x", "t.1", "w"} <= found           # t * x with x a float; 2.0 * n
    assert "k.1" not in found and "n" not in found
    assert len(runs) == 1           # nothing flows through a merge or a carried value: one sweep


def branch_with_log(x, y):
    if x > 0:
        z = np.log(y) + np.sum(x)
    else:
        z = x
    return z


def test_a_branch_masks_what_reaches_an_operation_that_may_warn():
    fn = lowered(branch_with_log)
    branch = next(s for s in walk(fn.body) if isinstance(s, If))
    masked = masked_inputs(branch.then)
    y, x = fn.params[1], fn.params[0]
    assert id(y) in masked and id(x) not in masked       # log(y) may warn where the branch is not taken


def test_kinds_and_floats_solved_in_one_walk_are_what_each_finds_alone():
    for fn, kinds in ((lowered(widened), ["array", "scalar"]), (lowered(looped), ["scalar"] * 3)):
        scalars, floats = activity.scalars_and_floats(fn, kinds, [0])
        assert scalars == activity.scalar_values(fn, kinds) and floats == activity.float_values(fn, [0])
        assert floats and scalars
