"""Adding a code to a file's ``per-file-ignores`` in a configuration file (``mantle-lsp.toml``,
or ``pyproject.toml``'s ``[tool.mantle-lsp.per-file-ignores]``), as one text edit that
leaves every other byte alone: comments, formatting, key order and line ends.

Written by hand, not on a TOML library that re-dumps a document: the edit inserts into a
line or after one and never rewrites the rest. Where the file is written in a way these
few patterns cannot edit safely (an inline table, a dotted key, an entry spread over
several lines), there is no edit: the author edits it. Each edit is checked by parsing the
result: the code must be listed for the file afterwards, and the file valid TOML before.
"""

from __future__ import annotations

import json
import re
import sys

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

from ..syntax.text import TextRange
from .edits import after_line, insert_lines
from .types import TextEdit

__all__ = ["PFI", "add_per_file_ignore", "new_table", "table_header"]

PFI = "per-file-ignores"
_TOOL_PFI_HEADER = re.compile(
    r"""^[ \t]*\[[ \t]*tool[ \t]*\.[ \t]*(?:"mantle-lsp"|'mantle-lsp'|mantle-lsp)[ \t]*\.[ \t]*"""
    r"""(?:"per-file-ignores"|'per-file-ignores'|per-file-ignores)[ \t]*\][ \t]*(?:#.*)?$""",
    re.M,
)
_PFI_HEADER = re.compile(
    r"""^[ \t]*\[[ \t]*(?:"per-file-ignores"|'per-file-ignores'|per-file-ignores)[ \t]*\]"""
    r"""[ \t]*(?:#.*)?$""",
    re.M,
)
_TOML_ENTRY = re.compile(
    r"""^[ \t]*("(?:[^"\\\n]|\\.)*"|'[^'\n]*'|[A-Za-z0-9_-]+)[ \t]*=[ \t]*(.*)$""", re.M
)


def table_header(pyproject: bool) -> str:
    """The header of the per-file-ignores table (in a pyproject.toml, under ``tool``)."""
    return "[tool.mantle-lsp.per-file-ignores]" if pyproject else f"[{PFI}]"


def new_table(pyproject: bool, glob: str, code: str) -> str:
    """A new per-file-ignores table listing ``code`` for ``glob`` (a file's content, or
    what is added at the end of one)."""
    return f"{table_header(pyproject)}\n{_entry(glob, code)}\n"


def add_per_file_ignore(text: str, pyproject: bool, glob: str, code: str) -> TextEdit | None:
    """The edit of the configuration ``text`` that lists ``code`` for ``glob`` in its
    per-file-ignores: added to the glob's entry, as a new entry at the end of the table,
    or a new table at the end of the file. None when ``text`` is not valid TOML, lists
    the code for the glob already, or is written in a way this cannot edit safely."""
    if not _lists(text, pyproject, glob, code, present=False):
        return None
    crlf = "\r\n" in text
    edit = _edit(text.replace("\r\n", "\n") if crlf else text, pyproject, glob, code)
    if edit is None:
        return None
    if crlf:  # the file's own line ends (the edit was made on the text without them)
        edit = TextEdit(
            TextRange(_with_cr(text, edit.range.start), _with_cr(text, edit.range.end)),
            edit.new_text.replace("\n", "\r\n"),
        )
    after = text[: edit.range.start] + edit.new_text + text[edit.range.end :]
    if not _lists(after, pyproject, glob, code, present=True):
        return None
    return edit


def _with_cr(text: str, offset: int) -> int:
    """An offset into ``text`` without its ``\\r\\n`` line ends as an offset into
    ``text``."""
    at = 0
    for line in re.findall(r"[^\n]*\n|[^\n]+\Z", text):
        size = len(line) - (1 if line.endswith("\r\n") else 0)
        if offset < size or (offset == size and not line.endswith("\n")):
            break
        offset -= size
        at += len(line)
    return at + offset


def _entry(glob: str, code: str) -> str:
    return f"{json.dumps(glob)} = [{json.dumps(code)}]"


def _edit(text: str, pyproject: bool, glob: str, code: str) -> TextEdit | None:
    found = (_TOOL_PFI_HEADER if pyproject else _PFI_HEADER).search(text)
    if found is None:
        if PFI in text:
            return None  # an inline table or a dotted key: leave it to the author
        sep = "" if not text or text.endswith("\n\n") else "\n" if text.endswith("\n") else "\n\n"
        return TextEdit(TextRange(len(text), len(text)), sep + new_table(pyproject, glob, code))
    body_start = after_line(text, found.end())
    nxt = re.compile(r"^[ \t]*\[", re.M).search(text, body_start)
    body_end = nxt.start() if nxt else len(text)
    for m in _TOML_ENTRY.finditer(text, body_start, body_end):
        key = m.group(1)
        name = json.loads(key) if key.startswith('"') else key.strip("'")
        if name != glob:
            continue
        value = m.group(2)
        close = value.rfind("]")
        if not value.startswith("[") or close < 0:
            return None  # over several lines: leave it to the author
        inner = value[1:close].strip().rstrip(",").strip()
        at = m.start(2) + close
        return TextEdit(TextRange(at, at), f", {json.dumps(code)}" if inner else json.dumps(code))
    last = found.end()  # after the table's last line that is neither blank nor a comment
    for line in re.finditer(r"^[ \t]*[^\s#].*$", text[body_start:body_end], re.M):
        last = body_start + line.end()
    return insert_lines(text, last, [_entry(glob, code)])


def _lists(text: str, pyproject: bool, glob: str, code: str, present: bool) -> bool:
    """Whether ``text`` is valid TOML whose per-file-ignores lists ``code`` for ``glob``
    (with ``present``) or does not yet (without)."""
    try:
        data = tomllib.loads(text)
    except (tomllib.TOMLDecodeError, RecursionError):  # nested too deeply for the parser
        return False
    table: object = data
    for key in (["tool", "mantle-lsp"] if pyproject else []) + [PFI]:
        table = table.get(key, {}) if isinstance(table, dict) else None
    if not isinstance(table, dict):
        return False
    codes = table.get(glob, [])
    listed = isinstance(codes, list) and code in codes
    return listed if present else not listed
