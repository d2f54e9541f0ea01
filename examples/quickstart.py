"""The seed example: f(x1, x2) = ln(x1) + x1*x2 - sin(x2), its value and gradient at (2, 5).

Run it with `python examples/quickstart.py`, or print the derivative with `s2s examples/quickstart.py:f`.
"""
import math

import s2s


def f(x1, x2):
    return math.log(x1) + x1 * x2 - math.sin(x2)


if __name__ == "__main__":
    value, gradient = s2s.value_and_grad(f, wrt=(0, 1))(2.0, 5.0)
    print(f"f(2, 5)  = {value:.6f}")
    print(f"gradient = ({gradient[0]:.6f}, {gradient[1]:.6f})")
    print()
    print(s2s.source(f, wrt=(0, 1)))
