"""The dataflow engine (s2s/analysis/dataflow.py, issue 30 item 2, partial): one fixed point over If/While/For
with the analyses as domains keyed by Value objects; s2s/analysis/dtypes.py's classes are its first domain."""
import re
from pathlib import Path

import numpy as np

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
