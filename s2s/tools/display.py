"""Text that shows itself well in Jupyter: generated source as highlighted Python.

`Source` is a str (everything that used `s2s.source(...)` as a string keeps working, and print
shows the same plain text); a notebook displays it through `_repr_html_` (Pygments, when
installed) or `_repr_markdown_` (a fenced Python block) instead of a quoted string.
"""
from __future__ import annotations

import html


class Source(str):
    """Python source text that Jupyter displays as highlighted code."""

    __slots__ = ()

    def _repr_html_(self) -> str:
        try:
            from pygments import highlight
            from pygments.formatters import HtmlFormatter
            from pygments.lexers import PythonLexer
        except ImportError:
            return f"<pre><code class=\"language-python\">{html.escape(str(self))}</code></pre>"
        return highlight(str(self), PythonLexer(), HtmlFormatter(noclasses=True, nobackground=False))

    def _repr_markdown_(self) -> str:
        return f"```python\n{self.rstrip()}\n```\n"

    def _repr_pretty_(self, printer, cycle: bool) -> None:
        """IPython's plain-text display (a terminal): the code itself, not a quoted string."""
        printer.text(str(self))
