"""Calls of IR functions: what an `Op` calls when the callee is not inlined.

A `Callee` is the primitive of such an `Op`. Two kinds:

- a recursive function of the user's, met again while it is being inlined (lowering: s2s/ir/lower_recursion.py):
  `python` is the user's function (what a call that is not differentiated runs), `function()` its IR;
- a function s2s made from one (s2s/transforms/recursion.py): a recursive function's forward sweep, its reverse
  sweep, its jvp; `python` is None, `fn` its IR, emitted into the derivative's module as a `def` of its own
  (s2s/emit/python.py) and called by its name.

`kinds` are its parameters' kinds (what its IR was made for) and `result_kinds` its results', one per output of the
`Op` that calls it (analysis/activity.py reads them through the registry's result_kind_from).
"""
from __future__ import annotations

from typing import Any, Callable

from s2s.ir.core import Function


class Callee:
    def __init__(self, name: str, fn: Function | None = None, python: Any = None,
                 lower: Callable[[], Function] | None = None):
        self.__name__ = self.name = name
        self.__qualname__ = name
        self.__module__ = "s2s.generated"
        self.fn = fn
        self.python = python
        self._lower = lower
        self.kinds: list | None = None
        self.result_kinds: list | None = None
        self.origin: Any = None          # the user's recursive function it comes from
        self.role = ""                   # "forward", "reverse", "jvp" (for names and messages)
        self.argument_bits: tuple = ()    # what may be complex among its parameters (analysis/complex_values.py)
        self.written: tuple = ()          # the parameters it writes into, returned after its value (a cache)

    def function(self) -> Function:
        """Its IR (a recursive function of the user's is lowered when it is first asked for)."""
        if self.fn is None and self._lower is not None:
            self.fn = self._lower()
        assert self.fn is not None
        return self.fn

    @property
    def generated(self) -> bool:
        """Whether it is emitted as a function of the derivative's module (not the user's own function)."""
        return self.python is None

    def __call__(self, *args: Any) -> Any:
        if self.python is not None:
            return self.python(*args)
        raise TypeError(f"{self.name} is a function s2s emits into a derivative's module; it is called there")

    def __repr__(self) -> str:
        return self.name


def callees_in(fn: Function) -> list[Callee]:
    """The generated functions fn calls, and those they call, in the order a module defines them (callees first)."""
    from s2s.ir.core import Op, walk
    found: dict[int, Callee] = {}
    order: list[Callee] = []

    def visit(function: Function) -> None:
        for stmt in walk(function.body):
            if isinstance(stmt, Op) and isinstance(stmt.prim, Callee) and stmt.prim.generated \
                    and id(stmt.prim) not in found:
                found[id(stmt.prim)] = stmt.prim
                visit(stmt.prim.function())
                order.append(stmt.prim)
    visit(fn)
    return order
