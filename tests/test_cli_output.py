"""``mantle-lsp check`` output: the full and concise text, colour, statistics, SARIF
fingerprints, the paths named on the command line (``--force-exclude``, files outside a
project), a reader that goes away, and the server's exit status."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from mantle_lsp.cli.main import main
from mantle_lsp.cli.output import Finding, Row, Style, char_width, full, use_colour
from mantle_lsp.ide.diagnostics import Diagnostic
from mantle_lsp.syntax.text import LineIndex, TextRange
from support import write_fixture

REPO = Path(__file__).resolve().parents[1]

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
カード🙂\tthen session.card.reason here.

:::ordered_block id=main
steps:
  - id: a
    instructions: Ask.
    next:
      - if: session.card.reasn == 'x'
        then: end
      - else: END
:::
"""

FULL = """\
skills/card/skill.md:4:11: error[mantle.validation.prose.session_reference_in_instructions] \
[*] `session.card.reason` in prose is not substituted: write `@memory.card.reason` to insert \
the value (`session.` is the condition form)
  |
4 | カード🙂    then session.card.reason here.
  |                  ^^^^^^^^^^^^^^^^^^^
  = help: Change to `@memory.card.reason` (safe fix)

skills/card/skill.md:11:13: warning[lsp.condition.unknown_memory_key] `next:` branch `if:` \
condition reads `card.reasn`: skill `card` declares no field `reasn`; did you mean `reason`?
   |
11 |       - if: session.card.reasn == 'x'
   |             ^^^^^^^^^^^^^^^^^^
   = help: Change to `reason` (unsafe fix)
   = help: Declare `reasn` in skills/card/memory.yml (private) (unsafe fix)
   = help: Declare `reasn` in skills/card/memory.yml (public) (unsafe fix)

skills/card/skill.md:12:15: error[mantle.validation.flow.unresolved_next] [*] step 'a': \
`end` is not a step of block 'main' nor `END` (`END` is upper-case)
   |
12 |         then: end
   |               ^^^
   = help: Change to `END` (safe fix)

Found 2 errors, 1 warning in 1 file (1 project).
[*] 2 findings fixable with `--fix` (1 more with `--fix --unsafe-fixes`).
"""


@pytest.fixture
def card(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    fx = write_fixture(tmp_path, CARD)
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("FORCE_COLOR", raising=False)
    monkeypatch.delenv("NO_COLOR", raising=False)
    return fx.root


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out = capsys.readouterr()
    return code, out.out, out.err


def test_full_output_shows_source_lines_carets_under_wide_chars_and_tabs_and_fixes(
    card: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = run(capsys, "check", ".")
    assert code == 1
    assert out == FULL


def test_concise_keeps_one_line_per_finding_and_text_and_format_are_aliases(
    card: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    expected = [line for line in FULL.splitlines() if line.startswith(("skills/", "Found", "[*]"))]
    for args in (
        ("--output-format", "concise"),
        ("--output-format=text",),
        ("--format", "concise"),
        ("--format", "text"),
    ):
        code, out, _ = run(capsys, "check", ".", *args)
        assert code == 1
        assert out.splitlines() == expected, args
    _, out, _ = run(capsys, "check", ".", "--format", "full")
    assert out == FULL


def test_colour_only_when_asked_or_on_a_terminal(
    card: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    _, out, _ = run(capsys, "check", ".", "--color", "always")
    assert "\x1b[1;31merror[mantle.validation.flow.unresolved_next]\x1b[0m" in out
    assert "\x1b[1;31m^^^\x1b[0m" in out  # the carets in the severity's colour
    _, plain, _ = run(capsys, "check", ".", "--color", "never")
    assert plain == FULL
    monkeypatch.setenv("FORCE_COLOR", "1")
    _, out, _ = run(capsys, "check", ".")  # captured output is not a terminal
    assert "\x1b[" in out
    monkeypatch.setenv("NO_COLOR", "1")
    _, out, _ = run(capsys, "check", ".")
    assert out == FULL  # NO_COLOR wins over FORCE_COLOR
    _, out, _ = run(capsys, "check", ".", "--color", "always")
    assert "\x1b[" in out  # the option wins over both


class _Tty:
    def __init__(self, tty: bool) -> None:
        self.tty = tty

    def isatty(self) -> bool:
        return self.tty


def test_use_colour_decides_from_option_environment_and_terminal() -> None:
    tty, pipe = _Tty(True), _Tty(False)
    assert use_colour("auto", tty, {}) is True  # type: ignore[arg-type]
    assert use_colour("auto", pipe, {}) is False  # type: ignore[arg-type]
    assert use_colour("auto", tty, {"NO_COLOR": "1"}) is False  # type: ignore[arg-type]
    assert use_colour("auto", tty, {"NO_COLOR": ""}) is True  # type: ignore[arg-type]
    assert use_colour("auto", pipe, {"FORCE_COLOR": "1"}) is True  # type: ignore[arg-type]
    assert use_colour("auto", tty, {"TERM": "dumb"}) is False  # type: ignore[arg-type]
    assert use_colour("never", tty, {"FORCE_COLOR": "1"}) is False  # type: ignore[arg-type]
    assert use_colour("always", pipe, {"NO_COLOR": "1"}) is True  # type: ignore[arg-type]


def test_display_width_of_characters() -> None:
    assert [char_width(c) for c in "a\tカ🙂\u0301\u200d"] == [1, 4, 2, 2, 0, 0]


def _finding(text: str, start: int, end: int, severity: str = "error") -> Finding:
    index = LineIndex(text)
    (l1, c1), (l2, c2) = index.position(start), index.position(end)
    d = Diagnostic(Path("f.yml"), TextRange(start, end), "lsp.x", severity, "msg")  # type: ignore[arg-type]
    row = Row("f.yml", l1 + 1, c1 + 1, l2 + 1, c2 + 1, severity, "lsp.x", "msg")
    return Finding(row, d, Path("."), text)


def test_multi_line_ranges_mark_each_line_and_long_ones_are_shortened() -> None:
    text = "a: [1,\n  2,\n\n  3]\nb: 4\n"
    f = _finding(text, 3, text.index("]") + 1)
    assert full(f, Style(False)) == (
        "f.yml:1:4: error[lsp.x] msg\n"
        "  |\n"
        "1 | a: [1,\n"
        "  |    ^^^\n"
        "2 |   2,\n"
        "  | ^^^^\n"
        "4 |   3]\n"
        "  | ^^^^\n"
    )
    long = "".join(f"k{i}: v\n" for i in range(1, 13))
    f = _finding(long, 0, len(long))  # ends with a line break: line 13 is not marked
    lines = full(f, Style(False)).splitlines()
    assert lines[2:4] == [" 1 | k1: v", "   | ^^^^^"]
    assert lines[-3:] == ["...", "12 | k12: v", "   | ^^^^^^"]
    assert len(lines) == 2 + 2 * 5 + 1


def test_an_empty_range_gets_one_caret_even_at_the_end_of_a_line() -> None:
    text = "key: value\n"
    f = _finding(text, 10, 10, "warning")
    assert full(f, Style(False)).splitlines()[2:] == ["1 | key: value", "  |           ^"]


def test_statistics_count_per_code(card: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "check", ".", "--statistics")
    assert code == 1
    assert out.splitlines() == [
        "1  lsp.condition.unknown_memory_key                           warning      a condition "
        "the engine never checks reads a key that is not readable (it is always None)",
        "1  mantle.validation.flow.unresolved_next                     error    [*] "
        "`next`/`then`/`else` names no step of the block",
        "1  mantle.validation.prose.session_reference_in_instructions  error    [*] "
        "`session.<ns>.<entry>` in instruction text, where `@memory.<ns>.<entry>` is meant",
        "Found 2 errors, 1 warning in 1 file (1 project).",
        "[*] 2 findings fixable with `--fix` (1 more with `--fix --unsafe-fixes`).",
    ]
    _, out, _ = run(capsys, "check", ".", "--statistics", "--output-format", "json")
    assert [(s["code"], s["count"], s["fixable"]) for s in json.loads(out)] == [
        ("lsp.condition.unknown_memory_key", 1, False),
        ("mantle.validation.flow.unresolved_next", 1, True),
        ("mantle.validation.prose.session_reference_in_instructions", 1, True),
    ]


def _sarif_results(capsys: pytest.CaptureFixture[str]) -> list[dict[str, object]]:
    main(["check", ".", "--output-format", "sarif"])
    return json.loads(capsys.readouterr().out)["runs"][0]["results"]  # type: ignore[no-any-return]


def _prints(results: list[dict[str, object]]) -> dict[str, str]:
    return {
        str(r["ruleId"]): r["partialFingerprints"]["mantleFingerprint/v1"]  # type: ignore[index]
        for r in results
    }


def test_sarif_fingerprints_survive_unrelated_edits(
    card: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    before = _prints(_sarif_results(capsys))
    assert len(set(before.values())) == 3
    assert all(len(v.split(":")[0]) == 16 and v.endswith(":0") for v in before.values())
    skill = card / "skills/card/skill.md"
    text = skill.read_text(encoding="utf-8")
    skill.write_text(text.replace("---\nカード", "---\nA new first line.\n\nカード"), "utf-8")
    after = _sarif_results(capsys)
    assert after[0]["locations"][0]["physicalLocation"]["region"]["startLine"] == 6  # type: ignore[index]
    assert _prints(after) == before  # lines moved, fingerprints kept
    skill.write_text(text.replace("then: end", "then: ending"), "utf-8")
    changed = _prints(_sarif_results(capsys))
    code = "mantle.validation.flow.unresolved_next"
    assert changed[code] != before[code]  # the finding's own text changed
    assert {k: v for k, v in changed.items() if k != code} == {
        k: v for k, v in before.items() if k != code
    }


def test_identical_findings_in_a_file_get_distinct_sarif_fingerprints(
    card: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    skill = card / "skills/card/skill.md"
    text = skill.read_text(encoding="utf-8")
    skill.write_text(text.replace("here.", "here.\nsession.card.reason again."), "utf-8")
    prints = [
        r["partialFingerprints"]["mantleFingerprint/v1"]  # type: ignore[index]
        for r in _sarif_results(capsys)
        if r["ruleId"] == "mantle.validation.prose.session_reference_in_instructions"
    ]
    assert len(prints) == 2 and prints[0].split(":")[0] == prints[1].split(":")[0]
    assert [p.split(":")[1] for p in prints] == ["0", "1"]


# ---- paths on the command line ----------------------------------------------------------


def test_a_named_file_outside_every_project_is_a_note(
    card: Path, capsys: pytest.CaptureFixture[str], tmp_path_factory: pytest.TempPathFactory
) -> None:
    other = tmp_path_factory.mktemp("other")
    (other / "tools.py").write_text("x = 1\n", encoding="utf-8")
    code, out, err = run(capsys, "check", str(other / "tools.py"), "--output-format", "concise")
    assert code == 0
    assert out == "Nothing to check.\n"
    note = "not inside a Mantle project; not checked"
    assert err == f"mantle-lsp: note: {other / 'tools.py'}: {note}\n"
    code, out, err = run(
        capsys, "check", str(other / "tools.py"), "skills/card/skill.md", "--format", "concise"
    )
    assert code == 1 and "unresolved_next" in out and "not inside" in err
    code, _, err = run(capsys, "check", str(other))  # a folder without a project
    assert code == 2 and "no Mantle project found" in err


def test_force_exclude_applies_the_configuration_to_named_files(
    card: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (card / "mantle-lsp.toml").write_text('extend-exclude = ["skills/card"]\n', encoding="utf-8")
    code, out, _ = run(capsys, "check", "skills/card/skill.md", "--format", "concise")
    assert code == 1 and "unresolved_next" in out  # named: checked, as before
    code, out, _ = run(capsys, "check", "--force-exclude", "skills/card/skill.md")
    assert (code, out) == (0, "Nothing to check.\n")
    code, out, _ = run(capsys, "check", "--force-exclude", "agent.yml", "skills/card/skill.md")
    assert (code, out) == (0, "All checks passed (1 project).\n")
    code, out, _ = run(capsys, "check", "--force-exclude", ".")
    assert (code, out) == (0, "All checks passed (1 project).\n")


# ---- processes ----------------------------------------------------------------------------

CLI = [sys.executable, "-m", "mantle_lsp"]


def test_a_reader_that_goes_away_gets_no_traceback(card: Path) -> None:
    proc = subprocess.Popen(
        [*CLI, "check", "--format", "json", "."],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=dict(os.environ),
    )
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.close()  # before the check writes anything: every write fails
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=60) == 1
    assert err == ""


def _message(body: dict[str, object]) -> bytes:
    data = json.dumps(body).encode()
    return b"Content-Length: %d\r\n\r\n%s" % (len(data), data)


def test_server_exits_with_status_0_after_shutdown_and_exit(tmp_path: Path) -> None:
    proc = subprocess.Popen(
        [*CLI, "serve"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=tmp_path,
    )
    init = {"processId": None, "rootUri": tmp_path.as_uri(), "capabilities": {}}
    messages = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": init},
        {"jsonrpc": "2.0", "method": "initialized", "params": {}},
        {"jsonrpc": "2.0", "id": 2, "method": "shutdown"},
        {"jsonrpc": "2.0", "method": "exit"},
    ]
    out, err = proc.communicate(b"".join(_message(m) for m in messages), timeout=60)
    assert proc.returncode == 0, err.decode()[-2000:]
    assert b'"id": 2' in out or b'"id":2' in out


def test_control_and_bidi_characters_of_a_file_never_reach_the_terminal() -> None:
    text = "a: \x1b[31mred\u202e\n"
    f = _finding(text, 3, 12)
    assert full(f, Style(False)).splitlines()[2:] == [
        "1 | a: \ufffd[31mred\ufffd",
        "  |    ^^^^^^^^^",
    ]


def test_a_long_line_is_shown_as_a_window_around_the_range() -> None:
    text = "k: " + "x" * 300 + " bad " + "y" * 300 + "\n"
    start = text.index("bad")
    lines = full(_finding(text, start, start + 3), Style(False)).splitlines()
    assert lines[2] == "1 | …" + "x" * 39 + " bad " + "y" * 156 + "…"  # 200 of the line
    assert lines[3] == "  | " + " " * 41 + "^^^"


def test_sarif_counts_columns_in_utf16_code_units_and_says_so(
    card: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # `カード🙂\tthen session.card.reason`: the reference is the 11th code point, but 🙂
    # is two UTF-16 code units (what GitHub code scanning counts), so it starts at 12
    _, out, _ = run(capsys, "check", ".", "--output-format", "sarif")
    run0 = json.loads(out)["runs"][0]
    assert run0["columnKind"] == "utf16CodeUnits"
    regions = {
        r["ruleId"]: r["locations"][0]["physicalLocation"]["region"] for r in run0["results"]
    }
    prose = "mantle.validation.prose.session_reference_in_instructions"
    assert regions[prose] == {"startLine": 4, "startColumn": 12, "endLine": 4, "endColumn": 31}
    # a line without astral characters: the same columns as the other formats
    assert regions["mantle.validation.flow.unresolved_next"]["startColumn"] == 15
    _, out, _ = run(capsys, "check", ".", "--output-format", "json")
    row = next(r for r in json.loads(out) if r["code"] == prose)
    assert (row["column"], row["end_column"]) == (11, 30)  # code points there


def test_sarif_rules_explain_their_code_and_link_its_page(
    card: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    docs = "https://docs.mantle.dev/lsp"
    _, out, _ = run(capsys, "check", ".", "--output-format", "sarif", "--documentation-url", docs)
    driver = json.loads(out)["runs"][0]["tool"]["driver"]
    assert driver["informationUri"] == docs
    code = "mantle.validation.flow.unresolved_next"
    rule = next(r for r in driver["rules"] if r["id"] == code)
    page = (REPO / f"docs/diagnostics/{code}.md").read_text(encoding="utf-8")
    what = page.split("## What it means\n", 1)[1].split("\n## ", 1)[0].strip()
    assert rule["fullDescription"]["markdown"] == what
    assert rule["fullDescription"]["text"] == " ".join(what.replace("`", "").split())
    assert rule["helpUri"] == f"{docs}/diagnostics/{code}.html"
    # the package's address is the default: this checkout's is a placeholder (no link)
    _, out, _ = run(capsys, "check", ".", "--output-format", "sarif")
    driver = json.loads(out)["runs"][0]["tool"]["driver"]
    assert "informationUri" not in driver and all("helpUri" not in r for r in driver["rules"])
    assert all("fullDescription" in r for r in driver["rules"])


class _Meta:
    def __init__(self, urls: list[str]) -> None:
        self.urls = urls

    def get_all(self, name: str) -> list[str] | None:
        return self.urls if name == "Project-URL" else None


@pytest.mark.parametrize(
    ("urls", "expected"),
    [
        (["Homepage, https://a.dev", "Documentation, https://a.dev/docs"], "https://a.dev/docs"),
        (["Documentation, https://example.invalid/mantle-lsp/docs"], None),
        (["documentation , https://docs.example.com/x"], None),
        (["Repository, https://a.dev/repo.git"], None),
        (["Documentation, file:///tmp/docs"], None),
    ],
)
def test_the_default_documentation_address_is_the_packages_real_one(
    monkeypatch: pytest.MonkeyPatch, urls: list[str], expected: str | None
) -> None:
    from importlib import metadata

    from mantle_lsp.cli.code_docs import documentation_url

    monkeypatch.setattr(metadata, "metadata", lambda name: _Meta(urls))
    assert documentation_url() == expected
