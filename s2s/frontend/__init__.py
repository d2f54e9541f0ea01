"""The front end: a function object to its checked, desugared gast tree."""
