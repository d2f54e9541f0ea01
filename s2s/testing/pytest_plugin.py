"""The s2s pytest plugin, registered through the `pytest11` entry point (`-p no:s2s` turns it off).

It gives
- the `gradcheck` fixture: `gradcheck(f, (x, y), order=2)` is `s2s.testing.check_grads`;
- the `s2s_rules` marker: a test taking `s2s_rule` runs once per registered rule and sample point
  (`@pytest.mark.s2s_rules(builtin=False, modules=("mypkg",), order=1)`), and calls `s2s_rule.check()`;
- the `--s2s-rules` option: adds those checks to the session without any test written for them.
A failing check reports the table of worst coordinates, without s2s's frames in the traceback.
"""
from __future__ import annotations

from typing import Any, Callable

import pytest

from s2s import testing


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("s2s", "s2s derivative checks")
    group.addoption("--s2s-rules", action="store_true", default=False,
                    help="check every registered s2s derivative rule at its sample points "
                         "(declared with s2s.testing.sample_points), in every mode it supports")
    group.addoption("--s2s-rules-builtin", action="store_true", default=False,
                    help="with --s2s-rules: include s2s's own rules that have sample points")


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "s2s_rules(builtin=False, modules=None, order=1): parametrize the test's `s2s_rule` argument "
                   "over every registered s2s rule and sample point; the test calls s2s_rule.check()")


@pytest.fixture
def gradcheck() -> Callable[..., None]:
    """s2s.testing.check_grads: `gradcheck(f, args, order=2, modes=("forward", "reverse"), wrt=None)`."""
    return testing.check_grads


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    marker = metafunc.definition.get_closest_marker("s2s_rules")
    if marker is None:
        return
    if "s2s_rule" not in metafunc.fixturenames:
        raise pytest.UsageError(f"{metafunc.function.__name__}: @pytest.mark.s2s_rules needs an argument s2s_rule")
    order = marker.kwargs.get("order", 1)
    cases = testing.rule_cases(builtin=marker.kwargs.get("builtin", False), modules=marker.kwargs.get("modules"))
    metafunc.parametrize("s2s_rule", [_Bound(c, order) for c in cases], ids=[c.id for c in cases])


class _Bound:
    """A RuleCase whose check() uses the marker's order."""

    def __init__(self, case: testing.RuleCase, order: int):
        self.case, self.order = case, order

    def __getattr__(self, name: str) -> Any:
        return getattr(self.case, name)

    def check(self, **options: Any) -> None:
        __tracebackhide__ = True
        self.case.check(order=options.pop("order", self.order), **options)

    def __repr__(self) -> str:
        return f"<s2s rule {self.case.id}>"


class RuleItem(pytest.Item):
    """One rule at one sample point, added by --s2s-rules."""

    def __init__(self, *, case: testing.RuleCase, **kwargs: Any):
        super().__init__(**kwargs)
        self.case = case

    def runtest(self) -> None:
        self.case.check()

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> str:
        if isinstance(excinfo.value, AssertionError):
            return str(excinfo.value)
        return super().repr_failure(excinfo)

    def reportinfo(self) -> tuple[Any, int | None, str]:
        return self.path, None, f"s2s rule {self.case.id}"


def pytest_collection_modifyitems(session: pytest.Session, config: pytest.Config, items: list) -> None:
    if not config.getoption("--s2s-rules"):
        return
    for case in testing.rule_cases(builtin=config.getoption("--s2s-rules-builtin")):
        items.append(RuleItem.from_parent(session, name=f"s2s_rule[{case.id}]", case=case))
