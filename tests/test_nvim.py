"""End to end with a real editor: Neovim runs `mantle-lsp serve` on a copy of
examples/telecom (tests/nvim/init.lua does the editor side and prints what it got):
published diagnostics, completion after `session.`, a quick fix and a field rename."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
INIT = REPO / "tests" / "nvim" / "init.lua"
NVIM = shutil.which("nvim")

pytestmark = pytest.mark.skipif(
    NVIM is None, reason="Neovim (`nvim`) is not installed; `make nvim` installs it"
)


def server_command() -> list[str]:
    script = Path(sys.executable).parent / "mantle-lsp"
    if script.exists():
        return [str(script), "serve"]
    code = "import sys; from mantle_lsp.cli.main import main; sys.exit(main())"
    return [sys.executable, "-c", code, "serve"]


def run_nvim(tmp_path: Path) -> tuple[list[str], int]:
    root = tmp_path / "telecom"
    shutil.copytree(REPO / "examples" / "telecom", root)
    skill = root / "skills" / "bill_dispute" / "skill.md"
    # plant one mistake so that the published diagnostics have something to show
    text = skill.read_text(encoding="utf-8")
    planted = "if: session.roaming_pass.pass_active == True"
    assert planted in text
    skill.write_text(
        text.replace(planted, "if: session.roaming_pass.pass_activ == True", 1), encoding="utf-8"
    )
    planted_line = text[: text.index(planted)].count("\n")
    memory = root / "skills" / "roaming_pass" / "memory.yml"
    mlines = memory.read_text(encoding="utf-8").splitlines()
    rename_line = next(i for i, line in enumerate(mlines) if line.strip() == "pass_length:")
    env = {
        **os.environ,
        "MANTLE_LSP_CMD": json.dumps(server_command()),
        "MANTLE_ROOT": str(root),
        "MANTLE_SKILL": str(skill),
        "MANTLE_RENAME": str(memory),
        "MANTLE_RENAME_LINE": str(rename_line),
        "MANTLE_RENAME_COL": str(mlines[rename_line].index("pass_length") + 2),
        "MANTLE_RENAME_TO": "trip_length",
    }
    assert NVIM is not None
    proc = subprocess.run(
        ["timeout", "60", NVIM, "--headless", "--clean", "-u", str(INIT)],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=90,
    )
    lines = [line.strip() for line in proc.stdout.splitlines() if line.strip()]
    report = f"exit {proc.returncode}\nstdout:\n{proc.stdout}\nstderr:\n{proc.stderr}"
    assert not [line for line in lines if line.startswith("ERROR")], report
    assert proc.returncode == 0, report
    assert lines and lines[-1] == "DONE", report
    return lines, planted_line


@pytest.fixture(scope="module")
def nvim_output(tmp_path_factory: pytest.TempPathFactory) -> tuple[list[str], int]:
    return run_nvim(tmp_path_factory.mktemp("nvim"))


def facts(lines: list[str], tag: str) -> list[list[str]]:
    return [line.split()[1:] for line in lines if line.split()[0] == tag]


def test_server_starts_and_publishes_the_planted_diagnostic(
    nvim_output: tuple[list[str], int],
) -> None:
    lines, planted = nvim_output
    assert "READY" in lines
    diags = facts(lines, "DIAG")
    assert [
        "skills/bill_dispute/skill.md",
        str(planted),
        "mantle.validation.prose.unknown_memory_key",
    ] in diags, lines
    assert facts(lines, "DIAG_DONE") == [[str(len(diags))]]


def test_completion_after_session_offers_namespaces(nvim_output: tuple[list[str], int]) -> None:
    lines, _ = nvim_output
    labels = {f[0] for f in facts(lines, "COMPLETION") if f}
    expected = {"bill_dispute", "roaming_pass", "plan_change", "verify_customer", "project"}
    assert expected <= labels, sorted(labels)


def test_rename_of_a_field_touches_its_declaration_and_every_use(
    nvim_output: tuple[list[str], int],
) -> None:
    lines, _ = nvim_output
    touched = {f[0]: int(f[1]) for f in facts(lines, "RENAME")}
    assert touched == {
        "skills/roaming_pass/memory.yml": 1,
        "skills/roaming_pass/responses.yml": 5,
        "skills/roaming_pass/skill.md": 3,
        # `- name: roaming_pass.pass_length` in the eval suite's scenario
        "eval/scenarios/happy_path/roaming_week_pass.yml": 1,
    }, lines
    assert facts(lines, "RENAME_DONE") == [["4"]]


def test_code_action_fixes_the_planted_typo(nvim_output: tuple[list[str], int]) -> None:
    lines, _ = nvim_output
    titles = [line[len("CODE_ACTION ") :] for line in lines if line.startswith("CODE_ACTION ")]
    assert titles[0] == "Change to `pass_active` (preferred)", lines
