"""The structure of a document: folding ranges, selection ranges, document links and
semantic tokens (what ``ide/structure.py`` and ``ide/semantic_tokens.py`` find)."""

from __future__ import annotations

from functools import partial

from lsprotocol import types as lsp

from ..ide import semantic_tokens as ide_semantic_tokens
from ..ide import structure as ide_structure
from ..syntax.text import TextRange
from . import convert
from .server import MantleServer

LEGEND = lsp.SemanticTokensLegend(
    token_types=list(ide_semantic_tokens.TOKEN_TYPES),
    token_modifiers=list(ide_semantic_tokens.TOKEN_MODIFIERS),
)


def register(server: MantleServer) -> None:
    server.request(lsp.TEXT_DOCUMENT_SEMANTIC_TOKENS_FULL, LEGEND)(
        partial(semantic_tokens_full, server)
    )
    server.request(lsp.TEXT_DOCUMENT_SEMANTIC_TOKENS_RANGE, LEGEND)(
        partial(semantic_tokens_range, server)
    )
    server.request(lsp.TEXT_DOCUMENT_FOLDING_RANGE)(partial(folding_range, server))
    server.request(lsp.TEXT_DOCUMENT_SELECTION_RANGE)(partial(selection_range, server))
    server.request(lsp.TEXT_DOCUMENT_DOCUMENT_LINK, lsp.DocumentLinkOptions())(
        partial(document_link, server)
    )


def _tokens(server: MantleServer, uri: str, rng: lsp.Range | None) -> lsp.SemanticTokens:
    doc = server.doc(uri, partial_ok=True)
    if doc is None:
        return lsp.SemanticTokens(data=[])
    text_range = convert.to_text_range(doc.index, rng) if rng is not None else None
    found = ide_semantic_tokens.semantic_tokens(doc.project, doc.path, text_range)
    data = convert.encode_semantic_tokens(
        ((t.range, t.type, t.modifiers) for t in found),
        doc.index,
        LEGEND.token_types,
        LEGEND.token_modifiers,
    )
    return lsp.SemanticTokens(data=data)


def semantic_tokens_full(
    server: MantleServer, params: lsp.SemanticTokensParams
) -> lsp.SemanticTokens:
    return _tokens(server, params.text_document.uri, None)


def semantic_tokens_range(
    server: MantleServer, params: lsp.SemanticTokensRangeParams
) -> lsp.SemanticTokens:
    return _tokens(server, params.text_document.uri, params.range)


def folding_range(server: MantleServer, params: lsp.FoldingRangeParams) -> list[lsp.FoldingRange]:
    doc = server.doc(params.text_document.uri, partial_ok=True)
    if doc is None:
        return []
    out = []
    for f in ide_structure.folding_ranges(doc.project, doc.path):
        start, end = doc.index.line_of(f.start), doc.index.line_of(f.end)
        if end > start:
            out.append(
                lsp.FoldingRange(start_line=start, end_line=end, kind=convert.folding_kind(f.kind))
            )
    return out


def selection_range(
    server: MantleServer, params: lsp.SelectionRangeParams
) -> list[lsp.SelectionRange]:
    doc = server.doc(params.text_document.uri, partial_ok=True)
    if doc is None:
        return [lsp.SelectionRange(range=lsp.Range(start=p, end=p)) for p in params.positions]
    offsets = [convert.to_offset(doc.index, p) for p in params.positions]
    chains = ide_structure.selection_ranges(doc.project, doc.path, offsets)
    out = []
    for offset, chain in zip(offsets, chains, strict=False):
        parent: lsp.SelectionRange | None = None
        for rng in reversed(chain or [TextRange(offset, offset)]):
            parent = lsp.SelectionRange(range=convert.to_range(doc.index, rng), parent=parent)
        assert parent is not None
        out.append(parent)
    return out


def document_link(server: MantleServer, params: lsp.DocumentLinkParams) -> list[lsp.DocumentLink]:
    doc = server.doc(params.text_document.uri, partial_ok=True)
    if doc is None:
        return []
    return [
        lsp.DocumentLink(
            range=convert.to_range(doc.index, link.range),
            target=server.uri_of(link.target),
            tooltip=link.tooltip or None,
        )
        for link in ide_structure.document_links(doc.project, doc.path)
    ]
