"""Code actions: each quick fix applied to a fixture gives exactly the expected files, and
the diagnostic it fixes is gone afterwards."""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest

from mantle_lsp.cli.main import main as cli_main
from mantle_lsp.ide.code_actions import CodeAction, code_actions, yaml_scalar
from mantle_lsp.ide.diagnostics import Diagnostic, project_diagnostics
from mantle_lsp.ide.fixes import fix_all
from mantle_lsp.ide.suppression import apply_suppressions
from mantle_lsp.ide.types import WorkspaceEdit
from mantle_lsp.model.project import Project
from mantle_lsp.syntax.text import TextRange
from support import parse_fixture, write_fixture


def apply_edit(root: Path, edit: WorkspaceEdit) -> None:
    for path, edits in edit.edits.items():
        text = path.read_text(encoding="utf-8")
        ordered = sorted(edits, key=lambda e: (e.range.start, e.range.end))
        for a, b in itertools.pairwise(ordered):
            assert a.range.end <= b.range.start, f"overlapping edits in {path}"
        for e in reversed(ordered):
            text = text[: e.range.start] + e.new_text + text[e.range.end :]
        path.write_text(text, encoding="utf-8")
    for path, text in edit.new_files.items():
        assert not path.exists(), f"{path} already exists"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    for old, new in edit.renames:
        old.rename(new)


def actions_at(tmp_path: Path, fixture: str) -> tuple[Project, list[Diagnostic], list[CodeAction]]:
    fx = write_fixture(tmp_path, fixture)
    assert fx.cursor is not None, "the fixture needs a $0 cursor"
    rel, offset = fx.cursor
    path = tmp_path / rel
    proj = Project.load(tmp_path)
    diags = [d for d in project_diagnostics(proj).get(path, []) if d.range.contains(offset)]
    return proj, diags, code_actions(proj, path, TextRange(offset, offset), diags)


def titles_at(tmp_path: Path, fixture: str) -> list[str]:
    """The titles of the fixes at the cursor ("Ignore … here" is tested on its own)."""
    return [a.title for a in actions_at(tmp_path, fixture)[2] if not a.suppresses]


def _all_diagnostics(root: Path) -> set[tuple[str, str, str]]:
    """What the editor shows: the diagnostics once the inline suppressions apply."""
    proj = Project.load(root)
    found = apply_suppressions(proj, project_diagnostics(proj), proj.files)
    return {
        (p.relative_to(root).as_posix(), d.code, d.message)
        for p, ds in found.items()
        for d in ds
        if d.severity != "hint"  # e.g. a field nothing refers to any more
    }


def check_code_action(
    tmp_path: Path, fixture: str, title: str, after: str, fixed: bool = True
) -> CodeAction:
    """Apply the action called ``title`` at the cursor; every file of ``after`` (fixture
    syntax) must then read exactly as given. With ``fixed``, the diagnostics the action
    names must be gone."""
    _proj, diags, actions = actions_at(tmp_path, fixture)
    assert diags, "no diagnostic at the cursor"
    found = [a for a in actions if a.title == title]
    assert found, f"no action {title!r}; offered: {[a.title for a in actions]}"
    assert len(found) == 1, f"{title!r} offered {len(found)} times"
    action = found[0]
    before = _all_diagnostics(tmp_path)
    apply_edit(tmp_path, action.edit)
    expected, _, _ = parse_fixture(after)
    for rel, text in expected.items():
        got = (tmp_path / rel).read_text(encoding="utf-8")
        assert got == text, f"{rel}:\n--- got\n{got}--- expected\n{text}"
    if fixed:
        remaining = _all_diagnostics(tmp_path)
        for d in diags:
            if d.code in action.diagnostic_codes:
                rel = d.path.relative_to(tmp_path).as_posix()
                assert (rel, d.code, d.message) not in remaining, f"still reported: {d.message}"
        new = remaining - before
        assert not new, f"the fix introduced diagnostics: {sorted(new)}"
    return action


# ---------------------------------------------------------------------------------------
# Declaring fields

CARD_MEMORY = """\
//- skills/card/memory.yml
# Card replacement memory.
schema:
  public:
    reason:
      type: text   # why the card is replaced

  private:
    card_id:
      type: text
"""


def test_declare_private_field_of_current_skill(tmp_path: Path) -> None:
    action = check_code_action(
        tmp_path,
        CARD_MEMORY
        + """\
//- skills/card/skill.md
---
description: Replace a card.
---
if: session.card.blo$0cked == True
Tell the customer the card is blocked.
""",
        "Declare `blocked` in skills/card/memory.yml (private)",
        """\
//- skills/card/memory.yml
# Card replacement memory.
schema:
  public:
    reason:
      type: text   # why the card is replaced

  private:
    card_id:
      type: text
    blocked:
      type: bool
""",
    )
    assert action.kind == "quickfix"
    assert action.diagnostic_codes == ("mantle.validation.prose.unknown_memory_key",)
    assert not action.preferred


def test_declare_public_field_of_current_skill(tmp_path: Path) -> None:
    check_code_action(
        tmp_path,
        CARD_MEMORY
        + """\
//- skills/card/skill.md
---
description: Replace a card.
---
if: session.card.delivery$0 == "express" or session.card.delivery == "standard"
Offer the delivery.
""",
        "Declare `delivery` in skills/card/memory.yml (public)",
        """\
//- skills/card/memory.yml
# Card replacement memory.
schema:
  public:
    reason:
      type: text   # why the card is replaced
    delivery:
      type: categorical
      enum_values: [express, standard]

  private:
    card_id:
      type: text
""",
    )


def test_field_read_by_another_skill_is_declared_public_only(tmp_path: Path) -> None:
    fixture = (
        CARD_MEMORY
        + """\
//- skills/card/skill.md
---
description: Replace a card.
---
Help.
//- skills/billing/skill.md
---
description: Billing.
---
if: session.card.fee$0 > 2.5
Mention the fee.
"""
    )
    assert titles_at(tmp_path, fixture) == ["Declare `fee` in skills/card/memory.yml (public)"]


def test_declare_field_read_from_another_skill(tmp_path: Path) -> None:
    check_code_action(
        tmp_path,
        CARD_MEMORY
        + """\
//- skills/card/skill.md
---
description: Replace a card.
---
Help.
//- skills/billing/skill.md
---
description: Billing.
---
Use @memory.card.fee$0 and the limit.
""",
        "Declare `fee` in skills/card/memory.yml (public)",
        """\
//- skills/card/memory.yml
# Card replacement memory.
schema:
  public:
    reason:
      type: text   # why the card is replaced
    fee:
      type: text

  private:
    card_id:
      type: text
""",
    )


def test_declare_creates_missing_section(tmp_path: Path) -> None:
    check_code_action(
        tmp_path,
        """\
//- skills/card/memory.yml
schema:
    private:
        card_id:
            type: text
//- skills/card/skill.md
---
description: Replace a card.
---
if: session.card.lim$0it >= 3
Say the limit.
""",
        "Declare `limit` in skills/card/memory.yml (public)",
        """\
//- skills/card/memory.yml
schema:
    public:
        limit:
            type: int
    private:
        card_id:
            type: text
""",
    )


def test_declare_creates_schema_in_a_comment_only_file(tmp_path: Path) -> None:
    check_code_action(
        tmp_path,
        """\
//- skills/card/memory.yml
# nothing yet
//- skills/card/skill.md
---
description: Replace a card.
---
if: not session.card.urg$0ent
Take your time.
""",
        "Declare `urgent` in skills/card/memory.yml (private)",
        """\
//- skills/card/memory.yml
# nothing yet
schema:
  private:
    urgent:
      type: bool
""",
    )


def test_declare_creates_missing_memory_file(tmp_path: Path) -> None:
    action = check_code_action(
        tmp_path,
        """\
//- skills/card/skill.md
---
description: Replace a card.
---
if: session.card.status$0 == "active"
Go on.
""",
        "Declare `status` in skills/card/memory.yml (private)",
        """\
//- skills/card/memory.yml
schema:
  private:
    status:
      type: text
""",
    )
    assert action.edit.edits == {}
    assert list(action.edit.new_files) == [tmp_path / "skills/card/memory.yml"]


def test_declare_project_field(tmp_path: Path) -> None:
    check_code_action(
        tmp_path,
        """\
//- memory.yml
authenticated:
  type: bool
  seed: true
# trailing comment stays last
//- skills/card/skill.md
---
description: Replace a card.
---
if: session.project.tier$0 == "gold"
Thank them.
""",
        "Declare `tier` in memory.yml (project)",
        """\
//- memory.yml
authenticated:
  type: bool
  seed: true
tier:
  type: text
# trailing comment stays last
""",
    )


def test_declare_from_collect_adds_description(tmp_path: Path) -> None:
    check_code_action(
        tmp_path,
        CARD_MEMORY
        + """\
//- skills/card/skill.md
---
description: Replace a card.
---
:::ordered_block id=main
steps:
  - id: ask
    collect: addr$0ess
:::
""",
        "Declare `address` in skills/card/memory.yml (private)",
        """\
//- skills/card/memory.yml
# Card replacement memory.
schema:
  public:
    reason:
      type: text   # why the card is replaced

  private:
    card_id:
      type: text
    address:
      type: text
      description: TODO describe address
""",
    )


def test_declare_from_set_memory_uses_the_value(tmp_path: Path) -> None:
    check_code_action(
        tmp_path,
        CARD_MEMORY
        + """\
//- skills/card/skill.md
---
description: Replace a card.
---
:::ordered_block id=main
steps:
  - id: mark
    set_memory:
      attem$0pts: 3
:::
""",
        "Declare `attempts` in skills/card/memory.yml (private)",
        """\
//- skills/card/memory.yml
# Card replacement memory.
schema:
  public:
    reason:
      type: text   # why the card is replaced

  private:
    card_id:
      type: text
    attempts:
      type: int
""",
    )


def test_declare_from_tool_write(tmp_path: Path) -> None:
    check_code_action(
        tmp_path,
        CARD_MEMORY
        + """\
//- skills/card/skill.md
---
description: Replace a card.
---
Help.
//- skills/card/tools.py
from rasa.mantle.tools.decorator import ToolContext, tool


@tool(description="Block it.")
async def block(context: ToolContext):
    context.memory.set("blocked_at$0", "now")
""",
        "Declare `blocked_at` in skills/card/memory.yml (private)",
        """\
//- skills/card/memory.yml
# Card replacement memory.
schema:
  public:
    reason:
      type: text   # why the card is replaced

  private:
    card_id:
      type: text
    blocked_at:
      type: text
""",
    )


def test_declare_from_placeholder(tmp_path: Path) -> None:
    check_code_action(
        tmp_path,
        CARD_MEMORY
        + """\
//- skills/card/skill.md
---
description: Replace a card.
---
Help.
//- skills/card/responses.yml
responses:
  utter_eta:
    - text: "Your card arrives in {session.card.eta_d$0ays} days."
""",
        "Declare `eta_days` in skills/card/memory.yml (private)",
        """\
//- skills/card/memory.yml
# Card replacement memory.
schema:
  public:
    reason:
      type: text   # why the card is replaced

  private:
    card_id:
      type: text
    eta_days:
      type: text
""",
    )


def test_no_declare_for_another_skills_write_or_unknown_namespace(tmp_path: Path) -> None:
    fixture = (
        CARD_MEMORY
        + """\
//- skills/card/skill.md
---
description: Replace a card.
---
Help.
//- skills/billing/skill.md
---
description: Billing.
---
if: session.nosuchskill.x$0 == 1
Go.
"""
    )
    assert titles_at(tmp_path, fixture) == []


def test_a_private_field_of_another_skill_is_made_public_not_declared(tmp_path: Path) -> None:
    """Issue 29: the message says "make it public in that skill's memory.yml"; the fix
    does that: the field moves to the end of `public:`, its comment with it, and the
    `private:` section it leaves empty goes with the blank line that set it apart (an
    empty section fails to load)."""
    fixture = (
        CARD_MEMORY
        + """\
//- skills/card/skill.md
---
description: Replace a card.
---
Help.
//- skills/billing/skill.md
---
description: Billing.
---
if: session.card.card_id$0 == "x"
Go.
"""
    )
    assert titles_at(tmp_path / "a", fixture) == ["Make `card_id` public in skills/card/memory.yml"]
    action = check_code_action(
        tmp_path / "b",
        fixture.replace("    card_id:\n", "    # the card being replaced\n    card_id:  # an id\n"),
        "Make `card_id` public in skills/card/memory.yml",
        """\
//- skills/card/memory.yml
# Card replacement memory.
schema:
  public:
    reason:
      type: text   # why the card is replaced
    # the card being replaced
    card_id:  # an id
      type: text
""",
    )
    assert action.diagnostic_codes == ("mantle.validation.prose.unknown_memory_key",)
    assert not action.safe and not action.preferred


MOVE_READER = """\
//- skills/card/skill.md
---
description: Replace a card.
---
Help.
//- skills/billing/skill.md
---
description: Billing.
---
Use @memory.card.pin$0 now.
"""


def test_make_public_creates_the_section_by_renaming_private(tmp_path: Path) -> None:
    """A lone private field and no `public:`: the section becomes `public:` (comments,
    indentation and the order of lines stay exactly)."""
    check_code_action(
        tmp_path,
        """\
//- skills/card/memory.yml
schema:
   private:   # kept from the customer
      pin:
         type: text
         description: |
            The PIN.
            Never say it.
"""
        + MOVE_READER,
        "Make `pin` public in skills/card/memory.yml",
        """\
//- skills/card/memory.yml
schema:
   public:   # kept from the customer
      pin:
         type: text
         description: |
            The PIN.
            Never say it.
""",
    )


def test_make_public_creates_the_section_before_private(tmp_path: Path) -> None:
    """A comment at the field's column above it moves with it; one indented deeper ends
    the field before and stays."""
    check_code_action(
        tmp_path,
        """\
//- skills/card/memory.yml
schema:
  private:
    card_id:
      type: text
      # ends card_id: stays
    # the PIN: moves with it
    pin:
      type: text
      description: >-
        The PIN,
        folded.
    tries:
      type: int
"""
        + MOVE_READER,
        "Make `pin` public in skills/card/memory.yml",
        """\
//- skills/card/memory.yml
schema:
  public:
    # the PIN: moves with it
    pin:
      type: text
      description: >-
        The PIN,
        folded.
  private:
    card_id:
      type: text
      # ends card_id: stays
    tries:
      type: int
""",
    )


def test_make_public_reindents_to_the_public_fields(tmp_path: Path) -> None:
    """`private:` before `public:`, indented differently: the field takes the column of
    the public fields (its block scalar with it); `private:` goes, its comment stays."""
    check_code_action(
        tmp_path,
        """\
//- skills/card/memory.yml
schema:
  private:  # internal
      pin:
          type: text
          description: |
            The PIN.
              Indented line.

  public:
    reason:
      type: text
"""
        + MOVE_READER,
        "Make `pin` public in skills/card/memory.yml",
        """\
//- skills/card/memory.yml
schema:
  # internal
  public:
    reason:
      type: text
    pin:
        type: text
        description: |
          The PIN.
            Indented line.
""",
    )


def test_make_public_fills_an_empty_public_section(tmp_path: Path) -> None:
    """An empty `public:` (the skill fails to load on it) receives the field."""
    check_code_action(
        tmp_path,
        """\
//- skills/card/memory.yml
schema:
  public:
  private:
    card_id:
      type: text
    pin:
      type: text
"""
        + MOVE_READER,
        "Make `pin` public in skills/card/memory.yml",
        """\
//- skills/card/memory.yml
schema:
  public:
    pin:
      type: text
  private:
    card_id:
      type: text
""",
    )


def test_make_public_from_a_placeholder_a_tool_and_an_execute_parameter(tmp_path: Path) -> None:
    memory = """\
//- skills/lookup/memory.yml
schema:
  private:
    card_id:
      type: text
//- skills/lookup/skill.md
---
description: Find the user's cards.
---
Ask which card.
"""
    after = """\
//- skills/lookup/memory.yml
schema:
  public:
    card_id:
      type: text
"""
    title = "Make `card_id` public in skills/lookup/memory.yml"
    responses = """\
//- skills/card/responses.yml
responses:
  utter_card:
    - text: "Card {session.lookup.card_id$0}."
//- skills/card/skill.md
---
description: Block a card.
---
Say utter_card.
"""
    check_code_action(tmp_path / "a", memory + responses, title, after)
    tools = """\
//- skills/card/tools.py
from rasa.mantle.tools.decorator import ToolContext, tool


@tool(description="Block the card.")
async def block_card(context: ToolContext = None):
    return context.memory.get("lookup.card_id$0")
//- skills/card/skill.md
---
description: Block a card.
---
Use @tool.block_card.
"""
    check_code_action(tmp_path / "b", memory + tools, title, after)
    execute = """\
//- skills/card/tools.py
from rasa.mantle.tools.decorator import ToolContext, tool


@tool(description="Block the card.")
async def block_card(card_id: str, context: ToolContext = None):
    return None
//- skills/card/skill.md
---
description: Block a stolen card.
---
:::ordered_block id=main
steps:
  - id: block
    execute_tool: block_card
    parameters:
      card_id: session.lookup.card_id$0
:::
"""
    check_code_action(tmp_path / "c", memory + execute, title, after)


def test_no_make_public_for_a_write_or_a_flow_section(tmp_path: Path) -> None:
    """A button `set:` writes: public or not, another skill's field stays unwritable. A
    `{…}` section is left to the author."""
    fixture = """\
//- skills/lookup/memory.yml
schema:
  private:
    card_id:
      type: text
//- skills/lookup/skill.md
---
description: Find cards.
---
Ask.
//- skills/card/responses.yml
responses:
  utter_pick:
    - text: Pick one.
      buttons:
        - title: First
          payload: "set:session.lookup.card_id$0=1"
//- skills/card/skill.md
---
description: Block a card.
---
Say utter_pick.
"""
    assert titles_at(tmp_path / "a", fixture) == []
    flow = """\
//- skills/lookup/memory.yml
schema:
  private: {card_id: {type: text}}
//- skills/lookup/skill.md
---
description: Find cards.
---
Ask.
//- skills/card/skill.md
---
description: Block a card.
---
Use @memory.lookup.card_id$0.
"""
    assert titles_at(tmp_path / "b", flow) == []


def test_check_fix_makes_a_field_public_only_with_unsafe_fixes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Who may read the field changes: `--fix` leaves it, `--unsafe-fixes` moves it."""
    fx = write_fixture(
        tmp_path,
        """\
//- skills/lookup/memory.yml
schema:
  private:
    card_id:
      type: text
//- skills/lookup/skill.md
---
description: Find cards.
---
Ask.
//- skills/card/skill.md
---
description: Block a card.
---
Use @memory.lookup.card_id.
""",
    )
    memory = fx.root / "skills/lookup/memory.yml"
    before = memory.read_text(encoding="utf-8")
    assert cli_main(["check", str(fx.root), "--fix"]) == 1
    assert memory.read_text(encoding="utf-8") == before
    assert cli_main(["check", str(fx.root), "--fix", "--unsafe-fixes"]) == 0
    assert memory.read_text(encoding="utf-8") == before.replace("private:", "public:")
    capsys.readouterr()


# ---------------------------------------------------------------------------------------
# session.a.b in prose


def test_session_in_prose_becomes_memory_token(tmp_path: Path) -> None:
    action = check_code_action(
        tmp_path,
        CARD_MEMORY
        + """\
//- skills/card/skill.md
---
description: Replace a card.
---
Explain why (session.card.rea$0son) in one sentence.
""",
        "Change to `@memory.card.reason`",
        """\
//- skills/card/skill.md
---
description: Replace a card.
---
Explain why (@memory.card.reason) in one sentence.
""",
    )
    assert action.preferred


# ---------------------------------------------------------------------------------------
# Did you mean


def test_did_you_mean_replaces_only_the_entry_segment(tmp_path: Path) -> None:
    action = check_code_action(
        tmp_path,
        CARD_MEMORY
        + """\
//- skills/card/skill.md
---
description: Replace a card.
---
if: session.card.reasn$0 == "lost"
Apologise.
""",
        "Change to `reason`",
        """\
//- skills/card/skill.md
---
description: Replace a card.
---
if: session.card.reason == "lost"
Apologise.
""",
    )
    assert action.preferred


def test_did_you_mean_replaces_only_the_namespace_segment(tmp_path: Path) -> None:
    check_code_action(
        tmp_path,
        CARD_MEMORY
        + """\
//- skills/card/skill.md
---
description: Replace a card.
---
Help.
//- skills/billing/skill.md
---
description: Billing.
---
if: session.cadr$0.reason == "lost"
Apologise.
""",
        "Change to `card`",
        """\
//- skills/billing/skill.md
---
description: Billing.
---
if: session.card.reason == "lost"
Apologise.
""",
    )


def test_did_you_mean_offers_change_and_declare(tmp_path: Path) -> None:
    fixture = (
        CARD_MEMORY
        + """\
//- skills/card/skill.md
---
description: Replace a card.
---
Say @memory.card.card_i$0 now.
"""
    )
    assert titles_at(tmp_path, fixture) == [
        "Change to `card_id`",
        "Declare `card_i` in skills/card/memory.yml (private)",
        "Declare `card_i` in skills/card/memory.yml (public)",
    ]


def test_did_you_mean_step_target(tmp_path: Path) -> None:
    check_code_action(
        tmp_path,
        """\
//- skills/card/skill.md
---
description: Replace a card.
---
:::ordered_block id=main
steps:
  - id: greet
    instructions: Greet.
    next: "confrim$0"
  - id: confirm
    instructions: Confirm.
:::
""",
        "Change to `confirm`",
        """\
//- skills/card/skill.md
---
description: Replace a card.
---
:::ordered_block id=main
steps:
  - id: greet
    instructions: Greet.
    next: "confirm"
  - id: confirm
    instructions: Confirm.
:::
""",
    )


def test_end_is_upper_case(tmp_path: Path) -> None:
    check_code_action(
        tmp_path,
        """\
//- skills/card/skill.md
---
description: Replace a card.
---
:::ordered_block id=main
steps:
  - id: greet
    instructions: Greet.
    next: en$0d
:::
""",
        "Change to `END`",
        """\
//- skills/card/skill.md
---
description: Replace a card.
---
:::ordered_block id=main
steps:
  - id: greet
    instructions: Greet.
    next: END
:::
""",
    )


def test_did_you_mean_response_and_skill(tmp_path: Path) -> None:
    base = """\
//- skills/card/responses.yml
responses:
  utter_done:
    - text: Done.
//- skills/other/skill.md
---
description: Other.
---
Other.
"""
    check_code_action(
        tmp_path,
        base
        + """\
//- skills/card/skill.md
---
description: Replace a card.
---
:::ordered_block id=main
steps:
  - id: bye
    action: utter_dnoe$0
  - id: away
    link: othr
:::
""",
        "Change to `utter_done`",
        """\
//- skills/card/skill.md
---
description: Replace a card.
---
:::ordered_block id=main
steps:
  - id: bye
    action: utter_done
  - id: away
    link: othr
:::
""",
    )


def test_did_you_mean_skill_mention(tmp_path: Path) -> None:
    check_code_action(
        tmp_path,
        """\
//- skills/billing/skill.md
---
description: Billing.
---
Billing.
//- skills/card/skill.md
---
description: Replace a card.
---
For invoices hand over to @skill.biling$0.
""",
        "Change to `billing`",
        """\
//- skills/card/skill.md
---
description: Replace a card.
---
For invoices hand over to @skill.billing.
""",
    )


def test_did_you_mean_type_name_without_reference(tmp_path: Path) -> None:
    check_code_action(
        tmp_path,
        """\
//- memory.yml
plan:
  type: bool$0ean
""",
        "Change to `bool`",
        """\
//- memory.yml
plan:
  type: bool
""",
    )


def test_field_written_as_a_bare_type(tmp_path: Path) -> None:
    check_code_action(
        tmp_path,
        """\
//- memory.yml
tier: te$0xt
""",
        "Change to `tier: {type: text}`",
        """\
//- memory.yml
tier: {type: text}
""",
    )


def test_categorical_button_value(tmp_path: Path) -> None:
    check_code_action(
        tmp_path,
        """\
//- skills/card/memory.yml
schema:
  private:
    reason:
      type: categorical
      enum_values: [lost, stolen]
//- skills/card/skill.md
---
description: Replace a card.
---
Help.
//- skills/card/responses.yml
responses:
  utter_why:
    - text: Why?
      buttons:
        - title: Stolen
          payload: set:session.card.reason=stolne$0
""",
        "Change to `stolen`",
        """\
//- skills/card/responses.yml
responses:
  utter_why:
    - text: Why?
      buttons:
        - title: Stolen
          payload: set:session.card.reason=stolen
""",
    )


# ---------------------------------------------------------------------------------------
# next: without else


def test_add_else_branch_to_next_step(tmp_path: Path) -> None:
    check_code_action(
        tmp_path,
        CARD_MEMORY
        + """\
//- skills/card/skill.md
---
description: Replace a card.
---
:::ordered_block id=main
steps:
  - id: check
    instructions: Check the reason.
    ne$0xt:
      - if: session.card.reason == "lost"
        then: lost
      - if: session.card.reason == "stolen"
        then: stolen   # police report
  - id: fallback
    instructions: Ask again.
  - id: lost
    instructions: Lost.
  - id: stolen
    instructions: Stolen.
:::
""",
        "Add `- else: fallback` as the last branch",
        """\
//- skills/card/skill.md
---
description: Replace a card.
---
:::ordered_block id=main
steps:
  - id: check
    instructions: Check the reason.
    next:
      - if: session.card.reason == "lost"
        then: lost
      - if: session.card.reason == "stolen"
        then: stolen   # police report
      - else: fallback
  - id: fallback
    instructions: Ask again.
  - id: lost
    instructions: Lost.
  - id: stolen
    instructions: Stolen.
:::
""",
    )


def test_add_else_end_on_last_step(tmp_path: Path) -> None:
    check_code_action(
        tmp_path,
        CARD_MEMORY
        + """\
//- skills/card/skill.md
---
description: Replace a card.
---
:::ordered_block id=main
steps:
  - id: lost
    instructions: Lost.
  - id: check
    instructions: Check.
    next$0:
    - if: session.card.reason == "lost"
      then: lost
:::
""",
        "Add `- else: END` as the last branch",
        """\
//- skills/card/skill.md
---
description: Replace a card.
---
:::ordered_block id=main
steps:
  - id: lost
    instructions: Lost.
  - id: check
    instructions: Check.
    next:
    - if: session.card.reason == "lost"
      then: lost
    - else: END
:::
""",
    )


# ---------------------------------------------------------------------------------------
# memory.yml attributes


def test_folded_description_becomes_a_comment(tmp_path: Path) -> None:
    action = check_code_action(
        tmp_path,
        """\
//- skills/card/memory.yml
schema:
  public:
    label:
      type: text
      desc$0ription: >   # from the old spec
        Nobody can set this,
        so nobody reads this.

          An indented line.
      pii: false   # keep
""",
        "Turn the description into a comment",
        """\
//- skills/card/memory.yml
schema:
  public:
    label:
      type: text
      # Nobody can set this,
      # so nobody reads this.
      #
      #   An indented line.
      # from the old spec
      pii: false   # keep
""",
    )
    assert not action.preferred and not action.safe  # or make it settable: two readings


def test_project_description_becomes_a_comment(tmp_path: Path) -> None:
    action = check_code_action(
        tmp_path,
        """\
//- memory.yml
authenticated:
  type: bool
  description$0: "Set by the login hook: true once the user is known."  # why
user_country:
  type: text
  description: |-
    ISO code
""",
        "Turn the description into a comment",
        """\
//- memory.yml
authenticated:
  type: bool
  # Set by the login hook: true once the user is known.
  # why
user_country:
  type: text
  description: |-
    ISO code
""",
    )
    assert action.preferred and action.safe


def test_multi_line_plain_description_becomes_a_comment(tmp_path: Path) -> None:
    check_code_action(
        tmp_path,
        """\
//- memory.yml
user_country:
    description$0: The country
      the user lives in
    type: text
""",
        "Turn the description into a comment",
        """\
//- memory.yml
user_country:
    # The country
    # the user lives in
    type: text
""",
    )


def test_make_field_llm_settable(tmp_path: Path) -> None:
    check_code_action(
        tmp_path,
        """\
//- skills/card/memory.yml
schema:
  public:
    label:
      type: text
      description$0: The label.
    other:
      type: text
""",
        "Make `label` llm_settable",
        """\
//- skills/card/memory.yml
schema:
  public:
    label:
      type: text
      description: The label.
      llm_settable: true
    other:
      type: text
""",
    )


def test_make_field_llm_settable_replaces_false(tmp_path: Path) -> None:
    check_code_action(
        tmp_path,
        """\
//- skills/card/memory.yml
schema:
  public:
    label: {type: text, llm_settable: false, description$0: The label.}
""",
        "Make `label` llm_settable",
        """\
//- skills/card/memory.yml
schema:
  public:
    label: {type: text, llm_settable: true, description: The label.}
""",
    )


def test_project_description_can_only_be_removed(tmp_path: Path) -> None:
    fixture = """\
//- memory.yml
authenticated:
  type: bool
  description$0: Never shown.
"""
    assert titles_at(tmp_path, fixture) == ["Turn the description into a comment"]


def test_add_description(tmp_path: Path) -> None:
    check_code_action(
        tmp_path,
        """\
//- skills/card/memory.yml
schema:
  public:
    rea$0son:
      type: text
      llm_settable: true
""",
        "Add a description",
        """\
//- skills/card/memory.yml
schema:
  public:
    reason:
      type: text
      llm_settable: true
      description: TODO describe reason
""",
    )


def test_add_description_to_flow_mapping(tmp_path: Path) -> None:
    check_code_action(
        tmp_path,
        """\
//- skills/card/memory.yml
schema:
  public:
    rea$0son: {type: text, llm_settable: true}
""",
        "Add a description",
        """\
//- skills/card/memory.yml
schema:
  public:
    reason: {type: text, llm_settable: true, description: TODO describe reason}
""",
    )


def test_remove_project_llm_settable(tmp_path: Path) -> None:
    check_code_action(
        tmp_path,
        """\
//- memory.yml
authenticated:
  type: bool
  llm_$0settable: true
  seed: true
""",
        "Remove `llm_settable`",
        """\
//- memory.yml
authenticated:
  type: bool
  seed: true
""",
    )


def test_remove_skill_seed(tmp_path: Path) -> None:
    check_code_action(
        tmp_path,
        """\
//- skills/card/memory.yml
schema:
  public:
    reason:
      se$0ed: true
      type: text
""",
        "Remove `seed`",
        """\
//- skills/card/memory.yml
schema:
  public:
    reason:
      type: text
""",
    )


def test_no_removal_that_would_leave_a_skill_field_empty(tmp_path: Path) -> None:
    fixture = """\
//- skills/card/memory.yml
schema:
  public:
    reason:
      se$0ed: true
"""
    assert titles_at(tmp_path, fixture) == []


def test_rename_enum(tmp_path: Path) -> None:
    check_code_action(
        tmp_path,
        """\
//- skills/card/memory.yml
schema:
  public:
    reason:
      type: categorical
      en$0um: [lost, stolen]
""",
        "Rename `enum` to `enum_values`",
        """\
//- skills/card/memory.yml
schema:
  public:
    reason:
      type: categorical
      enum_values: [lost, stolen]
""",
    )


def test_rename_force_collection(tmp_path: Path) -> None:
    check_code_action(
        tmp_path,
        CARD_MEMORY
        + """\
//- skills/card/skill.md
---
description: Replace a card.
---
:::ordered_block id=main
steps:
  - id: ask
    collect: card_id
    description: The card number.
    force_$0collection: true
:::
""",
        "Rename `force_collection` to `ask_before_filling`",
        """\
//- skills/card/skill.md
---
description: Replace a card.
---
:::ordered_block id=main
steps:
  - id: ask
    collect: card_id
    description: The card number.
    ask_before_filling: true
:::
""",
    )


def test_remove_an_ignored_attribute(tmp_path: Path) -> None:
    action = check_code_action(
        tmp_path,
        """\
//- skills/card/memory.yml
schema:
  public:
    reason:
      type: text
      correct$0able: true
      pii: false
""",
        "Remove `correctable`",
        """\
//- skills/card/memory.yml
schema:
  public:
    reason:
      type: text
      pii: false
""",
    )
    assert action.preferred and action.safe


def test_a_misspelt_attribute_is_renamed_first(tmp_path: Path) -> None:
    fixture = """\
//- skills/card/memory.yml
schema:
  public:
    reason:
      type: text
      llm_setable$0: true
"""
    _, _, actions = actions_at(tmp_path, fixture)
    assert [(a.title, a.preferred, a.safe) for a in actions] == [
        ("Change to `llm_settable`", True, False),
        ("Remove `llm_setable`", False, False),
        ("Ignore `lsp.memory.unknown_attribute` here", False, False),
    ]


def test_constraints_move_into_the_prose(tmp_path: Path) -> None:
    action = check_code_action(
        tmp_path,
        """\
//- skills/card/skill.md
---
description: Replace a card.
constr$0aints:
  - text: Never promise a delivery date.
  - text: >-
      Ask for the card number
      before anything else.
hidden: false
---
Help the user replace a lost card.
""",
        "Move the constraints into the prose",
        """\
//- skills/card/skill.md
---
description: Replace a card.
hidden: false
---
- Never promise a delivery date.
- Ask for the card number before anything else.

Help the user replace a lost card.
""",
    )
    assert action.preferred and action.safe


def test_constraints_of_another_shape_are_left_to_the_author(tmp_path: Path) -> None:
    fixture = """\
//- skills/card/skill.md
---
description: Replace a card.
constr$0aints:
  - text: Never promise a delivery date.
    when: always
---
Help.
"""
    assert titles_at(tmp_path, fixture) == []


def test_bare_skill_mention_becomes_a_reference(tmp_path: Path) -> None:
    fixture = """\
//- skills/billing/skill.md
---
description: Explain fees.
---
Explain the fee.
//- skills/card/skill.md
---
description: Replace a card.
---
If the user asks about the fee, hand over to bill$0ing.
"""
    action = check_code_action(
        tmp_path,
        fixture,
        "Change to `@skill.billing`",
        """\
//- skills/card/skill.md
---
description: Replace a card.
---
If the user asks about the fee, hand over to @skill.billing.
""",
    )
    assert not action.safe


ENUM_FIELDS = """\
//- skills/card/memory.yml
schema:
  public:
    reason:
      type: categorical
      enum_values: ['lost', 'stolen']   # the card's fate
    delivery:
      type: categorical
      enum_values:
        - express
        - standard
"""


def test_add_a_value_to_a_flow_enum_list_keeps_the_quotes(tmp_path: Path) -> None:
    check_code_action(
        tmp_path,
        ENUM_FIELDS
        + """\
//- skills/card/skill.md
---
description: Replace a card.
---
if: session.card.reason == "dama$0ged"
Apologise.
""",
        "Add `damaged` to enum_values of `reason` (skills/card/memory.yml)",
        """\
//- skills/card/memory.yml
schema:
  public:
    reason:
      type: categorical
      enum_values: ['lost', 'stolen', 'damaged']   # the card's fate
    delivery:
      type: categorical
      enum_values:
        - express
        - standard
""",
    )


def test_add_a_value_to_a_block_enum_list(tmp_path: Path) -> None:
    check_code_action(
        tmp_path,
        ENUM_FIELDS
        + """\
//- skills/card/skill.md
---
description: Replace a card.
---
if: session.card.delivery == "same day$0"
Hurry.
""",
        "Add `same day` to enum_values of `delivery` (skills/card/memory.yml)",
        """\
//- skills/card/memory.yml
schema:
  public:
    reason:
      type: categorical
      enum_values: ['lost', 'stolen']   # the card's fate
    delivery:
      type: categorical
      enum_values:
        - express
        - standard
        - same day
""",
    )


def test_add_a_value_to_a_project_enum_list_keeps_double_quotes(tmp_path: Path) -> None:
    check_code_action(
        tmp_path,
        """\
//- memory.yml
tier:
  type: categorical
  enum_values:
    - "gold"
    - "silver"
//- skills/card/skill.md
---
description: Replace a card.
---
if: session.project.tier == 'bron$0ze'
Offer the basic card.
""",
        "Add `bronze` to enum_values of `tier` (memory.yml)",
        """\
//- memory.yml
tier:
  type: categorical
  enum_values:
    - "gold"
    - "silver"
    - "bronze"
""",
    )


def test_remove_a_frontmatter_id_that_repeats_the_folder(tmp_path: Path) -> None:
    action = check_code_action(
        tmp_path,
        """\
//- skills/card/skill.md
---
i$0d: card
description: Replace a card.
---
Help.
""",
        "Remove `id`",
        """\
//- skills/card/skill.md
---
description: Replace a card.
---
Help.
""",
    )
    assert action.safe and action.preferred


def test_remove_other_ignored_keys_is_unsafe(tmp_path: Path) -> None:
    action = check_code_action(
        tmp_path,
        """\
//- skills/card/skill.md
---
description: Replace a card.
lic$0ense: MIT
---
:::ordered_block id=main
id: main
steps:
  - id: a
    instructions: Ask.
:::
""",
        "Remove `license`",
        """\
//- skills/card/skill.md
---
description: Replace a card.
---
:::ordered_block id=main
id: main
steps:
  - id: a
    instructions: Ask.
:::
""",
    )
    assert not action.safe
    action = check_code_action(
        tmp_path,
        """\
//- skills/card/skill.md
---
description: Replace a card.
---
:::ordered_block id=main
i$0d: main
steps:
  - id: a
    instructions: Ask.
:::
""",
        "Remove `id`",
        """\
//- skills/card/skill.md
---
description: Replace a card.
---
:::ordered_block id=main
steps:
  - id: a
    instructions: Ask.
:::
""",
    )
    assert action.safe  # the fence says the same


AGENT_HEAD = """\
//- agent.yml
agent:
  id: test-agent
  persona: A careful test assistant.
orchestrator:
  model_group: main
"""


def test_legacy_ack_enabled_becomes_fillers_enabled(tmp_path: Path) -> None:
    """Issue 29: 3.21 ignores `prompts.ack_enabled` and reads `fillers.enabled`. With
    only that key under `prompts:`, the section is renamed: comments stay as written."""
    action = check_code_action(
        tmp_path,
        AGENT_HEAD + "prompts:  # acknowledgements\n  ack_enabled$0: true  # on for text too\n",
        "Move `prompts.ack_enabled` to `fillers.enabled`",
        AGENT_HEAD + "fillers:  # acknowledgements\n  enabled: true  # on for text too\n",
    )
    assert action.diagnostic_codes == ("lsp.legacy.syntax",)
    assert action.preferred and not action.safe  # the agent starts acknowledging


def test_legacy_ack_rule_joins_the_fillers_section(tmp_path: Path) -> None:
    """`prompts.ack_rule` is the rule `fillers.instructions` holds: the entry (its comment,
    its block scalar) moves to the end of `fillers:`, re-indented to its keys; `prompts:`
    keeps its other key."""
    check_code_action(
        tmp_path,
        AGENT_HEAD
        + """\
fillers:
    reminder: Keep it short.
prompts:
  routing_no_active_skill: Ask what they need.
  # the line before a tool runs
  ack_r$0ule: |
    Say one short line.
      Never two.
""",
        "Move `prompts.ack_rule` to `fillers.instructions`",
        AGENT_HEAD
        + """\
fillers:
    reminder: Keep it short.
    # the line before a tool runs
    instructions: |
      Say one short line.
        Never two.
prompts:
  routing_no_active_skill: Ask what they need.
""",
    )


def test_legacy_ack_key_creates_fillers_and_drops_an_emptied_prompts(tmp_path: Path) -> None:
    fixture = (
        AGENT_HEAD
        + """\

prompts:
  ack_enabled: false
  ack_rule$0: Say "one moment".

rules:
  - Be kind.
"""
    )
    check_code_action(
        tmp_path / "a",
        fixture,
        "Move `prompts.ack_rule` to `fillers.instructions`",
        AGENT_HEAD
        + """\

fillers:
  instructions: Say "one moment".
prompts:
  ack_enabled: false

rules:
  - Be kind.
""",
    )
    # the second one fills the section the first made; `prompts:` goes (empty, it is an
    # error), the blank line that set `rules:` apart stays
    fixed = (
        AGENT_HEAD
        + """\

fillers:
  instructions: Say "one moment".
prompts:
  ack_enabled$0: false

rules:
  - Be kind.
"""
    )
    check_code_action(
        tmp_path / "b",
        fixed,
        "Move `prompts.ack_enabled` to `fillers.enabled`",
        AGENT_HEAD
        + """\

fillers:
  instructions: Say "one moment".
  enabled: false

rules:
  - Be kind.
""",
    )


def test_legacy_ack_key_already_set_in_fillers_is_only_removed(tmp_path: Path) -> None:
    """`fillers.enabled` decides; moving would overwrite it: the legacy key can only go."""
    action = check_code_action(
        tmp_path,
        AGENT_HEAD
        + "fillers:\n  enabled: false\nprompts:\n  ack_enabled$0: true\n"
        + "  routing_no_active_skill: Ask.\n",
        "Remove `prompts.ack_enabled` (`fillers.enabled` is set)",
        AGENT_HEAD + "fillers:\n  enabled: false\nprompts:\n  routing_no_active_skill: Ask.\n",
    )
    assert not action.safe


def test_legacy_ack_enabled_without_a_boolean_is_left_to_the_author(tmp_path: Path) -> None:
    """A value `fillers.enabled` would not take as it is has no exact counterpart."""
    fixture = AGENT_HEAD + "prompts:\n  ack_enabled$0: sometimes\n"
    assert titles_at(tmp_path, fixture) == []


def test_check_fix_moves_legacy_ack_keys_only_with_unsafe_fixes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Both keys, in rounds (each fix edits `fillers:`): `--fix` leaves them."""
    fx = write_fixture(
        tmp_path,
        AGENT_HEAD + "prompts:\n  ack_enabled: true\n  ack_rule: Say one line.\n",
    )
    agent = fx.root / "agent.yml"
    before = agent.read_text(encoding="utf-8")
    cli_main(["check", str(fx.root), "--fix"])
    assert agent.read_text(encoding="utf-8") == before
    assert cli_main(["check", str(fx.root), "--fix", "--unsafe-fixes"]) == 0
    after = agent.read_text(encoding="utf-8")
    assert after.startswith(AGENT_HEAD.split("\n", 1)[1] + "fillers:\n")
    assert "prompts" not in after
    assert sorted(after.splitlines()[-2:]) == ["  enabled: true", "  instructions: Say one line."]
    capsys.readouterr()


def test_remove_access_but_not_a_misspelt_section(tmp_path: Path) -> None:
    check_code_action(
        tmp_path,
        """\
//- skills/card/memory.yml
acc$0ess:
  deny_write: [reason]
schema:
  public:
    reason:
      type: text
""",
        "Remove `access`",
        """\
//- skills/card/memory.yml
schema:
  public:
    reason:
      type: text
""",
    )
    fixture = """\
//- skills/card/memory.yml
schema:
  public:
    reason:
      type: text
  publ$0c:
    other:
      type: text
"""
    assert titles_at(tmp_path, fixture) == []


# ---------------------------------------------------------------------------------------
# execute_tool parameters

SEARCH_TOOLS = """\
//- skills/search/tools.py
from rasa.mantle.tools.decorator import ToolContext, tool


@tool(description="Search the help centre.")
async def search_articles(
    source: str, topic: str, limit: int = 5, context: ToolContext = None
):
    return None
//- skills/search/memory.yml
schema:
  private:
    topic:
      type: text
"""


def test_unknown_parameter_is_renamed_to_the_one_meant(tmp_path: Path) -> None:
    action = check_code_action(
        tmp_path,
        SEARCH_TOOLS
        + """\
//- skills/search/skill.md
---
description: Search the help centre.
---
:::ordered_block id=main
steps:
  - id: search
    execute_tool: search_articles
    parameters:
      sau$0ce: faq
      topic: session.search.topic
:::
""",
        "Change to `source`",
        """\
//- skills/search/skill.md
---
description: Search the help centre.
---
:::ordered_block id=main
steps:
  - id: search
    execute_tool: search_articles
    parameters:
      source: faq
      topic: session.search.topic
:::
""",
    )
    assert action.preferred and not action.safe


def test_missing_parameters_are_added_under_parameters(tmp_path: Path) -> None:
    check_code_action(
        tmp_path,
        SEARCH_TOOLS
        + """\
//- skills/search/skill.md
---
description: Search the help centre.
---
:::ordered_block id=main
steps:
  - id: search
    execute_tool: search_articles
    param$0eters:
      limit: 3   # enough
    next: END
:::
""",
        "Add `source`, `topic` under `parameters`",
        """\
//- skills/search/skill.md
---
description: Search the help centre.
---
:::ordered_block id=main
steps:
  - id: search
    execute_tool: search_articles
    parameters:
      limit: 3   # enough
      source: TODO
      topic: session.search.topic
    next: END
:::
""",
    )


def test_missing_parameters_without_a_parameters_key(tmp_path: Path) -> None:
    check_code_action(
        tmp_path,
        SEARCH_TOOLS
        + """\
//- skills/search/skill.md
---
description: Search the help centre.
---
:::ordered_block id=main
steps:
    -   id: search
        execute_tool: search_art$0icles
        next: END
:::
""",
        "Add `source`, `topic` under `parameters`",
        """\
//- skills/search/skill.md
---
description: Search the help centre.
---
:::ordered_block id=main
steps:
    -   id: search
        execute_tool: search_articles
        parameters:
          source: TODO
          topic: session.search.topic
        next: END
:::
""",
    )


def test_missing_parameter_in_a_flow_mapping(tmp_path: Path) -> None:
    check_code_action(
        tmp_path,
        SEARCH_TOOLS
        + """\
//- skills/search/skill.md
---
description: Search the help centre.
---
:::ordered_block id=main
steps:
  - id: search
    execute_tool: search_articles
    param$0eters: {source: faq}
:::
""",
        "Add `topic` under `parameters`",
        """\
//- skills/search/skill.md
---
description: Search the help centre.
---
:::ordered_block id=main
steps:
  - id: search
    execute_tool: search_articles
    parameters: {source: faq, topic: session.search.topic}
:::
""",
    )


# ---------------------------------------------------------------------------------------
# Ignore this here: an inline suppression


def test_ignore_here_at_the_end_of_the_line(tmp_path: Path) -> None:
    action = check_code_action(
        tmp_path,
        """\
//- skills/card/memory.yml
schema:
  public:
    reason:
      type: text
      correct$0able: true   # kept for the 3.20 build
""",
        "Ignore `lsp.memory.unknown_attribute` here",
        """\
//- skills/card/memory.yml
schema:
  public:
    reason:
      type: text
      correctable: true   # kept for the 3.20 build  # mantle-lsp: ignore[lsp.memory.unknown_attribute]
""",  # noqa: E501
    )
    assert action.suppresses and not action.safe and not action.preferred


def test_ignore_here_joins_the_suppression_of_the_line(tmp_path: Path) -> None:
    check_code_action(
        tmp_path,
        """\
//- memory.yml
authenticated: {type: bool, descr$0iption: At login., correctable: true}  # mantle-lsp: ignore[lsp.memory.unknown_attribute]
""",  # noqa: E501
        "Ignore `mantle.validation.memory.description_not_exposed` here",
        """\
//- memory.yml
authenticated: {type: bool, description: At login., correctable: true}  # mantle-lsp: ignore[lsp.memory.unknown_attribute, mantle.validation.memory.description_not_exposed]
""",  # noqa: E501
    )


def test_ignore_here_on_the_line_above_when_the_line_cannot_take_a_comment(
    tmp_path: Path,
) -> None:
    check_code_action(
        tmp_path,
        """\
//- skills/card/memory.yml
schema:
  public:
    reason:
      type: text
      correct$0able: "yes,
        always"
""",
        "Ignore `lsp.memory.unknown_attribute` here",
        """\
//- skills/card/memory.yml
schema:
  public:
    reason:
      type: text
      # mantle-lsp: ignore[lsp.memory.unknown_attribute]
      correctable: "yes,
        always"
""",
    )


def test_ignore_here_in_python_and_frontmatter(tmp_path: Path) -> None:
    check_code_action(
        tmp_path,
        """\
//- skills/card/skill.md
---
description: Replace a card.
constr$0aints:
  - text: Be kind.
---
Help.
""",
        "Ignore `skill.markdown.unknown_frontmatter_key` here",
        """\
//- skills/card/skill.md
---
description: Replace a card.
constraints:  # mantle-lsp: ignore[skill.markdown.unknown_frontmatter_key]
  - text: Be kind.
---
Help.
""",
    )


def test_no_ignore_here_in_prose(tmp_path: Path) -> None:
    fixture = """\
//- skills/billing/skill.md
---
description: Explain fees.
---
Explain the fee.
//- skills/card/skill.md
---
description: Replace a card.
---
Hand over to bill$0ing.
"""
    _, diags, actions = actions_at(tmp_path, fixture)
    assert [d.code for d in diags] == ["skill.prose.bare_skill_mention"]
    assert [a.title for a in actions] == ["Change to `@skill.billing`"]


# ---------------------------------------------------------------------------------------
# Ignore in this file: per-file-ignores, for prose (which has no inline suppression)

MENTION = """\
//- skills/billing/skill.md
---
description: Explain fees.
---
Explain the fee.
//- skills/card/skill.md
---
description: Replace a card.
---
Hand over to billing.
"""
IGNORED = '"skills/card/skill.md" = ["skill.prose.bare_skill_mention"]'


def ignore_in_file_after(tmp_path: Path, config: str | None, name: str = "mantle-lsp.toml") -> str:
    """The configuration once "Ignore … in this file" is applied on the bare mention (and
    the mention is no longer reported with it)."""
    from mantle_lsp.ide.code_actions import ConfigFile
    from mantle_lsp.ide.codes import REGISTRY
    from mantle_lsp.model import settings

    write_fixture(tmp_path, MENTION)
    cfg = tmp_path / name
    if config is not None:
        cfg.write_text(config, encoding="utf-8")
    proj = Project.load(tmp_path)
    path = tmp_path / "skills/card/skill.md"
    (d,) = project_diagnostics(proj)[path]
    given = ConfigFile(cfg, config) if config is not None else ConfigFile(None)
    actions = code_actions(proj, path, d.range, [d], config=given)
    assert [a.title for a in actions] == [
        "Change to `@skill.billing`",
        f"Ignore `skill.prose.bare_skill_mention` in this file ({name} per-file-ignores)",
    ]
    apply_edit(tmp_path, actions[1].edit)
    st, errors = settings.load(tmp_path, REGISTRY)
    assert not errors and settings.apply(st, path, [d]) == []
    return cfg.read_text(encoding="utf-8")


def test_ignore_in_file_creates_the_configuration(tmp_path: Path) -> None:
    assert ignore_in_file_after(tmp_path, None) == f"[per-file-ignores]\n{IGNORED}\n"


def test_ignore_in_file_adds_to_the_table(tmp_path: Path) -> None:
    config = """\
ignore = ["lsp.legacy"]

[per-file-ignores]
"tools/*.py" = ["lsp.tools.obsolete_import"]  # old helpers

# end of the file
"""
    assert ignore_in_file_after(tmp_path, config) == config.replace(
        "# old helpers\n", f"# old helpers\n{IGNORED}\n"
    )


def test_ignore_in_file_adds_to_the_files_entry(tmp_path: Path) -> None:
    config = """\
[tool.mantle-lsp]
engine = "3.21"

[tool.mantle-lsp.per-file-ignores]
"skills/card/skill.md" = ["lsp.condition"]

[tool.black]
line-length = 100
"""
    assert ignore_in_file_after(tmp_path, config, "pyproject.toml") == config.replace(
        '["lsp.condition"]', '["lsp.condition", "skill.prose.bare_skill_mention"]'
    )


def test_ignore_in_file_adds_a_table(tmp_path: Path) -> None:
    config = '[tool.mantle-lsp]\nengine = "3.21"'
    assert ignore_in_file_after(tmp_path, config, "pyproject.toml") == (
        f"{config}\n\n[tool.mantle-lsp.per-file-ignores]\n{IGNORED}\n"
    )


def test_no_ignore_in_file_for_an_inline_table(tmp_path: Path) -> None:
    from mantle_lsp.ide.code_actions import ConfigFile

    write_fixture(tmp_path, MENTION)
    config = 'per-file-ignores = { "tools/*.py" = ["lsp.tools"] }\n'
    proj = Project.load(tmp_path)
    path = tmp_path / "skills/card/skill.md"
    (d,) = project_diagnostics(proj)[path]
    given = ConfigFile(tmp_path / "mantle-lsp.toml", config)
    actions = code_actions(proj, path, d.range, [d], config=given)
    assert [a.title for a in actions] == ["Change to `@skill.billing`"]


# ---------------------------------------------------------------------------------------
# Fix all: the safe fixes of many findings in one edit

FIX_ALL = """\
//- skills/card/memory.yml
schema:
  public:
    reason:
      type: text
      correctable: true
      seed: true   # asked for by sales
//- skills/card/skill.md
---
description: Replace a card.
---
Tell them session.card.reason (and session.card.reason again).

if: session.card.reasn == 'x'
Say sorry.

:::ordered_block id=main
steps:
  - id: a
    instructions: Ask.
    next:
      - if: session.card.reason == 'lost'
        then: end
      - else: END
:::
"""


def _file_diagnostics(root: Path, rel: str) -> tuple[Project, list[Diagnostic]]:
    proj = Project.load(root)
    return proj, project_diagnostics(proj).get(root / rel, [])


def test_fix_all_in_a_file_applies_each_safe_fix_once(tmp_path: Path) -> None:
    write_fixture(tmp_path, FIX_ALL)
    proj, diags = _file_diagnostics(tmp_path, "skills/card/skill.md")
    batch = fix_all(proj, diags)
    assert batch.count == 3  # the two `session.card.reason`, `end`
    apply_edit(tmp_path, batch.workspace_edit())
    assert (tmp_path / "skills/card/skill.md").read_text(encoding="utf-8") == (
        parse_fixture(FIX_ALL)[0]["skills/card/skill.md"]
        .replace(
            "session.card.reason (and session.card.reason",
            "@memory.card.reason (and @memory.card.reason",
        )
        .replace("then: end", "then: END")
    )
    # the guess (`reasn` → `reason`) is left to the author
    _, left = _file_diagnostics(tmp_path, "skills/card/skill.md")
    assert [d.code for d in left] == ["mantle.validation.prose.unknown_memory_key"]


def test_fix_all_of_one_code_leaves_the_others(tmp_path: Path) -> None:
    write_fixture(tmp_path, FIX_ALL)
    proj, diags = _file_diagnostics(tmp_path, "skills/card/memory.yml")
    batch = fix_all(proj, diags, code="lsp.memory.unknown_attribute")
    assert batch.count == 1
    apply_edit(tmp_path, batch.workspace_edit())
    # `seed:` (a safe removal, but another code) stays
    assert (tmp_path / "skills/card/memory.yml").read_text(encoding="utf-8") == (
        parse_fixture(FIX_ALL)[0]["skills/card/memory.yml"].replace("      correctable: true\n", "")
    )


def test_fix_all_never_chooses_a_suppression() -> None:
    from mantle_lsp.ide.fixes import choose

    ignore = CodeAction("Ignore `x` here", "quickfix", WorkspaceEdit(), ("x",), suppresses=True)
    assert choose([ignore], unsafe=True) is None
    fix = CodeAction("Change", "quickfix", WorkspaceEdit(), ("x",), safe=True)
    assert choose([fix, ignore], unsafe=False) is fix


# ---------------------------------------------------------------------------------------
# Odds and ends


def test_no_actions_without_diagnostics(tmp_path: Path) -> None:
    # (with a value from the start: a condition on a field nothing writes gets a hint)
    given = "type: text   # why the card is replaced\n      initial_value: unknown"
    fixture = (
        CARD_MEMORY.replace("type: text   # why the card is replaced", given)
        + """\
//- skills/card/skill.md
---
description: Replace a card.
---
if: session.card.rea$0son == "lost"
Apologise.
"""
    )
    _proj, diags, actions = actions_at(tmp_path, fixture)
    assert diags == [] and actions == []


def test_diagnostics_of_other_files_are_ignored(tmp_path: Path) -> None:
    fx = write_fixture(
        tmp_path,
        """\
//- skills/card/skill.md
---
description: Replace a card.
---
if: session.card.status == "x"
Go.
""",
    )
    proj = Project.load(fx.root)
    md = tmp_path / "skills/card/skill.md"
    diags = project_diagnostics(proj)[md]
    assert diags
    assert code_actions(proj, tmp_path / "agent.yml", TextRange(0, 0), diags) == []


def test_yaml_scalar_quotes_what_yaml_would_change() -> None:
    assert yaml_scalar("lost") == "lost"
    assert yaml_scalar("yes") == '"yes"'
    assert yaml_scalar("a: b") == '"a: b"'
    assert yaml_scalar("12") == '"12"'
    assert yaml_scalar(True) == "true"
    assert yaml_scalar(2.5) == "2.5"


def test_button_values_make_a_categorical(tmp_path: Path) -> None:
    check_code_action(
        tmp_path,
        CARD_MEMORY
        + """\
//- skills/card/skill.md
---
description: Replace a card.
---
Help.
//- skills/card/responses.yml
responses:
  utter_speed:
    - text: How fast?
      buttons:
        - title: Express
          payload: set:session.card.speed$0=express
        - title: Standard
          payload: set:session.card.speed=standard
""",
        "Declare `speed` in skills/card/memory.yml (private)",
        """\
//- skills/card/memory.yml
# Card replacement memory.
schema:
  public:
    reason:
      type: text   # why the card is replaced

  private:
    card_id:
      type: text
    speed:
      type: categorical
      enum_values: [express, standard]
""",
    )


def test_every_action_on_the_broken_example_applies_cleanly(tmp_path: Path) -> None:
    import shutil

    root = tmp_path / "telecom"
    shutil.copytree(Path(__file__).parent.parent / "examples" / "telecom-broken", root)
    proj = Project.load(root)
    count = 0
    for path, diags in project_diagnostics(proj).items():
        text = proj.files[path].text
        for d in diags:
            for action in code_actions(proj, path, d.range, [d]):
                count += 1
                assert action.diagnostic_codes == (d.code,)
                for p, edits in action.edit.edits.items():
                    size = len(proj.files[p].text) if p in proj.files else -1
                    for e in edits:
                        assert 0 <= e.range.start <= e.range.end <= size, (action.title, e)
                for p in action.edit.new_files:
                    assert p not in proj.files and not p.exists()
        assert text == proj.files[path].text
    assert count > 5


ENUM_MEMORY = """\
//- skills/card/memory.yml
schema:
  public:
    reason:
      type: categorical
      enum_values: [lost, stolen, damaged]
    blocked:
      type: bool
    attempts:
      type: int
"""


def test_enum_value_changes_to_the_closest_value(tmp_path: Path) -> None:
    fixture = (
        ENUM_MEMORY
        + """\
//- skills/card/skill.md
---
description: Replace a card.
---
if: session.card.reason == 'stol$0n'
Call the police.
"""
    )
    assert titles_at(tmp_path, fixture) == [
        "Change to `stolen`",
        "Change to `lost`",
        "Change to `damaged`",
        "Add `stoln` to enum_values of `reason` (skills/card/memory.yml)",
    ]
    action = check_code_action(
        tmp_path,
        fixture,
        "Change to `stolen`",
        """\
//- skills/card/skill.md
---
description: Replace a card.
---
if: session.card.reason == 'stolen'
Call the police.
""",
    )
    assert action.preferred


def test_enum_value_inside_a_yaml_string(tmp_path: Path) -> None:
    check_code_action(
        tmp_path,
        ENUM_MEMORY
        + """\
//- skills/card/skill.md
---
description: Replace a card.
---
:::ordered_block id=main
steps:
  - id: check
    instructions: Check.
    next:
      - if: "session.card.reason != \\"brok$0en\\""
        then: END
      - else: END
:::
""",
        "Change to `damaged`",
        """\
//- skills/card/skill.md
---
description: Replace a card.
---
:::ordered_block id=main
steps:
  - id: check
    instructions: Check.
    next:
      - if: "session.card.reason != \\"damaged\\""
        then: END
      - else: END
:::
""",
    )


def test_bool_compared_with_a_string(tmp_path: Path) -> None:
    check_code_action(
        tmp_path,
        ENUM_MEMORY
        + """\
//- skills/card/skill.md
---
description: Replace a card.
---
if: session.card.blocked == "tr$0ue"
Unblock it.
""",
        "Change to `True`",
        """\
//- skills/card/skill.md
---
description: Replace a card.
---
if: session.card.blocked == True
Unblock it.
""",
    )


def test_number_compared_with_a_string(tmp_path: Path) -> None:
    check_code_action(
        tmp_path,
        ENUM_MEMORY
        + """\
//- skills/card/skill.md
---
description: Replace a card.
---
if: session.card.attempts >= '3$0'
Stop.
""",
        "Change to `3`",
        """\
//- skills/card/skill.md
---
description: Replace a card.
---
if: session.card.attempts >= 3
Stop.
""",
    )


# ---------------------------------------------------------------------------------------
# A list that falls out of the `if:` scope announcing it

LEAK_MEMORY = """\
//- skills/card/memory.yml
schema:
  public:
    reason:
      type: categorical
      enum_values: [lost, stolen]
"""


def test_a_leaking_list_is_scoped_under_the_same_condition(tmp_path: Path) -> None:
    from mantle_lsp.ide.preview import preview_skill

    fixture = (
        LEAK_MEMORY
        + """\
//- skills/card/skill.md
---
description: Replace a card.
---
Help the customer replace a card.

if: session.card.reason == 'stolen'
Before anything else:"""
        # two whitespace-only lines: the list paragraph starts with the second one, which
        # would hide an `if:` written after it, so the fix replaces that line
        + "\n  \n \n"
        + """\
- Lock the c$0ard.

  - Tell them a new card is on its way.
"""
    )
    after = (
        LEAK_MEMORY
        + """\
//- skills/card/skill.md
---
description: Replace a card.
---
Help the customer replace a card.

if: session.card.reason == 'stolen'
Before anything else:"""
        + "\n  \n"
        + """\
if: session.card.reason == 'stolen'
- Lock the card.

if: session.card.reason == 'stolen'
  - Tell them a new card is on its way.
"""
    )
    leaks = Project.load(write_fixture(tmp_path / "leaks", fixture.replace("$0", "")).root)
    lost = {"card": {"reason": "lost"}}
    pv = preview_skill(leaks, "card", lost)
    assert pv is not None and "Lock the card." in pv.text  # the leak: in every prompt
    action = check_code_action(
        tmp_path / "fix",
        fixture,
        "Scope each paragraph of this list under the same condition "
        "(`if: session.card.reason == 'stolen'`)",
        after,
    )
    assert action.preferred and not action.safe  # what the model sees changes: never unasked
    proj = Project.load(tmp_path / "fix")
    assert not [
        d for ds in project_diagnostics(proj).values() for d in ds if d.code.startswith("lsp.prose")
    ]
    # the engine reads the fixed text as meant (make oracle compares this project's
    # rendering with the engine's under both values of `reason`)
    fixed = Project.load(write_fixture(tmp_path / "fixed", after).root)
    pv = preview_skill(fixed, "card", lost)
    assert pv is not None and pv.text == "Help the customer replace a card."
    pv = preview_skill(fixed, "card", {"card": {"reason": "stolen"}})
    assert pv is not None
    assert pv.text == (
        "Help the customer replace a card.\n\nBefore anything else:\n\n"
        "- Lock the card.\n\n- Tell them a new card is on its way."
    )
