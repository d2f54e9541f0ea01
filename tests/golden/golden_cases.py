"""Representative functions whose generated derivatives are kept as golden files (tests/golden/).

They live in a module of their own so that their line numbers, quoted in the generated comments,
change only when they do.
"""
import math

import numpy as np


def straight_line(x, y):
    return x ** y - y / x


def branch(x):
    if x < -1.0:
        y = -x * x
    elif x < 1.0:
        y = x * 3.0
    else:
        y = math.exp(x)
    return y


def while_loop(x):
    y = x
    while y < 100.0:
        y = y * 2.0 + x
    return y


def nested_loops_with_break(x):
    s = 0.0
    for i in range(4):
        for j in range(5):
            if j == 1:
                continue
            if i * j > 6:
                break
            s = s + x ** (i + 1) * j
    return s


def broadcasting(W, b, x):
    return np.sum(np.tanh(W @ x + b) ** 2)


def helper(a, b=3.0):
    return a * b + math.sin(a)


def helper_call(x, y):
    return helper(x) + helper(b=y, a=x * y)


def power_and_branch(x, n):
    y = x
    for _ in range(n):
        if y > 2.0:
            y = y * 0.5
        else:
            y = y * x
    return y


def rnn(Wh, Wx, b, xs, h0):
    h = h0
    for x in xs:
        h = np.tanh(Wh @ h + Wx @ x + b)
    return np.sum(h * h)
