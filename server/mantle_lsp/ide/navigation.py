"""Go to definition, find references and document highlights.

All three start from :func:`~mantle_lsp.ide.locate.target_at`: the symbol named at the
cursor (a reference, the namespace part of a qualified reference, or a definition).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from ..model.project import Project
from ..model.semantics import writes
from ..model.symbols import Reference, SymbolKey
from ..syntax.text import TextRange
from .locate import (
    definition_locations,
    reference_locations,
    scenario_references_in,
    target_at,
)
from .types import Location

HighlightKind = Literal["read", "write", "text"]

# Reference forms that write a memory field (everything else reads it).


@dataclass(frozen=True)
class Highlight:
    range: TextRange
    kind: HighlightKind


def definition(project: Project, path: Path, offset: int) -> list[Location]:
    """Where the symbol at ``offset`` is defined: every defining place (a response defined
    in several files gives all of them), a skill's ``skill.md``; nothing for symbols
    bundled with the engine or names that resolve to nothing."""
    t = target_at(project, path, offset)
    if t is None:
        return []
    return definition_locations(project, t.key)


def references(
    project: Project, path: Path, offset: int, include_declaration: bool
) -> list[Location]:
    """Every reference to the symbol at ``offset`` sorted by file and position (with
    ``include_declaration`` its definitions too), then the backticked mentions in prose
    (soft references), sorted the same way."""
    t = target_at(project, path, offset)
    if t is None:
        return []
    return reference_locations(project, t.key, include_declaration)


ReferenceKind = Literal["definition", "read", "write", "mention"]


def reference_kinds(
    project: Project, path: Path, offset: int, include_declaration: bool
) -> list[tuple[Location, ReferenceKind]]:
    """:func:`references` with what each place is: a definition, a read, a write (of a
    memory field), or a mention in prose (soft: it may name something else)."""
    t = target_at(project, path, offset)
    if t is None:
        return []
    kinds: dict[tuple[Path, int, int], ReferenceKind] = {}
    for ref in project.index.references_to(t.key):
        k = reference_kind(ref)
        kinds.setdefault(
            (ref.path, ref.range.start, ref.range.end), "mention" if k == "text" else k
        )
    out: list[tuple[Location, ReferenceKind]] = []
    defs = {(d.path, d.range.start, d.range.end) for d in definition_locations(project, t.key)}
    for loc in reference_locations(project, t.key, include_declaration):
        k3 = (loc.path, loc.range.start, loc.range.end)
        out.append((loc, "definition" if k3 in defs else kinds.get(k3, "read")))
    return out


def reference_kind(ref: Reference) -> HighlightKind:
    if ref.soft:
        return "text"
    if writes(ref):
        return "write"
    return "read"


def highlights(project: Project, path: Path, offset: int) -> list[Highlight]:
    """The occurrences in ``path`` of the symbol at ``offset``: definitions and writes
    (``collect:``, ``set_memory``, ``context.memory.set``, ``set:`` payloads) as writes,
    backticked mentions as text, everything else as reads."""
    t = target_at(project, path, offset)
    if t is None:
        return []
    return file_highlights(project, path, t.key)


def file_highlights(project: Project, path: Path, key: SymbolKey) -> list[Highlight]:
    found: dict[tuple[int, int], HighlightKind] = {}
    for sym in project.index.lookup(key):
        if sym.path == path and sym.range is not None and sym.range.length > 0:
            found[(sym.range.start, sym.range.end)] = "write"
    for ref in [*project.index.references_in(path), *scenario_references_in(project, path)]:
        if ref.key == key:
            found.setdefault((ref.range.start, ref.range.end), reference_kind(ref))
    return [Highlight(TextRange(s, e), k) for (s, e), k in sorted(found.items())]


def relative(project: Project, path: Path) -> str:
    """``path`` relative to the project root, with forward slashes."""
    try:
        return path.relative_to(project.root).as_posix()
    except ValueError:
        return path.as_posix()


def line_of(project: Project, path: Path, offset: int) -> int:
    """1-based line of ``offset`` in ``path`` (0 when the file is not in the project)."""
    pf = project.files.get(path)
    if pf is None:
        return 0
    return pf.source.index.line_of(offset) + 1


def where(project: Project, path: Path, offset: int) -> str:
    """``relative/path:line`` for messages and hovers."""
    line = line_of(project, path, offset)
    rel = relative(project, path)
    return f"{rel}:{line}" if line else rel
