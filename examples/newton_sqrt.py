"""Newton's iteration for sqrt(a), in a while loop that stops on a tolerance.

The derivative with respect to a is computed through the loop itself (the reverse
sweep runs the iterations backwards) and matches 1 / (2 sqrt(a)).
Run: python examples/newton_sqrt.py   or   s2s examples/newton_sqrt.py:newton_sqrt
"""
import math

import s2s


def newton_sqrt(a):
    x = a
    while abs(x * x - a) > 1e-12 * a:
        x = 0.5 * (x + a / x)
    return x


if __name__ == "__main__":
    d_sqrt = s2s.grad(newton_sqrt)
    for a in (0.25, 2.0, 9.0, 1e4):
        print(f"a = {a:<8g} sqrt = {newton_sqrt(a):.12f}  d/da = {d_sqrt(a):.12f}  "
              f"1/(2 sqrt a) = {1 / (2 * math.sqrt(a)):.12f}")
