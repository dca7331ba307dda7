"""Memory: what steps write (``collect``, ``set_memory``) and ``execute_tool`` parameters
read is declared and allowed; descriptions sit where the model can see them; field names
can be referenced; and a hint on fields nothing refers to."""

from __future__ import annotations

import keyword
import re
from collections.abc import Iterator
from pathlib import Path

from ...model.layout import FileKind
from ...model.layout import FileKind as K
from ...model.project import Skill
from ...model.symbols import execute_params
from ...syntax.memory_yml import MemoryField
from ...syntax.text import TextRange
from ...syntax.yaml_tree import YMap, YScalar
from ..edits import after_line, column, content_end, delete_lines, insert_lines, is_flow, ws_edit
from ..types import CodeAction, TextEdit
from .base import Checker, Diagnostic, did_you_mean, meant, per_project, per_skill, rule
from .fix import DECLARE_FIELD, Fix, Fixes
from .flow import where


@rule(
    codes=(
        "mantle.validation.memory.undeclared_entry",
        "mantle.validation.memory.collect_on_project",
    ),
    scope="skill",
    reports_on=(K.SKILL_MD,),
    reads=(K.SKILL_MD, K.SKILL_MEMORY, K.PROJECT_MEMORY),
)
def written_keys(ck: Checker, sid: str, sk: Skill) -> None:
    """``collect:`` fills a field of this skill; ``set_memory`` keys are bare names this
    skill or the project declares."""
    doc = sk.doc
    if doc is None or sk.skill_md is None:
        return
    path = sk.skill_md.path
    for _, st in doc.steps():
        if st.kind == "collect":
            c = st.str_field("collect")
            if c:
                check_written_key(ck, path, sk, c[0], c[1].range, where(st), "collect")
        elif st.kind == "set_memory":
            sm = st.get("set_memory")
            if isinstance(sm, YMap):
                for k, _ in sm.pairs():
                    if isinstance(k.value, str):
                        check_written_key(ck, path, sk, k.value, k.range, where(st), "set_memory")


def check_written_key(
    ck: Checker, path: Path, sk: Skill, name: str, rng: TextRange, where: str, how: str
) -> None:
    if sk.field(name) is not None:
        return
    if ck.p.project_field(name) is not None:
        if how == "collect":
            ck.emit(
                path,
                rng,
                "mantle.validation.memory.collect_on_project",
                f"{where}: `collect: {name}` fills a project field; collect steps fill "
                "this skill's own fields (declare it in the skill's memory.yml)",
            )
        return
    cands = (
        [*sk.field_names(), *(f.name for f in ck.p.project_memory.fields)]
        if (ck.p.project_memory)
        else sk.field_names()
    )
    what = "`collect:`" if how == "collect" else "`set_memory`"
    ck.emit(
        path,
        rng,
        "mantle.validation.memory.undeclared_entry",
        f"{where}: {what} names `{name}`, which is declared neither in this skill's "
        f"memory.yml nor in the project memory.yml{did_you_mean(name, cands)}",
        data=meant(name, cands),
    )


@rule(
    codes=(
        "mantle.validation.execute_step.invalid_session_parameter",
        "mantle.validation.execute_step.unknown_memory_key",
    ),
    scope="skill",
    reports_on=(K.SKILL_MD,),
    reads=(K.SKILL_MD, K.SKILL_MEMORY, K.PROJECT_MEMORY),
)
def execute_parameters(ck: Checker, sid: str, sk: Skill) -> None:
    """An ``execute_tool`` parameter starting with ``session.`` is one readable key (on
    3.22 the parameters of an execute-only tool are refused and not checked further)."""
    doc = sk.doc
    if doc is None or sk.skill_md is None:
        return
    path, text = sk.skill_md.path, sk.skill_md.text
    execute_only = ck.sem.profile.execute_only_tools
    for _, st in doc.steps():
        if st.kind != "execute_tool":
            continue
        t = st.str_field("execute_tool")
        if t and t[0] in execute_only:
            continue
        for param in execute_params(text, st):
            if param.ref is None:
                ck.emit(
                    path,
                    param.range,
                    "mantle.validation.execute_step.invalid_session_parameter",
                    f"{where(st)}: parameter `{param.name}` starts with `session.` but is not "
                    "exactly one `session.<ns>.<entry>` reference",
                )
                continue
            why = ck.unreadable(sid, param.ref[0], param.ref[1])
            if why is not None:
                ck.emit(
                    path,
                    param.range,
                    "mantle.validation.execute_step.unknown_memory_key",
                    f"{where(st)}: parameter `{param.name}` reads {why.text}",
                    data=why.data,
                )


@rule(
    codes=(
        "mantle.validation.memory.description_not_exposed",
        "mantle.validation.memory.description_required",
        "mantle.validation.memory.collect_description_overrides",
    ),
    scopes=(
        per_skill(reports_on=(K.SKILL_MEMORY, K.SKILL_MD), reads=(K.SKILL_MEMORY, K.SKILL_MD)),
        per_project(reports_on=(K.PROJECT_MEMORY,), reads=(K.PROJECT_MEMORY,)),
    ),
)
def field_descriptions(ck: Checker, sid: str | None, sk: Skill | None) -> None:
    """A field the model can set (``llm_settable``, or filled by a collect step) has a
    description, on the field or on the collect step but not both; one it cannot set has
    none (nobody would see it). The model never sets a project field: none has one."""
    if sk is None:
        project_field_descriptions(ck)
        return
    md = sk.memdoc
    if md is None or sk.memory is None:
        return
    path = sk.memory.path
    collects = ck.sem.collect_steps(sk)
    for f in md.fields:
        eff = md.field(f.name)
        if eff is not f:
            continue  # a public twin shadowed by the private declaration
        settable = f.llm_settable or f.name in collects
        desc_node = f.attrs.get("description")
        if f.description and not settable:
            ck.emit(
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
            ck.emit(
                path,
                f.key.range,
                "mantle.validation.memory.description_required",
                f"`{f.name}` is {why}, so the model needs a `description:` (on the "
                "field, or on the collect step)",
            )
        elif step_has and f.description and desc_node is not None and sk.skill_md:
            assert step_desc is not None
            ck.emit(
                sk.skill_md.path,
                step_desc[1].range,
                "mantle.validation.memory.collect_description_overrides",
                f"this collect step's description replaces the one on field "
                f"`{f.name}` in memory.yml; keep one of them",
            )


def project_field_descriptions(ck: Checker) -> None:
    """A project field has no description: the model never sets project fields."""
    pf = ck.p.file_of_kind(K.PROJECT_MEMORY)
    md = ck.p.project_memory
    if pf is None or md is None:
        return
    for f in md.fields:
        if f.description:
            ck.emit(
                pf.path,
                f.attr_keys["description"].range,
                "mantle.validation.memory.description_not_exposed",
                f"project field `{f.name}` cannot have a description: the model never "
                "sets project fields; use a YAML comment instead",
            )


@rule(
    codes=("lsp.memory.unreachable_name",),
    scopes=(
        per_skill(reports_on=(K.SKILL_MEMORY,), reads=(K.SKILL_MEMORY,)),
        per_project(reports_on=(K.PROJECT_MEMORY,), reads=(K.PROJECT_MEMORY,)),
    ),
)
def field_names(ck: Checker, sid: str | None, sk: Skill | None) -> None:
    """A field name (of a skill, of the project) that some reference form can never
    reach (docs/language/memory.md#entry-names)."""
    found = ck.memory_of(sk)
    if found is None:
        return
    md, pf = found
    for f in md.fields:
        name = f.name
        problems = []
        if not name.isidentifier():
            problems.append("conditions (`session.<ns>.<entry>` needs a Python identifier)")
        elif keyword.iskeyword(name):
            problems.append(f"conditions (`{name}` is a Python keyword)")
        if not _PLACEHOLDER_NAME.match(name):
            problems.append("response placeholders (`{entry}` takes ASCII letters, digits, _)")
        if not _TOKEN_NAME.match(name):
            problems.append("`@memory` tokens")
        if problems:
            ck.emit(
                pf.path,
                f.key.range,
                "lsp.memory.unreachable_name",
                f"`{name}` can never be referenced from " + "; nor from ".join(problems),
            )


_PLACEHOLDER_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
_TOKEN_NAME = re.compile(r"[\w-]+\Z")
_ALL_CODE = (K.SKILL_TOOLS, K.SHARED_TOOLS, K.HELPER)
_EVERYTHING = (K.SKILL_MD, K.SKILL_MEMORY, K.SKILL_RESPONSES, K.PROJECT_MEMORY,
               K.PROJECT_RESPONSES, K.AGENT, *_ALL_CODE)  # fmt: skip


@rule(
    codes=("lsp.memory.unused_field",),
    scopes=(
        per_skill(reports_on=(K.SKILL_MEMORY,), reads=_EVERYTHING),
        per_project(reports_on=(K.PROJECT_MEMORY,), reads=_EVERYTHING),
    ),
)
def unused_fields(ck: Checker, sid: str | None, sk: Skill | None) -> None:
    """A hint on declared fields (of a skill, of the project) that no file of the project
    refers to by name.

    It must never be wrong, so every writer and reader the code shows counts: references
    in the index (literal keys, keys through constants and loops, `collect`, `set_memory`,
    buttons, …); a field that holds a value without a writer (``Semantics.field_writers``:
    the model, the session start, an initial value, a bundled skill) is used too, since
    the engine lists every set field in the prompt; and no field a writer whose key cannot
    be known may reach is reported (``Semantics.unknown_keys_may_reach``)."""
    found = ck.memory_of(sk)
    if found is None:
        return
    md, pf = found
    ns = sk.id if sk is not None else "project"
    for f in md.fields:
        if ck.sem.field_writers(ns, f.name) or ck.sem.unknown_keys_may_reach(ns, f.name):
            continue
        refs = ck.p.index.references_to(("field", ns, f.name))
        if any(not r.soft for r in refs):
            continue
        ck.emit(
            pf.path,
            f.key.range,
            "lsp.memory.unused_field",
            f"no condition, token, placeholder, step, button or tool code of this project "
            f"refers to `{ns}.{f.name}`",
            "hint",
        )


# -- fixes ------------------------------------------------------------------------------------


def description_not_exposed(fx: Fix, d: Diagnostic) -> Iterator[CodeAction]:
    hit = fx.attribute_at(d.range)
    if hit is None:
        return
    f = hit[0]
    edit = description_to_comment(fx, f)
    if edit is not None:
        # a project field's description has one reading (a note for the reader); a
        # skill field's may also mean "let the model set it"
        project = fx.pf.kind is FileKind.PROJECT_MEMORY
        title = "Turn the description into a comment"
        action = fx.action(title, d, ws_edit(fx.path, edit), project, project)
        yield action
    if fx.pf.kind is FileKind.SKILL_MEMORY:
        edit = set_attribute(fx, f, "llm_settable", "true")
        if edit is not None:
            yield fx.action(f"Make `{f.name}` llm_settable", d, ws_edit(fx.path, edit))


def description_to_comment(fx: Fix, f: MemoryField) -> TextEdit | None:
    """Replace ``description: …`` (all its lines) by comment lines holding its text,
    at the column of the attribute."""
    text = fx.text
    k, v = f.attr_keys["description"], f.attrs["description"]
    if not isinstance(f.node, YMap) or is_flow(text, f.node) or not isinstance(v, YScalar):
        return None
    if len(f.attrs) == 1 and fx.pf.kind is FileKind.SKILL_MEMORY:
        return None  # `name:` with nothing after it fails to load in a skill
    end = content_end(text, v)
    rm = delete_lines(text, k.range.start, end)
    if rm is None:
        return None
    tail = text[end : rm.range.end].strip()
    if tail and not tail.startswith("#"):
        return None  # something else follows on the last line
    pad = " " * column(text, k.range.start)
    lines = [f"{pad}# {line}".rstrip() for line in _description_lines(text, v)]
    if v.style in ("|", ">"):  # a comment after the `>` / `|` header stays too
        header = text[v.range.start : after_line(text, v.range.start)]
        note = re.search(r"\s#.*", header)
        if note is not None:
            lines.append(f"{pad}{note.group(0).strip()}")
    if tail:
        lines.append(f"{pad}{tail}")
    return TextEdit(rm.range, "".join(line + "\n" for line in lines))


def add_description(fx: Fix, d: Diagnostic) -> Iterator[CodeAction]:
    md = fx.memdoc()
    if md is None:
        return
    f = next((f for f in md.fields if f.key.range == d.range), None)
    if f is None:
        return
    edit = set_attribute(fx, f, "description", f"TODO describe {f.name}")
    if edit is not None:
        yield fx.action("Add a description", d, ws_edit(fx.path, edit))


def set_attribute(fx: Fix, f: MemoryField, attr: str, value: str) -> TextEdit | None:
    """Set ``attr`` of ``f`` to ``value`` (replacing a scalar value, or adding a line)."""
    text = fx.text
    node = f.node
    if attr in f.attrs:
        v = f.attrs[attr]
        if not isinstance(v, YScalar):
            return None
        if v.range.length == 0:  # `attr:` with nothing after it
            return TextEdit(v.range, " " + value)
        return TextEdit(v.range, value)
    if not isinstance(node, YMap) or not node.items:
        return None
    if is_flow(text, node):
        close = node.range.end - 1
        if text[close] != "}":
            return None
        sep = ", " if node.items else ""
        return TextEdit(TextRange(close, close), f"{sep}{attr}: {value}")
    indent = " " * column(text, node.items[0][0].range.start)
    return insert_lines(text, content_end(text, node), [f"{indent}{attr}: {value}"])


def _description_lines(text: str, v: YScalar) -> list[str]:
    """The lines of a description's text as the author wrote them: a block scalar's lines
    without their common indentation, a plain scalar's lines stripped, a quoted one's
    value."""
    if v.style in ("|", ">"):
        body = text[v.range.start : content_end(text, v)].split("\n")[1:]
        width = min((len(x) - len(x.lstrip()) for x in body if x.strip()), default=0)
        lines = [x[width:].rstrip() for x in body]
    elif v.style is None:
        lines = [x.strip() for x in text[v.range.start : content_end(text, v)].split("\n")]
    else:
        lines = [x.strip() for x in str(v.value or "").split("\n")]
    while lines and not lines[-1]:
        lines.pop()
    while lines and not lines[0]:
        lines.pop(0)
    return lines or [""]


FIXES: Fixes = {
    "mantle.validation.execute_step.unknown_memory_key": DECLARE_FIELD,
    "mantle.validation.memory.undeclared_entry": DECLARE_FIELD,
    "mantle.validation.memory.description_not_exposed": (description_not_exposed,),
    "mantle.validation.memory.description_required": (add_description,),
}
