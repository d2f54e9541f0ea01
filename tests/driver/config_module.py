"""A module whose data a test changes between two calls (see test_rebinding.py)."""
scale = 2.0


class Config:
    scale = 3.0
