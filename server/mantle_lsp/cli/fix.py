"""``check --fix`` / ``--diff``: apply the code actions of the findings, in rounds.

Each round checks the projects (reading the texts fixed so far instead of the disk),
picks one fix per finding — the safe one (``CodeAction.safe``), or with
``--unsafe-fixes`` also an unsafe one, and only when the choice is clear: the preferred
action, or the only one — and applies those whose edits do not overlap an edit already
taken; the others wait for the next round, which sees the new text. It stops when a
round finds nothing to fix (or after MAX_ROUNDS). The edits are text replacements on
exact ranges, so comments and formatting elsewhere stay as they are; a file's BOM and
CRLF line breaks are kept (a file mixing line-break styles is not fixed).
"""

from __future__ import annotations

import dataclasses
import difflib
from collections.abc import Callable, Sequence
from pathlib import Path

from .. import atomic
from ..ide.code_actions import CodeAction
from ..ide.fixes import choose, fixes_for, overlaps
from ..ide.types import TextEdit
from ..model.layout import inside, remembered_links
from ..model.project import Project, Reader
from ..model.source import Source, read_source, source_from_text
from ..syntax.text import BOM
from .output import Finding, Help, display_path

MAX_ROUNDS = 10

# (projects, findings) of one check, reading files through the given reader
Collect = Callable[[Reader | None], tuple[dict[Path, Project], list[Finding]]]


def actions_for(project: Project, f: Finding) -> list[CodeAction]:
    """The fixes the editor offers for the finding (none for an unreadable file; not
    "Ignore … here", which only silences it)."""
    return fixes_for(project, f.diag)


def add_helps(projects: dict[Path, Project], findings: Sequence[Finding]) -> None:
    with remembered_links():
        _add_helps(projects, findings)


def _add_helps(projects: dict[Path, Project], findings: Sequence[Finding]) -> None:
    for f in findings:
        proj = projects.get(f.root)
        if proj is not None:
            if proj.has_pending:  # a check spread over processes: fixes need every file
                proj.materialize()
            actions = actions_for(proj, f)
            f.helps = [Help(a.title, a.safe) for a in actions]
            f.fix = (
                "safe" if choose(actions, False) else "unsafe" if choose(actions, True) else None
            )


@dataclasses.dataclass
class _File:
    """A file being fixed: how it is stored on disk, and its fixed text (normalized)."""

    path: Path
    root: Path
    original: str | None  # normalized text before the fixes; None: a new file
    text: str
    bom: bool = False
    crlf: bool = False

    def stored(self, text: str | None) -> str:
        if text is None:
            return ""
        if self.crlf:
            text = text.replace("\n", "\r\n")
        return (BOM if self.bom else "") + text


@dataclasses.dataclass
class FixResult:
    files: dict[Path, _File]
    fixed: int  # findings fixed
    exhausted: bool  # MAX_ROUNDS reached with fixes left
    projects: dict[Path, Project]
    findings: list[Finding]  # those left after the fixes

    @property
    def changed(self) -> list[_File]:
        return [f for _, f in sorted(self.files.items()) if f.text != f.original]


def _open(path: Path, root: Path) -> _File | None:
    """The file as it is on disk, or None when it cannot be fixed safely (not UTF-8,
    mixed line breaks, a lone CR)."""
    try:
        raw = path.read_bytes().decode("utf-8")
    except (OSError, UnicodeDecodeError):
        return None
    bom = raw.startswith(BOM)
    body = raw[1:] if bom else raw
    crlf = body.count("\r\n")
    if body.count("\r") != crlf or (crlf and body.count("\n") != crlf):
        return None
    text = body.replace("\r\n", "\n")
    return _File(path, root, text, text, bom, crlf > 0)


def _apply(text: str, edits: list[TextEdit]) -> str:
    for e in sorted(edits, key=lambda e: e.range.start, reverse=True):
        text = text[: e.range.start] + e.new_text + text[e.range.end :]
    return text


def run(collect: Collect, unsafe: bool) -> FixResult:
    files: dict[Path, _File] = {}
    broken: set[Path] = set()  # files that cannot be fixed

    def reader(path: Path) -> Source:
        f = files.get(path)
        return source_from_text(path, f.text) if f is not None else read_source(path)

    fixed = 0
    for round_ in range(MAX_ROUNDS + 1):
        projects, findings = collect(reader)
        taken: dict[Path, list[TextEdit]] = {}
        created: dict[Path, tuple[Path, str]] = {}
        count = 0
        for f in findings:
            proj = projects.get(f.root)
            if proj is None:
                continue
            action = choose(actions_for(proj, f), unsafe)
            if action is None:
                continue
            edit = action.edit
            paths = [*edit.edits, *edit.new_files]
            if any(p in broken or not inside(f.root, p) for p in paths):
                continue
            if any(p in created or (p in files and files[p].original is None) for p in paths):
                continue  # a file created this round: the next round sees it
            if any(p.exists() or p in files for p in edit.new_files):
                continue
            ok = True
            for p in edit.edits:
                if p not in files:
                    opened = _open(p, f.root)
                    pf = proj.files.get(p)
                    if opened is None or pf is None or opened.text != pf.text:
                        broken.add(p)
                        ok = False
                        continue
                    files[p] = opened
            if not ok:
                continue
            if any(
                overlaps(e, t) for p, es in edit.edits.items() for e in es for t in taken.get(p, [])
            ):
                continue
            for p, es in edit.edits.items():
                taken.setdefault(p, []).extend(es)
            for p, text in edit.new_files.items():
                created[p] = (f.root, text)
            count += 1
        if not count:
            return FixResult(files, fixed, False, projects, findings)
        if round_ == MAX_ROUNDS:
            return FixResult(files, fixed, True, projects, findings)
        for p, todo in taken.items():
            files[p].text = _apply(files[p].text, todo)
        for p, (root, text) in created.items():
            files[p] = _File(p, root, None, text)
        fixed += count
    raise AssertionError("unreachable")  # pragma: no cover


def write(result: FixResult) -> list[str]:
    """Write the fixed files (never outside their project); the problems, one message
    per file that could not be written."""
    problems = []
    for f in result.changed:
        if not inside(f.root, f.path):
            continue
        try:
            atomic.make_dirs(f.path.parent, f.root)
            atomic.write_text(f.path, f.stored(f.text), within=f.root)
        except OSError as exc:
            why = exc.strerror or exc
            problems.append(f"{display_path(f.path)}: cannot write the fixes ({why})")
    return problems


def diff(result: FixResult) -> str:
    """A unified diff of the fixes (``--- a/path`` ``+++ b/path``; /dev/null for a new
    file)."""
    out: list[str] = []
    for f in result.changed:
        shown = display_path(f.path).replace("\\", "/")
        old = f.stored(f.original).splitlines(keepends=True)
        new = f.stored(f.text).splitlines(keepends=True)
        src = "/dev/null" if f.original is None else f"a/{shown}"
        for line in difflib.unified_diff(old, new, src, f"b/{shown}"):
            out.append(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n")
    return "".join(out)
