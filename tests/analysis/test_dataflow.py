"""The dataflow engine (s2s/analysis/dataflow.py, issue 30 item 2): one fixed point over If/While/For, forward or
backward, with the analyses as domains keyed by Value objects; and the census of every other loop under s2s/ that
could repeat a sweep over the IR (each says why it is not an analysis on the engine)."""
import ast
import re
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

from s2s.analysis import dataflow, dtypes
from s2s.driver.primal import lowered
from s2s.ir.core import Op, walk

ROOT = Path(__file__).resolve().parent.parent.parent


class Constants(dataflow.Domain):
    """A toy domain: the number each value is known to be (None: not one number), joined at branches and loops."""

    def const(self, value):
        return value if type(value) in (int, float) else None

    def op(self, op):
        values = [self.of(a) for a in op.args]
        known = None not in values and not op.kwargs and op.prim.__name__ in ("add", "mul")
        for o in op.outs:
            self.set(o, op.prim(*values) if known else None)


def sweeps(fn):
    runs = []
    domain = Constants()
    original = domain.op

    def counted(op):
        runs.append(op)
        original(op)
    domain.op = counted
    dataflow.solve(fn, domain)
    return domain, runs


def straight(x):
    a = 2 + 3
    return x * a


def looped(x, n):
    k = 1
    c = 4
    for i in range(n):
        k = k + 1          # changes: not one number
        c = c * 1          # stays 4
    return x * k * c


def test_without_loops_one_sweep_settles_the_facts():
    fn = lowered(straight)
    domain, runs = sweeps(fn)
    assert len(runs) == len([s for s in walk(fn.body) if isinstance(s, Op)])
    assert 5 in domain.facts.values()
    assert all(isinstance(k, type(fn.params[0])) for k in domain.facts)      # keyed by Value objects


def test_loops_are_swept_until_the_carried_facts_settle():
    fn = lowered(looped)
    domain, runs = sweeps(fn)
    loop = next(s for s in walk(fn.body) if hasattr(s, "carried"))
    known = [domain.facts[c] for c in loop.carried]
    assert 4 in known and None in known           # c stays 4; k does not: joined with what the body makes
    assert len(runs) > len([s for s in walk(fn.body) if isinstance(s, Op)])


def float_or_int_in_loop(x, n):
    a = np.arange(3)            # integers
    b = np.zeros(3)             # floats
    for i in range(n):
        a = a * x               # becomes floats in the loop: undecided
        b = b + 1
    return a.sum() + b.sum()


def test_the_dtype_domain_keeps_a_class_and_leaves_a_changed_carried_value_undecided():
    fn = lowered(float_or_int_in_loop)
    found = dtypes.classes(fn, frozenset({id(fn.params[0])}))
    loop = next(s for s in walk(fn.body) if hasattr(s, "carried"))
    carried = {c.hint: found.get(id(c)) for c in loop.carried if c.hint in ("a", "b")}
    assert carried == {"a": None, "b": dtypes.FLOAT}      # a: integers made floats by the body; b: floats
    made = {s.prim.__name__: found.get(id(s.outs[0])) for s in walk(fn.body) if isinstance(s, Op)
            and getattr(s.prim, "__name__", "") in ("arange", "zeros")}
    assert made == {"arange": dtypes.INT, "zeros": dtypes.FLOAT}


def test_no_analysis_repeats_a_sweep_itself():
    """Every fixed point of s2s/analysis goes through dataflow.fixpoint: no other module there keeps a while loop."""
    found = [p.name for p in (ROOT / "s2s" / "analysis").glob("*.py") if p.name != "dataflow.py"
             and re.search(r"^\s*while\b", p.read_text(), re.M)]
    assert not found, found


class Reached(dataflow.Domain):
    """A toy backward domain: the values the result is computed from (through operations, branches and loops)."""

    backward = True

    def start(self, fn):
        for r in fn.body.results:
            if type(r) is not dataflow.Const:
                self.set(r, True)

    def reach(self, atoms):
        for a in atoms:
            if type(a) is not dataflow.Const and a not in self.facts:
                self.set(a, True)

    def op(self, op):
        if any(o in self.facts for o in op.outs):
            self.reach(op.args)

    def branch(self, out, then, orelse):
        if out in self.facts:
            self.reach([then, orelse])

    def enter(self, loop):
        for c, r, i, o in zip(loop.carried, loop.body.results, loop.inits, loop.outs):
            if o in self.facts or c in self.facts:
                self.reach([c, r, i])

    leave = enter


def reaching(x, n):
    a = x * 2.0
    unused = x * 3.0
    b = 1.0
    c = 0.0
    for i in range(n):
        c = c + b            # b is read here, and only its update reaches back to a: a second sweep
        b = b * a
    return c


def test_a_backward_domain_is_walked_from_the_result_and_swept_again_for_what_a_loop_reads_back():
    fn = lowered(reaching)
    domain = Reached()
    runs = []
    domain.sweep = lambda fn: runs.append(1)
    dataflow.solve(fn, domain)
    names = {v.name for v in domain.facts}
    assert {"c", "c.1", "b", "b.1", "a", "x"} <= names and "unused" not in names
    assert len(runs) == 3       # the first reaches b; the second, b's update (a, x); the third finds nothing new


def test_forward_and_backward_domains_do_not_share_a_walk():
    with pytest.raises(ValueError):
        dataflow.solve(lowered(straight), Constants(), Reached())


# ---------------------------------------------------------------- loops that repeat until nothing changes

# Every loop in the modules that work on the IR (s2s/analysis, ir, transforms, passes, driver) that could repeat
# a sweep, and why it is not an analysis over values on the engine: a `while` loop, a `for _ in range(...)` loop, a
# call of dataflow.fixpoint. (module:function -> how many, why.) A new one fails the test below: a dataflow analysis
# is a Domain of s2s/analysis/dataflow.py; a rewrite repeated until it is stable, or a loop that is no fixed point,
# goes here with its reason.
REWRITE = "a pass rewriting the IR until it is stable (not an analysis)"
NOT_A_FIXPOINT = "no fixed point over the IR: follows a chain, searches a name, walks a stack or the call stack"
LOOPS = {
    "analysis/dataflow.py:fixpoint": (1, "the engine's loop"),
    "analysis/dataflow.py:solve": (1, "the engine's sweeps"),
    "driver/batched.py:_facts": (1, "shape facts a batched call finds missing (by trial runs of NumPy on "
                                   "stand-ins, beyond the engine's shapes), grown again at most 3 times"),
    "driver/callables.py:as_function": (1, NOT_A_FIXPOINT),
    "driver/derivative.py:_pickled_by_value": (1, NOT_A_FIXPOINT),
    "driver/foreign.py:_conversion": (1, NOT_A_FIXPOINT),
    "driver/mutation.py:_returned_by_a_method": (1, NOT_A_FIXPOINT),
    "driver/pipeline.py:annotate": (1, NOT_A_FIXPOINT),
    "driver/pipeline.py:_evict": (1, NOT_A_FIXPOINT),
    "driver/primal.py:_lowered_unfolding_writes": (1, "lowering again without the folds a write contradicts "
                                                      "(a rewrite of the source, not of values)"),
    "driver/primal.py:root_function": (1, NOT_A_FIXPOINT),
    "ir/liveness.py:Liveness.dead_after": (3, NOT_A_FIXPOINT),
    "ir/lower.py:_contains": (1, NOT_A_FIXPOINT),
    "ir/lower.py:Lowerer._lower_function": (1, NOT_A_FIXPOINT),
    "ir/lower.py:Lowerer.lowered_loop": (1, "lowering a loop again while it writes locations it does not carry"),
    "ir/lower_recursion.py:result_kind": (1, "a recursive function's result kind across its calls (between "
                                             "functions; each function's kinds are the engine's Kinds)"),
    "ir/lower_try.py:_scoped_stores": (1, NOT_A_FIXPOINT),
    "ir/lower_try.py:_refuse_effects": (1, NOT_A_FIXPOINT),
    "ir/naming.py:Namer.value": (2, NOT_A_FIXPOINT),
    "ir/object_state.py:ObjectState.rely": (1, NOT_A_FIXPOINT),
    "ir/object_state.py:ObjectState._ancestors": (1, NOT_A_FIXPOINT),
    "ir/object_state.py:ObjectState.lost": (1, NOT_A_FIXPOINT),
    "ir/object_state.py:ObjectState.private": (1, NOT_A_FIXPOINT),
    "passes/accumulate_in_place.py:accumulate_in_place.loop": (1, NOT_A_FIXPOINT),
    "passes/contractions.py:_Rewrite.block": (1, NOT_A_FIXPOINT),
    "passes/fuse_elementwise.py:_Fuse.block": (2, NOT_A_FIXPOINT + " (a block's runs of operations, in order)"),
    "passes/fuse_elementwise.py:fuse_elementwise": (1, NOT_A_FIXPOINT + " (an array written item by item, back "
                                                       "along the chain of loops that carry it)"),
    "passes/dtype_guards.py:guard_writes.written_from": (1, NOT_A_FIXPOINT),
    "passes/dtype_guards.py:guard_writes.origin": (1, NOT_A_FIXPOINT),
    "passes/methods.py:_inline_methods": (1, REWRITE),
    "passes/optimize.py:replace_shape_only_values": (1, REWRITE),
    "passes/optimize.py:sink_pure_operations.block.place": (1, NOT_A_FIXPOINT),
    "passes/optimize.py:simplify.sub": (1, NOT_A_FIXPOINT),
    "passes/optimize.py:_fold_container": (1, NOT_A_FIXPOINT),
    "passes/sequences.py:resolve": (1, REWRITE),
    "passes/specialize.py:_Specializer.sub": (1, NOT_A_FIXPOINT),
    "passes/unroll.py:unroll": (2, REWRITE + "; and a substitution's chains followed to their ends"),
    "passes/optimize.py:_python_container": (1, "a chain of setitems followed back to the container written, "
                                                "once (no fixed point)"),
    "passes/known_sizes.py:unroll_known": (1, REWRITE + ": sizes folded and loops unrolled again while a loop is "
                                              "unrolled (the loops it held have their bounds known then), at most 4 "
                                              "times"),
    "transforms/batching.py:Region.chain": (1, NOT_A_FIXPOINT),
    "transforms/batching.py:_Batcher.read": (1, NOT_A_FIXPOINT),
    "transforms/batching.py:batch_function": (1, "the batching transform started again when a loop's batch "
                                                 "states widen (a rewrite)"),
    "transforms/checkpoint.py:_revolve": (3, NOT_A_FIXPOINT),
    "transforms/elements.py:_chain": (1, NOT_A_FIXPOINT),
    "transforms/recursion.py:_settle": (1, "a recursive function's parameter kinds across its calls (between "
                                          "functions; each function's facts are the engine's)"),
}


def loops_found() -> Counter:
    found: Counter = Counter()
    for path in sorted((ROOT / "s2s").rglob("*.py")):
        relative = path.relative_to(ROOT / "s2s").as_posix()
        if relative.split("/")[0] not in ("analysis", "ir", "transforms", "passes", "driver"):
            continue

        def visit(node, names):
            for child in ast.iter_child_nodes(node):
                if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                    visit(child, names + [child.name])
                    continue
                ranged = isinstance(child, ast.For) and isinstance(child.target, ast.Name) and \
                    child.target.id == "_" and isinstance(child.iter, ast.Call) and \
                    getattr(child.iter.func, "id", "") == "range"
                called = isinstance(child, ast.Call) and \
                    getattr(child.func, "id", getattr(child.func, "attr", "")) == "fixpoint"
                if isinstance(child, ast.While) or ranged or called:
                    found[f"{relative}:{'.'.join(names)}"] += 1
                visit(child, names)
        visit(ast.parse(path.read_text()), [])
    return found


def test_every_loop_that_could_repeat_a_sweep_is_the_engines_or_says_why_not():
    found = loops_found()
    listed = Counter({k: n for k, (n, _) in LOOPS.items()})
    new = {k: n for k, n in found.items() if listed.get(k, 0) < n}
    assert not new, (f"new loops {new}: an analysis that repeats a sweep until nothing changes is a Domain of "
                     "s2s/analysis/dataflow.py (solve); a rewrite repeated until stable, or a loop that is no "
                     "fixed point, goes in LOOPS with its reason")
    gone = {k: n for k, n in listed.items() if found.get(k, 0) < n}
    assert not gone, f"loops no longer there {gone}: take them out of LOOPS"

