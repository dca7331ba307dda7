"""Reading a file into normalized text, turning every read problem into an issue."""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass, field
from pathlib import Path

from ..syntax.errors import SyntaxIssue
from ..syntax.text import BOM, LineIndex, TextRange, normalize_newlines

MAX_FILE_BYTES = 4 * 1024 * 1024  # larger files get one diagnostic instead of analysis

C_UNREADABLE = "lsp.file.unreadable"
C_ENCODING = "lsp.file.invalid_utf8"
C_TOO_LARGE = "lsp.file.too_large"
C_BINARY = "lsp.file.binary"


@dataclass(eq=False, slots=True)
class Source:
    path: Path
    text: str
    issues: list[SyntaxIssue] = field(default_factory=list)
    analyzable: bool = True
    version: int | None = None  # editor version of an open buffer
    bom: bool = False  # the file starts with a byte-order mark (taken off ``text``)
    _index: LineIndex | None = None

    @property
    def index(self) -> LineIndex:
        if self._index is None:
            self._index = LineIndex(self.text)
        return self._index


def source_from_text(path: Path, text: str, version: int | None = None) -> Source:
    """An open editor buffer (already decoded): the same verdict as the file saved."""
    size = _utf8_size(text)
    if size > MAX_FILE_BYTES:
        return Source(path, "", [_too_large(size)], analyzable=False, version=version)
    if "\0" in text:
        return Source(path, "", [_binary()], analyzable=False, version=version)
    return Source(path, normalize_newlines(text), version=version, bom=text.startswith(BOM))


def _utf8_size(text: str) -> int:
    """The size of ``text`` saved as UTF-8 (what the limit is about), cheaply bounded."""
    if len(text) * 4 <= MAX_FILE_BYTES:
        return len(text)  # cannot be over the limit: the exact size does not matter
    return len(text.encode("utf-8", "surrogatepass"))


def source_from_bytes(path: Path, data: bytes) -> Source:
    if len(data) > MAX_FILE_BYTES:
        return Source(path, "", [_too_large(len(data))], analyzable=False)
    if b"\0" in data:
        return Source(path, "", [_binary()], analyzable=False)
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
    return Source(path, normalize_newlines(text), bom=text.startswith(BOM))


def read_source(path: Path) -> Source:
    """Read a file from disk. Only regular files are read (a FIFO, a device or a socket
    could block or never end), and never more than the size limit."""
    data = read_file_bytes(path)
    return data if isinstance(data, Source) else source_from_bytes(path, data)


def read_file_bytes(path: Path) -> bytes | Source:
    """The bytes of the regular file ``path``, or a :class:`Source` whose one issue says
    why they cannot be had (not a regular file, over the size limit, unreadable).

    One ``open`` (non-blocking, so a FIFO cannot hang it), one ``fstat`` of the open file
    and unbuffered reads: a project of 1,000 skills reads ~4,000 files at every start.
    """
    try:
        fd = os.open(path, _OPEN_FLAGS)
    except OSError as exc:
        return _unreadable(path, exc.strerror or type(exc).__name__)
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            return _unreadable(path, "not a regular file")
        if st.st_size > MAX_FILE_BYTES:
            return Source(path, "", [_too_large(st.st_size)], analyzable=False)
        chunks: list[bytes] = []
        left = MAX_FILE_BYTES + 1  # the file may have grown since fstat
        while left > 0:
            want = min(left, max(st.st_size + 1, 65536))
            chunk = os.read(fd, want)
            if not chunk:
                break
            chunks.append(chunk)
            left -= len(chunk)
            if len(chunk) < want and MAX_FILE_BYTES + 1 - left >= st.st_size:
                break  # all fstat announced, and the read stopped short: the end
    except OSError as exc:
        return _unreadable(path, exc.strerror or type(exc).__name__)
    finally:
        os.close(fd)
    data = chunks[0] if len(chunks) == 1 else b"".join(chunks)
    if len(data) > MAX_FILE_BYTES:
        return Source(path, "", [_too_large(len(data))], analyzable=False)
    return data


_OPEN_FLAGS = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0)


def _unreadable(path: Path, reason: str) -> Source:
    return Source(
        path,
        "",
        [SyntaxIssue(C_UNREADABLE, f"cannot read this file: {reason}", TextRange(0, 0))],
        analyzable=False,
    )


def _binary() -> SyntaxIssue:
    return SyntaxIssue(
        C_BINARY, "this file contains NUL bytes (binary data); it is not analysed", TextRange(0, 0)
    )


def _too_large(n: int) -> SyntaxIssue:
    return SyntaxIssue(
        C_TOO_LARGE,
        f"file too large to analyse ({n:,} bytes; the limit is {MAX_FILE_BYTES:,})",
        TextRange(0, 0),
        "warning",
    )


def read_start(path: Path, limit: int) -> str | None:
    """The first ``limit`` bytes of the regular file ``path`` as text (invalid UTF-8
    replaced), or None for anything else (see :func:`_read_regular`)."""
    try:
        return _read_regular(path, limit).decode("utf-8", errors="replace")
    except OSError:
        return None


class FileTooLarge(OSError):
    """A file over the size limit of what reads it (:func:`read_limited`)."""


def read_limited(path: Path, limit: int) -> bytes:
    """The bytes of ``path`` for a file the user names (a baseline, a configuration
    file): only a regular file, never more than ``limit`` bytes. Raises ``OSError`` — its
    ``strerror`` says why: "not a regular file", :class:`FileTooLarge`."""
    data = _read_regular(path, limit + 1, refuse_over=limit)  # it may have grown
    if len(data) > limit:
        raise FileTooLarge(0, f"larger than {_size(limit)}", str(path))
    return data


def _read_regular(path: Path, limit: int, refuse_over: int | None = None) -> bytes:
    """At most ``limit`` bytes of ``path``, only a regular file (a FIFO or a device could
    block or never end: the open is non-blocking, the check on the open file). Raises
    ``OSError`` ("not a regular file"; :class:`FileTooLarge` when the file is larger than
    ``refuse_over``)."""
    fd = os.open(path, _OPEN_FLAGS)
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise OSError(0, "not a regular file", str(path))
        if refuse_over is not None and st.st_size > refuse_over:
            raise FileTooLarge(0, f"larger than {_size(refuse_over)}", str(path))
        chunks: list[bytes] = []
        left = limit
        while left > 0:
            chunk = os.read(fd, min(left, 1 << 20))
            if not chunk:
                break
            chunks.append(chunk)
            left -= len(chunk)
        return b"".join(chunks)
    finally:
        os.close(fd)


def _size(n: int) -> str:
    return f"{n // (1024 * 1024)} MB" if n >= 1024 * 1024 else f"{n} bytes"
