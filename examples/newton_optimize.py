"""Newton's method on the Rosenbrock function with s2s.hessian and s2s.grad.

From (-1.2, 1.0) it reaches the minimum (1, 1) in well under 30 iterations; the Hessian
is computed forward-over-reverse from the function's own source.
Run: python examples/newton_optimize.py   or   s2s examples/newton_optimize.py:rosenbrock --order 2 --arrays x
"""
import numpy as np

import s2s


def rosenbrock(x):
    return np.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1 - x[:-1]) ** 2)


def newton(x, iterations=30, tolerance=1e-10):
    gradient, hessian = s2s.grad(rosenbrock), s2s.hessian(rosenbrock)
    for step in range(1, iterations + 1):
        g = gradient(x)
        x = x - np.linalg.solve(hessian(x), g)
        if np.linalg.norm(g) < tolerance:
            return x, step
    return x, iterations


if __name__ == "__main__":
    x, steps = newton(np.array([-1.2, 1.0]))
    print(f"minimum {x} after {steps} iterations, f = {rosenbrock(x):.3e}")
