"""The error value every parser returns next to its tree. Parsers never raise on input."""

from __future__ import annotations

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


# The one code for a construct of an older version that this version ignores or rejects
# (every parser and the quick fixes that rewrite such constructs use it).
C_LEGACY = "lsp.legacy.syntax"
