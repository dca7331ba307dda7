"""Rules that depend on the engine-version profile (model/engine.py).

On ``3.21`` the 3.22 attributes ``mutable`` and ``writable_by`` are ignored by the engine
(the memory.yml parser warns about them). On ``3.22`` they are real: only project fields
may carry them, ``writable_by`` names skills, and writes from unlisted skills are errors.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..model.project import Skill
from ..syntax.memory_yml import C_ENGINE_322, MemoryField
from ..syntax.skill_md import SkillDoc
from ..syntax.yaml_tree import YMap, YScalar, YSeq

if TYPE_CHECKING:
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
                if attr in f.attr_keys:
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
        node = f.attrs.get("writable_by")
        if not isinstance(node, YSeq):
            continue
        for item in node.items:
            if isinstance(item, YScalar) and not ck.p.has_skill(str(item.value)):
                from .diagnostics import did_you_mean

                ck.emit(
                    pmf.path,
                    item.range,
                    "mantle.validation.memory.writable_by_lists_unknown_skill",
                    f"`writable_by` of `{f.name}` names `{item.raw}`, which is not a skill"
                    f"{did_you_mean(item.raw, ck.p.catalog_ids())}",
                )


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
                f = ck.p.project_field(name)
                allowed = writable_by(f) if f is not None else None
                if allowed is not None and sid not in allowed:
                    ck.emit(
                        path,
                        k.range,
                        "mantle.validation.memory.set_memory_skill_not_in_writable_by",
                        f"project field `{name}` may only be written by {', '.join(allowed)} "
                        f"(`writable_by`), not by `{sid}`",
                    )
        if st.kind == "execute_tool":
            t = st.str_field("execute_tool")
            params = st.node.key_node("parameters") if isinstance(st.node, YMap) else None
            if t and t[0] == "record_handoff" and params is not None:
                ck.emit(
                    path,
                    params.range,
                    "mantle.validation.execute_step.unexpected_parameters",
                    "`record_handoff` takes no `parameters`",
                )


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
