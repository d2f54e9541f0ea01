"""Lowering keys its alias tables by id(): a value it drops (a loop lowered again, a comprehension's temporaries)
must stay alive until lowering is done, or a new value would take its id and read as sharing its memory. CI met
this as a spurious "'items' may share memory with 'k_1'" when a method was lowered outside a derivative."""
import gc
import weakref

import numpy as np

from s2s.frontend.parse import parse_function
from s2s.ir import core
from s2s.ir import lower as lowering


class Cell:
    def __init__(self):
        self.h = np.zeros(2)

    def step(self, x):
        self.h = np.tanh(self.h + x)
        return np.sum(self.h)


def in_a_comprehension(x):
    cell = Cell()
    return sum([cell.step(x * k) for k in range(3)])


def loop_written_again(x, n):
    total = 0.0
    ys = []
    for k in range(n):
        ys.append(x * k)
        total = total + ys[-1]
    return total


def test_every_value_made_while_lowering_outlives_the_lowering(monkeypatch):
    made = []
    original = core.Value.__post_init__

    def record(self):
        original(self)
        made.append(weakref.ref(self))

    monkeypatch.setattr(core.Value, "__post_init__", record)
    for fn in (in_a_comprehension, loop_written_again):
        made.clear()
        dead = []
        inner = lowering.Lowerer._lower_function

        def checked(self, inner=inner):
            result = inner(self)
            gc.collect()
            dead.extend(r for r in made if r() is None)
            return result

        monkeypatch.setattr(lowering.Lowerer, "_lower_function", checked)
        lowering.lower(parse_function(fn))
        assert made, "no value was made"
        assert not dead, f"{len(dead)} of {len(made)} values made while lowering {fn.__name__} died before it ended"
