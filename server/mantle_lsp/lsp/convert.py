"""Conversions between protocol types and the ``ide`` layer's plain data.

This is the ONE place that converts positions. The protocol speaks (line, UTF-16
character); the ``ide`` layer speaks code-point offsets into a file's normalized text.
Normalizing (CRLF/CR → LF, dropping a leading BOM) never moves any other character, so an
editor position is converted on our normalized text with that file's
:class:`~mantle_lsp.syntax.text.LineIndex`.

Everything that needs the text of some file takes an :data:`IndexOf` callable, so that
locations in other files are converted with *their* current text (open buffer or disk).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

from lsprotocol import types as lsp

from ..ide.codes import Severity
from ..ide.diagnostics import Diagnostic
from ..ide.types import Location, TextEdit, WorkspaceEdit
from ..syntax.text import LineIndex, TextRange

# paths and URIs, and the parts of a diagnostic on the wire, without lsprotocol (wire.py)
from .wire import SOURCE as SOURCE
from .wire import InvalidUri as InvalidUri
from .wire import RelatedTarget as RelatedTarget
from .wire import code_page_uri as code_page_uri
from .wire import diagnostic_data
from .wire import path_to_uri as path_to_uri
from .wire import uri_to_path as uri_to_path
from .wire import uri_to_raw_path as uri_to_raw_path

IndexOf = Callable[[Path], LineIndex]
"""The line index of a file's current normalized text."""

_LINE_BREAK = re.compile(r"\r\n|\r|\n")

# -- URIs and paths ---------------------------------------------------------------------


# -- positions --------------------------------------------------------------------------


def to_offset(index: LineIndex, pos: lsp.Position) -> int:
    return index.offset_from_utf16(pos.line, pos.character)


def raw_offset(text: str, pos: lsp.Position) -> int:
    """The code-point offset of an LSP position in a document's *raw* text (any line
    breaks). Only ``\\n``, ``\\r\\n`` and ``\\r`` end a line, as in the protocol; a
    position past the end of its line is at the end of the line, one past the last line is
    the end of the text."""
    if pos.line < 0:
        return 0
    start = 0
    if "\r" not in text:
        for _ in range(pos.line):
            nl = text.find("\n", start)
            if nl == -1:
                return len(text)
            start = nl + 1
        eol = text.find("\n", start)
    else:
        for _ in range(pos.line):
            m = _LINE_BREAK.search(text, start)
            if m is None:
                return len(text)
            start = m.end()
        m = _LINE_BREAK.search(text, start)
        eol = m.start() if m is not None else -1
    if eol == -1:
        eol = len(text)
    i, units = start, 0
    while i < eol and units < pos.character:
        units += 2 if ord(text[i]) > 0xFFFF else 1
        i += 1
    return i


def apply_change(text: str, change: lsp.TextDocumentContentChangeEvent) -> str:
    """A document's raw text after one ``didChange`` content change.

    pygls splits lines with ``str.splitlines``, which also breaks at form feeds, ``\\x85``,
    U+2028 and friends: after such a character its copy of the document would no longer
    match the editor's. This follows the protocol's line breaks only."""
    if not isinstance(change, lsp.TextDocumentContentChangePartial):
        return change.text
    start = raw_offset(text, change.range.start)
    end = raw_offset(text, change.range.end)
    if end < start:
        start, end = end, start
    return text[:start] + change.text + text[end:]


def to_text_range(index: LineIndex, rng: lsp.Range) -> TextRange:
    start = to_offset(index, rng.start)
    end = to_offset(index, rng.end)
    return TextRange(start, max(start, end))


def to_position(index: LineIndex, offset: int) -> lsp.Position:
    line, character = index.utf16_position(offset)
    return lsp.Position(line=line, character=character)


def to_range(index: LineIndex, rng: TextRange) -> lsp.Range:
    return lsp.Range(start=to_position(index, rng.start), end=to_position(index, rng.end))


def to_location(loc: Location, index_of: IndexOf, uri_of: Callable[[Path], str]) -> lsp.Location:
    return lsp.Location(uri=uri_of(loc.path), range=to_range(index_of(loc.path), loc.range))


# -- diagnostics ------------------------------------------------------------------------

_SEVERITY: dict[str, lsp.DiagnosticSeverity] = {
    "error": lsp.DiagnosticSeverity.Error,
    "warning": lsp.DiagnosticSeverity.Warning,
    "information": lsp.DiagnosticSeverity.Information,
    "hint": lsp.DiagnosticSeverity.Hint,
}
_SEVERITY_BACK: dict[int, Severity] = {
    1: "error",
    2: "warning",
    3: "information",
    4: "hint",
}


def to_diagnostic(
    d: Diagnostic, index: LineIndex, related: RelatedTarget | None = None
) -> lsp.Diagnostic:
    """Our diagnostic on the wire: its fix data and the engine's code travel in ``data``
    (a client sends them back with a code-action request). With ``related`` (a client
    that declared ``relatedInformation``), the other places it is about as related
    information, each converted with its own file's line index."""
    page = code_page_uri(d.code)
    info: list[lsp.DiagnosticRelatedInformation] = []
    for r in d.related:
        target = related(r.location.path) if related is not None else None
        if target is None:
            continue
        u, idx = target
        info.append(
            lsp.DiagnosticRelatedInformation(
                location=lsp.Location(uri=u, range=to_range(idx, r.location.range)),
                message=r.message,
            )
        )
    return lsp.Diagnostic(
        range=to_range(index, d.range),
        message=d.message,
        severity=_SEVERITY.get(d.severity, lsp.DiagnosticSeverity.Warning),
        code=d.code,
        code_description=lsp.CodeDescription(href=page) if page else None,
        source=SOURCE,
        data=diagnostic_data(d),
        related_information=info or None,
    )


def from_diagnostic(d: lsp.Diagnostic, path: Path, index: LineIndex) -> Diagnostic:
    """An editor's diagnostic (e.g. from a code-action context) back as plain data, with
    the fix data it carries."""
    sev: Severity = _SEVERITY_BACK.get(int(d.severity), "warning") if d.severity else "warning"
    data = d.data if isinstance(d.data, dict) else None
    if data is not None:
        data = {k: v for k, v in data.items() if k != "engine_code"} or None
    return Diagnostic(path, to_text_range(index, d.range), str(d.code or ""), sev, d.message, data)


def code_matches(code: str, patterns: Iterable[str]) -> bool:
    """``code`` equals a pattern or starts with it as a dotted prefix."""
    for p in patterns:
        p = p.strip()
        if p and (code == p or code.startswith(p.rstrip(".") + ".")):
            return True
    return False


# -- edits ------------------------------------------------------------------------------


def to_text_edit(edit: TextEdit, index: LineIndex) -> lsp.TextEdit:
    return lsp.TextEdit(range=to_range(index, edit.range), new_text=edit.new_text)


def to_workspace_edit(
    edit: WorkspaceEdit,
    index_of: IndexOf,
    uri_of: Callable[[Path], str],
    version_of: Callable[[Path], int | None],
    document_changes: bool,
    annotations: bool = False,
) -> lsp.WorkspaceEdit:
    """New files first (created, then filled), then text edits, then file/folder renames.
    New files and renames need ``documentChanges``; without it only the text edits can
    be expressed (the caller checks what the client supports). Edits with a note become
    annotated edits when the client supports change annotations (``annotations``, with
    ``documentChanges``); otherwise those that need confirmation are left out (they are
    never applied unasked) and the others are plain edits."""
    annotate = annotations and document_changes and bool(edit.notes)

    def kept(edits: tuple[TextEdit, ...]) -> list[TextEdit]:
        if annotate:
            return list(edits)
        return [
            e
            for e in edits
            if e.note is None or not (n := edit.notes.get(e.note)) or not n.needs_confirmation
        ]

    def convert(e: TextEdit, index: LineIndex) -> lsp.TextEdit | lsp.AnnotatedTextEdit:
        if annotate and e.note is not None and e.note in edit.notes:
            return lsp.AnnotatedTextEdit(
                range=to_range(index, e.range), new_text=e.new_text, annotation_id=e.note
            )
        return to_text_edit(e, index)

    if not document_changes:
        changes = {
            uri_of(path): [to_text_edit(e, index_of(path)) for e in kept(edits)]
            for path, edits in edit.edits.items()
            if kept(edits)
        }
        return lsp.WorkspaceEdit(changes=changes)
    ops: list[Any] = []
    for path, text in edit.new_files.items():
        uri = uri_of(path)
        ops.append(
            lsp.CreateFile(
                kind="create",
                uri=uri,
                options=lsp.CreateFileOptions(overwrite=False, ignore_if_exists=True),
            )
        )
        start = lsp.Position(line=0, character=0)
        ops.append(
            lsp.TextDocumentEdit(
                text_document=lsp.OptionalVersionedTextDocumentIdentifier(uri=uri, version=None),
                edits=[lsp.TextEdit(range=lsp.Range(start=start, end=start), new_text=text)],
            )
        )
    for path, edits in edit.edits.items():
        if not kept(edits):
            continue
        ops.append(
            lsp.TextDocumentEdit(
                text_document=lsp.OptionalVersionedTextDocumentIdentifier(
                    uri=uri_of(path), version=version_of(path)
                ),
                edits=[convert(e, index_of(path)) for e in kept(edits)],
            )
        )
    for old, new in edit.renames:
        ops.append(lsp.RenameFile(kind="rename", old_uri=uri_of(old), new_uri=uri_of(new)))
    if not annotate:
        return lsp.WorkspaceEdit(document_changes=ops)
    notes = {
        key: lsp.ChangeAnnotation(
            label=n.label,
            needs_confirmation=n.needs_confirmation,
            description=n.description or None,
        )
        for key, n in edit.notes.items()
    }
    return lsp.WorkspaceEdit(document_changes=ops, change_annotations=notes)


# -- kinds ------------------------------------------------------------------------------

_SYMBOL_KINDS: dict[str, lsp.SymbolKind] = {
    "skill": lsp.SymbolKind.Module,
    "field": lsp.SymbolKind.Field,
    "block": lsp.SymbolKind.Namespace,
    "step": lsp.SymbolKind.Event,
    "response": lsp.SymbolKind.String,
    "tool": lsp.SymbolKind.Function,
    "precondition": lsp.SymbolKind.Boolean,
    "mcp": lsp.SymbolKind.Interface,
    "model_group": lsp.SymbolKind.Class,
    "namespace": lsp.SymbolKind.Namespace,
    "keyword": lsp.SymbolKind.Key,
    "value": lsp.SymbolKind.EnumMember,
    "property": lsp.SymbolKind.Property,
    "snippet": lsp.SymbolKind.Constant,
    "file": lsp.SymbolKind.File,
    "heading": lsp.SymbolKind.String,  # as VS Code's Markdown outline shows headings
}

_COMPLETION_KINDS: dict[str, lsp.CompletionItemKind] = {
    "skill": lsp.CompletionItemKind.Module,
    "field": lsp.CompletionItemKind.Field,
    "block": lsp.CompletionItemKind.Struct,
    "step": lsp.CompletionItemKind.Event,
    "response": lsp.CompletionItemKind.Text,
    "tool": lsp.CompletionItemKind.Function,
    "precondition": lsp.CompletionItemKind.Constant,
    "mcp": lsp.CompletionItemKind.Interface,
    "model_group": lsp.CompletionItemKind.Class,
    "namespace": lsp.CompletionItemKind.Module,
    "keyword": lsp.CompletionItemKind.Keyword,
    "value": lsp.CompletionItemKind.EnumMember,
    "property": lsp.CompletionItemKind.Property,
    "snippet": lsp.CompletionItemKind.Snippet,
    "file": lsp.CompletionItemKind.File,
}


def symbol_kind(kind: str) -> lsp.SymbolKind:
    return _SYMBOL_KINDS.get(kind, lsp.SymbolKind.Variable)


def completion_kind(kind: str) -> lsp.CompletionItemKind:
    return _COMPLETION_KINDS.get(kind, lsp.CompletionItemKind.Text)


_HIGHLIGHT_KINDS: dict[str, lsp.DocumentHighlightKind] = {
    "read": lsp.DocumentHighlightKind.Read,
    "write": lsp.DocumentHighlightKind.Write,
    "text": lsp.DocumentHighlightKind.Text,
}


def highlight_kind(kind: str) -> lsp.DocumentHighlightKind:
    return _HIGHLIGHT_KINDS.get(kind, lsp.DocumentHighlightKind.Text)


_FOLD_KINDS: dict[str, lsp.FoldingRangeKind] = {
    "comment": lsp.FoldingRangeKind.Comment,
    "imports": lsp.FoldingRangeKind.Imports,
    "region": lsp.FoldingRangeKind.Region,
}


def folding_kind(kind: str | None) -> lsp.FoldingRangeKind | None:
    return _FOLD_KINDS.get(kind) if kind else None


# -- semantic tokens --------------------------------------------------------------------


def encode_semantic_tokens(
    tokens: Iterable[tuple[TextRange, str, Sequence[str]]],
    index: LineIndex,
    token_types: Sequence[str],
    token_modifiers: Sequence[str],
) -> list[int]:
    """The protocol's relative encoding, in UTF-16 units. A token spanning several lines
    is split into one token per line (clients without multiline support need it)."""
    type_ids = {t: i for i, t in enumerate(token_types)}
    mod_bits = {m: 1 << i for i, m in enumerate(token_modifiers)}
    pieces: list[tuple[int, int, int, int, int]] = []
    for rng, typ, mods in tokens:
        tid = type_ids.get(typ)
        if tid is None or rng.end <= rng.start:
            continue
        bits = 0
        for m in mods:
            bits |= mod_bits.get(m, 0)
        first, last = index.line_of(rng.start), index.line_of(rng.end)
        for line in range(first, last + 1):
            start = max(rng.start, index.line_start(line))
            end = min(rng.end, index.line_end(line))
            if end <= start:
                continue
            _, c0 = index.utf16_position(start)
            _, c1 = index.utf16_position(end)
            pieces.append((line, c0, c1 - c0, tid, bits))
    pieces.sort(key=lambda p: (p[0], p[1]))  # stable: on a tie the first token wins
    data: list[int] = []
    prev_line = prev_char = 0
    last_end: tuple[int, int] = (-1, -1)
    for line, char, length, tid, bits in pieces:
        if (line, char) < last_end:
            continue  # overlapping tokens are not allowed
        delta_line = line - prev_line
        delta_char = char - prev_char if delta_line == 0 else char
        data.extend((delta_line, delta_char, length, tid, bits))
        prev_line, prev_char = line, char
        last_end = (line, char + length)
    return data
