"""The tree utilities, with JAX's conventions (issue 28, item 3): tree_flatten gives the leaves (a dict's in sorted
key order) and a treedef, tree_unflatten rebuilds, register_pytree_node takes flatten(obj) -> (children, aux) and
unflatten(aux, children)."""
import dataclasses
from typing import NamedTuple

import numpy as np
import pytest

import s2s


class Point(NamedTuple):
    x: float
    y: float


@dataclasses.dataclass(frozen=True)
class Affine:
    W: np.ndarray
    b: np.ndarray
    name: str = "affine"


class Box:
    """A class registered by hand: its children are its arrays, its aux its label."""

    def __init__(self, lo, hi, label):
        self.lo, self.hi, self.label = lo, hi, label


s2s.register_pytree_node(Box, lambda box: ((box.lo, box.hi), box.label),
                         lambda label, children: Box(children[0], children[1], label))


def test_flatten_orders_dict_leaves_by_sorted_key():
    tree = {"b": 1.0, "a": (2.0, [3.0, None]), "c": Point(4.0, 5.0)}
    leaves, treedef = s2s.tree_flatten(tree)
    assert leaves == [2.0, 3.0, 1.0, 4.0, 5.0]       # None has no leaves, as in JAX
    assert treedef.num_leaves == 5
    rebuilt = s2s.tree_unflatten(treedef, leaves)
    assert rebuilt == tree and isinstance(rebuilt["c"], Point)


def test_tree_map_and_leaves():
    tree = {"w": np.ones(2), "layers": [(1.0, 2.0)]}
    doubled = s2s.tree_map(lambda v: v * 2, tree)
    np.testing.assert_allclose(doubled["w"], [2.0, 2.0])
    assert doubled["layers"] == [(2.0, 4.0)]
    summed = s2s.tree_map(lambda a, b: a + b, tree, doubled)
    assert summed["layers"] == [(3.0, 6.0)]
    assert len(s2s.tree_leaves(tree)) == 3
    with pytest.raises(ValueError, match="different structures"):
        s2s.tree_map(lambda a, b: a, tree, {"w": 1.0})


def test_dataclasses_and_registered_classes_are_nodes():
    layer = Affine(np.ones((2, 2)), np.zeros(2))
    leaves, treedef = s2s.tree_flatten(layer)
    assert len(leaves) == 3 and leaves[2] == "affine"        # every field, in order
    back = s2s.tree_unflatten(treedef, [l * 2 if isinstance(l, np.ndarray) else l for l in leaves])
    assert isinstance(back, Affine) and back.name == "affine" and np.all(back.W == 2)
    box = Box(np.zeros(3), np.ones(3), "unit")
    leaves, treedef = s2s.tree_flatten(box)
    assert len(leaves) == 2
    moved = s2s.tree_unflatten(treedef, [leaf + 1 for leaf in leaves])
    assert isinstance(moved, Box) and moved.label == "unit" and np.all(moved.hi == 2)
    assert s2s.tree_structure(box) == s2s.tree_structure(Box(np.ones(3), np.ones(3), "unit"))
    assert s2s.tree_structure(box) != s2s.tree_structure(Box(np.ones(3), np.ones(3), "other"))


def test_unflatten_checks_the_number_of_leaves():
    _, treedef = s2s.tree_flatten((1.0, 2.0))
    with pytest.raises(ValueError, match="2 leaves"):
        s2s.tree_unflatten(treedef, [1.0])


def test_a_gradient_has_its_arguments_tree():
    def f(p):
        return np.sum(p["w"] ** 2) + p["b"][0] * 3.0
    p = {"w": np.arange(3.0), "b": (1.0, 2.0)}
    g = s2s.grad(f)(p)
    assert s2s.tree_structure(g) == s2s.tree_structure(p)
    np.testing.assert_allclose(s2s.tree_leaves(g)[:2], [3.0, 0.0])
