"""Functions at the top level of a module, for tests/driver/test_pickling.py (pickled by reference, as a process pool
and Dask send them)."""
import numpy as np

import s2s


def loss(w, x):
    return np.sum(np.tanh(x @ w) ** 2)


def cube(x):
    return x ** 3


@s2s.grad
def cube_grad(x):          # the module's name holds the derivative itself
    return x ** 3


class Model:
    def __init__(self, scale):
        self.scale = scale

    def energy(self, x):
        return self.scale * np.sum(x ** 2)
