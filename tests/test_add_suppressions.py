"""`# mantle-lsp: ignore-file[…]` (a whole file) and `check --add-noqa`: a suppression
comment for every finding, only where a comment is a comment — never in a YAML block
scalar, a Python string or skill.md prose — the others listed; a second run adds
nothing."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from mantle_lsp.cli.main import main
from mantle_lsp.ide.suppression import UNUSED, add_suppressions
from mantle_lsp.model.project import Project
from support import shown, write_fixture
from test_suppression import expect

EXE = Path(sys.executable).with_name("mantle-lsp")
IGNORED_KEY = "lsp.config.ignored_key"
SESSION_REF = "mantle.validation.prose.session_reference_in_instructions"
END = "mantle.validation.flow.unresolved_next"
FRONTMATTER = "skill.markdown.unknown_frontmatter_key"

AGENT = """\
agent:
  id: test-agent
  persona: A careful test assistant.
orchestrator:
  model_group: main
colour: blue  # the brand colour
"""
SKILL = """\
---
description: Replace a card.
bogus: 1
---
Say session.card.reason here.

:::ordered_block id=main
steps:
  - id: a
    instructions: |
      Ask session.card.reason here.
    next: end
:::
"""
MEMORY = "schema:\n  public:\n    reason:\n      type: text\n"


@pytest.fixture
def agent(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    fx = write_fixture(
        tmp_path,
        f"//- agent.yml\n{AGENT}//- skills/card/skill.md\n{SKILL}"
        f"//- skills/card/memory.yml\n{MEMORY}",
    )
    monkeypatch.chdir(fx.root)
    return fx.root


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out = capsys.readouterr()
    return code, out.out, out.err


# -- ignore-file ----------------------------------------------------------------------------------


def test_ignore_file_silences_a_code_in_the_whole_file(tmp_path: Path) -> None:
    expect(
        tmp_path,
        """\
//- agent.yml
# mantle-lsp: ignore-file[lsp.config.ignored_key]
agent:
  id: test-agent
  persona: A careful test assistant.
orchestrator:
  model_group: main
colour: blue
size: 3
//- skills/card/skill.md
---
description: Replace a card.
# mantle-lsp: ignore-file[mantle.validation.prose]
---
Say session.card.reason here, and session.card.other.
//- skills/card/memory.yml
schema:
  public:
    reason:
      type: text
""",
    )


def test_an_ignore_file_that_silences_nothing_is_unused(tmp_path: Path) -> None:
    got = expect(
        tmp_path,
        """\
//- agent.yml
agent:
  id: test-agent
  persona: A careful test assistant.
orchestrator:
  model_group: main  «unused:# mantle-lsp: ignore-file[lsp.config]»
""",
    )
    assert got[0][3] == UNUSED
    shown(fired=[UNUSED])


# -- --add-noqa ----------------------------------------------------------------------------------


def test_add_noqa_comments_where_a_comment_can_go_and_lists_the_rest(
    agent: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = run(capsys, "check", "--add-noqa")
    assert code == 0
    lines = out.splitlines()
    assert lines[0] == "Added 3 suppressions to 2 files."
    assert lines[1].startswith("2 findings cannot be suppressed with a comment there")
    assert [x.split(": ", 1)[0].strip() for x in lines[2:]] == [
        "skills/card/skill.md:5:5",  # prose
        "skills/card/skill.md:11:11",  # a YAML block scalar
    ]
    assert (agent / "agent.yml").read_text() == AGENT.replace(
        "# the brand colour", f"# the brand colour  # mantle-lsp: ignore[{IGNORED_KEY}]"
    )
    assert (agent / "skills/card/skill.md").read_text() == SKILL.replace(
        "bogus: 1", f"bogus: 1  # mantle-lsp: ignore[{FRONTMATTER}]"
    ).replace("next: end", f"next: end  # mantle-lsp: ignore[{END}]")
    # the comments silence what they were added for; a second run adds nothing
    code, out, _ = run(capsys, "check", "--format", "concise")
    assert [x.split("[", 1)[1].split("]")[0] for x in out.splitlines()[:2]] == [
        SESSION_REF,
        SESSION_REF,
    ]
    before = {p: p.read_bytes() for p in agent.rglob("*") if p.is_file()}
    code, out, _ = run(capsys, "check", "--add-noqa")
    assert out.splitlines()[0] == "Added no suppression."
    assert {p: p.read_bytes() for p in agent.rglob("*") if p.is_file()} == before


def test_add_noqa_adds_to_an_existing_suppression_and_keeps_crlf(
    agent: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    text = AGENT.replace("# the brand colour", "# mantle-lsp: ignore[lsp.legacy]")
    (agent / "agent.yml").write_bytes(("\ufeff" + text.replace("\n", "\r\n")).encode())
    run(capsys, "check", "--add-noqa", "agent.yml")
    got = (agent / "agent.yml").read_bytes().decode()
    assert got.startswith("\ufeff") and got.count("\r\n") == text.count("\n")
    assert f"colour: blue  # mantle-lsp: ignore[lsp.legacy, {IGNORED_KEY}]\r\n" in got


def test_add_noqa_with_a_baseline_only_for_new_findings(
    agent: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run(capsys, "check", "--write-baseline", "b.json")
    (agent / "agent.yml").write_text(AGENT + "size: 3\n")
    _, out, _ = run(capsys, "check", "--add-noqa", "--baseline", "b.json")
    assert out.splitlines() == ["Added 1 suppression to 1 file."]
    assert (
        (agent / "agent.yml")
        .read_text()
        .endswith(f"size: 3  # mantle-lsp: ignore[{IGNORED_KEY}]\n")
    )


def _pf(tmp_path: Path, rel: str, text: str):  # type: ignore[no-untyped-def]
    fx = write_fixture(tmp_path, f"//- {rel}\n{text}")
    proj = Project.load(fx.root)
    return proj.files[fx.root / rel]


def test_python_comments_never_go_into_a_string(tmp_path: Path) -> None:
    text = (
        "from rasa_sdk import tool\n"  # 0
        'NOTE = """first\n'  # 1
        "second line\n"  # 2: inside the string
        '"""\n'  # 3
        "x = 1 + \\\n"  # 4: continued
        "    2\n"  # 5
        "y = 2  # a note\n"  # 6
    )
    pf = _pf(tmp_path, "skills/card/tools.py", text)
    new, failed = add_suppressions(pf, {0: {"lsp.tools"}, 2: {"lsp.tools"}, 4: {"lsp"}, 6: {"lsp"}})
    assert failed == {2}
    assert new.splitlines() == [
        "from rasa_sdk import tool  # mantle-lsp: ignore[lsp.tools]",
        'NOTE = """first',
        "second line",
        '"""',
        "# mantle-lsp: ignore[lsp]",  # a comment after `\` would end the line: above it
        "x = 1 + \\",
        "    2",
        "y = 2  # a note  # mantle-lsp: ignore[lsp]",
    ]


def test_yaml_comments_never_go_into_a_scalar(tmp_path: Path) -> None:
    text = (
        "agent:\n"  # 0
        "  persona: |\n"  # 1: a block scalar's header: the comment goes above
        "    line one\n"  # 2: inside
        "  id: 'a\n"  # 3: a quoted scalar over three lines
        "    b\n"  # 4: inside
        "    c'\n"  # 5: after its closing quote, a comment is a comment
        "colour: blue\n"  # 6
    )
    pf = _pf(tmp_path, "agent.yml", text)
    wanted = {1: {"lsp"}, 2: {"lsp"}, 4: {"lsp"}, 5: {"lsp"}, 6: {"lsp"}}
    new, failed = add_suppressions(pf, wanted)
    assert failed == {2, 4}
    assert new.splitlines() == [
        "agent:",
        "  # mantle-lsp: ignore[lsp]",
        "  persona: |",
        "    line one",
        "  id: 'a",
        "    b",
        "    c'  # mantle-lsp: ignore[lsp]",
        "colour: blue  # mantle-lsp: ignore[lsp]",
    ]


def test_skill_md_prose_gets_no_comment(tmp_path: Path) -> None:
    pf = _pf(tmp_path, "skills/card/skill.md", SKILL)
    new, failed = add_suppressions(pf, {2: {"lsp"}, 4: {"lsp"}, 6: {"lsp"}, 10: {"lsp"}})
    assert failed == {4, 6, 10}  # prose, the fence line, inside a block scalar
    assert new == SKILL.replace("bogus: 1", "bogus: 1  # mantle-lsp: ignore[lsp]")


def test_add_noqa_through_the_console_script(agent: Path) -> None:
    proc = subprocess.run(
        [str(EXE), "check", "--add-noqa"],
        capture_output=True,
        text=True,
        timeout=120,
        env=dict(os.environ),
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("Added 3 suppressions to 2 files.\n")
    proc = subprocess.run(
        [str(EXE), "check", "--add-noqa", "--fix"], capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 2 and "not with --fix" in proc.stderr
