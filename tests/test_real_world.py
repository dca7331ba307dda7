"""Constructs seen in public Mantle agents (real-world notes, "Seen in public agents"):
none of them may cause a false error, and where the engine drops a whole skill we say so.

The Python-tool constructs (guarded imports, factory tools, …) are in test_real_world_tools.py.
"""

from __future__ import annotations

from pathlib import Path

from lsprotocol import types as lsp

from mantle_lsp.ide.diagnostics import Diagnostic, project_diagnostics
from mantle_lsp.lsp import convert
from mantle_lsp.model.project import Project
from mantle_lsp.syntax.text import LineIndex
from support import check_clean, check_diagnostics, diagnostics_of, write_fixture

FAILED_TO_LOAD = "mantle.validation.skill.failed_to_load"


def _all(root: Path) -> list[Diagnostic]:
    return [d for ds in project_diagnostics(Project.load(root)).values() for d in ds]


def test_old_frontmatter_and_block_keys_say_the_engine_drops_the_skill(tmp_path: Path) -> None:
    check_diagnostics(
        tmp_path,
        """\
//- skills/old_style/skill.md
---
description: Old.
«unknown_frontmatter_key:memory»:
  x: 1
«unknown_frontmatter_key:constraints»:
  - text: Never swear.
«requires.removed:requires»: session.project.authenticated
---
Do old things.

:::ordered_block id=main
name: Main
«ordered_block_description_forbidden:description»: The main flow.
steps:
  - id: only
    noop: true
:::
//- skills/other/skill.md
---
description: Other.
---
Hand over with @skill.«invalid_target:old_style» when asked.
""",
    )
    diags = {d.code: d for d in _all(tmp_path)}
    # the reference fails too, naming the first cause (issue 29)
    assert "skills/old_style/skill.md: a frontmatter key the engine does not know" in (
        diags["skill.referenced.invalid_target"].message
    )
    for code in (
        "skill.markdown.unknown_frontmatter_key",
        "skill.requires.removed",
        "skill.markdown.ordered_block_description_forbidden",
    ):
        d = diags[code]
        assert d.engine_code == FAILED_TO_LOAD, code
        assert "drops the whole skill" in d.message and "`old_style`" in d.message, d.message
        wire = convert.to_diagnostic(d, LineIndex(d.path.read_text()))
        assert wire.data == {"engine_code": FAILED_TO_LOAD}


def test_engine_codes_reported_as_themselves_carry_no_engine_code(tmp_path: Path) -> None:
    check_diagnostics(
        tmp_path,
        """\
//- skills/card/skill.md
---
description: Card.
---
Read «unknown_memory_reference:@memory.card.nope».
""",
    )
    (d,) = _all(tmp_path)
    assert d.engine_code is None and "drops" not in d.message
    assert "engine_code" not in (convert.to_diagnostic(d, LineIndex(d.path.read_text())).data or {})
    assert lsp.DiagnosticSeverity.Error == convert.to_diagnostic(d, LineIndex("")).severity


def test_no_project_memory_message_reads_well(tmp_path: Path) -> None:
    got = check_diagnostics(
        tmp_path,
        """\
//- skills/card/skill.md
---
description: Card.
---
Read «unknown_memory_reference:@memory.project.tier».
""",
    )
    assert "there is no project field `tier`" in got[0][5]
    assert "no no" not in got[0][5]


# -- a realistic 3.21 agent: prose-heavy, Markdown-rich, 3.20-era leftovers the engine ignores
REAL_AGENT = """\
//- agent.yml
agent:
  id: acme-support
  persona: A friendly assistant for Acme.
orchestrator:
  model_group: main
//- integrations.yml
model_groups:
  - id: main
    models:
      - provider: openai
        model: gpt-4o
        api_key: ${OPENAI_API_KEY}
mcp_servers:
  - name: notion
    url: http://localhost:3000/mcp
    type: http
channels:
  lib.slack_channel.EnvSlackInput:
    token: ${SLACK_TOKEN}
//- lib/__init__.py
//- lib/slack_channel.py
class EnvSlackInput:
    pass
//- memory.yml
authenticated:
  type: bool
  seed: true
user_country:
  type: text
//- skills/card_replace/memory.yml
schema:
  public:
    reason:
      type: categorical
      enum_values: [lost, stolen, damaged]
      llm_settable: true
      description: Why the card is replaced.
    mode:
      type: categorical
      enum_values: [standard, express, 'off']
      llm_settable: true
      description: Delivery mode.
    confirmed:
      type: bool
      llm_settable: false
//- skills/card_replace/responses.yml
responses:
  utter_ask_reason:
    - text: "Why do you need a new card?"
      metadata:
        rephrase: true
      buttons:
        - title: Lost
          payload: "/SetSlots(reason=lost)"
  utter_done:
    - text: "Done: {reason}."
  utter_denied:
    - text: "OK, I will not lock it."
//- skills/card_replace/skill.md
---
description: >-
  Replace a lost, stolen or damaged card. Do NOT activate for billing questions
  (use billing) — those go elsewhere → always.
complete_when:
  condition: session.card_replace.confirmed
utter:
  - utter_ask_reason: {on: activate}
  - utter_done:
      when: session.card_replace.confirmed == True
tool_constraints:
  - lock_card:
      requires: session.card_replace.reason
      requires_confirmation:
        enabled: true
        utter_on_user_denial: utter_denied
      on_success: utter_done
      on_failure: utter_denied
---
<!-- internal note: keep this short -->
Help the customer replace their card. Ask for the `reason` first — it matters.
See <https://acme.example/cards|the card page> and ping @Alan on Slack if stuck.

if: session.card_replace.mode == "off"
Explain that delivery is off.

if: session.card_replace.reason == "lost" or session.card_replace.reason == "stolen"
Lock the card with `lock_card`, then call @block.replace.

Price: 10 € — donâ€™t forget.

:::ordered_block id=replace
steps:
  - id: ask
    collect: reason
    utterance: utter_ask_reason
  - id: decide
    noop: true
    next:
      - if: session.card_replace.reason == "lost"
        then: lock
      - else: confirm
  - id: lock
    execute_tool: lock_card
    next: confirm
  - id: confirm
    set_memory:
      confirmed: true
      user_country: "DE"
  - id: done
    action: utter_done
:::
//- skills/card_replace/tools.py
from rasa.mantle.tools.decorator import tool


@tool(description="Lock the card.")
async def lock_card(context) -> str:
    if context.memory.get("card_replace.reason"):
        context.send("locking")
    return "ok"
//- skills/billing/skill.md
---
description: |-
  Answer billing questions.
import_tools:
  - mcp/notion:get_page
---
Answer billing questions using `get_page`.
//- skills/handoff/skill.md
---
description: Hand off to a human.
---
Hand the conversation to a human agent when asked, with @skill.billing as fallback."""


def test_a_realistic_agent_is_clean(tmp_path: Path) -> None:
    # what it exercises: frontmatter, complete_when, utter triggers, tool constraints, prose
    # `if:` paragraphs, an ordered block and its steps, import_tools, references, responses
    check_clean(
        tmp_path,
        REAL_AGENT,
        silent=[
            "skill.markdown.invalid_frontmatter",
            "invalid_frontmatter_delimiter",
            "unknown_frontmatter_key",
            "mantle.validation.skill.missing_description",
            "skill.complete_when.invalid",
            "mapping_required",
            "requires_prose",
            "invalid_utter",
            "verbatim_trigger.unknown_response",
            "invalid_tool_constraints",
            "unknown_on_success_or_failure",
            "unknown_requires_confirmation_response",
            "empty_prose_if_body",
            "empty_prose_if_condition",
            "invalid_if_expression",
            "invalid_ordered_block",
            "invalid_block_reference",
            "missing_instructions",
            "fence_not_recognised",
            "skill.step.invalid",
            "outdated_collect_tool",
            "invalid_import_tools",
            "invalid_shared_tool",
            "skill.referenced.invalid_target",
            "hidden_skill_reference",
            "tools.unresolved_tool",
            "obsolete_import",
            "response.missing",
            "invalid_variant_key",
            "invalid_variant_shape",
            "registry.invalid_variant",
            "lsp.yaml.syntax_error",
            "lsp.yaml.duplicate_key",
            "invalid_mcp_server",
            "unsupported_integration_key",
            "invalid_integrations_yml",
            "invalid_agent_yml",
            "missing_agent_section",
        ],
    )


def test_a_final_newline_is_not_needed(tmp_path: Path) -> None:
    fx = write_fixture(tmp_path, REAL_AGENT)
    for rel in ("skills/handoff/skill.md", "skills/card_replace/skill.md", "memory.yml"):
        path = tmp_path / rel
        path.write_text(fx.files[rel].rstrip("\n"), encoding="utf-8")
    got = [g for g in diagnostics_of(tmp_path) if g[4] != "hint"]
    assert got == []


def test_3_20_era_agent_keys_are_warnings_never_errors(tmp_path: Path) -> None:
    check_diagnostics(
        tmp_path,
        """\
//- agent.yml
agent:
  id: acme-support
  «ignored_key:name»: Acme Support
  «ignored_key:description»: Helps Acme customers.
  persona: A friendly assistant for Acme.
  «ignored_key:rules»:
    - Be polite.
  «ignored_key:references»:
    - https://acme.example/help
«ignored_key:name»: acme
«ignored_key:references»:
  embeddings: main
prompts:
  «legacy.syntax:ack_enabled»: true
session_config:
  session_expiration_time: 60
tool_timeout: 30
«ignored_key:tracing»:
  enabled: false
«ignored_key:routing»:
  engine_managed: true
orchestrator:
  model_group: main
""",
        severities={"ignored_key": "warning", "legacy.syntax": "warning"},
    )


def test_3_20_era_memory_attributes_are_warnings_never_errors(tmp_path: Path) -> None:
    check_diagnostics(
        tmp_path,
        """\
//- memory.yml
flag:
  type: «unknown_type:boolean»
//- skills/card/memory.yml
schema:
  public:
    count:
      type: «unknown_type:number»
      «unknown_attribute:correctable»: true
    label:
      type: «unknown_type:string»
      llm_settable: false
    size:
      type: «unknown_type:integer»
//- skills/card/skill.md
---
description: Card.
---
if: session.card.count > 2 and session.card.label and session.card.size
Say @memory.card.count and @memory.project.flag.
""",
        severities={"unknown_type": "warning", "unknown_attribute": "warning"},
    )


def test_yaml_1_1_boolean_enum_value_is_explained(tmp_path: Path) -> None:
    got = check_diagnostics(
        tmp_path,
        """\
//- skills/card/memory.yml
schema:
  public:
    mode:
      type: categorical
      enum_values: [on, off, auto]
      llm_settable: true
      description: Delivery mode.
//- skills/card/skill.md
---
description: Card.
---
if: session.card.mode == «enum_value:"off"» or session.card.mode == "auto"
Explain that delivery is off.
""",
        severities={"enum_value": "warning"},
    )
    (msg,) = [g[5] for g in got]
    assert "YAML 1.1" in msg and "boolean False" in msg and "`'off'`" in msg
