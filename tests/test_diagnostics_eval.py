"""The evaluation's files in a project (docs/language/eval.md): which files they are, what
`evaluate_agent` rejects before it runs, and every name a scenario holds resolved against
the agent (ide/rules/eval.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from mantle_lsp.cli.main import main
from mantle_lsp.ide.code_actions import code_actions
from mantle_lsp.ide.diagnostics import project_diagnostics
from mantle_lsp.model import layout
from mantle_lsp.model.layout import FileKind
from mantle_lsp.model.project import Project
from mantle_lsp.model.source import source_from_text
from support import DEFAULT_INTEGRATIONS, check_clean, check_diagnostics, shown, write_fixture

# An agent with a skill of blocks and prose, a prose skill importing an MCP tool and a
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
    fee:
      type: float
//- skills/card/tools.py
from rasa.mantle.tools.decorator import tool


@tool(description="Block the card.")
async def block_card(card_id: str, reason: str, context=None):
    context.memory.set("blocked", True)
    context.memory.set("fee", 0.0)
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
//- eval/conftest.yml
simulation:
  llm: {provider: openai, model: gpt-4o}
evaluation:
  llm: {provider: openai, model: gpt-4o}
"""

SCENARIO_HEAD = """\
scenario:
  name: A lost card
  simulation_context: You lost your card and want it blocked.
"""


def fixture(scenario_body: str, path: str = "eval/scenarios/lost_card.yml") -> str:
    return f"{AGENT}//- {path}\n{SCENARIO_HEAD}{scenario_body}"


GOOD = """\
  setup:
    initial_slots:
      account_number: DE-1
      project.tier: gold
      project.customer_verified: true
      card.card_id: "4711"
  goals:
    assertions:
      - skill_activated: {skill_id: card}
      - skill_cancelled: {skill_id: card, step_id: autonomous}
      - skill_interrupted: {skill_id: card, step_id: ask_reason}
      - ordered_block_entered: {skill_id: card, block_id: main}
      - ordered_block_completed: {skill_id: card, block_id: main, step_id: END}
      - skill_completed: {skill_id: default_completed}
      - memory_was_set:
          - name: card.reason
            value: lost
          - name: card.fee
            value: 0
          - name: card.blocked
            value: 1
          - name: project.customer_verified
            value: true
          - name: default_completed.wants_to_continue
      - memory_was_not_set:
          - name: card.reason
            value: stolen
          - name: system.pending_tool_confirmation
      - memory_was_cleared:
          - name: card.card_id
      - tool_executed:
          tool_name: block_card
          source: local
          skill_id: card
          arguments: {card_id: "4711", reason: lost}
      - tool_executed: {tool_name: notify, source: local, skill_id: travel}
      - tool_executed: {tool_name: set_fields, source: local, skill_id: card}
      - tool_executed: {tool_name: lookup_customer, source: mcp, mcp_server: crm,
                        skill_id: travel, arguments: {anything: 1}}
      - bot_uttered: {utter_name: utter_card_blocked}
      - bot_did_not_utter: {utter_name: utter_ask_wants_to_continue}
      - sequencing:
          - skill_activated: {skill_id: card}
          - memory_was_set: card.reason
          - tool_executed: {tool_name: block_card, source: local}
          - memory_was_cleared: card.card_id
    expected_tools:
      - tool_called: block_card
"""

EVAL_CODES = [
    "calm_assertion",
    "unsafe_slug",
    "duplicate_slug",
    "prompt_template",
    "shadowed",
    "eval.unknown_skill",
    "eval.unknown_step",
    "eval.unknown_block",
    "eval.unknown_memory",
    "eval.memory_value",
    "eval.unknown_tool",
    "eval.unknown_argument",
    "eval.tool_skill",
    "eval.unknown_response",
    "eval.initial_slot",
    "eval.vacuous",
    "scenario.invalid",
    "not_a_scenario",
    "aborts_run",
    "eval.yaml.duplicate_key",
    "conftest.invalid",
]


def test_a_valid_suite_is_clean(tmp_path: Path) -> None:
    check_clean(tmp_path, fixture(GOOD), silent=EVAL_CODES)


def test_eval_files_are_project_files(tmp_path: Path) -> None:
    fx = write_fixture(
        tmp_path,
        fixture(GOOD, "eval/scenarios/happy_path/lost_card.yml")
        + "//- eval/scenarios/edge/.hidden.yml\nx: 1\n"
        + "//- eval/scenarios/.drafts/a.yml\nx: 1\n"
        + "//- eval/scenarios/notes.md\nx\n"
        + "//- eval/results/2026-01-01/summary.yml\nx: 1\n"
        + "//- eval/conftest.yaml\nsimulation: {}\n",
    )
    kinds = {
        p.relative_to(fx.root).as_posix(): kind
        for p, kind, _ in layout.project_files(fx.root)
        if kind in (FileKind.EVAL_SCENARIO, FileKind.EVAL_CONFTEST)
    }
    assert kinds == {
        "eval/conftest.yml": FileKind.EVAL_CONFTEST,
        "eval/conftest.yaml": FileKind.EVAL_CONFTEST,
        "eval/scenarios/happy_path/lost_card.yml": FileKind.EVAL_SCENARIO,
    }


def test_calm_assertions_are_rejected_with_the_mantle_form_where_it_resolves(
    tmp_path: Path,
) -> None:
    body = """\
  goals:
    assertions:
      - «calm_assertion:action_executed»: block_card
      - «calm_assertion:action_executed»: action_lookup
      - «calm_assertion:slot_was_set»:
          - name: reason
            value: lost
          - name: project.customer_verified
      - «calm_assertion:slot_was_not_set»:
          - name: nowhere
      - «calm_assertion:flow_started»: card
      - «calm_assertion:flow_started»: {flow_ids: [travel], operator: any}
      - «calm_assertion:flow_completed»: {flow_id: card}
      - «calm_assertion:flow_cancelled»: {flow_id: card, flow_step_id: block}
      - sequencing:
          - «calm_assertion:slot_was_set»: blocked
          - «calm_assertion:flow_completed»: card
"""
    got = check_diagnostics(tmp_path, fixture(body))
    assert all(g[4] == "error" for g in got if g[0].startswith("eval/"))
    root = tmp_path
    proj = Project.load(root)
    path = root / "eval/scenarios/lost_card.yml"
    diags = project_diagnostics(proj)[path]
    text = proj.files[path].text
    fixed: dict[str, str] = {}
    for d in diags:
        actions = code_actions(proj, path, d.range, [d], suppressions=False)
        fixes = [a for a in actions if not a.suppresses]
        assert all(not a.safe for a in fixes)
        if fixes:
            edits = fixes[0].edit.edits[path]
            new = text
            for e in sorted(edits, key=lambda e: e.range.start, reverse=True):
                new = new[: e.range.start] + e.new_text + new[e.range.end :]
            fixed[text[d.range.start : d.range.end] + str(d.range.start)] = new
    rewritten = sorted(
        line.strip()
        for new in fixed.values()
        for line in set(new.splitlines()) - set(text.splitlines())
    )
    assert rewritten == [
        "- memory_was_set:",
        "- memory_was_set: card.blocked",
        "- name: card.reason",
        "- skill_activated: {skill_id: card}",
        "- skill_activated: {skill_id: travel}",
        "- skill_completed: {skill_id: card}",
        "- skill_completed: {skill_id: card}",
        "- tool_executed: {tool_name: block_card, source: local}",
    ]


def test_scenario_file_names(tmp_path: Path) -> None:
    text = fixture(GOOD, "eval/scenarios/happy_path/Lost_Card.yml")
    text += "//- eval/scenarios/edge/lost_card.yml\n«duplicate_slug:scenario»:\n"
    text += "  name: Again\n  simulation_context: c\n"
    text += "//- eval/scenarios/what?.yml\n«unsafe_slug:scenario»:\n"
    text += "  name: Odd\n  simulation_context: c\n"
    got = check_diagnostics(
        tmp_path,
        text.replace(
            "//- eval/scenarios/happy_path/Lost_Card.yml\nscenario:",
            "//- eval/scenarios/happy_path/Lost_Card.yml\n«duplicate_slug:scenario»:",
        ),
        silent=["eval.unknown_skill"],
    )
    assert any("also the name of `eval/scenarios/edge/lost_card.yml`" in g[5] for g in got)


def test_conftest_prompt_paths_and_a_shadowed_conftest(tmp_path: Path) -> None:
    conf = """\
simulation:
  llm: {provider: openai, model: gpt-4o}
  simulated_user_prompt: «prompt_template:prompts/missing.jinja2»
evaluation:
  llm: {provider: openai, model: gpt-4o}
  criteria_judge_prompt: «prompt_template:prompts/empty.jinja2»
  metrics_judge_prompt: «prompt_template:../outside.jinja2»
"""
    text = AGENT.replace(
        "//- eval/conftest.yml\nsimulation:\n  llm: {provider: openai, model: gpt-4o}\n"
        "evaluation:\n  llm: {provider: openai, model: gpt-4o}\n",
        f"//- eval/conftest.yml\n{conf}",
    )
    text += "//- prompts/empty.jinja2\n\n//- eval/conftest.yaml\n«shadowed:s»imulation: {}\n"
    check_diagnostics(tmp_path, text)
    good = AGENT.replace(
        "evaluation:\n  llm: {provider: openai, model: gpt-4o}\n",
        "evaluation:\n  llm: {provider: openai, model: gpt-4o}\n"
        "  criteria_judge_prompt: prompts/judge.jinja2\n",
    )
    check_clean(
        tmp_path / "good",
        good + "//- prompts/judge.jinja2\nJudge {{ x }}.\n",
        silent=["prompt_template", "shadowed", "conftest.invalid"],
    )


def test_skills_blocks_and_steps(tmp_path: Path) -> None:
    body = """\
  goals:
    assertions:
      - skill_activated: {skill_id: «eval.unknown_skill:Card help»}
      - skill_completed: {skill_id: «eval.unknown_skill:crad»}
      - skill_completed: {skill_id: «eval.unknown_skill:_drafts»}
      - ordered_block_entered: {skill_id: card, block_id: «eval.unknown_block:card__main»}
      - ordered_block_entered: {skill_id: card, block_id: «eval.unknown_block:ask_reason»}
      - ordered_block_completed: {skill_id: card, block_id: main, step_id: «eval.unknown_step:blok»}
      - skill_cancelled: {skill_id: card, step_id: «eval.unknown_step:prose»}
      - skill_cancelled: {skill_id: travel, step_id: «eval.unknown_step:ask_reason»}
      - skill_resumed: {skill_id: default_continue_interrupted, step_id: anything}
      - ordered_block_cancelled: {skill_id: default_completed, block_id: anything}
      - bot_did_not_utter: {utter_name: «eval.vacuous:utter_card_blockd»}
"""
    got = check_diagnostics(
        tmp_path,
        fixture(body),
        severities={"eval.unknown_skill": "error", "eval.vacuous": "warning"},
    )
    messages = [g[5] for g in got]
    assert "`Card help` is the frontmatter `name:` of skill `card`" in messages[0]
    assert any("`card__main` is the compiled address of block `main`" in m for m in messages)
    assert any("`ask_reason` is not an ordered block of skill `card`" in m for m in messages)
    assert any("did you mean `block`?" in m for m in messages)
    # the frontmatter name has one reading: a safe fix
    proj = Project.load(tmp_path)
    path = tmp_path / "eval/scenarios/lost_card.yml"
    d = next(d for d in project_diagnostics(proj)[path] if "Card help" in d.message)
    (fix,) = [a for a in code_actions(proj, path, d.range, [d]) if not a.suppresses]
    assert fix.safe and fix.title == "Change to `card`"


def test_memory_names_and_values(tmp_path: Path) -> None:
    body = """\
  goals:
    assertions:
      - memory_was_set:
          - name: «eval.unknown_memory:reason»
          - name: «eval.unknown_memory:session.card.blocked»
          - name: «eval.unknown_memory:project.reason»
          - name: «eval.unknown_memory:card.customer_verified»
          - name: «eval.unknown_memory:card.reasn»
          - name: «eval.unknown_memory:crad.reason»
          - name: «eval.unknown_memory:system.language»
          - name: card.reason
            value: «eval.memory_value:Lost»
          - name: card.blocked
            value: «eval.memory_value:"true"»
          - name: card.fee
            value: «eval.memory_value:free»
          - name: project.customer_verified
            value: 1
          - name: card.fee
            value: 5
      - memory_was_not_set:
          - name: «eval.vacuous:blocked»
          - name: card.reason
            value: «eval.memory_value:gone»
      - sequencing:
          - memory_was_set: «eval.unknown_memory:fee»
"""
    got = check_diagnostics(tmp_path, fixture(body), severities={"eval.memory_value": "warning"})
    by_text = {g[5].split("`")[1]: (g[3], g[4], g[5]) for g in got}
    assert by_text["system.language"][1] == "warning"  # an entry a later engine may add
    assert by_text["reason"][1] == "error"
    assert "write `card.reason`" in by_text["reason"][2]
    assert "write `card.blocked`" in by_text["session.card.blocked"][2]
    assert "write `card.reason`" in by_text["project.reason"][2]
    assert "write `project.customer_verified`" in by_text["card.customer_verified"][2]
    assert "did you mean `card.reason`?" in by_text["card.reasn"][2]
    assert "write `card.reason`" in by_text["crad.reason"][2]
    # the bare name has one reading: `check --fix` qualifies it
    proj = Project.load(tmp_path)
    path = tmp_path / "eval/scenarios/lost_card.yml"
    d = next(d for d in project_diagnostics(proj)[path] if d.message.startswith("`reason`"))
    (fix,) = [a for a in code_actions(proj, path, d.range, [d]) if not a.suppresses]
    assert fix.safe and fix.title == "Change to `card.reason`"


def test_tools_and_arguments(tmp_path: Path) -> None:
    body = """\
  goals:
    assertions:
      - tool_executed: {tool_name: «eval.unknown_tool:blok_card», source: local}
      - tool_executed: {tool_name: «eval.unknown_tool:lookup_customer», source: local}
      - tool_executed: {tool_name: «eval.unknown_tool:block_card», source: mcp, mcp_server: crm}
      - tool_executed: {tool_name: «eval.unknown_tool:lookup», source: mcp, mcp_server: crm}
      - tool_executed:
          {tool_name: lookup_customer, source: mcp, mcp_server: «eval.unknown_tool:erp»}
      - tool_executed:
          tool_name: block_card
          source: local
          arguments: {«eval.unknown_argument:card»: "4711", reason: lost, missing: null}
      - tool_executed: {tool_name: notify, source: local, skill_id: «eval.tool_skill:card»}
      - tool_executed: {tool_name: block_card, source: local, skill_id: «eval.unknown_skill:cards»}
      - tool_executed: {tool_name: lookup_customer, source: mcp, mcp_server: crm,
                        skill_id: «eval.tool_skill:card»}
      - tools_within_one_turn:
          allow_extra_calls: false
          calls:
            - tool_executed: {tool_name: notify, source: local}
            - tool_executed: {tool_name: «eval.unknown_tool:notifi», source: local}
            - tool_executed: {tool_name: «eval.unknown_tool:set_fields», source: local}
            - tool_executed: {tool_name: search_knowledge, source: local}
      - bot_uttered: {utter_name: «eval.unknown_response:utter_card_block»}
"""
    got = check_diagnostics(tmp_path, fixture(body), severities={"eval.tool_skill": "warning"})
    messages = [g[5] for g in got]
    assert any("comes from MCP server `crm`: write `source: mcp`" in m for m in messages)
    assert any("`block_card` is a local tool" in m for m in messages)
    assert any("`tools_within_one_turn` counts none but" in m for m in messages)


def test_tool_names_stay_silent_where_the_code_is_opaque(tmp_path: Path) -> None:
    body = """\
  goals:
    assertions:
      - tool_executed: {tool_name: made_by_factory, source: local, arguments: {x: 1}}
"""
    text = fixture(body) + (
        "//- tools/factory.py\nfrom lib.make import make_tool\n\n"
        "made_by_factory = make_tool('x')\n"
        "//- lib/make.py\ndef make_tool(name):\n    return None\n"
    )
    check_clean(tmp_path / "a", text, silent=["eval.unknown_tool", "eval.unknown_argument"])
    broken = text.replace("made_by_factory, source", "from_broken_module, source")
    broken += "//- tools/broken.py\ndef from_broken_module(:\n"
    fx = write_fixture(tmp_path / "b", broken)
    codes = {d.code for ds in project_diagnostics(Project.load(fx.root)).values() for d in ds}
    assert "lsp.eval.unknown_tool" not in codes and "lsp.tools.syntax_error" in codes


def test_initial_slots(tmp_path: Path) -> None:
    body = """\
  setup:
    initial_slots:
      account_number: DE-1
      project.account_number: DE-1
      «eval.initial_slot:customer_verified»: true
      «eval.initial_slot:reason»: lost
      «eval.initial_slot:session.card.reason»: lost
      «eval.initial_slot:order_id»: 7
      project.tier: «eval.memory_value:platinum»
      project.customer_verified: «eval.memory_value:"yes"»
      card.fee: 3
  goals:
    assertions:
      - skill_activated: {skill_id: card}
"""
    got = check_diagnostics(
        tmp_path,
        fixture(body),
        severities={"eval.initial_slot": "warning", "eval.memory_value": "warning"},
    )
    assert any("write `project.customer_verified`" in g[5] for g in got)


def test_scenarios_are_not_checked_when_eval_is_off(tmp_path: Path) -> None:
    bad = fixture("  goals:\n    assertions:\n      - action_executed: x\n")
    fx = write_fixture(tmp_path, bad + "//- mantle-lsp.toml\neval = false\n")
    assert main(["check", str(fx.root)]) == 0
    (fx.root / "mantle-lsp.toml").write_text("eval = true\n")
    assert main(["check", str(fx.root)]) == 1
    (fx.root / "mantle-lsp.toml").write_text('eval = "no"\n')
    assert main(["check", str(fx.root)]) == 2
    shown(fired=["calm_assertion"])


@pytest.mark.parametrize("where", ["eval/scenarios/a.yml", "eval/scenarios/deep/er/a.yaml"])
def test_another_tools_file_is_one_warning(tmp_path: Path, where: str) -> None:
    text = AGENT + f"//- {where}\n«not_a_scenario:name»: Angry customer\ngoal: >-\n  x\n"
    text += "mock_tools: [notify_slack]\n"
    check_diagnostics(tmp_path, text, severities={"not_a_scenario": "warning"})


def test_an_edit_to_the_agent_rechecks_its_scenarios(tmp_path: Path) -> None:
    fx = write_fixture(tmp_path, fixture(GOOD))
    proj = Project.load(fx.root)
    scenario = fx.root / "eval/scenarios/lost_card.yml"
    assert project_diagnostics(proj)[scenario] == []
    memory = fx.root / "skills/card/memory.yml"
    text = proj.files[memory].text.replace("    reason:\n", "    cause:\n")
    affected = proj.set_source(memory, source_from_text(memory, text))
    from mantle_lsp.ide.diagnostics import file_diagnostics, rechecked

    again = file_diagnostics(proj, rechecked(proj, affected))
    assert scenario in again
    assert {(d.code, d.message.split("`")[1]) for d in again[scenario]} == {
        ("lsp.eval.unknown_memory", "card.reason"),
        ("lsp.eval.vacuous", "memory_was_not_set"),
    }


def test_integrations_default_is_still_used_elsewhere() -> None:
    assert "mcp_servers" not in DEFAULT_INTEGRATIONS


def test_eval_files_behind_a_link_out_of_the_project_are_not_read(tmp_path: Path) -> None:
    outside = tmp_path / "elsewhere"
    (outside / "scenarios").mkdir(parents=True)
    (outside / "scenarios" / "a.yml").write_text("scenario: {}\n", encoding="utf-8")
    (outside / "b.yml").write_text("scenario: {}\n", encoding="utf-8")
    fx = write_fixture(tmp_path / "agent", AGENT)
    (fx.root / "eval" / "scenarios").mkdir()
    (fx.root / "eval" / "scenarios" / "b.yml").symlink_to(outside / "b.yml")
    listed = [p for p, kind in layout.eval_files(fx.root) if kind is FileKind.EVAL_SCENARIO]
    assert listed == []
    other = write_fixture(
        tmp_path / "other", "//- skills/a/skill.md\n---\ndescription: A.\n---\nA.\n"
    )
    (other.root / "eval").symlink_to(outside, target_is_directory=True)
    assert layout.eval_files(other.root) == []


def test_memory_of_a_file_that_does_not_load_is_not_judged(tmp_path: Path) -> None:
    body = """\
  goals:
    assertions:
      - memory_was_set:
          - name: card.anything
          - name: project.anything
"""
    text = fixture(body).replace(
        "schema:\n  public:\n    reason:", "schema:\n  public:\n    reason: ["
    )
    text = text.replace("customer_verified:\n  type: bool\n", "customer_verified:\n  type: [\n")
    fx = write_fixture(tmp_path, text)
    found = project_diagnostics(Project.load(fx.root))
    scenario = fx.root / "eval/scenarios/lost_card.yml"
    assert [d.code for d in found[scenario]] == []
    assert any(d.severity == "error" for ds in found.values() for d in ds)  # the files
