"""Completion: what is offered at a `$0` cursor, and exactly which text each item replaces."""

from __future__ import annotations

from pathlib import Path

from inline_snapshot import snapshot

from mantle_lsp.ide.completion import CompletionItem, CompletionResult, complete, item_at
from mantle_lsp.model.project import Project
from mantle_lsp.model.source import read_source
from support import Fixture, render_completions, write_fixture

BASE = """\
//- memory.yml
customer_tier:
  type: categorical
  enum_values: [prepaid, business]
verified:
  type: bool
//- skills/card_replace/memory.yml
schema:
  public:
    reason:
      type: categorical
      description: Why the card is replaced.
      enum_values: [lost, stolen, damaged]
    replaced:
      type: bool
  private:
    pin_attempts:
      type: int
//- skills/card_replace/responses.yml
responses:
  utter_card_replaced:
    - text: Your new card is on its way.
//- skills/card_replace/tools.py
from rasa.mantle.tools.decorator import ToolContext, tool


@tool(description="Order a new card.")
async def order_card(context: ToolContext = None):
    return None
//- skills/helper/memory.yml
schema:
  private:
    token:
      type: text
//- skills/helper/skill.md
---
description: A hidden helper.
hidden: true
---
Help quietly.
//- skills/billing/memory.yml
schema:
  public:
    amount:
      type: float
  private:
    secret:
      type: text
//- skills/billing/skill.md
---
description: Billing questions.
---
Answer billing questions.
//- tools/lookup.py
from rasa.mantle.tools.decorator import ToolContext, tool


@tool(description="Look up the account.")
async def lookup_account(context: ToolContext = None):
    return None


@tool(description="Not imported anywhere.")
async def unused_shared(context: ToolContext = None):
    return None
"""


class Run:
    def __init__(self, fx: Fixture, result: CompletionResult) -> None:
        self.fx = fx
        self.result = result
        assert fx.cursor is not None
        self.rel, self.offset = fx.cursor
        self.text = fx.files[self.rel]

    @property
    def labels(self) -> list[str]:
        return [i.label for i in self.result.items]

    def item(self, label: str) -> CompletionItem:
        found = [i for i in self.result.items if i.label == label]
        assert found, f"{label!r} not offered; got {self.labels}"
        return found[0]

    def replaced(self, label: str) -> str:
        """The text an item replaces."""
        e = self.item(label).edit
        assert e is not None
        return self.text[e.range.start : e.range.end]

    def apply(self, label: str) -> str:
        """The file after accepting ``label``: the rest of the line after the cursor."""
        e = self.item(label).edit
        assert e is not None
        return self.text[: e.range.start] + e.new_text + self.text[e.range.end :]

    def applied_line(self, label: str) -> str:
        """The cursor's line after accepting ``label``."""
        e = self.item(label).edit
        assert e is not None
        after = self.apply(label)
        start = after.rfind("\n", 0, e.range.start) + 1
        end = after.find("\n", e.range.start + len(e.new_text))
        return after[start : end if end >= 0 else len(after)]

    @property
    def rendered(self) -> list[str]:
        return render_completions(self.result, self.text)


def run(tmp_path: Path, fixture: str, base: str = BASE) -> Run:
    fx = write_fixture(tmp_path, base + fixture)
    assert fx.cursor is not None, "the fixture needs a $0 cursor"
    rel, offset = fx.cursor
    proj = Project.load(fx.root)
    r = complete(proj, fx.root / rel, offset)
    out = Run(fx, r)
    assert len(out.labels) == len(set(out.labels)), f"duplicate labels: {out.labels}"
    for it in r.items:
        # every edit replaces only text before the cursor: the partial word typed so far
        assert it.edit is not None, it
        assert it.edit.range.end == offset, (it.label, it.edit.range, offset)
        assert it.edit.range.start <= offset
        # documentation is built lazily; it builds, and resolve finds the same item
        assert isinstance(it.documentation, str)
        again = item_at(proj, fx.root / rel, offset, it.label)
        assert again is not None and again.documentation == it.documentation, it.label
        assert (again.kind, again.detail, again.edit) == (it.kind, it.detail, it.edit)
    return out


def check_completion(tmp_path: Path, fixture: str, base: str = BASE) -> list[str]:
    """The completion list at the cursor, rendered (``support.render_completions``)."""
    return run(tmp_path, fixture, base).rendered


def skill_md(body: str, frontmatter: str = "description: Replace a card.\n") -> str:
    return f"//- skills/card_replace/skill.md\n---\n{frontmatter}---\n{body}"


TC = "description: Replace.\ntool_constraints:\n  - order_card:\n"  # + the tool's options
ONE_STEP = "steps:\n  - id: a\n    action: utter_card_replaced\n"


def block(yaml: str, block_id: str = "main", prose: str = "Help.\n\n") -> str:
    return f"{prose}:::ordered_block id={block_id}\n{yaml}:::\n"


# ---------------------------------------------------------------------------------------
# conditions: prose `if:` lines
# ---------------------------------------------------------------------------------------


def test_if_session_dot_offers_readable_namespaces_own_skill_first(tmp_path: Path) -> None:
    r = run(tmp_path, skill_md("Help.\n\nif: session.$0\nDo it.\n"))
    assert r.rendered == snapshot(
        [
            "card_replace (namespace) this skill",
            "project (namespace) project memory",
            "billing (namespace) skill · 1 public field",
            "default_completed (namespace) bundled skill · 1 public field",
            "default_continue_interrupted (namespace) bundled skill · 2 public fields",
            "default_customer_satisfaction (namespace) bundled skill · 1 public field",
            "default_unsupported_request_handler (namespace) bundled skill · 1 public field",
        ]
    )


def test_half_written_if_line_at_end_of_file(tmp_path: Path) -> None:
    assert check_completion(tmp_path, skill_md("Help.\n\nif: session.$0")) == snapshot(
        [
            "card_replace (namespace) this skill",
            "project (namespace) project memory",
            "billing (namespace) skill · 1 public field",
            "default_completed (namespace) bundled skill · 1 public field",
            "default_continue_interrupted (namespace) bundled skill · 2 public fields",
            "default_customer_satisfaction (namespace) bundled skill · 1 public field",
            "default_unsupported_request_handler (namespace) bundled skill · 1 public field",
        ]
    )


def test_partial_namespace_is_replaced(tmp_path: Path) -> None:
    r = run(tmp_path, skill_md("Help.\n\nif: session.ca$0\nDo it.\n"))
    assert r.rendered == snapshot(
        [
            "card_replace (namespace) this skill | replaces 'ca'",
            "project (namespace) project memory | replaces 'ca'",
            "billing (namespace) skill · 1 public field | replaces 'ca'",
            "default_completed (namespace) bundled skill · 1 public field | replaces 'ca'",
            "default_continue_interrupted (namespace) bundled skill · 2 public fields | replaces 'ca'",
            "default_customer_satisfaction (namespace) bundled skill · 1 public field | replaces 'ca'",
            "default_unsupported_request_handler (namespace) bundled skill · 1 public field | replaces 'ca'",
        ]
    )
    assert r.applied_line("card_replace") == snapshot("if: session.card_replace")


def test_entries_of_own_skill_include_private_fields(tmp_path: Path) -> None:
    r = run(tmp_path, skill_md("Help.\n\nif: session.card_replace.re$0\nDo it.\n"))
    assert r.rendered == snapshot(
        [
            "reason (field) categorical | replaces 're'",
            "replaced (field) bool | replaces 're'",
            "pin_attempts (field) int | replaces 're'",
        ]
    )
    reason = r.item("reason")
    assert reason.documentation == snapshot("""\
**card_replace.reason** · `categorical` · public field of `card_replace`

Why the card is replaced.

Values: `'lost'`, `'stolen'`, `'damaged'`

Declared in `skills/card_replace/memory.yml`.\
""")
    assert r.item("pin_attempts").documentation == snapshot("""\
**card_replace.pin_attempts** · `int` · private field of `card_replace`

Declared in `skills/card_replace/memory.yml`.\
""")


def test_other_skills_private_fields_are_never_offered(tmp_path: Path) -> None:
    assert check_completion(
        tmp_path, skill_md("Help.\n\nif: session.billing.$0\nDo it.\n")
    ) == snapshot(["amount (field) float"])


def test_private_only_skill_and_system_offer_nothing(tmp_path: Path) -> None:
    assert check_completion(
        tmp_path, skill_md("Help.\n\nif: session.helper.$0\nDo it.\n")
    ) == snapshot([])
    assert check_completion(
        tmp_path, skill_md("Help.\n\nif: session.system.$0\nDo it.\n")
    ) == snapshot([])


def test_bundled_default_skill_public_fields(tmp_path: Path) -> None:
    r = run(tmp_path, skill_md("Help.\n\nif: session.default_completed.$0\nDo it.\n"))
    assert r.rendered == snapshot(["wants_to_continue (field) bool"])
    assert r.item("wants_to_continue").documentation == snapshot("""\
**default_completed.wants_to_continue** · `bool` · public field of the bundled skill `default_completed`

the user wants to continue

Declared in `bundled with the engine`.\
""")


def test_project_entries(tmp_path: Path) -> None:
    r = run(tmp_path, skill_md("Help.\n\nif: session.project.$0\nDo it.\n"))
    assert r.rendered == snapshot(["customer_tier (field) categorical", "verified (field) bool"])
    assert r.item("customer_tier").documentation == snapshot("""\
**project.customer_tier** · `categorical` · project field

Values: `'prepaid'`, `'business'`

Declared in `memory.yml`.\
""")


def test_categorical_values_after_equals(tmp_path: Path) -> None:
    r = run(tmp_path, skill_md("Help.\n\nif: session.card_replace.reason == $0\nDo it.\n"))
    assert r.rendered == snapshot(
        [
            "'lost' (value) card_replace.reason",
            "'stolen' (value) card_replace.reason",
            "'damaged' (value) card_replace.reason",
            "None (value) unset",
        ]
    )


def test_values_after_not_equal_without_space_get_a_space(tmp_path: Path) -> None:
    r = run(tmp_path, skill_md("Help.\n\nif: session.project.customer_tier !=$0\nDo it.\n"))
    assert r.rendered == snapshot(
        [
            "'prepaid' (value) project.customer_tier | -> \" 'prepaid'\"",
            "'business' (value) project.customer_tier | -> \" 'business'\"",
            "None (value) unset | -> ' None'",
        ]
    )
    assert r.applied_line("'business'") == snapshot(
        "if: session.project.customer_tier != 'business'"
    )


def test_partial_quoted_value_is_replaced_with_its_quote(tmp_path: Path) -> None:
    r = run(tmp_path, skill_md('Help.\n\nif: session.card_replace.reason == "st$0\nDo it.\n'))
    assert r.rendered == snapshot(
        [
            '"lost" (value) card_replace.reason | replaces \'"st\'',
            '"stolen" (value) card_replace.reason | replaces \'"st\'',
            '"damaged" (value) card_replace.reason | replaces \'"st\'',
        ]
    )
    assert r.applied_line('"stolen"') == snapshot('if: session.card_replace.reason == "stolen"')


def test_bool_values(tmp_path: Path) -> None:
    assert check_completion(
        tmp_path, skill_md("Help.\n\nif: session.card_replace.replaced == $0\nDo it.\n")
    ) == snapshot(["True (value) bool", "False (value) bool", "None (value) unset"])


def test_other_types_offer_only_none(tmp_path: Path) -> None:
    assert check_completion(
        tmp_path, skill_md("Help.\n\nif: session.billing.amount != $0\nDo it.\n")
    ) == snapshot(["None (value) unset"])


def test_operators_after_a_complete_operand(tmp_path: Path) -> None:
    r = run(tmp_path, skill_md("Help.\n\nif: session.card_replace.reason $0\nDo it.\n"))
    assert r.rendered == snapshot(
        [
            "== (keyword) equal to | + ' '",
            "!= (keyword) not equal to | + ' '",
            "< (keyword) less than | + ' '",
            "<= (keyword) less than or equal to | + ' '",
            "> (keyword) greater than | + ' '",
            ">= (keyword) greater than or equal to | + ' '",
            "and (keyword) both sides must hold | + ' '",
            "or (keyword) either side must hold | + ' '",
        ]
    )
    assert r.applied_line("and") == snapshot("if: session.card_replace.reason and ")


def test_connective_after_a_comparison_replaces_the_typed_word(tmp_path: Path) -> None:
    assert check_completion(
        tmp_path, skill_md("Help.\n\nif: session.card_replace.reason == 'lost' an$0\nDo it.\n")
    ) == snapshot(
        [
            "== (keyword) equal to | replaces 'an' | + ' '",
            "!= (keyword) not equal to | replaces 'an' | + ' '",
            "< (keyword) less than | replaces 'an' | + ' '",
            "<= (keyword) less than or equal to | replaces 'an' | + ' '",
            "> (keyword) greater than | replaces 'an' | + ' '",
            ">= (keyword) greater than or equal to | replaces 'an' | + ' '",
            "and (keyword) both sides must hold | replaces 'an' | + ' '",
            "or (keyword) either side must hold | replaces 'an' | + ' '",
        ]
    )


def test_operand_start(tmp_path: Path) -> None:
    assert check_completion(tmp_path, skill_md("Help.\n\nif: $0\nDo it.\n")) == snapshot(
        ["not (keyword) negation | + ' '", "session. (keyword) memory reference | suggests again"]
    )
    assert check_completion(
        tmp_path, skill_md("Help.\n\nif: session.project.verified and $0\nDo it.\n")
    ) == snapshot(
        ["not (keyword) negation | + ' '", "session. (keyword) memory reference | suggests again"]
    )


def test_no_completion_right_after_a_closed_string(tmp_path: Path) -> None:
    assert check_completion(
        tmp_path, skill_md("Help.\n\nif: session.card_replace.reason == 'lost'$0\nDo.\n")
    ) == snapshot([])


def test_if_in_the_middle_of_a_paragraph_is_not_a_condition(tmp_path: Path) -> None:
    assert check_completion(tmp_path, skill_md("Help.\nif: session.$0\nDo it.\n")) == snapshot([])


# ---------------------------------------------------------------------------------------
# conditions: YAML sites (parsed and half-written)
# ---------------------------------------------------------------------------------------


def test_tool_requires_half_written_unclosed_quote(tmp_path: Path) -> None:
    fm = (
        'description: Replace.\ntool_constraints:\n  - order_card:\n      requires: "session.ca$0\n'
    )
    assert check_completion(tmp_path, skill_md("Help.\n", fm)) == snapshot(
        [
            "card_replace (namespace) this skill | replaces 'ca'",
            "project (namespace) project memory | replaces 'ca'",
            "billing (namespace) skill · 1 public field | replaces 'ca'",
            "default_completed (namespace) bundled skill · 1 public field | replaces 'ca'",
            "default_continue_interrupted (namespace) bundled skill · 2 public fields | replaces 'ca'",
            "default_customer_satisfaction (namespace) bundled skill · 1 public field | replaces 'ca'",
            "default_unsupported_request_handler (namespace) bundled skill · 1 public field | replaces 'ca'",
        ]
    )


def test_tool_requires_parsed_site(tmp_path: Path) -> None:
    fm = TC + '      requires: "session.card_replace.$0"\n'
    assert check_completion(tmp_path, skill_md("Help.\n", fm)) == snapshot(
        ["reason (field) categorical", "replaced (field) bool", "pin_attempts (field) int"]
    )


def test_values_inside_single_quoted_yaml_use_double_quotes(tmp_path: Path) -> None:
    fm = TC + "      requires: 'session.card_replace.reason == $0'\n"
    assert check_completion(tmp_path, skill_md("Help.\n", fm)) == snapshot(
        [
            '"lost" (value) card_replace.reason',
            '"stolen" (value) card_replace.reason',
            '"damaged" (value) card_replace.reason',
            "None (value) unset",
        ]
    )


def test_requires_in_a_flow_mapping(tmp_path: Path) -> None:
    fm = (
        'description: Replace.\ntool_constraints:\n  - order_card: {requires: "session.project.$0\n'
    )
    assert check_completion(tmp_path, skill_md("Help.\n", fm)) == snapshot(
        ["customer_tier (field) categorical", "verified (field) bool"]
    )


def test_folded_condition_continuation_line(tmp_path: Path) -> None:
    fm = (
        "description: Replace.\ncomplete_when:\n  condition: >\n"
        "    session.card_replace.replaced == True and\n    session.billing.$0\n"
    )
    assert check_completion(tmp_path, skill_md("Help.\n", fm)) == snapshot(["amount (field) float"])


def test_skill_complete_when_is_a_mapping_not_a_condition(tmp_path: Path) -> None:
    fm = "description: Replace.\ncomplete_when: $0\n"
    assert check_completion(tmp_path, skill_md("Help.\n", fm)) == snapshot([])


def test_utter_when_condition(tmp_path: Path) -> None:
    fm = "description: R.\nutter:\n  - utter_card_replaced:\n"
    fm += "      when: session.project.customer_tier == $0\n"
    assert check_completion(tmp_path, skill_md("Help.\n", fm)) == snapshot(
        [
            "'prepaid' (value) project.customer_tier",
            "'business' (value) project.customer_tier",
            "None (value) unset",
        ]
    )


def test_closed_quoted_value_offers_nothing_after_it(tmp_path: Path) -> None:
    fm = TC + '      requires: "session.project.verified" $0\n'
    assert check_completion(tmp_path, skill_md("Help.\n", fm)) == snapshot([])


BLOCK = """\
Help.

:::ordered_block id=main
steps:
  - id: ask
    collect: reason
    next:
      - if: "session.card_replace.reason == 'lost'"
        then: lock
      - else: done
  - id: lock
    execute_tool: order_card
    next: done
  - id: done
    action: utter_card_replaced
    next: END
:::
"""


def test_branch_if_in_a_block(tmp_path: Path) -> None:
    body = BLOCK.replace("'lost'\"", "'lost' and session.$0\"")
    assert check_completion(tmp_path, skill_md(body)) == snapshot(
        [
            "card_replace (namespace) this skill",
            "project (namespace) project memory",
            "billing (namespace) skill · 1 public field",
            "default_completed (namespace) bundled skill · 1 public field",
            "default_continue_interrupted (namespace) bundled skill · 2 public fields",
            "default_customer_satisfaction (namespace) bundled skill · 1 public field",
            "default_unsupported_request_handler (namespace) bundled skill · 1 public field",
        ]
    )


def test_step_complete_when_half_written(tmp_path: Path) -> None:
    body = BLOCK.replace(
        "  - id: done\n",
        "  - id: talk\n    instructions: Talk.\n"
        "    complete_when: session.card_replace.$0\n  - id: done\n",
    )
    assert check_completion(tmp_path, skill_md(body)) == snapshot(
        ["reason (field) categorical", "replaced (field) bool", "pin_attempts (field) int"]
    )


def test_execute_tool_parameter_session_reference(tmp_path: Path) -> None:
    body = BLOCK.replace(
        "    execute_tool: order_card\n",
        "    execute_tool: order_card\n    parameters:\n      why: session.card_replace.r$0\n",
    )
    assert check_completion(tmp_path, skill_md(body)) == snapshot(
        [
            "reason (field) categorical | replaces 'r'",
            "replaced (field) bool | replaces 'r'",
            "pin_attempts (field) int | replaces 'r'",
        ]
    )


def test_response_condition_in_a_skill_file(tmp_path: Path) -> None:
    fixture = """\
//- skills/card_replace/responses.yml
responses:
  utter_card_replaced:
    - text: Lost card.
      condition: "session.card_replace.reason == $0"
    - text: Your new card is on its way.
"""
    assert check_completion(tmp_path, fixture) == snapshot(
        [
            "'lost' (value) card_replace.reason",
            "'stolen' (value) card_replace.reason",
            "'damaged' (value) card_replace.reason",
            "None (value) unset",
        ]
    )


def test_root_responses_read_public_fields_and_project_only(tmp_path: Path) -> None:
    fixture = """\
//- responses.yml
responses:
  utter_hello:
    - text: Hi.
      condition: "session.$0
"""
    assert check_completion(tmp_path, fixture) == snapshot(
        [
            "project (namespace) project memory",
            "billing (namespace) skill · 1 public field",
            "card_replace (namespace) skill · 2 public fields",
            "default_completed (namespace) bundled skill · 1 public field",
            "default_continue_interrupted (namespace) bundled skill · 2 public fields",
            "default_customer_satisfaction (namespace) bundled skill · 1 public field",
            "default_unsupported_request_handler (namespace) bundled skill · 1 public field",
        ]
    )
    fixture2 = fixture.replace("session.$0", "session.card_replace.$0")
    assert check_completion(tmp_path, fixture2) == snapshot(
        ["reason (field) categorical", "replaced (field) bool"]
    )  # pin_attempts is private


def test_precondition_satisfied_when_in_agent_yml(tmp_path: Path) -> None:
    fixture = """\
//- agent.yml
agent:
  persona: A bank assistant.
orchestrator:
  model_group: main
  preconditions:
    customer_verified:
      satisfied_when: "session.project.$0"
      resolve_with: billing
"""
    assert check_completion(tmp_path, fixture) == snapshot(
        ["customer_tier (field) categorical", "verified (field) bool"]
    )


# ---------------------------------------------------------------------------------------
# prose @ tokens and paragraph starts
# ---------------------------------------------------------------------------------------


def test_at_offers_token_kinds(tmp_path: Path) -> None:
    r = run(tmp_path, skill_md("Use @$0 now.\n"))
    assert r.rendered == snapshot(
        [
            "memory. (keyword) @memory | suggests again | filter 'memory'",
            "skill. (keyword) @skill | suggests again | filter 'skill'",
            "tool. (keyword) @tool | suggests again | filter 'tool'",
            "block. (keyword) @block | suggests again | filter 'block'",
        ]
    )


def test_at_partial_kind_is_replaced(tmp_path: Path) -> None:
    r = run(tmp_path, skill_md("Use @me$0\n"))
    assert r.rendered == snapshot(
        [
            "memory. (keyword) @memory | replaces 'me' | suggests again | filter 'memory'",
            "skill. (keyword) @skill | replaces 'me' | suggests again | filter 'skill'",
            "tool. (keyword) @tool | replaces 'me' | suggests again | filter 'tool'",
            "block. (keyword) @block | replaces 'me' | suggests again | filter 'block'",
        ]
    )
    assert r.applied_line("memory.") == snapshot("Use @memory.")


def test_email_address_is_not_a_token(tmp_path: Path) -> None:
    assert check_completion(tmp_path, skill_md("Write to help@$0\n")) == snapshot([])


def test_at_memory_namespaces_and_entries(tmp_path: Path) -> None:
    assert check_completion(tmp_path, skill_md("Read @memory.$0\n")) == snapshot(
        [
            "card_replace (namespace) this skill",
            "project (namespace) project memory",
            "billing (namespace) skill · 1 public field",
            "default_completed (namespace) bundled skill · 1 public field",
            "default_continue_interrupted (namespace) bundled skill · 2 public fields",
            "default_customer_satisfaction (namespace) bundled skill · 1 public field",
            "default_unsupported_request_handler (namespace) bundled skill · 1 public field",
        ]
    )
    assert check_completion(tmp_path, skill_md("Read @memory.billing.$0\n")) == snapshot(
        ["amount (field) float"]
    )
    assert check_completion(tmp_path, skill_md("Read @memory.card_replace.pin$0\n")) == snapshot(
        [
            "reason (field) categorical | replaces 'pin'",
            "replaced (field) bool | replaces 'pin'",
            "pin_attempts (field) int | replaces 'pin'",
        ]
    )


def test_at_skill_offers_every_skill_and_flags_hidden_ones(tmp_path: Path) -> None:
    r = run(tmp_path, skill_md("Hand over to @skill.$0\n"))
    assert r.rendered == snapshot(
        [
            "billing (skill) skill",
            "card_replace (skill) skill",
            "helper (skill) hidden",
            "default_completed (skill) bundled default skill",
            "default_continue_interrupted (skill) bundled default skill",
            "default_customer_satisfaction (skill) bundled default skill",
            "default_session_start (skill) bundled default skill",
            "default_silence_timeout (skill) bundled default skill",
            "default_silence_timeout_hangup (skill) bundled default skill",
            "default_unsupported_request_handler (skill) bundled default skill",
        ]
    )
    assert r.item("billing").documentation == snapshot("""\
**billing**

Billing questions.\
""")


def test_at_tool_offers_visible_tools(tmp_path: Path) -> None:
    fm = "description: Replace a card.\nimport_tools:\n  - lookup_account\n"
    r = run(tmp_path, skill_md("Call @tool.$0\n", fm))
    assert r.rendered == snapshot(
        [
            "order_card (tool) tool of card_replace",
            "lookup_account (tool) shared tool",
            "activate (tool) framework tool",
            "complete (tool) framework tool",
            "cancel (tool) framework tool",
            "set_fields (tool) framework tool",
            "correct (tool) framework tool",
            "resolve_tool_confirmation (tool) framework tool",
            "search_knowledge (tool) framework tool",
            "cannot_help (tool) framework tool",
            "listen (tool) framework tool",
            "hangup (tool) framework tool",
        ]
    )
    assert r.item("order_card").documentation == snapshot("""\
Order a new card.

Defined in `skills/card_replace/tools.py`.\
""")


def test_at_tool_offers_mcp_bare_names(tmp_path: Path) -> None:
    fm = "description: Replace a card.\nimport_tools:\n  - mcp/bank:freeze_card\n"
    r = run(tmp_path, skill_md("Call @tool.fr$0\n", fm))
    assert r.rendered == snapshot(
        [
            "order_card (tool) tool of card_replace | replaces 'fr'",
            "freeze_card (tool) MCP tool (bank) | replaces 'fr'",
            "activate (tool) framework tool | replaces 'fr'",
            "complete (tool) framework tool | replaces 'fr'",
            "cancel (tool) framework tool | replaces 'fr'",
            "set_fields (tool) framework tool | replaces 'fr'",
            "correct (tool) framework tool | replaces 'fr'",
            "resolve_tool_confirmation (tool) framework tool | replaces 'fr'",
            "search_knowledge (tool) framework tool | replaces 'fr'",
            "cannot_help (tool) framework tool | replaces 'fr'",
            "listen (tool) framework tool | replaces 'fr'",
            "hangup (tool) framework tool | replaces 'fr'",
        ]
    )
    assert "bank" in r.item("freeze_card").detail


def test_at_block_offers_this_skills_blocks(tmp_path: Path) -> None:
    body = "Go to @block.$0\n\n" + BLOCK.split("\n", 2)[2] + block(ONE_STEP, "other", "\n")
    assert check_completion(tmp_path, skill_md(body)) == snapshot(
        [
            "main (block) ordered block of card_replace",
            "other (block) ordered block of card_replace",
        ]
    )


def test_step_instructions_offer_memory_and_tool_tokens(tmp_path: Path) -> None:
    body = BLOCK.replace(
        "  - id: done\n", "  - id: talk\n    instructions: Use @$0\n  - id: done\n"
    )
    assert check_completion(tmp_path, skill_md(body)) == snapshot(
        [
            "memory. (keyword) @memory | suggests again | filter 'memory'",
            "tool. (keyword) @tool | suggests again | filter 'tool'",
        ]
    )


def test_step_instructions_block_scalar(tmp_path: Path) -> None:
    body = BLOCK.replace(
        "  - id: done\n",
        "  - id: talk\n    instructions: >\n      Explain.\n"
        "      Read @memory.card_replace.$0\n  - id: done\n",
    )
    assert check_completion(tmp_path, skill_md(body)) == snapshot(
        ["reason (field) categorical", "replaced (field) bool", "pin_attempts (field) int"]
    )


def test_if_snippet_at_paragraph_start(tmp_path: Path) -> None:
    r = run(tmp_path, skill_md("Help.\n\ni$0\n"))
    assert r.rendered == snapshot(
        ["if: (snippet) conditional paragraph | replaces 'i' | + ' $1\\n$0' | snippet"]
    )


def test_if_snippet_on_first_body_line_and_not_mid_paragraph(tmp_path: Path) -> None:
    assert check_completion(tmp_path, skill_md("$0")) == snapshot(
        ["if: (snippet) conditional paragraph | + ' $1\\n$0' | snippet"]
    )
    assert check_completion(tmp_path, skill_md("Help the customer.\nth$0\n")) == snapshot([])


def test_astral_characters_before_the_cursor(tmp_path: Path) -> None:
    r = run(tmp_path, skill_md("🎉 Happy 𝒸ards 🎉\n\nif: 🎉 == session.card_replace.rea$0\nDo.\n"))
    assert r.rendered == snapshot(
        [
            "reason (field) categorical | replaces 'rea'",
            "replaced (field) bool | replaces 'rea'",
            "pin_attempts (field) int | replaces 'rea'",
        ]
    )
    assert r.applied_line("reason") == snapshot("if: 🎉 == session.card_replace.reason")
    r = run(tmp_path, skill_md("𝒸𝒸 Read @memory.card_replace.re$0 now\n"))
    assert r.rendered == snapshot(
        [
            "reason (field) categorical | replaces 're'",
            "replaced (field) bool | replaces 're'",
            "pin_attempts (field) int | replaces 're'",
        ]
    )
    assert r.applied_line("reason") == snapshot("𝒸𝒸 Read @memory.card_replace.reason now")


# ---------------------------------------------------------------------------------------
# skill.md frontmatter and block YAML
# ---------------------------------------------------------------------------------------


def test_frontmatter_top_level_keys_exclude_present_ones(tmp_path: Path) -> None:
    fm = "description: Replace a card.\n$0\nhidden: false\n"
    r = run(tmp_path, skill_md("Help.\n", fm))
    assert r.rendered == snapshot(
        [
            "name (property) | + ': '",
            "precondition (property) | + ': ' | suggests again",
            "disabled (property) | + ': ' | suggests again",
            "always_include_in_prompt (property) | + ': ' | suggests again",
            "complete_when (property) | + ':\\n  '",
            "import_tools (property) | + ':\\n  - '",
            "tool_constraints (property) | + ':\\n  - '",
            "utter (property) | + ':\\n  - '",
            "knowledge_answering (property) | + ':\\n  '",
            "routing (property) | + ':\\n  '",
        ]
    )
    assert r.applied_line("name") == snapshot("name: ")
    assert r.applied_line("tool_constraints") == snapshot("""\
tool_constraints:
  - \
""")


def test_frontmatter_partial_key_is_replaced(tmp_path: Path) -> None:
    fm = "na$0\n"
    assert check_completion(tmp_path, skill_md("Help.\n", fm)) == snapshot(
        [
            "name (property) | replaces 'na' | + ': '",
            "description (property) | replaces 'na' | + ': '",
            "precondition (property) | replaces 'na' | + ': ' | suggests again",
            "hidden (property) | replaces 'na' | + ': ' | suggests again",
            "disabled (property) | replaces 'na' | + ': ' | suggests again",
            "always_include_in_prompt (property) | replaces 'na' | + ': ' | suggests again",
            "complete_when (property) | replaces 'na' | + ':\\n  '",
            "import_tools (property) | replaces 'na' | + ':\\n  - '",
            "tool_constraints (property) | replaces 'na' | + ':\\n  - '",
            "utter (property) | replaces 'na' | + ':\\n  - '",
            "knowledge_answering (property) | replaces 'na' | + ':\\n  '",
            "routing (property) | replaces 'na' | + ':\\n  '",
        ]
    )


def test_frontmatter_keys_only_at_column_zero(tmp_path: Path) -> None:
    fm = "description: >\n  Replace a card\n  $0\n"
    assert check_completion(tmp_path, skill_md("Help.\n", fm)) == snapshot([])


def test_tool_constraints_items_and_options(tmp_path: Path) -> None:
    fm = "description: Replace.\ntool_constraints:\n  - $0\n"
    assert check_completion(tmp_path, skill_md("Help.\n", fm)) == snapshot(
        [
            "order_card (tool) tool of card_replace",
            "lookup_account (tool) shared tool",
            "unused_shared (tool) shared tool",
        ]
    )
    fm = TC + "      on_success: utter_card_replaced\n      $0\n"
    assert check_completion(tmp_path, skill_md("Help.\n", fm)) == snapshot(
        [
            "requires (property) | + ': '",
            "requires_confirmation (property) | + ':\\n        '",
            "on_failure (property) | + ': ' | suggests again",
        ]
    )
    fm = TC + "      requires_confirmation:\n        $0\n"
    assert check_completion(tmp_path, skill_md("Help.\n", fm)) == snapshot(
        [
            "enabled (property) | + ': ' | suggests again",
            "utter_for_confirmation (property) | + ': ' | suggests again",
            "utter_on_user_denial (property) | + ': ' | suggests again",
        ]
    )


def test_project_responses_sort_before_bundled_ones(tmp_path: Path) -> None:
    fm = TC + "      on_failure: $0\n"
    r = run(tmp_path, skill_md("Help.\n", fm))
    assert r.rendered == snapshot(
        [
            "utter_card_replaced (response) skills/card_replace/responses.yml",
            "utter_ask_csat_score (response) bundled response",
            "utter_ask_wants_to_continue (response) bundled response",
            "utter_ask_wants_to_resume (response) bundled response",
            "utter_decline_in_domain_out_of_scope (response) bundled response",
            "utter_decline_out_of_domain_out_of_scope (response) bundled response",
            "utter_hangup_goodbye (response) bundled response",
            "utter_incoming_message_rejected (response) bundled response",
            "utter_inform_hangup (response) bundled response",
            "utter_model_call_error (response) bundled response",
            "utter_model_request_hook_error (response) bundled response",
            "utter_outgoing_text_rejected (response) bundled response",
            "utter_precondition_unmet (response) bundled response",
            "utter_set_memory_button_skipped (response) bundled response",
            "utter_silence_timeout_check_in (response) bundled response",
            "utter_thank_you_for_feedback (response) bundled response",
            "utter_tool_call_hook_error (response) bundled response",
        ]
    )


def test_gate_responses(tmp_path: Path) -> None:
    fm = "description: Replace.\ntool_constraints:\n  - order_card:\n      on_success: utter_ca$0\n"
    r = run(tmp_path, skill_md("Help.\n", fm))
    assert r.rendered == snapshot(
        [
            "utter_card_replaced (response) skills/card_replace/responses.yml | replaces 'utter_ca'",
            "utter_ask_csat_score (response) bundled response | replaces 'utter_ca'",
            "utter_ask_wants_to_continue (response) bundled response | replaces 'utter_ca'",
            "utter_ask_wants_to_resume (response) bundled response | replaces 'utter_ca'",
            "utter_decline_in_domain_out_of_scope (response) bundled response | replaces 'utter_ca'",
            "utter_decline_out_of_domain_out_of_scope (response) bundled response | replaces 'utter_ca'",
            "utter_hangup_goodbye (response) bundled response | replaces 'utter_ca'",
            "utter_incoming_message_rejected (response) bundled response | replaces 'utter_ca'",
            "utter_inform_hangup (response) bundled response | replaces 'utter_ca'",
            "utter_model_call_error (response) bundled response | replaces 'utter_ca'",
            "utter_model_request_hook_error (response) bundled response | replaces 'utter_ca'",
            "utter_outgoing_text_rejected (response) bundled response | replaces 'utter_ca'",
            "utter_precondition_unmet (response) bundled response | replaces 'utter_ca'",
            "utter_set_memory_button_skipped (response) bundled response | replaces 'utter_ca'",
            "utter_silence_timeout_check_in (response) bundled response | replaces 'utter_ca'",
            "utter_thank_you_for_feedback (response) bundled response | replaces 'utter_ca'",
            "utter_tool_call_hook_error (response) bundled response | replaces 'utter_ca'",
        ]
    )
    assert r.item("utter_card_replaced").documentation == snapshot("Your new card is on its way.")


def test_utter_items_are_responses(tmp_path: Path) -> None:
    fm = "description: Replace.\nutter:\n  - $0\n"
    assert check_completion(tmp_path, skill_md("Help.\n", fm)) == snapshot(
        [
            "utter_card_replaced (response) skills/card_replace/responses.yml",
            "utter_ask_csat_score (response) bundled response",
            "utter_ask_wants_to_continue (response) bundled response",
            "utter_ask_wants_to_resume (response) bundled response",
            "utter_decline_in_domain_out_of_scope (response) bundled response",
            "utter_decline_out_of_domain_out_of_scope (response) bundled response",
            "utter_hangup_goodbye (response) bundled response",
            "utter_incoming_message_rejected (response) bundled response",
            "utter_inform_hangup (response) bundled response",
            "utter_model_call_error (response) bundled response",
            "utter_model_request_hook_error (response) bundled response",
            "utter_outgoing_text_rejected (response) bundled response",
            "utter_precondition_unmet (response) bundled response",
            "utter_set_memory_button_skipped (response) bundled response",
            "utter_silence_timeout_check_in (response) bundled response",
            "utter_thank_you_for_feedback (response) bundled response",
            "utter_tool_call_hook_error (response) bundled response",
        ]
    )
    fm = "description: Replace.\nutter:\n  - utter_card_replaced:\n      $0\n"
    assert check_completion(tmp_path, skill_md("Help.\n", fm)) == snapshot(
        ["on (property) | + ': ' | suggests again", "when (property) | + ': '"]
    )


def test_import_tools_items(tmp_path: Path) -> None:
    fixture = skill_md("Help.\n", "description: Replace.\nimport_tools:\n  - $0\n")
    base = (
        BASE
        + "//- integrations.yml\nmodel_groups:\n  - id: main\n    models: []\n"
        + "mcp_servers:\n  - name: bank\n    url: http://x\n"
    )
    assert check_completion(tmp_path, fixture, base=base) == snapshot(
        [
            "lookup_account (tool) shared tool",
            "mcp/bank: (mcp) MCP server",
            "unused_shared (tool) shared tool",
        ]
    )


def test_precondition_names(tmp_path: Path) -> None:
    fixture = """\
//- agent.yml
agent:
  persona: A bank assistant.
orchestrator:
  model_group: main
  preconditions:
    customer_verified:
      satisfied_when: "session.project.verified == True"
      resolve_with: billing
""" + skill_md("Help.\n", "description: Replace.\nprecondition: cust$0\n")
    r = run(tmp_path, fixture)
    assert r.rendered == snapshot(["customer_verified (precondition) agent.yml | replaces 'cust'"])
    assert r.item("customer_verified").documentation == snapshot(
        "satisfied when `session.project.verified == True`; resolved by `billing`"
    )


def test_boolean_frontmatter_values(tmp_path: Path) -> None:
    assert check_completion(
        tmp_path, skill_md("Help.\n", "description: R.\nhidden: t$0\n")
    ) == snapshot(["false (value) | replaces 't'", "true (value) | replaces 't'"])


def test_block_top_level_keys(tmp_path: Path) -> None:
    body = block(ONE_STEP + "$0\n")
    assert check_completion(tmp_path, skill_md(body)) == snapshot(
        [
            "tools (property) | + ':\\n  - '",
            "complete_when (property) | + ': '",
        ]
    )


def test_step_keys_follow_the_step_kind(tmp_path: Path) -> None:
    body = BLOCK.replace("    collect: reason\n", "    collect: reason\n    $0\n")
    assert check_completion(tmp_path, skill_md(body)) == snapshot(
        [
            "utterance (property) | + ': ' | suggests again",
            "description (property) | + ': '",
            "dtmf (property) | + ':\\n      '",
            "ask_before_filling (property) | + ': ' | suggests again",
        ]
    )


def test_new_step_offers_id_first(tmp_path: Path) -> None:
    body = BLOCK.replace("  - id: lock\n", "  - $0\n  - id: lock\n")
    r = run(tmp_path, skill_md(body))
    assert r.rendered == snapshot(
        [
            "id (property) | + ': '",
            "action (property) | + ': ' | suggests again",
            "ask_before_filling (property) | + ': ' | suggests again",
            "call (property) | + ': ' | suggests again",
            "collect (property) | + ': ' | suggests again",
            "complete_when (property) | + ': '",
            "description (property) | + ': '",
            "dtmf (property) | + ':\\n      '",
            "execute_tool (property) | + ': ' | suggests again",
            "instructions (property) | + ': '",
            "link (property) | + ': ' | suggests again",
            "next (property) | + ': ' | suggests again",
            "noop (property) | + ': ' | suggests again",
            "optional (property) | + ': ' | suggests again",
            "parameters (property) | + ':\\n      '",
            "set_memory (property) | + ':\\n      '",
            "utter (property) | + ':\\n      - '",
            "utterance (property) | + ': ' | suggests again",
        ]
    )


def test_step_keys_in_half_written_block(tmp_path: Path) -> None:
    # the block YAML does not parse (the `- id:` line has a stray quote)
    body = block('steps:\n  - id: "a\n    action: utter_card_replaced\n    ne$0\n')
    assert check_completion(tmp_path, skill_md(body)) == snapshot(
        ["next (property) | replaces 'ne' | + ': ' | suggests again"]
    )


def test_next_offers_step_ids_of_the_block_and_end(tmp_path: Path) -> None:
    body = BLOCK.replace("    next: done\n", "    next: $0\n")
    body += block("steps:\n  - id: elsewhere\n    action: utter_card_replaced\n", "other", "\n")
    r = run(tmp_path, skill_md(body))
    assert r.rendered == snapshot(
        [
            "ask (step) step of block main",
            "done (step) step of block main",
            "lock (step) this step (loops)",
            "END (keyword) end of the block",
        ]
    )


def test_then_and_else_offer_step_ids(tmp_path: Path) -> None:
    body = BLOCK.replace("then: lock", "then: lo$0")
    assert check_completion(tmp_path, skill_md(body)) == snapshot(
        [
            "lock (step) step of block main | replaces 'lo'",
            "done (step) step of block main | replaces 'lo'",
            "ask (step) this step (loops) | replaces 'lo'",
            "END (keyword) end of the block | replaces 'lo'",
        ]
    )
    body = BLOCK.replace("- else: done", "- else: $0")
    assert check_completion(tmp_path, skill_md(body)) == snapshot(
        [
            "lock (step) step of block main",
            "done (step) step of block main",
            "ask (step) this step (loops)",
            "END (keyword) end of the block",
        ]
    )


def test_branch_keys(tmp_path: Path) -> None:
    body = BLOCK.replace("      - else: done\n", "      - $0\n")
    assert check_completion(tmp_path, skill_md(body)) == snapshot(
        [
            "if (property) | + ': '",
            "then (property) | + ': ' | suggests again",
            "else (property) | + ': ' | suggests again",
        ]
    )


def test_call_and_link_offer_skills_but_not_itself(tmp_path: Path) -> None:
    body = BLOCK.replace("    action: utter_card_replaced\n    next: END\n", "    link: $0\n")
    r = run(tmp_path, skill_md(body))
    assert r.rendered == snapshot(
        [
            "billing (skill) skill",
            "helper (skill) hidden",
            "default_completed (skill) bundled default skill",
            "default_continue_interrupted (skill) bundled default skill",
            "default_customer_satisfaction (skill) bundled default skill",
            "default_session_start (skill) bundled default skill",
            "default_silence_timeout (skill) bundled default skill",
            "default_silence_timeout_hangup (skill) bundled default skill",
            "default_unsupported_request_handler (skill) bundled default skill",
        ]
    )


def test_call_in_a_blocks_only_skill_offers_its_blocks(tmp_path: Path) -> None:
    body = BLOCK.split("\n", 2)[2].replace("    execute_tool: order_card\n", "    call: $0\n")
    body += block(ONE_STEP, "verify", "\n")
    r = run(tmp_path, skill_md(body))
    assert r.rendered == snapshot(
        [
            "billing (skill) skill",
            "helper (skill) hidden",
            "default_completed (skill) bundled default skill",
            "default_continue_interrupted (skill) bundled default skill",
            "default_customer_satisfaction (skill) bundled default skill",
            "default_session_start (skill) bundled default skill",
            "default_silence_timeout (skill) bundled default skill",
            "default_silence_timeout_hangup (skill) bundled default skill",
            "default_unsupported_request_handler (skill) bundled default skill",
            "main (block) ordered block of card_replace",
            "verify (block) ordered block of card_replace",
        ]
    )


def test_execute_tool_offers_tools(tmp_path: Path) -> None:
    body = BLOCK.replace("execute_tool: order_card", "execute_tool: $0")
    r = run(tmp_path, skill_md(body))
    assert r.rendered == snapshot(["order_card (tool) tool of card_replace"])


def test_action_offers_responses_and_step_actions(tmp_path: Path) -> None:
    body = BLOCK.replace("action: utter_card_replaced", "action: $0")
    r = run(tmp_path, skill_md(body))
    assert r.rendered == snapshot(
        [
            "utter_card_replaced (response) skills/card_replace/responses.yml",
            "utter_ask_csat_score (response) bundled response",
            "utter_ask_wants_to_continue (response) bundled response",
            "utter_ask_wants_to_resume (response) bundled response",
            "utter_decline_in_domain_out_of_scope (response) bundled response",
            "utter_decline_out_of_domain_out_of_scope (response) bundled response",
            "utter_hangup_goodbye (response) bundled response",
            "utter_incoming_message_rejected (response) bundled response",
            "utter_inform_hangup (response) bundled response",
            "utter_model_call_error (response) bundled response",
            "utter_model_request_hook_error (response) bundled response",
            "utter_outgoing_text_rejected (response) bundled response",
            "utter_precondition_unmet (response) bundled response",
            "utter_set_memory_button_skipped (response) bundled response",
            "utter_silence_timeout_check_in (response) bundled response",
            "utter_thank_you_for_feedback (response) bundled response",
            "utter_tool_call_hook_error (response) bundled response",
            "action_listen (keyword) step action",
            "hangup (keyword) step action",
        ]
    )


def test_collect_offers_own_fields(tmp_path: Path) -> None:
    body = BLOCK.replace("collect: reason", "collect: $0")
    assert check_completion(tmp_path, skill_md(body)) == snapshot(
        ["reason (field) categorical", "replaced (field) bool", "pin_attempts (field) int"]
    )


def test_set_memory_keys_offer_own_and_project_fields(tmp_path: Path) -> None:
    body = BLOCK.replace(
        "    next: done\n", "    set_memory:\n      replaced: true\n      $0\n    next: done\n", 1
    )
    r = run(tmp_path, skill_md(body))
    assert r.rendered == snapshot(
        [
            "reason (field) categorical | + ': '",
            "pin_attempts (field) int | + ': '",
            "customer_tier (field) categorical | + ': '",
            "verified (field) bool | + ': '",
        ]
    )


def test_block_tools_items_and_keys(tmp_path: Path) -> None:
    body = block("tools:\n  - $0\n" + ONE_STEP)
    assert check_completion(tmp_path, skill_md(body)) == snapshot(
        [
            "order_card (tool) tool of card_replace",
            "lookup_account (tool) shared tool",
            "unused_shared (tool) shared tool",
        ]
    )
    body = block("tools:\n  - name: order_card\n    $0\n" + ONE_STEP)
    assert check_completion(tmp_path, skill_md(body)) == snapshot(
        [
            "requires (property) | + ': '",
            "requires_confirmation (property) | + ':\\n      '",
            "on_success (property) | + ': ' | suggests again",
            "on_failure (property) | + ': ' | suggests again",
        ]
    )


def test_no_completion_on_fence_lines(tmp_path: Path) -> None:
    body = block(ONE_STEP, "ma$0")
    assert check_completion(tmp_path, skill_md(body)) == snapshot([])


# ---------------------------------------------------------------------------------------
# memory.yml
# ---------------------------------------------------------------------------------------


def test_skill_memory_attribute_keys(tmp_path: Path) -> None:
    fixture = """\
//- skills/card_replace/memory.yml
schema:
  public:
    reason:
      type: text
      $0
"""
    r = run(tmp_path, fixture)
    assert r.rendered == snapshot(
        [
            "description (property) | + ': '",
            "llm_settable (property) | + ': ' | suggests again",
            "enum_values (property) | + ':\\n        - '",
            "initial_value (property) | + ': '",
            "pii (property) | + ': ' | suggests again",
            "anonymization (property) | + ':\\n        '",
            "privacy_rules (property) | + ':\\n        - '",
        ]
    )
    assert r.item("llm_settable").documentation == snapshot(
        "`true`: the model may set this field (skill fields only)."
    )


def test_project_memory_attribute_keys(tmp_path: Path) -> None:
    fixture = BASE.replace("verified:\n  type: bool\n", "verified:\n  type: bool\n  s$0\n")
    assert check_completion(tmp_path, "", base=fixture) == snapshot(
        [
            "description (property) | replaces 's' | + ': '",
            "enum_values (property) | replaces 's' | + ':\\n    - '",
            "initial_value (property) | replaces 's' | + ': '",
            "pii (property) | replaces 's' | + ': ' | suggests again",
            "anonymization (property) | replaces 's' | + ':\\n    '",
            "privacy_rules (property) | replaces 's' | + ':\\n    - '",
            "seed (property) | replaces 's' | + ': ' | suggests again",
        ]
    )


def test_memory_type_names(tmp_path: Path) -> None:
    fixture = BASE.replace("    replaced:\n      type: bool\n", "    replaced:\n      type: b$0\n")
    r = run(tmp_path, "", base=fixture)
    assert r.rendered == snapshot(
        [
            "text (value) memory type | replaces 'b'",
            "int (value) memory type | replaces 'b'",
            "float (value) memory type | replaces 'b'",
            "bool (value) memory type | replaces 'b'",
            "list (value) memory type | replaces 'b'",
            "json (value) memory type | replaces 'b'",
            "categorical (value) memory type | replaces 'b'",
            "any (value) memory type | replaces 'b'",
        ]
    )
    assert r.item("categorical").documentation == snapshot("One of `enum_values`.")


def test_memory_schema_sections(tmp_path: Path) -> None:
    fixture = """\
//- skills/card_replace/memory.yml
schema:
  public:
    reason:
      type: text
  $0
"""
    assert check_completion(tmp_path, fixture) == snapshot(["private (property) | + ':\\n    '"])


# ---------------------------------------------------------------------------------------
# responses.yml placeholders
# ---------------------------------------------------------------------------------------


def test_placeholder_brace_offers_qualified_and_bare_entries(tmp_path: Path) -> None:
    fixture = """\
//- skills/card_replace/responses.yml
responses:
  utter_card_replaced:
    - text: Your card ({$0
"""
    r = run(tmp_path, fixture)
    assert r.rendered == snapshot(
        [
            "session.card_replace.reason (field) categorical | + '}'",
            "session.card_replace.replaced (field) bool | + '}'",
            "session.card_replace.pin_attempts (field) int | + '}'",
            "session.project.customer_tier (field) categorical | + '}'",
            "session.project.verified (field) bool | + '}'",
            "session.billing.amount (field) float | + '}'",
            "session.default_completed.wants_to_continue (field) bool | + '}'",
            "session.default_continue_interrupted.wants_to_resume (field) bool | + '}'",
            "session.default_continue_interrupted.interrupted_task_name (field) text | + '}'",
            "session.default_customer_satisfaction.csat_score (field) float | + '}'",
            "session.default_unsupported_request_handler.request_type (field) str | + '}'",
            "reason (field) categorical | + '}'",
            "replaced (field) bool | + '}'",
            "pin_attempts (field) int | + '}'",
            "customer_tier (field) categorical | + '}'",
            "verified (field) bool | + '}'",
        ]
    )
    assert r.applied_line("reason") == snapshot("    - text: Your card ({reason}")


def test_placeholder_session_namespaces_and_entries(tmp_path: Path) -> None:
    fixture = """\
//- skills/card_replace/responses.yml
responses:
  utter_card_replaced:
    - text: "Your card {session.$0} is ready."
"""
    assert check_completion(tmp_path, fixture) == snapshot(
        [
            "card_replace (namespace) this skill",
            "project (namespace) project memory",
            "billing (namespace) skill · 1 public field",
            "default_completed (namespace) bundled skill · 1 public field",
            "default_continue_interrupted (namespace) bundled skill · 2 public fields",
            "default_customer_satisfaction (namespace) bundled skill · 1 public field",
            "default_unsupported_request_handler (namespace) bundled skill · 1 public field",
        ]
    )
    fixture = fixture.replace("{session.$0}", "{session.card_replace.re$0}")
    r = run(tmp_path, fixture)
    assert r.rendered == snapshot(
        [
            "reason (field) categorical | replaces 're'",
            "replaced (field) bool | replaces 're'",
            "pin_attempts (field) int | replaces 're'",
        ]
    )
    assert r.applied_line("reason") == snapshot(
        '    - text: "Your card {session.card_replace.reason} is ready."'
    )  # no second brace
    fixture = fixture.replace("{session.card_replace.re$0} is", "{session.card_replace.re$0")
    r = run(tmp_path, fixture)
    assert r.rendered == snapshot(
        [
            "reason (field) categorical | replaces 're' | + '}'",
            "replaced (field) bool | replaces 're' | + '}'",
            "pin_attempts (field) int | replaces 're' | + '}'",
        ]
    )
    assert r.applied_line("reason") == snapshot(
        '    - text: "Your card {session.card_replace.reason} ready."'
    )


def test_root_placeholders_read_public_fields_only(tmp_path: Path) -> None:
    fixture = """\
//- responses.yml
responses:
  utter_hello:
    - text: "Hi {session.card_replace.$0"
"""
    assert check_completion(tmp_path, fixture) == snapshot(
        [
            "reason (field) categorical | + '}'",
            "replaced (field) bool | + '}'",
        ]
    )


def test_root_placeholder_bare_entries_of_skills_using_the_response(tmp_path: Path) -> None:
    fixture = """\
//- responses.yml
responses:
  utter_amount:
    - text: "You owe {$0"
//- skills/billing/skill.md
---
description: Billing questions.
utter:
  - utter_amount:
      on: activate
---
Answer billing questions.
"""
    assert check_completion(tmp_path, fixture) == snapshot(
        [
            "session.project.customer_tier (field) categorical | + '}'",
            "session.project.verified (field) bool | + '}'",
            "session.billing.amount (field) float | + '}'",
            "session.card_replace.reason (field) categorical | + '}'",
            "session.card_replace.replaced (field) bool | + '}'",
            "session.default_completed.wants_to_continue (field) bool | + '}'",
            "session.default_continue_interrupted.wants_to_resume (field) bool | + '}'",
            "session.default_continue_interrupted.interrupted_task_name (field) text | + '}'",
            "session.default_customer_satisfaction.csat_score (field) float | + '}'",
            "session.default_unsupported_request_handler.request_type (field) str | + '}'",
            "amount (field) float | + '}'",
            "secret (field) text | + '}'",
            "customer_tier (field) categorical | + '}'",
            "verified (field) bool | + '}'",
        ]
    )


def test_variant_keys(tmp_path: Path) -> None:
    fixture = """\
//- skills/card_replace/responses.yml
responses:
  utter_card_replaced:
    - text: Your new card is on its way.
      $0
"""
    assert check_completion(tmp_path, fixture) == snapshot(
        [
            "condition (property) | + ': '",
            "metadata (property) | + ': '",
            "buttons (property) | + ':\\n        - '",
        ]
    )


# ---------------------------------------------------------------------------------------
# agent.yml
# ---------------------------------------------------------------------------------------


def test_resolve_with_offers_skills(tmp_path: Path) -> None:
    fixture = """\
//- agent.yml
agent:
  persona: A bank assistant.
orchestrator:
  model_group: main
  preconditions:
    customer_verified:
      satisfied_when: "session.project.verified == True"
      resolve_with: bi$0
"""
    assert check_completion(tmp_path, fixture) == snapshot(
        [
            "billing (skill) skill | replaces 'bi'",
            "card_replace (skill) skill | replaces 'bi'",
            "helper (skill) hidden | replaces 'bi'",
            "default_completed (skill) bundled default skill | replaces 'bi'",
            "default_continue_interrupted (skill) bundled default skill | replaces 'bi'",
            "default_customer_satisfaction (skill) bundled default skill | replaces 'bi'",
            "default_session_start (skill) bundled default skill | replaces 'bi'",
            "default_silence_timeout (skill) bundled default skill | replaces 'bi'",
            "default_silence_timeout_hangup (skill) bundled default skill | replaces 'bi'",
            "default_unsupported_request_handler (skill) bundled default skill | replaces 'bi'",
        ]
    )


# ---------------------------------------------------------------------------------------
# tools (Python)
# ---------------------------------------------------------------------------------------

TOOL = """\
//- skills/card_replace/tools.py
from rasa.mantle.tools.decorator import ToolContext, tool


@tool(description="Order a new card.")
async def order_card(context: ToolContext = None):
    value = context.memory.{method}("{partial}$0
"""


def test_memory_get_literal(tmp_path: Path) -> None:
    r = run(tmp_path, TOOL.format(method="get", partial=""))
    assert r.rendered == snapshot(
        [
            "reason (field) categorical",
            "replaced (field) bool",
            "pin_attempts (field) int",
            "project.customer_tier (field) categorical",
            "project.verified (field) bool",
            "default_completed.wants_to_continue (field) bool",
            "default_continue_interrupted.wants_to_resume (field) bool",
            "default_continue_interrupted.interrupted_task_name (field) text",
            "default_customer_satisfaction.csat_score (field) float",
            "default_unsupported_request_handler.request_type (field) str",
            "billing.amount (field) float",
        ]
    )


def test_memory_set_literal_offers_only_writable_names(tmp_path: Path) -> None:
    assert check_completion(tmp_path, TOOL.format(method="set", partial="pro")) == snapshot(
        [
            "reason (field) categorical | replaces 'pro'",
            "replaced (field) bool | replaces 'pro'",
            "pin_attempts (field) int | replaces 'pro'",
            "project.customer_tier (field) categorical | replaces 'pro'",
            "project.verified (field) bool | replaces 'pro'",
        ]
    )


def test_memory_call_in_an_unparsable_file_with_single_quotes(tmp_path: Path) -> None:
    fixture = TOOL.format(method="get", partial="").replace('("', "('") + "    if (\n"
    assert check_completion(tmp_path, fixture) == snapshot(
        [
            "reason (field) categorical",
            "replaced (field) bool",
            "pin_attempts (field) int",
            "project.customer_tier (field) categorical",
            "project.verified (field) bool",
            "default_completed.wants_to_continue (field) bool",
            "default_continue_interrupted.wants_to_resume (field) bool",
            "default_continue_interrupted.interrupted_task_name (field) text",
            "default_customer_satisfaction.csat_score (field) float",
            "default_unsupported_request_handler.request_type (field) str",
            "billing.amount (field) float",
        ]
    )


def test_no_completion_elsewhere_in_python(tmp_path: Path) -> None:
    fixture = TOOL.format(method="get", partial="").replace('context.memory.get("$0', "x = $0")
    assert check_completion(tmp_path, fixture) == snapshot([])


SET_BUTTON = """\
//- skills/card_replace/responses.yml
responses:
  utter_card_replaced:
    - text: Why?
      buttons:
        - title: Lost
          payload: "set:session.{cursor}
"""


def test_set_payload_offers_writable_namespaces(tmp_path: Path) -> None:
    assert check_completion(tmp_path, SET_BUTTON.format(cursor="$0")) == snapshot(
        ["card_replace (namespace) skill", "project (namespace) project memory"]
    )


def test_set_payload_entries_end_with_equals(tmp_path: Path) -> None:
    r = run(tmp_path, SET_BUTTON.format(cursor="card_replace.re$0"))
    assert r.rendered == snapshot(
        [
            "reason (field) categorical | replaces 're' | + '='",
            "replaced (field) bool | replaces 're' | + '='",
            "pin_attempts (field) int | replaces 're' | + '='",
        ]
    )
    assert r.applied_line("reason") == snapshot(
        '          payload: "set:session.card_replace.reason='
    )
    assert check_completion(tmp_path, SET_BUTTON.format(cursor="billing.$0")) == snapshot(
        []
    )  # not writable


def test_set_payload_values(tmp_path: Path) -> None:
    assert check_completion(
        tmp_path, SET_BUTTON.format(cursor="card_replace.reason=st$0")
    ) == snapshot(
        [
            "lost (value) card_replace.reason | replaces 'st'",
            "stolen (value) card_replace.reason | replaces 'st'",
            "damaged (value) card_replace.reason | replaces 'st'",
        ]
    )
    assert check_completion(tmp_path, SET_BUTTON.format(cursor="project.verified=$0")) == snapshot(
        ["false (value) bool", "true (value) bool"]
    )


def test_root_set_payload_writes_the_delivering_skills_public_fields(tmp_path: Path) -> None:
    fixture = """\
//- responses.yml
responses:
  utter_amount:
    - text: How much?
      buttons:
        - title: Ten
          payload: "set:session.$0
//- skills/billing/skill.md
---
description: Billing questions.
utter:
  - utter_amount:
      on: activate
---
Answer billing questions.
"""
    assert check_completion(tmp_path, fixture) == snapshot(
        ["billing (namespace) skill", "project (namespace) project memory"]
    )
    assert check_completion(
        tmp_path, fixture.replace("session.$0", "session.billing.$0")
    ) == snapshot(["amount (field) float | + '='"])


def test_placeholder_in_a_button_title(tmp_path: Path) -> None:
    fixture = SET_BUTTON.replace("title: Lost", "title: Lost {session.project.$0").replace(
        'payload: "set:session.{cursor}\n', "payload: x\n"
    )
    assert check_completion(tmp_path, fixture) == snapshot(
        [
            "customer_tier (field) categorical | + '}'",
            "verified (field) bool | + '}'",
        ]
    )


def test_half_written_requires_with_frontmatter_below(tmp_path: Path) -> None:
    fm = TC + '      requires: "session.$0\n      on_success: utter_card_replaced\nhidden: false\n'
    assert check_completion(tmp_path, skill_md("Help.\n", fm)) == snapshot(
        [
            "card_replace (namespace) this skill",
            "project (namespace) project memory",
            "billing (namespace) skill · 1 public field",
            "default_completed (namespace) bundled skill · 1 public field",
            "default_continue_interrupted (namespace) bundled skill · 2 public fields",
            "default_customer_satisfaction (namespace) bundled skill · 1 public field",
            "default_unsupported_request_handler (namespace) bundled skill · 1 public field",
        ]
    )


def test_half_written_placeholder_in_a_plain_scalar(tmp_path: Path) -> None:
    fixture = """\
//- skills/card_replace/responses.yml
responses:
  utter_card_replaced:
    - text: Your card {session.$0
  utter_other:
    - text: Other.
"""
    assert check_completion(tmp_path, fixture) == snapshot(
        [
            "card_replace (namespace) this skill",
            "project (namespace) project memory",
            "billing (namespace) skill · 1 public field",
            "default_completed (namespace) bundled skill · 1 public field",
            "default_continue_interrupted (namespace) bundled skill · 2 public fields",
            "default_customer_satisfaction (namespace) bundled skill · 1 public field",
            "default_unsupported_request_handler (namespace) bundled skill · 1 public field",
        ]
    )


def test_astral_characters_before_a_placeholder(tmp_path: Path) -> None:
    fixture = """\
//- skills/card_replace/responses.yml
responses:
  utter_card_replaced:
    - text: "🎉 𝒸ard 🎉 {session.card_replace.rea$0}"
"""
    r = run(tmp_path, fixture)
    assert r.rendered == snapshot(
        [
            "reason (field) categorical | replaces 'rea'",
            "replaced (field) bool | replaces 'rea'",
            "pin_attempts (field) int | replaces 'rea'",
        ]
    )
    assert r.applied_line("reason") == snapshot(
        '    - text: "🎉 𝒸ard 🎉 {session.card_replace.reason}"'
    )


def test_flow_mapping_brace_is_not_a_placeholder(tmp_path: Path) -> None:
    fixture = """\
//- skills/card_replace/responses.yml
responses:
  utter_card_replaced:
    - text: Pick one.
      buttons: {$0
"""
    assert check_completion(tmp_path, fixture) == snapshot([])


def test_a_long_list_is_capped_and_marked_incomplete(tmp_path: Path) -> None:
    """With more namespaces than fit one answer, the best matches of what is typed come
    back, marked incomplete so the editor asks again as the user types."""
    from mantle_lsp.ide.completion import MAX_ITEMS, complete
    from mantle_lsp.model.project import Project

    files = "".join(
        f"//- skills/k{i:03d}/memory.yml\nschema:\n  public:\n    x:\n      type: text\n"
        for i in range(MAX_ITEMS + 20)
    )
    skill = "//- skills/card/skill.md\n---\ndescription: C.\n---\nif: session.k11$0\nX.\n"
    fx = write_fixture(tmp_path, files + skill)
    proj = Project.load(fx.root)
    assert fx.cursor is not None
    result = complete(proj, fx.root / fx.cursor[0], fx.cursor[1])
    labels = [i.label for i in result.items]
    assert result.is_incomplete and len(labels) == MAX_ITEMS
    assert labels[:10] == [f"k11{d}" for d in range(10)]  # the matches of "k11" first


def test_resolve_finds_an_item_beyond_the_best_ones(tmp_path: Path) -> None:
    """item_at (completionItem/resolve) finds any item offered at the position, also one
    that was not among the best MAX_ITEMS, and nothing for a label not offered there."""
    from mantle_lsp.ide.completion import MAX_ITEMS

    files = "".join(
        f"//- skills/k{i:03d}/memory.yml\nschema:\n  public:\n    x:\n      type: text\n"
        f"//- skills/k{i:03d}/skill.md\n---\ndescription: Skill number {i}.\n---\nX.\n"
        for i in range(MAX_ITEMS + 20)
    )
    skill = "//- skills/card/skill.md\n---\ndescription: C.\n---\nif: session.$0\nX.\n"
    fx = write_fixture(tmp_path, files + skill)
    proj = Project.load(fx.root)
    assert fx.cursor is not None
    path, offset = fx.root / fx.cursor[0], fx.cursor[1]
    result = complete(proj, path, offset)
    assert result.is_incomplete and "k110" not in [i.label for i in result.items]
    found = item_at(proj, path, offset, "k110")
    assert found is not None and found.detail == "skill · 1 public field"
    assert "Skill number 110." in found.documentation and "`x`" in found.documentation
    assert found.edit is not None and found.edit.range == (offset, offset)
    assert item_at(proj, path, offset, "nonexistent") is None
    assert item_at(proj, path, len(fx.files[fx.cursor[0]]) + 5, "k110") is None


def test_namespace_documentation_follows_edits(tmp_path: Path) -> None:
    """A namespace's detail and documentation follow edits of the skill's memory.yml and
    of its description."""
    fx = write_fixture(tmp_path, BASE + "//- skills/card_replace/skill.md\n---\n"
                       "description: Replace a card.\n---\nif: session.$0\nX.\n")  # fmt: skip
    proj = Project.load(fx.root)
    assert fx.cursor is not None
    path, offset = fx.root / fx.cursor[0], fx.cursor[1]

    def billing() -> CompletionItem:
        return next(i for i in complete(proj, path, offset).items if i.label == "billing")

    assert billing().detail == "skill · 1 public field"
    assert "Billing questions." in billing().documentation
    skill_md = fx.root / "skills" / "billing" / "skill.md"
    skill_md.write_text("---\ndescription: Money matters.\n---\nAnswer.\n")
    proj.set_source(skill_md, read_source(skill_md))
    assert "Money matters." in billing().documentation
    memory = fx.root / "skills" / "billing" / "memory.yml"
    memory.write_text(
        "schema:\n  public:\n    amount:\n      type: float\n    due:\n      type: text\n"
    )
    proj.set_source(memory, read_source(memory))
    assert billing().detail == "skill · 2 public fields"
    assert "`due`" in billing().documentation


EDITED = """\
//- skills/card_replace/skill.md
---
description: Replace a card.
---
if: session.
if: session.billing.
if: session.card_replace.
if: session.project.
See @skill.
//- skills/card_replace/responses.yml
responses:
  utter_card_replaced:
    - text: "Sent to {"
//- skills/card_replace/tools.py
from rasa.mantle.tools.decorator import ToolContext, tool


@tool(description="Order a new card.")
async def order_card(context: ToolContext = None):
    return context.memory.get("")
"""
# where completion is asked: after each of these (file, text before the cursor)
EDITED_SITES = [
    ("skills/card_replace/skill.md", "if: session."),
    ("skills/card_replace/skill.md", "if: session.billing."),
    ("skills/card_replace/skill.md", "if: session.card_replace."),
    ("skills/card_replace/skill.md", "if: session.project."),
    ("skills/card_replace/skill.md", "See @skill."),
    ("skills/card_replace/responses.yml", "Sent to {"),
    ("skills/card_replace/tools.py", 'memory.get("'),
]
BILLING_MEMORY = "skills/billing/memory.yml"
# each edit: a file's new text (None: the file is deleted); what it changes is in the name
EDITS: list[tuple[str, str, str | None]] = [
    ("a field made private", BILLING_MEMORY,
     "schema:\n  private:\n    amount:\n      type: float\n    secret:\n      type: text\n"),
    ("a public field again, and another", BILLING_MEMORY,
     "schema:\n  public:\n    amount:\n      type: float\n    due:\n      type: text\n"),
    ("the skill's own field", "skills/card_replace/memory.yml",
     "schema:\n  private:\n    pin_attempts:\n      type: int\n    courier:\n      type: text\n"),
    ("a name and a flag", "skills/billing/skill.md",
     "---\ndescription: Money matters.\nname: Money\nhidden: true\n---\nAnswer.\n"),
    ("a project field", "memory.yml", "verified:\n  type: bool\nregion:\n  type: text\n"),
    ("no project field", "memory.yml", None),
    ("a new skill", "skills/loans/memory.yml", "schema:\n  public:\n    rate:\n      type: float\n"),
    ("its skill.md", "skills/loans/skill.md", "---\ndescription: Loans.\n---\nLend.\n"),
    ("a skill's memory gone", BILLING_MEMORY, None),
    ("a skill gone", "skills/billing/skill.md", None),
]  # fmt: skip


def _answers(proj: Project, root: Path) -> list[object]:
    """Every item offered at each site, with its detail and documentation."""
    out: list[object] = []
    for rel, before in EDITED_SITES:
        text = (root / rel).read_text()
        result = complete(proj, root / rel, text.index(before) + len(before))
        items = [(i.label, i.kind, i.detail, i.documentation) for i in result.items]
        out.append((rel, before, result.is_incomplete, items))
    return out


def test_completion_after_edits_is_as_after_a_load(tmp_path: Path) -> None:
    """What completion keeps between requests (lists made from every skill's memory.yml
    and skill.md) follows each edit: after it, every answer (items, details,
    documentation) equals a freshly loaded project's."""
    fx = write_fixture(tmp_path, BASE + EDITED)
    proj = Project.load(fx.root)
    for what, rel, text in EDITS:
        kept = _answers(proj, fx.root)  # asked before the edit: what it keeps is made
        path = fx.root / rel
        if text is None:
            path.unlink()
        else:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text)
        proj.set_source(path, None if text is None else read_source(path))
        got = _answers(proj, fx.root)
        assert got == _answers(Project.load(fx.root), fx.root), what
        assert got != kept, f"{what}: the edit changes no answer, so it tests nothing"


def test_other_long_lists_are_capped_too(tmp_path: Path) -> None:
    """`@skill.` with more skills than fit one answer: the matches of what is typed first,
    marked incomplete; resolve still finds a skill that was left out."""
    from mantle_lsp.ide.completion import MAX_ITEMS

    files = "".join(
        f"//- skills/k{i:03d}/skill.md\n---\ndescription: Skill number {i}.\n---\nX.\n"
        for i in range(MAX_ITEMS + 20)
    )
    skill = "//- skills/card/skill.md\n---\ndescription: C.\n---\nSee @skill.k11$0\n"
    fx = write_fixture(tmp_path, files + skill)
    proj = Project.load(fx.root)
    assert fx.cursor is not None
    path, offset = fx.root / fx.cursor[0], fx.cursor[1]
    result = complete(proj, path, offset)
    labels = [i.label for i in result.items]
    assert result.is_incomplete and len(labels) == MAX_ITEMS
    assert labels[:10] == [f"k11{d}" for d in range(10)]
    k113 = next(i for i in result.items if i.label == "k113")
    assert k113.documentation == snapshot("""\
**k113**

Skill number 113.\
""")
    left_out = next(f"k{i:03d}" for i in range(MAX_ITEMS + 20) if f"k{i:03d}" not in labels)
    found = item_at(proj, path, offset, left_out)
    assert found is not None and f"Skill number {int(left_out[1:])}." in found.documentation


# -- execute_tool parameters, tools that are modules, step and value order ---------------------
SEARCH = """\
//- skills/card_replace/tools/search.py
from rasa.mantle.tools.decorator import ToolContext, tool


@tool(description="Search the help centre.")
async def search_articles(
    query: str, source: str, limit: int = 5, context: ToolContext = None
):
    return None
"""


def test_parameters_offer_the_tools_parameters_required_first(tmp_path: Path) -> None:
    body = block(
        "steps:\n  - id: find\n    execute_tool: search_articles\n    parameters:\n"
        "      query: session.card_replace.reason\n      $0\n"
    )
    r = run(tmp_path, SEARCH + skill_md(body))
    assert r.rendered == snapshot(
        ["source (property) str · required | + ': '", "limit (property) int · default 5 | + ': '"]
    )
    assert r.item("source").documentation == snapshot("""\
```python
search_articles(query: str, source: str, limit: int = 5)
```

`source` has no default: the step must give it.

Search the help centre.\
""")


def test_parameters_of_a_tool_whose_def_is_unknown_offer_nothing(tmp_path: Path) -> None:
    tools = "//- skills/card_replace/tools/made.py\nmade = make_tool('made')\n"
    body = block("steps:\n  - id: find\n    execute_tool: made\n    parameters:\n      $0\n")
    assert check_completion(tmp_path, tools + skill_md(body)) == snapshot([])


def test_an_imported_module_is_not_offered_as_a_tool(tmp_path: Path) -> None:
    tools = """\
//- lib/__init__.py
//- lib/user_location.py
COUNTRY = "user_country"
//- skills/card_replace/tools/where.py
from lib import user_location
"""
    labels = run(tmp_path, tools + skill_md("Call @tool.$0\n")).labels
    assert "user_location" not in labels and "order_card" in labels


def test_next_answers_on_a_partial_value(tmp_path: Path) -> None:
    body = BLOCK.replace("    next: done\n", "    next: do$0\n")
    assert check_completion(tmp_path, skill_md(body)) == snapshot(
        [
            "ask (step) step of block main | replaces 'do'",
            "done (step) step of block main | replaces 'do'",
            "lock (step) this step (loops) | replaces 'do'",
            "END (keyword) end of the block | replaces 'do'",
        ]
    )


def test_enum_values_follow_the_files_quote_style(tmp_path: Path) -> None:
    prose = (
        'Help.\n\nif: session.card_replace.reason == "lost"\nSay sorry.\n\n'
        "if: session.card_replace.reason == $0\n"
    )
    assert check_completion(tmp_path, skill_md(prose)) == snapshot(
        [
            '"lost" (value) card_replace.reason',
            '"stolen" (value) card_replace.reason',
            '"damaged" (value) card_replace.reason',
            "None (value) unset",
        ]
    )
    # inside a YAML string quoted with ", values take the other quote whatever the file does
    body = BLOCK.replace("'lost'\"", "'lost' or session.card_replace.reason == $0\"")
    body = body.replace("Help.\n", 'if: session.card_replace.reason == "lost"\nSorry.\n' * 2)
    assert check_completion(tmp_path / "b", skill_md(body)) == snapshot(
        [
            "'lost' (value) card_replace.reason",
            "'stolen' (value) card_replace.reason",
            "'damaged' (value) card_replace.reason",
            "None (value) unset",
        ]
    )


def test_signature_help_names_the_parameter_on_the_cursor_line(tmp_path: Path) -> None:
    from mantle_lsp.ide.completion import signature_help

    def at(step_yaml: str) -> tuple[str, str, int | None] | None:
        fx = write_fixture(tmp_path, BASE + SEARCH + skill_md(block(step_yaml)))
        assert fx.cursor is not None
        got = signature_help(Project.load(fx.root), fx.root / fx.cursor[0], fx.cursor[1])
        if got is None:
            return None
        active = got.label[slice(*got.params[got.active][:2])] if got.active is not None else ""
        return got.label, active, got.active

    step = "steps:\n  - id: find\n    execute_tool: search_articles\n    parameters:\n"
    assert at(step + "      query: x\n      sou$0\n") == (
        "search_articles(query: str, source: str, limit: int = 5)",
        "source: str",
        1,
    )
    assert at(step + "      limit: $0\n") == (
        "search_articles(query: str, source: str, limit: int = 5)",
        "limit: int = 5",
        2,
    )
    assert at(step.replace("parameters:\n", "parameters:$0\n")) == (
        "search_articles(query: str, source: str, limit: int = 5)",
        "",
        None,
    )
    assert at("steps:\n  - id: find\n    execute_tool: order_card$0\n") is None


def test_accepting_type_opens_the_type_suggestions(tmp_path: Path) -> None:
    fixture = "//- skills/card_replace/memory.yml\nschema:\n  public:\n    note:\n      ty$0\n"
    r = run(tmp_path, fixture)
    assert r.rendered[0] == snapshot("type (property) | replaces 'ty' | + ': ' | suggests again")
    assert r.item("type").retrigger
