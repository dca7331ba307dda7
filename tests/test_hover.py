"""Hover: compact Markdown about the symbol under the cursor."""

from __future__ import annotations

from pathlib import Path

from inline_snapshot import snapshot

from mantle_lsp.ide.hover import hover
from mantle_lsp.model.project import Project
from support import render_hover, write_fixture


def check_hover(tmp_path: Path, fixture: str, html: bool = False) -> str:
    """Hover at the cursor, rendered (``support.render_hover``): the hovered range is
    exactly the mark labelled `h`."""
    fx = write_fixture(tmp_path, fixture)
    assert fx.cursor is not None
    proj = Project.load(fx.root)
    rel, offset = fx.cursor
    h = hover(proj, fx.root / rel, offset, html)
    assert h is not None, "no hover"
    [mk] = [m for m in fx.marks if m.label == "h"]
    assert (h.range.start, h.range.end) == (mk.start, mk.end)
    # locations are links to file URIs: the project's folder reads file:///project
    return render_hover(h, fx.files[rel]).replace(fx.root.as_uri(), "file:///project")


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
    assert check_hover(tmp_path, at("card", "$0«h:reason»")) == snapshot("""\
«reason»
**`card.reason`** — public field of skill `card` (reset when the skill starts a new run)

type `categorical` · values `lost`, `stolen`

llm_settable · collect-owned · pii

Why the card is replaced.

Declared in [skills/card/memory.yml:3](file:///project/skills/card/memory.yml#L3)

Written by 2 places:
- collect step ([skills/card/skill.md:11](file:///project/skills/card/skill.md#L11))
- tool `record` ([skills/card/tools.py:6](file:///project/skills/card/tools.py#L6))

Read in 5 places (and mentioned in 1 backticked name):
- placeholder ([skills/card/responses.yml:3](file:///project/skills/card/responses.yml#L3))
- condition ([skills/card/responses.yml:4](file:///project/skills/card/responses.yml#L4))
- `@memory` ([skills/card/skill.md:6](file:///project/skills/card/skill.md#L6))
- tool `record` ([skills/card/tools.py:7](file:///project/skills/card/tools.py#L7))
- condition ([skills/other/skill.md:4](file:///project/skills/other/skill.md#L4))

Validated by the hook `run_after_setting_reason`\
""")


def test_private_field_with_initial_value(tmp_path: Path) -> None:
    fixture = at("card", "attempts").replace(
        "Ask for the `reason`", "Ask for the `reason` (try @memory.card.$0«h:attempts»)"
    )
    assert check_hover(tmp_path, fixture) == snapshot("""\
«attempts»
**`card.attempts`** — private field of skill `card` (reset when the skill starts a new run)

type `int`

initial_value `0`

Declared in [skills/card/memory.yml:10](file:///project/skills/card/memory.yml#L10)

Read in 2 places:
- `@memory` ([skills/card/skill.md:6](file:///project/skills/card/skill.md#L6))
- condition ([skills/other/skill.md:4](file:///project/skills/other/skill.md#L4))\
""")


def test_project_field_on_its_declaration(tmp_path: Path) -> None:
    fixture = at("card", "reason").replace("authenticated:\n  type", "$0«h:authenticated»:\n  type")
    assert check_hover(tmp_path, fixture) == snapshot("""\
«authenticated»
**`project.authenticated`** — project field (lives for the whole session)

type `bool`

seed

Declared in [memory.yml:1](file:///project/memory.yml#L1)

Read in 1 place:
- condition ([agent.yml:7](file:///project/agent.yml#L7))\
""")


def test_bundled_and_unknown_and_system_fields(tmp_path: Path) -> None:
    assert check_hover(
        tmp_path / "a", at("default_completed", "$0«h:wants_to_continue»")
    ) == snapshot("""\
«wants_to_continue»
**`default_completed.wants_to_continue`** — public field of the bundled skill `default_completed`

type `bool`

the user wants to continue

Bundled with the engine\
""")
    assert check_hover(tmp_path / "b", at("card", "$0«h:reasn»")) == snapshot("""\
«reasn»
**`card.reasn`** — not declared in skill `card`\
""")
    system = at("system", "$0«h:pending_tool_confirmation»")
    assert check_hover(tmp_path / "c", system) == snapshot("""\
«pending_tool_confirmation»
**`system.pending_tool_confirmation`** — engine-reserved `system` field; authors cannot read it\
""")


def test_namespace_part_shows_the_skill(tmp_path: Path) -> None:
    assert check_hover(
        tmp_path, CARD.replace("session.{ns}.{entry}", "session.$0«h:card».reason")
    ) == snapshot("""\
«card»
**skill `card`** — hybrid (prose and ordered blocks)

Replace a lost or stolen card.

hidden

precondition `logged_in`

2 memory fields · 1 block · 2 tools

[skills/card/skill.md](file:///project/skills/card/skill.md)\
""")


def test_skill_kinds_and_bundled_skill(tmp_path: Path) -> None:
    fixture = at("card", "reason").replace("Offer help.", "Offer help, or @skill.$0«h:login».")
    assert check_hover(tmp_path / "a", fixture) == snapshot("""\
«login»
**skill `login`** — prose

Log in.

0 memory fields

[skills/login/skill.md](file:///project/skills/login/skill.md)\
""")
    fixture = at("card", "reason").replace(
        "Offer help.", "Offer help, or @skill.$0«h:default_completed»."
    )
    assert check_hover(tmp_path / "b", fixture) == snapshot("""\
«default_completed»
**skill `default_completed`** — bundled default skill

Asks whether the user wants anything else once a skill completes.

public fields `wants_to_continue`\
""")


def test_block_and_step_hovers(tmp_path: Path) -> None:
    fixture = at("card", "reason").replace(
        "Ask for the `reason`", "Run @block.$0«h:main», ask for the `reason`"
    )
    assert check_hover(tmp_path / "a", fixture) == snapshot("""\
«main»
**ordered block `main`** of skill `card`

3 steps: `ask` (collect), `store` (execute_tool), `done` (action)

[skills/card/skill.md:8](file:///project/skills/card/skill.md#L8)\
""")
    fixture = at("card", "reason").replace("next: store", "next: $0«h:store»")
    assert check_hover(tmp_path / "b", fixture) == snapshot("""\
«store»
**step `store`** (execute_tool) in block `main`

execute_tool `record`

next (implicit) `done`

[skills/card/skill.md:13](file:///project/skills/card/skill.md#L13)\
""")
    fixture = at("card", "reason").replace("  - id: ask", "  - id: $0«h:ask»")
    assert check_hover(tmp_path / "c", fixture) == snapshot("""\
«ask»
**step `ask`** (collect) in block `main`

collect `reason`

next `store`

[skills/card/skill.md:10](file:///project/skills/card/skill.md#L10)\
""")


def test_response_hover_lists_files_and_the_winner(tmp_path: Path) -> None:
    fixture = at("card", "reason").replace("action: utter_done", "action: $0«h:utter_done»")
    assert check_hover(tmp_path / "a", fixture) == snapshot("""\
«utter_done»
**response `utter_done`**

[responses.yml:2](file:///project/responses.yml#L2) — **wins**

text:
> All done, thank you for waiting.

[skills/card/responses.yml:6](file:///project/skills/card/responses.yml#L6) — overridden

text:
> Card part done.\
""")
    fixture = at("card", "reason").replace("  utter_reason:", "  $0«h:utter_reason»:")
    assert check_hover(tmp_path / "b", fixture) == snapshot("""\
«utter_reason»
**response `utter_reason`**

[skills/card/responses.yml:2](file:///project/skills/card/responses.yml#L2)

variant 1 — if `session.card.reason == 'lost'`:
> You said {reason}.

variant 2:
> Tell me why.\
""")


def test_tool_hovers(tmp_path: Path) -> None:
    fixture = at("card", "reason").replace("execute_tool: record", "execute_tool: $0«h:record»")
    assert check_hover(tmp_path / "a", fixture) == snapshot("""\
«record»
**tool `record`** — tool of skill `card`

Record the reason.

async `record(reason: str, count: int)`

[skills/card/tools.py:5](file:///project/skills/card/tools.py#L5)\
""")
    fixture = at("card", "reason").replace(
        "async def run_after_setting_reason", "async def $0«h:run_after_setting_reason»"
    )
    assert check_hover(tmp_path / "b", fixture) == snapshot("""\
«run_after_setting_reason»
**tool `run_after_setting_reason`** — memory validation hook for `card.reason`

Check the reason.

async `run_after_setting_reason()`

[skills/card/tools.py:11](file:///project/skills/card/tools.py#L11)\
""")
    fixture = at("card", "reason").replace("Offer help.", "Use @tool.$0«h:cannot_help».")
    assert check_hover(tmp_path / "c", fixture) == snapshot("""\
«cannot_help»
**tool `cannot_help`** — framework tool

Tell the user the request cannot be handled.\
""")


def test_precondition_hover(tmp_path: Path) -> None:
    fixture = at("card", "reason").replace(
        "precondition: logged_in", "precondition: $0«h:logged_in»"
    )
    assert check_hover(tmp_path, fixture) == snapshot("""\
«logged_in»
**precondition `logged_in`**

satisfied_when `session.project.authenticated`

resolve_with skill `login`

required by `card`

[agent.yml:6](file:///project/agent.yml#L6)\
""")


def test_no_hover_on_plain_text(tmp_path: Path) -> None:
    fx = write_fixture(tmp_path, at("card", "reason").replace("Offer help.", "Offer $0help."))
    assert fx.cursor is not None
    proj = Project.load(fx.root)
    assert hover(proj, fx.root / fx.cursor[0], fx.cursor[1]) is None  # not even an empty one


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
    assert check_hover(tmp_path / "a", fixture) == snapshot("""\
«main»
**model group `main`**

[integrations.yml:2](file:///project/integrations.yml#L2)\
""")
    fixture = fixture.replace("$0«h:main»", "main").replace(
        "mcp/banking:get_balance", "mcp/$0«h:banking»:get_balance"
    )
    assert check_hover(tmp_path / "b", fixture) == snapshot("""\
«banking»
**MCP server `banking`**

[integrations.yml:8](file:///project/integrations.yml#L8)\
""")


def test_enum_value_hover_lists_the_values(tmp_path: Path) -> None:
    fixture = at("card", "reason").replace("== 'lost'\nOffer", "== $0«h:'lost'»\nOffer")
    assert check_hover(tmp_path, fixture) == snapshot("""\
«'lost'»
**`'lost'`** — a value of `card.reason` (categorical)

values `lost`, `stolen`\
""")
    fixture = at("card", "reason").replace("== 'lost'\nOffer", "== $0«h:'lsot'»\nOffer")
    assert check_hover(tmp_path / "b", fixture) == snapshot("""\
«'lsot'»
**`'lsot'`** — a value of `card.reason` (categorical)

values `lost`, `stolen`

`lsot` is not one of them: the comparison never holds\
""")


def test_frontmatter_key_hover(tmp_path: Path) -> None:
    fixture = at("card", "reason").replace("hidden: true", "$0«h:hidden»: true")
    assert check_hover(tmp_path, fixture) == snapshot("""\
«hidden»
**`hidden`** — frontmatter key

`true`: never offered by routing; reachable through `call`/`link`/`@skill`.\
""")
    nested = at("card", "reason").replace(
        "hidden: true",
        "tool_constraints:\n  - record:\n      $0«h:requires»: session.card.reason != None",
    )
    assert check_hover(tmp_path / "b", nested) == snapshot("""\
«requires»
**`requires`** — key of `tool_constraints`

A condition: while it does not hold, the tool is hidden from the model (and an `execute_tool` step of it waits).\
""")


def test_a_long_response_text_is_shown_in_full_folded(tmp_path: Path) -> None:
    long = "First line of a long answer.\\n\\nSecond paragraph " + "with many words " * 8
    fixture = (
        at("card", "reason")
        .replace("    - text: Tell me why.", f'    - text: "{long}"')
        .replace("  $0utter_reason:", "  utter_reason:")
        .replace("  utter_reason:", "  $0«h:utter_reason»:")
    )
    assert check_hover(tmp_path, fixture, html=True) == snapshot("""\
«utter_reason»
**response `utter_reason`**

[skills/card/responses.yml:2](file:///project/skills/card/responses.yml#L2)

variant 1 — if `session.card.reason == 'lost'`:
> You said {reason}.

variant 2:
<details><summary>First line of a long answer. Second paragraph with many wor…</summary>

> First line of a long answer.
>
> Second paragraph with many words with many words with many words with many words with many words with many words with many words with many words

</details>\
""")


def test_without_html_a_long_response_text_is_not_folded(tmp_path: Path) -> None:
    long = "First line of a long answer. " + "More words. " * 12
    fixture = (
        at("card", "reason")
        .replace("    - text: Tell me why.", f'    - text: "{long}"')
        .replace("  utter_reason:", "  $0«h:utter_reason»:")
    )
    md = check_hover(tmp_path, fixture)
    assert "<details>" not in md
    assert md.endswith("variant 2:\n> " + long.strip())


def test_a_very_long_list_of_places_ends_with_a_count(tmp_path: Path) -> None:
    lines = "".join(f"if: session.card.reason == 'lost'\nHelp {i}.\n\n" for i in range(45))
    fixture = at("card", "reason").replace("Offer help.\n", "Offer help.\n\n" + lines)
    fixture = fixture.replace(
        "    reason:\n      type: categorical", "    $0«h:reason»:\n      type: categorical"
    )
    md = check_hover(tmp_path, fixture)
    # 5 places of the fixture and the 45 conditions: 40 listed, then the count
    assert "Read in 50 places (and mentioned in 1 backticked name):" in md
    assert md.count("\n- ") == 2 + 40 + 1  # the 2 writers, 40 readers, the count
    assert md.endswith(
        "- … and 10 more (Find All References lists them)\n\n"
        "Validated by the hook `run_after_setting_reason`"
    )
