"""Derivative rules, one module per family of functions (installed as `s2s.rules`).

Each rule is a short Python function that s2s parses and inlines; see
`s2s.rules.registry` for the calling convention. To add a rule, copy a neighbour.
"""
