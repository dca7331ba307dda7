"""Completion (``textDocument/completion``, ``completionItem/resolve``) and signature help:
what ``ide/completion.py`` offers at the cursor, as the client's protocol wants it."""

from __future__ import annotations

import dataclasses
import re
from functools import partial
from typing import Any

from lsprotocol import types as lsp

from ..ide import completion as ide_completion
from ..syntax.text import LineIndex, TextRange
from . import convert
from . import layers as lsp_layers
from .server import MantleServer

TRIGGER_CHARACTERS = [".", "@", "{", '"', "'", ":", " "]
# accepting `@skill.`, `session.` or `type: ` opens the suggestions for what follows
RETRIGGER = lsp.Command(title="Suggest", command="editor.action.triggerSuggest")
_TABSTOP = re.compile(r"\$(\d+)|\$\{(\d+)(:?)")


def register(server: MantleServer) -> None:
    options = lsp.CompletionOptions(trigger_characters=TRIGGER_CHARACTERS, resolve_provider=True)
    server.request(lsp.TEXT_DOCUMENT_COMPLETION, options)(partial(completion, server))
    server.request(lsp.COMPLETION_ITEM_RESOLVE)(partial(completion_resolve, server))
    server.request(
        lsp.TEXT_DOCUMENT_SIGNATURE_HELP,
        lsp.SignatureHelpOptions(trigger_characters=[":", " "], retrigger_characters=[":"]),
    )(partial(signature_help, server))


def completion(server: MantleServer, params: lsp.CompletionParams) -> lsp.CompletionList:
    # before the index, a document opened with the workspace is completed from its
    # first look: every item is right, but some may be missing (the responses of
    # skills it does not use yet), so the list says it is incomplete and the editor
    # asks again as the user types (gate.py)
    doc = server.doc(params.text_document.uri, partial_ok=True)
    if doc is None:
        return lsp_layers.completion(server, params)  # memory-layers/ (or nothing)
    offset = convert.to_offset(doc.index, params.position)
    result = ide_completion.complete(doc.project, doc.path, offset)
    if doc.early:
        result = dataclasses.replace(result, is_incomplete=True)
    return completion_list(server, params.text_document.uri, offset, result, doc.index)


def completion_resolve(server: MantleServer, item: lsp.CompletionItem) -> lsp.CompletionItem:
    """Add the documentation to an item of a completion list. The item is found again
    by its label where the list was asked for; when that is no longer possible (the
    document is closed, or was edited so that the item is no longer offered there, or
    the data is not ours) the item comes back unchanged."""
    data = item.data
    if item.documentation is not None or not isinstance(data, dict):
        return item
    uri, offset = data.get("uri"), data.get("offset")
    if not isinstance(uri, str) or type(offset) is not int:
        return item
    doc = server.doc(uri, partial_ok=True)
    if doc is None:
        return item
    found = ide_completion.item_at(doc.project, doc.path, offset, item.label)
    if found is None or convert.completion_kind(found.kind) != item.kind:
        return item
    if item.detail is not None and item.detail != found.detail:
        return item  # the same label, but something else now
    markdown = found.documentation
    if markdown:
        item.documentation = lsp.MarkupContent(kind=lsp.MarkupKind.Markdown, value=markdown)
    return item


def signature_help(
    server: MantleServer, params: lsp.SignatureHelpParams
) -> lsp.SignatureHelp | None:
    """The parameters of an ``execute_tool`` step's tool, in its ``parameters``."""
    doc = server.doc(params.text_document.uri)
    if doc is None:
        return None
    offset = convert.to_offset(doc.index, params.position)
    found = ide_completion.signature_help(doc.project, doc.path, offset)
    if found is None:
        return None
    sig = lsp.SignatureInformation(
        label=found.label,
        documentation=(
            lsp.MarkupContent(kind=lsp.MarkupKind.Markdown, value=found.doc) if found.doc else None
        ),
        parameters=[
            lsp.ParameterInformation(
                label=(_utf16(found.label, start), _utf16(found.label, end)),
                documentation=pdoc or None,
            )
            for start, end, pdoc in found.params
        ],
        active_parameter=found.active,
    )
    return lsp.SignatureHelp(signatures=[sig], active_signature=0, active_parameter=found.active)


def plain_snippet(text: str) -> str:
    """A snippet as plain text (for clients without snippet support): tab stops vanish,
    placeholders keep their text, escapes are undone."""
    out: list[str] = []
    i, depth = 0, 0
    while i < len(text):
        ch = text[i]
        if ch == "\\" and i + 1 < len(text) and text[i + 1] in "$}\\":
            out.append(text[i + 1])
            i += 2
            continue
        m = _TABSTOP.match(text, i)
        if m:
            if m.group(2) is not None:
                if m.group(3):
                    depth += 1  # ${1:placeholder…}: keep what follows up to its `}`
                else:
                    close = text.find("}", m.end())  # ${1}
                    i = close + 1 if close != -1 else len(text)
                    continue
            i = m.end()
            continue
        if ch == "}" and depth:
            depth -= 1
            i += 1
            continue
        out.append(ch)
        i += 1
    return "".join(out)


def completion_list(
    server: MantleServer,
    uri: str,
    offset: int,
    result: ide_completion.CompletionResult,
    index: LineIndex,
) -> lsp.CompletionList:
    """The protocol's list for what ``complete`` found at ``offset`` of ``uri``."""
    snippets = server.client_supports("text_document.completion.completion_item.snippet_support")
    # A client that resolves the documentation of items gets it from completionItem/resolve
    # (built for the one item it shows); any other gets it with every item.
    caps = server.client_capabilities.text_document
    completion = caps.completion if caps is not None else None
    options = completion.completion_item if completion is not None else None
    resolve = options.resolve_support if options is not None else None
    lazy = resolve is not None and "documentation" in resolve.properties
    data = {"uri": uri, "offset": offset} if lazy else None
    # a text of several lines is indented for where it goes: a client that would indent it
    # again (VS Code adds the line's indentation) is told to insert it as it is
    modes = options.insert_text_mode_support if options is not None else None
    as_is = modes is not None and lsp.InsertTextMode.AsIs in modes.value_set
    # What the items share (their edit range, the data) is said once, in itemDefaults, to
    # a client that reads them.
    found = completion.completion_list if completion is not None else None
    shared = frozenset(found.item_defaults or ()) if found is not None else frozenset()
    edits = [it.edit for it in result.items]
    default_range = None
    if "editRange" in shared and edits and all(e is not None for e in edits):
        default_range = edits[0].range if edits[0] is not None else None
    shared_data = data is not None and "data" in shared
    ranges: dict[TextRange, lsp.Range] = {}  # the items of a list share one or two
    items = [
        completion_item(
            it,
            index,
            snippets,
            lazy=lazy,
            data=None if shared_data else data,
            ranges=ranges,
            default_range=default_range,
            as_is=as_is,
        )
        for it in result.items
    ]
    defaults = None
    if default_range is not None or shared_data:
        defaults = lsp.CompletionItemDefaults(
            edit_range=(
                convert.to_range(index, default_range) if default_range is not None else None
            ),
            data=data if shared_data else None,
        )
    return lsp.CompletionList(
        is_incomplete=result.is_incomplete, items=items, item_defaults=defaults
    )


def _utf16(text: str, offset: int) -> int:
    """A code-point offset into ``text`` in UTF-16 code units (LSP label offsets)."""
    return len(text[:offset].encode("utf-16-le")) // 2


def completion_item(
    it: ide_completion.CompletionItem,
    index: LineIndex,
    snippets: bool,
    *,
    lazy: bool = False,
    data: dict[str, Any] | None = None,
    ranges: dict[TextRange, lsp.Range] | None = None,
    default_range: TextRange | None = None,
    as_is: bool = False,
) -> lsp.CompletionItem:
    """The protocol's item. ``lazy``: the documentation is left for
    ``completionItem/resolve`` (``data``, here or in the list's itemDefaults, says where
    the item was offered). An edit of ``default_range`` (the list's itemDefaults.editRange)
    becomes ``textEditText`` (nothing when it inserts the label). ``ranges`` caches
    converted edit ranges across the items of one list. ``as_is``: the client inserts a
    text of several lines as it is when told so (the server indents it for its place)."""
    text_edit = None
    edit_text = None
    fmt = lsp.InsertTextFormat.PlainText
    mode = None
    if it.edit is not None:
        new_text = it.edit.new_text
        if as_is and "\n" in new_text:
            mode = lsp.InsertTextMode.AsIs
        if it.snippet:
            if snippets:
                fmt = lsp.InsertTextFormat.Snippet
            else:
                new_text = plain_snippet(new_text)
        if it.edit.range == default_range:
            edit_text = new_text if new_text != it.label else None
        else:
            rng = ranges.get(it.edit.range) if ranges is not None else None
            if rng is None:
                rng = convert.to_range(index, it.edit.range)
                if ranges is not None:
                    ranges[it.edit.range] = rng
            text_edit = lsp.TextEdit(range=rng, new_text=new_text)
    documentation = None
    if not lazy:
        markdown = it.documentation
        if markdown:
            documentation = lsp.MarkupContent(kind=lsp.MarkupKind.Markdown, value=markdown)
    return lsp.CompletionItem(
        label=it.label,
        kind=convert.completion_kind(it.kind),
        detail=it.detail or None,
        documentation=documentation,
        sort_text=it.sort_text,
        filter_text=it.filter_text,
        text_edit=text_edit,
        text_edit_text=edit_text,
        insert_text_format=fmt,
        insert_text_mode=mode,
        data=data,
        command=RETRIGGER if it.retrigger else None,
    )
