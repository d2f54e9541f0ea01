"""Which derivative rules of rules/ run on Dask arrays, and what happens with the others.

For every case of the rules' test table (tests/rules/test_rules.py: DOMAINS), the gradient is taken with every
float array argument a chunked Dask array, and sorted into:
  no Dask  -- the function itself does not run on Dask arrays without computing them (Dask lacks the NumPy
              function, or the call, as numpy.dot of a float and a Dask array): not a question of derivatives;
  lazy     -- the gradient is Dask arrays (nothing computed while it was built) equal to NumPy's gradient;
  refused  -- a clear error: the derivative needs a NumPy function Dask lacks, or a helper of rules/ asks
              for values (s2s.driver.foreign.ForeignArrayError, which names it), or Dask raises (NotImplementedError,
              TypeError, ValueError, or any error from inside Dask's own code);
  WRONG    -- a NumPy result (a silent conversion), a gradient that differs from NumPy's, or any other error.
Run: python examples/dask_rules_survey.py [--verbose]   (it exits with status 1 if any case is WRONG)
"""
from __future__ import annotations

import os
import sys
import textwrap
import traceback
import warnings
from collections import defaultdict

import dask
import dask.array as da
import numpy as np

import s2s
from s2s.driver import foreign
from s2s.driver.foreign import ForeignArrayError
from s2s.ir.core import prim_name

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests"))
import conftest  # noqa: E402  (the suite's function_from_source)
import test_rules  # noqa: E402  (the rules' table of domains)


def make_fn(source, namespace=None):
    """A function from source text (the test suite's make_fn fixture)."""
    return conftest.function_from_source(source, namespace=namespace)


def _to_dask(a):
    if isinstance(a, np.ndarray) and np.issubdtype(a.dtype, np.floating) and a.ndim:
        return da.from_array(a, chunks=tuple(max(1, (n + 1) // 2) for n in a.shape))   # two chunks per axis
    return a


def classify(prim, case):
    """('lazy' | 'refused' | 'WRONG' | 'skipped', detail) for one case of the table."""
    try:
        f, point = test_rules._function_for(prim, case, make_fn)
    except (KeyboardInterrupt, SystemExit):
        raise
    except BaseException as exc:            # the case itself does not build (a rule in progress, an xfail)
        return "skipped", f"{type(exc).__name__}: {exc}"
    arrays = [i for i, a in enumerate(point) if isinstance(a, np.ndarray) and np.issubdtype(a.dtype, np.floating)]
    if not arrays:
        return "skipped", "no float array argument"
    wrt = tuple(range(len(point)))
    try:
        expected = s2s.grad(f, wrt=wrt, check=False)(*point)    # the rules' own tests check these
    except Exception as exc:
        return "skipped", f"NumPy: {type(exc).__name__}: {exc}"
    dask_point = tuple(_to_dask(a) for a in point)
    try:                                    # the function itself, on Dask arrays, computing nothing
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", FutureWarning)
            foreign.call(f, dask_point)
    except Exception as exc:
        detail = exc.message if isinstance(exc, ForeignArrayError) else f"{type(exc).__name__}: {exc}"
        return "no Dask", " ".join(detail.split())
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", FutureWarning)       # Dask's "not implemented": refused below
            result = s2s.grad(f, wrt=wrt, check=False)(*dask_point)
    except ForeignArrayError as exc:
        return "refused", exc.message
    except (NotImplementedError, TypeError, ValueError) as exc:
        return "refused", f"{type(exc).__name__}: {str(exc).splitlines()[0]}"
    except Exception as exc:                # raised inside Dask itself: an error of Dask's, not a conversion
        inner = traceback.extract_tb(exc.__traceback__)[-1].filename
        if os.sep + "dask" + os.sep in inner:
            return "refused", f"{type(exc).__name__} inside Dask ({os.path.basename(inner)}): {exc}"
        return "WRONG", f"{type(exc).__name__}: {str(exc).splitlines()[0]}"
    for i in arrays:
        if not isinstance(result[i], da.Array):
            return "WRONG", f"the gradient of argument {i} is a {type(result[i]).__name__}, not a Dask array"
    computed = dask.compute(*result, scheduler="sync")
    for i, (got, want) in enumerate(zip(computed, expected)):
        if np.shape(got) != np.shape(want) or not np.allclose(got, want, rtol=1e-9, atol=1e-12):
            return "WRONG", f"the gradient of argument {i} differs from NumPy's"
    return "lazy", ""


def survey():
    outcomes = defaultdict(list)
    for prim, cases in test_rules.DOMAINS.items():
        for case in cases:
            with warnings.catch_warnings(), np.errstate(all="ignore"):
                warnings.simplefilter("ignore", RuntimeWarning)     # domain edges: log(0) and the like
                outcome, detail = classify(prim, case)
            outcomes[outcome].append((test_rules._case_id(prim, case), prim_name(prim), detail))
    return outcomes


def report(outcomes, verbose=False):
    counts = ", ".join(f"{len(outcomes[k])} {k}" for k in ("lazy", "refused", "no Dask", "WRONG", "skipped"))
    print(f"cases of tests/rules/test_rules.py on Dask arrays: {counts}")
    for kind in ("refused", "no Dask", "WRONG") + (("lazy", "skipped") if verbose else ()):
        by_function = defaultdict(list)
        for case_id, name, detail in outcomes[kind]:
            by_function[name].append(detail or case_id)
        if by_function:
            print(f"\n{kind}:")
        for name, details in sorted(by_function.items()):
            print(textwrap.shorten(f"  {name}: {details[0]}", 160))


if __name__ == "__main__":
    found = survey()
    report(found, "--verbose" in sys.argv)
    sys.exit(1 if found["WRONG"] else 0)
