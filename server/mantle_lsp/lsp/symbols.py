"""Symbols: the outline of a document (``textDocument/documentSymbol``, nested for a
client that shows a tree, flat for any other) and ``workspace/symbol``."""

from __future__ import annotations

from functools import partial

from lsprotocol import types as lsp

from ..ide import outline as ide_outline
from ..syntax.text import LineIndex, TextRange
from . import convert
from .server import MantleServer


def register(server: MantleServer) -> None:
    server.request(lsp.TEXT_DOCUMENT_DOCUMENT_SYMBOL)(partial(document_symbol, server))
    server.request(lsp.WORKSPACE_SYMBOL)(partial(workspace_symbol, server))


def document_symbol(
    server: MantleServer, params: lsp.DocumentSymbolParams
) -> list[lsp.DocumentSymbol] | list[lsp.SymbolInformation]:
    doc = server.doc(params.text_document.uri, partial_ok=True)
    if doc is None:
        return []
    symbols = ide_outline.document_symbols(doc.project, doc.path)
    if server.client_supports("text_document.document_symbol.hierarchical_document_symbol_support"):
        return [document_symbol_of(s, doc.index) for s in symbols]
    uri = server.uri_of(doc.path)
    flat: list[lsp.SymbolInformation] = []

    def walk(sym: ide_outline.DocSymbol, container: str | None) -> None:
        flat.append(
            lsp.SymbolInformation(
                name=sym.name or "?",
                kind=convert.symbol_kind(sym.kind),
                location=lsp.Location(uri=uri, range=convert.to_range(doc.index, sym.range)),
                container_name=container,
            )
        )
        for child in sym.children:
            walk(child, sym.name)

    for s in symbols:
        walk(s, None)
    return flat


def workspace_symbol(
    server: MantleServer, params: lsp.WorkspaceSymbolParams
) -> list[lsp.SymbolInformation]:
    found = ide_outline.workspace_symbols(list(server.model.projects.values()), params.query)
    return [
        lsp.SymbolInformation(
            name=s.name,
            kind=convert.symbol_kind(s.kind),
            location=convert.to_location(s.location, server.index_of, server.uri_of),
            container_name=s.container or None,
        )
        for s in found
    ]


def document_symbol_of(sym: ide_outline.DocSymbol, index: LineIndex) -> lsp.DocumentSymbol:
    rng = sym.range
    sel = sym.selection_range
    if not (rng.start <= sel.start and sel.end <= rng.end):
        sel = TextRange(rng.start, rng.start)  # clients reject a selection outside the range
    return lsp.DocumentSymbol(
        name=sym.name or "?",
        kind=convert.symbol_kind(sym.kind),
        range=convert.to_range(index, rng),
        selection_range=convert.to_range(index, sel),
        detail=sym.detail or None,
        children=[document_symbol_of(c, index) for c in sym.children],
    )
