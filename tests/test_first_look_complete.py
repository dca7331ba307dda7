"""Whether a first look is all there is to say (``ide.diagnostics.first_look_complete``):
an editor shows a document's first look before the index only then, so that what it
shows never changes once the whole project is loaded (issue 32)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from mantle_lsp.ide.diagnostics import first_look, first_look_complete, project_diagnostics
from mantle_lsp.ide.rules import dataflow
from mantle_lsp.ide.rules.base import RULES, Checker
from mantle_lsp.model import layout
from mantle_lsp.model.project import Project
from support import first_look_differences, write_fixture
from test_lsp_support import TELECOM

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))
from generate import generate, generate_agent, generate_realistic

TOOLS = "from rasa.mantle.tools.decorator import ToolContext, tool\n"

# `reader` reads a project field in a condition; whether anything writes it decides a
# hint on that condition (only the whole project knows). `writer` writes it in its tool.
PROJECT = (
    """\
//- memory.yml
flag:
  type: bool
other:
  type: bool
//- skills/reader/skill.md
---
description: Reader.
---
if: session.project.flag
Say so.

if: session.project.other
Say that too.
//- skills/writer/skill.md
---
description: Writer.
---
Use @tool.raise_flag.
//- skills/writer/tools.py
"""
    + TOOLS
    + """
@tool(description="Raise it.")
async def raise_flag(context: ToolContext = None):
    context.memory.set("project.flag", True)
    return None
"""
)


def _look(root: Path, sid: str) -> tuple[Project, Path, bool]:
    files = list(layout.project_files(root))
    part = Project.load_around(root, files, sid)
    path = root / "skills" / sid / "skill.md"
    first_look(part, [path])
    return part, path, first_look_complete(part, path, sid)


def test_a_condition_on_a_field_nothing_writes_is_left_to_the_whole_project(
    tmp_path: Path,
) -> None:
    root = write_fixture(tmp_path, PROJECT).root
    _, path, complete = _look(root, "reader")
    assert not complete  # `other` is written nowhere: the whole check has a hint there
    whole = project_diagnostics(Project.load(root))[path]
    assert [d.code for d in whole] == ["lsp.condition.constant_never_written"]


def test_a_writer_in_another_skill_is_found(tmp_path: Path) -> None:
    text = PROJECT.replace("\nif: session.project.other\nSay that too.\n", "\n")
    root = write_fixture(tmp_path, text).root
    part, path, complete = _look(root, "reader")
    assert complete  # `flag` is written by `writer`'s tool, which the look read for it
    assert part.indexed is not None
    assert root / "skills" / "writer" / "tools.py" in part.indexed
    assert project_diagnostics(Project.load(root)).get(path, []) == []


def test_a_skill_md_writing_a_project_field_is_left_to_the_whole_project(
    tmp_path: Path,
) -> None:
    text = PROJECT + (
        "//- skills/setter/skill.md\n---\ndescription: Setter.\n---\nSet it.\n\n"
        ":::ordered_block id=main\nsteps:\n  - id: set\n    set_memory:\n      flag: true\n"
        "  - id: done\n    noop: true\n:::\n"
    )
    root = write_fixture(tmp_path, text).root
    assert not _look(root, "setter")[2]


def test_the_left_out_rules_that_report_on_skill_md_are_those_it_answers_for() -> None:
    """A new rule that reads every file and reports on skill.md files must be answered
    for in ``dataflow.unproven_on_skill_md`` (until then every first look is incomplete)."""
    left_out = {
        r.name
        for r in RULES
        for s in r.scopes
        if s.whole_project and layout.FileKind.SKILL_MD in s.reports_on
    }
    assert left_out == dataflow.SKILL_MD_WHOLE_PROJECT_RULES


def _projects(tmp_path: Path) -> list[Path]:
    return [
        TELECOM,
        TELECOM.parent / "telecom-broken",
        write_fixture(tmp_path / "f", PROJECT).root,
        generate(tmp_path / "dense", 12),
        generate_realistic(tmp_path / "realistic", 12),
        generate_agent(tmp_path / "agent", 80),
    ]


def test_written_for_certain_never_contradicts_the_whole_check(tmp_path: Path) -> None:
    """What a partial project shows written is not never-written in the whole one, for
    every field of every fixture (asked on the partial projects around each skill)."""
    asked = 0
    for root in _projects(tmp_path):
        whole = Project.load(root)
        full = Checker(whole)
        files = list(layout.project_files(root))
        for sid in whole.skills:
            part = Checker(Project.load_around(root, files, sid))
            keys = {(r.key[1], r.key[2]) for r in part.p.index.references if r.key[0] == "field"}
            for ns, entry in sorted(keys):
                if dataflow.written_for_certain(part, ns, entry):
                    asked += 1
                    assert not dataflow.is_never_written(full, ns, entry), (root, sid, ns, entry)
    assert asked > 50


@pytest.mark.parametrize("which", range(6))
def test_a_complete_first_look_is_the_whole_check_of_its_file(tmp_path: Path, which: int) -> None:
    root = _projects(tmp_path)[which]
    looked, differences = first_look_differences(root)
    assert looked >= 2
    assert differences == []
