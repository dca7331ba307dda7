"""The prompt preview (ide/preview.py, `mantle-lsp preview`): the instruction text exactly as
the engine puts it in the system prompt for a memory state (docs/features/preview.md)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mantle_lsp.cli.main import main
from mantle_lsp.ide.preview import Preview, StepNotFound, preview_skill, render_value
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
    # the size: characters, and an estimate of the tokens labelled as one (no tokenizer)
    assert data["characters"] == len(data["text"]) == 225
    assert (data["estimated_tokens"], data["estimate_rule"]) == (57, "ceil(characters / 4)")
    assert data["step"] is None
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


# -- ordered-block steps ----------------------------------------------------------------------

STEPS = """\
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
  private:
    notes:
      type: any
//- skills/card/skill.md
---
description: Replace a card.
---
Replace the customer's card, starting with @block.pick.

:::ordered_block id=pick
steps:
  - id: start
    noop: true
  - id: choose
    instructions: |
      Show the cards and ask which one (reason: @memory.card.reason).

      if: session.card.reason == 'stolen'
      Lock it first.
    complete_when: session.card.notes
  - id: confirm
    instructions: >
      Confirm the card
      @memory.project.card_number
      with the customer; notes: @memory.card.notes.
  - id: confirm
    instructions: A second confirm, which the engine never finds.
:::

:::ordered_block id=ship
steps:
  - id: confirm
    instructions: "Confirm the address for @memory.project.tier customers.\\n"
  - id: done
    instructions: |+
      Say goodbye.

:::
"""


def _steps_project(tmp_path: Path) -> Project:
    return Project.load(write_fixture(tmp_path, STEPS).root)


def test_a_step_previews_its_instructions_as_yaml_reads_them(tmp_path: Path) -> None:
    proj = _steps_project(tmp_path)
    pv = preview_skill(proj, "card", {"card": {"reason": "stolen"}}, step="choose")
    assert pv is not None and pv.step is not None
    assert (pv.step.block, pv.step.id, pv.step.kind, pv.step.line) == (
        "pick",
        "choose",
        "instructions",
        9,  # 0-based
    )
    # a literal block keeps its lines and its final newline; an `if:` line in a step's
    # instructions is text (prose scoping does not apply), and the prose is not shown
    assert pv.text == (
        "Show the cards and ask which one (reason: stolen).\n\n"
        "if: session.card.reason == 'stolen'\nLock it first.\n"
    )
    assert pv.paragraphs == []
    # folded; a pii field is withheld; another skill's state is ignored as for the prose
    state: dict[str, dict[str, object]] = {
        "project": {"card_number": "4111"},
        "card": {"notes": ["a", 1]},
        "other": {"x": 1},
    }
    pv = preview_skill(proj, "card", state, step="confirm", block="pick")
    assert pv is not None
    assert pv.text == 'Confirm the card [set] with the customer; notes: ["a", 1].\n'
    assert pv.ignored == ["other.x"]
    # the last step of a block: the engine strips the block body, `|+` keeps nothing more
    pv = preview_skill(proj, "card", {}, step="done")
    assert pv is not None and pv.text == "Say goodbye."
    pv = preview_skill(proj, "card", {}, step="confirm", block="ship")
    assert pv is not None
    assert pv.text == "Confirm the address for @memory.project.tier customers.\n"
    assert [(u.token, u.reason) for u in pv.unresolved] == [("@memory.project.tier", "unset")]


def test_a_step_without_instructions_shows_none(tmp_path: Path) -> None:
    pv = preview_skill(_steps_project(tmp_path), "card", {}, step="start")
    assert pv is not None and pv.step is not None
    assert (pv.text, pv.step.kind) == ("", "route")


def test_which_step(tmp_path: Path) -> None:
    proj = _steps_project(tmp_path)
    with pytest.raises(StepNotFound, match="step `confirm` is in blocks `pick` and `ship`"):
        preview_skill(proj, "card", {}, step="confirm")
    with pytest.raises(
        StepNotFound, match=r"no step `nope` \(steps: `start`, `choose`, `confirm`, `done`\)"
    ):
        preview_skill(proj, "card", {}, step="nope")
    with pytest.raises(StepNotFound, match=r"no block `main` \(blocks: `pick`, `ship`\)"):
        preview_skill(proj, "card", {}, step="done", block="main")
    with pytest.raises(StepNotFound, match="block `ship` of skill `card` has no step `choose`"):
        preview_skill(proj, "card", {}, step="choose", block="ship")
    # a cursor: in a step's YAML, that step (of a repeated id, the first, which the engine
    # runs); anywhere else, the prose
    sk = proj.skill("card")
    assert sk is not None and sk.doc is not None
    text = sk.doc.text
    pv = preview_skill(proj, "card", {}, offset=text.index("A second confirm"))
    assert pv is not None and pv.step is not None
    assert (pv.step.block, pv.step.line) == ("pick", 16)  # 0-based
    assert pv.text.startswith("Confirm the card @memory.project.card_number")
    pv = preview_skill(proj, "card", {}, offset=text.index("Replace the customer"))
    assert pv is not None and pv.step is None
    assert pv.text == "Replace the customer's card, starting with @block.pick."
    pv = preview_skill(proj, "card", {}, offset=text.index("steps:"))  # the block, no step
    assert pv is not None and pv.step is None


def test_cli_step(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    fx = write_fixture(tmp_path / "p", STEPS)
    state = tmp_path / "state.yml"
    state.write_text("card: {reason: lost}\n", encoding="utf-8")
    skill = str(fx.root / "skills" / "card")
    assert main(["preview", skill, "--memory", str(state), "--step", "choose"]) == 0
    out = capsys.readouterr()
    assert out.out == (
        "Show the cards and ask which one (reason: lost).\n\n"
        "if: session.card.reason == 'stolen'\nLock it first.\n\n"
    )
    assert main(["preview", skill, "--step", "confirm", "--block", "ship", "--format", "json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["step"] == {"block": "ship", "id": "confirm", "kind": "instructions", "line": 28}
    assert data["text"] == "Confirm the address for @memory.project.tier customers.\n"
    assert (data["characters"], data["estimated_tokens"]) == (56, 14)
    assert data["estimate_rule"] == "ceil(characters / 4)"
    # a step without instructions: nothing to print, and a note that says why
    assert main(["preview", skill, "--step", "start"]) == 0
    out = capsys.readouterr()
    assert out.out == ""
    assert "step `start` of block `pick` is a `route` step: it has no instructions" in out.err
    for args, why in [
        (["--step", "confirm"], "step `confirm` is in blocks `pick` and `ship` of skill `card`"),
        (["--step", "done", "--block", "main"], "skill `card` has no block `main`"),
        (["--block", "ship"], "--block needs --step"),
    ]:
        assert main(["preview", skill, *args]) == 2
        out = capsys.readouterr()
        assert out.out == "" and why in out.err


SCALARS = (
    """\
//- skills/card/memory.yml
schema:
  public:
    reason:
      type: text
//- skills/card/skill.md
---
description: Replace a card.
---
:::ordered_block id=main
steps:
  - id: plain
    instructions: Ask why
      they need a new card
      (@memory.card.reason).
  - id: single
    instructions: 'It''s   @memory.card.reason, isn''t it?'
  - id: double
    instructions: "Tab\\there, caf\\u00e9,\\
      joined; @memory.card.reason"
  - id: folded
    instructions: >-
      One
      two

        indented more
      three
  - id: literal_indent
    instructions: |2
         Four spaces kept.
        Two.
  - id: commented
    instructions: |  # a comment
      Kept."""
    + "   \n"  # trailing spaces: kept by a literal block
    + """\
    complete_when: session.card.reason
  - id: last
    instructions: |+
      The end.


:::
"""
)


@pytest.mark.parametrize(
    ("step", "text"),
    [  # as rasa-pro 3.21 renders them (make oracle compares every one)
        ("plain", "Ask why they need a new card (lost)."),
        ("single", "It's   lost, isn't it?"),
        ("double", "Tab\there, café,joined; lost"),
        ("folded", "One two\n\n  indented more\nthree"),
        ("literal_indent", "   Four spaces kept.\n  Two.\n"),
        ("commented", "Kept.   \n"),
        ("last", "The end."),
    ],
)
def test_step_instructions_in_every_yaml_scalar_form(tmp_path: Path, step: str, text: str) -> None:
    proj = Project.load(write_fixture(tmp_path, SCALARS).root)
    pv = preview_skill(proj, "card", {"card": {"reason": "lost"}}, step=step)
    assert pv is not None and pv.text == text
