"""Inlay hints: only what a line does not show, and short.

- After the field name of a ``collect:`` step: what the field takes — its values for a
  categorical field when they are few and short (``day | week | month``), else its type
  (``categorical · 7 values``, ``text``).
- After the *value* of a ``set_memory`` entry (never between the key and its colon): the
  type of the field written (``bool``, ``categorical``).

Either is prefixed ``project ·`` when the bare name writes the project field (the skill
declares no field of that name). The full list of values is in the hint's tooltip and in
the hover of the name (ide/hover.py). Nothing else: a hint that repeats the text is noise.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ..model.layout import FileKind
from ..model.project import Project
from ..model.semantics import FieldType, Semantics
from ..model.symbols import content_range
from ..syntax.skill_md import SkillDoc
from ..syntax.text import TextRange
from ..syntax.yaml_tree import YMap, YNode

MAX_VALUES = 4  # values shown in a collect hint; more, and the hint gives the count
MAX_LABEL = 32  # characters of the values shown in a collect hint
MAX_TOOLTIP_VALUES = 40


@dataclass(frozen=True)
class InlayHint:
    offset: int  # where the hint is shown (after the name, or after a set_memory value)
    label: str
    tooltip: str


def inlay_hints(project: Project, path: Path, rng: TextRange | None = None) -> list[InlayHint]:
    """The hints of ``path`` (within ``rng`` when given), in document order."""
    pf = project.files.get(path)
    if pf is None or pf.kind is not FileKind.SKILL_MD or pf.skill_id is None:
        return []
    sid = pf.skill_id
    sem = Semantics(project)
    values = _set_memory_values(pf.doc) if isinstance(pf.doc, SkillDoc) else {}
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
        if r.form == "collect":
            offset, label = r.range.end, _collect_label(ft)
            verb = "asks the user for"
        else:
            offset = _after_value(pf.text, r.range, values.get(r.range))
            label, verb = ft.type, "writes"
        if ns == "project":
            label = "project · " + label
        out.append(InlayHint(offset, label, f"{verb} `{ns}.{entry}` ({_described(ft)})"))
    return sorted(out, key=lambda h: h.offset)


def _collect_label(ft: FieldType) -> str:
    vals = ft.enum_values
    if not vals:
        return ft.type
    shown = " | ".join(vals)
    if len(vals) <= MAX_VALUES and len(shown) <= MAX_LABEL:
        return shown
    return f"{ft.type} · {len(vals)} values"


def _described(ft: FieldType) -> str:
    if not ft.enum_values:
        return ft.type
    vals = list(ft.enum_values[:MAX_TOOLTIP_VALUES])
    if len(ft.enum_values) > MAX_TOOLTIP_VALUES:
        vals.append("…")
    return f"{ft.type}: {', '.join(vals)}"


def _set_memory_values(doc: SkillDoc) -> dict[TextRange, YNode]:
    """The value of each ``set_memory`` entry, by the range of its key's name."""
    out: dict[TextRange, YNode] = {}
    for _, st in doc.steps():
        sm = st.get("set_memory")
        if isinstance(sm, YMap):
            for k, v in sm.pairs():
                out[content_range(k)] = v
    return out


def _after_value(text: str, key: TextRange, value: YNode | None) -> int:
    """After the value when it ends on the key's line, else at the end of that line
    (a value over several lines, or none: after the colon)."""
    eol = text.find("\n", key.end)
    eol = len(text) if eol < 0 else eol
    if value is not None and key.end < value.range.end <= eol and value.range.length:
        return value.range.end
    line = text[key.end : eol]
    hash_at = line.find(" #")  # a trailing comment stays after the hint
    if hash_at >= 0:
        line = line[:hash_at]
    return key.end + len(line.rstrip())
