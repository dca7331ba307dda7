"""What is under the cursor: the symbol a position names, its definitions and references.

Shared by hover, go to definition, find references, highlights and rename.

The names a scenario of the evaluation holds (``eval/scenarios/**``) are references too,
but not in the index: they are the agent's tests, not its uses, so no finding about the
agent (an unused field, a response nobody delivers) depends on them. They are resolved
when asked (:func:`scenario_references_in`, :func:`scenario_references_to`), through
``Semantics.eval_symbols``.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ..model.layout import FileKind
from ..model.project import Project
from ..model.semantics import Semantics
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
    for ref in [*project.index.references_in(path), *scenario_references_in(project, path)]:
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
    hard += [Location(r.path, r.range) for r in scenario_references_to(project, key)]
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


# -- the evaluation's scenarios -------------------------------------------------------------

SCENARIO_FORM = "scenario"  # the form of a reference a scenario makes


def scenario_references_in(
    project: Project, path: Path, sem: Semantics | None = None
) -> list[Reference]:
    """The references the scenario at ``path`` makes (none for any other file), in file
    order: each name an assertion, an initial slot or an expected tool holds, as the
    symbols it stands for (``Semantics.eval_symbols``)."""
    pf = project.files.get(path)
    if pf is None or pf.kind is not FileKind.EVAL_SCENARIO:
        return []
    from ..syntax.eval_yml import ScenarioDoc  # only projects with scenarios get here

    doc = pf.doc
    if not isinstance(doc, ScenarioDoc):
        return []
    sem = sem or Semantics(project)
    out = []
    for ref in doc.refs():
        for key, rng in sem.eval_symbols(ref):
            out.append(Reference(key, path, rng, SCENARIO_FORM))
    out.sort(key=lambda r: (r.range.start, r.range.end))
    return out


def scenario_files(project: Project) -> list[Path]:
    """The project's scenario files, by path."""
    return sorted(project.paths_by_kind().get(FileKind.EVAL_SCENARIO, ()))


def scenario_references_to(project: Project, key: SymbolKey) -> list[Reference]:
    """The references every scenario makes to ``key``, by file and position."""
    paths = scenario_files(project)
    if not paths:
        return []
    sem = Semantics(project)
    return [r for p in paths for r in scenario_references_in(project, p, sem) if r.key == key]
