"""Checking derivatives: `check_grads` for test suites (checks.py), `s2s.check_grad` (gradcheck.py), sample points
and the table of every registered rule (rulecheck.py), and the pytest plugin (pytest_plugin.py)."""
from s2s.testing.checks import GradCheckError, Tolerance, check_grads, tolerance_for
from s2s.testing.rulecheck import RuleCase, rule_cases, rule_modes, rule_table, sample_points

__all__ = ["check_grads", "GradCheckError", "Tolerance", "tolerance_for", "sample_points", "rule_cases",
           "RuleCase", "rule_modes", "rule_table"]
