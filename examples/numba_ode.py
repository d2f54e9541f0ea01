"""The gradient of a Numba ODE integrator with an adaptive step, itself compiled by Numba.

`adaptive_heun` integrates dy/dt = -k*y + sin(t) with Heun's method and an embedded Euler error
estimate: its `while` loop runs until t reaches t_end, with a step that grows or shrinks to keep the
local error under tol, so its trip count is known only at run time (JAX cannot reverse such a loop).
s2s reads `adaptive_heun.py_func`, inlines the @njit function `rhs`, and compiles the gradient with
numba.njit(fastmath=True), the options of the function it differentiates.

    python examples/numba_ode.py
"""
import math
import time

import numba

import s2s


@numba.njit
def rhs(t, y, k):
    return -k * y + math.sin(t)


@numba.njit(fastmath=True)
def adaptive_heun(k, y0, t_end, tol):
    t = 0.0
    y = y0
    h = 0.01
    while t < t_end:
        if t + h > t_end:
            h = t_end - t
        f0 = rhs(t, y, k)
        euler = y + h * f0
        f1 = rhs(t + h, euler, k)
        heun = y + 0.5 * h * (f0 + f1)
        err = abs(heun - euler) + 1e-12
        if err <= tol:                 # accept the step
            t = t + h
            y = heun
        h = h * min(2.0, max(0.2, 0.9 * math.sqrt(tol / err)))
    return y


def main() -> None:
    args = (0.7, 1.5, 5.0, 1e-6)
    gradient = s2s.grad(adaptive_heun, wrt=(0, 1))        # an @njit function: the Numba backend
    start = time.perf_counter()
    dk, dy0 = gradient(*args)
    compile_time = time.perf_counter() - start
    eps = 1e-6
    fd_k = (adaptive_heun(0.7 + eps, 1.5, 5.0, 1e-6) - adaptive_heun(0.7 - eps, 1.5, 5.0, 1e-6)) / (2 * eps)
    fd_y0 = (adaptive_heun(0.7, 1.5 + eps, 5.0, 1e-6) - adaptive_heun(0.7, 1.5 - eps, 5.0, 1e-6)) / (2 * eps)
    print(f"y(5) = {adaptive_heun(*args):.10f}")
    print(f"dy/dk  = {dk:.10f}   central differences {fd_k:.10f}")
    print(f"dy/dy0 = {dy0:.10f}   central differences {fd_y0:.10f}")
    runs = 200
    start = time.perf_counter()
    for _ in range(runs):
        gradient(*args)
    gradient_time = (time.perf_counter() - start) / runs
    start = time.perf_counter()
    for _ in range(runs):
        adaptive_heun(*args)
    primal_time = (time.perf_counter() - start) / runs
    print(f"gradient {gradient_time * 1e6:.1f} µs, the @njit function {primal_time * 1e6:.1f} µs "
          f"(gradient compiled in {compile_time:.2f} s)")


if __name__ == "__main__":
    main()
