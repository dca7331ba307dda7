"""Which skills rasa-pro loads (issue 29): a skill folder the engine fails to load is gone
from its catalog, so every `@skill` / `call` / `link` to it fails too (naming the cause);
a folder under skills/ without skill.md fails to load even when it holds no Mantle file.
Each behaviour was confirmed on rasa-pro 3.21.0 (these fixtures run under `make oracle`)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mantle_lsp.cli.main import main
from mantle_lsp.ide.codes import FAILED_TO_LOAD, REGISTRY
from mantle_lsp.ide.diagnostics import file_diagnostics, project_diagnostics
from mantle_lsp.ide.rules import conditions
from mantle_lsp.model.project import Project
from mantle_lsp.model.semantics import Semantics
from mantle_lsp.syntax.skill_md import COMPILE_CODES, COMPILED_CONDITIONS
from support import check_diagnostics, write_fixture

# One skill per way of failing to load, and a skill referring to each of them.
DROPPED = """\
//- responses.yml
responses:
  utter_x:
    - text: X.
//- skills/billing/skill.md
---
description: Billing.
«requires.removed:requires»: session.project.x
---
Explain fees.
//- skills/blocks/skill.md
---
description: Blocks with a routing text.
---
:::ordered_block id=main
«ordered_block_description_forbidden:description»: Not allowed in a block.
steps:
  - id: a
    action: utter_x
:::
//- skills/memo/skill.md
---
description: Memo.
---
Take a note.
//- skills/memo/memory.yml
schema:
  public:
    note: «failed_to_load:text»
//- skills/trigger/skill.md
---
description: Trigger.
utter:
  - utter_x:
      on: activate
      when: "session.project.a «invalid_utter:==»"
---
Greet.
//- skills/hidden/skill.md
---
description: Hidden.
hidden: true
«requires.removed:requires»: session.project.x
---
Help.
//- skills/card/skill.md
---
description: Card.
---
Hand over to @skill.«invalid_target:billing», @skill.«invalid_target:blocks»,
@skill.«invalid_target:memo», @skill.«invalid_target:trigger» or @skill.«invalid_target:hidden».

:::ordered_block id=main
steps:
  - id: a
    call: «unresolved_call|invalid_target:billing»
  - id: b
    link: «unresolved_link|invalid_target:hidden»
:::
"""


def test_references_to_a_skill_the_engine_drops_fail_naming_the_cause(tmp_path: Path) -> None:
    got = check_diagnostics(tmp_path, DROPPED)
    card = [g for g in got if g[0] == "skills/card/skill.md"]
    said = {g[5].split("`")[1]: g[5] for g in card if g[3] == "skill.referenced.invalid_target"}
    assert "skills/billing/skill.md: skill-level `requires:` was removed" in said["@skill.billing"]
    assert "skills/blocks/skill.md: `description:` in an ordered block" in said["@skill.blocks"]
    assert "skills/memo/memory.yml: field `note` must be a mapping" in said["@skill.memo"]
    assert "skills/trigger/skill.md: malformed `utter` triggers" in said["@skill.trigger"]
    # a hidden skill that fails to load is missing, not hidden (no hidden_skill_reference)
    assert "fails to load" in said["@skill.hidden"]
    call = next(g for g in card if g[3] == "mantle.validation.flow.unresolved_call")
    assert "`call: billing` names a skill rasa-pro fails to load" in call[5]
    # and each points at the cause (related information: a note under `check`, a link
    # in the editor)
    proj = Project.load(tmp_path)
    found = project_diagnostics(proj)[tmp_path / "skills/card/skill.md"]
    memo = next(d for d in found if "@skill.memo" in d.message)
    (where,) = memo.related
    assert where.location.path == tmp_path / "skills/memo/memory.yml"
    assert where.message == "why rasa-pro fails to load skill `memo`"


def test_an_unreadable_skill_md_drops_the_skill(tmp_path: Path) -> None:
    def undecodable(root: Path) -> None:
        (root / "skills/utf/skill.md").write_bytes(b"---\ndescription: Caf\xe9.\n---\nHelp.\n")

    got = check_diagnostics(
        tmp_path,
        """\
//- skills/utf/skill.md
(replaced with bytes that are not UTF-8)
//- skills/card/skill.md
---
description: Card.
---
Hand over to @skill.«invalid_target:utf».
""",
        prepare=undecodable,
        unmarked=[("skills/utf/skill.md", 20, 21, "invalid_utf8")],
    )
    (ref,) = [g for g in got if g[3] == "skill.referenced.invalid_target"]
    assert "skills/utf/skill.md: the file is not valid UTF-8" in ref[5]


def test_skills_that_load_and_overrides_of_bundled_skills_stay_referable(tmp_path: Path) -> None:
    """An override of a bundled skill that fails to load leaves the bundled skill in the
    engine's catalog: references to it resolve. A skill that loads is silent, and so is
    one with a warning only."""
    check_diagnostics(
        tmp_path,
        """\
//- skills/default_completed/skill.md
---
description: Ask for more, our way.
«requires.removed:requires»: session.project.x
---
Ask whether the user needs anything else.
//- skills/billing/skill.md
---
description: Billing.
---
Explain fees.
//- skills/billing/memory.yml
schema:
  public:
    fee:
      type: «unknown_type:banana»
//- skills/card/skill.md
---
description: Card.
---
Hand over to @skill.billing.

:::ordered_block id=main
steps:
  - id: a
    call: default_completed
  - id: b
    link: billing
:::
""",
        severities={"unknown_type": "warning"},
        silent=["invalid_target", "unresolved_call", "unresolved_link"],
    )


FOLDERS = """\
//- agent.yml
«failed_to_load|failed_to_load|failed_to_load|failed_to_load:»agent:
  id: test-agent
  persona: A careful test assistant.
orchestrator:
  model_group: main
//- skills/empty/
//- skills/notes/notes.txt
Ideas for a notes skill.
//- skills/cache/__pycache__/tools.cpython-311.pyc
(compiled code left behind)
//- skills/.scratch/todo.txt
A hidden folder is a skill folder for the engine too.
//- skills/_drafts/notes.txt
Folders starting with `_` are skipped.
//- skills/_old/
//- skills/card/skill.md
---
description: Card.
---
Keep notes for the card. Hand over to @skill.«invalid_target:notes».

:::ordered_block id=main
steps:
  - id: a
    link: «unresolved_link|invalid_target:empty»
:::
"""


def test_a_skill_folder_without_a_mantle_file_fails_to_load(tmp_path: Path) -> None:
    got = check_diagnostics(tmp_path, FOLDERS, silent=["bare_skill_mention"])
    named = sorted(g[5].split(" ")[0] for g in got if g[0] == "agent.yml")
    assert named == ["skills/.scratch/", "skills/cache/", "skills/empty/", "skills/notes/"]
    (ref,) = [g for g in got if "@skill.notes" in g[5]]
    assert "(skills/notes/ has no skill.md)" in ref[5]
    # `check` places each at its folder
    found = project_diagnostics(Project.load(tmp_path))[tmp_path / "agent.yml"]
    folders = sorted(d.folder.name for d in found if d.folder)
    assert folders == [".scratch", "cache", "empty", "notes"]


def test_a_skill_folder_whose_only_mantle_file_is_not_skill_md(tmp_path: Path) -> None:
    """Reported on that file, in the editor and by `check` alike."""
    check_diagnostics(
        tmp_path,
        """\
//- skills/card/memory.yml
«failed_to_load:»schema:
  public:
    reason: {type: text}
//- skills/card/responses.yml
responses:
  utter_card:
    - text: Card.
//- skills/other/skill.md
---
description: Other.
---
Help.
""",
    )
    found = project_diagnostics(Project.load(tmp_path))[tmp_path / "skills/card/memory.yml"]
    assert [d.folder for d in found if d.code == FAILED_TO_LOAD] == [None]


def test_check_shows_a_folder_finding_at_the_folder(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    write_fixture(tmp_path, "//- skills/empty/\n//- skills/card/skill.md\n" + SKILL)
    monkeypatch.chdir(tmp_path)
    assert main(["check", "--output-format", "full", "."]) == 1
    out = capsys.readouterr().out
    first = out.splitlines()[0]
    assert first.startswith("skills/empty/: error[mantle.validation.skill.failed_to_load]")
    assert "agent.yml" not in out and " | " not in out  # no line, no snippet
    assert main(["check", "--output-format", "json", "."]) == 1
    (row,) = json.loads(capsys.readouterr().out)
    assert (row["path"], row["code"]) == ("skills/empty/", FAILED_TO_LOAD)


SKILL = "---\ndescription: Card.\n---\nHelp.\n"


def test_the_compile_codes_are_those_the_registry_folds_into_failed_to_load() -> None:
    folded = {c for c, i in REGISTRY.items() if i.engine_code == FAILED_TO_LOAD}
    assert folded == COMPILE_CODES
    for kind, code in COMPILED_CONDITIONS.items():
        assert conditions._SITE_CODES[kind][0] == code


def test_the_last_file_of_a_skill_folder_going_rechecks_the_anchor_file(tmp_path: Path) -> None:
    """Where a skill folder without skill.md is reported moves to agent.yml when its last
    Mantle file goes, and back to the file when one appears: the model says so itself
    (whatever other rules happen to read)."""
    write_fixture(
        tmp_path,
        "//- skills/card/skill.md\n" + SKILL + "//- skills/notes/responses.yml\nresponses:\n"
        "  utter_n:\n    - text: N.\n",
    )
    proj = Project.load(tmp_path)
    agent, responses = tmp_path / "agent.yml", tmp_path / "skills/notes/responses.yml"
    assert [d.folder for d in project_diagnostics(proj)[agent]] == []
    affected = proj.set_source(responses, None)
    assert agent in affected
    whole = project_diagnostics(proj)
    assert [d.folder for d in whole[agent]] == [tmp_path / "skills/notes"]
    assert file_diagnostics(proj, [agent])[agent] == whole[agent]
    affected = proj.set_source(responses, proj.reader(responses))
    assert agent in affected
    assert project_diagnostics(proj)[agent] == []


def test_a_skill_that_stops_loading_rechecks_the_files_referring_to_it(tmp_path: Path) -> None:
    write_fixture(
        tmp_path,
        "//- skills/billing/skill.md\n" + SKILL + "//- skills/card/skill.md\n---\n"
        "description: Card.\n---\nAsk @skill.billing, or say billing.\n"
        "//- skills/other/skill.md\n" + SKILL + "//- skills/plain/skill.md\n---\n"
        "description: Plain.\n---\nTalk about billing.\n",
    )
    proj = Project.load(tmp_path)
    billing, card = tmp_path / "skills/billing/skill.md", tmp_path / "skills/card/skill.md"
    plain = tmp_path / "skills/plain/skill.md"
    src = proj.reader(billing)
    broken = src.text.replace("---\n", "---\nrequires: session.project.x\n", 1)
    from mantle_lsp.model.source import source_from_text

    def codes() -> list[str]:
        return [d.code for d in project_diagnostics(proj)[card]]

    assert codes() == ["skill.prose.bare_skill_mention"]
    affected = proj.set_source(billing, source_from_text(billing, broken))
    assert {card, plain} <= affected and tmp_path / "skills/other/skill.md" not in affected
    assert Semantics(proj).dropped("billing") is not None
    assert file_diagnostics(proj, [card])[card] == project_diagnostics(proj)[card]
    # the engine leaves a skill it drops out of its bare-mention check too
    assert codes() == ["skill.referenced.invalid_target"]
    assert project_diagnostics(proj)[plain] == []
    # still failing, the cause moved: the references name it, the mentions do not care
    moved = broken.replace("---\nrequires", "---\nname: Billing\nrequires")
    affected = proj.set_source(billing, source_from_text(billing, moved))
    assert card in affected and plain not in affected
    assert proj.set_source(billing, src) >= {card, plain}
    # an edit that keeps it loading rechecks none of them
    assert card not in proj.set_source(billing, source_from_text(billing, src.text + "More.\n"))


def test_a_skill_folder_linked_to_the_project_root(tmp_path: Path) -> None:
    """`skills/up -> ..` is a skill folder for rasa-pro too: it looks for the root's
    skill.md and fails to load it. Its Mantle files are the project's own, seen again
    (reported on the first of them; the server keeps both names current)."""
    check_diagnostics(
        tmp_path,
        """\
//- memory.yml
tier:
  type: text
//- skills/up -> ..
//- skills/card/skill.md
---
description: Card.
---
Help.
""",
        unmarked=[
            ("skills/up/memory.yml", 0, 0, "failed_to_load"),
            ("skills/up/memory.yml", 0, 4, "missing_schema"),
        ],
        silent=["invalid_target"],
    )
