"""The pytest plugin (s2s.testing.pytest_plugin), run in a pytest session inside the test with pytester."""
import pytest

from s2s.rules import registry
from s2s.testing import rulecheck

pytest_plugins = ["pytester"]


@pytest.fixture(autouse=True)
def _registry_restored():
    """The inner sessions see s2s's own rules only (not those other test modules registered), and the rules
    and sample points they register are removed afterwards."""
    registry._ensure_loaded()
    tables = [registry._ADJOINTS, registry._TANGENTS, registry._BROADCASTING, registry._LINEAR,
              registry._NONDIFFERENTIABLE, rulecheck._SAMPLE_POINTS]
    saved = [dict(t) for t in tables]
    for table in (registry._ADJOINTS, registry._TANGENTS):
        for prim, rule in list(table.items()):
            if not rule.__module__.startswith("s2s."):
                del table[prim]
    rulecheck._SAMPLE_POINTS.clear()
    yield
    for table, copy in zip(tables, saved):
        table.clear()
        table.update(copy)

USER_RULES = '''
import math
import numpy as np
import pytest
import s2s
from s2s.testing import sample_points


def cube(x):
    return x * x * x


@sample_points((0.5,), (np.array([1.0, -2.0]),))
@s2s.adjoint(cube)
def cube_adjoint(g, ans, x):
    return g * 3.0 * x * x


s2s.elementwise(cube)


def wrong(x):
    return np.sin(x)


@s2s.adjoint(wrong)
def wrong_adjoint(g, ans, x):          # the derivative of sin is cos: this rule is wrong
    return g * np.sin(x)


sample_points(wrong, (0.3,), ("wrong(x) * y", (0.7, 2.0)))
'''


def test_gradcheck_fixture_passes_and_fails_with_a_table(pytester):
    pytester.makepyfile(s2s_plugin_user_rules=USER_RULES)
    pytester.makepyfile(test_s2s_plugin_user='''
import math
import numpy as np
from s2s_plugin_user_rules import wrong


def f(x1, x2):
    return math.log(x1) + x1 * x2 - math.sin(x2)


def loss(W, x):
    return np.sum(np.tanh(W @ x) ** 2)


def broken(x):
    return np.sum(x * x) + wrong(x[0])


def test_good(gradcheck):
    gradcheck(f, (2.0, 5.0))
    gradcheck(loss, (np.ones((2, 3)) * 0.1, np.arange(3.0)), order=2)


def test_bad(gradcheck):
    gradcheck(broken, (np.array([0.3, 0.4, 0.5]),), order=1)
''')
    result = pytester.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines([
        "*gradcheck(broken, *",
        "E * check_grads(broken): the reverse-mode gradient against central differences: 1 of 3 coordinates differ*",
        "E *argument*index*s2s*reference*rel. error",
        "E *x*(0,)*0.895*1.555*",
        "test_s2s_plugin_user.py:*: GradCheckError",
    ])
    assert "s2s/testing/checks.py" not in result.stdout.str()      # the traceback stops at the user's line


def test_marker_checks_every_user_rule_at_its_points(pytester):
    pytester.makepyfile(s2s_plugin_user_rules=USER_RULES)
    pytester.makepyfile(test_s2s_plugin_rules='''
import pytest
import s2s_plugin_user_rules


@pytest.mark.s2s_rules
def test_rule(s2s_rule):
    s2s_rule.check()
''')
    result = pytester.runpytest("-p", "no:cacheprovider", "-v")
    result.assert_outcomes(passed=2, failed=2)
    result.stdout.fnmatch_lines_random([
        "*test_rule?s2s_plugin_user_rules.cube?0?? PASSED*",
        "*test_rule?s2s_plugin_user_rules.cube?1?? PASSED*",
        "*test_rule?s2s_plugin_user_rules.wrong?0?? FAILED*",
        "*test_rule?s2s_plugin_user_rules.wrong?1?? FAILED*",
        "E *check_grads(s2s_plugin_user_rules.wrong at sample point 1): the reverse-mode gradient*",
    ])


def test_a_rule_without_sample_points_fails_saying_how_to_declare_them(pytester):
    pytester.makepyfile(test_s2s_plugin_rules='''
import pytest
import s2s


def shifted(x):
    return x + 1.0


@s2s.adjoint(shifted)
def shifted_adjoint(g, ans, x):
    return g


@pytest.mark.s2s_rules(order=2)
def test_rule(s2s_rule):
    s2s_rule.check()
''')
    result = pytester.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*test_s2s_plugin_rules.shifted has a derivative rule but no sample points: "
                                 "declare them with s2s.testing.sample_points(shifted, *"])


def test_option_adds_the_rule_checks_without_a_test(pytester):
    pytester.makepyfile(s2s_plugin_user_rules=USER_RULES)
    pytester.makepyfile(test_s2s_plugin_nothing='''
import s2s_plugin_user_rules


def test_import():
    assert s2s_plugin_user_rules.cube(2.0) == 8.0
''')
    result = pytester.runpytest("-p", "no:cacheprovider", "--s2s-rules")
    result.assert_outcomes(passed=3, failed=2)
    result.stdout.fnmatch_lines_random(["*s2s rule s2s_plugin_user_rules.wrong[[]0[]]*",
                                        "check_grads(s2s_plugin_user_rules.wrong at sample point 0): *"])
    plain = pytester.runpytest("-p", "no:cacheprovider")
    plain.assert_outcomes(passed=1)


def test_builtin_rules_with_points_are_checked_on_request(pytester):
    pytester.makepyfile(test_s2s_plugin_builtin='''
import math
import numpy as np
import pytest
from s2s.testing import sample_points

sample_points(math.atan2, (0.5, 1.2), (-0.5, -2.0))
sample_points(np.clip, ("np.clip(x, -0.5, 0.5)", (np.array([-1.0, 0.2, 0.4, 2.0]),)))


@pytest.mark.s2s_rules(builtin=True, order=2)
def test_rule(s2s_rule):
    s2s_rule.check()
''')
    result = pytester.runpytest("-p", "no:cacheprovider", "-v")
    result.assert_outcomes(passed=3)
    result.stdout.fnmatch_lines_random(["*math.atan2?1?? PASSED*", "*numpy.clip?0?? PASSED*"])


def test_no_s2s_turns_the_plugin_off(pytester):
    pytester.makepyfile(test_s2s_plugin_user='''
def test_uses_fixture(gradcheck):
    pass
''')
    off = pytester.runpytest("-p", "no:cacheprovider", "-p", "no:s2s")
    off.assert_outcomes(errors=1)
    off.stdout.fnmatch_lines(["*fixture 'gradcheck' not found*"])
    unknown = pytester.runpytest("-p", "no:cacheprovider", "-p", "no:s2s", "--s2s-rules")
    assert unknown.ret != 0
    unknown.stderr.fnmatch_lines(["*unrecognized arguments: --s2s-rules*"])
