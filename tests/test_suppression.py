"""Inline suppressions: `# mantle-lsp: ignore[CODE, …]` in YAML, Python and the YAML parts
of skill.md (not in prose), with unused and invalid suppressions reported; in `check`
(serial and spread over processes) alike."""

from __future__ import annotations

from pathlib import Path

import pytest

from mantle_lsp import parallel
from mantle_lsp.cli.main import main
from mantle_lsp.ide.diagnostics import project_diagnostics
from mantle_lsp.ide.suppression import INVALID, UNUSED, apply_suppressions
from mantle_lsp.model.project import Project
from support import assert_silent, shown, write_fixture

Got = list[tuple[str, int, int, str, str, str]]


def suppressed(root: Path) -> Got:
    proj = Project.load(root)
    found = apply_suppressions(proj, project_diagnostics(proj), proj.files)
    return sorted(
        (p.relative_to(root).as_posix(), d.range.start, d.range.end, d.code, d.severity, d.message)
        for p, ds in found.items()
        for d in ds
    )


def expect(tmp_path: Path, fixture: str, silent: tuple[str, ...] = ()) -> Got:
    """The diagnostics after suppression are exactly the marked ones (hints included);
    none of the ``silent`` codes is reported (``support.Coverage``)."""
    fx = write_fixture(tmp_path, fixture)
    got = suppressed(fx.root)
    want = sorted((m.path, m.start, m.end, m.label) for m in fx.marks)
    have = sorted(
        (p, s, e, next(lab for _, _, _, lab in want if c == lab or c.endswith("." + lab)))
        if any(c == lab or c.endswith("." + lab) for _, _, _, lab in want)
        else (p, s, e, c)
        for p, s, e, c, _, _ in got
    )
    assert have == want, got
    shown(fired={g[3] for g in got})
    assert_silent(silent, got, set())
    return got


MEMORY = """\
//- skills/card/memory.yml
schema:
  public:
    reason:
      type: text
      llm_settable: true
      description: Why the card is replaced.
//- skills/card/skill.md
---
description: Replace a card.
---
Confirm the reason (@memory.card.reason).
"""


def test_end_of_line_yaml_comment_silences_its_line(tmp_path: Path) -> None:
    expect(
        tmp_path,
        MEMORY
        + """\
//- agent.yml
agent:
  id: test-agent
  persona: A careful test assistant.
orchestrator:
  model_group: main
colour: blue  # mantle-lsp: ignore[lsp.config.ignored_key]
«ignored_key:size»: 3
""",
        silent=(UNUSED, INVALID),  # a well-formed suppression that silences something
    )


def test_comment_alone_on_a_line_silences_the_next_code_line(tmp_path: Path) -> None:
    expect(
        tmp_path,
        MEMORY
        + """\
//- agent.yml
agent:
  id: test-agent
  persona: A careful test assistant.
orchestrator:
  model_group: main
# mantle-lsp: ignore[lsp.config]

# (a prefix silences every code under it)
colour: blue
«ignored_key:size»: 3
""",
    )


def test_python_comment_silences_an_import(tmp_path: Path) -> None:
    got = expect(
        tmp_path,
        """\
//- skills/card/tools.py
from rasa_sdk import ToolContext, tool  # mantle-lsp: ignore[lsp.tools.obsolete_import]


@tool(description="Order a new card.")
async def order_card(context: ToolContext = None):
    note = "# mantle-lsp: ignore[lsp]"  # a string, not a comment: no suppression
    return None
//- skills/card/skill.md
---
description: Replace a card.
---
Use @tool.order_card once the user confirms.
""",
    )
    assert got == []


def test_skill_md_frontmatter_and_ordered_block_are_yaml(tmp_path: Path) -> None:
    expect(
        tmp_path,
        """\
//- skills/card/memory.yml
schema:
  public:
    reason:
      type: text
      llm_settable: true
      description: Why the card is replaced.
//- skills/card/skill.md
---
description: Replace a card.
colour: red  # mantle-lsp: ignore[skill.markdown.unknown_frontmatter_key]
---
Confirm @memory.card.reason.

:::ordered_block id=main
steps:
  - id: a
    instructions: Ask.
    # mantle-lsp: ignore[lsp.condition.unknown_memory_key]
    complete_when: session.card.nope
  - id: b
    instructions: Tell.
    complete_when: «unknown_memory_key:session.card.other»
:::
""",
    )


def test_no_suppression_in_prose(tmp_path: Path) -> None:
    """The engine sends HTML comments in prose to the model: no form is offered there, so
    neither an HTML nor a `#` comment in prose silences anything (nor is it reported)."""
    expect(
        tmp_path,
        """\
//- skills/card/memory.yml
schema:
  public:
    reason:
      type: text
      llm_settable: true
      description: Why the card is replaced.
//- skills/card/skill.md
---
description: Replace a card.
---
Confirm @memory.card.reason.
<!-- mantle-lsp: ignore[mantle.validation.prose] -->
Say «session_reference_in_instructions:session.card.reason». <!-- mantle-lsp: ignore[mantle] -->
Say «session_reference_in_instructions:session.card.reason». # mantle-lsp: ignore[mantle]
""",
    )


def test_unused_suppression_is_a_hint_on_the_comment(tmp_path: Path) -> None:
    got = expect(
        tmp_path,
        MEMORY.replace(
            "    reason:\n",
            "    reason:  «suppression.unused:# mantle-lsp: ignore[lsp.condition]»\n",
        ),
    )
    (row,) = got
    assert row[3] == UNUSED and row[4] == "hint"
    # silenced: the unused-field hint of `reason`, when the field is not referred to
    expect(
        tmp_path / "b",
        """\
//- skills/card/memory.yml
schema:
  public:
    reason:  # mantle-lsp: ignore[lsp.memory.unused_field, «suppression.unused:lsp.flow»]
      type: text
//- skills/card/skill.md
---
description: Replace a card.
---
Help.
""",
    )


def test_unknown_code_and_malformed_comment_are_warnings(tmp_path: Path) -> None:
    got = expect(
        tmp_path,
        MEMORY
        + """\
//- responses.yml
responses:
  utter_bye:  # mantle-lsp: ignore[«suppression.invalid:lsp.responses.unusedd»]
    - text: Goodbye!
  utter_hi:  «suppression.invalid:# mantle-lsp: ignore lsp.config»
    - text: Hi!
  utter_quoted:
    - text: "# mantle-lsp: ignore[lsp.config]"
    - text: |
        # mantle-lsp: ignore[lsp.config]
""",
    )
    assert {(c, s) for _, _, _, c, s, _ in got} == {(INVALID, "warning")}


def test_check_applies_suppressions_and_hides_the_hint_by_default(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    write_fixture(
        tmp_path,
        MEMORY
        + """\
//- agent.yml
agent:
  id: test-agent
  persona: A careful test assistant.
orchestrator:
  model_group: main
colour: blue  # mantle-lsp: ignore[lsp.config.ignored_key]
size: 3  # mantle-lsp: ignore[lsp.flow]
""",
    )
    monkeypatch.chdir(tmp_path)
    assert main(["check", "."]) == 0
    out = capsys.readouterr().out
    assert "colour" not in out and "size" in out and UNUSED not in out
    main(["check", ".", "--min-severity", "hint"])
    out = capsys.readouterr().out
    assert f"agent.yml:7:10: hint[{UNUSED}]" in out


def test_spread_check_applies_suppressions_like_the_serial_one(tmp_path: Path) -> None:
    skills = "".join(
        f"""\
//- skills/s{i}/skill.md
---
description: Skill {i}.
colour: red  # mantle-lsp: ignore[skill.markdown.unknown_frontmatter_key]
---
Help.

:::ordered_block id=main
steps:
  - id: a
    instructions: Ask.
    complete_when: session.s{i}.nope  # mantle-lsp: ignore[lsp.condition]
  - id: b
    instructions: Ask.
    complete_when: session.s{i}.other  # mantle-lsp: ignore[lsp.flow]
:::
"""
        for i in range(6)
    )
    fx = write_fixture(tmp_path, skills)
    _, serial = parallel.serial(fx.root, None)
    _, spread = parallel.check_project(fx.root, 3, None, min_skills=1)

    def rows(found: parallel.Found) -> list[tuple[str, int, str]]:
        return sorted((p.name, d.range.start, d.code) for p, ds in found.items() for d in ds)

    assert rows(spread) == rows(serial)
    codes = [c for _, _, c in rows(serial)]
    assert codes.count("lsp.condition.unknown_memory_key") == 6  # the `other` ones
    assert codes.count(UNUSED) == 6
    assert "skill.markdown.unknown_frontmatter_key" not in codes
