"""Inlay hints: what a collect: / set_memory field takes, short, and only that."""

from __future__ import annotations

from pathlib import Path

import pytest
from lsprotocol import types as lsp

from mantle_lsp.ide.hover import hover
from mantle_lsp.ide.inlay_hints import inlay_hints
from mantle_lsp.model.project import Project
from mantle_lsp.syntax.text import TextRange
from support import write_fixture
from test_lsp_support import copy_telecom, lsp_session, position_of

FIXTURE = """\
//- memory.yml
customer_id:
  type: text
work_country:
  type: categorical
  enum_values: [germany, uk, serbia, france, spain]
//- skills/card/memory.yml
schema:
  public:
    reason:
      type: categorical
      enum_values: [lost, stolen, damaged, expired, fraud, other, unknown]
      description: Why.
    urgent:
      type: bool
//- skills/card/skill.md
---
description: Card.
---
Help.

:::ordered_block id=main
steps:
  - id: ask
    collect: reason
    description: Why the card is replaced.
  - id: mark
    set_memory:
      urgent: true
      customer_id: guest
      work_country: germany  # moved
      reason: {lost: 1}
      nothing_declared: 1
    next: END
:::
"""


def _rendered(tmp_path: Path, rng: TextRange | None = None) -> list[str]:
    fx = write_fixture(tmp_path, FIXTURE)
    proj = Project.load(fx.root)
    path = fx.root / "skills/card/skill.md"
    text = fx.files["skills/card/skill.md"]
    out = []
    for h in inlay_hints(proj, path, rng):
        line_start = text.rfind("\n", 0, h.offset) + 1
        line_end = text.find("\n", h.offset)
        out.append(f"{text[line_start : h.offset]}⟨{h.label}⟩{text[h.offset : line_end]}")
    return out


def test_hints_show_what_the_field_takes(tmp_path: Path) -> None:
    # a long list of values is counted, not listed; a set_memory hint follows the value
    # (a trailing comment stays after it) and names the type only
    assert _rendered(tmp_path) == [
        "    collect: reason⟨categorical · 7 values⟩",
        "      urgent: true⟨bool⟩",
        "      customer_id: guest⟨project · text⟩",
        "      work_country: germany⟨project · categorical⟩  # moved",
        "      reason: {lost: 1}⟨categorical⟩",
    ]


def test_the_values_are_in_the_tooltip_and_in_the_hover_of_the_key(tmp_path: Path) -> None:
    fx = write_fixture(tmp_path, FIXTURE)
    proj = Project.load(fx.root)
    path = fx.root / "skills/card/skill.md"
    tips = {h.label: h.tooltip for h in inlay_hints(proj, path)}
    values = "germany, uk, serbia, france, spain"
    assert tips["project · categorical"] == f"writes `project.work_country` (categorical: {values})"
    text = fx.files["skills/card/skill.md"]
    card = hover(proj, path, text.index("work_country:") + 3)
    assert card is not None
    assert "values `germany`, `uk`, `serbia`, `france`, `spain`" in card.markdown


def test_a_few_short_values_are_listed_after_collect(tmp_path: Path) -> None:
    short = FIXTURE.replace(
        "[lost, stolen, damaged, expired, fraud, other, unknown]", "[lost, stolen, other]"
    )
    fx = write_fixture(tmp_path, short)
    proj = Project.load(fx.root)
    (first, *_) = inlay_hints(proj, fx.root / "skills/card/skill.md")
    assert first.label == "lost | stolen | other"


def test_hints_only_in_the_asked_range_and_only_in_skill_md(tmp_path: Path) -> None:
    text = FIXTURE.split("//- skills/card/skill.md\n", 1)[1]
    start = text.index("set_memory")
    assert _rendered(tmp_path, TextRange(start, len(text))) == [
        "      urgent: true⟨bool⟩",
        "      customer_id: guest⟨project · text⟩",
        "      work_country: germany⟨project · categorical⟩  # moved",
        "      reason: {lost: 1}⟨categorical⟩",
    ]
    proj = Project.load(tmp_path)
    assert inlay_hints(proj, tmp_path / "skills/card/memory.yml") == []


@pytest.mark.asyncio
@pytest.mark.timeout(30)
async def test_inlay_hints_over_lsp(tmp_path: Path) -> None:
    root = copy_telecom(tmp_path)
    async with lsp_session(root) as s:
        assert s.init is not None and s.init.capabilities.inlay_hint_provider
        path = root / "skills" / "roaming_pass" / "skill.md"
        text = path.read_text(encoding="utf-8")
        end = lsp.Position(line=len(text.split("\n")), character=0)
        hints = await s.client.text_document_inlay_hint_async(
            lsp.InlayHintParams(
                text_document=s.doc(path),
                range=lsp.Range(start=lsp.Position(line=0, character=0), end=end),
            )
        )
        assert hints is not None
        got = {(h.position.line, h.position.character): h.label for h in hints}
        at = position_of(text, "collect: pass_length", delta=len("collect: pass_length"))
        assert got[(at.line, at.character)] == "day | week | month"
        assert all(h.kind == lsp.InlayHintKind.Type and h.padding_left for h in hints)
