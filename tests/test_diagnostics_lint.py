"""Legal-but-wrong: unreachable names, unused fields, unreachable steps, old tool names."""

from __future__ import annotations

from pathlib import Path

from support import check_clean, check_diagnostics


def test_unreachable_field_names(tmp_path: Path) -> None:
    check_diagnostics(
        tmp_path,
        """\
//- skills/card/memory.yml
schema:
  public:
    «unreachable_name:from»:
      type: text
    «unreachable_name:card-id»:
      type: text
    «unreachable_name:café»:
      type: text
//- skills/card/skill.md
---
description: Card.
---
Read @memory.card.from, @memory.card.card-id and @memory.card.café.
""",
    )


def test_unused_field_is_a_hint_and_references_silence_it(tmp_path: Path) -> None:
    check_diagnostics(
        tmp_path,
        """\
//- memory.yml
«unused_field:tier»:
  type: text
seeded:
  type: text
  seed: true
//- skills/card/memory.yml
schema:
  public:
    «unused_field:note»:
      type: text
    used:
      type: text
    settable:
      type: text
      llm_settable: true
      description: Set by the model.
//- skills/card/skill.md
---
description: Card.
---
The `note` field is only mentioned in backticks, which does not count.
Show @memory.card.used.
""",
        severities={"unused_field": "hint"},
    )


def test_unreachable_steps(tmp_path: Path) -> None:
    check_diagnostics(
        tmp_path,
        """\
//- skills/card/responses.yml
responses:
  utter_done:
    - text: Done.
//- skills/card/skill.md
---
description: Card.
---
:::ordered_block id=main
steps:
  - id: start
    noop: true
    next:
      - if: session.card.x
        then: done
      - else: END
  - id: «unreachable_step:orphan»
    action: utter_done
  - id: done
    action: utter_done
    next: END
  - id: «unreachable_step:after_end»
    action: utter_done
  - id: END
:::
//- skills/card/memory.yml
schema:
  public:
    x:
      type: bool
""",
    )


def test_fallthrough_reaches_every_step(tmp_path: Path) -> None:
    check_clean(
        tmp_path,
        """\
//- skills/card/responses.yml
responses:
  utter_done:
    - text: Done.
//- skills/card/skill.md
---
description: Card.
---
:::ordered_block id=main
steps:
  - id: a
    action: utter_done
  - id: b
    action: utter_done
  - id: c
    action: utter_done
:::
""",
    )


def test_maestro_hook_names_and_shared_set_prefix(tmp_path: Path) -> None:
    check_diagnostics(
        tmp_path,
        """\
//- skills/card/memory.yml
schema:
  public:
    reason:
      type: text
      llm_settable: true
      description: Why.
//- skills/card/tools.py
from rasa.mantle.tools.decorator import tool


@tool(description="Old style.")
async def «legacy.syntax:set_reason»(context=None):
    return None
//- tools/shared.py
from rasa.mantle.tools.decorator import tool


@tool(description="Dropped.")
async def «reserved_prefix:set_everything»(context=None):
    return None
//- skills/card/skill.md
---
description: Card.
---
Use @tool.set_reason. Read @memory.card.reason.
""",
    )
