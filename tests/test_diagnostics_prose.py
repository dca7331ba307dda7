"""Instruction-text tokens: @memory, @skill, @block, @tool, incomplete tokens, session.* in
prose and in step instructions."""

from __future__ import annotations

from pathlib import Path

from support import check_clean, check_diagnostics

BASE = """\
//- memory.yml
customer_name:
  type: text
//- skills/card/memory.yml
schema:
  public:
    reason:
      type: text
  private:
    pin:
      type: text
//- skills/helper/memory.yml
schema:
  private:
    token:
      type: text
//- skills/helper/skill.md
---
description: A hidden helper.
hidden: true
---
Help quietly.
//- skills/card/tools.py
from rasa.mantle.tools.decorator import ToolContext, tool


@tool(description="Lock the card.")
async def lock_card(context: ToolContext = None):
    return None
"""


def test_valid_tokens_are_silent(tmp_path: Path) -> None:
    check_clean(
        tmp_path,
        BASE
        + """\
//- skills/card/skill.md
---
description: Replace a card.
---
Greet @memory.project.customer_name and confirm @memory.card.reason.
Then use @tool.lock_card, or @tool.cancel when they give up.
Mail x@tool.nothing is not a token. Skills like @skills are plain words.

if: session.card.reason
Use @block.main to continue.

:::ordered_block id=main
steps:
  - id: check
    instructions: |
      Confirm @memory.card.pin privately. Mention @skill.anything freely here.
:::
""",
        silent=[
            "unknown_memory_reference",
            "incomplete_memory_reference",
            "incomplete_at_reference",
            "session_reference_in_instructions",
            "tools.unresolved_tool",
            "invalid_block_reference",
            "prose.unknown_memory_key",
        ],
    )


def test_unknown_and_incomplete_memory_tokens(tmp_path: Path) -> None:
    check_diagnostics(
        tmp_path,
        BASE
        + """\
//- skills/card/skill.md
---
description: Replace a card.
---
Read «unknown_memory_reference:@memory.helper.token» and «unknown_memory_reference:@memory.card.pn».
Also «incomplete_memory_reference:@memory.project» and «incomplete_memory_reference:@memory.a.b.c».
And «unknown_memory_reference:@memory.system.language».
""",
    )


def test_at_tokens_skill_tool_block(tmp_path: Path) -> None:
    check_diagnostics(
        tmp_path,
        BASE
        + """\
//- skills/card/skill.md
---
description: Replace a card.
---
Delegate to @skill.«invalid_target:helpr» or @skill.«hidden_skill_reference:helper».
Call @tool.«unresolved_tool:lock_crd» but not «incomplete_at_reference:@tool.lock_card.now».
See «incomplete_at_reference:@skill» for details and «invalid_block_reference:@block.nope».
""",
    )


def test_session_reference_in_prose_and_step_instructions(tmp_path: Path) -> None:
    check_diagnostics(
        tmp_path,
        BASE
        + """\
//- skills/card/skill.md
---
description: Replace a card.
---
Tell them «session_reference_in_instructions:session.card.reason» now.

:::ordered_block id=main
steps:
  - id: tell
    instructions: >-
      Say the reason
      «session_reference_in_instructions:session.card.reason» and read
      «unknown_memory_reference:@memory.card.missing».
:::
""",
    )


def test_if_condition_line_is_not_instruction_text(tmp_path: Path) -> None:
    # tokens on the `if:` line belong to the condition, not to the prose
    check_clean(
        tmp_path,
        BASE
        + """\
//- skills/card/skill.md
---
description: Replace a card.
---
if: session.card.reason == '@memory.nothing'
Body text.
""",
    )


def test_astral_characters_before_a_token_keep_columns_right(tmp_path: Path) -> None:
    got = check_diagnostics(
        tmp_path,
        BASE
        + """\
//- skills/card/skill.md
---
description: Replace a card.
---
Smile 😀 — «unknown_memory_reference:@memory.card.nope» ✓.
""",
    )
    assert [g[3] for g in got if g[4] != "hint"] == [
        "mantle.validation.prose.unknown_memory_reference"
    ]


def test_a_list_announced_by_a_scoped_paragraph_but_not_in_its_scope(tmp_path: Path) -> None:
    got = check_diagnostics(
        tmp_path,
        BASE
        + """\
//- skills/card/skill.md
---
description: Replace a card.
---
Help the customer replace a card.

if: not session.card.reason
The customer has not said why. Follow these steps in order:

«list_outside_scope:1. Ask what happened to the card.
2. Set `reason` from the answer.»

if: session.card.reason == 'stolen'
**Before anything else:**

«list_outside_scope:- Lock the card.

  - Tell them a new card is on its way.»

Thank them.

if: session.card.reason == 'lost'
Ask where they last had it:"""
        # two whitespace-only lines in a row: the list paragraph starts with the second
        + "\n   \n  \n"
        + """\
«list_outside_scope:* at home
* elsewhere»
""",
        severities={"list_outside_scope": "hint"},
    )
    messages = [g[5] for g in got if g[3] == "lsp.prose.list_outside_scope"]
    assert messages[0] == (
        "this list is not in the `if:` scope of line 6, which ends at the blank line: the "
        "model sees it whatever `not session.card.reason` is; scope it under the same "
        "condition (or remove the blank line, if the list belongs to that paragraph)"
    )
    assert messages[1].startswith("these 2 list paragraphs are not in the `if:` scope of line 12")


def test_lists_that_stay_in_scope_or_are_not_announced_are_silent(tmp_path: Path) -> None:
    check_clean(
        tmp_path,
        BASE
        + """\
//- skills/card/skill.md
---
description: Replace a card.
---
Offer exactly two ways to verify:

- the app
- a store visit

if: session.card.reason == 'stolen'
Say the card is blocked.

- a list the paragraph above does not announce

if: session.card.reason == 'lost'
Ask where they last had it:
- at home
- elsewhere

if: session.card.reason
Then say:

Thanks for waiting.

if: session.card.reason
Mind this:

---

***

**Bold** is not a list.

if: session.card.reason == 'lost'
Read the options:

if: session.card.reason == 'lost'
- a list in its own scope

if: session.card.reason
Continue with @block.main:

:::ordered_block id=main
steps:
  - id: a
    instructions: Do it.
:::

- a list after a block
""",
        silent=["lsp.prose.list_outside_scope"],
    )
