"""Request handlers for the language features: each converts the request to offsets,
calls its ``mantle_lsp.ide`` function and converts the plain result back.

The ``ide`` modules are imported as modules (``ide_hover.hover(...)``), never their
functions, so a test can replace a feature function in a server process.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from lsprotocol import types as lsp

from ..ide import hover as ide_hover
from ..ide import navigation as ide_navigation
from ..ide.types import Location
from . import convert

if TYPE_CHECKING:
    from .server import MantleServer


def register(server: MantleServer) -> None:
    def locations(found: list[Location]) -> list[lsp.Location]:
        return [convert.to_location(loc, server.index_of, server.uri_of) for loc in found]

    # -- hover --------------------------------------------------------------------------
    @server.request(lsp.TEXT_DOCUMENT_HOVER)
    def hover(params: lsp.HoverParams) -> lsp.Hover | None:
        doc = server.doc(params.text_document.uri)
        if doc is None:
            return None
        h = ide_hover.hover(doc.project, doc.path, convert.to_offset(doc.index, params.position))
        if h is None:
            return None
        return lsp.Hover(
            contents=lsp.MarkupContent(kind=lsp.MarkupKind.Markdown, value=h.markdown),
            range=convert.to_range(doc.index, h.range),
        )

    # -- navigation ---------------------------------------------------------------------
    @server.request(lsp.TEXT_DOCUMENT_DEFINITION)
    def definition(params: lsp.DefinitionParams) -> list[lsp.Location]:
        doc = server.doc(params.text_document.uri)
        if doc is None:
            return []
        offset = convert.to_offset(doc.index, params.position)
        return locations(ide_navigation.definition(doc.project, doc.path, offset))

    @server.request(lsp.TEXT_DOCUMENT_DECLARATION)
    def declaration(params: lsp.DeclarationParams) -> list[lsp.Location]:
        doc = server.doc(params.text_document.uri)
        if doc is None:
            return []
        offset = convert.to_offset(doc.index, params.position)
        return locations(ide_navigation.definition(doc.project, doc.path, offset))

    @server.request(lsp.TEXT_DOCUMENT_REFERENCES)
    def references(params: lsp.ReferenceParams) -> list[lsp.Location]:
        doc = server.doc(params.text_document.uri)
        if doc is None:
            return []
        offset = convert.to_offset(doc.index, params.position)
        found = ide_navigation.references(
            doc.project, doc.path, offset, params.context.include_declaration
        )
        return locations(found)

    @server.request(lsp.TEXT_DOCUMENT_DOCUMENT_HIGHLIGHT)
    def document_highlight(params: lsp.DocumentHighlightParams) -> list[lsp.DocumentHighlight]:
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
