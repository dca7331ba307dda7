"""Parsers for ``agent.yml`` and ``integrations.yml``: what project detection, preconditions
and tool imports need, plus the shape rules of every section the engine checks
(docs/language/config.md).

Each rule reports on the narrowest node that shows the cause: the offending key, the
value, or the list item. Rules that need another file (a model group named in agent.yml)
live in :mod:`mantle_lsp.ide.rules.config`.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

from .config_tables import (
    AGENT_FIELDS,
    AGENT_KEYS,
    AGENT_VOICE_FIELDS,
    BUILTIN_TOOLS,
    C_AGENT_INVALID,
    C_AGENT_SECTION,
    C_AGENT_SPEC,
    C_GROUP,
    C_GROUP_CREDENTIALS,
    C_GROUP_DUP,
    C_GROUP_UNUSED,
    C_IGNORED,
    C_INT_CALM,
    C_INT_INVALID,
    C_INT_LLM,
    C_INT_MODELS,
    C_INT_UNKNOWN,
    C_LITERAL_SECRET,
    C_MCP,
    C_MCP_DUP,
    C_PRIVACY,
    C_SESSION,
    C_SESSION_EXPIRY,
    C_STORE,
    C_STORE_DUP,
    C_TYPE_ENV,
    C_UNKNOWN_GROUP,
    CALM_KEYS,
    CHUNKING_FIELDS,
    CONFIRMABLE_TOOLS,
    CONFIRMATION_FIELDS,
    DEFAULT_CHUNK_OVERLAP,
    DEFAULT_CHUNK_SIZE,
    DISABLEABLE_TOOLS,
    ENV_SECRET,
    EVENT_BROKER_FIELDS,
    EVENT_BROKER_TYPES,
    FILLER_EXAMPLE_FIELDS,
    FILLERS_FIELDS,
    INTEGRATION_KEYS,
    JAEGER_FIELDS,
    KAFKA_TYPES,
    KNOWLEDGE_ANSWERING_FIELDS,
    KNOWLEDGE_STORE_FIELDS,
    KNOWLEDGE_STORE_TYPES,
    LANGFUSE_ENV,
    LANGFUSE_KEY,
    LANGFUSE_REQUIRED,
    LEGACY_PROMPT_KEYS,
    LOCK_STORE_TYPES,
    MCP_AUTH_KEYS,
    MCP_BASE_KEYS,
    MCP_NAME,
    MCP_SECRET_KEYS,
    MCP_TYPES,
    MCP_UNSUPPORTED,
    MODEL_SECRET_KEYS,
    MODEL_SERVER_AUTH_FIELDS,
    MODEL_SERVER_FIELDS,
    ORCHESTRATOR_FIELDS,
    OTLP_FIELDS,
    PROMPTS_FIELDS,
    RECORDING_BLOCKS,
    RECORDING_PROVIDERS,
    REDIS_FIELDS,
    REDIS_MODES,
    SECRET_KEYS,
    SECRET_SECTIONS,
    SECRETS_MANAGER_KEYS,
    SESSION_FIELDS,
    SHAPE_CODES,
    SKILL_RETRIEVAL_FIELDS,
    TIMER_STORE_TYPES,
    TOOL_CONSTRAINT_FIELDS,
    TRACING_TYPES,
    TRACKER_STORE_FIELDS,
    TRACKER_STORE_TYPES,
    TYPED_SECTIONS,
    UNUSED_AGENT_KEYS,
    URL_PASSWORD,
    VOICE_FIELDS,
)
from .config_values import (
    _ENV_RE,
    Check,
    _bool,
    _bool_true,
    _custom_path,
    _env_ok,
    _err,
    _first_key_range,
    _found,
    _http_url,
    _int_min,
    _is_null,
    _is_placeholder,
    _map_check,
    _meant,
    _non_empty_str,
    _number,
    _number_check,
    _opt,
    _opt_str,
    _positive,
    _scalar,
    _str,
    _str_value,
    _suggest,
    _truthy,
    _whole,
    _whole_check,
)
from .errors import C_LEGACY, SyntaxIssue
from .sites import ConditionSite, site_from_scalar
from .text import TextRange
from .yaml_tree import (
    YMap,
    YNode,
    YScalar,
    YSeq,
    anchor_empty_ranges,
    describe,
    parse_yaml,
)


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
    # other model-group references: (setting, value), e.g. ("knowledge_answering.embeddings", …)
    embeddings: list[tuple[str, YScalar]] = field(default_factory=list)
    cancel_confirmation: list[YScalar] = field(default_factory=list)
    conditions: list[ConditionSite] = field(default_factory=list)
    issues: list[SyntaxIssue] = field(default_factory=list)


@dataclass(eq=False)
class IntegrationsDoc:
    root: YMap | None = None
    mcp_servers: dict[str, YScalar] = field(default_factory=dict)
    model_groups: dict[str, YScalar] = field(default_factory=dict)
    # the model-group ids references are checked against; None when `model_groups` is
    # not a list or one of its entries is invalid (the engine then checks no reference)
    declared_model_groups: set[str] | None = field(default_factory=set)
    # `knowledge_stores[i].embeddings` of the valid stores: (index, value)
    store_embeddings: list[tuple[int, YScalar]] = field(default_factory=list)
    issues: list[SyntaxIssue] = field(default_factory=list)


def parse_agent_yml(text: str) -> AgentDoc:
    """Parse normalized ``agent.yml`` text. Never raises."""
    doc = AgentDoc()
    _parse_agent(doc, text)
    if doc.root is not None:
        _check_agent_sections(doc, doc.root)
    doc.issues = anchor_empty_ranges(doc.issues, doc.root)
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
    for k, v in root.pairs():
        _check_top_level_key(doc.issues, k, v)
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
    if pre is not None and not isinstance(pre, YMap):
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
                    C_AGENT_SPEC,
                    f"precondition `{name}` must be a mapping with `satisfied_when` and "
                    f"`resolve_with` (found {_found(pv)})",
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
            if _filled_str(sw):
                assert isinstance(sw, YScalar)
                p.satisfied_when = sw
                doc.conditions.append(site_from_scalar("satisfied_when", text, sw, name))
            else:
                _err(
                    doc.issues,
                    C_AGENT_SPEC,
                    f"precondition `{name}` needs `satisfied_when: <condition>`"
                    + _blank_or_found(sw),
                    (sw or pk).range,
                )
            rw = pv.get("resolve_with")
            if _filled_str(rw):
                assert isinstance(rw, YScalar)
                p.resolve_with = rw
            else:
                _err(
                    doc.issues,
                    C_AGENT_SPEC,
                    f"precondition `{name}` needs `resolve_with: <skill_id>`" + _blank_or_found(rw),
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


def _check_top_level_key(issues: list[SyntaxIssue], k: YScalar, v: YNode) -> None:
    """The engine reads only the keys of AGENT_KEYS (and type-checks `name` and
    `description`); any other top-level key is silently ignored."""
    key = k.value
    if key in AGENT_KEYS:
        return
    if key in UNUSED_AGENT_KEYS:
        if _str(v) is not None:
            _err(issues, C_AGENT_SPEC, f"`{key}` must be a string (found {_found(v)})", v.range)
            return
        _err(
            issues,
            C_IGNORED,
            f"the engine reads the top-level `{key}` but never uses it: describe the "
            "assistant in `agent.persona`",
            k.range,
            "warning",
        )
        return
    allowed = list(AGENT_KEYS)
    _err(
        issues,
        C_IGNORED,
        f"the engine ignores the top-level key `{k.raw}` (it reads: {', '.join(allowed)})"
        f"{_suggest(str(k.raw), allowed)}",
        k.range,
        "warning",
        data=_meant(str(k.raw), allowed),
    )


def _filled_str(node: YNode | None) -> bool:
    return isinstance(node, YScalar) and isinstance(node.value, str) and bool(node.value.strip())


def _blank_or_found(node: YNode | None) -> str:
    if node is None:
        return ""
    if isinstance(node, YScalar) and isinstance(node.value, str):
        return " (it is blank)"
    return f" (found {_found(node)})"


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
    _check_integrations(doc, root)
    doc.issues = anchor_empty_ranges(doc.issues, root)
    return doc


# =============================================================================================
# Typed values. The engine reads these files with lax type coercion: a quoted number is a
# number, `1` is a boolean, but nothing becomes a string that was not written as one.


def _check_fields(
    issues: list[SyntaxIssue],
    code: str,
    node: YMap,
    path: str,
    fields: dict[str, Check | None],
    *,
    closed: bool = True,
    extra: Literal["forbid", "ignore", "allow"] | None = None,
) -> bool:
    """Check each key of ``node`` against ``fields`` (``None``: checked by the caller).

    ``extra`` says what the engine does with other keys: ``forbid`` (an error), ``ignore``
    (a warning: the setting has no effect) or ``allow`` (passed on to the component as
    is: not reported). ``closed`` is the short form for forbid/ignore. Returns whether
    nothing was reported."""
    mode = extra or ("forbid" if closed else "ignore")
    before = len(issues)
    allowed = list(fields)
    for k, v in node.pairs():
        key = k.value
        if not isinstance(key, str) or key not in fields:
            if mode == "forbid":
                _err(
                    issues,
                    code,
                    f"`{k.raw}` is not a `{path}` setting (allowed: {', '.join(allowed)})"
                    f"{_suggest(str(k.raw), allowed)}",
                    k.range,
                    data=_meant(str(k.raw), allowed),
                )
            elif mode == "ignore":
                _err(
                    issues,
                    C_IGNORED,
                    f"the engine ignores `{path}.{k.raw}` (it reads: {', '.join(allowed)})"
                    f"{_suggest(str(k.raw), allowed)}",
                    k.range,
                    "warning",
                    data=_meant(str(k.raw), allowed),
                )
            continue
        check = fields[key]
        problem = check(v) if check is not None else None
        if problem is not None:
            _err(issues, code, f"`{path}.{key}` must be {problem} (found {_found(v)})", v.range)
    return len(issues) == before


def _mapping(
    issues: list[SyntaxIssue], code: str, node: YNode | None, path: str, *, nullable: bool
) -> YMap | None:
    """``node`` when it is a mapping; else report it (unless it is absent, or an allowed
    null) and return None."""
    if node is None or isinstance(node, YMap):
        return node
    if not (nullable and _is_null(node)):
        _err(issues, code, f"`{path}` must be a mapping (found {describe(node)})", node.range)
    return None


def _string_items(issues: list[SyntaxIssue], code: str, node: YNode, path: str) -> None:
    if not isinstance(node, YSeq):
        _err(issues, code, f"`{path}` must be a list of strings (found {_found(node)})", node.range)
        return
    for i, item in enumerate(node.items):
        if _str(item) is not None:
            hint = ""
            if isinstance(item, YMap):
                hint = " (an unquoted `: ` inside an item makes it a mapping: quote the item)"
            _err(
                issues,
                code,
                f"`{path}[{i}]` must be a string (found {_found(item)}){hint}",
                item.range,
            )


# =============================================================================================
# agent.yml sections (docs/language/config.md#agentyml)


def _check_agent_sections(doc: AgentDoc, root: YMap) -> None:
    issues = doc.issues
    agent = root.get("agent")
    if isinstance(agent, YMap):
        _check_agent_block(issues, agent)
    orch = root.get("orchestrator")
    if isinstance(orch, YMap):
        _check_orchestrator(issues, orch)
    rules = root.get("rules")
    if rules is not None:
        _string_items(issues, C_AGENT_SPEC, rules, "rules")
    fillers = _mapping(issues, C_AGENT_SPEC, root.get("fillers"), "fillers", nullable=False)
    if fillers is not None:
        _check_fillers(issues, fillers)
    prompts = _mapping(issues, C_AGENT_SPEC, root.get("prompts"), "prompts", nullable=False)
    if prompts is not None:
        _check_prompts(issues, prompts)
    ka = _mapping(
        issues,
        C_AGENT_SPEC,
        root.get("knowledge_answering"),
        "knowledge_answering",
        nullable=False,
    )
    if ka is not None:
        _check_knowledge_answering(doc, ka)
    sr = _mapping(
        issues, C_AGENT_SPEC, root.get("skill_retrieval"), "skill_retrieval", nullable=False
    )
    if sr is not None:
        _check_fields(
            issues,
            C_AGENT_SPEC,
            sr,
            "skill_retrieval",
            SKILL_RETRIEVAL_FIELDS,
        )
        _embedding_ref(doc, sr, "skill_retrieval.embeddings")
    conv = root.get("conversation")
    if isinstance(conv, YMap):
        before_end = conv.get("before_end")
        if before_end is not None and not _is_null(before_end):
            _string_items(issues, C_AGENT_SPEC, before_end, "conversation.before_end")
    tt = root.get("tool_timeout")
    if tt is not None and (problem := _positive(nullable=True)(tt)) is not None:
        _err(
            issues,
            C_AGENT_SPEC,
            f"`tool_timeout` must be {problem}: seconds a tool call may take (found {_found(tt)})",
            tt.range,
        )
    voice = _mapping(issues, C_AGENT_SPEC, root.get("voice"), "voice", nullable=False)
    if voice is not None:
        _check_fields(issues, C_AGENT_SPEC, voice, "voice", VOICE_FIELDS)
    session = _mapping(
        issues, C_SESSION, root.get("session_config"), "session_config", nullable=True
    )
    if session is not None:
        _check_session(issues, session)
    privacy = _mapping(issues, C_PRIVACY, root.get("privacy"), "privacy", nullable=True)
    if privacy is not None:
        _check_privacy(issues, privacy)


def _check_agent_block(issues: list[SyntaxIssue], agent: YMap) -> None:
    """`agent:` keeps `id`, `language`, `persona` and `voice`; it ignores other keys (a
    non-string `id` or `language` is replaced by a default, not rejected)."""
    _check_fields(
        issues,
        C_AGENT_SPEC,
        agent,
        "agent",
        AGENT_FIELDS,
        closed=False,
    )
    voice = agent.get("voice")
    if voice is None or _is_null(voice):
        return
    vm = _mapping(issues, C_AGENT_SPEC, voice, "agent.voice", nullable=True)
    if vm is not None:
        _check_fields(
            issues,
            C_AGENT_SPEC,
            vm,
            "agent.voice",
            AGENT_VOICE_FIELDS,
            closed=False,
        )


def _check_orchestrator(issues: list[SyntaxIssue], orch: YMap) -> None:
    _check_fields(
        issues,
        C_AGENT_SPEC,
        orch,
        "orchestrator",
        ORCHESTRATOR_FIELDS,
    )
    pre = orch.get("preconditions")
    if isinstance(pre, YMap):
        for _, pv in pre.pairs():
            if isinstance(pv, YMap):
                un = pv.get("unmet_utterance")
                if un is not None and (problem := _bool(un)) is not None:
                    _err(
                        issues,
                        C_AGENT_SPEC,
                        f"`unmet_utterance` must be {problem} (found {_found(un)})",
                        un.range,
                    )
    tc = orch.get("tool_constraints")
    if tc is None:
        return
    tcm = _mapping(issues, C_AGENT_SPEC, tc, "orchestrator.tool_constraints", nullable=False)
    if tcm is None:
        return
    tools = list(BUILTIN_TOOLS)
    for k, v in tcm.pairs():
        name = k.value
        if not isinstance(name, str) or name not in BUILTIN_TOOLS:
            _err(
                issues,
                C_AGENT_SPEC,
                f"`{k.raw}` is not a built-in tool that `tool_constraints` can configure "
                f"(allowed: {', '.join(tools)}){_suggest(str(k.raw), tools)}",
                k.range,
                data=_meant(str(k.raw), tools),
            )
            continue
        path = f"orchestrator.tool_constraints.{name}"
        entry = _mapping(issues, C_AGENT_SPEC, v, path, nullable=False)
        if entry is None:
            continue
        _check_fields(
            issues,
            C_AGENT_SPEC,
            entry,
            path,
            TOOL_CONSTRAINT_FIELDS,
        )
        enabled = entry.get("enabled")
        if (
            enabled is not None
            and _bool(enabled) is None
            and isinstance(enabled, YScalar)
            and str(enabled.value).strip().lower() in ("false", "0", "off", "f", "n", "no")
            and name not in DISABLEABLE_TOOLS
        ):
            _err(
                issues,
                C_AGENT_SPEC,
                f"the built-in tool `{name}` cannot be turned off (only "
                f"{', '.join(DISABLEABLE_TOOLS)} can)",
                enabled.range,
            )
        iw = entry.get("invoke_when")
        if isinstance(iw, YScalar) and isinstance(iw.value, str) and not iw.value.strip():
            _err(
                issues,
                C_AGENT_SPEC,
                f"`{path}.invoke_when` is blank: write when the model should call `{name}`, "
                "or remove the key to keep the default wording",
                iw.range,
            )
        rck = entry.key_node("requires_confirmation")
        rc = entry.get("requires_confirmation")
        if rck is None or rc is None:
            continue
        if name not in CONFIRMABLE_TOOLS:
            _err(
                issues,
                C_AGENT_SPEC,
                f"`requires_confirmation` is allowed on `cancel` only, not on `{name}`",
                rck.range,
            )
            continue
        rcm = _mapping(issues, C_AGENT_SPEC, rc, f"{path}.requires_confirmation", nullable=False)
        if rcm is not None:
            _check_fields(
                issues,
                C_AGENT_SPEC,
                rcm,
                f"{path}.requires_confirmation",
                CONFIRMATION_FIELDS,
            )


def _check_fillers(issues: list[SyntaxIssue], fillers: YMap) -> None:
    _check_fields(
        issues,
        C_AGENT_SPEC,
        fillers,
        "fillers",
        FILLERS_FIELDS,
    )
    examples = fillers.get("examples")
    if examples is None:
        return
    if not isinstance(examples, YSeq):
        _err(
            issues,
            C_AGENT_SPEC,
            "`fillers.examples` must be a list of `{user: …, ack: …}` mappings "
            f"(found {_found(examples)})",
            examples.range,
        )
        return
    for i, ex in enumerate(examples.items):
        path = f"fillers.examples[{i}]"
        exm = _mapping(issues, C_AGENT_SPEC, ex, path, nullable=False)
        if exm is not None:
            _check_fields(issues, C_AGENT_SPEC, exm, path, FILLER_EXAMPLE_FIELDS, closed=False)


def _check_prompts(issues: list[SyntaxIssue], prompts: YMap) -> None:
    for k, _ in prompts.pairs():
        if isinstance(k.value, str) and k.value in LEGACY_PROMPT_KEYS:
            _err(
                issues,
                C_LEGACY,
                f"`prompts.{k.value}` is a 3.20 setting that 3.21 ignores; use "
                f"`{LEGACY_PROMPT_KEYS[k.value]}`",
                k.range,
                "warning",
            )
    rest = YMap(
        prompts.range,
        prompts.tag,
        [
            (k, v)
            for k, v in prompts.items
            if not (isinstance(k, YScalar) and k.value in LEGACY_PROMPT_KEYS)
        ],
    )
    _check_fields(issues, C_AGENT_SPEC, rest, "prompts", PROMPTS_FIELDS, closed=False)


def _check_knowledge_answering(doc: AgentDoc, ka: YMap) -> None:
    issues = doc.issues
    _check_fields(
        issues,
        C_AGENT_SPEC,
        ka,
        "knowledge_answering",
        KNOWLEDGE_ANSWERING_FIELDS,
    )
    _embedding_ref(doc, ka, "knowledge_answering.embeddings")
    chunking = _mapping(
        issues, C_AGENT_SPEC, ka.get("chunking"), "knowledge_answering.chunking", nullable=False
    )
    if chunking is None:
        return
    _check_fields(
        issues,
        C_AGENT_SPEC,
        chunking,
        "knowledge_answering.chunking",
        CHUNKING_FIELDS,
    )
    size_node, overlap_node = chunking.get("chunk_size"), chunking.get("chunk_overlap")
    size = DEFAULT_CHUNK_SIZE if size_node is None else _whole(size_node)
    overlap = DEFAULT_CHUNK_OVERLAP if overlap_node is None else _whole(overlap_node)
    if size is None or overlap is None or size <= 0 or overlap < 0 or overlap < size:
        return
    anchor = overlap_node or size_node
    assert anchor is not None
    _err(
        issues,
        C_AGENT_SPEC,
        f"`chunk_overlap` ({overlap}) must be smaller than `chunk_size` ({size})",
        anchor.range,
    )


def _embedding_ref(doc: AgentDoc, section: YMap, setting: str) -> None:
    n = section.get("embeddings")
    if isinstance(n, YScalar) and isinstance(n.value, str) and n.value.strip():
        doc.embeddings.append((setting, n))


def _check_session(issues: list[SyntaxIssue], session: YMap) -> None:
    _check_fields(
        issues,
        C_SESSION,
        session,
        "session_config",
        SESSION_FIELDS,
        closed=False,
    )
    exp = session.get("session_expiration_time")
    if exp is None:
        return
    n = _number(exp)
    if n is None or math.isnan(n):
        _err(
            issues,
            C_SESSION,
            "`session_config.session_expiration_time` must be a number of minutes "
            f"(found {_found(exp)})",
            exp.range,
        )
    elif n < 0:
        _err(
            issues,
            C_SESSION_EXPIRY,
            "`session_config.session_expiration_time` must be 0 or more minutes (0 turns "
            "session expiry off); the agent fails to load",
            exp.range,
        )


def _check_privacy(issues: list[SyntaxIssue], privacy: YMap) -> None:
    for k, _ in privacy.pairs():
        if k.value == "tracker_store_settings":
            continue
        if k.value == "rules":
            msg = (
                "`privacy.rules` is not accepted in Mantle: set `anonymization` on memory "
                "fields with `pii: true` instead"
            )
        else:
            msg = f"`privacy` accepts only `tracker_store_settings`, not `{k.raw}`"
        _err(issues, C_PRIVACY, msg, k.range)
    tss = privacy.get("tracker_store_settings")
    if tss is None or (isinstance(tss, YScalar) and not tss.value):
        return  # an empty value means no settings
    if not isinstance(tss, YMap):
        _err(
            issues,
            C_PRIVACY,
            f"`privacy.tracker_store_settings` must be a mapping (found {_found(tss)})",
            tss.range,
        )
        return
    for k, _ in tss.pairs():
        if k.value not in ("deletion", "anonymization"):
            _err(
                issues,
                C_PRIVACY,
                "`privacy.tracker_store_settings` accepts only `deletion` and `anonymization`, "
                f"not `{k.raw}`",
                k.range,
            )


# =============================================================================================
# integrations.yml sections (docs/language/config.md#integrationsyml)


def _check_integrations(doc: IntegrationsDoc, root: YMap) -> None:
    _check_model_groups(doc, root.get("model_groups"))
    _check_mcp_servers(doc.issues, root.get("mcp_servers"))
    _check_knowledge_stores(doc, root.get("knowledge_stores"))
    for section, code in SHAPE_CODES.items():
        node = root.get(section)
        key = root.key_node(section)
        if node is None or key is None or _is_null(node):
            continue
        if isinstance(node, YMap) or (section == "tracing" and isinstance(node, YSeq)):
            if isinstance(node, YMap) and _type_is_placeholder(doc.issues, section, node):
                continue  # the engine skips the rest of the section
            valid = _SECTION_CHECKS[section](doc.issues, _Section(section, code, key, node))
            if valid and section in SECRET_SECTIONS and isinstance(node, YMap):
                _literal_secrets(doc.issues, section, node)
            continue
        shape = "a mapping or a list" if section == "tracing" else "a mapping"
        _err(doc.issues, code, f"`{section}` must be {shape} (found {_found(node)})", node.range)


def _type_is_placeholder(issues: list[SyntaxIssue], section: str, node: YMap) -> bool:
    if section not in TYPED_SECTIONS:
        return False
    t = node.get("type")
    if isinstance(t, YScalar) and isinstance(t.value, str) and _ENV_RE.search(t.value):
        _err(
            issues,
            C_TYPE_ENV,
            f"`{section}.type` is never expanded from the environment: write the store "
            "type itself (the engine skips the other checks of this section)",
            t.range,
            "warning",
        )
        return True
    return False


def _literal_secrets(issues: list[SyntaxIssue], section: str, node: YMap) -> None:
    for k, v in node.pairs():
        text = _str_value(v)
        if text is None:
            continue
        assert isinstance(v, YScalar)
        if k.value in SECRET_KEYS:
            if not _ENV_RE.search(text):
                _err(
                    issues,
                    C_LITERAL_SECRET,
                    f"`{section}.{k.value}` is written literally: use a `${{VAR}}` "
                    "placeholder or a secrets-manager mapping",
                    v.range,
                    "warning",
                )
            continue
        m = URL_PASSWORD.search(text)
        if m is not None and not _ENV_RE.search(m.group(1)):
            _err(
                issues,
                C_LITERAL_SECRET,
                f"`{section}.{k.raw}` is a URL with a literal password: use a `${{VAR}}` "
                "placeholder for it",
                _value_slice(v, m.start(1), m.end(1)),
                "warning",
            )


def _value_slice(node: YScalar, start: int, end: int) -> TextRange:
    """The source range of ``node.value[start:end]`` when the scalar is written verbatim
    (plain or single-line quoted without escapes), else the whole scalar."""
    if node.style in (None, "'", '"') and node.range.length >= len(node.raw):
        offset = 1 if node.style in ("'", '"') else 0
        s = node.range.start + offset
        if node.range.length == len(node.raw) + 2 * offset:
            return TextRange(s + start, s + end)
    return node.range


def _check_model_groups(doc: IntegrationsDoc, node: YNode | None) -> None:
    issues = doc.issues
    if node is None or _is_null(node):
        return
    if not isinstance(node, YSeq):
        doc.declared_model_groups = None
        _err(
            issues,
            C_GROUP,
            f"`model_groups` must be a list of `- id: …` model groups (found {_found(node)})",
            node.range,
        )
        return
    declared: set[str] = set()
    seen: set[str] = set()
    all_valid = True
    for i, item in enumerate(node.items):
        if not isinstance(item, YMap):
            all_valid = False
            _err(
                issues,
                C_GROUP,
                f"model group #{i + 1} must be a mapping with `id` and "
                f"`models` (found {_found(item)})",
                item.range,
            )
            continue
        gid = item.get("id")
        if not (isinstance(gid, YScalar) and isinstance(gid.value, str) and gid.value.strip()):
            all_valid = False
            anchor = gid.range if gid is not None else _first_key_range(item)
            _err(issues, C_GROUP, f"model group #{i + 1} needs a non-empty `id`", anchor)
            continue
        models = item.get("models")
        mkey = item.key_node("models")
        if models is None or mkey is None:
            all_valid = False
            _err(
                issues,
                C_GROUP,
                f"model group `{gid.value}` needs `models:`, a list of model settings",
                gid.range,
            )
            continue
        if not isinstance(models, YSeq) or not models.items:
            all_valid = False
            _err(
                issues,
                C_GROUP,
                f"`models` of model group `{gid.value}` must be a non-empty list of model "
                f"settings (found {_found(models)})",
                models.range,
            )
            continue
        bad = [m for m in models.items if not isinstance(m, YMap)]
        for m in bad:
            _err(
                issues,
                C_GROUP,
                f"each model of group `{gid.value}` must be a mapping of provider settings "
                f"(found {_found(m)})",
                m.range,
            )
        if bad:
            all_valid = False
            continue
        name = gid.value
        for m in models.items:
            assert isinstance(m, YMap)
            _check_model_credentials(issues, name, m)
        if name in seen:
            _err(issues, C_GROUP_DUP, f"model group id `{name}` is declared twice", gid.range)
        seen.add(name)
        declared.add(name)
        if len(models.items) > 1 and not item.has("router"):
            _err(
                issues,
                C_GROUP_UNUSED,
                f"model group `{name}` lists {len(models.items)} models but has no `router`: "
                "only the first model is used",
                mkey.range,
                "warning",
            )
    doc.declared_model_groups = declared if all_valid else None


def _check_model_credentials(issues: list[SyntaxIssue], group: str, model: YMap) -> None:
    """Credentials of one model entry: no `api_key_env`, and every secret-like key (at any
    depth of nested mappings) holds exactly one `${VAR}` placeholder."""
    legacy = model.key_node("api_key_env")
    if legacy is not None:
        _err(
            issues,
            C_GROUP_CREDENTIALS,
            f"model group `{group}`: `api_key_env` is no longer supported; write "
            "`api_key: ${ENV_VAR_NAME}` instead",
            legacy.range,
        )
    todo: list[YMap] = [model]
    while todo:
        node = todo.pop()
        for k, v in node.pairs():
            if isinstance(v, YMap):
                todo.append(v)
                continue
            if k.value not in MODEL_SECRET_KEYS:
                continue
            if isinstance(v, YScalar) and isinstance(v.value, str):
                if ENV_SECRET.fullmatch(v.value):
                    continue
                what = "is written as text"
            else:
                what = f"is {describe(v)}"
            _err(
                issues,
                C_GROUP_CREDENTIALS,
                f"model group `{group}`: `{k.value}` {what}; it must be exactly one "
                "environment variable placeholder such as `${OPENAI_API_KEY}`",
                v.range,
            )


def _check_mcp_servers(issues: list[SyntaxIssue], node: YNode | None) -> None:
    if node is None or _is_null(node):
        return
    if not isinstance(node, YSeq):
        _err(
            issues,
            C_MCP,
            f"`mcp_servers` must be a list of `- name: … url: …` servers (found {_found(node)})",
            node.range,
        )
        return
    seen: set[str] = set()
    for i, item in enumerate(node.items):
        if not isinstance(item, YMap):
            _err(
                issues,
                C_MCP,
                f"MCP server #{i + 1} must be a mapping with `name` and `url` "
                f"(found {_found(item)})",
                item.range,
            )
            continue
        before = len(issues)
        name = _check_mcp_server(issues, i, item)
        if name is None or len(issues) > before:
            continue
        if name.value in seen:
            _err(issues, C_MCP_DUP, f"MCP server name `{name.value}` is used twice", name.range)
        seen.add(name.value)


def _check_mcp_server(issues: list[SyntaxIssue], i: int, item: YMap) -> YScalar | None:
    """Report the problems of one server entry; return its name node when it has one."""
    label = f"MCP server #{i + 1}"
    name = item.get("name")
    name_node: YScalar | None = None
    if name is None:
        _err(issues, C_MCP, f"{label} needs a `name`", _first_key_range(item))
    elif not (isinstance(name, YScalar) and isinstance(name.value, str) and name.value.strip()):
        _err(issues, C_MCP, f"{label}: `name` must be a non-empty string", name.range)
    elif not MCP_NAME.match(name.value):
        _err(
            issues,
            C_MCP,
            f"MCP server name `{name.value}` must start with a letter or digit and use only "
            "letters, digits, `_`, `.` and `-` (it is written in `mcp/<server>:<tool>` imports)",
            name.range,
        )
    else:
        name_node = name
        label = f"MCP server `{name.value}`"
    url = item.get("url")
    scheme = None
    if url is None:
        _err(issues, C_MCP, f"{label} needs a `url`", (item.key_node("name") or item).range)
    elif not (isinstance(url, YScalar) and isinstance(url.value, str) and url.value.strip()):
        _err(issues, C_MCP, f"{label}: `url` must be a non-empty string", url.range)
    else:
        m = re.match(r"\s*([A-Za-z][A-Za-z0-9+.-]*):", url.value)
        scheme = m.group(1).lower() if m else ""
        if scheme not in MCP_TYPES:
            shown = f"`{scheme}`" if scheme else "no scheme"
            _err(issues, C_MCP, f"{label}: `url` must use http or https (found {shown})", url.range)
    t = item.get("type")
    given = t is not None and not (isinstance(t, YScalar) and not t.value)
    if t is not None and given and not (isinstance(t, YScalar) and t.value in MCP_TYPES):
        _err(
            issues, C_MCP, f"{label}: `type` must be `http` or `https` (found {_found(t)})", t.range
        )
    tt = item.get("tool_timeout")
    if tt is not None and (problem := _positive(nullable=True)(tt)) is not None:
        _err(
            issues,
            C_MCP,
            f"{label}: `tool_timeout` must be {problem} (found {_found(tt)})",
            tt.range,
        )
    _check_mcp_meta_map(issues, label, item.get("meta_map"))
    _check_mcp_params(issues, label, item)
    return name_node


def _check_mcp_meta_map(issues: list[SyntaxIssue], label: str, mm: YNode | None) -> None:
    if mm is None or _is_null(mm):
        return
    if not isinstance(mm, YMap):
        _err(issues, C_MCP, f"{label}: `meta_map` must be a mapping (found {_found(mm)})", mm.range)
        return
    fs_key = mm.key_node("from_slots")
    if fs_key is not None and not _is_null(mm.get("from_slots")):
        _err(
            issues,
            C_MCP,
            f"{label}: `meta_map.from_slots` is not supported in Mantle; use `meta_map.static`",
            fs_key.range,
        )
    static = mm.get("static")
    if static is None or _is_null(static):
        return
    if not isinstance(static, YMap):
        _err(
            issues,
            C_MCP,
            f"{label}: `meta_map.static` must be a mapping of strings (found {_found(static)})",
            static.range,
        )
        return
    for k, v in static.items:
        for part in (k, v):
            ok = isinstance(part, YScalar) and isinstance(part.value, str) and part.value.strip()
            if not ok:
                _err(
                    issues,
                    C_MCP,
                    f"{label}: `meta_map.static` keys and values must be non-empty strings",
                    part.range,
                )


def _check_mcp_params(issues: list[SyntaxIssue], label: str, item: YMap) -> None:
    """Auth and extra parameters: top-level extras count as ``additional_params``."""
    params: list[tuple[YScalar, YNode]] = [
        (k, v) for k, v in item.pairs() if k.value not in MCP_BASE_KEYS
    ]
    extra = item.get("additional_params")
    if isinstance(extra, YMap):
        params.extend(extra.pairs())
    elif extra is not None and not _is_null(extra):
        _err(
            issues,
            C_MCP,
            f"{label}: `additional_params` must be a mapping (found {_found(extra)})",
            extra.range,
        )
    auth: list[YScalar] = []
    for k, v in params:
        key = k.value
        if key in MCP_UNSUPPORTED:
            _err(issues, C_MCP, f"{label}: `{key}` is not supported for MCP servers", k.range)
            continue
        if key in MCP_AUTH_KEYS:
            auth.append(k)
        secret: YNode | None = v if key in MCP_SECRET_KEYS else None
        if key == "oauth" and isinstance(v, YMap):
            secret = v.get("client_secret")
        if secret is None:
            continue
        ok = (
            isinstance(secret, YScalar)
            and isinstance(secret.value, str)
            and ENV_SECRET.match(secret.value) is not None
        )
        if not ok:
            what = "client_secret" if key == "oauth" else str(key)
            _err(
                issues,
                C_MCP,
                f"{label}: `{what}` must be an environment variable "
                "placeholder such as `${MCP_TOKEN}`, never the secret itself",
                secret.range,
            )
    for k in auth[1:]:
        names = ", ".join(f"`{a.value}`" for a in auth)
        _err(issues, C_MCP, f"{label}: configure one auth method, not several ({names})", k.range)


def _check_knowledge_stores(doc: IntegrationsDoc, node: YNode | None) -> None:
    issues = doc.issues
    if node is None or _is_null(node):
        return
    if not isinstance(node, YSeq):
        _err(
            issues,
            C_STORE,
            f"`knowledge_stores` must be a list of `- id: …` stores (found {_found(node)})",
            node.range,
        )
        return
    seen: set[str] = set()
    for i, item in enumerate(node.items):
        if not isinstance(item, YMap):
            _err(
                issues,
                C_STORE,
                f"knowledge store #{i + 1} must be a mapping with `id`, "
                f"`type` and `embeddings` (found {_found(item)})",
                item.range,
            )
            continue
        before = len(issues)
        label = f"knowledge store #{i + 1}"
        _check_fields(
            issues,
            C_STORE,
            item,
            "knowledge_stores[]",
            KNOWLEDGE_STORE_FIELDS,
        )
        sid = item.get("id")
        for key in ("id", "embeddings"):
            v = item.get(key)
            if v is None:
                _err(issues, C_STORE, f"{label} needs `{key}`", _first_key_range(item))
            elif not (isinstance(v, YScalar) and isinstance(v.value, str) and v.value):
                _err(
                    issues,
                    C_STORE,
                    f"{label}: `{key}` must be a non-empty string (found {_found(v)})",
                    v.range,
                )
        t = item.get("type")
        if t is None:
            _err(
                issues,
                C_STORE,
                f"{label} needs `type` ({', '.join(KNOWLEDGE_STORE_TYPES)})",
                _first_key_range(item),
            )
        elif not (isinstance(t, YScalar) and t.value in KNOWLEDGE_STORE_TYPES):
            _err(
                issues,
                C_STORE,
                f"{label}: `type` must be one of "
                f"{', '.join(KNOWLEDGE_STORE_TYPES)} (found {_found(t)})",
                t.range,
            )
        if len(issues) > before or not isinstance(sid, YScalar):
            continue
        if sid.value in seen:
            _err(issues, C_STORE_DUP, f"knowledge store id `{sid.value}` is used twice", sid.range)
        seen.add(str(sid.value))
        emb = item.get("embeddings")
        if isinstance(emb, YScalar):
            doc.store_embeddings.append((i, emb))
    declared = doc.declared_model_groups
    if declared is None:
        return
    for i, emb in doc.store_embeddings:
        gid = str(emb.value).strip()
        where = f"`knowledge_stores[{i}].embeddings`"
        if not gid:
            _err(issues, C_UNKNOWN_GROUP, f"{where} names no model group (it is blank)", emb.range)
        elif gid not in declared:
            _err(
                issues,
                C_UNKNOWN_GROUP,
                f"{where}: model group `{gid}` is not declared under `model_groups`"
                f"{_suggest(gid, sorted(declared))}",
                emb.range,
                data=_meant(gid, sorted(declared)),
            )


# =============================================================================================
# integrations.yml runtime sections: the settings each component accepts
# (docs/language/config.md#integrationsyml)
#
# The engine validates each section in two steps: the value of every known key (a section
# whose keys all fit is then checked as a whole: required keys, the `type`, combinations).
# A section reports the second step only when the first one passed, like the engine.


@dataclass(frozen=True)
class _Section:
    name: str  # e.g. "event_broker"
    code: str
    key: YScalar  # the section's key in integrations.yml
    node: YNode  # its value: a mapping (a list too for `tracing`)

    @property
    def map(self) -> YMap:
        assert isinstance(self.node, YMap)
        return self.node

    def err(
        self,
        issues: list[SyntaxIssue],
        msg: str,
        rng: TextRange,
        data: dict[str, Any] | None = None,
    ) -> None:
        _err(issues, self.code, msg, rng, data=data)

    def anchor(self, key: str) -> TextRange:
        """The value of ``key`` when the section has it, else the section's key."""
        v = self.map.get(key)
        return v.range if v is not None else self.key.range


def _fields(
    issues: list[SyntaxIssue],
    sec: _Section,
    node: YMap,
    path: str,
    fields: dict[str, Check | None],
    extra: Literal["forbid", "ignore", "allow"],
    *,
    nullable: bool = True,
    env: bool = False,
) -> bool:
    """Value checks of a section (or sub-mapping): each optional and nullable unless
    ``nullable`` is False; ``env``: a `${VAR}` string passes any check."""
    wrapped: dict[str, Check | None] = {}
    for k, c in fields.items():
        if c is not None and nullable:
            c = _opt(c)
        if c is not None and env:
            c = _env_ok(c)
        wrapped[k] = c
    return _check_fields(issues, sec.code, node, path, wrapped, extra=extra)


def _require(
    issues: list[SyntaxIssue], sec: _Section, node: YMap, path: str, keys: tuple[str, ...]
) -> bool:
    ok = True
    for key in keys:
        if node.get(key) is None:
            ok = False
            anchor = sec.key.range if node is sec.node else _first_key_range(node)
            sec.err(issues, f"`{path}` needs `{key}`", anchor)
    return ok


def _bad_type(
    issues: list[SyntaxIssue], sec: _Section, allowed: tuple[str, ...], custom: str
) -> None:
    t = sec.map.get("type")
    shown = ", ".join(f"`{a}`" for a in allowed)
    tail = f", or the import path of a custom {custom} class" if custom else ""
    sec.err(
        issues,
        f"`{sec.name}.type` must be {shown}{tail} (found {_found(t) if t else 'nothing'})"
        f"{_suggest(_str_value(t) or '', list(allowed))}",
        sec.anchor("type"),
        data=_meant(_str_value(t) or "", list(allowed)),
    )


# -- event_broker -----------------------------------------------------------------------------


def _check_event_broker(issues: list[SyntaxIssue], sec: _Section) -> bool:
    node = sec.map
    ok = _fields(
        issues,
        sec,
        node,
        sec.name,
        EVENT_BROKER_FIELDS,
        "allow",
    )
    if not ok:
        return False
    before = len(issues)
    raw = _str_value(node.get("type"))
    kind = "pika" if raw is None else raw.lower() if raw.lower() in EVENT_BROKER_TYPES else raw
    if kind not in EVENT_BROKER_TYPES:
        if not _custom_path(kind):
            _bad_type(issues, sec, EVENT_BROKER_TYPES, "EventBroker")
        return len(issues) == before
    url = node.get("url")
    where = f"an event broker of type `{kind}`" + (" (the default)" if raw is None else "")
    required = ("url", "username", "password") if kind == "pika" else ("url",)
    if kind in ("pika", *KAFKA_TYPES):
        absent = [k for k in required if node.get(k) is None]
        if absent:
            names = " and ".join(f"`{k}`" for k in absent)
            sec.err(issues, f"{where} needs {names}", sec.anchor("type"))
        for k in required:
            v = node.get(k)
            a_list = isinstance(v, YSeq) and kind not in KAFKA_TYPES  # reported below
            if v is not None and not _truthy(v) and not a_list:
                sec.err(issues, f"{where} needs a non-empty `{k}`", v.range)
    if isinstance(url, YSeq):
        if kind in KAFKA_TYPES:
            for item in url.items:
                if not _truthy(item):
                    sec.err(issues, "each `url` of a Kafka broker must be non-empty", item.range)
        else:
            sec.err(issues, f"`url` of {where} must be one string, not a list", url.range)
    if kind in ("pika", "sql"):
        host = node.key_node("host")
        if host is not None:
            sec.err(
                issues,
                f"{where} takes its host from `url`: remove `host`"
                + (" (put the address in `url`)" if url is None else ""),
                host.range,
            )
    return len(issues) == before


# -- timer_store / lock_store (Redis) ---------------------------------------------------------


def _redis_host_and_url(issues: list[SyntaxIssue], sec: _Section) -> None:
    node = sec.map
    if _truthy(node.get("url")) and _truthy(node.get("host")):
        k = node.key_node("url")
        assert k is not None
        sec.err(issues, "set either `host` or `url` (its old name), not both", k.range)


def _redis_value(issues: list[SyntaxIssue], sec: _Section, key: str, check: Check) -> None:
    """A Redis setting the store itself types more strictly (placeholders pass)."""
    v = sec.map.get(key)
    if v is None or _is_null(v) or _is_placeholder(v):
        return
    problem = check(v)
    if problem is not None:
        sec.err(issues, f"`{sec.name}.{key}` must be {problem} (found {_found(v)})", v.range)


def _redis_mode(
    issues: list[SyntaxIssue], sec: _Section, *, sentinel_needs_endpoints: bool
) -> None:
    mode = sec.map.get("deployment_mode")
    value = _str_value(mode)
    if mode is None or value is None or _is_placeholder(mode):
        return
    if value not in REDIS_MODES:
        sec.err(
            issues,
            f"`{sec.name}.deployment_mode` must be one of {', '.join(REDIS_MODES)}"
            f"{_suggest(value, list(REDIS_MODES))}",
            mode.range,
            data=_meant(value, list(REDIS_MODES)),
        )
    elif sentinel_needs_endpoints and value == "sentinel" and not _truthy(sec.map.get("endpoints")):
        sec.err(issues, "sentinel mode needs `endpoints` (`host:port` entries)", mode.range)


def _check_timer_store(issues: list[SyntaxIssue], sec: _Section) -> bool:
    node = sec.map
    fields = dict(REDIS_FIELDS)
    fields.update(
        {
            "poll_interval": _scalar,
            "ssl_certfile": _str,
            "ssl_keyfile": _str,
            "ssl_ca_certs": _str,
        }
    )
    if not _fields(issues, sec, node, sec.name, fields, "allow", env=True):
        return False
    before = len(issues)
    raw = _str_value(node.get("type"))
    kind = "in_memory" if raw is None else raw
    if kind == "in_memory":
        return True
    if kind != "redis":
        if not _custom_path(kind):
            _bad_type(issues, sec, TIMER_STORE_TYPES, "SessionTimerStore")
        return len(issues) == before
    _redis_host_and_url(issues, sec)
    for key, check in (
        ("port", _whole_check),
        ("db", _whole_check),
        ("socket_timeout", _number_check),
        ("poll_interval", _number_check),
    ):
        _redis_value(issues, sec, key, check)
    if len(issues) > before:
        return False
    _redis_mode(issues, sec, sentinel_needs_endpoints=True)
    prefix = node.get("key_prefix")
    pv = _str_value(prefix)
    if prefix is not None and pv is not None and not _is_placeholder(prefix) and not pv.isalnum():
        sec.err(
            issues,
            f"`{sec.name}.key_prefix` must be letters and digits only (found {_found(prefix)})",
            prefix.range,
        )
    return len(issues) == before


def _check_lock_store(issues: list[SyntaxIssue], sec: _Section) -> bool:
    node = sec.map
    fields = dict(REDIS_FIELDS)
    if not _fields(issues, sec, node, sec.name, fields, "allow", env=True):
        return False
    before = len(issues)
    raw = _str_value(node.get("type"))
    kind = "in_memory" if raw is None else raw.lower() if raw.lower() in LOCK_STORE_TYPES else raw
    if kind == "in_memory":
        return True
    if kind not in LOCK_STORE_TYPES:
        if not _custom_path(kind):
            _bad_type(issues, sec, LOCK_STORE_TYPES, "LockStore")
        return len(issues) == before
    _redis_host_and_url(issues, sec)
    _redis_value(issues, sec, "port", _int_min(0, high=65535))
    _redis_value(issues, sec, "db", _int_min(0))
    _redis_value(issues, sec, "socket_timeout", _number_check)
    _redis_mode(issues, sec, sentinel_needs_endpoints=False)
    user, password = node.get("username"), node.get("password")
    if _truthy(user) != _truthy(password):
        given, missing = ("username", "password") if _truthy(user) else ("password", "username")
        k = node.key_node(given)
        assert k is not None
        sec.err(
            issues,
            f"a Redis lock store with `{given}` needs `{missing}` too (set both or neither)",
            k.range,
        )
    return len(issues) == before


# -- tracker_store ----------------------------------------------------------------------------


def _check_tracker_store(issues: list[SyntaxIssue], sec: _Section) -> bool:
    node = sec.map
    ok = _fields(
        issues,
        sec,
        node,
        sec.name,
        TRACKER_STORE_FIELDS,
        "allow",
    )
    if not ok:
        return False
    raw = _str_value(node.get("type"))
    if raw is None or raw.lower() in TRACKER_STORE_TYPES or _custom_path(raw):
        return True
    _bad_type(issues, sec, TRACKER_STORE_TYPES, "TrackerStore")
    return False


# -- secrets_manager --------------------------------------------------------------------------


def _check_secrets_manager(issues: list[SyntaxIssue], sec: _Section) -> bool:
    node = sec.map
    fields: dict[str, Check | None] = dict.fromkeys(SECRETS_MANAGER_KEYS, _str)
    fields["type"] = _str
    ok = _fields(issues, sec, node, sec.name, fields, "forbid")
    t = node.get("type")
    if t is None:
        sec.err(issues, "`secrets_manager` needs `type: vault`", sec.key.range)
        return False
    if _is_null(t):
        sec.err(issues, "`secrets_manager.type` must be `vault`", t.range)
        return False
    if ok and _str_value(t) != "vault":
        sec.err(issues, f"`secrets_manager.type` must be `vault` (found {_found(t)})", t.range)
        return False
    return ok


# -- recordings -------------------------------------------------------------------------------


def _check_recordings(issues: list[SyntaxIssue], sec: _Section) -> bool:
    node = sec.map
    # `enabled` defaults to false but may not be null; the rest is optional
    fields: dict[str, Check | None] = {"enabled": _bool, "provider": _opt_str}
    fields.update(dict.fromkeys(RECORDING_PROVIDERS, _opt(_map_check)))
    ok = _fields(issues, sec, node, sec.name, fields, "forbid", nullable=False, env=True)
    for block_name, (sub_fields, required) in RECORDING_BLOCKS.items():
        block = node.get(block_name)
        if not isinstance(block, YMap):
            continue
        path = f"recordings.{block_name}"
        ok = _check_fields(issues, sec.code, block, path, sub_fields) and ok
        ok = _require(issues, sec, block, path, required) and ok
    if not ok:
        return False
    enabled = node.get("enabled")
    if enabled is None or _is_placeholder(enabled) or not _bool_true(enabled):
        return True
    provider = node.get("provider")
    name = _str_value(provider)
    if provider is None or name is None:
        anchor = provider.range if provider is not None else enabled.range
        sec.err(
            issues,
            f"enabled recordings need `provider` ({', '.join(RECORDING_PROVIDERS)})",
            anchor,
        )
        return False
    if name not in RECORDING_PROVIDERS:
        sec.err(
            issues,
            f"`recordings.provider` must be one of {', '.join(RECORDING_PROVIDERS)} "
            f"(found {_found(provider)}){_suggest(name, list(RECORDING_PROVIDERS))}",
            provider.range,
            data=_meant(name, list(RECORDING_PROVIDERS)),
        )
        return False
    block = node.get(name)
    if block is None or _is_null(block):
        sec.err(
            issues,
            f"provider `{name}` needs its settings under `recordings.{name}`",
            provider.range,
        )
        return False
    return True


# -- rasa_model_server ------------------------------------------------------------------------


def _check_model_server(issues: list[SyntaxIssue], sec: _Section) -> bool:
    node = sec.map
    ok = _fields(
        issues,
        sec,
        node,
        sec.name,
        MODEL_SERVER_FIELDS,
        "forbid",
        env=True,
    )
    url = node.get("url")
    if url is None or _is_null(url):
        anchor = url.range if url is not None else sec.key.range
        sec.err(issues, "`rasa_model_server` needs `url`, the model server's address", anchor)
        ok = False
    elif (v := _str_value(url)) and not _is_placeholder(url) and not _http_url(v):
        sec.err(
            issues,
            f"`rasa_model_server.url` must be an http(s) URL or a `${{VAR}}` placeholder "
            f"(found {_found(url)})",
            url.range,
        )
        ok = False
    auth = node.get("basic_auth")
    if isinstance(auth, YMap):
        path = "rasa_model_server.basic_auth"
        ok = _check_fields(issues, sec.code, auth, path, MODEL_SERVER_AUTH_FIELDS) and ok
        ok = _require(issues, sec, auth, path, ("username", "password")) and ok
    return ok


# -- tracing / metrics ------------------------------------------------------------------------


def _check_tracing(issues: list[SyntaxIssue], sec: _Section) -> bool:
    entries = list(sec.node.items) if isinstance(sec.node, YSeq) else [sec.node]
    before = len(issues)
    seen: dict[str, YNode] = {}
    for i, entry in enumerate(entries):
        label = "tracing" if isinstance(sec.node, YMap) else f"tracing[{i}]"
        if not isinstance(entry, YMap):
            sec.err(issues, f"`{label}` must be a mapping (found {_found(entry)})", entry.range)
            continue
        t = entry.get("type")
        kind = _str_value(t)
        if kind not in TRACING_TYPES:
            shown = _found(t) if t is not None else "nothing"
            sec.err(
                issues,
                f"`{label}.type` must be one of {', '.join(TRACING_TYPES)} (found {shown})"
                f"{_suggest(kind or '', list(TRACING_TYPES))}",
                t.range if t is not None else _first_key_range(entry),
                data=_meant(kind or "", list(TRACING_TYPES)),
            )
            continue
        assert t is not None and kind is not None
        slot = "langfuse" if kind == "langfuse" else "backend"
        if slot in seen:
            what = "Langfuse tracer" if slot == "langfuse" else "backend tracer (otlp or jaeger)"
            sec.err(issues, f"`tracing` may declare only one {what}", t.range)
        seen.setdefault(slot, entry)
        if kind == "langfuse":
            _check_langfuse(issues, sec, entry, label)
        elif kind == "otlp":
            _check_fields(issues, sec.code, entry, label, OTLP_FIELDS)
            _require(issues, sec, entry, label, ("endpoint",))
        else:
            if _check_fields(issues, sec.code, entry, label, JAEGER_FIELDS):
                creds = [
                    entry.key_node(k) for k in ("username", "password") if _truthy(entry.get(k))
                ]
                ins = entry.get("insecure")
                if creds and (ins is None or _is_null(ins)):
                    first = creds[0]
                    assert first is not None
                    sec.err(
                        issues,
                        "Jaeger credentials need an explicit `insecure:` (`false` to send them "
                        "over TLS, `true` to send them unencrypted)",
                        first.range,
                    )
    return len(issues) == before


def _check_langfuse(issues: list[SyntaxIssue], sec: _Section, entry: YMap, label: str) -> None:
    before = len(issues)
    absent = [k for k in LANGFUSE_REQUIRED if entry.get(k) is None]
    if absent:
        anchor = entry.get("type") or entry
        names = " and ".join(f"`{k}`" for k in absent)
        sec.err(issues, f"a Langfuse tracer needs {names}", anchor.range)
    for key in LANGFUSE_REQUIRED:
        v = entry.get(key)
        if v is not None and (problem := _non_empty_str(v)) is not None:
            sec.err(issues, f"`{label}.{key}` must be {problem} (found {_found(v)})", v.range)
    if len(issues) > before:
        return
    for key in ("public_key", "private_key"):
        v = entry.get(key)
        if not LANGFUSE_KEY.match(_str_value(v) or ""):
            assert v is not None
            sec.err(
                issues,
                f"`{label}.{key}` must come from the environment: write `${{LANGFUSE_"
                f"{key.upper()}}}`, never the key itself",
                v.range,
            )
    env = entry.get("environment")
    if _truthy(env):
        assert env is not None
        ev = _str_value(env)
        if ev is None or len(ev) > 40 or not LANGFUSE_ENV.match(ev):
            sec.err(
                issues,
                f"`{label}.environment` must be at most 40 lowercase letters, digits, `-` or "
                "`_`, and must not start with `langfuse`",
                env.range,
            )


def _check_metrics(issues: list[SyntaxIssue], sec: _Section) -> bool:
    node = sec.map
    t = node.get("type")
    if _str_value(t) != "otlp":
        shown = _found(t) if t is not None else "nothing"
        sec.err(issues, f"`metrics.type` must be `otlp` (found {shown})", sec.anchor("type"))
        return False
    before = len(issues)
    _check_fields(issues, sec.code, node, "metrics", OTLP_FIELDS)
    _require(issues, sec, node, "metrics", ("endpoint",))
    return len(issues) == before


_SECTION_CHECKS: dict[str, Callable[[list[SyntaxIssue], _Section], bool]] = {
    "tracing": _check_tracing,
    "metrics": _check_metrics,
    "event_broker": _check_event_broker,
    "timer_store": _check_timer_store,
    "tracker_store": _check_tracker_store,
    "lock_store": _check_lock_store,
    "secrets_manager": _check_secrets_manager,
    "recordings": _check_recordings,
    "rasa_model_server": _check_model_server,
}
