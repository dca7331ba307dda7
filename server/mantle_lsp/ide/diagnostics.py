"""Diagnostics: every problem of a project as (file, exact range, code, severity, message).

Plain data in (a :class:`~mantle_lsp.model.project.Project`), plain data out. Problems of a
single file come from its parser; everything else from the rules in
:mod:`mantle_lsp.ide.rules`, which this module runs: all of them for a whole project, or
only those that can report on the files an editor needs after an edit.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from ..model.layout import FileKind
from ..model.project import ParsedFile, Project, bulk_work
from .rules import RULES, profile
from .rules.base import (
    Checker,
    Diagnostic,
    describe_unreadable,
    describe_unwritable,
    did_you_mean,
)

__all__ = [
    "Checker",
    "Diagnostic",
    "describe_unreadable",
    "describe_unwritable",
    "did_you_mean",
    "file_diagnostics",
    "first_look",
    "first_look_complete",
    "project_diagnostics",
    "rechecked",
    "run",
]


def run(
    project: Project, only: Iterable[Path] | None = None, whole: bool = True
) -> dict[Path, list[Diagnostic]]:
    """Check the whole project, or only what can report on the files in ``only``: the
    parse issues of those files, the skill rules of the skills they belong to, and the
    project rules that report on their kinds of file. With ``whole`` False, the rules
    that read every file's references are left out (see :func:`first_look`)."""
    ck = Checker(project)
    wanted = None if only is None else set(only)
    p = project
    if wanted is None:
        files: list[ParsedFile] = list(p.files.values())
    else:
        files = [p.files[path] for path in wanted if path in p.files]
    ck.out = {pf.path: [] for pf in files}
    for pf in files:
        for issue in pf.issues:
            if profile.parse_issue_applies(ck, issue.code):
                ck.emit(pf.path, issue.range, issue.code, issue.message, issue.severity, issue.data)
    kinds = {pf.kind for pf in files}
    skills = {pf.skill_id for pf in files if pf.skill_id is not None}
    anchor = p.anchor_file()
    checked = [(sid, sk) for sid, sk in p.skills.items() if wanted is None or sid in skills]
    for rule in RULES:
        ck.rule = rule
        for scope in rule.scopes:
            if not whole and scope.whole_project:
                continue
            if scope.scope == "skill":
                for sid, sk in checked:
                    rule.run(ck, scope, sid, sk)
            elif scope.scope == "anchor":
                if wanted is None or (anchor is not None and anchor.path in wanted):
                    rule.run(ck, scope)
            elif wanted is None or kinds & scope.reports_on:
                rule.run(ck, scope)
    ck.rule = None
    if wanted is not None:
        ck.out = {path: ds for path, ds in ck.out.items() if path in wanted}
    for diags in ck.out.values():
        diags.sort(key=lambda d: (d.range.start, d.range.end, d.code))
    return ck.out


def first_look(project: Project, paths: Iterable[Path]) -> dict[Path, list[Diagnostic]]:
    """The diagnostics of some files of a project loaded around their skill
    (``Project.load_around``), before the whole project is: every rule but those that
    read every file's references (data flow: never written, unused, written twice,
    constant conditions). What it reports equals those files' entries of
    :func:`project_diagnostics` less those rules' findings (a test compares them on
    every fixture project)."""
    return run(project, paths, whole=False)


# at most this many files are parsed to find the writers of the fields a first look's
# conditions read (beyond those it parsed already)
MAX_WRITER_FILES = 40
# where a writer of a field is looked for first: code, then steps, then buttons
_WRITER_KINDS = (
    FileKind.SKILL_TOOLS,
    FileKind.SHARED_TOOLS,
    FileKind.HELPER,
    FileKind.SKILL_MD,
    FileKind.SKILL_RESPONSES,
    FileKind.PROJECT_RESPONSES,
)


def first_look_complete(project: Project, path: Path, sid: str) -> bool:
    """Whether :func:`first_look` at the skill.md ``path`` (of skill ``sid``, its project
    loaded around it) is all the whole check reports on it: the rules it leaves out
    certainly report nothing there. Those rules can report on a skill.md only on a
    condition that a never-written field decides and on a write of a project field
    (``dataflow.unproven_on_skill_md``; a rule added to them that reports on skill.md
    files makes every first look incomplete until it is answered for here too). A field
    read there that the files loaded do not show written is looked for in the others
    that name it, parsing at most :data:`MAX_WRITER_FILES` of them (its own skill's
    files and the code first): one writer settles it.

    An editor shows a first look early only when it is complete: what it shows then is
    what it shows once the whole project is loaded."""
    from .rules.dataflow import (
        SKILL_MD_WHOLE_PROJECT_RULES,
        unproven_on_skill_md,
        written_for_certain,
    )

    left_out = {
        r.name
        for r in RULES
        for s in r.scopes
        if s.whole_project and FileKind.SKILL_MD in s.reports_on
    }
    if not left_out <= SKILL_MD_WHOLE_PROJECT_RULES:
        return False
    ck = Checker(project)
    unproven = unproven_on_skill_md(ck, path, sid)
    if unproven is None:
        return False
    if not unproven:
        return True
    indexed = project.indexed
    if indexed is None:
        return False  # a whole project that does not show them written
    budget = MAX_WRITER_FILES
    rank = {k: i for i, k in enumerate(_WRITER_KINDS)}
    for ns, entry in sorted(unproven):
        candidates = sorted(
            (pf.skill_id != ns, rank[pf.kind], p)
            for p, pf in project.files.items()
            if p not in indexed and pf.kind in rank and entry in pf.source.text
        )
        for _, _, candidate in candidates:
            if budget == 0:
                return False
            budget -= 1
            project.index_more([candidate])
            ck = Checker(project)  # the index grew
            if written_for_certain(ck, ns, entry):
                break
        else:
            return False
    return True


# Project files whose edits the index cannot trace to the files that depend on them (which
# tool modules import a lib helper is not indexed): the skill rules reading them re-check
# every file they report on.
_FAN_OUT = frozenset({FileKind.HELPER})


def rechecked(project: Project, paths: Iterable[Path]) -> set[Path]:
    """``paths`` (the files an edit affected, as :meth:`Project.set_source` computes them
    from the index) plus the project files that a project rule reading one of their kinds
    reports on: what the rules' ``reads`` declarations add to the index's answer (for
    example agent.yml, whose precondition bindings are checked against every skill.md)."""
    out = set(paths)
    kinds: set[FileKind] = set()
    for p in out:
        pf = project.files.get(p)
        if pf is not None:
            kinds.add(pf.kind)
        elif (c := project.classify(p)) is not None:  # a file just deleted: what it was
            kinds.add(c[0])
    wanted: set[FileKind] = set()
    every_skill: set[FileKind] = set()
    anchor = False
    for scope in (s for rule in RULES for s in rule.scopes):
        if not (scope.reads & kinds):
            continue
        if scope.scope == "anchor":
            anchor = True
        elif scope.scope == "project":
            wanted |= scope.reports_on
        elif scope.reads & kinds & _FAN_OUT:
            every_skill |= scope.reports_on
    if wanted:
        outside = project.paths_by_kind(project_level=True)
        out.update(p for kind in wanted for p in outside.get(kind, ()))
    if every_skill:
        by_kind = project.paths_by_kind()
        out.update(p for kind in every_skill for p in by_kind.get(kind, ()))
    if anchor and (af := project.anchor_file()) is not None:
        out.add(af.path)
    return out


def project_diagnostics(project: Project) -> dict[Path, list[Diagnostic]]:
    """Every diagnostic of ``project``, per file, sorted by position."""
    with bulk_work():
        return run(project)


def file_diagnostics(project: Project, paths: Iterable[Path]) -> dict[Path, list[Diagnostic]]:
    """The diagnostics of some files of ``project`` (what an editor needs after an edit:
    the files :meth:`Project.set_source` reported as affected). Runs only the rules that
    can report on those files; equal to the same files' entries of
    :func:`project_diagnostics`."""
    return run(project, paths)
