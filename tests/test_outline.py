"""Document outline and workspace symbol search."""

from __future__ import annotations

import textwrap
from pathlib import Path

from mantle_lsp.ide.outline import (
    DocSymbol,
    document_symbols,
    match_score,
    workspace_symbols,
)
from mantle_lsp.model.project import Project
from support import write_fixture


def render(symbols: list[DocSymbol], depth: int = 0) -> str:
    lines: list[str] = []
    for s in symbols:
        detail = f" ({s.detail})" if s.detail else ""
        lines.append(f"{'  ' * depth}{s.kind} {s.name}{detail}")
        if s.children:
            lines.append(render(list(s.children), depth + 1))
    return "\n".join(lines)


def _all(symbols: list[DocSymbol] | tuple[DocSymbol, ...]) -> list[DocSymbol]:
    out: list[DocSymbol] = []
    for s in symbols:
        out.append(s)
        out.extend(_all(s.children))
    return out


def check_document_symbols(tmp_path: Path, fixture: str, rel: str, expected: str) -> None:
    """The outline of ``rel`` rendered as an indented tree equals ``expected``.

    Marks ``«sel:…»`` must each be the selection range of some symbol and ``«range:…»``
    the range of some symbol; every selection range lies inside its symbol's range and
    every child inside its parent.
    """
    fx = write_fixture(tmp_path, fixture)
    project = Project.load(fx.root)
    symbols = document_symbols(project, fx.root / rel)
    assert render(symbols) == textwrap.dedent(expected).strip()
    flat = _all(symbols)
    for s in flat:
        assert s.range.start <= s.selection_range.start <= s.selection_range.end <= s.range.end
        for c in s.children:
            assert s.range.start <= c.range.start and c.range.end <= s.range.end, c.name
    text = fx.files[rel]
    for mk in fx.marks:
        if mk.path != rel:
            continue
        want = (mk.start, mk.end)
        if mk.label == "sel":
            found = [s.name for s in flat if tuple(s.selection_range) == want]
        else:
            found = [s.name for s in flat if tuple(s.range) == want]
        assert found, f"no symbol with {mk.label} {text[mk.start : mk.end]!r}"


SKILL = """\
//- skills/card/skill.md
---
name: «sel:Replace card»
description: Replace a lost or stolen card.
tool_constraints:
  - «sel:lock_card»:
      requires: session.card.reason == 'stolen'
utter:
  - «sel:utter_hello»:
      on: activate
---

Help the customer.

if: «sel:session.card.reason == 'lost'»
Check the address.

:::ordered_block id=«sel:main»
steps:
  - id: «sel:ask»
    collect: reason
  - id: lock
    execute_tool: lock_card
    next: END
  - action: utter_done
tools:
  - lock_card
:::
//- skills/card/tools.py
from rasa.mantle.tools.decorator import tool


@tool(description="Lock.")
async def lock_card(context=None):
    return None
//- skills/card/memory.yml
schema:
  public:
    reason:
      type: categorical
      enum_values: [lost, stolen]
"""


def test_skill_md_outline(tmp_path: Path) -> None:
    check_document_symbols(
        tmp_path,
        SKILL,
        "skills/card/skill.md",
        """
        skill card (Replace card)
          tool lock_card (tool constraint)
          response utter_hello (on activate)
        keyword session.card.reason == 'lost' (if)
        block main (ordered block)
          step ask (collect)
          step lock (execute_tool)
          step #3 (action)
          tool lock_card (block tool)
        """,
    )


def test_headings_are_sections_holding_what_follows_them(tmp_path: Path) -> None:
    check_document_symbols(
        tmp_path,
        """\
//- skills/card/skill.md
---
description: Replace a lost or stolen card.
---
Intro before any heading.

if: session.card.reason == 'lost'
Check the address first.

# «sel:Replacing a card»

## «sel:Lost cards» ##
Ask where it was lost.

```markdown
## not a heading: fenced code
```

if: session.card.reason == 'stolen'
Lock it.

## Delivery
:::ordered_block id=main
steps:
  - id: ask
    instructions: |
      ## not a heading either: inside a block
:::
#hashtag is not a heading
""",
        "skills/card/skill.md",
        """
        skill card
        keyword session.card.reason == 'lost' (if)
        heading Replacing a card (#)
          heading Lost cards (##)
            keyword session.card.reason == 'stolen' (if)
          heading Delivery (##)
            block main (ordered block)
              step ask (instructions)
        """,
    )


def test_skill_without_frontmatter_still_lists_blocks(tmp_path: Path) -> None:
    check_document_symbols(
        tmp_path,
        """\
//- skills/card/skill.md
no frontmatter here

:::ordered_block id=main
steps:
  - id: a
    instructions: Go.
:::
""",
        "skills/card/skill.md",
        """
        block main (ordered block)
          step a (instructions)
        """,
    )


def test_utter_trigger_with_when_shows_the_condition(tmp_path: Path) -> None:
    check_document_symbols(
        tmp_path,
        """\
//- skills/card/skill.md
---
description: d
utter:
  - utter_hi:
      when: "session.card.x == 1"
---
Go.
""",
        "skills/card/skill.md",
        """
        skill card
          response utter_hi (when session.card.x == 1)
        """,
    )


def test_skill_memory_groups_fields_by_visibility(tmp_path: Path) -> None:
    check_document_symbols(
        tmp_path,
        """\
//- skills/card/memory.yml
schema:
  «sel:public»:
    «range:reason:
      type: categorical
      enum_values: [lost, stolen]»
    note:
      type: text
  private:
    attempts:
      type: int
    untyped:
      description: no type given
//- skills/card/skill.md
---
description: d
---
Go.
""",
        "skills/card/memory.yml",
        """
        namespace public
          field reason (categorical)
          field note (text)
        namespace private
          field attempts (int)
          field untyped (any)
        """,
    )


def test_project_memory_is_flat(tmp_path: Path) -> None:
    check_document_symbols(
        tmp_path,
        """\
//- memory.yml
authenticated:
  type: bool
tier:
  type: categorical
  enum_values: [a, b]
""",
        "memory.yml",
        """
        field authenticated (bool)
        field tier (categorical)
        """,
    )


def test_responses_with_variants(tmp_path: Path) -> None:
    check_document_symbols(
        tmp_path,
        """\
//- responses.yml
responses:
  «sel:utter_greet»:
    - text: "Hello {session.card.name}!"
      condition: session.card.name != None
    - text: Hello!
  utter_bye:
    - Bye now.
""",
        "responses.yml",
        """
        response utter_greet (2 variants)
          value Hello {session.card.name}! (if session.card.name != None)
          value Hello! (default)
        response utter_bye (1 variant)
          value Bye now. (default)
        """,
    )


def test_long_variant_text_is_shortened_to_one_line(tmp_path: Path) -> None:
    long = "word " * 30
    fx = write_fixture(tmp_path, f"//- responses.yml\nresponses:\n  utter_x:\n    - text: {long}\n")
    symbols = document_symbols(Project.load(fx.root), fx.root / "responses.yml")
    name = symbols[0].children[0].name
    assert len(name) <= 60 and name.endswith("…") and "\n" not in name


def test_tools_module(tmp_path: Path) -> None:
    check_document_symbols(
        tmp_path,
        """\
//- skills/card/tools.py
from rasa.mantle.tools.decorator import tool
from lib.factory import make_tool


@tool(description="Lock.")
async def «sel:lock_card»(card_id: str, context=None):
    return None


@tool(description="Check.")
def check(context=None):
    return None


helper = make_tool("x")
//- skills/card/skill.md
---
description: d
---
Go.
""",
        "skills/card/tools.py",
        """
        tool make_tool (possible tool)
        tool lock_card (async (card_id))
        tool check (())
        tool helper (possible tool)
        """,
    )


def test_agent_preconditions(tmp_path: Path) -> None:
    check_document_symbols(
        tmp_path,
        """\
//- agent.yml
agent:
  persona: Helpful.
orchestrator:
  model_group: main
  preconditions:
    «range:verified:
      satisfied_when: session.project.verified == True
      resolve_with: verify»
//- memory.yml
verified:
  type: bool
""",
        "agent.yml",
        """
        precondition verified (session.project.verified == True)
        """,
    )


def test_integrations_model_groups_and_mcp_servers(tmp_path: Path) -> None:
    check_document_symbols(
        tmp_path,
        """\
//- integrations.yml
model_groups:
  - «range:id: main
    models:
      - provider: openai
        model: gpt-4o»
mcp_servers:
  - name: «sel:banking»
    url: http://localhost:8080
""",
        "integrations.yml",
        """
        model_group main (model group)
        mcp banking (MCP server)
        """,
    )


def test_skill_symbol_spans_the_frontmatter_and_selects_its_name(tmp_path: Path) -> None:
    fx = write_fixture(tmp_path, SKILL)
    (skill, *_rest) = document_symbols(Project.load(fx.root), fx.root / "skills/card/skill.md")
    text = fx.files["skills/card/skill.md"]
    assert text[skill.range.start : skill.range.end].startswith("---\nname:")
    assert text[skill.range.start : skill.range.end].endswith("on: activate\n---")
    assert text[skill.selection_range.start : skill.selection_range.end] == "Replace card"


def test_if_paragraph_spans_the_whole_paragraph(tmp_path: Path) -> None:
    fx = write_fixture(tmp_path, SKILL)
    symbols = document_symbols(Project.load(fx.root), fx.root / "skills/card/skill.md")
    (para,) = [s for s in symbols if s.kind == "keyword"]
    text = fx.files["skills/card/skill.md"]
    assert text[para.range.start : para.range.end] == (
        "if: session.card.reason == 'lost'\nCheck the address."
    )


def test_unknown_file_has_no_symbols(tmp_path: Path) -> None:
    fx = write_fixture(tmp_path, SKILL)
    assert document_symbols(Project.load(fx.root), fx.root / "nowhere.yml") == []


# ---------------------------------------------------------------------------------------
# Workspace symbols

WORKSPACE = """\
//- memory.yml
authenticated:
  type: bool
//- skills/card_replace/memory.yml
schema:
  public:
    reason:
      type: text
    replacement_address:
      type: text
//- skills/card_replace/skill.md
---
description: d
---
Go.

:::ordered_block id=main
steps:
  - id: ask_reason
    collect: reason
:::
//- skills/card_replace/responses.yml
responses:
  utter_card_replaced:
    - text: Done.
//- tools/shared.py
from rasa.mantle.tools.decorator import tool


@tool(description="Look up.")
def lookup_account(context=None):
    return None
"""


def check_workspace_symbols(tmp_path: Path, query: str, expected: list[str]) -> None:
    """The first ``len(expected)`` results, rendered ``kind name [container]``."""
    fx = write_fixture(tmp_path, WORKSPACE)
    project = Project.load(fx.root)
    got = [f"{w.kind} {w.name} [{w.container}]" for w in workspace_symbols([project], query)]
    assert got[: len(expected)] == expected, got


def test_workspace_symbols_exact_field_name_first(tmp_path: Path) -> None:
    check_workspace_symbols(
        tmp_path,
        "card_replace.reason",
        ["field card_replace.reason [card_replace]"],
    )


def test_workspace_symbols_fuzzy_subsequence(tmp_path: Path) -> None:
    check_workspace_symbols(
        tmp_path,
        "rpladdr",
        ["field card_replace.replacement_address [card_replace]"],
    )


def test_workspace_symbols_blocks_and_steps_use_colon_names(tmp_path: Path) -> None:
    check_workspace_symbols(
        tmp_path,
        "card_replace:main",
        ["block card_replace:main [card_replace]", "step card_replace:main.ask_reason "
         "[card_replace:main]"],
    )  # fmt: skip


def test_workspace_symbols_segment_prefix_beats_subsequence(tmp_path: Path) -> None:
    check_workspace_symbols(
        tmp_path,
        "lookup",
        ["tool lookup_account [shared tools]"],
    )
    check_workspace_symbols(tmp_path, "auth", ["field project.authenticated [project]"])


def test_workspace_symbols_locations_point_at_definitions(tmp_path: Path) -> None:
    fx = write_fixture(tmp_path, WORKSPACE)
    project = Project.load(fx.root)
    (sym,) = [w for w in workspace_symbols([project], "utter_card") if w.kind == "response"]
    text = fx.files["skills/card_replace/responses.yml"]
    assert sym.location.path == fx.root / "skills/card_replace/responses.yml"
    assert text[sym.location.range.start : sym.location.range.end] == "utter_card_replaced"
    assert sym.container == "skills/card_replace/responses.yml"


def test_workspace_symbols_no_match_and_bundled_symbols_skipped(tmp_path: Path) -> None:
    fx = write_fixture(tmp_path, WORKSPACE)
    project = Project.load(fx.root)
    assert workspace_symbols([project], "zzzz") == []
    # bundled default skills have no file: never listed
    assert all(w.location.path.exists() for w in workspace_symbols([project], ""))


def test_workspace_symbols_over_several_projects_are_capped(tmp_path: Path) -> None:
    projects = []
    for i in range(3):
        fields = "".join(f"    f{j}:\n      type: text\n" for j in range(100))
        fx = write_fixture(
            tmp_path / f"p{i}",
            "//- skills/s/memory.yml\nschema:\n  public:\n" + fields
            + "//- skills/s/skill.md\n---\ndescription: d\n---\nGo.\n",
        )  # fmt: skip
        projects.append(Project.load(fx.root))
    got = workspace_symbols(projects, "s.f")
    assert len(got) == 200
    assert {w.location.path.parts[-4] for w in got} >= {"p0", "p1"}


def test_match_score_orders_tiers() -> None:
    assert match_score("reason", "card.reason") == (0, 0)
    assert match_score("card", "card.reason") == (1, 0)
    assert match_score("rea", "card.reason")[0] == 1  # type: ignore[index]
    assert match_score("ard", "card.reason")[0] == 2  # type: ignore[index]
    assert match_score("cr", "card.reason")[0] == 3  # type: ignore[index]
    assert match_score("x", "card.reason") is None
