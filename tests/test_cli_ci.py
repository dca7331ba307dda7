"""What a ruff user reaches for in CI and editors: `--exit-zero`, `--exit-non-zero-on-fix`,
`-q`/`-s`, `--output-file`, `--show-files`, stdin (`-` with `--stdin-filename`),
`--watch`, `--unsafe-fixes` alone, the json / json-lines / junit / gitlab / pylint
formats, and baselines that report (and drop) what is fixed."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from mantle_lsp.cli import baseline
from mantle_lsp.cli.fingerprint import finding_text, fingerprint_v1
from mantle_lsp.cli.main import main
from mantle_lsp.syntax.text import TextRange
from support import write_fixture

EXE = Path(sys.executable).with_name("mantle-lsp")

CARD = """\
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
SKILL = "skills/card/skill.md"
SESSION_REF = "mantle.validation.prose.session_reference_in_instructions"
END = "mantle.validation.flow.unresolved_next"
UNKNOWN_KEY = "mantle.validation.prose.unknown_memory_key"


@pytest.fixture
def card(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    fx = write_fixture(tmp_path, CARD)
    monkeypatch.chdir(fx.root)
    monkeypatch.delenv("FORCE_COLOR", raising=False)
    monkeypatch.delenv("CI_PROJECT_DIR", raising=False)
    return fx.root


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out = capsys.readouterr()
    return code, out.out, out.err


def cli(
    *args: str, stdin: str | None = None, cwd: Path | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(EXE), *args],
        input=stdin,
        capture_output=True,
        text=True,
        timeout=120,
        cwd=cwd,
        env={k: v for k, v in os.environ.items() if k not in ("FORCE_COLOR", "CI_PROJECT_DIR")},
    )


# -- exit status ------------------------------------------------------------------------------


def test_exit_zero_and_exit_non_zero_on_fix(card: Path, capsys: pytest.CaptureFixture[str]) -> None:
    before = (card / SKILL).read_text()
    assert run(capsys, "check")[0] == 1
    assert run(capsys, "check", "--exit-zero")[0] == 0
    assert run(capsys, "check", "-e", "--format", "json")[0] == 0
    # --fix leaves nothing: 0, unless asked to fail when it changed a file
    assert run(capsys, "check", "--fix")[0] == 0
    (card / SKILL).write_text(before)
    code, out, _ = run(capsys, "check", "--fix", "--exit-non-zero-on-fix")
    assert code == 1 and "Fixed 2 findings. All checks passed (1 project)." in out
    assert run(capsys, "check", "--fix", "--exit-non-zero-on-fix")[0] == 0  # nothing to fix
    code, _, err = run(capsys, "check", "--exit-zero", "--exit-non-zero-on-fix")
    assert code == 2 and "contradict" in err


def test_exit_options_through_the_console_script(card: Path) -> None:
    proc = cli("check", "--exit-zero", "--quiet", "--format", "concise")
    assert proc.returncode == 0
    assert proc.stdout.splitlines() == [
        f"{SKILL}:4:5: error[{SESSION_REF}] [*] `session.card.reason` in prose is not "
        "substituted: write `@memory.card.reason` to insert the value (`session.` is the "
        "condition form)",
        f"{SKILL}:10:11: error[{END}] [*] step 'a': `end` is not a step of block 'main' nor "
        "`END` (`END` is upper-case)",
    ]  # -q: the findings, no summary
    proc = cli("check", "--fix", "--exit-non-zero-on-fix", "--silent")
    assert (proc.returncode, proc.stdout, proc.stderr) == (1, "", "")
    assert "@memory.card.reason" in (card / SKILL).read_text()


# -- what is printed, and where ------------------------------------------------------------------


def test_quiet_and_silent(card: Path, capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    (card / "requirements.txt").write_text("rasa-pro==3.20.0.dev1\n")  # a note on stderr
    code, out, err = run(capsys, "check", "--format", "concise")
    assert "Found 2 errors" in out and "mantle-lsp: note:" in err
    code, out, err = run(capsys, "check", "--format", "concise", "-q")
    assert code == 1 and len(out.splitlines()) == 2 and "Found" not in out and err == ""
    code, out, err = run(capsys, "check", "-s")
    assert (code, out, err) == (1, "", "")
    # a usage error is still said under --silent (exit 2 needs its reason)
    code, _, err = run(capsys, "check", "-s", "--select", "nope")
    assert code == 2 and "unknown code" in err


def test_output_file_gets_what_stdout_would(card: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, shown, _ = run(capsys, "check", "--format", "concise", "--color", "always")
    code, out, _ = run(
        capsys, "check", "--format", "concise", "--color", "always", "-o", "report.txt"
    )
    assert (code, out) == (1, "")
    text = (card / "report.txt").read_text()
    assert "\x1b[" not in text and "\x1b[" in shown  # no colour in a file
    assert text.splitlines()[-2:] == [
        "Found 2 errors, 0 warnings in 1 file (1 project).",
        "[*] 2 findings fixable with `--fix`.",
    ]
    # --silent keeps the terminal quiet, the file still gets the report
    code, out, _ = run(capsys, "check", "--format", "json", "--silent", "--output-file", "r.json")
    assert (code, out) == (1, "")
    assert {r["code"] for r in json.loads((card / "r.json").read_text())} == {SESSION_REF, END}
    code, _, err = run(capsys, "check", "-o", "no/such/folder/r.txt")
    assert code == 2 and "no/such/folder/r.txt: cannot write the output" in err


def test_show_files_lists_what_would_be_checked(
    card: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (card / "mantle-lsp.toml").write_text('extend-exclude = ["skills/card/memory.yml"]\n')
    code, out, _ = run(capsys, "check", "--show-files")
    assert (code, out) == (0, "agent.yml\nintegrations.yml\nskills/card/skill.md\n")
    code, out, _ = run(capsys, "check", "--show-files", SKILL, "agent.yml")
    assert (code, out) == (0, "agent.yml\nskills/card/skill.md\n")


# -- stdin -------------------------------------------------------------------------------------


def test_stdin_is_checked_as_the_named_file(card: Path) -> None:
    text = "---\ndescription: A.\n---\nif: session.card.reasn == 'x'\nSay.\n"
    proc = cli("check", "-", "--stdin-filename", SKILL, "--format", "concise", stdin=text)
    assert proc.returncode == 1
    assert proc.stdout.splitlines()[0].startswith(f"{SKILL}:4:5: error[{UNKNOWN_KEY}]")
    assert "session.card.reason here" in (card / SKILL).read_text()  # the disk is not read
    # no PATH: --stdin-filename alone reads stdin too; a file not yet on disk
    new = "skills/new_one/skill.md"
    proc = cli("check", "--stdin-filename", new, "--format", "concise", stdin=text)
    assert proc.returncode == 1 and proc.stdout.startswith(f"{new}:4:5: error[")
    assert not (card / new).exists()


def test_stdin_fix_prints_the_fixed_text_and_reports_on_stderr(card: Path) -> None:
    text = "\ufeff---\r\ndescription: A.\r\n---\r\nTell session.card.reason now.\r\n"
    raw = subprocess.run(
        [str(EXE), "check", "-", "--stdin-filename", SKILL, "--fix"],
        input=text.encode(),
        capture_output=True,
        timeout=120,
    )
    assert raw.returncode == 0
    # the BOM and CRLF line breaks of what was given are kept
    assert raw.stdout.decode() == text.replace("session.card", "@memory.card")
    assert "Fixed 1 finding. All checks passed (1 project)." in raw.stderr.decode()
    assert "session.card.reason here" in (card / SKILL).read_text()  # nothing written
    proc = cli(
        "check", "-", "--stdin-filename", SKILL, "--fix", "--exit-non-zero-on-fix", stdin=text
    )
    assert proc.returncode == 1
    # a fix that would edit another file (declare the field in memory.yml) is not applied
    text = "---\ndescription: A.\n---\nif: session.card.other == 'x'\nSay.\n"
    proc = cli("check", "-", "--stdin-filename", SKILL, "--fix", "--unsafe-fixes", stdin=text)
    assert proc.stdout == text and proc.returncode == 1
    assert "other" not in (card / "skills/card/memory.yml").read_text()
    proc = cli(
        "check", "-", "--stdin-filename", SKILL, "--diff", stdin=text.replace("if: ", "Say ")
    )
    assert proc.stdout.startswith(f"--- a/{SKILL}\n+++ b/{SKILL}\n")


def test_stdin_outside_a_project_comes_back_unchanged(
    card: Path, tmp_path_factory: pytest.TempPathFactory
) -> None:
    text = "anything: [1\n"
    elsewhere = tmp_path_factory.mktemp("elsewhere") / "x.yml"
    proc = cli("check", "-", "--stdin-filename", str(elsewhere), "--fix", stdin=text)
    assert (proc.returncode, proc.stdout) == (0, text)
    assert "not inside a Mantle project; not checked" in proc.stderr
    proc = cli("check", "-", "--stdin-filename", "README.md", "--fix", stdin=text)
    assert (proc.returncode, proc.stdout) == (0, text)
    assert "README.md: not a Mantle file; not checked" in proc.stderr
    (card / "mantle-lsp.toml").write_text('extend-exclude = ["skills/"]\n')
    proc = cli("check", "-", "--stdin-filename", SKILL, "--fix", "--force-exclude", stdin="x\n")
    assert (proc.returncode, proc.stdout) == (0, "x\n")


def test_stdin_usage_errors(card: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(capsys, "check", "-")
    assert code == 2 and "needs --stdin-filename" in err
    code, _, err = run(capsys, "check", "-", ".", "--stdin-filename", SKILL)
    assert code == 2 and "cannot be checked together" in err
    code, _, err = run(capsys, "check", ".", "--stdin-filename", SKILL)
    assert code == 2 and "--stdin-filename names the file read from stdin" in err


# -- watch ---------------------------------------------------------------------------------------


def test_watch_checks_again_on_a_change_and_stops_on_sigint(card: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k != "FORCE_COLOR"}
    proc = subprocess.Popen(
        [str(EXE), "check", "--watch", "--format", "concise", "--jobs", "1"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    assert proc.stdout is not None and proc.stderr is not None
    try:
        lines: list[str] = []
        while not any(line.startswith("[*]") for line in lines):
            lines.append(proc.stdout.readline())
        assert "Found 2 errors, 0 warnings in 1 file (1 project).\n" in lines
        time.sleep(0.5)
        (card / SKILL).write_text((card / SKILL).read_text().replace("next: end", "next: END"))
        second: list[str] = []
        while not second or not second[-1].startswith("[*]"):
            second.append(proc.stdout.readline())
        assert "Found 1 error, 0 warnings in 1 file (1 project).\n" in second
        proc.send_signal(signal.SIGINT)
        assert proc.wait(timeout=30) == 0
        err = proc.stderr.read()
        assert "File change detected; checking again." in err and "Traceback" not in err
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def test_watch_rounds_and_usage(card: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from mantle_lsp.cli import watch

    snap = watch.snapshot(["."], [])
    assert {os.path.normpath(p) for p in snap} >= {"agent.yml", os.path.normpath(SKILL)}
    code, _, err = run(capsys, "check", "--watch", "--fix")
    assert code == 2 and "--watch only reports: not with --fix" in err


# -- --unsafe-fixes alone --------------------------------------------------------------------------


def test_unsafe_fixes_alone_marks_what_an_unsafe_fix_fixes(card: Path) -> None:
    (card / SKILL).write_text(
        (card / SKILL)
        .read_text()
        .replace("Say session.card.reason", "if: session.card.reasn == 'x'\nSay")
    )
    plain = cli("check", "--format", "concise")
    unsafe = cli("check", "--format", "concise", "--unsafe-fixes")
    line = f"{SKILL}:4:5: error[{UNKNOWN_KEY}]"
    assert any(x.startswith(line + " prose") for x in plain.stdout.splitlines())
    assert any(x.startswith(line + " [*] prose") for x in unsafe.stdout.splitlines())
    assert unsafe.stdout.splitlines()[-1] == "[*] 2 findings fixable with `--fix --unsafe-fixes`."
    stats = cli("check", "--statistics", "--unsafe-fixes", "--format", "json")
    assert {s["code"]: s["fixable"] for s in json.loads(stats.stdout)}[UNKNOWN_KEY] is True


# -- formats ---------------------------------------------------------------------------------------


def test_json_carries_the_fix_and_the_page_address(
    card: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    docs = "https://docs.example.org/mantle"
    _, out, _ = run(capsys, "check", "--format", "json", "--documentation-url", docs)
    rows = {r["code"]: r for r in json.loads(out)}
    assert rows[END]["fix"] == {
        "applicability": "safe",
        "message": "Change to `END`",
        "edits": [
            {
                "path": SKILL,
                "line": 10,
                "column": 11,
                "end_line": 10,
                "end_column": 14,
                "content": "END",
            }
        ],
    }
    assert rows[END]["url"] == f"{docs}/diagnostics/{END}.html"
    # json-lines: the same objects, one a line
    _, out, _ = run(capsys, "check", "--format", "json-lines", "--documentation-url", docs)
    assert [json.loads(line) for line in out.splitlines()] == list(rows.values())
    # a fix that creates a file says so; `--unfixable` takes the fix away
    (card / SKILL).write_text("---\ndescription: A.\n---\nif: session.project.x == 'y'\nSay.\n")
    _, out, _ = run(capsys, "check", "--format", "json")
    (row,) = (r for r in json.loads(out) if r["fix"])
    assert row["fix"] == {
        "applicability": "unsafe",
        "message": "Declare `x` in memory.yml (project)",
        "edits": [],
        "new_files": [{"path": "memory.yml", "content": "x:\n  type: text\n"}],
    }
    _, out, _ = run(capsys, "check", "--format", "json", "--unfixable", row["code"])
    assert all(r["fix"] is None for r in json.loads(out))


def test_junit_gitlab_and_pylint(card: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    proc = cli("check", "--format", "junit")
    assert proc.returncode == 1
    suites = ET.fromstring(proc.stdout)
    assert (suites.get("tests"), suites.get("failures")) == ("2", "2")
    (suite,) = suites
    assert suite.get("name") == SKILL
    cases = [(c.get("name"), c.get("line"), c[0].get("type")) for c in suite]
    assert cases == [(SESSION_REF, "4", "error"), (END, "10", "error")]
    # no findings: one passing test case, valid XML
    clean = cli("check", "--format", "junit", "--ignore", "mantle")
    assert clean.returncode == 0
    assert ET.fromstring(clean.stdout).get("failures") == "0"
    # gitlab: paths from the project folder GitLab names, unique fingerprints
    env_dir = card.parent
    proc = subprocess.run(
        [str(EXE), "check", "--format", "gitlab"],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "CI_PROJECT_DIR": str(env_dir)},
    )
    report = json.loads(proc.stdout)
    assert [(r["check_name"], r["severity"]) for r in report] == [
        (SESSION_REF, "critical"),
        (END, "critical"),
    ]
    assert report[0]["location"] == {
        "path": f"{card.name}/{SKILL}",
        "lines": {"begin": 4, "end": 4},
    }
    assert report[0]["description"].startswith(f"{SESSION_REF}: `session.card.reason`")
    assert len({r["fingerprint"] for r in report}) == 2
    proc = cli("check", "--format", "pylint")
    assert proc.stdout.splitlines()[1] == (
        f"{SKILL}:10: [{END}] step 'a': `end` is not a step of block 'main' nor `END` "
        "(`END` is upper-case)"
    )
    proc = cli("check", "--format", "pylint", "--statistics")
    assert proc.returncode == 2


def test_junit_escapes_what_xml_cannot_hold(card: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (card / "agent.yml").write_text((card / "agent.yml").read_text() + '"x<&\\u0001": 1\n')
    _, out, _ = run(capsys, "check", "--format", "junit")
    root = ET.fromstring(out)  # parses: &, <, " escaped, the control character replaced
    messages = [c[0].get("message") or "" for s in root for c in s]
    assert any("x<&\ufffd" in m for m in messages), messages


# -- baselines that shrink ----------------------------------------------------------------------


def test_baseline_reports_fixed_entries_and_update_drops_them(
    card: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run(capsys, "check", "--write-baseline", "base.json")
    _, out, _ = run(capsys, "check", "--baseline", "base.json")
    assert out == "All checks passed (1 project). (2 findings in the baseline not shown.)\n"
    (card / SKILL).write_text((card / SKILL).read_text().replace("next: end", "next: END"))
    code, out, _ = run(capsys, "check", "--baseline", "base.json")
    assert code == 0
    assert out.splitlines() == [
        "All checks passed (1 project). (1 finding in the baseline not shown.)",
        "1 baseline entry is fixed; run with `--update-baseline` to drop it.",
    ]
    # machine formats keep stdout parseable: the note goes to stderr
    code, out, err = run(capsys, "check", "--baseline", "base.json", "--format", "json")
    assert json.loads(out) == [] and "1 baseline entry is fixed" in err
    # a check of other files says nothing about this one
    _, out, _ = run(capsys, "check", "--baseline", "base.json", "agent.yml")
    assert "fixed" not in out
    _, out, _ = run(capsys, "check", "--baseline", "base.json", "--select", "lsp")
    assert "fixed" not in out
    # a stale baseline fails CI when asked to
    code, _, err = run(capsys, "check", "--baseline", "base.json", "--fail-on-stale-baseline")
    assert code == 1
    assert "base.json records 1 finding that is fixed (--fail-on-stale-baseline)" in err
    code, out, _ = run(capsys, "check", "--baseline", "base.json", "--update-baseline")
    assert code == 0 and "Dropped 1 fixed finding from base.json." in out
    data = json.loads((card / "base.json").read_text())
    assert [e["code"] for e in data["findings"]] == [SESSION_REF]
    # never adds one: a new finding stays new
    (card / SKILL).write_text((card / SKILL).read_text().replace("next: END", "next: fin"))
    code, out, _ = run(capsys, "check", "--baseline", "base.json", "--update-baseline")
    assert code == 1 and "`fin` is not a step" in out
    assert json.loads((card / "base.json").read_text()) == data
    assert run(capsys, "check", "--baseline", "base.json", "--fail-on-stale-baseline")[0] == 1
    code, _, err = run(capsys, "check", "--update-baseline")
    assert code == 2 and "--update-baseline needs --baseline FILE" in err


def test_a_deleted_file_makes_its_entries_stale(
    card: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    extra = card / "skills/extra/skill.md"
    extra.parent.mkdir()
    extra.write_text("---\ndescription: B.\n---\nSay session.extra.x now.\n")
    run(capsys, "check", "--write-baseline", "base.json")
    extra.unlink()
    extra.parent.rmdir()
    _, out, _ = run(capsys, "check", "--baseline", "base.json", "--format", "concise")
    assert "1 baseline entry is fixed" in out


def test_the_fingerprint_ignores_the_message_and_old_baselines_still_match(
    card: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from mantle_lsp.cli import output

    run(capsys, "check", "--write-baseline", "new.json")
    # a version 1 file, as earlier mantle-lsp wrote it (the message in the fingerprint)
    text = (card / SKILL).read_text()
    entries = []
    for code, needle, message in (
        (SESSION_REF, "session.card.reason", "old wording 1"),
        (END, "end\n", "old wording 2"),
    ):
        start = text.index(needle)
        rng = output.TextRange(start, start + len(needle.strip()))
        assert finding_text(text, rng)
        entries.append((code, rng, message))
    # the messages of today (what the old file hashed)
    _, out, _ = run(capsys, "check", "--format", "json")
    messages = {r["code"]: r["message"] for r in json.loads(out)}
    old = {
        "version": 1,
        "tool": "mantle-lsp",
        "findings": [
            {
                "path": SKILL,
                "code": code,
                "fingerprint": fingerprint_v1(code, messages[code], text, rng),
                "count": 1,
                "message": messages[code],
            }
            for code, rng, _ in entries
        ],
    }
    (card / "old.json").write_text(json.dumps(old))
    _, out, _ = run(capsys, "check", "--baseline", "old.json")
    assert out == "All checks passed (1 project). (2 findings in the baseline not shown.)\n"
    # messages reworded in a new version: the new form still matches, the old does not
    real = output.make_finding

    def reworded(d, *a, **kw):  # type: ignore[no-untyped-def]
        import dataclasses

        return real(dataclasses.replace(d, message=d.message + " (reworded)"), *a, **kw)

    with monkeypatch.context() as m:
        m.setattr("mantle_lsp.cli.main.make_finding", reworded)
        _, out, _ = run(capsys, "check", "--baseline", "new.json")
        assert "(2 findings in the baseline not shown.)" in out
        code, _, _ = run(capsys, "check", "--baseline", "old.json")
        assert code == 1
    # --update-baseline writes an old file in the new form, without losing an entry
    code, out, err = run(capsys, "check", "--baseline", "old.json", "--update-baseline")
    assert code == 0, err
    assert "Wrote old.json in the current form (version 2)." in out
    assert json.loads((card / "old.json").read_text()) == json.loads(
        (card / "new.json").read_text()
    )
    loaded = baseline.load(card / "old.json")
    assert loaded.version == 2 and sum(loaded.entries.values()) == 2


def test_stale_baseline_through_the_console_script(card: Path) -> None:
    assert cli("check", "--write-baseline", "b.json").returncode == 0
    (card / SKILL).write_text((card / SKILL).read_text().replace("next: end", "next: END"))
    proc = cli("check", "--baseline", "b.json", "--fail-on-stale-baseline", "--format", "github")
    assert proc.returncode == 1 and "records 1 finding that is fixed" in proc.stderr
    proc = cli("check", "--baseline", "b.json", "--update-baseline", "--fail-on-stale-baseline")
    assert proc.returncode == 0, proc.stderr
    assert cli("check", "--baseline", "b.json", "--fail-on-stale-baseline").returncode == 0


def test_the_gitlab_job_and_the_hook_args_in_the_docs_name_real_options(
    capsys: pytest.CaptureFixture[str],
) -> None:
    import yaml

    from test_packaging import REPO, _check_command, _yaml_blocks

    blocks = _yaml_blocks("docs/ci.md")
    (job,) = (b["mantle-lsp"] for b in blocks if "mantle-lsp" in b)
    lines = [line for line in job["script"] if line.startswith("mantle-lsp")]
    assert len(lines) == 3
    for line in lines:
        _check_command(line, capsys)
    assert job["artifacts"]["reports"]["codequality"] in lines[0]
    assert job["artifacts"]["reports"]["junit"] in lines[1]
    hooks = yaml.safe_load((REPO / ".pre-commit-hooks.yaml").read_text(encoding="utf-8"))
    for cfg in (b for b in blocks if "repos" in b):
        for hook in cfg["repos"][0]["hooks"]:
            args = hook.get("args", [])
            entry = next(h["entry"] for h in hooks if h["id"] == hook["id"])
            _check_command(" ".join([entry, *args]), capsys)


def test_a_version_1_baseline_a_partial_run_cannot_convert_stays_version_1(
    card: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    text = (card / SKILL).read_text()
    _, out, _ = run(capsys, "check", "--format", "json")
    rows = json.loads(out)
    entries = []
    for r in rows:
        needle = "session.card.reason" if r["code"] == SESSION_REF else "end"
        start = text.index(needle, text.index("next:") if r["code"] == END else 0)
        rng = TextRange(start, start + len(needle))
        fp = fingerprint_v1(r["code"], r["message"], text, rng)
        entries.append({"path": SKILL, "code": r["code"], "fingerprint": fp, "count": 1})
    entries.append({"path": "agent.yml", "code": "lsp.config.ignored_key", "fingerprint": "0" * 16})
    (card / "old.json").write_text(
        json.dumps({"version": 1, "tool": "mantle-lsp", "findings": entries})
    )
    (card / SKILL).write_text(text.replace("next: end", "next: END"))
    # only the skill is checked: agent.yml's entry can be neither judged nor converted
    code, out, _ = run(capsys, "check", SKILL, "--baseline", "old.json", "--update-baseline")
    assert code == 0
    assert "Dropped 1 fixed finding from old.json." in out
    assert "old.json stays in the version 1 form: 1 entry of files this run did not" in out
    data = json.loads((card / "old.json").read_text())
    assert data["version"] == 1
    assert sorted(e["code"] for e in data["findings"]) == ["lsp.config.ignored_key", SESSION_REF]


def test_the_pre_commit_hook_with_fix_exit_non_zero_on_fix_and_a_baseline(card: Path) -> None:
    import yaml

    from test_packaging import REPO

    (hook,) = yaml.safe_load((REPO / ".pre-commit-hooks.yaml").read_text(encoding="utf-8"))
    entry = hook["entry"].split()
    assert entry[0] == "mantle-lsp"
    (card / "agent.yml").write_text((card / "agent.yml").read_text() + "size: 3\n")
    assert cli("check", "--write-baseline", "b.json").returncode == 0
    args = ["--fix", "--exit-non-zero-on-fix", "--baseline", "b.json"]
    files = [SKILL, "agent.yml"]  # what pre-commit passes
    (card / SKILL).write_text((card / SKILL).read_text() + "\nTell session.card.reason too.\n")
    proc = cli(*entry[1:], *args, *files)
    # the new finding was fixed: the hook fails so that the change is staged
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "Tell @memory.card.reason too." in (card / SKILL).read_text()
    assert "Fixed 1 finding." in proc.stdout
    # the recorded findings (also fixable) are left alone, and nothing more to do: 0
    assert "next: end" in (card / SKILL).read_text()
    assert cli(*entry[1:], *args, *files).returncode == 0
