"""Generated names, in one place.

IR names are unique per function: the user's name, then `name.1`, `name.2`;
temporaries `v1`, `v2` (the seed's Wengert list). Derived hints give the
names the emitted Python uses: the adjoint of `x` is `dx`, its tangent
`x_dot`, the stack that saves it across loop iterations `x_stack`.
"""
from __future__ import annotations

from s2s.ir.core import Value

TRIP_COUNT = "n_iter"


def base(v: Value) -> str:
    return v.hint or v.name.replace(".", "_")


def adjoint_hint(v: Value) -> str:
    return "d" + base(v)


def tangent_hint(v: Value) -> str:
    return base(v) + "_dot"


def stack_hint(v: Value) -> str:
    return (v.hint or "t") + "_stack"


class Namer:
    """Hands out unique IR names within one function."""

    def __init__(self) -> None:
        self.used: set[str] = set()
        self.temps = 0
        self.suffix: dict[str, int] = {}      # hint -> the last k tried for `hint.k`: each name is made once

    def reserve(self, name: str) -> None:
        self.used.add(name)

    def value(self, hint: str = "") -> Value:
        if not hint:
            while True:
                self.temps += 1
                name = f"v{self.temps}"
                if name not in self.used:
                    break
        else:
            name, k = hint, self.suffix.get(hint, 0)
            if k:
                name = f"{hint}.{k}"
            while name in self.used:
                k += 1
                name = f"{hint}.{k}"
            self.suffix[hint] = k
        self.used.add(name)
        return Value(name, hint)
