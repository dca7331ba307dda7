"""The error value every parser returns next to its tree. Parsers never raise on input."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, Literal

from .text import TextRange

Severity = Literal["error", "warning", "information", "hint"]


@dataclass(frozen=True)
class SyntaxIssue:
    """A problem found while parsing one file.

    ``code`` is a diagnostic code from the registry (``mantle_lsp.ide.codes``): an engine
    code where the engine has one, otherwise an ``lsp.<area>.<name>`` code.
    ``range`` is in code-point offsets of the normalized file text. ``data`` is plain JSON
    data for a quick fix, never to be recovered from the message.
    """

    code: str
    message: str
    range: TextRange
    severity: Severity = "error"
    # what a quick fix needs (e.g. ``{"wrong": …, "meant": …}`` for a did-you-mean)
    data: dict[str, Any] | None = field(default=None, hash=False)

    def shifted(self, delta: int) -> SyntaxIssue:
        return SyntaxIssue(
            self.code, self.message, self.range.shift(delta), self.severity, self.data
        )


def closest(name: str, candidates: Iterable[str], cutoff: float = 0.6) -> str | None:
    """The candidate the author probably meant by ``name`` (what a "did you mean"
    suggests), or None when none is close enough."""
    import difflib  # only when a name is not found

    m = difflib.get_close_matches(name, list(candidates), n=1, cutoff=cutoff)
    return m[0] if m else None


# The one code for a construct of an older version that this version ignores or rejects
# (every parser and the quick fixes that rewrite such constructs use it).
C_LEGACY = "lsp.legacy.syntax"
