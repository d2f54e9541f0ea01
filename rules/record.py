"""One record per primitive: everything s2s knows about a function it meets in the IR.

A *primitive* is a Python object the IR calls (`numpy.sum`, `math.sin`, `operator.mul`, a SciPy function, one of
s2s's own run-time helpers). Its `Record` holds every fact about it that the analyses, transforms, passes and
back ends need: its derivative rules, what its result is (kind, shape, dtype, whether it may be complex), whether
it makes fresh memory, whether it has effects, its batching rule. Records are found by the object itself
(`registry.record(np.sum)`; an unhashable object by its id), never by how the user spelled the call or by the
module a rule lives in: moving a rule to another file changes nothing.

Records are declared in `rules/*.py`, beside the rules, grouped by family under section comments. The decorators
people know fill them, and take any other fact as a keyword:

    @adjoint(np.sum, reduction=True, holomorphic=True)      # the adjoint rule, and two facts
    def sum_(g, ans, x, axis=None, dtype=None, out=None, keepdims=False, initial=0.0):
        return _broadcast_back(g, x, axis, keepdims), None, None, None, None, np.sum(g)

    linear(np.sum, np.mean)                                 # record.linear = (0,)
    elementwise(math.copysign)                              # record.elementwise = True
    nondifferentiable(np.argmax, complex_result="real")     # no derivative; a real result of complex arguments
    declare(np.zeros, constructor=True, dtype_at=1, dtype_rule="made", shape=made_from_size)   # facts alone

A function nobody declared still has a record: `registry.record` describes it by what the object is (a NumPy
ufunc is elementwise, a function of the `math` module gives a Python number, ...): that is the one place where
s2s looks at where a function comes from, and it lives in the registry, not in the analyses.

Reading a record (`rec = registry.record(op.prim)`) is one dictionary lookup; the analyses read its fields and
never compare a primitive with a library function.
"""
from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Any, Callable


@dataclass(eq=False)
class Record:
    """Everything about one primitive. Every field has a default meaning "nothing special is known"."""

    prim: Any = None
    """The object this record describes (held: it lives as long as the registry)."""

    # ---------------------------------------------------------------- derivatives
    adjoint: Callable | None = None
    """Reverse mode: `rule(g, ans, *args, **kwargs)` -> the adjoint of each argument (a tuple for several; None
    for an argument with none). Parsed and inlined into the derivative (rules/registry.py's docstring)."""
    tangent: Callable | None = None
    """Forward mode: `rule(t, ans, *args, **kwargs)` -> the output's tangent contributed by each argument."""
    complex_adjoint: Callable | None = None
    """The adjoint rule for arguments that may be complex (found before `adjoint` then)."""
    complex_tangent: Callable | None = None
    """The tangent rule for arguments that may be complex."""
    linear: tuple | None = None
    """The argument positions the function is linear in (the others held fixed): the tangent of argument i is
    the function applied with that argument replaced by its tangent."""
    linear_applied: Callable | None = None
    """What forward mode applies to a linear argument's tangent instead of the function itself."""
    elementwise: bool = False
    """Broadcasts its arguments elementwise: an adjoint is summed back to its argument's shape, and the adjoint
    rule applied to a tangent is the tangent rule."""
    nondifferentiable: bool = False
    """Its result carries no derivative (integer- or boolean-valued, piecewise constant, a shape)."""
    refused: str | None = None
    """Why it is not differentiated (a helper of derivative code): NoDerivativeRule with this reason."""
    definition: Callable | None = None
    """Python code over functions with rules that defines it (`np.ptp(x)` is `max - min`): inlined."""
    masking: bool = False
    """Its adjoint is exactly zero where a branch is not taken or a side loses (np.where, maximum, abs): a
    contribution computed from it must not turn that zero into a NaN (runtime._masked)."""
    singular: str | None = None
    """Its local derivative can be infinite (or NaN) at finite arguments (sqrt and the logarithms at 0, a quotient
    by 0, arcsin at 1): "always", "power" (not with a constant exponent of at least 1, or 0) or "quotient" (not
    by a constant other than 0). A zero adjoint there must contribute zero, not 0 * inf (runtime._masked)."""
    structural: tuple | None = None
    """Builds or writes a container (s2s's own make_tuple, setitem...): its tangent is the same operation on the
    tangents of its arguments, except at these positions (keys, indices), which are kept."""

    # ---------------------------------------------------------------- the result
    result_kind: Callable | None = None
    """`kind(args, kwargs)` for a function returning a tuple or list of arrays (numpy.linalg.eigh, numpy.split):
    the kind of its result (("tuple", ("array", ...)), ("list*", "array")), or None; args and kwargs are the
    call's constant values (registry.UNKNOWN for one known only when the code runs)."""
    kind_from_arguments: Callable | None = None
    """`kind(argument kinds)` for a function whose result's kind follows from its arguments' (s2s.fixed_point's is
    its x0's; a recursion's derivative function), or None where it cannot say; a list gives one kind per output
    of an operation with several (transforms/recursion.py). Declared with registry.result_kind_from."""
    kind: Callable | None = None
    """The kind rule (s2s/analysis/activity.py): `rule(op, kinds)` -> the kind of the result ("scalar", "array",
    a container's structure; s2s/analysis/kind_rules.py), or None to let the facts below decide; kinds are the
    kinds of op's arguments, positional then keyword."""
    scalar: str | None = None
    """When its result is a number (the kind "scalar"): "always" (len, float, math's functions, np.size),
    "of_scalars" (a number when every argument is one: the operators, abs, ufuncs), "without_axis" (a full
    reduction: np.sum(x) without an axis), or None."""
    array_result: bool = False
    """Given an array (or a number) first, it returns an array (a NumPy function): its kind is "array"."""
    constructor: bool = False
    """Makes a new array from numbers (np.zeros, np.arange, np.eye): an array whatever its arguments' kinds."""
    fresh: bool = False
    """Its result is new memory, which nothing else references (a constructor, a copy, arithmetic)."""
    storage: bool = False
    """Its result is storage of its own, which s2s/passes/optimize.py's write_in_place may write a later result
    into when nothing else reads it (a constructor, a copy, a list or dict made or written)."""
    zeros: str | None = None
    """Makes an array of zeros: "like" (shaped like its argument: np.zeros_like, runtime.zeros_like) or "made"
    (of a shape given: np.zeros): an adjoint accumulator the passes may add into in place; "tree" (a container's
    adjoint, new: runtime._zeros_like_tree)."""
    scatter_into: Callable | None = None
    """For the adjoint of reading one item (runtime._scatter(x, index, g)): the function that adds g at index into
    an adjoint of the container's own, in place (`into(own, x, index, g)`: s2s/passes/accumulate_items.py)."""
    copies_reads: bool = False
    """Reads its arguments without keeping a reference to them (a reduction, a product into new memory)."""
    metadata: bool = False
    """Reads only its argument's shape (len, np.shape): keeps no reference to it."""
    view: bool = False
    """May return its argument itself or a view of it (np.real of a real array)."""
    shape: Callable | None = None
    """The shape rule: `rule(op, known)` -> the abstract value of the result (s2s.analysis.values.Abstract or
    Items), or None when unknown. `known` answers `known.abstract(atom)` (an Abstract or None), `known.full(atom)`
    (Abstract, Items or None) and `known.value(atom)` (the value known when the derivative is made, or
    s2s.analysis.facts.UNKNOWN). Shared rules are in s2s/analysis/shape_rules.py."""
    shape_rule: str | None = None
    """Which of s2s/analysis/shapes.py's shape rules gives its result's shape and dtype from its arguments':
    "arithmetic" (an operator: elementwise, broadcasting), "of_numbers" (elementwise on Python numbers: math's
    functions), "size" (a number: np.size), "length" (a number of an array with axes: len), "to_number" (float,
    int of a number), "broadcast_to", "expand_dims", "like" (np.zeros_like...), "as_array" (np.asarray...),
    "copy", "where", "reduction" (np.sum... with a constant axis and keepdims), "dot", "transpose"."""
    size_rule: str | None = None
    """Which of s2s/analysis/sizes.py's rules gives the integer its result is, or the shape of the array it makes,
    when the arguments' shapes and constants decide it: "length", "shape", "size", "ndim" (of an array of known
    shape), "integer" (an operator on integers: +, -, *, //, %, unary -); constructors: "filled" (np.zeros),
    "full", "arange", "linspace", "eye", "diag", "diagonal", "diag_adjoint" (runtime._diag_adjoint)."""
    dtype_at: int | None = None
    """Where its dtype argument goes positionally (it is also read by keyword, `dtype=`)."""
    dtype_rule: str | None = None
    """What decides whether the result holds integers or floats (s2s/analysis/dtypes.py), besides a dtype given
    (at `dtype_at`, or `dtype=`): "convert" (its first argument's: np.asarray), "cast" (only the dtype given:
    np.astype), "made" (floats: np.zeros), "fill" (the fill value's: np.full), "like" (its first argument's:
    np.zeros_like), "promoted" (its positional arguments, as NumPy promotes them: np.arange), "same" (the same
    elements as its first argument, or some of them: reshape, getitem), "joined" (the items of its first argument,
    a list or tuple: np.concatenate), "items" (its arguments together: a list display), "integer" (no class it
    decides: integers whatever it gets, len, math.floor, //), or None (floats when an argument is a float)."""
    container: bool = False
    """Makes or extends a list, tuple or dict (a float written into one stays a float: no dtype to check)."""
    writes_into: bool = False
    """Returns its first argument, written into (runtime.setitem, list_append): the same object."""
    floats: bool = False
    """Its result is a float whatever numbers it gets (exp, true division, a math function)."""
    keeps_floats: bool = False
    """Its result is a float (or a float array) when one of its arguments is (arithmetic)."""
    int_result: bool = False
    """An integer or boolean whatever it is given, though `floats` would say otherwise (math.floor, math.isnan):
    s2s/passes/optimize.py's float values exclude it."""
    value: Callable | None = None
    """The known-value rule: `rule(op, known)` -> the result's value when the derivative is made (s2s's facts
    table, s2s/analysis/facts.py), or s2s.analysis.facts.UNKNOWN: np.shape of an array of known shape."""
    fold: bool = False
    """A pure function of its arguments' values: with every argument known when the derivative is made, so is
    its result (computed then: `7 - 1`, math.sqrt(2.0), `(4, 3)[-1]`)."""

    # ---------------------------------------------------------------- effects
    pure: bool | None = None
    """Whether a call can be removed when its result is not read, or merged with an equal one: True, False, or
    None (pure when it has a rule, is nondifferentiable or refused: what s2s knows is a function of numbers)."""
    effect: bool = False
    """Has an effect (print, a stack push, a random draw, a call that may change an object): never dropped,
    never merged, never moved."""
    random: bool = False
    """Draws random numbers (numpy.random): the checking mode reruns the function with the generator's state."""
    never_raises: bool = False
    """Cannot raise whatever its inputs (safe to hoist before a loop that may run zero times)."""

    # ---------------------------------------------------------------- complex numbers (s2s/analysis/complex_values.py)
    holomorphic: bool = False
    """Its real rules hold for complex arguments under autograd's convention (holomorphic, or linear and
    structural: reshapes, indexing, sums)."""
    complex_result: str | None = None
    """What its result is for complex arguments: "real" (abs, real, comparisons), "complex" (fft, complex()),
    "either" (the values decide: eig, roots, the scimath functions), "with_real" (real parts and the argument's:
    eigh's eigenvalues and eigenvectors), or None (as its arguments)."""
    complex_from_real: bool = False
    """Its result may be complex for real arguments, as the values decide (scipy.linalg.sqrtm of a matrix with a
    negative eigenvalue): s2s/analysis/complex_values.py takes the real part of a real argument's adjoint. Its
    rules hold for complex values (complex_adjoint too)."""
    complex_inside: bool = False
    """A real function of real arguments whose rules compute with complex values (irfft)."""
    complex_safe: bool = False
    """One of s2s's own helpers (s2s.runtime, rules/helpers.py, rules/complex_numbers.py) whose rules hold for
    complex values: registry.describe says so from where it is defined."""
    fft: tuple | None = None
    """A discrete Fourier transform (rules/fft.py): (kind, axes), kind "c" (complex to complex), "r" (real to
    half-spectrum) or "i" (half-spectrum to real), axes 1 (n, axis), 2 (s, axes=(-2, -1)) or None (s, axes):
    s2s/analysis/complex_values.py's shape_of reads it."""
    constant_on_reals: bool = False
    """Piecewise constant on reals (no derivative) but not on complex numbers (np.sign: z / |z|)."""

    # ---------------------------------------------------------------- the IR's own operators
    algebra: str | None = None
    """Which of the IR's arithmetic operators it is, for algebraic identities ("add", "sub", "mul", "truediv",
    "pow", "neg", "pos", "getitem"...): the lowering writes Python's operators as these primitives. "add_items":
    the sum of two containers' adjoints, item by item (runtime._add)."""
    comparison: bool = False
    """A comparison (its result is True or False)."""
    commutative: bool | None = None
    """For a binary arithmetic function that may write its result into an argument's memory: whether either
    argument may be the one (True) or only the first (False)."""
    ufunc: Any = None
    """The NumPy ufunc that computes it with `out=` (operator.sub: np.subtract)."""
    no_out: bool = False
    """A unary ufunc never written with out= into its argument (its result is not a float of the argument's
    kind: np.isnan, np.sign)."""
    product: str | None = None
    """A product s2s/passes/contractions.py rewrites inside loops: "outer" (np.outer)."""
    index_builder: str | None = None
    """An index object that builds an array (`np.r_[a, b]`: "rows"; `np.c_[a, b]`: "columns"), rewritten into
    the concatenation it is (s2s/passes/sequences.py)."""
    sequence_argument: bool = False
    """A NumPy function whose first argument is read as one array (a list of arrays becomes np.array(list))."""
    shape_reader: tuple | None = None
    """The argument positions whose shape alone it reads (s2s/passes/optimize.py's replace_shape_only_values)."""

    # ---------------------------------------------------------------- batching (issue 28)
    batch: Callable | None = None
    """The batching rule (s2s.vmap), a plain Python function that s2s parses and inlines, as it does adjoint rules:

        @batching(np.sum)
        def sum_batched(axes, x, axis=None, dtype=None, out=None, keepdims=False):
            # axes: the batch axis of each positional argument (an int, or None where it is not batched),
            # known when the batched code is made (constants in the rule, so its `if`s fold away)
            ...
            return result, out_axis          # the batched result and the position of its batch axis

    An elementwise function needs none (its arguments broadcast along the batch axis, moved to the front); a
    function without one is batched by a loop over the batch in the generated code, said in its header.
    s2s/transforms/batching.py gives every batched argument its batch along axis 0 (`axes[k] == 0`), an argument
    given by keyword or left to its default is unbatched (a batched keyword argument: the loop), and a tuple
    argument (the index of `x[i, j]`, the list np.concatenate is given) has a tuple of its items' axes. `np.ndim`
    and `np.shape` of an argument whose shape is known fold too. A rule that needs the number of examples (a random
    draw) takes it as the keyword `batch_size`; one that returns `NotImplemented` declines (the loop). Shared
    templates and helpers: rules/batching.py."""

    total: bool = False
    """Finite inputs give finite values and adjoints, without a warning: a branch made of such operations alone
    is batched unmasked (s2s/transforms/batching.py)."""
    axis_fold: bool = False
    """Computed when batched code is made, given constants: the batching rules' arithmetic on axes (np.ndim,
    isinstance, len...), besides what `fold` says."""
    joins: bool = False
    """Takes a list of arrays first (np.concatenate, np.array): its items are made batched alike first."""
    shape_by_trial: bool = False
    """A shape function whose result's shape may be found by running it on stand-ins that take no memory, where
    the shape rules have none (s2s/transforms/batching.py)."""

    # ---------------------------------------------------------------- back ends
    numba: str | None = None
    """The Numba form of a run-time helper Numba cannot type as written: the source of a
    `numba.extending.overload` of it (s2s/backends/numba/typed_helpers.py)."""

    # ---------------------------------------------------------------- run-time helpers
    helper: bool = False
    """One of s2s's own run-time helpers (s2s/runtime.py, rules/helpers.py): the IR's own operations."""
    shaped_by: int | None = None
    """For a helper of derivative code: the argument whose kind (array or number) its result has."""

    declared: set = field(default_factory=set, repr=False)
    """The names of the fields rules/ declared (the others are the defaults `registry.describe` gives)."""


FACTS = tuple(f.name for f in fields(Record) if f.name not in ("prim", "declared"))
