"""Rules that depend on the engine-version profile (model/engine.py).

On ``3.21`` the 3.22 attributes ``mutable`` and ``writable_by`` are ignored by the engine
(the memory.yml parser warns about them). On ``3.22`` they are real: only project fields
may carry them, ``writable_by`` names skills, and writes from unlisted skills are errors.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..model.defaults import EXECUTE_ONLY_TOOLS
from ..model.project import Skill
from ..syntax.memory_yml import C_ENGINE_322, C_SHAPE, C_SKILL_LOAD, MemoryField
from ..syntax.skill_md import SkillDoc
from ..syntax.text import TextRange
from ..syntax.yaml_tree import YMap, YNode, YScalar, YSeq, describe, lax_bool, to_python

if TYPE_CHECKING:
    from pathlib import Path

    from .diagnostics import Checker

V322 = "3.22"
C_BARE_TWIN = "mantle.validation.tools.tool_bare_memory_set_writes_skill_not_project_warning"


def suppressed(ck: Checker, code: str) -> bool:
    """Parse issues that do not apply under the project's profile."""
    return code == C_ENGINE_322 and ck.p.engine == V322


def writable_by(f: MemoryField) -> list[str] | None:
    v = f.value("writable_by")
    return [str(x) for x in v] if isinstance(v, list) and v else None


def check_memory(ck: Checker, sk: Skill | None) -> None:
    if ck.p.engine != V322:
        return
    if sk is not None:
        md, pf = sk.memdoc, sk.memory
        if md is None or pf is None:
            return
        for f in md.fields:
            for attr, code in (
                ("mutable", "mantle.validation.memory.skill_field_mutable_not_allowed"),
                ("writable_by", "mantle.validation.memory.skill_field_writable_by_not_allowed"),
            ):
                node = f.attrs.get(attr)
                if node is None:
                    continue
                bad = _type_problems(f, attr, node)
                for rng, why in bad:
                    ck.emit(
                        pf.path, rng, C_SKILL_LOAD, f"{why}; rasa-pro 3.22 fails to load the skill"
                    )
                # `mutable: false` and `writable_by: []` change nothing: the engine accepts them
                if not bad and (
                    lax_bool(to_python(node)) or (isinstance(node, YSeq) and node.items)
                ):
                    ck.emit(
                        pf.path,
                        f.attr_keys[attr].range,
                        code,
                        f"`{attr}` is for project fields only; skill field `{f.name}` is reset "
                        "on every run of its skill and only that skill writes it",
                    )
        return
    md = ck.p.project_memory
    pmf = ck.p.project_memory_file()
    if md is None or pmf is None:
        return
    for f in md.fields:
        _check_attribute_types(ck, pmf.path, f)
        node = f.attrs.get("writable_by")
        if not isinstance(node, YSeq):
            continue
        for item in node.items:
            if not (isinstance(item, YScalar) and isinstance(item.value, str)):
                continue
            if not ck.p.has_skill(item.value):
                from .diagnostics import did_you_mean

                ck.emit(
                    pmf.path,
                    item.range,
                    "mantle.validation.memory.writable_by_lists_unknown_skill",
                    f"`writable_by` of `{f.name}` names `{item.raw}`, which is not a skill"
                    f"{did_you_mean(item.raw, ck.p.catalog_ids())}",
                )


def _check_attribute_types(ck: Checker, path: Path, f: MemoryField) -> None:
    """A `mutable` that is not a boolean, or a `writable_by` that is not a list of skill
    ids, makes the 3.22 engine crash on the project memory.yml."""
    for attr in ("mutable", "writable_by"):
        node = f.attrs.get(attr)
        if node is not None:
            for rng, why in _type_problems(f, attr, node):
                ck.emit(path, rng, C_SHAPE, f"{why}; rasa-pro 3.22 crashes on this file")


def _type_problems(f: MemoryField, attr: str, node: YNode) -> list[tuple[TextRange, str]]:
    """Where `mutable` is not a boolean (pydantic's lax reading, no null) or `writable_by`
    not a list of strings."""
    if attr == "mutable":
        if isinstance(node, YScalar) and lax_bool(node.value) is not None:
            return []
        return [
            (node.range, f"`mutable` of `{f.name}` must be true or false (found {describe(node)})")
        ]
    if not isinstance(node, YSeq):
        return [
            (
                node.range,
                f"`writable_by` of `{f.name}` must be a list of skill ids, e.g. `[card]` "
                f"(found {describe(node)})",
            )
        ]
    return [
        (
            item.range,
            f"`writable_by` of `{f.name}` lists skill ids, which are strings (found "
            f"{describe(item)})",
        )
        for item in node.items
        if not (isinstance(item, YScalar) and isinstance(item.value, str))
    ]


def check_skill(ck: Checker, sid: str, sk: Skill, doc: SkillDoc) -> None:
    if ck.p.engine != V322 or sk.skill_md is None:
        return
    path = sk.skill_md.path
    for _, st in doc.steps():
        if st.kind == "set_memory":
            sm = st.get("set_memory")
            if not isinstance(sm, YMap):
                continue
            for k, _ in sm.pairs():
                name = str(k.value)
                if sk.field(name) is not None:
                    continue
                # `project.<x>` names the project field too (the engine also reports that
                # key as undeclared: it is refused twice)
                f = ck.p.project_field(name.removeprefix("project."))
                allowed = writable_by(f) if f is not None else None
                if allowed is not None and sid not in allowed:
                    ck.emit(
                        path,
                        k.range,
                        "mantle.validation.memory.set_memory_skill_not_in_writable_by",
                        f"project field `{name.removeprefix('project.')}` may only be written "
                        f"by {', '.join(allowed)} "
                        f"(`writable_by`), not by `{sid}`",
                    )
        if st.kind == "execute_tool":
            t = st.str_field("execute_tool")
            params = st.node.key_node("parameters") if isinstance(st.node, YMap) else None
            value = st.get("parameters")
            # an empty mapping passes nothing; a value that is not a mapping is a compile
            # error of the step, reported by the parser
            if t and t[0] in EXECUTE_ONLY_TOOLS and params is not None and _filled_map(value):
                ck.emit(
                    path,
                    params.range,
                    "mantle.validation.execute_step.unexpected_parameters",
                    f"`{t[0]}` is an execute-only engine tool and takes no `parameters`",
                )
    _check_import_tools(ck, sk, doc)


def _filled_map(node: object) -> bool:
    return isinstance(node, YMap) and any(True for _ in node.pairs())


def _check_import_tools(ck: Checker, sk: Skill, doc: SkillDoc) -> None:
    """3.22 reserves the execute-only tool names for MCP imports too."""
    assert sk.skill_md is not None
    for item in doc.import_tools:
        value = item.value
        if value.startswith("mcp/") and ":" in value:
            bare = value.rsplit(":", 1)[1]
            if bare in EXECUTE_ONLY_TOOLS:
                ck.emit(
                    sk.skill_md.path,
                    item.range,
                    "skill.import_tools.invalid_shared_tool",
                    f"cannot import `{value}`: `{bare}` is reserved for the engine's "
                    "execute-only tool (rasa-pro 3.22)",
                )


def check_tool_names(ck: Checker, sid: str | None, sk: Skill | None) -> None:
    """3.22 refuses project tools named like an execute-only engine tool (3.21 accepts
    them); the engine raises while loading the tools."""
    if ck.p.engine != V322:
        return
    modules = sk.tool_modules() if sk is not None else ck.p.shared_tool_files()
    for pf, mod in modules:
        for t in mod.tools:
            if t.kind != "possible" and t.name in EXECUTE_ONLY_TOOLS:
                ck.emit(
                    pf.path,
                    t.name_range,
                    "mantle.validation.tools.reserved_name",
                    f"`{t.name}` is the name of an execute-only engine tool in rasa-pro 3.22, "
                    "which refuses to load the tools; rename the function",
                )


def button_write_refused(ck: Checker, path: Path, sid: str | None, sp: Any) -> bool:
    """3.22: a `set:session.project.<x>` button whose field has `writable_by` may be tapped
    only while a listed skill is active: the skill of a skill's responses.yml, or every
    skill that delivers a response of the root responses.yml (at least one)."""
    if ck.p.engine != V322 or sp.namespace != "project":
        return False
    f = ck.p.project_field(sp.entry)
    allowed = writable_by(f) if f is not None else None
    if allowed is None:
        return False
    users = {sid} if sid is not None else ck.response_users_of(sp)
    refused = sorted(users - set(allowed))
    if users and not refused:
        return False
    if not users:
        why = "no skill delivers this response"
    elif sid is not None:
        why = f"skill `{sid}` is not listed"
    else:
        why = f"it is delivered by {', '.join(f'`{u}`' for u in refused)}, not listed"
    ck.emit(
        path,
        sp.range,
        "mantle.validation.response.not_writable_memory_key",
        f"a button tap cannot write `project.{sp.entry}`: only {', '.join(allowed)} may "
        f"write it (`writable_by`) and {why}",
    )
    return True


def check_tool_writes(ck: Checker, sid: str | None, sk: Skill | None) -> None:
    if ck.p.engine != V322:
        return
    modules = sk.tool_modules() if sk is not None else ck.p.shared_tool_files()
    for pf, mod in modules:
        for call in mod.memory_calls:
            if call.method != "set" or not call.engine_counted:
                continue
            name = call.entry
            if name.startswith("project."):
                pname = name[len("project.") :]
            elif "." not in name and (sk is None or sk.field(name) is None):
                pname = name
            else:
                pname = ""
            if "." not in name and sk is not None and sk.field(name) is not None:
                if ck.p.project_field(name) is not None:
                    ck.emit(
                        pf.path,
                        call.literal_range,
                        C_BARE_TWIN,
                        f"`{name}` is declared on skill `{sid}` and on the project: the bare "
                        f"name writes the skill field; write `project.{name}` for the project one",
                    )
                continue
            f = ck.p.project_field(pname) if pname else None
            allowed = writable_by(f) if f is not None else None
            if allowed is None:
                continue
            if sid is None or sid not in allowed:
                who = "a shared tool" if sid is None else f"a tool of `{sid}`"
                ck.emit(
                    pf.path,
                    call.literal_range,
                    "mantle.validation.tools.tool_sets_project_field_skill_not_in_writable_by",
                    f"project field `{pname}` may only be written by {', '.join(allowed)} "
                    f"(`writable_by`); {who} may not write it",
                )
