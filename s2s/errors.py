"""Errors raised by s2s.

Every error about the user's code is an `S2SError` that names the construct and,
when it is known, the place in the user's file: `file:line:col`, the source line
and a caret under the column.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from s2s.ir.core import Loc


class S2SError(Exception):
    """Base class of every error s2s raises about the code it is asked to differentiate."""

    def __init__(self, message: str, loc: "Loc | None" = None, hint: str = ""):
        self.message = message
        self.loc = loc
        self.hint = hint
        super().__init__(self._format())

    def _format(self) -> str:
        text = self.message
        if self.hint:
            text += f"\n  hint: {self.hint}"
        if self.loc is None:
            return text
        where = f"{self.loc}: {text}"
        if self.loc.text:
            stripped = self.loc.text.rstrip()
            indent = len(stripped) - len(stripped.lstrip())
            caret = " " * (max(self.loc.col, indent) - indent) + "^"
            where += f"\n    {stripped.lstrip()}\n    {caret}"
        return where

    def one_line(self) -> str:
        """`file:line:col: message`, as the CLI prints it."""
        prefix = f"{self.loc}: " if self.loc is not None else ""
        return f"{prefix}{self.message}"


class SourceUnavailable(S2SError):
    """The function's source cannot be read (a builtin, a C function, code typed at a prompt)."""


class UnsupportedSyntax(S2SError):
    """The function uses a Python construct s2s does not differentiate."""


class RefusedWhenRun(UnsupportedSyntax, ValueError):
    """Derivative code found, when it ran, a case s2s does not model that only the arguments decide (a row,
    not a number, read from an array that is then written into)."""


class NoDerivativeRule(S2SError):
    """A call on the differentiated path to a function s2s has no rule and no source for."""


class NonScalarOutput(S2SError, TypeError):
    """`grad` was asked for the gradient of a function whose output is not a scalar."""


class BadArgument(S2SError, TypeError):
    """A `wrt` that names no argument, or a non-float value in a differentiated position."""


class InvalidIR(S2SError):
    """The IR verifier found a broken invariant: a bug in s2s, never in the user's code."""
