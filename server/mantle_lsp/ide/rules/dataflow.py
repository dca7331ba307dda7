"""Data-flow checks over the whole project: fields that are read but that nothing can ever
write, and project fields that more than one skill writes (on rasa-pro 3.21 a project field
keeps its first value: a later write to it is refused while it holds a value).

Both must never be wrong, so every writer the project shows counts (the index's write
references, whatever their key form; ``llm_settable``; ``seed``; ``initial_value``;
``run_after_setting_<entry>`` tools) and code that uses memory with keys that cannot be
known silences every field it could reach, like ``lsp.memory.unused_field`` does.

"Written, never read" is deliberately not a check: the engine lists every set field the
active skill can see in the system prompt's memory section, so the model reads every field
its skill writes (docs/decisions.md).
"""

from __future__ import annotations

from ...model.defaults import DEFAULT_SKILLS
from ...model.layout import FileKind as K
from ...model.project import Skill
from ...model.semantics import READ_FORMS, WRITE_FORMS
from ...model.symbols import Reference
from ...syntax.memory_yml import MemoryField
from .base import Checker, rule

V322 = "3.22"
MAX_RELATED = 10  # read sites listed as related information
_ALL_CODE = (K.SKILL_TOOLS, K.SHARED_TOOLS, K.HELPER)
_EVERYTHING = (K.SKILL_MD, K.SKILL_MEMORY, K.SKILL_RESPONSES, K.PROJECT_MEMORY,
               K.PROJECT_RESPONSES, K.AGENT, *_ALL_CODE)  # fmt: skip
_READ_WORDS = {
    "condition": "condition",
    "memory_token": "`@memory` token",
    "placeholder": "placeholder",
    "bare_placeholder": "placeholder",
    "tool_get": "tool read",
    "execute_param": "execute parameter",
}
_WRITE_WORDS = {
    "collect": "`collect:` step",
    "set_memory": "`set_memory` step",
    "tool_set": "tool write",
    "set_payload": "`set:` button",
}


@rule(
    codes=("lsp.memory.never_written",),
    scope="skill",
    reports_on=(K.SKILL_MEMORY,),
    reads=_EVERYTHING,
)
def skill_never_written(ck: Checker, sid: str, sk: Skill) -> None:
    """A warning on a skill's fields that are read but that nothing can write."""
    never_written(ck, sk)


@rule(
    codes=("lsp.memory.never_written",),
    scope="project",
    reports_on=(K.PROJECT_MEMORY,),
    reads=_EVERYTHING,
)
def project_never_written(ck: Checker) -> None:
    """A warning on project fields that are read but that nothing can write."""
    never_written(ck, None)


def where(ck: Checker, r: Reference) -> str:
    """``path:line`` of a reference, relative to the project root (1-based line)."""
    pf = ck.p.files.get(r.path)
    line = pf.source.index.line_of(r.range.start) + 1 if pf is not None else 0
    try:
        rel = r.path.relative_to(ck.p.root).as_posix()
    except ValueError:
        rel = r.path.as_posix()
    return f"{rel}:{line}"


def reachable_by_unknown_keys(ck: Checker, sk: Skill | None, f: MemoryField) -> bool:
    """Code that uses memory with keys that cannot be known, or buttons made at run time,
    may reach ``f``."""
    facts = ck.sem.code_memory_facts()
    if facts.anything:
        return True
    sources, root_source = ck.sem.button_source_skills()
    if root_source or (sources and sk is None) or (sk is not None and sk.id in sources):
        return True
    if sk is not None:
        if sk.id in facts.dynamic_skills:
            return True
        return f.scope == "public" and bool(facts.dynamic_skills - {sk.id})
    return bool(facts.dynamic_skills)


def never_written(ck: Checker, sk: Skill | None) -> None:
    """Fields read somewhere that no writer of the project can ever give a value: each
    condition on them sees None, each token and placeholder renders nothing."""
    md = sk.memdoc if sk is not None else ck.p.project_memory
    pf = sk.memory if sk is not None else ck.p.file_of_kind(K.PROJECT_MEMORY)
    if md is None or pf is None or (sk is not None and sk.id in DEFAULT_SKILLS):
        return
    facts = ck.sem.code_memory_facts()
    ns = sk.id if sk is not None else "project"
    hooks = (
        {t.name for _, mod in sk.tool_modules() for t in mod.tools}
        if sk is not None
        else set(facts.tool_names)
    )
    for f in md.fields:
        if f.llm_settable or f.seed or f.value("initial_value") is not None:
            continue
        if f"run_after_setting_{f.name}" in hooks or ck.sem.field_writers(ns, f.name):
            continue
        if f.name in facts.shared_entries or f"{ns}.{f.name}" in facts.shared_entries:
            continue  # a bare key in shared code may be this field: it may write it
        if reachable_by_unknown_keys(ck, sk, f):
            continue
        refs = [r for r in ck.p.index.references_to(("field", ns, f.name)) if not r.soft]
        if any(r.form not in READ_FORMS for r in refs):
            continue  # a writer, or a form this check does not know: stay silent
        reads = sorted(refs, key=lambda r: (str(r.path), r.range.start))
        if not reads:
            continue  # nothing reads it: lsp.memory.unused_field says so
        conds = [r for r in reads if r.form == "condition"]
        shown = ", ".join(f"{_READ_WORDS.get(r.form, r.form)} at {where(ck, r)}" for r in reads[:4])
        more = f" and {len(reads) - 4} more" if len(reads) > 4 else ""
        constant = (
            " so every condition on it is decided by None (`is None` is always true, "
            "comparisons with values always false)"
            if conds
            else ""
        )
        ck.emit(
            pf.path,
            f.key.range,
            "lsp.memory.never_written",
            f"`{ns}.{f.name}` is read ({shown}{more}) but nothing in this project can write "
            f"it (not llm_settable, no seed or initial_value, no collect, set_memory, set: "
            f"button, tool write or run_after_setting_{f.name} hook): it is always None,"
            f"{constant}".rstrip(","),
            related=[
                ck.related(r.path, r.range, f"read here ({_READ_WORDS.get(r.form, r.form)})")
                for r in reads[:MAX_RELATED]
            ],
        )


# -- project fields written by more than one skill --------------------------------------


@rule(
    codes=("lsp.memory.project_field_written_twice",),
    scope="project",
    reports_on=(K.SKILL_MD, K.SKILL_RESPONSES, K.PROJECT_RESPONSES, K.SKILL_TOOLS, K.SHARED_TOOLS),
    reads=_EVERYTHING,
)
def project_written_twice(ck: Checker) -> None:
    """A project field that writers in more than one place may write in one session: the
    first write that gives it a value wins, the engine refuses the later ones."""
    md = ck.p.project_memory
    if md is None:
        return
    reportable = {K.SKILL_MD, K.SKILL_RESPONSES, K.PROJECT_RESPONSES, K.SKILL_TOOLS, K.SHARED_TOOLS}
    for f in md.fields:
        if ck.p.engine == V322 and f.value("mutable") is True:
            continue  # 3.22: a mutable project field may be overwritten
        writes = [
            r
            for r in ck.p.index.references_to(("field", "project", f.name))
            if not r.soft and r.form in WRITE_FORMS
        ]
        if not writes:
            continue
        writes.sort(key=lambda r: (str(r.path), r.range.start))
        first = writes[0]
        owner = _owner(ck, first)
        for r in writes:
            pf = ck.p.files.get(r.path)
            if pf is None or pf.kind not in reportable:
                continue
            if r.form == "collect":
                continue  # a collect of a field that has a value asks nothing
            if owner is None or _owner(ck, r) is None or _owner(ck, r) == owner:
                continue  # one skill's own writers (e.g. branches), or shared code
            else:
                why = (
                    f"`project.{f.name}` is also written by skill `{owner}` "
                    f"({_WRITE_WORDS.get(first.form, 'write')} at {where(ck, first)}); a project "
                    f"field keeps its first value in a session, so once that write has given it "
                    f"a value this {_WRITE_WORDS.get(r.form, 'write')} is refused"
                )
            ck.emit(
                r.path,
                r.range,
                "lsp.memory.project_field_written_twice",
                why,
                "hint",
                related=[
                    ck.related(
                        first.path,
                        first.range,
                        f"first written here by skill `{owner}` "
                        f"({_WRITE_WORDS.get(first.form, 'write')})",
                    )
                ],
            )


def _owner(ck: Checker, r: Reference) -> str | None:
    """The skill a write runs in: its file's skill (None: shared code or the project-root
    responses file, which any skill may run)."""
    pf = ck.p.files.get(r.path)
    return pf.skill_id if pf is not None else None
