"""Fixing many findings at once: which fix a finding gets, and the edits of all of them.

``check --fix`` (cli/fix.py, in rounds that re-check the project) and the editor's "fix
all" actions (``source.fixAll.mantle`` and "Fix all `CODE` in this file / project", one
round: the editor re-checks after the edit) pick the fix of each finding the same way:
:func:`choose` among the code actions of :mod:`.code_actions`, never an action that only
writes a suppression.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from ..model.project import Project
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
    for d in diagnostics:
        if code is not None and d.code != code:
            continue
        action = choose(fixes_for(project, d), unsafe=False)
        if action is not None and batch.fits(action.edit):
            batch.take(action.edit)
    return batch
