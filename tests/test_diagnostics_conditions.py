"""Conditions at every site: syntax and readability, with exact ranges in the file."""

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
      type: categorical
      enum_values: [lost, stolen]
  private:
    secret:
      type: text
//- skills/other/memory.yml
schema:
  public:
    shared:
      type: bool
  private:
    hidden_thing:
      type: bool
//- skills/other/skill.md
---
description: Another skill.
---
Do other things.
"""


def test_valid_conditions_at_every_site_are_silent(tmp_path: Path) -> None:
    check_clean(
        tmp_path,
        MEMORY
        + """\
//- skills/card/tools.py
from rasa.mantle.tools.decorator import ToolContext, tool


@tool(description="Lock.")
async def lock(context: ToolContext = None):
    return None
//- skills/card/responses.yml
responses:
  utter_done:
    - text: Done.
      condition: "session.card.reason == 'lost' and session.project.authenticated"
    - text: Finished.
//- skills/card/skill.md
---
description: Replace a card.
tool_constraints:
  - lock:
      requires: "session.card.secret and session.other.shared"
utter:
  - utter_done:
      when: session.default_completed.wants_to_continue == True
---
Help with the card.

if: session.card.reason == 'stolen' or not session.project.authenticated
Warn about fraud.

:::ordered_block id=main
steps:
  - id: ask
    instructions: Ask why.
    complete_when: session.card.reason
    next:
      - if: "session.card.reason == 'lost'"
        then: done
      - else: done
  - id: done
    action: utter_done
complete_when: >
  session.card.reason
  and session.other.shared
:::
""",
        silent=[
            "prose.unknown_memory_key",
            "invalid_if_expression",
            "response.invalid_condition",
            "response.unknown_memory_key",
            "lsp.condition.invalid",
            "lsp.condition.unknown_memory_key",
            "invalid_utter",
        ],
    )


def test_prose_if_unknown_key_private_field_and_system(tmp_path: Path) -> None:
    got = check_diagnostics(
        tmp_path,
        MEMORY
        + """\
//- skills/card/skill.md
---
description: Replace a card.
---
if: «prose.unknown_memory_key:session.card.reasn» == 'lost'
Typo in the entry.

if: «prose.unknown_memory_key:session.other.hidden_thing»
Another skill's private field.

if: «prose.unknown_memory_key:session.system.language» == 'en'
Engine-internal namespace.

if: «prose.unknown_memory_key:session.crad.reason»
Unknown namespace.
""",
    )
    messages = [g[5] for g in got]
    assert any("did you mean `reason`" in m for m in messages)
    assert any("a private field of skill `other`" in m for m in messages)
    assert any("engine-internal" in m for m in messages)
    assert any("there is no skill `crad`" in m and "did you mean `card`" in m for m in messages)


def test_prose_if_syntax_errors(tmp_path: Path) -> None:
    check_diagnostics(
        tmp_path,
        MEMORY
        + """\
//- skills/card/skill.md
---
description: Replace a card.
---
if: session.card.reason «invalid_if_expression:is» None
Python identity test.

if: session.card.reason == 'lost' «invalid_if_expression:&&» session.project.authenticated
C-style operator.

if: «invalid_if_expression:session.card» == 'x'
Two segments.
""",
    )


def test_sites_the_engine_never_checks_are_warnings(tmp_path: Path) -> None:
    check_diagnostics(
        tmp_path,
        MEMORY
        + """\
//- skills/card/tools.py
from rasa.mantle.tools.decorator import ToolContext, tool


@tool(description="Lock.")
async def lock(context: ToolContext = None):
    return None
//- skills/card/responses.yml
responses:
  utter_done:
    - text: Done.
//- skills/card/skill.md
---
description: Replace a card.
tool_constraints:
  - lock:
      requires: "«condition.unknown_memory_key:session.card.locked»"
---
Help.

:::ordered_block id=main
steps:
  - id: ask
    instructions: Ask why.
    complete_when: «condition.unknown_memory_key:session.card.answered»
    next:
      - if: "session.card.reason «condition.invalid:===» 'lost'"
        then: done
      - else: done
  - id: done
    action: utter_done
complete_when: «condition.unknown_memory_key:session.project.finished»
:::
""",
        severities={
            "condition.unknown_memory_key": "warning",
            "condition.invalid": "warning",
        },
    )


def test_condition_inside_folded_and_quoted_scalars_maps_to_file(tmp_path: Path) -> None:
    check_diagnostics(
        tmp_path,
        MEMORY
        + """\
//- skills/card/responses.yml
responses:
  utter_done:
    - text: Done.
      condition: 'session.card.reason == "lost" or «response.unknown_memory_key:session.card.nope»'
    - text: Finished.
//- skills/card/skill.md
---
description: Replace a card.
---
Help.

:::ordered_block id=main
steps:
  - id: ask
    instructions: Ask why.
    complete_when: >
      session.card.reason
      and «condition.unknown_memory_key:session.card.missing»
  - id: done
    action: utter_done
:::
""",
    )


def test_utter_when_and_skill_complete_when_syntax_are_load_errors(tmp_path: Path) -> None:
    check_diagnostics(
        tmp_path,
        MEMORY
        + """\
//- skills/card/responses.yml
responses:
  utter_done:
    - text: Done.
//- skills/card/skill.md
---
description: Replace a card.
utter:
  - utter_done:
      when: "session.card.reason «invalid_utter:in» ('a', 'b')"
complete_when:
  condition: "«complete_when.invalid:-1» < session.card.reason"
---
Help.
""",
        severities={"invalid_utter": "error", "complete_when.invalid": "error"},
    )


def test_root_responses_read_only_public_and_project(tmp_path: Path) -> None:
    check_diagnostics(
        tmp_path,
        MEMORY
        + """\
//- responses.yml
responses:
  utter_x:
    - text: A.
      condition: "session.other.shared and «response.unknown_memory_key:session.other.hidden_thing»"
    - text: B.
//- skills/card/skill.md
---
description: Replace a card.
---
Help.
""",
    )


def test_satisfied_when_syntax_and_unknown_resolver(tmp_path: Path) -> None:
    check_diagnostics(
        tmp_path,
        MEMORY
        + """\
//- agent.yml
agent:
  persona: Test.
orchestrator:
  model_group: main
  preconditions:
    logged_in:
      satisfied_when: "session.project.authenticated «invalid_satisfied_when:=» True"
      resolve_with: «unknown_resolver:login»
//- skills/card/skill.md
---
description: Replace a card.
precondition: logged_in
---
Help.
""",
    )
