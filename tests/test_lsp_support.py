"""Support for the end-to-end language-server tests (no tests here).

:func:`lsp_session` starts ``mantle-lsp serve`` in a subprocess with a pytest-lsp client
(VS Code's capabilities by default), opens a workspace folder, waits for the initial
index and records every notification the server sends. Waiting is done by polling a
condition (:meth:`Session.until`), so a notification that arrived before the wait
started is never missed.
"""

from __future__ import annotations

import asyncio
import contextlib
import shutil
import sys
import time
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from lsprotocol import types as lsp
from pygls.protocol import default_converter
from pytest_lsp import LanguageClient, client_capabilities
from pytest_lsp.client import DEFAULT_CLIENT_FEATURES, register_lsp_features

REPO = Path(__file__).resolve().parent.parent
TELECOM = REPO / "examples" / "telecom"
SERVER = [sys.executable, "-m", "mantle_lsp", "serve"]

# Test-only: run the server with one ide function replaced (e.g. to make it raise).
PATCHED_SERVER = """
import importlib, sys
module, name, kind = sys.argv[1], sys.argv[2], sys.argv[3]
def boom(*args, **kwargs):
    raise RuntimeError("deliberate failure for the test")
setattr(importlib.import_module(module), name, boom)
from mantle_lsp.cli.main import main
raise SystemExit(main(["serve"]))
"""


def copy_telecom(tmp_path: Path) -> Path:
    dst = tmp_path / "telecom"
    shutil.copytree(TELECOM, dst)
    return dst.resolve()


def uri(path: Path) -> str:
    return path.resolve().as_uri()


def vscode_capabilities(pull: bool = False) -> lsp.ClientCapabilities:
    caps = client_capabilities("visual-studio-code")
    caps.workspace.configuration = True  # type: ignore[union-attr]
    if pull:
        caps.text_document.diagnostic = lsp.DiagnosticClientCapabilities(  # type: ignore[union-attr]
            dynamic_registration=False, related_document_support=True
        )
        caps.workspace.diagnostics = lsp.DiagnosticWorkspaceClientCapabilities(  # type: ignore[union-attr]
            refresh_support=True
        )
    return caps


@dataclass
class Session:
    client: LanguageClient
    root: Path
    published: list[lsp.PublishDiagnosticsParams] = field(default_factory=list)
    registrations: list[lsp.Registration] = field(default_factory=list)
    versions: dict[str, int] = field(default_factory=dict)
    init: lsp.InitializeResult | None = None
    lens_refreshes: int = 0

    # -- waiting ------------------------------------------------------------------------
    async def until(self, cond: Callable[[], Any], timeout: float = 10.0, what: str = "") -> Any:
        deadline = time.monotonic() + timeout
        while True:
            value = cond()
            if value:
                return value
            if time.monotonic() > deadline:
                raise AssertionError(f"timed out waiting for {what or cond}")
            await asyncio.sleep(0.01)

    def published_for(self, path: Path) -> list[lsp.PublishDiagnosticsParams]:
        u = uri(path)
        return [p for p in self.published if p.uri == u]

    def diagnostics(self, path: Path) -> Sequence[lsp.Diagnostic]:
        return self.client.diagnostics.get(uri(path), ())

    def codes(self, path: Path) -> list[str]:
        return sorted(str(d.code) for d in self.diagnostics(path))

    def logs(self) -> list[str]:
        return [m.message for m in self.client.log_messages]

    # -- documents ----------------------------------------------------------------------
    def open(self, path: Path, text: str | None = None) -> str:
        u = uri(path)
        self.versions[u] = 1
        self.client.text_document_did_open(
            lsp.DidOpenTextDocumentParams(
                text_document=lsp.TextDocumentItem(
                    uri=u,
                    language_id=_language(path),
                    version=1,
                    text=path.read_text(encoding="utf-8") if text is None else text,
                )
            )
        )
        return u

    def change(self, path: Path, start: tuple[int, int], end: tuple[int, int], text: str) -> int:
        u = uri(path)
        self.versions[u] += 1
        self.client.text_document_did_change(
            lsp.DidChangeTextDocumentParams(
                text_document=lsp.VersionedTextDocumentIdentifier(uri=u, version=self.versions[u]),
                content_changes=[
                    lsp.TextDocumentContentChangePartial(
                        range=lsp.Range(
                            start=lsp.Position(line=start[0], character=start[1]),
                            end=lsp.Position(line=end[0], character=end[1]),
                        ),
                        text=text,
                    )
                ],
            )
        )
        return self.versions[u]

    def close(self, path: Path) -> None:
        self.client.text_document_did_close(
            lsp.DidCloseTextDocumentParams(text_document=lsp.TextDocumentIdentifier(uri=uri(path)))
        )

    def doc(self, path: Path) -> lsp.TextDocumentIdentifier:
        return lsp.TextDocumentIdentifier(uri=uri(path))


def _language(path: Path) -> str:
    return {".md": "markdown", ".py": "python"}.get(path.suffix, "yaml")


def position_of(text: str, needle: str, delta: int = 0, nth: int = 0) -> lsp.Position:
    """The LSP position (UTF-16) of ``needle`` in ``text`` (plus ``delta`` characters)."""
    at = -1
    for _ in range(nth + 1):
        at = text.index(needle, at + 1)
    at += delta
    line = text.count("\n", 0, at)
    col = at - (text.rfind("\n", 0, at) + 1)
    prefix = text[at - col : at]
    return lsp.Position(line=line, character=len(prefix.encode("utf-16-le")) // 2)


@contextlib.asynccontextmanager
async def lsp_session(
    root: Path,
    *,
    capabilities: lsp.ClientCapabilities | None = None,
    configuration: dict[str, Any] | None = None,
    folders: Sequence[Path] | None = None,
    server: Sequence[str] = SERVER,
    wait_index: bool = True,
) -> AsyncIterator[Session]:
    client = LanguageClient(converter_factory=default_converter)
    features = dict(DEFAULT_CLIENT_FEATURES)
    sess = Session(client, root)

    def on_publish(c: LanguageClient, params: lsp.PublishDiagnosticsParams) -> None:
        c.diagnostics[params.uri] = params.diagnostics
        sess.published.append(params)

    def on_register(c: LanguageClient, params: lsp.RegistrationParams) -> None:
        sess.registrations.extend(params.registrations)

    def on_lens_refresh(c: LanguageClient, params: None) -> None:
        sess.lens_refreshes += 1

    features[lsp.WORKSPACE_CODE_LENS_REFRESH] = on_lens_refresh
    features[lsp.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS] = on_publish
    features[lsp.CLIENT_REGISTER_CAPABILITY] = on_register
    register_lsp_features(client, features)
    if configuration is not None:
        client.set_configuration(configuration)
    await client.start_io(*server)
    try:
        ws_folders = [lsp.WorkspaceFolder(uri=uri(f), name=f.name) for f in (folders or [root])]
        sess.init = await client.initialize_session(
            lsp.InitializeParams(
                capabilities=capabilities or vscode_capabilities(),
                workspace_folders=ws_folders,
            )
        )
        if wait_index:
            await sess.until(
                lambda: any(m.startswith("initial index") for m in sess.logs()),
                what="the initial index",
            )
        yield sess
        await asyncio.wait_for(client.shutdown_session(), 5)
    except BaseException:
        if client._server is not None and client._server.returncode is None:
            client._server.kill()  # a failed test must not wait for a clean exit
        raise
    finally:
        await client.stop()
