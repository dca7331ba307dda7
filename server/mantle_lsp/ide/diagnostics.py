"""Diagnostics: every problem of a project as (file, exact range, code, severity, message).

Plain data in (a :class:`~mantle_lsp.model.project.Project`), plain data out. Per-file
parse problems come from the parsers; everything that needs more than one file is
checked here.
"""

from __future__ import annotations

import difflib
import json
import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..model.defaults import (
    DEFAULT_SKILLS,
    FRAMEWORK_TOOLS,
    RESERVED_SKILL_IDS,
    STEP_ACTIONS,
)
from ..model.layout import FileKind
from ..model.project import ParsedFile, Project, Skill, bulk_work
from ..model.semantics import Semantics, Unreadable, Unwritable
from ..model.symbols import execute_params, resolve_code_name
from ..syntax.errors import SyntaxIssue
from ..syntax.memory_yml import MemoryField
from ..syntax.responses_yml import ResponsesDoc
from ..syntax.sites import SITE_LABELS, ConditionSite
from ..syntax.skill_md import Block, SkillDoc, Step
from ..syntax.text import TextRange
from ..syntax.tools_py import ToolModule
from ..syntax.yaml_tree import YMap, YScalar
from . import config_checks as config
from . import lint_checks as lint
from . import parity_checks as parity
from . import profile_checks as profile
from .codes import FAILED_TO_LOAD, Severity, info
from .condition_semantics import check_semantics


@dataclass(frozen=True)
class Diagnostic:
    path: Path
    range: TextRange
    code: str
    severity: Severity
    message: str

    @property
    def engine_code(self) -> str | None:
        """The code rasa-pro reports this problem under when it is not ``code`` (a skill's
        compile errors: ``mantle.validation.skill.failed_to_load``), else None."""
        return info(self.code).engine_code


# Which code a condition problem gets, per site: (syntax code, readability code).
_SITE_CODES: dict[str, tuple[str, str]] = {
    "prose_if": (
        "mantle.validation.prose.invalid_if_expression",
        "mantle.validation.prose.unknown_memory_key",
    ),
    "response_condition": (
        "mantle.validation.response.invalid_condition",
        "mantle.validation.response.unknown_memory_key",
    ),
    "utter_when": ("skill.markdown.invalid_utter", "lsp.condition.unknown_memory_key"),
    "skill_complete_when": ("skill.complete_when.invalid", "lsp.condition.unknown_memory_key"),
    "satisfied_when": (
        "mantle.validation.precondition.invalid_satisfied_when",
        "lsp.condition.unknown_memory_key",
    ),
}
_UNCHECKED_SITE = ("lsp.condition.invalid", "lsp.condition.unknown_memory_key")


def did_you_mean(name: str, candidates: Iterable[str]) -> str:
    m = difflib.get_close_matches(name, list(candidates), n=1, cutoff=0.6)
    return f"; did you mean `{m[0]}`?" if m else ""


def describe_unreadable(u: Unreadable) -> str:
    """Why a key cannot be read, in words (for messages)."""
    key = f"{u.ns}.{u.entry}"
    if u.kind == "system":
        return f"`{key}`: the `system` namespace is engine-internal and never readable"
    if u.kind == "no_project_field":
        where = "the project memory.yml declares no" if u.has_project_memory else "there is no"
        return f"`{key}`: {where} project field `{u.entry}`{did_you_mean(u.entry, u.candidates)}"
    if u.kind == "undeclared":
        return (
            f"`{key}`: skill `{u.ns}` declares no field `{u.entry}`"
            f"{did_you_mean(u.entry, u.candidates)}"
        )
    if u.kind == "private":
        who = f"skill `{u.sid}`" if u.sid else "a project-wide responses.yml"
        return (
            f"`{key}`, a private field of skill `{u.ns}`: {who} cannot read it (make it "
            "public in that skill's memory.yml, or read it from within that skill)"
        )
    if u.kind == "bundled_no_field":
        return f"`{key}`: bundled skill `{u.ns}` has no public field `{u.entry}`" + did_you_mean(
            u.entry, u.candidates
        )
    return (
        f"`{key}`: there is no skill `{u.ns}` (namespaces are skill ids and `project`)"
        f"{did_you_mean(u.ns, u.candidates)}"
    )


def describe_unwritable(u: Unwritable) -> str:
    """Why tool code cannot write a key, in words (for messages)."""
    if u.kind == "no_project_field":
        return f"names project field `{u.entry}`, which the project memory.yml does not declare"
    if u.kind == "system":
        return "writes the engine-internal `system` namespace"
    if u.kind == "other_skill":
        return (
            f"writes another skill's field: a tool of `{u.sid}` may write only "
            f"`{u.sid}` fields and project fields"
        )
    if u.kind == "undeclared":
        return f"names `{u.entry}`, which skill `{u.ns}` does not declare"
    if u.kind == "bare_undeclared":
        return (
            f"names `{u.name}`, which is declared neither in skill `{u.sid}` nor in the "
            f"project memory.yml{did_you_mean(u.name, u.candidates)}"
        )
    return f"names `{u.name}`, which no skill and not the project declares"


class Checker:
    def __init__(self, project: Project) -> None:
        self.p = project
        self.out: dict[Path, list[Diagnostic]] = {}
        self.sem = Semantics(project)
        self._mentions: tuple[re.Pattern[str] | None] | None = None

    # -- emit ----------------------------------------------------------------------------
    def emit(
        self,
        path: Path,
        rng: TextRange,
        code: str,
        message: str,
        severity: Severity | None = None,
    ) -> None:
        ci = info(code)
        if ci.engine_code == FAILED_TO_LOAD:
            pf = self.p.files.get(path)
            sid = pf.skill_id if pf is not None else None
            message += (
                f" (rasa-pro fails to load skill `{sid}` on this and drops the whole skill)"
                if sid
                else " (rasa-pro fails to load the skill on this and drops it whole)"
            )
        sev = severity or ci.severity
        self.out.setdefault(path, []).append(Diagnostic(path, rng, code, sev, message))

    def emit_issue(self, path: Path, issue: SyntaxIssue) -> None:
        if profile.suppressed(self, issue.code):
            return
        self.emit(path, issue.range, issue.code, issue.message, issue.severity)

    # -- readability -----------------------------------------------------------------------
    def why_unreadable(self, sid: str | None, ns: str, entry: str) -> str | None:
        """None when ``ns.entry`` is readable from skill ``sid`` (None = the project-root
        responses file, which every skill may deliver); else the reason, for a message."""
        u = self.sem.unreadable(sid, ns, entry)
        return describe_unreadable(u) if u is not None else None

    # -- run -------------------------------------------------------------------------------
    def run(self, only: Iterable[Path] | None = None) -> dict[Path, list[Diagnostic]]:
        """Check the whole project, or only what can report on the files in ``only``."""
        wanted = None if only is None else set(only)
        if wanted is None:
            files: list[ParsedFile] = list(self.p.files.values())
            self.out = {pf.path: [] for pf in files}
        else:
            files = [self.p.files[p] for p in wanted if p in self.p.files]
            self.out = {pf.path: [] for pf in files}
        for pf in files:
            for issue in pf.issues:
                self.emit_issue(pf.path, issue)
        kinds = {pf.kind for pf in files}
        skills = {pf.skill_id for pf in files if pf.skill_id is not None}
        anchor = self.anchor_file()
        if wanted is None or (anchor is not None and anchor.path in wanted):
            self.check_structure()
        for sid, sk in self.p.skills.items():
            if wanted is None or sid in skills:
                self.check_skill(sid, sk)
        if wanted is None or FileKind.PROJECT_MEMORY in kinds:
            self.check_project_memory()
        if wanted is None or FileKind.PROJECT_RESPONSES in kinds:
            self.check_responses_files()
        if wanted is None or FileKind.SHARED_TOOLS in kinds:
            self.check_shared_tools()
        if wanted is None or FileKind.AGENT in kinds:
            self.check_agent()
        if wanted is None or FileKind.HOOKS in kinds:
            config.check_hooks(self)
        if wanted is not None:
            self.out = {p: ds for p, ds in self.out.items() if p in wanted}
        for diags in self.out.values():
            diags.sort(key=lambda d: (d.range.start, d.range.end, d.code))
        return self.out

    # -- structure -------------------------------------------------------------------------
    def anchor_file(self) -> ParsedFile | None:
        for kind in (FileKind.AGENT, FileKind.INTEGRATIONS):
            pf = self.p.file_of_kind(kind)
            if pf:
                return pf
        for sk in self.p.skills.values():
            if sk.skill_md:
                return sk.skill_md
        return next(iter(self.p.files.values()), None)

    def check_structure(self) -> None:
        anchor = self.anchor_file()
        if anchor is None:
            return
        if self.p.file_of_kind(FileKind.AGENT) is None:
            self.emit(
                anchor.path,
                TextRange(0, 0),
                "mantle.validation.config.missing_agent_yml",
                f"this project ({self.p.root.name}) has no agent.yml next to integrations.yml",
            )
        if self.p.file_of_kind(FileKind.INTEGRATIONS) is None:
            self.emit(
                anchor.path,
                TextRange(0, 0),
                "mantle.validation.config.missing_integrations",
                f"this project ({self.p.root.name}) has no integrations.yml next to agent.yml",
            )
        if not any(sk.skill_md is not None for sk in self.p.skills.values()):
            self.emit(
                anchor.path,
                TextRange(0, 0),
                "config.project_structure.missing_skills",
                "this project has no skill: add skills/<skill_id>/skill.md (folders starting "
                "with `_` are skipped)",
            )
        if (self.p.root / "domain.yml").is_file():
            self.emit(
                anchor.path,
                TextRange(0, 0),
                "config.project_structure.mixed_layout",
                "a CALM domain.yml next to a Mantle project: the engine refuses mixed layouts; "
                "remove domain.yml (Mantle declares memory in memory.yml)",
            )

    # -- skills ----------------------------------------------------------------------------
    def check_skill(self, sid: str, sk: Skill) -> None:
        doc = sk.doc
        if sk.skill_md is None:
            others = sk.files()
            if others:
                self.emit(
                    others[0].path,
                    TextRange(0, 0),
                    "mantle.validation.skill.failed_to_load",
                    f"skills/{sid} has no skill.md, so the skill fails to load (the file "
                    "name is lower-case `skill.md`)",
                )
        else:
            self.check_skill_identity(sid, sk)
        if doc is not None and sk.skill_md is not None:
            path = sk.skill_md.path
            for site in doc.conditions:
                self.check_condition(path, site, sid)
            self.check_tokens(path, sid, doc)
            self.check_blocks(path, sid, sk, doc)
            self.check_frontmatter_refs(path, sid, sk, doc)
            parity.check_entry_structure(self, sid, sk, doc)
            parity.check_bare_mentions(self, sid, sk, doc, self.mention_pattern())
            parity.check_import_collisions(self, sid, sk, doc)
            parity.check_default_override(self, sid, sk, doc)
            lint.check_unreachable_steps(self, sk, doc)
            profile.check_skill(self, sid, sk, doc)
        self.check_skill_memory(sid, sk)
        if sk.responses is not None and isinstance(sk.responses.doc, ResponsesDoc):
            self.check_responses(sk.responses, sk.responses.doc, sid)
        for pf, mod in sk.tool_modules():
            self.check_tool_module(pf, mod, sid)
        parity.check_tool_names(self, sid, sk)
        lint.check_legacy_tool_names(self, sk)
        lint.check_field_names(self, sk)
        lint.check_unused_fields(self, sk)
        profile.check_memory(self, sk)
        profile.check_tool_writes(self, sid, sk)
        profile.check_tool_names(self, sid, sk)

    def mention_pattern(self) -> re.Pattern[str] | None:
        if self._mentions is None:
            self._mentions = (parity.mention_pattern(self),)
        return self._mentions[0]

    def settable_fields(self, sk: Skill) -> set[str]:
        """Fields of ``sk`` the model may set: `llm_settable` or filled by a collect step."""
        return self.sem.settable_fields(sk)

    def check_skill_identity(self, sid: str, sk: Skill) -> None:
        assert sk.skill_md is not None
        path = sk.skill_md.path
        doc = sk.doc
        rng = TextRange(0, 0)
        if doc is not None and doc.frontmatter is not None:
            nk = doc.frontmatter.key_node("name") or doc.frontmatter.key_node("description")
            if nk is not None:
                rng = nk.range
        if sid in RESERVED_SKILL_IDS:
            self.emit(
                path,
                rng,
                "mantle.validation.skill.reserved_id",
                f"`{sid}` is a reserved namespace and cannot be a skill id; rename the folder",
            )
        elif "." in sid:
            self.emit(
                path,
                rng,
                "mantle.validation.skill.invalid_id",
                f"skill id `{sid}` contains `.`; rename the folder",
            )
        elif not sid.isidentifier() or _is_keyword(sid):
            self.emit(
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
            self.emit(
                path,
                drng,
                "mantle.validation.skill.missing_description",
                "the skill needs a `description:` in its frontmatter: the routing summary "
                f"the orchestrator matches user requests against{extra}",
            )
        if doc.routing_flag("is_default") is True and sid not in DEFAULT_SKILLS:
            r = doc.fm("routing")
            node = r.key_node("is_default") if isinstance(r, YMap) else None
            self.emit(
                path,
                node.range if node else rng,
                "mantle.validation.skill.is_default_not_allowed",
                "`routing.is_default` is reserved for overrides of bundled default "
                f"skills ({', '.join(DEFAULT_SKILLS)})",
            )

    # -- conditions ------------------------------------------------------------------------
    def check_condition(
        self, path: Path, site: ConditionSite, sid: str | None, *, engine_checked: bool = True
    ) -> None:
        """``engine_checked=False``: a condition the engine skips although it checks its
        kind elsewhere (a `satisfied_when` no skill uses): reported under the lsp codes."""
        codes = _SITE_CODES.get(site.kind, _UNCHECKED_SITE)
        syntax_code, read_code = codes if engine_checked else _UNCHECKED_SITE
        parsed = site.parsed
        label = SITE_LABELS.get(site.kind, "condition")
        if not parsed.ok:
            tail = ""
            if not engine_checked:
                tail = " (the engine does not check it while no skill uses this precondition)"
            elif syntax_code.startswith("lsp."):
                tail = " (the engine never checks this condition"
                tail += (
                    ": while it fails, the tool stays hidden)"
                    if "requires" in site.kind
                    else ": it fails when evaluated at runtime)"
                )
            for err in parsed.errors:
                rng = site.file_range(err.range.start, err.range.end)
                if rng.start == rng.end:
                    rng = site.anchor
                self.emit(path, rng, syntax_code, f"{label}: {err.message}{tail}")
            return
        for ref in parsed.refs:
            why = self.why_unreadable(sid, ref.namespace, ref.entry)
            if why is None:
                continue
            rng = site.file_range(ref.range.start, ref.range.end)
            self.emit(path, rng, read_code, f"{label} reads {why}")
        check_semantics(self, path, site, parsed, sid)

    # -- prose tokens ----------------------------------------------------------------------
    def check_tokens(self, path: Path, sid: str, doc: SkillDoc) -> None:
        sk = self.p.skill(sid)
        for tok in doc.tokens:
            if tok.kind == "memory":
                (ns, _), (entry, _) = tok.parts
                why = self.why_unreadable(sid, ns, entry)
                if why is not None:
                    self.emit(
                        path,
                        tok.range,
                        "mantle.validation.prose.unknown_memory_reference",
                        f"`{tok.text}` cannot be substituted: {why}",
                    )
            elif tok.kind == "incomplete_memory":
                self.emit(
                    path,
                    tok.range,
                    "mantle.validation.prose.incomplete_memory_reference",
                    f"`{tok.text}` is incomplete: write `@memory.<skill_id|project>."
                    "<entry>` (exactly two segments)",
                )
            elif tok.kind == "incomplete_at":
                kind = tok.text[1:].split(".", 1)[0]
                self.emit(
                    path,
                    tok.range,
                    "mantle.validation.prose.incomplete_at_reference",
                    f"`{tok.text}` is incomplete: write `@{kind}.<{kind}_id>` with exactly one id",
                )
            elif tok.kind == "session":
                (ns, _), (entry, _) = tok.parts
                where = "step instructions" if tok.where == "instructions" else "prose"
                self.emit(
                    path,
                    tok.range,
                    "mantle.validation.prose.session_reference_in_instructions",
                    f"`{tok.text}` in {where} is not substituted: write "
                    f"`@memory.{ns}.{entry}` to insert the value (`session.` is the "
                    "condition form)",
                )
            elif tok.kind == "skill":
                target, trng = tok.parts[0]
                if not self.p.has_skill(target):
                    self.emit(
                        path,
                        trng,
                        "skill.referenced.invalid_target",
                        f"`@skill.{target}` names no skill"
                        f"{did_you_mean(target, self.p.catalog_ids())}",
                    )
                else:
                    tsk = self.p.skill(target)
                    if tsk is not None and tsk.doc is not None and tsk.doc.hidden:
                        self.emit(
                            path,
                            trng,
                            "skill.prose.hidden_skill_reference",
                            f"`@skill.{target}` names a hidden skill; hidden skills are "
                            "started by `call:`/`link:`/`resolve_with`, not from prose",
                        )
            elif tok.kind == "tool":
                name, trng = tok.parts[0]
                if name in FRAMEWORK_TOOLS:
                    continue
                if sk is not None and not self.tool_visible(sk, doc, name):
                    self.emit(
                        path,
                        trng,
                        "mantle.validation.tools.unresolved_tool",
                        f"`@tool.{name}` names no tool this skill can use"
                        f"{did_you_mean(name, self.visible_tools(sk, doc))}",
                    )

    # -- tools visibility (model/semantics.py) -------------------------------------------
    def local_tools(self, sk: Skill) -> set[str]:
        return self.sem.local_tools(sk)

    def shared_tools(self) -> set[str]:
        return self.sem.shared_tools()

    def visible_tools(self, sk: Skill, doc: SkillDoc | None) -> set[str]:
        return self.sem.visible_tools(sk, doc)

    def tool_visible(self, sk: Skill, doc: SkillDoc | None, name: str) -> bool:
        return self.sem.tool_visible(sk, doc, name)

    # -- frontmatter references ------------------------------------------------------------
    def check_frontmatter_refs(self, path: Path, sid: str, sk: Skill, doc: SkillDoc) -> None:
        for gt in [*doc.gate_tools, *(g for b in doc.blocks for g in b.tools)]:
            if not self.tool_visible(sk, doc, gt.name):
                self.emit(
                    path,
                    gt.name_node.range,
                    "mantle.validation.tools.unresolved_tool",
                    f"tool `{gt.name}` is neither a tool of this skill nor a shared tool in "
                    f"tools/{did_you_mean(gt.name, self.visible_tools(sk, doc))}",
                )
            for attr in ("on_success", "on_failure"):
                n = getattr(gt, attr)
                if isinstance(n, YScalar):
                    self.check_response_ref(path, n, _GATE_CODE, f"`{attr}`")
            if gt.confirmation_enabled:
                for attr in ("utter_for_confirmation", "utter_on_user_denial"):
                    n = getattr(gt, attr)
                    if isinstance(n, YScalar):
                        self.check_response_ref(path, n, _CONFIRM_CODE, f"`{attr}`")
        for trig in doc.utter:
            self.check_response_ref(
                path,
                trig.name_node,
                "mantle.validation.verbatim_trigger.unknown_response",
                "`utter` trigger",
            )
        shared = self.shared_tools()
        integ = self.p.integrations
        for item in doc.import_tools:
            name = item.value
            if name.startswith("mcp/"):
                server = name[4:].split(":", 1)[0]
                if integ is None or server not in integ.mcp_servers:
                    self.emit(
                        path,
                        item.range,
                        "skill.import_tools.invalid_shared_tool",
                        f"MCP server `{server}` is not configured under `mcp_servers` in "
                        "integrations.yml",
                    )
                continue
            if name in shared:
                continue
            owner = next((o for o, s in self.p.skills.items() if name in self.local_tools(s)), None)
            if owner is not None:
                msg = (
                    f"`{name}` is a tool of skill `{owner}`, not a shared tool: only tools in "
                    "the project's tools/ folder can be imported"
                )
            else:
                msg = f"`{name}` is not a shared tool in tools/*.py{did_you_mean(name, shared)}"
            if not self.tool_visible(sk, None, name):
                self.emit(path, item.range, "skill.import_tools.invalid_shared_tool", msg)
                # and, like the engine, as a tool the skill cannot see
                self.emit(
                    path,
                    item.range,
                    "mantle.validation.tools.unresolved_tool",
                    f"`{name}` is not a tool this skill can use",
                )
        pre = doc.fm("precondition")
        agent = self.p.agent
        if isinstance(pre, YScalar) and isinstance(pre.value, str) and pre.value.strip():
            name = pre.value.strip()
            if agent is not None and name not in agent.preconditions:
                self.emit(
                    path,
                    pre.range,
                    "mantle.validation.precondition.missing_binding",
                    f"precondition `{name}` has no binding under "
                    "`orchestrator.preconditions` in agent.yml"
                    f"{did_you_mean(name, agent.preconditions)}",
                )
            elif agent is not None:
                binding = agent.preconditions[name]
                if binding.resolve_with is not None and binding.resolve_with.value == sid:
                    self.emit(
                        path,
                        pre.range,
                        "mantle.validation.precondition.self_resolve",
                        f"precondition `{name}` is resolved by this same skill "
                        f"(`resolve_with: {sid}`), so it can never be met",
                    )
                else:
                    parity.check_precondition_chain(self, path, sid, pre, name)

    def check_response_ref(self, path: Path, node: YScalar, code: str, what: str) -> None:
        """A response named by a gate, trigger or cancel confirmation: it must exist, and
        (like the engine checks for these references) have no blank variant."""
        if not self.response_exists(node.value):
            self.emit(
                path,
                node.range,
                code,
                f"{what} names response `{node.value}`, which no responses.yml defines"
                f"{did_you_mean(node.value, self.response_names())}",
            )
        else:
            parity.check_blank_referenced(self, path, node, f"{what} response")

    # -- responses registry ----------------------------------------------------------------
    def response_names(self) -> set[str]:
        return self.sem.response_names()

    def response_exists(self, name: str) -> bool:
        return self.sem.response_exists(name)

    # -- ordered blocks ---------------------------------------------------------------------
    def check_blocks(self, path: Path, sid: str, sk: Skill, doc: SkillDoc) -> None:
        for blk in doc.blocks:
            ids = {s.id for s in blk.steps if s.id}
            for st in blk.steps:
                self.check_step(path, sid, sk, doc, blk, st, ids)

    def check_step(
        self, path: Path, sid: str, sk: Skill, doc: SkillDoc, blk: Block, st: Step, ids: set[str]
    ) -> None:
        where = f"step '{st.id}'" if st.id else f"step {st.index + 1}"
        for tgt in st.next_targets():
            if tgt.value != "END" and tgt.value not in ids:
                hint = (
                    " (`END` is upper-case)"
                    if tgt.value.lower() == "end"
                    else did_you_mean(tgt.value, ids)
                )
                self.emit(
                    path,
                    tgt.range,
                    "mantle.validation.flow.unresolved_next",
                    f"{where}: `{tgt.value}` is not a step of block '{blk.id}' nor `END`{hint}",
                )
        if (
            st.branches
            and any(b.if_node is not None for b in st.branches)
            and not any(b.else_node is not None for b in st.branches)
        ):
            assert st.next_node is not None
            self.emit(
                path,
                _key_range(st, "next"),
                "mantle.validation.flow.next_missing_else",
                f"{where}: this branch list has no `- else: <step>` fallback",
            )
        kind = st.kind
        if kind == "action":
            a = st.str_field("action") or st.str_field("utter")
            if a:
                name, node = a
                if name.startswith("utter_"):
                    if not self.response_exists(name):
                        self.emit(
                            path,
                            node.range,
                            "mantle.validation.response.missing",
                            f"{where}: response `{name}` is not defined in any responses.yml"
                            f"{did_you_mean(name, self.response_names())}",
                        )
                elif name not in STEP_ACTIONS:
                    self.emit(
                        path,
                        node.range,
                        "mantle.validation.action.unknown",
                        f"{where}: `action: {name}` must be a response name starting with "
                        "`utter_`, `action_listen`, or `hangup`",
                    )
        elif kind == "collect":
            c = st.str_field("collect")
            if c:
                self.check_written_key(path, sid, sk, c[0], c[1].range, where, "collect")
            u = st.str_field("utterance")
            if u and u[0].startswith("utter_") and not self.response_exists(u[0]):
                self.emit(
                    path,
                    u[1].range,
                    "mantle.validation.response.missing",
                    f"{where}: response `{u[0]}` is not defined in any responses.yml"
                    f"{did_you_mean(u[0], self.response_names())}",
                )
        elif kind == "set_memory":
            sm = st.get("set_memory")
            if isinstance(sm, YMap):
                for k, _ in sm.pairs():
                    if isinstance(k.value, str):
                        self.check_written_key(path, sid, sk, k.value, k.range, where, "set_memory")
        elif kind == "execute_tool":
            t = st.str_field("execute_tool")
            execute_only = ("record_handoff",) if self.p.engine == "3.22" else ()
            if t and t[0] not in execute_only and not self.tool_visible(sk, doc, t[0]):
                self.emit(
                    path,
                    t[1].range,
                    "mantle.validation.tools.unresolved_tool",
                    f"{where}: `execute_tool: {t[0]}` names no tool this skill can use"
                    f"{did_you_mean(t[0], self.visible_tools(sk, doc))}",
                )
            text = sk.skill_md.text if sk.skill_md else ""
            # 3.22 refuses any parameters of an execute-only tool and checks no further
            params = execute_params(text, st) if not (t and t[0] in execute_only) else []
            for param in params:
                if param.ref is None:
                    self.emit(
                        path,
                        param.range,
                        "mantle.validation.execute_step.invalid_session_parameter",
                        f"{where}: parameter `{param.name}` starts with `session.` but is not "
                        "exactly one `session.<ns>.<entry>` reference",
                    )
                    continue
                why = self.why_unreadable(sid, param.ref[0], param.ref[1])
                if why is not None:
                    self.emit(
                        path,
                        param.range,
                        "mantle.validation.execute_step.unknown_memory_key",
                        f"{where}: parameter `{param.name}` reads {why}",
                    )
        elif kind in ("call", "link"):
            t = st.str_field(kind)
            if t:
                self.check_call(path, sid, doc, kind, t[0], t[1], where)

    def check_call(
        self,
        path: Path,
        sid: str,
        doc: SkillDoc,
        kind: str,
        target: str,
        node: YScalar,
        where: str,
    ) -> None:
        own = f"{sid}__"
        block_id = target[len(own) :] if target.startswith(own) else target
        if doc.block(block_id) is not None:
            if doc.has_prose:
                self.emit(
                    path,
                    node.range,
                    "mantle.validation.flow.internal_not_callable",
                    f"{where}: block '{block_id}' belongs to a skill with prose, so its "
                    "blocks are internal and cannot be called or linked; enter it from "
                    f"prose with `@block.{block_id}`",
                )
            return
        if "__" in target:
            return  # reported by the parser (invalid_step_target)
        if target == sid:
            self.emit(
                path,
                node.range,
                "mantle.validation.skill.self_skill_not_callable",
                f"{where}: a skill cannot `{kind}` itself",
            )
            return
        if not self.p.has_skill(target):
            blocks = [b.id for b in doc.blocks if b.id]
            self.emit(
                path,
                node.range,
                f"mantle.validation.flow.unresolved_{kind}",
                f"{where}: `{kind}: {target}` names no skill"
                + (" or block of this skill" if blocks else "")
                + did_you_mean(target, [*self.p.catalog_ids(), *blocks]),
            )
            # the engine also reports the target among the skill's referenced skills
            self.emit(
                path,
                node.range,
                "skill.referenced.invalid_target",
                f"`{target}` is not a skill (referenced by `{kind}:` in {where})",
            )

    def check_written_key(
        self, path: Path, sid: str, sk: Skill, name: str, rng: TextRange, where: str, how: str
    ) -> None:
        if sk.field(name) is not None:
            return
        if self.p.project_field(name) is not None:
            if how == "collect":
                self.emit(
                    path,
                    rng,
                    "mantle.validation.memory.collect_on_project",
                    f"{where}: `collect: {name}` fills a project field; collect steps fill "
                    "this skill's own fields (declare it in the skill's memory.yml)",
                )
            return
        cands = (
            [*sk.field_names(), *(f.name for f in self.p.project_memory.fields)]
            if (self.p.project_memory)
            else sk.field_names()
        )
        what = "`collect:`" if how == "collect" else "`set_memory`"
        self.emit(
            path,
            rng,
            "mantle.validation.memory.undeclared_entry",
            f"{where}: {what} names `{name}`, which is declared neither in this skill's "
            f"memory.yml nor in the project memory.yml{did_you_mean(name, cands)}",
        )

    # -- memory rules --------------------------------------------------------------------------
    def collect_steps(self, sk: Skill) -> dict[str, list[Step]]:
        return self.sem.collect_steps(sk)

    def check_skill_memory(self, sid: str, sk: Skill) -> None:
        md = sk.memdoc
        if md is None or sk.memory is None:
            return
        path = sk.memory.path
        collects = self.collect_steps(sk)
        for f in md.fields:
            eff = md.field(f.name)
            if eff is not f:
                continue  # a public twin shadowed by the private declaration
            settable = f.llm_settable or f.name in collects
            desc_node = f.attrs.get("description")
            if f.description and not settable:
                self.emit(
                    path,
                    f.attr_keys["description"].range,
                    "mantle.validation.memory.description_not_exposed",
                    f"`{f.name}` has a description, but the model cannot set it (it is not "
                    "`llm_settable` and no `collect:` step fills it), so nobody sees it; "
                    "remove it or make the field settable",
                )
            if not settable or sk.is_default_override:
                continue
            steps = collects.get(f.name, [])
            winning = steps[-1] if steps else None
            step_desc = winning.str_field("description") if winning else None
            step_has = bool(step_desc and step_desc[0].strip())
            if not step_has and not f.description:
                why = "`llm_settable`" if f.llm_settable else "filled by a `collect:` step"
                self.emit(
                    path,
                    f.key.range,
                    "mantle.validation.memory.description_required",
                    f"`{f.name}` is {why}, so the model needs a `description:` (on the "
                    "field, or on the collect step)",
                )
            elif step_has and f.description and desc_node is not None and sk.skill_md:
                assert step_desc is not None
                self.emit(
                    sk.skill_md.path,
                    step_desc[1].range,
                    "mantle.validation.memory.collect_description_overrides",
                    f"this collect step's description replaces the one on field "
                    f"`{f.name}` in memory.yml; keep one of them",
                )

    def check_project_memory(self) -> None:
        pf = self.p.file_of_kind(FileKind.PROJECT_MEMORY)
        md = self.p.project_memory
        if pf is None or md is None:
            return
        lint.check_field_names(self, None)
        lint.check_unused_fields(self, None)
        profile.check_memory(self, None)
        for f in md.fields:
            if f.description:
                self.emit(
                    pf.path,
                    f.attr_keys["description"].range,
                    "mantle.validation.memory.description_not_exposed",
                    f"project field `{f.name}` cannot have a description: the model never "
                    "sets project fields; use a YAML comment instead",
                )

    # -- responses --------------------------------------------------------------------------
    def check_responses_files(self) -> None:
        prf = self.p.project_responses
        if prf is not None and isinstance(prf.doc, ResponsesDoc):
            self.check_responses(prf, prf.doc, None)

    def check_responses(self, pf: ParsedFile, doc: ResponsesDoc, sid: str | None) -> None:
        for site in doc.conditions:
            self.check_condition(pf.path, site, sid)
        for ph in doc.placeholders:
            if ph.kind == "qualified" and ph.namespace is not None:
                why = self.why_unreadable(sid, ph.namespace, ph.entry)
                if why is not None:
                    self.emit(
                        pf.path,
                        ph.range,
                        "lsp.responses.unknown_placeholder",
                        f"`{{{ph.text}}}` is sent literally: {why}",
                    )
            elif ph.kind == "bare" and not self.bare_resolves(sid, ph.entry):
                where = f"skill `{sid}`" if sid else "any skill"
                self.emit(
                    pf.path,
                    ph.range,
                    "lsp.responses.unknown_placeholder",
                    f"`{{{ph.entry}}}` is sent literally: neither {where} nor the "
                    f"project declares a field `{ph.entry}`",
                )
        for r in doc.responses:
            for v in r.variants:
                for b in v.buttons:
                    if b.set_payload is not None:
                        self.check_set_payload(pf.path, sid, b.set_payload)
        parity.check_button_sources(self, pf.path, doc, sid)

    def bare_resolves(self, sid: str | None, name: str) -> bool:
        return self.sem.bare_resolves(sid, name)

    def check_set_payload(self, path: Path, sid: str | None, sp: Any) -> None:
        why = self.why_unreadable(sid, sp.namespace, sp.entry)
        if why is not None:
            self.emit(
                path,
                sp.range,
                "mantle.validation.response.unknown_memory_key",
                f"button `set:` target {why}",
            )
            return
        fld: MemoryField | None
        if sp.namespace == "project":
            if profile.button_write_refused(self, path, sid, sp):
                return
            fld = self.p.project_field(sp.entry)
        else:
            writable = sid is not None and sp.namespace == sid
            if sid is None:
                users = self.response_users_of(sp)
                writable = bool(users) and all(u == sp.namespace for u in users)
            if not writable:
                who = f"skill `{sid}`" if sid else "the skills that deliver this response"
                self.emit(
                    path,
                    sp.range,
                    "mantle.validation.response.not_writable_memory_key",
                    f"a button tap cannot write `{sp.namespace}.{sp.entry}`: {who} may "
                    "write only its own fields and project fields",
                )
                return
            sk = self.p.skill(sp.namespace)
            fld = sk.field(sp.entry) if sk else None
        if fld is None:
            return
        problem = _coerce_problem(fld, sp.value)
        if problem:
            self.emit(
                path,
                sp.value_range,
                "mantle.validation.response.invalid_set_memory_value",
                f"`{sp.value}` is not a valid value for `{sp.namespace}.{sp.entry}`: {problem}",
            )

    def response_users_of(self, sp: Any) -> set[str]:
        """The skills that deliver the root-file response holding the button ``sp``."""
        prf = self.p.project_responses
        if prf is None or not isinstance(prf.doc, ResponsesDoc):
            return set()
        for r in prf.doc.responses:
            if any(b.set_payload is sp for v in r.variants for b in v.buttons):
                return self.sem.response_users(r.name)
        return set()

    # -- tools ------------------------------------------------------------------------------
    def check_shared_tools(self) -> None:
        for pf, mod in self.p.shared_tool_files():
            self.check_tool_module(pf, mod, None)
        parity.check_tool_names(self, None, None)
        lint.check_legacy_tool_names(self, None)
        profile.check_tool_writes(self, None, None)
        profile.check_tool_names(self, None, None)

    def check_tool_module(self, pf: ParsedFile, mod: ToolModule, sid: str | None) -> None:
        for call in mod.memory_calls:
            if call.method == "set":
                why = self.why_unwritable(sid, call.entry)
                if why is None:
                    continue
                code = (
                    "mantle.validation.tools.undeclared_memory_write"
                    if call.engine_counted
                    else "lsp.tools.undeclared_memory_write"
                )
                self.emit(pf.path, call.literal_range, code, f'`memory.set("{call.entry}")` {why}')
            else:
                key = resolve_code_name(self.p, sid, call.entry)
                why_r = self.why_unreadable(sid, key[1], key[2])
                if why_r is not None and not (sid is None and self.bare_resolves(None, key[2])):
                    self.emit(
                        pf.path,
                        call.literal_range,
                        "lsp.tools.unknown_memory_read",
                        f'`memory.get("{call.entry}")` always returns the default: {why_r}',
                    )
        for bp in mod.bypasses:
            self.emit(
                pf.path,
                bp.range,
                "mantle.validation.tools.memory_manager_bypass",
                "tools must use `context.memory.get/set`; reaching into the memory "
                f"manager (`{bp.what}`) bypasses visibility and write rules",
            )
        for imp in mod.obsolete_imports:
            if imp.guard == "none":
                self.emit(
                    pf.path,
                    imp.range,
                    "lsp.tools.obsolete_import",
                    f"`{imp.module}` does not exist in rasa-pro 3.21 (the engine fails to "
                    f"import this module); import from `{imp.replacement}`",
                )
            elif imp.guard == "function":  # try/except ImportError, TYPE_CHECKING: silent
                self.emit(
                    pf.path,
                    imp.range,
                    "lsp.tools.obsolete_import",
                    f"`{imp.module}` does not exist in rasa-pro 3.21: the module loads, but "
                    f"this function fails when it is called; import from `{imp.replacement}`",
                    "warning",
                )
        parity.check_lib_imports(self, pf, mod)

    def why_unwritable(self, sid: str | None, name: str) -> str | None:
        u = self.sem.unwritable(sid, name)
        return describe_unwritable(u) if u is not None else None

    # -- agent.yml --------------------------------------------------------------------------
    def check_agent(self) -> None:
        apf = self.p.file_of_kind(FileKind.AGENT)
        agent = self.p.agent
        if apf is None or agent is None:
            return
        # the engine checks a binding only for a precondition some skill declares
        used: set[str] = set()
        for sid in self.p.skills:
            name = self.p.skill_facts(sid).precondition
            if name is not None and name.strip():
                used.add(name.strip())
        for site in agent.conditions:
            self.check_condition(apf.path, site, None, engine_checked=site.context in used)
        config.check_agent_config(self, apf.path, agent)
        for pre in agent.preconditions.values():
            if pre.name not in used:
                self.emit(
                    apf.path,
                    pre.key.range,
                    "lsp.config.unused_precondition",
                    f"no skill declares `precondition: {pre.name}`, so this binding is never "
                    "used (and the engine does not check it)",
                )
                continue
            rw = pre.resolve_with
            if rw is not None and not self.p.has_skill(rw.value):
                self.emit(
                    apf.path,
                    rw.range,
                    "mantle.validation.precondition.unknown_resolver",
                    f"`resolve_with: {rw.value}` names no skill"
                    f"{did_you_mean(rw.value, self.p.catalog_ids())}",
                )
        for n in agent.cancel_confirmation:
            self.check_response_ref(apf.path, n, _CONFIRM_CODE, "`cancel` confirmation")


_GATE_CODE = "mantle.validation.tool_constraint.unknown_on_success_or_failure"
_CONFIRM_CODE = "mantle.validation.tool_constraint.unknown_requires_confirmation_response"


def _key_range(st: Step, key: str) -> TextRange:
    if isinstance(st.node, YMap):
        k = st.node.key_node(key)
        if k is not None:
            return k.range
    return st.node.range


def _open_delim(text: str) -> TextRange:
    start = len(text) - len(text.lstrip())
    return TextRange(start, start + 3)


def _is_keyword(s: str) -> bool:
    import keyword

    return keyword.iskeyword(s)


def _coerce_problem(f: MemoryField, value: str) -> str | None:
    t = f.type
    v = value.strip()
    if t == "bool":
        if v.lower() in ("true", "yes", "1", "false", "no", "0"):
            return None
        return "a `bool` field takes true/false, yes/no or 1/0"
    if t == "int":
        try:
            int(v)
        except ValueError:
            return "an `int` field takes a whole number"
        return None
    if t == "float":
        try:
            float(v)
        except ValueError:
            return "a `float` field takes a number"
        return None
    if t == "categorical" and f.enum_values:
        allowed = [str(e) for e in f.enum_values]
        if value in allowed:
            return None
        return f"allowed values are {', '.join(allowed)}{did_you_mean(value, allowed)}"
    if t in ("list", "json"):
        try:
            parsed = json.loads(value)
        except ValueError:
            return f"a `{t}` field takes JSON text"
        if t == "list" and not isinstance(parsed, list):
            return "a `list` field takes a JSON array"
    return None


def project_diagnostics(project: Project) -> dict[Path, list[Diagnostic]]:
    """Every diagnostic of ``project``, per file, sorted by position."""
    with bulk_work():
        return Checker(project).run()


def file_diagnostics(project: Project, paths: Iterable[Path]) -> dict[Path, list[Diagnostic]]:
    """The diagnostics of some files of ``project`` (what an editor needs after an edit:
    the files :meth:`Project.set_source` reported as affected). Runs only the checks
    that can report on those files; equal to the same files' entries of
    :func:`project_diagnostics`."""
    return Checker(project).run(paths)
