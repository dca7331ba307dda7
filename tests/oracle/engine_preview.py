#!/usr/bin/env python3
"""The engine's side of the prompt-preview comparison (``make oracle``; docs/oracle.md).

Run with an interpreter that has rasa-pro installed::

    engine_preview.py JOBS.json

``JOBS.json`` is a list of ``{"project": ROOT, "skills": {SKILL_ID: [STATE, ...]}}``, a
state mapping slot names (``<namespace>.<entry>``) to values. For every skill the engine
loads, and every state, the engine's own functions render the skill's instruction text:
the skill catalog and project memory are loaded as the validator loads them, the active
skill's readable memory is built with the engine's visibility rule, and the text comes from
the function that assembles the active skill's instructions for its prose. Prints one JSON
line per project: ``{"project": ROOT, "texts": {SKILL_ID: [TEXT, ...]}, "error": null}``
(a skill the engine cannot load is left out; ``error`` when the project cannot be loaded).
"""

from __future__ import annotations

import contextlib
import json
import logging
import sys
import traceback
from pathlib import Path
from typing import Any


def _render(root: Path, skills: dict[str, list[dict[str, Any]]]) -> dict[str, list[str]]:
    from rasa.mantle.memory.field import MemoryEntry
    from rasa.mantle.memory.manager import iter_readable_memory_fields
    from rasa.mantle.memory.schema import ProjectMemorySchema
    from rasa.mantle.prompts.state import _active_skill_instructions
    from rasa.mantle.skills.catalog import (
        SkillCatalog,
        load_default_skill_catalog_result,
        load_skill_catalog_result,
    )

    defaults = load_default_skill_catalog_result().catalog.skills
    loaded = load_skill_catalog_result(root, inherit_flags_from=defaults).catalog
    catalog = SkillCatalog(skills={**defaults, **loaded.skills})
    memory_file = root / "memory.yml"
    project_memory = (
        ProjectMemorySchema.from_yaml(memory_file)
        if memory_file.is_file()
        else ProjectMemorySchema()
    )
    out: dict[str, list[str]] = {}
    for sid, states in skills.items():
        skill = loaded.skills.get(sid)
        if skill is None:
            continue
        texts = []
        for state in states:
            entries = {
                slot: MemoryEntry(field=field, value=state.get(slot))
                for slot, field in iter_readable_memory_fields(catalog, project_memory, sid)
            }
            values = {slot: e.value for slot, e in entries.items()}
            texts.append(
                _active_skill_instructions(
                    skill, None, values, in_ordered_block=False, memory_entries=entries
                )
            )
        out[sid] = texts
    return out


def main() -> int:
    jobs = json.loads(Path(sys.argv[1]).read_text(encoding="utf-8"))
    logging.disable(logging.CRITICAL)
    for job in jobs:
        root = Path(job["project"])
        error = None
        texts: dict[str, list[str]] = {}
        try:
            with contextlib.redirect_stdout(sys.stderr):
                texts = _render(root, job["skills"])
        except Exception as exc:  # a project the engine cannot load: reported, not compared
            traceback.print_exc(file=sys.stderr)
            error = f"{type(exc).__name__}: {exc}"
        line = {"project": str(root), "texts": texts, "error": error}
        sys.stdout.write(json.dumps(line, ensure_ascii=False) + "\n")
        sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
