"""The workspace model: discovery, the symbol/reference index, overlays, incremental updates."""

from __future__ import annotations

import os
from pathlib import Path

from mantle_lsp.ide.diagnostics import project_diagnostics
from mantle_lsp.model import layout
from mantle_lsp.model.project import Project
from mantle_lsp.model.symbols import qualified_name
from mantle_lsp.model.workspace import Workspace
from support import write_fixture

EVERY_FORM = """\
//- memory.yml
authenticated:
  type: bool
//- skills/card/memory.yml
schema:
  public:
    «def:reason»:
      type: categorical
      enum_values: [lost, stolen]
      llm_settable: true
      description: Why.
//- skills/card/tools.py
from rasa.mantle.tools.decorator import ToolContext, tool


@tool(description="Record.")
async def record(reason: str, context: ToolContext = None):
    context.memory.set("«tool_set:reason»", reason)
    return context.memory.get("«tool_get:card.reason»")
//- skills/card/responses.yml
responses:
  utter_reason:
    - text: "You said «placeholder:{session.card.reason}» and «bare:{reason}»."
      condition: «condition:session.card.reason» == 'lost'
      buttons:
        - title: Stolen
          payload: set:«set_payload:session.card.reason»=stolen
    - text: Tell me why.
//- skills/card/skill.md
---
description: Replace a card.
tool_constraints:
  - record:
      requires: not «condition:session.card.reason»
---
Ask for @memory.card.reason first: «memory_token:@memory.card.reason».

if: «condition:session.card.reason» == 'stolen'
Warn.

:::ordered_block id=main
steps:
  - id: ask
    collect: «collect:reason»
  - id: store
    execute_tool: record
    parameters:
      reason: «execute_param:session.card.reason»
    next:
      - if: «condition:session.card.reason»
        then: done
      - else: done
  - id: done
    set_memory:
      «set_memory:reason»: lost
:::
//- skills/other/skill.md
---
description: Another skill.
---
if: «condition:session.card.reason» == 'lost'
Offer help.
"""


def test_every_reference_form_is_indexed_with_its_range(tmp_path: Path) -> None:
    fx = write_fixture(tmp_path, EVERY_FORM)
    proj = Project.load(fx.root)
    key = ("field", "card", "reason")
    [sym] = proj.index.lookup(key)
    assert qualified_name(key) == "card.reason"
    assert sym.path == fx.root / "skills/card/memory.yml"
    defs = [m for m in fx.marks if m.label == "def"]
    assert sym.range is not None and (sym.range.start, sym.range.end) == (
        defs[0].start,
        defs[0].end,
    )
    got = sorted(
        (r.path.relative_to(fx.root).as_posix(), r.range.start, r.range.end, r.form)
        for r in proj.index.references_to(key)
    )
    want_forms = {
        "condition": "condition",
        "memory_token": "memory_token",
        "placeholder": "placeholder",
        "bare": "bare_placeholder",
        "set_payload": "set_payload",
        "collect": "collect",
        "set_memory": "set_memory",
        "execute_param": "execute_param",
        "tool_set": "tool_set",
        "tool_get": "tool_get",
    }
    expected = sorted(
        (m.path, m.start, m.end, want_forms[m.label]) for m in fx.marks if m.label != "def"
    )
    # The first `@memory.card.reason` on the prose line is unmarked but a reference too.
    extra = [g for g in got if g not in expected]
    assert [g[3] for g in extra] == ["memory_token"]
    assert [g for g in got if g in expected] == expected
    # and the project is valid
    assert all(not ds for ds in project_diagnostics(proj).values())


def test_discovery_nested_projects_scratch_skills_and_symlink_loops(tmp_path: Path) -> None:
    write_fixture(
        tmp_path / "outer",
        """\
//- skills/a/skill.md
---
description: A.
---
Text.
//- skills/_scratch/skill.md
not even frontmatter
//- examples/inner/agent.yml
agent: {persona: x}
orchestrator: {model_group: main}
//- examples/inner/skills/b/skill.md
---
description: B.
---
Text.
//- node_modules/pkg/agent.yml
agent: {persona: ignored}
""",
    )
    (tmp_path / "outer/node_modules/pkg/integrations.yml").write_text("{}\n")
    os.symlink(tmp_path / "outer", tmp_path / "outer/examples/loop")
    roots = layout.find_projects(tmp_path)
    assert roots == [tmp_path / "outer", tmp_path / "outer/examples/inner"]
    ws = Workspace()
    ws.add_folder(tmp_path)
    inner_file = tmp_path / "outer/examples/inner/skills/b/skill.md"
    proj = ws.project_for(inner_file)
    assert proj is not None and proj.root == tmp_path / "outer/examples/inner"
    outer = ws.project_for(tmp_path / "outer/skills/a/skill.md")
    assert outer is not None and list(outer.skills) == ["a"]  # _scratch is skipped


def test_open_buffer_overrides_disk_and_close_restores_it(tmp_path: Path) -> None:
    fx = write_fixture(tmp_path, EVERY_FORM)
    ws = Workspace()
    [proj] = ws.add_folder(fx.root)
    other = fx.root / "skills/other/skill.md"
    text = other.read_text().replace("session.card.reason", "session.card.reasn")
    affected = ws.open_buffer(other, text, version=3)
    assert other.resolve() in affected
    diags = project_diagnostics(proj)[other.resolve()]
    assert [d.code for d in diags] == ["mantle.validation.prose.unknown_memory_key"]
    assert proj.files[other.resolve()].source.version == 3
    assert "reasn" not in other.read_text()  # the disk is untouched
    ws.close_buffer(other)
    assert project_diagnostics(proj)[other.resolve()] == []


def test_update_reports_the_files_whose_diagnostics_may_change(tmp_path: Path) -> None:
    fx = write_fixture(tmp_path, EVERY_FORM)
    ws = Workspace()
    [proj] = ws.add_folder(fx.root)
    root = fx.root.resolve()
    # prose-only edit: the edited skill's files, nothing in other skills
    card_md = root / "skills/card/skill.md"
    affected = ws.open_buffer(card_md, card_md.read_text() + "\nMore prose.\n", 1)
    assert root / "skills/other/skill.md" not in affected
    assert card_md in affected and root / "skills/card/memory.yml" in affected
    # renaming a declared field: every file that references it is affected
    mem = root / "skills/card/memory.yml"
    affected = ws.open_buffer(mem, mem.read_text().replace("reason:", "cause:", 1), 1)
    assert root / "skills/other/skill.md" in affected
    assert root / "skills/card/responses.yml" in affected
    assert root / "skills/card/tools.py" in affected
    diags = project_diagnostics(proj)
    assert [d.code for d in diags[root / "skills/other/skill.md"]] == [
        "mantle.validation.prose.unknown_memory_key"
    ]


def test_file_deleted_and_recreated_on_disk(tmp_path: Path) -> None:
    fx = write_fixture(tmp_path, EVERY_FORM)
    ws = Workspace()
    [proj] = ws.add_folder(fx.root)
    mem = (fx.root / "skills/card/memory.yml").resolve()
    saved = mem.read_text()
    mem.unlink()
    ws.file_changed(mem)
    assert mem not in proj.files
    assert any(
        d.code == "mantle.validation.prose.unknown_memory_key"
        for d in project_diagnostics(proj)[(fx.root / "skills/other/skill.md").resolve()]
    )
    mem.write_text(saved)
    ws.file_changed(mem)
    assert all(not ds for ds in project_diagnostics(proj).values())


def test_unreadable_and_undecodable_files_are_diagnostics(tmp_path: Path) -> None:
    fx = write_fixture(
        tmp_path,
        """\
//- skills/a/skill.md
---
description: A.
---
Text.
""",
    )
    (fx.root / "skills/a/memory.yml").write_bytes(b"schema:\n  public:\n    x: {type: \xff}\n")
    (fx.root / "skills/a/responses.yml").write_bytes(b"\x00\x01binary")
    proj = Project.load(fx.root)
    diags = project_diagnostics(proj)
    # the rest of the file is still analysed (the bad byte reads as U+FFFD)
    [bad] = [d for d in diags[fx.root / "skills/a/memory.yml"] if d.code == "lsp.file.invalid_utf8"]
    assert bad.severity == "error"
    assert bad.range.start == len("schema:\n  public:\n    x: {type: ")
    assert [d.code for d in diags[fx.root / "skills/a/responses.yml"]] == ["lsp.file.binary"]
