"""The emitter writes source text itself (s2s/emit/source_text.py), spelled exactly as astor spells the same tree.

The generated code is the product and the golden files compare it byte for byte, so the printer is held to
astor's spelling three ways: random expression trees of every kind the emitter writes, in every place a
statement puts them, printed by astor and by source_text (lines astor wraps included: those go through astor);
every golden file's generated function is a fixed point of astor (parsed and printed again by astor: the same
text); and so are the derivatives of fuzzed programs (hypothesis draws the seeds).
"""
from __future__ import annotations

import ast
import random
from pathlib import Path

import astor
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as strategies

import s2s
from s2s.emit import source_text as st

import fuzz_programs  # tests/programs: conftest puts the suite's folders on the path

GOLDEN = Path(__file__).resolve().parents[1] / "golden"

_BINARY = [(ast.Add, " + ", 47), (ast.Sub, " - ", 47), (ast.Mult, " * ", 49), (ast.Div, " / ", 49),
           (ast.FloorDiv, " // ", 49), (ast.Mod, " % ", 49), (ast.Pow, " ** ", 55), (ast.MatMult, " @ ", 49),
           (ast.BitAnd, " & ", 43), (ast.BitOr, " | ", 39), (ast.BitXor, " ^ ", 41), (ast.LShift, " << ", 45),
           (ast.RShift, " >> ", 45)]
_UNARY = [(ast.USub, "-", 53), (ast.UAdd, "+", 53), (ast.Invert, "~", 53), (ast.Not, "not ", 35)]
_COMPARE = [(ast.Lt, "<"), (ast.LtE, "<="), (ast.Gt, ">"), (ast.GtE, ">="), (ast.Eq, "=="), (ast.NotEq, "!="),
            (ast.Is, "is"), (ast.IsNot, "is not"), (ast.In, "in")]
_NAMES = ["x", "dW1", "t3", "np.sum", "math.sin", "a_long_variable_name_of_the_users"]


def _name(text: str) -> tuple[ast.expr, st.Expr]:
    parts = text.split(".")
    node: ast.expr = ast.Name(id=parts[0], ctx=ast.Load())
    for part in parts[1:]:
        node = ast.Attribute(value=node, attr=part, ctx=ast.Load())
    return node, st.name(text)


def _constant(rng: random.Random) -> tuple[ast.expr, st.Expr]:
    value = rng.choice([0, 2, 10 ** 30, 0.5, 1e-07, 3.0, True, False, None, "ij,jk->ik", b"raw", 2j, 0.5j, ...])
    if rng.random() < 0.2 and isinstance(value, (int, float)) and not isinstance(value, bool) and value:
        return ast.UnaryOp(op=ast.USub(), operand=ast.Constant(value=value)), \
            st.unary("-", st.UNARY, st.constant(value))         # how the emitter writes a negative number
    return ast.Constant(value=value), st.constant(value)


def _index(rng: random.Random, depth: int, top: bool = True) -> tuple[ast.expr, st.Expr]:
    """What goes inside brackets: a slice, a tuple of slices and expressions (at the top only), an expression."""
    kind = rng.random()
    if kind < 0.3:
        parts = [None if rng.random() < 0.4 else _expression(rng, depth) for _ in range(3)]
        if parts[2] is None and rng.random() < 0.5:
            parts = parts[:2]
        nodes = [p[0] if p else None for p in parts] + [None] * (3 - len(parts))
        return ast.Slice(lower=nodes[0], upper=nodes[1], step=nodes[2]), \
            st.slice_(*[p[1] if p else None for p in parts], *([None] * (3 - len(parts))))
    if kind < 0.45 and top:
        items = [_index(rng, depth - 1, False) if rng.random() < 0.5 else _expression(rng, depth)
                 for _ in range(rng.randrange(1, 3))]
        return ast.Tuple(elts=[i[0] for i in items], ctx=ast.Load()), st.tuple_([i[1] for i in items])
    return _expression(rng, depth)


def _expression(rng: random.Random, depth: int) -> tuple[ast.expr, st.Expr]:
    """A random expression of the kinds the emitter writes, as an ast tree and as source_text builds it."""
    if depth <= 0 or rng.random() < 0.2:
        return _name(rng.choice(_NAMES)) if rng.random() < 0.6 else _constant(rng)
    kind = rng.randrange(12)
    sub = lambda: _expression(rng, depth - 1)      # noqa: E731
    if kind <= 2:
        op, symbol, p = rng.choice(_BINARY)
        (left, l_text), (right, r_text) = sub(), sub()
        return ast.BinOp(left=left, op=op(), right=right), st.binary(symbol, p, l_text, r_text)
    if kind == 3:
        op, symbol, p = rng.choice(_UNARY)
        operand, text = sub()
        return ast.UnaryOp(op=op(), operand=operand), st.unary(symbol, p, text)
    if kind == 4:
        op, symbol = rng.choice(_COMPARE)
        (left, l_text), (right, r_text) = sub(), sub()
        return ast.Compare(left=left, ops=[op()], comparators=[right]), st.compare(symbol, l_text, r_text)
    if kind == 5:
        which = rng.choice(["and", "or"])
        values = [sub() for _ in range(rng.randrange(2, 4))]
        return ast.BoolOp(op=ast.And() if which == "and" else ast.Or(), values=[v[0] for v in values]), \
            st.bool_op(which, [v[1] for v in values])
    if kind == 6:
        (test, t), (body, b), (orelse, o) = sub(), sub(), sub()
        return ast.IfExp(test=test, body=body, orelse=orelse), st.if_exp(t, b, o)
    if kind == 7:
        func = sub() if rng.random() < 0.1 else _name(rng.choice(_NAMES))
        args = [sub() for _ in range(rng.randrange(0, 3))]
        keywords = {k: sub() for k in rng.sample(["axis", "keepdims", "out"], rng.randrange(0, 2))}
        node = ast.Call(func=func[0], args=[a[0] for a in args],
                        keywords=[ast.keyword(arg=k, value=v[0]) for k, v in keywords.items()])
        return node, st.call(func[1], [a[1] for a in args], {k: v[1] for k, v in keywords.items()} or None)
    if kind == 8:
        value, text = sub()
        attr = rng.choice(["T", "real", "shape", "cell_contents"])
        return ast.Attribute(value=value, attr=attr, ctx=ast.Load()), st.attribute(text, attr)
    if kind == 9:
        (value, text), (index, i_text) = sub(), _index(rng, depth - 1)
        return ast.Subscript(value=value, slice=index, ctx=ast.Load()), st.subscript(text, i_text)
    if kind == 10:
        items = [sub() for _ in range(rng.randrange(0, 4))]
        if rng.random() < 0.5:
            return ast.Tuple(elts=[i[0] for i in items], ctx=ast.Load()), st.tuple_([i[1] for i in items])
        return ast.List(elts=[i[0] for i in items], ctx=ast.Load()), st.list_([i[1] for i in items])
    keys = [_constant(rng) for _ in range(rng.randrange(0, 3))]
    values = [sub() for _ in keys]
    return ast.Dict(keys=[k[0] for k in keys], values=[v[0] for v in values]), \
        st.dict_([k[1] for k in keys], [v[1] for v in values])


def _statements(rng: random.Random, node: ast.expr, text: st.Expr) -> list[tuple[ast.stmt, st.Stmt]]:
    """The expression in each place a statement of the emitter puts one (each with a fresh tree: astor marks
    the nodes it prints)."""
    fresh = lambda: _clone(node)      # noqa: E731
    target = ast.Name(id="x", ctx=ast.Store())
    pairs = [
        (ast.Assign(targets=[target], value=fresh(), type_comment=None), st.assign(["x"], text)),
        (ast.Assign(targets=[ast.Tuple(elts=[ast.Name(id="a", ctx=ast.Store()), ast.Name(id="b", ctx=ast.Store())],
                                       ctx=ast.Store())], value=ast.Tuple(elts=[fresh(), fresh()], ctx=ast.Load()),
                    type_comment=None), st.assign(["a", "b"], st.tuple_([text, text]))),
        (ast.AugAssign(target=ast.Name(id="x", ctx=ast.Store()), op=ast.Add(), value=fresh()),
         st.Stmt(f"x += {text[0]}")),
        (ast.Return(value=fresh()), st.Stmt(f"return {st.wrap(text, st.RETURN)}")),
        (ast.If(test=fresh(), body=[ast.Pass()], orelse=[]), st.Stmt(st.wrap(text, st.TEST), "if", [st.Stmt("pass")], [])),
        (ast.While(test=fresh(), body=[ast.Break()], orelse=[]),
         st.Stmt(f"while {st.wrap(text, st.TEST)}:", "while", [st.Stmt("break")])),
        (ast.For(target=ast.Name(id="c", ctx=ast.Store()), iter=fresh(), body=[ast.Pass()], orelse=[], type_comment=None),
         st.Stmt(f"for c in {st.wrap(text, st.HIGHEST)}:", "for", [st.Stmt("pass")])),
        (ast.Assign(targets=[ast.Subscript(value=ast.Name(id="out", ctx=ast.Load()), slice=fresh(), ctx=ast.Store())],
                    value=ast.Name(id="v", ctx=ast.Load()), type_comment=None),
         st.Stmt(f"{st.subscript(st.name('out'), text)[0]} = v")),
        (ast.If(test=ast.Name(id="c", ctx=ast.Load()), body=[ast.Pass()],
                orelse=[ast.If(test=fresh(), body=[ast.Pass()], orelse=[ast.Pass()])]),
         st.Stmt("c", "if", [st.Stmt("pass")], [st.Stmt(st.wrap(text, st.TEST), "if", [st.Stmt("pass")],
                                                           [st.Stmt("pass")])])),
    ]
    if not text[0].startswith(("'", '"')) or rng.random() < 0.5:
        pairs.append((ast.Expr(value=fresh()), st.Stmt(text[0])))
    if isinstance(node, ast.Tuple) and node.elts:       # `if a, b:` is astor's spelling, and not Python:
        pairs = [(n, s) for n, s in pairs if not isinstance(n, (ast.If, ast.While))]    # never emitted
    return pairs


def _clone(node: ast.AST) -> ast.AST:
    if isinstance(node, ast.AST):
        return type(node)(**{k: _clone(v) for k, v in ast.iter_fields(node)})
    if isinstance(node, list):
        return [_clone(v) for v in node]
    return node


def _by_astor(stmt: ast.stmt, depth: int) -> str:
    body: list[ast.stmt] = [stmt]
    for _ in range(depth - 1):
        body = [ast.If(test=ast.Name(id="c", ctx=ast.Load()), body=body, orelse=[])]
    function = ast.FunctionDef(name="f", args=ast.arguments(posonlyargs=[], args=[], vararg=None, kwonlyargs=[],
                                                            kw_defaults=[], kwarg=None, defaults=[]),
                               body=body, decorator_list=[], returns=None, type_comment=None)
    return astor.to_source(ast.Module(body=[function], type_ignores=[])).rstrip()


def _by_source_text(stmt: st.Stmt, depth: int) -> str:
    body = [stmt]
    for _ in range(depth - 1):
        body = [st.Stmt("c", "if", body, [])]
    lines, _ = st.render("def f():", body)
    return "\n".join(lines)


def test_random_expressions_in_every_place_are_spelled_as_astor_spells_them():
    rng = random.Random(20261201)
    compared = wrapped = 0
    for _ in range(700):
        node, text = _expression(rng, rng.randrange(1, 5))
        for stmt_node, stmt in _statements(rng, node, text):
            depth = rng.randrange(1, 4)
            expected = _by_astor(stmt_node, depth)
            assert _by_source_text(stmt, depth) == expected, ast.dump(stmt_node)
            compared += 1
            wrapped += len(" " * 4 * depth + stmt.text) > st.MAX_LINE
    assert compared > 6000 and wrapped > 100          # the long lines astor wraps were among them


def test_what_astor_would_not_write_as_we_do_is_handed_to_astor():
    """A string with a line break (astor may write it in triple quotes), a string starting a statement, a
    default value in the signature, a long `elif` test."""
    body = [st.assign(["s"], st.constant("two\nlines and then some more text")),
            st.Stmt(st.call(st.attribute(st.constant("a long string to join with"), "join"), [st.name("xs")])[0]),
            st.Stmt("c", "if", [st.Stmt("pass")],
                    [st.Stmt(st.wrap(st.compare("<", st.name("a_really_long_name_for_a_value"),
                                                st.call(st.name("np.sum"), [st.name("another_long_name_here")])),
                                     st.TEST), "if", [st.Stmt("pass")], [])])]
    body[0].odd = True          # the emitter marks statements with such a constant
    lines, places = st.render("def f(x, y=(1, 2)):", body)
    expected = astor.to_source(ast.parse("def f(x, y=(1, 2)):\n    s = 'two\\nlines and then some more text'\n"
                                         "    'a long string to join with'.join(xs)\n    if c:\n        pass\n"
                                         "    elif a_really_long_name_for_a_value < np.sum(another_long_name_here):\n"
                                         "        pass\n")).rstrip()
    assert "\n".join(lines) == expected
    assert len(places) == len(lines)


def _function_of(module: str) -> str:
    """The generated function of a module: its last definition, without the comments quoting the user."""
    function = module.rstrip().rsplit("\n\n\n", 1)[-1]
    return "\n".join(line for line in function.splitlines() if not line.lstrip().startswith("#"))


def _fixed_point(code: str) -> None:
    """astor, given the tree of code, writes code. (An `else:` holding only an `if` had a comment between
    them, removed here: a bare name keeps astor from writing `elif` there, and is taken out after.)"""
    tree = ast.parse(code)
    lines = code.splitlines()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and len(node.orelse) == 1 and isinstance(node.orelse[0], ast.If) \
                and not lines[node.orelse[0].lineno - 1].lstrip().startswith("elif "):
            node.orelse.insert(0, ast.Expr(value=ast.Name(id="KEEP_ELSE_IF", ctx=ast.Load())))
    printed = astor.to_source(tree).rstrip().splitlines()
    assert "\n".join(line for line in printed if line.strip() != "KEEP_ELSE_IF") == code


@pytest.mark.parametrize("golden", sorted(p.name for p in GOLDEN.glob("*.txt")))
def test_every_golden_function_is_a_fixed_point_of_astor(golden):
    _fixed_point(_function_of((GOLDEN / golden).read_text()))


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(category=strategies.sampled_from(fuzz_programs.CATEGORIES), seed=strategies.integers(0, 10 ** 6),
       mode=strategies.sampled_from(["reverse", "forward", "auto"]))
def test_fuzzed_programs_derivatives_are_fixed_points_of_astor(category, seed, mode):
    program = fuzz_programs.generate(category, seed)
    f = fuzz_programs.define(program.source)
    try:
        text = s2s.source(f, *program.args, wrt=program.diff, mode=mode)
    except s2s.S2SError:
        return              # refused: nothing emitted
    _fixed_point(_function_of(text))
