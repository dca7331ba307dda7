"""Scenario coverage (docs/features/eval.md#coverage): which skills, ordered blocks, tools
and memory fields no scenario of ``eval/scenarios/`` asserts.

A thing is *asserted* when a positive assertion names it: ``skill_*`` and
``ordered_block_*`` (their skill and block, and the step of a ``step_id``),
``tool_executed`` (also among the calls of ``tools_within_one_turn``; its tool, and the
skill of its ``skill_id``), ``memory_was_set`` and ``memory_was_cleared`` (each field),
in a ``sequencing`` too. Criteria prose, ``setup.initial_slots``, ``bot_*`` and the
negative checks (``memory_was_not_set``, ``bot_did_not_utter``) assert nothing here. Only
scenarios the evaluation can load and run count (a file with an error of its own asserts
nothing: it never runs), and only assertions the evaluation accepts.

Steps are listed apart and are not in the percentage: for each ordered block one of whose
steps an assertion names by ``step_id``, every step of that block, asserted or not.

The names resolve as everywhere else (``Semantics.eval_symbols``, ``eval_tool_key``);
MCP tools are listed by ``mcp/<server>:<tool>``, as the skills import them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from ..model.layout import FileKind
from ..model.project import Project
from ..model.semantics import Semantics
from ..model.symbols import SymbolKey
from ..syntax.eval_yml import MANTLE_ONLY_KEYS
from ..syntax.text import TextRange
from .types import Location

if TYPE_CHECKING:  # the eval parser is imported only by projects with eval files
    from ..syntax.eval_yml import Assertion, ScenarioDoc

ItemKind = Literal["skill", "block", "tool", "field", "step"]
KINDS: tuple[ItemKind, ...] = ("skill", "block", "tool", "field")  # the headline's
KIND_WORDS = {
    "skill": "skills",
    "block": "ordered blocks",
    "tool": "tools",
    "field": "memory fields",
    "step": "steps",
}
# the assertion keys that assert what they name: Mantle's, less the negative ones and
# `tools_within_one_turn` (a bound on the count, naming no tool of the agent)
POSITIVE = MANTLE_ONLY_KEYS - {"memory_was_not_set", "tools_within_one_turn"}
# the assertions whose children are checked as assertions of their own
_CONTAINERS = frozenset({"sequencing", "tools_within_one_turn"})


@dataclass
class Item:
    """One thing the scenarios may assert, and where they do."""

    kind: ItemKind
    key: SymbolKey
    name: str  # as authors write it: `roaming_pass`, `roaming_pass:main`, `project.tier`
    path: Path | None  # where it is defined
    range: TextRange | None
    places: list[Location] = field(default_factory=list)  # the asserting names
    line: int | None = None  # 1-based line of the definition (None: not in a file)

    @property
    def asserted(self) -> bool:
        return bool(self.places)

    @property
    def scenarios(self) -> list[Path]:
        """The scenario files asserting it, by path."""
        return sorted({loc.path for loc in self.places})


@dataclass
class Coverage:
    root: Path
    scenarios: list[Path]  # the scenario files that count
    skipped: list[tuple[Path, str]]  # scenario files that do not, with why
    items: list[Item]  # skills, ordered blocks, tools, memory fields
    steps: list[Item]  # the steps of blocks whose steps assertions name

    def of(self, kind: ItemKind) -> list[Item]:
        return [i for i in (self.steps if kind == "step" else self.items) if i.kind == kind]

    @property
    def asserted(self) -> int:
        return sum(1 for i in self.items if i.asserted)

    @property
    def percent(self) -> float:
        """Asserted items of the headline kinds, in percent (100 when there is nothing)."""
        return 100.0 * self.asserted / len(self.items) if self.items else 100.0


def scenario_files(project: Project) -> list[Path]:
    return sorted(project.paths_by_kind().get(FileKind.EVAL_SCENARIO, ()))


def why_not_counted(project: Project, path: Path) -> str | None:
    """Why the scenario at ``path`` asserts nothing (None: it counts): it is no scenario,
    or has an error of its own, so the evaluation cannot load or run it."""
    pf = project.files.get(path)
    if pf is None or pf.doc is None or not getattr(pf.doc, "is_scenario", False):
        return "not a scenario (no `scenario:` key)"
    for issue in sorted(pf.issues, key=lambda i: i.range.start):
        if issue.severity == "error":
            line = pf.source.index.line_of(issue.range.start) + 1
            return f"line {line}: {issue.code}"
    return None


def coverage(project: Project) -> Coverage:
    """What the project's scenarios assert, and what they do not."""
    sem = Semantics(project)
    items = _items(project, sem)
    by_key = {i.key: i for i in items}
    counted: list[Path] = []
    skipped: list[tuple[Path, str]] = []
    step_places: dict[SymbolKey, list[Location]] = {}
    for path in scenario_files(project):
        why = why_not_counted(project, path)
        if why is not None:
            skipped.append((path, why))
            continue
        counted.append(path)
        doc: ScenarioDoc = project.files[path].doc
        for key, rng in asserted_names(sem, doc):
            loc = Location(path, rng)
            if key[0] == "step":
                step_places.setdefault(key, []).append(loc)
            elif key in by_key:
                by_key[key].places.append(loc)
    steps = _steps(project, step_places)
    for i in (*items, *steps):
        pf = project.files.get(i.path) if i.path is not None else None
        if pf is not None and i.range is not None:
            i.line = pf.source.index.line_of(i.range.start) + 1
    return Coverage(project.root, counted, skipped, items, steps)


def asserted_names(sem: Semantics, doc: ScenarioDoc) -> list[tuple[SymbolKey, TextRange]]:
    """The things a scenario asserts, each with the name that does (in file order)."""
    out: list[tuple[SymbolKey, TextRange]] = []
    for ref in doc.refs():
        a = ref.assertion
        if a is None or not _positive(a):
            continue
        if ref.kind == "tool" and ref.qualifier is not None:  # an MCP tool: by its server
            out.append((("mcp_tool", ref.qualifier, ref.text), ref.range))
            continue
        if ref.kind not in ("skill", "block", "step", "memory", "tool"):
            continue
        for key, rng in sem.eval_symbols(ref):
            if ref.kind == "memory" and key[0] != "field":
                continue  # the skill part of `<skill>.<field>` asserts the field only
            out.append((key, rng))
    return out


def _positive(a: Assertion) -> bool:
    """``a`` asserts what it names: a positive key the evaluation accepts, inside
    containers it accepts."""
    if not a.valid or a.key not in POSITIVE:
        return False
    parent = a.parent
    while parent is not None:
        if not parent.valid or parent.key not in _CONTAINERS:
            return False
        parent = parent.parent
    return True


def _items(project: Project, sem: Semantics) -> list[Item]:
    """Every skill, ordered block, tool and memory field of the project, in that order."""
    skills: list[Item] = []
    blocks: list[Item] = []
    tools: list[Item] = []
    fields: list[Item] = []
    mcp: dict[tuple[str, str], Item] = {}
    pmf = project.project_memory_file()
    md = project.project_memory
    if pmf is not None and md is not None:
        for name in dict.fromkeys(f.name for f in md.fields):
            f = md.field(name)
            if f is not None:
                fields.append(Item("field", ("field", "project", name), f"project.{name}",
                                   pmf.path, f.key.range))  # fmt: skip
    for sid in sorted(project.skills):
        sk = project.skills[sid]
        doc = sk.doc
        if sk.skill_md is None or doc is None:
            continue
        rng = doc.frontmatter.key_node("name") if doc.frontmatter is not None else None
        skills.append(Item("skill", ("skill", sid), sid, sk.skill_md.path,
                           rng.range if rng is not None else TextRange(0, 0)))  # fmt: skip
        for b in doc.blocks:
            if b.id:
                blocks.append(Item("block", ("block", sid, b.id), f"{sid}:{b.id}",
                                   sk.skill_md.path, b.id_range))  # fmt: skip
        for pf, mod in sk.tool_modules():
            for t in sem.tools_in(pf, mod):
                if t.kind != "possible" and not t.name.startswith("run_after_setting_"):
                    tools.append(Item("tool", ("tool", sid, t.name), t.name, pf.path,
                                      t.name_range))  # fmt: skip
        for name, server in sorted(sem.mcp_tools(doc).items()):
            if (server, name) not in mcp:
                mcp[(server, name)] = Item("tool", ("mcp_tool", server, name),
                                           f"mcp/{server}:{name}", None, None)  # fmt: skip
        smd = sk.memdoc
        if sk.memory is not None and smd is not None:
            for name in dict.fromkeys(f.name for f in smd.fields):
                f = smd.field(name)
                if f is not None:
                    fields.append(Item("field", ("field", sid, name), f"{sid}.{name}",
                                       sk.memory.path, f.key.range))  # fmt: skip
    for pf, mod in project.shared_tool_files():
        for t in sem.tools_in(pf, mod):
            if t.kind != "possible":
                tools.append(Item("tool", ("tool", "", t.name), t.name, pf.path, t.name_range))
    tools += [mcp[k] for k in sorted(mcp)]
    return skills + blocks + tools + fields


def _steps(project: Project, places: dict[SymbolKey, list[Location]]) -> list[Item]:
    """Every step of each block one of whose steps an assertion names."""
    blocks = sorted({(k[1], k[2]) for k in places})
    out: list[Item] = []
    for sid, bid in blocks:
        sk = project.skill(sid)
        doc = sk.doc if sk is not None else None
        blk = doc.block(bid) if doc is not None else None
        if sk is None or sk.skill_md is None or blk is None:
            continue
        for st in blk.steps:
            if st.id and st.id != "END" and st.id_node is not None:
                key = ("step", sid, bid, st.id)
                out.append(Item("step", key, f"{sid}:{bid}.{st.id}", sk.skill_md.path,
                                st.id_node.range, list(places.get(key, ()))))  # fmt: skip
    return out


def scenario_count(project: Project, sid: str) -> tuple[int, list[Location]] | None:
    """How many scenarios assert skill ``sid`` and where (the skill's code lens); None when
    the project has no scenario."""
    paths = scenario_files(project)
    if not paths:
        return None
    sem = Semantics(project)
    key = ("skill", sid)
    places: list[Location] = []
    for path in paths:
        if why_not_counted(project, path) is None:
            doc: ScenarioDoc = project.files[path].doc
            places += [Location(path, rng) for k, rng in asserted_names(sem, doc) if k == key]
    return len({loc.path for loc in places}), places
