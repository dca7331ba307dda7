"""Rename and find references through the server (issue 17): prose mentions arrive as
annotated edits the user confirms (`needsConfirmation`), what a rename cannot follow is a
warning message and a labelled no-op edit, a client without change annotations never gets
the mentions, `mantle/references` says what each place is, and Shift+F12 on `@skill.x`
or a skill's `name:` value lists its references."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types as lsp

from support import write_fixture
from test_lsp_support import lsp_session, position_of, uri, vscode_capabilities

pytestmark = [pytest.mark.asyncio, pytest.mark.timeout(60)]

FIXTURE = """\
//- skills/card/memory.yml
schema:
  private:
    icon_query:
      type: text
//- skills/card/tools.py
from rasa.mantle.tools.decorator import ToolContext, tool


@tool(description="Store a query.")
async def store(what: str, context: ToolContext = None):
    context.memory.set("icon_query", what)
    context.memory.set(f"icon_{what}", True)
//- skills/card/skill.md
---
name: Card replacement
description: Replace a card.
---
Search with `icon_query`, then show @memory.card.icon_query and use @tool.store.
//- skills/other/skill.md
---
description: Other things.
---
Hand over to @skill.card.
"""


def _edits(edit: lsp.WorkspaceEdit | None) -> dict[str, list[Any]]:
    assert edit is not None and edit.document_changes is not None
    out: dict[str, list[Any]] = {}
    for change in edit.document_changes:
        assert isinstance(change, lsp.TextDocumentEdit)
        out.setdefault(change.text_document.uri, []).extend(change.edits)
    return out


async def test_rename_groups_mentions_and_tells_what_it_did_not_rename(tmp_path: Path) -> None:
    fx = write_fixture(tmp_path, FIXTURE)
    md = fx.root / "skills/card/skill.md"
    text = md.read_text(encoding="utf-8")
    async with lsp_session(fx.root) as s:
        edit = await s.client.text_document_rename_async(
            lsp.RenameParams(
                text_document=s.doc(md),
                position=position_of(text, "card.icon_query", len("card.i")),
                new_name="icon_search",
            )
        )
        assert edit is not None and edit.change_annotations is not None
        notes = edit.change_annotations
        by_uri = _edits(edit)
        in_md = {
            (e.range.start.character, getattr(e, "annotation_id", None)) for e in by_uri[uri(md)]
        }
        mention = position_of(text, "icon_query`").character
        assert (mention, "mentions") in in_md
        assert notes["mentions"].needs_confirmation is True
        # the computed key in tools.py: a no-op edit in a "Not renamed" group, and a warning
        tools = fx.root / "skills/card/tools.py"
        ttext = tools.read_text(encoding="utf-8")
        [noop] = [e for e in by_uri[uri(tools)] if isinstance(e, lsp.AnnotatedTextEdit)]
        assert noop.new_text == 'f"icon_{what}"'
        assert noop.range.start == position_of(ttext, 'f"icon_{what}"')
        label = notes[noop.annotation_id]
        assert label.label == "Not renamed: a memory key computed at run time"
        assert label.needs_confirmation is True
        await s.until(lambda: s.client.messages, what="the warning")
        [shown] = s.client.messages
        assert shown.type == lsp.MessageType.Warning
        assert shown.message == (
            "not renamed: skills/card/tools.py:7 (a memory key computed at run time)"
        )


async def test_a_client_without_change_annotations_never_gets_the_mentions(
    tmp_path: Path,
) -> None:
    fx = write_fixture(tmp_path, FIXTURE)
    md = fx.root / "skills/card/skill.md"
    text = md.read_text(encoding="utf-8")
    caps = vscode_capabilities()
    caps.workspace.workspace_edit.change_annotation_support = None  # type: ignore[union-attr]
    async with lsp_session(fx.root, capabilities=caps) as s:
        edit = await s.client.text_document_rename_async(
            lsp.RenameParams(
                text_document=s.doc(md),
                position=position_of(text, "card.icon_query", len("card.i")),
                new_name="icon_search",
            )
        )
        assert edit is not None and not edit.change_annotations
        by_uri = _edits(edit)
        starts = {e.range.start.character for e in by_uri[uri(md)]}
        assert starts == {position_of(text, "icon_query and").character}
        assert all(
            isinstance(e, lsp.TextEdit) and e.new_text == "icon_search"
            for es in by_uri.values()
            for e in es
        )


async def test_references_with_kinds_and_from_a_skill(tmp_path: Path) -> None:
    fx = write_fixture(tmp_path, FIXTURE)
    md = fx.root / "skills/card/skill.md"
    text = md.read_text(encoding="utf-8")
    other = fx.root / "skills/other/skill.md"
    otext = other.read_text(encoding="utf-8")
    async with lsp_session(fx.root) as s:
        pos = position_of(text, "card.icon_query", len("card.i"))
        params = {
            "textDocument": {"uri": uri(md)},
            "position": {"line": pos.line, "character": pos.character},
            "context": {"includeDeclaration": False},
        }
        got = await s.client.protocol.send_request_async("mantle/references", params)
        kinds = [(Path(str(_get(r, "uri"))[len("file://") :]).name, _get(r, "kind")) for r in got]
        assert kinds == [("skill.md", "read"), ("tools.py", "write"), ("skill.md", "mention")]
        # Shift+F12 on @skill.card, and on the skill's name: value
        for path, at in (
            (other, position_of(otext, "@skill.card", len("@skill.c"))),
            (md, position_of(text, "Card replacement", 3)),
        ):
            refs = await s.client.text_document_references_async(
                lsp.ReferenceParams(
                    text_document=s.doc(path),
                    position=at,
                    context=lsp.ReferenceContext(include_declaration=False),
                )
            )
            assert list(refs or []) == [
                lsp.Location(
                    uri=uri(md),  # the namespace of @memory.card.icon_query
                    range=lsp.Range(
                        start=position_of(text, "card.icon"),
                        end=position_of(text, "card.icon", len("card")),
                    ),
                ),
                lsp.Location(
                    uri=uri(other),
                    range=lsp.Range(
                        start=position_of(otext, "card."),
                        end=position_of(otext, "card.", len("card")),
                    ),
                ),
            ]


def _get(obj: Any, name: str) -> Any:
    return obj[name] if isinstance(obj, dict) else getattr(obj, name)
