"""Fixes travel with the diagnostic: the rule that reports a problem attaches the data its
quick fix needs, the editor gets it back with a code-action request, and the fix never
reads the message text."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

from lsprotocol import types as lsp
from lsprotocol.converters import get_converter

from mantle_lsp.ide.code_actions import code_actions
from mantle_lsp.ide.diagnostics import project_diagnostics
from mantle_lsp.lsp import convert
from mantle_lsp.model.project import Project
from mantle_lsp.syntax.text import LineIndex
from support import write_fixture

FIXTURE = """\
//- skills/card/memory.yml
schema:
  public:
    reason:
      type: text
      llm_settable: true
      description: Why.
    count:
      type: txt
//- skills/card/skill.md
---
description: Card.
---
Say @memory.card.reasn now.

:::ordered_block id=main
steps:
  - id: a
    noop: true
    next: end
:::
"""


def _diags(root: Path) -> dict[str, object]:
    proj = Project.load(root)
    return {d.code: (proj, d) for ds in project_diagnostics(proj).values() for d in ds}


def test_rules_attach_the_name_meant(tmp_path: Path) -> None:
    write_fixture(tmp_path, FIXTURE)
    got = {code: pd[1].data for code, pd in _diags(tmp_path).items()}  # type: ignore[index]
    assert got["mantle.validation.prose.unknown_memory_reference"] == {
        "key": ["card", "reasn"],
        "why": "undeclared",
        "wrong": "reasn",
        "meant": "reason",
    }
    assert got["mantle.validation.flow.unresolved_next"] == {
        "wrong": "end",
        "meant": "END",
        "only_reading": True,
    }
    assert got["lsp.memory.unknown_type"] == {"wrong": "txt", "meant": "text"}


def test_fixes_read_the_data_not_the_message(tmp_path: Path) -> None:
    write_fixture(tmp_path, FIXTURE)
    for code, new_text in (
        ("mantle.validation.prose.unknown_memory_reference", "reason"),
        ("mantle.validation.flow.unresolved_next", "END"),
        ("lsp.memory.unknown_type", "text"),
    ):
        proj, d = _diags(tmp_path)[code]  # type: ignore[misc]
        garbled = dataclasses.replace(d, message="(the message says nothing useful)")
        [action, *_] = code_actions(proj, d.path, d.range, [garbled])
        [(path, edits)] = action.edit.edits.items()
        assert path == d.path and [e.new_text for e in edits] == [new_text]
        # without the data there is nothing to go on: no guess from the message
        bare = dataclasses.replace(d, data=None)
        assert [a for a in code_actions(proj, d.path, d.range, [bare]) if a.preferred] == []


def test_the_data_round_trips_through_the_editor(tmp_path: Path) -> None:
    write_fixture(tmp_path, FIXTURE)
    proj, d = _diags(tmp_path)["mantle.validation.prose.unknown_memory_reference"]  # type: ignore[misc]
    index = LineIndex(d.path.read_text(encoding="utf-8"))
    wire = convert.to_diagnostic(d, index)
    assert wire.data == d.data
    # a client sends it back, JSON-decoded, with the code-action request
    conv = get_converter()
    sent = conv.structure(json.loads(json.dumps(conv.unstructure(wire))), lsp.Diagnostic)
    back = convert.from_diagnostic(sent, d.path, index)
    assert back.data == d.data and back.range == d.range
    [action, *_] = code_actions(proj, d.path, d.range, [back])
    assert action.title == "Change to `reason`"


def test_parser_did_you_means_carry_their_fix(tmp_path: Path) -> None:
    """agent.yml and memory.yml parsers attach the name meant, like the rules."""
    write_fixture(
        tmp_path,
        "//- agent.yml\nagent:\n  id: a\n  persona: P.\norchestrator:\n  model_group: main\n"
        "fillerz:\n  enabled: true\n",
    )
    proj = Project.load(tmp_path)
    agent = tmp_path / "agent.yml"
    [d] = [d for d in project_diagnostics(proj)[agent] if d.code == "lsp.config.ignored_key"]
    assert d.data == {"wrong": "fillerz", "meant": "fillers"}
    [action, *_] = code_actions(proj, agent, d.range, [d])
    assert action.title == "Change to `fillers`"
