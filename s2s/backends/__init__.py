"""Back ends other than NumPy's Python: Numba."""
