"""The server under stress: failing handlers, unknown methods, CRLF documents with astral
characters, stale results and the coalescing of cross-file diagnostics."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import pytest
from lsprotocol import types as lsp
from pygls.exceptions import JsonRpcException, JsonRpcMethodNotFound

from mantle_lsp.lsp import diagnostics as lsp_diagnostics
from mantle_lsp.lsp.app import create_server
from support import write_fixture
from test_lsp_support import PATCHED_SERVER, copy_telecom, lsp_session, position_of, uri

pytestmark = pytest.mark.timeout(30)


async def test_a_failing_handler_answers_an_error_and_the_server_keeps_serving(
    tmp_path: Path,
) -> None:
    root = copy_telecom(tmp_path)
    path = root / "skills" / "roaming_pass" / "skill.md"
    text = path.read_text(encoding="utf-8")
    pos = position_of(text, "collect: pass_length", len("collect: p"))
    server = [sys.executable, "-c", PATCHED_SERVER, "mantle_lsp.ide.hover", "hover", "raise"]
    async with lsp_session(root, server=server) as s:
        params = lsp.HoverParams(text_document=s.doc(path), position=pos)
        with pytest.raises(JsonRpcException) as err:
            await s.client.text_document_hover_async(params)
        assert "deliberate failure for the test" in str(err.value)
        errors = [m for m in s.client.log_messages if m.type == lsp.MessageType.Error]
        assert errors and "textDocument/hover failed: RuntimeError" in errors[-1].message
        assert " in boom" in errors[-1].message  # where it failed
        # still serving: other requests, and the same one again
        defs = await s.client.text_document_definition_async(
            lsp.DefinitionParams(text_document=s.doc(path), position=pos)
        )
        assert defs and defs[0].uri.endswith("memory.yml")  # type: ignore[index,union-attr]
        with pytest.raises(JsonRpcException):
            await s.client.text_document_hover_async(params)
        with pytest.raises(JsonRpcMethodNotFound):
            await s.client.protocol.send_request_async("mantle/noSuchMethod", {})


CRLF_FIXTURE = """\
//- skills/a/memory.yml
schema:
  public:
    reason:
      type: text
      description: Why the customer called.
//- skills/a/skill.md
---
description: Greets 😀 everyone.
---
😀😀 Read @memory.a.reasn and 𝄞 then @memory.a.reason again.
"""


async def test_crlf_and_astral_characters_positions(tmp_path: Path) -> None:
    fx = write_fixture(tmp_path, CRLF_FIXTURE)
    root = fx.root.resolve()
    path = root / "skills" / "a" / "skill.md"
    text = fx.files["skills/a/skill.md"]
    crlf = text.replace("\n", "\r\n")
    path.write_bytes(crlf.encode("utf-8"))
    async with lsp_session(root) as s:
        s.open(path, crlf)
        await s.until(lambda: any(p.version == 1 for p in s.published_for(path)))
        bad = [d for d in s.diagnostics(path) if "reasn" in d.message]
        assert len(bad) == 1
        # line 3; two astral characters before it count twice in UTF-16
        start = len("😀😀 Read ".encode("utf-16-le")) // 2
        assert bad[0].range == lsp.Range(
            start=lsp.Position(line=3, character=start),
            end=lsp.Position(line=3, character=start + len("@memory.a.reasn")),
        )
        # an incremental edit on the CRLF document, after astral characters
        at = start + len("@memory.a.reas")
        v = s.change(path, (3, at), (3, at), "o")
        got = await s.until(lambda: [p for p in s.published_for(path) if p.version == v])
        assert not [d for d in got[-1].diagnostics if "reas" in d.message]
        # hover and definition on the reference after the 𝄞
        fixed = crlf.replace("reasn", "reason")
        pos = position_of(fixed, "reason again", 2)
        before = "😀😀 Read @memory.a.reason and 𝄞 then @memory.a."
        assert pos.character == len(before.encode("utf-16-le")) // 2 + 2
        h = await s.client.text_document_hover_async(
            lsp.HoverParams(text_document=s.doc(path), position=pos)
        )
        assert h is not None
        word = pos.character - 2
        assert h.range == lsp.Range(
            start=lsp.Position(line=3, character=word),
            end=lsp.Position(line=3, character=word + len("reason")),
        )
        (loc,) = await s.client.text_document_definition_async(
            lsp.DefinitionParams(text_document=s.doc(path), position=pos)
        ) or [None]
        assert loc is not None and loc.uri == uri(root / "skills" / "a" / "memory.yml")  # type: ignore[union-attr]
        assert loc.range.start == lsp.Position(line=2, character=4)  # type: ignore[union-attr]


# -- in-process: the diagnostics scheduler ----------------------------------------------


def _server_on(tmp_path: Path) -> tuple[object, Path, list[lsp.PublishDiagnosticsParams]]:
    fx = write_fixture(tmp_path, CRLF_FIXTURE)
    server = create_server()
    server.model.add_folder(fx.root)
    path = (fx.root / "skills" / "a" / "skill.md").resolve()
    sent: list[lsp.PublishDiagnosticsParams] = []
    server.text_document_publish_diagnostics = sent.append  # type: ignore[method-assign]
    return server, path, sent


def test_a_result_for_an_older_version_is_never_published(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    server, path, sent = _server_on(tmp_path)
    assert isinstance(server, type(create_server()))
    server.model.open_buffer(path, path.read_text(encoding="utf-8"), 2)
    server.open_uris[path] = uri(path)
    current = {"version": 3}  # the editor moved on while version 2 was being checked
    monkeypatch.setattr(server, "open_version", lambda p: current["version"])
    server.diagnostics.refresh([path])
    assert sent == [] and server.diagnostics.stale_dropped == 1
    current["version"] = 2
    server.diagnostics.refresh([path])
    assert [p.version for p in sent] == [2]
    assert any("reasn" in d.message for d in sent[0].diagnostics)


def test_affected_files_are_coalesced_and_a_newer_edit_supersedes(tmp_path: Path) -> None:
    server, path, sent = _server_on(tmp_path)
    assert isinstance(server, type(create_server()))
    memory = path.parent / "memory.yml"
    calls: list[list[Path]] = []
    real = server.diagnostics.refresh

    def spy(paths: list[Path]) -> None:
        calls.append(list(paths))
        real(paths)

    server.diagnostics.refresh = spy  # type: ignore[method-assign]

    async def run() -> None:
        server.diagnostics.schedule({path})
        await asyncio.sleep(lsp_diagnostics.DELAY / 2)
        server.diagnostics.schedule({memory})  # restarts the delay, joins the batch
        await asyncio.sleep(lsp_diagnostics.DELAY * 0.75)
        assert calls == []  # the first timer was superseded
        await asyncio.sleep(lsp_diagnostics.DELAY)

    asyncio.run(run())
    assert calls == [sorted([path, memory])]
    assert uri(path) in [p.uri for p in sent]
    assert {p.uri for p in sent} <= {uri(path), uri(memory)}


async def test_a_bare_client_gets_plain_forms(tmp_path: Path) -> None:
    """No capabilities at all: no progress, configuration or watchers; plain ``changes``
    edits; a folder move refused with a message; flat symbols; snippets as plain text."""
    root = copy_telecom(tmp_path)
    path = root / "skills" / "bill_dispute" / "skill.md"
    text = path.read_text(encoding="utf-8")
    async with lsp_session(root, capabilities=lsp.ClientCapabilities()) as s:
        assert s.client.progress_reports == {} and s.registrations == []
        assert any("watching 1 folder(s) for changes" in m for m in s.logs())  # ourselves
        pos = position_of(text, "disputed_amount != None", 3)
        edit = await s.client.text_document_rename_async(
            lsp.RenameParams(text_document=s.doc(path), position=pos, new_name="amount")
        )
        assert edit is not None and edit.document_changes is None and edit.changes
        assert uri(root / "skills" / "bill_dispute" / "memory.yml") in edit.changes
        skill_pos = position_of(text, "session.roaming_pass.pass_active", len("session.r"))
        with pytest.raises(JsonRpcException) as err:
            await s.client.text_document_rename_async(
                lsp.RenameParams(text_document=s.doc(path), position=skill_pos, new_name="r")
            )
        assert "rename the folder in the file explorer" in str(err.value)
        syms = await s.client.text_document_document_symbol_async(
            lsp.DocumentSymbolParams(
                text_document=s.doc(root / "skills" / "roaming_pass" / "memory.yml")
            )
        )
        assert syms and all(isinstance(x, lsp.SymbolInformation) for x in syms)
        dest = next(x for x in syms if x.name == "destination")
        assert dest.container_name == "public"
        result = await s.client.text_document_completion_async(
            lsp.CompletionParams(text_document=s.doc(path), position=pos)
        )
        assert isinstance(result, lsp.CompletionList) and result.items
        assert all(i.insert_text_format == lsp.InsertTextFormat.PlainText for i in result.items)
        assert not any("$" in (i.text_edit.new_text if i.text_edit else "") for i in result.items)
        # settings pushed in the notification (no workspace/configuration)
        s.open(path, text.replace("disputed_amount > 100", "disputed_amountx > 100"))
        await s.until(lambda: s.diagnostics(path), what="the planted diagnostic")
        s.client.workspace_did_change_configuration(
            lsp.DidChangeConfigurationParams(
                settings={"mantle": {"diagnostics": {"ignore": ["mantle.validation.prose"]}}}
            )
        )
        await s.until(lambda: s.diagnostics(path) == (), what="ignored by the new settings")
