"""Inlay hints: only what a line does not show.

After the field name of a ``collect:`` step or a ``set_memory`` key (a bare name), what
the field takes: its values for a categorical field, else its type — prefixed
``project ·`` when the bare name writes the project field (the skill declares no field of
that name). Nothing else: a hint that repeats the text is noise.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ..model.layout import FileKind
from ..model.project import Project
from ..model.semantics import Semantics
from ..syntax.text import TextRange

MAX_VALUES = 6


@dataclass(frozen=True)
class InlayHint:
    offset: int  # where the hint is shown (after the name)
    label: str
    tooltip: str


def inlay_hints(project: Project, path: Path, rng: TextRange | None = None) -> list[InlayHint]:
    """The hints of ``path`` (within ``rng`` when given), in document order."""
    pf = project.files.get(path)
    if pf is None or pf.kind is not FileKind.SKILL_MD or pf.skill_id is None:
        return []
    sid = pf.skill_id
    sem = Semantics(project)
    out: list[InlayHint] = []
    for r in project.index.references_in(path):
        if r.form not in ("collect", "set_memory") or r.key[0] != "field" or len(r.key) != 3:
            continue
        if rng is not None and not (rng.start <= r.range.end <= rng.end):
            continue
        _, ns, entry = r.key
        ft = sem.field_type(sid, ns, entry)
        if ft is None:
            continue  # undeclared: a diagnostic says so
        label = ft.type
        if ft.enum_values:  # the values say more than `categorical`
            shown = list(ft.enum_values[:MAX_VALUES])
            if len(ft.enum_values) > MAX_VALUES:
                shown.append("…")
            label = " | ".join(shown)
        if ns == "project":
            label = "project · " + label
        verb = "asks the user for" if r.form == "collect" else "writes"
        out.append(InlayHint(r.range.end, label, f"{verb} `{ns}.{entry}` ({ft.type})"))
    return sorted(out, key=lambda h: h.offset)
