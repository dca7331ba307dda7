"""The workspace model: discovery, the symbol/reference index, overlays, incremental updates."""

from __future__ import annotations

import os
from pathlib import Path

from mantle_lsp import parallel
from mantle_lsp.ide.diagnostics import project_diagnostics
from mantle_lsp.model import layout
from mantle_lsp.model.project import Project
from mantle_lsp.model.symbols import qualified_name
from mantle_lsp.model.workspace import Workspace
from support import check_diagnostics, write_fixture

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
    return context.memory.get("«ns:card».«tool_get:reason»")
//- skills/card/responses.yml
responses:
  utter_reason:
    - text: "You said {session.«ns:card».«placeholder:reason»} and {«bare_placeholder:reason»}."
      condition: session.«ns:card».«condition:reason» == 'lost'
      buttons:
        - title: Stolen
          payload: set:session.«ns:card».«set_payload:reason»=stolen
    - text: Tell me why.
//- skills/card/skill.md
---
description: Replace a card.
tool_constraints:
  - record:
      requires: not session.«ns:card».«condition:reason»
---
Ask for the `«backticked:reason»` with @memory.«ns:card».«memory_token:reason».

if: session.«ns:card».«condition:reason» == 'stolen'
Warn.

:::ordered_block id=main
steps:
  - id: ask
    collect: «collect:reason»
  - id: store
    execute_tool: record
    parameters:
      reason: session.«ns:card».«execute_param:reason»
    next:
      - if: "session.«ns:card».«condition:reason»"
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
if: session.«ns:card».«condition:reason» == 'lost'
Offer help.
"""


def test_every_reference_form_is_indexed_with_its_name_range(tmp_path: Path) -> None:
    """Each reference covers exactly the referenced name (so rename = replace each range);
    the namespace part of a qualified reference is a reference to the skill."""
    fx = write_fixture(tmp_path, EVERY_FORM)
    proj = Project.load(fx.root)
    key = ("field", "card", "reason")
    [sym] = proj.index.lookup(key)
    assert qualified_name(key) == "card.reason"
    assert sym.path == fx.root / "skills/card/memory.yml"
    [d] = [m for m in fx.marks if m.label == "def"]
    assert sym.range is not None and (sym.range.start, sym.range.end) == (d.start, d.end)

    def refs(k: tuple[str, ...]) -> list[tuple[str, int, int, str]]:
        return sorted(
            (r.path.relative_to(fx.root).as_posix(), r.range.start, r.range.end, r.form)
            for r in proj.index.references_to(k)
        )

    expected = sorted(
        (m.path, m.start, m.end, m.label) for m in fx.marks if m.label not in ("def", "ns")
    )
    assert refs(key) == expected
    soft = [r for r in proj.index.references_to(key) if r.soft]
    assert [r.form for r in soft] == ["backticked"]
    namespaces = sorted((m.path, m.start, m.end, "namespace") for m in fx.marks if m.label == "ns")
    assert [r for r in refs(("skill", "card")) if r[3] == "namespace"] == namespaces
    # and the project is valid
    assert all(d.severity == "hint" for ds in project_diagnostics(proj).values() for d in ds)


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
    assert all(d.severity == "hint" for ds in project_diagnostics(proj).values() for d in ds)


def test_unreadable_and_undecodable_files_are_diagnostics(tmp_path: Path) -> None:
    def damage(root: Path) -> None:
        (root / "skills/a/memory.yml").write_bytes(b"schema:\n  public:\n    x: {type: \xff}\n")
        (root / "skills/a/responses.yml").write_bytes(b"\x00\x01binary")

    bad = len("schema:\n  public:\n    x: {type: ")
    check_diagnostics(
        tmp_path,
        "//- skills/a/skill.md\n---\ndescription: A.\n---\nText.\n",
        severities={"lsp.file.invalid_utf8": "error"},
        prepare=damage,
        unmarked=[
            ("skills/a/memory.yml", bad, bad + 1, "lsp.file.invalid_utf8"),
            # the rest of the file is still analysed (the bad byte reads as U+FFFD)
            ("skills/a/memory.yml", bad, bad + 1, "lsp.memory.unknown_type"),
            ("skills/a/responses.yml", 0, 0, "lsp.file.binary"),
        ],
    )


def test_visibility_change_affects_readers_in_other_skills(tmp_path: Path) -> None:
    fx = write_fixture(tmp_path, EVERY_FORM)
    ws = Workspace()
    [proj] = ws.add_folder(fx.root)
    root = fx.root.resolve()
    mem = root / "skills/card/memory.yml"
    affected = ws.open_buffer(mem, mem.read_text().replace("public:", "private:"), 1)
    other = root / "skills/other/skill.md"
    assert other in affected
    [d] = project_diagnostics(proj)[other]
    assert "a private field of skill `card`" in d.message


def test_file_diagnostics_equal_the_whole_project_run(tmp_path: Path) -> None:
    from mantle_lsp.ide.diagnostics import file_diagnostics

    for example in ("telecom", "telecom-broken"):
        proj = Project.load(Path(__file__).resolve().parents[1] / "examples" / example)
        whole = project_diagnostics(proj)
        for path in proj.files:
            assert file_diagnostics(proj, [path]) == {path: whole[path]}, path


def _index_snapshot(proj: Project) -> tuple[list[tuple[object, ...]], list[tuple[object, ...]]]:
    idx = proj.index
    syms = sorted((s.key, str(s.path), s.range) for syms in idx.symbols.values() for s in syms)
    refs = sorted((r.key, str(r.path), r.range, r.form, r.soft) for r in idx.references)
    return syms, refs


def test_incremental_index_equals_a_fresh_build(tmp_path: Path) -> None:
    """A sequence of edits applied one file at a time leaves the same symbols, references
    and diagnostics as loading the final files from scratch."""
    import random

    fx = write_fixture(tmp_path, EVERY_FORM)
    root = fx.root.resolve()
    ws = Workspace()
    [proj] = ws.add_folder(root)
    edits = [
        ("skills/card/memory.yml", "reason:", "cause:"),
        ("skills/card/skill.md", "collect: reason", "collect: cause"),
        ("skills/card/tools.py", '"reason"', '"cause"'),
        ("memory.yml", "authenticated:", "signed_in:"),
        ("skills/other/skill.md", "session.card.reason", "session.card.cause"),
        ("skills/card/responses.yml", "{reason}", "{cause}"),
        ("skills/card/skill.md", "id=main", "id=flow"),
        ("skills/card/skill.md", "then: done", "then: ask"),
    ]
    rng = random.Random(7)
    for _ in range(3):
        rng.shuffle(edits)
        for rel, old, new in edits:
            path = root / rel
            text = ws.read(path).text
            if old in text:
                ws.open_buffer(path, text.replace(old, new, 1), 1)
            fresh = Project(root, ws.read)
            fresh.rescan()
            assert _index_snapshot(proj) == _index_snapshot(fresh), (rel, old, new)
            assert project_diagnostics(proj) == project_diagnostics(fresh)
    # a new skill appears and disappears
    new_md = root / "skills/extra/skill.md"
    ws.open_buffer(new_md, "---\ndescription: Extra.\n---\nRead @memory.card.cause.\n", 1)
    fresh = Project(root, ws.read)
    fresh.rescan()
    fresh.set_source(new_md, ws.read(new_md))
    assert _index_snapshot(proj) == _index_snapshot(fresh)


def test_ensure_project_for_a_non_mantle_file_keeps_the_loaded_project(tmp_path: Path) -> None:
    fx = write_fixture(tmp_path, EVERY_FORM)
    ws = Workspace()
    [proj] = ws.add_folder(fx.root)
    md = (fx.root / "skills/other/skill.md").resolve()
    ws.open_buffer(md, "---\ndescription: Edited.\n---\nText.\n", 2)
    readme = fx.root / "README.md"
    readme.write_text("notes\n")
    assert ws.ensure_project_for(readme) is proj
    assert proj.files[md].source.version == 2  # the open buffer survived


# -- the layout interface: what exists, as the server keeps it (issue 30) -----------------

IMPORTS_A_DISK_MODULE = """\
//- agent.yml
agent: {persona: x}
orchestrator: {model_group: main}
//- skills/card/skill.md
---
description: Replace a card.
---
Text.
//- skills/card/tools.py
import lib.build.rates
"""


SPREAD_IMPORTS = """\
//- agent.yml
agent: {persona: x}
orchestrator: {model_group: main}
//- skills/a_card/skill.md
---
description: Replace a card.
---
Text.
//- skills/a_card/tools.py
import lib.build.rates
//- skills/b_loan/skill.md
---
description: Take a loan.
---
Text.
//- skills/b_loan/tools.py
import lib.build.fees
"""


def test_a_spread_load_keeps_what_every_worker_was_told_of_the_disk(tmp_path: Path) -> None:
    """A large project indexed by several processes (parallel.py), then taken over by the
    server: a file event for a module that one worker's rules found missing rechecks the
    project, as it does for a project loaded in one process."""
    write_fixture(tmp_path, SPREAD_IMPORTS)
    proj, found = parallel.check_project(tmp_path, jobs=2, min_skills=2)
    unresolved = sorted(
        d.path.parent.name
        for ds in found.values()
        for d in ds
        if d.code.endswith("unresolved_import")
    )
    assert unresolved == ["a_card", "b_loan"]  # a_card checked by worker 0, b_loan by worker 1
    ws = Workspace(layout.Layout(keep=True))
    ws.adopt(proj)
    for name in ("rates", "fees"):
        module = tmp_path / "lib" / "build" / f"{name}.py"
        module.parent.mkdir(parents=True, exist_ok=True)
        module.write_text("X = 1\n")
        assert ws.disk_changed(module) == set(proj.files), name


def test_a_kept_layout_answers_as_before_until_told_of_a_change(tmp_path: Path) -> None:
    lib = tmp_path / "lib"
    kept = layout.Layout(keep=True)
    assert not kept.is_dir(lib) and not layout.DISK.is_dir(lib)
    lib.mkdir()
    assert layout.DISK.is_dir(lib)  # asks the disk each time
    assert not kept.is_dir(lib)  # until a change of that path is reported
    assert kept.changed(tmp_path / "other") == set()
    assert not kept.is_dir(lib)
    assert kept.changed(tmp_path) == {str(lib)}  # a folder event covers what is below it
    assert kept.is_dir(lib)
    # a listing is forgotten when a path below it changes
    assert [e.name for e in kept.listing(str(tmp_path))] == ["lib"]
    (tmp_path / "x.py").write_text("")
    assert [e.name for e in kept.listing(str(tmp_path))] == ["lib"]
    assert kept.changed(tmp_path / "x.py") == set()  # nobody had asked about x.py itself
    assert sorted(e.name for e in kept.listing(str(tmp_path))) == ["lib", "x.py"]


def test_a_file_event_rechecks_the_project_only_when_a_rule_saw_that_path(
    tmp_path: Path,
) -> None:
    write_fixture(tmp_path, IMPORTS_A_DISK_MODULE)
    ws = Workspace(layout.Layout(keep=True))
    ws.add_folder(tmp_path)
    proj = ws.projects[tmp_path]

    def unresolved() -> list[str]:
        found = project_diagnostics(proj)
        return [d.code for ds in found.values() for d in ds if d.code.endswith("unresolved_import")]

    assert unresolved() == ["lsp.tools.unresolved_import"]
    module = tmp_path / "lib" / "build" / "rates.py"
    module.parent.mkdir(parents=True)
    module.write_text("RATE = 1\n")
    assert unresolved(), "not told yet"
    (tmp_path / "notes.py").write_text("")
    assert ws.disk_changed(tmp_path / "notes.py") == set()  # no rule asked about it
    assert ws.disk_changed(module) == set(proj.files)
    assert unresolved() == []
