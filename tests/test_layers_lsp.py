"""Cadenya memory layers over LSP (lsp/layers.py, docs/memory-layers.md): diagnostics that
follow edits and files changed on disk, hover, code lens, completion, definition, rename
and ``mantle/layersManifest``, in a real server process."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types as lsp
from pygls.exceptions import JsonRpcException

from test_layers import CADENYA_DOCS, write
from test_lsp_graphs import plain
from test_lsp_support import lsp_session, position_of, uri, vscode_capabilities

pytestmark = [pytest.mark.asyncio, pytest.mark.timeout(60)]

CREATED, DELETED = lsp.FileChangeType.Created, lsp.FileChangeType.Deleted


async def test_layer_folder_in_the_editor(tmp_path: Path) -> None:
    write(tmp_path, CADENYA_DOCS.replace("      - base-customer\n", "      - base-custmer\n"))
    root = tmp_path / "memory-layers"
    cascades = root / "cascades.yml"
    base_prose = root / "base-customer/prose.md"
    top_prose = root / "high-touch-customer/prose.md"
    async with lsp_session(tmp_path) as s:
        # the initial index reports the layer folder
        await s.until(lambda: s.codes(cascades) == ["lsp.layers.unknown_layer"])
        # the folder renamed on disk to what the cascade names: the finding goes
        (root / "base-customer").rename(root / "base-custmer")
        s.client.workspace_did_change_watched_files(
            lsp.DidChangeWatchedFilesParams(
                changes=[
                    lsp.FileEvent(uri=uri(root / "base-customer"), type=DELETED),
                    lsp.FileEvent(uri=uri(root / "base-custmer"), type=CREATED),
                ]
            )
        )
        await s.until(lambda: s.published_for(cascades) and s.codes(cascades) == [])
        (root / "base-custmer").rename(root / "base-customer")
        s.client.workspace_did_change_watched_files(
            lsp.DidChangeWatchedFilesParams(
                changes=[
                    lsp.FileEvent(uri=uri(root / "base-custmer"), type=DELETED),
                    lsp.FileEvent(uri=uri(root / "base-customer"), type=CREATED),
                ]
            )
        )
        await s.until(lambda: s.codes(cascades) == ["lsp.layers.unknown_layer"])
        # an unsaved edit of cascades.yml fixes it; completion offers the layer ids
        text = cascades.read_text(encoding="utf-8")
        s.open(cascades)
        at = position_of(text, "base-custmer")
        s.change(cascades, (at.line, at.character), (at.line, at.character + 12), "base-c")
        text = text.replace("base-custmer", "base-c")
        got = await s.client.text_document_completion_async(
            lsp.CompletionParams(
                text_document=s.doc(cascades), position=position_of(text, "base-c", 6)
            )
        )
        assert got is not None
        items = got.items if isinstance(got, lsp.CompletionList) else got
        assert [i.label for i in items] == ["base-customer", "high-touch-customer"]
        at = position_of(text, "base-c", 6)
        s.change(cascades, (at.line, at.character), (at.line, at.character), "ustomer")
        text = text.replace("base-c\n", "base-customer\n")
        await s.until(lambda: s.published_for(cascades) and s.codes(cascades) == [])
        # an entry losing its description, as typed
        s.open(base_prose)
        s.change(base_prose, (1, 0), (1, 40), "")
        await s.until(lambda: s.codes(base_prose) == ["lsp.layers.missing_description"])
        s.change(base_prose, (1, 0), (1, 0), "description: How to write to a customer")
        await s.until(lambda: s.published_for(base_prose) and s.codes(base_prose) == [])
        # hover and code lens on the shadowed entry
        hover = await s.client.text_document_hover_async(
            lsp.HoverParams(
                text_document=s.doc(base_prose), position=lsp.Position(line=0, character=1)
            )
        )
        assert hover is not None and isinstance(hover.contents, lsp.MarkupContent)
        assert "shadowed by `high-touch-customer` (position 0)" in hover.contents.value
        lenses = await s.client.text_document_code_lens_async(
            lsp.CodeLensParams(text_document=s.doc(base_prose))
        )
        assert lenses is not None
        assert [lens.command.title for lens in lenses if lens.command] == [
            "shadowed by high-touch-customer in cascade high-touch"
        ]
        # definition from the cascade item
        defs = await s.client.text_document_definition_async(
            lsp.DefinitionParams(
                text_document=s.doc(cascades), position=position_of(text, "high-touch-customer", 3)
            )
        )
        assert isinstance(defs, list)
        assert [d.uri for d in defs] == [uri(top_prose)]
        # rename a layer: folder and cascade
        prep = await s.client.text_document_prepare_rename_async(
            lsp.PrepareRenameParams(
                text_document=s.doc(cascades), position=position_of(text, "base-customer", 2)
            )
        )
        assert (
            isinstance(prep, lsp.PrepareRenamePlaceholder) and prep.placeholder == "base-customer"
        )
        edit = await s.client.text_document_rename_async(
            lsp.RenameParams(
                text_document=s.doc(cascades),
                position=position_of(text, "base-customer", 2),
                new_name="everyone",
            )
        )
        assert edit is not None and edit.document_changes is not None
        kinds = [type(c).__name__ for c in edit.document_changes]
        assert kinds == ["TextDocumentEdit", "RenameFile"]
        ren = edit.document_changes[1]
        assert isinstance(ren, lsp.RenameFile)
        assert (ren.old_uri, ren.new_uri) == (uri(root / "base-customer"), uri(root / "everyone"))
        # the folder renamed in the file explorer: the cascade follows
        will = await s.client.workspace_will_rename_files_async(
            lsp.RenameFilesParams(
                files=[
                    lsp.FileRename(
                        old_uri=uri(root / "high-touch-customer"), new_uri=uri(root / "vip")
                    )
                ]
            )
        )
        assert will is not None and will.document_changes is not None
        (change,) = will.document_changes
        assert isinstance(change, lsp.TextDocumentEdit)
        assert [e.new_text for e in change.edits] == ["vip"]
        # the manifest of a cascade
        params: dict[str, Any] = {"textDocument": {"uri": uri(cascades)}}
        listed = plain(await s.client.protocol.send_request_async("mantle/layersManifest", params))
        assert [c["name"] for c in listed["cascades"]] == ["high-touch"]
        params["cascade"] = "high-touch"
        got_m = plain(await s.client.protocol.send_request_async("mantle/layersManifest", params))
        assert [(e["key"], e["layer"]) for e in got_m["entries"]] == [
            ("prose.md", "high-touch-customer"),
            ("very-upset-customer-procedures.md", "high-touch-customer"),
            ("customer-support-procedures.md", "base-customer"),
        ]
        assert got_m["text"].startswith("cascade high-touch (variation support-agent/high-touch)")
        params["cascade"] = "nope"
        with pytest.raises(JsonRpcException, match="no cascade `nope`"):
            await s.client.protocol.send_request_async("mantle/layersManifest", params)


async def test_layer_diagnostics_are_pulled_by_a_pulling_client(tmp_path: Path) -> None:
    write(tmp_path, CADENYA_DOCS.replace("description: How to write to a customer\n", ""))
    prose = tmp_path / "memory-layers/base-customer/prose.md"
    async with lsp_session(tmp_path, capabilities=vscode_capabilities(pull=True)) as s:
        s.open(prose)
        report = await s.client.text_document_diagnostic_async(
            lsp.DocumentDiagnosticParams(text_document=s.doc(prose))
        )
        assert isinstance(report, lsp.RelatedFullDocumentDiagnosticReport)
        assert [d.code for d in report.items] == ["lsp.layers.missing_description"]
        ws = await s.client.workspace_diagnostic_async(
            lsp.WorkspaceDiagnosticParams(previous_result_ids=[])
        )
        assert [(i.uri, [d.code for d in i.items]) for i in ws.items if i.uri.endswith(".md")] == [
            (uri(prose), ["lsp.layers.missing_description"])
        ]


async def test_a_config_file_change_republishes_layer_diagnostics(tmp_path: Path) -> None:
    """The configuration file's `ignore` applies to layer findings as `check` applies it,
    and a change of the file is followed without reopening anything."""
    root = tmp_path / "repo"
    layer = root / "memory-layers" / "base"
    layer.mkdir(parents=True)
    entry = layer / "prose.md"
    entry.write_text("No frontmatter here.\n", encoding="utf-8")
    (root / "memory-layers" / "cascades.yml").write_text(
        "cascades:\n  c:\n    layers: [base]\n", encoding="utf-8"
    )
    async with lsp_session(root) as s:
        await s.until(lambda: s.codes(entry), what="the entry's finding")
        cfg = root / "mantle-lsp.toml"
        cfg.write_text('ignore = ["lsp.layers"]\n', encoding="utf-8")
        s.client.workspace_did_change_watched_files(
            lsp.DidChangeWatchedFilesParams(
                changes=[lsp.FileEvent(uri=cfg.as_uri(), type=lsp.FileChangeType.Created)]
            )
        )
        await s.until(lambda: not s.codes(entry), what="ignored")


async def test_a_removed_workspace_folder_takes_its_layer_findings_along(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    layer = root / "memory-layers" / "base"
    layer.mkdir(parents=True)
    entry = layer / "prose.md"
    entry.write_text("No frontmatter here.\n", encoding="utf-8")
    (root / "memory-layers" / "cascades.yml").write_text(
        "cascades:\n  c:\n    layers: [base]\n", encoding="utf-8"
    )
    async with lsp_session(root) as s:
        await s.until(lambda: s.codes(entry), what="the entry's finding")
        s.client.workspace_did_change_workspace_folders(
            lsp.DidChangeWorkspaceFoldersParams(
                event=lsp.WorkspaceFoldersChangeEvent(
                    added=[], removed=[lsp.WorkspaceFolder(uri=uri(root), name="repo")]
                )
            )
        )
        await s.until(lambda: not s.codes(entry), what="cleared")
