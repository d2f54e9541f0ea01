"""One record per primitive (rules/record.py, rules/registry.py): the decorators fill it, `declare` states facts,
`record` finds it by the object itself, and a function nobody declared is described by what it is."""
import math

import numpy as np
import pytest

from s2s.rules import registry
from s2s.rules.record import FACTS, Record


def test_the_decorators_fill_one_record():
    rec = registry.record(np.sum)
    assert isinstance(rec, Record) and rec.prim is np.sum
    assert rec.adjoint is registry.find_adjoint(np.sum) is not None
    assert rec.linear == registry.linear_argnums(np.sum) == (0,)
    assert registry.record(math.sin).elementwise and registry.record(math.floor).nondifferentiable


def test_a_function_nobody_declared_is_described_by_what_it_is():
    assert registry.record(np.frexp).elementwise           # a ufunc
    assert registry.record(math.gamma).scalar == "always"  # math gives Python numbers
    assert registry.record(np.matmul).elementwise is False  # a generalized ufunc broadcasts its loop dimensions only


def test_declare_states_facts_and_refuses_unknown_ones():
    def f(x):
        return x

    registry.declare(f, holomorphic=True, masking=True)
    assert registry.record(f).holomorphic and registry.record(f).masking
    assert {"holomorphic", "masking"} <= registry.record(f).declared
    with pytest.raises(TypeError, match="no such fact"):
        registry.declare(f, holomorphic_ish=True)
    assert "batch" in FACTS and "numba" in FACTS


def test_an_unhashable_primitive_is_found_by_its_id():
    class Unhashable:
        __hash__ = None

        def __call__(self, x):
            return x

    prim = Unhashable()
    registry.nondifferentiable(prim)
    assert registry.record(prim).nondifferentiable and registry.is_nondifferentiable(prim)
    assert not registry.record(Unhashable()).nondifferentiable


def test_the_old_tables_read_and_write_the_records():
    """registry._ADJOINTS and its siblings are views of one field of every record: tests save and restore them."""
    def f(x):
        return 2.0 * x

    saved = dict(registry._ADJOINTS)
    registry.adjoint(f)(lambda g, ans, x: 2.0 * g)
    assert f in registry._ADJOINTS and registry.find_adjoint(f) is registry._ADJOINTS[f]
    registry._ADJOINTS.clear()
    assert registry.find_adjoint(np.sin) is None
    registry._ADJOINTS.update(saved)
    assert registry.find_adjoint(np.sin) is not None and registry.find_adjoint(f) is None
