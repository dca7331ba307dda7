"""The composition root of the language server: :func:`create_server` builds the server
and registers every handler; :func:`serve` runs it (``mantle-lsp serve``)."""

from __future__ import annotations

import argparse
import logging
import sys
from typing import Any

from ..workers import default_jobs
from . import (
    actions,
    completion,
    handshake,
    hover,
    lenses,
    navigation,
    rename,
    structure,
    symbols,
    sync,
    views,
)
from . import early as first
from . import layers as lsp_layers
from .base import STATUS, MantleProtocol
from .params import InvalidParams, is_object
from .server import MantleServer

# The modules that wire the language features, one per area (docs/architecture.md, "Where
# the editor features are wired"): each registers module-level handlers.
FEATURE_AREAS = (
    completion,  # completion, completionItem/resolve, signature help
    hover,
    navigation,  # definition, declaration, references, highlights, call hierarchy
    rename,  # prepareRename, rename, willRenameFiles
    symbols,  # the outline, workspace symbols
    lenses,  # inlay hints, code lenses
    structure,  # semantic tokens, folding, selection ranges, document links
    actions,  # code actions, codeAction/resolve
    views,  # mantle/flowGraph, mantle/agentMap, mantle/previewPrompt
)


def create_server() -> MantleServer:
    server = MantleServer()

    @server.request(STATUS, settle=False)
    def status(params: Any) -> dict[str, Any]:
        # no params: omitted, null, or an empty object or array (JSON-RPC's structured)
        if params is not None and not isinstance(params, list) and not is_object(params):
            raise InvalidParams(f"{STATUS} takes no params")
        return server.status()

    sync.register(server)  # the lifecycle, the documents, the files and folders
    lsp_layers.register(server)  # mantle/layersManifest (Cadenya memory layers)
    for area in FEATURE_AREAS:  # one module per area of the editor features
        area.register(server)
    return server


def serve(args: argparse.Namespace) -> int:
    """Run the server (``mantle-lsp serve``): stdio by default, ``--tcp HOST:PORT``. The
    exit status: 0 when the client asked for ``shutdown`` first, else 1."""
    level = getattr(logging, str(args.log_level).upper(), logging.WARNING)
    handler: logging.Handler = (
        logging.FileHandler(args.log_file, encoding="utf-8")
        if args.log_file
        else logging.StreamHandler(sys.stderr)
    )
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    root = logging.getLogger()
    root.addHandler(handler)
    root.setLevel(level)
    server = create_server()
    server.jobs = default_jobs() if args.jobs == "auto" else int(args.jobs)
    if args.tcp:
        host, _, port = str(args.tcp).rpartition(":")
        if not port.isdigit():
            print(f"mantle-lsp: error: --tcp wants HOST:PORT, got {args.tcp!r}", file=sys.stderr)
            return 2
        server.start_tcp(host or "127.0.0.1", int(port))
    else:
        early = handshake.taken()  # the first message, read (and maybe answered) already
        if early is None:
            server.start_io()
        else:
            protocol = server.protocol
            assert isinstance(protocol, MantleProtocol)
            protocol.early = early
            server.adopt_workers(early.workers)
            looked = first.taken()  # and the first looks (early.py)
            if looked is None:
                server.start_io(handshake.Replay(early.raw, sys.stdin.buffer))  # type: ignore[arg-type]
            else:
                sync.adopt_first_looks(server, looked)
                server.start_io(looked.stream())  # type: ignore[arg-type]
    # the spec: 0 after a `shutdown` request, 1 otherwise (`exit` without `shutdown`, or
    # the client gone). pygls exits with that status itself, then swallows the SystemExit
    return 0 if getattr(server.protocol, "_shutdown", False) else 1
