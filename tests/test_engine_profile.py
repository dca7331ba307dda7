"""The engine-version profile: detection from a rasa-pro pin, --engine, and 3.22 rules."""

from __future__ import annotations

from pathlib import Path

import pytest

from mantle_lsp.cli.main import main
from mantle_lsp.model.engine import detect_profile
from support import check_diagnostics, write_fixture

P322 = """\
//- requirements.txt
rasa-pro==3.22.0.dev1
"""


@pytest.mark.parametrize(
    ("files", "expected"),
    [
        ({"requirements.txt": "rasa-pro==3.22.0.dev1\n"}, "3.22"),
        ({"requirements-dev.txt": "pytest\nrasa_pro[full] >= 3.21.0\n"}, "3.21"),
        ({"pyproject.toml": '[project]\ndependencies = ["rasa-pro~=3.23.1"]\n'}, "3.22"),
        ({"pyproject.toml": '[tool.poetry.dependencies]\nrasa-pro = "^3.21"\n'}, "3.21"),
        ({"README.md": "rasa-pro 3.22\n"}, None),
    ],
)
def test_detect_profile(tmp_path: Path, files: dict[str, str], expected: str | None) -> None:
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    assert detect_profile(tmp_path) == expected


def test_322_attributes_warn_on_321(tmp_path: Path) -> None:
    check_diagnostics(
        tmp_path,
        """\
//- memory.yml
plan:
  type: text
  «engine_3_22_attribute:mutable»: true
  «engine_3_22_attribute:writable_by»: [card]
//- skills/card/skill.md
---
description: Card.
---
Show @memory.project.plan.
""",
    )


def test_322_rules(tmp_path: Path) -> None:
    check_diagnostics(
        tmp_path,
        P322
        + """\
//- memory.yml
plan:
  type: text
  mutable: true
  writable_by: [card, «writable_by_lists_unknown_skill:crad»]
shared:
  type: text
//- skills/card/memory.yml
schema:
  public:
    note:
      type: text
      «skill_field_mutable_not_allowed:mutable»: true
    shared:
      type: text
  private:
    secret:
      type: text
      «skill_field_writable_by_not_allowed:writable_by»: [card]
//- skills/card/tools.py
from rasa.mantle.tools.decorator import tool


@tool(description="Write.")
async def write(context=None):
    context.memory.set("plan", "x")
    context.memory.set(«tool_bare_memory_set_writes_skill_not_project_warning:"shared"», "y")
    context.memory.set("note", "z")
    return None
//- skills/other/tools.py
from rasa.mantle.tools.decorator import tool


@tool(description="Write.")
async def other_write(context=None):
    context.memory.set(«tool_sets_project_field_skill_not_in_writable_by:"project.plan"», "x")
    return None
//- skills/other/skill.md
---
description: Other.
---
Use @tool.other_write and @memory.project.shared.

:::ordered_block id=main
steps:
  - id: s
    set_memory:
      «set_memory_skill_not_in_writable_by:plan»: y
  - id: h
    execute_tool: record_handoff
    «unexpected_parameters:parameters»:
      reason: x
:::
//- skills/card/skill.md
---
description: Card.
---
Use @tool.write; read @memory.card.note, @memory.card.secret and @memory.project.plan.
""",
    )


def test_cli_engine_flag_overrides_detection(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    fx = write_fixture(
        tmp_path,
        P322
        + """\
//- memory.yml
plan:
  type: text
  mutable: true
//- skills/card/skill.md
---
description: Card.
---
Show @memory.project.plan.
""",
    )
    assert main(["check", str(fx.root)]) == 0
    assert "engine_3_22_attribute" not in capsys.readouterr().out
    assert main(["check", str(fx.root), "--engine", "3.21"]) == 0
    assert "warning[lsp.memory.engine_3_22_attribute]" in capsys.readouterr().out
