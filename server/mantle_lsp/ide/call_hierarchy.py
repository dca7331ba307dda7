"""Call hierarchy: which skills start which skills, and which skills run which tools.

The items are skills (their ``skill.md``) and tools (their definition in a tool module).
The calls are what the files show, from the index's references:

* a skill starts a skill with a ``call:`` or ``link:`` step or an ``@skill`` token in its
  instructions (the model is told to hand over; ``call:`` / ``link:`` to another skill's
  block ``other__block`` count as starting ``other``);
* a skill runs a tool with an ``execute_tool`` step, an ``@tool`` token, or a block's
  ``tools:`` entry;
* a tool starts a skill with ``ActivateSkill(skill_id=...)`` in its code.

A skill's own tools that its text never names are not calls here (the model may run any
of them, but no line says so). Bundled default skills have no file, so they are no items.
Every range of a call lies in the caller's file, as LSP wants (``fromRanges``).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from ..model.layout import FileKind
from ..model.project import Project
from ..model.symbols import SymbolKey
from ..syntax.skill_md import SkillDoc
from ..syntax.text import TextRange
from ..syntax.tools_py import ToolModule
from .locate import target_at

ItemKind = Literal["skill", "tool"]

# reference forms in skill.md by what they start
SKILL_FORMS = frozenset({"call", "link", "skill_token"})
TOOL_FORMS = frozenset({"execute_tool", "tool_token", "block_tool"})


@dataclass(frozen=True)
class CallItem:
    key: SymbolKey  # ("skill", id) or ("tool", owner, name); owner "" for shared tools
    kind: ItemKind
    name: str
    detail: str
    path: Path
    range: TextRange  # the whole skill.md, the tool's definition
    selection: TextRange  # the name


@dataclass(frozen=True)
class Call:
    item: CallItem  # the other end: the caller (incoming) or the callee (outgoing)
    ranges: tuple[TextRange, ...]  # where the calls are, in the caller's file


def item(project: Project, key: SymbolKey) -> CallItem | None:
    """The item of a skill or tool defined in the project's files (None otherwise)."""
    if key[0] == "skill" and len(key) == 2:
        sk = project.skill(key[1])
        pf = sk.skill_md if sk is not None else None
        if pf is None:
            return None
        sel = TextRange(0, 0)
        for sym in project.index.lookup(key):
            if sym.path == pf.path and sym.range is not None:
                sel = sym.range
        doc = pf.doc
        desc = doc.fm("description") if isinstance(doc, SkillDoc) else None
        value = getattr(desc, "value", None)
        detail = value.strip().splitlines()[0] if isinstance(value, str) and value.strip() else ""
        return CallItem(key, "skill", key[1], detail, pf.path, TextRange(0, len(pf.text)), sel)
    if key[0] == "tool" and len(key) == 3:
        for sym in project.index.lookup(key):
            if sym.path is None or sym.range is None:
                continue
            rng = getattr(sym.obj, "def_range", None) or sym.range
            detail = f"tool of skill {key[1]}" if key[1] else "shared tool"
            return CallItem(key, "tool", key[2], detail, sym.path, rng, sym.range)
    return None


def prepare(project: Project, path: Path, offset: int) -> list[CallItem]:
    """The skill or tool at ``offset``: one named there (a reference or a definition), the
    tool whose definition holds the cursor, else the skill of a ``skill.md``."""
    t = target_at(project, path, offset)
    if t is not None and t.key[0] in ("skill", "tool"):
        found = item(project, _skill_of_target(project, t.key))
        return [found] if found is not None else []
    pf = project.files.get(path)
    if pf is None:
        return []
    if isinstance(pf.doc, ToolModule) and pf.kind is not FileKind.HELPER:
        owner = pf.skill_id if pf.kind is FileKind.SKILL_TOOLS and pf.skill_id else ""
        for td in pf.doc.tools:
            if td.def_range.start <= offset <= td.def_range.end:
                found = item(project, ("tool", owner, td.name))
                return [found] if found is not None else []
    if pf.kind is FileKind.SKILL_MD and pf.skill_id is not None:
        found = item(project, ("skill", pf.skill_id))
        return [found] if found is not None else []
    return []


def incoming(project: Project, key: SymbolKey) -> list[Call]:
    """Who starts or runs ``key``, one entry per caller, sorted by name."""
    return _group(
        project, [(caller, rng) for caller, callee, rng in edges(project) if callee == key]
    )


def outgoing(project: Project, key: SymbolKey) -> list[Call]:
    """What ``key`` starts or runs, one entry per callee, sorted by name."""
    return _group(
        project, [(callee, rng) for caller, callee, rng in edges(project) if caller == key]
    )


def edges(project: Project) -> list[tuple[SymbolKey, SymbolKey, TextRange]]:
    """Every call the files show: (caller, callee, range in the caller's file)."""
    out: list[tuple[SymbolKey, SymbolKey, TextRange]] = []
    for pf in project.files.values():
        refs = project.index.references_in(pf.path)
        if pf.kind is FileKind.SKILL_MD and pf.skill_id is not None:
            caller: SymbolKey = ("skill", pf.skill_id)
            for r in refs:
                if r.soft:
                    continue
                if r.key[0] == "skill" and r.form in SKILL_FORMS:
                    out.append((caller, _skill_of_target(project, r.key), r.range))
                elif r.key[0] == "tool" and r.form in TOOL_FORMS:
                    out.append((caller, r.key, r.range))
        elif isinstance(pf.doc, ToolModule) and pf.kind is not FileKind.HELPER:
            owner = pf.skill_id if pf.kind is FileKind.SKILL_TOOLS and pf.skill_id else ""
            for r in refs:
                if r.form != "activate_skill" or r.key[0] != "skill":
                    continue
                for td in pf.doc.tools:
                    if td.def_range.start <= r.range.start < td.def_range.end:
                        out.append((("tool", owner, td.name), r.key, r.range))
    return out


def _skill_of_target(project: Project, key: SymbolKey) -> SymbolKey:
    """``call: other__block`` names a block of skill ``other``: the call starts ``other``."""
    if key[0] == "skill" and not project.has_skill(key[1]) and "__" in key[1]:
        head = key[1].split("__", 1)[0]
        if project.has_skill(head):
            return ("skill", head)
    return key


def _group(project: Project, pairs: list[tuple[SymbolKey, TextRange]]) -> list[Call]:
    by: dict[SymbolKey, list[TextRange]] = {}
    for key, rng in pairs:
        by.setdefault(key, []).append(rng)
    out = []
    for key, rngs in by.items():
        it = item(project, key)
        if it is not None:
            out.append(Call(it, tuple(sorted(set(rngs)))))
    return sorted(out, key=lambda c: (c.item.name, str(c.item.path)))
