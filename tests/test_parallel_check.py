"""`mantle-lsp check --jobs N`: a project spread over several processes gives exactly the
diagnostics of the one-process check (parallel.py)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from mantle_lsp import parallel
from mantle_lsp import workers as spawning
from mantle_lsp.ide.codes import FAILED_TO_LOAD
from mantle_lsp.ide.diagnostics import Diagnostic, project_diagnostics
from mantle_lsp.model import layout
from mantle_lsp.model.project import PendingFile, Project
from mantle_lsp.model.source import read_source

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "bench"))
from generate import generate  # noqa: E402

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="no fork on this platform")


def _plain(diags: dict[Path, list[Diagnostic]]) -> dict[Path, list[tuple[object, ...]]]:
    return {
        p: [(d.code, d.range, d.severity, d.message, d.related, d.folder) for d in ds]
        for p, ds in diags.items()
        if ds
    }


def _serial(root: Path) -> dict[Path, list[tuple[object, ...]]]:
    return _plain(project_diagnostics(Project.load(root)))


def _broken_generated(tmp_path: Path, n: int = 24) -> Path:
    """A generated project with mistakes whose diagnostics need other workers' files:
    a condition on a neighbour's private field, an unknown field, a response defined
    nowhere, a field nobody reads, a routing target that does not exist, a lib helper
    that does not parse."""
    root = generate(tmp_path / "gen", n)
    s1 = root / "skills" / "s1" / "skill.md"
    text = s1.read_text()
    text = text.replace("session.s2.status != 'done'", "session.s2.secret != 'done'")
    text = text.replace("session.s1.attempts > 2", "session.s1.atempts > 2")
    text = text.replace("action: utter_done_1", "action: utter_nowhere")
    s1.write_text(text)
    mem2 = root / "skills" / "s2" / "memory.yml"  # ends in its private section
    mem2.write_text(mem2.read_text() + "    secret:\n      type: text\n")
    s5 = root / "skills" / "s5" / "skill.md"
    s5.write_text(s5.read_text().replace("then: done", "then: nowhere"))
    mem7 = root / "skills" / "s7" / "memory.yml"
    mem7.write_text(
        mem7.read_text().replace("  private:\n", "    lonely:\n      type: text\n  private:\n")
    )
    # a lib helper that does not parse, imported by a skill's tool module (another worker's)
    (root / "lib").mkdir()
    (root / "lib" / "__init__.py").write_text("")
    (root / "lib" / "broken.py").write_text("def oops(\n")
    tools9 = root / "skills" / "s9" / "tools.py"
    tools9.write_text("from lib.broken import oops\n" + tools9.read_text())
    # a skill the engine drops (another worker's), referred to from s1; an empty folder
    s10 = root / "skills" / "s10" / "skill.md"
    s10.write_text(s10.read_text().replace("---\n", "---\nrequires: session.project.x\n", 1))
    s1.write_text(s1.read_text() + "\nHand over to @skill.s10.\n")
    (root / "skills" / "s_empty").mkdir()
    return root


@pytest.mark.parametrize("jobs", [2, 3])
def test_spread_check_equals_the_serial_check_on_a_generated_project(
    tmp_path: Path, jobs: int
) -> None:
    root = _broken_generated(tmp_path)
    expected = _serial(root)
    assert expected, "the planted mistakes must give diagnostics"
    planted = [d[0] for ds in expected.values() for d in ds]
    assert "skill.referenced.invalid_target" in planted and FAILED_TO_LOAD in planted
    _, found = parallel.check_project(root, jobs, min_skills=0)
    assert _plain(found) == expected


def test_buttons_another_worker_makes_with_a_tool_keep_project_fields_silent(
    tmp_path: Path,
) -> None:
    """A project field nothing writes is not reported when some skill's buttons come
    from a tool (their payloads may write it): the worker that checks the project's
    fields knows it of other workers' skills without parsing their responses.yml."""
    root = generate(tmp_path / "gen", 8)
    memory = root / "memory.yml"
    memory.write_text(memory.read_text() + "region:\n  type: text\n")
    s0 = root / "skills" / "s0" / "skill.md"
    s0.write_text(s0.read_text().replace("Help the customer", "Read @memory.project.region. Help"))
    resp = root / "skills" / "s3" / "responses.yml"
    resp.write_text(
        resp.read_text() + "  utter_pick_3:\n    - text: Pick one.\n      buttons:\n"
        "        source: lookup_3\n"
    )
    expected = _serial(root)
    assert not any("region" in d[3] for ds in expected.values() for d in ds)
    for jobs in (2, 3):
        _, found = parallel.check_project(root, jobs, min_skills=0)
        assert _plain(found) == expected
    plain = "- title: A\n          payload: a"
    resp.write_text(resp.read_text().replace("source: lookup_3", plain))
    assert any("region" in d[3] for ds in _serial(root).values() for d in ds), (
        "without the tool's buttons, the field is never written"
    )


@pytest.mark.parametrize("example", ["telecom", "telecom-broken"])
def test_spread_check_equals_the_serial_check_on_the_examples(tmp_path: Path, example: str) -> None:
    root = tmp_path / example
    shutil.copytree(REPO / "examples" / example, root)
    _, found = parallel.check_project(root, 2, min_skills=0)
    assert _plain(found) == _serial(root)


def test_a_failing_worker_falls_back_to_the_serial_check(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    root = _broken_generated(tmp_path)
    parent = os.getpid()
    real = parallel.build_index

    def fails_in_the_worker(*args: object) -> object:
        if os.getpid() != parent:
            raise RuntimeError("worker broke")
        return real(*args)  # type: ignore[arg-type]

    monkeypatch.setattr(parallel, "build_index", fails_in_the_worker)
    _, found = parallel.check_project(root, 2, min_skills=0)
    assert _plain(found) == _serial(root)
    note = capsys.readouterr().err
    assert "a worker process failed (RuntimeError: worker broke)" in note


def test_small_projects_stay_in_one_process(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = generate(tmp_path / "small", 5)

    def no_fork() -> int:
        raise AssertionError("forked for a small project")

    monkeypatch.setattr(os, "fork", no_fork)
    _, found = parallel.check_project(root, 4)  # 5 skills < MIN_SKILLS
    assert _plain(found) == _serial(root)


def test_pending_files_are_read_when_made_and_parsed_only_when_their_tree_is_needed(
    tmp_path: Path,
) -> None:
    root = generate(tmp_path / "p", 3)
    files = list(layout.project_files(root))
    reads: list[Path] = []

    def reader(path: Path):  # type: ignore[no-untyped-def]
        reads.append(path)
        return read_source(path)

    owned = {p for p, _, sid in files if sid == "s0"}
    proj = Project.load_partial(root, files, owned, reader)
    # every file is read once, now: what a rule sees of another worker's file does not
    # depend on when it first asks
    assert sorted(reads) == sorted(p for p, _, _ in files)
    other = proj.files[root / "skills" / "s1" / "memory.yml"]
    assert isinstance(other, PendingFile)
    assert other._parsed is None  # read, not parsed
    before = other.path.read_text()
    other.path.write_text(before.replace("status:", "stage:"))  # no file event follows
    assert other.doc is not None and other._parsed is not None
    assert other.source.text == before
    assert other.issues == []
    assert len(reads) == len(files)
    # what the whole project said about that file, the partial one says too
    other.path.write_text(before)
    # a share no file event will reach (one check run) reads on first use only
    reads.clear()
    lazy = Project.load_partial(root, files, owned, reader, read_now=False)
    assert set(reads) == owned
    assert lazy.files[other.path].source.text == before and set(reads) == owned | {other.path}
    assert proj.skill("s1") is not None and proj.skill("s1").field_names() == (
        Project.load(root).skill("s1").field_names()  # type: ignore[union-attr]
    )


def test_cli_jobs_gives_the_same_output(tmp_path: Path) -> None:
    root = generate(tmp_path / "cli", spawning.MIN_SKILLS)
    s3 = root / "skills" / "s3" / "skill.md"
    s3.write_text(s3.read_text().replace("session.s3.attempts > 2", "session.s3.atempts > 2"))
    exe = Path(sys.executable).with_name("mantle-lsp")
    outs = [
        subprocess.run(
            [str(exe), "check", "--jobs", jobs, str(root)], capture_output=True, text=True
        )
        for jobs in ("1", "2")
    ]
    assert outs[0].returncode == outs[1].returncode == 1
    assert "atempts" in outs[0].stdout
    assert outs[0].stdout == outs[1].stdout
    bad = subprocess.run([str(exe), "check", "--jobs", "0", str(root)], capture_output=True)
    assert bad.returncode == 2


def _entries(proj: Project) -> tuple[set[tuple[object, ...]], set[tuple[object, ...]]]:
    idx = proj.index
    syms = {
        (s.key, s.path, s.range, type(s.obj).__name__) for ss in idx.symbols.values() for s in ss
    }
    refs = {
        (r.key, r.path, r.range, r.form, r.skill, r.soft, r.site is not None)
        for r in idx.references
    }
    return syms, refs


@pytest.mark.parametrize("example", ["generated", "telecom", "telecom-broken"])
def test_a_materialized_partial_project_equals_the_whole_one(tmp_path: Path, example: str) -> None:
    """What the server does after a spread index: the other workers' files are parsed
    here and their imported entries replaced by entries with parsed objects."""
    if example == "generated":
        root = _broken_generated(tmp_path, 12)
    else:
        root = tmp_path / example
        shutil.copytree(REPO / "examples" / example, root)
    files = list(layout.project_files(root))
    owned = parallel.partition(files, 2, min_skills=0)
    assert owned is not None
    whole = Project.load(root)
    ids = parallel.file_ids(files)
    exports = [parallel._export(whole, whole.index, owned, w, files) for w in (0, 1)]
    theirs = [parallel._frame(exports[1], 0)]  # what worker 0 receives from worker 1
    proj, idx = parallel._load(root, files, owned[0], None, read_source)
    parallel._import(proj, idx, theirs, files)
    assert proj.has_pending and proj.known_facts and proj.known_fields
    assert _entries(proj) != _entries(whole)  # imported entries lack the parsed objects
    assert proj.materialize(limit=5) > 0
    assert proj.materialize() == 0
    assert not proj.has_pending and proj.known_facts == {} and proj.known_fields == {}
    assert not any(isinstance(pf, PendingFile) for pf in proj.files.values())
    assert _entries(proj) == _entries(whole)
    assert _plain(project_diagnostics(proj)) == _serial(root)
    assert ids  # the shared numbering covers every file


def test_spawned_workers_that_list_other_files_are_refused(tmp_path: Path) -> None:
    """A spawned worker lists the project itself; when its list differs from the
    leader's (files changed in between), the leader refuses its entries."""
    root = generate(tmp_path / "a", 6)
    files = list(layout.project_files(root))
    owned = parallel.partition(files, 2, min_skills=0)
    assert owned is not None
    (root / "skills" / "s3" / "responses.yml").unlink()  # the worker will not see it
    workers = spawning.spawn_workers(1)
    try:
        parallel.assign(workers, root, 2, None, set(), min_skills=0)
        with pytest.raises(parallel.WorkerFailed, match="files changed"):
            parallel.lead(root, files, owned, None, read_source, [w.channel for w in workers])
    finally:
        spawning.reap(workers)


def test_spawned_workers_give_what_forked_ones_give(tmp_path: Path) -> None:
    root = _broken_generated(tmp_path)
    files = list(layout.project_files(root))
    owned = parallel.partition(files, 3, min_skills=0)
    assert owned is not None
    workers = spawning.spawn_workers(2)
    try:
        parallel.assign(workers, root, 3, None, set(), min_skills=0)
        _, found = parallel.lead(
            root, files, owned, None, read_source, [w.channel for w in workers]
        )
    finally:
        spawning.reap(workers)
    assert all(w.proc.returncode == 0 for w in workers)
    assert _plain(found) == _serial(root)


def test_unneeded_spawned_workers_exit_quietly() -> None:
    workers = spawning.spawn_workers(2)
    spawning.reap(workers)
    assert [w.proc.returncode for w in workers] == [0, 0]


def test_a_check_lists_each_folder_once_and_only_within_its_block(tmp_path: Path) -> None:
    """`check` walks the tree for memory-layers/ folders, then lists the project's files:
    within ``remembered_listings`` the second walk reads what the first one read (the
    same files as a fresh listing), and after the block a folder is read afresh."""
    from mantle_lsp.model.layers import find_layer_roots

    root = generate(tmp_path / "p", 4)
    fresh = list(layout.project_files(root))
    with layout.remembered_listings():
        assert find_layer_roots(root) == []
        assert list(layout.project_files(root)) == fresh
        (root / "skills" / "s9").mkdir()
        (root / "skills" / "s9" / "skill.md").write_text("---\ndescription: d\n---\nHi.\n")
        assert list(layout.project_files(root)) == fresh  # skills/ was read once
    assert (root / "skills" / "s9" / "skill.md", layout.FileKind.SKILL_MD, "s9") in list(
        layout.project_files(root)
    )


@pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="needs /proc")
def test_forked_workers_do_not_hold_the_commands_output_streams(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A worker answers through its pipe only: were it to keep the command's stdout and
    stderr, a CI step reading them would wait for the worker to finish exiting too."""
    root = _broken_generated(tmp_path)
    seen = tmp_path / "streams"
    real_work = parallel.work

    def work(*args: object) -> None:
        seen.write_text(" ".join(os.readlink(f"/proc/self/fd/{fd}") for fd in (1, 2)))
        real_work(*args)  # type: ignore[arg-type]

    monkeypatch.setattr(parallel, "work", work)
    _, found = parallel.check_project(root, 2, min_skills=0)
    assert _plain(found) == _serial(root)
    assert seen.read_text() == f"{os.devnull} {os.devnull}"


def test_listing_paths_are_the_paths_pathlib_makes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The listing builds its paths without pathlib parsing each name again: they are
    equal, hash alike and print alike to the paths ``parent / name`` makes."""
    root = generate(tmp_path / "p", 3)
    (root / "skills" / "s1" / "tools").mkdir()
    (root / "skills" / "s1" / "tools" / "extra.py").write_text("x = 1\n")
    fast = list(layout.project_files(root))
    monkeypatch.setattr(layout, "_MAKE_CHILD", None)
    plain = list(layout.project_files(root))
    assert fast == plain
    assert [hash(p) for p, _, _ in fast] == [hash(p) for p, _, _ in plain]
    assert [str(p) for p, _, _ in fast] == [str(p) for p, _, _ in plain]
    assert (root / "skills" / "s1" / "tools" / "extra.py") in {p for p, _, _ in fast}
