"""More engine checks (engine-rules §3.3.4 entry structure, §5.5–§5.7, §6.6, §6.8, §7):
entry blocks, bare skill mentions, memory validation tools, tool names, import_tools
collisions, blank referenced responses, button sources, precondition chains and the
rules for overriding bundled default skills.

Each function takes the running :class:`~mantle_lsp.ide.diagnostics.Checker` and emits
through it.
"""

from __future__ import annotations

import functools
import re
from collections import deque
from typing import TYPE_CHECKING

from ..model.defaults import DEFAULT_SKILLS, FRAMEWORK_TOOLS
from ..model.project import Skill
from ..model.semantics import Semantics
from ..syntax.responses_yml import ResponsesDoc
from ..syntax.skill_md import SkillDoc
from ..syntax.text import TextRange
from ..syntax.tools_py import ToolModule
from ..syntax.yaml_tree import YScalar

if TYPE_CHECKING:
    from .diagnostics import Checker

VALIDATION_PREFIX = "run_after_setting_"


# -- entry blocks -------------------------------------------------------------------------
def check_entry_structure(ck: Checker, sid: str, sk: Skill, doc: SkillDoc) -> None:
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


# -- bare skill mentions ------------------------------------------------------------------
def mention_pattern(ck: Checker) -> re.Pattern[str] | None:
    ids = sorted(
        (s for s in ck.p.skills if s not in DEFAULT_SKILLS and not ck.p.engine_managed(s)),
        key=len,
        reverse=True,
    )
    return _mention_regex(tuple(ids)) if ids else None


@functools.lru_cache(maxsize=16)
def _mention_regex(ids: tuple[str, ...]) -> re.Pattern[str]:
    """Compiled once per set of skill ids (an edit rarely changes the set)."""
    alt = "|".join(re.escape(i) for i in ids)
    return re.compile(rf"(?<!\w)(?<!\w\.)({alt})(?!\w)(?!\.\w)")


def check_bare_mentions(
    ck: Checker, sid: str, sk: Skill, doc: SkillDoc, pattern: re.Pattern[str] | None
) -> None:
    """Warn once per mentioned skill id (like the engine) at its first mention."""
    if pattern is None or sk.skill_md is None or sid in DEFAULT_SKILLS or ck.p.engine_managed(sid):
        return
    text = sk.skill_md.text
    seen: set[str] = set()
    for para in doc.paragraphs:
        rng = para.body_range
        if rng is None:
            continue
        for m in pattern.finditer(text, rng.start, rng.end):
            name = m.group(1)
            if name == sid or name in seen:
                continue
            seen.add(name)
            ck.emit(
                sk.skill_md.path,
                TextRange(m.start(1), m.end(1)),
                "skill.prose.bare_skill_mention",
                f"`{name}` names another skill as a plain word: writing it does not start "
                f"that skill; write `@skill.{name}` to delegate to it (or ignore this code "
                "if the word is meant as plain text)",
            )


# -- tools --------------------------------------------------------------------------------
def check_tool_names(ck: Checker, sid: str | None, sk: Skill | None) -> None:
    """Reserved framework names and memory validation tools (``run_after_setting_*``)."""
    modules = sk.tool_modules() if sk is not None else ck.p.shared_tool_files()
    settable = ck.settable_fields(sk) if sk is not None else set()
    for pf, mod in modules:
        for t in mod.tools:
            if t.kind == "possible":
                continue
            if t.name in FRAMEWORK_TOOLS:  # 3.22 adds the execute-only names (profile_checks)
                ck.emit(
                    pf.path,
                    t.name_range,
                    "mantle.validation.tools.reserved_name",
                    f"`{t.name}` is a framework tool name and cannot be defined by a project "
                    "(the engine refuses to load the tools); rename the function",
                )
            if not t.name.startswith(VALIDATION_PREFIX):
                continue
            entry = t.name[len(VALIDATION_PREFIX) :]
            if sid is None:
                ck.emit(
                    pf.path,
                    t.name_range,
                    "mantle.validation.tools.invalid_memory_validation_tool",
                    f"`{t.name}` is a shared tool, and memory validation tools never run from "
                    "tools/: move it into the tools.py of the skill that owns "
                    f"`{entry}`",
                )
            elif entry not in settable:
                what = (
                    "is not declared"
                    if sk is None or sk.field(entry) is None
                    else "is neither `llm_settable` nor collected by a `collect:` step"
                )
                ck.emit(
                    pf.path,
                    t.name_range,
                    "mantle.validation.tools.invalid_memory_validation_tool",
                    f"`{t.name}` validates `{sid}.{entry}`, which {what}, so it never runs",
                )


def check_import_collisions(ck: Checker, sid: str, sk: Skill, doc: SkillDoc) -> None:
    if sk.skill_md is None:
        return
    seen: dict[str, YScalar] = {}
    local = ck.local_tools(sk)
    declared_shared = (
        {g.name for g in doc.gate_tools}
        | {g.name for b in doc.blocks for g in b.tools}
        | {i.value for i in doc.import_tools if not i.value.startswith("mcp/")}
    ) & ck.shared_tools()
    for item in doc.import_tools:
        value = item.value
        if not value.startswith("mcp/") or ":" not in value:
            continue
        bare = value.rsplit(":", 1)[1]
        problem = None
        if bare in seen:
            problem = f"the MCP tool name `{bare}` is imported twice"
        elif bare in FRAMEWORK_TOOLS:
            problem = f"`{bare}` is a framework tool name"
        elif bare in local:
            problem = f"this skill already has a tool `{bare}`"
        elif bare in declared_shared:
            problem = f"this skill already uses the shared tool `{bare}`"
        seen.setdefault(bare, item)
        if problem:
            ck.emit(
                sk.skill_md.path,
                item.range,
                "skill.import_tools.invalid_shared_tool",
                f"cannot import `{value}`: {problem}; tools are addressed by their bare name",
            )


# -- responses referenced by gates and triggers -------------------------------------------
def check_blank_referenced(ck: Checker, path: object, node: YScalar, what: str) -> None:
    r = ck.sem.effective_response(node.value)
    if r is None:
        return
    blanks = r.blank_variants()
    if blanks:
        which = "" if len(r.variants) == 1 else f" (variant {blanks[0].index + 1})"
        ck.emit(
            path,  # type: ignore[arg-type]
            node.range,
            "mantle.validation.response.empty_body",
            f"{what} `{node.value}` has blank text{which}, so nothing would be said",
        )


# -- button sources -----------------------------------------------------------------------
def check_button_sources(ck: Checker, path: object, doc: ResponsesDoc, sid: str | None) -> None:
    for r in doc.responses:
        for v in r.variants:
            if v.source is None:
                continue
            observers = [sid] if sid is not None else sorted(ck.sem.response_users(r.name))
            if sid is None and not observers:
                ck.emit(
                    path,  # type: ignore[arg-type]
                    v.source.range,
                    "mantle.validation.response.unbound_button_source",
                    f"response `{r.name}` takes its buttons from `{v.source.value}`, but no "
                    "skill delivers it, so there is no skill whose tools could run",
                )
                continue
            for obs in observers:
                _check_source(ck, path, v.source, obs)


def _check_source(ck: Checker, path: object, node: YScalar, sid: str) -> None:
    name = node.value
    sk = ck.p.skill(sid)
    if sk is None:
        return
    doc = sk.doc
    mcp = {i.value.rsplit(":", 1)[1] for i in (doc.import_tools if doc else ()) if ":" in i.value}
    if name in mcp:
        ck.emit(
            path,  # type: ignore[arg-type]
            node.range,
            "mantle.validation.response.mcp_button_source_tool",
            f"`{name}` is an MCP tool; button sources must be local `@tool`s that call "
            "`context.set_buttons`",
        )
        return
    visible = ck.local_tools(sk) | (ck.visible_tools(sk, doc) & ck.shared_tools())
    if name not in visible and not ck.tool_visible(sk, None, name):
        ck.emit(
            path,  # type: ignore[arg-type]
            node.range,
            "mantle.validation.response.unknown_button_source_tool",
            f"`{name}` is not a tool of skill `{sid}` (nor a shared tool it uses)",
        )
        return
    if doc is not None:
        for gt in [*doc.gate_tools, *(g for b in doc.blocks for g in b.tools)]:
            if gt.name == name and gt.confirmation_enabled:
                ck.emit(
                    path,  # type: ignore[arg-type]
                    node.range,
                    "mantle.validation.response.confirming_button_source_tool",
                    f"`{name}` requires confirmation in skill `{sid}`, so it cannot build buttons",
                )
                return


# -- preconditions --------------------------------------------------------------------------
def check_precondition_chain(
    ck: Checker, path: object, sid: str, pre_node: YScalar, name: str
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
            path,  # type: ignore[arg-type]
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
                path,  # type: ignore[arg-type]
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


# -- overrides of bundled default skills ----------------------------------------------------
def check_default_override(ck: Checker, sid: str, sk: Skill, doc: SkillDoc) -> None:
    if sk.skill_md is None or sid not in DEFAULT_SKILLS:
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


# -- imports the engine cannot resolve ------------------------------------------------------
def check_lib_imports(ck: Checker, pf: object, mod: ToolModule) -> None:
    """`lib.*` imports of project helper modules that do not exist: the engine fails to
    import the tool module (it puts the project root on sys.path while loading tools).
    An import under `try: … except ImportError:` or `if TYPE_CHECKING:` is silent, one in
    a function body is a warning (the function fails when called), and a module that
    changes `sys.path` may find `lib` elsewhere: silent too."""
    from ..model.project import ParsedFile

    assert isinstance(pf, ParsedFile)
    if mod.sys_path_shim:
        return
    for imp in mod.project_imports:
        if imp.guard not in ("none", "function"):
            continue
        dotted = imp.module
        parts = dotted.split(".")
        base = ck.p.root.joinpath(*parts)
        if base.is_dir() or base.with_suffix(".py").is_file():
            continue
        if base.with_suffix(".py") in ck.p.files or base / "__init__.py" in ck.p.files:
            continue  # an open, unsaved buffer
        where = "/".join(parts)
        if imp.guard == "none":
            ck.emit(
                pf.path,
                imp.range,
                "lsp.tools.unresolved_import",
                f"`{dotted}` does not exist in this project ({where}.py or a {where}/ "
                "package), so the engine cannot import this module",
            )
        else:
            ck.emit(
                pf.path,
                imp.range,
                "lsp.tools.unresolved_import",
                f"`{dotted}` does not exist in this project ({where}.py or a {where}/ "
                "package): the module loads, but this function fails when it is called",
                "warning",
            )
