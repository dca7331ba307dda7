"""End to end: the editor on the evaluation's scenarios, through the real server on a copy
of examples/telecom (docs/features/eval.md)."""

from __future__ import annotations

from pathlib import Path

import pytest
from lsprotocol import types as lsp

from test_lsp_support import Session, copy_telecom, lsp_session, position_of, uri

pytestmark = [pytest.mark.asyncio, pytest.mark.timeout(60)]

WEEK_PASS = Path("eval") / "scenarios" / "happy_path" / "roaming_week_pass.yml"


def text_of(path: Path) -> str:
    return path.read_text(encoding="utf-8")


async def lenses(s: Session, path: Path) -> list[lsp.CodeLens]:
    found = await s.client.text_document_code_lens_async(
        lsp.CodeLensParams(text_document=lsp.TextDocumentIdentifier(uri=uri(path)))
    )
    return list(found or [])


async def test_completion_hover_and_references_in_a_scenario(tmp_path: Path) -> None:
    root = copy_telecom(tmp_path)
    scenario = root / WEEK_PASS
    text = text_of(scenario)
    async with lsp_session(root) as s:
        s.open(scenario)
        # a tool name inside `tool_executed`, replacing what is typed
        pos = position_of(text, "{tool_name: quote_roaming_pass", delta=len("{tool_name: quo"))
        got = await s.client.text_document_completion_async(
            lsp.CompletionParams(text_document=s.doc(scenario), position=pos)
        )
        assert isinstance(got, lsp.CompletionList)
        by_sort = sorted(got.items, key=lambda i: i.sort_text or i.label)
        labels = [i.label for i in by_sort]
        assert {"quote_roaming_pass", "add_roaming_pass", "open_dispute"} <= set(labels[:10])
        assert "set_fields" in labels[10:]  # the framework's tools after the project's
        item = by_sort[labels.index("quote_roaming_pass")]
        defaults = got.item_defaults
        rng = item.text_edit.range if isinstance(item.text_edit, lsp.TextEdit) else None
        rng = rng or (defaults.edit_range if defaults is not None else None)
        assert isinstance(rng, lsp.Range)
        assert (rng.start.character, rng.end.character) == (pos.character - 3, pos.character)
        # the assertion keys: a snippet of several lines is inserted as it is (VS Code
        # would indent it again)
        end = position_of(text, "      - bot_uttered", delta=8)
        keys = await s.client.text_document_completion_async(
            lsp.CompletionParams(text_document=s.doc(scenario), position=end)
        )
        assert isinstance(keys, lsp.CompletionList)
        memory = next(i for i in keys.items if i.label == "memory_was_set")
        assert memory.insert_text_format == lsp.InsertTextFormat.PlainText  # text follows
        # hover on a block id
        h = await s.client.text_document_hover_async(
            lsp.HoverParams(
                text_document=s.doc(scenario),
                position=position_of(text, "block_id: main", delta=11),
            )
        )
        assert h is not None and isinstance(h.contents, lsp.MarkupContent)
        assert h.contents.value.startswith("**ordered block `main`** of skill `roaming_pass`")
        # find references from the tool's definition reaches the three scenario names
        tools = root / "skills" / "roaming_pass" / "tools.py"
        refs = await s.client.text_document_references_async(
            lsp.ReferenceParams(
                text_document=lsp.TextDocumentIdentifier(uri=uri(tools)),
                position=position_of(text_of(tools), "def add_roaming_pass", delta=5),
                context=lsp.ReferenceContext(include_declaration=False),
            )
        )
        assert refs is not None
        assert sum(r.uri == uri(scenario) for r in refs) == 3


async def test_a_multi_line_snippet_is_inserted_as_it_is(tmp_path: Path) -> None:
    root = copy_telecom(tmp_path)
    scenario = root / "eval" / "scenarios" / "new.yml"
    text = "scenario:\n  name: x\n  simulation_context: y\n  goals:\n    assertions:\n      - "
    scenario.write_text(text, encoding="utf-8")
    async with lsp_session(root) as s:
        s.open(scenario)
        got = await s.client.text_document_completion_async(
            lsp.CompletionParams(
                text_document=s.doc(scenario), position=lsp.Position(line=5, character=8)
            )
        )
        assert isinstance(got, lsp.CompletionList)
        memory = next(i for i in got.items if i.label == "memory_was_set")
        assert memory.insert_text_format == lsp.InsertTextFormat.Snippet
        assert memory.insert_text_mode == lsp.InsertTextMode.AsIs
        skill = next(i for i in got.items if i.label == "skill_activated")
        assert skill.insert_text_mode is None  # one line: nothing to indent
        assert skill.command is not None  # the skill ids are suggested next


async def test_skill_lens_and_coverage_hints(tmp_path: Path) -> None:
    root = copy_telecom(tmp_path)
    skill = root / "skills" / "roaming_pass" / "skill.md"
    memory = root / "skills" / "roaming_pass" / "memory.yml"
    async with lsp_session(root) as s:
        s.open(skill)
        found = await lenses(s, skill)
        counted = [lens for lens in found if lens.command and "scenario" in lens.command.title]
        (lens,) = [x for x in counted if x.command and x.command.title == "2 scenarios"]
        assert lens.command is not None
        assert lens.command.command == "editor.action.showReferences"
        places = lens.command.arguments[2]  # type: ignore[index]
        assert {p["uri"].rsplit("/", 1)[-1] for p in places} == {
            "roaming_declined.yml",
            "roaming_week_pass.yml",
        }
        assert not any(
            x.command and x.command.title == "no scenario asserts this"
            for x in await lenses(s, memory)
        )  # off by default
    config = {"mantle": {"eval": {"coverageHints": True}}}
    async with lsp_session(root, configuration=config) as s:
        s.open(memory)
        hinted = [
            x for x in await lenses(s, memory)
            if x.command and x.command.title == "no scenario asserts this"
        ]  # fmt: skip
        mtext = text_of(memory)
        starts = sorted(
            mtext.splitlines()[x.range.start.line][x.range.start.character : x.range.end.character]
            for x in hinted
        )
        assert starts == ["pass_name", "zone"]
