"""The parsers of the evaluation's files (``mantle_lsp.syntax.eval_yml``) and YAML 1.2
values (``mantle_lsp.syntax.yaml12``), docs/language/eval.md."""

from __future__ import annotations

import math

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mantle_lsp.syntax.eval_yml import (
    ConftestDoc,
    ScenarioDoc,
    parse_conftest,
    parse_scenario,
)
from mantle_lsp.syntax.yaml12 import UNREADABLE, plain12
from mantle_lsp.syntax.yaml_tree import YAML_SYNTAX
from support import FRAGMENTS, issue_list, marked

INVALID = "eval.scenario.invalid"
ABORTS = "eval.assertion.aborts_run"
NOT_A_SCENARIO = "eval.scenario.not_a_scenario"
DUPLICATE = "eval.yaml.duplicate_key"
CONFTEST = "eval.conftest.invalid"
NAN = object()  # the reader's float NaN

# What rasa-pro's YAML reader (ruamel.yaml, YAML 1.2, as `load_scenario` calls it) builds
# for each plain scalar, recorded from rasa-pro 3.21.0.
READER_VALUES = [
    ("yes", "yes"),
    ("no", "no"),
    ("on", "on"),
    ("off", "off"),
    ("y", "y"),
    ("n", "n"),
    ("true", True),
    ("True", True),
    ("TRUE", True),
    ("tRue", "tRue"),
    ("false", False),
    ("FALSE", False),
    ("null", None),
    ("Null", None),
    ("NULL", None),
    ("~", None),
    ("", None),
    ("nULL", "nULL"),
    ("1", 1),
    ("-1", -1),
    ("+1", 1),
    ("0", 0),
    ("007", 7),
    ("0777", 777),
    ("09", 9),
    ("0o17", 15),
    ("0o_7", 7),
    ("+0o7", 7),
    ("-0o7", -7),
    ("0x1F", 31),
    ("0x_1", 1),
    ("+0x1", 1),
    ("-0x1", -1),
    ("0b101", 5),
    ("-0b1", -1),
    ("1_000", 1000),
    ("1__0", 10),
    ("9_9_9", 999),
    ("-_1", -1),
    ("+_1", 1),
    ("_1", "_1"),
    ("1:30", "1:30"),
    ("1.5", 1.5),
    ("1e3", 1000.0),
    ("1.e3", 1000.0),
    (".5", 0.5),
    ("+.5", 0.5),
    ("-.5", -0.5),
    ("1E3", 1000.0),
    ("1e+3", 1000.0),
    ("1e-5", 1e-05),
    ("1E+05", 100000.0),
    ("1.0e5", 100000.0),
    ("3.", 3.0),
    ("-3.", -3.0),
    ("0.", 0.0),
    ("00.5", 0.5),
    ("0777.0", 777.0),
    ("1_0.5", 10.5),
    ("0.1_2", 0.12),
    ("1._5", 1.5),
    ("1.5_", 1.5),
    ("1_e3", 1000.0),
    ("12e03", 12000.0),
    (".1e1", ".1e1"),
    (".e3", ".e3"),
    ("1e", "1e"),
    ("e3", "e3"),
    ("1e1.0", "1e1.0"),
    ("1.2.3", "1.2.3"),
    ("++1", "++1"),
    ("0_x1", "0_x1"),
    ("0x", "0x"),
    ("0o", "0o"),
    ("0b", "0b"),
    ("0b2", "0b2"),
    ("0o8", "0o8"),
    ("0xG", "0xG"),
    (".inf", math.inf),
    ("-.Inf", -math.inf),
    ("+.INF", math.inf),
    (".nan", NAN),
    (".NaN", NAN),
    (".NAN", NAN),
    ("-.nan", "-.nan"),
    ("+.nan", "+.nan"),
    ("nan", "nan"),
    ("inf", "inf"),
    ("2024-01-02", "2024-01-02"),
    ("2024-01-02 10:00:00", "2024-01-02 10:00:00"),
    ("1,000", "1,000"),
    ("+", "+"),
    (".", "."),
    ("_", "_"),
    ("__", "__"),
    ("abc", "abc"),
    ("Spain", "Spain"),
]


@pytest.mark.parametrize(("text", "want"), READER_VALUES)
def test_plain_scalars_read_as_the_evaluation_reads_them(text: str, want: object) -> None:
    got = plain12(text)
    if want is NAN:
        assert isinstance(got, float) and math.isnan(got)
    else:
        assert got == want and type(got) is type(want)


def test_a_prefix_without_digits_is_unreadable() -> None:
    assert plain12("0x_") is UNREADABLE and plain12("0b_") is UNREADABLE


def parse(fixture: str) -> tuple[ScenarioDoc, list]:
    text, r = marked(fixture)
    return parse_scenario(text), r


VALID = """\
scenario:
  name: yes
  simulation_context: >
    You are a customer on holiday.
  setup:
    initial_slots:
      account_number: "DE-1"
      on: 1
  goals:
    assertions:
      - skill_activated: {skill_id: roaming_pass}
      - skill_cancelled: {skill_id: roaming_pass, step_id: autonomous}
      - ordered_block_completed: {skill_id: roaming_pass, block_id: main, step_id: END}
      - memory_was_set:
          - name: roaming_pass.destination
            value: Spain
      - memory_was_not_set:
          - name: project.customer_verified
            value: false
      - memory_was_cleared:
          - name: roaming_pass.zone
      - tool_executed:
          tool_name: add_roaming_pass
          source: local
          arguments: {destination: Spain}
          is_error: false
      - tool_executed: {tool_name: lookup, source: mcp, mcp_server: crm}
      - tools_within_one_turn:
          allow_extra_calls: true
          calls:
            - tool_executed: {tool_name: a, source: local}
            - tool_executed: {tool_name: b, source: local}
      - bot_uttered: {utter_name: utter_ok, text_matches: "pass (added|booked)"}
      - bot_did_not_utter: {utter_name: utter_sorry}
      - sequencing:
          - skill_activated: {skill_id: roaming_pass}
          - memory_was_set: roaming_pass.destination
          - tool_executed: {tool_name: add_roaming_pass, source: local}
    criteria:
      - The agent quotes a price.
    expected_tools:
      - tool_called: add_roaming_pass
        gate: true
      - tool_group:
          - ordered: true
          - tool_called: {tool_name: a, arguments: {x: 1}}
"""


def test_a_valid_scenario_has_no_issue_and_keeps_every_name() -> None:
    doc = parse_scenario(VALID)
    assert doc.issues == [], [(i.code, i.message) for i in doc.issues]
    assert doc.is_scenario and doc.name is not None and doc.name.text == "yes"  # YAML 1.2
    refs = [(r.kind, r.text, r.qualifier) for r in doc.refs()]
    assert refs == [
        ("skill", "roaming_pass", None),
        ("skill", "roaming_pass", None),
        ("step", "autonomous", "roaming_pass"),
        ("skill", "roaming_pass", None),
        ("block", "main", "roaming_pass"),
        ("step", "END", "roaming_pass"),
        ("memory", "roaming_pass.destination", None),
        ("memory", "project.customer_verified", None),
        ("memory", "roaming_pass.zone", None),
        ("tool", "add_roaming_pass", None),
        ("argument", "destination", "add_roaming_pass"),
        ("tool", "lookup", "crm"),
        ("mcp_server", "crm", None),
        ("tool", "a", None),
        ("tool", "b", None),
        ("response", "utter_ok", None),
        ("response", "utter_sorry", None),
        ("skill", "roaming_pass", None),
        ("memory", "roaming_pass.destination", None),
        ("tool", "add_roaming_pass", None),
        ("initial_slot", "account_number", None),
        ("initial_slot", "on", None),
        ("expected_tool", "add_roaming_pass", None),
        ("expected_tool", "a", None),
    ]
    for r in doc.refs():
        assert VALID[r.range.start : r.range.end] == r.text, r
    negative = [a.key for a in doc.all_assertions() if a.negative]
    assert negative == ["memory_was_not_set", "bot_did_not_utter"]
    seq = next(a for a in doc.assertions if a.key == "sequencing")
    assert [c.key for c in seq.children] == ["skill_activated", "memory_was_set", "tool_executed"]
    assert all(c.in_sequencing for c in seq.children)


def test_schema_problems_are_reported_where_they_are() -> None:
    doc, r = parse(
        """\
        scenario:
          name: «1»
          simulation_context: ctx
          «extra»: 1
          setup:
            «initial_slots»:
          goals:
            assertions:
              - skill_activated: {skill_id: x, «step_id»: y}
              - «skill_completed: {skill_id: x}
                skill_cancelled: {skill_id: x}»
              - «unknown_key»: 1
              - memory_was_set:
                  «-»
              - memory_was_not_set:
                  - name: a
                    «value»:
              - «tool_executed»: {tool_name: t, source: mcp}
              - tool_executed: {tool_name: t, source: local, «mcp_server»: s}
              - tool_executed: {tool_name: t, source: «remote»}
              - «bot_uttered»: {}
              - bot_uttered: {utter_name: u, «buttons»: []}
              - tools_within_one_turn:
                  allow_extra_calls: «yes»
                  «calls»:
                    - tool_executed: {tool_name: a, source: local}
              - sequencing:
                  - «memory_was_not_set»: x
                  - memory_was_set: «{name: x}»
            criteria:
              «-»
            expected_tools:
              - tool_called: x
                «foo»: 1
              - «gate: true»
              - tool_called: «""»
              - «tool_group»:
                  - ordered: true
              - tool_called: x
                «gate»:
        """
    )
    assert issue_list(doc.issues) == [(INVALID, "error", x) for x in r]
    assert not any(a.valid for a in doc.assertions if a.key == "tool_executed")


def test_a_date_is_text_for_the_evaluation() -> None:
    doc = parse_scenario("scenario:\n  name: 2024-13-45\n  simulation_context: 2024-01-02\n")
    assert doc.issues == []


def test_messages_say_what_the_engine_wants() -> None:
    doc = parse_scenario(
        "scenario:\n  name: 1\n  simulation_context: c\n  goals:\n    assertions:\n"
        "      - tools_within_one_turn:\n          allow_extra_calls: yes\n"
        "          calls:\n            - tool_executed: {tool_name: a, source: local}\n"
        "            - tool_executed: {tool_name: b, source: local}\n"
        "      - memory_was_not_set: []\n"
    )
    msgs = [i.message for i in doc.issues]
    assert msgs == [
        '`name` must be text (found the number `1`); quote it: `"1"`',
        "`allow_extra_calls` must be a boolean (`true`/`false`) (found a string) (the "
        "evaluation reads YAML 1.2, where `yes`, `no`, `on` and `off` are text: write `true` "
        "or `false`)",
        "`memory_was_not_set` lists no memory entry: the evaluation fails on this assertion "
        "at run time (the run errors out)",
    ]


def test_what_fails_only_when_a_run_builds_the_assertion() -> None:
    doc, r = parse(
        """\
        scenario:
          name: n
          simulation_context: c
          goals:
            assertions:
              - skill_activated: {skill_id: «""»}
              - ordered_block_entered: {skill_id: a, block_id: «''»}
              - «memory_was_set»: []
              - «memory_was_cleared»:
              - tool_executed: {tool_name: «""», source: local}
              - «bot_did_not_utter»: {}
              - «bot_uttered»: {utter_name: ""}
              - bot_uttered: {text_matches: «"(unclosed"»}
              - tools_within_one_turn:
                  «ordered»:
                  allow_extra_calls: false
                  calls:
                    - tool_executed: {tool_name: a, source: local}
                    - tool_executed: {tool_name: b, source: local}
              - sequencing:
                  - skill_completed: {skill_id: «""»}
              - «sequencing»:
        """
    )
    assert issue_list(doc.issues) == [(ABORTS, "error", x) for x in r]


def test_a_file_that_is_not_a_scenario_is_one_warning() -> None:
    doc, r = parse(
        """\
        «name»: Angry employee demands a raise
        goal: >-
          Simulated user: ...
        success_criteria: The agent must not promise anything.
        mock_tools:
          - notify_slack
        """
    )
    assert issue_list(doc.issues) == [(NOT_A_SCENARIO, "warning", r[0])]
    assert "`name`, `goal`, `success_criteria`, `mock_tools`" in doc.issues[0].message
    assert not doc.is_scenario and list(doc.refs()) == []


@pytest.mark.parametrize("text", ["", "\n# only a comment\n", "[]\n", "- a\n", "7\n"])
def test_empty_and_other_documents_are_not_scenarios(text: str) -> None:
    doc = parse_scenario(text)
    assert [i.code for i in doc.issues] == [NOT_A_SCENARIO]
    assert 0 <= doc.issues[0].range.start <= doc.issues[0].range.end <= len(text)


def test_duplicate_keys_are_compared_as_yaml_1_2_reads_them() -> None:
    doc, r = parse(
        """\
        scenario:
          name: n
          simulation_context: c
          «name»: again
          setup:
            initial_slots:
              yes: 1
              true: 2
              0777: 3
              «777»: 4
        """
    )
    got = [i for i in issue_list(doc.issues) if i[0] == DUPLICATE]
    assert got == [(DUPLICATE, "error", x) for x in r]


def test_a_number_the_reader_fails_on() -> None:
    doc, r = parse("scenario:\n  name: n\n  simulation_context: «0x_»\n")
    assert issue_list(doc.issues) == [(YAML_SYNTAX, "error", r[0])]


def test_yaml_that_does_not_parse() -> None:
    doc = parse_scenario("scenario: [\n")
    assert [i.code for i in doc.issues] == [YAML_SYNTAX]
    assert not doc.is_scenario


# -- conftest -----------------------------------------------------------------------------


def conftest(fixture: str) -> tuple[ConftestDoc, list]:
    text, r = marked(fixture)
    return parse_conftest(text), r


def test_a_valid_conftest() -> None:
    doc, _ = conftest(
        """\
        simulation:
          llm: {provider: openai, model: gpt-4.1-mini, temperature: 0.3}
          simulated_user_prompt: prompts/user.jinja2
          max_concurrent_llm_calls: "4"
        evaluation:
          llm: {provider: anthropic, model: claude}
          criteria_judge_prompt: prompts/judge.jinja2
          metrics_judge_prompt:
          max_concurrent_llm_calls: 2.0
        """
    )
    assert doc.issues == []
    assert [(p.key, p.name.text) for p in doc.prompts] == [
        ("simulated_user_prompt", "prompts/user.jinja2"),
        ("criteria_judge_prompt", "prompts/judge.jinja2"),
    ]


def test_conftest_problems() -> None:
    doc, r = conftest(
        """\
        «simulation»:
          «llm»: {provider: openai}
          simulated_user_prompt: «5»
          max_concurrent_llm_calls: «0»
        evaluation:
          llm: {provider: openai, model: «4»}
          max_concurrent_llm_calls: «2.5»
        """
    )
    assert issue_list(doc.issues) == [(CONFTEST, "error", x) for x in r[1:]]
    doc, r = conftest("«simulation»:\n  llm: {provider: a, model: b}\n")
    assert issue_list(doc.issues) == [(CONFTEST, "error", r[0])]
    assert "`evaluation:` is missing" in doc.issues[0].message
    doc, r = conftest("«- a»\n")
    assert issue_list(doc.issues) == [(CONFTEST, "error", r[0])]


# -- robustness ---------------------------------------------------------------------------

EVAL_FRAGMENTS = [
    *FRAGMENTS,
    "scenario:\n",
    "  goals:\n",
    "    assertions:\n",
    "      - sequencing:\n",
    "          - memory_was_set: x\n",
    "      - tool_executed: {tool_name: a, source: mcp}\n",
    "      - bot_uttered: {}\n",
    "      - skill_cancelled: {skill_id: a, step_id: b}\n",
    "    expected_tools:\n",
    "      - tool_group: [{tool_called: x}]\n",
    "  setup: {initial_slots: {a: 1}}\n",
    "yes",
    "0x_",
    "~",
]


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.sampled_from(EVAL_FRAGMENTS), max_size=40).map("".join))
def test_never_raises_and_ranges_stay_inside(text: str) -> None:
    for doc in (parse_scenario(text), parse_conftest(text)):
        for i in doc.issues:
            assert 0 <= i.range.start <= i.range.end <= len(text), i
    for ref in parse_scenario(text).refs():
        assert 0 <= ref.range.start <= ref.range.end <= len(text)
