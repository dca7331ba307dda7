"""Engine checks beyond memory: entry blocks, bare mentions, tool names, import_tools,
referenced responses, button sources, precondition chains, default-skill overrides."""

from __future__ import annotations

from pathlib import Path

from support import check_clean, check_diagnostics

RESP = """\
//- skills/card/responses.yml
responses:
  utter_done:
    - text: Done.
"""


def test_blocks_only_entry_structure(tmp_path: Path) -> None:
    check_diagnostics(
        tmp_path,
        RESP
        + """\
//- skills/card/skill.md
---
description: Blocks only.
---
:::ordered_block id=«multiple_entry_blocks:start»
steps:
  - id: a
    call: middle
:::

:::ordered_block id=middle
steps:
  - id: b
    action: utter_done
:::

:::ordered_block id=«multiple_entry_blocks:other»
steps:
  - id: c
    action: utter_done
:::
//- skills/loop/skill.md
---
description: Every block is a target.
---
«no_entry_block::::ordered_block id=a»
steps:
  - id: x
    link: b
:::

:::ordered_block id=b
steps:
  - id: y
    link: a
:::
""",
    )


def test_unreachable_blocks_and_a_single_entry(tmp_path: Path) -> None:
    check_clean(
        tmp_path / "ok",
        RESP
        + """\
//- skills/card/skill.md
---
description: Blocks only.
---
:::ordered_block id=start
steps:
  - id: a
    call: card__middle
:::

:::ordered_block id=middle
steps:
  - id: b
    action: utter_done
:::
""",
    )
    # island and sea link to each other, but the entry block never reaches them
    check_diagnostics(
        tmp_path / "bad",
        RESP
        + """\
//- skills/card/skill.md
---
description: Blocks only.
---
:::ordered_block id=start
steps:
  - id: a
    call: middle
:::

:::ordered_block id=middle
steps:
  - id: b
    action: utter_done
:::

:::ordered_block id=«unreachable_ordered_block:island»
steps:
  - id: c
    link: sea
:::

:::ordered_block id=«unreachable_ordered_block:sea»
steps:
  - id: d
    link: island
:::
""",
    )


def test_bare_skill_mention_once_per_id(tmp_path: Path) -> None:
    check_diagnostics(
        tmp_path,
        """\
//- skills/billing/skill.md
---
description: Billing.
---
Billing help.
//- skills/card/skill.md
---
description: Card.
---
If the bill is wrong, hand over to «bare_skill_mention:billing» — billing again is not repeated.
Delegating with @skill.billing is fine.
""",
        severities={"bare_skill_mention": "warning"},
    )


def test_tool_names_reserved_and_validation_tools(tmp_path: Path) -> None:
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
    note:
      type: text
//- skills/card/tools.py
from rasa.mantle.tools.decorator import tool


@tool(description="Validate the reason.")
async def run_after_setting_reason(context=None):
    return None


@tool(description="Never runs: note is not settable.")
async def «invalid_memory_validation_tool:run_after_setting_note»(context=None):
    return None


@tool(description="Clashes with the framework.")
async def «reserved_name:cancel»(context=None):
    return None
//- tools/shared.py
from rasa.mantle.tools.decorator import tool


@tool(description="Shared validation tools never run.")
async def «invalid_memory_validation_tool:run_after_setting_reason»(context=None):
    return None
//- skills/card/skill.md
---
description: Card.
---
Help.
""",
    )


def test_import_tools_mcp_collisions(tmp_path: Path) -> None:
    check_diagnostics(
        tmp_path,
        """\
//- integrations.yml
model_groups:
  - id: main
    models:
      - provider: openai
        model: gpt-4o
        api_key: ${OPENAI_API_KEY}
mcp_servers:
  - name: bank
    url: http://localhost:9000
  - name: other
    url: http://localhost:9001
//- skills/card/tools.py
from rasa.mantle.tools.decorator import tool


@tool(description="Local.")
async def balance(context=None):
    return None
//- skills/card/skill.md
---
description: Card.
import_tools:
  - mcp/bank:lookup
  - «invalid_shared_tool:mcp/other:lookup»
  - «invalid_shared_tool:mcp/bank:balance»
  - «invalid_shared_tool:mcp/bank:cancel»
  - «invalid_shared_tool:mcp/nowhere:x»
---
Use @tool.lookup.
""",
    )


def test_blank_referenced_responses(tmp_path: Path) -> None:
    check_diagnostics(
        tmp_path,
        """\
//- skills/card/responses.yml
responses:
  utter_blank:
    - text: «response.empty_body:"  "»
//- skills/card/tools.py
from rasa.mantle.tools.decorator import tool


@tool(description="Ship.")
async def ship(context=None):
    return None
//- skills/card/skill.md
---
description: Card.
tool_constraints:
  - ship:
      on_success: «response.empty_body:utter_blank»
utter:
  - «response.empty_body:utter_blank»:
      on: activate
---
Help.
""",
    )


def test_button_sources(tmp_path: Path) -> None:
    check_diagnostics(
        tmp_path,
        """\
//- integrations.yml
model_groups:
  - id: main
    models:
      - provider: openai
        model: gpt-4o
        api_key: ${OPENAI_API_KEY}
mcp_servers:
  - name: bank
    url: http://localhost:9000
//- skills/card/tools.py
from rasa.mantle.tools.decorator import tool


@tool(description="Buttons.")
async def card_buttons(context=None):
    return None


@tool(description="Confirmed.")
async def risky(context=None):
    return None
//- skills/card/responses.yml
responses:
  utter_pick:
    - text: Pick one.
      buttons:
        source: card_buttons
  utter_bad:
    - text: Pick.
      buttons:
        source: «unknown_button_source_tool:missing_tool»
  utter_mcp:
    - text: Pick.
      buttons:
        source: «mcp_button_source_tool:lookup»
  utter_confirm:
    - text: Pick.
      buttons:
        source: «confirming_button_source_tool:risky»
//- responses.yml
responses:
  utter_orphan:
    - text: Pick.
      buttons:
        source: «unbound_button_source:card_buttons»
//- skills/card/skill.md
---
description: Card.
import_tools:
  - mcp/bank:lookup
tool_constraints:
  - risky:
      requires_confirmation:
        enabled: true
---
Help.
""",
    )


def test_precondition_nested_and_cycle(tmp_path: Path) -> None:
    check_diagnostics(
        tmp_path,
        """\
//- agent.yml
agent:
  persona: Test.
orchestrator:
  model_group: main
  preconditions:
    verified:
      satisfied_when: session.project.ok
      resolve_with: login
    fresh:
      satisfied_when: session.project.ok
      resolve_with: card
//- memory.yml
ok:
  type: bool
//- skills/login/skill.md
---
description: Log in.
precondition: «nested_resolver|precondition.cycle:fresh»
---
Log in.
//- skills/card/skill.md
---
description: Card.
precondition: «nested_resolver|precondition.cycle:verified»
---
Help.
""",
    )


def test_default_skill_override_rules(tmp_path: Path) -> None:
    check_diagnostics(
        tmp_path,
        """\
//- skills/default_unsupported_request_handler/skill.md
«unsupported_request_handler.missing_request_type:---»
description: Decline politely.
---
Decline.
//- skills/default_completed/memory.yml
schema:
  public:
    wants_to_continue:
      type: bool
      initial_value: false
//- skills/default_completed/responses.yml
responses:
  utter_ask_more:
    - text: Anything else?
//- skills/default_completed/skill.md
---
description: Ask for more.
---
:::ordered_block id=main
steps:
  - id: ask
    collect: «default_skill_collect_initial_value:wants_to_continue»
    utterance: utter_ask_more
:::
""",
        severities={"default_skill_collect_initial_value": "warning"},
    )
