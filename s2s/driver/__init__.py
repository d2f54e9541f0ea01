"""The driver: from a function and its arguments to compiled, cached derivative code (pipeline, dispatch, compile, checking mode)."""
