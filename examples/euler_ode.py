"""Explicit Euler for dy/dt = -k y over T steps, in a for loop; the derivative of y(T) with respect to k.

The scheme gives y_T = y0 (1 - k h)^T, so dy_T/dk = -T h y0 (1 - k h)^(T-1): s2s's gradient,
taken through the loop, matches it to rounding.
Run: python examples/euler_ode.py   or   s2s examples/euler_ode.py:euler --wrt k
"""
import s2s


def euler(k, y0, h, steps):
    y = y0
    for _ in range(steps):
        y = y + h * (-k * y)
    return y


if __name__ == "__main__":
    k, y0, h, steps = 0.7, 2.0, 0.01, 500
    gradient = s2s.grad(euler, wrt="k")(k, y0, h, steps)
    analytic = -steps * h * y0 * (1 - k * h) ** (steps - 1)
    print(f"y(T) = {euler(k, y0, h, steps):.12f}")
    print(f"dy(T)/dk: s2s {gradient:.12f}, analytic {analytic:.12f}")
