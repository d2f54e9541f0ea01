"""autograd's NumPy, SciPy and linear-algebra test cases, in every mode (issue 27, "Done when").

The cases of autograd's tests/test_systematic.py (statistics, unary and binary ufuncs over autograd's shapes and
broadcasting pairs, and its combo_check calls: transpose, repeat, diff, tile, kron, inner, dot, matmul, tensordot,
maximum, sort, partition, atleast_nd, einsum in both forms, trace, diag, tril, swapaxes, rollaxis, cross, the
splits and stacks, select), of tests/test_numpy.py (indexing, reshapes, concatenations, arrays built from numbers,
clip, prod, roll...), of tests/test_linalg.py (inv, solve, det, slogdet, norms, eigh and cholesky of symmetrized
inputs, sqrtm, solve_triangular, svd) and of tests/test_scipy.py (the distributions, logsumexp, convolve, the
special functions), written again here as a table (autograd's tests are not in its wheel): the same functions,
argument shapes, keyword combinations and domains.

Each case is `np.sum(np.sin(call))` of the arguments autograd differentiates, checked in reverse, forward and the
default mode against central differences along a random direction, and to second order (forward over reverse)
against differences of the gradient. A refusal (an S2SError) is allowed: it is a skip whose reason is the
refusal, so `pytest -m slow -rs tests/rules/test_autograd_cases.py` counts and lists them. A wrong number or a crash
fails.
"""
import itertools
import operator

import numpy as np
import pytest

import s2s

scipy = pytest.importorskip("scipy")
import scipy.linalg  # noqa: E402
import scipy.signal  # noqa: E402
import scipy.special  # noqa: E402
import scipy.stats  # noqa: E402

pytestmark = pytest.mark.slow

_rng = np.random.default_rng(1)


def R(*shape):
    return _rng.normal(size=shape) if shape else float(_rng.normal())


def U(low, high, *shape):
    return _rng.uniform(low, high, size=shape) if shape else float(_rng.uniform(low, high))


def T(lims, x):
    return x * (lims[1] - lims[0]) + lims[0]


CASES: list = []        # (id, call text over a0, a1..., the arguments, the positions differentiated)


def combo(name, call, argnums, *arg_lists, **keyword_lists):
    """autograd's combo_check: every combination of the arguments' candidates and the keywords' values."""
    names = list(keyword_lists)
    for values in itertools.product(*arg_lists):
        for chosen in itertools.product(*(keyword_lists[n] for n in names)):
            keywords = "".join(f", {n}={v!r}" for n, v in zip(names, chosen))
            text = call.format(*[f"a{k}" for k in range(len(values))], kw=keywords)
            shapes = ",".join(str(np.shape(v)) if not isinstance(v, str) else v for v in values)
            CASES.append((f"{name}[{shapes}{keywords}]", text, values, argnums))


# ---------------------------------------------------------------- test_systematic.py: statistics

def stat_check(name, fn):
    x, A, B, C, D = 3.5, R(), R(3), R(2, 3), R(1, 3)
    combo(name, f"{fn}({{0}}{{kw}})", (0,), [x, A])
    combo(name, f"{fn}({{0}}{{kw}})", (0,), [B, C, D], axis=[None, 0], keepdims=[True, False])
    combo(name, f"{fn}({{0}}{{kw}})", (0,), [C, D], axis=[None, 0, 1], keepdims=[True, False])


for _name in ("max", "mean", "min", "sum", "prod", "var", "std"):
    stat_check(_name, f"np.{_name}")


# ---------------------------------------------------------------- unary ufuncs

def unary_ufunc_check(name, fn, lims=(-2, 2)):
    values = [T(lims, 0.4), T(lims, U(0, 1, 2)), T(lims, U(0, 1, 3, 2)), T(lims, U(0, 1, 1, 2))]
    combo(name, f"{fn}({{0}})", (0,), values)


for _name, _lims in [("sin", None), ("abs", (0.1, 4.0)), ("absolute", (0.1, 4.0)), ("arccosh", (1.1, 4.0)),
                     ("arcsinh", (-0.9, 0.9)), ("arctanh", (-0.9, 0.9)), ("ceil", (-1.5, 1.5)), ("cos", None),
                     ("cosh", None), ("deg2rad", None), ("exp", None), ("exp2", None), ("expm1", None),
                     ("fabs", None), ("floor", (-1.5, 1.5)), ("log", (0.2, 2.0)), ("log10", (0.2, 2.0)),
                     ("log1p", (0.2, 2.0)), ("log2", (0.2, 2.0)), ("radians", None), ("sign", None), ("sinh", None),
                     ("sqrt", (1.0, 3.0)), ("square", None), ("tan", (-1.1, 1.1)), ("tanh", None), ("real", None),
                     ("real_if_close", None), ("imag", None), ("conj", None), ("angle", None)]:
    unary_ufunc_check(_name, f"np.{_name}", _lims or (-2, 2))
unary_ufunc_check("degrees", "(1 / 50.0) * np.degrees", (-2, 2))
unary_ufunc_check("rad2deg", "(1 / 50.0) * np.rad2deg", (-2, 2))


# ---------------------------------------------------------------- binary ufuncs

def binary_ufunc_check(name, fn, lims_a=(-2, 2), lims_b=(-2, 2), same=True):
    values_a = [T(lims_a, 0.6), T(lims_a, U(0, 1, 2)), T(lims_a, U(0, 1, 3, 2)), T(lims_a, U(0, 1, 1, 2))]
    if same:
        values_b = [T(lims_b, v) for v in (0.6, U(0, 1, 2), U(0, 1, 3, 2), U(0, 1, 1, 2))]
    else:                               # remainder and mod: the two arguments never equal
        values_b = [T(lims_b, 0.7), T(lims_b, U(0, 1, 2)), T(lims_b, U(0, 1, 3, 2)), T(lims_b, U(0, 1, 1, 2))]
    combo(name, f"{fn}({{0}}, {{1}})" if not fn.startswith("operator.") else f"{fn}({{0}}, {{1}})", (0, 1),
          values_a, values_b)


binary_ufunc_check("add", "np.add")
binary_ufunc_check("logaddexp", "np.logaddexp")
binary_ufunc_check("logaddexp2", "np.logaddexp2")
binary_ufunc_check("remainder", "np.remainder", (-0.9, 0.9), (0.7, 1.9), same=False)
binary_ufunc_check("true_divide", "np.true_divide", lims_b=(0.8, 1.2))
binary_ufunc_check("mod", "np.mod", lims_b=(0.8, 2.1), same=False)
binary_ufunc_check("true_divide_neg", "np.true_divide", lims_b=(-0.3, -2.0))
binary_ufunc_check("mod_neg", "np.mod", lims_b=(-0.3, -2.0), same=False)
binary_ufunc_check("op_mul", "operator.mul")
binary_ufunc_check("op_add", "operator.add")
binary_ufunc_check("op_sub", "operator.sub")
binary_ufunc_check("op_mod", "operator.mod", lims_b=(0.3, 2.0), same=False)
binary_ufunc_check("op_mod_neg", "operator.mod", lims_b=(-0.3, -2.0), same=False)
binary_ufunc_check("op_div", "operator.truediv", lims_b=(0.5, 2.0))
binary_ufunc_check("op_pow", "operator.pow", lims_a=(0.7, 2.0))


# ---------------------------------------------------------------- combo_check calls

combo("transpose", "np.transpose({0}{kw})", (0,), [R(2, 3, 4)],
      axes=[None, (0, 1, 2), (0, 2, 1), (2, 0, 1), (2, 1, 0), (1, 0, 2), (1, 2, 0)])
combo("repeat", "np.repeat({0}{kw})", (0,), [R(2, 3, 4), R(3, 1)], repeats=[0, 1, 2], axis=[None, 0, 1])
combo("diff", "np.diff({0}{kw})", (0,), [R(5, 5), R(5, 5, 5)], n=[1, 2], axis=[0, 1])
combo("diff", "np.diff({0}{kw})", (0,), [R(1), R(1, 1)], axis=[0])
combo("diff", "np.diff({0}{kw})", (0,), [R(1, 1), R(3, 1)], axis=[1])
combo("tile", "np.tile({0}{kw})", (0,), [R(2, 1, 3, 1)], reps=[(1, 4, 1, 2)])
combo("tile", "np.tile({0}{kw})", (0,), [R(1, 2)], reps=[(1, 2), (2, 3), (3, 2, 1)])
combo("tile", "np.tile({0}{kw})", (0,), [R(1)], reps=[(2,), 2])
combo("kron", "np.kron({0}, {1})", (0, 1), [R(5, 5), R(4, 4)], [R(3, 3), R(2, 2)])
combo("inner", "np.inner({0}, {1})", (0, 1), [1.5, R(3), R(2, 3)], [0.3, R(3), R(4, 3)])
combo("dot", "np.dot({0}, {1})", (0, 1), [1.5, R(3), R(2, 3), R(2, 2, 3)], [0.3, R(3), R(3, 4), R(2, 3, 4)])
combo("matmul", "np.matmul({0}, {1})", (0, 1), [R(3), R(2, 3), R(2, 2, 3)], [R(3), R(3, 4), R(2, 3, 4)])
combo("tensordot_1", "np.tensordot({0}, {1}{kw})", (0, 1), [R(1, 3), R(2, 3, 2)], [R(3), R(3, 1), R(3, 4, 2)],
      axes=[((1,), (0,))])
combo("tensordot_2", "np.tensordot({0}, {1}{kw})", (0, 1), [R(3), R(3, 1), R(3, 4, 2)], [R(1, 3), R(2, 3, 2)],
      axes=[((0,), (1,))])
combo("tensordot_3", "np.tensordot({0}, {1}{kw})", (0, 1), [R(2, 3), R(2, 3, 4)], [R(1, 2, 3), R(2, 2, 3, 4)],
      axes=[((0, 1), (1, 2)), ((1, 0), (2, 1))])
combo("tensordot_4", "np.tensordot({0}, {1}{kw})", (0, 1), [R(2, 2), R(4, 2, 2)], [R(2, 2), R(2, 2, 4)], axes=[1, 2])
combo("tensordot_5", "np.tensordot({0}, {1}{kw})", (0, 1), [R(4)], [R()], axes=[0])
combo("tensordot_6", "np.tensordot({0}, {1}{kw})", (0, 1), [R(2, 6)], [R(6, 3)], axes=[((-1,), (0,))])
for _name in ("maximum", "fmax", "minimum", "fmin"):
    combo(_name, f"np.{_name}({{0}}, {{1}})", (0, 1), [R(1), R(1, 4), R(3, 4)], [R(1), R(1, 4), R(3, 4)])
combo("sort", "np.sort({0})", (0,), [R(1), R(7)])
combo("partition", "np.partition({0}{kw})", (0,), [R(7), R(14)], kth=[0, 3, 6])
for _name in ("atleast_1d", "atleast_2d", "atleast_3d"):
    combo(_name, f"np.{_name}({{0}})", (0,), [1.2, R(1), R(7), R(1, 4), R(2, 4), R(2, 4, 5)])
combo("einsum_transpose", "np.einsum({0}, {1})", (1,), ["'ij->ji'"], [R(1, 1), R(4, 4), R(3, 4)])
combo("einsum_matmult", "np.einsum({0}, {1}, {2})", (1, 2), ["'ij,jk->ik'"], [R(2, 3)], [R(3, 4)])
combo("einsum_matmult_broadcast", "np.einsum({0}, {1}, {2})", (1, 2), ["'...ij,...jk->...ik'"],
      [R(2, 3), R(2, 2, 3)], [R(3, 4), R(2, 3, 4)])
combo("einsum_covsum", "np.einsum({0}, {1}, {2})", (1, 2), ["'ijk,lji->lki'"], [R(3, 4, 4)], [R(4, 4, 3)])
combo("einsum_ellipses", "np.einsum({0}, {1}, {2})", (1, 2), ["'...jk,...lj->...lk'", "'...,...->...'"],
      [R(4, 4), R(3, 4, 4)], [R(4, 4), R(3, 4, 4)])
combo("einsum_ellipses_tail", "np.einsum({0}, {1}, {2})", (1, 2), ["'jk...,lj...->lk...'"], [R(3, 2), R(3, 2, 4)],
      [R(2, 3), R(2, 3, 4)])
combo("einsum_ellipses_center", "np.einsum({0}, {1}, {2})", (1, 2), ["'j...k,lj...->lk...'"],
      [R(2, 2), R(2, 2, 2)], [R(2, 2), R(2, 2, 2)])
combo("einsum_three_args", "np.einsum({0}, {1}, {2}, {3})", (1, 2), ["'ijk,lji,lli->lki'"], [R(3, 4, 4)],
      [R(4, 4, 3)], [R(4, 4, 3)])
combo("einsum2_transpose", "np.einsum({0}, (0, 1), (1, 0))", (0,), [R(1, 1), R(4, 4), R(3, 4)])
combo("einsum2_matmult", "np.einsum({0}, (0, 1), {1}, (1, 2), (0, 2))", (0, 1), [R(2, 3)], [R(3, 4)])
combo("einsum2_matmult_broadcast", "np.einsum({0}, (Ellipsis, 0, 1), {1}, (Ellipsis, 1, 2), (Ellipsis, 0, 2))",
      (0, 1), [R(2, 3), R(2, 2, 3)], [R(3, 4), R(2, 3, 4)])
combo("einsum2_covsum", "np.einsum({0}, (0, 1, 2), {1}, (3, 1, 0), (3, 2, 0))", (0, 1), [R(3, 4, 4)], [R(4, 4, 3)])
combo("einsum2_three_args", "np.einsum({0}, (0, 1, 2), {1}, (3, 1, 0), {2}, (3, 3, 0), (3, 2, 0))", (0, 1),
      [R(3, 4, 4)], [R(4, 4, 3)], [R(4, 4, 3)])
combo("trace", "np.trace({0}{kw})", (0,), [R(5, 5), R(4, 5), R(5, 4), R(3, 4, 5)], offset=[-1, 0, 1])
combo("diag", "np.diag({0}{kw})", (0,), [R(5, 5)], k=[-1, 0, 1])
combo("diag_flat", "np.diag({0}{kw})", (0,), [R(5)], k=[-1, 0, 1])
combo("tril", "np.tril({0}{kw})", (0,), [R(5, 5), R(5, 5, 4)], k=[-1, 0, 1])
combo("triu", "np.triu({0}{kw})", (0,), [R(5, 5), R(5, 5, 4)], k=[-1, 0, 1])
combo("swapaxes", "np.swapaxes({0}{kw})", (0,), [R(3, 4, 5)], axis1=[0, 1, 2], axis2=[0, 1, 2])
combo("rollaxis", "np.rollaxis({0}{kw})", (0,), [R(2, 3, 4)], axis=[0, 1, 2], start=[0, 1, 2, 3])
combo("cross", "np.cross({0}, {1}{kw})", (0, 1), [R(3, 3)], [R(3, 3)], axisa=[-1, 0, 1], axisb=[-1, 0, 1],
      axisc=[-1, 0, 1], axis=[None, -1, 0, 1])
for _name, _shape in [("vsplit", (4, 8)), ("vsplit", (4, 4, 4)), ("hsplit", (4, 8)), ("hsplit", (4, 4, 4)),
                      ("dsplit", (4, 4, 4))]:
    combo(_name, f"np.{_name}({{0}}, {{1}})[0]", (0,), [R(*_shape)], [4 if _shape == (4, 8) else 2, [1, 2]])
combo("split_1d", "np.split({0}, {1}{kw})[0]", (0,), [R(1), R(7)], [1], axis=[0])
combo("split_2d", "np.split({0}, {1}{kw})[-1]", (0,), [R(4, 8)], [4, [1, 2]], axis=[0, 1])
combo("split_3d", "np.split({0}, {1}{kw})[1]", (0,), [R(4, 4, 4)], [2, [1, 2]], axis=[0, 1, 2])
combo("array_split_1d", "np.array_split({0}, {1}{kw})[0]", (0,), [R(1), R(7)], [1, 3], axis=[0])
combo("array_split_2d", "np.array_split({0}, {1}{kw})[1]", (0,), [R(7, 7)], [4, [3, 5]], axis=[0, 1])
combo("array_split_3d", "np.array_split({0}, {1}{kw})[-1]", (0,), [R(7, 7, 7)], [4, [3, 5]], axis=[0, 1, 2])
combo("concatenate_list", "np.concatenate([{0}, {1}]{kw})", (0, 1), [R(1)], [R(3)], axis=[0])
combo("concatenate_2d", "np.concatenate(({0}, {1}){kw})", (0, 1), [R(2, 2)], [R(2, 2)], axis=[0, 1])
combo("concatenate_3d", "np.concatenate(({0}, {1}){kw})", (0, 1), [R(2, 2, 2)], [R(2, 2, 2)], axis=[0, 1, 2])
for _name, _pairs in [("vstack", [(R(2), R(2)), (R(2, 4), R(1, 4)), (R(2, 3, 4), R(5, 3, 4))]),
                      ("hstack", [(R(2), R(2)), (R(3, 4), R(3, 5)), (R(2, 1, 4), R(2, 5, 4))]),
                      ("column_stack", [(R(2), R(2)), (R(2, 2), R(2, 2))]),
                      ("stack", [(R(2), R(2))])]:
    for _a, _b in _pairs:
        combo(_name, f"np.{_name}(({{0}}, {{1}}))", (0, 1), [_a], [_b])
combo("stack_axis", "np.stack(({0}, {1}){kw})", (0, 1), [R(2)], [R(2)], axis=[0, 1])
_CONDITIONS = [R(3, 4, 5) > 0 for _ in range(3)]
combo("select", "np.select(CONDITIONS, [{0}, {1}, {0} * {1}]{kw})", (0, 1), [R(3, 4, 5)], [R(3, 4, 5)],
      default=[0.0, 1.1])


# ---------------------------------------------------------------- test_numpy.py

_A = R(5, 6, 4)
for _name, _call, _arg in [
        ("dot_mat_vec", "np.dot({0}, {1})", (R(10, 11), R(11))), ("dot_vec_mat", "np.dot({0}, {1})", (R(10), R(10, 11))),
        ("dot_floats", "np.dot({0}, {1})", (R(10, 11), R())), ("outer", "np.outer({0}, {1})", (R(11), R(11))),
        ("max_axis", "np.max({0}, axis=1)", (R(3, 4, 5),)), ("max_keepdims", "np.max({0}, axis=1, keepdims=True)",
                                                              (R(3, 4, 5),)),
        ("min_axis", "np.min({0}, axis=1)", (R(3, 4, 5),)), ("sum_axis_tuple", "np.sum({0}, axis=(1, 2))", (R(10, 11, 7),)),
        ("flipud", "np.flipud({0})", (R(10, 11),)), ("fliplr", "np.fliplr({0})", (R(10, 11),)),
        ("rot90", "np.rot90({0})", (R(10, 11),)), ("cumsum", "np.cumsum({0}, axis=0)", (R(10, 11),)),
        ("cumsum_1d", "np.cumsum({0})", (R(10),)), ("cumsum_no_axis", "np.cumsum({0})", (R(10, 11),)),
        ("non_numpy_sum", "sum([{0}, {1}])", (R(10, 11), R(10, 11))), ("mean_axis", "np.mean({0}, axis=0)", (R(10, 11),)),
        ("index_ints", "{0}[3, 0, 1]", (_A,)), ("index_slice", "{0}[::-1, 2:4, :]", (_A,)),
        ("index_lists", "{0}[[0, 1, 2], :, :]", (_A,)), ("index_mixed", "{0}[3, 2:, [1, 3]]", (_A,)),
        ("vector_slice", "{0}[2:4]", (R(5),)), ("index_slice_fanout", "{0}[::-1, 2:4, :] + {0}[::-1, 3:5, :]", (_A,)),
        ("index_multiple_slices", "{0}[2:6][1:3]", (R(7),)), ("reshape_method", "{0}.reshape((5 * 4, 6))", (_A,)),
        ("reshape_call", "np.reshape({0}, (5 * 4, 6))", (_A,)), ("reshape_nolist", "{0}.reshape(5 * 4, 6)", (_A,)),
        ("ravel_method", "{0}.ravel()", (_A,)), ("ravel_call", "np.ravel({0})", (_A,)),
        ("flatten_method", "{0}.flatten()", (_A,)), ("simple_concatenate", "np.concatenate((B546, {0}))", (R(4, 6, 4),)),
        ("concatenate_axis_1", "np.concatenate((B546, {0}, B546), axis=1)", (R(5, 6, 4),)),
        ("concatenate_unnamed", "np.concatenate((B546, {0}, B546), 1)", (R(5, 6, 4),)),
        ("trace_offset", "np.trace({0}, offset=3)", (R(10, 11),)), ("trace_extradims", "np.trace({0}, offset=-2)",
                                                                    (R(5, 6, 4, 3),)),
        ("transpose_attr", "{0}.T", (R(8, 8),)), ("roll", "np.roll({0}, 2, axis=1)", (R(4, 5),)),
        ("triu", "np.triu({0}, k=2)", (R(5, 5),)), ("tril", "np.tril({0}, k=2)", (R(5, 5),)),
        ("clip", "np.clip({0}, a_min=0.1, a_max=1.1)", (R(5, 5) * 0.9 + 0.37,)),
        ("prod_1", "np.prod({0})", (R(2, 3) ** 2 / 10.0 + 0.1,)), ("prod_2", "np.prod({0}, axis=0)", (R(2, 3) ** 2 + 0.1,)),
        ("prod_3", "np.prod({0}, axis=0, keepdims=True)", (R(2, 3) ** 2 + 0.1,)), ("prod_4", "np.prod({0})",
                                                                                  (R(7) ** 2 + 0.1,)),
        ("1d_array", "np.array([{0}, {0} * 1.0, {0} + 2.5])", (3.0,)),
        ("2d_array", "np.array([[{0}, {0} * 1.0, {0} + 2.5], [{0} ** 2, {0}, {0} / 2.0]])", (3.0,)),
        ("array_from_scalar", "np.array({0})", (3.0,)), ("array_from_arrays", "np.array([{0}, {0}])", (R(3, 2),)),
        ("array_from_arrays_2", "np.array([[2 * {0}, {0} + 1], [{0}, {0}]])", (R(3, 2),)),
        ("r_basic", "np.r_[{0}]", (R(3, 2),)), ("r_double", "np.r_[{0}, {0}]", (R(3, 2),)),
        ("r_no_relation", "np.r_[{0}, C32]", (R(3, 2),)), ("r_node_and_const", "np.r_[{0}, C32]", (R(3, 2),)),
        ("c_", "np.c_[{0}, {0}]", (R(3, 2),)), ("c_mixed", "np.c_[{0}, C32]", (R(3, 2),)),
        ("var_ddof", "np.var({0}, axis=1, ddof=1)", (R(3, 4),)), ("std_ddof", "np.std({0}, axis=1, ddof=1)",
                                                                  (R(3, 4),)),
        ("where", "np.where({0} > 0, {0}, {1})", (R(3, 4), R(3, 4))),
        ("squeeze", "np.squeeze({0})", (R(1, 3, 1, 4),)), ("expand_dims", "np.expand_dims({0}, 1)", (R(3, 4),)),
        ("broadcast_to", "np.broadcast_to({0}, (2, 3, 4))", (R(3, 4),)), ("linspace", "np.linspace({0}, {1}, 5)",
                                                                         (R(), R())),
        ("astype", "{0}.astype(np.float64)", (R(3, 4),)), ("copysign_scale", "np.copysign({0}, -1.0) * {0}",
                                                            (R(3) + 2.5,)),
        ("fmod", "np.fmod({0}, 1.7)", (R(4) * 0.5,)), ("pad", "np.pad({0}, 1)", (R(3, 2),)),
        ("nan_to_num", "np.nan_to_num({0})", (R(3),)), ("einsum_sum", "np.einsum('ij->', {0})", (R(3, 4),)),
]:
    CASES.append((f"numpy:{_name}", _call.format(*[f"a{k}" for k in range(len(_arg))]), _arg, tuple(range(len(_arg)))))


# ---------------------------------------------------------------- test_linalg.py


def _psd(n):
    m = R(n, n)
    return m @ m.T + n * np.eye(n)


_SYM = "(np.tril({0}) + np.swapaxes(np.tril({0}), -1, -2)) / 2.0"          # autograd's check_symmetric_matrix_grads
for _name, _call, _arg in [
        ("inv", "np.linalg.inv({0})", (R(4, 4) @ R(4, 4) + np.eye(4) * 4.0,)),
        ("inv_3d", "np.linalg.inv({0})", (R(3, 3, 3) + 5 * np.eye(3),)),
        ("solve_arg1", "np.linalg.solve({0}, B43)", (R(4, 4) + 10.0 * np.eye(4),)),
        ("solve_arg1_1d", "np.linalg.solve({0}, B4)", (R(4, 4) + 10.0 * np.eye(4),)),
        ("solve_arg2", "np.linalg.solve(A44, {0})", (R(4, 3),)),
        # (NumPy 2 reads a 2-D b as a matrix: autograd's stack of vectors is b[..., None], its (5, 4, 6) b a swap)
        ("solve_arg1_3d", "np.linalg.solve({0}, B54[..., None])[..., 0]", (R(5, 4, 4) + 5 * np.eye(4),)),
        ("solve_arg1_3d_3d", "np.linalg.solve({0}, np.swapaxes(B546, -1, -2))", (R(5, 4, 4) + 5 * np.eye(4),)),
        ("det", "np.linalg.det({0})", (R(4, 4),)), ("det_3d", "np.linalg.det({0})", (R(3, 3, 3),)),
        ("slogdet", "np.linalg.slogdet({0})[1]", (R(4, 4),)), ("slogdet_neg", "np.linalg.slogdet(-{0})[1]", (R(4, 4),)),
        ("slogdet_3d", "np.linalg.slogdet({0})[1]", (np.stack([_psd(3) for _ in range(3)]),)),
        ("vector_2norm", "np.linalg.norm({0})", (R(6),)), ("frobenius_norm", "np.linalg.norm({0})", (R(5, 4),)),
        ("frobenius_norm_axis", "np.linalg.norm({0}, axis=(0, 1))", (R(5, 4, 3),)),
        ("vector_norm_ord_2", "np.linalg.norm({0}, ord=2)", (R(6),)), ("vector_norm_ord_3", "np.linalg.norm({0}, ord=3)",
                                                                       (R(6),)),
        ("vector_norm_ord_4", "np.linalg.norm({0}, ord=4)", (R(6),)),
        ("norm_axis_0", "np.linalg.norm({0}, axis=0)", (R(4, 3, 2),)), ("norm_axis_1", "np.linalg.norm({0}, axis=1)",
                                                                         (R(4, 3, 2),)),
        ("norm_axis_2", "np.linalg.norm({0}, axis=2)", (R(4, 3, 2),)),
        ("norm_nuclear", "np.linalg.norm({0}, ord='nuc')", (R(5, 4),)),
        ("norm_nuclear_axis", "np.linalg.norm({0}, ord='nuc', axis=(0, 1))", (R(5, 4, 3),)),
        ("eigh_lower", f"np.sum(np.linalg.eigh({_SYM})[0]) + np.abs(np.linalg.eigh({_SYM})[1])", (_psd(4),)),
        ("eigh_upper", f"np.sum(np.linalg.eigh({_SYM}, 'U')[0]) + np.abs(np.linalg.eigh({_SYM}, 'U')[1])", (_psd(4),)),
        ("eigh_broadcasting", f"np.linalg.eigh({_SYM})[0]",
         (np.einsum('...ij,...kj->...ik', *(2 * [R(2, 3, 4, 4) + 5 * np.eye(4)])),)),
        ("cholesky", f"np.linalg.cholesky({_SYM})", (_psd(4),)),
        ("cholesky_broadcast", f"np.linalg.cholesky({_SYM})", (np.stack([_psd(4) for _ in range(3)]),)),
        ("cholesky_reparameterization", f"np.linalg.norm(np.dot(np.linalg.cholesky({_SYM}), Z4))", (_psd(4),)),
        ("sqrtm", f"scipy.linalg.sqrtm({_SYM})", (_psd(4),)),
        ("svd_wide", "np.linalg.svd({0}, full_matrices=False)[1]", (R(3, 5),)),
        ("svd_wide_3d", "np.linalg.svd({0}, full_matrices=False)[1]", (R(2, 3, 5),)),
        ("svd_square", "np.abs(np.linalg.svd({0}, full_matrices=False)[0]) * np.linalg.svd({0})[1]", (R(4, 4),)),
        ("svd_tall", "np.abs(np.linalg.svd({0}, full_matrices=False)[2])", (R(5, 3),)),
        ("svd_tall_3d", "np.linalg.svd({0}, full_matrices=False)[1]", (R(2, 5, 3),)),
        ("svd_only_s", "np.linalg.svd({0}, full_matrices=False, compute_uv=False)", (R(5, 3),)),
]:
    CASES.append((f"linalg:{_name}", _call.format(*[f"a{k}" for k in range(len(_arg))]), _arg, tuple(range(len(_arg)))))
for _trans, _lower in itertools.product(["'T'", "'N'", "'C'", 0, 1, 2], [True, False]):
    CASES.append((f"linalg:solve_triangular_arg1[trans={_trans}, lower={_lower}]",
                  f"scipy.linalg.solve_triangular(a0, B6, trans={_trans}, lower={_lower})",
                  (R(6, 6) + 10 * np.eye(6),), (0,)))
    CASES.append((f"linalg:solve_triangular_arg2[trans={_trans}, lower={_lower}]",
                  f"scipy.linalg.solve_triangular(A66, a0, trans={_trans}, lower={_lower})", (R(6, 5),), (0,)))


# ---------------------------------------------------------------- test_scipy.py

_st = "scipy.stats"
for _dist, _args, _argnums in [
        ("norm.pdf", (R(4), R(4), R(4) ** 2 + 1.1), (0, 1, 2)), ("norm.cdf", (R(4), R(4), R(4) ** 2 + 1.1), (0, 1, 2)),
        ("norm.logpdf", (R(4), R(4), R(4) ** 2 + 1.1), (0, 1, 2)),
        ("norm.logcdf", (R(4), R(4), R(4) ** 2 + 1.1), (0, 1, 2)),
        ("norm.pdf", (R(4, 3), R(1, 3), R(4, 1) ** 2 + 1.1), (0, 1, 2)),
        ("norm.logcdf", (R(4, 3), R(1, 3), R(4, 1) ** 2 + 1.1), (0, 1, 2)),
        ("t.pdf", (R(4), R(4) ** 2 + 2.1, R(4), R(4) ** 2 + 2.1), (0, 1, 2, 3)),
        ("t.cdf", (R(4), R(4) ** 2 + 2.1, R(4), R(4) ** 2 + 2.1), (0, 2)),
        ("t.logpdf", (R(4), R(4) ** 2 + 2.1, R(4), R(4) ** 2 + 2.1), (0, 1, 2, 3)),
        ("t.logcdf", (R(4), R(4) ** 2 + 2.1, R(4), R(4) ** 2 + 2.1), (0, 2)),
        ("t.logpdf", (R(4, 3), R(1, 3) ** 2 + 2.1, R(4, 3), R(4, 1) ** 2 + 2.1), (0, 1, 2, 3)),
        ("multivariate_normal.logpdf", (R(4), R(4), _psd(4)), (0, 1, 2)),
        ("multivariate_normal.pdf", (R(4), R(4), _psd(4)), (0, 1, 2)),
        ("multivariate_normal.logpdf", (R(5, 4), R(4), _psd(4)), (0, 1, 2)),
        ("multivariate_normal.entropy", (R(4), _psd(4)), (0, 1)),
]:
    _call = f"{_st}.{_dist}(" + ", ".join(f"a{k}" for k in range(len(_args))) + ")"
    CASES.append((f"scipy:{_dist}{[np.shape(a) for a in _args]}", _call, _args, _argnums))
_ALPHA = U(0, 1, 4) ** 2 + 1.2
_DIRICHLET_X = scipy.stats.dirichlet.rvs(_ALPHA, size=1, random_state=3)[0]
CASES += [("scipy:dirichlet.pdf_x", "scipy.stats.dirichlet.pdf(a0 / np.sum(a0), a1)", (_DIRICHLET_X, _ALPHA), (0,)),
          ("scipy:dirichlet.pdf_alpha", "scipy.stats.dirichlet.pdf(a0, a1)", (_DIRICHLET_X, _ALPHA), (1,)),
          ("scipy:dirichlet.logpdf_x", "scipy.stats.dirichlet.logpdf(a0 / np.sum(a0), a1)", (_DIRICHLET_X, _ALPHA), (0,)),
          ("scipy:dirichlet.logpdf_alpha", "scipy.stats.dirichlet.logpdf(a0, a1)", (_DIRICHLET_X, _ALPHA), (1,))]
combo("logsumexp1", "scipy.special.logsumexp({0}{kw})", (0,), [1.1, R(4), R(3, 4)], axis=[None, 0],
      keepdims=[True, False])
combo("logsumexp2", "scipy.special.logsumexp({0}{kw})", (0,), [R(3, 4), R(4, 5, 6), R(1, 5)], axis=[None, 0, 1],
      keepdims=[True, False])
combo("logsumexp3", "scipy.special.logsumexp({0}, b=np.exp(B4){kw})", (0,), [R(4)], axis=[None, 0],
      keepdims=[True, False])
combo("logsumexp6", "scipy.special.logsumexp({0}, axis=1, keepdims=True)", (0,), [R(1, 5)])
combo("convolve", "scipy.signal.convolve({0}, {1}{kw})", (0, 1), [R(4), R(5), R(6)], [R(2), R(3), R(4)],
      mode=["full", "valid"])
combo("convolve_2d", "scipy.signal.convolve({0}, {1}{kw})", (0, 1), [R(4, 3), R(5, 4), R(6, 7)],
      [R(2, 2), R(3, 2), R(4, 2), R(4, 1)], mode=["full", "valid"])
combo("polygamma", "scipy.special.polygamma(0, {0})", (0,), [R(4) ** 2 + 1.3])
combo("jn", "scipy.special.jv(2, {0})", (0,), [R(4) ** 2 + 1.3])
combo("yn", "scipy.special.yn(2, {0})", (0,), [R(4) ** 2 + 1.3])
for _name, _lims in [("psi", (0.3, 2.0)), ("digamma", (0.3, 2.0)), ("gamma", (0.3, 2.0)), ("gammaln", (0.3, 2.0)),
                     ("rgamma", (0.3, 2.0)), ("j0", (0.2, 20.0)), ("j1", (0.2, 20.0)), ("y0", (0.2, 20.0)),
                     ("y1", (0.2, 20.0)), ("erf", (-3.0, 3.0)), ("erfc", (-3.0, 3.0)), ("erfinv", (-0.95, 0.95)),
                     ("erfcinv", (0.05, 1.95)), ("expit", (-2.0, 2.0)), ("logit", (0.1, 0.9))]:
    unary_ufunc_check(_name, f"scipy.special.{_name}", _lims)
combo("multigammaln", "scipy.special.multigammaln({0}, {1})", (0,), [U(4.0, 5.0), U(4.0, 5.0, 2, 3)], [1, 2, 3])

NAMESPACE = {"scipy": scipy, "operator": operator, "CONDITIONS": _CONDITIONS, "B546": R(5, 6, 4), "C32": R(3, 2),
             "B43": R(4, 3), "B4": R(4), "A44": R(4, 4) + 4.0 * np.eye(4), "B54": R(5, 4), "Z4": R(4),
             "B6": R(6), "A66": R(6, 6) + 10 * np.eye(6)}


def _float_args(args, argnums):
    return tuple(float(a) if isinstance(a, (int, float)) and not isinstance(a, bool) and k in argnums else a
                 for k, a in enumerate(args))


def _along(f, args, argnums, v, h):
    moved = list(args)
    for k, d in zip(argnums, v):
        moved[k] = args[k] + h * d
    return f(*moved)


@pytest.mark.parametrize("name, call, args, argnums", CASES, ids=[c[0] for c in CASES])
def test_autograd_case(name, call, args, argnums, make_fn):
    args = _float_args(args, argnums)
    names = [f"a{k}" for k in range(len(args))]
    text_args = [a for a in args if isinstance(a, str)]
    if text_args:                    # an einsum subscript: a constant of the call, not an argument
        for k, a in enumerate(args):
            if isinstance(a, str):
                call = call.replace(f"a{k}", a)
    f = make_fn(f"def f({', '.join(names)}):\n    return np.sum(np.sin({call}))\n", namespace=NAMESPACE)
    wrt = tuple(k for k in argnums if not isinstance(args[k], str))
    with np.errstate(all="ignore"):
        value = f(*args)
    if not np.isfinite(value):
        pytest.skip("autograd's point gives a value that is not finite here")
    rng = np.random.default_rng(abs(hash(name)) % 2 ** 32)
    v = [rng.uniform(-1.0, 1.0, size=np.shape(args[k])) if np.ndim(args[k]) else float(rng.uniform(-1.0, 1.0))
         for k in wrt]
    h = 1e-6
    expected = (_along(f, args, wrt, v, h) - _along(f, args, wrt, v, -h)) / (2 * h)
    coarse = (_along(f, args, wrt, v, 1e-4) - _along(f, args, wrt, v, -1e-4)) / 2e-4
    if not np.isclose(expected, coarse, rtol=1e-3, atol=1e-5):
        pytest.skip("a kink or a discontinuity at autograd's point (floor, sign, sort ties...)")
    refused = []
    for mode in ("reverse", "forward", "auto"):
        try:
            gradient = s2s.grad(f, wrt=wrt, mode=mode)(*args)
        except s2s.S2SError as exc:
            refused.append(f"{mode}: {str(exc).splitlines()[0]}")
            continue
        along = sum(float(np.sum(np.asarray(g) * d)) for g, d in zip(gradient, v))
        assert along == pytest.approx(expected, rel=1e-5, abs=1e-6), f"{name} in {mode} mode"
    first = wrt[0]
    if not isinstance(args[first], str):
        try:
            product = s2s.hvp(f, wrt=first)(*args, v[0])
            gradient = s2s.grad(f, wrt=first, mode="reverse")
            step = 1e-5
            moved = [list(args), list(args)]
            moved[0][first] = args[first] + step * v[0]
            moved[1][first] = args[first] - step * v[0]
            difference = (np.asarray(gradient(*moved[0])) - np.asarray(gradient(*moved[1]))) / (2 * step)
            assert np.asarray(product) == pytest.approx(difference, rel=1e-4, abs=1e-5), f"{name} second order"
        except s2s.S2SError as exc:
            refused.append(f"second order: {str(exc).splitlines()[0]}")
    if refused:
        pytest.skip("refused: " + " | ".join(refused))
