"""agent.yml and integrations.yml across files: model groups agent.yml names exist in
integrations.yml, ``agent.id`` is set, the 3.22 ``agent.language`` tag, and precondition
bindings (a skill's ``precondition`` has a binding, the binding is used and resolves to a
skill, and no chain of resolvers loops). The single-file shape rules are the parser's
(:mod:`mantle_lsp.syntax.config_yml`)."""

from __future__ import annotations

from pathlib import Path

from ...model.layout import FileKind as K
from ...model.project import Skill
from ...syntax.config_yml import AgentDoc
from ...syntax.language_tag import tag_problem
from ...syntax.text import TextRange
from ...syntax.yaml_tree import YMap, YScalar
from .base import Checker, did_you_mean, meant, rule

# model-group references the engine's validator checks; others fail later (when training)
_ENGINE_CHECKED = ("orchestrator.model_group", "knowledge_answering.embeddings")


@rule(
    codes=(
        "mantle.validation.config.unknown_model_group",
        "lsp.config.unknown_model_group",
        "lsp.config.missing_agent_id",
        "mantle.validation.config.invalid_agent_language",
    ),
    scope="project",
    reports_on=(K.AGENT,),
    reads=(K.AGENT, K.INTEGRATIONS),
)
def agent_config(ck: Checker) -> None:
    """Model groups named in agent.yml exist; ``agent.id`` is set; 3.22 language tags."""
    apf, agent = ck.p.file_of_kind(K.AGENT), ck.p.agent
    if apf is not None and agent is not None:
        check_agent_config(ck, apf.path, agent)


def check_agent_config(ck: Checker, path: Path, agent: AgentDoc) -> None:
    _check_agent_id(ck, path, agent)
    _check_agent_language(ck, path, agent)
    integ = ck.p.integrations
    declared = integ.declared_model_groups if integ is not None else None
    if declared is None:
        return  # no integrations.yml, or its model_groups are reported there
    refs = list(agent.embeddings)
    if agent.model_group is not None:
        refs.insert(0, ("orchestrator.model_group", agent.model_group))
    for setting, node in refs:
        gid = str(node.value).strip()
        if gid in declared:
            continue
        engine = setting in _ENGINE_CHECKED
        if setting == "orchestrator.model_group":
            tail = ""
        elif engine:
            tail = " (leave it empty for the built-in embedder)"
        else:
            tail = "; `rasa train` fails when it builds the skill index"
        ck.emit(
            path,
            node.range,
            "mantle.validation.config.unknown_model_group"
            if engine
            else "lsp.config.unknown_model_group",
            f"`{setting}`: model group `{gid}` is not declared under `model_groups` in "
            f"integrations.yml{did_you_mean(gid, sorted(declared))}{tail}",
            data=meant(gid, sorted(declared)),
        )


def _check_agent_id(ck: Checker, path: Path, agent: AgentDoc) -> None:
    root = agent.root
    section = root.get("agent") if root is not None else None
    if root is None or not isinstance(section, YMap):
        return
    ident = section.get("id")
    if isinstance(ident, YScalar) and isinstance(ident.value, str) and ident.value.strip():
        return
    given = ident is not None and not (isinstance(ident, YScalar) and ident.value is None)
    anchor = ident.range if ident is not None and given else None
    if anchor is None:
        key = section.key_node("id") or root.key_node("agent")
        anchor = key.range if key is not None else TextRange(0, 0)
    ck.emit(
        path,
        anchor,
        "lsp.config.missing_agent_id",
        "`agent.id` is not set: `rasa train` and `rasa data validate` generate an id and "
        "write it into this file; give the agent a stable id of your own",
    )


def _check_agent_language(ck: Checker, path: Path, agent: AgentDoc) -> None:
    """rasa-pro 3.22 warns about an `agent.language` that is not an exact BCP 47 tag (3.21
    takes any string). Empty, missing and non-string values fall back to the default."""
    if not ck.sem.profile.checks_agent_language or any(i.severity == "error" for i in agent.issues):
        return
    section = agent.root.get("agent") if agent.root is not None else None
    node = section.get("language") if isinstance(section, YMap) else None
    if not (isinstance(node, YScalar) and isinstance(node.value, str) and node.value):
        return
    why = tag_problem(node.value)
    if why is not None:
        ck.emit(
            path,
            node.range,
            "mantle.validation.config.invalid_agent_language",
            f"`{node.value}` is not a BCP 47 language tag as rasa-pro 3.22 reads it: {why} "
            "(e.g. `en`, `de`, `pt-BR`, or `x-en-pirate` for a custom language)",
        )


@rule(
    codes=(
        "mantle.validation.precondition.missing_binding",
        "mantle.validation.precondition.self_resolve",
        "mantle.validation.precondition.nested_resolver",
        "mantle.validation.precondition.cycle",
    ),
    scope="skill",
    reports_on=(K.SKILL_MD,),
    reads=(K.SKILL_MD, K.AGENT),
)
def skill_precondition(ck: Checker, sid: str, sk: Skill) -> None:
    """A skill's ``precondition`` has a binding in agent.yml that another skill resolves,
    without a cycle of resolvers."""
    doc = sk.doc
    if doc is None or sk.skill_md is None:
        return
    path = sk.skill_md.path
    pre = doc.fm("precondition")
    agent = ck.p.agent
    if isinstance(pre, YScalar) and isinstance(pre.value, str) and pre.value.strip():
        name = pre.value.strip()
        if agent is not None and name not in agent.preconditions:
            ck.emit(
                path,
                pre.range,
                "mantle.validation.precondition.missing_binding",
                f"precondition `{name}` has no binding under "
                "`orchestrator.preconditions` in agent.yml"
                f"{did_you_mean(name, agent.preconditions)}",
                data=meant(name, agent.preconditions),
            )
        elif agent is not None:
            binding = agent.preconditions[name]
            if binding.resolve_with is not None and binding.resolve_with.value == sid:
                ck.emit(
                    path,
                    pre.range,
                    "mantle.validation.precondition.self_resolve",
                    f"precondition `{name}` is resolved by this same skill "
                    f"(`resolve_with: {sid}`), so it can never be met",
                )
            else:
                check_precondition_chain(ck, path, sid, pre, name)


def check_precondition_chain(
    ck: Checker, path: Path, sid: str, pre_node: YScalar, name: str
) -> None:
    agent = ck.p.agent
    if agent is None or name not in agent.preconditions:
        return
    binding = agent.preconditions[name]
    resolver = binding.resolve_with.value if binding.resolve_with is not None else None
    if resolver is None or resolver == sid:
        return
    rsk = ck.p.skill(resolver)
    rdoc = rsk.doc if rsk is not None else None
    rpre = rdoc.fm_str("precondition") if rdoc is not None else None
    if rpre:
        ck.emit(
            path,
            pre_node.range,
            "mantle.validation.precondition.nested_resolver",
            f"precondition `{name}` is resolved by `{resolver}`, which has its own "
            f"precondition `{rpre}`; resolvers cannot be parked themselves",
        )
    # cycle: follow skill → precondition → resolver …
    seen = [sid]
    cur: str | None = resolver
    while cur is not None:
        if cur in seen:
            ck.emit(
                path,
                pre_node.range,
                "mantle.validation.precondition.cycle",
                "the precondition resolvers loop: " + " → ".join([*seen, cur]),
            )
            return
        seen.append(cur)
        csk = ck.p.skill(cur)
        cdoc = csk.doc if csk is not None else None
        cpre = cdoc.fm_str("precondition") if cdoc is not None else None
        b = agent.preconditions.get(cpre.strip()) if cpre else None
        cur = b.resolve_with.value if b is not None and b.resolve_with is not None else None


@rule(
    codes=(
        "lsp.config.unused_precondition",
        "mantle.validation.precondition.unknown_resolver",
    ),
    scope="project",
    reports_on=(K.AGENT,),
    reads=(K.AGENT, K.SKILL_MD),
)
def precondition_bindings(ck: Checker) -> None:
    """A binding in ``orchestrator.preconditions`` is used by some skill (the engine checks
    only those) and its ``resolve_with`` names a skill."""
    apf, agent = ck.p.file_of_kind(K.AGENT), ck.p.agent
    if apf is None or agent is None:
        return
    used = ck.sem.used_preconditions()
    for pre in agent.preconditions.values():
        if pre.name not in used:
            ck.emit(
                apf.path,
                pre.key.range,
                "lsp.config.unused_precondition",
                f"no skill declares `precondition: {pre.name}`, so this binding is never "
                "used (and the engine does not check it)",
            )
            continue
        rw = pre.resolve_with
        if rw is not None and not ck.p.has_skill(rw.value):
            ck.emit(
                apf.path,
                rw.range,
                "mantle.validation.precondition.unknown_resolver",
                f"`resolve_with: {rw.value}` names no skill"
                f"{did_you_mean(rw.value, ck.p.catalog_ids())}",
                data=meant(rw.value, ck.p.catalog_ids()),
            )
