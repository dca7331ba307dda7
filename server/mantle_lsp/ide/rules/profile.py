"""Rules of the rasa-pro 3.22 profile (``mutable`` / ``writable_by`` on project fields):
skill fields may not carry them, ``writable_by`` names skills, and steps and tools of
skills it does not list may not write the field. Under 3.21 the engine ignores both
attributes (the memory.yml parser warns about them)."""

from __future__ import annotations

from pathlib import Path

from ...model.layout import FileKind as K
from ...model.project import Skill
from ...syntax.memory_yml import C_ENGINE_322, MemoryField, attribute_type_problems
from ...syntax.yaml_tree import YMap, YScalar, YSeq, lax_bool, to_python
from .base import Checker, did_you_mean, meant, per_project, per_skill, rule


def parse_issue_applies(ck: Checker, code: str) -> bool:
    """Parse issues that do not apply under the project's profile (the warning that 3.21
    ignores the 3.22 field attributes, on a profile that reads them)."""
    return not (code == C_ENGINE_322 and ck.sem.profile.field_attributes)


MEMORY_CODES = (
    "mantle.validation.memory.skill_field_mutable_not_allowed",
    "mantle.validation.memory.skill_field_writable_by_not_allowed",
    "mantle.validation.memory.writable_by_lists_unknown_skill",
    "mantle.validation.skill.failed_to_load",
    "lsp.memory.invalid_shape",
)


@rule(
    codes=MEMORY_CODES,
    scopes=(
        per_skill(reports_on=(K.SKILL_MEMORY,), reads=(K.SKILL_MEMORY,)),
        per_project(reports_on=(K.PROJECT_MEMORY,), reads=(K.PROJECT_MEMORY, K.SKILL_MD)),
    ),
)
def field_attributes(ck: Checker, sid: str | None, sk: Skill | None) -> None:
    """3.22: ``mutable`` / ``writable_by`` are for project fields only (on a skill field a
    wrong type fails the skill), where they are well typed and name skills."""
    attributes = ck.sem.profile.field_attributes
    if not attributes:
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
                node = f.attrs.get(attr) if attr in attributes else None
                if node is None:
                    continue
                bad = attribute_type_problems(f, attr, node)
                for rng, why in bad:
                    ck.emit(
                        pf.path,
                        rng,
                        "mantle.validation.skill.failed_to_load",
                        f"{why}; rasa-pro 3.22 fails to load the skill",
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
        _check_attribute_types(ck, pmf.path, f, attributes)
        node = f.attrs.get("writable_by")
        if not isinstance(node, YSeq):
            continue
        for item in node.items:
            if not (isinstance(item, YScalar) and isinstance(item.value, str)):
                continue
            if not ck.p.has_skill(item.value):
                ck.emit(
                    pmf.path,
                    item.range,
                    "mantle.validation.memory.writable_by_lists_unknown_skill",
                    f"`writable_by` of `{f.name}` names `{item.raw}`, which is not a skill"
                    f"{did_you_mean(item.raw, ck.p.catalog_ids())}",
                    data=meant(item.raw, ck.p.catalog_ids()),
                )


def _check_attribute_types(
    ck: Checker, path: Path, f: MemoryField, attributes: tuple[str, ...]
) -> None:
    """A `mutable` that is not a boolean, or a `writable_by` that is not a list of skill
    ids, makes the 3.22 engine crash on the project memory.yml."""
    for attr in attributes:
        node = f.attrs.get(attr)
        if node is not None:
            for rng, why in attribute_type_problems(f, attr, node):
                ck.emit(
                    path,
                    rng,
                    "lsp.memory.invalid_shape",
                    f"{why}; rasa-pro 3.22 crashes on this file",
                )


@rule(
    codes=(
        "mantle.validation.memory.set_memory_skill_not_in_writable_by",
        "mantle.validation.execute_step.unexpected_parameters",
    ),
    scope="skill",
    reports_on=(K.SKILL_MD,),
    reads=(K.SKILL_MD, K.PROJECT_MEMORY),
)
def step_writes(ck: Checker, sid: str, sk: Skill) -> None:
    """3.22: a ``set_memory`` step writes a project field only from a skill its
    ``writable_by`` lists; an execute-only engine tool takes no ``parameters``."""
    doc = sk.doc
    if doc is None:
        return
    prof = ck.sem.profile
    if not (prof.has_writable_by or prof.execute_only_tools) or sk.skill_md is None:
        return
    path = sk.skill_md.path
    for _, st in doc.steps():
        if st.kind == "set_memory" and prof.has_writable_by:
            sm = st.get("set_memory")
            if not isinstance(sm, YMap):
                continue
            for k, _ in sm.pairs():
                name = str(k.value)
                if sk.field(name) is not None:
                    continue
                # `project.<x>` names the project field too (the engine also reports that
                # key as undeclared: it is refused twice)
                entry = name.removeprefix("project.")
                refused = ck.sem.project_write_refused(sid, entry, [sid])
                if refused is not None:
                    ck.emit(
                        path,
                        k.range,
                        "mantle.validation.memory.set_memory_skill_not_in_writable_by",
                        f"project field `{entry}` may only be written by "
                        f"{', '.join(refused.allowed)} (`writable_by`), not by `{sid}`",
                    )
        if st.kind == "execute_tool":
            t = st.str_field("execute_tool")
            params = st.node.key_node("parameters") if isinstance(st.node, YMap) else None
            value = st.get("parameters")
            # an empty mapping passes nothing; a value that is not a mapping is a compile
            # error of the step, reported by the parser
            if t and t[0] in prof.execute_only_tools and params is not None and _filled_map(value):
                ck.emit(
                    path,
                    params.range,
                    "mantle.validation.execute_step.unexpected_parameters",
                    f"`{t[0]}` is an execute-only engine tool and takes no `parameters`",
                )


def _filled_map(node: object) -> bool:
    return isinstance(node, YMap) and any(True for _ in node.pairs())


@rule(
    codes=(
        "mantle.validation.tools.tool_bare_memory_set_writes_skill_not_project_warning",
        "mantle.validation.tools.tool_sets_project_field_skill_not_in_writable_by",
    ),
    scopes=(
        per_skill(
            reports_on=(K.SKILL_TOOLS,), reads=(K.SKILL_TOOLS, K.SKILL_MEMORY, K.PROJECT_MEMORY)
        ),
        per_project(reports_on=(K.SHARED_TOOLS,), reads=(K.SHARED_TOOLS, K.PROJECT_MEMORY)),
    ),
)
def tool_writes(ck: Checker, sid: str | None, sk: Skill | None) -> None:
    """3.22: a skill's tools write project fields only where ``writable_by`` allows, and
    shared tools never write a project field that has one."""
    prof = ck.sem.profile
    if not (prof.has_writable_by or prof.warns_shadowed_bare_set):
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
                if prof.warns_shadowed_bare_set and ck.p.project_field(name) is not None:
                    ck.emit(
                        pf.path,
                        call.literal_range,
                        "mantle.validation.tools.tool_bare_memory_set_writes_skill_not_project_warning",
                        f"`{name}` is declared on skill `{sid}` and on the project: the bare "
                        f"name writes the skill field; write `project.{name}` for the project one",
                    )
                continue
            refused = ck.sem.project_write_refused(sid, pname, [sid]) if pname else None
            if refused is not None:
                who = "a shared tool" if sid is None else f"a tool of `{sid}`"
                ck.emit(
                    pf.path,
                    call.literal_range,
                    "mantle.validation.tools.tool_sets_project_field_skill_not_in_writable_by",
                    f"project field `{pname}` may only be written by "
                    f"{', '.join(refused.allowed)} (`writable_by`); {who} may not write it",
                )
