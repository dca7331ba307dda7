"""Parsers for ``agent.yml`` and ``integrations.yml``: what project detection, preconditions
and tool imports need, plus the top-level shape rules."""

from __future__ import annotations

from dataclasses import dataclass, field

from .errors import SyntaxIssue
from .sites import ConditionSite, site_from_scalar
from .text import TextRange
from .yaml_tree import (
    YMap,
    YNode,
    YScalar,
    YSeq,
    anchor_empty_ranges,
    describe,
    empty_value_keys,
    parse_yaml,
)

C_AGENT_INVALID = "mantle.validation.config.invalid_agent_yml"
C_AGENT_SECTION = "mantle.validation.config.missing_agent_section"
C_AGENT_SPEC = "mantle.validation.config.invalid_agent_section"
C_INT_UNKNOWN = "mantle.validation.config.unknown_integration_key"
C_INT_CALM = "mantle.validation.config.unsupported_integration_key"
C_INT_LLM = "mantle.validation.config.unexpected_llm"
C_INT_MODELS = "mantle.validation.config.invalid_model_server"
C_INT_INVALID = "lsp.config.invalid_integrations_yml"
C_PRE_SHAPE = "lsp.config.invalid_precondition"

AGENT_KEYS = (
    "agent",
    "orchestrator",
    "rules",
    "fillers",
    "prompts",
    "knowledge_answering",
    "conversation",
    "tool_timeout",
    "session_config",
    "skill_retrieval",
    "voice",
    "privacy",
)
INTEGRATION_KEYS = (
    "a2a_server",
    "channels",
    "event_broker",
    "knowledge_stores",
    "lock_store",
    "mcp_servers",
    "metrics",
    "model_groups",
    "rasa_model_server",
    "recordings",
    "secrets_manager",
    "timer_store",
    "tracing",
    "tracker_store",
)
CALM_KEYS = ("nlg", "action_endpoint", "vector_store", "nlu", "interaction_handling")


@dataclass(eq=False)
class Precondition:
    name: str
    key: YScalar
    node: YNode
    satisfied_when: YScalar | None = None
    resolve_with: YScalar | None = None


@dataclass(eq=False)
class AgentDoc:
    root: YMap | None = None
    preconditions: dict[str, Precondition] = field(default_factory=dict)
    model_group: YScalar | None = None
    cancel_confirmation: list[YScalar] = field(default_factory=list)
    conditions: list[ConditionSite] = field(default_factory=list)
    issues: list[SyntaxIssue] = field(default_factory=list)


@dataclass(eq=False)
class IntegrationsDoc:
    root: YMap | None = None
    mcp_servers: dict[str, YScalar] = field(default_factory=dict)
    model_groups: dict[str, YScalar] = field(default_factory=dict)
    issues: list[SyntaxIssue] = field(default_factory=list)


def _err(
    issues: list[SyntaxIssue], code: str, msg: str, rng: TextRange, sev: str = "error"
) -> None:
    issues.append(SyntaxIssue(code, msg, rng, sev))  # type: ignore[arg-type]


def parse_agent_yml(text: str) -> AgentDoc:
    """Parse normalized ``agent.yml`` text. Never raises."""
    doc = AgentDoc()
    _parse_agent(doc, text)
    doc.issues = anchor_empty_ranges(doc.issues, empty_value_keys(doc.root))
    return doc


def _parse_agent(doc: AgentDoc, text: str) -> AgentDoc:
    root, issues = parse_yaml(text)
    doc.issues.extend(issues)
    if root is None:
        if not issues:
            _err(
                doc.issues,
                C_AGENT_SECTION,
                "agent.yml is empty: it needs `agent:` (with "
                "`persona:`) and `orchestrator:` (with `model_group:`)",
                TextRange(0, 0),
            )
        return doc
    if not isinstance(root, YMap):
        _err(
            doc.issues,
            C_AGENT_INVALID,
            f"agent.yml must be a mapping (found {describe(root)})",
            root.range,
        )
        return doc
    doc.root = root
    for k, _ in root.pairs():
        if k.value not in AGENT_KEYS:
            _err(
                doc.issues,
                C_AGENT_SPEC,
                f"unknown agent.yml key `{k.raw}` (allowed: {', '.join(AGENT_KEYS)})",
                k.range,
            )
    agent = root.get("agent")
    if not isinstance(agent, YMap):
        _err(
            doc.issues,
            C_AGENT_SECTION,
            "agent.yml needs an `agent:` mapping with `persona:`",
            agent.range if agent else TextRange(0, 0),
        )
    else:
        persona = agent.get("persona")
        if not (
            isinstance(persona, YScalar)
            and isinstance(persona.value, str)
            and persona.value.strip()
        ):
            key = agent.key_node("persona") or root.key_node("agent")
            _err(
                doc.issues,
                C_AGENT_SPEC,
                "`agent.persona` is required: describe who the assistant is",
                (persona or key or agent).range,
            )
    orch = root.get("orchestrator")
    if not isinstance(orch, YMap):
        _err(
            doc.issues,
            C_AGENT_SPEC,
            "agent.yml needs `orchestrator:` with `model_group:`",
            orch.range if orch else (root.key_node("agent") or root).range,
        )
        return doc
    mg = orch.get("model_group")
    if isinstance(mg, YScalar) and isinstance(mg.value, str) and mg.value.strip():
        doc.model_group = mg
    else:
        _err(
            doc.issues,
            C_AGENT_SPEC,
            "`orchestrator.model_group` is required: the id of a model group in integrations.yml",
            (mg or root.key_node("orchestrator") or orch).range,
        )
    pre = orch.get("preconditions")
    if pre is not None and not isinstance(pre, YMap) and not getattr(pre, "is_null", False):
        _err(
            doc.issues,
            C_AGENT_SPEC,
            "`orchestrator.preconditions` must be a mapping of `<name>: {satisfied_when: …, "
            f"resolve_with: …}}` (found {describe(pre)})",
            pre.range,
        )
    if isinstance(pre, YMap):
        for pk, pv in pre.pairs():
            name = str(pk.value)
            p = Precondition(name, pk, pv)
            doc.preconditions[name] = p
            if not isinstance(pv, YMap):
                _err(
                    doc.issues,
                    C_PRE_SHAPE,
                    f"precondition `{name}` must be a mapping with "
                    "`satisfied_when` and `resolve_with`",
                    pv.range,
                )
                continue
            for ck, _ in pv.pairs():
                if ck.value not in ("satisfied_when", "resolve_with", "unmet_utterance"):
                    _err(
                        doc.issues,
                        C_AGENT_SPEC,
                        f"`{ck.raw}` is not a precondition key "
                        "(allowed: satisfied_when, resolve_with, unmet_utterance)",
                        ck.range,
                    )
            sw = pv.get("satisfied_when")
            if isinstance(sw, YScalar) and isinstance(sw.value, str):
                p.satisfied_when = sw
                doc.conditions.append(site_from_scalar("satisfied_when", text, sw, name))
            else:
                _err(
                    doc.issues,
                    C_AGENT_SPEC,
                    f"precondition `{name}` needs `satisfied_when: <condition>`",
                    (sw or pk).range,
                )
            rw = pv.get("resolve_with")
            if isinstance(rw, YScalar) and isinstance(rw.value, str):
                p.resolve_with = rw
            else:
                _err(
                    doc.issues,
                    C_AGENT_SPEC,
                    f"precondition `{name}` needs `resolve_with: <skill_id>`",
                    (rw or pk).range,
                )
    tc = orch.get("tool_constraints")
    if isinstance(tc, YMap):
        cancel = tc.get("cancel")
        if isinstance(cancel, YMap):
            rc = cancel.get("requires_confirmation")
            enabled = rc.get("enabled") if isinstance(rc, YMap) else None
            if isinstance(rc, YMap) and isinstance(enabled, YScalar) and enabled.value is True:
                for name in ("utter_for_confirmation", "utter_on_user_denial"):
                    n = rc.get(name)
                    if isinstance(n, YScalar) and isinstance(n.value, str):
                        doc.cancel_confirmation.append(n)
    return doc


def parse_integrations_yml(text: str) -> IntegrationsDoc:
    """Parse normalized ``integrations.yml`` text. Never raises."""
    doc = IntegrationsDoc()
    root, issues = parse_yaml(text)
    doc.issues.extend(issues)
    if root is None:
        return doc
    if not isinstance(root, YMap):
        _err(
            doc.issues,
            C_INT_INVALID,
            f"integrations.yml must be a mapping (found {describe(root)})",
            root.range,
        )
        return doc
    doc.root = root
    for k, _ in root.pairs():
        key = k.value
        if key in INTEGRATION_KEYS:
            continue
        if key == "llm":
            _err(
                doc.issues,
                C_INT_LLM,
                "top-level `llm:` is the 3.20 form: declare "
                "`model_groups:` here and set `orchestrator.model_group` in agent.yml",
                k.range,
            )
        elif key == "models":
            _err(
                doc.issues,
                C_INT_MODELS,
                "top-level `models:` is not supported: use "
                "`model_groups:` (or `rasa_model_server:`)",
                k.range,
            )
        elif key in CALM_KEYS:
            _err(
                doc.issues,
                C_INT_CALM,
                f"`{key}` is a CALM setting that Mantle does not use",
                k.range,
            )
        else:
            _err(
                doc.issues,
                C_INT_UNKNOWN,
                f"unknown integrations.yml key `{k.raw}` (allowed: {', '.join(INTEGRATION_KEYS)})",
                k.range,
            )
    for section, attr, target in (
        ("mcp_servers", "name", doc.mcp_servers),
        ("model_groups", "id", doc.model_groups),
    ):
        seq = root.get(section)
        if isinstance(seq, YSeq):
            for item in seq.items:
                if isinstance(item, YMap):
                    n = item.get(attr)
                    if isinstance(n, YScalar) and isinstance(n.value, str):
                        target[n.value] = n
    return doc
