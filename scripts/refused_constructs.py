"""Which Python constructs s2s refuses, measured: each is differentiated in a function of its own, in every mode.

    python scripts/refused_constructs.py            # a table: construct, what s2s does, the error's first line
    python scripts/refused_constructs.py --row      # the README's row of refused constructs (What is supported)

A construct is "refused" when every mode raises an S2SError when the derivative is made or run; "differentiated"
when every mode gives the gradient central differences give; anything else (a wrong number, another exception) is
reported as such, and makes the script exit with 1.
"""
from __future__ import annotations

import argparse
import importlib.util
import math
import os
import sys
import tempfile
import textwrap

import numpy as np

import s2s

# (name in the README, source of f(x) using it): f takes a float and returns a float
CONSTRUCTS = [
    ("`try`", """
        def f(x):
            try:
                y = x * x
            except ValueError:
                y = x
            return y
    """),
    ("generators", """
        def f(x):
            yield x * x
    """),
    ("generators", """
        def squares(x):
            yield x * x
            yield x

        def f(x):
            return sum(squares(x))
    """),
    ("`async`", """
        async def f(x):
            return x * x
    """),
    ("`global`/`nonlocal`", """
        G = 1.0

        def f(x):
            global G
            G = x
            return x * G
    """),
    ("`global`/`nonlocal`", """
        def f(x):
            y = 1.0

            def g():
                nonlocal y
                y = x * x
            g()
            return y
    """),
    ("`del`", """
        def f(x):
            y = x * x
            z = y
            del y
            return z
    """),
    ("nested `class`", """
        def f(x):
            class A:
                pass
            return x * x
    """),
    ("`eval`/`exec`", """
        def f(x):
            return eval("x * x")
    """),
    ("`eval`/`exec`", """
        def f(x):
            scope = {"x": x}
            exec("y = x * x", scope)
            return scope["y"]
    """),
    ("set comprehensions", """
        def f(x):
            return sum({x * k for k in (1.0, 2.0)})
    """),
    ("dict comprehensions", """
        def f(x):
            d = {k: x * k for k in (1.0, 2.0)}
            return d[1.0] + d[2.0]
    """),
    ("`match`", """
        def f(x):
            match 1:
                case 1:
                    return x * x
            return x
    """),
    ("walrus", """
        def f(x):
            if (y := x * x) > 0:
                return y
            return x
    """),
    ("bare `raise`", """
        def f(x):
            if x > 10.0:
                raise
            return x * x
    """),
    ("star-arguments of unknown length", """
        def g(*ps):
            return ps[0] * ps[-1]

        def f(x, n=2):
            return g(*([x] * n))
    """),
    ("`*args` in the differentiated function's own signature without `functools.wraps` (differentiate "
     "`lambda a, b: g(a, b)`)", """
        def f(*xs):
            return xs[0] * xs[0]
    """),
    ("attribute writes", """
        class Box:
            pass

        BOX = Box()

        def f(x):
            BOX.v = x * x
            return BOX.v
    """),
    ("generators", """
        def f(x):
            yield from (x, x)
    """),
    ("a `lambda` whose default reads an active value", """
        def f(x):
            g = lambda y, c=x: y * c
            return g(x)
    """),
    ("`with` over a context manager given an active value", """
        import contextlib

        @contextlib.contextmanager
        def scaled(v):
            yield v * 2.0

        def f(x):
            with scaled(x) as y:
                return y * x
    """),
    ("string formatting and `print`", """
        def f(x):
            label = f"{x:.2f}"
            return x * x if label else x
    """),
    ("`assert`", """
        def f(x):
            assert x > -10.0, "too small"
            return x * x
    """),
    ("a loop's `else`", """
        def f(x):
            for k in range(3):
                x = x * 1.5
            else:
                x = x + 1.0
            return x
    """),
]


def _function(source: str, directory: str, index: int):
    path = os.path.join(directory, f"construct_{index}.py")
    with open(path, "w") as handle:
        handle.write("import numpy as np\n\n" + textwrap.dedent(source))
    spec = importlib.util.spec_from_file_location(f"construct_{index}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.f


def _central(f, x: float) -> float:
    h = 1e-6
    return (f(x + h) - f(x - h)) / (2 * h)


def probe(source: str, directory: str, index: int) -> tuple[str, str]:
    """("refused" | "differentiated" | "wrong" | "crash" | "mixed", the first line of what was raised)."""
    try:
        f = _function(source, directory, index)
    except Exception as exc:        # noqa: BLE001 - Python itself refuses it
        return "python refuses it", f"{type(exc).__name__}: {exc}"
    outcomes, first = set(), ""
    for mode in ("auto", "reverse", "forward"):
        try:
            value = s2s.grad(f, mode=mode, check=True)(0.7)
            expected = _central(f, 0.7)
            outcomes.add("differentiated" if math.isclose(float(value), expected, rel_tol=1e-5, abs_tol=1e-7)
                         else "wrong")
        except s2s.S2SError as exc:
            outcomes.add("refused")
            first = first or exc.one_line()
        except Exception as exc:    # noqa: BLE001 - reported
            outcomes.add("crash")
            first = first or f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"
    return (outcomes.pop() if len(outcomes) == 1 else "mixed: " + ", ".join(sorted(outcomes))), first


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--row", action="store_true", help="print the README's row of refused constructs")
    args = parser.parse_args(argv)
    results = []
    with tempfile.TemporaryDirectory() as directory:
        sys.path.insert(0, directory)
        for index, (name, source) in enumerate(CONSTRUCTS):
            results.append((name, *probe(source, directory, index)))
    if args.row:
        refused = list(dict.fromkeys(name for name, outcome, _ in results if outcome == "refused"))
        print("| " + ", ".join(refused) + " | refused with an `S2SError` naming the construct, its `file:line:col`, "
              "the line with a caret, and what to do instead |")
    else:
        for name, outcome, message in results:
            print(f"{textwrap.shorten(name, 48).ljust(48)}  {outcome:<16}  {message[:110]}")
    return 1 if any(outcome not in ("refused", "differentiated") for _, outcome, _ in results) else 0


if __name__ == "__main__":
    raise SystemExit(main())
