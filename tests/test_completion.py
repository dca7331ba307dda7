"""Completion: what is offered at a `$0` cursor, and exactly which text each item replaces."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from mantle_lsp.ide.completion import CompletionItem, CompletionResult, complete, item_at
from mantle_lsp.model.defaults import FRAMEWORK_TOOLS
from mantle_lsp.model.project import Project
from mantle_lsp.model.source import read_source
from support import Fixture, write_fixture

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

NAMESPACES = {
    "card_replace",
    "billing",
    "default_completed",
    "default_continue_interrupted",
    "default_customer_satisfaction",
    "default_unsupported_request_handler",
    "project",
}
PUBLIC_NAMESPACES = NAMESPACES  # card_replace has public fields too
OPERATORS = {"==", "!=", "<", "<=", ">", ">=", "and", "or"}
CARD_ENTRIES = {"reason", "replaced", "pin_attempts"}


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

    def sorted_labels(self) -> list[str]:
        return [i.label for i in sorted(self.result.items, key=lambda i: i.sort_text or i.label)]


def run(tmp_path: Path, fixture: str, base: str = BASE) -> Run:
    fx = write_fixture(tmp_path, base + fixture)
    assert fx.cursor is not None, "the fixture needs a $0 cursor"
    rel, offset = fx.cursor
    proj = Project.load(fx.root)
    r = complete(proj, fx.root / rel, offset)
    out = Run(fx, r)
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


def check_completion(
    tmp_path: Path,
    fixture: str,
    expected: Iterable[str] | None = None,
    *,
    includes: Iterable[str] = (),
    excludes: Iterable[str] = (),
    replaces: str | None = None,
    base: str = BASE,
) -> Run:
    """Assert the offered labels: exactly ``expected`` (when given), a superset of
    ``includes``, none of ``excludes``; and that every item replaces ``replaces``."""
    r = run(tmp_path, fixture, base)
    labels = r.labels
    assert len(labels) == len(set(labels)), f"duplicate labels: {labels}"
    if expected is not None:
        assert set(labels) == set(expected), (
            f"missing {sorted(set(expected) - set(labels))}, "
            f"unexpected {sorted(set(labels) - set(expected))}"
        )
    missing = set(includes) - set(labels)
    assert not missing, f"missing {sorted(missing)} in {labels}"
    bad = set(excludes) & set(labels)
    assert not bad, f"unexpected {sorted(bad)}"
    if replaces is not None:
        for it in r.result.items:
            assert r.replaced(it.label) == replaces, (it.label, r.replaced(it.label))
    return r


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
    r = check_completion(tmp_path, skill_md("Help.\n\nif: session.$0\nDo it.\n"), NAMESPACES)
    order = r.sorted_labels()
    assert order[0] == "card_replace"
    assert order[-1] == "project"
    assert order.index("billing") < order.index("default_completed")
    assert "helper" not in r.labels  # only private fields
    assert "system" not in r.labels
    assert r.item("card_replace").kind == "namespace"


def test_half_written_if_line_at_end_of_file(tmp_path: Path) -> None:
    check_completion(tmp_path, skill_md("Help.\n\nif: session.$0"), NAMESPACES)


def test_partial_namespace_is_replaced(tmp_path: Path) -> None:
    r = check_completion(
        tmp_path, skill_md("Help.\n\nif: session.ca$0\nDo it.\n"), NAMESPACES, replaces="ca"
    )
    assert "if: session.card_replace\n" in r.apply("card_replace")


def test_entries_of_own_skill_include_private_fields(tmp_path: Path) -> None:
    r = check_completion(
        tmp_path,
        skill_md("Help.\n\nif: session.card_replace.re$0\nDo it.\n"),
        CARD_ENTRIES,
        replaces="re",
    )
    reason = r.item("reason")
    assert reason.kind == "field"
    assert reason.detail == "categorical"
    assert "Why the card is replaced." in reason.documentation
    assert "`'lost'`" in reason.documentation and "`'damaged'`" in reason.documentation
    assert "public field of `card_replace`" in reason.documentation
    assert "skills/card_replace/memory.yml" in reason.documentation
    assert "private field" in r.item("pin_attempts").documentation
    assert r.item("replaced").detail == "bool"


def test_other_skills_private_fields_are_never_offered(tmp_path: Path) -> None:
    check_completion(tmp_path, skill_md("Help.\n\nif: session.billing.$0\nDo it.\n"), {"amount"})


def test_private_only_skill_and_system_offer_nothing(tmp_path: Path) -> None:
    check_completion(tmp_path, skill_md("Help.\n\nif: session.helper.$0\nDo it.\n"), set())
    check_completion(tmp_path, skill_md("Help.\n\nif: session.system.$0\nDo it.\n"), set())


def test_bundled_default_skill_public_fields(tmp_path: Path) -> None:
    r = check_completion(
        tmp_path,
        skill_md("Help.\n\nif: session.default_completed.$0\nDo it.\n"),
        {"wants_to_continue"},
    )
    assert r.item("wants_to_continue").detail == "bool"
    assert "bundled" in r.item("wants_to_continue").documentation


def test_project_entries(tmp_path: Path) -> None:
    r = check_completion(
        tmp_path,
        skill_md("Help.\n\nif: session.project.$0\nDo it.\n"),
        {"customer_tier", "verified"},
    )
    assert "project field" in r.item("customer_tier").documentation


def test_categorical_values_after_equals(tmp_path: Path) -> None:
    r = check_completion(
        tmp_path,
        skill_md("Help.\n\nif: session.card_replace.reason == $0\nDo it.\n"),
        {"'lost'", "'stolen'", "'damaged'", "None"},
    )
    assert r.item("'lost'").kind == "value"
    assert r.sorted_labels()[-1] == "None"


def test_values_after_not_equal_without_space_get_a_space(tmp_path: Path) -> None:
    r = check_completion(
        tmp_path,
        skill_md("Help.\n\nif: session.project.customer_tier !=$0\nDo it.\n"),
        {"'prepaid'", "'business'", "None"},
    )
    assert "if: session.project.customer_tier != 'business'\n" in r.apply("'business'")


def test_partial_quoted_value_is_replaced_with_its_quote(tmp_path: Path) -> None:
    r = check_completion(
        tmp_path,
        skill_md('Help.\n\nif: session.card_replace.reason == "st$0\nDo it.\n'),
        {'"lost"', '"stolen"', '"damaged"'},
        replaces='"st',
    )
    assert 'reason == "stolen"\n' in r.apply('"stolen"')


def test_bool_values(tmp_path: Path) -> None:
    check_completion(
        tmp_path,
        skill_md("Help.\n\nif: session.card_replace.replaced == $0\nDo it.\n"),
        {"True", "False", "None"},
    )


def test_other_types_offer_only_none(tmp_path: Path) -> None:
    check_completion(
        tmp_path,
        skill_md("Help.\n\nif: session.billing.amount != $0\nDo it.\n"),
        {"None"},
    )


def test_operators_after_a_complete_operand(tmp_path: Path) -> None:
    r = check_completion(
        tmp_path, skill_md("Help.\n\nif: session.card_replace.reason $0\nDo it.\n"), OPERATORS
    )
    assert r.item("and").kind == "keyword"
    assert "reason and \n" in r.apply("and")


def test_connective_after_a_comparison_replaces_the_typed_word(tmp_path: Path) -> None:
    check_completion(
        tmp_path,
        skill_md("Help.\n\nif: session.card_replace.reason == 'lost' an$0\nDo it.\n"),
        OPERATORS,
        replaces="an",
    )


def test_operand_start(tmp_path: Path) -> None:
    check_completion(tmp_path, skill_md("Help.\n\nif: $0\nDo it.\n"), {"session.", "not"})
    check_completion(
        tmp_path,
        skill_md("Help.\n\nif: session.project.verified and $0\nDo it.\n"),
        {"session.", "not"},
    )


def test_no_completion_right_after_a_closed_string(tmp_path: Path) -> None:
    check_completion(
        tmp_path, skill_md("Help.\n\nif: session.card_replace.reason == 'lost'$0\nDo.\n"), set()
    )


def test_if_in_the_middle_of_a_paragraph_is_not_a_condition(tmp_path: Path) -> None:
    check_completion(tmp_path, skill_md("Help.\nif: session.$0\nDo it.\n"), set())


# ---------------------------------------------------------------------------------------
# conditions: YAML sites (parsed and half-written)
# ---------------------------------------------------------------------------------------


def test_tool_requires_half_written_unclosed_quote(tmp_path: Path) -> None:
    fm = (
        'description: Replace.\ntool_constraints:\n  - order_card:\n      requires: "session.ca$0\n'
    )
    check_completion(tmp_path, skill_md("Help.\n", fm), NAMESPACES, replaces="ca")


def test_tool_requires_parsed_site(tmp_path: Path) -> None:
    fm = TC + '      requires: "session.card_replace.$0"\n'
    check_completion(tmp_path, skill_md("Help.\n", fm), CARD_ENTRIES, replaces="")


def test_values_inside_single_quoted_yaml_use_double_quotes(tmp_path: Path) -> None:
    fm = TC + "      requires: 'session.card_replace.reason == $0'\n"
    check_completion(tmp_path, skill_md("Help.\n", fm), {'"lost"', '"stolen"', '"damaged"', "None"})


def test_requires_in_a_flow_mapping(tmp_path: Path) -> None:
    fm = (
        'description: Replace.\ntool_constraints:\n  - order_card: {requires: "session.project.$0\n'
    )
    check_completion(tmp_path, skill_md("Help.\n", fm), {"customer_tier", "verified"})


def test_folded_condition_continuation_line(tmp_path: Path) -> None:
    fm = (
        "description: Replace.\ncomplete_when:\n  condition: >\n"
        "    session.card_replace.replaced == True and\n    session.billing.$0\n"
    )
    check_completion(tmp_path, skill_md("Help.\n", fm), {"amount"})


def test_skill_complete_when_is_a_mapping_not_a_condition(tmp_path: Path) -> None:
    fm = "description: Replace.\ncomplete_when: $0\n"
    check_completion(tmp_path, skill_md("Help.\n", fm), set())


def test_utter_when_condition(tmp_path: Path) -> None:
    fm = "description: R.\nutter:\n  - utter_card_replaced:\n"
    fm += "      when: session.project.customer_tier == $0\n"
    check_completion(tmp_path, skill_md("Help.\n", fm), {"'prepaid'", "'business'", "None"})


def test_closed_quoted_value_offers_nothing_after_it(tmp_path: Path) -> None:
    fm = TC + '      requires: "session.project.verified" $0\n'
    check_completion(tmp_path, skill_md("Help.\n", fm), set())


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
    check_completion(tmp_path, skill_md(body), NAMESPACES)


def test_step_complete_when_half_written(tmp_path: Path) -> None:
    body = BLOCK.replace(
        "  - id: done\n",
        "  - id: talk\n    instructions: Talk.\n"
        "    complete_when: session.card_replace.$0\n  - id: done\n",
    )
    check_completion(tmp_path, skill_md(body), CARD_ENTRIES)


def test_execute_tool_parameter_session_reference(tmp_path: Path) -> None:
    body = BLOCK.replace(
        "    execute_tool: order_card\n",
        "    execute_tool: order_card\n    parameters:\n      why: session.card_replace.r$0\n",
    )
    check_completion(tmp_path, skill_md(body), CARD_ENTRIES, replaces="r")


def test_response_condition_in_a_skill_file(tmp_path: Path) -> None:
    fixture = """\
//- skills/card_replace/responses.yml
responses:
  utter_card_replaced:
    - text: Lost card.
      condition: "session.card_replace.reason == $0"
    - text: Your new card is on its way.
"""
    check_completion(tmp_path, fixture, {"'lost'", "'stolen'", "'damaged'", "None"})


def test_root_responses_read_public_fields_and_project_only(tmp_path: Path) -> None:
    fixture = """\
//- responses.yml
responses:
  utter_hello:
    - text: Hi.
      condition: "session.$0
"""
    check_completion(tmp_path, fixture, NAMESPACES)
    fixture2 = fixture.replace("session.$0", "session.card_replace.$0")
    check_completion(tmp_path, fixture2, {"reason", "replaced"})  # pin_attempts is private


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
    check_completion(tmp_path, fixture, {"customer_tier", "verified"})


# ---------------------------------------------------------------------------------------
# prose @ tokens and paragraph starts
# ---------------------------------------------------------------------------------------


def test_at_offers_token_kinds(tmp_path: Path) -> None:
    r = check_completion(
        tmp_path, skill_md("Use @$0 now.\n"), {"memory.", "skill.", "tool.", "block."}
    )
    assert r.replaced("memory.") == ""
    assert r.item("memory.").filter_text == "memory"


def test_at_partial_kind_is_replaced(tmp_path: Path) -> None:
    r = check_completion(
        tmp_path, skill_md("Use @me$0\n"), {"memory.", "skill.", "tool.", "block."}, replaces="me"
    )
    assert r.apply("memory.").endswith("Use @memory.\n")


def test_email_address_is_not_a_token(tmp_path: Path) -> None:
    check_completion(tmp_path, skill_md("Write to help@$0\n"), set())


def test_at_memory_namespaces_and_entries(tmp_path: Path) -> None:
    check_completion(tmp_path, skill_md("Read @memory.$0\n"), NAMESPACES)
    check_completion(tmp_path, skill_md("Read @memory.billing.$0\n"), {"amount"})
    check_completion(
        tmp_path, skill_md("Read @memory.card_replace.pin$0\n"), CARD_ENTRIES, replaces="pin"
    )


def test_at_skill_offers_every_skill_and_flags_hidden_ones(tmp_path: Path) -> None:
    r = check_completion(
        tmp_path,
        skill_md("Hand over to @skill.$0\n"),
        includes={"billing", "helper", "card_replace", "default_completed"},
    )
    assert "hidden" in r.item("helper").detail
    assert "hidden" not in r.item("billing").detail
    order = r.sorted_labels()
    assert order.index("billing") < order.index("helper")
    assert "Billing questions." in r.item("billing").documentation


def test_at_tool_offers_visible_tools(tmp_path: Path) -> None:
    fm = "description: Replace a card.\nimport_tools:\n  - lookup_account\n"
    r = check_completion(
        tmp_path,
        skill_md("Call @tool.$0\n", fm),
        {"order_card", "lookup_account", *FRAMEWORK_TOOLS},
    )
    assert "unused_shared" not in r.labels  # a shared tool that is not declared here
    assert r.item("order_card").detail == "tool of card_replace"
    assert "Order a new card." in r.item("order_card").documentation
    assert r.item("lookup_account").detail == "shared tool"


def test_at_tool_offers_mcp_bare_names(tmp_path: Path) -> None:
    fm = "description: Replace a card.\nimport_tools:\n  - mcp/bank:freeze_card\n"
    r = check_completion(tmp_path, skill_md("Call @tool.fr$0\n", fm), includes={"freeze_card"})
    assert "bank" in r.item("freeze_card").detail


def test_at_block_offers_this_skills_blocks(tmp_path: Path) -> None:
    body = "Go to @block.$0\n\n" + BLOCK.split("\n", 2)[2] + block(ONE_STEP, "other", "\n")
    check_completion(tmp_path, skill_md(body), {"main", "other"})


def test_step_instructions_offer_memory_and_tool_tokens(tmp_path: Path) -> None:
    body = BLOCK.replace(
        "  - id: done\n", "  - id: talk\n    instructions: Use @$0\n  - id: done\n"
    )
    check_completion(tmp_path, skill_md(body), {"memory.", "tool."})


def test_step_instructions_block_scalar(tmp_path: Path) -> None:
    body = BLOCK.replace(
        "  - id: done\n",
        "  - id: talk\n    instructions: >\n      Explain.\n"
        "      Read @memory.card_replace.$0\n  - id: done\n",
    )
    check_completion(tmp_path, skill_md(body), CARD_ENTRIES)


def test_if_snippet_at_paragraph_start(tmp_path: Path) -> None:
    r = check_completion(tmp_path, skill_md("Help.\n\ni$0\n"), {"if:"}, replaces="i")
    it = r.item("if:")
    assert it.snippet and it.kind == "snippet"
    assert it.edit is not None and it.edit.new_text.startswith("if: $1")


def test_if_snippet_on_first_body_line_and_not_mid_paragraph(tmp_path: Path) -> None:
    check_completion(tmp_path, skill_md("$0"), {"if:"})
    check_completion(tmp_path, skill_md("Help the customer.\nth$0\n"), set())


def test_astral_characters_before_the_cursor(tmp_path: Path) -> None:
    r = check_completion(
        tmp_path,
        skill_md("🎉 Happy 𝒸ards 🎉\n\nif: 🎉 == session.card_replace.rea$0\nDo.\n"),
        CARD_ENTRIES,
        replaces="rea",
    )
    assert "if: 🎉 == session.card_replace.reason\n" in r.apply("reason")
    r = check_completion(
        tmp_path, skill_md("𝒸𝒸 Read @memory.card_replace.re$0 now\n"), CARD_ENTRIES, replaces="re"
    )
    assert "𝒸𝒸 Read @memory.card_replace.reason now\n" in r.apply("reason")


# ---------------------------------------------------------------------------------------
# skill.md frontmatter and block YAML
# ---------------------------------------------------------------------------------------


def test_frontmatter_top_level_keys_exclude_present_ones(tmp_path: Path) -> None:
    fm = "description: Replace a card.\n$0\nhidden: false\n"
    r = check_completion(
        tmp_path,
        skill_md("Help.\n", fm),
        includes={"name", "precondition", "tool_constraints", "utter", "complete_when"},
        excludes={"description", "hidden", "requires"},
    )
    assert r.item("name").edit is not None
    assert r.apply("name").startswith("---\ndescription: Replace a card.\nname: \n")
    assert "tool_constraints:\n  - " in r.apply("tool_constraints")


def test_frontmatter_partial_key_is_replaced(tmp_path: Path) -> None:
    fm = "na$0\n"
    check_completion(tmp_path, skill_md("Help.\n", fm), includes={"name"}, replaces="na")


def test_frontmatter_keys_only_at_column_zero(tmp_path: Path) -> None:
    fm = "description: >\n  Replace a card\n  $0\n"
    check_completion(tmp_path, skill_md("Help.\n", fm), set())


def test_tool_constraints_items_and_options(tmp_path: Path) -> None:
    fm = "description: Replace.\ntool_constraints:\n  - $0\n"
    check_completion(
        tmp_path, skill_md("Help.\n", fm), {"order_card", "lookup_account", "unused_shared"}
    )
    fm = TC + "      on_success: utter_card_replaced\n      $0\n"
    check_completion(
        tmp_path, skill_md("Help.\n", fm), {"requires", "requires_confirmation", "on_failure"}
    )
    fm = TC + "      requires_confirmation:\n        $0\n"
    check_completion(
        tmp_path,
        skill_md("Help.\n", fm),
        {"enabled", "utter_for_confirmation", "utter_on_user_denial"},
    )


def test_project_responses_sort_before_bundled_ones(tmp_path: Path) -> None:
    fm = TC + "      on_failure: $0\n"
    r = check_completion(tmp_path, skill_md("Help.\n", fm), includes={"utter_card_replaced"})
    order = r.sorted_labels()
    assert order[0] == "utter_card_replaced"
    assert r.item("utter_precondition_unmet").detail == "bundled response"


def test_gate_responses(tmp_path: Path) -> None:
    fm = "description: Replace.\ntool_constraints:\n  - order_card:\n      on_success: utter_ca$0\n"
    r = check_completion(
        tmp_path, skill_md("Help.\n", fm), includes={"utter_card_replaced"}, replaces="utter_ca"
    )
    it = r.item("utter_card_replaced")
    assert it.kind == "response"
    assert "Your new card is on its way." in it.documentation
    assert "utter_precondition_unmet" in r.labels  # bundled responses too


def test_utter_items_are_responses(tmp_path: Path) -> None:
    fm = "description: Replace.\nutter:\n  - $0\n"
    check_completion(tmp_path, skill_md("Help.\n", fm), includes={"utter_card_replaced"})
    fm = "description: Replace.\nutter:\n  - utter_card_replaced:\n      $0\n"
    check_completion(tmp_path, skill_md("Help.\n", fm), {"on", "when"})


def test_import_tools_items(tmp_path: Path) -> None:
    fixture = skill_md("Help.\n", "description: Replace.\nimport_tools:\n  - $0\n")
    base = (
        BASE
        + "//- integrations.yml\nmodel_groups:\n  - id: main\n    models: []\n"
        + "mcp_servers:\n  - name: bank\n    url: http://x\n"
    )
    check_completion(tmp_path, fixture, {"lookup_account", "unused_shared", "mcp/bank:"}, base=base)


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
    r = check_completion(tmp_path, fixture, {"customer_verified"}, replaces="cust")
    assert "session.project.verified == True" in r.item("customer_verified").documentation


def test_boolean_frontmatter_values(tmp_path: Path) -> None:
    check_completion(
        tmp_path, skill_md("Help.\n", "description: R.\nhidden: t$0\n"), {"true", "false"}
    )


def test_block_top_level_keys(tmp_path: Path) -> None:
    body = block(ONE_STEP + "$0\n")
    check_completion(tmp_path, skill_md(body), {"tools", "complete_when"})


def test_step_keys_follow_the_step_kind(tmp_path: Path) -> None:
    body = BLOCK.replace("    collect: reason\n", "    collect: reason\n    $0\n")
    check_completion(
        tmp_path,
        skill_md(body),
        {"utterance", "description", "dtmf", "ask_before_filling"},  # id, collect, next present
    )


def test_new_step_offers_id_first(tmp_path: Path) -> None:
    body = BLOCK.replace("  - id: lock\n", "  - $0\n  - id: lock\n")
    r = check_completion(tmp_path, skill_md(body), includes={"id", "collect", "instructions"})
    assert r.sorted_labels()[0] == "id"


def test_step_keys_in_half_written_block(tmp_path: Path) -> None:
    # the block YAML does not parse (the `- id:` line has a stray quote)
    body = block('steps:\n  - id: "a\n    action: utter_card_replaced\n    ne$0\n')
    check_completion(tmp_path, skill_md(body), {"next"}, replaces="ne")


def test_next_offers_step_ids_of_the_block_and_end(tmp_path: Path) -> None:
    body = BLOCK.replace("    next: done\n", "    next: $0\n")
    body += block("steps:\n  - id: elsewhere\n    action: utter_card_replaced\n", "other", "\n")
    r = check_completion(tmp_path, skill_md(body), {"ask", "lock", "done", "END"})
    assert r.sorted_labels()[-1] == "END"
    assert r.item("lock").kind == "step"


def test_then_and_else_offer_step_ids(tmp_path: Path) -> None:
    body = BLOCK.replace("then: lock", "then: lo$0")
    check_completion(tmp_path, skill_md(body), {"ask", "lock", "done", "END"}, replaces="lo")
    body = BLOCK.replace("- else: done", "- else: $0")
    check_completion(tmp_path, skill_md(body), {"ask", "lock", "done", "END"})


def test_branch_keys(tmp_path: Path) -> None:
    body = BLOCK.replace("      - else: done\n", "      - $0\n")
    check_completion(tmp_path, skill_md(body), {"if", "then", "else"})


def test_call_and_link_offer_skills_but_not_itself(tmp_path: Path) -> None:
    body = BLOCK.replace("    action: utter_card_replaced\n    next: END\n", "    link: $0\n")
    r = check_completion(tmp_path, skill_md(body), includes={"billing", "helper"})
    assert "card_replace" not in r.labels
    assert "main" not in r.labels  # blocks of a skill with prose are internal


def test_call_in_a_blocks_only_skill_offers_its_blocks(tmp_path: Path) -> None:
    body = BLOCK.split("\n", 2)[2].replace("    execute_tool: order_card\n", "    call: $0\n")
    body += block(ONE_STEP, "verify", "\n")
    r = check_completion(tmp_path, skill_md(body), includes={"billing", "main", "verify"})
    assert r.item("verify").kind == "block"


def test_execute_tool_offers_tools(tmp_path: Path) -> None:
    body = BLOCK.replace("execute_tool: order_card", "execute_tool: $0")
    r = check_completion(tmp_path, skill_md(body), {"order_card", "record_handoff"})
    assert "set_fields" not in r.labels


def test_action_offers_responses_and_step_actions(tmp_path: Path) -> None:
    body = BLOCK.replace("action: utter_card_replaced", "action: $0")
    r = check_completion(
        tmp_path, skill_md(body), includes={"utter_card_replaced", "action_listen", "hangup"}
    )
    assert r.item("utter_card_replaced").detail == "skills/card_replace/responses.yml"


def test_collect_offers_own_fields(tmp_path: Path) -> None:
    body = BLOCK.replace("collect: reason", "collect: $0")
    check_completion(tmp_path, skill_md(body), CARD_ENTRIES)


def test_set_memory_keys_offer_own_and_project_fields(tmp_path: Path) -> None:
    body = BLOCK.replace(
        "    next: done\n", "    set_memory:\n      replaced: true\n      $0\n    next: done\n", 1
    )
    r = check_completion(
        tmp_path, skill_md(body), {"reason", "pin_attempts", "customer_tier", "verified"}
    )
    edit = r.item("reason").edit
    assert edit is not None and edit.new_text == "reason: "


def test_block_tools_items_and_keys(tmp_path: Path) -> None:
    body = block("tools:\n  - $0\n" + ONE_STEP)
    check_completion(tmp_path, skill_md(body), {"order_card", "lookup_account", "unused_shared"})
    body = block("tools:\n  - name: order_card\n    $0\n" + ONE_STEP)
    check_completion(
        tmp_path,
        skill_md(body),
        {"requires", "requires_confirmation", "on_success", "on_failure"},
    )


def test_no_completion_on_fence_lines(tmp_path: Path) -> None:
    body = block(ONE_STEP, "ma$0")
    check_completion(tmp_path, skill_md(body), set())


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
    r = check_completion(
        tmp_path,
        fixture,
        includes={"description", "llm_settable", "enum_values", "initial_value", "pii"},
        excludes={"type", "seed"},
    )
    assert "model" in r.item("llm_settable").documentation


def test_project_memory_attribute_keys(tmp_path: Path) -> None:
    fixture = BASE.replace("verified:\n  type: bool\n", "verified:\n  type: bool\n  s$0\n")
    check_completion(
        tmp_path,
        "",
        includes={"seed", "description", "pii"},
        excludes={"llm_settable", "type"},
        replaces="s",
        base=fixture,
    )


def test_memory_type_names(tmp_path: Path) -> None:
    fixture = BASE.replace("    replaced:\n      type: bool\n", "    replaced:\n      type: b$0\n")
    r = check_completion(
        tmp_path,
        "",
        {"text", "int", "float", "bool", "list", "json", "categorical", "any"},
        replaces="b",
        base=fixture,
    )
    assert "enum_values" in r.item("categorical").documentation


def test_memory_schema_sections(tmp_path: Path) -> None:
    fixture = """\
//- skills/card_replace/memory.yml
schema:
  public:
    reason:
      type: text
  $0
"""
    check_completion(tmp_path, fixture, {"private"})


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
    r = check_completion(
        tmp_path,
        fixture,
        includes={
            "session.card_replace.reason",
            "session.card_replace.pin_attempts",
            "session.billing.amount",
            "session.project.verified",
            "reason",
            "pin_attempts",
            "customer_tier",
        },
        excludes={"session.billing.secret", "secret", "session.helper.token"},
    )
    assert r.apply("reason").endswith("Your card ({reason}\n")
    order = r.sorted_labels()
    assert order[0].startswith("session.card_replace.")
    assert order.index("session.billing.amount") < order.index(
        "session.default_completed.wants_to_continue"
    )
    assert order.index("session.project.verified") < order.index("reason")


def test_placeholder_session_namespaces_and_entries(tmp_path: Path) -> None:
    fixture = """\
//- skills/card_replace/responses.yml
responses:
  utter_card_replaced:
    - text: "Your card {session.$0} is ready."
"""
    check_completion(tmp_path, fixture, NAMESPACES)
    fixture = fixture.replace("{session.$0}", "{session.card_replace.re$0}")
    r = check_completion(tmp_path, fixture, CARD_ENTRIES, replaces="re")
    assert "{session.card_replace.reason} is ready" in r.apply("reason")  # no second brace
    fixture = fixture.replace("{session.card_replace.re$0} is", "{session.card_replace.re$0")
    r = check_completion(tmp_path, fixture, CARD_ENTRIES, replaces="re")
    assert "{session.card_replace.reason}" in r.apply("reason")


def test_root_placeholders_read_public_fields_only(tmp_path: Path) -> None:
    fixture = """\
//- responses.yml
responses:
  utter_hello:
    - text: "Hi {session.card_replace.$0"
"""
    check_completion(tmp_path, fixture, {"reason", "replaced"})


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
    check_completion(
        tmp_path,
        fixture,
        includes={"amount", "secret", "customer_tier", "session.billing.amount"},
        excludes={"reason", "session.billing.secret"},
    )


def test_variant_keys(tmp_path: Path) -> None:
    fixture = """\
//- skills/card_replace/responses.yml
responses:
  utter_card_replaced:
    - text: Your new card is on its way.
      $0
"""
    check_completion(tmp_path, fixture, {"condition", "metadata", "buttons"})


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
    check_completion(tmp_path, fixture, includes={"billing", "card_replace"}, replaces="bi")


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
    r = check_completion(
        tmp_path,
        TOOL.format(method="get", partial=""),
        includes={
            "reason",
            "pin_attempts",
            "project.verified",
            "billing.amount",
            "default_completed.wants_to_continue",
        },
        excludes={"billing.secret", "helper.token", "card_replace.reason"},
    )
    assert r.item("reason").detail == "categorical"


def test_memory_set_literal_offers_only_writable_names(tmp_path: Path) -> None:
    check_completion(
        tmp_path,
        TOOL.format(method="set", partial="pro"),
        {"reason", "replaced", "pin_attempts", "project.customer_tier", "project.verified"},
        replaces="pro",
    )


def test_memory_call_in_an_unparsable_file_with_single_quotes(tmp_path: Path) -> None:
    fixture = TOOL.format(method="get", partial="").replace('("', "('") + "    if (\n"
    check_completion(tmp_path, fixture, includes={"reason", "project.verified"})


def test_no_completion_elsewhere_in_python(tmp_path: Path) -> None:
    fixture = TOOL.format(method="get", partial="").replace('context.memory.get("$0', "x = $0")
    check_completion(tmp_path, fixture, set())


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
    check_completion(tmp_path, SET_BUTTON.format(cursor="$0"), {"card_replace", "project"})


def test_set_payload_entries_end_with_equals(tmp_path: Path) -> None:
    r = check_completion(
        tmp_path, SET_BUTTON.format(cursor="card_replace.re$0"), CARD_ENTRIES, replaces="re"
    )
    assert 'payload: "set:session.card_replace.reason=\n' in r.apply("reason")
    check_completion(tmp_path, SET_BUTTON.format(cursor="billing.$0"), set())  # not writable


def test_set_payload_values(tmp_path: Path) -> None:
    check_completion(
        tmp_path,
        SET_BUTTON.format(cursor="card_replace.reason=st$0"),
        {"lost", "stolen", "damaged"},
        replaces="st",
    )
    check_completion(tmp_path, SET_BUTTON.format(cursor="project.verified=$0"), {"true", "false"})


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
    check_completion(tmp_path, fixture, {"billing", "project"})
    check_completion(tmp_path, fixture.replace("session.$0", "session.billing.$0"), {"amount"})


def test_placeholder_in_a_button_title(tmp_path: Path) -> None:
    fixture = SET_BUTTON.replace("title: Lost", "title: Lost {session.project.$0").replace(
        'payload: "set:session.{cursor}\n', "payload: x\n"
    )
    check_completion(tmp_path, fixture, {"customer_tier", "verified"})


def test_half_written_requires_with_frontmatter_below(tmp_path: Path) -> None:
    fm = TC + '      requires: "session.$0\n      on_success: utter_card_replaced\nhidden: false\n'
    check_completion(tmp_path, skill_md("Help.\n", fm), NAMESPACES, replaces="")


def test_half_written_placeholder_in_a_plain_scalar(tmp_path: Path) -> None:
    fixture = """\
//- skills/card_replace/responses.yml
responses:
  utter_card_replaced:
    - text: Your card {session.$0
  utter_other:
    - text: Other.
"""
    check_completion(tmp_path, fixture, NAMESPACES)


def test_astral_characters_before_a_placeholder(tmp_path: Path) -> None:
    fixture = """\
//- skills/card_replace/responses.yml
responses:
  utter_card_replaced:
    - text: "🎉 𝒸ard 🎉 {session.card_replace.rea$0}"
"""
    r = check_completion(tmp_path, fixture, CARD_ENTRIES, replaces="rea")
    assert '"🎉 𝒸ard 🎉 {session.card_replace.reason}"' in r.apply("reason")


def test_flow_mapping_brace_is_not_a_placeholder(tmp_path: Path) -> None:
    fixture = """\
//- skills/card_replace/responses.yml
responses:
  utter_card_replaced:
    - text: Pick one.
      buttons: {$0
"""
    check_completion(tmp_path, fixture, set())


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
    assert "Skill number 113." in result.items[3].documentation
    left_out = next(f"k{i:03d}" for i in range(MAX_ITEMS + 20) if f"k{i:03d}" not in labels)
    found = item_at(proj, path, offset, left_out)
    assert found is not None and f"Skill number {int(left_out[1:])}." in found.documentation
