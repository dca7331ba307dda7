"""The configuration file (`[tool.mantle-lsp]`, `mantle-lsp.toml`, `.mantle-lsp.toml`):
discovery, precedence over the command line, each key, malformed files (exit 2 with
file:line) and `check --show-settings`."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from mantle_lsp.cli.main import main
from mantle_lsp.ide.codes import REGISTRY
from mantle_lsp.model.settings import Globs, Overrides, discover, effect, load
from support import shown, write_fixture

# A project with one warning in agent.yml, one in a skill and a hint (unused field).
PROJECT = """\
//- agent.yml
agent:
  id: test-agent
  persona: A careful test assistant.
orchestrator:
  model_group: main
colour: blue
//- skills/card/memory.yml
schema:
  public:
    reason:
      type: text
//- skills/card/skill.md
---
description: Replace a card.
---
Help.

:::ordered_block id=main
steps:
  - id: a
    instructions: Ask.
    complete_when: session.card.nope
:::
"""
IGNORED_KEY = "lsp.config.ignored_key"
UNKNOWN = "lsp.condition.unknown_memory_key"
UNUSED_FIELD = "lsp.memory.unused_field"


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "repo" / "agent"
    root.mkdir(parents=True)
    write_fixture(root, PROJECT)
    monkeypatch.chdir(tmp_path / "repo")
    return root


def codes(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, set[str], str]:
    rc = main(["check", "--format", "json", *args])
    out = capsys.readouterr()
    rows = json.loads(out.out) if out.out.strip() else []
    return rc, {r["code"] for r in rows}, out.err


# -- discovery -------------------------------------------------------------------------------


def test_nearest_file_at_or_above_the_root_applies(project: Path) -> None:
    repo = project.parent
    assert discover(project) is None
    (repo / "pyproject.toml").write_text('[project]\nname = "x"\n')
    assert discover(project) is None  # a pyproject without the table does not count
    (repo / "pyproject.toml").write_text('[tool.mantle-lsp]\nignore = ["lsp"]\n')
    assert discover(project) == repo / "pyproject.toml"
    (repo / "mantle-lsp.toml").write_text("")
    assert discover(project) == repo / "mantle-lsp.toml"
    (repo / ".mantle-lsp.toml").write_text("")
    assert discover(project) == repo / ".mantle-lsp.toml"
    (project / "pyproject.toml").write_text("[tool.mantle-lsp]\n")
    assert discover(project) == project / "pyproject.toml"  # nearer wins


def test_a_pyproject_without_the_table_lets_the_search_go_on(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (project / "pyproject.toml").write_text('[project]\nname = "agent"\n')
    (project.parent / "mantle-lsp.toml").write_text(f'ignore = ["{IGNORED_KEY}"]\n')
    _, found, _ = codes(capsys, str(project))
    assert found == {UNKNOWN}


# -- keys and precedence ---------------------------------------------------------------------


def test_select_ignore_and_extend_select_like_ruff(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cfg = project / "mantle-lsp.toml"
    cfg.write_text('select = ["lsp.config"]\n')
    assert codes(capsys, ".")[1] == {IGNORED_KEY}
    cfg.write_text('ignore = ["lsp"]\nextend-select = ["lsp.condition.unknown_memory_key"]\n')
    assert codes(capsys, ".")[1] == {UNKNOWN}  # the more specific entry wins
    # --select starts afresh: the file's ignore no longer applies
    assert codes(capsys, ".", "--select", "lsp.config")[1] == {IGNORED_KEY}
    # --ignore adds to the file's
    cfg.write_text(f'ignore = ["{UNKNOWN}"]\n')
    assert codes(capsys, ".", "--ignore", "lsp.config")[1] == set()
    assert codes(capsys, ".", "--extend-select", UNKNOWN)[1] == {IGNORED_KEY, UNKNOWN}


def test_per_file_ignores_globs_are_relative_to_the_file(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (project.parent / "mantle-lsp.toml").write_text(
        '[per-file-ignores]\n"agent/skills/card/*.md" = ["lsp.condition"]\n'
        '"skills/**" = ["lsp.config"]\n'  # anchored to repo/: matches nothing
    )
    assert codes(capsys, ".")[1] == {IGNORED_KEY}
    (project.parent / "mantle-lsp.toml").write_text(
        '[per-file-ignores]\n"agent.yml" = ["lsp.config"]\n'  # no slash: any depth
    )
    assert codes(capsys, ".")[1] == {UNKNOWN}


def test_min_severity_and_engine_from_the_file_command_line_wins(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cfg = project / ".mantle-lsp.toml"
    cfg.write_text('min-severity = "hint"\n')
    assert codes(capsys, ".")[1] == {IGNORED_KEY, UNKNOWN, UNUSED_FIELD}
    assert codes(capsys, ".", "--min-severity", "warning")[1] == {IGNORED_KEY, UNKNOWN}
    cfg.write_text('engine = "3.22"\n')
    settings, errors = load(project, REGISTRY)
    assert errors == [] and settings.engine_override == "3.22"
    settings, _ = load(project, REGISTRY, Overrides(engine="3.21"))
    assert settings.engine_override == "3.21"


def test_exclude_and_extend_exclude(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    cfg = project / "mantle-lsp.toml"
    cfg.write_text('extend-exclude = ["skills/card/"]\n')
    assert codes(capsys, ".")[1] == {IGNORED_KEY}
    # a file named on the command line is checked anyway
    skill = "agent/skills/card/skill.md"
    assert codes(capsys, skill)[1] == {UNKNOWN}
    cfg.write_text('exclude = ["agent.yml"]\n')
    settings, _ = load(project, REGISTRY)
    assert settings.exclude == ("agent.yml",)  # replaces the defaults
    assert codes(capsys, ".")[1] == {UNKNOWN}


def test_an_excluded_project_is_skipped_unless_named(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (project.parent / "mantle-lsp.toml").write_text('exclude = ["agent/"]\n')
    rc, found, _ = codes(capsys, ".")
    assert (found, rc) == (set(), 0)
    assert codes(capsys, "agent")[1] == {IGNORED_KEY, UNKNOWN}


def test_include_checks_named_nested_projects(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    nested = project / "tutorial" / "step1"
    nested.mkdir(parents=True)
    write_fixture(nested, "//- agent.yml\nagent:\n  id: t\nbogus_key: 1\n")
    main(["check", "agent"])
    assert "bogus_key" not in capsys.readouterr().out  # not loaded by the engine
    (project / "mantle-lsp.toml").write_text('include = ["tutorial/*"]\n')
    main(["check", "agent"])
    out = capsys.readouterr().out
    assert "tutorial/step1/agent.yml" in out and "bogus_key" in out
    assert "(2 projects)" in out


def test_isolated_and_explicit_config(
    project: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (project / "mantle-lsp.toml").write_text('ignore = ["lsp"]\n')
    assert codes(capsys, ".")[1] == set()
    assert codes(capsys, ".", "--isolated")[1] == {IGNORED_KEY, UNKNOWN}
    other = tmp_path / "ci.toml"
    other.write_text('select = ["lsp.condition"]\n')
    assert codes(capsys, ".", "--config", str(other))[1] == {UNKNOWN}


def test_gitignore_style_globs() -> None:
    assert Globs(["node_modules"]).match("a/node_modules/b/c.yml")
    assert Globs(["skills/legacy_*"]).match("skills/legacy_x/skill.md")
    assert not Globs(["skills/legacy_*"]).match("other/skills/legacy_x/skill.md")
    assert Globs(["**/drafts/*.md"]).match("x/y/drafts/a.md")
    assert Globs(["*.py", "!keep.py"]).match("tools/a.py")
    assert not Globs(["*.py", "!keep.py"]).match("tools/keep.py")
    assert not Globs(["card/"]).match("skills/card")  # a file named like the folder
    assert Globs(["card/"]).match("skills/card", is_dir=True)
    assert Globs(["build", "!build/keep"]).match("build/keep")  # below an excluded folder
    assert Globs(["x/**", "!x/keep"]).match("x/other")
    assert not Globs(["x/**", "!x/keep"]).match("x/keep")  # `x/**` is what is in x, not x
    assert Globs(["./tools/old.py"]).match("tools/old.py")
    assert not Globs(["!"]).match("x")  # a pattern pathspec rejects never matches


def test_a_folder_named_on_the_command_line_is_no_match() -> None:
    """`skip`: the first folders of the path were named on the command line; a pattern
    that matches them does not exclude what is below, but a name pattern still matches
    the names below them."""
    path = "vendor/site-packages/agent/skills/x/skill.md"
    assert Globs(["site-packages"]).match(path)
    assert not Globs(["site-packages"]).match(path, skip=3)
    assert not Globs(["vendor/"]).match(path, skip=3)
    assert Globs(["skills/x/"]).match("agent/skills/x/skill.md", skip=1) is False  # anchored
    assert Globs(["skills/x/"]).match("skills/x/skill.md")
    nested = "vendor/site-packages/agent/skills/x/site-packages/y.py"
    assert Globs(["site-packages"]).match(nested, skip=3)  # the name, again below
    assert Globs(["*.py"]).match(nested, skip=3)


def test_the_globs_are_compiled_once_per_run(
    project: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """50,000 `extend-exclude` globs took 73 s: every file with a finding compiled them
    all again. Each pattern is now compiled once, however many files are filtered."""
    from mantle_lsp.model import settings as settings_module

    real = settings_module._pattern_class()
    compiled: list[str] = []

    def counting(pattern: str) -> object:
        compiled.append(pattern)
        return real(pattern)

    monkeypatch.setattr(settings_module, "_pattern_class", lambda: counting)
    n = 300
    globs = ", ".join(f'"build{i}/**/*.tmp"' for i in range(n))
    (project / "mantle-lsp.toml").write_text(f"extend-exclude = [{globs}]\n")
    _, found, _ = codes(capsys, ".", "--min-severity", "hint")
    assert found == {IGNORED_KEY, UNKNOWN, UNUSED_FIELD}  # files in 3 places filtered
    assert len(compiled) == n + len(settings_module.DEFAULT_EXCLUDE)


# -- malformed files -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "line", "col", "message"),
    [
        ('ignore = ["lsp"]\nmin_severity = "warning"\n', 2, 1, "unknown setting `min_severity`"),
        ('select = ["lsp"]\nignore = [1, 2]\n', 2, 1, "`ignore` must be a list of strings"),
        # a bare string where a list belongs was taken as a list of one
        ('select = "lsp"\n', 1, 1, '`select` must be a list of strings (write ["lsp"])'),
        ('extend-exclude = "skills/x/"\n', 1, 1, "`extend-exclude` must be a list of strings"),
        ('[per-file-ignores]\n"x/*" = "lsp"\n', 2, 1, "entry 'x/*' must be a list of strings"),
        # nested deeper than the TOML parser's recursion: a RecursionError traceback, exit 1
        ("select = " + "[" * 700 + "]" * 700 + "\n", 1, 1, "invalid TOML: nested too deeply"),
        ("a = " + "{b = " * 700 + "1" + "}" * 700 + "\n", 1, 1, "nested too deeply"),
        ('ignore = [\n  "lsp.condition",\n  "lsp.conditon",\n]\n', 3, 3, "'lsp.conditon'"),
        ('engine = "3.30"\n', 1, 1, "`engine` must be one of auto, 3.21, 3.22"),
        ('min-severity = "fatal"\n', 1, 1, "`min-severity` must be one of"),
        ("ignore = [\n", 2, 1, "invalid TOML"),
        ('[per-file-ignores]\n"x/*" = ["nope"]\n', 2, 10, "'nope'"),
    ],
)
def test_a_malformed_file_exits_2_with_file_and_line(
    project: Path,
    capsys: pytest.CaptureFixture[str],
    text: str,
    line: int,
    col: int,
    message: str,
) -> None:
    (project / "mantle-lsp.toml").write_text(text)
    rc = main(["check", "."])
    err = capsys.readouterr().err
    assert rc == 2
    assert f"agent/mantle-lsp.toml:{line}:{col}: error: " in err
    assert message in err


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs on this platform")
@pytest.mark.parametrize("how", ["found", "--config FIFO", "--config /dev/zero"])
def test_a_configuration_file_that_is_no_regular_file_is_refused(project: Path, how: str) -> None:
    """A FIFO named .mantle-lsp.toml blocked `check` forever; it is refused unread."""
    os.mkfifo(project / ".mantle-lsp.toml")
    args = {
        "found": [],
        "--config FIFO": ["--config", ".mantle-lsp.toml"],
        "--config /dev/zero": ["--config", "/dev/zero"],
    }[how]
    try:
        done = subprocess.run(
            [sys.executable, "-m", "mantle_lsp", "check", ".", *args],
            cwd=project,
            capture_output=True,
            text=True,
            timeout=60,
        )
    except subprocess.TimeoutExpired:
        pytest.fail(f"check with {how} did not return")
    assert done.returncode == 2, done.stderr
    if how == "found":
        assert done.stderr.splitlines() == [
            ".mantle-lsp.toml:1:1: error: cannot read the configuration file (not a regular file)",
            "mantle-lsp: error: 1 problem in the configuration",
        ]
    else:
        assert done.stderr == f"mantle-lsp: error: {' '.join(args)}: not a regular file\n"


def test_a_configuration_file_over_1_mb_is_refused(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (project / "mantle-lsp.toml").write_text("# " + "x" * (1024 * 1024) + "\n")
    assert main(["check", "."]) == 2
    err = capsys.readouterr().err
    assert "agent/mantle-lsp.toml:1:1: error: configuration file larger than 1 MB" in err


def test_a_malformed_pyproject_table_points_at_the_key(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (project / "pyproject.toml").write_text(
        '[project]\nname = "a"\nselect = 3\n\n[tool.mantle-lsp]\nselect = 3\n'
    )
    assert main(["check", "."]) == 2
    err = capsys.readouterr().err
    assert "agent/pyproject.toml:6:1: error: `select` must be a list of strings" in err


def test_the_documented_example_is_an_error(project: Path) -> None:
    """The Example of docs/diagnostics/lsp.config.invalid_settings_file.md, and its Fix."""
    cfg = project / "mantle-lsp.toml"
    cfg.write_text('ignore = ["lsp.legacy.syntax"]\nmin_severity = "warning"\n')
    _, errors = load(project, REGISTRY)
    assert [(e.line, e.start) for e in errors] == [(1, 0)]
    cfg.write_text('ignore = ["lsp.legacy.syntax"]\nmin-severity = "warning"\n')
    assert load(project, REGISTRY)[1] == []
    shown(fired=["lsp.config.invalid_settings_file"], silent=["lsp.config.invalid_settings_file"])


@pytest.mark.parametrize(
    ("text", "said"),
    [
        # invalid TOML: nothing of the file is read
        (
            'ignore = ["lsp.condition"]\nengine = \n',
            "None of the file's settings apply until it is fixed: the defaults do.",
        ),
        # the bad key is left out, the good ones apply
        (
            'ignore = ["lsp.condition"]\nmin_severity = "hint"\n',
            "Left out: `min_severity`; the file's other settings apply (`ignore`).",
        ),
        # one bad code of a list: the rest of the list applies
        (
            'ignore = ["lsp.condition", "lsp.conditon"]\nengine = "3.30"\n',
            "Left out: 'lsp.conditon' in `ignore`, `engine`; the file's other settings "
            "apply (`ignore`).",
        ),
        # every key bad: nothing else is set
        (
            'min_severity = "hint"\n',
            "Left out: `min_severity`; the file sets nothing else, so the defaults apply.",
        ),
    ],
)
def test_what_a_malformed_file_still_does_is_said_exactly(
    project: Path, text: str, said: str
) -> None:
    """The language server keeps going with a malformed file; its message says what
    applies (docs/lsp.md)."""
    (project / "mantle-lsp.toml").write_text(text)
    st, errors = load(project, REGISTRY)
    assert errors
    assert effect(errors, st.file_keys) == said
    # what the sentence claims
    ignored = not st.enabled("lsp.condition.unknown_memory_key")
    assert ignored == ("(`ignore`)" in said)
    assert st.engine == "auto" and st.min_severity == "information"


def test_unknown_code_on_the_command_line_is_a_usage_error(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["check", ".", "--ignore", "lsp.nope"]) == 2
    assert "unknown code 'lsp.nope'" in capsys.readouterr().err


# -- show-settings ---------------------------------------------------------------------------


def test_show_settings_says_where_each_value_comes_from(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (project.parent / "pyproject.toml").write_text(
        '[project]\nname = "x"\n\n[tool.mantle-lsp]\nignore = ["lsp.legacy"]\nengine = "3.22"\n'
    )
    rc = main(["check", ".", "--show-settings", "--ignore", "lsp.condition"])
    out = capsys.readouterr().out
    assert rc == 0
    lines = out.splitlines()
    assert lines[0] == "Project: agent"
    assert lines[1] == "Configuration file: pyproject.toml"
    assert '  ignore = ["lsp.legacy", "lsp.condition"]  # pyproject.toml:5; command line' in lines
    assert '  engine = "3.22"  # pyproject.toml:6' in lines
    assert '  min-severity = "information"  # default' in lines
    assert '  select = ["(every code)"]  # default' in lines
    rc = main(["check", ".", "--show-settings", "--select", "lsp"])
    out = capsys.readouterr().out
    assert '  select = ["lsp"]  # command line' in out
    assert "  ignore = []  # default" in out  # the file's no longer applies


# -- engine_code in the output ---------------------------------------------------------------


def test_json_and_sarif_carry_engine_code_only_when_it_differs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    write_fixture(
        tmp_path,
        """\
//- skills/card/skill.md
---
description: Replace a card.
colour: red
---
Help with @memory.card.nope.
""",
    )
    monkeypatch.chdir(tmp_path)
    main(["check", "--format", "json", "."])
    rows = json.loads(capsys.readouterr().out)
    folded = [r for r in rows if r["code"] == "skill.markdown.unknown_frontmatter_key"]
    assert folded and folded[0]["engine_code"] == "mantle.validation.skill.failed_to_load"
    assert all("engine_code" not in r for r in rows if r not in folded)
    main(["check", "--format", "sarif", "."])
    results = json.loads(capsys.readouterr().out)["runs"][0]["results"]
    props = [r.get("properties") for r in results]
    assert {"engine_code": "mantle.validation.skill.failed_to_load"} in props


def test_the_file_engine_selects_the_rule_profile(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    write_fixture(
        tmp_path,
        """\
//- skills/card/memory.yml
schema:
  public:
    reason:
      type: text
      mutable: true
//- skills/card/skill.md
---
description: Replace a card.
---
Use @memory.card.reason.
""",
    )
    monkeypatch.chdir(tmp_path)
    mutable_322 = "mantle.validation.memory.skill_field_mutable_not_allowed"
    assert mutable_322 not in codes(capsys, ".")[1]
    (tmp_path / "mantle-lsp.toml").write_text('engine = "3.22"\n')
    rc, found, _ = codes(capsys, ".")
    assert (rc, mutable_322 in found) == (1, True)
    assert mutable_322 not in codes(capsys, ".", "--engine", "3.21")[1]


def test_a_broken_pyproject_counts_only_if_it_has_our_table(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (project / "pyproject.toml").write_text('[project\nname = "x"\n')
    assert main(["check", "."]) == 0  # not ours: its owner complains, we check as usual
    capsys.readouterr()
    (project / "pyproject.toml").write_text('[tool.mantle-lsp]\nignore = ["lsp"\n')
    assert main(["check", "."]) == 2
    assert "agent/pyproject.toml:3:1: error: invalid TOML" in capsys.readouterr().err
