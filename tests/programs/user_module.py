"""A module of the user's, imported by the functions in test_programs.py."""
import numpy as np

SCALE = 2.0


def layer(x, W, b, activation=np.tanh):
    return activation(x @ W + b) * SCALE


def scaled_square(v, factor=1.0):
    return factor * v * v
