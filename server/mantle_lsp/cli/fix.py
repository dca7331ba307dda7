"""``check --fix`` / ``--diff``: apply the code actions of the findings, in rounds.

Each round checks the projects (reading the texts fixed so far instead of the disk),
picks one fix per finding — the safe one (``CodeAction.safe``), or with
``--unsafe-fixes`` also an unsafe one, and only when the choice is clear: the preferred
action, or the only one — and applies those whose edits do not overlap an edit already
taken; the others wait for the next round, which sees the new text (and the files the
fixes created, as if they were on disk). It stops when a round finds nothing to fix (or
after MAX_ROUNDS), so a second run finds nothing either. The fixes of names agree over
the whole run (:class:`~mantle_lsp.ide.fixes.Names`): a did-you-mean never leads to a name
a fix declared, and a name whose fixes disagree gets none. The edits are text
replacements on exact ranges, so comments and formatting elsewhere stay as they are; a
file's BOM and CRLF line breaks are kept (a file mixing line-break styles is not fixed).
"""

from __future__ import annotations

import dataclasses
import difflib
import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path

from .. import atomic
from ..ide.code_actions import CodeAction
from ..ide.fixes import Names, choose, declaring_file_missing, fixes_for, overlaps, show_name
from ..ide.types import TextEdit
from ..model.layout import inside, remembered_links
from ..model.project import Project, Reader
from ..model.source import Source, read_source, source_from_text
from ..model.symbols import SymbolKey
from ..syntax.text import BOM
from .output import Finding, Help, display_path

MAX_ROUNDS = 100  # as ruff's

# (projects, findings) of one check, reading files through the given reader; the paths
# are files that are not on disk yet (a fix created them) which the reader has
Collect = Callable[[Reader | None, Sequence[Path]], tuple[dict[Path, Project], list[Finding]]]
# whether the settings let --fix fix a finding (`fixable`, `unfixable`)
Fixable = Callable[[Finding], bool]


def _every(f: Finding) -> bool:
    return True


def actions_for(project: Project, f: Finding) -> list[CodeAction]:
    """The fixes the editor offers for the finding (none for an unreadable file; not
    "Ignore … here", which only silences it)."""
    return fixes_for(project, f.diag)


def add_helps(
    projects: dict[Path, Project],
    findings: Sequence[Finding],
    banned: dict[Path, dict[SymbolKey, set[str]]] | None = None,
    fixable: Fixable = _every,
) -> None:
    """Each finding's help lines, and whether ``--fix`` (``--unsafe-fixes``) fixes it:
    not when the settings make its code unfixable, nor when the fixes of its name
    disagree, nor (after a run of ``--fix``) when that run banned the name."""
    with remembered_links():
        _add_helps(projects, findings, banned or {}, fixable)


def _add_helps(
    projects: dict[Path, Project],
    findings: Sequence[Finding],
    banned: dict[Path, dict[SymbolKey, set[str]]],
    fixable: Fixable,
) -> None:
    picks: dict[tuple[Path, bool], list[tuple[Finding, CodeAction]]] = {}
    for f in findings:
        proj = projects.get(f.root)
        if proj is not None:
            if proj.has_pending:  # a check spread over processes: fixes need every file
                proj.materialize()
            actions = actions_for(proj, f)
            f.helps = [Help(a.title, a.safe) for a in actions]
            f.fix = None
            f.fix_detail = None
            if not fixable(f):
                continue
            ledger = Names(banned.get(f.root, {}))
            allowed = [
                a for a in actions if ledger.allows(a) and not declaring_file_missing(proj, a)
            ]
            for unsafe in (False, True):
                action = choose(allowed, unsafe)
                if action is not None:
                    picks.setdefault((f.root, unsafe), []).append((f, action))
    for (_, unsafe), chosen in sorted(picks.items(), key=lambda kv: kv[0][1], reverse=True):
        split = Names().disagreements(a for _, a in chosen)
        for f, a in chosen:
            if a.name is None or a.name.name not in split:
                f.fix = "unsafe" if unsafe else "safe"
                f.fix_detail = _detail(projects[f.root], a, f.fix)


def _detail(proj: Project, action: CodeAction, applicability: str) -> dict[str, object]:
    """The fix ``--fix`` applies to a finding, for the JSON output: its title, whether it
    is safe, its edits (1-based lines and columns in code points, as the findings') and
    the files it creates."""
    edits: list[dict[str, object]] = []
    for path, es in sorted(action.edit.edits.items()):
        pf = proj.files.get(path)
        if pf is None:
            continue
        index = pf.source.index
        for e in sorted(es, key=lambda e: (e.range.start, e.range.end)):
            (line, col), (eline, ecol) = index.position(e.range.start), index.position(e.range.end)
            edits.append(
                {
                    "path": display_path(path),
                    "line": line + 1,
                    "column": col + 1,
                    "end_line": eline + 1,
                    "end_column": ecol + 1,
                    "content": e.new_text,
                }
            )
    out: dict[str, object] = {"applicability": applicability, "message": action.title}
    out["edits"] = edits
    if action.edit.new_files:
        out["new_files"] = [
            {"path": display_path(p), "content": text}
            for p, text in sorted(action.edit.new_files.items())
        ]
    return out


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
    # per project, what the fixes did to names and which names they left alone
    names: dict[Path, Names] = dataclasses.field(default_factory=dict)

    @property
    def conflicts(self) -> list[str]:
        """Why names were left unfixed, one line each."""
        return [m for _, n in sorted(self.names.items()) for m in n.messages()]

    @property
    def banned(self) -> dict[Path, dict[SymbolKey, set[str]]]:
        return {root: n.banned for root, n in self.names.items() if n.banned}

    @property
    def changed(self) -> list[_File]:
        return [f for _, f in sorted(self.files.items()) if f.text != f.original]


def _open(path: Path, root: Path, texts: Mapping[Path, str]) -> _File | None:
    """The file as it is on disk (or as ``texts`` gives it: read from stdin), or None when
    it cannot be fixed safely (not UTF-8, mixed line breaks, a lone CR)."""
    if path in texts:
        raw = texts[path]
    else:
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


MAX_RESTARTS = 20


@dataclasses.dataclass(frozen=True)
class _Sources:
    """Where a run reads the files it has not fixed: ``base`` (None: the disk), with
    ``texts`` the raw text of files given otherwise (stdin); ``only``: the files it may
    change (None: any file of the project)."""

    base: Reader | None = None
    texts: Mapping[Path, str] = dataclasses.field(default_factory=dict)
    only: frozenset[Path] | None = None


def run(
    collect: Collect,
    unsafe: bool,
    fixable: Fixable = _every,
    *,
    base: Reader | None = None,
    texts: Mapping[Path, str] | None = None,
    only: Iterable[Path] | None = None,
) -> FixResult:
    """Fix in rounds until nothing is left. A run whose fixes of a name disagree, or that
    would leave a did-you-mean leading to a name one of its fixes declared (the next run
    would take it for the user's), starts again from the files as they were, the name
    banned: no fix declares or changes it. So a second run finds what the first left, and
    does nothing with it. ``base``, ``texts``, ``only``: see :class:`_Sources` (a file
    read from stdin is fixed alone)."""
    sources = _Sources(base, texts or {}, frozenset(only) if only is not None else None)
    banned: dict[Path, dict[SymbolKey, set[str]]] = {}
    for _ in range(MAX_RESTARTS):
        result, more = _rounds(collect, unsafe, banned, fixable, sources)
        if not more:
            return result
        for root, why in more.items():
            for key, reasons in why.items():
                banned.setdefault(root, {}).setdefault(key, set()).update(reasons)
    result.exhausted = True
    return result


def _rounds(
    collect: Collect,
    unsafe: bool,
    banned: dict[Path, dict[SymbolKey, set[str]]],
    fixable: Fixable,
    sources: _Sources,
) -> tuple[FixResult, dict[Path, dict[SymbolKey, set[str]]]]:
    """One run from the files on disk, without fixes of the ``banned`` names; the names
    to ban in addition (none: the result is final)."""
    files: dict[Path, _File] = {}
    broken: set[Path] = set()  # files that cannot be fixed
    names: dict[Path, Names] = {}  # per project

    def ledger(root: Path) -> Names:
        if root not in names:
            names[root] = Names({k: set(v) for k, v in banned.get(root, {}).items()})
        return names[root]

    def reader(path: Path) -> Source:
        f = files.get(path)
        if f is not None:
            return source_from_text(path, f.text)
        return sources.base(path) if sources.base is not None else read_source(path)

    def result(exhausted: bool) -> FixResult:
        return FixResult(files, fixed, exhausted, projects, findings, names)

    fixed = 0
    for round_ in range(MAX_ROUNDS + 1):
        new = sorted(p for p, f in files.items() if f.original is None)
        projects, findings = collect(reader, new)
        picks: dict[Path, list[tuple[Finding, CodeAction]]] = {}
        for f in findings:
            proj = projects.get(f.root)
            if proj is None or not fixable(f):
                continue
            actions = [
                a
                for a in actions_for(proj, f)
                if ledger(f.root).allows(a) and not declaring_file_missing(proj, a)
            ]
            action = choose(actions, unsafe)
            if action is not None:
                picks.setdefault(f.root, []).append((f, action))
        split = {
            root: why
            for root, chosen in picks.items()
            if (why := ledger(root).disagreements(a for _, a in chosen))
        }
        if split:
            return result(False), split
        taken: dict[Path, list[TextEdit]] = {}
        created: dict[Path, tuple[Path, str]] = {}
        count = 0
        for root, chosen in sorted(picks.items()):
            declared: set[SymbolKey] = set()  # one declaration of a name a round
            for f, action in chosen:
                n = action.name
                if n is not None and n.to is None and n.name in declared:
                    continue
                if not _fits(action, f, projects[root], files, broken, taken, created, sources):
                    continue
                edit = action.edit
                for p, es in edit.edits.items():
                    taken.setdefault(p, []).extend(es)
                for p, text in edit.new_files.items():
                    created[p] = (f.root, text)
                if n is not None and n.to is None:
                    declared.add(n.name)
                ledger(root).took(action)
                count += 1
        if not count:
            return result(False), _misled(projects, findings, names, unsafe, fixable)
        if round_ == MAX_ROUNDS:
            return result(True), {}
        for p, todo in taken.items():
            files[p].text = _apply(files[p].text, todo)
        for p, (root, text) in created.items():
            files[p] = _File(p, root, None, text)
        fixed += count
    raise AssertionError("unreachable")  # pragma: no cover


def _misled(
    projects: dict[Path, Project],
    findings: list[Finding],
    names: dict[Path, Names],
    unsafe: bool,
    fixable: Fixable,
) -> dict[Path, dict[SymbolKey, set[str]]]:
    """The names a fix of this run declared that a did-you-mean left unfixed leads to:
    a next run would take them for the user's and change the name written to them."""
    out: dict[Path, dict[SymbolKey, set[str]]] = {}
    for f in findings:
        ledger = names.get(f.root)
        proj = projects.get(f.root)
        if ledger is None or proj is None or not ledger.decided or not fixable(f):
            continue
        actions = [a for a in actions_for(proj, f) if not declaring_file_missing(proj, a)]
        action = choose(actions, unsafe)
        n = action.name if action is not None else None
        if n is not None and n.to is not None and ledger.invented(n.to):
            why = (
                f"not declared: `{show_name(n.name)}` would then be changed to it, and either "
                "may be the name meant"
            )
            out.setdefault(f.root, {}).setdefault(n.to, set()).add(why)
    return out


def _fits(
    action: CodeAction,
    f: Finding,
    proj: Project,
    files: dict[Path, _File],
    broken: set[Path],
    taken: dict[Path, list[TextEdit]],
    created: dict[Path, tuple[Path, str]],
    sources: _Sources,
) -> bool:
    """Whether ``action`` can be applied in this round: inside the project, on files
    that can be fixed (opened here on first use) and may be changed, not touching an edit
    already taken nor a file created in this round (the next round sees it)."""
    edit = action.edit
    paths = [*edit.edits, *edit.new_files]
    if any(p in broken or not inside(f.root, p) for p in paths):
        return False
    if sources.only is not None and any(p not in sources.only for p in paths):
        return False
    if any(p in created for p in paths):
        return False
    if any(p.exists() or p in files for p in edit.new_files):
        return False
    ok = True
    for p in edit.edits:
        if p not in files:
            opened = _open(p, f.root, sources.texts)
            pf = proj.files.get(p)
            if opened is None or pf is None or opened.text != pf.text:
                broken.add(p)
                ok = False
                continue
            files[p] = opened
    if not ok:
        return False
    return not any(
        overlaps(e, t) for p, es in edit.edits.items() for e in es for t in taken.get(p, [])
    )


def write(result: FixResult) -> list[str]:
    """Write the fixed files (never outside their project); the problems, one message
    per file that could not be written."""
    problems = []
    for f in result.changed:
        if not inside(f.root, f.path):
            continue
        if f.original is None and os.path.lexists(f.path):
            problems.append(f"{display_path(f.path)}: not created, a file of that name appeared")
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
