"""End to end: document sync and diagnostics (push with versions, cross-file updates and
clearing, files changed on disk, workspace folders, settings, pull, progress)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from lsprotocol import types as lsp

from test_lsp_support import copy_telecom, lsp_session, position_of, uri, vscode_capabilities

pytestmark = pytest.mark.timeout(30)

UNKNOWN_KEY = "mantle.validation.prose.unknown_memory_key"


async def test_open_and_edit_publish_with_versions(tmp_path: Path) -> None:
    root = copy_telecom(tmp_path)
    skill = root / "skills" / "bill_dispute" / "skill.md"
    text = skill.read_text(encoding="utf-8")
    async with lsp_session(root) as s:
        s.open(skill)
        await s.until(lambda: any(p.version == 1 for p in s.published_for(skill)))
        assert s.diagnostics(skill) == ()
        # break a condition: `disputed_amount` -> `disputed_amountx`
        pos = position_of(text, "disputed_amount > 100", len("disputed_amount"))
        v = s.change(skill, (pos.line, pos.character), (pos.line, pos.character), "x")
        got = await s.until(lambda: [p for p in s.published_for(skill) if p.version == v])
        (d,) = got[-1].diagnostics
        assert d.code == UNKNOWN_KEY
        assert d.source == "mantle-lsp"
        assert d.severity == lsp.DiagnosticSeverity.Error
        assert "disputed_amountx" in d.message
        # the range covers `session.bill_dispute.disputed_amountx` exactly
        start = position_of(text, "session.bill_dispute.disputed_amount > 100")
        width = len("session.bill_dispute.disputed_amountx")
        assert d.range == lsp.Range(
            start=start, end=lsp.Position(line=start.line, character=start.character + width)
        )
        # undo: cleared, with the new version
        v = s.change(skill, (pos.line, pos.character), (pos.line, pos.character + 1), "")
        got = await s.until(lambda: [p for p in s.published_for(skill) if p.version == v])
        assert got[-1].diagnostics == ()


async def test_rapid_edits_never_publish_an_older_version(tmp_path: Path) -> None:
    root = copy_telecom(tmp_path)
    skill = root / "skills" / "bill_dispute" / "skill.md"
    text = skill.read_text(encoding="utf-8")
    pos = position_of(text, "disputed_amount > 100", len("disputed_amount"))
    async with lsp_session(root) as s:
        s.open(skill)
        last = 1
        for i in range(8):
            last = s.change(
                skill, (pos.line, pos.character + i), (pos.line, pos.character + i), "z"
            )
        await s.until(lambda: any(p.version == last for p in s.published_for(skill)))
        versions = [p.version for p in s.published_for(skill)]
        assert versions == sorted(versions), versions
        (d,) = s.diagnostics(skill)
        assert "disputed_amountzzzzzzzz" in d.message


async def test_cross_file_diagnostics_appear_and_clear(tmp_path: Path) -> None:
    root = copy_telecom(tmp_path)
    memory = root / "skills" / "bill_dispute" / "memory.yml"
    skill = root / "skills" / "bill_dispute" / "skill.md"
    text = memory.read_text(encoding="utf-8")
    async with lsp_session(root) as s:
        s.open(memory)
        await s.until(lambda: s.published_for(memory))
        pos = position_of(text, "disputed_amount:", len("disputed_amount"))
        s.change(memory, (pos.line, pos.character), (pos.line, pos.character), "_eur")
        # skill.md is not open: its diagnostics arrive after the coalescing delay
        await s.until(lambda: UNKNOWN_KEY in s.codes(skill), what="skill.md diagnostics")
        assert all(p.version is None for p in s.published_for(skill))
        # reference counts elsewhere may have changed
        await s.until(lambda: s.lens_refreshes >= 1, what="workspace/codeLens/refresh")
        s.change(memory, (pos.line, pos.character), (pos.line, pos.character + 4), "")
        await s.until(lambda: s.published_for(skill)[-1].diagnostics == (), what="cleared")


async def test_watched_file_change_updates_diagnostics(tmp_path: Path) -> None:
    root = copy_telecom(tmp_path)
    memory = root / "memory.yml"
    skill = root / "skills" / "bill_dispute" / "skill.md"
    async with lsp_session(root) as s:
        globs = [
            w["globPattern"]
            for r in s.registrations
            if r.method == lsp.WORKSPACE_DID_CHANGE_WATCHED_FILES
            for w in r.register_options["watchers"]  # type: ignore[index]
        ]
        assert "**/skill.md" in globs and "**/*.py" in globs and "**/responses.yml" in globs
        memory.write_text(
            memory.read_text(encoding="utf-8").replace("customer_tier:", "tier:"), "utf-8"
        )
        s.client.workspace_did_change_watched_files(
            lsp.DidChangeWatchedFilesParams(
                changes=[lsp.FileEvent(uri=uri(memory), type=lsp.FileChangeType.Changed)]
            )
        )
        await s.until(lambda: UNKNOWN_KEY in s.codes(skill), what="skill.md diagnostics")
        # a deleted skill folder: its files are cleared, readers of its fields complain
        roaming = root / "skills" / "roaming_pass"
        # it reads project.customer_tier too
        await s.until(lambda: s.diagnostics(roaming / "skill.md"), what="roaming_pass")
        shutil.rmtree(roaming)
        s.client.workspace_did_change_watched_files(
            lsp.DidChangeWatchedFilesParams(
                changes=[lsp.FileEvent(uri=uri(roaming), type=lsp.FileChangeType.Deleted)]
            )
        )
        await s.until(
            lambda: any("roaming_pass" in d.message for d in s.diagnostics(skill)),
            what="roaming_pass is gone",
        )
        # cleared: no longer a project file
        await s.until(lambda: s.diagnostics(roaming / "skill.md") == (), what="cleared")


async def test_workspace_folders_add_and_remove(tmp_path: Path) -> None:
    a = copy_telecom(tmp_path / "a")
    b = copy_telecom(tmp_path / "b")
    bad = b / "skills" / "plan_change" / "skill.md"
    bad.write_text(
        bad.read_text(encoding="utf-8").replace("description:", "descripton:", 1), "utf-8"
    )
    async with lsp_session(a) as s:
        assert s.published_for(bad) == []
        s.client.workspace_did_change_workspace_folders(
            lsp.DidChangeWorkspaceFoldersParams(
                event=lsp.WorkspaceFoldersChangeEvent(
                    added=[lsp.WorkspaceFolder(uri=uri(b.parent), name="b")], removed=[]
                )
            )
        )
        await s.until(lambda: s.diagnostics(bad), what="diagnostics of the added folder")
        s.client.workspace_did_change_workspace_folders(
            lsp.DidChangeWorkspaceFoldersParams(
                event=lsp.WorkspaceFoldersChangeEvent(
                    added=[], removed=[lsp.WorkspaceFolder(uri=uri(b.parent), name="b")]
                )
            )
        )
        await s.until(lambda: s.diagnostics(bad) == (), what="cleared after removal")
        # the first folder still works
        hover = await s.client.text_document_hover_async(
            lsp.HoverParams(
                text_document=s.doc(a / "skills" / "bill_dispute" / "skill.md"),
                position=lsp.Position(line=0, character=0),
            )
        )
        assert hover is None


async def test_configuration_ignore_list(tmp_path: Path) -> None:
    root = copy_telecom(tmp_path)
    skill = root / "skills" / "bill_dispute" / "skill.md"
    skill.write_text(
        skill.read_text(encoding="utf-8").replace(
            "disputed_amount > 100", "disputed_amountx > 100"
        ),
        "utf-8",
    )
    config = {
        "mantle": {"engineVersion": "3.21", "diagnostics": {"ignore": ["mantle.validation.prose"]}}
    }
    async with lsp_session(root, configuration=config) as s:
        assert any("diagnostics.ignore=['mantle.validation.prose']" in m for m in s.logs())
        assert s.published_for(skill) == []
        s.client.set_configuration({"mantle": {"diagnostics": {"ignore": []}}})
        s.client.workspace_did_change_configuration(lsp.DidChangeConfigurationParams(settings=None))
        await s.until(lambda: UNKNOWN_KEY in s.codes(skill), what="diagnostics after un-ignoring")
        s.client.set_configuration({"mantle": {"diagnostics": {"ignore": [UNKNOWN_KEY]}}})
        s.client.workspace_did_change_configuration(lsp.DidChangeConfigurationParams(settings=None))
        await s.until(lambda: s.diagnostics(skill) == (), what="cleared by the ignore list")


async def test_pull_diagnostics(tmp_path: Path) -> None:
    root = copy_telecom(tmp_path)
    skill = root / "skills" / "bill_dispute" / "skill.md"
    memory = root / "skills" / "bill_dispute" / "memory.yml"
    text = memory.read_text(encoding="utf-8")
    async with lsp_session(root, capabilities=vscode_capabilities(pull=True)) as s:
        assert s.client.diagnostic_refresh_count >= 1  # after the initial index
        report = await s.client.text_document_diagnostic_async(
            lsp.DocumentDiagnosticParams(text_document=s.doc(skill))
        )
        assert isinstance(report, lsp.RelatedFullDocumentDiagnosticReport)
        assert report.items == ()
        again = await s.client.text_document_diagnostic_async(
            lsp.DocumentDiagnosticParams(
                text_document=s.doc(skill), previous_result_id=report.result_id
            )
        )
        assert isinstance(again, lsp.RelatedUnchangedDocumentDiagnosticReport)
        s.open(memory)
        pos = position_of(text, "disputed_amount:", len("disputed_amount"))
        refreshes = s.client.diagnostic_refresh_count
        s.change(memory, (pos.line, pos.character), (pos.line, pos.character), "_eur")
        await s.until(lambda: s.client.diagnostic_refresh_count > refreshes, what="refresh")
        report = await s.client.text_document_diagnostic_async(
            lsp.DocumentDiagnosticParams(text_document=s.doc(skill))
        )
        assert isinstance(report, lsp.RelatedFullDocumentDiagnosticReport)
        assert UNKNOWN_KEY in {d.code for d in report.items}
        ws = await s.client.workspace_diagnostic_async(
            lsp.WorkspaceDiagnosticParams(previous_result_ids=[])
        )
        by_uri = {item.uri: item for item in ws.items}
        assert by_uri[uri(skill)].items  # type: ignore[union-attr]
        # files with nothing to report that the client knows nothing of are left out
        assert all(item.items for item in ws.items)  # type: ignore[union-attr]
        clean = root / "skills" / "roaming_pass" / "skill.md"
        assert uri(clean) not in by_uri
        # ... but one the client holds a result for is reported (here: unchanged)
        ws = await s.client.workspace_diagnostic_async(
            lsp.WorkspaceDiagnosticParams(
                previous_result_ids=[
                    lsp.PreviousResultId(uri=uri(clean), value=again.result_id)  # type: ignore[arg-type]
                ]
            )
        )
        by_uri = {item.uri: item for item in ws.items}
        assert isinstance(by_uri[uri(clean)], lsp.WorkspaceUnchangedDocumentDiagnosticReport)
        # and a file whose problems are gone is reported empty once, to clear them
        s.change(memory, (pos.line, pos.character), (pos.line, pos.character + 4), "")
        ws = await s.client.workspace_diagnostic_async(
            lsp.WorkspaceDiagnosticParams(previous_result_ids=[])
        )
        by_uri = {item.uri: item for item in ws.items}
        assert not by_uri[uri(skill)].items  # type: ignore[union-attr]
        ws = await s.client.workspace_diagnostic_async(
            lsp.WorkspaceDiagnosticParams(previous_result_ids=[])
        )
        assert uri(skill) not in {item.uri for item in ws.items}
        assert s.published == []  # nothing is pushed to a pulling client


async def test_progress_during_initial_index(tmp_path: Path) -> None:
    a = copy_telecom(tmp_path / "a")
    b = copy_telecom(tmp_path / "b")
    async with lsp_session(a, folders=[a, b]) as s:
        (reports,) = s.client.progress_reports.values()
        kinds = [type(r).__name__ for r in reports]
        assert kinds[0] == "WorkDoneProgressBegin" and kinds[-1] == "WorkDoneProgressEnd"
        assert "WorkDoneProgressReport" in kinds
        assert reports[0].title == "Mantle: indexing"  # type: ignore[union-attr]
        assert "2 project(s)" in (reports[-1].message or "")  # type: ignore[union-attr]


async def test_engine_version_setting(tmp_path: Path) -> None:
    """`mantle.engineVersion` switches the rule profile: 3.22 attributes are warned about
    under 3.21 and accepted under 3.22 (where the 3.22 rules apply)."""
    root = copy_telecom(tmp_path)
    memory = root / "memory.yml"
    memory.write_text(
        memory.read_text(encoding="utf-8") + "\nplan_locked:\n  type: bool\n  mutable: true\n",
        "utf-8",
    )
    code = "lsp.memory.engine_3_22_attribute"
    async with lsp_session(root, configuration={"mantle": {"engineVersion": "3.21"}}) as s:
        await s.until(lambda: code in s.codes(memory), what="3.22 attribute warning")
        s.client.set_configuration({"mantle": {"engineVersion": "3.22"}})
        s.client.workspace_did_change_configuration(lsp.DidChangeConfigurationParams(settings=None))
        await s.until(lambda: code not in s.codes(memory), what="accepted under 3.22")


async def test_scenarios_get_diagnostics_and_follow_the_agent(tmp_path: Path) -> None:
    """An open scenario gets the same diagnostics as `check`, edits of it are checked,
    and a change to the agent it names (a skill folder renamed on disk) re-checks it."""
    root = copy_telecom(tmp_path)
    scenario = root / "eval" / "scenarios" / "happy_path" / "roaming_week_pass.yml"
    text = scenario.read_text(encoding="utf-8")
    async with lsp_session(root) as s:
        globs = [
            w["globPattern"]
            for r in s.registrations
            if r.method == lsp.WORKSPACE_DID_CHANGE_WATCHED_FILES
            for w in r.register_options["watchers"]  # type: ignore[index]
        ]
        assert "**/eval/**/*.yml" in globs and "**/eval/**/*.yaml" in globs
        s.open(scenario)
        await s.until(lambda: any(p.version == 1 for p in s.published_for(scenario)))
        assert s.diagnostics(scenario) == ()
        # an edit: a CALM key where the Mantle one was
        pos = position_of(text, "memory_was_set:\n")
        v = s.change(
            scenario,
            (pos.line, pos.character),
            (pos.line, pos.character + len("memory_was_set")),
            "slot_was_set",
        )
        got = await s.until(lambda: [p for p in s.published_for(scenario) if p.version == v])
        (d,) = got[-1].diagnostics
        assert d.code == "eval.scenario.calm_assertion"
        assert d.severity == lsp.DiagnosticSeverity.Error
        assert d.range == lsp.Range(
            start=pos, end=lsp.Position(line=pos.line, character=pos.character + 12)
        )
        v = s.change(
            scenario,
            (pos.line, pos.character),
            (pos.line, pos.character + len("slot_was_set")),
            "memory_was_set",
        )
        got = await s.until(lambda: [p for p in s.published_for(scenario) if p.version == v])
        assert got[-1].diagnostics == ()
        # the skill folder renamed on disk: the scenario names a skill that is gone
        (root / "skills" / "roaming_pass").rename(root / "skills" / "roaming")
        s.client.workspace_did_change_watched_files(
            lsp.DidChangeWatchedFilesParams(
                changes=[
                    lsp.FileEvent(
                        uri=uri(root / "skills" / "roaming_pass"),
                        type=lsp.FileChangeType.Deleted,
                    ),
                    lsp.FileEvent(
                        uri=uri(root / "skills" / "roaming"), type=lsp.FileChangeType.Created
                    ),
                ]
            )
        )
        await s.until(
            lambda: "lsp.eval.unknown_skill" in s.codes(scenario), what="the scenario re-checked"
        )
        assert any(
            "`roaming_pass` is not a skill" in d.message and "did you mean `roaming`?" in d.message
            for d in s.diagnostics(scenario)
        )
