"""Program generators, an oracle and a batch runner for the fuzzer of what users write (issue 12).

Each generator turns a seed into a `Program`: the source of a function `f` (and its helpers), its arguments
and the arguments it differentiates. The categories:

- `containers`: tuple and list concatenation (`(x,) + (y,)`, `xs + ys`, `out = out + [h]` in a loop),
  repetition (`[x] * 3`, `t * 2`), slicing (`xs[1:]`, `xs[:]`, `ps[:-1]`, `ys[::1]` iterated), lists of
  tuples, containers as arguments and as helper results, `sum`/`np.sum`/`np.mean`/`np.max` of lists;
- `elements`: element loops over arrays: Jacobi stencils (`v = u.copy()`, `v[i] = ...` over neighbours,
  `u = v`), `y[i % k] += ...`, recurrences `out[i] = out[i - 1] * a + x[i]`, swaps `u, v = v, u`, row
  updates, Gauss-Seidel sweeps, and the same shapes on scalars (an outer carried value copied after an
  inner loop);
- `helpers`: inlined helpers whose locals share names with the caller's, helpers with loops, helpers
  wrapped by `functools.wraps` decorators, helpers that call s2s derivatives;
- `names`: a program of another category whose names look like generated ones (`dx`, `x_dot`, `t1`,
  `x_stack`, `dv1`).

The oracle (`run_program`): in reverse mode (`value_and_grad`) and forward mode (`jvp` along a random
direction), each with and without the optimizing passes, and with the checking mode on, the value must be
f's own and the derivative must match central differences. A program s2s refuses with an `S2SError` is
"refused"; `ReadingMismatch` (the checking mode saw another value) and a mismatch are "wrong"; any other
exception is a "crash".

`python tests/programs/fuzz_programs.py -n 10000 -j 2` runs a batch and prints the counts per category and mode;
`--show SEED --category C` prints one program; `--reduce` shrinks each failure class to a small program.
"""
from __future__ import annotations

import argparse
import copy
import functools
import io
import itertools
import linecache
import math
import operator
import random
import re
import sys
import time
import tokenize
import traceback
import types
import warnings
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

CATEGORIES = ("containers", "arrays", "elements", "carried", "helpers", "names", "broadcast", "axes", "stale",
              "subclasses", "writers", "lambdas", "trees")
# "auto" is the default mode, the path every user takes: along one float argument it is the seeded forward mode
MODES = ("auto", "reverse", "reverse-noopt", "forward", "forward-noopt")


@dataclass
class Program:
    source: str
    args: tuple
    diff: tuple[int, ...]           # the arguments differentiated
    category: str
    tags: list[str] = field(default_factory=list)
    seed: int = 0
    change: str = ""                # run between two calls of the same derivative, which must follow it (stale)
    must_refuse: str = ""           # the derivative must be refused with an error matching this (subclasses)

    def describe(self) -> str:
        return f"# category {self.category}, seed {self.seed}\n{self.source}# args = {self.args!r}\n"


# ---------------------------------------------------------------- expressions

UNARY = ["math.sin({})", "math.cos({})", "math.tanh({})", "math.log(1.0 + {0} * {0})",
         "math.sqrt(1.0 + {0} * {0})", "math.exp(-{0} * {0})", "({}) ** 2", "math.atan({})", "abs({})"]
ARRAY_UNARY = ["np.sin({})", "np.cos({})", "np.tanh({})", "np.log(1.0 + {0} * {0})", "np.exp(-{0} * {0})",
               "({}) ** 2", "np.sqrt(1.0 + {0} * {0})"]
BINARY = ["{} + {}", "{} - {}", "{} * {}", "{} / (1.5 + {} ** 2)"]


def const(rng: random.Random) -> str:
    return repr(round(rng.uniform(-1.5, 1.5), 2))


class Env:
    """Variables in scope and what they hold: 's' a float, ('L', n) a list of n floats, ('T', n) a tuple of
    n floats, ('P', n) a list of n pairs of floats, ('V', n) a 1-D array of n floats."""

    def __init__(self, rng: random.Random):
        self.rng = rng
        self.vars: dict[str, Any] = {}
        self.fresh = itertools.count()
        self.helpers: list[str] = []          # source of helper functions
        self.scalar_helpers: list[str] = []   # names of helpers (a, b) -> float
        self.seq_helpers: list[tuple[str, Any]] = []  # names of helpers (a, b) -> container of a kind
        self.tags: list[str] = []

    def new(self, prefix: str) -> str:
        return f"{prefix}{next(self.fresh)}"

    def of(self, pred: Callable[[Any], bool]) -> list[str]:
        return [n for n, k in self.vars.items() if pred(k)]

    def tag(self, t: str) -> None:
        if t not in self.tags:
            self.tags.append(t)


def is_seq(kind: Any) -> bool:
    return isinstance(kind, tuple) and kind[0] in ("L", "T")


def slice_len(n: int, s: slice) -> int:
    return len(range(n)[s])


SLICES = [("[1:]", slice(1, None)), ("[:]", slice(None)), ("[:-1]", slice(None, -1)), ("[::2]", slice(None, None, 2)),
          ("[::-1]", slice(None, None, -1)), ("[1:-1]", slice(1, -1)), ("[::1]", slice(None, None, 1)),
          ("[-2:]", slice(-2, None)), ("[:2]", slice(None, 2))]


def scalar(env: Env, depth: int = 2) -> str:
    rng = env.rng
    if depth <= 0 or rng.random() < 0.25:
        return leaf(env)
    r = rng.random()
    if r < 0.25:
        return "(" + rng.choice(UNARY).format("(" + scalar(env, depth - 1) + ")") + ")"
    if r < 0.35 and env.scalar_helpers:
        env.tag("helper-call")
        return f"{rng.choice(env.scalar_helpers)}({scalar(env, depth - 1)}, {scalar(env, depth - 1)})"
    if r < 0.55:
        return seq_scalar(env, depth - 1)
    return "(" + rng.choice(BINARY).format(f"({scalar(env, depth - 1)})", f"({scalar(env, depth - 1)})") + ")"


def leaf(env: Env) -> str:
    rng = env.rng
    scalars = env.of(lambda k: k == "s")
    seqs = env.of(is_seq)
    pairs = env.of(lambda k: isinstance(k, tuple) and k[0] == "P")
    arrays = env.of(lambda k: isinstance(k, tuple) and k[0] == "V")
    r = rng.random()
    if r < 0.45 and scalars:
        return rng.choice(scalars)
    if r < 0.65 and seqs:
        name = rng.choice(seqs)
        n = env.vars[name][1]
        if n:
            return f"{name}[{rng.randrange(-n, n)}]"
    if r < 0.72 and pairs:
        name = rng.choice(pairs)
        n = env.vars[name][1]
        if n:
            env.tag("pairs")
            return f"{name}[{rng.randrange(-n, n)}][{rng.randrange(2)}]"
    if r < 0.8 and arrays:
        name = rng.choice(arrays)
        n = env.vars[name][1]
        if rng.random() < 0.5:
            return f"{name}[{rng.randrange(-n, n)}]"
        return f"np.{rng.choice(['sum', 'mean', 'max'])}({name})"
    if scalars and rng.random() < 0.7:
        return rng.choice(scalars)
    return const(rng)


def seq_scalar(env: Env, depth: int) -> str:
    """A float read out of a container expression."""
    rng = env.rng
    kind = rng.choice("LT")
    expr, n = seq(env, kind, depth)
    r = rng.random()
    if n == 0 or r < 0.35:
        reducer = rng.choice(["sum", "np.sum", "np.mean", "np.max", "np.min", "np.prod"] if n else ["sum", "np.sum"])
        env.tag("reduce-" + reducer)
        return f"{reducer}({expr})"
    return f"({expr})[{rng.randrange(-n, n)}]"


def seq(env: Env, kind: str, depth: int) -> tuple[str, int]:
    """A list ('L') or tuple ('T') expression of floats, and its length."""
    rng = env.rng
    existing = env.of(lambda k: is_seq(k) and k[0] == kind)
    r = rng.random()
    if depth <= 0 or r < 0.3:
        if existing and rng.random() < 0.7:
            name = rng.choice(existing)
            return name, env.vars[name][1]
        n = rng.randint(1, 3)
        items = [scalar(env, 0) for _ in range(n)]
        if kind == "T":
            return "(" + ", ".join(items) + ("," if n == 1 else "") + ")", n
        return "[" + ", ".join(items) + "]", n
    if r < 0.5:
        (a, na), (b, nb) = seq(env, kind, depth - 1), seq(env, kind, depth - 1)
        env.tag("concat")
        return f"({a} + {b})", na + nb
    if r < 0.62:
        a, na = seq(env, kind, depth - 1)
        k = rng.randint(1, 3)
        env.tag("repeat")
        return (f"({a} * {k})" if rng.random() < 0.7 else f"({k} * {a})"), na * k
    if r < 0.8:
        a, na = seq(env, kind, depth - 1)
        text, s = rng.choice(SLICES)
        env.tag("slice")
        return f"{a}{text}", slice_len(na, s)
    if r < 0.88:
        item = scalar(env, depth - 1)
        k = rng.randint(1, 3)
        env.tag("repeat")
        return (f"([{item}] * {k})" if kind == "L" else f"(({item},) * {k})"), k
    helpers = [(h, k) for h, k in env.seq_helpers if k[0] == kind]
    if helpers:
        h, k = rng.choice(helpers)
        env.tag("helper-result")
        return f"{h}({scalar(env, depth - 1)}, {scalar(env, depth - 1)})", k[1]
    if kind == "L" and rng.random() < 0.3:
        t = env.of(lambda k: is_seq(k) and k[0] == "T")
        if t:
            env.tag("list-of-tuple")
            return f"list({t[0]})", env.vars[t[0]][1]
    a, na = seq(env, kind, depth - 1)
    return a, na


# ---------------------------------------------------------------- statements of the containers category

def list_method(env: Env, indent: str, out: list[str]) -> None:
    """A method or builtin that reads or changes a list in ways beyond + * and slicing: s2s must model it
    exactly or refuse it."""
    rng = env.rng
    lists = env.of(lambda k: is_seq(k) and k[0] == "L")
    scalars = env.of(lambda k: k == "s")
    if not lists or not scalars:
        return
    name = rng.choice(lists)
    n = env.vars[name][1]
    acc = rng.choice(scalars)
    r = rng.random()
    if r < 0.12:
        other, m = seq(env, "L", 1)
        out.append(f"{indent}{name}.extend({other})")
        env.vars[name] = ("L", n + m)
    elif r < 0.22:
        out.append(f"{indent}{name}.insert({rng.randint(0, n)}, {scalar(env, 1)})")
        env.vars[name] = ("L", n + 1)
    elif r < 0.32 and n:
        out.append(f"{indent}{acc} = {acc} + {name}.pop()" if rng.random() < 0.5
                   else f"{indent}{acc} = {acc} * {name}.pop(0)")
        env.vars[name] = ("L", n - 1)
    elif r < 0.4:
        out.append(f"{indent}{name}.reverse()")
    elif r < 0.46:
        out.append(f"{indent}{name}.sort()")
    elif r < 0.54:
        copy_name = env.new("xs")
        out.append(f"{indent}{copy_name} = {rng.choice([name + '.copy()', 'list(' + name + ')', name + '[:]'])}")
        env.vars[copy_name] = ("L", n)
        if n:
            out.append(f"{indent}{copy_name}[0] = {scalar(env, 1)}")
    elif r < 0.62:
        other, m = seq(env, "L", 1)
        out.append(f"{indent}{name}[:] = {other}")
        env.vars[name] = ("L", m)
    elif r < 0.7 and n >= 2:
        other, m = seq(env, "L", 1)
        out.append(f"{indent}{name}[1:2] = {other}")
        env.vars[name] = ("L", n - 1 + m)
    elif r < 0.78 and n:
        out.append(f"{indent}{acc} = {acc} + {rng.choice(['max', 'min'])}({name})")
    elif r < 0.84 and n:
        out.append(f"{indent}{acc} = {acc} + sorted({name})[{rng.randrange(n)}]")
    elif r < 0.9 and n:
        out.append(f"{indent}{acc} = {acc} + list(reversed({name}))[0]")
    elif r < 0.95:
        out.append(f"{indent}{acc} = {acc} + sum({name}, {const(rng)})")
    elif n:
        out.append(f"{indent}{acc} = {acc} + len({name}) * {name}[-1]")
    env.tag("list-method")


def container_statement(env: Env, indent: str, depth: int, out: list[str]) -> None:
    rng = env.rng
    scalars = env.of(lambda k: k == "s")
    if rng.random() < 0.1:
        list_method(env, indent, out)
        return
    if rng.random() < 0.06 and len(env.of(lambda k: is_seq(k) and k[1] >= 2)) and scalars:
        # neighbours: zip(xs[:-1], xs[1:])
        name = rng.choice(env.of(lambda k: is_seq(k) and k[1] >= 2))
        a, b, acc = env.new("a"), env.new("b"), rng.choice(scalars)
        out.append(f"{indent}for {a}, {b} in zip({name}[:-1], {name}[1:]):")
        out.append(f"{indent}    {acc} = {acc} + ({b} - {a}) ** 2")
        env.tag("zip-neighbours")
        return
    r = rng.random()
    if r < 0.2 and scalars:
        out.append(f"{indent}{rng.choice(scalars)} = {scalar(env)}")
    elif r < 0.35:
        kind = rng.choice("LT")
        expr, n = seq(env, kind, 2)
        name = env.new("xs" if kind == "L" else "t")
        out.append(f"{indent}{name} = {expr}")
        env.vars[name] = (kind, n)
    elif r < 0.5:
        # a list built in a loop by concatenation or append, over a container or a range
        kind = rng.choice("LLT")
        src, n = seq(env, rng.choice("LT"), 1)
        name, item = env.new("out"), env.new("e")
        how = rng.choice(["concat", "concat", "append"]) if kind == "L" else "concat"
        env.tag("loop-" + how + ("-tuple" if kind == "T" else ""))
        out.append(f"{indent}{name} = {'[]' if kind == 'L' else '()'}")
        out.append(f"{indent}for {item} in {src}:")
        env.vars[item] = "s"
        value = scalar(env, 1)
        if how == "append":
            out.append(f"{indent}    {name}.append({value})")
        elif kind == "L":
            out.append(f"{indent}    {name} = {name} + [{value}]" if rng.random() < 0.8
                       else f"{indent}    {name} += [{value}]")
        else:
            out.append(f"{indent}    {name} = {name} + ({value},)")
        del env.vars[item]
        env.vars[name] = (kind, n)
    elif r < 0.62 and scalars:
        # accumulate over a container: plain, enumerate, zip, pairs
        acc = rng.choice(scalars)
        style = rng.choice(["plain", "enumerate", "zip", "pairs", "range-len"])
        pairs = env.of(lambda k: isinstance(k, tuple) and k[0] == "P")
        if style == "pairs" and pairs:
            p = rng.choice(pairs)
            src = p + rng.choice(["", "", "[:-1]", "[1:]", "[::1]"])
            a, b = env.new("a"), env.new("b")
            env.tag("loop-pairs")
            out.append(f"{indent}for {a}, {b} in {src}:")
            env.vars[a] = env.vars[b] = "s"
            out.append(f"{indent}    {acc} = {acc} + {scalar(env, 1)}")
            del env.vars[a], env.vars[b]
            return
        src, n = seq(env, rng.choice("LT"), 2)
        item = env.new("e")
        if style == "enumerate":
            i = env.new("i")
            out.append(f"{indent}for {i}, {item} in enumerate({src}):")
            env.vars[item] = "s"
            body = f"{acc} = {acc} * 0.9 + {scalar(env, 1)} * ({i} + 1)"
        elif style == "zip":
            src2, _ = seq(env, rng.choice("LT"), 1)
            item2 = env.new("e")
            out.append(f"{indent}for {item}, {item2} in zip({src}, {src2}):")
            env.vars[item] = env.vars[item2] = "s"
            body = f"{acc} = {acc} + {scalar(env, 1)}"
            del env.vars[item2]
        elif style == "range-len":
            i = env.new("i")
            name = env.new("xs")
            out.append(f"{indent}{name} = {src}")
            out.append(f"{indent}for {i} in range(len({name})):")
            body = f"{acc} = {acc} + {name}[{i}] * {scalar(env, 1)}"
            env.vars[item] = "s"
            env.vars[name] = ("L" if src.startswith("[") else "T", n)
        else:
            out.append(f"{indent}for {item} in {src}:")
            env.vars[item] = "s"
            body = f"{acc} = {acc} + {scalar(env, 1)}"
        env.tag("loop-" + style)
        out.append(f"{indent}    {body}")
        del env.vars[item]
    elif r < 0.7:
        # unpacking a container of two
        kind = rng.choice("LT")
        expr, n = seq(env, kind, 1)
        if n >= 2:
            a, b = env.new("a"), env.new("b")
            env.tag("unpack")
            if n == 2:
                out.append(f"{indent}{a}, {b} = {expr}")
            else:
                out.append(f"{indent}{a}, {b} = ({expr})[:2]")
            env.vars[a] = env.vars[b] = "s"
    elif r < 0.78:
        # a list of pairs built
        n = rng.randint(1, 3)
        name = env.new("ps")
        items = [f"({scalar(env, 1)}, {scalar(env, 1)})" for _ in range(n)]
        pairs = env.of(lambda k: isinstance(k, tuple) and k[0] == "P")
        if pairs and rng.random() < 0.5:
            other = rng.choice(pairs)
            out.append(f"{indent}{name} = {other} + [{', '.join(items)}]")
            n += env.vars[other][1]
            env.tag("concat-pairs")
        else:
            out.append(f"{indent}{name} = [{', '.join(items)}]")
        env.tag("pairs")
        env.vars[name] = ("P", n)
    elif r < 0.84:
        # an item of a local list written
        lists = [v for v in env.of(lambda k: is_seq(k) and k[0] == "L" and k[1] > 0) if v.startswith(("xs", "out"))]
        if lists:
            name = rng.choice(lists)
            n = env.vars[name][1]
            op = rng.choice(["=", "+=", "*="])
            env.tag("list-item-write")
            out.append(f"{indent}{name}[{rng.randrange(-n, n)}] {op} {scalar(env, 1)}")
    elif r < 0.92 and depth > 0:
        cond = rng.choice(scalars) if scalars else "1.0"
        out.append(f"{indent}if {cond} > {const(rng)}:")
        saved = dict(env.vars)
        container_statement(env, indent + "    ", depth - 1, out)
        container_statement(env, indent + "    ", depth - 1, out)
        if out[-1].endswith(":"):
            out.append(f"{indent}        pass")
        env.vars = {k: v for k, v in saved.items()}      # what a branch defines is not read after it
        if scalars:
            out.append(f"{indent}else:")
            out.append(f"{indent}    {rng.choice(scalars)} = {scalar(env, 1)}")
        env.tag("if")
    elif depth > 0 and scalars:
        k = env.new("k")
        out.append(f"{indent}for {k} in range({rng.randint(1, 3)}):")
        saved = dict(env.vars)
        container_statement(env, indent + "    ", depth - 1, out)
        env.vars = saved
        acc = rng.choice(scalars)
        out.append(f"{indent}    {acc} = {acc} * 0.7 + {scalar(env, 1)}")
        env.tag("outer-loop")


def add_container_helpers(env: Env) -> None:
    rng = env.rng
    for i in range(rng.randint(0, 2)):
        name = f"h{i}"
        kind = rng.choice(["s", "L", "T", "take"])
        if kind == "s":
            env.helpers.append(f"def {name}(a, b):\n    return {rng.choice(BINARY).format('a', 'b')}\n")
            env.scalar_helpers.append(name)
        elif kind == "take":
            # a helper that takes a container
            n = rng.randint(1, 3)
            body = " + ".join(f"{const(rng)} * p[{j}]" for j in range(n))
            env.helpers.append(f"def {name}(p):\n    return {body}\n")
            seqs = [v for v, k in env.vars.items() if is_seq(k) and k[1] >= n]
            if seqs:
                env.tag("container-argument")
                target = rng.choice(seqs)
                env.vars[name + "_r"] = "s"
                env.helpers[-1] += f"#call {name}_r = {name}({target})\n"
        else:
            n = rng.randint(1, 3)
            items = [rng.choice(["a", "b", f"a * {const(rng)}", "a * b", "math.sin(b)"]) for _ in range(n)]
            if kind == "T":
                text = "(" + ", ".join(items) + ("," if n == 1 else "") + ")"
                if rng.random() < 0.4 and n >= 1:
                    text = f"({items[0]},) + (" + ", ".join(items[1:]) + ("," if n == 2 else "") + ")"
                    if n == 1:
                        text = f"({items[0]},) + ()"
            else:
                text = "[" + ", ".join(items) + "]"
                if rng.random() < 0.4:
                    text = f"[{items[0]}] + [" + ", ".join(items[1:]) + "]"
            env.helpers.append(f"def {name}(a, b):\n    return {text}\n")
            env.seq_helpers.append((name, (kind, n)))


def random_float(rng: random.Random) -> float:
    return round(rng.uniform(-1.0, 1.0), 3)


def containers(seed: int) -> Program:
    rng = random.Random(seed)
    env = Env(rng)
    params, args, diff = [], [], []
    for i in range(rng.randint(1, 3)):
        kind = rng.choice(["s", "s", "L", "T", "P", "V"])
        n = rng.randint(1, 4) if kind != "P" else rng.randint(1, 3)
        if kind == "s":
            name, value = ["x", "y", "z"][i], random_float(rng)
            env.vars[name] = "s"
        elif kind == "L":
            name, value = f"xs{i}", [random_float(rng) for _ in range(n)]
            env.vars[name] = ("L", n)
        elif kind == "T":
            name, value = f"t{i}", tuple(random_float(rng) for _ in range(n))
            env.vars[name] = ("T", n)
        elif kind == "P":
            name, value = f"ps{i}", [(random_float(rng), random_float(rng)) for _ in range(n)]
            env.vars[name] = ("P", n)
        else:
            name, value = f"u{i}", np.array([random_float(rng) for _ in range(n)])
            env.vars[name] = ("V", n)
        env.tag("arg-" + kind)
        params.append(name)
        args.append(value)
        diff.append(i)
    lines = [f"def f({', '.join(params)}):", "    acc = 0.5"]
    env.vars["acc"] = "s"
    add_container_helpers(env)
    calls = []
    for h in list(env.helpers):
        if "#call" in h:
            calls.append("    " + h.split("#call ", 1)[1].strip())
    env.helpers = [h.split("#call", 1)[0] for h in env.helpers]
    lines += calls
    body: list[str] = []
    for _ in range(rng.randint(2, 5)):
        container_statement(env, "    ", 2, body)
    lines += body
    terms = [scalar(env, 2) for _ in range(rng.randint(1, 2))]
    # every container variable is read at the end, so that each has an adjoint
    for name, kind in env.vars.items():
        if is_seq(kind) and kind[1] and rng.random() < 0.6:
            terms.append(f"{const(rng)} * {name}[{rng.randrange(kind[1])}]")
        elif kind == "s" and rng.random() < 0.4:
            terms.append(name)
    lines.append("    return " + " + ".join(terms))
    source = "\n\n".join(env.helpers + ["\n".join(lines) + "\n"])
    return Program(source, tuple(args), tuple(diff), "containers", env.tags, seed)


# ---------------------------------------------------------------- containers of arrays (layers, RNN steps)

def arrays(seed: int) -> Program:
    rng = random.Random(seed)
    tags: list[str] = []
    depth = rng.randint(1, 3)
    sizes = [rng.randint(1, 3) for _ in range(depth + 1)]
    nrng = np.random.default_rng(seed)
    params = [(np.round(nrng.uniform(-1, 1, (sizes[i + 1], sizes[i])), 3), np.round(nrng.uniform(-1, 1, sizes[i + 1]), 3))
              for i in range(depth)]
    x = np.round(nrng.uniform(-1, 1, sizes[0]), 3)
    ws = tuple(np.round(nrng.uniform(-1, 1, 2), 3) for _ in range(2))
    lines = ["def f(params, x, ws):", "    acc = 0.0"]
    act = rng.choice(["np.tanh", "np.sin", "np.sinh"])
    for _ in range(rng.randint(1, 3)):
        t = rng.choice(["mlp", "mlp", "hidden-list", "rnn", "repeat", "ws", "ws", "sum-list", "pairs-concat",
                        "stack-concat"])
        tags.append(t)
        if t == "mlp":
            style = rng.choice(["[:-1]", "[:-1]", "[::1]", "", "[:]", "index"])
            lines.append("    h = x")
            if style == "[:-1]":
                lines += [f"    for W, b in params[:-1]:", f"        h = {act}(W @ h + b)",
                          "    W, b = params[-1]", "    h = W @ h + b"]
            elif style == "index":
                lines += ["    for i in range(len(params)):", "        W, b = params[i]", f"        h = {act}(W @ h + b)"]
            else:
                lines += [f"    for W, b in params{style}:", f"        h = {act}(W @ h + b)"]
            lines.append(f"    acc = acc + {rng.choice(['np.sum(h * h)', 'np.sum(h)', 'np.mean(np.sin(h))', 'h[0]'])}")
        elif t == "hidden-list":
            how = rng.choice(["hs = hs + [h]", "hs.append(h)", "hs += [h]", "hs = hs + [h * 1.0]"])
            lines += ["    hs = [x]", "    h = x", "    for layer in params:", "        W, b = layer",
                      f"        h = {act}(W.dot(h) + b)", f"        {how}",
                      f"    for g in hs{rng.choice(['', '[1:]', '[::-1]', '[:-1]'])}:",
                      "        acc = acc + np.sum(g * g) * 0.5"]
        elif t == "rnn":
            m = sizes[0]
            # a recurrent step whose weights are those of the first layer, padded: h = tanh(W @ [h; x; 1])
            lines += [f"    Wr = np.ones(({m}, {2 * m + 1})) * 0.1 + np.sum(params[0][0]) * 0.05", f"    h = np.zeros({m})",
                      f"    for t in range({rng.randint(1, 3)}):",
                      "        args = (h, x * (t + 1.0))",
                      f"        h = np.tanh(Wr @ {rng.choice(['np.hstack(args + (np.ones(1),))', 'np.concatenate(list(args) + [np.ones(1)])', 'np.hstack((h,) + (x * (t + 1.0), np.ones(1)))'])})",
                      "    acc = acc + np.sum(h)"]
        elif t == "repeat":
            lines.append(f"    acc = acc + {rng.choice(['np.sum(np.stack([x] * 3) * 0.5)', 'np.sum(np.concatenate((x,) * 2) ** 2)', 'np.sum(np.stack((x, x * 2.0) * 2)[3])', 'np.sum(sum([x] * 2))'])}")
        elif t == "ws":
            lines.append(f"    acc = acc + {rng.choice(['np.sum(ws[0] * ws[1])', 'np.sum((ws + ws)[3] * ws[0])', 'np.sum(ws[::-1][0] ** 2)', 'np.sum((ws * 2)[2])', 'np.sum(ws[1:][0])'])}")
            if rng.random() < 0.4:
                lines += ["    a, b = ws", "    acc = acc + np.sum(a * np.tanh(b))"]
        elif t == "sum-list":
            lines.append(f"    acc = acc + {rng.choice(['np.sum([np.sum(x), np.sum(ws[0]) * 2.0])', 'np.mean([x[0], ws[1][1], acc])', 'np.max([x[0] * 2.0, ws[0][0]])', 'np.sum([ws[0], ws[1] * 0.5])', 'np.sum(list(ws))'])}")
        elif t == "pairs-concat":
            lines += ["    extra = [(params[0][0] * 0.5, params[0][1] * 2.0)]", "    both = params[:1] + extra",
                      "    for W, b in both:", "        acc = acc + np.sum(W) * np.sum(b)"]
        else:
            lines += [f"    parts = {rng.choice(['[x]', '[x * 2.0]', '(x,)'])}",
                      f"    parts = parts + {rng.choice(['[ws[0][:1]]', '[np.tanh(x)]'])}" if rng.random() < 0.5 else
                      f"    parts = parts + parts",
                      "    acc = acc + np.sum(np.concatenate(parts) ** 2)"]
            if lines[-3].endswith("(x,)") and "+ [" in lines[-2]:
                lines[-3] = "    parts = [x]"
    lines.append("    return acc")
    return Program("\n".join(lines) + "\n", (params, x, ws), (0, 1, 2), "arrays", tags, seed)


# ---------------------------------------------------------------- element loops over arrays

def elements(seed: int) -> Program:
    rng = random.Random(seed)
    n = rng.randint(3, 6)
    tags: list[str] = []
    env = Env(rng)
    env.vars.update({"a": "s", "k": "s"})
    u0 = np.array([random_float(rng) for _ in range(n)])
    lines = ["def f(u, k):", f"    a = {rng.choice(['k', 'math.tanh(k)', '0.5 * k', 'k * k'])}"]
    for _ in range(rng.randint(1, 3)):
        t = rng.choice(["jacobi", "jacobi", "gauss-seidel", "modulo", "recurrence", "swap", "rows", "scalar-nest",
                        "neighbour-diff", "reverse-recurrence", "prefix", "while-jacobi", "break-jacobi",
                        "if-jacobi", "accumulate-into", "view-swap", "slice-swap", "shifted-slices", "grid",
                        "row-swap-loop", "inplace-ops", "inplace-ops"])
        tags.append(t)
        steps = rng.randint(1, 3)
        coef = rng.choice(["k", "a", "0.3", "a * 0.5", "math.sin(k)"])
        if t in ("jacobi", "while-jacobi", "break-jacobi", "if-jacobi"):
            upd = rng.choice([f"u[i] + {coef} * (u[i - 1] - 2.0 * u[i] + u[i + 1])",
                              f"0.5 * (u[i - 1] + u[i + 1]) + {coef} * u[i]",
                              f"u[i] + {coef} * u[i - 1]", f"u[i] * u[i + 1] * {coef} + u[i - 1]",
                              f"{coef} * np.tanh(u[i - 1]) + u[i]"])
            copy_ = rng.choice(["u.copy()", "np.copy(u)", "u * 1.0", "np.array(u)", "u + 0.0"])
            inner = ["        v = " + copy_, "        for i in range(1, len(u) - 1):" if rng.random() < 0.5
                     else f"        for i in range(1, {n - 1}):", f"            v[i] = {upd}"]
            if rng.random() < 0.3:
                inner.append(f"            v[i] += {coef} * 0.1")
            inner.append("        u = v")
            if t == "jacobi":
                lines += [f"    for t in range({steps}):"] + inner
            elif t == "while-jacobi":
                lines += ["    t = 0", f"    while t < {steps}:", "        t += 1"] + inner
            elif t == "break-jacobi":
                lines += [f"    for t in range({steps + 1}):"] + inner + [f"        if t >= {steps - 1}:",
                                                                           "            break"]
            else:
                lines += ["    if k > -5.0:"] + inner
        elif t == "gauss-seidel":
            lines += ["    u = u.copy()" if rng.random() < 0.7 else "    u = u * 1.0", f"    for t in range({steps}):",
                      f"        for i in range(1, {n - 1}):",
                      f"            u[i] = {rng.choice(['0.5 * (u[i - 1] + u[i + 1])', 'u[i - 1] * 0.4 + u[i + 1] * 0.3 + u[i] * ' + coef])}"]
        elif t == "modulo":
            m = rng.randint(2, n)
            lines += [f"    y = np.zeros({m})", f"    for i in range(len(u)):",
                      f"        y[i % {m}] += {rng.choice(['u[i]', 'u[i] * u[i]', f'{coef} * u[i]', 'np.sin(u[i])'])}",
                      f"    u = u + {rng.choice(['np.sum(y * y)', 'y[0]', 'np.mean(y)'])}"]
        elif t == "recurrence":
            lines += ["    out = np.zeros_like(u)", "    out[0] = u[0]", "    for i in range(1, len(u)):",
                      f"        out[i] = out[i - 1] * {coef} + u[i]", "    u = out"]
        elif t == "reverse-recurrence":
            lines += ["    out = u.copy()", f"    for i in range({n - 2}, -1, -1):",
                      f"        out[i] = out[i] + {coef} * out[i + 1]", "    u = out"]
        elif t == "prefix":
            lines += ["    s = 0.0", "    out = np.zeros(len(u))", "    for i in range(len(u)):",
                      f"        s = s * {coef} + u[i]", "        out[i] = s", "    u = out"]
        elif t == "swap":
            lines += ["    v = u * a", f"    for t in range({steps}):",
                      f"        v = {rng.choice(['v * a + u', 'np.tanh(v) + 0.5 * u', 'u - v * 0.3'])}",
                      "        u, v = v, u"]
        elif t == "rows":
            lines += ["    M = np.outer(u, u[:3]) + 0.1", "    for i in range(1, M.shape[0]):",
                      f"        M[i, :] = {rng.choice(['M[i, :] - ' + coef + ' * M[i - 1, :]', 'M[i] * 0.5 + M[i - 1]', 'M[i - 1, :] * ' + coef])}",
                      f"    u = u + {rng.choice(['M[:, 0]', 'M.sum(axis=1)', 'M[:, -1] * 0.5'])}"]
        elif t == "scalar-nest":
            outer = rng.choice(["for", "while", "if", "for-break"])
            body = ["v = s * a", f"for i in range({rng.randint(1, 3)}):", f"    v = v * a + s", "s = v"]
            if rng.random() < 0.3:
                body[-1] = "s, v = v, s"
            lines.append("    s = np.sum(u) * 0.3")
            if outer == "for":
                lines.append(f"    for t in range({steps}):")
            elif outer == "while":
                lines += ["    t = 0", f"    while t < {steps}:", "        t += 1"]
            elif outer == "for-break":
                lines.append(f"    for t in range({steps + 1}):")
                body += [f"if t >= {steps - 1}:", "    break"]
            else:
                lines.append("    if k > -5.0:")
            lines += ["        " + b for b in body]
            lines.append("    u = u + s")
        elif t == "neighbour-diff":
            lines += ["    d = np.zeros(len(u) - 1)", "    for i in range(len(u) - 1):",
                      f"        d[i] = (u[i + 1] - u[i]) * {coef}", f"    u = u + {rng.choice(['np.sum(d * d)', 'd[0]', 'np.max(d)'])}"]
        elif t == "view-swap":
            # a tuple assignment whose right side holds views (issue item 10): NumPy copies nothing
            lines += ["    B = np.outer(u[:2], u) + 1.0",
                      rng.choice(["    B[0, :], B[1, :] = B[1, :], B[0, :]", "    B[0], B[1] = B[1], B[0]",
                                  "    B[0, :], B[1, :] = B[1, :].copy(), B[0, :].copy()",
                                  "    B[[0, 1]] = B[[1, 0]]"]),
                      f"    u = u + np.sum(B * np.arange(B.size).reshape(B.shape)) * 0.1"]
        elif t == "slice-swap":
            h = n // 2
            lines += ["    y = u * 1.0", rng.choice([f"    y[:{h}], y[{h}:{2 * h}] = y[{h}:{2 * h}], y[:{h}]",
                                                    f"    y[:{h}], y[{h}:{2 * h}] = y[{h}:{2 * h}].copy(), y[:{h}].copy()"]),
                      "    u = u + y * np.arange(len(y))"]
        elif t == "shifted-slices":
            lines += ["    y = u.copy()", rng.choice(["    y[1:] = y[:-1] * a", "    y[1:] += y[:-1] * a",
                                                    "    y[:-1] += y[1:]", "    y[1:] = y[1:] + y[:-1]",
                                                    "    y[::2] *= y[1::2][:len(y[::2])].sum()"]),
                      "    u = u * y"]
        elif t == "grid":
            m = rng.randint(2, 3)
            lines += [f"    G = np.outer(u[:{m}], u[:{m}]) + 0.5",
                      f"    for t in range({steps}):",
                      f"        for i in range(1, {m}):",
                      f"            for j in range(1, {m}):",
                      f"                G[i, j] = {rng.choice(['0.25 * (G[i - 1, j] + G[i, j - 1]) + ' + coef + ' * G[i, j]', 'G[i - 1, j - 1] * ' + coef])}",
                      f"    u = u + np.sum(G)"]
        elif t == "row-swap-loop":
            lines += ["    M = np.outer(u, u[:2]) + 0.2", f"    for i in range({min(n, 3) - 1}):",
                      rng.choice(["        M[i], M[i + 1] = M[i + 1].copy(), M[i].copy()",
                                  "        r = M[i].copy()\n        M[i] = M[i + 1]\n        M[i + 1] = r",
                                  "        M[i] = M[i] - M[i + 1] * " + coef]),
                      "    u = u + M[:, 0] - M[:, 1] * 0.5"]
        elif t == "inplace-ops":
            lines += ["    y = u.copy()" if rng.random() < 0.7 else "    y = np.array(u)", f"    for t in range({steps}):",
                      rng.choice([f"        y += {coef} * np.sin(y)", f"        y *= {coef}", "        y -= y[0]",
                                  "        y[0] -= y[-1] * 0.5", f"        y[1:3] *= {coef}"]),
                      "    u = u + y"]
        else:
            lines += ["    w = np.zeros(len(u))", "    for i in range(len(u)):", "        for j in range(i + 1):",
                      f"            w[i] += u[j] * {coef}", "    u = w"]
    final = rng.choice(["np.sum(u * u)", "np.sum(np.sin(u)) + u[0]", "np.sum(u * np.arange(len(u)))", "np.mean(u ** 2) * k",
                        "u[-1] * u[0] + np.sum(u)"])
    lines.append(f"    return {final}")
    k0 = random_float(rng) * 0.8
    return Program("\n".join(lines) + "\n", (u0, k0), (0, 1), "elements", tags, seed)


# ---------------------------------------------------------------- helpers: shared names, wraps, derivatives

POOL = ["a", "b", "q", "x", "y", "z"]


def helper_block(rng: random.Random, names: list[str], indent: str, depth: int, out: list[str],
                 helpers: list[str]) -> None:
    for _ in range(rng.randint(1, 3)):
        r = rng.random()
        target = rng.choice(names)
        if r < 0.35 or depth == 0:
            out.append(f"{indent}{target} = {pool_expr(rng, names, 2, helpers)}")
        elif r < 0.55:
            loop_var = rng.choice(POOL)          # a loop variable that may shadow a name of the caller's
            items = rng.choice([f"({pool_expr(rng, names, 1, [])}, {pool_expr(rng, names, 1, [])})",
                                f"range({rng.randint(1, 3)})", f"({const(rng)}, {const(rng)})"])
            out.append(f"{indent}for {loop_var} in {items}:")
            inner = names + ([loop_var] if loop_var not in names else [])
            if items.startswith("range"):
                inner = names
                out.append(f"{indent}    {target} = {target} * 0.8 + {pool_expr(rng, names, 1, helpers)}")
            else:
                helper_block(rng, inner, indent + "    ", depth - 1, out, helpers)
        elif r < 0.75:
            out.append(f"{indent}if {rng.choice(names)} >= {pool_expr(rng, names, 1, helpers)}:")
            helper_block(rng, names, indent + "    ", depth - 1, out, helpers)
            if rng.random() < 0.6:
                out.append(f"{indent}else:")
                helper_block(rng, names, indent + "    ", depth - 1, out, helpers)
        elif r < 0.9:
            out.append(f"{indent}{target} -= {const(rng)} * math.tanh({pool_expr(rng, names, 1, helpers)})")
        else:
            # an outer carried value copied after an inner loop
            tmp = rng.choice([p for p in POOL if p not in names] or ["w"])
            out.append(f"{indent}{tmp} = {target} * {const(rng)}")
            out.append(f"{indent}for i in range({rng.randint(1, 3)}):")
            out.append(f"{indent}    {tmp} = {tmp} * {const(rng)} + {target}")
            out.append(f"{indent}{target} = {tmp}")


def pool_expr(rng: random.Random, names: list[str], depth: int, helpers: list[str]) -> str:
    if depth == 0 or rng.random() < 0.25:
        return rng.choice(names) if rng.random() < 0.75 else const(rng)
    r = rng.random()
    if r < 0.3:
        return "(" + rng.choice(UNARY).format("(" + pool_expr(rng, names, depth - 1, helpers) + ")") + ")"
    if r < 0.5 and helpers:
        h = rng.choice(helpers)
        return f"{h}({pool_expr(rng, names, depth - 1, [])})"
    return "(" + rng.choice(BINARY).format(f"({pool_expr(rng, names, depth - 1, helpers)})",
                                           f"({pool_expr(rng, names, depth - 1, helpers)})") + ")"


DECORATORS = {
    "scale": ("def scaled(fn):\n    @functools.wraps(fn)\n    def wrapper(*args):\n        return 2.0 * fn(*args)\n"
              "    return wrapper\n"),
    "clamp": ("def clamped(fn):\n    @functools.wraps(fn)\n    def wrapper(*args):\n        return max(fn(*args), -0.5)\n"
              "    return wrapper\n"),
    "shift": ("def shifted(fn):\n    @functools.wraps(fn)\n    def wrapper(p):\n        return fn(p + 0.25) + p\n"
              "    return wrapper\n"),
    "plain": ("def logged(fn):\n    @functools.wraps(fn)\n    def wrapper(*args, **kwargs):\n        return fn(*args, **kwargs)\n"
              "    return wrapper\n"),
}
DECORATOR_NAMES = {"scale": "scaled", "clamp": "clamped", "shift": "shifted", "plain": "logged"}


STATE_HELPERS = [
    # a state carried through a loop by a helper that returns a tuple (an integrator, an RNN cell)
    ("def step(q, p, dt=0.1):\n    p = p - dt * math.sin(q)\n    q = q + dt * p\n    return q, p\n",
     "    q, p = x, y\n    for i in range({n}):\n        q, p = step(q, p{kw})\n    return q * p + q\n", ", dt=0.2"),
    ("def step(state, c):\n    a, b = state\n    return (b, a * c + b)\n",
     "    s = (x, y)\n    for i in range({n}):\n        s = step(s, 0.5)\n    return s[0] + 2.0 * s[1]\n", ""),
    ("def step(hs, v):\n    return hs + [math.tanh(hs[-1] * 0.5 + v)]\n",
     "    hs = [x]\n    for i in range({n}):\n        hs = step(hs, y)\n    return sum(hs) + hs[-1]\n", ""),
    ("def step(q, p, *, dt=0.1, k=1.0):\n    p = p - dt * k * q\n    return q + dt * p, p\n",
     "    q, p = x, y\n    for i in range({n}):\n        q, p = step(q, p{kw})\n    return q * q + p * p\n", ", k=1.5"),
    ("def step(t, y):\n    out = []\n    for v in t:\n        out = out + [v * y]\n    return tuple(out)\n",
     "    t = (x, y, x * y)\n    for i in range({n}):\n        t = step(t, 0.9)\n    return t[0] + t[1] - t[2]\n", ""),
]


def helpers(seed: int) -> Program:
    rng = random.Random(seed)
    if rng.random() < 0.2:
        helper, body, kw = rng.choice(STATE_HELPERS)
        source = helper + "\n\ndef f(x, y):\n" + body.format(n=rng.randint(0, 4), kw=kw if rng.random() < 0.5 else "")
        return Program(source, (random_float(rng), random_float(rng)), (0, 1), "helpers", ["state-helper"], seed)
    tags: list[str] = []
    parts: list[str] = []
    helper_names: list[str] = []
    for i in range(rng.randint(1, 2)):
        p = rng.choice(POOL)
        local = [p] + rng.sample([n for n in POOL if n != p], rng.randint(0, 2))
        body = [f"    {n} = {pool_expr(rng, [p], 1, [])}" for n in local[1:]]
        helper_block(rng, local, "    ", 2, body, helper_names[:])
        text = ""
        style = rng.choice(["plain", "plain", "wraps", "derivative"])
        name = f"h{i}"
        if style == "wraps":
            d = rng.choice(list(DECORATORS))
            tags.append("wraps-" + d)
            if DECORATORS[d] not in parts:
                parts.append(DECORATORS[d])
            text = f"@{DECORATOR_NAMES[d]}\n"
        text += f"def {name}({p}):\n" + "\n".join(body) + f"\n    return {pool_expr(rng, local, 1, [])}\n"
        parts.append(text)
        if style == "derivative":
            tags.append("calls-derivative")
            parts.append(f"d{name} = s2s.grad({name})\n")
            helper_names.append(f"d{name}")
        else:
            tags.append("shared-names" if set(local) & {"x", "y", "z"} else "helper")
        helper_names.append(name)
    names = ["x", "y"]
    body = ["    z = x * 0.5"] if rng.random() < 0.5 else []
    if body:
        names.append("z")
    helper_block(rng, names, "    ", 2, body, helper_names)
    body.append(f"    return {pool_expr(rng, names, 2, helper_names)}")
    decorated = rng.random() < 0.15
    head = ""
    if decorated:
        d = rng.choice(["scale", "clamp", "plain"])
        tags.append("wraps-f-" + d)
        if DECORATORS[d] not in parts:
            parts.insert(0, DECORATORS[d])
        head = f"@{DECORATOR_NAMES[d]}\n"
    parts.append(head + "def f(x, y):\n" + "\n".join(body) + "\n")
    source = "\n\n".join(parts)
    args = (random_float(rng) * 1.5, random_float(rng) * 1.5)
    return Program(source, args, (0, 1), "helpers", tags, seed)


# ---------------------------------------------------------------- carried values: copies, swaps, rotations

def carried_expr(rng: random.Random, names: list[str], arrays: bool, depth: int = 1) -> str:
    if depth == 0 or rng.random() < 0.3:
        if rng.random() < 0.8:
            return rng.choice(names)
        return f"np.full(3, {const(rng)})" if arrays else const(rng)     # every variable stays an array
    if rng.random() < 0.3:
        return "(" + rng.choice(ARRAY_UNARY if arrays else UNARY[:-1]).format(
            "(" + carried_expr(rng, names, arrays, depth - 1) + ")") + ")"
    return "(" + rng.choice(BINARY).format(f"({carried_expr(rng, names, arrays, depth - 1)})",
                                           f"({carried_expr(rng, names, arrays, depth - 1)})") + ")"


def carried_block(rng: random.Random, names: list[str], arrays: bool, depth: int, in_loop: bool, indent: str,
                  out: list[str], counters: itertools.count) -> None:
    start = len(out)
    _carried_statements(rng, names, arrays, depth, in_loop, indent, out, counters)
    if len(out) == start:
        out.append(f"{indent}pass")


def _carried_statements(rng: random.Random, names: list[str], arrays: bool, depth: int, in_loop: bool,
                        indent: str, out: list[str], counters: itertools.count) -> None:
    for _ in range(rng.randint(1, 4)):
        r = rng.random()
        a, b, c = rng.sample(names, 3)
        if r < 0.22 or depth == 0:
            out.append(f"{indent}{a} = {carried_expr(rng, names, arrays)}")
        elif r < 0.32:
            out.append(f"{indent}{a} = {b}" + (".copy()" if arrays and rng.random() < 0.5 else ""))
        elif r < 0.42:
            out.append(f"{indent}{a}, {b} = {b}, {a}")
        elif r < 0.47:
            out.append(f"{indent}{a}, {b}, {c} = {b}, {c}, {a}")
        elif r < 0.52:
            out.append(f"{indent}{a} {rng.choice(['+=', '-=', '*='])} {carried_expr(rng, names, arrays)}")
        elif r < 0.57 and arrays:
            out.append(f"{indent}{a} = {b}.copy()")
            out.append(f"{indent}{a}[{rng.randrange(3)}] = {carried_expr(rng, names, arrays)}[{rng.randrange(3)}]")
        elif r < 0.7:
            k = f"i{next(counters)}"
            out.append(f"{indent}for {k} in range({rng.randint(0, 3)}):")
            carried_block(rng, names, arrays, depth - 1, True, indent + "    ", out, counters)
        elif r < 0.78:
            k = f"n{next(counters)}"
            out.append(f"{indent}{k} = 0")
            out.append(f"{indent}while {k} < {rng.randint(0, 3)}:")
            out.append(f"{indent}    {k} += 1")
            carried_block(rng, names, arrays, depth - 1, True, indent + "    ", out, counters)
        elif r < 0.9:
            cond = f"np.sum({a}) > {const(rng)}" if arrays else f"{a} > {const(rng)}"
            out.append(f"{indent}if {cond}:")
            carried_block(rng, names, arrays, depth - 1, in_loop, indent + "    ", out, counters)
            if rng.random() < 0.6:
                out.append(f"{indent}else:")
                carried_block(rng, names, arrays, depth - 1, in_loop, indent + "    ", out, counters)
        elif in_loop:
            cond = f"np.sum({a}) > {const(rng)}" if arrays else f"{a} > {const(rng)}"
            out.append(f"{indent}if {cond}:")
            out.append(f"{indent}    {rng.choice(['break', 'continue'])}")


def carried(seed: int) -> Program:
    rng = random.Random(seed)
    arrays = rng.random() < 0.35
    names = ["x", "y", "u", "v"]
    lines = ["def f(x, y):", "    u = x * 0.5", "    v = y + 0.25" if not arrays else "    v = y * x"]
    carried_block(rng, names, arrays, 3, False, "    ", lines, itertools.count())
    result = " + ".join(f"{const(rng)} * {n}" for n in rng.sample(names, rng.randint(1, 4)))
    lines.append(f"    return np.sum({result})" if arrays else f"    return {result}")
    if arrays:
        nrng = np.random.default_rng(seed)
        args = (np.round(nrng.uniform(-1, 1, 3), 3), np.round(nrng.uniform(-1, 1, 3), 3))
    else:
        args = (random_float(rng), random_float(rng))
    return Program("\n".join(lines) + "\n", args, (0, 1), "carried", ["arrays" if arrays else "floats"], seed)


# ---------------------------------------------------------------- floats broadcast against constant arrays

# shapes: "s" a float, "v" a vector of 3, "m" a 2x3 matrix; each form maps the shapes of its operands to its own
_BROADCAST_FORMS: list[tuple[str, tuple[str, ...], str]] = [
    ("{0} + {1}", ("m", "s"), "m"), ("{1} - {0}", ("v", "s"), "v"), ("{0} * {1}", ("m", "v"), "m"),
    ("{0} + {1}", ("v", "v"), "v"), ("{1} + {0}", ("m", "s"), "m"), ("{0} / (2.0 + {1} ** 2)", ("m", "s"), "m"),
    ("np.sum({0})", ("m",), "s"), ("np.sum({0}, axis=0)", ("m",), "v"), ("np.mean({0}, axis=1)", ("m",), "v2"),
    ("np.sum({0}, axis=-1, keepdims=True)", ("m",), "m"), ("np.mean({0})", ("v",), "s"),
    ("{0} @ {1}", ("m", "v"), "v2"), ("np.dot({0}, {1})", ("v", "v"), "s"), ("{0}.T @ {1}", ("m", "v2"), "v"),
    ("np.outer({1}, {0})", ("v", "v2"), "m"), ("np.max({0}, axis=0)", ("m",), "v"), ("np.cumsum({0})", ("v",), "v"),
    ("np.tanh({0})", ("m",), "m"), ("np.exp(-{0} * {0})", ("v",), "v"), ("np.sin({0})", ("s",), "s"),
    ("np.full_like({1}, {0})", ("s", "v"), "v"), ("np.broadcast_to({0}, (2, 3))", ("s",), "m"),
    ("np.where({1} > 0.0, {0}, {1})", ("s", "v"), "v"), ("np.reshape({0}, (3, 2))[:2].T", ("m",), "m"),
    ("{0} + np.zeros((2, 3))", ("s",), "m"), ("np.concatenate([{0}, {1}])", ("v", "v2"), "v5"),
    ("np.linalg.norm({0})", ("v",), "s"), ("np.sum({0} ** 2) * {1}", ("m", "s"), "s"), ("{0}[1]", ("m",), "v"),
    ("np.prod({0} * 0.5 + 1.0)", ("v",), "s"), ("np.sum({0}, axis=(0, 1))", ("m",), "s"),
]
_SUM_OF = {"s": "{}", "v": "np.sum({})", "v2": "np.sum({})", "v5": "np.sum({})", "m": "np.sum({})"}


def broadcast(seed: int) -> Program:
    """f(x, y, A, u): floats x and y, differentiated, broadcast against arrays A (2x3) and u (3,) that are not;
    reductions (with axis keywords), products and concatenations of the results; an `if` on a float. The default
    mode differentiates along x alone: a seeded forward mode, whose constant tangent must take the broadcast
    shape (issue 27, item 0: `np.sum(z + x)` gave 1.0 instead of 6.0)."""
    rng = random.Random(seed)
    names: dict[str, str] = {"x": "s", "y": "s", "A": "m", "u": "v"}
    lines = ["def f(x, y, A, u):"]
    tags: list[str] = []
    for k in range(rng.randint(2, 5)):
        with_float = [f for f in _BROADCAST_FORMS if "s" in f[1]]
        form, operands, result = rng.choice(with_float if k == 0 or rng.random() < 0.4 else _BROADCAST_FORMS)
        picked = []
        for shape in operands:
            pool = [n for n, sh in names.items() if sh == shape]
            made = [n for n in pool if n.startswith("t")]
            if made and rng.random() < 0.6:      # chain the results: the float reaches them
                pool = made
            elif shape == "s" and rng.random() < 0.7:
                pool = [n for n in pool if n in ("x", "y")] or pool
            picked.append(rng.choice(pool) if pool else {"s": "x", "v": "u", "m": "A", "v2": "A[:, 0]"}[shape])
        target = f"t{k}"
        line = f"    {target} = {form.format(*picked)}"
        if rng.random() < 0.2:
            line = f"    if x > {const(rng)}:\n    " + line + f"\n    else:\n        {target} = {form.format(*picked)} * 0.5"
            tags.append("if")
        lines.append(line)
        names[target] = result
        tags.append(form.split("(")[0])
    made = [n for n in names if n.startswith("t")]
    terms = [_SUM_OF[names[n]].format(n) for n in rng.sample(made, rng.randint(1, len(made)))]
    if rng.random() < 0.3:
        terms.append(rng.choice(["np.sum(A + x)", "np.sum(u - x) * y", "np.mean(A * x + u)"]))
    lines.append("    return " + " + ".join(terms))
    nrng = np.random.default_rng(seed)
    args = (random_float(rng), random_float(rng), np.round(nrng.uniform(-1, 1, (2, 3)), 3),
            np.round(nrng.uniform(-1, 1, 3), 3))
    return Program("\n".join(lines) + "\n", args, (0, 1), "broadcast", tags, seed)


# ---------------------------------------------------------------- names that look like generated ones

ODD_NAMES = ["dx", "x_dot", "t1", "x_stack", "dv1", "v1", "dy", "t2", "dx_dot", "d", "g", "ans", "dt1", "x1", "x2",
             "y_dot", "v1_dot", "dxs0", "out_stack", "dx1", "t", "tmp", "_t1", "w1", "dw1", "ct", "v2", "dt",
             "u_dot", "du", "dacc", "acc_stack", "k_dot", "dk", "i_stack", "d_x", "grad", "value", "result"]
RESERVED = {"f", "np", "math", "functools", "s2s", "range", "len", "sum", "abs", "max", "min", "list", "tuple",
            "enumerate", "zip", "True", "False", "None", "float", "int"}


def rename(source: str, rng: random.Random) -> tuple[str, dict[str, str]]:
    """Rename the variables and parameters of source to names like the ones s2s generates."""
    tokens = list(tokenize.generate_tokens(io.StringIO(source).readline))
    names, after_dot = [], False
    defs = set()
    prev = None
    for tok in tokens:
        if tok.type == tokenize.NAME and not after_dot and tok.string not in RESERVED \
                and not __import__("keyword").iskeyword(tok.string):
            if prev is not None and prev.string in ("def", "@"):
                defs.add(tok.string)
            elif tok.string not in names:
                names.append(tok.string)
        after_dot = tok.type == tokenize.OP and tok.string == "."
        prev = tok
    names = [n for n in names if n not in defs and not n.startswith(("h", "dh", "scaled", "clamped", "shifted", "logged",
                                                                       "wrapper", "fn", "args", "kwargs"))]
    pool = [n for n in ODD_NAMES if n not in defs]
    rng.shuffle(pool)
    mapping = {}
    for n in names:
        if rng.random() < 0.8 and pool:
            mapping[n] = pool.pop()
    # a name that the mapping frees but another name takes is fine; a target equal to a kept name is not
    kept = set(names) - set(mapping)
    mapping = {k: v for k, v in mapping.items() if v not in kept}
    out, after_dot = [], False
    for tok in tokens:
        s = tok.string
        if tok.type == tokenize.NAME and not after_dot and s in mapping:
            tok = tok._replace(string=mapping[s])
        after_dot = tok.type == tokenize.OP and s == "."
        out.append(tok)
    return tokenize.untokenize(out), mapping


def odd_names(seed: int) -> Program:
    rng = random.Random(seed)
    base = rng.choice([containers, arrays, elements, carried, helpers])(seed * 7 + 3)
    source, mapping = rename(base.source, rng)
    return Program(source, base.args, base.diff, "names", [base.category] + base.tags, seed)


# ---------------------------------------------------------------- issue 27's families

# axis keywords: (the call, with {0}, {1} for its operands and {kw} for the keywords; the operands' names;
# {keyword: values}); a combination NumPy refuses is drawn again
_AXES = (None, 0, 1, 2, -1, -2, -3, (0, 1), (2, 0), (-1, 1), (0, 1, 2))
_AXIS_FORMS: list[tuple[str, int, dict[str, tuple]]] = [
    ("np.sum({0}{kw})", 1, {"axis": _AXES, "keepdims": (False, True)}),
    ("np.mean({0}{kw})", 1, {"axis": _AXES, "keepdims": (False, True)}),
    ("np.prod({0}{kw})", 1, {"axis": _AXES, "keepdims": (False, True)}),
    ("np.max({0}{kw})", 1, {"axis": _AXES, "keepdims": (False, True)}),
    ("np.min({0}{kw})", 1, {"axis": _AXES, "keepdims": (False, True)}),
    ("np.std({0}{kw})", 1, {"axis": _AXES, "keepdims": (False, True)}),
    ("np.var({0}, ddof=1{kw})", 1, {"axis": _AXES}),
    ("np.linalg.norm({0}{kw})", 1, {"axis": (None, 0, 1, -1, (0, 1), (2, 1)), "keepdims": (False, True)}),
    ("np.median({0}{kw})", 1, {"axis": _AXES}),
    ("np.cumsum({0}{kw})", 1, {"axis": (None, 0, 1, 2, -1, -2)}),
    ("np.cumprod({0}{kw})", 1, {"axis": (0, 1, 2, -1)}),
    ("np.flip({0}{kw})", 1, {"axis": _AXES}),
    ("np.moveaxis({0}{kw})", 1, {"source": (0, 1, 2, -1, (0, 1), (2, 0)), "destination": (0, 1, -1, -2, (1, 0), (0, 2))}),
    ("np.swapaxes({0}{kw})", 1, {"axis1": (0, 1, 2, -1), "axis2": (0, 1, -2, -3)}),
    ("np.transpose({0}{kw})", 1, {"axes": (None, (1, 0, 2), (2, 0, 1), (-1, 0, 1), (0, 2, 1))}),
    ("np.concatenate([{0}, {1}]{kw})", 2, {"axis": (None, 0, 1, 2, -1, -2)}),
    ("np.stack([{0}, {1}]{kw})", 2, {"axis": (0, 1, 2, 3, -1, -2)}),
    ("np.take_along_axis({0}, np.argsort({1}{kw}){kw})", 2, {"axis": (0, 1, 2, -1, -2)}),
    ("np.cross({0}[:, :, :3], {1}[:, :, :3]{kw})", 2, {"axisa": (-1, 0, 1), "axisb": (-1, 0, 1, 2),
                                                    "axisc": (-1, 0, 1, 2)}),
    ("np.cross({0}[:, :3, :3], {1}[:, :3, :3]{kw})", 2, {"axis": (0, 1, 2, -1)}),
    ("np.expand_dims({0}{kw})", 1, {"axis": (0, 1, 3, -1, (0, 2))}),
    ("np.diff({0}{kw})", 1, {"axis": (0, 1, 2, -1)}),
    ("np.roll({0}, 2{kw})", 1, {"axis": (None, 0, 1, 2, -1)}),
    ("np.trace({0}[:, :3, :3]{kw})", 1, {"axis1": (0, 1, 2, -1), "axis2": (0, 1, 2, -2)}),
    ("np.diagonal({0}[:, :3, :3]{kw})", 1, {"axis1": (0, 1, 2), "axis2": (1, 2, -1, -3)}),
    ("np.tensordot({0}, {1}{kw})", 2, {"axes": (0, 1, ([1, 2], [1, 2]), ([0], [0]), ([2, 1], [2, 1]))}),
    ("np.sort({0}{kw})", 1, {"axis": (None, 0, 1, 2, -1)}),
    ("np.quantile({0}, 0.3{kw})", 1, {"axis": _AXES}),
    ("np.rot90({0}, 1{kw})", 1, {"axes": ((0, 1), (1, 2), (2, 0), (-1, 0))}),
    ("np.repeat({0}, 2{kw})", 1, {"axis": (None, 0, 1, -1)}),
    ("np.split({0}, 2{kw})[1]", 1, {"axis": (0, 2, -1)}),
    ("np.trapezoid({0}, dx=0.5{kw})", 1, {"axis": (0, 1, -1)}),
]


def axes(seed: int) -> Program:
    """f(x, y): two (2, 3, 4) arrays through calls with random axis keywords (reductions, cross, moveaxis,
    concatenate, stack, take_along_axis, tensordot...), each result summed with weights (issue 27, item 1: np.cross's
    reverse rule ignored axisa/axisb/axisc)."""
    rng = random.Random(seed)
    nrng = np.random.default_rng(seed)
    # distinct values (a sort, a median or an extremum picks one element: no ties), away from zero
    values = {"x": (nrng.permutation(np.linspace(0.3, 1.2, 24)) * nrng.choice([-1.0, 1.0], 24)).reshape(2, 3, 4),
              "y": nrng.permutation(np.linspace(0.31, 1.19, 24)).reshape(2, 3, 4)}
    lines, terms, tags = ["def f(x, y):"], [], []
    for k in range(rng.randint(1, 3)):
        for _ in range(30):
            form, count, keywords = rng.choice(_AXIS_FORMS)
            operands = [rng.choice(["x", "y"]) for _ in range(count)]
            chosen = {name: rng.choice(options) for name, options in keywords.items()}
            if "axis" in chosen and form.startswith("np.cross") and "axisa" in keywords:
                chosen.pop("axis")
            text = "".join(f", {name}={value!r}" for name, value in chosen.items())
            call = form.format(*operands, kw=text)
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    result = eval(call, {"np": np}, values)
            except Exception:
                continue
            if np.size(result) == 0 or not np.all(np.isfinite(result)):
                continue
            break
        else:
            continue
        name = f"t{k}"
        lines.append(f"    {name} = {call}")
        weights = np.round(nrng.uniform(-1.0, 1.0, np.shape(result)), 2)
        terms.append(f"np.sum({name} * {np.array2string(weights, separator=', ', threshold=10**6)})"
                     if np.ndim(result) else f"{name} * {float(weights)!r}")
        tags.append(form.split("(")[0])
    if not terms:
        terms = ["np.sum(x * y)"]
    lines.append("    return " + " + ".join(terms))
    return Program("\n".join(lines) + "\n", (values["x"], values["y"]), (0, 1), "axes", tags, seed)


# module-attribute helpers changed between calls: the derivative, made before, must follow the change
_STALE_BODIES = ["x * {c} + x ** 2", "np.sin(x) * {c}", "x ** 3 - {c} * x", "np.tanh({c} * x) + x"]
_STALE_CHANGES = [("hmod.helper = helper_b", "a module's attribute rebound"),
                  ("helper_a.__code__ = helper_b.__code__", "__code__ replaced (autoreload)"),
                  ("helper_a.__defaults__ = ({d},)", "a helper's default changed"),
                  ("Ops.helper = staticmethod(helper_b)", "a class attribute rebound"),
                  ("helper = helper_b", "a global rebound"),
                  ("helper_a.__kwdefaults__ = {{'k': {d}}}", "a keyword default changed")]


def stale(seed: int) -> Program:
    """f(x, v) calls a helper through a module attribute, a class, a global name, with defaults; between two calls
    of the same derivative the helper is rebound, its __code__ replaced or a default changed (issue 27, item 6:
    the existing derivative, and a fresh one, kept the old helper)."""
    rng = random.Random(seed)
    first, second = rng.sample(_STALE_BODIES, 2)
    c = const(rng)
    change, tag = rng.choice(_STALE_CHANGES)
    change = change.format(d=round(rng.uniform(0.5, 2.5), 2))
    source = (f"hmod = types.ModuleType('hmod_fuzz')\n\n\n"
              f"def helper_a(x, c={c}, *, k=1.0):\n    return ({first.format(c='c')}) * k\n\n\n"
              f"def helper_b(x, c={c}, *, k=1.0):\n    return ({second.format(c='c')}) * k\n\n\n"
              f"hmod.helper = helper_a\nhelper = helper_a\n\n\n"
              f"class Ops:\n    helper = staticmethod(helper_a)\n\n\n")
    reach = {"module": "hmod.helper({})", "class": "Ops.helper({})", "global": "helper({})"}
    how = "class" if change.startswith("Ops") else "global" if change.startswith("helper =") else \
        "module" if change.startswith("hmod") else rng.choice(list(reach))
    call = reach[how]
    body = rng.choice([f"return {call.format('x')} * np.sum(v) + np.sum({call.format('v')})",
                       f"s = 0.0\n    for w in v:\n        s = s + {call.format('w * x')}\n    return s",
                       f"return np.sum(np.sin({call.format('v')}) * x) + {call.format('x')}"])
    source += f"def f(x, v):\n    {body}\n"
    args = (random_float(rng), np.round(np.random.default_rng(seed).uniform(-1.0, 1.0, 3), 3))
    return Program(source, args, (0, 1), "stale", [tag, how], seed, change=change)


class Tagged(np.ndarray):
    """A subclass of ndarray that changes nothing NumPy computes: read as an array."""


_SUBCLASS_BODIES = ["np.mean(x * x) + np.sum(y)", "np.sum(x * y) * np.sum(x)", "np.sum(np.sin(x) + y ** 2)",
                    "np.max(x) * np.mean(y)", "np.sum(x @ y.T)"]


def subclasses(seed: int) -> Program:
    """f(x, y) over arrays, one of them a subclass of ndarray: a masked array or np.matrix must be refused (never a
    wrong number: issue 27, item 7), a subclass that changes no hook read as an array."""
    rng = random.Random(seed)
    nrng = np.random.default_rng(seed)
    x = np.round(nrng.uniform(-1.0, 1.0, (3, 3)), 3)
    y = np.round(nrng.uniform(-1.0, 1.0, (3, 3)), 3)
    kind = rng.choice(["masked", "matrix", "tagged", "plain"])
    refuse = ""
    if kind == "masked":
        x = np.ma.array(x, mask=nrng.random((3, 3)) < 0.3)
        refuse = "MaskedArray"
    elif kind == "matrix":
        x = np.asmatrix(x)
        refuse = "matrix"
    elif kind == "tagged":
        x = x.view(Tagged)
    body = rng.choice(_SUBCLASS_BODIES)
    return Program(f"def f(x, y):\n    return float({body})\n", (x, y), (0, 1) if rng.random() < 0.7 else (1,),
                   "subclasses", [kind], seed, must_refuse=refuse)


_KNOWN_WRITES = ["operator.setitem(y, slice(None), {e})", "operator.setitem(y, 1, {s})",
                 "operator.__setitem__(y, slice(0, 2), ({e})[:2])", "np.copyto(y, {e})", "np.copyto(y, {e}, where=W > 0)",
                 "np.place(y, W > 0, ({e})[W > 0])", "np.put(y, [2, 0], ({e})[:2])", "operator.iadd(y, {e})",
                 "operator.imul(y, {e})", "y = operator.isub(y, {e})"]
_UNKNOWN_WRITES = ["np.ndarray.__setitem__(y, slice(None), {e})", "np.ndarray.fill(y, {s})",
                   "np.random.default_rng(0).shuffle(y)"]


def writers(seed: int) -> Program:
    """f(x): an array filled or changed by a call that writes into it: followed where its semantics are known
    (operator.setitem, operator.iadd, np.copyto, np.place, np.put), refused otherwise; never a silent zero
    (issue 27, item 5)."""
    rng = random.Random(seed)
    nrng = np.random.default_rng(seed)
    exprs = ["np.sin(x)", "x * x", "x * 2.0 + 1.0", "np.exp(-x)"]
    scalars = ["x[0] * x[1]", "np.sum(x)", "x[2] ** 2"]
    start = rng.choice(["np.zeros(3)", "x * 1.0", "np.ones(3)", "x ** 2"])
    lines = ["def f(x):", f"    y = {start}"]
    known = rng.random() < 0.8
    for _ in range(rng.randint(1, 2)):
        write = rng.choice(_KNOWN_WRITES if known else _UNKNOWN_WRITES)
        lines.append("    " + write.format(e=rng.choice(exprs), s=rng.choice(scalars)))
    lines.append(rng.choice(["    return np.sum(y * W)", "    return np.sum(np.sin(y)) + np.sum(y * x)",
                             "    return np.sum(y ** 2) * x[0]"]))
    weights = np.round(nrng.uniform(-1.0, 1.0, 3), 2)
    source = f"W = np.array({weights.tolist()!r})\n\n\n" + "\n".join(lines) + "\n"
    return Program(source, (np.round(nrng.uniform(0.2, 1.0, 3), 3),), (0,), "writers",
                   ["known" if known else "unknown"], seed)


_LAMBDA_LINES = [
    "g = lambda a: (lambda b: b * {c} + b * b)(a * x)\n    return g(y) + x",
    "return sum(map(lambda v: (lambda w: w ** 2 + {c} * w)(v * y), [x, y]))",
    "return (lambda a: (lambda b: a * b + {c})(y))(x * x)",
    "sq = lambda t: t * t\n    return sq((lambda a: a * y + {c})(x)) + sq(y)",
    "pick = lambda a, b: (lambda s: s * a + (1.0 - s) * b)({c})\n    return pick(x * y, np.sin(x))",
    "return (lambda p: p(x) * p(y))(lambda t: np.tanh(t * {c}))",
    "acc = 0.0\n    for v in [x, y]:\n        acc = acc + (lambda a: (lambda b: a * b)(a + {c}))(v)\n    return acc",
]
_NESTED_GRADS = ["return s2s.grad(lambda u: s2s.grad(lambda w: w ** 3 * {c})(u))(x) * y",
                 "return s2s.grad(lambda u: (lambda w: w ** 3)(u) * {c})(x) + y * x"]


def lambdas(seed: int) -> Program:
    """f(x, y) with lambdas nested on one line: a lambda called inside a lambda, given to map, to another lambda,
    lambdas in a loop; with S2S_FUZZ_NESTED_GRADS=1 also the natural JAX spelling of a derivative inside a
    derivative, `s2s.grad(lambda u: s2s.grad(lambda w: ...)(u))` (issue 27, item 10: a RecursionError)."""
    import os
    rng = random.Random(seed)
    pool = _LAMBDA_LINES + (_NESTED_GRADS if os.environ.get("S2S_FUZZ_NESTED_GRADS") == "1" else [])
    body = rng.choice(pool).format(c=const(rng))
    return Program(f"def f(x, y):\n    {body}\n", (random_float(rng), random_float(rng)), (0, 1), "lambdas",
                   ["nested grad" if "s2s.grad" in body else "lambda"], seed)


_TREE_FORMS = ["h1(({a}, {b}), {c})", "h2([{a}, {b}, {c}])", "h3(({a}, {b}))", "h4([{a}, {b}], 0.5)", "h2(({a}, {b}))",
               "{a} * {b} + {c}", "np.sin({a}) + {b}", "sum([{a}, {b}])", "sum(({a}, {b}), {c})",
               "np.sum([{a}, {a}], axis=0) * {b}", "h5({{'w': {a}, 'u': {b}}})", "h6([({a}, {b}), ({c}, {a})])"]
_TREE_HELPERS = ("def h1(p, v):\n    a, c = p\n    return a * v + c\n\n\n"
                 "def h2(ps):\n    out = ps[0]\n    for q in ps[1:]:\n        out = out + q\n    return out\n\n\n"
                 "def h3(p):\n    return p[0] * p[1]\n\n\n"
                 "def h4(t, k):\n    x, y = t\n    return np.tanh(x + k * y)\n\n\n"
                 "def h5(d):\n    return d['w'] * 0.5 + d['u']\n\n\n"
                 "def h6(layers):\n    h = 0.0\n    for w, b in layers:\n        h = h + w * b\n    return h\n\n\n")


def trees(seed: int) -> Program:
    """f(W, b, c, s): arrays of shapes (2, 3), (3,), (2, 1) and a float, given to helpers in (W, b) tuples, lists
    and dicts, summed with the builtin sum, accumulated in loops: broadcasting inside (issue 27, item 8: sum([W, b])
    gave b a (2, 3) adjoint, or crashed with 'non-broadcastable output operand')."""
    rng = random.Random(seed)
    names = ["W", "b", "c", "s"]
    lines = ["def f(W, b, c, s):"]
    tags = []
    for k in range(rng.randint(2, 4)):
        a, b, c = rng.choice(names), rng.choice(names), rng.choice(names)
        form = rng.choice(_TREE_FORMS)
        value = form.format(a=a, b=b, c=c)
        target = f"t{k}"
        if rng.random() < 0.3:
            lines.append(f"    {target} = {a}\n    for q in [{b}, {c}]:\n        {target} = {target} + q * {a}")
            tags.append("loop")
        else:
            lines.append(f"    {target} = {value}")
            tags.append(form.split("(")[0])
        names.append(target)
    lines.append("    return " + " + ".join(f"np.sum({n} ** 2)" for n in names[4:]))
    nrng = np.random.default_rng(seed)
    args = (np.round(nrng.uniform(-1, 1, (2, 3)), 3), np.round(nrng.uniform(-1, 1, 3), 3),
            np.round(nrng.uniform(-1, 1, (2, 1)), 3), random_float(rng))
    return Program(_TREE_HELPERS + "\n".join(lines) + "\n", args, (0, 1, 2, 3), "trees", tags, seed)


GENERATORS: dict[str, Callable[[int], Program]] = {"containers": containers, "arrays": arrays, "elements": elements,
                                                   "carried": carried, "broadcast": broadcast,
                                                   "helpers": helpers, "names": odd_names, "axes": axes,
                                                   "stale": stale, "subclasses": subclasses, "writers": writers,
                                                   "lambdas": lambdas, "trees": trees}


# ---------------------------------------------------------------- defining and running

_counter = itertools.count()


def define(source: str, name: str = "f") -> Callable:
    import s2s
    filename = f"<fuzz-{next(_counter)}>"
    linecache.cache[filename] = (len(source), None, source.splitlines(keepends=True), filename)
    scope = {"math": math, "np": np, "numpy": np, "functools": functools, "s2s": s2s, "operator": operator,
             "types": types}
    exec(compile(source, filename, "exec"), scope)
    return scope[name]


def leaves(tree: Any) -> list[Any]:
    if isinstance(tree, (list, tuple)):
        return [leaf_ for item in tree for leaf_ in leaves(item)]
    return [tree]


def flatten(tree: Any) -> np.ndarray:
    parts = [np.ravel(np.asarray(x, dtype=float)) for x in leaves(tree)]
    return np.concatenate(parts) if parts else np.zeros(0)


def unflatten(like: Any, flat: np.ndarray, start: int = 0) -> tuple[Any, int]:
    if isinstance(like, (list, tuple)):
        items = []
        for item in like:
            value, start = unflatten(item, flat, start)
            items.append(value)
        return type(like)(items), start
    if isinstance(like, np.ndarray):
        n = like.size
        return flat[start:start + n].reshape(like.shape).copy(), start + n
    return float(flat[start]), start + 1


def same_structure(grad: Any, arg: Any) -> str:
    """'' when grad has arg's structure and types (tuple for a tuple, list for a list, array shape)."""
    if isinstance(arg, (list, tuple)):
        if type(grad) is not type(arg):
            return f"a {type(arg).__name__} argument got a {type(grad).__name__} gradient"
        if len(grad) != len(arg):
            return f"a gradient of {len(grad)} items for {len(arg)}"
        return next((d for g, a in zip(grad, arg) if (d := same_structure(g, a))), "")
    if isinstance(arg, np.ndarray):
        return "" if np.shape(grad) == arg.shape else f"gradient shape {np.shape(grad)} for {arg.shape}"
    if isinstance(grad, (list, tuple)) or np.ndim(grad) != 0:
        return f"a float argument got a gradient {grad!r}"
    return ""


def call_with(f: Callable, args: tuple, i: int, flat: np.ndarray) -> float:
    new = list(copy.deepcopy(args))
    new[i] = unflatten(args[i], flat)[0]
    return float(f(*new))


def central(f: Callable, args: tuple, i: int, eps: float) -> np.ndarray:
    x = flatten(args[i])
    out = np.zeros_like(x)
    for k in range(x.size):
        plus, minus = x.copy(), x.copy()
        plus[k] += eps
        minus[k] -= eps
        out[k] = (call_with(f, args, i, plus) - call_with(f, args, i, minus)) / (2 * eps)
    return out


@dataclass
class Outcome:
    status: str             # ok, refused, crash, wrong
    detail: str = ""
    signature: str = ""


class Unusable(Exception):
    """The program has no checkable derivative at its point (not finite, a kink nearby, Python raises)."""


def close(a: Any, b: Any, scale: float) -> bool:
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    return a.shape == b.shape and bool(np.allclose(a, b, rtol=1e-4, atol=1e-6 * max(1.0, scale)))


def exception_signature(exc: BaseException) -> str:
    tb = traceback.extract_tb(exc.__traceback__)
    frames = [fr for fr in tb if "/s2s/" in fr.filename or fr.filename.startswith("<s2s")]
    where = f"{frames[-1].filename.rsplit('/', 1)[-1]}:{frames[-1].name}" if frames else "?"
    if frames and frames[-1].filename.startswith("<s2s"):
        where = "generated:" + frames[-1].name
    message = str(exc).split("\n")[0]
    message = re.sub(r"<[^>]*>", "<>", message)
    message = re.sub(r"\d+(\.\d+)?", "N", message)
    message = re.sub(r"'[^']*'", "'_'", message)
    return f"{type(exc).__name__} at {where}: {message[:90]}"


def prepare(program: Program) -> tuple[Callable, float, dict[int, np.ndarray]]:
    """f, its value and the central differences of each differentiated argument; raises Unusable."""
    f = define(program.source)
    try:
        value = f(*copy.deepcopy(program.args))
    except Exception as exc:
        raise Unusable(f"Python raises {type(exc).__name__}: {exc}") from None
    if not isinstance(value, (float, int, np.floating)) or not np.isfinite(value) or abs(value) > 1e5:
        raise Unusable(f"value {value!r}")
    fd = {}
    for i in program.diff:
        try:
            coarse, fine = central(f, program.args, i, 1e-4), central(f, program.args, i, 1e-6)
        except Exception as exc:
            raise Unusable(f"Python raises {type(exc).__name__} near the point") from None
        if not np.all(np.isfinite(fine)) or not np.allclose(coarse, fine, rtol=1e-3, atol=1e-5):
            raise Unusable("a branch or kink near the point")
        fd[i] = fine
    return f, float(value), fd


def refusal(exc: BaseException) -> Outcome:
    """An S2SError: a refusal, unless it is the IR verifier failing (a crash) or it points into s2s itself
    instead of the user's code ('misrefused')."""
    first = str(exc).split("\n")[0]
    if type(exc).__name__ == "InvalidIR":
        return Outcome("crash", first, exception_signature(exc))
    loc = getattr(exc, "loc", None)
    if loc is not None and re.search(r"[/\\]s2s[/\\]([a-z_]+[/\\])*[a-z_]+\.py", str(getattr(loc, "file", "") or first.split(": ")[0])):
        return Outcome("misrefused", first, exception_signature(exc))
    return Outcome("refused", first, exception_signature(exc))


def check_mode(program: Program, f: Callable, value: float, fd: dict[int, np.ndarray], mode: str) -> Outcome:
    import s2s
    from s2s.driver.selfcheck import ReadingMismatch
    optimize = not mode.endswith("noopt")
    made: dict[str, Any] = {}        # the derivative object of this mode, called again after program.change

    def attempt(value: float, fd: dict[int, np.ndarray]) -> Outcome | None:
        scale = max([abs(value)] + [float(np.max(np.abs(d))) for d in fd.values() if d.size])
        if mode == "auto" or mode.startswith("reverse"):
            wrt, explicit = program.diff, {"mode": "reverse"}
            if mode == "auto":      # the default mode; along one float argument, if there is one
                wrt = next(((i,) for i in program.diff if isinstance(program.args[i], float)), wrt)
                explicit = {}
            if "derivative" not in made:
                made["derivative"] = s2s.value_and_grad(f, wrt=wrt, optimize=optimize, check=True, **explicit)
            got_value, grads = made["derivative"](*copy.deepcopy(program.args))
            if not close(got_value, value, scale):
                return Outcome("wrong", f"value {got_value!r} instead of {value!r}", "value")
            for i, g in zip(wrt, grads):     # the numbers first: a wrong structure must not hide them
                try:
                    flat = flatten(g)
                except Exception:
                    flat = None
                if flat is None or flat.shape != fd[i].shape or not close(flat, fd[i], scale):
                    return Outcome("wrong", f"gradient of argument {i}: {g!r} instead of {fd[i]!r}", "gradient")
            for i, g in zip(wrt, grads):
                if (d := same_structure(g, program.args[i])):
                    return Outcome("wrong", f"argument {i}: {d}", "structure: " + re.sub(r"\d+", "N", d))
        elif mode == "hvp":
            return check_hvp(program, f, value, fd, scale)
        else:
            rng = np.random.default_rng(program.seed)
            tangents, expected = [], 0.0
            for i, a in enumerate(program.args):
                if i in program.diff:
                    direction = rng.uniform(-1.0, 1.0, size=flatten(a).size)
                    tangents.append(unflatten(a, direction)[0])
                    expected += float(direction @ fd[i])
                else:
                    tangents.append(None)
            got_value, got = s2s.jvp(f, copy.deepcopy(program.args), tangents, optimize=optimize, check=True)
            if not close(got_value, value, scale):
                return Outcome("wrong", f"value {got_value!r} instead of {value!r}", "value")
            if np.ndim(got) != 0 or not close(got, expected, scale):
                return Outcome("wrong", f"directional derivative {got!r} instead of {expected!r} "
                                        f"along {tangents!r}", "derivative")
        return None

    try:
        if program.must_refuse:
            made["derivative"] = s2s.value_and_grad(f, wrt=program.diff, optimize=optimize, check=True, **(
                {"mode": "forward" if mode.startswith("forward") else "reverse"} if mode != "auto" else {}))
            try:
                made["derivative"](*copy.deepcopy(program.args))
            except s2s.S2SError as exc:
                if re.search(program.must_refuse, str(exc)):
                    return Outcome("refused", str(exc).split("\n")[0], "refused: " + program.must_refuse)
                raise
            return Outcome("wrong", f"an argument of {program.must_refuse} was not refused", "subclass not refused")
        failed = attempt(value, fd)
        if failed is not None:
            return failed
        if program.change:           # the helper changes: the same derivative must follow it
            exec(program.change, f.__globals__)
            changed = prepare_again(program, f)
            if changed is None:
                return Outcome("ok", "no checkable derivative after the change")
            failed = attempt(*changed)
            if failed is not None:
                failed.detail = f"after `{program.change}`: {failed.detail}"
                failed.signature = "after a change: " + failed.signature
                return failed
    except ReadingMismatch as exc:
        return Outcome("wrong", "checking mode: " + str(exc).split("\n")[0], "reading mismatch")
    except s2s.S2SError as exc:
        return refusal(exc)
    except RecursionError as exc:
        return Outcome("crash", "RecursionError", "RecursionError")
    except Exception as exc:
        return Outcome("crash", f"{type(exc).__name__}: {exc}".split("\n")[0][:300], exception_signature(exc))
    return Outcome("ok")


def prepare_again(program: Program, f: Callable) -> tuple[float, dict[int, np.ndarray]] | None:
    """f's value and central differences after program.change, or None when they are not checkable."""
    try:
        value = f(*copy.deepcopy(program.args))
        fd = {}
        for i in program.diff:
            coarse, fine = central(f, program.args, i, 1e-4), central(f, program.args, i, 1e-6)
            if not np.all(np.isfinite(fine)) or not np.allclose(coarse, fine, rtol=1e-3, atol=1e-5):
                return None
            fd[i] = fine
    except Exception:
        return None
    return float(value), fd


def check_hvp(program: Program, f: Callable, value: float, fd: dict[int, np.ndarray], scale: float) -> Outcome:
    """Forward over reverse: hvp(f, wrt=i)(*args, v) against second differences of f along v."""
    import s2s
    i = program.diff[0]
    arg = program.args[i]
    rng = np.random.default_rng(program.seed + 1)
    v = float(rng.uniform(0.5, 1.0)) if isinstance(arg, float) else rng.uniform(-1.0, 1.0, np.shape(arg))

    def along(t: float) -> float:
        new = list(copy.deepcopy(program.args))
        new[i] = arg + t * v
        return float(f(*new))

    def second(h: float) -> float:      # d/dt grad f(x + t v) . v = v^T H v; H v itself from first differences
        return (along(h) - 2.0 * along(0.0) + along(-h)) / (h * h)

    coarse, fine = second(1e-3), second(1e-4)
    if not np.isclose(coarse, fine, rtol=1e-3, atol=1e-4 * max(1.0, scale)):
        return Outcome("ok", "no checkable second derivative")
    got = s2s.hvp(f, wrt=i, check=True)(*copy.deepcopy(program.args), copy.deepcopy(v))
    if np.shape(got) != np.shape(arg):
        return Outcome("wrong", f"hvp of shape {np.shape(got)} for an argument of shape {np.shape(arg)}", "hvp shape")
    vhv = float(np.sum(np.asarray(got) * v))
    if not np.isclose(vhv, coarse, rtol=1e-3, atol=1e-4 * max(1.0, scale)):
        return Outcome("wrong", f"v.Hv = {vhv!r} instead of {coarse!r} (v = {v!r})", "hvp")
    return Outcome("ok")


def modes_for(program: Program) -> tuple[str, ...]:
    """The four first-order modes, and, for one program in three (it is the slowest check), hvp when the
    first differentiated argument is a float or an array."""
    first = program.args[program.diff[0]] if program.diff else None
    return MODES + (("hvp",) if isinstance(first, (float, np.ndarray)) and program.seed % 3 == 0 else ())


def run_program(program: Program, modes: tuple[str, ...] | None = None) -> dict[str, Outcome] | None:
    """The outcome in each mode, or None when the program has no checkable derivative at its point."""
    import s2s
    modes = modes or modes_for(program)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if program.must_refuse:         # an argument s2s refuses: no derivative to compare
            return {mode: check_mode(program, define(program.source), 0.0, {}, mode) for mode in modes
                    if mode != "hvp"}
        outcomes = {}
        for mode in modes:              # (a program that changes a helper: defined anew for each mode)
            if mode == modes[0] or program.change:
                try:
                    f, value, fd = prepare(program)
                except Unusable:
                    return None
                except s2s.S2SError as exc:     # s2s.grad(helper) at the module level refuses the helper
                    outcome = refusal(exc)
                    outcome.signature = "defining: " + outcome.signature
                    return {mode: outcome for mode in modes}
            outcomes[mode] = check_mode(program, f, value, fd, mode)
        return outcomes


def generate(category: str, seed: int) -> Program:
    return GENERATORS[category](seed)


# ---------------------------------------------------------------- reducing a failure

def _blocks(lines: list[str]) -> list[tuple[int, int]]:
    """(start, end) of each statement with its indented body."""
    spans = []
    for i, line in enumerate(lines):
        if not line.strip() or line.lstrip().startswith(("def ", "@", "#")):
            continue
        indent = len(line) - len(line.lstrip())
        j = i + 1
        while j < len(lines) and lines[j].strip() and len(lines[j]) - len(lines[j].lstrip()) > indent:
            j += 1
        spans.append((i, j))
    return spans


def reduce(program: Program, mode: str, signature: str, budget: float = 60.0) -> Program:
    """A smaller program (statements removed, expressions replaced by their parts) with the same failure."""
    deadline = time.time() + budget

    def fails(source: str) -> bool:
        try:
            compile(source, "<reduce>", "exec")
        except SyntaxError:
            return False
        candidate = Program(source, program.args, program.diff, program.category, program.tags, program.seed)
        try:
            outcomes = run_program(candidate, (mode,))
        except Exception:
            return False
        return outcomes is not None and outcomes[mode].status in ("wrong", "crash", "misrefused") \
            and outcomes[mode].signature == signature

    source = program.source
    changed = True
    while changed and time.time() < deadline:
        changed = False
        lines = source.splitlines()
        for start, end in sorted(_blocks(lines), key=lambda s: s[0] - s[1]):
            if time.time() > deadline:
                break
            for replacement in ([], [lines[start][:len(lines[start]) - len(lines[start].lstrip())] + "pass"]):
                trial = lines[:start] + replacement + lines[end:]
                text = "\n".join(trial) + "\n"
                if fails(text):
                    source, changed = text, True
                    break
            if changed:
                break
        if changed:
            continue
        # unused helper functions and decorators
        chunks = source.split("\n\n")
        for i in range(len(chunks) - 1):
            text = "\n\n".join(chunks[:i] + chunks[i + 1:])
            if fails(text):
                source, changed = text, True
                break
        if changed:
            continue
        # a parenthesised sub-expression replaced by one of its operands or a constant
        for m in sorted(re.finditer(r"\([^()]*\)", source), key=lambda m: -len(m.group())):
            if time.time() > deadline:
                break
            inner = m.group()[1:-1]
            options = [p.strip() for p in re.split(r" [-+*/] ", inner) if p.strip()] + ["1.0"]
            for option in options:
                prefix = source[:m.start()]
                if prefix and (prefix[-1].isalnum() or prefix[-1] in "_]"):
                    continue       # a call's or an index's parentheses
                text = prefix + "(" + option + ")" + source[m.end():]
                if text != source and fails(text):
                    source, changed = text, True
                    break
            if changed:
                break
    return Program(source, program.args, program.diff, program.category, program.tags, program.seed)


# ---------------------------------------------------------------- the batch runner

def _work(item: tuple[str, int]) -> tuple[str, int, dict[str, tuple[str, str, str]] | None, list[str]]:
    category, seed = item
    import signal

    def timeout(*_):
        raise TimeoutError("the program took more than 60 s")
    signal.signal(signal.SIGALRM, timeout)
    signal.alarm(60)
    try:
        program = generate(category, seed)
        outcomes = run_program(program)
    except TimeoutError:
        return category, seed, {m: ("crash", "timeout", "timeout") for m in MODES}, []
    except Exception as exc:   # a bug of the fuzzer itself
        return category, seed, {m: ("fuzzer-error", repr(exc) + traceback.format_exc()[-300:], repr(exc)[:80])
                                for m in MODES}, []
    finally:
        signal.alarm(0)
    if outcomes is None:
        return category, seed, None, program.tags
    if any(o.status not in ("ok", "refused") for o in outcomes.values()):
        program.tags = program.tags + ["source:" + program.source, "args:" + repr(program.args)]
    return category, seed, {m: (o.status, o.detail, o.signature) for m, o in outcomes.items()}, program.tags


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("-n", type=int, default=1000, help="programs per category")
    parser.add_argument("--start", type=int, default=0, help="first seed")
    parser.add_argument("--category", action="append", choices=CATEGORIES, help="categories (default all)")
    parser.add_argument("-j", type=int, default=1, help="processes")
    parser.add_argument("--show", type=int, help="print the program of this seed and its outcomes")
    parser.add_argument("--reduce", action="store_true", help="reduce one program per failure class")
    parser.add_argument("--json", help="write every failure to this file (JSON lines)")
    options = parser.parse_args(argv)
    categories = options.category or list(CATEGORIES)
    if options.show is not None:
        for category in categories:
            program = generate(category, options.show)
            print(program.describe())
            print(run_program(program))
        return 0
    items = [(c, s) for c in categories for s in range(options.start, options.start + options.n)]
    if options.j > 1:
        import multiprocessing
        pool = multiprocessing.Pool(options.j, maxtasksperchild=200)
        results = pool.imap_unordered(_work, items, chunksize=4)
    else:
        results = map(_work, items)
    counts: dict[tuple[str, str], dict[str, int]] = {}
    classes: dict[tuple[str, str, str], list[tuple[str, int, str]]] = {}
    unusable: dict[str, int] = {}
    started = time.time()
    sink = open(options.json, "w") if options.json else None
    for done, (category, seed, outcomes, tags) in enumerate(results, 1):
        if outcomes is None:
            unusable[category] = unusable.get(category, 0) + 1
            continue
        for mode, (status, detail, signature) in outcomes.items():
            row = counts.setdefault((category, mode), {})
            row[status] = row.get(status, 0) + 1
            if status in ("wrong", "crash", "misrefused", "fuzzer-error"):
                classes.setdefault((status, signature, mode), []).append((category, seed, detail))
            if status != "ok":
                if sink:
                    import json
                    sink.write(json.dumps({"category": category, "seed": seed, "mode": mode, "status": status,
                                           "signature": signature, "detail": detail[:500], "tags": tags}) + "\n")
                    sink.flush()
        if done % 200 == 0:
            print(f"... {done}/{len(items)} in {time.time() - started:.0f} s", file=sys.stderr, flush=True)
    statuses = ["wrong", "crash", "misrefused", "refused", "ok", "fuzzer-error"]
    print(f"{len(items)} programs in {time.time() - started:.0f} s; no checkable derivative at the point: "
          + ", ".join(f"{c} {n}" for c, n in sorted(unusable.items())))
    print(f"{'category':12} {'mode':14} " + " ".join(f"{s:>8}" for s in statuses))
    total: dict[str, dict[str, int]] = {}
    for (category, mode), row in sorted(counts.items()):
        print(f"{category:12} {mode:14} " + " ".join(f"{row.get(s, 0):8}" for s in statuses))
        for s in statuses:
            total.setdefault(mode, {}).setdefault(s, 0)
            total[mode][s] += row.get(s, 0)
    for mode, row in total.items():
        print(f"{'all':12} {mode:14} " + " ".join(f"{row.get(s, 0):8}" for s in statuses))
    print("\nfailure classes (status, signature, mode: count, first seeds):")
    for (status, signature, mode), hits in sorted(classes.items(), key=lambda kv: -len(kv[1])):
        first = ", ".join(f"{c}:{s}" for c, s, _ in hits[:4])
        print(f"  {len(hits):5}  {status:6} {mode:14} {signature}\n         {first}\n         {hits[0][2][:200]}")
    if options.reduce:
        seen = set()
        for (status, signature, mode), hits in sorted(classes.items(), key=lambda kv: -len(kv[1])):
            if (status, signature) in seen:
                continue
            seen.add((status, signature))
            category, seed, _ = hits[0]
            small = reduce(generate(category, seed), mode, signature)
            outcome = run_program(small, (mode,))
            print(f"\n=== {status} {mode} {signature} ({category}:{seed})\n{small.source}# args = {small.args!r}\n"
                  f"# {outcome[mode].detail if outcome else '?'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
