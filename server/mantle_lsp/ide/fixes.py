"""Fixing many findings at once: which fix a finding gets, and the edits of all of them.

``check --fix`` (cli/fix.py, in rounds that re-check the project) and the editor's "fix
all" actions (``source.fixAll.mantle`` and "Fix all `CODE` in this file / project", one
round: the editor re-checks after the edit) pick the fix of each finding the same way:
:func:`choose` among the code actions of :mod:`.code_actions`, never an action that only
writes a suppression.

Names: a fix may declare a name the project lacks (guessing the declaration from its
uses) or change a mention of it to a declared one ("did you mean"). :class:`Names` keeps
such fixes consistent over a run: a did-you-mean never leads to a name a fix declared, and
when the fixes chosen for one name disagree (declare it here, change it there; change it
to two different names) none of them is applied (docs/cli.md#fixes-and-names).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from ..model.layout import FileKind
from ..model.project import Project
from ..model.symbols import SymbolKey
from .code_actions import CodeAction, code_actions
from .diagnostics import Diagnostic
from .types import TextEdit, WorkspaceEdit


def fixes_for(project: Project, d: Diagnostic) -> list[CodeAction]:
    """The fixes the editor offers for ``d`` (none that renames files or only silences
    it; none when a fix fails: the others go on)."""
    try:
        actions = code_actions(project, d.path, d.range, [d], suppressions=False)
    except Exception:  # a fix that fails is not offered
        return []
    return [a for a in actions if not a.edit.renames and not a.suppresses]


def choose(actions: Sequence[CodeAction], unsafe: bool) -> CodeAction | None:
    """The action a fix-all applies, when there is exactly one candidate: the safe one
    (with ``unsafe``, any), the preferred one among several."""
    ok = [a for a in actions if (a.safe or unsafe) and not a.suppresses]
    preferred = [a for a in ok if a.preferred]
    if len(preferred) == 1:
        return preferred[0]
    return ok[0] if len(ok) == 1 else None


@dataclass
class Names:
    """What the fixes of one run (one project) did to names: ``decided`` maps each name a
    fix declared (to None) or changed (to the name meant). ``banned``: names no fix
    declares, changes or leads to, each with why (the fixes of a name that disagree)."""

    banned: dict[SymbolKey, set[str]] = field(default_factory=dict)
    decided: dict[SymbolKey, SymbolKey | None] = field(default_factory=dict)

    def invented(self, key: SymbolKey) -> bool:
        """Whether a fix of this run declared ``key`` (it was not in the user's files)."""
        return key in self.decided and self.decided[key] is None

    def allows(self, action: CodeAction) -> bool:
        """False for a fix of a banned name, and for a did-you-mean that leads to a name a
        fix invented: the name written is then as likely the real one (its declaration was
        missing too)."""
        n = action.name
        if n is None:
            return True
        if n.name in self.banned or (n.to is not None and n.to in self.banned):
            return False
        return n.to is None or not self.invented(n.to)

    def disagreements(self, picks: Iterable[CodeAction]) -> dict[SymbolKey, set[str]]:
        """The names on which the fixes ``picks`` (one per finding) disagree, with each
        other or with a fix taken before (declare it here, change it there; change it to
        two different names), each with what the fixes wanted."""
        wants: dict[SymbolKey, set[SymbolKey | None]] = {}
        for a in picks:
            if a.name is not None:
                wants.setdefault(a.name.name, set()).add(a.name.to)
        out: dict[SymbolKey, set[str]] = {}
        for key, tos in wants.items():
            if key in self.decided:
                tos = tos | {self.decided[key]}
            if len(tos) > 1:
                ways = sorted(
                    "declare it" if to is None else f"change it to `{show_name(to)}`" for to in tos
                )
                out[key] = {f"its fixes disagree ({', '.join(ways)}), none was applied"}
        return out

    def took(self, action: CodeAction) -> None:
        if action.name is not None:
            self.decided[action.name.name] = action.name.to

    def messages(self) -> list[str]:
        """One line per banned name: why its fixes were not applied."""
        return [
            f"{key[0]} `{show_name(key)}`: {'; '.join(sorted(why))}"
            for key, why in sorted(self.banned.items())
        ]


def declaring_file_missing(project: Project, action: CodeAction) -> bool:
    """A did-you-mean about a memory field whose memory.yml does not exist (the project's,
    or the skill's): the name is unknown only because nothing is declared there, so
    changing it would be a guess against nothing. A fix-all never applies it."""
    n = action.name
    if n is None or n.to is None or n.name[0] != "field" or len(n.name) < 3:
        return False
    ns = n.name[1]
    if ns == "project":
        return project.file_of_kind(FileKind.PROJECT_MEMORY) is None
    sk = project.skill(ns)
    return sk is not None and sk.memory is None


def show_name(key: SymbolKey) -> str:
    """A symbol key as messages write it (``project.customer_tier``)."""
    return ".".join(key[1:]) or key[0]


def overlaps(a: TextEdit, b: TextEdit) -> bool:
    """Edits that touch or overlap (two insertions at one place included): their order
    would matter, so only the first one is taken."""
    return a.range.start <= b.range.end and b.range.start <= a.range.end


@dataclass
class Batch:
    """Edits gathered from several fixes, none overlapping another."""

    edits: dict[Path, list[TextEdit]] = field(default_factory=dict)
    new_files: dict[Path, str] = field(default_factory=dict)
    count: int = 0  # fixes taken

    def fits(self, edit: WorkspaceEdit) -> bool:
        """Whether ``edit`` can join without touching what is already taken (a file
        created by the batch is never edited in it)."""
        if edit.renames:
            return False
        if any(p in self.new_files for p in (*edit.edits, *edit.new_files)):
            return False
        return not any(
            overlaps(e, t)
            for p, es in edit.edits.items()
            for e in es
            for t in self.edits.get(p, [])
        )

    def take(self, edit: WorkspaceEdit) -> None:
        for p, es in edit.edits.items():
            self.edits.setdefault(p, []).extend(es)
        self.new_files.update(edit.new_files)
        self.count += 1

    def workspace_edit(self) -> WorkspaceEdit:
        ordered = {
            p: tuple(sorted(es, key=lambda e: e.range.start)) for p, es in self.edits.items()
        }
        return WorkspaceEdit(ordered, new_files=dict(self.new_files))


def fix_all(project: Project, diagnostics: Iterable[Diagnostic], code: str | None = None) -> Batch:
    """The safe fixes of ``diagnostics`` (only those of ``code`` when given), one per
    finding, in order, leaving out a fix whose edits touch one already taken (after the
    edit the editor re-checks, and the rest can be fixed again)."""
    batch = Batch()
    picks: list[tuple[Diagnostic, CodeAction]] = []
    for d in diagnostics:
        if code is not None and d.code != code:
            continue
        actions = [a for a in fixes_for(project, d) if not declaring_file_missing(project, a)]
        action = choose(actions, unsafe=False)
        if action is not None:
            picks.append((d, action))
    split = Names().disagreements(a for _, a in picks)
    for _, action in picks:
        if action.name is not None and action.name.name in split:
            continue
        if batch.fits(action.edit):
            batch.take(action.edit)
    return batch
