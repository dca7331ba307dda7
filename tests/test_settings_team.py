"""The settings a team shares: per-code `severity`, `fixable` / `unfixable`, `extend` (a
base file), `--config KEY=VALUE`, and did-you-mean for unknown codes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from mantle_lsp.cli.main import main
from mantle_lsp.ide.codes import REGISTRY
from mantle_lsp.model.settings import Overrides, load
from support import write_fixture
from test_cli import BROKEN
from test_settings import IGNORED_KEY, PROJECT, UNKNOWN, UNUSED_FIELD

PROSE_KEY = "mantle.validation.prose.unknown_memory_key"  # an engine error (BROKEN)
PROSE_REF = "mantle.validation.prose.incomplete_memory_reference"  # an engine error
EXE = Path(sys.executable).with_name("mantle-lsp")


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "repo" / "agent"
    root.mkdir(parents=True)
    write_fixture(root, PROJECT)
    monkeypatch.chdir(root)
    return root


@pytest.fixture
def broken(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    fx = write_fixture(tmp_path, BROKEN)
    monkeypatch.chdir(tmp_path)
    return fx.root


def rows(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, dict[str, str], str]:
    """Exit status, {code: severity} of what `check` reports, stderr."""
    rc = main(["check", "--format", "json", *args])
    out = capsys.readouterr()
    found = json.loads(out.out) if out.out.strip() else []
    return rc, {r["code"]: r["severity"] for r in found}, out.err


# -- severity ----------------------------------------------------------------------------------


def test_severity_table_changes_what_is_reported_and_the_exit_status(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cfg = project / "mantle-lsp.toml"
    assert rows(capsys, ".")[:2] == (0, {IGNORED_KEY: "warning", UNKNOWN: "warning"})
    # a warning raised to error fails CI; a prefix turned off hides its codes; a hint
    # raised to warning is shown although min-severity hides hints
    cfg.write_text(
        f'[severity]\n"{UNKNOWN}" = "error"\n"lsp.config" = "off"\n"{UNUSED_FIELD}" = "warning"\n'
    )
    assert rows(capsys, ".")[:2] == (1, {UNKNOWN: "error", UNUSED_FIELD: "warning"})
    # the most specific entry wins, whatever the order
    cfg.write_text(f'[severity]\n"{UNKNOWN}" = "information"\n"lsp" = "off"\n')
    assert rows(capsys, ".")[:2] == (0, {UNKNOWN: "information"})
    # min-severity compares the severity the table gives
    assert rows(capsys, ".", "--min-severity", "warning")[:2] == (0, {})


def test_an_engine_error_is_lowered_to_warning_at_most(
    broken: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cfg = broken / "mantle-lsp.toml"
    rc, found, _ = rows(capsys, ".")
    assert (rc, found[PROSE_KEY], found[PROSE_REF]) == (1, "error", "error")
    cfg.write_text(f'[severity]\n"{PROSE_KEY}" = "warning"\n')
    rc, found, _ = rows(capsys, ".")
    assert (rc, found[PROSE_KEY], found[PROSE_REF]) == (1, "warning", "error")
    # a prefix asking for less keeps the engine's errors as warnings (still shown)
    cfg.write_text('[severity]\n"mantle" = "off"\n')
    rc, found, _ = rows(capsys, ".")
    assert (rc, found[PROSE_KEY], found[PROSE_REF]) == (0, "warning", "warning")
    # naming the engine error itself: a configuration error that says to use `ignore`
    cfg.write_text(f'[severity]\n"{PROSE_KEY}" = "off"\n')
    rc, found, err = rows(capsys, ".")
    assert (rc, found) == (2, {})
    assert f"mantle-lsp.toml:2:1: error: `severity`: '{PROSE_KEY}' is an error the engine" in err
    assert "to hide it, add it to `ignore`" in err
    cfg.write_text(f'ignore = ["{PROSE_KEY}"]\n')
    assert PROSE_KEY not in rows(capsys, ".")[1]


def test_a_malformed_severity_table_points_at_the_entry(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cfg = project / "mantle-lsp.toml"
    cfg.write_text('[severity]\n"lsp.config" = "warn"\n"lsp.nope" = "off"\n')
    rc, _, err = rows(capsys, ".")
    assert rc == 2
    assert (
        "mantle-lsp.toml:2:1: error: `severity`: 'lsp.config' = \"warn\" is no level; did you "
        "mean `warning`? (one of error, warning, information, hint, off)"
    ) in err
    assert "mantle-lsp.toml:3:1: error: `severity`: 'lsp.nope' is no diagnostic code" in err
    cfg.write_text('severity = "off"\n')
    assert "`severity` must be a table" in rows(capsys, ".")[2]


def test_show_settings_lists_the_severity_table(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (project / "mantle-lsp.toml").write_text('[severity]\n"lsp.config" = "error"\n')
    assert main(["check", "--show-settings"]) == 0
    assert '  severity = {"lsp.config" = "error"}  # mantle-lsp.toml:1' in capsys.readouterr().out


# -- fixable / unfixable -----------------------------------------------------------------------

FIXABLE = """\
//- skills/card/memory.yml
schema:
  public:
    reason:
      type: text
//- skills/card/skill.md
---
description: Replace a card.
---
Say session.card.reason here.

:::ordered_block id=main
steps:
  - id: a
    instructions: Ask.
    next: end
:::
"""
SESSION_REF = "mantle.validation.prose.session_reference_in_instructions"
END = "mantle.validation.flow.unresolved_next"


def test_fix_applies_only_the_fixable_codes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    fx = write_fixture(tmp_path, FIXABLE)
    monkeypatch.chdir(fx.root)
    skill = fx.root / "skills/card/skill.md"
    before = skill.read_text()
    (fx.root / "mantle-lsp.toml").write_text(f'unfixable = ["{END}"]\n')
    # the [*] count leaves the unfixable code out
    assert main(["check", "--format", "concise"]) == 1
    assert "[*] 1 finding fixable with `--fix`." in capsys.readouterr().out
    assert main(["check", "--fix", "--format", "concise"]) == 1
    out = capsys.readouterr().out
    text = skill.read_text()
    assert "@memory.card.reason" in text and "next: end" in text
    assert f"error[{END}]" in out and "Fixed 1 finding." in out
    # the command line: --fixable starts afresh, --extend-fixable adds
    skill.write_text(before)
    assert main(["check", "--fix", "--fixable", END]) == 1
    text = skill.read_text()
    assert "next: END" in text and "session.card.reason" in text
    capsys.readouterr()
    skill.write_text(before)
    assert main(["check", "--fix", "--extend-fixable", END]) == 0
    assert "next: END" in skill.read_text() and "@memory" in skill.read_text()


def test_the_editor_fix_all_leaves_unfixable_codes(tmp_path: Path) -> None:
    from mantle_lsp.ide.fixes import fix_all
    from mantle_lsp.model.project import Project
    from mantle_lsp.model.settings import apply

    fx = write_fixture(tmp_path, FIXABLE)
    (fx.root / "mantle-lsp.toml").write_text(f'unfixable = ["{END}"]\n')
    st, _ = load(fx.root, REGISTRY)
    proj = Project.load(fx.root)
    from mantle_lsp.ide.diagnostics import project_diagnostics

    skill = fx.root / "skills/card/skill.md"
    found = apply(st, skill, project_diagnostics(proj)[skill])
    assert fix_all(proj, found).count == 2
    assert fix_all(proj, [d for d in found if st.fixable(d.code)]).count == 1


# -- extend -------------------------------------------------------------------------------------


def test_extend_layers_a_base_file_under_the_project_file(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    repo = project.parent
    (repo / "team.toml").write_text(
        'ignore = ["lsp"]\nmin-severity = "hint"\nextend-exclude = ["agent/skills/card/"]\n'
        '[severity]\n"lsp.config" = "error"\n'
    )
    cfg = project / "mantle-lsp.toml"
    cfg.write_text('extend = "../team.toml"\nextend-select = ["lsp.config"]\n')
    # the base's ignore, then the project's extend-select (a later layer), the base's
    # severity and min-severity; its extend-exclude anchored at its own folder
    assert rows(capsys, ".")[:2] == (1, {IGNORED_KEY: "error"})
    cfg.write_text('extend = "../team.toml"\nextend-select = ["lsp"]\nmin-severity = "warning"\n')
    assert rows(capsys, ".")[1] == {IGNORED_KEY: "error"}  # card/ still excluded
    (repo / "team.toml").write_text('extend-exclude = ["skills/card/"]\n')  # not below repo/
    assert rows(capsys, ".")[1] == {IGNORED_KEY: "warning", UNKNOWN: "warning"}
    assert main(["check", "--show-settings"]) == 0
    out = capsys.readouterr().out
    assert f'  extend = ["{repo / "team.toml"}"]  # mantle-lsp.toml:1' in out
    assert f'  extend-exclude = ["skills/card/"]  # {repo / "team.toml"}:1' in out


def test_extend_refuses_cycles_depth_missing_and_special_files(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    repo = project.parent
    cfg = project / "mantle-lsp.toml"
    (repo / "a.toml").write_text('extend = "agent/mantle-lsp.toml"\n')
    cfg.write_text('extend = "../a.toml"\n')
    rc, _, err = rows(capsys, ".")
    assert rc == 2
    assert f"{repo / 'a.toml'}:1:1: error: `extend` makes a cycle: mantle-lsp.toml → " in err
    for i in range(12):
        (repo / f"c{i}.toml").write_text(f'extend = "c{i + 1}.toml"\n')
    cfg.write_text('extend = "../c0.toml"\n')
    rc, _, err = rows(capsys, ".")
    assert rc == 2 and "`extend` goes deeper than 10 files" in err
    cfg.write_text('extend = "../nope.toml"\n')
    assert f"`extend`: {repo / 'nope.toml'}: no such file" in rows(capsys, ".")[2]
    os.mkfifo(repo / "fifo.toml")
    cfg.write_text('extend = "../fifo.toml"\n')
    assert "cannot read the configuration file (not a regular file)" in rows(capsys, ".")[2]
    (repo / "pyproject.toml").write_text('[project]\nname = "x"\n')
    cfg.write_text('extend = "../pyproject.toml"\n')
    assert "has no [tool.mantle-lsp] table" in rows(capsys, ".")[2]
    (repo / "pyproject.toml").write_text('[tool.mantle-lsp]\nignore = ["lsp.config"]\n')
    assert rows(capsys, ".")[:2] == (0, {UNKNOWN: "warning"})


# -- --config KEY=VALUE -------------------------------------------------------------------------


def test_config_key_value_overrides_the_file_under_the_options(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (project / "mantle-lsp.toml").write_text('ignore = ["lsp.config"]\n')
    assert rows(capsys, ".")[1] == {UNKNOWN: "warning"}
    # a later layer than the file; --select (an option) is later still
    got = rows(capsys, ".", "--config", 'extend-select = ["lsp.config"]')[1]
    assert got == {IGNORED_KEY: "warning", UNKNOWN: "warning"}
    got = rows(capsys, ".", "--config", "select=['lsp.config']", "--select", "lsp.condition")
    assert got[1] == {UNKNOWN: "warning"}
    # dotted keys, repeatable, beside a configuration file
    other = project.parent / "ci.toml"
    other.write_text('min-severity = "hint"\n')
    args = ["--config", str(other), "--config", f'severity."{UNKNOWN}" = "error"']
    assert rows(capsys, ".", *args)[:2] == (
        1,
        {IGNORED_KEY: "warning", UNKNOWN: "error", UNUSED_FIELD: "hint"},
    )
    assert rows(capsys, ".", "--config", "tool.mantle-lsp.ignore = ['lsp']")[1] == {}


def test_config_key_value_errors_are_usage_errors(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rc, _, err = rows(capsys, ".", "--config", "min_severity='hint'")
    assert rc == 2
    assert err.startswith(
        "--config \"min_severity='hint'\": error: unknown setting `min_severity`; did you mean "
        "`min-severity`?"
    )
    rc, _, err = rows(capsys, ".", "--config", "select = [lsp]")
    assert rc == 2 and "not a configuration file, nor a `KEY = VALUE` line of one" in err
    rc, _, err = rows(capsys, ".", "--config", "extend='x.toml'")
    assert rc == 2 and "`extend` can only be set in a configuration file" in err
    rc, _, err = rows(capsys, ".", "--config", "a.toml", "--config", "b.toml")
    assert rc == 2 and "--config names one configuration file" in err


def test_config_options_through_the_console_script(project: Path) -> None:
    base = project.parent / "team.toml"
    base.write_text('[severity]\n"lsp.config" = "error"\n')
    (project / "mantle-lsp.toml").write_text('extend = "../team.toml"\n')
    cmd = [str(EXE), "check", "--format", "concise", "--config", "ignore = ['lsp.condition']"]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=60, env=dict(os.environ))
    assert proc.returncode == 1, proc.stderr
    assert f"error[{IGNORED_KEY}]" in proc.stdout and UNKNOWN not in proc.stdout


# -- did you mean --------------------------------------------------------------------------------


def test_unknown_codes_get_a_did_you_mean(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for option in ("--select", "--ignore", "--extend-select", "--unfixable"):
        rc, _, err = rows(capsys, ".", option, "lsp.condtion")
        assert rc == 2
        assert err == (
            f"mantle-lsp: error: {option}: unknown code 'lsp.condtion'; did you mean "
            "`lsp.condition`? (`mantle-lsp explain --markdown` lists every code)\n"
        )
    assert main(["explain", "unkown_memory_key"]) == 2
    assert "did you mean `lsp.condition.unknown_memory_key`?" in capsys.readouterr().err
    (project / "mantle-lsp.toml").write_text('ignore = ["lsp.legacy.syntx"]\n')
    assert "did you mean `lsp.legacy.syntax`?" in rows(capsys, ".")[2]


def test_overrides_carry_fix_layers() -> None:
    st, errors = load(Path("/nonexistent"), REGISTRY, Overrides(unfixable=("lsp",)))
    assert errors == [] and not st.fixable("lsp.legacy.syntax") and st.fixable(END)
