"""What is known about each value of an IR function: activity, kinds, dtypes, shapes and sizes, complex values, globals, objects a call may change."""
