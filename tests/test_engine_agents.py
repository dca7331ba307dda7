"""Projects the engine accepts give no errors: the agents bundled in the rasa-pro 3.21.0
wheel, downloaded once from PyPI into .cache/ (never committed, never imported).

Set MANTLE_LSP_OFFLINE=1 to skip these tests on a machine without PyPI access.
"""

from __future__ import annotations

import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from mantle_lsp.ide.diagnostics import project_diagnostics
from mantle_lsp.model.project import Project
from mantle_lsp.syntax.memory_yml import parse_memory_yml
from mantle_lsp.syntax.responses_yml import parse_responses_yml
from mantle_lsp.syntax.skill_md import parse_skill_md

pytestmark = pytest.mark.network

CACHE = Path(__file__).resolve().parents[1] / ".cache" / "rasa-pro-3.21.0"
AGENTS = (
    "rasa/core/channels/inspector-nextgen/e2e/agents/mantle",
    "rasa/cli/project_templates/mantle",
)
DEFAULTS = "rasa/mantle/default_skills"


@pytest.fixture(scope="module")
def wheel_tree() -> Path:
    if os.environ.get("MANTLE_LSP_OFFLINE") == "1":
        pytest.skip("MANTLE_LSP_OFFLINE=1")
    done = CACHE / ".extracted"
    if not done.exists():
        CACHE.mkdir(parents=True, exist_ok=True)
        subprocess.run(
            [
                sys.executable,
                "-m",
                "pip",
                "download",
                "--no-deps",
                "--quiet",
                "-d",
                str(CACHE),
                "rasa-pro==3.21.0",
            ],
            check=True,
            timeout=600,
        )
        [whl] = CACHE.glob("rasa_pro-3.21.0-*.whl")
        with zipfile.ZipFile(whl) as z:
            for name in z.namelist():
                if name.startswith((*AGENTS, DEFAULTS)) and not name.endswith(".pyc"):
                    z.extract(name, CACHE / "tree")
        whl.unlink()
        done.touch()
    return CACHE / "tree"


@pytest.mark.timeout(900)
@pytest.mark.parametrize("agent", AGENTS)
def test_bundled_agents_have_no_errors(wheel_tree: Path, agent: str) -> None:
    proj = Project.load(wheel_tree / agent)
    assert proj.skills, "the agent was not found in the wheel"
    errors = [
        f"{d.path.relative_to(wheel_tree)}:{d.range.start} {d.code}: {d.message}"
        for ds in project_diagnostics(proj).values()
        for d in ds
        if d.severity == "error"
    ]
    assert errors == []


@pytest.mark.timeout(900)
def test_bundled_default_skills_parse_without_errors(wheel_tree: Path) -> None:
    root = wheel_tree / DEFAULTS
    skills = sorted(p for p in root.iterdir() if (p / "skill.md").is_file())
    assert len(skills) == 7
    problems = []
    for d in skills:
        doc = parse_skill_md((d / "skill.md").read_text(encoding="utf-8"), d.name)
        problems += [f"{d.name}/skill.md {i.code}" for i in doc.issues if i.severity == "error"]
        if (d / "memory.yml").is_file():
            md = parse_memory_yml((d / "memory.yml").read_text(encoding="utf-8"), "skill")
            problems += [
                f"{d.name}/memory.yml {i.code}" for i in md.issues if i.severity == "error"
            ]
        if (d / "responses.yml").is_file():
            rd = parse_responses_yml((d / "responses.yml").read_text(encoding="utf-8"))
            problems += [
                f"{d.name}/responses.yml {i.code}" for i in rd.issues if i.severity == "error"
            ]
    assert problems == []


DATAFLOW = (
    "lsp.memory.never_written",
    "lsp.memory.project_field_written_twice",
    "lsp.condition.constant_never_written",
)


@pytest.mark.timeout(900)
@pytest.mark.parametrize("agent", AGENTS)
def test_bundled_agents_show_no_data_flow_findings(wheel_tree: Path, agent: str) -> None:
    """The engine's own agents run as written: nothing they read is never written, no
    project field of theirs is written by two skills (hints included)."""
    proj = Project.load(wheel_tree / agent)
    found = [
        f"{d.path.relative_to(wheel_tree)}:{d.range.start} {d.code}: {d.message}"
        for ds in project_diagnostics(proj).values()
        for d in ds
        if d.code in DATAFLOW
    ]
    assert found == []
