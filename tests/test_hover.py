"""Hover: compact Markdown about the symbol under the cursor."""

from __future__ import annotations

from pathlib import Path

from mantle_lsp.ide.hover import hover
from mantle_lsp.model.project import Project
from support import write_fixture


def check_hover(tmp_path: Path, fixture: str, *expected: str, absent: tuple[str, ...] = ()) -> str:
    """Hover at the cursor: the range is the mark labelled `h` and the Markdown contains
    every ``expected`` substring and none of ``absent``. Returns the Markdown."""
    fx = write_fixture(tmp_path, fixture)
    assert fx.cursor is not None
    proj = Project.load(fx.root)
    rel, offset = fx.cursor
    h = hover(proj, fx.root / rel, offset)
    assert h is not None, "no hover"
    [mk] = [m for m in fx.marks if m.label == "h"]
    assert (h.range.start, h.range.end) == (mk.start, mk.end)
    for s in expected:
        assert s in h.markdown, f"{s!r} not in:\n{h.markdown}"
    for s in absent:
        assert s not in h.markdown, f"{s!r} in:\n{h.markdown}"
    return h.markdown


CARD = """\
//- memory.yml
authenticated:
  type: bool
  seed: true
//- skills/card/memory.yml
schema:
  public:
    reason:
      type: categorical
      enum_values: [lost, stolen]
      llm_settable: true
      pii: true
      description: Why the card is replaced.
  private:
    attempts:
      type: int
      initial_value: 0
//- skills/card/tools.py
from rasa.mantle.tools.decorator import ToolContext, tool


@tool(description="Record the reason.")
async def record(reason: str, count: int, context: ToolContext = None):
    context.memory.set("reason", reason)
    return context.memory.get("card.reason")


@tool(description="Check the reason.")
async def run_after_setting_reason(context: ToolContext = None):
    return None
//- skills/card/responses.yml
responses:
  utter_reason:
    - text: "You said {reason}."
      condition: session.card.reason == 'lost'
    - text: Tell me why.
  utter_done:
    - text: Card part done.
//- responses.yml
responses:
  utter_done:
    - text: All done, thank you for waiting.
//- skills/card/skill.md
---
description: Replace a lost or stolen card.
hidden: true
precondition: logged_in
---
Ask for the `reason` with @memory.card.reason.

:::ordered_block id=main
steps:
  - id: ask
    collect: reason
    next: store
  - id: store
    execute_tool: record
  - id: done
    action: utter_done
:::
//- agent.yml
agent:
  persona: Careful.
orchestrator:
  model_group: main
  preconditions:
    logged_in:
      satisfied_when: session.project.authenticated
      resolve_with: login
//- skills/login/skill.md
---
description: Log in.
---
Ask for credentials.
//- skills/other/skill.md
---
description: Another skill.
---
if: session.{ns}.{entry} == 'lost'
Offer help.
"""


def at(ns: str, entry: str) -> str:
    return CARD.replace("{ns}", ns).replace("{entry}", entry)


def test_field_hover_from_another_skill(tmp_path: Path) -> None:
    check_hover(
        tmp_path,
        at("card", "$0«h:reason»"),
        "**`card.reason`** — public field of skill `card`",
        "type `categorical` · values `lost`, `stolen`",
        "llm_settable · collect-owned · pii",
        "Why the card is replaced.",
        "Declared in `skills/card/memory.yml:3`",
        "tool `record` (`skills/card/tools.py:6`)",
        "collect step (`skills/card/skill.md:11`)",
        "Read in 5 places (and mentioned in 1 backticked name)",
        "Validated by the hook `run_after_setting_reason`",
    )


def test_private_field_with_initial_value(tmp_path: Path) -> None:
    fixture = at("card", "attempts").replace(
        "Ask for the `reason`", "Ask for the `reason` (try @memory.card.$0«h:attempts»)"
    )
    check_hover(
        tmp_path,
        fixture,
        "private field of skill `card`",
        "type `int`",
        "initial_value `0`",
        "Read in 2 places",
        absent=("llm_settable", "collect-owned", "Written by", "hook"),
    )


def test_project_field_on_its_declaration(tmp_path: Path) -> None:
    fixture = at("card", "reason").replace("authenticated:\n  type", "$0«h:authenticated»:\n  type")
    check_hover(
        tmp_path,
        fixture,
        "**`project.authenticated`** — project field",
        "seed",
        "Declared in `memory.yml:1`",
        "Read in 1 place",
    )


def test_bundled_and_unknown_and_system_fields(tmp_path: Path) -> None:
    check_hover(
        tmp_path / "a",
        at("default_completed", "$0«h:wants_to_continue»"),
        "public field of the bundled skill `default_completed`",
        "type `bool`",
        "Bundled with the engine",
    )
    check_hover(tmp_path / "b", at("card", "$0«h:reasn»"), "not declared in skill `card`")
    check_hover(tmp_path / "c", at("system", "$0«h:pending_tool_confirmation»"), "engine-reserved")


def test_namespace_part_shows_the_skill(tmp_path: Path) -> None:
    check_hover(
        tmp_path,
        CARD.replace("session.{ns}.{entry}", "session.$0«h:card».reason"),
        "**skill `card`** — hybrid (prose and ordered blocks)",
        "Replace a lost or stolen card.",
        "hidden",
        "precondition `logged_in`",
        "2 memory fields · 1 block · 2 tools",
        "`skills/card/skill.md`",
    )


def test_skill_kinds_and_bundled_skill(tmp_path: Path) -> None:
    fixture = at("card", "reason").replace("Offer help.", "Offer help, or @skill.$0«h:login».")
    check_hover(tmp_path / "a", fixture, "**skill `login`** — prose", "0 memory fields")
    fixture = at("card", "reason").replace(
        "Offer help.", "Offer help, or @skill.$0«h:default_completed»."
    )
    check_hover(tmp_path / "b", fixture, "bundled default skill", "`wants_to_continue`")


def test_block_and_step_hovers(tmp_path: Path) -> None:
    fixture = at("card", "reason").replace(
        "Ask for the `reason`", "Run @block.$0«h:main», ask for the `reason`"
    )
    check_hover(
        tmp_path / "a",
        fixture,
        "**ordered block `main`** of skill `card`",
        "3 steps: `ask` (collect), `store` (execute_tool), `done` (action)",
    )
    fixture = at("card", "reason").replace("next: store", "next: $0«h:store»")
    check_hover(
        tmp_path / "b",
        fixture,
        "**step `store`** (execute_tool) in block `main`",
        "execute_tool `record`",
        "next (implicit) `done`",
    )
    fixture = at("card", "reason").replace("  - id: ask", "  - id: $0«h:ask»")
    check_hover(tmp_path / "c", fixture, "**step `ask`** (collect)", "next `store`")


def test_response_hover_lists_files_and_the_winner(tmp_path: Path) -> None:
    fixture = at("card", "reason").replace("action: utter_done", "action: $0«h:utter_done»")
    md = check_hover(
        tmp_path / "a",
        fixture,
        "**response `utter_done`**",
        "`responses.yml:2` — **wins**",
        '- "All done, thank you for waiting."',
        "`skills/card/responses.yml:6` — overridden",
        '- "Card part done."',
    )
    assert md.index("responses.yml:2") < md.index("skills/card/responses.yml:6")
    fixture = at("card", "reason").replace("  utter_reason:", "  $0«h:utter_reason»:")
    check_hover(
        tmp_path / "b",
        fixture,
        "`skills/card/responses.yml:2`",
        "- \"You said {reason}.\" — if `session.card.reason == 'lost'`",
        '- "Tell me why."',
        absent=("wins",),
    )


def test_tool_hovers(tmp_path: Path) -> None:
    fixture = at("card", "reason").replace("execute_tool: record", "execute_tool: $0«h:record»")
    check_hover(
        tmp_path / "a",
        fixture,
        "**tool `record`** — tool of skill `card`",
        "Record the reason.",
        "async `record(reason, count)`",
        "`skills/card/tools.py:5`",
    )
    fixture = at("card", "reason").replace(
        "async def run_after_setting_reason", "async def $0«h:run_after_setting_reason»"
    )
    check_hover(tmp_path / "b", fixture, "memory validation hook for `card.reason`")
    fixture = at("card", "reason").replace("Offer help.", "Use @tool.$0«h:cannot_help».")
    check_hover(tmp_path / "c", fixture, "framework tool", "cannot be handled")


def test_precondition_hover(tmp_path: Path) -> None:
    fixture = at("card", "reason").replace(
        "precondition: logged_in", "precondition: $0«h:logged_in»"
    )
    check_hover(
        tmp_path,
        fixture,
        "**precondition `logged_in`**",
        "satisfied_when `session.project.authenticated`",
        "resolve_with skill `login`",
        "required by `card`",
        "`agent.yml:6`",
    )


def test_no_hover_on_plain_text(tmp_path: Path) -> None:
    fx = write_fixture(tmp_path, at("card", "reason").replace("Offer help.", "Offer $0help."))
    assert fx.cursor is not None
    proj = Project.load(fx.root)
    assert hover(proj, fx.root / fx.cursor[0], fx.cursor[1]) is None


def test_model_group_and_mcp_server_hovers(tmp_path: Path) -> None:
    fixture = """\
//- agent.yml
agent:
  persona: Careful.
orchestrator:
  model_group: $0«h:main»
//- integrations.yml
model_groups:
  - id: main
    models:
      - provider: openai
        model: gpt-4o
        api_key: ${OPENAI_API_KEY}
mcp_servers:
  - name: banking
    url: http://localhost:8000
//- skills/card/skill.md
---
description: Replace a card.
import_tools:
  - mcp/banking:get_balance
---
Check the balance.
"""
    check_hover(tmp_path / "a", fixture, "**model group `main`**", "`integrations.yml:2`")
    fixture = fixture.replace("$0«h:main»", "main").replace(
        "mcp/banking:get_balance", "mcp/$0«h:banking»:get_balance"
    )
    check_hover(tmp_path / "b", fixture, "**MCP server `banking`**", "`integrations.yml:8`")
