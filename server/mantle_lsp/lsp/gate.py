"""Messages during the initial index: what is answered at once, and what waits.

The index of a large project takes seconds; its main-process share runs in a thread
(``sync._load_spread``), so the event loop stays free. While the index runs, a message
is handled at once when what it reads is ready:

- the client's answers to the server's own requests (the settings, ``$/progress``);
- the opening and editing of documents in a workspace folder: before the index they
  get a first look (``sync.first_look_at``), which is all they need;
- on such a document, the requests that read only the document and the declarations
  its skill sees (outline, semantic tokens, folding, selection ranges, links, its pulled
  diagnostics, and completion, marked incomplete: ``completion.completion``).

Every other message (hover, definition, references, a closed document, a file changed
on disk, new settings, …) reads or changes the whole project: it is held, and handled
once the projects are loaded, in the order it came. Once one message is held, every
later one is held too, so that no message overtakes another (a completion must not be
answered before the edit it follows). The server's own file watcher, for clients that
cannot watch files, waits likewise (``watch.SelfWatcher``).

A document opened or edited while the index runs may have been read by the index before
its last edit: when the gate opens, such documents are brought up to date first
(:meth:`Gate.open`), then the held messages are handled.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lsprotocol import types as lsp

from ..model.files import ParsedFile, PendingFile
from ..model.source import Source, read_source
from . import convert

if TYPE_CHECKING:
    from .server import MantleServer

log = logging.getLogger(__name__)

# requests answered from a document's first look (they read nothing else)
EARLY_REQUESTS = frozenset(
    {
        lsp.TEXT_DOCUMENT_COMPLETION,
        lsp.TEXT_DOCUMENT_DOCUMENT_SYMBOL,
        lsp.TEXT_DOCUMENT_SEMANTIC_TOKENS_FULL,
        lsp.TEXT_DOCUMENT_SEMANTIC_TOKENS_RANGE,
        lsp.TEXT_DOCUMENT_FOLDING_RANGE,
        lsp.TEXT_DOCUMENT_SELECTION_RANGE,
        lsp.TEXT_DOCUMENT_DOCUMENT_LINK,
        lsp.TEXT_DOCUMENT_DIAGNOSTIC,
    }
)
# notifications that only give a document its first look
EARLY_NOTIFICATIONS = frozenset({lsp.TEXT_DOCUMENT_DID_OPEN, lsp.TEXT_DOCUMENT_DID_CHANGE})
ALWAYS = frozenset({lsp.INITIALIZED, lsp.CANCEL_REQUEST, lsp.EXIT})


class Gate:
    """Holds the messages that must wait for the index (see the module's text)."""

    def __init__(self, server: MantleServer) -> None:
        self.server = server
        self.held: list[Any] = []
        self.touched: set[Path] = set()  # documents opened or edited while it was shut

    def holds(self, message: Any) -> bool:
        """Whether ``message`` waits (then it is kept, to be handled by :meth:`open`)."""
        method = getattr(message, "method", None)
        if method is None:
            return False  # an answer to one of the server's requests
        if not self.held and self._answerable(method, getattr(message, "params", None)):
            return False
        self.held.append(message)
        return True

    def _answerable(self, method: str, params: Any) -> bool:
        if method in ALWAYS:
            return True  # a cancel here cannot name a held request: none is held
        if method == lsp.COMPLETION_ITEM_RESOLVE:
            data = getattr(params, "data", None)
            uri = data.get("uri") if isinstance(data, dict) else None
        else:
            doc = getattr(params, "text_document", None)
            uri = getattr(doc, "uri", None)
        if not isinstance(uri, str):
            return False
        try:
            path = convert.uri_to_path(uri)
        except convert.InvalidUri:
            return False
        server = self.server
        if path is None or server.indexed:
            return False
        if method in EARLY_NOTIFICATIONS:
            inside = any(f == path or f in path.parents for f in server.folders)
            if inside:
                self.touched.add(path)
            return inside
        if method in EARLY_REQUESTS or method == lsp.COMPLETION_ITEM_RESOLVE:
            return path in server.opened_early
        return False

    def open(self, handle: Callable[[Any], None]) -> None:
        """Bring the documents touched while it was shut up to date, then ``handle``
        the held messages in order."""
        server = self.server
        for path in sorted(self.touched):
            proj = server.model.project_for(path)
            src = server.model.overlays.get(path)
            if proj is None or src is None or path not in server.open_uris:
                continue
            pf = proj.files.get(path)
            if pf is not None and _read_as(pf, src):
                continue
            server.settle()
            affected = server.model.open_buffer(path, src.text, src.version)
            server.diagnostics.changed(path, affected)
        held, self.held = self.held, []
        if held:
            log.info("handling %d message(s) held during the index", len(held))
        for message in held:
            handle(message)


def _read_as(pf: ParsedFile, src: Source) -> bool:
    """Whether the project's file was read as ``src`` (the buffer's current text)."""
    # a file this process has not parsed was parsed by another one, from the disk
    read = read_source(pf.path) if isinstance(pf, PendingFile) else pf.source
    return read is src or (read.text == src.text and read.analyzable == src.analyzable)
