"""End to end: the fix-all code actions over LSP (``source.fixAll.mantle`` on a file, and
"Fix all `CODE` in this file / the project", resolved when chosen), applied to the
documents as the editor would."""

from __future__ import annotations

from pathlib import Path

import pytest
from lsprotocol import types as lsp

from test_lsp_support import copy_telecom, lsp_session, uri

pytestmark = [pytest.mark.asyncio, pytest.mark.timeout(60)]

BROKEN = (
    "\nTell them session.{sid}.x and session.{sid}.y, never session.{sid}.x.\n"
    "\nif: session.{sid}.reasn == 'x'\nSay sorry.\n"
)


def apply(text: str, edits: list[lsp.TextEdit]) -> str:
    """The text once ``edits`` (LSP ranges; ASCII text) are applied."""
    starts = [0]
    starts.extend(i + 1 for i, c in enumerate(text) if c == "\n")

    def offset(p: lsp.Position) -> int:
        return starts[p.line] + p.character

    for e in sorted(edits, key=lambda e: offset(e.range.start), reverse=True):
        text = text[: offset(e.range.start)] + e.new_text + text[offset(e.range.end) :]
    return text


def edits_by_file(edit: lsp.WorkspaceEdit | None) -> dict[str, list[lsp.TextEdit]]:
    assert edit is not None and edit.document_changes is not None
    out: dict[str, list[lsp.TextEdit]] = {}
    for change in edit.document_changes:
        assert isinstance(change, lsp.TextDocumentEdit)
        out.setdefault(change.text_document.uri, []).extend(
            e for e in change.edits if isinstance(e, lsp.TextEdit)
        )
    return out


def _broken(root: Path, sid: str) -> tuple[Path, str]:
    path = root / "skills" / sid / "skill.md"
    text = path.read_text(encoding="utf-8") + BROKEN.format(sid=sid)
    path.write_text(text, encoding="utf-8")
    return path, text


def _fixed(text: str, sid: str) -> str:
    return text.replace(f"session.{sid}.x", f"@memory.{sid}.x").replace(
        f"session.{sid}.y", f"@memory.{sid}.y"
    )


async def test_source_fix_all_applies_the_safe_fixes_of_the_file(tmp_path: Path) -> None:
    root = copy_telecom(tmp_path)
    path, text = _broken(root, "plan_change")
    async with lsp_session(root) as s:
        s.open(path, text)
        code = "mantle.validation.prose.session_reference_in_instructions"
        await s.until(
            lambda: sum(d.code == code for d in s.diagnostics(path)) == 3,
            what="the three session references in prose",
        )
        caps = s.init.capabilities.code_action_provider if s.init else None
        assert isinstance(caps, lsp.CodeActionOptions) and caps.code_action_kinds is not None
        assert "source.fixAll.mantle" in caps.code_action_kinds and caps.resolve_provider
        start = lsp.Position(line=0, character=0)
        for only in (["source.fixAll"], ["source.fixAll.mantle"], ["source"]):
            actions = await s.client.text_document_code_action_async(
                lsp.CodeActionParams(
                    text_document=s.doc(path),
                    range=lsp.Range(start=start, end=start),
                    context=lsp.CodeActionContext(diagnostics=[], only=only),
                )
            )
            assert actions is not None
            (fix_all,) = actions
            assert isinstance(fix_all, lsp.CodeAction)
            assert fix_all.kind == "source.fixAll.mantle"
            assert fix_all.title == "Fix all safe problems in this file (3)"
            # the misspelt `reasn` is a guess: left to the author
            assert edits_by_file(fix_all.edit).keys() == {uri(path)}
            assert apply(text, edits_by_file(fix_all.edit)[uri(path)]) == _fixed(
                text, "plan_change"
            )
        # the lightbulb (no `only`) does not compute it
        d = next(d for d in s.diagnostics(path) if d.code == code)
        actions = await s.client.text_document_code_action_async(
            lsp.CodeActionParams(
                text_document=s.doc(path),
                range=d.range,
                context=lsp.CodeActionContext(diagnostics=[d]),
            )
        )
        assert actions is not None
        titles = [a.title for a in actions if isinstance(a, lsp.CodeAction)]
        assert titles == [
            "Change to `@memory.plan_change.x`",
            f"Fix all `{code}` in this file (safe fixes)",
            f"Fix all `{code}` in the project (safe fixes)",
        ]


async def test_fix_all_of_a_code_in_the_file_and_the_project(tmp_path: Path) -> None:
    root = copy_telecom(tmp_path)
    path, text = _broken(root, "plan_change")
    other, other_text = _broken(root, "roaming_pass")  # never opened
    async with lsp_session(root) as s:
        s.open(path, text)
        code = "mantle.validation.prose.session_reference_in_instructions"
        await s.until(
            lambda: sum(d.code == code for d in s.diagnostics(path)) == 3,
            what="the three session references in prose",
        )
        d = next(d for d in s.diagnostics(path) if d.code == code)
        actions = await s.client.text_document_code_action_async(
            lsp.CodeActionParams(
                text_document=s.doc(path),
                range=d.range,
                context=lsp.CodeActionContext(diagnostics=[d]),
            )
        )
        assert actions is not None
        lazy = {
            a.title: a
            for a in actions
            if isinstance(a, lsp.CodeAction) and a.title.startswith("Fix all")
        }
        in_file = lazy[f"Fix all `{code}` in this file (safe fixes)"]
        in_project = lazy[f"Fix all `{code}` in the project (safe fixes)"]
        assert in_file.edit is None and in_project.edit is None  # computed when chosen
        resolved = await s.client.code_action_resolve_async(in_file)
        assert edits_by_file(resolved.edit).keys() == {uri(path)}
        assert apply(text, edits_by_file(resolved.edit)[uri(path)]) == _fixed(text, "plan_change")
        resolved = await s.client.code_action_resolve_async(in_project)
        changes = edits_by_file(resolved.edit)
        assert changes.keys() == {uri(path), uri(other)}
        assert apply(text, changes[uri(path)]) == _fixed(text, "plan_change")
        assert apply(other_text, changes[uri(other)]) == _fixed(other_text, "roaming_pass")


async def test_prose_finding_can_be_ignored_in_the_configuration(tmp_path: Path) -> None:
    """Prose has no inline suppression: the finding's file goes to `per-file-ignores` (a
    new mantle-lsp.toml here), and once the editor has written it the warning goes."""
    root = copy_telecom(tmp_path)
    path = root / "skills" / "plan_change" / "skill.md"
    text = path.read_text(encoding="utf-8") + "\nIf they travel, hand over to roaming_pass.\n"
    async with lsp_session(root) as s:
        s.open(path, text)
        code = "skill.prose.bare_skill_mention"
        d = await s.until(
            lambda: next((d for d in s.diagnostics(path) if d.code == code), None),
            what="the bare mention",
        )
        actions = await s.client.text_document_code_action_async(
            lsp.CodeActionParams(
                text_document=s.doc(path),
                range=d.range,
                context=lsp.CodeActionContext(diagnostics=[d]),
            )
        )
        assert actions is not None
        by_title = {a.title: a for a in actions if isinstance(a, lsp.CodeAction)}
        assert list(by_title) == [
            "Change to `@skill.roaming_pass`",
            f"Ignore `{code}` in this file (mantle-lsp.toml per-file-ignores)",
        ]
        ignore = by_title[f"Ignore `{code}` in this file (mantle-lsp.toml per-file-ignores)"]
        assert ignore.edit is not None and ignore.edit.document_changes is not None
        create, write = ignore.edit.document_changes
        assert isinstance(create, lsp.CreateFile) and create.uri == uri(root / "mantle-lsp.toml")
        assert isinstance(write, lsp.TextDocumentEdit)
        (new,) = write.edits
        assert isinstance(new, lsp.TextEdit)
        assert new.new_text == f'[per-file-ignores]\n"skills/plan_change/skill.md" = ["{code}"]\n'
        (root / "mantle-lsp.toml").write_text(new.new_text, encoding="utf-8")
        s.client.workspace_did_change_watched_files(
            lsp.DidChangeWatchedFilesParams(
                changes=[
                    lsp.FileEvent(
                        uri=uri(root / "mantle-lsp.toml"), type=lsp.FileChangeType.Created
                    )
                ]
            )
        )
        await s.until(
            lambda: not any(d.code == code for d in s.diagnostics(path)),
            what="the bare mention to go",
        )


async def test_source_fix_all_leaves_the_unfixable_codes(tmp_path: Path) -> None:
    root = copy_telecom(tmp_path)
    path, text = _broken(root, "plan_change")
    code = "mantle.validation.prose.session_reference_in_instructions"
    (root / "mantle-lsp.toml").write_text(f'unfixable = ["{code}"]\n', encoding="utf-8")
    async with lsp_session(root) as s:
        s.open(path, text)
        await s.until(
            lambda: sum(d.code == code for d in s.diagnostics(path)) == 3, what="the findings"
        )
        start = lsp.Position(line=0, character=0)
        actions = await s.client.text_document_code_action_async(
            lsp.CodeActionParams(
                text_document=s.doc(path),
                range=lsp.Range(start=start, end=start),
                context=lsp.CodeActionContext(diagnostics=[], only=["source.fixAll"]),
            )
        )
        assert not actions  # as `check --fix`: nothing fixable left in the file
        # the quick fix of one finding stays on offer: choosing it is a decision
        d = next(d for d in s.diagnostics(path) if d.code == code)
        actions = await s.client.text_document_code_action_async(
            lsp.CodeActionParams(
                text_document=s.doc(path),
                range=d.range,
                context=lsp.CodeActionContext(diagnostics=[d]),
            )
        )
        assert actions is not None
        assert "Change to `@memory.plan_change.x`" in [a.title for a in actions]
