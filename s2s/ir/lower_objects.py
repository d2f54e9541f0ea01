"""A loop over a list of objects this call made (`self.layers = [Layer(W1), Layer(W2)]`, then `for layer in
self.layers: x = layer(x)`), lowered one copy of its body per object.

Accepts a `for` whose iterable is a variable or an attribute of one (`layers`, `self.layers`) that holds a list
or tuple display of objects the call made (s2s/ir/object_state.py knows its items: `items_of`), with a name as
its target and no `break`, `continue`, `return` or `else`. Guarantees: the body is lowered once per item, in
order, with the target bound to that item, so that each call in it is the item's class's method, inlined, and
its attributes' values carry the derivative; the target is left bound to the last item, as Python leaves it.
The list cannot change between the derivative being made and run: writes into a list the call made are refused.
"""
from __future__ import annotations

from typing import Any

import gast

from s2s.ir.object_state import key_of


def unrolled_over_objects(low: Any, node: gast.For) -> bool:
    """Whether node was lowered here (unrolled over the objects it runs over)."""
    if node.orelse or not isinstance(node.target, gast.Name):
        return False
    it = node.iter
    if isinstance(it, gast.Name):
        atom = low.env.get(it.id)
    elif isinstance(it, gast.Attribute) and isinstance(it.value, gast.Name):
        base = low.env.get(it.value.id)
        ident = low.state.idents.get(id(base)) if base is not None else None
        atom = low.env.get(key_of((ident, "attr", it.attr))) if ident is not None else None
    else:
        return False
    items = low.state.items_of(atom) if atom is not None else None
    if not items:
        return False
    if any(isinstance(n, (gast.Break, gast.Continue, gast.Return)) for s in node.body for n in gast.walk(s)):
        return False
    for item in items:
        low.assign(node.target, item)
        low.block(node.body)
    return True
