"""Which projects `check` looks at: a project alone (not the project-like folders below it),
every project below a folder that is not one, and never a folder git ignores."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from mantle_lsp.cli.main import main
from mantle_lsp.model import layout
from support import write_fixture

# An agent repository that is itself a project, with a tutorial snippet and a template that
# look like projects (agent.yml + integrations.yml) and are full of mistakes.
REPO_AGENT = """\
//- skills/card/skill.md
---
description: Card.
---
Help with cards.
//- tutorial/snippets/step-00-scaffold/agent.yml
agent: [not, a, mapping]
//- tutorial/snippets/step-00-scaffold/integrations.yml
llm:
  provider: openai
//- tutorial/snippets/step-00-scaffold/skills/hello/skill.md
---
description: Hello.
bogus: 1
---
Read @memory.hello.nope.
//- templates/blank/agent.yml
agent: {id: blank}
//- templates/blank/integrations.yml
llm: {provider: openai}
"""

SNIPPET = "tutorial/snippets/step-00-scaffold"


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str]:
    code = main(list(args))
    return code, capsys.readouterr().out


def test_a_project_is_checked_without_the_project_like_folders_below_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    write_fixture(tmp_path, REPO_AGENT)
    monkeypatch.chdir(tmp_path)
    assert layout.find_projects(tmp_path) == [tmp_path]
    assert layout.nested_projects(tmp_path) == [tmp_path / "templates/blank", tmp_path / SNIPPET]
    code, out = run(capsys, "check", ".")
    assert (code, out) == (0, "All checks passed (1 project).\n")
    # named on the command line, a nested project is checked too
    code, out = run(capsys, "check", ".", SNIPPET)
    assert code == 1
    assert f"{SNIPPET}/skills/hello/skill.md" in out and "(2 projects)" in out
    # and a file of it, named alone, gets the analysis of its own project
    code, out = run(capsys, "check", f"{SNIPPET}/skills/hello/skill.md")
    assert code == 1 and "unknown_frontmatter_key" in out and "agent.yml" not in out


def test_below_a_folder_that_is_no_project_every_project_is_found(tmp_path: Path) -> None:
    write_fixture(tmp_path / "agent", REPO_AGENT)
    write_fixture(tmp_path / "other", "//- skills/x/skill.md\n---\ndescription: X.\n---\nX.\n")
    assert layout.find_projects(tmp_path) == [
        tmp_path / "agent",
        tmp_path / "agent/templates/blank",
        tmp_path / "agent" / SNIPPET,
        tmp_path / "other",
    ]


def _gitignore(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def test_folders_git_ignores_are_not_searched(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in ("a", "gen/out", "vendor/x", "vendor/keep", "deep/scratch", "deep/kept", "local"):
        write_fixture(tmp_path / name, "//- skills/s/skill.md\n---\ndescription: S.\n---\nS.\n")
    (tmp_path / ".git/info").mkdir(parents=True)
    _gitignore(tmp_path / ".git/info/exclude", "local/\n")
    # root rules, a negation that re-includes one folder, and a deeper .gitignore that
    # overrides a higher one in both directions
    _gitignore(tmp_path / ".gitignore", "# generated\ngen/\nvendor/*\n!vendor/keep/\n")
    _gitignore(tmp_path / "deep/.gitignore", "scratch\n")
    found = layout.find_projects(tmp_path)
    assert found == [tmp_path / "a", tmp_path / "deep/kept", tmp_path / "vendor/keep"]
    monkeypatch.chdir(tmp_path)
    code, out = run(capsys, "check", ".")
    assert (code, out) == (0, "All checks passed (3 projects).\n")
    # an ignored project named explicitly is checked all the same
    code, out = run(capsys, "check", "gen/out")
    assert (code, out) == (0, "All checks passed (1 project).\n")


def test_gitignore_applies_to_nested_projects_and_outside_a_repository(tmp_path: Path) -> None:
    write_fixture(tmp_path, REPO_AGENT)
    _gitignore(tmp_path / ".gitignore", "/tutorial/\n")
    assert layout.nested_projects(tmp_path) == [tmp_path / "templates/blank"]
    # a repository above the folder: its rules apply with paths relative to its top
    outer = tmp_path / "repo"
    write_fixture(outer / "agents/one", REPO_AGENT)
    (outer / ".git").mkdir()
    _gitignore(outer / ".gitignore", "agents/one/templates/\n")
    assert layout.nested_projects(outer / "agents/one") == [outer / "agents/one" / SNIPPET]
    assert layout.find_projects(outer / "agents") == [
        outer / "agents/one",
        outer / "agents/one" / SNIPPET,
    ]


def test_unreadable_or_odd_gitignore_files_are_harmless(tmp_path: Path) -> None:
    write_fixture(tmp_path / "a", "//- skills/s/skill.md\n---\ndescription: S.\n---\nS.\n")
    os.mkfifo(tmp_path / ".gitignore")  # not a regular file: never read
    (tmp_path / "a" / ".gitignore").write_bytes(b"\xff\xfe\x00binary")
    assert layout.find_projects(tmp_path) == [tmp_path / "a"]
