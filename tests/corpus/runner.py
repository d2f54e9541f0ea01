"""Runs the corpus's cases (cases.py): each in reverse, forward and mode="auto" with check=True, and to second order
where the case says so; classifies the outcome as ok, refused (an S2SError when the derivative is made or run),
refused-part-2 (try/except, recursion on run-time values, autograd's @primitive rules: issue 26), wrong (a number
differs from the library's own derivative or central differences) or crash (any other exception).

`python tests/corpus/runner.py [library ...]` prints the table and every case that is not ok.
"""
from __future__ import annotations

import sys
import traceback
from typing import Any

import numpy as np

import s2s
from s2s.errors import S2SError

if __package__:
    from .cases import BUILDERS, LIBRARIES, Case
else:                        # run as a script
    sys.path.insert(0, __file__.rsplit("/", 2)[0])
    from corpus.cases import BUILDERS, LIBRARIES, Case



def _numeric_gradient(f: Any, args: tuple, wrt: int, eps: float = 1e-6) -> Any:
    x = args[wrt]

    def at(v: Any) -> float:
        return float(f(*args[:wrt], v, *args[wrt + 1:]))
    if np.ndim(x) == 0:
        return (at(x + eps) - at(x - eps)) / (2 * eps)
    x = np.asarray(x, dtype=float)
    g = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        e = np.zeros_like(x)
        e[i] = eps
        g[i] = (at(x + e) - at(x - e)) / (2 * eps)
    return g


def _numeric_hessian(f: Any, args: tuple, wrt: int, eps: float = 1e-4) -> Any:
    x = args[wrt]

    def gradient_at(v: Any) -> Any:
        return _numeric_gradient(f, args[:wrt] + (v,) + args[wrt + 1:], wrt, 1e-5)
    if np.ndim(x) == 0:
        return (gradient_at(x + eps) - gradient_at(x - eps)) / (2 * eps)
    x = np.asarray(x, dtype=float)
    H = np.zeros(x.shape + x.shape)
    for i in np.ndindex(x.shape):
        e = np.zeros_like(x)
        e[i] = eps
        H[(Ellipsis,) + i] = (gradient_at(x + e) - gradient_at(x - e)) / (2 * eps)
    return H


def _close(got: Any, want: Any, tol: float, numeric: bool, order: int = 1) -> bool:
    got, want = np.asarray(got, dtype=float), np.asarray(want, dtype=float)
    if got.shape != want.shape:
        return False
    # central differences of central differences carry about 1e-6 of noise
    rtol, atol = ((1e-4, 1e-6 if order == 1 else 2e-5) if numeric else (tol, tol * 1e-2))
    scale = max(1.0, float(np.max(np.abs(want))) if want.size else 1.0)
    return bool(np.allclose(got, want, rtol=rtol, atol=atol * scale, equal_nan=True))


def run_case(case: Case) -> tuple[str, str]:
    """(status, detail) of one case."""
    numeric = case.gradient is None
    central = _numeric_gradient(case.f, case.args, case.wrt)
    if not numeric and not _close(case.gradient, central, case.tol, True):
        # the library's own derivative disagrees with central differences (scipy's aps15_fp where aps15_f is
        # constant): s2s is checked against central differences, and the finding is reported
        case.extra["library_wrong"] = "gradient"
        numeric = True
    want = central if numeric else case.gradient
    try:
        for mode in ("reverse", "forward", "auto"):
            got = s2s.grad(case.f, wrt=case.wrt, mode=mode, check=True)(*case.args)
            if not _close(got, want, case.tol, numeric):
                return "wrong", f"mode={mode}: {np.asarray(got).ravel()[:6]} against {np.asarray(want).ravel()[:6]}"
        if case.second:
            H = s2s.hessian(case.f, wrt=case.wrt, check=True)(*case.args)
            grad2 = case.extra.get("grad2")
            if grad2 is not None:          # an elementwise function: the Hessian is diagonal
                x = np.asarray(case.args[case.wrt])
                H = np.asarray(H).reshape(x.size, x.size)
                ok = _close(np.diag(H), np.ravel(grad2), case.tol, False) and \
                    _close(H - np.diag(np.diag(H)), np.zeros_like(H), case.tol, False)
            else:
                ref = case.hessian
                numeric_h = _numeric_hessian(case.f, case.args, case.wrt)
                if ref is None or not _close(ref, numeric_h, 1e-5, True, 2):
                    if ref is not None:
                        case.extra["library_wrong"] = "hessian"
                        # the reference is autograd on the same code: where the library's own @primitive rule
                        # is itself an approximation (autograd_gamma's gammainc in its shape: a five-point
                        # difference), its Hessian is the rule's, and s2s, which differentiates that rule, must
                        # equal it; central differences of the exact function are not the rule's
                        if case.extra.get("same_rules") and _close(H, ref, max(case.tol, 1e-5), False, 2):
                            return "ok", "second order equals the library's rules' (not central differences)"
                    ref = numeric_h
                ok = _close(H, ref, max(case.tol, 1e-5), ref is numeric_h, 2)
            if not ok:
                return "wrong", "second order"
    except S2SError as exc:
        text = str(exc)
        first = text.splitlines()[0] if text else type(exc).__name__
        part2 = "support `try`" in first or "recursion" in first or "@primitive" in first
        return ("refused-part-2" if part2 else "refused"), f"{type(exc).__name__}: {first}"
    except Exception as exc:                 # noqa: BLE001 - counted as a crash
        tb = traceback.extract_tb(exc.__traceback__)
        where = f"{tb[-1].filename.rsplit('/', 1)[-1]}:{tb[-1].lineno}" if tb else ""
        return "crash", f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''} ({where})"
    return "ok", ""


def run(libraries: tuple = LIBRARIES, verbose: bool = True) -> dict:
    results: dict = {}
    for library in libraries:
        cases = BUILDERS[library]()
        results[library] = [(case, *run_case(case)) for case in cases]
    if verbose:
        report(results)
    return results


def report(results: dict) -> None:
    statuses = ("ok", "refused", "refused-part-2", "wrong", "crash")
    print(f"{'library':<12}" + "".join(f"{s:>16}" for s in statuses) + f"{'total':>8}{'second':>8}")
    for library, rows in results.items():
        counts = [sum(1 for r in rows if r[1] == s) for s in statuses]
        second = sum(1 for r in rows if r[0].second)
        print(f"{library:<12}" + "".join(f"{c:>16}" for c in counts) + f"{len(rows):>8}{second:>8}")
    for library, rows in results.items():
        for case, status, detail in rows:
            if status != "ok":
                print(f"  {library}: {case.name}: {status}: {detail[:300]}")
            if case.extra.get("library_wrong"):
                print(f"  {library}: {case.name}: the library's own {case.extra['library_wrong']} disagrees with "
                      f"central differences (checked against those)")


if __name__ == "__main__":
    import warnings
    warnings.simplefilter("ignore")
    run(tuple(sys.argv[1:]) or LIBRARIES)
