"""``mantle-lsp check --fix`` / ``--diff`` / ``--unsafe-fixes``: which fixes are applied,
that files keep their comments, line breaks and BOM, rounds, idempotence."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from mantle_lsp.cli import fix
from mantle_lsp.cli.main import main
from support import write_fixture

SKILL = """\
---
description: Replace a card.
---
Tell them session.card.reason (and session.card.reason again).

if: session.card.reasn == 'x'
Say sorry.

:::ordered_block id=main
steps:
  - id: a  # first step
    instructions: Ask.
    next:
      - if: session.card.reason == 'lost'
        then: end   # stop here
      - else: END
:::
"""
MEMORY = """\
schema:
  public:
    # why the card is replaced
    reason:
      type: text
      seed: true
"""
FIXED_SKILL = SKILL.replace(
    "session.card.reason (and session.card.reason", "@memory.card.reason (and @memory.card.reason"
).replace("then: end ", "then: END ")
FIXED_MEMORY = MEMORY.replace("      seed: true\n", "")


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


def _read(root: Path, rel: str) -> str:
    return (root / rel).read_bytes().decode("utf-8")


def test_fix_applies_the_safe_fixes_keeps_comments_and_a_second_run_changes_nothing(
    card: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = run(capsys, "check", ".", "--fix", "--output-format", "concise")
    assert _read(card, "skills/card/skill.md") == FIXED_SKILL
    assert _read(card, "skills/card/memory.yml") == FIXED_MEMORY
    assert code == 1  # the misspelt `reasn` is left: its fix is unsafe
    assert out.splitlines() == [
        "skills/card/skill.md:6:5: error[mantle.validation.prose.unknown_memory_key] prose `if:` "
        "condition reads `card.reasn`: skill `card` declares no field `reasn`; did you mean "
        "`reason`?",
        "Fixed 4 findings. Found 1 error, 0 warnings in 1 file (1 project).",
        "[*] 1 finding fixable with `--fix --unsafe-fixes`.",
    ]
    code, out, _ = run(capsys, "check", ".", "--fix", "--output-format", "concise")
    assert code == 1 and "Fixed" not in out
    assert _read(card, "skills/card/skill.md") == FIXED_SKILL
    assert _read(card, "skills/card/memory.yml") == FIXED_MEMORY


def test_diff_shows_the_fixes_without_writing(
    card: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run(capsys, "check", ".", "--diff")
    assert code == 1
    assert err == "Would fix 4 findings.\n"
    assert out == (
        "--- a/skills/card/memory.yml\n"
        "+++ b/skills/card/memory.yml\n"
        "@@ -3,4 +3,3 @@\n"
        "     # why the card is replaced\n"
        "     reason:\n"
        "       type: text\n"
        "-      seed: true\n"
        "--- a/skills/card/skill.md\n"
        "+++ b/skills/card/skill.md\n"
        "@@ -1,7 +1,7 @@\n"
        " ---\n"
        " description: Replace a card.\n"
        " ---\n"
        "-Tell them session.card.reason (and session.card.reason again).\n"
        "+Tell them @memory.card.reason (and @memory.card.reason again).\n"
        " \n"
        " if: session.card.reasn == 'x'\n"
        " Say sorry.\n"
        "@@ -12,6 +12,6 @@\n"
        "     instructions: Ask.\n"
        "     next:\n"
        "       - if: session.card.reason == 'lost'\n"
        "-        then: end   # stop here\n"
        "+        then: END   # stop here\n"
        "       - else: END\n"
        " :::\n"
    )
    assert _read(card, "skills/card/skill.md") == SKILL  # nothing written
    run(capsys, "check", ".", "--fix")
    code, out, err = run(capsys, "check", ".", "--diff")
    assert (code, out, err) == (0, "", "No fixes.\n")


def test_unsafe_fixes_only_when_asked(card: Path, capsys: pytest.CaptureFixture[str]) -> None:
    before = _read(card, "skills/card/skill.md")
    code, out, _ = run(capsys, "check", ".", "--output-format", "concise")
    assert out.splitlines()[-1] == (
        "[*] 4 findings fixable with `--fix` (1 more with `--fix --unsafe-fixes`)."
    )
    findings = [line for line in out.splitlines() if line.startswith("skills/")]
    unmarked = [line for line in findings if "] [*] " not in line]
    assert len(findings) == 5 and len(unmarked) == 1
    # alone, --unsafe-fixes marks and counts the findings an unsafe fix fixes (as ruff)
    code, out, _ = run(capsys, "check", ".", "--unsafe-fixes", "--output-format", "concise")
    assert _read(card, "skills/card/skill.md") == before  # nothing written
    assert out.splitlines()[-1] == "[*] 5 findings fixable with `--fix --unsafe-fixes`."
    marked = [line for line in out.splitlines() if "] [*] " in line]
    assert len(marked) == 5 and unmarked[0] in {m.replace(" [*]", "") for m in marked}
    code, out, _ = run(capsys, "check", ".", "--fix", "--unsafe-fixes")
    assert code == 0
    assert _read(card, "skills/card/skill.md") == FIXED_SKILL.replace("card.reasn", "card.reason")
    assert out.splitlines()[-1] == "Fixed 5 findings. All checks passed (1 project)."


def test_crlf_line_breaks_and_a_bom_are_kept(
    card: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    skill = card / "skills/card/skill.md"
    skill.write_bytes(("\ufeff" + SKILL.replace("\n", "\r\n")).encode("utf-8"))
    run(capsys, "check", ".", "--fix")
    assert skill.read_bytes() == ("\ufeff" + FIXED_SKILL.replace("\n", "\r\n")).encode("utf-8")


def test_a_file_with_mixed_line_breaks_is_not_fixed(
    card: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    skill = card / "skills/card/skill.md"
    mixed = SKILL.replace("\n", "\r\n", 2).encode("utf-8")
    skill.write_bytes(mixed)
    _, out, _ = run(capsys, "check", ".", "--fix", "--output-format", "concise")
    assert skill.read_bytes() == mixed
    assert _read(card, "skills/card/memory.yml") == FIXED_MEMORY  # the other file is
    assert "Fixed 1 finding." in out


def test_fixes_at_the_same_place_are_applied_in_rounds(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Two declarations appended to one memory.yml insert at the same offset: the second
    waits for a round that sees the first."""
    write_fixture(
        tmp_path,
        "//- memory.yml\ncustomer_id:\n  type: text\n"
        "//- skills/a/skill.md\n---\ndescription: A.\n---\n"
        "if: session.project.alpha == 'x'\nAsk.\n\n"
        "if: session.project.beta > 3\nTell.\n",
    )
    monkeypatch.chdir(tmp_path)
    rounds = []
    real = fix.run

    def counting(collect: fix.Collect, unsafe: bool, *args, **kw) -> fix.FixResult:  # type: ignore[no-untyped-def]
        def wrapped(reader, new):  # type: ignore[no-untyped-def]
            rounds.append(1)
            return collect(reader, new)

        return real(wrapped, unsafe, *args, **kw)

    monkeypatch.setattr(fix, "run", counting)
    code, out, _ = run(capsys, "check", ".", "--fix", "--unsafe-fixes")
    assert code == 0, out
    assert (tmp_path / "memory.yml").read_text(encoding="utf-8") == (
        "customer_id:\n  type: text\nalpha:\n  type: text\nbeta:\n  type: int\n"
    )
    assert len(rounds) == 3  # alpha, then beta, then nothing left
    assert "Fixed 2 findings." in out


def test_fix_only_touches_named_files_findings(
    card: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run(capsys, "check", "skills/card/memory.yml", "--fix")
    assert _read(card, "skills/card/memory.yml") == FIXED_MEMORY
    assert _read(card, "skills/card/skill.md") == SKILL


def test_choose_takes_the_preferred_or_the_only_candidate() -> None:
    from mantle_lsp.ide.code_actions import CodeAction
    from mantle_lsp.ide.types import WorkspaceEdit

    def act(title: str, preferred: bool = False, safe: bool = False) -> CodeAction:
        return CodeAction(title, "quickfix", WorkspaceEdit(), (), preferred, safe)

    private, public = act("private"), act("public")
    assert fix.choose([private, public], unsafe=True) is None  # the author must choose
    assert fix.choose([public], unsafe=True) is public
    assert fix.choose([public], unsafe=False) is None
    change = act("change", preferred=True)
    assert fix.choose([change, private, public], unsafe=True) is change
    safe = act("safe", safe=True)
    assert fix.choose([change, safe], unsafe=False) is safe


def _helps(root: Path, capsys: pytest.CaptureFixture[str]) -> list[str]:
    main(["check", str(root), "--color", "never"])
    return [line.strip() for line in capsys.readouterr().out.splitlines() if "= help:" in line]


def test_which_fixes_are_safe(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The decisions of docs/cli.md#which-fixes-are-safe, as the output shows them."""
    fx = write_fixture(
        tmp_path,
        "//- memory.yml\n"
        "tier:\n  type: text\n  llm_settable: true  # asked for by sales\n"
        "plan:\n  type: text\n  llm_settable: true\n"
        "//- skills/a/memory.yml\nschema:\n  public:\n    size:\n      type: text\n"
        "      enum: [s, m]\n"
        "//- skills/a/skill.md\n---\ndescription: A.\n---\n"
        "Say session.a.size now.\n"
        "if: session.a.size is set, session.a.size\n"
        "Ask.\n",
    )
    assert _helps(fx.root, capsys) == [
        "= help: Remove `llm_settable` (unsafe fix)",  # the line holds a comment
        "= help: Remove `llm_settable` (safe fix)",
        "= help: Rename `enum` to `enum_values` (unsafe fix)",  # it starts to restrict
        "= help: Change to `@memory.a.size` (safe fix)",
        "= help: Change to `@memory.a.size` (unsafe fix)",  # a condition was meant
        "= help: Change to `@memory.a.size` (unsafe fix)",
    ]


def test_a_file_that_cannot_be_written_is_an_error(
    card: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    before = {p: p.read_bytes() for p in card.rglob("*") if p.is_file()}

    def refuse(src: object, dst: object) -> None:
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(os, "replace", refuse)  # the last step of every atomic write
    code, out, err = run(capsys, "check", ".", "--fix")
    monkeypatch.undo()
    assert (code, out) == (1, "")
    assert {p: p.read_bytes() for p in card.rglob("*") if p.is_file()} == before
    assert err.splitlines() == [
        "mantle-lsp: error: skills/card/memory.yml: cannot write the fixes (Permission denied)",
        "mantle-lsp: error: skills/card/skill.md: cannot write the fixes (Permission denied)",
    ]
    assert _read(card, "skills/card/skill.md") == SKILL


CONSOLE_SCRIPT = Path(sys.executable).parent / "mantle-lsp"


@pytest.mark.skipif(not hasattr(os, "fork"), reason="RLIMIT_FSIZE: POSIX only")
def test_a_file_size_limit_leaves_every_file_as_it_was(tmp_path: Path) -> None:
    """`ulimit -f 1`, then `mantle-lsp check --fix` through the console script: skill.md
    files longer than 1,024 bytes were cut there, the message saying "cannot write the
    fixes". Now every file keeps its old bytes, and no temporary file is left."""
    import resource

    padding = "Keep this paragraph as it is.\n" * 60  # each skill.md over 1,024 bytes
    fx = write_fixture(
        tmp_path,
        f"//- skills/card/skill.md\n{SKILL}\n{padding}//- skills/card/memory.yml\n{MEMORY}"
        f"//- skills/bank/skill.md\n{SKILL.replace('card', 'bank')}\n{padding}"
        f"//- skills/bank/memory.yml\n{MEMORY}",
    )
    before = {p: p.read_bytes() for p in fx.root.rglob("*") if p.is_file()}
    assert all(len(b) > 1024 for p, b in before.items() if p.name == "skill.md")

    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (1024, 1024))

    run_ = subprocess.run(
        [str(CONSOLE_SCRIPT), "check", ".", "--fix", "--output-format", "concise"],
        cwd=fx.root,
        capture_output=True,
        text=True,
        timeout=120,
        preexec_fn=limit,
    )
    assert "Traceback" not in run_.stderr, run_.stderr
    assert run_.returncode == 1, (run_.stdout, run_.stderr)
    assert run_.stdout == ""  # the findings would not match the files
    assert run_.stderr.splitlines() == [
        "mantle-lsp: error: skills/bank/skill.md: cannot write the fixes (File too large)",
        "mantle-lsp: error: skills/card/skill.md: cannot write the fixes (File too large)",
    ]
    after = {p: p.read_bytes() for p in fx.root.rglob("*") if p.is_file()}
    changed = {p.relative_to(fx.root).as_posix() for p in after if after[p] != before.get(p)}
    assert changed == {"skills/bank/memory.yml", "skills/card/memory.yml"}  # small: written
    for p in after:
        if p.name == "skill.md":
            assert after[p] == before[p]


def test_fix_never_writes_through_a_link_out_of_the_project(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    outside = tmp_path / "elsewhere"
    (outside / "shared").mkdir(parents=True)
    (outside / "shared/skill.md").write_text(
        "---\ndescription: Shared.\n---\nTell session.shared.x now.\n", encoding="utf-8"
    )
    fx = write_fixture(tmp_path / "agent", "//- skills/a/skill.md\n" + SKILL)
    (fx.root / "skills/shared").symlink_to(outside / "shared", target_is_directory=True)
    monkeypatch.chdir(fx.root)
    _, out, _ = run(capsys, "check", ".", "--fix", "--output-format", "concise")
    assert "skills/shared/skill.md:4:6: error[mantle.validation.prose.session_reference" in out
    assert (
        (outside / "shared/skill.md")
        .read_text(encoding="utf-8")
        .endswith("Tell session.shared.x now.\n")
    )
    assert "then: END" in _read(fx.root, "skills/a/skill.md")  # the project's own: fixed
