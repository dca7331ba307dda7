"""Call hierarchy: skills starting skills, skills running tools, tools starting skills."""

from __future__ import annotations

from pathlib import Path

import pytest
from lsprotocol import types as lsp

from mantle_lsp.ide.call_hierarchy import Call, incoming, outgoing, prepare
from mantle_lsp.model.project import Project
from support import Fixture, write_fixture
from test_lsp_support import copy_telecom, lsp_session, position_of, uri

FIXTURE = """\
//- skills/card/skill.md
---
description: Replace a card.
---
Look the card up with @tool.«card_run:lookup», then hand over to @skill.«card_start:support».

:::ordered_block id=main
steps:
  - id: check
    execute_tool: «card_run:lookup»
  - id: verify
    call: «card_start:verify»
  - id: local
    call: own_block
  - id: done
    link: «card_start:verify__strict»
:::

:::ordered_block id=own_block
steps:
  - id: noop
    action: noop
:::
//- skills/card/tools.py
from rasa.mantle.tools.decorator import ToolContext, tool
from rasa.mantle.tools.result import ActivateSkill, ToolResult


@tool(description="Look the card up.")
async def lookup(context: ToolContext = None):
    return ToolResult(next=[ActivateSkill(skill_id="«lookup_start:support»")])
//- skills/verify/skill.md
---
description: Verify the customer.
---
Verify.

:::ordered_block id=strict
steps:
  - id: noop
    action: noop
:::
//- skills/support/skill.md
---
description: Human support.
---
Help$0.
"""


def _load(tmp_path: Path) -> tuple[Fixture, Project]:
    fx = write_fixture(tmp_path, FIXTURE)
    return fx, Project.load(fx.root)


def _show(fx: Fixture, calls: list[Call], caller_side: str) -> dict[str, list[str]]:
    """Each other end by name, with the text at each call range (in the caller's file)."""
    out = {}
    for c in calls:
        rel = caller_side if caller_side else c.item.path.relative_to(fx.root).as_posix()
        text = fx.files[rel]
        out[c.item.name] = [text[r.start : r.end] for r in c.ranges]
    return out


def test_outgoing_calls_of_a_skill_are_its_skills_and_tools(tmp_path: Path) -> None:
    fx, proj = _load(tmp_path)
    [card] = prepare(proj, fx.root / "skills/card/skill.md", 0)
    assert (card.kind, card.name, card.detail) == ("skill", "card", "Replace a card.")
    got = _show(fx, outgoing(proj, card.key), "skills/card/skill.md")
    # a call to the skill's own block is no call of another skill; `verify__strict` is
    # a block of `verify`
    assert got == {
        "lookup": ["lookup", "lookup"],
        "support": ["support"],
        "verify": ["verify", "verify__strict"],
    }
    ranges = sorted((r.start, r.end) for c in outgoing(proj, card.key) for r in c.ranges)
    marked = sorted((m.start, m.end) for m in fx.marks if m.label in ("card_run", "card_start"))
    assert ranges == marked


def test_incoming_calls_of_a_skill_come_from_skills_and_tools(tmp_path: Path) -> None:
    fx, proj = _load(tmp_path)
    assert fx.cursor is not None
    [support] = prepare(proj, fx.root / fx.cursor[0], fx.cursor[1])
    calls = incoming(proj, support.key)
    assert [(c.item.kind, c.item.name) for c in calls] == [("skill", "card"), ("tool", "lookup")]
    assert _show(fx, calls, "") == {"card": ["support"], "lookup": ["support"]}


def test_prepare_on_a_tool_reference_or_definition_gives_the_tool(tmp_path: Path) -> None:
    fx, proj = _load(tmp_path)
    md = fx.files["skills/card/skill.md"]
    [tool] = prepare(proj, fx.root / "skills/card/skill.md", md.index("lookup") + 2)
    assert (tool.kind, tool.name, tool.detail) == ("tool", "lookup", "tool of skill card")
    code = fx.files["skills/card/tools.py"]
    [same] = prepare(proj, fx.root / "skills/card/tools.py", code.index("return ToolResult"))
    assert same == tool
    assert _show(fx, incoming(proj, tool.key), "") == {"card": ["lookup", "lookup"]}
    assert _show(fx, outgoing(proj, tool.key), "skills/card/tools.py") == {"support": ["support"]}
    [(start, end)] = [(r.start, r.end) for c in outgoing(proj, tool.key) for r in c.ranges]
    assert [(m.start, m.end) for m in fx.marks if m.label == "lookup_start"] == [(start, end)]


def test_nothing_to_prepare_outside_skills_and_tools(tmp_path: Path) -> None:
    fx, proj = _load(tmp_path)
    assert prepare(proj, fx.root / "agent.yml", 0) == []


@pytest.mark.asyncio
@pytest.mark.timeout(30)
async def test_call_hierarchy_over_lsp(tmp_path: Path) -> None:
    """An editor prepares the item under the cursor, then asks who calls it and what it
    calls; the ranges are in the caller's file."""
    root = copy_telecom(tmp_path)
    async with lsp_session(root) as s:
        roaming = root / "skills" / "roaming_pass" / "skill.md"
        text = roaming.read_text(encoding="utf-8")
        assert s.init is not None and s.init.capabilities.call_hierarchy_provider
        items = await s.client.text_document_prepare_call_hierarchy_async(
            lsp.CallHierarchyPrepareParams(
                text_document=s.doc(roaming), position=position_of(text, "call: verify", 6)
            )
        )
        assert items is not None and [(i.name, i.kind) for i in items] == [
            ("verify_customer", lsp.SymbolKind.Module)
        ]
        verify = items[0]
        assert verify.uri == uri(root / "skills" / "verify_customer" / "skill.md")
        callers = await s.client.call_hierarchy_incoming_calls_async(
            lsp.CallHierarchyIncomingCallsParams(item=verify)
        )
        assert callers is not None
        [(caller, ranges)] = [(c.from_, c.from_ranges) for c in callers]
        assert caller.name == "roaming_pass" and caller.uri == uri(roaming)
        assert list(ranges) == [span(text, "verify_customer")]
        [own] = await s.client.text_document_prepare_call_hierarchy_async(
            lsp.CallHierarchyPrepareParams(
                text_document=s.doc(roaming), position=lsp.Position(line=0, character=0)
            )
        ) or [None]
        assert own is not None and own.name == "roaming_pass"
        calls = await s.client.call_hierarchy_outgoing_calls_async(
            lsp.CallHierarchyOutgoingCallsParams(item=own)
        )
        assert calls is not None
        got = {c.to.name: list(c.from_ranges) for c in calls}
        assert got == {
            "add_roaming_pass": [span(text, "add_roaming_pass", nth=1)],  # not the gate
            "quote_roaming_pass": [span(text, "quote_roaming_pass")],
            "verify_customer": [span(text, "verify_customer")],
        }


def span(text: str, needle: str, nth: int = 0) -> lsp.Range:
    at = position_of(text, needle, nth=nth)
    return lsp.Range(start=at, end=lsp.Position(line=at.line, character=at.character + len(needle)))
