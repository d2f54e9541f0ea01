"""Sample points for derivative rules, and the table of every registered rule.

    @s2s.testing.sample_points((0.5,), (3.0,))     # re-exported by s2s.testing
    @s2s.adjoint(scipy.special.gammaln)
    def gammaln_adjoint(g, ans, x): ...

`rule_cases()` gives a `RuleCase` per registered rule and sample point, whose `check()` runs
`s2s.testing.check_grads` on a small function calling the rule's function there, in every mode the
rule supports (the pytest plugin parametrizes a test over them); `rule_table()` lists every
registered rule with its module and modes (`s2s rules`, the README's catalogue).
"""
from __future__ import annotations

import itertools
import linecache
import math
import operator
import sys
from dataclasses import dataclass
from typing import Any, Callable, Sequence

import numpy as np

_SAMPLE_POINTS: dict[Any, list] = {}
_counter = itertools.count()


def _key(prim: Any) -> Any:
    from s2s.rules.registry import _key as registry_key
    return registry_key(prim)


def sample_points(*items: Any) -> Any:
    """Declare the points at which a derivative rule is checked.

    Either `sample_points(prim, point, ...)` (for any function with a registered rule), or as a
    decorator over the rule: `@sample_points(point, ...)` above `@s2s.adjoint(prim)`. A point is a
    tuple of arguments, `(0.5, np.ones(3))`, or `("expression", arguments)` where the expression
    uses x, y, z for the arguments (for a call that is not differentiable in every argument:
    `("np.clip(x, -1.0, 1.0)", (a,))`); it can name np, math, operator, the function's top-level
    module and the function itself by its __name__. Returns the prim (or the rule, as a decorator).
    """
    if items and not isinstance(items[0], tuple):
        prim, points = items[0], items[1:]
        _SAMPLE_POINTS.setdefault(_key(prim), []).extend(_checked_points(prim, points))
        return prim

    def declare(rule: Callable) -> Callable:
        from s2s.rules import registry
        registry._ensure_loaded()
        prims = [p for table in (registry._ADJOINTS, registry._TANGENTS) for p, r in table.items() if r is rule]
        if not prims:
            raise ValueError(f"@sample_points: {getattr(rule, '__qualname__', rule)!r} is not a registered rule; "
                             f"put @sample_points above @s2s.adjoint(...) or @s2s.tangent(...)")
        for prim in dict.fromkeys(prims):
            sample_points(prim, *items)
        return rule
    return declare


def _checked_points(prim: Any, points: Sequence[Any]) -> list:
    for point in points:
        if not isinstance(point, tuple) or (point and isinstance(point[0], str)
                                            and (len(point) != 2 or not isinstance(point[1], tuple))):
            raise ValueError(f"sample point {point!r} for {getattr(prim, '__name__', prim)}: expected a tuple of "
                             f"arguments or (\"expression\", (arguments...))")
    return list(points)


def declared_points(prim: Any) -> list:
    return list(_SAMPLE_POINTS.get(_key(prim), []))


def rule_modes(prim: Any) -> tuple[str, ...]:
    """The modes s2s can differentiate prim in: ("reverse", "forward"), one of them, or () when
    prim is declared non-differentiable."""
    from s2s.rules import registry
    registry._ensure_loaded()
    key = _key(prim)
    modes = []
    if key in registry._ADJOINTS:
        modes.append("reverse")
    from s2s.transforms.forward import _STRUCTURAL  # containers and writes: the same operation on the tangents
    if key in registry._TANGENTS or key in registry._LINEAR or key in _STRUCTURAL or (
            key in registry._ADJOINTS and registry.is_elementwise(prim)):
        modes.append("forward")
    return tuple(modes)


@dataclass
class RuleCase:
    """One registered rule at one sample point (point is None when the rule declares none)."""

    prim: Any
    point: Any
    number: int
    builtin: bool

    @property
    def name(self) -> str:
        return display_name(self.prim)

    @property
    def id(self) -> str:
        return f"{self.name}[{self.number}]" if self.point is not None else f"{self.name}[no sample points]"

    @property
    def modes(self) -> tuple[str, ...]:
        return rule_modes(self.prim)

    def function(self) -> tuple[Callable, tuple]:
        """A scalar function of the point's arguments that calls prim (weighted and summed), and the point."""
        return _function_for(self.prim, self.point)

    def check(self, order: int = 1, **options: Any) -> None:
        """check_grads at this point, in every mode the rule supports."""
        __tracebackhide__ = True
        from s2s.testing.checks import GradCheckError, check_grads
        if self.point is None:
            raise GradCheckError(f"{self.name} has a derivative rule but no sample points: declare them with "
                                 f"s2s.testing.sample_points({self.name.rsplit('.', 1)[-1]}, (x, ...), ...)", [])
        f, point = self.function()
        f.__qualname__ = f"{self.name} at sample point {self.number}"
        check_grads(f, point, order=order, modes=self.modes, **options)


def _function_for(prim: Any, point: Any) -> tuple[Callable, tuple]:
    expression, args = (point[0], point[1]) if point and isinstance(point[0], str) else (None, point)
    names = ["x", "y", "z", "w"][:len(args)]
    if expression is None:
        expression = f"PRIM({', '.join(names)})"
    root = (getattr(prim, "__module__", None) or "").split(".")[0]
    namespace = {"np": np, "numpy": np, "math": math, "operator": operator, "PRIM": prim}
    if root and root in sys.modules:
        namespace[root] = sys.modules[root]
    if getattr(prim, "__name__", None):
        namespace.setdefault(prim.__name__, prim)
    *statements, expression = expression.split("\n")
    prelude = "".join(f"    {line}\n" for line in statements)
    probe = _define(f"def probe({', '.join(names)}):\n{prelude}    return {expression}\n", namespace)
    shape = np.shape(probe(*args))
    weights = np.random.default_rng(len(shape)).uniform(0.5, 1.5, size=shape)
    namespace["WEIGHTS"] = weights if shape else float(weights)
    body = f"np.sum(({expression}) * WEIGHTS)" if shape else f"({expression}) * WEIGHTS"
    return _define(f"def f({', '.join(names)}):\n{prelude}    return {body}\n", namespace), tuple(args)


def _define(source: str, namespace: dict) -> Callable:
    """A function defined from source text that s2s can read back (registered in linecache)."""
    filename = f"<s2s-sample-{next(_counter)}>"
    linecache.cache[filename] = (len(source), None, source.splitlines(keepends=True), filename)
    scope = dict(namespace)
    exec(compile(source, filename, "exec"), scope)
    return scope[source.split("def ", 1)[1].split("(", 1)[0]]


def rule_cases(builtin: bool = False, modules: Sequence[str] | None = None) -> list[RuleCase]:
    """Every registered rule (adjoint or tangent) with a case per declared sample point.

    Rules of s2s's own rules/ are included only with builtin=True (the project's tests check them
    from their DOMAINS table), and then only when they have points. A user's rule without points
    gives one case whose check fails, saying how to declare them. modules keeps the functions whose
    __module__ starts with one of the given prefixes."""
    from s2s.rules import registry
    registry._ensure_loaded()
    cases: list[RuleCase] = []
    seen: set = set()
    for table in (registry._ADJOINTS, registry._TANGENTS):
        for prim, rule in table.items():
            if isinstance(prim, tuple) or _key(prim) in seen:
                continue
            seen.add(_key(prim))
            is_builtin = rule.__module__.startswith("s2s.rules.") or rule.__module__.startswith("s2s.")
            module = getattr(prim, "__module__", None) or ""
            if (is_builtin and not builtin) or (modules and not any(module.startswith(m) for m in modules)):
                continue
            points = declared_points(prim)
            if not points and is_builtin:
                continue
            cases += [RuleCase(prim, p, n, is_builtin) for n, p in enumerate(points)] or \
                [RuleCase(prim, None, 0, is_builtin)]
    return cases


def display_name(prim: Any) -> str:
    """A function's full name: `operator.abs` and `abs` apart, `numpy.add.accumulate` for a ufunc's method."""
    from s2s.ir.core import prim_name
    name = getattr(prim, "__name__", None)
    owner = getattr(prim, "__self__", None)
    if isinstance(owner, np.ufunc) and name:
        return f"numpy.{owner.__name__}.{name}"
    if isinstance(prim, np.ufunc) and getattr(np, prim.__name__, None) is not prim:   # SciPy's ufuncs
        special = sys.modules.get("scipy.special")
        if special is not None and getattr(special, prim.__name__, None) is prim:
            return f"scipy.special.{prim.__name__}"
    if owner is not None and name and not isinstance(owner, type(np)):   # a method of an object (scipy.stats.norm)
        public = ".".join(itertools.takewhile(lambda part: not part.startswith("_"),
                                              type(owner).__module__.split(".")))
        kind = getattr(owner, "name", None) or type(owner).__name__.removesuffix("_gen")
        return f"{public}.{kind}.{name}"
    if name and getattr(operator, name, None) is prim:
        return f"operator.{name}"
    module = getattr(prim, "__module__", None) or ""
    if name and "._" in module:          # scipy.special._basic.polygamma is scipy.special.polygamma
        public = ".".join(itertools.takewhile(lambda part: not part.startswith("_"), module.split(".")))
        return f"{public}.{name}"
    return prim_name(prim)


def rule_table() -> list[tuple[str, str, str]]:
    """(function, module of its rule, modes) for every function with a registered rule or declaration,
    sorted by module then function. Modes: "reverse, forward", "reverse", "forward", or
    "nondifferentiable"; a function declared linear or nondifferentiable, without a rule of its own, has
    the module "(declared)"."""
    from s2s.rules import registry
    registry._ensure_loaded()
    rows = {}
    for table in (registry._ADJOINTS, registry._TANGENTS, registry._LINEAR, registry._NONDIFFERENTIABLE):
        for prim in table:
            if isinstance(prim, tuple) or id(prim) in rows:
                continue
            rule = registry._ADJOINTS.get(prim) or registry._TANGENTS.get(prim)
            module = rule.__module__ if rule is not None else "(declared)"
            modes = ", ".join(rule_modes(prim)) or "nondifferentiable"
            rows[id(prim)] = (display_name(prim), module, modes)
    unique = {(name, module): (name, module, modes) for name, module, modes in rows.values()}   # np.add.reduce
    return sorted(unique.values(), key=lambda r: (r[1].startswith("("), r[1], r[0]))
