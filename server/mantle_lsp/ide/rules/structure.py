"""Project and skill structure: the files a project needs, a skill's identity (id, name,
description), its entry blocks, and the rules for overriding bundled default skills."""

from __future__ import annotations

import keyword
from collections import deque

from ...model.defaults import DEFAULT_SKILLS, RESERVED_SKILL_IDS
from ...model.layout import FileKind as K
from ...model.project import Skill
from ...model.semantics import Semantics
from ...syntax.text import TextRange
from ...syntax.yaml_tree import YMap, YScalar
from .base import Checker, rule

SKILL_FILES = (K.SKILL_MD, K.SKILL_MEMORY, K.SKILL_RESPONSES, K.SKILL_TOOLS)


@rule(
    codes=(
        "mantle.validation.config.missing_agent_yml",
        "mantle.validation.config.missing_integrations",
        "config.project_structure.missing_skills",
        "config.project_structure.mixed_layout",
        "mantle.validation.skill.failed_to_load",
    ),
    scope="anchor",
    reports_on=tuple(K),
    reads=(K.AGENT, K.INTEGRATIONS, K.SKILL_MD),
)
def project_layout(ck: Checker) -> None:
    """A project has agent.yml, integrations.yml and at least one skill, and no CALM
    domain.yml; a skill folder holds a skill.md: reported on the project's anchor file,
    since no file is at fault (the skill folder has none)."""
    anchor = ck.p.anchor_file()
    if anchor is None:
        return
    for sid, sk in ck.p.skills.items():
        if sk.files():
            continue  # a folder with a Mantle file is reported there (skill_identity)
        failure = ck.sem.load_failure(sid)
        if failure is not None and failure.path is None:
            # what is in it (nothing, notes, __pycache__) is no Mantle file; `check` shows
            # it at the folder itself
            ck.emit(
                anchor.path,
                TextRange(0, 0),
                "mantle.validation.skill.failed_to_load",
                f"skills/{sid}/ holds no skill.md, so rasa-pro fails to load it as a skill "
                "(every folder under skills/ is one, but those starting with `_`): add its "
                "skill.md, or remove the folder or rename it to start with `_`",
                folder=sk.dir,
            )
    if ck.p.file_of_kind(K.AGENT) is None:
        ck.emit(
            anchor.path,
            TextRange(0, 0),
            "mantle.validation.config.missing_agent_yml",
            f"this project ({ck.p.root.name}) has no agent.yml next to integrations.yml",
        )
    if ck.p.file_of_kind(K.INTEGRATIONS) is None:
        ck.emit(
            anchor.path,
            TextRange(0, 0),
            "mantle.validation.config.missing_integrations",
            f"this project ({ck.p.root.name}) has no integrations.yml next to agent.yml",
        )
    if not any(sk.skill_md is not None for sk in ck.p.skills.values()):
        ck.emit(
            anchor.path,
            TextRange(0, 0),
            "config.project_structure.missing_skills",
            "this project has no skill: add skills/<skill_id>/skill.md (folders starting "
            "with `_` are skipped)",
        )
    if ck.p.has_root_file("domain.yml"):
        ck.emit(
            anchor.path,
            TextRange(0, 0),
            "config.project_structure.mixed_layout",
            "a CALM domain.yml next to a Mantle project: the engine refuses mixed layouts; "
            "remove domain.yml (Mantle declares memory in memory.yml)",
        )


@rule(
    codes=(
        "mantle.validation.skill.failed_to_load",
        "mantle.validation.skill.reserved_id",
        "mantle.validation.skill.invalid_id",
        "lsp.skill.id_not_identifier",
        "mantle.validation.skill.missing_description",
        "mantle.validation.skill.is_default_not_allowed",
    ),
    scope="skill",
    reports_on=SKILL_FILES,
    reads=(K.SKILL_MD,),
)
def skill_identity(ck: Checker, sid: str, sk: Skill) -> None:
    """A skill folder has a skill.md; its id can be a namespace; it has a description;
    only overrides of bundled skills may claim to be a default."""
    failure = ck.sem.load_failure(sid)
    if failure is not None and failure.path is None:
        others = sk.files()
        if others:  # else reported on the anchor file (project_layout)
            ck.emit(
                others[0].path,
                TextRange(0, 0),
                "mantle.validation.skill.failed_to_load",
                f"skills/{sid} has no skill.md, so the skill fails to load (the file "
                "name is lower-case `skill.md`)",
            )
        return
    if sk.skill_md is None:
        return
    path = sk.skill_md.path
    doc = sk.doc
    rng = TextRange(0, 0)
    if doc is not None and doc.frontmatter is not None:
        nk = doc.frontmatter.key_node("name") or doc.frontmatter.key_node("description")
        if nk is not None:
            rng = nk.range
    if sid in RESERVED_SKILL_IDS:
        ck.emit(
            path,
            rng,
            "mantle.validation.skill.reserved_id",
            f"`{sid}` is a reserved namespace and cannot be a skill id; rename the folder",
        )
    elif "." in sid:
        ck.emit(
            path,
            rng,
            "mantle.validation.skill.invalid_id",
            f"skill id `{sid}` contains `.`; rename the folder",
        )
    elif not sid.isidentifier() or keyword.iskeyword(sid):
        ck.emit(
            path,
            rng,
            "lsp.skill.id_not_identifier",
            f"skill id `{sid}` is not a Python identifier, so `session.{sid}.…` can "
            "never appear in a condition; use letters, digits and `_`",
        )
    if doc is None or not doc.framed:
        return
    desc = doc.fm("description")
    if not (isinstance(desc, YScalar) and isinstance(desc.value, str) and desc.value.strip()):
        drng = desc.range if desc is not None else _open_delim(sk.skill_md.text)
        extra = " (hidden skills need one too)" if doc.hidden else ""
        ck.emit(
            path,
            drng,
            "mantle.validation.skill.missing_description",
            "the skill needs a `description:` in its frontmatter: the routing summary "
            f"the orchestrator matches user requests against{extra}",
        )
    if doc.routing_flag("is_default") is True and sid not in DEFAULT_SKILLS:
        r = doc.fm("routing")
        node = r.key_node("is_default") if isinstance(r, YMap) else None
        ck.emit(
            path,
            node.range if node else rng,
            "mantle.validation.skill.is_default_not_allowed",
            "`routing.is_default` is reserved for overrides of bundled default "
            f"skills ({', '.join(DEFAULT_SKILLS)})",
        )


def _open_delim(text: str) -> TextRange:
    start = len(text) - len(text.lstrip())
    return TextRange(start, start + 3)


@rule(
    codes=(
        "mantle.validation.skill.no_entry_block",
        "mantle.validation.skill.multiple_entry_blocks",
        "mantle.validation.skill.unreachable_ordered_block",
        "mantle.validation.skill.silence_timeout_hangup_block",
    ),
    scope="skill",
    reports_on=(K.SKILL_MD,),
    reads=(K.SKILL_MD,),
)
def entry_blocks(ck: Checker, sid: str, sk: Skill) -> None:
    """A blocks-only skill has exactly one entry block, and it reaches every other block."""
    doc = sk.doc
    if doc is None:
        return
    if not doc.blocks_only or sk.skill_md is None:
        return
    path = sk.skill_md.path
    blocks = [b for b in doc.blocks if b.id]
    if not blocks:
        return
    entries = Semantics.entry_blocks(sid, doc)
    if not entries:
        ck.emit(
            path,
            blocks[0].open_range,
            "mantle.validation.skill.no_entry_block",
            "this blocks-only skill has no entry block: every block is called or linked by "
            "another one, so the skill cannot start",
        )
        return
    if len(entries) > 1:
        names = ", ".join(b.id or "" for b in entries)
        for b in entries:
            ck.emit(
                path,
                b.id_range or b.open_range,
                "mantle.validation.skill.multiple_entry_blocks",
                f"a blocks-only skill needs exactly one entry block (one that no other block "
                f"calls or links); these are all entries: {names}",
            )
        return
    entry = entries[0]
    edges = Semantics.block_edges(sid, doc)
    seen = {entry.id}
    todo = deque([entry.id])
    while todo:
        cur = todo.popleft()
        for nxt in edges.get(cur or "", ()):
            if nxt not in seen:
                seen.add(nxt)
                todo.append(nxt)
    for b in blocks:
        if b.id not in seen:
            ck.emit(
                path,
                b.id_range or b.open_range,
                "mantle.validation.skill.unreachable_ordered_block",
                f"block '{b.id}' can never run: the entry block '{entry.id}' does not reach it "
                "through `call:` / `link:`",
            )
    if sid == "default_silence_timeout":
        for b in blocks:
            if b.id == "hangup":
                ck.emit(
                    path,
                    b.id_range or b.open_range,
                    "mantle.validation.skill.silence_timeout_hangup_block",
                    "an override of `default_silence_timeout` must not contain a `hangup` "
                    "block; hanging up belongs to `default_silence_timeout_hangup`",
                )


@rule(
    codes=(
        "mantle.validation.memory.default_skill_collect_initial_value",
        "mantle.validation.unsupported_request_handler.not_engine_managed",
        "mantle.validation.unsupported_request_handler.missing_request_type",
        "mantle.validation.unsupported_request_handler.missing_entry",
    ),
    scope="skill",
    reports_on=(K.SKILL_MD,),
    reads=(K.SKILL_MD, K.SKILL_MEMORY),
)
def default_overrides(ck: Checker, sid: str, sk: Skill) -> None:
    """What an override of a bundled default skill must keep."""
    doc = sk.doc
    if doc is None or sk.skill_md is None or sid not in DEFAULT_SKILLS:
        return
    path = sk.skill_md.path
    # collect fields with an initial value are skipped unless ask_before_filling
    for _, st in doc.steps():
        if st.kind != "collect":
            continue
        c = st.str_field("collect")
        abf = st.get("ask_before_filling")
        if c is None or (isinstance(abf, YScalar) and abf.value is True):
            continue
        f = sk.field(c[0])
        if f is not None and f.initial_value is not None:
            ck.emit(
                path,
                c[1].range,
                "mantle.validation.memory.default_skill_collect_initial_value",
                f"`{c[0]}` has `initial_value: {f.initial_value!r}`, so this collect step is "
                "skipped; add `ask_before_filling: true` to always ask",
            )
    if sid != "default_unsupported_request_handler":
        return
    anchor = TextRange(0, 3)
    if doc.routing_flag("engine_managed") is False:
        ck.emit(
            path,
            anchor,
            "mantle.validation.unsupported_request_handler.not_engine_managed",
            "an override of `default_unsupported_request_handler` must stay engine-managed "
            "(remove `routing.engine_managed: false`)",
        )
    if sk.field("request_type") is None:
        ck.emit(
            path,
            anchor,
            "mantle.validation.unsupported_request_handler.missing_request_type",
            "an override of `default_unsupported_request_handler` must declare the field "
            "`request_type` (the engine writes the kind of request there)",
        )
    if doc.blocks_only and len(Semantics.entry_blocks(sid, doc)) != 1:
        ck.emit(
            path,
            anchor,
            "mantle.validation.unsupported_request_handler.missing_entry",
            "an override of `default_unsupported_request_handler` needs exactly one entry block",
        )
