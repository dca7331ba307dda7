"""``check --write-baseline`` / ``--baseline``: adopt mantle-lsp on a project with findings
and see only the new ones; entries survive unrelated edits."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from mantle_lsp.cli import baseline
from mantle_lsp.cli.main import main
from support import write_fixture

SKILL = """\
---
description: Replace a card.
---
Tell them session.card.reason now.

:::ordered_block id=main
steps:
  - id: a
    instructions: Ask.
    next:
      - if: session.card.reason == 'lost'
        then: end
      - else: END
:::
"""
MEMORY = "schema:\n  public:\n    reason:\n      type: text\n"


@pytest.fixture
def card(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    fx = write_fixture(
        tmp_path, f"//- skills/card/skill.md\n{SKILL}//- skills/card/memory.yml\n{MEMORY}"
    )
    monkeypatch.chdir(tmp_path)
    return fx.root


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out = capsys.readouterr()
    return code, out.out, out.err


def _edit(root: Path, old: str, new: str) -> None:
    p = root / "skills/card/skill.md"
    text = p.read_text(encoding="utf-8")
    assert old in text
    p.write_text(text.replace(old, new, 1), encoding="utf-8")


def test_write_baseline_records_the_findings_in_a_versioned_file(
    card: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = run(capsys, "check", ".", "--write-baseline", "ci/mantle-baseline.json")
    assert (code, out) == (2, "")  # the folder does not exist
    (card / "ci").mkdir()
    code, out, _ = run(capsys, "check", ".", "--write-baseline", "ci/mantle-baseline.json")
    assert (code, out) == (0, "Wrote 2 findings to ci/mantle-baseline.json.\n")
    data = json.loads((card / "ci/mantle-baseline.json").read_text(encoding="utf-8"))
    assert data["version"] == 2 and data["tool"] == "mantle-lsp"
    assert [(e["path"], e["code"], e["count"]) for e in data["findings"]] == [
        ("../skills/card/skill.md", "mantle.validation.flow.unresolved_next", 1),
        ("../skills/card/skill.md", "mantle.validation.prose.session_reference_in_instructions", 1),
    ]
    assert all(len(e["fingerprint"]) == 16 for e in data["findings"])
    assert data["findings"][0]["message"].startswith("step 'a': `end` is not a step")


def test_baseline_hides_recorded_findings_across_unrelated_edits(
    card: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run(capsys, "check", ".", "--write-baseline", "baseline.json")
    code, out, _ = run(capsys, "check", ".", "--baseline", "baseline.json")
    assert (code, out) == (
        0,
        "All checks passed (1 project). (2 findings in the baseline not shown.)\n",
    )
    _edit(card, "---\nTell", "---\nA new paragraph above.\n\nTell")  # every line moves
    _edit(card, "instructions: Ask.", "instructions: Ask again, politely.")
    code, out, _ = run(capsys, "check", ".", "--baseline", "baseline.json")
    assert code == 0 and out.startswith("All checks passed")
    # a new finding of a recorded code, elsewhere: reported
    _edit(card, "Ask again", "Ask session.card.reason again")
    code, out, _ = run(capsys, "check", ".", "--baseline", "baseline.json", "--format", "concise")
    assert code == 1
    code_ = "mantle.validation.prose.session_reference_in_instructions"
    assert out.splitlines()[0].startswith(f"skills/card/skill.md:11:23: error[{code_}]")
    assert out.splitlines()[1] == (
        "Found 1 error, 0 warnings in 1 file (1 project). (2 findings in the baseline not shown.)"
    )


def test_a_changed_finding_is_new(card: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run(capsys, "check", ".", "--write-baseline", "baseline.json")
    _edit(card, "then: end", "then: ending")  # the same code on other text
    code, out, _ = run(capsys, "check", ".", "--baseline", "baseline.json", "--format", "concise")
    assert code == 1
    assert "`ending` is not a step" in out
    assert "(1 finding in the baseline not shown.)" in out


def test_identical_findings_are_counted(card: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _edit(card, "now.", "now.\nAgain: session.card.reason now.")
    run(capsys, "check", ".", "--write-baseline", "baseline.json")
    data = json.loads((card / "baseline.json").read_text(encoding="utf-8"))
    assert sorted(e["count"] for e in data["findings"]) == [1, 2]
    _edit(card, "now.\nAgain", "now.\nAnd: session.card.reason now.\nAgain")
    code, out, _ = run(capsys, "check", ".", "--baseline", "baseline.json", "--format", "concise")
    assert code == 1
    assert len([line for line in out.splitlines() if "session_reference" in line]) == 1
    assert "(3 findings in the baseline not shown.)" in out


def test_the_baseline_works_from_another_working_directory(
    card: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    run(capsys, "check", ".", "--write-baseline", "baseline.json")
    monkeypatch.chdir(card / "skills")
    code, out, _ = run(capsys, "check", "..", "--baseline", "../baseline.json")
    assert code == 0 and "(2 findings in the baseline not shown.)" in out


def test_a_bad_baseline_is_a_usage_error(card: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (card / "b.json").write_text('{"version": 9, "tool": "mantle-lsp", "findings": []}', "utf-8")
    code, _, err = run(capsys, "check", ".", "--baseline", "b.json")
    assert code == 2 and "baseline version 9 is not supported" in err
    (card / "b.json").write_text("[", "utf-8")
    code, _, err = run(capsys, "check", ".", "--baseline", "b.json")
    assert code == 2 and "not a baseline file" in err
    code, _, err = run(capsys, "check", ".", "--baseline", "missing.json")
    assert code == 2 and "cannot read the baseline" in err
    code, _, err = run(capsys, "check", ".", "--baseline", "b.json", "--write-baseline", "c.json")
    assert code == 2 and "cannot be combined" in err


@pytest.mark.parametrize(
    "version", ["true", "1.0", '"1"', "null"], ids=["true", "1.0", "a string", "null"]
)
def test_a_baseline_version_must_be_an_integer(
    card: Path, capsys: pytest.CaptureFixture[str], version: str
) -> None:
    """`"version": true` was read as version 1 (`True == 1` in Python)."""
    text = f'{{"version": {version}, "tool": "mantle-lsp", "findings": []}}'
    (card / "b.json").write_text(text, "utf-8")
    code, _, err = run(capsys, "check", ".", "--baseline", "b.json")
    assert code == 2
    assert f"baseline version {version} is not supported" in err


def test_a_deeply_nested_baseline_is_a_usage_error(
    card: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """100,000 nested lists: a RecursionError traceback, exit 1."""
    (card / "b.json").write_text("[" * 100_000 + "]" * 100_000, "utf-8")
    code, out, err = run(capsys, "check", ".", "--baseline", "b.json")
    assert (code, out) == (2, "")
    assert err.endswith("b.json: not a baseline file (nested too deeply)\n")
    assert err.startswith("mantle-lsp: error: ")


def test_a_baseline_over_the_size_limit_is_refused_unread(
    card: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    run(capsys, "check", ".", "--write-baseline", "b.json")
    monkeypatch.setattr(baseline, "MAX_BYTES", (card / "b.json").stat().st_size - 1)
    code, _, err = run(capsys, "check", ".", "--baseline", "b.json")
    assert code == 2 and "b.json: cannot read the baseline (larger than " in err


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs on this platform")
@pytest.mark.parametrize("kind", ["fifo", "/dev/zero"])
def test_a_baseline_that_is_no_regular_file_is_refused(card: Path, kind: str) -> None:
    """A FIFO blocked forever, /dev/zero was read until the process was killed."""
    if kind == "fifo":
        os.mkfifo(card / "b.json")
        target = "b.json"
    else:
        target = kind
    try:
        done = subprocess.run(
            [sys.executable, "-m", "mantle_lsp", "check", ".", "--baseline", target],
            cwd=card,
            capture_output=True,
            text=True,
            timeout=60,
        )
    except subprocess.TimeoutExpired:
        pytest.fail(f"--baseline {kind} did not return")
    assert done.returncode == 2, done.stderr
    assert done.stderr.endswith(": cannot read the baseline (not a regular file)\n")


def test_fix_with_a_baseline_fixes_only_the_new_findings(
    card: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run(capsys, "check", ".", "--write-baseline", "baseline.json")
    _edit(card, "instructions: Ask.", "instructions: Ask session.card.reason.")
    code, _, _ = run(capsys, "check", ".", "--baseline", "baseline.json", "--fix")
    assert code == 0
    text = (card / "skills/card/skill.md").read_text(encoding="utf-8")
    assert "instructions: Ask @memory.card.reason." in text
    assert "Tell them session.card.reason now." in text and "then: end" in text
