"""The server after any sequence of events (issue 19): long sessions do not grow, files
changed outside the editor (one event at a time, per folder, or none at all) end where
``check`` does, and one bad event never costs the others."""

from __future__ import annotations

import asyncio
import shutil
import sys
from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types as lsp
from pygls.exceptions import JsonRpcException

from mantle_lsp.ide.codes import FAILED_TO_LOAD
from mantle_lsp.ide.diagnostics import project_diagnostics
from mantle_lsp.lsp import convert
from mantle_lsp.model.source import C_BINARY
from mantle_lsp.model.workspace import Workspace
from test_lsp_fuzz import Row, rows
from test_lsp_support import (
    REPO,
    Session,
    copy_telecom,
    lsp_session,
    position_of,
    uri,
    vscode_capabilities,
)
from test_robustness import FUZZ

pytestmark = pytest.mark.timeout(60)


async def status(s: Session) -> dict[str, Any]:
    result = await s.client.protocol.send_request_async("mantle/status", {})
    return dict(result if isinstance(result, dict) else result._asdict())


async def flat(s: Session, before: int, timeout: float = 5.0) -> dict[str, Any]:
    """Wait until the server has published everything and its pending futures are back
    to ``before`` (+1: the status request being answered); server-to-client requests
    still waiting for the client's answer (a code-lens refresh) count for a moment, a
    leaked future forever."""
    now = await status(s)  # answered after every message sent before it
    deadline = asyncio.get_running_loop().time() + timeout
    while True:
        if now["pendingFutures"] <= before + 1 and not now["pendingDiagnostics"]:
            return now
        assert asyncio.get_running_loop().time() < deadline, f"futures pile up: {now}"
        await asyncio.sleep(0.1)
        now = await status(s)


def edit(s: Session, path: Path, n: int) -> int:
    """Edit ``n`` of a burst: insert an `x` at the start, or take it out again."""
    if n % 2 == 0:
        return s.change(path, (0, 0), (0, 0), "x")
    return s.change(path, (0, 0), (0, 1), "")


async def test_thousands_of_changes_leave_no_pending_futures(tmp_path: Path) -> None:
    """pygls 2.1 kept one future per didChange (and per didOpen, didClose, ...) forever:
    10,006 after 10,000 changes."""
    root = copy_telecom(tmp_path)
    path = root / "skills" / "roaming_pass" / "skill.md"
    other = root / "skills" / "bill_dispute" / "memory.yml"
    async with lsp_session(root) as s:
        s.open(path)
        before = (await status(s))["pendingFutures"]
        for n in range(3000):
            edit(s, path, n)
            if n % 500 == 0:  # opening and closing documents goes through pygls too
                s.open(other)
                s.close(other)
        await flat(s, before)
        for _ in range(200):  # async notification handlers: folders, configuration
            s.client.workspace_did_change_workspace_folders(
                lsp.DidChangeWorkspaceFoldersParams(
                    event=lsp.WorkspaceFoldersChangeEvent(added=[], removed=[])
                )
            )
            s.client.workspace_did_change_configuration(
                lsp.DidChangeConfigurationParams(settings=None)
            )
        await flat(s, before)


# ---------------------------------------------------------------------------------------
# Files changed on disk, reported one by one, per folder, both or in any order


def check_rows(root: Path, buffers: dict[Path, str] | None = None) -> dict[str, list[Row]]:
    """What ``check`` reports for every file of the project at ``root`` (open buffers, which
    ``check`` cannot see, given as ``buffers``), by URI."""
    ws = Workspace()
    for p, text in (buffers or {}).items():
        ws.open_buffer(p, text, 1)
    proj = ws.load_detached(root)
    found = project_diagnostics(proj)
    out = {}
    for p in proj.files:
        index = proj.files[p].source.index
        found_here = found.get(p, [])
        out[convert.path_to_uri(p)] = rows(convert.to_diagnostic(d, index) for d in found_here)
    return out


def assert_agrees_with_check(
    s: Session, root: Path, buffers: dict[Path, str] | None = None, what: str = ""
) -> None:
    want = check_rows(root, buffers)
    got = {u: rows(ds) for u, ds in s.client.diagnostics.items() if ds}
    for u, expected in want.items():
        assert got.get(u, []) == expected, f"{what}: {u} differs from check"
    extra = sorted(u for u in got if u not in want)
    assert not extra, f"{what}: diagnostics left on files check does not know: {extra}"


def notify_files(s: Session, *events: tuple[Path, lsp.FileChangeType]) -> None:
    s.client.workspace_did_change_watched_files(
        lsp.DidChangeWatchedFilesParams(
            changes=[lsp.FileEvent(uri=p.absolute().as_uri(), type=t) for p, t in events]
        )
    )


CREATED, CHANGED, DELETED = (
    lsp.FileChangeType.Created,
    lsp.FileChangeType.Changed,
    lsp.FileChangeType.Deleted,
)


async def test_a_skill_moved_file_by_file_leaves_no_phantom(tmp_path: Path) -> None:
    root = copy_telecom(tmp_path)
    old = root / "skills" / "roaming_pass"
    new = root / "skills" / "roaming"
    async with lsp_session(root) as s:
        await flat(s, 0)
        assert_agrees_with_check(s, root, what="start")
        shutil.move(old, new)
        # the new skill.md first, then the old files (VS Code's order for a folder move)
        names = sorted(p.name for p in new.iterdir())
        notify_files(s, *[(new / n, CREATED) for n in names if n == "skill.md"])
        notify_files(s, *[(new / n, CREATED) for n in names if n != "skill.md"])
        for n in names:
            notify_files(s, (old / n, DELETED))
        await flat(s, 0)
        assert_agrees_with_check(s, root, what="moved file by file")
        # the references to the old id are reported again
        assert any("roaming_pass" in d.message for ds in s.client.diagnostics.values() for d in ds)


async def test_a_skill_deleted_file_by_file_then_its_folder(tmp_path: Path) -> None:
    root = copy_telecom(tmp_path)
    gone = root / "skills" / "roaming_pass"
    async with lsp_session(root) as s:
        names = sorted(p.name for p in gone.iterdir())
        shutil.rmtree(gone)
        for n in names:
            notify_files(s, (gone / n, DELETED))
        await flat(s, 0)
        assert_agrees_with_check(s, root, what="files deleted one at a time")
        notify_files(s, (gone, DELETED))  # a late folder event changes nothing
        await flat(s, 0)
        assert_agrees_with_check(s, root, what="then the folder")


async def test_a_deleted_file_rechecks_what_the_rules_reading_its_kind_report_on(
    tmp_path: Path,
) -> None:
    """Deleting the shared tool module that could reach `project.customer_tier` (once
    its only writer is gone) makes the root responses.yml's condition on it constant:
    a file event is followed by the files the rules reading that kind of file report on,
    as an edit is (found by `make fuzz`)."""
    root = copy_telecom(tmp_path)
    writer = root / "skills" / "verify_customer"
    async with lsp_session(root) as s:
        names = sorted(p.name for p in writer.iterdir())
        shutil.rmtree(writer)
        notify_files(s, *[(writer / n, DELETED) for n in names])
        await flat(s, 0)
        assert_agrees_with_check(s, root, what="the field's writer deleted")
        shared = root / "tools" / "account_lookup.py"
        shared.unlink()
        notify_files(s, (shared, DELETED))
        await flat(s, 0)
        assert_agrees_with_check(s, root, what="then the shared tool module")
        hints = s.client.diagnostics.get((root / "responses.yml").as_uri(), [])
        assert any(d.code == "lsp.condition.constant_never_written" for d in hints)


async def test_code_whose_memory_keys_cannot_be_known_going_away_rechecks_conditions(
    tmp_path: Path,
) -> None:
    """A shared tool module that writes memory under keys nobody can know may write any
    field: while it is there, no condition on a field nothing else writes is called
    constant. Deleting it rechecks every file that reads a field, in every skill."""
    root = tmp_path / "agent"
    files = {
        "agent.yml": "name: a\n",
        "memory.yml": "tier:\n  type: text\n",
        "skills/card/skill.md": "---\ndescription: Card.\n---\nOffer utter_offer.\n",
        "skills/card/responses.yml": "responses:\n  utter_offer:\n    - text: Gold.\n"
        "      condition: \"session.project.tier == 'gold'\"\n    - text: Plain.\n",
        "tools/anything.py": "from rasa.mantle.tools.decorator import ToolContext, tool\n\n\n"
        '@tool(description="Remember anything.")\n'
        'async def remember(context: ToolContext = None, key: str = "", value: str = ""):\n'
        "    context.memory.set(key, value)\n",
    }
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    responses = (root / "skills/card/responses.yml").as_uri()

    def constant() -> bool:
        hints = s.client.diagnostics.get(responses) or []
        return any(d.code == "lsp.condition.constant_never_written" for d in hints)

    async with lsp_session(root) as s:
        assert_agrees_with_check(s, root, what="with the module")
        assert not constant()
        anything = root / "tools" / "anything.py"
        anything.unlink()
        notify_files(s, (anything, DELETED))
        await flat(s, 0)
        assert_agrees_with_check(s, root, what="without it")
        assert constant()


async def test_all_skills_removed_per_file_report_the_missing_skills(tmp_path: Path) -> None:
    root = copy_telecom(tmp_path)
    skills = root / "skills"
    async with lsp_session(root) as s:
        files = sorted(p for p in skills.rglob("*") if p.is_file())
        shutil.rmtree(skills)
        notify_files(s, *[(p, DELETED) for p in files])
        await flat(s, 0)
        assert_agrees_with_check(s, root, what="rm -r skills/")
        assert any(
            d.code == "config.project_structure.missing_skills"
            for ds in s.client.diagnostics.values()
            for d in ds
        )


@pytest.mark.parametrize("events", ["folder", "both", "none-then-folder", "reordered"])
async def test_a_skill_folder_moved_with_any_events(tmp_path: Path, events: str) -> None:
    root = copy_telecom(tmp_path)
    old = root / "skills" / "bill_dispute"
    new = root / "skills" / "disputes"
    async with lsp_session(root) as s:
        names = sorted(p.name for p in old.iterdir())
        shutil.move(old, new)
        per_file = [(new / n, CREATED) for n in names] + [(old / n, DELETED) for n in names]
        folder = [(old, DELETED), (new, CREATED)]
        if events == "folder":
            notify_files(s, *folder)
        elif events == "both":
            notify_files(s, *folder, *per_file, *per_file)
        elif events == "none-then-folder":
            notify_files(s, (new, CREATED))
        else:
            notify_files(s, *reversed(per_file))
        await flat(s, 0)
        assert_agrees_with_check(s, root, what=events)


@pytest.mark.parametrize("events", ["folder", "none-then-folder"])
async def test_an_empty_skill_folder_moved(tmp_path: Path, events: str) -> None:
    """A skill folder whose files are all gone is still a skill (the engine lists the
    folders); moved, it is one under its new name only. No file moves with it, so only
    the folder's events tell: agent.yml's `resolve_with: verify_customer` names no skill
    any more. (Found by the stateful test, through the server's own watcher.)"""
    root = copy_telecom(tmp_path)
    old = root / "skills" / "verify_customer"
    new = root / "skills" / "verify_customerb"
    async with lsp_session(root) as s:
        gone = sorted(p for p in old.rglob("*") if p.is_file())
        for p in gone:
            p.unlink()
        notify_files(s, *[(p, DELETED) for p in gone])
        await flat(s, 0)
        assert_agrees_with_check(s, root, what="its files deleted")
        shutil.move(old, new)
        if events == "folder":
            notify_files(s, (old, DELETED), (new, CREATED))
        else:
            notify_files(s, (new, CREATED))
        await flat(s, 0)
        assert_agrees_with_check(s, root, what=events)
        assert any("`verify_customerb`" in d.message for d in s.diagnostics(root / "agent.yml"))


async def test_a_skill_folder_emptied_file_by_file_fails_to_load_at_agent_yml(
    tmp_path: Path,
) -> None:
    """Issue 29: a skill folder whose files are deleted one by one (the folder stays) is
    reported on its first file left, then on agent.yml's first line, naming the folder;
    and back when a file appears again."""
    root = copy_telecom(tmp_path)
    folder = root / "skills" / "bill_dispute"
    agent = root / "agent.yml"

    def at_agent() -> list[str]:
        return [d.message for d in s.diagnostics(agent) if d.code == FAILED_TO_LOAD]

    async with lsp_session(root) as s:
        await flat(s, 0)
        # skill.md first, memory.yml last (tools.py going changes memory facts)
        for p in sorted((p for p in folder.iterdir() if p.is_file()), reverse=True):
            p.unlink()
            notify_files(s, (p, DELETED))
            await flat(s, 0)
            assert_agrees_with_check(s, root, what=f"without {p.name}")
        assert not any(folder.iterdir())
        (msg,) = at_agent()
        assert msg.startswith("skills/bill_dispute/ holds no skill.md")
        assert s.diagnostics(agent)[0].range.start == lsp.Position(line=0, character=0)
        notes = folder / "notes.txt"  # not a Mantle file: the folder still fails, at agent.yml
        notes.write_text("later\n", "utf-8")
        notify_files(s, (notes, CREATED))
        memory = folder / "memory.yml"
        memory.write_text("schema:\n  public:\n    x: {type: text}\n", "utf-8")
        notify_files(s, (memory, CREATED))
        await flat(s, 0)
        assert_agrees_with_check(s, root, what="a memory.yml back")
        assert not at_agent()
        assert FAILED_TO_LOAD in s.codes(memory)


async def test_a_skill_that_stops_loading_fails_where_it_is_referenced(tmp_path: Path) -> None:
    """Issue 29: plan_change refers to @skill.bill_dispute; once bill_dispute fails to
    load (an edit in the editor, then on disk), the reference fails too, and recovers."""
    root = copy_telecom(tmp_path)
    target = root / "skills" / "bill_dispute" / "skill.md"
    user = root / "skills" / "plan_change" / "skill.md"
    text = target.read_text("utf-8")
    async with lsp_session(root) as s:
        await flat(s, 0)
        s.open(target)
        s.change(target, (1, 0), (1, 0), "requires: session.project.x\n")
        await flat(s, 0)
        broken = text.replace("---\n", "---\nrequires: session.project.x\n", 1)
        assert_agrees_with_check(s, root, {target: broken}, what="edited")
        assert "skill.referenced.invalid_target" in s.codes(user)
        s.change(target, (1, 0), (2, 0), "")
        await flat(s, 0)
        assert_agrees_with_check(s, root, {target: text}, what="edited back")
        assert "skill.referenced.invalid_target" not in s.codes(user)
        s.close(target)
        target.write_text(broken, "utf-8")
        notify_files(s, (target, CHANGED))
        await flat(s, 0)
        assert_agrees_with_check(s, root, what="on disk")
        assert "skill.referenced.invalid_target" in s.codes(user)


# ---------------------------------------------------------------------------------------
# Findings that depend on another file


def unused(s: Session, path: Path) -> list[str]:
    return [d.message for d in s.diagnostics(path) if d.code == "lsp.memory.unused_field"]


EXTRA_FIELD = "    extra_note:\n      type: text\n"
EXTRA_USE = "\nMention @memory.roaming_pass.extra_note when it helps.\n"


def with_extra_field(root: Path) -> tuple[Path, Path, str]:
    """A public field of roaming_pass that only plan_change's skill.md reads."""
    memory = root / "skills" / "roaming_pass" / "memory.yml"
    mtext = memory.read_text(encoding="utf-8")
    memory.write_text(mtext.replace("  public:\n", "  public:\n" + EXTRA_FIELD), "utf-8")
    user = root / "skills" / "plan_change" / "skill.md"
    text = user.read_text(encoding="utf-8") + EXTRA_USE
    user.write_text(text, encoding="utf-8")
    return memory, user, text


def extra_unused(s: Session, memory: Path) -> bool:
    return any("extra_note" in m for m in unused(s, memory))


async def test_unused_field_follows_its_last_reference_elsewhere(tmp_path: Path) -> None:
    root = copy_telecom(tmp_path)
    memory, user, text = with_extra_field(root)
    token = "@memory.roaming_pass.extra_note"
    async with lsp_session(root) as s:
        await flat(s, 0)
        assert not extra_unused(s, memory)
        s.open(user, text)
        at = position_of(text, token)
        s.change(user, (at.line, at.character), (at.line, at.character + len(token)), "it")
        await flat(s, 0)
        assert extra_unused(s, memory), "the hint appears"
        s.change(user, (at.line, at.character), (at.line, at.character + 2), token)
        await flat(s, 0)
        assert not extra_unused(s, memory), "and goes"
        s.close(user)
        # the reference removed on disk, put back, then the file deleted
        user.write_text(text.replace(token, "it"), "utf-8")
        notify_files(s, (user, CHANGED))
        await flat(s, 0)
        assert extra_unused(s, memory)
        assert_agrees_with_check(s, root, what="reference removed on disk")
        user.write_text(text, "utf-8")
        notify_files(s, (user, CHANGED))
        await flat(s, 0)
        assert not extra_unused(s, memory)
        user.unlink()
        notify_files(s, (user, DELETED))
        await flat(s, 0)
        assert extra_unused(s, memory)
        assert_agrees_with_check(s, root, what="the only reader deleted")


def apply_edit_on_disk(edit: lsp.WorkspaceEdit) -> list[tuple[Path, lsp.FileChangeType]]:
    """What a client does with a workspace edit for files that are not open: edit and
    move them on disk. Returns the events it would report."""
    events: list[tuple[Path, lsp.FileChangeType]] = []
    for op in edit.document_changes or []:
        if isinstance(op, lsp.TextDocumentEdit):
            path = convert.uri_to_path(op.text_document.uri)
            assert path is not None
            text = path.read_text(encoding="utf-8")
            lines = text.splitlines(keepends=True)
            starts = [0]
            for line in lines:
                starts.append(starts[-1] + len(line))
            spans = []
            for e in op.edits:
                assert isinstance(e, lsp.TextEdit)
                a = starts[e.range.start.line] + e.range.start.character
                b = starts[e.range.end.line] + e.range.end.character
                spans.append((a, b, e.new_text))
            for a, b, new in sorted(spans, reverse=True):
                text = text[:a] + new + text[b:]
            path.write_text(text, encoding="utf-8")
            events.append((path, CHANGED))
        elif isinstance(op, lsp.RenameFile):
            src, dst = convert.uri_to_path(op.old_uri), convert.uri_to_path(op.new_uri)
            assert src is not None and dst is not None
            shutil.move(src, dst)
            events += [(src, DELETED), (dst, CREATED)]
    return events


def snapshot(root: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()
    }


async def rename(s: Session, path: Path, needle: str, new_name: str) -> None:
    text = path.read_text(encoding="utf-8")
    edit = await s.client.text_document_rename_async(
        lsp.RenameParams(
            text_document=s.doc(path), position=position_of(text, needle, 1), new_name=new_name
        )
    )
    assert edit is not None
    notify_files(s, *apply_edit_on_disk(edit))
    await flat(s, 0)


async def test_renaming_a_project_field_and_back(tmp_path: Path) -> None:
    root = copy_telecom(tmp_path)
    memory = root / "memory.yml"
    before = snapshot(root)
    async with lsp_session(root) as s:
        await flat(s, 0)
        await rename(s, memory, "customer_tier", "tier_of_customer")
        assert_agrees_with_check(s, root, what="renamed")
        assert not unused(s, memory)
        await rename(s, memory, "tier_of_customer", "customer_tier")
        assert_agrees_with_check(s, root, what="renamed back")
        assert not unused(s, memory)
    assert snapshot(root) == before


# ---------------------------------------------------------------------------------------
# Events that used to cost the whole batch


async def test_an_event_for_the_root_folder_costs_no_other_event(tmp_path: Path) -> None:
    root = copy_telecom(tmp_path)
    memory = root / "skills" / "roaming_pass" / "memory.yml"
    async with lsp_session(root) as s:
        (root / "skills" / "up").symlink_to("..")
        memory.write_text(memory.read_text("utf-8") + "  bogus: 1\n", "utf-8")
        notify_files(s, (root, CHANGED), (root / "skills" / "up", CREATED), (memory, CHANGED))
        await flat(s, 0)
        assert not [m for m in s.logs() if "failed" in m]
        assert_agrees_with_check(s, root, what="root and a link to it")
        # a request on the root folder's URI is answered
        h = await s.client.text_document_hover_async(
            lsp.HoverParams(text_document=s.doc(root), position=lsp.Position(line=0, character=0))
        )
        assert h is None


@pytest.mark.parametrize("named", ["memory.yml", "skills/up/memory.yml"])
async def test_a_file_also_listed_through_a_linked_skill_folder(tmp_path: Path, named: str) -> None:
    """Issue 29: with `skills/up -> ..`, the project's memory.yml is also the memory.yml of
    skill folder `up` (which fails to load: the root has no skill.md). A change on disk,
    reported under either name, reaches both, as `check` reads them."""
    root = copy_telecom(tmp_path)
    (root / "skills" / "up").symlink_to("..")
    memory = root / "memory.yml"
    async with lsp_session(root) as s:
        await flat(s, 0)
        assert_agrees_with_check(s, root, what="at start")
        memory.write_text("schema:\n  public:\n    x: {type: text}\n", "utf-8")
        notify_files(s, (root / named, CHANGED))
        await flat(s, 0)
        assert_agrees_with_check(s, root, what="memory.yml rewritten")
        seen = root / "skills" / "up" / "memory.yml"
        assert "lsp.memory.missing_schema" not in s.codes(seen), "read again through the link"


async def test_overlapping_workspace_folders(tmp_path: Path) -> None:
    root = copy_telecom(tmp_path)
    path = root / "skills" / "roaming_pass" / "skill.md"
    path.write_text(path.read_text("utf-8") + "\nRead @memory.roaming_pass.nope.\n", "utf-8")
    folder = lsp.WorkspaceFolder(uri=uri(root), name="telecom")
    parent = lsp.WorkspaceFolder(uri=uri(tmp_path), name="all")
    async with lsp_session(root, folders=[root, root, tmp_path]) as s:
        await flat(s, 0)
        assert s.diagnostics(path)
        for gone in (folder, parent):
            s.client.workspace_did_change_workspace_folders(
                lsp.DidChangeWorkspaceFoldersParams(
                    event=lsp.WorkspaceFoldersChangeEvent(added=[], removed=[gone])
                )
            )
            await flat(s, 0)
            assert s.diagnostics(path), f"removing {gone.name} dropped the project"
            assert_agrees_with_check(s, root, what=f"without {gone.name}")
        s.client.workspace_did_change_workspace_folders(
            lsp.DidChangeWorkspaceFoldersParams(
                event=lsp.WorkspaceFoldersChangeEvent(added=[], removed=[folder])
            )
        )
        await flat(s, 0)
        assert not s.diagnostics(path), "the last folder removed"


# ---------------------------------------------------------------------------------------
# What exists on disk reaches the rules through the layout the server keeps (issue 30)


def importing_a_disk_module(root: Path) -> tuple[Path, Path]:
    """A tool module that imports ``lib.build.rates``, and where that module would be:
    under build/, a module the engine imports but no helper the project lists, so only
    the disk says whether it exists."""
    tools = root / "skills" / "roaming_pass" / "tools.py"
    tools.write_text("import lib.build.rates\n" + tools.read_text("utf-8"), "utf-8")
    return tools, root / "lib" / "build" / "rates.py"


def unresolved(s: Session, path: Path) -> list[str]:
    return [d.message for d in s.diagnostics(path) if d.code == "lsp.tools.unresolved_import"]


async def test_a_rule_sees_a_change_on_disk_after_its_file_event_and_not_before(
    tmp_path: Path,
) -> None:
    """A module created outside the editor resolves an import when the server hears of
    it, not at whatever moment the rule happens to run again (an edit of the importer)."""
    root = copy_telecom(tmp_path)
    tools, module = importing_a_disk_module(root)
    async with lsp_session(root) as s:
        await flat(s, 0)
        assert unresolved(s, tools), "the import names no module yet"
        module.parent.mkdir(parents=True)
        module.write_text("RATE = 1\n", "utf-8")
        s.open(tools)  # the tool module's rules run again
        s.change(tools, (0, 0), (0, 0), "# rates\n")
        await flat(s, 0)
        assert unresolved(s, tools), "no file event yet: the rule still sees no module"
        notify_files(s, (module, CREATED))
        await flat(s, 0)
        assert not unresolved(s, tools), "after the event the module exists"
        buffers = {tools: "# rates\n" + tools.read_text("utf-8")}
        assert_agrees_with_check(s, root, buffers, what="module created")
        module.unlink()
        notify_files(s, (module, DELETED))
        await flat(s, 0)
        assert unresolved(s, tools), "after the event the module is gone"
        assert_agrees_with_check(s, root, buffers, what="module deleted")


# ---------------------------------------------------------------------------------------
# A client that cannot watch files: the server watches the workspace itself


def no_watcher_capabilities() -> lsp.ClientCapabilities:
    caps = vscode_capabilities()
    caps.workspace.did_change_watched_files = lsp.DidChangeWatchedFilesClientCapabilities(  # type: ignore[union-attr]
        dynamic_registration=False
    )
    return caps


async def wait_agrees(s: Session, root: Path, what: str, timeout: float = 15.0) -> None:
    deadline = asyncio.get_running_loop().time() + timeout
    while True:
        await flat(s, 0)
        try:
            assert_agrees_with_check(s, root, what=what)
            return
        except AssertionError:
            if asyncio.get_running_loop().time() > deadline:
                raise
            await asyncio.sleep(0.2)


@pytest.mark.parametrize("mode", ["native", "poll"])
async def test_changes_on_disk_are_seen_without_any_client_event(
    tmp_path: Path, mode: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    if mode == "poll":
        monkeypatch.setenv("MANTLE_LSP_WATCH", "poll")
    root = copy_telecom(tmp_path)
    memory = root / "skills" / "roaming_pass" / "memory.yml"
    async with lsp_session(root, capabilities=no_watcher_capabilities()) as s:
        assert not s.registrations
        assert (await status(s))["watching"] == {"poll": "polling"}.get(mode, mode)
        # what `git checkout` does: files rewritten, a skill folder gone, another new
        memory.write_text(memory.read_text("utf-8").replace("type: float", "type: floot"), "utf-8")
        await s.until(lambda: s.diagnostics(memory), what="the rewritten file's diagnostics")
        shutil.rmtree(root / "skills" / "bill_dispute")
        shutil.copytree(root / "skills" / "roaming_pass", root / "skills" / "roaming_copy")
        (root / ".git").mkdir()
        (root / ".git" / "skill.md").write_text("ignored", "utf-8")
        await wait_agrees(s, root, what=f"checked out ({mode})")
        assert any(u.endswith("roaming_copy/skill.md") for u in s.client.diagnostics)


async def test_the_own_watcher_reports_a_module_a_rule_asked_about(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Its watcher passes over build/ folders, but not over a path a rule asked about."""
    monkeypatch.setenv("MANTLE_LSP_WATCH", "poll")
    root = copy_telecom(tmp_path)
    tools, module = importing_a_disk_module(root)
    async with lsp_session(root, capabilities=no_watcher_capabilities()) as s:
        await flat(s, 0)
        assert unresolved(s, tools)
        module.parent.mkdir(parents=True)
        module.write_text("RATE = 1\n", "utf-8")
        await s.until(lambda: not unresolved(s, tools), what="the module, seen by the watcher")
        await wait_agrees(s, root, what="module created (own watcher)")


# ---------------------------------------------------------------------------------------
# A rename and its inverse


async def rename_at(s: Session, path: Path, needle: str, delta: int, new_name: str) -> None:
    text = path.read_text(encoding="utf-8")
    edit = await s.client.text_document_rename_async(
        lsp.RenameParams(
            text_document=s.doc(path), position=position_of(text, needle, delta), new_name=new_name
        )
    )
    assert edit is not None
    notify_files(s, *apply_edit_on_disk(edit))
    await flat(s, 0)


@pytest.mark.parametrize("new", ["roaming", "roaming_passes"])
async def test_a_skill_rename_and_its_inverse_restore_every_byte(tmp_path: Path, new: str) -> None:
    """`payroll_payslip` → `payslips` edited a mention in another skill's description,
    the way back did not."""
    root = copy_telecom(tmp_path)
    user = root / "skills" / "plan_change" / "skill.md"
    text = user.read_text(encoding="utf-8")
    user.write_text(text.replace("Not for travel add-ons", "Not for roaming_pass add-ons"))
    before = snapshot(root)
    async with lsp_session(root) as s:
        await flat(s, 0)
        await rename_at(s, user, "memory.roaming_pass.", len("memory.") + 1, new)
        assert (root / "skills" / new / "skill.md").is_file()
        assert_agrees_with_check(s, root, what="renamed")
        await rename_at(s, user, f"memory.{new}.", len("memory.") + 1, "roaming_pass")
        assert_agrees_with_check(s, root, what="renamed back")
    assert snapshot(root) == before


# ---------------------------------------------------------------------------------------
# Smaller cases


async def test_an_open_buffer_with_nul_characters_gets_the_verdict_of_check(
    tmp_path: Path,
) -> None:
    root = copy_telecom(tmp_path)
    path = root / "skills" / "roaming_pass" / "skill.md"
    text = path.read_text(encoding="utf-8").replace("---\n", "---\n\0", 1)
    async with lsp_session(root) as s:
        s.open(path, text)
        await flat(s, 0)
        assert s.codes(path) == [C_BINARY]
        path.write_text(text, encoding="utf-8")  # saved: check says the same
        assert_agrees_with_check(s, root, what="a NUL in the buffer and on disk")


async def test_a_nul_in_a_uri_is_answered_with_invalid_params(tmp_path: Path) -> None:
    root = copy_telecom(tmp_path)
    bad = uri(root / "skills") + "/a%00b/skill.md"
    async with lsp_session(root) as s:
        with pytest.raises(JsonRpcException) as err:
            await s.client.text_document_hover_async(
                lsp.HoverParams(
                    text_document=lsp.TextDocumentIdentifier(uri=bad),
                    position=lsp.Position(line=0, character=0),
                )
            )
        assert err.value.code == -32602 and "NUL" in str(err.value)
        notify_files(s, (root / "memory.yml", CHANGED))
        s.client.workspace_did_change_watched_files(
            lsp.DidChangeWatchedFilesParams(changes=[lsp.FileEvent(uri=bad, type=CREATED)])
        )
        await flat(s, 0)
        assert_agrees_with_check(s, root, what="after a bad event")


async def test_a_symlinked_skill_folder_created_while_serving(tmp_path: Path) -> None:
    root = copy_telecom(tmp_path)
    elsewhere = tmp_path / "shared" / "ext"
    shutil.copytree(root / "skills" / "roaming_pass", elsewhere)
    async with lsp_session(root) as s:
        link = root / "skills" / "ext"
        link.symlink_to(elsewhere, target_is_directory=True)
        notify_files(s, (link, CREATED))
        await flat(s, 0)
        assert_agrees_with_check(s, root, what="a linked skill folder")
        assert any("/skills/ext/" in u for u in s.client.diagnostics), "its files are served"


# ---------------------------------------------------------------------------------------
# Nested projects (issue 12): loaded for the documents opened in them, and only those


async def test_a_document_of_a_nested_project_gets_its_own_analysis(tmp_path: Path) -> None:
    root = copy_telecom(tmp_path)
    nested = root / "tutorial" / "step1"
    (nested / "skills" / "hello").mkdir(parents=True)
    (nested / "agent.yml").write_text("agent:\n  id: t\nbogus_key: 1\n", "utf-8")
    skill = nested / "skills" / "hello" / "skill.md"
    skill.write_text("---\ndescription: Hi.\n---\nSay @memory.hello.nope now.\n", "utf-8")
    async with lsp_session(root) as s:
        now = await flat(s, 0)
        assert now["projects"] == [str(root)], "the folder is a project: only it is loaded"
        assert not [u for u in s.client.diagnostics if "/tutorial/" in u]
        s.open(skill)
        await flat(s, 0)
        assert any("hello.nope" in d.message for d in s.diagnostics(skill)), "its own project"
        assert not s.diagnostics(nested / "agent.yml"), "an unopened file reports nothing"
        assert (await status(s))["projects"] == sorted([str(root), str(nested)])
        s.close(skill)
        now = await flat(s, 0)
        assert not s.diagnostics(skill), "cleared when the document closes"
        assert now["projects"] == [str(root)], "and the project is let go"
        assert_agrees_with_check(s, root, what="after the nested document closed")


# ---------------------------------------------------------------------------------------
# Memory over a long session (`make fuzz`: 20,000 edits on 300 skills, ~2 minutes)


@pytest.mark.skipif(not FUZZ, reason="long: make fuzz")
@pytest.mark.timeout(1200)
async def test_twenty_thousand_edits_leave_memory_flat(tmp_path: Path) -> None:
    """RSS went 83 → 179 MB over 20,000 edits on 300 skills (the text reverted every 10
    edits): one leaked future per didChange."""
    sys.path.insert(0, str(REPO / "bench"))
    from generate import generate  # type: ignore[import-not-found]

    root = generate(tmp_path / "p300", 300).resolve()
    path = root / "skills" / "s7" / "skill.md"
    async with lsp_session(root) as s:
        s.open(path)
        warm: dict[str, Any] = {}
        for n in range(20_000):
            if n % 10 < 5:
                s.change(path, (4, 0), (4, 0), "x")
            else:
                s.change(path, (4, 0), (4, 1), "")
            if n % 1000 == 999:
                now = await flat(s, 0, timeout=60)
                if n == 1999:
                    warm = now
        end = await flat(s, 0, timeout=60)
        grown = end["rssKb"] - warm["rssKb"]
        assert grown < 10_000, f"RSS grew {grown} KiB over 18,000 edits: {warm} → {end}"


def test_parsing_yaml_keeps_nothing_behind() -> None:
    """PyYAML's constructor remembers every node it built: ours is long-lived, so every
    scalar of every text the server ever parsed stayed in memory (~600 bytes a keystroke)."""
    from mantle_lsp.syntax import yaml_tree
    from mantle_lsp.syntax.memory_yml import parse_memory_yml

    for n in range(50):
        parse_memory_yml(
            f"schema:\n  public:\n    f{n}:\n      type: text\n      x: 2020-01-0{n}\n", "skill"
        )
    assert not yaml_tree._constructor.constructed_objects
    assert not yaml_tree._constructor.recursive_objects


async def test_an_event_outside_every_folder_loads_no_project(tmp_path: Path) -> None:
    """Found by the state machine: with its folder removed, a new skill.md reported by
    the client loaded the project again and published its files."""
    root = copy_telecom(tmp_path)
    async with lsp_session(root) as s:
        s.client.workspace_did_change_workspace_folders(
            lsp.DidChangeWorkspaceFoldersParams(
                event=lsp.WorkspaceFoldersChangeEvent(
                    added=[], removed=[lsp.WorkspaceFolder(uri=uri(root), name="telecom")]
                )
            )
        )
        await flat(s, 0)
        new = root / "skills" / "roaming_copy"
        shutil.copytree(root / "skills" / "roaming_pass", new)
        notify_files(s, (new / "skill.md", CREATED))
        now = await flat(s, 0)
        assert now["projects"] == []
        assert not {u: d for u, d in s.client.diagnostics.items() if d}


async def test_did_you_mean_follows_the_names_that_exist(tmp_path: Path) -> None:
    """Found by the state machine: a suggestion for an unknown response kept naming one
    whose responses.yml had been deleted."""
    root = copy_telecom(tmp_path)
    async with lsp_session(root) as s:
        for skill in ("roaming_pass", "verify_customer"):
            gone = root / "skills" / skill / "responses.yml"
            gone.unlink()
            notify_files(s, (gone, DELETED))
            await flat(s, 0)
            assert_agrees_with_check(s, root, what=f"{skill}/responses.yml deleted")


async def test_a_folder_that_stops_being_a_project_is_let_go(tmp_path: Path) -> None:
    """Found by the state machine: with agent.yml and integrations.yml deleted, `check`
    finds no project there, while the server kept reporting on it."""
    root = copy_telecom(tmp_path)
    bad = root / "skills" / "bill_dispute" / "skill.md"
    bad.write_text(bad.read_text("utf-8") + "\nRead @memory.bill_dispute.nope.\n", "utf-8")
    async with lsp_session(root) as s:
        await flat(s, 0)
        assert s.diagnostics(bad)
        for name in ("agent.yml", "integrations.yml"):
            (root / name).unlink()
            notify_files(s, (root / name, DELETED))
        now = await flat(s, 0)
        assert now["projects"] == []
        assert not {u: d for u, d in s.client.diagnostics.items() if d}


async def test_a_pulling_client_is_told_when_a_project_goes(tmp_path: Path) -> None:
    root = copy_telecom(tmp_path)
    bad = root / "skills" / "bill_dispute" / "skill.md"
    bad.write_text(bad.read_text("utf-8") + "\nRead @memory.bill_dispute.nope.\n", "utf-8")

    async def pull() -> dict[str, Any]:
        ws = await s.client.workspace_diagnostic_async(
            lsp.WorkspaceDiagnosticParams(previous_result_ids=[])
        )
        return {item.uri: item.items for item in ws.items}  # type: ignore[union-attr]

    async with lsp_session(root, capabilities=vscode_capabilities(pull=True)) as s:
        assert (await pull())[uri(bad)]
        s.client.workspace_did_change_workspace_folders(
            lsp.DidChangeWorkspaceFoldersParams(
                event=lsp.WorkspaceFoldersChangeEvent(
                    added=[], removed=[lsp.WorkspaceFolder(uri=uri(root), name="telecom")]
                )
            )
        )
        await flat(s, 0)
        cleared = (await pull()).get(uri(bad))
        assert cleared is not None and not cleared, "cleared once"
        assert uri(bad) not in await pull()


async def test_a_hint_that_lists_uses_follows_them(tmp_path: Path) -> None:
    """Found by the state machine: `never_written` on the project memory.yml lists the
    places that read the field; deleting one of them while its skill still reads it
    elsewhere left the list stale."""
    root = copy_telecom(tmp_path)
    async with lsp_session(root) as s:
        for rel in ("responses.yml", "tools/account_lookup.py"):
            (root / rel).unlink()
            notify_files(s, (root / rel, DELETED))
        for skill in ("bill_dispute", "verify_customer"):
            folder = root / "skills" / skill
            files = sorted(p for p in folder.rglob("*") if p.is_file())
            shutil.rmtree(folder)
            notify_files(s, *[(p, DELETED) for p in files])
            await flat(s, 0)
            assert_agrees_with_check(s, root, what=f"{skill} deleted")
        for rel in ("memory.yml", "skill.md", "tools.py"):
            path = root / "skills" / "plan_change" / rel
            path.unlink()
            notify_files(s, (path, DELETED))
            await flat(s, 0)
            assert_agrees_with_check(s, root, what=f"plan_change/{rel} deleted")
        path = root / "skills" / "roaming_pass" / "skill.md"
        s.open(path)
        s.change(path, (0, 0), (0, 0), "\n")
        await flat(s, 0)
        text = "\n" + path.read_text("utf-8")
        assert_agrees_with_check(s, root, {path: text}, what="lines moved")
