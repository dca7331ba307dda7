"""Response placeholders, set: buttons, response references, and tool modules."""

from __future__ import annotations

from pathlib import Path

from support import check_clean, check_diagnostics

BASE = """\
//- memory.yml
authenticated:
  type: bool
//- skills/card/memory.yml
schema:
  public:
    shipping:
      type: categorical
      enum_values: [rush, standard]
    count:
      type: int
  private:
    note:
      type: text
//- skills/other/memory.yml
schema:
  public:
    shared:
      type: text
//- skills/other/skill.md
---
description: Other.
---
Other.
"""


def test_valid_responses_and_tools_are_silent(tmp_path: Path) -> None:
    check_clean(
        tmp_path,
        BASE
        + """\
//- skills/card/responses.yml
responses:
  utter_ship:
    - text: |
        Ship {session.card.shipping} for {note}, shared {session.other.shared}.
      buttons:
        - title: Rush
          payload: set:session.card.shipping=rush
        - title: Verified
          payload: set:session.project.authenticated=true
        - title: "3"
          payload: set:session.card.count=3
//- skills/card/tools.py
from rasa.mantle.tools.decorator import ToolContext, tool


@tool(description="Ship it.")
async def ship(context: ToolContext = None):
    context.memory.set("shipping", "rush")
    context.memory.set("project.authenticated", True)
    context.memory.set("card.note", "x")
    context.memory.get("other.shared")
    context.memory.get("count")
    return None
//- skills/card/skill.md
---
description: Replace a card.
---
Use @tool.ship.
""",
        silent=[
            "unknown_placeholder",
            "unqualified_placeholder",
            "invalid_button_payload",
            "invalid_set_memory_value",
            "not_writable_memory_key",
            "response.unknown_memory_key",
            "mantle.validation.tools.undeclared_memory_write",
            "lsp.tools.undeclared_memory_write",
            "unknown_memory_read",
            "registry.invalid_variant",
            "empty_body",
        ],
    )


def test_placeholders_and_buttons(tmp_path: Path) -> None:
    check_diagnostics(
        tmp_path,
        BASE
        + """\
//- skills/card/responses.yml
responses:
  utter_ship:
    - text: Ship «unknown_placeholder:{session.card.shiping}» and «unknown_placeholder:{nothing}».
      buttons:
        - title: Fast
          payload: set:session.card.shipping=«invalid_set_memory_value:fast»
        - title: Other
          payload: set:«not_writable_memory_key:session.other.shared»=x
        - title: Bad
          payload: «invalid_button_payload:set:session.card.shipping»
        - title: Count
          payload: set:session.card.count=«invalid_set_memory_value:many»
//- skills/card/skill.md
---
description: Replace a card.
---
Help.
""",
        severities={"unknown_placeholder": "warning"},
    )


def test_response_references(tmp_path: Path) -> None:
    check_diagnostics(
        tmp_path,
        BASE
        + """\
//- skills/card/tools.py
from rasa.mantle.tools.decorator import ToolContext, tool


@tool(description="Ship it.")
async def ship(context: ToolContext = None):
    return None
//- skills/card/skill.md
---
description: Replace a card.
tool_constraints:
  - ship:
      on_success: «unknown_on_success_or_failure:utter_shipped»
      requires_confirmation:
        enabled: true
        utter_for_confirmation: «unknown_requires_confirmation_response:utter_sure»
utter:
  - «verbatim_trigger.unknown_response:utter_hello»:
      on: activate
---
Help.
""",
    )


def test_tool_memory_writes_and_reads(tmp_path: Path) -> None:
    check_diagnostics(
        tmp_path,
        BASE
        + """\
//- skills/card/tools.py
from rasa.mantle.tools.decorator import ToolContext, tool


@tool(description="Ship it.")
async def ship(context: ToolContext = None):
    context.memory.set(«validation.tools.undeclared_memory_write:"shiping"», "rush")
    context.memory.set(«validation.tools.undeclared_memory_write:"other.shared"», "x")
    context.memory.set(«validation.tools.undeclared_memory_write:"system.flag"», 1)
    context.memory.get(«unknown_memory_read:"other.note"»)
    value = «memory_manager_bypass:context.memory._memory»
    return value


def helper(ctx):
    mem = ctx
    mem.memory.set("shipping", "rush")
    return None


class Wrapper:
    def save(self):
        self.context.memory.set(«lsp.tools.undeclared_memory_write:"typo"», 1)
//- skills/card/skill.md
---
description: Replace a card.
---
Use @tool.ship.
""",
    )
