"""Tests for the ``agent.yml`` / ``integrations.yml`` parsers (``mantle_lsp.syntax.config_yml``)."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mantle_lsp.syntax import config_tables as C
from mantle_lsp.syntax.config_yml import (
    AgentDoc,
    IntegrationsDoc,
    parse_agent_yml,
    parse_integrations_yml,
)
from mantle_lsp.syntax.text import TextRange
from mantle_lsp.syntax.yaml_tree import YAML_DUPLICATE_KEY, YAML_SYNTAX
from support import FRAGMENTS, issue_list, marked


def agent(fixture: str) -> tuple[AgentDoc, list[TextRange]]:
    text, r = marked(fixture)
    return parse_agent_yml(text), r


def integrations(fixture: str) -> tuple[IntegrationsDoc, list[TextRange]]:
    text, r = marked(fixture)
    return parse_integrations_yml(text), r


# =============================================================================================
# agent.yml


def test_valid_agent() -> None:
    doc, r = agent(
        """\
        agent:
          id: telecom
          persona: A careful assistant.
        orchestrator:
          model_group: «main»
          preconditions:
            «verified»:
              satisfied_when: «session.verify.ok == True»
              resolve_with: «verify»
              unmet_utterance: false
          tool_constraints:
            cancel:
              requires_confirmation:
                enabled: true
                utter_for_confirmation: «utter_confirm_cancel»
                utter_on_user_denial: «utter_keep_going»
        fillers: {enabled: true}
        conversation: {}
        """
    )
    assert doc.issues == []
    assert doc.root is not None
    assert doc.model_group is not None and doc.model_group.range == r[0]
    pre = doc.preconditions["verified"]
    assert pre.key.range == r[1]
    assert pre.satisfied_when is not None and pre.satisfied_when.range == r[2]
    assert pre.resolve_with is not None and pre.resolve_with.range == r[3]
    assert [n.range for n in doc.cancel_confirmation] == [r[4], r[5]]
    (site,) = doc.conditions
    assert (site.kind, site.text, site.context) == (
        "satisfied_when",
        "session.verify.ok == True",
        "verified",
    )
    assert site.file_range(0, len(site.text)) == r[2]


def test_cancel_confirmation_disabled_names_nothing() -> None:
    doc, _ = agent(
        """\
        agent: {persona: p}
        orchestrator:
          model_group: main
          tool_constraints:
            cancel:
              requires_confirmation: {enabled: false, utter_for_confirmation: utter_x}
        """
    )
    assert doc.issues == [] and doc.cancel_confirmation == []


@pytest.mark.parametrize("text", ["", "# nothing\n"])
def test_empty_agent_yml(text: str) -> None:
    doc = parse_agent_yml(text)
    assert issue_list(doc.issues) == [(C.C_AGENT_SECTION, "error", TextRange(0, 0))]


def test_agent_yaml_error() -> None:
    doc, r = agent("agent: {persona: p\norchestrator«:» x\n")
    assert issue_list(doc.issues) == [(YAML_SYNTAX, "error", r[0])]
    assert doc.root is None


def test_agent_duplicate_key() -> None:
    doc, r = agent("agent: {persona: p}\norchestrator: {model_group: m}\n«agent»: {persona: q}\n")
    assert issue_list(doc.issues) == [(YAML_DUPLICATE_KEY, "warning", r[0])]


@pytest.mark.parametrize("fixture", ["«- a»\n", "«text»\n"])
def test_agent_yml_not_a_mapping(fixture: str) -> None:
    doc, r = agent(fixture)
    assert issue_list(doc.issues) == [(C.C_AGENT_INVALID, "error", r[0])]
    assert doc.root is None


def test_unknown_agent_keys_are_ignored() -> None:
    # the engine ignores top-level keys it does not read: a warning, not an error
    doc, r = agent("agent: {persona: p}\norchestrator: {model_group: m}\n«llm»: {}\n«skills»: []\n")
    assert issue_list(doc.issues) == [
        (C.C_IGNORED, "warning", r[0]),
        (C.C_IGNORED, "warning", r[1]),
    ]
    doc, r = agent("agent: {persona: p}\norchestrator: {model_group: m}\n«rule»: [x]\n")
    assert "did you mean `rules`?" in doc.issues[0].message


def test_name_and_description_are_read_but_unused() -> None:
    doc, r = agent(
        "agent: {persona: p}\norchestrator: {model_group: m}\n"
        "«name»: Bank\n«description»: A bank.\n"
    )
    assert issue_list(doc.issues) == [
        (C.C_IGNORED, "warning", r[0]),
        (C.C_IGNORED, "warning", r[1]),
    ]
    # ... but they must be strings
    doc, r = agent("agent: {persona: p}\norchestrator: {model_group: m}\nname: «5»\n")
    assert issue_list(doc.issues) == [(C.C_AGENT_SPEC, "error", r[0])]


def test_agent_block_keys() -> None:
    doc, r = agent(
        """\
        agent:
          persona: p
          «name»: Bank
          voice: {enabled: true, sample_rate: 8000, «codec»: x}
        orchestrator: {model_group: m}
        """
    )
    assert issue_list(doc.issues) == [
        (C.C_IGNORED, "warning", r[0]),
        (C.C_IGNORED, "warning", r[1]),
    ]
    doc, r = agent("agent:\n  persona: p\n  voice: «on»\norchestrator: {model_group: m}\n")
    assert issue_list(doc.issues) == [(C.C_AGENT_SPEC, "error", r[0])]
    doc, r = agent(
        "agent:\n  persona: p\n  voice: {sample_rate: «fast»}\norchestrator: {model_group: m}\n"
    )
    assert issue_list(doc.issues) == [(C.C_AGENT_SPEC, "error", r[0])]


def test_agent_section() -> None:
    doc, _ = agent("orchestrator: {model_group: m}\n")
    assert issue_list(doc.issues) == [(C.C_AGENT_SECTION, "error", TextRange(0, 0))]
    doc, r = agent("agent: «[persona]»\norchestrator: {model_group: m}\n")
    assert issue_list(doc.issues) == [(C.C_AGENT_SECTION, "error", r[0])]
    doc, r = agent("«agent»:\norchestrator: {model_group: m}\n")
    assert issue_list(doc.issues) == [(C.C_AGENT_SECTION, "error", r[0])]


def test_persona() -> None:
    doc, r = agent("«agent»:\n  id: x\norchestrator: {model_group: m}\n")
    assert issue_list(doc.issues) == [(C.C_AGENT_SPEC, "error", r[0])]
    doc, r = agent("agent:\n  persona: «'   '»\norchestrator: {model_group: m}\n")
    assert issue_list(doc.issues) == [(C.C_AGENT_SPEC, "error", r[0])]
    doc, r = agent("agent:\n  «persona»:\norchestrator: {model_group: m}\n")
    assert issue_list(doc.issues) == [(C.C_AGENT_SPEC, "error", r[0])]
    doc, r = agent("agent:\n  persona: «5»\norchestrator: {model_group: m}\n")
    assert issue_list(doc.issues) == [(C.C_AGENT_SPEC, "error", r[0])]


def test_orchestrator_and_model_group() -> None:
    doc, r = agent("«agent»: {persona: p}\n")
    assert issue_list(doc.issues) == [(C.C_AGENT_SPEC, "error", r[0])]
    doc, r = agent("agent: {persona: p}\norchestrator: «[m]»\n")
    assert issue_list(doc.issues) == [(C.C_AGENT_SPEC, "error", r[0])]
    doc, r = agent("agent: {persona: p}\n«orchestrator»: {«rules»: []}\n")
    assert issue_list(doc.issues) == [
        (C.C_AGENT_SPEC, "error", r[0]),
        (C.C_AGENT_SPEC, "error", r[1]),
    ]
    doc, r = agent("agent: {persona: p}\norchestrator:\n  model_group: «''»\n")
    assert issue_list(doc.issues) == [(C.C_AGENT_SPEC, "error", r[0])]
    doc, r = agent("agent: {persona: p}\norchestrator:\n  «model_group»:\n")
    assert issue_list(doc.issues) == [(C.C_AGENT_SPEC, "error", r[0])]
    assert doc.model_group is None


def test_precondition_errors() -> None:
    doc, r = agent(
        """\
        agent: {persona: p}
        orchestrator:
          model_group: m
          preconditions:
            a: «text»
            «b»:
              resolve_with: s
            c:
              satisfied_when: «5»
              «resolve_with»:
            d:
              satisfied_when: session.s.x
              resolve_with: s
              «on_fail»: x
            «e»: {}
            f: {satisfied_when: «' '», resolve_with: «''»}
        """
    )
    e = r[5]
    assert issue_list(doc.issues) == [
        (C.C_AGENT_SPEC, "error", r[0]),
        (C.C_AGENT_SPEC, "error", r[1]),
        (C.C_AGENT_SPEC, "error", r[2]),
        (C.C_AGENT_SPEC, "error", r[3]),
        (C.C_AGENT_SPEC, "error", r[4]),
        (C.C_AGENT_SPEC, "error", e),
        (C.C_AGENT_SPEC, "error", e),
        (C.C_AGENT_SPEC, "error", r[6]),
        (C.C_AGENT_SPEC, "error", r[7]),
    ]
    assert "(it is blank)" in doc.issues[-1].message
    assert sorted(doc.preconditions) == ["a", "b", "c", "d", "e", "f"]
    assert [c.context for c in doc.conditions] == ["d"]


def test_preconditions_must_be_a_mapping() -> None:
    doc, r = agent(
        "agent: {persona: p}\norchestrator:\n  model_group: m\n  preconditions: «[verified]»\n"
    )
    assert issue_list(doc.issues) == [(C.C_AGENT_SPEC, "error", r[0])]
    assert doc.preconditions == {}
    # null is not an empty mapping: the engine rejects it
    doc, r = agent("agent: {persona: p}\norchestrator:\n  model_group: m\n  «preconditions»:\n")
    assert issue_list(doc.issues) == [(C.C_AGENT_SPEC, "error", r[0])]


@pytest.mark.parametrize(
    ("value", "text"),
    [
        ("«session.s.a»", "session.s.a"),
        ("'  «session.s.a == ''x''»  '", "session.s.a == 'x'"),
        ('"«session.s.a\\tor b»"', "session.s.a\tor b"),
        (">-\n        «session.s.a\n        and session.s.b»", "session.s.a and session.s.b"),
    ],
)
def test_satisfied_when_site_ranges(value: str, text: str) -> None:
    doc, r = agent(
        "agent: {persona: p}\norchestrator:\n  model_group: m\n  preconditions:\n"
        f"    v:\n      resolve_with: s\n      satisfied_when: {value}\n"
    )
    assert doc.issues == []
    (site,) = doc.conditions
    assert (site.kind, site.text) == ("satisfied_when", text)
    assert site.map.exact
    assert site.file_range(0, len(site.text)) == r[0]


# =============================================================================================
# integrations.yml


def test_valid_integrations() -> None:
    doc, r = integrations(
        """\
        model_groups:
          - id: «main»
            models:
              - provider: openai
                model: gpt-4o
          - «models»: []
          - id: «fast»
        mcp_servers:
          - name: «billing»
            url: http://localhost:8080
          - «url»: http://no-name
          - «5»
        tracker_store: {type: sql}
        channels: {rest: {}}
        """
    )
    # the entries without a name or an id are invalid, but the others are still found
    assert issue_list(doc.issues) == [
        (C.C_GROUP, "error", r[1]),
        (C.C_GROUP, "error", r[2]),
        (C.C_MCP, "error", r[4]),
        (C.C_MCP, "error", r[5]),
    ]
    r = [r[0], r[2], r[3]]
    assert {k: v.range for k, v in doc.model_groups.items()} == {"main": r[0], "fast": r[1]}
    assert {k: v.range for k, v in doc.mcp_servers.items()} == {"billing": r[2]}


@pytest.mark.parametrize("text", ["", "# comment only\n"])
def test_empty_integrations(text: str) -> None:
    doc = parse_integrations_yml(text)
    assert doc.issues == [] and doc.root is None


@pytest.mark.parametrize("fixture", ["«- a»\n", "«text»\n"])
def test_integrations_not_a_mapping(fixture: str) -> None:
    doc, r = integrations(fixture)
    assert issue_list(doc.issues) == [(C.C_INT_INVALID, "error", r[0])]


def test_integrations_yaml_error() -> None:
    doc, r = integrations("model_groups: «[»\n")
    assert issue_list(doc.issues) == [(YAML_SYNTAX, "error", r[0])]


def test_integrations_top_level_keys() -> None:
    doc, r = integrations(
        """\
        model_groups: []
        «llm»: {provider: openai}
        «models»: []
        «nlg»: {}
        «action_endpoint»: {}
        «vector_store»: {}
        «nlu»: {}
        «interaction_handling»: {}
        «colour»: red
        """
    )
    assert issue_list(doc.issues) == [
        (C.C_INT_LLM, "error", r[0]),
        (C.C_INT_MODELS, "error", r[1]),
        *[(C.C_INT_CALM, "error", rng) for rng in r[2:7]],
        (C.C_INT_UNKNOWN, "error", r[7]),
    ]


# sections that need settings: an empty mapping is rejected (as the engine does)
NEEDS_SETTINGS = {
    "event_broker": C.C_EVENT_BROKER,  # the default broker (pika) needs url, username, password
    "metrics": C.C_METRICS,  # type: otlp
    "rasa_model_server": C.C_INT_MODELS,  # url
    "secrets_manager": C.C_SECRETS_MANAGER,  # type: vault
    "tracing": C.C_TRACING,  # type
}


@pytest.mark.parametrize("key", C.INTEGRATION_KEYS)
def test_every_known_integration_key_is_silent(key: str) -> None:
    assert parse_integrations_yml(f"{key}:\n").issues == []  # null: not configured
    empty = "[]" if key in ("mcp_servers", "model_groups", "knowledge_stores") else "{}"
    doc = parse_integrations_yml(f"{key}: {empty}\n")
    if key in NEEDS_SETTINGS:
        assert [(i.code, i.severity) for i in doc.issues] == [(NEEDS_SETTINGS[key], "error")]
    else:
        assert doc.issues == []


# ---------------------------------------------------------------------------------------------
# Robustness


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.sampled_from(FRAGMENTS), max_size=40).map("".join))
def test_never_raises_and_ranges_stay_inside(text: str) -> None:
    for doc in (parse_agent_yml(text), parse_integrations_yml(text)):
        for i in doc.issues:
            assert 0 <= i.range.start <= i.range.end <= len(text), i
