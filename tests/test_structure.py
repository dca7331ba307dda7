"""Folding ranges, selection ranges, document links and code lenses."""

from __future__ import annotations

import itertools
from pathlib import Path

from mantle_lsp.ide.structure import (
    NEVER_READ,
    code_lenses,
    document_links,
    folding_ranges,
    selection_ranges,
)
from mantle_lsp.model.project import Project
from mantle_lsp.syntax.text import LineIndex
from support import write_fixture

# ---------------------------------------------------------------------------------------
# Folding


def check_folding(tmp_path: Path, fixture: str, rel: str, expected: list[tuple[int, int]]) -> None:
    """The folds of ``rel`` as (first line, last line) pairs, 0-based, in order."""
    fx = write_fixture(tmp_path, fixture)
    folds = folding_ranges(Project.load(fx.root), fx.root / rel)
    index = LineIndex(fx.files[rel])
    got = [(index.line_of(f.start), index.line_of(f.end)) for f in folds]
    assert got == expected
    assert len({a for a, _ in got}) == len(got), "two folds start on one line"


SKILL = """\
//- skills/card/skill.md
---
description: >
  Replace a card
  that was lost.
tool_constraints:
  - lock_card:
      requires: session.card.reason == 'stolen'
---

Help the customer
replace the card.

if: session.card.reason == 'lost'
Check the address.

One line.

:::ordered_block id=main
steps:
  - id: ask
    collect: reason
  - id: lock
    execute_tool: lock_card
    next:
      - if: session.card.reason == 'stolen'
        then: END
      - else: END
:::
"""


def test_skill_md_folds(tmp_path: Path) -> None:
    check_folding(
        tmp_path,
        SKILL,
        "skills/card/skill.md",
        [
            (0, 7),  # frontmatter, --- to ---
            (1, 3),  # folded description
            (4, 6),  # tool_constraints
            (5, 6),  # - lock_card: {requires}
            (9, 10),  # paragraph
            (12, 13),  # if: paragraph
            (17, 27),  # the ordered block, fence to :::
            (18, 26),  # steps:
            (19, 20),  # - id: ask
            (21, 26),  # - id: lock
            (23, 26),  # next:
            (24, 25),  # - if: … then: …
        ],
    )


def test_yaml_file_folds_trim_trailing_comments_and_blank_lines(tmp_path: Path) -> None:
    check_folding(
        tmp_path,
        """\
//- skills/card/memory.yml
schema:
  public:
    reason:
      type: text
      description: |
        first
        # not a comment

    # a comment about private,
    # in two lines
  private:
    n:
      type: int
""",
        "skills/card/memory.yml",
        [
            (0, 12),
            (1, 6),
            (2, 6),
            (4, 6),
            (8, 9),
            (10, 12),
            (11, 12),
        ],
    )


def test_comment_folds_have_the_comment_kind(tmp_path: Path) -> None:
    fx = write_fixture(tmp_path, "//- memory.yml\n# one\n# two\na:\n  type: text\n")
    folds = folding_ranges(Project.load(fx.root), fx.root / "memory.yml")
    assert [(f.kind, fx.files["memory.yml"][f.start : f.end]) for f in folds] == [
        ("comment", "# one\n# two"),
        (None, "a:\n  type: text"),
    ]


def test_responses_fold_per_response_and_variant(tmp_path: Path) -> None:
    check_folding(
        tmp_path,
        """\
//- responses.yml
responses:
  utter_a:
    - text: Hi
      condition: session.project.x
    - text: Hello
  utter_b:
    - Bye
""",
        "responses.yml",
        [(0, 6), (1, 4), (2, 3), (5, 6)],
    )


def test_tools_and_unknown_files_have_no_folds(tmp_path: Path) -> None:
    fx = write_fixture(tmp_path, SKILL + "//- skills/card/tools.py\ndef f():\n    return 1\n")
    project = Project.load(fx.root)
    assert folding_ranges(project, fx.root / "skills/card/tools.py") == []
    assert folding_ranges(project, fx.root / "nothing.yml") == []


# ---------------------------------------------------------------------------------------
# Selection ranges


def check_selection(tmp_path: Path, fixture: str, expected: list[str]) -> None:
    """The selection chain at the ``$0`` cursor starts with the ``expected`` texts, each
    range strictly contains the previous one, and the last one is the whole document."""
    fx = write_fixture(tmp_path, fixture)
    assert fx.cursor is not None
    rel, offset = fx.cursor
    text = fx.files[rel]
    (chain,) = selection_ranges(Project.load(fx.root), fx.root / rel, [offset])
    got = [text[r.start : r.end] for r in chain]
    assert got[: len(expected)] == expected, got
    for inner, outer in itertools.pairwise(chain):
        assert outer.start <= inner.start and inner.end <= outer.end and inner != outer
    assert (chain[-1].start, chain[-1].end) == (0, len(text))


def test_selection_in_a_prose_condition(tmp_path: Path) -> None:
    check_selection(
        tmp_path,
        """\
//- skills/card/skill.md
---
description: d
---
Intro.

if: session.card.rea$0son == 'lost' and session.card.n > 1
Check the address.
""",
        [
            "reason",
            "session.card.reason",
            "session.card.reason == 'lost'",
            "session.card.reason == 'lost' and session.card.n > 1",
            "if: session.card.reason == 'lost' and session.card.n > 1",
            "if: session.card.reason == 'lost' and session.card.n > 1\nCheck the address.",
            "Intro.\n\nif: session.card.reason == 'lost' and session.card.n > 1\n"
            "Check the address.",
        ],
    )


def test_selection_in_a_block_step(tmp_path: Path) -> None:
    check_selection(
        tmp_path,
        """\
//- skills/card/skill.md
---
description: d
---
:::ordered_block id=main
steps:
  - id: ask
    instructions: Go.
    next:
      - if: "session.card.x == 'a$0b'"
        then: ask
:::
""",
        [
            "ab",
            "'ab'",
            "session.card.x == 'ab'",
            "\"session.card.x == 'ab'\"",
            "if: \"session.card.x == 'ab'\"",
            "if: \"session.card.x == 'ab'\"\n        then: ask",
            "- if: \"session.card.x == 'ab'\"\n        then: ask",
            "next:\n      - if: \"session.card.x == 'ab'\"\n        then: ask",
            "id: ask\n    instructions: Go.\n    next:\n      - if: \"session.card.x == 'ab'\"\n"
            "        then: ask",
            "- id: ask\n    instructions: Go.\n    next:\n      - if: \"session.card.x == 'ab'\"\n"
            "        then: ask",
            "steps:\n  - id: ask\n    instructions: Go.\n    next:\n"
            "      - if: \"session.card.x == 'ab'\"\n        then: ask",
        ],
    )


def test_selection_at_a_memory_token_and_in_frontmatter(tmp_path: Path) -> None:
    fixture = """\
//- skills/card/skill.md
---
description: d
utter:
  - utter_hi:
      on: activate
---
Read @memory.ca$0rd.reason aloud.
"""
    check_selection(
        tmp_path,
        fixture,
        ["card", "@memory.card.reason", "Read @memory.card.reason aloud."],
    )
    check_selection(
        tmp_path / "fm",
        fixture.replace("$0", "").replace("on: act", "on: a$0ct"),
        [
            "activate",
            "on: activate",
            "utter_hi:\n      on: activate",
            "- utter_hi:\n      on: activate",
            "utter:\n  - utter_hi:\n      on: activate",
            "description: d\nutter:\n  - utter_hi:\n      on: activate",
            "---\ndescription: d\nutter:\n  - utter_hi:\n      on: activate\n---",
        ],
    )


def test_selection_in_responses_placeholder(tmp_path: Path) -> None:
    check_selection(
        tmp_path,
        """\
//- responses.yml
responses:
  utter_a:
    - text: "Card {session.card.la$0st4} ok"
""",
        [
            "last4",
            "session.card.last4",
            "{session.card.last4}",
            "Card {session.card.last4} ok",
            '"Card {session.card.last4} ok"',
            'text: "Card {session.card.last4} ok"',
        ],
    )


def test_selection_in_tools_and_several_offsets(tmp_path: Path) -> None:
    fx = write_fixture(
        tmp_path,
        """\
//- skills/card/tools.py
def f(context):
    return context.memory.get("reason")
//- skills/card/skill.md
---
description: d
---
Go.
""",
    )
    text = fx.files["skills/card/tools.py"]
    at = text.index("reason") + 2
    chains = selection_ranges(
        Project.load(fx.root), fx.root / "skills/card/tools.py", [at, text.index("def")]
    )
    assert [text[r.start : r.end] for r in chains[0]][:3] == [
        "reason", '"reason"', 'context.memory.get("reason")',
    ]  # fmt: skip
    first = chains[1][0]
    assert text[first.start : first.end] == "def"


def test_selection_on_blank_space_is_the_enclosing_structure(tmp_path: Path) -> None:
    check_selection(
        tmp_path,
        "//- skills/card/skill.md\n---\ndescription: d\n---\nOne.\n$0\nTwo.\n",
        ["One.\n\nTwo."],
    )


# ---------------------------------------------------------------------------------------
# Document links

LINKS = """\
//- integrations.yml
model_groups:
  - id: main
    models:
      - provider: openai
        model: gpt-4o
mcp_servers:
  - name: banking
    url: http://localhost
//- tools/accounts.py
from rasa.mantle.tools.decorator import tool


@tool(description="Look up.")
def lookup_account(context=None):
    return None
//- tools/other.py
from rasa.mantle.tools.decorator import tool


@tool(description="Other.")
def other_tool(context=None):
    return None
//- skills/card/skill.md
---
description: d
import_tools:
  - «accounts:lookup_account»
  - "«other:other_tool»"
  - «mcp:mcp/banking:get_balance»
  - missing_tool
---
Go.
"""


def check_links(tmp_path: Path, fixture: str, rel: str, expected: dict[str, str]) -> None:
    """Each link's range is the mark whose label names the target file's stem
    (``mcp`` for integrations.yml)."""
    fx = write_fixture(tmp_path, fixture)
    links = document_links(Project.load(fx.root), fx.root / rel)
    got = {}
    for link in links:
        (mark,) = [m for m in fx.marks if (m.start, m.end) == (link.range.start, link.range.end)]
        got[mark.label] = link.target.relative_to(fx.root).as_posix()
    assert got == expected
    assert len(links) == len(expected)


def test_import_tools_links(tmp_path: Path) -> None:
    check_links(
        tmp_path,
        LINKS,
        "skills/card/skill.md",
        {
            "accounts": "tools/accounts.py",
            "other": "tools/other.py",
            "mcp": "integrations.yml",
        },
    )


def test_link_tooltips(tmp_path: Path) -> None:
    fx = write_fixture(tmp_path, LINKS)
    links = document_links(Project.load(fx.root), fx.root / "skills/card/skill.md")
    assert [link.tooltip for link in links] == [
        "shared tool `lookup_account` in tools/accounts.py",
        "shared tool `other_tool` in tools/other.py",
        "MCP server `banking` in integrations.yml",
    ]


def test_no_links_outside_skill_md(tmp_path: Path) -> None:
    fx = write_fixture(tmp_path, LINKS)
    assert document_links(Project.load(fx.root), fx.root / "integrations.yml") == []


# ---------------------------------------------------------------------------------------
# Code lenses


def check_lenses(tmp_path: Path, fixture: str, rel: str, expected: list[tuple[str, str]]) -> None:
    """(name under the lens, title) for each lens of ``rel``, in order."""
    fx = write_fixture(tmp_path, fixture)
    text = fx.files[rel]
    lenses = code_lenses(Project.load(fx.root), fx.root / rel)
    assert [(text[x.range.start : x.range.end], x.title) for x in lenses] == expected


LENSES = """\
//- memory.yml
tier:
  type: text
//- skills/card/memory.yml
schema:
  public:
    reason:
      type: text
    written_only:
      type: text
    unused:
      type: text
//- skills/card/tools.py
from rasa.mantle.tools.decorator import tool
from lib.factory import make_tool


@tool(description="Lock.")
def lock_card(context=None):
    context.memory.set("written_only", "x")
    return context.memory.get("project.tier")


@tool(description="Never used.")
def spare(context=None):
    return None


maybe_a_tool = make_tool("x")
//- skills/card/responses.yml
responses:
  utter_done:
    - text: "Done: {reason}"
  utter_unused:
    - text: Never said.
//- skills/card/skill.md
---
description: d
tool_constraints:
  - lock_card:
      requires: session.card.reason != None
      on_success: utter_done
---
Ask for the `reason`, then call @tool.lock_card. Mention `spare`. Then @block.main.

:::ordered_block id=main
steps:
  - id: ask
    collect: reason
:::

:::ordered_block id=unused_block
steps:
  - id: x
    instructions: Go to @block.main (not a reference in a step).
:::
//- skills/other/skill.md
---
description: o
---
if: session.card.reason == 'x'
Go to @skill.card.
"""


def test_memory_field_lenses(tmp_path: Path) -> None:
    check_lenses(
        tmp_path,
        LENSES,
        "skills/card/memory.yml",
        [
            ("reason", "4 references, 1 mention"),
            ("written_only", "1 reference"),
            ("written_only", NEVER_READ),
            ("unused", "0 references"),
            ("unused", NEVER_READ),
        ],
    )


def test_project_field_lens_counts_qualified_tool_reads(tmp_path: Path) -> None:
    check_lenses(tmp_path, LENSES, "memory.yml", [("tier", "1 reference")])


def test_tool_response_and_block_lenses(tmp_path: Path) -> None:
    check_lenses(
        tmp_path,
        LENSES,
        "skills/card/tools.py",
        [("lock_card", "2 references"), ("spare", "0 references, 1 mention")],
    )
    check_lenses(
        tmp_path / "r",
        LENSES,
        "skills/card/responses.yml",
        [("utter_done", "1 reference"), ("utter_unused", "0 references")],
    )
    check_lenses(
        tmp_path / "b",
        LENSES,
        "skills/card/skill.md",
        [("main", "1 reference"), ("unused_block", "0 references")],
    )


def test_no_reference_count_on_the_entry_block_of_a_blocks_only_skill(tmp_path: Path) -> None:
    blocks_only = """\
//- skills/flow/skill.md
---
description: A blocks-only skill.
---
:::ordered_block id=main
steps:
  - id: go
    call: details
:::

:::ordered_block id=details
steps:
  - id: say
    instructions: Explain.
:::

:::ordered_block id=spare
steps:
  - id: s
    instructions: Never entered.
:::
"""
    # two blocks nobody enters: no single entry block, so both keep their count
    check_lenses(
        tmp_path,
        blocks_only,
        "skills/flow/skill.md",
        [("main", "0 references"), ("details", "1 reference"), ("spare", "0 references")],
    )
    one_entry = blocks_only.split("\n:::ordered_block id=spare")[0] + "\n"
    check_lenses(tmp_path / "one", one_entry, "skills/flow/skill.md", [("details", "1 reference")])


def test_lens_keys_are_the_symbols(tmp_path: Path) -> None:
    fx = write_fixture(tmp_path, LENSES)
    lenses = code_lenses(Project.load(fx.root), fx.root / "skills/card/memory.yml")
    assert lenses[0].key == ("field", "card", "reason")
