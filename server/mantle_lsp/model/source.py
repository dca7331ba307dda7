"""Reading a file into normalized text, turning every read problem into an issue."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from ..syntax.errors import SyntaxIssue
from ..syntax.text import LineIndex, TextRange, normalize_newlines

MAX_FILE_BYTES = 4 * 1024 * 1024  # larger files get one diagnostic instead of analysis

C_UNREADABLE = "lsp.file.unreadable"
C_ENCODING = "lsp.file.invalid_utf8"
C_TOO_LARGE = "lsp.file.too_large"
C_BINARY = "lsp.file.binary"


@dataclass(eq=False)
class Source:
    path: Path
    text: str
    issues: list[SyntaxIssue] = field(default_factory=list)
    analyzable: bool = True
    version: int | None = None  # editor version of an open buffer
    _index: LineIndex | None = None

    @property
    def index(self) -> LineIndex:
        if self._index is None:
            self._index = LineIndex(self.text)
        return self._index


def source_from_text(path: Path, text: str, version: int | None = None) -> Source:
    """An open editor buffer (already decoded)."""
    src = Source(path, normalize_newlines(text), version=version)
    if len(src.text) > MAX_FILE_BYTES:
        src.issues.append(_too_large(len(src.text)))
        src.analyzable = False
    return src


def source_from_bytes(path: Path, data: bytes) -> Source:
    if len(data) > MAX_FILE_BYTES:
        return Source(path, "", [_too_large(len(data))], analyzable=False)
    if b"\0" in data:
        return Source(
            path,
            "",
            [
                SyntaxIssue(
                    C_BINARY,
                    "this file contains NUL bytes (binary data); it is not analysed",
                    TextRange(0, 0),
                )
            ],
            analyzable=False,
        )
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        good = data[: exc.start].decode("utf-8", errors="replace")
        text = data.decode("utf-8", errors="replace")
        norm = normalize_newlines(text)
        off = len(normalize_newlines(good))
        return Source(
            path,
            norm,
            [
                SyntaxIssue(
                    C_ENCODING,
                    f"invalid UTF-8 at byte {exc.start}: the engine cannot read this file; "
                    "save it as UTF-8",
                    TextRange(off, min(off + 1, len(norm))),
                )
            ],
        )
    return Source(path, normalize_newlines(text))


def read_source(path: Path) -> Source:
    try:
        data = path.read_bytes()
    except OSError as exc:
        reason = exc.strerror or type(exc).__name__
        return Source(
            path,
            "",
            [SyntaxIssue(C_UNREADABLE, f"cannot read this file: {reason}", TextRange(0, 0))],
            analyzable=False,
        )
    return source_from_bytes(path, data)


def _too_large(n: int) -> SyntaxIssue:
    return SyntaxIssue(
        C_TOO_LARGE,
        f"file too large to analyse ({n:,} bytes; the limit is {MAX_FILE_BYTES:,})",
        TextRange(0, 0),
        "warning",
    )
