"""Which projects `check` looks at: a project alone (not the project-like folders below it),
every project below a folder that is not one, and never a folder git ignores."""

from __future__ import annotations

import os
import shutil
import subprocess
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


# A scratch folder an agent works in, git-ignored as a whole: a project with a mistake,
# a memory-layers/ folder with one, and folders below it that its own rules ignore.
SCRATCH = """\
//- skills/card/skill.md
---
description: Card.
---
Read @memory.card.nope.
//- memory-layers/cascades.yml
cascades:
  prod: [base, missing]
//- memory-layers/base/prose.md
---
description: How to write
---
Be short.
//- out/copy/agent.yml
agent: [not, a, mapping]
//- out/copy/integrations.yml
llm: {provider: openai}
//- out/memory-layers/cascades.yml
cascades: {x: [nope]}
"""


SMALL = "//- skills/s/skill.md\n---\ndescription: S.\n---\nS.\n"


def _git_repo(tmp_path: Path) -> Path:
    git = shutil.which("git")
    if git is None:  # pragma: no cover - git is on every machine that runs the suite
        pytest.skip("needs git")
    subprocess.run([git, "init", "-q", str(tmp_path)], check=True)
    return Path(git)


def test_what_the_user_names_is_searched_although_git_ignores_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    git = _git_repo(tmp_path)
    _gitignore(tmp_path / ".gitignore", "tmp/\nout/\n")
    write_fixture(tmp_path / "tmp/agent", SCRATCH)
    monkeypatch.chdir(tmp_path)
    # git itself ignores the folder (the layout is real)
    got = subprocess.run([git, "check-ignore", "-q", "tmp/agent/memory-layers"])
    assert got.returncode == 0
    # the named project, with its memory-layers/ folder (and not the ignored out/ below)
    code, out = run(capsys, "check", "tmp/agent", "--format", "concise")
    assert code == 1
    assert "tmp/agent/memory-layers/cascades.yml:2:16: error[lsp.layers.unknown_layer]" in out
    assert "unknown_memory_reference" in out and "out/" not in out
    assert out.endswith("(1 project, 1 memory-layers folder).\n")
    # a named folder holding the project, and the memory-layers/ folder named alone
    code, out = run(capsys, "check", "tmp", "--format", "concise")
    assert code == 1 and out.endswith("(1 project, 1 memory-layers folder).\n")
    code, out = run(capsys, "check", "tmp/agent/memory-layers", "--format", "concise")
    assert code == 1 and "unknown_layer" in out
    # the folders the project's own rules ignore stay ignored
    assert layout.find_projects(tmp_path / "tmp") == [tmp_path / "tmp/agent"]
    # layers manifest, graph and preview find what is named
    code, out = run(capsys, "layers", "manifest", "prod", "tmp/agent")
    assert code == 0 and out.startswith("cascade prod: 1 entry")
    code, out = run(capsys, "layers", "manifest", "prod", "tmp")
    assert code == 0 and out.startswith("cascade prod: 1 entry")
    code, out = run(capsys, "graph", "tmp", "--format", "mermaid")
    assert code == 0 and '"card"' in out
    code, out = run(capsys, "preview", "tmp/agent/skills/card/skill.md")
    assert code == 0 and out.startswith("Read ")
    # a memory-layers/ folder alone, in an ignored folder
    (tmp_path / "tmp/notes").mkdir()
    shutil.copytree(tmp_path / "tmp/agent/memory-layers", tmp_path / "tmp/notes/memory-layers")
    for named in ("tmp/notes", "tmp/notes/memory-layers"):
        code, out = run(capsys, "check", named, "--format", "concise")
        assert code == 1 and "unknown_layer" in out, named
        assert out.endswith("in 1 file (1 memory-layers folder).\n")


def test_a_pattern_matching_the_named_folder_or_above_hides_nothing_below_it(
    tmp_path: Path,
) -> None:
    _git_repo(tmp_path)
    # `*` in the scratch folder's own .gitignore (as tools write it), `agent*/` at the top
    _gitignore(tmp_path / "scratch/.gitignore", "*\n")
    _gitignore(tmp_path / ".gitignore", "agent*/\nbuild/\n")
    for name in ("agent", "agent/agent-copy", "agent/build", "agent/kept"):
        write_fixture(tmp_path / "scratch" / name, SMALL)
    named = tmp_path / "scratch/agent"
    assert layout.nested_projects(named) == [named / "agent-copy", named / "kept"]
    # from higher up, git's rules hide it; named, the folder's own rules apply below it
    assert layout.find_projects(tmp_path) == []
    assert layout.find_projects(tmp_path / "scratch") == []
