"""Navigation: go to definition and declaration, references (``textDocument/references``
and ``mantle/references``, which says what each place is), document highlights and the
call hierarchy (skills handing over to skills, steps calling tools)."""

from __future__ import annotations

from functools import partial
from pathlib import Path
from typing import Any

from lsprotocol import types as lsp

from ..ide import call_hierarchy as ide_call_hierarchy
from ..ide import navigation as ide_navigation
from . import convert
from . import layers as lsp_layers
from .params import integer, object_params, required_string
from .results import locations, param, wire_range
from .server import MantleServer

REFERENCES_WITH_KINDS = "mantle/references"  # a request of ours (docs/lsp.md)


def register(server: MantleServer) -> None:
    server.request(lsp.TEXT_DOCUMENT_DEFINITION)(partial(definition, server))
    server.request(lsp.TEXT_DOCUMENT_DECLARATION)(partial(declaration, server))
    server.request(lsp.TEXT_DOCUMENT_REFERENCES)(partial(references, server))
    server.request(REFERENCES_WITH_KINDS)(partial(references_with_kinds, server))
    server.request(lsp.TEXT_DOCUMENT_DOCUMENT_HIGHLIGHT)(partial(document_highlight, server))
    server.request(lsp.TEXT_DOCUMENT_PREPARE_CALL_HIERARCHY)(
        partial(prepare_call_hierarchy, server)
    )
    server.request(lsp.CALL_HIERARCHY_INCOMING_CALLS)(partial(incoming_calls, server))
    server.request(lsp.CALL_HIERARCHY_OUTGOING_CALLS)(partial(outgoing_calls, server))


def definition(server: MantleServer, params: lsp.DefinitionParams) -> list[lsp.Location]:
    doc = server.doc(params.text_document.uri)
    if doc is None:
        return lsp_layers.definition(server, params)  # memory-layers/ (or nothing)
    offset = convert.to_offset(doc.index, params.position)
    return locations(server, ide_navigation.definition(doc.project, doc.path, offset))


def declaration(server: MantleServer, params: lsp.DeclarationParams) -> list[lsp.Location]:
    doc = server.doc(params.text_document.uri)
    if doc is None:
        return []
    offset = convert.to_offset(doc.index, params.position)
    return locations(server, ide_navigation.definition(doc.project, doc.path, offset))


def references(server: MantleServer, params: lsp.ReferenceParams) -> list[lsp.Location]:
    doc = server.doc(params.text_document.uri)
    if doc is None:
        return []
    offset = convert.to_offset(doc.index, params.position)
    found = ide_navigation.references(
        doc.project, doc.path, offset, params.context.include_declaration
    )
    return locations(server, found)


def references_with_kinds(server: MantleServer, params: Any) -> list[dict[str, Any]]:
    """``textDocument/references`` with what each place is (docs/lsp.md): LSP locations
    carry no kind, so a client that wants to show prose mentions apart asks this."""
    m = REFERENCES_WITH_KINDS
    object_params(m, params, "the params of textDocument/references")
    doc_uri = required_string(m, params, "textDocument", "uri")
    line = integer(m, params, "position", "line")
    char = integer(m, params, "position", "character")
    doc = server.doc(doc_uri)
    if doc is None:
        return []
    offset = convert.to_offset(doc.index, lsp.Position(line=line, character=char))
    decl = bool(param(params, "context", "includeDeclaration"))
    found = ide_navigation.reference_kinds(doc.project, doc.path, offset, decl)
    out = []
    for loc, kind in found:
        where = convert.to_location(loc, server.index_of, server.uri_of)
        out.append({"uri": where.uri, "range": wire_range(where.range), "kind": kind})
    return out


def document_highlight(
    server: MantleServer, params: lsp.DocumentHighlightParams
) -> list[lsp.DocumentHighlight]:
    doc = server.doc(params.text_document.uri)
    if doc is None:
        return []
    offset = convert.to_offset(doc.index, params.position)
    return [
        lsp.DocumentHighlight(
            range=convert.to_range(doc.index, h.range), kind=convert.highlight_kind(h.kind)
        )
        for h in ide_navigation.highlights(doc.project, doc.path, offset)
    ]


# -- call hierarchy ---------------------------------------------------------------------
def _call_item(server: MantleServer, it: ide_call_hierarchy.CallItem) -> lsp.CallHierarchyItem:
    index = server.index_of(it.path)
    return lsp.CallHierarchyItem(
        name=it.name,
        kind=lsp.SymbolKind.Module if it.kind == "skill" else lsp.SymbolKind.Function,
        uri=server.uri_of(it.path),
        range=convert.to_range(index, it.range),
        selection_range=convert.to_range(index, it.selection),
        detail=it.detail or None,
        data={"key": list(it.key)},
    )


def _call_key(
    server: MantleServer, it: lsp.CallHierarchyItem
) -> tuple[Any, tuple[str, ...], Path] | None:
    doc = server.doc(it.uri)
    key = it.data.get("key") if isinstance(it.data, dict) else None
    if doc is None or not isinstance(key, list) or not all(isinstance(k, str) for k in key):
        return None
    return doc.project, tuple(key), doc.path


def prepare_call_hierarchy(
    server: MantleServer, params: lsp.CallHierarchyPrepareParams
) -> list[lsp.CallHierarchyItem] | None:
    doc = server.doc(params.text_document.uri)
    if doc is None:
        return None
    offset = convert.to_offset(doc.index, params.position)
    found = ide_call_hierarchy.prepare(doc.project, doc.path, offset)
    return [_call_item(server, it) for it in found] or None


def incoming_calls(
    server: MantleServer, params: lsp.CallHierarchyIncomingCallsParams
) -> list[lsp.CallHierarchyIncomingCall]:
    got = _call_key(server, params.item)
    if got is None:
        return []
    project, key, _ = got
    return [
        lsp.CallHierarchyIncomingCall(
            from_=_call_item(server, c.item),
            from_ranges=[convert.to_range(server.index_of(c.item.path), r) for r in c.ranges],
        )
        for c in ide_call_hierarchy.incoming(project, key)
    ]


def outgoing_calls(
    server: MantleServer, params: lsp.CallHierarchyOutgoingCallsParams
) -> list[lsp.CallHierarchyOutgoingCall]:
    got = _call_key(server, params.item)
    if got is None:
        return []
    project, key, path = got
    caller = server.index_of(path)
    return [
        lsp.CallHierarchyOutgoingCall(
            to=_call_item(server, c.item),
            from_ranges=[convert.to_range(caller, r) for r in c.ranges],
        )
        for c in ide_call_hierarchy.outgoing(project, key)
    ]
