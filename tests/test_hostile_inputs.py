"""Hostile inputs, one test each: what authors meet in half-written files, generated files
and other people's repositories. The server and the checker must never crash, hang, lose
text or reach outside the project.

YAML alias bombs and 10,000-level nesting; deeply nested conditions; a 10 MB skill.md
and lines of a megabyte; invalid UTF-8, a BOM, CRLF and tabs; symlink loops, FIFOs,
directories and broken links where files are expected, unreadable files; an empty, a
binary and a ``---``-only file; edits through a skill folder that is a symlink out of
the project; rename A→B→A byte-identical for every renamable symbol of every fixture
project. The same situations through the real server are in tests/test_lsp_fuzz.py.
"""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
import sys
import textwrap
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

import pytest

from mantle_lsp.ide import code_actions
from mantle_lsp.ide.diagnostics import Diagnostic, project_diagnostics
from mantle_lsp.ide.rename import RENAMABLE, rename_files, rename_symbol
from mantle_lsp.ide.types import FeatureError, TextEdit, WorkspaceEdit
from mantle_lsp.lsp import convert
from mantle_lsp.model import layout
from mantle_lsp.model.project import Project
from mantle_lsp.model.source import (
    C_BINARY,
    C_ENCODING,
    C_TOO_LARGE,
    C_UNREADABLE,
    MAX_FILE_BYTES,
    read_source,
    source_from_text,
)
from mantle_lsp.model.symbols import SymbolKey
from mantle_lsp.model.workspace import Workspace
from mantle_lsp.syntax.conditions import parse_condition
from mantle_lsp.syntax.text import BOM, LineIndex, TextRange, normalize_newlines
from support import write_fixture
from test_robustness import BROKEN, TELECOM, run_every_feature

REPO = Path(__file__).resolve().parent.parent
CLI = [sys.executable, "-m", "mantle_lsp"]
ENV = {**os.environ, "PYTHONPATH": str(REPO / "server")}

# A small clean project; tests replace or add files.
BASE = """\
//- memory.yml
authenticated:
  type: bool
  seed: true
//- responses.yml
responses:
  utter_bye:
    - text: Bye.
//- skills/s/skill.md
---
description: Checks the account.
---
Read @memory.s.reason aloud.

if: session.s.reason == 'lost'
  Say sorry.
//- skills/s/memory.yml
schema:
  public:
    reason:
      type: text
      llm_settable: true
      description: Why the customer called.
//- skills/s/responses.yml
responses:
  utter_reason:
    - text: "You said {reason}."
      condition: session.project.authenticated
    - text: Tell me more.
"""


def project_with(tmp_path: Path, files: Mapping[str, str | bytes]) -> Path:
    root = write_fixture(tmp_path, BASE).root.resolve()
    for rel, data in files.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_bytes(data if isinstance(data, bytes) else data.encode("utf-8"))
    return root


def codes_by_file(root: Path, diags: dict[Path, list[Diagnostic]]) -> dict[str, list[str]]:
    return {
        p.relative_to(root).as_posix(): sorted(d.code for d in ds) for p, ds in diags.items() if ds
    }


def check_bounded(
    root: Path, seconds: float = 10.0, files: Sequence[str] = ()
) -> dict[str, list[str]]:
    """Load, check and run every editor feature on ``files`` (default: every file) within
    ``seconds``; the diagnostic codes per file."""
    started = time.monotonic()
    project = Project.load(root)
    diags = project_diagnostics(project)
    for path, pf in project.files.items():
        if files and path.relative_to(root).as_posix() not in files:
            continue
        n = len(pf.text)
        run_every_feature(project, path, [0, n // 3, n // 2, n - 1, n])
    took = time.monotonic() - started
    assert took < seconds, f"took {took:.1f} s"
    return codes_by_file(root, diags)


def test_the_base_project_is_clean(tmp_path: Path) -> None:
    assert check_bounded(project_with(tmp_path, {})) == {}


# -- YAML: alias bombs and deep nesting ----------------------------------------------------


def alias_bomb(levels: int = 9, indent: str = "") -> str:
    """Billion laughs: 9 aliases per level, 9**levels strings when expanded."""
    lines = [f'{indent}l0: &l0 ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]']
    for i in range(1, levels + 1):
        lines.append(f"{indent}l{i}: &l{i} [" + ", ".join([f"*l{i - 1}"] * 9) + "]")
    return "\n".join(lines) + "\n"


BOMBS: dict[str, Callable[[], str]] = {
    "memory.yml": alias_bomb,
    "responses.yml": lambda: "responses:\n" + alias_bomb(indent="  "),
    "skills/s/memory.yml": lambda: "schema:\n  public:\n" + alias_bomb(indent="    "),
    "skills/s/responses.yml": lambda: alias_bomb() + "responses:\n  utter_x: *l9\n",
    "skills/s/skill.md": lambda: "---\n" + alias_bomb() + "description: *l9\n---\nHello.\n",
    "agent.yml": lambda: alias_bomb() + "agent: *l9\norchestrator: *l9\n",
    "integrations.yml": lambda: alias_bomb() + "model_groups: *l9\n",
}


@pytest.mark.parametrize("rel", sorted(BOMBS))
def test_yaml_alias_bombs_are_never_expanded(tmp_path: Path, rel: str) -> None:
    root = project_with(tmp_path, {rel: BOMBS[rel]()})
    got = check_bounded(root, seconds=5, files=[rel])
    assert got.get(rel), "the bomb is reported as a wrong shape, not silently accepted"


def test_an_alias_bomb_in_an_ordered_block(tmp_path: Path) -> None:
    block = ":::ordered_block id=main\n" + alias_bomb() + "steps: *l9\n:::\n"
    root = project_with(tmp_path, {"skills/s/skill.md": "---\ndescription: D.\n---\n" + block})
    assert check_bounded(root, seconds=5).get("skills/s/skill.md")


DEEP = 10_000
NESTINGS = {
    "flow sequences": "x: " + "[" * DEEP + "]" * DEEP + "\n",
    "flow mappings": "x: " + "{a: " * DEEP + "1" + "}" * DEEP + "\n",
    "block sequences": "x:\n  " + "- " * DEEP + "y\n",
}
YAML_ERROR = {
    "memory.yml": "lsp.yaml.syntax_error",
    "responses.yml": "lsp.yaml.syntax_error",
    "agent.yml": "lsp.yaml.syntax_error",
    "skills/s/memory.yml": "mantle.validation.skill.failed_to_load",
    "skills/s/skill.md": "skill.markdown.invalid_frontmatter",
}


@pytest.mark.parametrize("rel", sorted(YAML_ERROR))
@pytest.mark.parametrize("shape", sorted(NESTINGS))
def test_yaml_nested_ten_thousand_levels_deep(tmp_path: Path, rel: str, shape: str) -> None:
    text = NESTINGS[shape]
    if rel.endswith("skill.md"):
        text = f"---\n{text}description: D.\n---\nHello.\n"
    got = check_bounded(project_with(tmp_path, {rel: text}), seconds=5, files=[rel])
    assert YAML_ERROR[rel] in got.get(rel, []), got


# -- conditions nested deeply ------------------------------------------------------------

CONDITIONS = {
    "parentheses": "(" * DEEP + "session.s.reason" + ")" * DEEP,
    "not": "not " * DEEP + "session.s.reason",
    "and": " and ".join(["session.s.reason == 'x'"] * (DEEP // 5)),
    "unary minus": "session.s.reason == " + "-" * DEEP + "1",
    "attribute chain": "session" + ".a" * DEEP,
    "subscripts": "session.s.reason" + "[0]" * (DEEP // 5),
    "comparison chain": "session.s.reason" + " < 1" * (DEEP // 5),
}


@pytest.mark.parametrize("name", sorted(CONDITIONS))
def test_deeply_nested_conditions(tmp_path: Path, name: str) -> None:
    cond = CONDITIONS[name]
    skill = f"---\ndescription: D.\n---\nif: {cond}\n  Say hi.\n"
    responses = (
        f'responses:\n  utter_x:\n    - text: Hi.\n      condition: "{cond}"\n    - text: Bye.\n'
    )
    files = {"skills/s/skill.md": skill, "skills/s/responses.yml": responses}
    got = check_bounded(project_with(tmp_path, files), seconds=10, files=list(files))
    if name not in ("not", "and"):  # valid conditions
        assert got.get("skills/s/skill.md") and got.get("skills/s/responses.yml"), got


def test_a_long_attribute_chain_is_parsed_in_linear_time() -> None:
    """Each `.a` used to copy the whole chain and quote it in a message: 40 KB took ~16 s."""
    cond = "session" + ".b" * 20_000
    started = time.monotonic()
    result = parse_condition(cond)
    assert time.monotonic() - started < 5
    (issue,) = result.errors
    assert issue.code == "lsp.condition.invalid_reference"
    assert issue.range == TextRange(0, len(cond))
    assert "`session.b.b.b.b.b.…`" in issue.message and len(issue.message) < 300


# -- size ----------------------------------------------------------------------------------

TEN_MB = 10 * 1024 * 1024


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="needs Linux /proc")
def test_a_ten_megabyte_skill_md_gets_one_diagnostic_from_check(tmp_path: Path) -> None:
    line = "Read @memory.s.reasn and {x} if: session.s.a == 1 ;\n"
    big = "---\ndescription: D.\n---\n" + line * (TEN_MB // len(line))
    root = project_with(tmp_path, {"skills/s/skill.md": big})
    # peak memory of this process only: VmHWM (ru_maxrss would include the memory of the
    # parent it was forked from)
    probe = (
        "import re, sys\n"
        "from mantle_lsp.cli.main import main\n"
        "rc = main(['check', '--format', 'json', sys.argv[1]])\n"
        "status = open('/proc/self/status').read()\n"
        "print(re.search(r'VmHWM:\\s*(\\d+)', status).group(1), file=sys.stderr)\n"
        "raise SystemExit(rc)\n"
    )
    started = time.monotonic()
    run = subprocess.run(
        [sys.executable, "-c", probe, str(root)],
        capture_output=True,
        text=True,
        timeout=60,
        env=ENV,
        cwd=root,
    )
    took = time.monotonic() - started
    assert took < 10, f"check took {took:.1f} s"
    max_rss_kb = int(run.stderr.strip().splitlines()[-1])  # kB
    assert max_rss_kb < 120 * 1024, f"peak memory {max_rss_kb // 1024} MB"
    skill_rows = [r for r in __import__("json").loads(run.stdout) if r["path"].endswith("skill.md")]
    assert [(r["code"], r["line"], r["column"]) for r in skill_rows] == [(C_TOO_LARGE, 1, 1)]
    assert f"{len(big):,} bytes" in skill_rows[0]["message"]


def test_an_open_buffer_above_the_limit_is_not_analysed(tmp_path: Path) -> None:
    root = project_with(tmp_path, {})
    path = root / "skills" / "s" / "skill.md"
    ws = Workspace()
    ws.add_folder(root)
    started = time.monotonic()
    ws.open_buffer(path, "---\ndescription: D.\n---\n" + "Say @memory.s.x.\n" * (TEN_MB // 16), 2)
    project = ws.projects[root]
    diags = project_diagnostics(project)
    run_every_feature(project, path, [0, 5, 10**9])
    assert time.monotonic() - started < 10
    assert [d.code for d in diags[path]] == [C_TOO_LARGE]
    assert diags[path][0].range == TextRange(0, 0)


def test_the_limit_counts_utf8_bytes_not_characters() -> None:
    emoji = "😀" * (MAX_FILE_BYTES // 4 + 1)  # a quarter of the limit in characters
    assert len(emoji) < MAX_FILE_BYTES
    src = source_from_text(Path("/p/skill.md"), emoji)
    assert [i.code for i in src.issues] == [C_TOO_LARGE] and not src.analyzable
    small = source_from_text(Path("/p/skill.md"), "😀" * 1000)
    assert small.issues == [] and small.analyzable


def test_a_file_above_the_limit_is_never_read_whole(tmp_path: Path) -> None:
    path = tmp_path / "memory.yml"
    with open(path, "wb") as f:
        f.truncate(MAX_FILE_BYTES * 64)  # 256 MiB, sparse: reading it would take the memory
    src = read_source(path)
    assert [i.code for i in src.issues] == [C_TOO_LARGE] and src.text == ""


def test_a_megabyte_line_with_many_problems_converts_to_lsp_positions_quickly() -> None:
    """UTF-16 columns used to be counted from the start of the line for every position."""
    line = "😀 @memory.s.x " * 70_000  # one line of ~1 MB, astral characters throughout
    index = LineIndex(line)
    offsets = range(0, len(line), len(line) // 5000)
    started = time.monotonic()
    positions = [convert.to_position(index, o) for o in offsets]
    back = [convert.to_offset(index, p) for p in positions]
    assert time.monotonic() - started < 3
    assert back == list(offsets)
    sample = offsets[123]
    assert positions[123].character == len(line[:sample].encode("utf-16-le")) // 2


def test_a_skill_md_on_one_huge_line_is_checked_quickly(tmp_path: Path) -> None:
    body = "Read @memory.s.reasn, then " * 40_000  # 1 MB, 40,000 unknown references
    root = project_with(tmp_path, {"skills/s/skill.md": "---\ndescription: D.\n---\n" + body})
    started = time.monotonic()
    project = Project.load(root)
    path = root / "skills" / "s" / "skill.md"
    diags = project_diagnostics(project)[path]
    index = project.files[path].source.index
    converted = [convert.to_diagnostic(d, index) for d in diags]
    assert time.monotonic() - started < 20
    assert len(converted) >= 40_000
    assert converted[-1].range.start.line == 3


def test_check_prints_the_fixes_of_a_huge_line_s_problems_quickly(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Each finding used to split the whole file into lines, search back to its line's
    start for its fix and resolve the file's links again: 40,000 findings on one 1 MB line
    took minutes; every step is per finding now."""
    from mantle_lsp.cli.main import main

    body = "Read session.s.reason now, " * 40_000  # 1 MB, 40,000 session.a.b in prose
    root = project_with(tmp_path, {"skills/s/skill.md": "---\ndescription: D.\n---\n" + body})
    started = time.monotonic()
    code = main(["check", str(root), "--jobs", "1"])
    out = capsys.readouterr().out
    assert time.monotonic() - started < 60
    assert code == 1
    assert out.count("session_reference_in_instructions") >= 40_000
    assert "Change to `@memory.s.reason`" in out


# -- encodings and whitespace ------------------------------------------------------------


def test_invalid_utf8_is_reported_at_the_first_bad_byte_and_the_rest_is_analysed(
    tmp_path: Path,
) -> None:
    data = b"---\ndescription: D.\n---\nR\xffe\xc3ad @memory.s.reasn aloud.\n"
    root = project_with(tmp_path, {"skills/s/skill.md": data})
    project = Project.load(root)
    path = root / "skills" / "s" / "skill.md"
    text = project.files[path].text
    diags = {d.code: d for d in project_diagnostics(project)[path]}
    assert diags[C_ENCODING].range == TextRange(25, 26) and text[25] == "\ufffd"
    assert "byte 25" in diags[C_ENCODING].message
    bad = diags["mantle.validation.prose.unknown_memory_reference"]
    assert text[bad.range.start : bad.range.end] == "@memory.s.reasn"
    check_bounded(root)


def test_a_bom_is_not_part_of_the_text(tmp_path: Path) -> None:
    skill = BOM + "---\ndescription: D.\n---\nRead @memory.s.reasn aloud.\n"
    root = project_with(tmp_path, {"skills/s/skill.md": skill, "memory.yml": BOM + "a:\n  b: 1\n"})
    got = check_bounded(root)
    assert "skill.markdown.invalid_frontmatter" not in got.get("skills/s/skill.md", [])
    project = Project.load(root)
    path = root / "skills" / "s" / "skill.md"
    (d,) = [d for d in project_diagnostics(project)[path] if "reasn" in d.message]
    assert project.files[path].text[d.range.start : d.range.end] == "@memory.s.reasn"
    assert project.files[path].source.index.position(d.range.start) == (3, 5)


def test_a_crlf_project_reads_exactly_like_its_lf_twin(tmp_path: Path) -> None:
    lf = tmp_path / "lf"
    crlf = tmp_path / "crlf"
    shutil.copytree(BROKEN, lf)
    shutil.copytree(BROKEN, crlf)
    for p in crlf.rglob("*"):
        if p.is_file() and p.suffix in (".md", ".yml", ".py"):
            p.write_bytes(p.read_bytes().replace(b"\n", b"\r\n"))

    def rows(root: Path) -> list[tuple[str, int, int, int, int, str]]:
        project = Project.load(root.resolve())
        out = []
        for path, ds in project_diagnostics(project).items():
            index = project.files[path].source.index
            for d in ds:
                (l0, c0), (l1, c1) = index.position(d.range.start), index.position(d.range.end)
                out.append((path.relative_to(root.resolve()).as_posix(), l0, c0, l1, c1, d.code))
        return sorted(out)

    want = rows(lf)
    assert len(want) > 10
    assert rows(crlf) == want


def test_tabs_in_yaml_indentation_and_in_prose(tmp_path: Path) -> None:
    memory = "schema:\n\tpublic:\n    reason: {type: text, description: Why.}\n"
    skill = "---\ndescription: D.\n---\n\tRead\t@memory.s.reasn\taloud.\n"
    root = project_with(tmp_path, {"skills/s/memory.yml": memory, "skills/s/skill.md": skill})
    project = Project.load(root)
    diags = project_diagnostics(project)
    (yaml_error,) = diags[root / "skills" / "s" / "memory.yml"]
    assert yaml_error.code == "mantle.validation.skill.failed_to_load"
    assert yaml_error.range == TextRange(8, 9)  # the tab
    skill_path = root / "skills" / "s" / "skill.md"
    (bad,) = [d for d in diags[skill_path] if "reasn" in d.message]
    assert bad.range == TextRange(30, 45)
    assert project.files[skill_path].source.index.position(bad.range.start) == (3, 6)
    check_bounded(root)


def test_an_empty_memory_yml_a_binary_one_and_a_skill_md_of_only_dashes(tmp_path: Path) -> None:
    root = project_with(
        tmp_path,
        {
            "memory.yml": "",
            "skills/s/memory.yml": b"\x00\x01schema:\x00",
            "skills/t/skill.md": "---",
            "skills/u/skill.md": "---\n",
            "skills/u/memory.yml": "\n\n",
        },
    )
    got = check_bounded(root)
    assert got["skills/s/memory.yml"] == [C_BINARY]
    assert "skill.markdown.invalid_frontmatter_delimiter" in got["skills/t/skill.md"]
    assert "skill.markdown.invalid_frontmatter_delimiter" in got["skills/u/skill.md"]
    assert "memory.yml" not in got and "skills/u/memory.yml" not in got


# -- the file system: loops, FIFOs, things that are not files -----------------------------


def test_symlink_loops_in_the_workspace_terminate(tmp_path: Path) -> None:
    root = project_with(tmp_path, {})
    (root / "loop").symlink_to(root, target_is_directory=True)
    (root / "skills" / "s" / "again").symlink_to(root / "skills", target_is_directory=True)
    (root / "skills" / "cycle").symlink_to(root / "skills" / "cycle")  # a link to itself
    (root / "skills" / "s" / "tools").symlink_to(root / "skills" / "s")
    (root / "hooks").mkdir()
    (root / "hooks" / "deeper").symlink_to(root / "hooks", target_is_directory=True)
    (root / "tools").symlink_to(root, target_is_directory=True)
    (root / "skills" / "s" / "responses.yml").unlink()
    (root / "skills" / "s" / "responses.yml").symlink_to(root / "skills" / "s" / "responses.yml")
    started = time.monotonic()
    assert layout.find_projects(tmp_path) == [root]
    ws = Workspace()
    ws.add_folder(tmp_path)
    project = ws.projects[root]
    assert time.monotonic() - started < 5
    assert (root / "skills" / "s" / "responses.yml") not in project.files
    check_bounded(root)
    for p in (root / "loop" / "memory.yml", root / "skills" / "cycle", root / "tools" / "x.py"):
        ws.file_changed(p)
        ws.open_buffer(p, "x: 1\n", 1)
        ws.close_buffer(p)


def test_a_looping_tool_module_link_hides_only_itself(tmp_path: Path) -> None:
    root = project_with(tmp_path, {})
    for folder in (root / "tools", root / "skills" / "s" / "tools"):
        folder.mkdir()
        (folder / "a_loop.py").symlink_to(folder / "a_loop.py")  # sorts before the module
        (folder / "real.py").write_text("X = 1\n")
    found = {p for p, _, _ in layout.project_files(root)}
    assert root / "tools" / "real.py" in found
    assert root / "skills" / "s" / "tools" / "real.py" in found
    assert not any(p.name == "a_loop.py" for p in found)


def test_directories_and_broken_links_where_files_are_expected(tmp_path: Path) -> None:
    root = project_with(tmp_path, {})
    (root / "skills" / "s" / "memory.yml").unlink()
    (root / "skills" / "s" / "memory.yml").mkdir()  # a directory named like a file
    (root / "skills" / "s" / "tools.py").symlink_to(tmp_path / "nowhere.py")  # broken
    (root / "responses.yml").unlink()
    (root / "responses.yml").symlink_to(tmp_path / "gone.yml")
    (root / "skills" / "t").write_text("a file where a skill folder goes\n")
    got = check_bounded(root)
    assert "mantle.validation.prose.unknown_memory_reference" in got["skills/s/skill.md"]
    src = read_source(root / "skills" / "s" / "memory.yml")
    assert [i.code for i in src.issues] == [C_UNREADABLE] and "not a regular file" in (
        src.issues[0].message
    )
    assert [i.code for i in read_source(root / "responses.yml").issues] == [C_UNREADABLE]


FIFO_PROBE = textwrap.dedent(
    """
    import sys
    from pathlib import Path
    from mantle_lsp.model.source import read_source
    from mantle_lsp.model.workspace import Workspace
    from mantle_lsp.ide.diagnostics import project_diagnostics
    root = Path(sys.argv[1])
    ws = Workspace()
    ws.add_folder(root)
    project = ws.projects[root]
    project_diagnostics(project)
    print("engine", project.engine)
    for name in sys.argv[2:]:
        p = root / name
        print(name, [i.message for i in read_source(p).issues])
        ws.file_changed(p)
        ws.open_buffer(p, "x: 1\\n", 1)
        ws.close_buffer(p)
    project_diagnostics(ws.projects[root])
    print("done")
    """
)
FIFOS = [
    "memory.yml",
    "skills/s/memory.yml",
    "skills/s/tools.py",
    "skills/f/skill.md",
    "tools/shared.py",
    "hooks.py",
    "requirements.txt",
    "pyproject.toml",
]


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs on this platform")
def test_fifos_never_block(tmp_path: Path) -> None:
    root = project_with(tmp_path, {})
    for rel in FIFOS:
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        if p.exists():
            p.unlink()
        os.mkfifo(p)
    for cmd in (
        [sys.executable, "-c", FIFO_PROBE, str(root), *FIFOS],
        [*CLI, "check", str(root)],
    ):
        try:
            run = subprocess.run(cmd, capture_output=True, text=True, timeout=30, env=ENV)
        except subprocess.TimeoutExpired:
            pytest.fail(f"blocked on a FIFO: {cmd[:4]}")
        assert "Traceback" not in run.stderr, run.stderr
    probe = subprocess.run(
        [sys.executable, "-c", FIFO_PROBE, str(root), *FIFOS],
        capture_output=True,
        text=True,
        timeout=30,
        env=ENV,
    )
    assert "done" in probe.stdout and "engine 3.21" in probe.stdout
    assert "memory.yml ['cannot read this file: not a regular file']" in probe.stdout


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads files whatever their permissions")
def test_unreadable_files_and_directories(tmp_path: Path) -> None:
    root = project_with(tmp_path, {"skills/locked/skill.md": "---\ndescription: D.\n---\nHi.\n"})
    memory = root / "skills" / "s" / "memory.yml"
    memory.chmod(0)
    (root / "skills" / "locked").chmod(0)
    try:
        got = check_bounded(root)
        assert got["skills/s/memory.yml"] == [C_UNREADABLE]
    finally:
        memory.chmod(stat.S_IRUSR | stat.S_IWUSR)
        (root / "skills" / "locked").chmod(stat.S_IRWXU)


# -- edits stay inside the project ---------------------------------------------------------


OUTSIDE_SKILL = {
    "skill.md": "---\ndescription: Lives outside.\n---\n"
    "Read @memory.ext.note and @memory.project.authenticated.\n\n"
    "if: session.project.authenticated\n  Greet.\n",
}
INSIDE_SKILL = (
    "---\ndescription: D.\n---\nif: session.ext.note == 'x' and session.ext.nope\n  Hi.\n"
)


def outside_project(tmp_path: Path) -> tuple[Path, Path]:
    """A project whose skill ``ext`` is a symlink to a folder outside the project."""
    outside = tmp_path / "elsewhere" / "ext"
    outside.mkdir(parents=True)
    (outside / "skill.md").write_text(OUTSIDE_SKILL["skill.md"], encoding="utf-8")
    (outside / "memory.yml").write_text(
        "schema:\n  public:\n    note:\n      type: text\n", encoding="utf-8"
    )
    root = project_with(tmp_path / "ws", {"skills/s/skill.md": INSIDE_SKILL})
    (root / "skills" / "ext").symlink_to(outside, target_is_directory=True)
    return root, outside


def snapshot(folder: Path) -> dict[str, bytes]:
    return {
        p.relative_to(folder).as_posix(): p.read_bytes()
        for p in sorted(folder.rglob("*"))
        if p.is_file() and not p.is_symlink()
    }


def test_rename_never_edits_through_a_symlink_out_of_the_project(tmp_path: Path) -> None:
    root, outside = outside_project(tmp_path)
    project = Project.load(root)
    assert root / "skills" / "ext" / "skill.md" in project.files  # analysed, though
    for key, new in [
        (("field", "project", "authenticated"), "signed_in"),
        (("field", "ext", "note"), "remark"),
        (("skill", "ext"), "external"),
    ]:
        result = rename_symbol(project, key, new)
        assert isinstance(result, FeatureError), (key, result)
        assert "outside the project" in result.message
    moved = rename_files(project, [(root / "skills" / "ext", root / "skills" / "external")])
    assert not any(outside in p.resolve().parents for p in moved.edits)
    # a rename that stays inside still works
    inside = rename_symbol(project, ("response", "utter_bye"), "utter_farewell")
    assert isinstance(inside, WorkspaceEdit) and inside.edits


def test_code_actions_never_create_or_edit_files_out_of_the_project(tmp_path: Path) -> None:
    root, outside = outside_project(tmp_path)
    (outside / "memory.yml").unlink()  # so that declaring `ext.note` would create it
    project = Project.load(root)
    path = root / "skills" / "s" / "skill.md"
    diags = project_diagnostics(project)[path]
    assert any("ext.nope" in d.message for d in diags)
    actions = code_actions.code_actions(project, path, TextRange(0, len(INSIDE_SKILL)), diags)
    for action in actions:
        for p in [*action.edit.edits, *action.edit.new_files]:
            assert layout.inside(root, p), (action.title, p)
    assert not any("ext" in a.title and "memory.yml" in a.title for a in actions)


def test_layout_inside_resolves_links_and_refuses_dotdot(tmp_path: Path) -> None:
    root, _ = outside_project(tmp_path)
    assert layout.inside(root, root / "skills" / "s" / "skill.md")
    assert layout.inside(root, root / "skills" / "new_folder" / "memory.yml")  # not there yet
    assert not layout.inside(root, root / "skills" / "ext" / "skill.md")
    assert not layout.inside(root, root / "skills" / ".." / ".." / "x")
    assert not layout.inside(root, root.parent / "x")


@pytest.mark.parametrize(
    ("key", "new"),
    [
        (("skill", "s"), "../../evil"),
        (("skill", "s"), ".."),
        (("skill", "s"), "a/b"),
        (("field", "s", "reason"), "../x"),
        (("response", "utter_bye"), "../utter_x"),
        (("response", "utter_bye"), "utter/../x"),
    ],
)
def test_names_with_dotdot_are_refused_or_stay_text(
    tmp_path: Path, key: SymbolKey, new: str
) -> None:
    root = project_with(tmp_path, {})
    result = rename_symbol(Project.load(root), key, new)
    if isinstance(result, WorkspaceEdit):  # a name that is only text, never a path
        assert result.renames == () and result.new_files == {}
        assert all(layout.inside(root, p) for p in result.edits)
    else:
        assert result.message


def test_a_folder_rename_with_dotdot_from_the_editor_edits_nothing_outside(tmp_path: Path) -> None:
    root = project_with(tmp_path, {})
    project = Project.load(root)
    skills = root / "skills"
    for new in (skills / ".." / "s2", skills / "s" / ".." / ".." / "x", root.parent / "s"):
        edit = rename_files(project, [(skills / "s", new)])
        assert edit.edits == {} and edit.renames == ()


# -- rename A→B→A is byte-identical, for every renamable symbol of every fixture project --


def raw_edit(raw: str, edits: tuple[TextEdit, ...]) -> str:
    """Apply edits (offsets into the normalized text) to the raw text on disk, the way an
    editor applies them through line/character positions: CRLF and a BOM survive."""
    index = LineIndex(normalize_newlines(raw))
    starts = [0]
    i = 0
    bom = 1 if raw.startswith(BOM) else 0
    while i < len(raw):
        if raw[i] == "\r":
            i += 2 if raw[i + 1 : i + 2] == "\n" else 1
            starts.append(i)
        elif raw[i] == "\n":
            i += 1
            starts.append(i)
        else:
            i += 1

    def at(offset: int) -> int:
        line, col = index.position(offset)
        return starts[line] + col + (bom if line == 0 else 0)

    for e in sorted(edits, key=lambda e: e.range.start, reverse=True):
        raw = raw[: at(e.range.start)] + e.new_text + raw[at(e.range.end) :]
    return raw


class Editor:
    """Applies WorkspaceEdits to a project: text edits as open buffers (fast, incremental),
    folder renames on disk (then the project is loaded again)."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.ws = Workspace()
        self.ws.add_folder(root)
        self.buffers: dict[Path, str] = {}

    @property
    def project(self) -> Project:
        return self.ws.projects[self.root]

    def text(self, path: Path) -> str:
        if path in self.buffers:
            return self.buffers[path]
        return path.read_bytes().decode("utf-8")

    def apply(self, edit: WorkspaceEdit) -> None:
        assert not edit.new_files
        for path, edits in edit.edits.items():
            assert layout.inside(self.root, path), path
            self.buffers[path] = raw_edit(self.text(path), edits)
            self.ws.open_buffer(path, self.buffers[path], 1)
        if edit.renames:
            self.save()
            for old, new in edit.renames:
                assert layout.inside(self.root, old) and layout.inside(self.root, new)
                old.rename(new)
            self.ws = Workspace()
            self.ws.add_folder(self.root)

    def save(self) -> None:
        """Write the buffers to disk and close them."""
        for path, text in self.buffers.items():
            path.write_bytes(text.encode("utf-8"))
        for path in self.buffers:
            self.ws.close_buffer(path)
        self.buffers.clear()


def renamable_keys(project: Project) -> list[SymbolKey]:
    return sorted(
        k
        for k, syms in project.index.symbols.items()
        if k[0] in RENAMABLE and any(s.path is not None for s in syms)
    )


def _fixture_projects() -> dict[str, Callable[[Path], Path]]:
    import test_model
    import test_navigation
    import test_rename

    def example(src: Path) -> Callable[[Path], Path]:
        def make(tmp: Path) -> Path:
            shutil.copytree(src, tmp / src.name)
            return (tmp / src.name).resolve()

        return make

    def fixture(text: str, crlf: bool = False) -> Callable[[Path], Path]:
        def make(tmp: Path) -> Path:
            root = write_fixture(tmp, text).root.resolve()
            if crlf:
                for p in root.rglob("*"):
                    if p.is_file():
                        data = p.read_bytes().replace(b"\n", b"\r\n")
                        p.write_bytes((BOM.encode() if p.suffix == ".md" else b"") + data)
            return root

        return make

    return {
        "telecom": example(TELECOM),
        "telecom-broken": example(BROKEN),
        "rename-rich": fixture(test_rename.RICH),
        "rename-rich-crlf-bom": fixture(test_rename.RICH, crlf=True),
        "rename-flow": fixture(test_rename.FLOW),
        "rename-tools": fixture(test_rename.TOOLS),
        "rename-card": fixture(test_rename.CARD),
        "model-every-form": fixture(test_model.EVERY_FORM),
        "navigation-card": fixture(test_navigation.CARD),
        "hostile-base": fixture(BASE),
    }


FIXTURE_PROJECTS = _fixture_projects()


@pytest.mark.parametrize("name", sorted(FIXTURE_PROJECTS))
def test_rename_and_back_is_byte_identical_for_every_symbol(tmp_path: Path, name: str) -> None:
    root = FIXTURE_PROJECTS[name](tmp_path)
    original = snapshot(root)
    editor = Editor(root)
    keys = renamable_keys(editor.project)
    done: dict[str, int] = {}
    refused: list[str] = []
    for key in keys:
        new = f"{key[-1]}_zz"
        there = rename_symbol(editor.project, key, new)
        if isinstance(there, FeatureError):
            refused.append(f"{key}: {there.message}")
            continue
        assert there.edits or there.renames, key
        editor.apply(there)
        back = rename_symbol(editor.project, (*key[:-1], new), key[-1])
        assert isinstance(back, WorkspaceEdit), (key, back)
        editor.apply(back)
        editor.save()
        assert snapshot(root) == original, f"renaming {key} to {new} and back changed files"
        done[key[0]] = done.get(key[0], 0) + 1
    # every kind the project defines was renamed at least once, and most symbols were
    kinds = {k[0] for k in keys}
    assert set(done) == kinds, (done, refused[:5])
    assert sum(done.values()) >= 0.8 * len(keys), refused
