"""``make oracle``, prompt preview: our rendering of every skill's instructions
(ide/preview.py) against the engine's own (engine_preview.py), for several memory states.

The states of a project, the same for every skill in it (a skill reads what it may; the
rest counts as None on both sides): every slot unset; every declared field (every skill's,
public and private, and the project's) set to a typical value of its type; to a falsy
value; to a value of the wrong type (comparisons that fail); to a long multi-line value
(whitespace folding, the cut at 100 characters); and, for each categorical field, one
state per enum value. The texts must be identical (docs/oracle.md#prompt-preview): the
prose of every skill, and the instructions of every step of its ordered blocks (empty for a
step without instructions, on both sides).
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ENGINE_SCRIPT = HERE / "engine_preview.py"
MAX_ENUM_STATES = 24  # per project

_TYPICAL: dict[str, Any] = {
    "text": "lost card",
    "int": 3,
    "float": 120.5,
    "bool": True,
    "list": ["a", "b é"],
    "json": {"k": [1, None], "é": True},
    "any": {"k": "v"},
}
_FALSY: dict[str, Any] = {
    "text": "",
    "int": 0,
    "float": 0.0,
    "bool": False,
    "list": [],
    "json": {},
    "any": 0,
}
_WRONG: dict[str, Any] = {
    "text": 300,
    "int": "300",
    "float": "120.5",
    "bool": "yes",
    "list": "a",
    "json": 1,
    "any": [1],
}
_LONG = "first line\n\tsecond   line " + "x" * 120


@dataclass
class PreviewReport:
    compared: int = 0  # texts (prose and steps)
    skills: int = 0  # skills the engine loaded and rendered
    steps: int = 0  # ordered-block steps rendered (each under every state)
    step_texts: int = 0  # texts of steps that are not empty (steps with instructions)
    skipped: int = 0  # skills the engine could not load (not compared)
    mismatches: list[Mismatch] = field(default_factory=list)
    broken: list[str] = field(default_factory=list)  # projects the engine could not load


@dataclass(frozen=True)
class Mismatch:
    project: str
    skill: str
    state: dict[str, Any]
    ours: str
    engine: str
    step: str | None = None  # `block/step` for a step's instructions, None for the prose


def _fields(project: Any) -> list[tuple[str, str, tuple[object, ...]]]:
    """(slot, type, enum values) of every declared field of the project."""
    out: list[tuple[str, str, tuple[object, ...]]] = []
    pm = project.project_memory
    for f in pm.fields if pm is not None else []:
        out.append((f"project.{f.name}", f.type, tuple(f.enum_values)))
    for sid, sk in project.skills.items():
        md = sk.memdoc
        for f in md.fields if md is not None else []:
            out.append((f"{sid}.{f.name}", f.type, tuple(f.enum_values)))
    return out


def states_of(project: Any) -> list[dict[str, Any]]:
    fields = _fields(project)

    def each(table: dict[str, Any]) -> dict[str, Any]:
        out = {}
        for slot, typ, enum in fields:
            if typ == "categorical":
                out[slot] = table.get("text") if not enum or table is not _TYPICAL else enum[0]
            else:
                out[slot] = table.get(typ, table["text"])
        return out

    states: list[dict[str, Any]] = [
        {},
        each(_TYPICAL),
        each(_FALSY),
        each(_WRONG),
        {slot: _LONG for slot, _, _ in fields},
    ]
    typical = each(_TYPICAL)
    for slot, typ, enum in fields:
        if typ != "categorical":
            continue
        for v in enum:
            if len(states) >= 5 + MAX_ENUM_STATES:
                break
            states.append({**typical, slot: v})
    return [_jsonable(s) for s in states]


def _jsonable(state: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in state.items() if _is_json(v)}


def _is_json(v: object) -> bool:
    try:
        json.dumps(v)
    except (TypeError, ValueError):
        return False
    return True


def _nested(state: dict[str, Any]) -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    for slot, v in state.items():
        ns, entry = slot.split(".", 1)
        out.setdefault(ns, {})[entry] = v
    return out


def ours(
    project: Any, sid: str, state: dict[str, Any], step: tuple[str, str] | None = None
) -> str | None:
    """Our text: of the prose, or of ``step`` (block id, step id); None when we find no
    such skill or step."""
    from mantle_lsp.ide.preview import StepNotFound, preview_skill

    block, step_id = step if step is not None else (None, None)
    try:
        pv = preview_skill(project, sid, _nested(state), step_id, block)
    except StepNotFound:
        return None
    return pv.text if pv is not None else None


def compare_previews(engine_python: str, roots: Sequence[Path], cache: Path) -> PreviewReport:
    """Render every skill of ``roots`` under every state on both sides and compare."""
    from mantle_lsp.model.project import Project

    projects = {str(r): Project.load(r) for r in roots}
    jobs = []
    states: dict[str, list[dict[str, Any]]] = {}
    for name, proj in projects.items():
        states[name] = states_of(proj)
        sids = [sid for sid, sk in proj.skills.items() if sk.doc is not None]
        jobs.append({"project": name, "skills": {sid: states[name] for sid in sids}})
    cache.parent.mkdir(parents=True, exist_ok=True)
    cache.write_text(json.dumps(jobs, ensure_ascii=False), encoding="utf-8")
    proc = subprocess.run(
        [engine_python, str(ENGINE_SCRIPT), str(cache)], capture_output=True, text=True
    )
    report = PreviewReport()
    rows = [json.loads(line) for line in proc.stdout.splitlines() if line.startswith("{")]
    if proc.returncode != 0 or len(rows) != len(jobs):
        raise RuntimeError(proc.stderr[-4000:])
    for row in rows:
        name = row["project"]
        asked = next(len(j["skills"]) for j in jobs if j["project"] == name)
        if row["error"]:
            report.broken.append(f"{name}: {row['error']}")
            report.skipped += asked
            continue
        report.skipped += asked - len(row["texts"])
        for sid, texts in row["texts"].items():
            report.skills += 1
            for state, engine_text in zip(states[name], texts, strict=True):
                our_text = ours(projects[name], sid, state)
                report.compared += 1
                if our_text != engine_text:
                    report.mismatches.append(
                        Mismatch(name, sid, state, our_text or "", engine_text)
                    )
        for sid, steps in row["steps"].items():
            for block, step_id, step_texts in steps:
                report.steps += 1
                where = f"{block}/{step_id}"
                for state, engine_text in zip(states[name], step_texts, strict=True):
                    our_text = ours(projects[name], sid, state, (block, step_id))
                    report.compared += 1
                    report.step_texts += bool(engine_text)
                    if our_text != engine_text:
                        shown = "(no such step)" if our_text is None else our_text
                        report.mismatches.append(
                            Mismatch(name, sid, state, shown, engine_text, where)
                        )
    return report
