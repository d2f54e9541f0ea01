"""Star-arguments of a length known when the derivative is made, as fixed ones:

    g(*args)            ->  g(args[0], args[1])       (args a tuple display, a known constant, or a variable
                                                       assigned once from a display: a packed `*args`)
    g(**options)        ->  g(a=options['a'])         (options assigned once from a dict display)
    a, *rest, b = xs    ->  a = xs[0]; rest = [xs[1], xs[2]]; b = xs[-1]   (rest = xs[1:-1] if xs's length
                                                                            is known only later)
    x.reshape(n, *rest) ->  x.reshape((n,) + tuple(rest))   (the shape as one tuple, rest's length known
                                                              only when it runs; `transpose` likewise)
Any other star-argument of unknown length is left for the fence to refuse.
"""
from __future__ import annotations

from typing import Any

import gast

from s2s.frontend.desugar import helpers
from s2s.frontend.desugar.context import Context, constant, located, name
from s2s.frontend.tree import clone_tree


def _known_dict_keys(ctx: Context, node: Any) -> tuple | None:
    """The keys of a dict known when the derivative is made: a variable assigned once from a display with
    constant keys (the packed `**kwargs` of a specialization), never written into."""
    if not isinstance(node, gast.Name):
        return None
    stores = [n for n in gast.walk(ctx.node) if isinstance(n, gast.Name) and n.id == node.id
              and isinstance(n.ctx, (gast.Store, gast.Param))]
    assigns = [s.value for s in gast.walk(ctx.node) if isinstance(s, gast.Assign) and len(s.targets) == 1
               and isinstance(s.targets[0], gast.Name) and s.targets[0].id == node.id]
    written = any(isinstance(s, gast.Subscript) and isinstance(s.ctx, gast.Store) and isinstance(s.value, gast.Name)
                  and s.value.id == node.id for s in gast.walk(ctx.node))
    if len(stores) == 1 and len(assigns) == 1 and isinstance(assigns[0], gast.Dict) and not written \
            and all(isinstance(k, gast.Constant) and isinstance(k.value, str) for k in assigns[0].keys):
        return tuple(k.value for k in assigns[0].keys)
    return None


def _star_keywords(ctx: Context, node: gast.Call) -> gast.Call:
    keywords = []
    for k in node.keywords:
        if k.arg is not None:
            keywords.append(k)
            continue
        keys = _known_dict_keys(ctx, k.value)
        if keys is None:
            return node                       # left for the fence
        keywords += [gast.keyword(arg=key, value=located(gast.Subscript(value=clone_tree(k.value),
                                                                         slice=constant(key, k.value),
                                                                         ctx=gast.Load()), k.value))
                     for key in keys]
    node.keywords = keywords
    return node


def starred_targets(ctx: Context, stmt: Any) -> list | None:
    """`a, *rest, b = xs` is `a = xs[0]; rest = [xs[1], ...]` (or `xs[1:-1]` for a length known later)."""
    if not (isinstance(stmt, gast.Assign) and len(stmt.targets) == 1
            and isinstance(stmt.targets[0], (gast.Tuple, gast.List))):
        return None
    elts = stmt.targets[0].elts
    stars = [i for i, e in enumerate(elts) if isinstance(e, gast.Starred)]
    if len(stars) != 1:
        return None
    star = stars[0]
    after = len(elts) - star - 1
    source = ctx.fresh("unpacked")
    out = [located(gast.Assign(targets=[name(source, stmt, store=True)], value=stmt.value, type_comment=None), stmt)]
    length = _known_length(ctx, stmt.value)

    def item(index: Any) -> gast.expr:
        return located(gast.Subscript(value=name(source, stmt), slice=index, ctx=gast.Load()), stmt)
    for i, e in enumerate(elts):
        if i == star:
            if length is not None:
                value: Any = gast.List(elts=[item(constant(k, stmt)) for k in range(star, length - after)],
                                       ctx=gast.Load())
            else:
                upper = constant(-after, stmt) if after else None
                value = item(gast.Slice(lower=constant(star, stmt), upper=upper, step=None))
            target = e.value
        else:
            value = item(constant(i if i < star else i - len(elts), stmt))
            target = e
        out.append(located(gast.Assign(targets=[target], value=value, type_comment=None), stmt))
    return out


def star_arguments(ctx: Context, node: gast.Call) -> gast.Call:
    node = _star_keywords(ctx, node)
    if not any(isinstance(a, gast.Starred) for a in node.args):
        return node
    sized = _sized_draw(ctx, node)
    if sized is not None:
        return sized
    args: list = []
    for a in node.args:
        if not isinstance(a, gast.Starred):
            args.append(a)
            continue
        length = _known_length(ctx, a.value)
        if length is None:
            shaped = _shape_tuple(node)       # `x.reshape(n, *rest)`: one shape
            return shaped if not any(isinstance(a, gast.Starred) for a in shaped.args) else _python_call(shaped)
        if isinstance(a.value, (gast.Tuple, gast.List)):
            args.extend(a.value.elts)
        else:
            args.extend(located(gast.Subscript(value=clone_tree(a.value), slice=constant(i, a), ctx=gast.Load()),
                                a) for i in range(length))
    node.args = args
    return node


def _python_call(node: gast.Call) -> gast.Call:
    """`f(a, *rest)` with rest's length known only when the code runs: `star_call(f, (a,) + tuple(rest))`, Python's
    call (xp.result_type(*dtypes) in a library's dtype helper); refused when the derivative is made if an argument
    carries a derivative (helpers.star_call's record)."""
    return located(gast.Call(func=constant(helpers.star_call, node), args=[node.func, _joined(node)],
                             keywords=node.keywords), node)


def _shape_tuple(node: gast.Call) -> gast.Call:
    """`x.reshape(a, *rest)` and `x.transpose(*axes)` take their shape (axes) as one tuple as well:
    `x.reshape((a,) + tuple(rest))`, whatever rest's length (known when the code runs: `b_.shape[1:]`)."""
    if not (isinstance(node.func, gast.Attribute) and node.func.attr in ("reshape", "transpose")) or node.keywords:
        return node
    node.args = [_joined(node)]
    return node


def _joined(node: gast.Call) -> Any:
    """node's positional arguments as one tuple expression: `(a,) + tuple(rest) + (b,)` for `a, *rest, b`."""
    import builtins
    parts: list = []
    for a in node.args:
        if isinstance(a, gast.Starred):
            parts.append(located(gast.Call(func=constant(builtins.tuple, a), args=[a.value], keywords=[]), a))
        elif parts and isinstance(parts[-1], gast.Tuple):
            parts[-1].elts.append(a)
        else:
            parts.append(located(gast.Tuple(elts=[a], ctx=gast.Load()), a))
    joined = parts[0]
    for part in parts[1:]:
        joined = located(gast.BinOp(left=joined, op=gast.Add(), right=part), node)
    return joined


def _sized_draw(ctx: Context, node: gast.Call) -> gast.Call | None:
    """`np.random.rand(*shape)` / `np.random.randn(*shape)` (a dropout mask's shape, known only when it runs) as the
    draw they make, `np.random.random_sample(size)` / `np.random.standard_normal(size)` (size None for no shape: a
    float, as rand() gives); the same numbers from the same stream."""
    import numpy as np
    if len(node.args) != 1 or not isinstance(node.args[0], gast.Starred) or node.keywords:
        return None
    found, fn = ctx.static(node.func)
    draw = {id(np.random.rand): np.random.random_sample, id(np.random.randn): np.random.standard_normal}.get(id(fn)) \
        if found else None
    if draw is None:
        return None
    size = gast.Call(func=constant(helpers.size_of, node), args=[node.args[0].value], keywords=[])
    return located(gast.Call(func=constant(draw, node.func), args=[size], keywords=[]), node)


def _known_length(ctx: Context, node: Any, depth: int = 0, at: int | None = None) -> int | None:
    """The length of a sequence known when the derivative is made: a display, a known constant, a variable
    assigned once from a display and never changed, a slice with known bounds or a concatenation of such
    sequences, or a variable rebound in the function's straight-line code (`args = args[:k] + args[k + 1:]`),
    read where the binding that reaches the read is known. at: the index of the top-level statement that reads
    node, when known (else found from node's place in the tree)."""
    if isinstance(node, (gast.Tuple, gast.List)) and not any(isinstance(e, gast.Starred) for e in node.elts):
        return len(node.elts)
    found, value = ctx.static(node)
    if found and isinstance(value, (tuple, list)):
        return len(value)
    if depth > 8:
        return None
    if isinstance(node, gast.BinOp) and isinstance(node.op, gast.Add):
        left = _known_length(ctx, node.left, depth + 1, at)
        right = _known_length(ctx, node.right, depth + 1, at) if left is not None else None
        return left + right if right is not None else None
    if isinstance(node, gast.Subscript) and isinstance(node.slice, gast.Slice):
        bounds = [None if p is None else _static_int(ctx, p)
                  for p in (node.slice.lower, node.slice.upper, node.slice.step)]
        if any(b is None and p is not None
               for b, p in zip(bounds, (node.slice.lower, node.slice.upper, node.slice.step))) or bounds[2] == 0:
            return None
        length = _known_length(ctx, node.value, depth + 1, at)
        return len(range(length)[slice(*bounds)]) if length is not None else None
    if isinstance(node, gast.Name):
        reaching = _reaching_binding(ctx, node, at)
        if reaching is not None:
            index, value = reaching
            found = _known_length(ctx, value, depth + 1, index)
            if found is not None:
                return found
        stores = [n for n in gast.walk(ctx.node) if isinstance(n, gast.Name) and n.id == node.id
                  and isinstance(n.ctx, (gast.Store, gast.Param))]
        assigns = [s for s in gast.walk(ctx.node) if isinstance(s, gast.Assign) and len(s.targets) == 1
                   and isinstance(s.targets[0], gast.Name) and s.targets[0].id == node.id]
        changed = any(isinstance(s, gast.Call) and isinstance(s.func, gast.Attribute)
                      and isinstance(s.func.value, gast.Name) and s.func.value.id == node.id
                      for s in gast.walk(ctx.node))
        if len(stores) == 1 and len(assigns) == 1 and isinstance(assigns[0].value, gast.Tuple) and not changed:
            return len(assigns[0].value.elts)
        # every binding a display of the same length (`rs = (n, 1) if flat else (1, n)`, or one per branch), or a
        # comprehension's list, one item per item of what it iterated over (`args = [f(a) for a in args]`)
        lengths = {_display_length(a.value) if not isinstance(a.value, gast.Name) or a.value.id not in
                   ctx.same_length else _same_as(ctx, node.id, ctx.same_length[a.value.id], depth)
                   for a in assigns}
        lengths.discard("same")
        if len(stores) == len(assigns) and assigns and len(lengths) == 1 and None not in lengths and not changed:
            return lengths.pop()
    return None


def _static_int(ctx: Context, node: Any) -> int | None:
    """An integer known when the derivative is made: a literal, a known name (`argnum`, a closure's), or a sum or
    difference of them."""
    if isinstance(node, gast.UnaryOp) and isinstance(node.op, gast.USub):
        inner = _static_int(ctx, node.operand)
        return -inner if inner is not None else None
    if isinstance(node, gast.BinOp) and isinstance(node.op, (gast.Add, gast.Sub)):
        left, right = _static_int(ctx, node.left), _static_int(ctx, node.right)
        if left is None or right is None:
            return None
        return left + right if isinstance(node.op, gast.Add) else left - right
    if not isinstance(node, (gast.Constant, gast.Name)):
        return None
    found, value = ctx.static(node)
    return value if found and isinstance(value, int) and not isinstance(value, bool) else None


def _reaching_binding(ctx: Context, node: gast.Name, at: int | None) -> tuple[int, Any] | None:
    """(index, value) of the assignment whose value a read of the variable node names sees, when every binding of
    it is a top-level `name = value` of the function's body (straight-line code: the binding of the last one
    before the reading statement reaches it) and the read is in a top-level statement that binds it nowhere
    inside; a read inside a nested function or lambda (it runs when called) only if no binding follows. None
    otherwise."""
    body = ctx.node.body
    tops: dict[int, int] = {}
    for i, stmt in enumerate(body):
        if isinstance(stmt, gast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], gast.Name) \
                and stmt.targets[0].id == node.id:
            tops[id(stmt.targets[0])] = i
    stores = [n for n in gast.walk(ctx.node) if isinstance(n, gast.Name) and n.id == node.id
              and isinstance(n.ctx, (gast.Store, gast.Param, gast.Del))]
    if not tops or any(id(n) not in tops for n in stores):
        return None
    if any(isinstance(s, gast.Call) and isinstance(s.func, gast.Attribute) and isinstance(s.func.value, gast.Name)
           and s.func.value.id == node.id for s in gast.walk(ctx.node)):
        return None                                     # a list changed by a method (`args.append(x)`)
    nested = False
    if at is None:
        for i, stmt in enumerate(body):
            place = _place_in(stmt, node)
            if place is not None:
                at, nested = i, place
                break
        else:
            return None
    before = [i for i in tops.values() if i < at]
    if not before or (nested and any(i >= at for i in tops.values())):
        return None
    index = max(before)
    return index, body[index].value


def _place_in(tree: Any, node: Any, inside: bool = False) -> bool | None:
    """None when node is not in tree; else whether it is inside a nested function or lambda of tree."""
    if tree is node:
        return inside
    inner = inside or isinstance(tree, (gast.Lambda, gast.FunctionDef))
    for child in gast.iter_child_nodes(tree):
        found = _place_in(child, node, inner)
        if found is not None:
            return found
    return None


def _same_as(ctx: Context, name_: str, iterable: Any, depth: int) -> Any:
    """The length of a comprehension's list: "same" when it iterated over the variable it is bound to."""
    if isinstance(iterable, gast.Name) and iterable.id == name_:
        return "same"
    return _known_length(ctx, iterable, depth + 1) if depth < 4 else None


def _display_length(node: Any) -> int | None:
    """The length of a tuple display, or of both sides of a conditional expression of displays when they agree."""
    if isinstance(node, gast.Tuple) and not any(isinstance(e, gast.Starred) for e in node.elts):
        return len(node.elts)
    if isinstance(node, gast.IfExp):
        a, b = _display_length(node.body), _display_length(node.orelse)
        return a if a == b else None
    return None
