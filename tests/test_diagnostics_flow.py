"""Ordered-block references: next targets, call/link, actions, execute_tool, skill ids."""

from __future__ import annotations

from pathlib import Path

from support import check_clean, check_diagnostics

MEMORY = """\
//- memory.yml
authenticated:
  type: bool
//- skills/card/memory.yml
schema:
  public:
    reason:
      type: text
  private:
    card_id:
      type: text
//- skills/other/memory.yml
schema:
  private:
    secret:
      type: text
//- skills/other/skill.md
---
description: Other.
---
Other.
//- skills/card/tools.py
from rasa.mantle.tools.decorator import ToolContext, tool


@tool(description="Look it up.")
async def lookup(card: str, mode: str = "", other: str = "", context: ToolContext = None):
    return None
//- skills/card/responses.yml
responses:
  utter_done:
    - text: Done.
"""


def test_valid_flow_is_silent(tmp_path: Path) -> None:
    check_clean(
        tmp_path,
        MEMORY
        + """\
//- skills/card/skill.md
---
description: Replace a card.
---
:::ordered_block id=main
steps:
  - id: look
    execute_tool: lookup
    parameters:
      card: session.card.card_id
      mode: literal text
  - id: route
    noop: true
    next:
      - if: session.card.reason
        then: done
      - else: handoff
  - id: handoff
    call: other
    next: done
  - id: done
    action: utter_done
    next: END
  - id: END
:::
""",
        silent=[
            "unresolved_next",
            "next_missing_else",
            "unresolved_call",
            "branch_if_ignored",
            "duplicate_step_id",
            "unreachable_step",
            "invalid_session_parameter",
            "execute_step.unknown_memory_key",
            "action.unknown",
            "response.missing",
        ],
    )


def test_unresolved_next_and_missing_else(tmp_path: Path) -> None:
    check_diagnostics(
        tmp_path,
        MEMORY
        + """\
//- skills/card/skill.md
---
description: Replace a card.
---
:::ordered_block id=main
steps:
  - id: route
    noop: true
    «next_missing_else:next»:
      - if: session.card.reason
        then: «unresolved_next:dne»
  - id: done
    action: utter_done
    next: «unresolved_next:end»
:::
""",
    )


def test_call_link_action_and_execute(tmp_path: Path) -> None:
    check_diagnostics(
        tmp_path,
        MEMORY
        + """\
//- skills/card/skill.md
---
description: Replace a card.
---
:::ordered_block id=main
steps:
  - id: a
    call: «unresolved_call|referenced.invalid_target:othr»
  - id: b
    call: «self_skill_not_callable:card»
  - id: c
    action: «response.missing:utter_don»
  - id: d
    action: «action.unknown:listen»
  - id: e
    execute_tool: «unresolved_tool:lookup_card»
  - id: f
    execute_tool: lookup
    parameters:
      card: «execute_step.unknown_memory_key:session.other.secret»
      other: «invalid_session_parameter:session.card»
  - id: g
    link: «unresolved_link|referenced.invalid_target:nowhere»
:::
""",
    )


def test_hybrid_skill_blocks_are_internal(tmp_path: Path) -> None:
    check_diagnostics(
        tmp_path,
        MEMORY
        + """\
//- skills/card/skill.md
---
description: Replace a card.
---
Some prose makes this a hybrid skill; enter with @block.main.

:::ordered_block id=main
steps:
  - id: a
    call: «internal_not_callable:side»
:::

:::ordered_block id=side
steps:
  - id: b
    action: utter_done
:::
""",
    )


def test_skill_identity_rules(tmp_path: Path) -> None:
    check_diagnostics(
        tmp_path,
        """\
//- skills/project/skill.md
---
«reserved_id:name»: Project
description: Reserved.
---
Text.
//- skills/my-skill/skill.md
---
«id_not_identifier:description»: Hyphenated.
---
Text.
//- skills/nodesc/skill.md
«missing_description:---»
name: No description
---
Text.
""",
    )
