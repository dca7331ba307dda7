"""Source text, offsets and positions.

Every parser works on *normalized* text: line breaks are ``\\n`` only (``\\r\\n`` and a lone
``\\r`` become ``\\n``) and a leading byte-order mark is removed. Normalizing never changes
the line/character position of any other character, because a ``\\r`` only ever sits at
the end of a line, so positions computed on normalized text are valid for the original.

Internally a location is a :class:`TextRange` of code-point offsets into normalized text.
:class:`LineIndex` is the one place that converts offsets to line/column pairs, in code
points (for the CLI) or in UTF-16 code units (for the Language Server Protocol).
"""

from __future__ import annotations

import bisect
import re
import unicodedata
from typing import NamedTuple

BOM = "\ufeff"
_ASTRAL = re.compile("[\U00010000-\U0010ffff]")


class TextRange(NamedTuple):
    """A half-open range ``[start, end)`` of code-point offsets."""

    start: int
    end: int

    def shift(self, delta: int) -> TextRange:
        return TextRange(self.start + delta, self.end + delta)

    def contains(self, offset: int) -> bool:
        """True when ``offset`` is inside the range or touches its end (cursor semantics)."""
        return self.start <= offset <= self.end

    @property
    def length(self) -> int:
        return self.end - self.start


# ``new_range(TextRange, (start, end))`` builds a TextRange without the Python-level
# ``__new__`` of a NamedTuple (~3x faster), for the per-node hot paths of the parsers.
new_range = tuple.__new__


def first_line(text: str, rng: TextRange) -> TextRange:
    """The part of ``rng`` on its first line (where to report a multi-line node)."""
    e = text.find("\n", rng.start, rng.end)
    return TextRange(rng.start, rng.end if e < 0 else e)


def normalize_newlines(text: str) -> str:
    """Return ``text`` with ``\\n`` line breaks only and without a leading BOM."""
    if text.startswith(BOM):
        text = text[1:]
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    return text


class LineIndex:
    """Maps offsets in normalized text to (line, column) and back. Lines are 0-based."""

    __slots__ = ("_astral", "_line_starts", "_text")

    def __init__(self, text: str) -> None:
        self._text = text
        self._astral: list[int] | None = None  # offsets of astral characters, on demand
        starts = [0]
        find = text.find
        i = find("\n")
        while i != -1:
            starts.append(i + 1)
            i = find("\n", i + 1)
        self._line_starts = starts

    @property
    def text(self) -> str:
        return self._text

    @property
    def line_count(self) -> int:
        return len(self._line_starts)

    def line_start(self, line: int) -> int:
        return self._line_starts[min(max(line, 0), len(self._line_starts) - 1)]

    def line_end(self, line: int) -> int:
        """Offset of the end of ``line`` (before its ``\\n``)."""
        if line + 1 < len(self._line_starts):
            return self._line_starts[line + 1] - 1
        return len(self._text)

    def line_of(self, offset: int) -> int:
        offset = min(max(offset, 0), len(self._text))
        return bisect.bisect_right(self._line_starts, offset) - 1

    def position(self, offset: int) -> tuple[int, int]:
        """(line, column in code points), both 0-based."""
        offset = min(max(offset, 0), len(self._text))
        line = self.line_of(offset)
        return line, offset - self._line_starts[line]

    def utf16_position(self, offset: int) -> tuple[int, int]:
        """(line, column in UTF-16 code units), both 0-based — the LSP convention."""
        offset = min(max(offset, 0), len(self._text))
        line = self.line_of(offset)
        start = self._line_starts[line]
        astral = self._astral_offsets()
        wide = bisect.bisect_left(astral, offset) - bisect.bisect_left(astral, start)
        return line, offset - start + wide

    def offset(self, line: int, column: int) -> int:
        """Offset of a (line, code-point column); clamped into the document."""
        if line < 0:
            return 0
        if line >= len(self._line_starts):
            return len(self._text)
        start = self._line_starts[line]
        return min(start + max(column, 0), self.line_end(line))

    def offset_from_utf16(self, line: int, character: int) -> int:
        """Offset of an LSP (line, UTF-16 character) position; clamped into the line."""
        if line < 0:
            return 0
        if line >= len(self._line_starts):
            return len(self._text)
        start = self._line_starts[line]
        end = self.line_end(line)
        if character <= 0:
            return start
        astral = self._astral_offsets()
        first = bisect.bisect_left(astral, start)
        if first == len(astral) or astral[first] >= end:  # no astral character on the line
            return min(start + character, end)

        def units(offset: int) -> int:  # UTF-16 units from the line start to ``offset``
            return offset - start + bisect.bisect_left(astral, offset, first) - first

        if units(end) < character:
            return end
        # the first offset at or past ``character`` units (inside a surrogate pair: after it)
        lo, hi = start, end
        while lo < hi:
            mid = (lo + hi) // 2
            if units(mid) >= character:
                hi = mid
            else:
                lo = mid + 1
        return lo

    def _astral_offsets(self) -> list[int]:
        if self._astral is None:
            self._astral = [m.start() for m in _ASTRAL.finditer(self._text)]
        return self._astral


# Bidirectional controls reorder what a terminal shows ("Trojan Source").
_BIDI = frozenset("\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")


def safe_text(text: str) -> str:
    """``text`` with control characters (but tabs) and bidirectional controls replaced by
    U+FFFD, one for one, so that a file's bytes cannot drive the terminal (escape
    sequences) and offsets stay the same."""
    return "".join(
        "\ufffd" if (unicodedata.category(c) == "Cc" and c != "\t") or c in _BIDI else c
        for c in text
    )
