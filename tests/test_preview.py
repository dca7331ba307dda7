"""The prompt preview (ide/preview.py, `mantle-lsp preview`): the instruction text exactly as
the engine puts it in the system prompt for a memory state (docs/features/preview.md)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mantle_lsp.cli.main import main
from mantle_lsp.ide.preview import Preview, preview_skill, render_value
from mantle_lsp.model.project import Project
from support import write_fixture

CARD = """\
//- memory.yml
tier:
  type: categorical
  enum_values: [gold, basic]
card_number:
  type: text
  pii: true
//- skills/card/memory.yml
schema:
  public:
    reason:
      type: categorical
      enum_values: [lost, stolen]
    amount:
      type: float
  private:
    notes:
      type: any
//- skills/other/memory.yml
schema:
  public:
    shown:
      type: text
  private:
    hidden:
      type: text
//- skills/other/skill.md
---
description: Another skill.
---
Help with other things.
//- skills/card/skill.md
---
description: Replace a card.
---
Replace the customer's card.
Their reason: @memory.card.reason.

if: session.card.reason == 'stolen'
Lock the card first with @tool.lock_card.

if: session.card.amount > 100
Ask for a second confirmation.

if: session.project.tier == 'gold' or session.other.shown
Gold customers get express delivery (@memory.other.shown, @memory.other.hidden).

Card on file: @memory.project.card_number; notes: @memory.card.notes.
Then continue with @block.ship or hand over to @skill.other.

:::ordered_block id=ship
steps:
  - id: confirm
    instructions: Confirm the address.
:::

   if: session.card.reason == 'lost'
   Ask where it was lost.
"""


def _preview(tmp_path: Path, state: dict[str, dict[str, object]]) -> Preview:
    fx = write_fixture(tmp_path, CARD)
    pv = preview_skill(Project.load(fx.root), "card", state)
    assert pv is not None
    return pv


def test_all_none_keeps_plain_paragraphs_and_leaves_tokens(tmp_path: Path) -> None:
    pv = _preview(tmp_path, {})
    assert pv.text == (
        "Replace the customer's card.\n"
        "Their reason: @memory.card.reason.\n\n"
        "Card on file: @memory.project.card_number; notes: @memory.card.notes.\n"
        "Then continue with @block.ship or hand over to @skill.other."
    )
    dropped = [(p.condition, p.reason) for p in pv.dropped]
    assert dropped == [
        ("session.card.reason == 'stolen'", "false"),
        # None > 100 is a TypeError in Python: the engine leaves the paragraph out
        ("session.card.amount > 100", "error"),
        ("session.project.tier == 'gold' or session.other.shown", "false"),
        # prose after an ordered block is prose too (here indented: the engine strips it)
        ("session.card.reason == 'lost'", "false"),
    ]
    assert [(u.token, u.reason) for u in pv.unresolved] == [
        ("@memory.card.reason", "unset"),
        ("@memory.project.card_number", "unset"),
        ("@memory.card.notes", "unset"),
    ]


def test_values_substituted_pii_hidden_private_of_other_skill_unreadable(tmp_path: Path) -> None:
    state: dict[str, dict[str, object]] = {
        "card": {"reason": "stolen", "amount": 250.5, "notes": {"a": [1, True], "b": "é"}},
        "project": {"tier": "gold", "card_number": "4111"},
        "other": {"shown": "  two\n lines ", "hidden": "secret"},
    }
    pv = _preview(tmp_path, state)
    assert pv.text == (
        "Replace the customer's card.\n"
        "Their reason: stolen.\n\n"
        "Lock the card first with @tool.lock_card.\n\n"
        "Ask for a second confirmation.\n\n"
        "Gold customers get express delivery (two lines, @memory.other.hidden).\n\n"
        'Card on file: [set]; notes: {"a": [1, true], "b": "\\u00e9"}.\n'
        "Then continue with @block.ship or hand over to @skill.other."
    )
    assert pv.ignored == ["other.hidden"]
    assert ("@memory.other.hidden", "denied") in [(u.token, u.reason) for u in pv.unresolved]


def test_comparisons_follow_python(tmp_path: Path) -> None:
    # a string compared with a number: `==` is False, `>` is an error; both drop
    pv = _preview(tmp_path, {"card": {"amount": "300"}})
    assert [p.reason for p in pv.dropped] == ["false", "error", "false", "false"]
    pv = _preview(tmp_path, {"card": {"amount": 100}})
    assert "Ask for a second confirmation." not in pv.text
    pv = _preview(tmp_path, {"card": {"amount": True}, "other": {"shown": "x"}})
    assert "Gold customers" in pv.text
    pv = _preview(tmp_path, {"card": {"reason": "lost"}})
    assert pv.text.endswith("@skill.other.\n\nAsk where it was lost.")


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (True, "True"),
        (3, "3"),
        (2.50, "2.5"),
        ([1, "a", None], '[1, "a", null]'),
        ({"k": False}, '{"k": false}'),
        ("a\n\tb  c", "a b c"),
        ("x" * 120, "x" * 100 + "... [truncated]"),
    ],
)
def test_render_value(value: object, text: str) -> None:
    assert render_value(value) == text


def test_cli_text_and_json(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    fx = write_fixture(tmp_path / "p", CARD)
    state = tmp_path / "state.yml"
    state.write_text("card: {reason: stolen}\nproject:\n  tier: basic\n", encoding="utf-8")
    skill = str(fx.root / "skills" / "card" / "skill.md")
    assert main(["preview", skill, "--memory", str(state)]) == 0
    out = capsys.readouterr().out
    assert out == (
        "Replace the customer's card.\n"
        "Their reason: stolen.\n\n"
        "Lock the card first with @tool.lock_card.\n\n"
        "Card on file: @memory.project.card_number; notes: @memory.card.notes.\n"
        "Then continue with @block.ship or hand over to @skill.other.\n"
    )
    assert main(["preview", skill, "--memory", str(state), "--format", "json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["tokens"] == -(-len(data["text"]) // 4)
    assert [(d["line"], d["condition"], d["reason"]) for d in data["dropped"]] == [
        (10, "session.card.amount > 100", "error"),
        (13, "session.project.tier == 'gold' or session.other.shown", "false"),
        (25, "session.card.reason == 'lost'", "false"),
    ]


def test_cli_bad_state(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    fx = write_fixture(tmp_path / "p", CARD)
    state = tmp_path / "state.yml"
    state.write_text("- a list\n", encoding="utf-8")
    skill = str(fx.root / "skills" / "card")
    assert main(["preview", skill, "--memory", str(state)]) == 2
    assert "expected a mapping" in capsys.readouterr().err


def test_cli_a_state_file_that_cannot_be_read_is_said_plainly(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    fx = write_fixture(tmp_path / "p", CARD)
    monkeypatch.chdir(tmp_path)
    skill = str(fx.root / "skills" / "card")
    (tmp_path / "latin1.yml").write_bytes(b"card: {reason: caf\xe9}\n")
    for state, why in [
        ("missing.yml", "missing.yml: no such file or directory"),
        ("p", "p: a folder, not a state file"),
        ("latin1.yml", "latin1.yml: not UTF-8 text"),
    ]:
        assert main(["preview", skill, "--memory", state]) == 2
        out = capsys.readouterr()
        assert (out.out, out.err) == ("", f"mantle-lsp: error: {why}\n")
    assert main(["preview", "p/skills/nope/skill.md"]) == 2
    assert capsys.readouterr().err == (
        "mantle-lsp: error: p/skills/nope/skill.md: no such file or directory\n"
    )
