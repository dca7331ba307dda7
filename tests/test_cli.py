"""``mantle-lsp check`` and ``explain``: output formats, filters, exit codes."""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from mantle_lsp.cli.main import COMMANDS, build_parser, main
from mantle_lsp.ide.codes import REGISTRY, markdown_table
from support import write_fixture

REPO = Path(__file__).resolve().parents[1]

BROKEN = """\
//- skills/card/memory.yml
schema:
  public:
    reason:
      type: text
//- skills/card/skill.md
---
description: Replace a card.
---
if: session.card.reasn == 'x'
Text with @memory.project in it.

:::ordered_block id=main
steps:
  - id: a
    instructions: Ask.
    complete_when: session.card.nope
:::
"""


@pytest.fixture
def broken(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    fx = write_fixture(tmp_path, BROKEN)
    monkeypatch.chdir(tmp_path)
    return fx.root


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out = capsys.readouterr()
    return code, out.out, out.err


def test_text_output_is_sorted_with_positions_and_summary(
    broken: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = run(capsys, "check", ".", "--output-format", "concise")
    assert code == 1
    lines = out.splitlines()
    assert lines[:3] == [
        "skills/card/skill.md:4:5: error[mantle.validation.prose.unknown_memory_key] prose `if:` "
        "condition reads `card.reasn`: skill `card` declares no field `reasn`; did you mean "
        "`reason`?",
        "skills/card/skill.md:5:11: error[mantle.validation.prose.incomplete_memory_reference] "
        "`@memory.project` is incomplete: write `@memory.<skill_id|project>.<entry>` (exactly "
        "two segments)",
        "skills/card/skill.md:11:20: warning[lsp.condition.unknown_memory_key] step "
        "`complete_when` condition reads `card.nope`: skill `card` declares no field `nope`",
    ]
    assert lines[3] == "Found 2 errors, 1 warning in 1 file (1 project)."


def test_clean_project_exits_zero(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    fx = write_fixture(tmp_path, "//- skills/a/skill.md\n---\ndescription: A.\n---\nText.\n")
    code, out, _ = run(capsys, "check", str(fx.root))
    assert code == 0
    assert out == "All checks passed (1 project).\n"


def test_select_and_ignore_by_code_or_prefix(
    broken: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = run(capsys, "check", "--select", "lsp.condition")
    assert code == 0  # only the warning remains
    assert "lsp.condition.unknown_memory_key" in out and "prose." not in out
    code, out, _ = run(
        capsys, "check", "--ignore", "mantle.validation.prose", "--ignore", "lsp.condition"
    )
    assert code == 0 and out == "All checks passed (1 project).\n"


def test_json_sarif_and_github_formats(broken: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _, out, _ = run(capsys, "check", "--format", "json")
    rows = json.loads(out)
    assert rows[0] == {
        "path": "skills/card/skill.md",
        "line": 4,
        "column": 5,
        "end_line": 4,
        "end_column": 23,
        "severity": "error",
        "code": "mantle.validation.prose.unknown_memory_key",
        "message": rows[0]["message"],
        # the fix --fix --unsafe-fixes applies, as ruff's JSON carries it
        "fix": {
            "applicability": "unsafe",
            "message": "Change to `reason`",
            "edits": [
                {
                    "path": "skills/card/skill.md",
                    "line": 4,
                    "column": 18,
                    "end_line": 4,
                    "end_column": 23,
                    "content": "reason",
                }
            ],
        },
        "url": None,  # no documentation address (this checkout's is a placeholder)
    }
    assert rows[1]["fix"] is None  # no fix
    _, out, _ = run(capsys, "check", "--format", "sarif")
    sarif = json.loads(out)
    run0 = sarif["runs"][0]
    assert sarif["version"] == "2.1.0"
    assert {r["id"] for r in run0["tool"]["driver"]["rules"]} == {r["code"] for r in rows}
    region = run0["results"][0]["locations"][0]["physicalLocation"]["region"]
    assert region == {"startLine": 4, "startColumn": 5, "endLine": 4, "endColumn": 23}
    _, out, _ = run(capsys, "check", "--format", "github")
    assert out.splitlines()[0].startswith(
        "::error file=skills/card/skill.md,line=4,col=5,endLine=4,endColumn=23,"
        "title=mantle.validation.prose.unknown_memory_key::"
    )


def test_a_file_argument_limits_output_to_that_file(
    broken: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = run(capsys, "check", "skills/card/memory.yml")
    assert code == 0 and out.startswith("All checks passed")


def test_usage_errors_exit_two(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(capsys, "check", str(tmp_path / "missing"))
    assert code == 2 and "no such file" in err
    code, _, err = run(capsys, "check", str(tmp_path))
    assert code == 2 and "no Mantle project found" in err
    with pytest.raises(SystemExit) as exc:
        main(["check", "--format", "xml"])
    assert exc.value.code == 2
    code, _, err = run(capsys, "explain", "no.such.code")
    assert code == 2 and "unknown code" in err


def test_the_parser_of_one_command_reads_it_like_the_whole_parser(
    capsys: pytest.CaptureFixture[str],
) -> None:
    # main() builds only the parser of the command the line starts with
    whole = build_parser()
    (sub,) = [a for a in whole._actions if a.dest == "command"]
    assert tuple(sub.choices) == COMMANDS  # a new command must be listed in COMMANDS
    lines = [
        ["check", "--format", "json", "--select", "lsp.memory", "--jobs", "1", "a", "b"],
        ["check"],
        ["explain", "--markdown"],
        ["serve", "--log-level", "debug", "--jobs", "auto"],
        ["graph", "--kind", "map", "--format", "mermaid", "."],
        ["layers", "manifest", "--format", "json", "prod", "."],
    ]
    for words in lines:
        assert build_parser(words[0]).parse_args(words) == whole.parse_args(words), words
    # an unknown option is reported with the same usage line either way
    messages = []
    for parser in (whole, build_parser("check")):
        with pytest.raises(SystemExit):
            parser.parse_args(["check", "--bogus"])
        messages.append(capsys.readouterr().err)
    assert messages[0] == messages[1]
    # the usage is the command's, not the top level's
    assert messages[0].startswith("usage: mantle-lsp check [-h]")
    assert messages[0].endswith("mantle-lsp: error: unrecognized arguments: --bogus\n")


@pytest.mark.parametrize(
    ("words", "usage"),
    [
        (["check", "tb", "--frobnicate"], "usage: mantle-lsp check [-h]"),
        (["layers", "manifest", "prod", "--frobnicate"], "usage: mantle-lsp layers manifest [-h]"),
        (["graph", ".", "--frobnicate"], "usage: mantle-lsp graph [-h]"),
    ],
)
def test_an_unknown_option_shows_the_usage_of_its_command(
    capsys: pytest.CaptureFixture[str], words: list[str], usage: str
) -> None:
    with pytest.raises(SystemExit) as exc:
        main(words)
    err = capsys.readouterr().err
    assert exc.value.code == 2
    assert err.startswith(usage) and "{check,explain" not in err
    assert err.endswith("mantle-lsp: error: unrecognized arguments: --frobnicate\n")


def test_statistics_come_as_a_table_or_json_only(
    broken: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # as ruff: a format statistics cannot be written in is a usage error, not a table
    for fmt in ("sarif", "github"):
        code, out, err = run(capsys, "check", "--statistics", "--output-format", fmt)
        assert (code, out) == (2, "")
        assert err == (
            f"mantle-lsp: error: --statistics prints a table (full, concise) or JSON (json), "
            f"not {fmt}\n"
        )
    code, out, _ = run(capsys, "check", "--statistics", "--output-format", "json")
    assert code == 1 and json.loads(out)[0]["count"] == 1


def test_the_readme_sample_is_what_check_prints(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # the README's `mantle-lsp check` block, run as written from the repository's top:
    # the lines before its `…` start the output, the lines after it end it
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    block = re.search(r"```text\n\$ (mantle-lsp check [^\n]*)\n(.*?)```", readme, re.S)
    assert block is not None
    command, shown = block.groups()
    head, tail = shown.split("…\n")
    monkeypatch.chdir(REPO)
    monkeypatch.delenv("FORCE_COLOR", raising=False)
    code = main(shlex.split(command)[1:])
    out = capsys.readouterr().out
    assert code == 1
    assert out.startswith(head), out[: len(head) + 200]
    assert out.endswith(tail), out[-len(tail) - 200 :]


def test_the_imports_run_without_the_cyclic_collector_and_the_command_with_it() -> None:
    # entry() pauses the collector while it imports the command (~30 collections over
    # objects that all live on); the command itself runs with it (a server needs it)
    code = """if True:
        import builtins, gc, os, sys
        seen = []
        real_import, real_exit = builtins.__import__, os._exit
        def spy(name, globals=None, locals=None, fromlist=(), level=0):
            importer = (globals or {}).get("__name__", "")
            if fromlist and "main" in fromlist and importer.endswith(".entry"):
                seen.append(gc.isenabled())
            return real_import(name, globals, locals, fromlist, level)
        def leave(rc):
            sys.stdout.flush()
            print("importing:", seen, "running:", gc.isenabled(), file=sys.stderr, flush=True)
            real_exit(rc)
        builtins.__import__, os._exit = spy, leave
        sys.argv = ["mantle-lsp", "explain", "--markdown"]
        from mantle_lsp.cli.entry import entry
        entry()
    """
    got = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert got.returncode == 0, got.stderr
    assert got.stderr.strip().splitlines()[-1] == "importing: [False] running: True"


def test_explain_prints_the_registry_entry(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "explain", "mantle.validation.prose.unknown_memory_key")
    assert code == 0
    assert out.startswith("# mantle.validation.prose.unknown_memory_key\n")  # its page
    code, out, _ = run(capsys, "explain", "unknown_memory_reference")  # unique suffix
    assert code == 0 and "mantle.validation.prose.unknown_memory_reference" in out


def test_docs_table_is_in_sync_with_the_registry() -> None:
    doc = (REPO / "docs/diagnostics.md").read_text(encoding="utf-8")
    assert doc == markdown_table(), "run `make docs` to regenerate docs/diagnostics.md"
    for code in REGISTRY:
        assert f"`{code}`" in doc


def test_every_emitted_code_is_registered() -> None:
    """Every code literal in the server source is in the registry."""
    import re

    # The condition parser's categories (lsp.condition.syntax, …) are never emitted: each
    # condition site reports them under its own code, so condition_tree.py is not scanned.
    src = "\n".join(
        p.read_text(encoding="utf-8")
        for p in (REPO / "server/mantle_lsp").rglob("*.py")
        if p.name != "condition_tree.py"
    )
    found = set(re.findall(r'"((?:mantle|skill|responses|eval|lsp)\.[a-z_0-9.]+)"', src))
    found -= {"skill.md", "responses.yml"}  # file names, not codes
    # codes completed at run time: flow.unresolved_{call,link}, tool_constraint.<…>
    missing = sorted(c for c in found if c not in REGISTRY and not c.endswith("."))
    assert missing == []


def test_console_script_runs_in_a_subprocess(broken: Path) -> None:
    exe = Path(sys.executable).with_name("mantle-lsp")
    cmd = [str(exe)] if exe.exists() else [sys.executable, "-m", "mantle_lsp"]
    proc = subprocess.run(
        [*cmd, "check", "."], capture_output=True, text=True, env=dict(os.environ), timeout=60
    )
    assert proc.returncode == 1
    assert proc.stdout.splitlines()[-2:] == [
        "Found 2 errors, 1 warning in 1 file (1 project).",
        "[*] 1 finding fixable with `--fix --unsafe-fixes`.",
    ]


def test_hints_are_hidden_unless_asked_for(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    fx = write_fixture(
        tmp_path,
        "//- memory.yml\nspare:\n  type: text\n"
        "//- skills/a/skill.md\n---\ndescription: A.\n---\nText.\n",
    )
    code, out, _ = run(capsys, "check", str(fx.root))
    assert code == 0 and out == "All checks passed (1 project).\n"
    code, out, _ = run(capsys, "check", str(fx.root), "--min-severity", "hint")
    assert code == 0
    assert "hint[lsp.memory.unused_field]" in out
    assert out.splitlines()[-1] == "Found 0 errors, 0 warnings, 1 note in 1 file (1 project)."
    code, out, _ = run(capsys, "check", str(fx.root), "--min-severity", "error")
    assert out == "All checks passed (1 project).\n"
