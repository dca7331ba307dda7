"""The language server freezes what its initial index made (``bulk_work(keep=True)``:
``gc.freeze()`` before the cyclic collector resumes), so that the first collection after
the index does not scan all of it (docs/performance.md, tenth round). A frozen object is
freed by reference counting only: were a project's parsed trees, index or diagnostics to
form a reference cycle, every edit would leave the replaced file's objects in memory for
good. These tests hold that nothing a project keeps forms a cycle."""

from __future__ import annotations

import gc
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from mantle_lsp.ide.completion import complete
from mantle_lsp.ide.diagnostics import file_diagnostics, project_diagnostics
from mantle_lsp.model.project import Project
from mantle_lsp.model.source import source_from_text
from support import write_fixture

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))
from generate import generate, generate_realistic

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"

# YAML with anchors, aliases and merge keys, syntax errors, conditions the plain reader,
# Python's and lark's parsers read, a tool that does not parse, an ordered block
ODD = """\
//- memory.yml
tier: &choice
  type: categorical
  enum_values: [gold, silver]
region:
  <<: *choice
  enum_values: [north, south]
//- skills/card/memory.yml
schema:
  public:
    status: &text {type: text, description: Where it stands.}
    note: *text
  private:
    tries: {type: int
//- skills/card/responses.yml
responses:
  utter_a: &variants
    - text: "Status {session.card.status}, tier {session.project.tier}"
      condition: "session.card.status in ['a', 'b'] and not session.project.region"
  utter_b: *variants
  utter_c:
    - text: [unclosed
//- skills/card/skill.md
---
description: Cards.
tool_constraints:
  - check_card:
      requires: "len(session.card.note or '') > 2 or session.card.status == 'x'"
---
Ask about @memory.card.status.

if: session.card.status == 'open' and (session.project.tier != 'gold' or session.card.note)
Say hello.

:::ordered_block id=main
steps:
  - id: ask
    collect: note
    utterance: utter_a
    next:
      - if: "session.card.note =="
        then: END
      - else: ask
:::
//- skills/card/tools.py
from rasa.mantle.tools.decorator import ToolContext, tool


@tool(description="Check the card.")
async def check_card(context: ToolContext = None):
    context.memory.set("status", "open"
"""


def _odd(root: Path) -> Path:
    write_fixture(root, ODD)
    return root


PROJECTS: dict[str, Callable[[Path], Path]] = {
    "telecom": lambda _: EXAMPLES / "telecom",
    "telecom-broken": lambda _: EXAMPLES / "telecom-broken",
    "dense": lambda tmp: generate(tmp / "gen", 6),
    "realistic": lambda tmp: generate_realistic(tmp / "gen", 6),
    "odd": _odd,
}


@pytest.fixture
def collector_paused() -> Iterator[None]:
    gc.collect()
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


def _edited(text: str, path: Path) -> str:
    return text + ("\n# edited\n" if path.suffix == ".py" else "\n\n")


@pytest.mark.parametrize("name", PROJECTS)
@pytest.mark.usefixtures("collector_paused")
def test_what_a_project_keeps_is_freed_without_the_cyclic_collector(
    tmp_path: Path, name: str
) -> None:
    # Not frozen here: with the collector paused, `gc.collect()` finds what reference
    # counting left behind in cycles, which a frozen heap would keep for good. What the
    # checks leave behind as they run (the objects of a recursive closure, say) is made
    # after the freeze and collected as usual: it is collected before each count.
    root = PROJECTS[name](tmp_path)
    project = Project.load(root)
    published = project_diagnostics(project)
    skill_md = next(p for p in project.files if p.name == "skill.md")
    at = project.files[skill_md].text.find("session.") + len("session.")
    assert complete(project, skill_md, at).items  # completion keeps its lists too
    replaced = []
    for path in list(project.files):  # every file edited once, as in the editor
        old = project.files[path]
        changed = project.set_source(path, source_from_text(path, _edited(old.text, path), 2))
        published.update(file_diagnostics(project, changed))
        complete(project, skill_md, at)
        replaced.append(old)
    gc.collect()
    del old, replaced
    assert gc.collect() == 0, "a replaced file's objects formed a cycle"
    del project, published
    assert gc.collect() == 0, "the project's objects formed a cycle"
