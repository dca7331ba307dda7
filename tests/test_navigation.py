"""Go to definition, find references and document highlights."""

from __future__ import annotations

from pathlib import Path

from mantle_lsp.ide.navigation import definition, highlights, references
from mantle_lsp.model.project import Project
from support import Fixture, write_fixture


def _load(tmp_path: Path, fixture: str) -> tuple[Fixture, Project, Path, int]:
    fx = write_fixture(tmp_path, fixture)
    assert fx.cursor is not None
    proj = Project.load(fx.root)
    rel, offset = fx.cursor
    return fx, proj, fx.root / rel, offset


def _marked(fx: Fixture, *labels: str) -> list[tuple[str, int, int]]:
    return sorted((m.path, m.start, m.end) for m in fx.marks if m.label in labels)


def check_definition(tmp_path: Path, fixture: str) -> None:
    """The definitions at the cursor are exactly the ranges marked `def`."""
    fx, proj, path, offset = _load(tmp_path, fixture)
    got = sorted(
        (loc.path.relative_to(fx.root).as_posix(), loc.range.start, loc.range.end)
        for loc in definition(proj, path, offset)
    )
    assert got == _marked(fx, "def")


def check_references(tmp_path: Path, fixture: str, include_declaration: bool) -> None:
    """The references at the cursor are exactly the ranges marked `ref` (and `def` when
    the declaration is included), in file and position order, then the backticked
    mentions in prose marked `mention`, in the same order."""
    fx, proj, path, offset = _load(tmp_path, fixture)
    got = [
        (loc.path.relative_to(fx.root).as_posix(), loc.range.start, loc.range.end)
        for loc in references(proj, path, offset, include_declaration)
    ]
    labels = ("ref", "def") if include_declaration else ("ref",)
    assert got == _marked(fx, *labels) + _marked(fx, "mention")


def check_highlights(tmp_path: Path, fixture: str) -> None:
    """The highlights at the cursor are the ranges of the cursor's file marked `read`,
    `write` or `text`, with that kind."""
    fx, proj, path, offset = _load(tmp_path, fixture)
    got = [(h.range.start, h.range.end, h.kind) for h in highlights(proj, path, offset)]
    rel = path.relative_to(fx.root).as_posix()
    expected = sorted(
        (m.start, m.end, m.label)
        for m in fx.marks
        if m.path == rel and m.label in ("read", "write", "text")
    )
    assert got == expected


CARD = """\
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
async def «tool:record»(reason: str, context: ToolContext = None):
    context.memory.set("«ref:reason»", reason)
    return context.memory.get("card.«ref:reason»")
//- skills/card/responses.yml
responses:
  utter_reason:
    - text: "You said {«ref:reason»}."
      condition: session.card.«ref:reason» == 'lost'
    - text: Tell me why.
//- skills/card/skill.md
---
description: Replace a card.
---
Ask for the `«mention:reason»` with @memory.card.«ref:reason».

:::ordered_block id=main
steps:
  - id: ask
    collect: «ref:reason»
  - id: store
    execute_tool: record
:::
//- skills/other/skill.md
---
description: Another skill.
---
if: session.card.$0«ref:reason» == 'lost'
Offer help.
"""


def test_definition_of_a_field_from_another_skill(tmp_path: Path) -> None:
    check_definition(tmp_path, CARD)


def test_definition_on_the_definition_itself(tmp_path: Path) -> None:
    fixture = CARD.replace("«def:reason»:", "$0«def:reason»:").replace("$0«ref:reason»", "reason")
    check_definition(tmp_path, fixture)


def test_references_with_and_without_the_declaration(tmp_path: Path) -> None:
    """Every form, the backticked soft mention included; never the Python parameter."""
    check_references(tmp_path, CARD, include_declaration=False)
    check_references(tmp_path / "b", CARD, include_declaration=True)


def test_definition_of_a_namespace_is_the_skill(tmp_path: Path) -> None:
    check_definition(
        tmp_path,
        """\
//- skills/card/skill.md
---
«def:name»: Card replacement
description: Replace a card.
---
Text.
//- skills/other/skill.md
---
description: Another skill.
---
Offer help with @memory.ca$0rd.reason.
//- skills/card/memory.yml
schema:
  public:
    reason:
      type: text
""",
    )


def test_definition_of_a_skill_without_name_is_the_start_of_skill_md(tmp_path: Path) -> None:
    check_definition(
        tmp_path,
        """\
//- skills/card/skill.md
«def:»---
description: Replace a card.
---
Text.
//- skills/other/skill.md
---
description: Another skill.
---
Hand over to @skill.ca$0rd.
""",
    )


def test_references_of_a_skill_include_namespaces_and_calls(tmp_path: Path) -> None:
    check_references(
        tmp_path,
        """\
//- skills/card/skill.md
---
description: Replace a card.
---
Text.
//- skills/card/memory.yml
schema:
  public:
    reason:
      type: text
//- skills/flow/skill.md
---
description: A flow.
---
:::ordered_block id=main
steps:
  - id: go
    call: «ref:card»
    next:
      - if: session.«ref:card».reason == 'x'
        then: END
      - else: END
:::
//- skills/other/skill.md
---
description: Another skill.
---
Hand over to @skill.$0«ref:card» or read @memory.«ref:card».reason.
""",
        include_declaration=False,
    )


def test_response_defined_in_several_files_has_several_definitions(tmp_path: Path) -> None:
    check_definition(
        tmp_path,
        """\
//- responses.yml
responses:
  «def:utter_done»:
    - text: Done.
//- skills/card/responses.yml
responses:
  «def:utter_done»:
    - text: Card done.
//- skills/card/skill.md
---
description: Replace a card.
---
:::ordered_block id=main
steps:
  - id: end
    action: utter_$0done
:::
""",
    )


def test_bundled_symbols_have_no_definition(tmp_path: Path) -> None:
    check_definition(
        tmp_path,
        """\
//- skills/card/skill.md
---
description: Replace a card.
---
if: session.default_completed.wants_to$0_continue
Say goodbye.
""",
    )


def test_definitions_of_steps_blocks_tools_and_preconditions(tmp_path: Path) -> None:
    base = """\
//- agent.yml
agent:
  persona: Careful.
orchestrator:
  model_group: main
  preconditions:
    «pre:logged_in»:
      satisfied_when: session.project.ok
//- memory.yml
ok:
  type: bool
//- skills/card/tools.py
from rasa.mantle.tools.decorator import ToolContext, tool


@tool(description="Look up.")
async def «tool:lookup»(context: ToolContext = None):
    return None
//- skills/card/skill.md
---
description: Replace a card.
precondition: «@pre:logged_in»
---
Start with @block.«@block:main».

:::ordered_block id=«block:main»
steps:
  - id: «step:ask»
    execute_tool: «@tool:lookup»
    next: «@step:ask»
:::
"""
    for label in ("pre", "tool", "block", "step"):
        sub = tmp_path / label
        ref = f"«@{label}:"
        fixture = base.replace(f"«{label}:", "«def:")
        at = fixture.index(ref)
        end = fixture.index("»", at)
        fixture = fixture[:end] + "$0" + fixture[end:]
        fixture = fixture.replace(ref, "«@:")
        check_definition(sub, fixture)


def test_highlights_in_one_file_distinguish_reads_writes_and_mentions(tmp_path: Path) -> None:
    check_highlights(
        tmp_path,
        """\
//- skills/card/memory.yml
schema:
  public:
    reason:
      type: text
      llm_settable: true
      description: Why.
//- skills/card/skill.md
---
description: Replace a card.
tool_constraints:
  - record:
      requires: "session.card.«read:reason» != None"
---
Ask for the `«text:reason»` and say @memory.card.$0«read:reason».

:::ordered_block id=main
steps:
  - id: ask
    collect: «write:reason»
  - id: store
    set_memory:
      «write:reason»: lost
:::
//- skills/card/tools.py
from rasa.mantle.tools.decorator import ToolContext, tool


@tool(description="Record.")
async def record(context: ToolContext = None):
    context.memory.set("reason", "x")
""",
    )


def test_highlights_of_a_declaration_and_tool_writes(tmp_path: Path) -> None:
    check_highlights(
        tmp_path,
        """\
//- skills/card/memory.yml
schema:
  public:
    reason:
      type: text
//- skills/card/tools.py
from rasa.mantle.tools.decorator import ToolContext, tool


@tool(description="Record.")
async def record(reason: str, context: ToolContext = None):
    context.memory.set("$0«write:reason»", reason)
    return context.memory.get("card.«read:reason»")
//- skills/card/skill.md
---
description: Replace a card.
---
Text.
""",
    )
    check_highlights(
        tmp_path / "b",
        """\
//- skills/card/memory.yml
schema:
  public:
    $0«write:reason»:
      type: text
  private:
    other:
      type: text
//- skills/card/skill.md
---
description: Replace a card.
---
Text.
""",
    )


def test_nothing_under_the_cursor(tmp_path: Path) -> None:
    _, proj, path, offset = _load(
        tmp_path,
        """\
//- skills/card/skill.md
---
description: Replace a card.
---
Plain $0text.
""",
    )
    assert definition(proj, path, offset) == []
    assert references(proj, path, offset, True) == []
    assert highlights(proj, path, offset) == []
