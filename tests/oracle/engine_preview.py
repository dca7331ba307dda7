#!/usr/bin/env python3
"""The engine's side of the prompt-preview comparison (``make oracle``; docs/oracle.md).

Run with an interpreter that has rasa-pro installed::

    engine_preview.py JOBS.json

``JOBS.json`` is a list of ``{"project": ROOT, "skills": {SKILL_ID: [STATE, ...]}}``, a
state mapping slot names (``<namespace>.<entry>``) to values. For every skill the engine
loads, and every state, the engine's own functions render the skill's instruction text:
the skill catalog and project memory are loaded as the validator loads them, the active
skill's readable memory is built with the engine's visibility rule, and the text comes from
the function that assembles the active skill's instructions for its prose. The same for
every step of every ordered block of the skill: the block's activation target is resolved
through the catalog, the step looked up in it by id (as the engine finds the active step
of a frame), and its text comes from the function that assembles the active step's
instructions. Prints one JSON line per project::

    {"project": ROOT, "texts": {SKILL_ID: [TEXT, ...]},
     "steps": {SKILL_ID: [[BLOCK_ID, STEP_ID, [TEXT, ...]], ...]}, "error": null}

(a skill the engine cannot load is left out; ``error`` when the project cannot be loaded;
a step id given twice in one block is rendered once, as the engine finds it).
"""

from __future__ import annotations

import contextlib
import json
import logging
import sys
import traceback
from pathlib import Path
from typing import Any

Rendered = tuple[dict[str, list[str]], dict[str, list[list[Any]]]]


def _render(root: Path, skills: dict[str, list[dict[str, Any]]]) -> Rendered:
    from rasa.mantle.memory.field import MemoryEntry
    from rasa.mantle.memory.manager import iter_readable_memory_fields
    from rasa.mantle.memory.schema import ProjectMemorySchema
    from rasa.mantle.prompts.state import _active_skill_instructions, _active_step_instructions
    from rasa.mantle.skills.catalog import (
        SkillCatalog,
        is_ordered_block_target_id,
        load_default_skill_catalog_result,
        load_skill_catalog_result,
        ordered_blocks_in_body,
    )
    from rasa.mantle.skills.skill import format_ordered_block_target_id

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
    steps_out: dict[str, list[list[Any]]] = {}
    for sid, states in skills.items():
        skill = loaded.skills.get(sid)
        if skill is None:
            continue
        # every (block, step id) once, with the step the engine finds for that id
        targets = []
        for block in ordered_blocks_in_body(skill):
            target_id = format_ordered_block_target_id(sid, block.block_id)
            target = catalog.resolve_activation_target(target_id)
            in_block = is_ordered_block_target_id(sid, target_id)
            for step_id in dict.fromkeys(st.id for st in block.steps):
                step = target.step_by_id(step_id) if target is not None else None
                targets.append((block.block_id, step_id, step, target, in_block, []))
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
            for _, _, step, target, in_block, step_texts in targets:
                step_texts.append(
                    _active_step_instructions(
                        step, skill, target, in_ordered_block=in_block, memory_entries=entries
                    )
                )
        out[sid] = texts
        steps_out[sid] = [[b, st, step_texts] for b, st, _, _, _, step_texts in targets]
    return out, steps_out


def main() -> int:
    jobs = json.loads(Path(sys.argv[1]).read_text(encoding="utf-8"))
    logging.disable(logging.CRITICAL)
    for job in jobs:
        root = Path(job["project"])
        error = None
        texts: dict[str, list[str]] = {}
        steps: dict[str, list[list[Any]]] = {}
        try:
            with contextlib.redirect_stdout(sys.stderr):
                texts, steps = _render(root, job["skills"])
        except Exception as exc:  # a project the engine cannot load: reported, not compared
            traceback.print_exc(file=sys.stderr)
            error = f"{type(exc).__name__}: {exc}"
        line = {"project": str(root), "texts": texts, "steps": steps, "error": error}
        sys.stdout.write(json.dumps(line, ensure_ascii=False) + "\n")
        sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
