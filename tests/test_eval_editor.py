"""The editor on the evaluation's scenarios (docs/features/eval.md): completion, hover, go
to definition, references, highlights, rename (into and from scenarios), the outline,
folding and semantic tokens of a scenario, and the code lenses that count scenarios."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from inline_snapshot import snapshot

from mantle_lsp.ide.completion import complete
from mantle_lsp.ide.hover import hover
from mantle_lsp.ide.navigation import definition, highlights, references
from mantle_lsp.ide.outline import DocSymbol, document_symbols
from mantle_lsp.ide.rename import MENTIONS, NOT_RENAMED, prepare_rename, rename, rename_symbol
from mantle_lsp.ide.semantic_tokens import semantic_tokens
from mantle_lsp.ide.structure import NOT_ASSERTED, code_lenses, folding_ranges
from mantle_lsp.ide.types import FeatureError, WorkspaceEdit
from mantle_lsp.model.project import Project
from mantle_lsp.model.symbols import SymbolKey
from support import Fixture, diagnostics_of, render_completions, render_hover, write_fixture

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"

# An agent with a skill of prose and one ordered block, a skill importing an MCP tool and a
# shared tool, project memory with a seed field, responses: what the scenarios name.
AGENT = """\
//- integrations.yml
model_groups:
  - id: main
    models:
      - provider: openai
        model: gpt-4o
        api_key: ${OPENAI_API_KEY}
mcp_servers:
  - name: crm
    url: https://crm.example.com/mcp
    type: http
//- memory.yml
customer_verified:
  type: bool
account_number:
  type: text
  seed: true
tier:
  type: categorical
  enum_values: [basic, gold]
//- skills/card/skill.md
---
name: Card help
description: Block a lost or stolen card.
---
Help with the card; then run @block.main.

:::ordered_block id=main
steps:
  - id: ask_reason
    collect: reason
  - id: block
    execute_tool: block_card
    parameters:
      card_id: session.card.card_id
      reason: session.card.reason
  - id: done
    action: utter_card_blocked
:::
//- skills/card/memory.yml
schema:
  public:
    reason:
      type: categorical
      enum_values: [lost, stolen]
      description: Why the card is blocked.
    blocked:
      type: bool
  private:
    card_id:
      type: text
//- skills/card/tools.py
from rasa.mantle.tools.decorator import tool


@tool(description="Block the card.")
async def block_card(card_id: str, reason: str, context=None):
    context.memory.set("blocked", True)
    return {"ok": True}
//- skills/card/responses.yml
responses:
  utter_card_blocked:
    - text: Your card is blocked.
//- skills/travel/skill.md
---
description: Helps before a trip abroad.
import_tools:
  - mcp/crm:lookup_customer
  - notify
---
Look the customer up with @tool.lookup_customer, then @tool.notify them.
//- tools/notify.py
from rasa.mantle.tools.decorator import tool


@tool(description="Send a note.")
async def notify(message: str, context=None):
    return {"ok": True}
"""

HEAD = """\
scenario:
  name: A lost card
  simulation_context: You lost your card and want it blocked.
"""


def scenario(body: str, path: str = "eval/scenarios/lost_card.yml") -> str:
    return f"{AGENT}//- {path}\n{HEAD}{body}"


def completions(tmp_path: Path, body: str) -> list[str]:
    """The completion list at the `$0` of a scenario, rendered; every item replaces only
    the partial word before the cursor."""
    fx = write_fixture(tmp_path, scenario(body))
    assert fx.cursor is not None
    rel, offset = fx.cursor
    result = complete(Project.load(fx.root), fx.root / rel, offset)
    for it in result.items:
        assert it.edit is not None and it.edit.range.end == offset, it
        assert isinstance(it.documentation, str)
    return render_completions(result, fx.files[rel])


# -- completion ---------------------------------------------------------------------------


def test_assertion_keys_come_with_their_fields(tmp_path: Path) -> None:
    got = completions(tmp_path, "  goals:\n    assertions:\n      - $0\n")
    assert got == snapshot(
        [
            "skill_activated (keyword) assertion | + ': {skill_id: $1}' | snippet | suggests again",
            "skill_completed (keyword) assertion | + ': {skill_id: $1}' | snippet | suggests again",
            "skill_cancelled (keyword) assertion | + ': {skill_id: $1}' | snippet | suggests again",
            "skill_interrupted (keyword) assertion | + ': {skill_id: $1}' | snippet | suggests again",
            "skill_resumed (keyword) assertion | + ': {skill_id: $1}' | snippet | suggests again",
            "ordered_block_entered (keyword) assertion | + ': {skill_id: $1, block_id: $2}' | snippet | suggests again",
            "ordered_block_completed (keyword) assertion | + ': {skill_id: $1, block_id: $2}' | snippet | suggests again",
            "ordered_block_cancelled (keyword) assertion | + ': {skill_id: $1, block_id: $2}' | snippet | suggests again",
            "ordered_block_interrupted (keyword) assertion | + ': {skill_id: $1, block_id: $2}' | snippet | suggests again",
            "ordered_block_resumed (keyword) assertion | + ': {skill_id: $1, block_id: $2}' | snippet | suggests again",
            "memory_was_set (keyword) assertion | + ':\\n          - name: $1\\n            value: $2' | snippet | suggests again",
            "memory_was_cleared (keyword) assertion | + ':\\n          - name: $1' | snippet | suggests again",
            "tool_executed (keyword) assertion | + ': {tool_name: $1, source: local}' | snippet | suggests again",
            "tools_within_one_turn (keyword) assertion | + ':\\n          calls:\\n            - tool_executed: {tool_name: $1, source: local}\\n            - tool_executed: {tool_name: $2, source: local}\\n          allow_extra_calls: ${3|false,true|}' | snippet | suggests again",
            "bot_uttered (keyword) assertion | + ': {utter_name: $1}' | snippet | suggests again",
            "memory_was_not_set (keyword) assertion | + ':\\n          - name: $1\\n            value: $2' | snippet | suggests again",
            "bot_did_not_utter (keyword) assertion | + ': {utter_name: $1}' | snippet | suggests again",
            "sequencing (keyword) assertion | + ':\\n          - $0' | snippet",
        ]
    )


def test_a_typed_assertion_key_in_front_of_a_value_is_just_the_key(tmp_path: Path) -> None:
    got = completions(tmp_path, "  goals:\n    assertions:\n      - skill_ac$0 {skill_id: card}\n")
    assert got[0] == snapshot("skill_activated (keyword) assertion | replaces 'skill_ac' | + ': '")


def test_sequencing_steps_and_the_calls_of_one_turn(tmp_path: Path) -> None:
    seq = completions(
        tmp_path / "a", "  goals:\n    assertions:\n      - sequencing:\n          - $0\n"
    )
    assert [line.split(" ")[0] for line in seq] == snapshot(
        [
            "skill_activated",
            "skill_completed",
            "skill_cancelled",
            "skill_interrupted",
            "skill_resumed",
            "ordered_block_entered",
            "ordered_block_completed",
            "ordered_block_cancelled",
            "ordered_block_interrupted",
            "ordered_block_resumed",
            "tool_executed",
            "memory_was_set",
            "memory_was_cleared",
        ]
    )
    calls = completions(
        tmp_path / "b",
        "  goals:\n    assertions:\n      - tools_within_one_turn:\n          calls:\n"
        "            - $0\n",
    )
    assert calls == snapshot(
        [
            "tool_executed (keyword) assertion | + ': {tool_name: $1, source: local}' | snippet | suggests again"
        ]
    )


def test_skill_ids_in_a_flow_mapping(tmp_path: Path) -> None:
    got = completions(
        tmp_path, "  goals:\n    assertions:\n      - skill_activated: {skill_id: ca$0}\n"
    )
    assert got == snapshot(
        [
            "card (skill) Card help | replaces 'ca'",
            "travel (skill) skill | replaces 'ca'",
            "default_completed (skill) bundled default skill | replaces 'ca'",
            "default_continue_interrupted (skill) bundled default skill | replaces 'ca'",
            "default_customer_satisfaction (skill) bundled default skill | replaces 'ca'",
            "default_session_start (skill) bundled default skill | replaces 'ca'",
            "default_silence_timeout (skill) bundled default skill | replaces 'ca'",
            "default_silence_timeout_hangup (skill) bundled default skill | replaces 'ca'",
            "default_unsupported_request_handler (skill) bundled default skill | replaces 'ca'",
        ]
    )


def test_block_ids_are_those_of_the_chosen_skill(tmp_path: Path) -> None:
    flow = completions(
        tmp_path / "a",
        "  goals:\n    assertions:\n      - ordered_block_entered: {skill_id: card, block_id: $0}\n",
    )
    assert flow == snapshot(["main (block) ordered block of card"])
    block = completions(
        tmp_path / "b",
        "  goals:\n    assertions:\n      - ordered_block_entered:\n          block_id: $0\n"
        "          skill_id: card\n",
    )
    assert block == flow
    # no skill yet, or one without blocks: nothing to offer
    assert (
        completions(
            tmp_path / "c",
            "  goals:\n    assertions:\n      - ordered_block_entered: {skill_id: travel, block_id: $0}\n",
        )
        == []
    )


def test_step_ids_of_the_skill_and_of_the_block(tmp_path: Path) -> None:
    skill = completions(
        tmp_path / "a",
        "  goals:\n    assertions:\n      - skill_cancelled: {skill_id: card, step_id: $0}\n",
    )
    assert skill == snapshot(
        [
            "ask_reason (step) step of card:main (collect)",
            "block (step) step of card:main (execute_tool)",
            "done (step) step of card:main (action)",
            "END (keyword) the end of the block",
            "autonomous (keyword) the skill's prose",
        ]
    )
    block = completions(
        tmp_path / "b",
        "  goals:\n    assertions:\n"
        "      - ordered_block_completed: {skill_id: card, block_id: main, step_id: d$0}\n",
    )
    assert block == snapshot(
        [
            "ask_reason (step) step of card:main (collect) | replaces 'd'",
            "block (step) step of card:main (execute_tool) | replaces 'd'",
            "done (step) step of card:main (action) | replaces 'd'",
            "END (keyword) the end of the block | replaces 'd'",
        ]
    )


def test_memory_keys_and_the_values_of_the_named_field(tmp_path: Path) -> None:
    names = completions(
        tmp_path / "a", "  goals:\n    assertions:\n      - memory_was_set:\n          - name: $0\n"
    )
    assert names == snapshot(
        [
            "project.customer_verified (field) bool",
            "project.account_number (field) text",
            "project.tier (field) categorical",
            "card.reason (field) categorical",
            "card.blocked (field) bool",
            "card.card_id (field) text",
            "default_completed.wants_to_continue (field) bool",
            "default_continue_interrupted.wants_to_resume (field) bool",
            "default_continue_interrupted.interrupted_task_name (field) text",
            "default_customer_satisfaction.csat_score (field) float",
            "default_unsupported_request_handler.request_type (field) str",
            "system.__discovered__ (field) engine entry",
            "system.consecutive_silence_timeouts (field) engine entry",
            "system.correction_resume_point (field) engine entry",
            "system.pending_tool_confirmation (field) engine entry",
            "system.verbatim_activate_triggers_fired (field) engine entry",
            "system.verbatim_when_trigger_match_state (field) engine entry",
        ]
    )
    values = completions(
        tmp_path / "b",
        "  goals:\n    assertions:\n      - memory_was_set:\n          - name: card.reason\n"
        "            value: $0\n",
    )
    assert values == snapshot(["lost (value) card.reason", "stolen (value) card.reason"])
    flow = completions(
        tmp_path / "c",
        "  goals:\n    assertions:\n      - memory_was_not_set: [{name: project.customer_verified, "
        "value: $0}]\n",
    )
    assert flow == snapshot(["true (value) bool", "false (value) bool"])
    seq = completions(
        tmp_path / "d",
        "  goals:\n    assertions:\n      - sequencing:\n          - memory_was_set: card.b$0\n",
    )
    # the same names, replacing what is typed
    assert [line.split(" ")[0] for line in seq] == [line.split(" ")[0] for line in names]
    assert "card.blocked (field) bool | replaces 'card.b'" in seq


def test_initial_slots(tmp_path: Path) -> None:
    keys = completions(
        tmp_path / "a", "  setup:\n    initial_slots:\n      project.tier: gold\n      $0\n"
    )
    assert keys == snapshot(
        [
            "account_number (field) text · seed | + ': ' | suggests again",
            "project.customer_verified (field) bool | + ': ' | suggests again",
            "project.account_number (field) text | + ': ' | suggests again",
            "card.reason (field) categorical | + ': ' | suggests again",
            "card.blocked (field) bool | + ': ' | suggests again",
            "card.card_id (field) text | + ': ' | suggests again",
            "default_completed.wants_to_continue (field) bool | + ': ' | suggests again",
            "default_continue_interrupted.wants_to_resume (field) bool | + ': ' | suggests again",
            "default_continue_interrupted.interrupted_task_name (field) text | + ': ' | suggests again",
            "default_customer_satisfaction.csat_score (field) float | + ': ' | suggests again",
            "default_unsupported_request_handler.request_type (field) str | + ': ' | suggests again",
        ]
    )
    values = completions(tmp_path / "b", "  setup:\n    initial_slots:\n      project.tier: $0\n")
    assert values == snapshot(["basic (value) project.tier", "gold (value) project.tier"])


def test_tool_names_by_source(tmp_path: Path) -> None:
    local = completions(
        tmp_path / "a",
        "  goals:\n    assertions:\n      - tool_executed: {tool_name: $0, source: local}\n",
    )
    assert local == snapshot(
        [
            "block_card (tool) tool of card",
            "notify (tool) shared tool",
            "activate (tool) framework tool",
            "cancel (tool) framework tool",
            "cannot_help (tool) framework tool",
            "complete (tool) framework tool",
            "correct (tool) framework tool",
            "hangup (tool) framework tool",
            "listen (tool) framework tool",
            "resolve_tool_confirmation (tool) framework tool",
            "search_knowledge (tool) framework tool",
            "set_fields (tool) framework tool",
        ]
    )
    mcp = completions(
        tmp_path / "b",
        "  goals:\n    assertions:\n"
        "      - tool_executed: {tool_name: $0, source: mcp, mcp_server: crm}\n",
    )
    assert mcp == snapshot(["lookup_customer (tool) MCP tool (crm)"])
    grouped = completions(
        tmp_path / "c",
        "  goals:\n    assertions:\n      - tools_within_one_turn:\n          calls:\n"
        "            - tool_executed: {tool_name: $0, source: local}\n",
    )
    # framework tools other than search_knowledge and cannot_help never match there
    assert [line.split(" ")[0] for line in grouped] == snapshot(
        ["block_card", "notify", "cannot_help", "search_knowledge"]
    )
    expected = completions(
        tmp_path / "d", "  goals:\n    expected_tools:\n      - tool_called: bl$0\n"
    )
    assert expected[0] == snapshot("block_card (tool) tool of card | replaces 'bl'")


def test_skill_ids_of_a_tool_run_list_the_skills_that_see_it_first(tmp_path: Path) -> None:
    got = completions(
        tmp_path,
        "  goals:\n    assertions:\n"
        "      - tool_executed: {tool_name: notify, source: local, skill_id: $0}\n",
    )
    assert got[:3] == snapshot(
        [
            "travel (skill) sees notify",
            "default_completed (skill) skill",
            "default_continue_interrupted (skill) skill",
        ]
    )


def test_arguments_are_the_tools_parameters(tmp_path: Path) -> None:
    got = completions(
        tmp_path,
        "  goals:\n    assertions:\n      - tool_executed:\n          tool_name: block_card\n"
        "          source: local\n          arguments:\n            reason: lost\n            $0\n",
    )
    assert got == snapshot(["card_id (property) parameter of block_card | + ': '"])


def test_sources_servers_responses_and_booleans(tmp_path: Path) -> None:
    src = completions(
        tmp_path / "a",
        "  goals:\n    assertions:\n      - tool_executed: {tool_name: x, source: $0}\n",
    )
    assert src == snapshot(
        [
            "local (value) a tool of the project's tool modules",
            "mcp (value) a tool of an MCP server",
        ]
    )
    server = completions(
        tmp_path / "b",
        "  goals:\n    assertions:\n      - tool_executed: {tool_name: x, source: mcp, mcp_server: $0}\n",
    )
    assert server == snapshot(["crm (mcp) MCP server (integrations.yml)"])
    response = completions(
        tmp_path / "c", "  goals:\n    assertions:\n      - bot_uttered: {utter_name: utter_c$0}\n"
    )
    assert response[0] == snapshot(
        "utter_card_blocked (response) skills/card/responses.yml | replaces 'utter_c'"
    )
    flag = completions(
        tmp_path / "d",
        "  goals:\n    assertions:\n      - tool_executed: {tool_name: x, source: local, is_error: $0}\n",
    )
    assert flag == snapshot(["false (value)", "true (value)"])


def test_keys_of_the_scenario_and_of_an_assertion(tmp_path: Path) -> None:
    top = completions(tmp_path / "a", "  $0\n")
    assert top == snapshot(["setup (property) | + ':\\n    '", "goals (property) | + ':\\n    '"])
    body = completions(
        tmp_path / "b",
        "  goals:\n    assertions:\n      - tool_executed:\n          tool_name: notify\n"
        "          $0\n",
    )
    assert body == snapshot(
        [
            "source (property) | + ': ' | suggests again",
            "mcp_server (property) | + ': ' | suggests again",
            "skill_id (property) | + ': ' | suggests again",
            "arguments (property) | + ':\\n            '",
            "is_error (property) | + ': ' | suggests again",
        ]
    )
    memory = completions(
        tmp_path / "c",
        "  goals:\n    assertions:\n      - memory_was_cleared:\n          - $0\n",
    )
    assert memory == snapshot(["name (property) | + ': ' | suggests again"])


def test_nothing_inside_the_prose(tmp_path: Path) -> None:
    fixture = (
        f"{AGENT}//- eval/scenarios/lost_card.yml\nscenario:\n  name: A lost card\n"
        "  simulation_context: >\n    You lost your card$0 and want it blocked.\n"
    )
    fx = write_fixture(tmp_path, fixture)
    assert fx.cursor is not None
    rel, offset = fx.cursor
    assert complete(Project.load(fx.root), fx.root / rel, offset).items == ()


# -- hover, definition, references, highlights --------------------------------------------


def hover_at(tmp_path: Path, body: str) -> str:
    fx = write_fixture(tmp_path, scenario(body))
    assert fx.cursor is not None
    rel, offset = fx.cursor
    h = hover(Project.load(fx.root), fx.root / rel, offset)
    return render_hover(h, fx.files[rel]).replace(fx.root.as_uri(), "file:///project")


BODY = """\
  setup:
    initial_slots:
      account_number: DE-1
      card.card_id: "4711"
  goals:
    assertions:
      - skill_activated: {skill_id: card}
      - ordered_block_completed: {skill_id: card, block_id: main, step_id: END}
      - skill_interrupted: {skill_id: card, step_id: ask_reason}
      - memory_was_set:
          - name: card.reason
            value: lost
      - tool_executed:
          tool_name: block_card
          source: local
          skill_id: card
          arguments: {card_id: "4711", reason: lost}
      - tool_executed: {tool_name: lookup_customer, source: mcp, mcp_server: crm}
      - bot_uttered: {utter_name: utter_card_blocked}
"""


def at(body: str, needle: str, shift: int = 1) -> str:
    """``body`` with the cursor ``shift`` characters into ``needle``."""
    i = body.index(needle) + shift
    return body[:i] + "$0" + body[i:]


@pytest.mark.parametrize(
    ("needle", "shift"),
    [
        ("card}", 1),  # a skill id
        ("main,", 1),  # a block id
        ("ask_reason}", 2),  # a step id
        ("card.reason", 7),  # a memory key: its field
        ("card.reason", 1),  # a memory key: its skill
        ("block_card\n", 3),  # a tool
        ("utter_card_blocked}", 3),  # a response
        ("crm}", 1),  # an MCP server
        ("account_number:", 2),  # an initial slot: the seed field it sets
    ],
)
def test_hover_on_a_name_shows_what_it_names(tmp_path: Path, needle: str, shift: int) -> None:
    got = hover_at(tmp_path, at(BODY, needle, shift))
    assert got.split("\n")[0:2] == SNAPSHOTS[needle, shift]


SNAPSHOTS = snapshot(
    {
        ("card}", 1): ["«card»", "**skill `card`** — hybrid (prose and ordered blocks)"],
        ("main,", 1): ["«main»", "**ordered block `main`** of skill `card`"],
        ("ask_reason}", 2): ["«ask_reason»", "**step `ask_reason`** (collect) in block `main`"],
        ("card.reason", 7): [
            "«reason»",
            "**`card.reason`** — public field of skill `card` (reset when the skill starts a new run)",
        ],
        ("card.reason", 1): ["«card»", "**skill `card`** — hybrid (prose and ordered blocks)"],
        ("block_card\n", 3): ["«block_card»", "**tool `block_card`** — tool of skill `card`"],
        ("utter_card_blocked}", 3): ["«utter_card_blocked»", "**response `utter_card_blocked`**"],
        ("crm}", 1): ["«crm»", "**MCP server `crm`**"],
        ("account_number:", 2): [
            "«account_number»",
            "**`project.account_number`** — project field (lives for the whole session)",
        ],
    }
)


def test_hover_on_what_is_no_symbol(tmp_path: Path) -> None:
    assert hover_at(tmp_path / "a", at(BODY, "skill_activated")) == snapshot("""\
«skill_activated»
**`skill_activated`** — assertion

Passes when the skill starts during the conversation. `skill_id`: a skill folder's name.\
""")
    assert hover_at(tmp_path / "b", at(BODY, "END")) == snapshot("""\
«END»
`END` — the block (or skill) ended: the step id an event carries at the end.\
""")
    assert hover_at(tmp_path / "c", at(BODY, 'card_id: "4711", reason')) == snapshot("""\
«card_id»
**`card_id`** — argument of tool `block_card`

`block_card(card_id, reason)`\
""")
    # a key of a memory entry is not the scenario's `name`
    assert hover_at(tmp_path / "e", at(BODY, "name: card.reason")) == snapshot("""\
«name»
**`name`**

The memory key: `project.<field>`, `<skill>.<field>`, `system.<entry>`.\
""")
    assert hover_at(tmp_path / "d", at(BODY, "initial_slots")) == snapshot("""\
«initial_slots»
**`initial_slots`**

Memory before the conversation: a seed project field bare or as `project.<field>`, any other field as `project.<field>` / `<skill>.<field>`.\
""")


def load(tmp_path: Path, fixture: str) -> tuple[Fixture, Project]:
    fx = write_fixture(tmp_path, fixture)
    return fx, Project.load(fx.root)


def where(fx: Fixture, locs: list) -> list[tuple[str, str]]:  # type: ignore[type-arg]
    """Each location as (file, the text it covers)."""
    return [
        (loc.path.relative_to(fx.root).as_posix(),
         fx.files[loc.path.relative_to(fx.root).as_posix()][loc.range.start : loc.range.end])
        for loc in locs
    ]  # fmt: skip


def with_cursor(fixture: str, rel: str, needle: str, shift: int = 1) -> str:
    """``fixture`` with a `$0` cursor ``shift`` characters into the first ``needle`` of
    the file ``rel``."""
    head = f"//- {rel}\n"
    body = fixture.index(head) + len(head)
    i = fixture.index(needle, body) + shift
    return fixture[:i] + "$0" + fixture[i:]


def at_cursor(tmp_path: Path, fixture: str) -> tuple[Fixture, Project, Path, int]:
    fx, proj = load(tmp_path, fixture)
    assert fx.cursor is not None
    rel, offset = fx.cursor
    return fx, proj, fx.root / rel, offset


@pytest.mark.parametrize(
    ("needle", "shift", "expected"),
    [
        ("card}", 1, ("skills/card/skill.md", "name")),  # the skill (its frontmatter)
        ("main,", 1, ("skills/card/skill.md", "main")),
        ("ask_reason}", 1, ("skills/card/skill.md", "ask_reason")),
        ("card.reason", 6, ("skills/card/memory.yml", "reason")),  # the field
        ("card.reason", 1, ("skills/card/skill.md", "name")),  # its skill
        ("block_card\n", 1, ("skills/card/tools.py", "block_card")),
        ("utter_card_blocked}", 1, ("skills/card/responses.yml", "utter_card_blocked")),
        ("crm}", 1, ("integrations.yml", "crm")),
        ("card_id:", 6, ("skills/card/memory.yml", "card_id")),  # an initial slot
        ("account_number:", 1, ("memory.yml", "account_number")),  # a bare seed slot
    ],
)
def test_go_to_definition_from_each_name(
    tmp_path: Path, needle: str, shift: int, expected: tuple[str, str]
) -> None:
    fx, proj, path, offset = at_cursor(tmp_path, scenario(at(BODY, needle, shift)))
    assert where(fx, definition(proj, path, offset)) == [expected]


@pytest.mark.parametrize(
    ("rel", "needle", "name"),
    [
        ("skills/card/memory.yml", "reason:", "reason"),
        ("skills/card/memory.yml", "card_id", "card_id"),  # named by an initial slot
        ("memory.yml", "account_number", "account_number"),  # a bare seed slot
        ("skills/card/skill.md", "main", "main"),
        ("skills/card/skill.md", "ask_reason", "ask_reason"),
        ("skills/card/tools.py", "block_card", "block_card"),
        ("skills/card/responses.yml", "utter_card_blocked", "utter_card_blocked"),
        ("integrations.yml", "crm", "crm"),
    ],
)
def test_find_references_from_the_agent_reaches_the_scenarios(
    tmp_path: Path, rel: str, needle: str, name: str
) -> None:
    fx, proj, path, offset = at_cursor(tmp_path, with_cursor(scenario(BODY), rel, needle))
    found = where(fx, references(proj, path, offset, include_declaration=False))
    assert [w for w in found if w[0].startswith("eval/")] == [
        ("eval/scenarios/lost_card.yml", name)
    ]


def test_find_references_of_a_skill_from_a_scenario(tmp_path: Path) -> None:
    """Each `skill_id`, and the namespace of its memory keys and initial slots."""
    fx, proj, path, offset = at_cursor(tmp_path, scenario(at(BODY, "card}", 1)))
    found = where(fx, references(proj, path, offset, include_declaration=False))
    sc = "eval/scenarios/lost_card.yml"
    assert [w for w in found if w[0] == sc] == [(sc, "card")] * 6
    assert ("skills/card/skill.md", "main") not in found  # `@block.main` names no skill


def test_highlights_in_a_scenario(tmp_path: Path) -> None:
    fx, proj, path, offset = at_cursor(tmp_path, scenario(at(BODY, "{skill_id: card}", 11)))
    text = fx.files["eval/scenarios/lost_card.yml"]
    got = highlights(proj, path, offset)
    assert [text[h.range.start : h.range.end] for h in got] == ["card"] * 6


# -- rename ---------------------------------------------------------------------------------


def apply(root: Path, edit: WorkspaceEdit, mentions: bool = True) -> None:
    """Apply a rename as a client does (``mentions``: with the confirmable group ticked)."""
    for path, edits in edit.edits.items():
        text = path.read_bytes().decode("utf-8")
        for e in sorted(edits, key=lambda e: e.range.start, reverse=True):
            if e.note is not None and (e.note.startswith(NOT_RENAMED) or not mentions):
                continue
            text = text[: e.range.start] + e.new_text + text[e.range.end :]
        path.write_bytes(text.encode("utf-8"))
    for old, new in edit.renames:
        old.rename(new)


def files(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in root.rglob("*") if p.is_file()}


def scenario_edits(fx: Fixture, edit: WorkspaceEdit) -> list[tuple[str, str, str | None]]:
    """(old text, new text, group) of each edit of the scenario."""
    rel = "eval/scenarios/lost_card.yml"
    text = fx.files[rel]
    return [
        (text[e.range.start : e.range.end], e.new_text, e.note)
        for e in edit.edits.get(fx.root / rel, ())
    ]


@pytest.mark.parametrize(
    ("rel", "needle", "new", "old"),
    [
        ("skills/card/memory.yml", "reason:", "cause", "reason"),
        ("memory.yml", "account_number", "account_id", "account_number"),
        ("skills/card/skill.md", "main", "entry", "main"),
        ("skills/card/skill.md", "ask_reason", "ask_why", "ask_reason"),
        ("skills/card/tools.py", "block_card", "freeze_card", "block_card"),
        ("skills/card/responses.yml", "utter_card_blocked", "utter_blocked", "utter_card_blocked"),
        ("integrations.yml", "crm", "customers", "crm"),
    ],
)
def test_rename_updates_the_scenarios(
    tmp_path: Path, rel: str, needle: str, new: str, old: str
) -> None:
    fx, proj, path, offset = at_cursor(tmp_path, with_cursor(scenario(BODY), rel, needle))
    before = sorted(d[3] for d in diagnostics_of(fx.root))
    edit = rename(proj, path, offset, new)
    assert isinstance(edit, WorkspaceEdit), edit
    assert scenario_edits(fx, edit) == [(old, new, None)]
    apply(fx.root, edit)
    assert sorted(d[3] for d in diagnostics_of(fx.root)) == before  # nothing broke


def test_skill_rename_updates_ids_and_memory_key_namespaces(tmp_path: Path) -> None:
    fx, proj = load(tmp_path, scenario(BODY))
    before = sorted(d[3] for d in diagnostics_of(fx.root))
    edit = rename_symbol(proj, ("skill", "card"), "bank_card")
    assert isinstance(edit, WorkspaceEdit), edit
    assert scenario_edits(fx, edit) == [("card", "bank_card", None)] * 6
    apply(fx.root, edit)
    text = (fx.root / "eval/scenarios/lost_card.yml").read_text(encoding="utf-8")
    assert "bank_card.card_id: " in text and "name: bank_card.reason" in text
    assert sorted(d[3] for d in diagnostics_of(fx.root)) == before


def test_rename_from_a_scenario(tmp_path: Path) -> None:
    fx, proj, path, offset = at_cursor(tmp_path, scenario(at(BODY, "block_card\n", 2)))
    text = fx.files["eval/scenarios/lost_card.yml"]
    rng = prepare_rename(proj, path, offset)
    assert not isinstance(rng, FeatureError) and text[rng.start : rng.end] == "block_card"
    edit = rename(proj, path, offset, "freeze_card")
    assert isinstance(edit, WorkspaceEdit)
    assert {p.relative_to(fx.root).as_posix() for p in edit.edits} == {
        "eval/scenarios/lost_card.yml",
        "skills/card/skill.md",
        "skills/card/tools.py",
    }
    # the skill part of a memory key renames the skill (and moves its folder)
    fx2, proj2, path2, offset2 = at_cursor(tmp_path / "b", scenario(at(BODY, "card.reason", 1)))
    skill = rename(proj2, path2, offset2, "bank_card")
    assert isinstance(skill, WorkspaceEdit)
    assert skill.renames == ((fx2.root / "skills/card", fx2.root / "skills/bank_card"),)


def test_prose_mentions_in_the_scenario_are_offered_unticked(tmp_path: Path) -> None:
    body = BODY + (
        "    criteria:\n"
        "      - The agent runs block_card once, then sets `card.reason`.\n"
        "      - It never says utter_card_blocked twice.\n"
    )
    fx, proj = load(tmp_path, scenario(body))
    tool = rename_symbol(proj, ("tool", "card", "block_card"), "freeze_card")
    assert isinstance(tool, WorkspaceEdit)
    assert scenario_edits(fx, tool)[-1] == ("block_card", "freeze_card", MENTIONS)
    assert tool.notes[MENTIONS].needs_confirmation
    field = rename_symbol(proj, ("field", "card", "reason"), "cause")
    assert isinstance(field, WorkspaceEdit)
    assert scenario_edits(fx, field) == [("reason", "cause", None), ("reason", "cause", MENTIONS)]
    # a plain word is prose: `reason` alone is left alone; responses are not mentioned
    response = rename_symbol(proj, ("response", "utter_card_blocked"), "utter_blocked")
    assert isinstance(response, WorkspaceEdit)
    assert scenario_edits(fx, response) == [("utter_card_blocked", "utter_blocked", None)]
    # unticked, the prose stays as it was
    apply(fx.root, tool, mentions=False)
    assert "runs block_card once" in (fx.root / "eval/scenarios/lost_card.yml").read_text()


def test_a_name_written_with_escapes_is_listed_not_renamed(tmp_path: Path) -> None:
    body = '  goals:\n    assertions:\n      - skill_completed: {skill_id: "c\\x61rd"}\n'
    fx, proj = load(tmp_path, scenario(body))
    edit = rename_symbol(proj, ("skill", "card"), "bank_card")
    assert isinstance(edit, WorkspaceEdit), edit
    (e,) = edit.edits[fx.root / "eval/scenarios/lost_card.yml"]
    assert e.note is not None and e.note.startswith(NOT_RENAMED)
    assert any("written with YAML escapes" in n for n in edit.notices)


ROUND_TRIPS: list[tuple[SymbolKey, str]] = [
    (("skill", "roaming_pass"), "travel_pass"),
    (("skill", "verify_customer"), "identity_check"),
    (("field", "roaming_pass", "destination"), "country"),
    (("field", "project", "customer_verified"), "verified"),
    (("field", "project", "account_number"), "account_id"),
    (("block", "verify_customer", "lockout"), "locked"),
    (("block", "roaming_pass", "main"), "purchase"),
    (("tool", "roaming_pass", "add_roaming_pass"), "book_roaming_pass"),
    (("tool", "plan_change", "apply_plan_change"), "switch_plan"),
    (("response", "utter_roaming_pass_added"), "utter_pass_booked"),
]


@pytest.mark.parametrize(("key", "new"), ROUND_TRIPS, ids=lambda x: str(x))
def test_rename_and_back_with_scenarios_is_byte_identical(
    tmp_path: Path, key: SymbolKey, new: str
) -> None:
    """On the example agent and its eval suite, every mention ticked."""
    root = tmp_path / "telecom"
    shutil.copytree(EXAMPLES / "telecom", root)
    original = files(root)
    edit = rename_symbol(Project.load(root), key, new)
    assert isinstance(edit, WorkspaceEdit), edit
    assert any("eval/scenarios" in p.as_posix() for p in edit.edits), "no scenario changed"
    apply(root, edit)
    assert files(root) != original
    assert diagnostics_of(root) == []  # the example still checks clean, scenarios included
    back = rename_symbol(Project.load(root), (*key[:-1], new), key[-1])
    assert isinstance(back, WorkspaceEdit), back
    apply(root, back)
    assert files(root) == original


# -- outline, folding, semantic tokens, code lenses ----------------------------------------------


def outline(syms: list[DocSymbol], depth: int = 0) -> list[str]:
    out = []
    for s in syms:
        out.append("  " * depth + f"{s.name} ({s.kind}) {s.detail}".rstrip())
        out += outline(list(s.children), depth + 1)
    return out


def test_outline_folding_and_tokens_of_a_scenario(tmp_path: Path) -> None:
    body = BODY + (
        "      - sequencing:\n          - skill_activated: {skill_id: card}\n"
        "          - memory_was_set: card.blocked\n"
        "    criteria:\n      - The agent blocks the card.\n"
        "    expected_tools:\n      - tool_called: block_card\n"
    )
    fx, proj = load(tmp_path, scenario(body))
    path = fx.root / "eval/scenarios/lost_card.yml"
    text = fx.files["eval/scenarios/lost_card.yml"]
    assert outline(document_symbols(proj, path)) == snapshot(
        [
            "A lost card (file) scenario",
            "  account_number (field) initial slot",
            "  card.card_id (field) initial slot",
            "  skill_activated (keyword) card",
            "  ordered_block_completed (keyword) card:main END",
            "  skill_interrupted (keyword) card ask_reason",
            "  memory_was_set (keyword) card.reason",
            "  tool_executed (keyword) block_card",
            "  tool_executed (keyword) lookup_customer",
            "  bot_uttered (keyword) utter_card_blocked",
            "  sequencing (keyword)",
            "    skill_activated (keyword) card",
            "    memory_was_set (keyword) card.blocked",
            "  The agent blocks the card. (heading) criterion",
            "  block_card (tool) expected tool",
        ]
    )
    folds = folding_ranges(proj, path)
    assert [text[f.start : text.index("\n", f.start)].strip() for f in folds] == snapshot(
        [
            "scenario:",
            "setup:",
            "initial_slots:",
            "goals:",
            "assertions:",
            "memory_was_set:",
            "name: card.reason",
            "tool_executed:",
            "sequencing:",
            "criteria:",
            "expected_tools:",
        ]
    )
    tokens = semantic_tokens(proj, path)
    assert [(text[t.range.start : t.range.end], t.type) for t in tokens] == snapshot(
        [
            ("account_number", "property"),
            ("card", "namespace"),
            ("card_id", "property"),
            ("card", "namespace"),
            ("card", "namespace"),
            ("main", "enumMember"),
            ("END", "enumMember"),
            ("card", "namespace"),
            ("ask_reason", "enumMember"),
            ("card", "namespace"),
            ("reason", "property"),
            ("block_card", "function"),
            ("card", "namespace"),
            ("lookup_customer", "function"),
            ("crm", "namespace"),
            ("card", "namespace"),
            ("card", "namespace"),
            ("blocked", "property"),
            ("block_card", "function"),
        ]
    )


def test_code_lenses_count_scenarios(tmp_path: Path) -> None:
    fx, proj = load(tmp_path, scenario(BODY) + "//- eval/scenarios/other.yml\n" + HEAD + (
        "  goals:\n    assertions:\n      - skill_completed: {skill_id: card}\n"
        "      - memory_was_not_set:\n          - name: card.blocked\n"
    ))  # fmt: skip
    skill = [(lens.title, len(lens.locations or ())) for lens in
             code_lenses(proj, fx.root / "skills/card/skill.md")]  # fmt: skip
    assert ("2 scenarios", 5) in skill  # five names in two files
    assert ("no scenario", 0) in [
        (lens.title, len(lens.locations or ()))
        for lens in code_lenses(proj, fx.root / "skills/travel/skill.md")
    ]
    memory = {lens.title for lens in code_lenses(proj, fx.root / "skills/card/memory.yml")}
    assert "2 references, 1 in a scenario" in memory  # `card.reason`
    assert NOT_ASSERTED not in memory
    hinted = code_lenses(proj, fx.root / "skills/card/memory.yml", coverage_hints=True)
    # card.blocked is only named by a negative check; card.card_id only by an initial slot
    text = fx.files["skills/card/memory.yml"]
    assert sorted(text[lens.range.start : lens.range.end] for lens in hinted
                  if lens.title == NOT_ASSERTED) == ["blocked", "card_id"]  # fmt: skip


def test_no_scenario_lens_without_an_eval_suite(tmp_path: Path) -> None:
    fx, proj = load(tmp_path, AGENT)
    titles = [lens.title for lens in code_lenses(proj, fx.root / "skills/card/skill.md", True)]
    assert not any("scenario" in t for t in titles)
