"""What is under the cursor: the symbol a position names, its definitions and references.

Shared by hover, go to definition, find references, highlights and rename.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ..model.layout import FileKind
from ..model.project import Project
from ..model.symbols import Reference, Symbol, SymbolKey, content_range
from ..syntax.skill_md import SkillDoc
from ..syntax.text import TextRange
from ..syntax.yaml_tree import YScalar
from .types import Location


@dataclass(frozen=True)
class Target:
    key: SymbolKey
    range: TextRange  # the name under the cursor
    definition: bool  # True when the cursor is on a definition of the symbol
    reference: Reference | None = None


def target_at(project: Project, path: Path, offset: int) -> Target | None:
    """The symbol named at ``offset`` in ``path`` (a reference or a definition)."""
    best: Target | None = None
    for ref in project.index.references_in(path):
        if ref.range.contains(offset) and (best is None or ref.range.length < best.range.length):
            best = Target(ref.key, ref.range, False, ref)
    if best is not None:
        return best
    for sym in project.index.definitions_in(path):
        rng = sym.range
        inside = rng is not None and rng.length > 0 and rng.contains(offset)
        if inside and rng is not None and (best is None or rng.length < best.range.length):
            best = Target(sym.key, rng, True)
    return best or _skill_name_value(project, path, offset)


def _skill_name_value(project: Project, path: Path, offset: int) -> Target | None:
    """The value of a skill's frontmatter ``name:`` names the skill (its display label; the
    id is the folder name), like the key, which is where the skill is defined."""
    pf = project.files.get(path)
    doc = pf.doc if pf is not None and pf.kind is FileKind.SKILL_MD else None
    if pf is None or pf.skill_id is None or not isinstance(doc, SkillDoc):
        return None
    node = doc.fm("name")
    if not isinstance(node, YScalar) or not isinstance(node.value, str):
        return None
    rng = content_range(node)
    if rng.length == 0 or not (rng.start <= offset <= rng.end):
        return None
    return Target(("skill", pf.skill_id), rng, True)


def definitions(project: Project, key: SymbolKey) -> list[Symbol]:
    """Where ``key`` is defined (several places for a response defined in several files;
    none on disk for a symbol bundled with the engine)."""
    return list(project.index.lookup(key))


def definition_locations(project: Project, key: SymbolKey) -> list[Location]:
    out = []
    for sym in definitions(project, key):
        if sym.path is not None and sym.range is not None:
            out.append(Location(sym.path, sym.range))
    return out


def reference_locations(
    project: Project, key: SymbolKey, include_declaration: bool, include_soft: bool = True
) -> list[Location]:
    """The references to ``key`` (with ``include_declaration`` its definitions first), each
    place once, by file and position; then, with ``include_soft``, the backticked mentions
    in prose (inferred, they may name something else), by file and position too."""
    hard = [Location(r.path, r.range) for r in project.index.references_to(key) if not r.soft]
    soft = [Location(r.path, r.range) for r in project.index.references_to(key) if r.soft]
    if include_declaration:
        hard = definition_locations(project, key) + hard
    seen: set[tuple[Path, int, int]] = set()
    unique = []
    for group in (hard, soft if include_soft else []):
        for loc in sorted(group, key=lambda x: (str(x.path), x.range.start, x.range.end)):
            k = (loc.path, loc.range.start, loc.range.end)
            if k not in seen:
                seen.add(k)
                unique.append(loc)
    return unique
