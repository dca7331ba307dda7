"""Hover (``textDocument/hover``): the Markdown of ``ide/hover.py`` for what is under the
cursor."""

from __future__ import annotations

from functools import partial

from lsprotocol import types as lsp

from ..ide import hover as ide_hover
from . import convert
from . import layers as lsp_layers
from .server import MantleServer


def register(server: MantleServer) -> None:
    server.request(lsp.TEXT_DOCUMENT_HOVER)(partial(hover, server))


def hover(server: MantleServer, params: lsp.HoverParams) -> lsp.Hover | None:
    doc = server.doc(params.text_document.uri)
    if doc is None:
        return lsp_layers.hover(server, params)  # memory-layers/ (or nothing)
    offset = convert.to_offset(doc.index, params.position)
    # a client that lists the HTML tags its Markdown allows renders <details>
    html = server.client_supports("general.markdown.allowed_tags")
    h = ide_hover.hover(doc.project, doc.path, offset, html)
    if h is None:
        return None
    return lsp.Hover(
        contents=lsp.MarkupContent(kind=lsp.MarkupKind.Markdown, value=h.markdown),
        range=convert.to_range(doc.index, h.range),
    )
