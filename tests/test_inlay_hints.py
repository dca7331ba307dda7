"""Inlay hints: what a collect: / set_memory field takes, and only that."""

from __future__ import annotations

from pathlib import Path

import pytest
from lsprotocol import types as lsp

from mantle_lsp.ide.inlay_hints import inlay_hints
from mantle_lsp.model.project import Project
from mantle_lsp.syntax.text import TextRange
from support import write_fixture
from test_lsp_support import copy_telecom, lsp_session, position_of

FIXTURE = """\
//- memory.yml
customer_id:
  type: text
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
    assert _rendered(tmp_path) == [
        "    collect: reason⟨lost | stolen | damaged | expired | fraud | other | …⟩",
        "      urgent⟨bool⟩: true",
        "      customer_id⟨project · text⟩: guest",
    ]


def test_hints_only_in_the_asked_range_and_only_in_skill_md(tmp_path: Path) -> None:
    text = FIXTURE.split("//- skills/card/skill.md\n", 1)[1]
    start = text.index("set_memory")
    assert _rendered(tmp_path, TextRange(start, len(text))) == [
        "      urgent⟨bool⟩: true",
        "      customer_id⟨project · text⟩: guest",
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
