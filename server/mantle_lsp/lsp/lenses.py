"""What the editor shows inside the text: code lenses (who reads and writes a field, a
skill's callers, coverage hints: ``ide/structure.py``) and inlay hints (the types of
``ide/inlay_hints.py``)."""

from __future__ import annotations

from functools import partial

from lsprotocol import types as lsp

from ..ide import inlay_hints as ide_inlay_hints
from ..ide import locate as ide_locate
from ..ide import structure as ide_structure
from . import convert
from . import layers as lsp_layers
from .results import locations
from .server import MantleServer

SHOW_REFERENCES = "editor.action.showReferences"


def register(server: MantleServer) -> None:
    server.request(lsp.TEXT_DOCUMENT_INLAY_HINT, lsp.InlayHintOptions(resolve_provider=False))(
        partial(inlay_hint, server)
    )
    server.request(lsp.TEXT_DOCUMENT_CODE_LENS, lsp.CodeLensOptions(resolve_provider=False))(
        partial(code_lens, server)
    )


def inlay_hint(server: MantleServer, params: lsp.InlayHintParams) -> list[lsp.InlayHint]:
    doc = server.doc(params.text_document.uri)
    if doc is None:
        return []
    rng = convert.to_text_range(doc.index, params.range)
    return [
        lsp.InlayHint(
            position=convert.to_position(doc.index, h.offset),
            label=h.label,
            kind=lsp.InlayHintKind.Type,
            tooltip=h.tooltip,
            padding_left=True,
        )
        for h in ide_inlay_hints.inlay_hints(doc.project, doc.path, rng)
    ]


def code_lens(server: MantleServer, params: lsp.CodeLensParams) -> list[lsp.CodeLens]:
    doc = server.doc(params.text_document.uri)
    if doc is None:
        return lsp_layers.code_lens(server, params, SHOW_REFERENCES)  # memory-layers/
    out = []
    uri = server.uri_of(doc.path)
    hints = server.settings.coverage_hints
    for lens in ide_structure.code_lenses(doc.project, doc.path, hints):
        rng = convert.to_range(doc.index, lens.range)
        refs = (
            list(lens.locations)
            if lens.locations is not None
            else ide_locate.reference_locations(doc.project, lens.key, False)
        )
        command = lsp.Command(title=lens.title, command="")
        if refs and lens.title != ide_structure.NEVER_READ:
            command = lsp.Command(
                title=lens.title,
                command=SHOW_REFERENCES,
                arguments=[uri, rng.start, locations(server, refs)],
            )
        out.append(lsp.CodeLens(range=rng, command=command))
    return out
