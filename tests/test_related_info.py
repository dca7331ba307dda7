"""Related information: the other places a diagnostic is about (the first writer of a
project field, the sites reading a never-written field, a first declaration), carried to
``check``'s outputs; it never changes a finding's fingerprint or baseline entry."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mantle_lsp.cli.baseline import key as baseline_key
from mantle_lsp.cli.main import main
from mantle_lsp.cli.output import make_finding
from mantle_lsp.ide.diagnostics import Diagnostic, project_diagnostics
from mantle_lsp.model.project import Project
from support import write_fixture

TOOLS_HEADER = "from rasa.mantle.tools.decorator import ToolContext, tool\n"

FIXTURE = (
    """\
//- memory.yml
customer_id:
  type: text
tier:
  type: text
//- skills/billing/skill.md
---
description: Billing.
---
Bill @memory.project.customer_id.

if: session.project.tier == "gold"
  Be extra polite.

:::ordered_block id=main
steps:
  - id: reset
    set_memory:
      customer_id: guest
:::
//- skills/login/tools.py
"""
    + TOOLS_HEADER
    + """

@tool(description="Log in.")
async def log_in(context: ToolContext = None):
    context.memory.set("project.customer_id", "c-1")
    return None
//- skills/login/skill.md
---
description: Log in.
---
Use @tool.log_in. Tier: @memory.project.tier.
"""
)


def _found(root: Path) -> dict[str, Diagnostic]:
    proj = Project.load(root)
    return {d.code: d for ds in project_diagnostics(proj).values() for d in ds}


def _at(root: Path, d: Diagnostic) -> list[tuple[str, str, str]]:
    """Each related entry as (file, the text it marks, its note)."""
    out = []
    for r in d.related:
        text = r.location.path.read_text(encoding="utf-8")
        rel = r.location.path.relative_to(root).as_posix()
        out.append((rel, text[r.location.range.start : r.location.range.end], r.message))
    return out


def test_the_first_writer_and_the_read_sites_are_related_information(tmp_path: Path) -> None:
    fx = write_fixture(tmp_path, FIXTURE)
    found = _found(fx.root)
    twice = found["lsp.memory.project_field_written_twice"]
    assert twice.path == fx.root / "skills/login/tools.py"
    assert _at(fx.root, twice) == [
        ("skills/billing/skill.md", "customer_id", "first written here by skill `billing` "
         "(`set_memory` step)"),
    ]  # fmt: skip
    never = found["lsp.memory.never_written"]
    assert _at(fx.root, never) == [
        ("skills/billing/skill.md", "tier", "read here (condition)"),
        ("skills/login/skill.md", "tier", "read here (`@memory` token)"),
    ]


def test_never_written_lists_at_most_ten_read_sites(tmp_path: Path) -> None:
    reads = "\n".join(f"Read {i}: @memory.project.tier." for i in range(14))
    fx = write_fixture(
        tmp_path,
        f"""\
//- memory.yml
tier:
  type: text
//- skills/card/skill.md
---
description: Card.
---
{reads}
""",
    )
    never = _found(fx.root)["lsp.memory.never_written"]
    assert len(never.related) == 10
    assert "and 10 more" in never.message  # the message still counts them all


def test_a_second_mcp_import_of_a_name_points_at_the_first(tmp_path: Path) -> None:
    fx = write_fixture(
        tmp_path,
        """\
//- skills/card/skill.md
---
description: Card.
import_tools:
  - mcp/bank:lookup
  - mcp/other:lookup
---
Use @tool.lookup.
""",
    )
    d = _found(fx.root)["skill.import_tools.invalid_shared_tool"]
    assert "imported twice" in d.message
    assert _at(fx.root, d) == [("skills/card/skill.md", "mcp/bank:lookup", "first imported here")]


def test_related_information_never_changes_a_fingerprint_or_a_baseline_key(
    tmp_path: Path,
) -> None:
    fx = write_fixture(tmp_path, FIXTURE)
    proj = Project.load(fx.root)
    d = next(
        d
        for ds in project_diagnostics(proj).values()
        for d in ds
        if d.code == "lsp.memory.project_field_written_twice"
    )
    assert d.related
    bare = Diagnostic(d.path, d.range, d.code, d.severity, d.message, d.data)
    text = proj.files[d.path].source.text
    index = proj.files[d.path].source.index
    with_info = make_finding(d, fx.root, text, index, lambda p: proj.files[p].source.index)
    without = make_finding(bare, fx.root, text, index)
    assert with_info.row.related and not without.row.related
    assert with_info.fingerprint == without.fingerprint
    assert baseline_key(with_info, fx.root) == baseline_key(without, fx.root)


def _check(root: Path, capsys: pytest.CaptureFixture[str], *args: str) -> str:
    main(["check", str(root), "--min-severity", "hint", "--color", "never", *args])
    return capsys.readouterr().out


def test_check_prints_related_information_as_notes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    fx = write_fixture(tmp_path, FIXTURE)
    monkeypatch.chdir(fx.root)
    note = "  skills/billing/skill.md:13:7: note: first written here by skill `billing` "
    full = _check(Path("."), capsys)
    assert note in full
    lines = full.splitlines()
    at = next(i for i, line in enumerate(lines) if "project_field_written_twice" in line)
    assert lines[at + 1 : at + 4] == [
        "  |",
        '6 |     context.memory.set("project.customer_id", "c-1")',
        "  |                                 ^^^^^^^^^^^",
    ]
    assert lines[at + 4].startswith(note)
    concise = _check(Path("."), capsys, "--output-format", "concise").splitlines()
    at = next(i for i, line in enumerate(concise) if "project_field_written_twice" in line)
    assert concise[at + 1].startswith(note)

    rows = json.loads(_check(Path("."), capsys, "--output-format", "json"))
    twice = next(r for r in rows if r["code"] == "lsp.memory.project_field_written_twice")
    assert twice["related"] == [
        {
            "path": "skills/billing/skill.md",
            "line": 13,
            "column": 7,
            "end_line": 13,
            "end_column": 18,
            "message": "first written here by skill `billing` (`set_memory` step)",
        }
    ]
    assert all("related" not in r for r in rows if not r["code"].startswith("lsp.memory."))

    sarif = json.loads(_check(Path("."), capsys, "--output-format", "sarif"))
    results = sarif["runs"][0]["results"]
    res = next(r for r in results if r["ruleId"] == "lsp.memory.project_field_written_twice")
    assert res["relatedLocations"] == [
        {
            "id": 0,
            "physicalLocation": {
                "artifactLocation": {"uri": "skills/billing/skill.md"},
                "region": {"startLine": 13, "startColumn": 7, "endLine": 13, "endColumn": 18},
            },
            "message": {"text": "first written here by skill `billing` (`set_memory` step)"},
        }
    ]


def test_a_second_modify_hook_points_at_the_first(tmp_path: Path) -> None:
    mod = """\
from rasa.mantle.hooks import ToolCallPayload, modify_tool_call


@modify_tool_call()
async def {name}(payload: ToolCallPayload) -> ToolCallPayload:
    return payload
"""
    fx = write_fixture(
        tmp_path,
        "//- hooks.py\n" + mod.format(name="first") + "//- hooks/z.py\n" + mod.format(name="z"),
    )
    d = _found(fx.root)["mantle.validation.hooks.duplicate_modifier"]
    assert d.path == fx.root / "hooks/z.py"
    assert _at(fx.root, d) == [("hooks.py", "modify_tool_call", "`tool_call` first modified here")]


def test_an_import_of_a_module_that_does_not_parse_points_at_the_error(tmp_path: Path) -> None:
    fx = write_fixture(
        tmp_path,
        """\
//- lib/__init__.py
//- lib/broken.py
def oops(:
    pass
//- skills/card/tools.py
from lib.broken import oops
//- skills/card/skill.md
---
description: Card.
---
Help.
""",
    )
    d = _found(fx.root)["lsp.tools.unresolved_import"]
    ((where, _text, note),) = _at(fx.root, d)
    assert (where, note) == ("lib/broken.py", "the syntax error")
    line = (
        fx.root.joinpath("lib/broken.py")
        .read_text(encoding="utf-8")[: d.related[0].location.range.start]
        .count("\n")
    )
    assert f"lib/broken.py:{line + 1}:" in d.message


def test_an_mcp_import_named_like_a_local_tool_points_at_the_tool(tmp_path: Path) -> None:
    fx = write_fixture(
        tmp_path,
        """\
//- skills/card/skill.md
---
description: Card.
import_tools:
  - mcp/bank:look_up
---
Use @tool.look_up.
//- skills/card/tools.py
"""
        + TOOLS_HEADER
        + """

@tool(description="Look up.")
async def look_up(context: ToolContext = None):
    return None
""",
    )
    d = _found(fx.root)["skill.import_tools.invalid_shared_tool"]
    assert "already has a tool" in d.message
    assert _at(fx.root, d) == [
        ("skills/card/tools.py", "look_up", "the tool `look_up` is defined here")
    ]


def test_sarif_related_locations_count_utf16_code_units(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # the first writer sits after an emoji on its line: a column further in UTF-16
    fx = write_fixture(
        tmp_path,
        FIXTURE.replace(
            "    set_memory:\n      customer_id: guest\n",
            '    set_memory: {tier: "🙂", customer_id: guest}\n',
        ),
    )
    monkeypatch.chdir(fx.root)
    rows = json.loads(_check(Path("."), capsys, "--output-format", "json"))
    twice = next(r for r in rows if r["code"] == "lsp.memory.project_field_written_twice")
    (rel,) = twice["related"]
    assert (rel["line"], rel["column"], rel["end_column"]) == (12, 29, 40)  # code points
    sarif = json.loads(_check(Path("."), capsys, "--output-format", "sarif"))
    res = next(
        r
        for r in sarif["runs"][0]["results"]
        if r["ruleId"] == "lsp.memory.project_field_written_twice"
    )
    (loc,) = res["relatedLocations"]
    assert loc["physicalLocation"]["region"] == {
        "startLine": 12,
        "startColumn": 30,
        "endLine": 12,
        "endColumn": 41,
    }
